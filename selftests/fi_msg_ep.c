// SPDX-License-Identifier: GPL-2.0
/*
 * Connected endpoints (FI_EP_MSG) of the rmsg provider, server and client
 * in two processes (the client forked, the passive endpoint's name sent
 * down a pipe): a connect and its FI_CONNECTED on both sides; every size
 * of a list from 0 B to 4 MiB (each power of two, one less and one more)
 * both ways with fi_send()/fi_recv() and with fi_sendmsg()/fi_recvmsg()
 * (two pieces, remote CQ data), every byte checked; a connect the server
 * refuses (fi_reject()) is an EQ error entry with FI_ECONNREFUSED at the
 * client; fi_shutdown() cancels the server's own posted receive and is
 * FI_SHUTDOWN at the client, whose posted receive fails; eight endpoints
 * accepted from one passive endpoint at once, each carrying its own
 * client's messages (rendezvous sizes), four of them closed before the
 * passive endpoint and four still carrying messages after it closed.
 *
 * Prints "ok WHAT" or "FAILED WHAT" per check (selftests/
 * libfabric_test.sh counts them, 20 in all); exits 0 when all passed, 1
 * when one failed, 2 on an error that stops it.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fi_test.h"

#define MAX_LEN		(4U << 20)
#define NMANY		8
#define WAIT_MS		30000
#define MANY_LEN	(64U << 10)	/* rendezvous: over the eager size */

static struct fid_eq *eq;
static struct fid_cq *cq;
static int to_peer = -1, from_peer = -1;
static const char *side_name;

/* A byte to the peer and one from it: both reached the same point. */
static void sync_peer(void)
{
	char c = 0;

	if (write(to_peer, &c, 1) != 1 || read(from_peer, &c, 1) != 1)
		die("the other process went", -FI_EIO);
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/*
 * The next EQ event within WAIT_MS: its type, or -FI_EAVAIL with the
 * error entry in *@err (when given), or another negative error.
 */
static int eq_next(struct fi_eq_cm_entry *entry, struct fi_eq_err_entry *err)
{
	struct fi_eq_err_entry e;
	uint32_t event;
	ssize_t rd;

	rd = fi_eq_sread(eq, &event, entry, sizeof(*entry), WAIT_MS, 0);
	if (rd == -FI_EAVAIL) {
		memset(&e, 0, sizeof(e));
		if (fi_eq_readerr(eq, &e, 0) != sizeof(e))
			return -FI_EIO;
		if (err)
			*err = e;
		return -FI_EAVAIL;
	}
	if (rd < 0)
		return (int)rd;
	return rd == sizeof(*entry) ? (int)event : -FI_EIO;
}

/*
 * The next completion of the CQ within WAIT_MS: 0, or the error of an
 * error entry (positive, its context in *@e too), or -FI_EAGAIN.
 */
static int cq_next(struct fi_cq_data_entry *e)
{
	struct fi_cq_err_entry err;
	double end = now_ms() + WAIT_MS;
	ssize_t rd;

	do {
		rd = fi_cq_read(cq, e, 1);
		if (rd == 1)
			return 0;
		if (rd == -FI_EAVAIL) {
			memset(&err, 0, sizeof(err));
			if (fi_cq_readerr(cq, &err, 0) != 1)
				die("fi_cq_readerr", -FI_EIO);
			memset(e, 0, sizeof(*e));
			e->op_context = err.op_context;
			e->flags = err.flags;
			return err.err ? err.err : FI_EIO;
		}
		if (rd != -FI_EAGAIN)
			die("fi_cq_read", (int)rd);
	} while (now_ms() < end);
	return -FI_EAGAIN;
}

/*
 * The completions of contexts @first and @second, in either order, and
 * nothing else: 0 when both succeeded, @second's entry in *@e.
 */
static int cq_wait_two(void *first, void *second,
		       struct fi_cq_data_entry *e)
{
	struct fi_cq_data_entry got;
	int ret, bad = 0, seen = 0;

	while (seen != 3) {
		ret = cq_next(&got);
		if (ret < 0)
			return ret;
		if (got.op_context == first && !(seen & 1)) {
			seen |= 1;
		} else if (got.op_context == second && !(seen & 2)) {
			seen |= 2;
			*e = got;
		} else {
			return -FI_EOTHER;
		}
		bad = bad || ret;
	}
	return bad;
}

static struct fid_ep *make_ep(struct fi_info *info)
{
	struct fid_ep *ep;
	int ret;

	ret = fi_endpoint(domain, info, &ep, NULL);
	if (!ret)
		ret = fi_ep_bind(ep, &eq->fid, 0);
	if (!ret)
		ret = fi_ep_bind(ep, &cq->fid, FI_TRANSMIT | FI_RECV);
	if (!ret)
		ret = fi_enable(ep);
	if (ret)
		die("a connected endpoint", ret);
	return ep;
}

/* The fabric, domain, EQ and CQ of this process. */
static void open_fabric(const char *name)
{
	struct fi_cq_attr cq_attr = {
		.format = FI_CQ_FORMAT_DATA,
		.wait_obj = FI_WAIT_NONE,
	};
	struct fi_eq_attr eq_attr = { .wait_obj = FI_WAIT_UNSPEC };
	int ret;

	test_name = side_name = name;
	test_hints = fi_allocinfo();
	if (!test_hints)
		die("fi_allocinfo", -FI_ENOMEM);
	test_hints->caps = FI_MSG;
	test_hints->ep_attr->type = FI_EP_MSG;
	test_hints->fabric_attr->prov_name = strdup("rmsg");
	ret = fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, test_hints,
			 &test_info);
	if (ret)
		die("fi_getinfo -p rmsg -e msg", ret);
	ret = fi_fabric(test_info->fabric_attr, &fabric, NULL);
	if (!ret)
		ret = fi_eq_open(fabric, &eq_attr, &eq, NULL);
	if (!ret)
		ret = fi_domain(fabric, test_info, &domain, NULL);
	if (!ret)
		ret = fi_cq_open(domain, &cq_attr, &cq, NULL);
	if (ret)
		die("fabric, EQ, domain, CQ", ret);
}

/* The sizes: 0, then each power of two to MAX_LEN, one less and one more. */
static size_t sizes[80];
static unsigned int nsizes;

static void make_sizes(void)
{
	size_t p;

	sizes[nsizes++] = 0;
	for (p = 1; p <= MAX_LEN; p *= 2) {
		if (p - 1 > sizes[nsizes - 1])
			sizes[nsizes++] = p - 1;
		if (p > sizes[nsizes - 1])
			sizes[nsizes++] = p;
		if (p < MAX_LEN)
			sizes[nsizes++] = p + 1;
	}
}

/*
 * Post a send (@send) or a receive of @len bytes at @buf, as @how says:
 * 0, fi_send()/fi_recv(); 1, fi_sendmsg()/fi_recvmsg() in two pieces, the
 * send with its length as remote CQ data.
 */
static int post_one(struct fid_ep *ep, int send, void *buf, size_t len,
		    int how, void *ctx)
{
	struct iovec iov[2] = {
		{ buf, len / 2 },
		{ (char *)buf + len / 2, len - len / 2 },
	};
	struct fi_msg msg = {
		.msg_iov = iov,
		.iov_count = 2,
		.context = ctx,
		.data = len,
	};

	if (send)
		return (int)(how ? fi_sendmsg(ep, &msg, FI_REMOTE_CQ_DATA) :
				   fi_send(ep, buf, len, NULL, 0, ctx));
	return (int)(how ? fi_recvmsg(ep, &msg, 0) :
			   fi_recv(ep, buf, len, NULL, 0, ctx));
}

/*
 * Every size both ways on @ep: the client sends first, the server
 * answers with bytes of another seed. Returns whether all came whole (of
 * the right length, with the sender's CQ data when @how).
 */
static int exchange_sizes(struct fid_ep *ep, int server, int how,
			  unsigned char *sbuf, unsigned char *rbuf)
{
	struct fi_cq_data_entry e;
	unsigned int i, seed;
	int ok = 1, ret;
	size_t len;
	char rctx, sctx;

	for (i = 0; i < nsizes && ok; i++) {
		len = sizes[i];
		seed = i + (server ? 1 : 0) + 10 * how;
		ret = post_one(ep, 0, rbuf, MAX_LEN, how, &rctx);
		if (ret)
			die("a receive", ret);
		if (server) {
			ret = cq_next(&e);
			ok = !ret && e.op_context == &rctx && e.len == len &&
			     same(rbuf, len, seed - 1) &&
			     (!how || ((e.flags & FI_REMOTE_CQ_DATA) &&
				       e.data == len));
		}
		fill(sbuf, len, seed);
		ret = post_one(ep, 1, sbuf, len, how, &sctx);
		if (ret)
			die("a send", ret);
		if (server) {
			ret = cq_next(&e);
			ok = ok && !ret && e.op_context == &sctx;
		} else {
			ret = cq_wait_two(&sctx, &rctx, &e);
			ok = !ret && e.len == len && same(rbuf, len, seed + 1);
		}
		if (!ok)
			fprintf(stderr, "%s: size %zu (%s) failed\n",
				side_name, len, how ? "sendmsg" : "send");
	}
	return ok;
}

static void check_sizes(int ok, int how)
{
	char what[160];

	snprintf(what, sizeof(what),
		 "%s: %s, %u sizes from 0 B to 4 MiB both ways, every byte%s",
		 side_name, how ? "fi_sendmsg()/fi_recvmsg() in two pieces" :
		 "fi_send()/fi_recv()", nsizes, how ? ", remote CQ data" : "");
	check(ok, what);
}

/* --- the server ------------------------------------------------------ */

static void run_server(void)
{
	static unsigned char sbuf[MAX_LEN], rbuf[MAX_LEN];
	static unsigned char many[NMANY][MANY_LEN + NMANY];
	struct fid_ep *ep, *eps[NMANY] = { NULL };
	unsigned int i, j, got, which[NMANY];
	struct fi_cq_data_entry e;
	struct fi_eq_cm_entry entry;
	struct fid_pep *pep;
	fid_t handle;
	char name[64];
	size_t len = sizeof(name);
	int ok, ret, ev, seen;

	open_fabric("server");
	ret = fi_passive_ep(fabric, test_info, &pep, NULL);
	if (!ret)
		ret = fi_pep_bind(pep, &eq->fid, 0);
	if (!ret)
		ret = fi_listen(pep);
	if (!ret)
		ret = fi_getname(&pep->fid, name, &len);
	if (ret)
		die("the passive endpoint", ret);
	/* Through the passive endpoint's fi_ops_ep: once a NULL pointer. */
	{
		size_t optlen = sizeof(len);

		check(fi_getopt(&pep->fid, FI_OPT_ENDPOINT,
				FI_OPT_CM_DATA_SIZE, &len, &optlen) ==
				-FI_ENOPROTOOPT &&
		      fi_setopt(&pep->fid, FI_OPT_ENDPOINT,
				FI_OPT_CM_DATA_SIZE, &len, optlen) ==
				-FI_ENOPROTOOPT &&
		      fi_cancel(&pep->fid, NULL) == -FI_ENOENT,
		      "server: fi_getopt(), fi_setopt(), fi_cancel() of a passive endpoint answer");
		len = sizeof(name);
	}
	if (write(to_peer, &len, sizeof(len)) != sizeof(len) ||
	    write(to_peer, name, len) != (ssize_t)len)
		die("the name to the client", -FI_EIO);

	/* A connection, every size both ways. */
	ev = eq_next(&entry, NULL);
	check(ev == FI_CONNREQ && entry.fid == &pep->fid && entry.info &&
	      entry.info->handle, "server: FI_CONNREQ, its info's handle set");
	if (ev != FI_CONNREQ)
		die("no connection request", ev);
	ep = make_ep(entry.info);
	handle = entry.info->handle;
	fi_freeinfo(entry.info);
	ret = fi_accept(ep, NULL, 0);
	if (ret)
		die("fi_accept", ret);
	ev = eq_next(&entry, NULL);
	check(ev == FI_CONNECTED && entry.fid == &ep->fid,
	      "server: FI_CONNECTED on the endpoint accepted");
	/* As fi_pingpong's error path does: refused, the handle still good. */
	check(fi_reject(pep, handle, NULL, 0) == -FI_EOPBADSTATE,
	      "server: fi_reject() of a request already accepted is refused");
	check_sizes(exchange_sizes(ep, 1, 0, sbuf, rbuf), 0);
	check_sizes(exchange_sizes(ep, 1, 1, sbuf, rbuf), 1);

	/* A second client's connect, refused. */
	ev = eq_next(&entry, NULL);
	ret = ev == FI_CONNREQ ? fi_reject(pep, entry.info->handle, NULL, 0) :
				 ev;
	if (ev == FI_CONNREQ)
		fi_freeinfo(entry.info);
	check(!ret, "server: fi_reject() of the second connection request");

	/* fi_shutdown(): the receive posted here is cancelled. */
	ret = fi_recv(ep, rbuf, 64, NULL, 0, rbuf);
	if (ret)
		die("a receive", ret);
	sync_peer();	/* the client posted its receive */
	ret = fi_shutdown(ep, 0);
	ok = !ret && cq_next(&e) == FI_ECANCELED && e.op_context == rbuf;
	check(ok, "server: fi_shutdown() cancels its posted receive (FI_ECANCELED)");
	sync_peer();	/* the client saw the end */
	fi_close(&ep->fid);

	/* Eight at once, from one passive endpoint, each accepted as it comes. */
	seen = 0;
	i = 0;
	for (j = 0; j < 2 * NMANY; j++) {
		ev = eq_next(&entry, NULL);
		if (ev == FI_CONNREQ && i < NMANY) {
			eps[i] = make_ep(entry.info);
			fi_freeinfo(entry.info);
			if (fi_accept(eps[i++], NULL, 0))
				break;
			continue;
		}
		for (got = 0; got < i; got++)
			if (ev == FI_CONNECTED && entry.fid == &eps[got]->fid)
				seen |= 1 << got;
		if (ev != FI_CONNECTED)
			break;
	}
	check(seen == (1 << NMANY) - 1,
	      "server: 8 connection requests at once accepted, FI_CONNECTED on each");
	if (seen != (1 << NMANY) - 1)
		die("the eight", -FI_EIO);
	/* Each gets one client endpoint's message: which says its length. */
	for (i = 0; i < NMANY; i++)
		if (fi_recv(eps[i], many[i], sizeof(many[i]), NULL, 0,
			    &eps[i]))
			die("a receive", -FI_EIO);
	ok = 1;
	seen = 0;
	for (got = 0; got < NMANY && ok; got++) {
		ok = !cq_next(&e);
		for (i = 0; ok && i < NMANY && e.op_context != &eps[i]; i++)
			;
		if (!ok || i == NMANY || e.len < MANY_LEN ||
		    e.len >= MANY_LEN + NMANY)
			break;
		which[i] = (unsigned int)(e.len - MANY_LEN);
		ok = same(many[i], e.len, 100 + which[i]) &&
		     !(seen & (1 << which[i]));
		seen |= 1 << which[i];
	}
	for (i = 0; ok && i < NMANY; i++) {
		fill(sbuf, MANY_LEN / 2 + which[i], 200 + which[i]);
		ok = !fi_send(eps[i], sbuf, MANY_LEN / 2 + which[i], NULL, 0,
			      NULL) && !cq_next(&e);
	}
	check(ok && seen == (1 << NMANY) - 1,
	      "server: each of the 8 endpoints carried its own client's messages, every byte");

	/* Four close before the passive endpoint, four after it. */
	sync_peer();	/* the client posted receives on all eight */
	for (i = 0; i < NMANY / 2; i++)
		fi_close(&eps[i]->fid);
	ret = fi_close(&pep->fid);
	for (i = NMANY / 2; !ret && i < NMANY; i++) {
		fill(sbuf, MANY_LEN, 300 + which[i]);
		ret = (int)fi_send(eps[i], sbuf, MANY_LEN, NULL, 0, NULL);
		if (!ret)
			ret = cq_next(&e);
	}
	check(!ret, "server: 4 endpoints carry messages after fi_close() of their passive endpoint");
	sync_peer();	/* the client has them */
	for (i = NMANY / 2; i < NMANY; i++)
		fi_close(&eps[i]->fid);
}

/* --- the client ------------------------------------------------------ */

static void run_client(void)
{
	static unsigned char sbuf[MAX_LEN], rbuf[MAX_LEN];
	static unsigned char many[NMANY][MANY_LEN];
	struct fid_ep *ep, *ep2, *eps[NMANY];
	struct fi_cq_data_entry e;
	struct fi_eq_cm_entry entry;
	struct fi_eq_err_entry err;
	unsigned int i, got, shut, msgs;
	char name[64];
	size_t len;
	int ok, ret, ev;

	if (read(from_peer, &len, sizeof(len)) != sizeof(len) ||
	    len > sizeof(name) || read(from_peer, name, len) != (ssize_t)len)
		die("the server's name", -FI_EIO);
	open_fabric("client");

	ep = make_ep(test_info);
	ret = fi_connect(ep, name, NULL, 0);
	if (ret)
		die("fi_connect", ret);
	ev = eq_next(&entry, NULL);
	check(ev == FI_CONNECTED && entry.fid == &ep->fid,
	      "client: FI_CONNECTED");
	if (ev != FI_CONNECTED)
		die("no connection", ev);
	check_sizes(exchange_sizes(ep, 0, 0, sbuf, rbuf), 0);
	check_sizes(exchange_sizes(ep, 0, 1, sbuf, rbuf), 1);

	ep2 = make_ep(test_info);
	ret = fi_connect(ep2, name, NULL, 0);
	memset(&err, 0, sizeof(err));
	ev = ret ? ret : eq_next(&entry, &err);
	check(ev == -FI_EAVAIL && err.fid == &ep2->fid &&
	      err.err == FI_ECONNREFUSED,
	      "client: a refused connect is an EQ error entry, FI_ECONNREFUSED");
	fi_close(&ep2->fid);

	ret = fi_recv(ep, rbuf, 64, NULL, 0, rbuf);
	if (ret)
		die("a receive", ret);
	sync_peer();
	ev = eq_next(&entry, NULL);
	check(ev == FI_SHUTDOWN && entry.fid == &ep->fid,
	      "client: the server's fi_shutdown() is FI_SHUTDOWN on its EQ");
	ret = cq_next(&e);
	check(ret > 0 && e.op_context == rbuf,
	      "client: its posted receive completes with an error");
	sync_peer();
	fi_close(&ep->fid);

	for (i = 0; i < NMANY; i++) {
		eps[i] = make_ep(test_info);
		ret = fi_connect(eps[i], name, NULL, 0);
		if (ret)
			die("fi_connect", ret);
	}
	for (got = 0; got < NMANY; got++)
		if (eq_next(&entry, NULL) != FI_CONNECTED)
			break;
	check(got == NMANY, "client: 8 endpoints connected at once");
	ok = got == NMANY;
	/* Each sends from a buffer of its own: all are in flight at once. */
	for (i = 0; ok && i < NMANY; i++) {
		unsigned char *out = sbuf + i * (MANY_LEN + NMANY);

		fill(out, MANY_LEN + i, 100 + i);
		ok = !fi_recv(eps[i], many[i], sizeof(many[i]), NULL, 0,
			      &eps[i]) &&
		     !fi_send(eps[i], out, MANY_LEN + i, NULL, 0, NULL);
	}
	msgs = 0;
	for (got = 0; ok && got < 2 * NMANY; got++) {
		ok = !cq_next(&e);
		if (ok && !e.op_context)
			continue;	/* a send */
		for (i = 0; ok && i < NMANY && e.op_context != &eps[i]; i++)
			;
		ok = ok && i < NMANY && e.len == MANY_LEN / 2 + i &&
		     same(many[i], e.len, 200 + i);
		msgs++;
	}
	check(ok && msgs == NMANY,
	      "client: each of the 8 got its own answer, every byte");

	/* Four servers' endpoints close, four send: which is which. */
	for (i = 0; i < NMANY; i++)
		if (fi_recv(eps[i], many[i], sizeof(many[i]), NULL, 0,
			    &eps[i]))
			die("a receive", -FI_EIO);
	sync_peer();
	shut = msgs = 0;
	ok = 1;
	for (got = 0; ok && got < NMANY; got++) {
		ret = cq_next(&e);
		for (i = 0; ret >= 0 && i < NMANY && e.op_context != &eps[i];
		     i++)
			;
		ok = ret >= 0 && i < NMANY;
		if (ok && ret)
			shut++;
		else if (ok)
			msgs += e.len == MANY_LEN && same(many[i], e.len,
							   300 + i);
	}
	for (i = 0; i < NMANY / 2; i++)
		if (eq_next(&entry, NULL) == FI_SHUTDOWN)
			shut += 0x100;
	check(msgs == NMANY / 2 && shut == (NMANY / 2) * 0x101,
	      "client: 4 messages after the passive endpoint closed, 4 FI_SHUTDOWNs with their receives failed");
	sync_peer();
	for (i = 0; i < NMANY; i++)
		fi_close(&eps[i]->fid);
}

int main(void)
{
	int down[2], up[2], status;
	pid_t pid;

	setvbuf(stdout, NULL, _IOLBF, 0);
	make_sizes();
	if (pipe(down) || pipe(up))
		return 2;
	pid = fork();
	if (pid < 0)
		return 2;
	if (!pid) {
		to_peer = up[1];
		from_peer = down[0];
		run_client();
		return failed;
	}
	to_peer = down[1];
	from_peer = up[0];
	run_server();
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return 2;
	if (WEXITSTATUS(status) > 1)
		return WEXITSTATUS(status);
	return failed || WEXITSTATUS(status);
}
