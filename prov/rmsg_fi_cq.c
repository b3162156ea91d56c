// SPDX-License-Identifier: LGPL-2.1-or-later OR BSD-2-Clause
/*
 * librmsg-fi.so: completion queues. A CQ keeps its completions, successes
 * and errors, in one ring in the order they happened; a read takes the
 * successes up to the first error, which fi_cq_readerr() takes
 * (-FI_EAVAIL meanwhile). Reads progress the endpoints bound to the CQ
 * first: progress is manual (FI_PROGRESS_MANUAL). The ring grows as
 * needed, so no completion is ever dropped; what bounds it is what the
 * program posted.
 */
#include <errno.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>

#include "rmsg_fi.h"

/*
 * Keep completion @e, of source @src; @from: an FI_EADDRNOTAVAIL one's
 * sender, for its err_data.
 */
int rfi_cq_push(struct rfi_cq *cq, const struct fi_cq_err_entry *e,
		fi_addr_t src, const struct sockaddr_in *from)
{
	struct rfi_comp *grown;
	size_t cap, i;

	if (cq->count == cq->cap) {
		cap = cq->cap ? 2 * cq->cap : 64;
		grown = malloc(cap * sizeof(*grown));
		if (!grown)
			return -FI_ENOMEM;
		for (i = 0; i < cq->count; i++)
			grown[i] = cq->ring[(cq->head + i) % cq->cap];
		free(cq->ring);
		cq->ring = grown;
		cq->cap = cap;
		cq->head = 0;
	}
	i = (cq->head + cq->count) % cq->cap;
	cq->ring[i].e = *e;
	cq->ring[i].src = src;
	cq->ring[i].has_from = from != NULL;
	if (from)
		cq->ring[i].from = *from;
	cq->count++;
	return 0;
}

static void rfi_cq_progress(struct rfi_cq *cq)
{
	unsigned int i;

	for (i = 0; i < cq->neps; i++)
		rfi_ep_progress(cq->eps[i]);
}

/* Before the program may sleep: the releases progress left for later. */
static void rfi_cq_release_flush(struct rfi_cq *cq)
{
	unsigned int i;

	for (i = 0; i < cq->neps; i++)
		rfi_release_flush(cq->eps[i]);
}

/* One entry in the CQ's format at @buf; returns its size. */
static size_t rfi_cq_fill(const struct rfi_cq *cq, void *buf,
			  const struct fi_cq_err_entry *e)
{
	struct fi_cq_tagged_entry *t = buf;

	switch (cq->format) {
	case FI_CQ_FORMAT_CONTEXT:
		((struct fi_cq_entry *)buf)->op_context = e->op_context;
		return sizeof(struct fi_cq_entry);
	case FI_CQ_FORMAT_MSG:
		((struct fi_cq_msg_entry *)buf)->op_context = e->op_context;
		((struct fi_cq_msg_entry *)buf)->flags = e->flags;
		((struct fi_cq_msg_entry *)buf)->len = e->len;
		return sizeof(struct fi_cq_msg_entry);
	case FI_CQ_FORMAT_DATA:
		((struct fi_cq_data_entry *)buf)->op_context = e->op_context;
		((struct fi_cq_data_entry *)buf)->flags = e->flags;
		((struct fi_cq_data_entry *)buf)->len = e->len;
		((struct fi_cq_data_entry *)buf)->buf = e->buf;
		((struct fi_cq_data_entry *)buf)->data = e->data;
		return sizeof(struct fi_cq_data_entry);
	default:
		t->op_context = e->op_context;
		t->flags = e->flags;
		t->len = e->len;
		t->buf = e->buf;
		t->data = e->data;
		t->tag = e->tag;
		return sizeof(*t);
	}
}

static ssize_t rfi_cq_readfrom(struct fid_cq *fcq, void *buf, size_t count,
			       fi_addr_t *src_addr)
{
	struct rfi_cq *cq = container_of(fcq, struct rfi_cq, cq);
	unsigned char *p = buf;
	ssize_t n = 0;

	rfi_lock(cq->dom);
	rfi_cq_progress(cq);
	while ((size_t)n < count && cq->count &&
	       !cq->ring[cq->head].e.err) {
		p += rfi_cq_fill(cq, p, &cq->ring[cq->head].e);
		if (src_addr)
			src_addr[n] = cq->ring[cq->head].src;
		cq->head = (cq->head + 1) % cq->cap;
		cq->count--;
		n++;
	}
	if (!n)
		n = cq->count ? -FI_EAVAIL : -FI_EAGAIN;
	rfi_unlock(cq->dom);
	return n;
}

static ssize_t rfi_cq_read(struct fid_cq *fcq, void *buf, size_t count)
{
	return rfi_cq_readfrom(fcq, buf, count, NULL);
}

static ssize_t rfi_cq_readerr(struct fid_cq *fcq, struct fi_cq_err_entry *buf,
			      uint64_t flags)
{
	struct rfi_cq *cq = container_of(fcq, struct rfi_cq, cq);
	const struct rfi_comp *c;
	ssize_t ret = -FI_EAGAIN;
	size_t size;
	void *err_data;

	rfi_lock(cq->dom);
	if (cq->count && cq->ring[cq->head].e.err) {
		/*
		 * Since 1.5 the caller's err_data buffer is kept, and filled
		 * if it has room; without one, the CQ's own, valid until the
		 * next read.
		 */
		c = &cq->ring[cq->head];
		err_data = buf->err_data;
		size = buf->err_data_size;
		*buf = c->e;
		buf->err_data = err_data;
		buf->err_data_size = 0;
		if (c->has_from && err_data && size >= sizeof(c->from)) {
			memcpy(err_data, &c->from, sizeof(c->from));
			buf->err_data_size = sizeof(c->from);
		} else if (c->has_from) {
			cq->err_from = c->from;
			buf->err_data = &cq->err_from;
			buf->err_data_size = sizeof(c->from);
		}
		cq->head = (cq->head + 1) % cq->cap;
		cq->count--;
		ret = 1;
	}
	rfi_unlock(cq->dom);
	return ret;
}

/* A signal fi_cq_sread() has not answered yet: taken, if there is one. */
static bool rfi_cq_take_signal(struct rfi_cq *cq)
{
	return __atomic_exchange_n(&cq->signaled, false, __ATOMIC_ACQ_REL);
}

/* The signal's eventfd readable no more (it is nonblocking). */
static void rfi_cq_drain_signal(struct rfi_cq *cq)
{
	uint64_t n;

	if (read(cq->sigfd, &n, sizeof(n)) < 0 && errno != EAGAIN)
		RFI_DBG("the CQ's eventfd: %s\n", strerror(errno));
}

/*
 * Sleeps on the CQ's wait set without the domain's lock, until a bound
 * endpoint has something, @timeout passes (-FI_EAGAIN) or fi_cq_signal()
 * (-FI_EAGAIN too). The signal is looked at after fi_trywait() drained
 * its eventfd and before the sleep, so that one given meanwhile is seen
 * there or wakes the sleep.
 */
static ssize_t rfi_cq_sreadfrom(struct fid_cq *fcq, void *buf, size_t count,
				fi_addr_t *src_addr, const void *cond,
				int timeout)
{
	struct rfi_cq *cq = container_of(fcq, struct rfi_cq, cq);
	struct epoll_event ev;
	struct timespec end;
	ssize_t ret;
	int left;

	rfi_deadline(&end, timeout);
	for (;;) {
		ret = rfi_cq_readfrom(fcq, buf, count, src_addr);
		if (ret != -FI_EAGAIN)
			return ret;
		left = -1;
		if (timeout >= 0) {
			left = rfi_ms_left(&end);
			if (left <= 0)
				return -FI_EAGAIN;
		}
		/* Sleep without the lock: other threads post and read. */
		ret = rfi_cq_trywait(cq);
		if (rfi_cq_take_signal(cq))
			return -FI_EAGAIN;
		if (!ret)
			epoll_wait(cq->epfd, &ev, 1, left);
	}
}

static ssize_t rfi_cq_sread(struct fid_cq *fcq, void *buf, size_t count,
			    const void *cond, int timeout)
{
	return rfi_cq_sreadfrom(fcq, buf, count, NULL, cond, timeout);
}

/* Wake a thread asleep in fi_cq_sread(), or make the next one return. */
static int rfi_cq_signal(struct fid_cq *fcq)
{
	struct rfi_cq *cq = container_of(fcq, struct rfi_cq, cq);
	uint64_t one = 1;

	__atomic_store_n(&cq->signaled, true, __ATOMIC_RELEASE);
	if (write(cq->sigfd, &one, sizeof(one)) < 0 && errno != EAGAIN)
		return -FI_EIO;
	return 0;
}

static const char *rfi_cq_strerror(struct fid_cq *cq, int prov_errno,
				   const void *err_data, char *buf, size_t len)
{
	return rfi_strerror(prov_errno, buf, len);
}

static struct fi_ops_cq rfi_cq_ops = {
	.size = sizeof(struct fi_ops_cq),
	.read = rfi_cq_read,
	.readfrom = rfi_cq_readfrom,
	.readerr = rfi_cq_readerr,
	.sread = rfi_cq_sread,
	.sreadfrom = rfi_cq_sreadfrom,
	.signal = rfi_cq_signal,
	.strerror = rfi_cq_strerror,
};

/*
 * Bind endpoint @ep to the CQ, to be progressed by its reads; once only.
 * Under the domain lock.
 */
int rfi_cq_bind_ep(struct rfi_cq *cq, struct rfi_ep *ep)
{
	struct rfi_ep **grown;
	unsigned int i, cap;

	for (i = 0; i < cq->neps; i++)
		if (cq->eps[i] == ep)
			return 0;
	if (cq->neps == cq->eps_cap) {
		cap = cq->eps_cap ? 2 * cq->eps_cap : 4;
		grown = realloc(cq->eps, cap * sizeof(*grown));
		if (!grown)
			return -FI_ENOMEM;
		cq->eps = grown;
		cq->eps_cap = cap;
	}
	cq->eps[cq->neps++] = ep;
	return 0;
}

/*
 * Add (@on) or remove endpoint @ep's librmsg descriptor to or from the
 * CQ's wait set; called under the domain lock, when the endpoint is
 * enabled and before it closes. Adding can fail (no memory, the user's
 * max_user_watches): the endpoint must not be enabled then, or
 * fi_cq_sread() would sleep through its completions. Removing cannot fail
 * for a descriptor that was added.
 */
int rfi_cq_watch(struct rfi_cq *cq, struct rfi_ep *ep, bool on)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = ep };
	int fd = rmsg_ep_fd(ep->rep);
	unsigned int i;

	/*
	 * Endpoints accepted from one passive endpoint share its librmsg
	 * endpoint, so its descriptor: in the set once, for as long as one
	 * of them is enabled and bound here.
	 */
	if (!on) {
		for (i = 0; i < cq->neps; i++)
			if (cq->eps[i] != ep && cq->eps[i]->enabled &&
			    cq->eps[i]->rep == ep->rep)
				return 0;
		epoll_ctl(cq->epfd, EPOLL_CTL_DEL, fd, NULL);
		return 0;
	}
	return epoll_ctl(cq->epfd, EPOLL_CTL_ADD, fd, &ev) && errno != EEXIST ?
	       -errno : 0;
}

/*
 * fi_trywait() of a CQ: 0 when the program may sleep on its wait set,
 * -FI_EAGAIN when a completion is there (or came while arming). Each bound
 * endpoint is progressed and then armed: a message that arrives after the
 * arm makes its descriptor readable, one that came before is found by the
 * progress after it.
 */
int rfi_cq_trywait(struct rfi_cq *cq)
{
	unsigned int i;
	int ret = 0;

	rfi_cq_drain_signal(cq);
	rfi_lock(cq->dom);
	rfi_cq_progress(cq);
	for (i = 0; i < cq->neps && !ret && !cq->count; i++)
		if (cq->eps[i]->enabled && rmsg_ep_arm(cq->eps[i]->rep))
			ret = -FI_EAGAIN;
	/* Each progress releases what the one before left for later. */
	if (!ret) {
		rfi_cq_progress(cq);
		rfi_cq_release_flush(cq);
	}
	if (cq->count)
		ret = -FI_EAGAIN;
	rfi_unlock(cq->dom);
	return ret;
}

static int rfi_cq_control(struct fid *fid, int command, void *arg)
{
	struct rfi_cq *cq = container_of(fid, struct rfi_cq, cq.fid);

	return rfi_getwait(cq->wait_obj, cq->epfd, command, arg);
}

static int rfi_cq_close(struct fid *fid)
{
	struct rfi_cq *cq = container_of(fid, struct rfi_cq, cq.fid);

	if (cq->neps)
		return -FI_EBUSY;
	close(cq->sigfd);
	close(cq->epfd);
	free(cq->eps);
	free(cq->ring);
	free(cq);
	return 0;
}

RFI_FI_OPS_BIND(rfi_cq_fi_ops, rfi_cq_close, rfi_no_bind, rfi_cq_control);

int rfi_cq_open(struct fid_domain *domain, struct fi_cq_attr *attr,
		struct fid_cq **fcq, void *context)
{
	struct rfi_domain *dom = container_of(domain, struct rfi_domain,
					      domain);
	struct epoll_event ev;
	struct rfi_cq *cq;

	if (!attr || attr->flags ||
	    (attr->wait_obj != FI_WAIT_NONE &&
	     attr->wait_obj != FI_WAIT_UNSPEC &&
	     attr->wait_obj != FI_WAIT_FD) ||
	    (attr->format != FI_CQ_FORMAT_UNSPEC &&
	     attr->format != FI_CQ_FORMAT_CONTEXT &&
	     attr->format != FI_CQ_FORMAT_MSG &&
	     attr->format != FI_CQ_FORMAT_DATA &&
	     attr->format != FI_CQ_FORMAT_TAGGED))
		return -FI_ENOSYS;
	cq = calloc(1, sizeof(*cq));
	if (!cq)
		return -FI_ENOMEM;
	/* Every CQ has its wait set: fi_cq_sread() sleeps on it. */
	cq->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (cq->epfd < 0) {
		free(cq);
		return -FI_ENOMEM;
	}
	cq->sigfd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	ev.events = EPOLLIN;
	ev.data.ptr = NULL;
	if (cq->sigfd < 0 ||
	    epoll_ctl(cq->epfd, EPOLL_CTL_ADD, cq->sigfd, &ev)) {
		if (cq->sigfd >= 0)
			close(cq->sigfd);
		close(cq->epfd);
		free(cq);
		return -FI_ENOMEM;
	}
	cq->wait_obj = attr->wait_obj;
	cq->dom = dom;
	cq->format = attr->format == FI_CQ_FORMAT_UNSPEC ?
			     FI_CQ_FORMAT_CONTEXT : attr->format;
	cq->cq.fid.fclass = FI_CLASS_CQ;
	cq->cq.fid.context = context;
	cq->cq.fid.ops = &rfi_cq_fi_ops;
	cq->cq.ops = &rfi_cq_ops;
	*fcq = &cq->cq;
	return 0;
}
