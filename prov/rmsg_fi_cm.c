// SPDX-License-Identifier: LGPL-2.1-or-later OR BSD-2-Clause
/*
 * librmsg-fi.so: event queues, passive endpoints and the connection
 * calls of connected endpoints (FI_EP_MSG, Documentation/libfabric.rst).
 *
 * An EQ keeps its events in a list, in the order they happened, errors
 * among them: fi_eq_read() takes events up to the first error, which
 * fi_eq_readerr() takes (-FI_EAVAIL meanwhile). Progress is manual: a
 * read progresses the endpoints and passive endpoints bound to the EQ
 * first, which is where their connection events come from.
 *
 * A passive endpoint is a librmsg endpoint listening with
 * RMSG_LISTEN_F_ACCEPT: each request (RMSG_CQE_REQUEST) is an FI_CONNREQ
 * whose info->handle is a struct rfi_connreq; fi_endpoint() with that
 * info makes the endpoint that answers it (fi_accept() or, closed
 * unanswered, a reject), and fi_reject() refuses it.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/epoll.h>

#include "rmsg_fi.h"

/* --- event queue -------------------------------------------------------- */

/* Bytes an fi_eq_write() may put in one event. */
#define RFI_EQ_WRITE_MAX	128

/* An event as kept, with room for what fi_eq_write() gives. */
struct rfi_eq_written {
	struct rfi_eq_event ev;
	unsigned char raw[RFI_EQ_WRITE_MAX];
};

static void rfi_eq_append(struct rfi_eq *eq, struct rfi_eq_event *e)
{
	e->next = NULL;
	if (eq->tail)
		eq->tail->next = e;
	else
		eq->head = e;
	eq->tail = e;
}

/*
 * An event goes unread (its EQ or its endpoint closes): a connection
 * request in it is refused, and its info freed, as the program never
 * got them.
 */
static void rfi_eq_event_drop(struct rfi_eq_event *e)
{
	struct rfi_connreq *cr;

	if (!e->is_err && !e->written && e->event == FI_CONNREQ &&
	    e->cm.info) {
		cr = container_of(e->cm.info->handle, struct rfi_connreq, fid);
		if (cr->pep->rep)
			rmsg_chan_accept(cr->pep->rep, cr->chan, 0,
					 RMSG_ACCEPT_REJECT);
		rfi_connreq_free(cr);
		e->cm.info->handle = NULL;
		fi_freeinfo(e->cm.info);
	}
	free(e);
}

/**
 * rfi_eq_report() - queue a connection event of an endpoint
 * @eq: the endpoint's EQ (NULL: none bound, the event is lost)
 * @event: FI_CONNECTED or FI_SHUTDOWN
 * @fid: the endpoint's
 * @err: 0, or the libfabric error code of an error entry (FI_CONNECTED
 *	that failed: FI_ECONNREFUSED for a reject)
 * @prov_errno: the errno behind @err
 *
 * Under the fabric's lock.
 *
 * Return: 0 or -FI_ENOMEM.
 */
int rfi_eq_report(struct rfi_eq *eq, uint32_t event, struct fid *fid,
		  int err, int prov_errno)
{
	struct rfi_eq_event *e;

	if (!eq)
		return 0;
	e = calloc(1, sizeof(*e));
	if (!e) {
		RFI_WARN("an EQ event lost: no memory\n");
		return -FI_ENOMEM;
	}
	e->event = event;
	if (err) {
		e->is_err = true;
		e->err.fid = fid;
		e->err.context = fid->context;
		e->err.err = err;
		e->err.prov_errno = prov_errno;
	} else {
		e->cm.fid = fid;
		e->len = sizeof(e->cm);
	}
	rfi_eq_append(eq, e);
	return 0;
}

/* A connection request's FI_CONNREQ, its info the program's once read. */
static int rfi_eq_report_connreq(struct rfi_eq *eq, struct rfi_pep *pep,
				 struct fi_info *info)
{
	struct rfi_eq_event *e = calloc(1, sizeof(*e));

	if (!e)
		return -FI_ENOMEM;
	e->event = FI_CONNREQ;
	e->cm.fid = &pep->pep.fid;
	e->cm.info = info;
	e->len = sizeof(e->cm);
	rfi_eq_append(eq, e);
	return 0;
}

/* The librmsg endpoint behind bound object @fid, or NULL (none yet). */
static struct rmsg_ep *rfi_eq_rep(struct fid *fid)
{
	struct rfi_ep *ep;

	if (fid->fclass == FI_CLASS_PEP)
		return container_of(fid, struct rfi_pep, pep.fid)->rep;
	ep = container_of(fid, struct rfi_ep, ep.fid);
	return ep->enabled ? ep->rep : NULL;
}

/* Progress what is bound to @eq: its connection events come from there. */
static void rfi_eq_progress(struct rfi_eq *eq)
{
	unsigned int i;

	for (i = 0; i < eq->nbound; i++) {
		if (eq->bound[i]->fclass == FI_CLASS_PEP)
			rfi_pep_progress(container_of(eq->bound[i],
						      struct rfi_pep,
						      pep.fid));
		else
			rfi_ep_progress(container_of(eq->bound[i],
						     struct rfi_ep, ep.fid));
	}
}

/**
 * rfi_eq_bind() - an endpoint or passive endpoint reports to @eq
 * @eq: the EQ
 * @fid: the object, bound once
 *
 * Return: 0 or -FI_ENOMEM.
 */
int rfi_eq_bind(struct rfi_eq *eq, struct fid *fid)
{
	struct fid **grown;
	unsigned int cap;
	int ret = 0;

	rfi_fab_lock(eq->fab);
	if (eq->nbound == eq->bound_cap) {
		cap = eq->bound_cap ? 2 * eq->bound_cap : 4;
		grown = realloc(eq->bound, cap * sizeof(*grown));
		if (!grown) {
			ret = -FI_ENOMEM;
			goto out;
		}
		eq->bound = grown;
		eq->bound_cap = cap;
	}
	eq->bound[eq->nbound++] = fid;
out:
	rfi_fab_unlock(eq->fab);
	return ret;
}

/**
 * rfi_eq_unbind() - @fid closes: @eq forgets it
 * @eq: the EQ it was bound to
 * @fid: the endpoint or passive endpoint, before its librmsg endpoint
 *	closes
 *
 * Its events still unread go, so that no read gives a closed object's
 * fid; its descriptor leaves the wait set unless another bound object
 * shares it (endpoints accepted from one passive endpoint do).
 */
void rfi_eq_unbind(struct rfi_eq *eq, struct fid *fid)
{
	struct rfi_eq_event **pp, *e;
	struct rmsg_ep *rep = rfi_eq_rep(fid);
	bool shared = false;
	unsigned int i;

	rfi_fab_lock(eq->fab);
	for (i = 0; i < eq->nbound; i++)
		if (eq->bound[i] == fid)
			eq->bound[i--] = eq->bound[--eq->nbound];
	for (i = 0; rep && i < eq->nbound; i++)
		shared = shared || rfi_eq_rep(eq->bound[i]) == rep;
	if (rep && !shared)
		epoll_ctl(eq->epfd, EPOLL_CTL_DEL, rmsg_ep_fd(rep), NULL);
	eq->tail = NULL;
	for (pp = &eq->head; (e = *pp);) {
		if (!e->written &&
		    (e->is_err ? e->err.fid : e->cm.fid) == fid) {
			*pp = e->next;
			rfi_eq_event_drop(e);
			continue;
		}
		eq->tail = e;
		pp = &e->next;
	}
	rfi_fab_unlock(eq->fab);
}

/* The first event was read: it goes, unless only peeked at. */
static void rfi_eq_pop(struct rfi_eq *eq, uint64_t flags)
{
	struct rfi_eq_event *e = eq->head;

	if (flags & FI_PEEK)
		return;
	eq->head = e->next;
	if (!eq->head)
		eq->tail = NULL;
	free(e);
}

static ssize_t rfi_eq_read(struct fid_eq *feq, uint32_t *event, void *buf,
			   size_t len, uint64_t flags)
{
	struct rfi_eq *eq = container_of(feq, struct rfi_eq, eq);
	struct rfi_eq_event *e;
	ssize_t ret;

	rfi_fab_lock(eq->fab);
	rfi_eq_progress(eq);
	e = eq->head;
	if (!e) {
		ret = -FI_EAGAIN;
	} else if (e->is_err) {
		ret = -FI_EAVAIL;
	} else if (len < e->len) {
		ret = -FI_ETOOSMALL;
	} else {
		*event = e->event;
		memcpy(buf, e->written ? e->written : (void *)&e->cm, e->len);
		ret = (ssize_t)e->len;
		rfi_eq_pop(eq, flags);
	}
	rfi_fab_unlock(eq->fab);
	return ret;
}

static ssize_t rfi_eq_readerr(struct fid_eq *feq, struct fi_eq_err_entry *buf,
			      uint64_t flags)
{
	struct rfi_eq *eq = container_of(feq, struct rfi_eq, eq);
	struct rfi_eq_event *e;
	ssize_t ret = -FI_EAGAIN;

	rfi_fab_lock(eq->fab);
	e = eq->head;
	if (e && e->is_err) {
		/* No error data: the program's err_data buffer stays. */
		buf->fid = e->err.fid;
		buf->context = e->err.context;
		buf->data = e->err.data;
		buf->err = e->err.err;
		buf->prov_errno = e->err.prov_errno;
		buf->err_data_size = 0;
		ret = sizeof(*buf);
		rfi_eq_pop(eq, flags);
	}
	rfi_fab_unlock(eq->fab);
	return ret;
}

/*
 * fi_eq_write(): the program's own event, read back as it was written
 * (libfabric 1.17 defines no flag for an error entry).
 */
static ssize_t rfi_eq_write(struct fid_eq *feq, uint32_t event,
			    const void *buf, size_t len, uint64_t flags)
{
	struct rfi_eq *eq = container_of(feq, struct rfi_eq, eq);
	struct rfi_eq_written *w;

	if (flags || len > RFI_EQ_WRITE_MAX)
		return -FI_EINVAL;
	w = calloc(1, sizeof(*w));
	if (!w)
		return -FI_ENOMEM;
	w->ev.event = event;
	memcpy(w->raw, buf, len);
	w->ev.written = w->raw;
	w->ev.len = len;
	rfi_fab_lock(eq->fab);
	rfi_eq_append(eq, &w->ev);
	rfi_fab_unlock(eq->fab);
	return (ssize_t)len;
}

/*
 * 0 when the program may sleep on @eq's wait set, -FI_EAGAIN when an
 * event is there or came while arming: each bound librmsg endpoint is
 * progressed, put in the set and armed, then progressed again (what
 * came before the arm is found there, what comes after wakes the set).
 */
static int rfi_eq_trywait_locked(struct rfi_eq *eq)
{
	struct epoll_event ev = { .events = EPOLLIN };
	struct rmsg_ep *rep;
	unsigned int i;

	rfi_eq_progress(eq);
	for (i = 0; i < eq->nbound && !eq->head; i++) {
		rep = rfi_eq_rep(eq->bound[i]);
		if (!rep)
			continue;
		if (epoll_ctl(eq->epfd, EPOLL_CTL_ADD, rmsg_ep_fd(rep), &ev) &&
		    errno != EEXIST)
			return -FI_EAGAIN;	/* no sleep it could end */
		if (rmsg_ep_arm(rep))
			return -FI_EAGAIN;
	}
	if (!eq->head)
		rfi_eq_progress(eq);
	return eq->head ? -FI_EAGAIN : 0;
}

int rfi_eq_trywait(struct rfi_eq *eq)
{
	int ret;

	rfi_fab_lock(eq->fab);
	ret = rfi_eq_trywait_locked(eq);
	rfi_fab_unlock(eq->fab);
	return ret;
}

/*
 * Sleeps on the EQ's wait set without the lock until an event comes or
 * @timeout (ms; -1: none) passes (-FI_EAGAIN). A bound object without a
 * librmsg endpoint yet has nothing to wake it: the sleep is then cut
 * into short ones, so that one enabled meanwhile is looked at.
 */
static ssize_t rfi_eq_sread(struct fid_eq *feq, uint32_t *event, void *buf,
			    size_t len, int timeout, uint64_t flags)
{
	struct rfi_eq *eq = container_of(feq, struct rfi_eq, eq);
	struct epoll_event ev;
	struct timespec end;
	ssize_t ret;
	int left;

	rfi_deadline(&end, timeout);
	for (;;) {
		ret = rfi_eq_read(feq, event, buf, len, flags);
		if (ret != -FI_EAGAIN)
			return ret;
		left = 100;
		if (timeout >= 0) {
			left = rfi_ms_left(&end);
			if (left <= 0)
				return -FI_EAGAIN;
			if (left > 100)
				left = 100;
		}
		if (!rfi_eq_trywait(eq))
			epoll_wait(eq->epfd, &ev, 1, left);
	}
}

static const char *rfi_eq_strerror(struct fid_eq *eq, int prov_errno,
				   const void *err_data, char *buf, size_t len)
{
	return rfi_strerror(prov_errno, buf, len);
}

static struct fi_ops_eq rfi_eq_ops = {
	.size = sizeof(struct fi_ops_eq),
	.read = rfi_eq_read,
	.readerr = rfi_eq_readerr,
	.write = rfi_eq_write,
	.sread = rfi_eq_sread,
	.strerror = rfi_eq_strerror,
};

/* Bound objects keep their EQ: it closes after them (-FI_EBUSY before). */
static int rfi_eq_close(struct fid *fid)
{
	struct rfi_eq *eq = container_of(fid, struct rfi_eq, eq.fid);
	struct rfi_eq_event *e;

	if (eq->nbound)
		return -FI_EBUSY;
	while ((e = eq->head)) {
		eq->head = e->next;
		rfi_eq_event_drop(e);
	}
	close(eq->epfd);
	free(eq->bound);
	free(eq);
	return 0;
}

static int rfi_eq_control(struct fid *fid, int command, void *arg)
{
	struct rfi_eq *eq = container_of(fid, struct rfi_eq, eq.fid);

	return rfi_getwait(eq->wait_obj, eq->epfd, command, arg);
}

RFI_FI_OPS_BIND(rfi_eq_fi_ops, rfi_eq_close, rfi_no_bind, rfi_eq_control);

int rfi_eq_open(struct fid_fabric *fabric, struct fi_eq_attr *attr,
		struct fid_eq **feq, void *context)
{
	struct rfi_eq *eq;

	if (attr && attr->wait_obj != FI_WAIT_NONE &&
	    attr->wait_obj != FI_WAIT_UNSPEC && attr->wait_obj != FI_WAIT_FD)
		return -FI_ENOSYS;
	eq = calloc(1, sizeof(*eq));
	if (!eq)
		return -FI_ENOMEM;
	eq->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (eq->epfd < 0) {
		free(eq);
		return -FI_ENOMEM;
	}
	eq->fab = container_of(fabric, struct rfi_fabric, fabric);
	eq->wait_obj = attr ? attr->wait_obj : FI_WAIT_UNSPEC;
	eq->eq.fid.fclass = FI_CLASS_EQ;
	eq->eq.fid.context = context;
	eq->eq.fid.ops = &rfi_eq_fi_ops;
	eq->eq.ops = &rfi_eq_ops;
	*feq = &eq->eq;
	return 0;
}

/* --- passive endpoints ---------------------------------------------------- */

/**
 * rfi_pep_put() - drop a reference to a passive endpoint
 * @pep: the passive endpoint
 *
 * The last one closes its librmsg endpoint, with the channels of any
 * endpoint still on it (there is none then), and frees it.
 */
void rfi_pep_put(struct rfi_pep *pep)
{
	struct rfi_fabric *fab = pep->fab;

	rfi_fab_lock(fab);
	if (--pep->refs) {
		rfi_fab_unlock(fab);
		return;
	}
	rmsg_ep_close(pep->rep);
	fi_freeinfo(pep->info);
	free(pep->owners);
	free(pep);
	rfi_fab_unlock(fab);
}

/* A connection request answered, or never to be: it goes. */
void rfi_connreq_free(struct rfi_connreq *cr)
{
	struct rfi_pep *pep = cr->pep;

	free(cr);
	rfi_pep_put(pep);
}

/**
 * rfi_pep_request() - a connection request came to @pep's listener
 * @pep: the passive endpoint, under the fabric's lock
 * @ev: its RMSG_CQE_REQUEST
 *
 * It becomes an FI_CONNREQ on the passive endpoint's EQ, with an info
 * of the passive endpoint's whose handle names it and whose dest_addr is
 * the peer's; one that cannot (the passive endpoint closed, no memory)
 * is refused at once, so that its peer does not wait for an answer.
 */
void rfi_pep_request(struct rfi_pep *pep, const struct rmsg_event *ev)
{
	struct sockaddr_storage peer;
	struct rfi_connreq *cr = NULL;
	struct sockaddr_in *dest;
	struct fi_info *info = NULL;

	/* Its id was a channel's this listener had: that one ended. */
	rfi_pep_detach(pep, ev->channel);
	if (pep->closed || !pep->eq)
		goto refuse;
	cr = calloc(1, sizeof(*cr));
	info = fi_dupinfo(pep->info);
	if (!cr || !info)
		goto refuse;
	cr->fid.fclass = FI_CLASS_CONNREQ;
	cr->pep = pep;
	cr->chan = ev->channel;
	if (!rmsg_chan_addr(pep->rep, ev->channel, NULL, &peer) &&
	    peer.ss_family == AF_INET) {
		dest = calloc(1, sizeof(*dest));
		if (dest) {
			memcpy(dest, &peer, sizeof(*dest));
			free(info->dest_addr);
			info->dest_addr = dest;
			info->dest_addrlen = sizeof(*dest);
		}
	}
	info->handle = &cr->fid;
	if (rfi_eq_report_connreq(pep->eq, pep, info))
		goto refuse;
	pep->refs++;
	return;
refuse:
	RFI_DBG("channel %u: a connection request refused\n", ev->channel);
	rmsg_chan_accept(pep->rep, ev->channel, 0, RMSG_ACCEPT_REJECT);
	free(cr);
	if (info)
		info->handle = NULL;
	fi_freeinfo(info);
}

static int rfi_pep_bind(struct fid *fid, struct fid *bfid, uint64_t flags)
{
	struct rfi_pep *pep = container_of(fid, struct rfi_pep, pep.fid);
	int ret;

	if (bfid->fclass != FI_CLASS_EQ)
		return -FI_EINVAL;
	rfi_fab_lock(pep->fab);
	if (pep->eq) {
		rfi_fab_unlock(pep->fab);
		return -FI_EINVAL;
	}
	pep->eq = container_of(bfid, struct rfi_eq, eq.fid);
	ret = rfi_eq_bind(pep->eq, fid);
	if (ret)
		pep->eq = NULL;
	rfi_fab_unlock(pep->fab);
	return ret;
}

/*
 * fi_close() of a passive endpoint: it listens no more for the program
 * (requests that still come are refused), and goes once the endpoints
 * accepted from it and its requests not answered yet are gone.
 */
static int rfi_pep_close(struct fid *fid)
{
	struct rfi_pep *pep = container_of(fid, struct rfi_pep, pep.fid);
	struct rfi_fabric *fab = pep->fab;

	rfi_fab_lock(fab);
	if (pep->eq)
		rfi_eq_unbind(pep->eq, fid);
	pep->eq = NULL;
	pep->closed = true;
	rfi_pep_put(pep);
	rfi_fab_unlock(fab);
	return 0;
}

RFI_FI_OPS_BIND(rfi_pep_fi_ops, rfi_pep_close, rfi_pep_bind, rfi_no_control);

/* fi_listen(): the librmsg endpoint, listening on the name. */
static int rfi_pep_listen(struct fid_pep *fpep)
{
	struct rfi_pep *pep = container_of(fpep, struct rfi_pep, pep);
	uint32_t block_size;
	size_t threshold;
	bool summary;
	int ret;

	rfi_fab_lock(pep->fab);
	ret = pep->rep ? -FI_EINVAL : pep->eq ? 0 : -FI_ENOEQ;
	if (!ret)
		ret = rfi_params(&block_size, &threshold, &summary);
	if (!ret)
		ret = rmsg_ep_open(&pep->rep, 256, 1024);
	if (ret)
		goto out;
	/* The port picked, when the name had none, is written back. */
	ret = rmsg_ep_listen_flags(pep->rep, (struct sockaddr *)&pep->name,
				   sizeof(pep->name), 0, block_size,
				   RMSG_LISTEN_F_ACCEPT);
	if (ret) {
		rmsg_ep_close(pep->rep);
		pep->rep = NULL;
		ret = -rfi_fi_errno(ret);
	}
out:
	rfi_fab_unlock(pep->fab);
	return ret;
}

static int rfi_pep_getname(fid_t fid, void *addr, size_t *addrlen)
{
	struct rfi_pep *pep = container_of(fid, struct rfi_pep, pep.fid);
	size_t len = *addrlen;

	*addrlen = sizeof(pep->name);
	if (len < sizeof(pep->name))
		return -FI_ETOOSMALL;
	rfi_fab_lock(pep->fab);
	memcpy(addr, &pep->name, sizeof(pep->name));
	rfi_fab_unlock(pep->fab);
	return 0;
}

/* Before fi_listen(): the address and port it will listen on. */
static int rfi_pep_setname(fid_t fid, void *addr, size_t addrlen)
{
	struct rfi_pep *pep = container_of(fid, struct rfi_pep, pep.fid);
	const struct sockaddr_in *sin = addr;
	int ret = 0;

	if (addrlen < sizeof(*sin) || sin->sin_family != AF_INET)
		return -FI_EINVAL;
	rfi_fab_lock(pep->fab);
	if (pep->rep) {
		ret = -FI_EOPBADSTATE;
	} else {
		pep->name.sin_port = sin->sin_port;
		if (sin->sin_addr.s_addr != htonl(INADDR_ANY))
			pep->name.sin_addr = sin->sin_addr;
	}
	rfi_fab_unlock(pep->fab);
	return ret;
}

static int rfi_pep_reject(struct fid_pep *fpep, fid_t handle,
			  const void *param, size_t paramlen)
{
	struct rfi_pep *pep = container_of(fpep, struct rfi_pep, pep);
	struct rfi_connreq *cr;
	int ret;

	if (!handle || handle->fclass != FI_CLASS_CONNREQ)
		return -FI_EINVAL;
	cr = container_of(handle, struct rfi_connreq, fid);
	if (cr->pep != pep || paramlen)
		return -FI_EINVAL;
	rfi_fab_lock(pep->fab);
	if (cr->answered) {
		rfi_fab_unlock(pep->fab);
		return -FI_EOPBADSTATE;
	}
	/* An endpoint made for it and not accepted: it answers no more. */
	if (cr->ep)
		cr->ep->connreq = NULL;
	ret = rmsg_chan_accept(pep->rep, cr->chan, 0, RMSG_ACCEPT_REJECT);
	rfi_connreq_free(cr);
	rfi_fab_unlock(pep->fab);
	return ret ? -rfi_fi_errno(ret) : 0;
}

static int rfi_cm_no_getpeer(struct fid_ep *ep, void *addr, size_t *addrlen)
{
	return -FI_ENOSYS;
}

static int rfi_cm_no_connect(struct fid_ep *ep, const void *addr,
			     const void *param, size_t paramlen)
{
	return -FI_ENOSYS;
}

static int rfi_cm_no_listen(struct fid_pep *pep)
{
	return -FI_ENOSYS;
}

static int rfi_cm_no_accept(struct fid_ep *ep, const void *param,
			    size_t paramlen)
{
	return -FI_ENOSYS;
}

static int rfi_cm_no_reject(struct fid_pep *pep, fid_t handle,
			    const void *param, size_t paramlen)
{
	return -FI_ENOSYS;
}

static int rfi_cm_no_shutdown(struct fid_ep *ep, uint64_t flags)
{
	return -FI_ENOSYS;
}

static int rfi_cm_no_join(struct fid_ep *ep, const void *addr,
			  uint64_t flags, struct fid_mc **mc, void *context)
{
	return -FI_ENOSYS;
}

static int rfi_cm_no_setname(fid_t fid, void *addr, size_t addrlen)
{
	return -FI_ENOSYS;
}

/*
 * fi_cancel(), fi_getopt() and fi_setopt() reach a passive endpoint
 * through these: it has nothing to cancel and no option.
 */
static ssize_t rfi_pep_cancel(fid_t fid, void *context)
{
	return -FI_ENOENT;
}

static ssize_t rfi_pep_size_left(struct fid_ep *ep)
{
	return -FI_ENOSYS;
}

static struct fi_ops_ep rfi_pep_ep_ops = {
	.size = sizeof(struct fi_ops_ep),
	.cancel = rfi_pep_cancel,
	.getopt = rfi_no_getopt,
	.setopt = rfi_no_setopt,
	.tx_ctx = rfi_no_tx_ctx,
	.rx_ctx = rfi_no_rx_ctx,
	.rx_size_left = rfi_pep_size_left,
	.tx_size_left = rfi_pep_size_left,
};

static struct fi_ops_cm rfi_pep_cm_ops = {
	.size = sizeof(struct fi_ops_cm),
	.setname = rfi_pep_setname,
	.getname = rfi_pep_getname,
	.getpeer = rfi_cm_no_getpeer,
	.connect = rfi_cm_no_connect,
	.listen = rfi_pep_listen,
	.accept = rfi_cm_no_accept,
	.reject = rfi_pep_reject,
	.shutdown = rfi_cm_no_shutdown,
	.join = rfi_cm_no_join,
};

/*
 * fi_passive_ep(): it will listen on @info's src_addr, or the node's
 * RDMA address and any free port, as an RDM endpoint does.
 */
int rfi_passive_ep(struct fid_fabric *fabric, struct fi_info *info,
		   struct fid_pep **fpep, void *context)
{
	const struct sockaddr_in *src;
	struct rfi_pep *pep;
	int ret;

	if (!info || !info->ep_attr || info->ep_attr->type != FI_EP_MSG)
		return -FI_EINVAL;
	pep = calloc(1, sizeof(*pep));
	if (!pep)
		return -FI_ENOMEM;
	ret = rfi_local_addr(&pep->name);
	if (ret) {
		free(pep);
		return ret;
	}
	pep->name.sin_port = 0;
	src = info->src_addr;
	if (src && info->src_addrlen >= sizeof(*src) &&
	    src->sin_family == AF_INET) {
		pep->name.sin_port = src->sin_port;
		if (src->sin_addr.s_addr != htonl(INADDR_ANY))
			pep->name.sin_addr = src->sin_addr;
	}
	pep->info = fi_dupinfo(info);
	if (!pep->info) {
		free(pep);
		return -FI_ENOMEM;
	}
	pep->info->handle = NULL;
	pep->fab = container_of(fabric, struct rfi_fabric, fabric);
	pep->refs = 1;
	pep->pep.fid.fclass = FI_CLASS_PEP;
	pep->pep.fid.context = context;
	pep->pep.fid.ops = &rfi_pep_fi_ops;
	pep->pep.ops = &rfi_pep_ep_ops;
	pep->pep.cm = &rfi_pep_cm_ops;
	*fpep = &pep->pep;
	return 0;
}

/* --- connected endpoints' connection calls ------------------------------ */

static struct rfi_ep *rfi_msg_ep(struct fid_ep *ep)
{
	return container_of(ep, struct rfi_ep, ep);
}

/* fi_connect(): to @addr, or the info's dest_addr; no private data. */
static int rfi_msg_cm_connect(struct fid_ep *fep, const void *addr,
			      const void *param, size_t paramlen)
{
	struct rfi_ep *ep = rfi_msg_ep(fep);
	const struct sockaddr_in *dest = addr;

	if (!dest && ep->info->dest_addrlen >= sizeof(*dest))
		dest = ep->info->dest_addr;
	if (!dest || dest->sin_family != AF_INET || paramlen)
		return -FI_EINVAL;
	return rfi_msg_connect(ep, dest);
}

static int rfi_msg_cm_accept(struct fid_ep *fep, const void *param,
			     size_t paramlen)
{
	if (paramlen)
		return -FI_EINVAL;
	return rfi_msg_accept(rfi_msg_ep(fep));
}

static int rfi_msg_cm_shutdown(struct fid_ep *fep, uint64_t flags)
{
	if (flags)
		return -FI_EINVAL;
	return rfi_msg_shutdown(rfi_msg_ep(fep));
}

/* fi_getpeer(): the peer's address of the connection now. */
static int rfi_msg_cm_getpeer(struct fid_ep *fep, void *addr,
			      size_t *addrlen)
{
	struct rfi_ep *ep = rfi_msg_ep(fep);
	struct sockaddr_storage peer;
	size_t len = *addrlen;
	int ret = -FI_ENOTCONN;

	*addrlen = sizeof(struct sockaddr_in);
	if (len < sizeof(struct sockaddr_in))
		return -FI_ETOOSMALL;
	rfi_lock(ep->dom);
	if (ep->conn == RFI_CONN_OPEN && ep->peers[0].chan >= 0 &&
	    !rmsg_chan_addr(ep->rep, (uint32_t)ep->peers[0].chan, NULL,
			    &peer) && peer.ss_family == AF_INET) {
		memcpy(addr, &peer, sizeof(struct sockaddr_in));
		ret = 0;
	}
	rfi_unlock(ep->dom);
	return ret;
}

struct fi_ops_cm rfi_msg_cm_ops = {
	.size = sizeof(struct fi_ops_cm),
	.setname = rfi_cm_no_setname,
	.getname = rfi_getname,
	.getpeer = rfi_msg_cm_getpeer,
	.connect = rfi_msg_cm_connect,
	.listen = rfi_cm_no_listen,
	.accept = rfi_msg_cm_accept,
	.reject = rfi_cm_no_reject,
	.shutdown = rfi_msg_cm_shutdown,
	.join = rfi_cm_no_join,
};
