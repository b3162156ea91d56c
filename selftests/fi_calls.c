// SPDX-License-Identifier: GPL-2.0
/*
 * fi_calls: calls a second libfabric client makes that the rmsg provider
 * answered wrongly, through libfabric's own API (libfabric_test.sh runs it
 * in the test guest, as root, with FI_PROVIDER_PATH set):
 *
 *   1. FI_PEEK | FI_DISCARD of a message that came, eager and rendezvous:
 *      the peek completes with its length, the message is gone (a peek
 *      after it finds nothing), the rendezvous one's send completes, and
 *      the next message of the same tag is received whole;
 *   2. fi_cq_signal() wakes a thread asleep in fi_cq_sread() (it returns
 *      -FI_EAGAIN at once, not when its 8 s are over), and only once: the
 *      next fi_cq_sread() with nothing coming sleeps its 300 ms;
 *   3. one CQ serves six endpoints: five send to the sixth, and all ten
 *      completions come on it, every byte checked;
 *   4. fi_getinfo() with a node and a service: with FI_SOURCE they are
 *      the source, and an endpoint of that info listens there (its name
 *      has the port; a peer that inserts node and service with
 *      fi_av_insertsvc() reaches it); without, they are the destination;
 *   5. a connect refused at once (the user's channel quota: the program
 *      drops CAP_SYS_RESOURCE and sets max_channels_per_user to 1 for an
 *      endpoint of its own, then puts it back) fails the send in its
 *      completion with a libfabric error code (FI_ENOSPC; the errno,
 *      EDQUOT, as prov_errno), not with a bare -EDQUOT from fi_tsend();
 *   6. multi-receive buffers, which the provider does not offer, are
 *      refused rather than taken for a plain receive: no info for hints
 *      with FI_MULTI_RECV, and fi_recvmsg() with the flag is
 *      -FI_EBADFLAGS; an endpoint enabled without an AV is -FI_ENOAV
 *      (with its CQ bound); fi_av_insertsvc() of a service that is not a
 *      port number is -FI_EINVAL; max_err_data holds the address an
 *      FI_SOURCE_ERR completion carries.
 *
 * Prints one line per check and exits 0 when all hold; a completion that
 * never comes fails its check after LIMIT_S seconds.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/capability.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "fi_test.h"

#define LIMIT_S		20
#define LEN		1000
#define BIG		(256 * 1024)	/* rendezvous */
#define NEPS		6
#define QUOTA_PARAM	"/sys/module/rmsg/parameters/max_channels_per_user"

struct op {
	int done;
	int err;
	int prov_errno;
	size_t len;
};

static struct side extra[NEPS + 2];	/* part 3's, part 4's and part 5's */

static void drain(struct side *s)
{
	struct fi_cq_tagged_entry e;
	struct fi_cq_err_entry err;
	struct op *op;
	ssize_t n;

	if (!s->ep)
		return;
	while ((n = fi_cq_read(s->cq, &e, 1)) == 1) {
		op = e.op_context;
		op->done = 1;
		op->len = e.len;
	}
	if (n == -FI_EAVAIL) {
		memset(&err, 0, sizeof(err));
		if (fi_cq_readerr(s->cq, &err, 0) == 1) {
			op = err.op_context;
			op->done = 1;
			op->err = err.err;
			op->prov_errno = err.prov_errno;
		}
	} else if (n != -FI_EAGAIN) {
		die("fi_cq_read", (int)n);
	}
}

/* Drive every endpoint until @op completes: 1, or 0 after LIMIT_S. */
static int wait_op(struct op *op)
{
	time_t end = time(NULL) + LIMIT_S;
	int i;

	while (!op->done) {
		drain(&a);
		drain(&b);
		for (i = 0; i < NEPS + 2; i++)
			drain(&extra[i]);
		if (time(NULL) > end)
			return 0;
	}
	return 1;
}

static void send_a(const void *buf, size_t len, uint64_t tag, struct op *op)
{
	ssize_t n;

	memset(op, 0, sizeof(*op));
	while ((n = fi_tsend(a.ep, buf, len, NULL, a.peer, tag, op)) ==
	       -FI_EAGAIN)
		drain(&a);
	if (n)
		die("fi_tsend", (int)n);
}

static void recv_b(void *buf, size_t len, uint64_t tag, uint64_t flags,
		   struct op *op)
{
	struct iovec iov = { .iov_base = buf, .iov_len = len };
	struct fi_msg_tagged m = {
		.msg_iov = &iov, .iov_count = 1, .addr = FI_ADDR_UNSPEC,
		.tag = tag, .context = op,
	};
	ssize_t n;

	memset(op, 0, sizeof(*op));
	n = fi_trecvmsg(b.ep, &m, flags | FI_COMPLETION);
	if (n)
		die("fi_trecvmsg", (int)n);
}

/* Peek at b until a message of @tag has arrived; its length. */
static size_t arrived(uint64_t tag)
{
	time_t end = time(NULL) + LIMIT_S;
	struct op peek;

	do {
		recv_b(NULL, 0, tag, FI_PEEK, &peek);
		wait_op(&peek);
		if (!peek.err)
			return peek.len;
		drain(&a);
	} while (time(NULL) <= end);
	fprintf(stderr, "fi_calls: no message of tag %llu came\n",
		(unsigned long long)tag);
	exit(2);
}

/* Part 1 with messages of @len bytes and tag @tag. */
static void peek_discard(size_t len, uint64_t tag, const char *what)
{
	static unsigned char out[2][BIG], in[BIG];
	struct op s[2], r, d, p;
	char line[128];

	fill(out[0], len, (unsigned int)tag);
	fill(out[1], len, (unsigned int)tag + 1);
	send_a(out[0], len, tag, &s[0]);
	arrived(tag);
	recv_b(NULL, 0, tag, FI_PEEK | FI_DISCARD, &d);
	snprintf(line, sizeof(line),
		 "1: %s: FI_PEEK | FI_DISCARD completes with its length", what);
	check(wait_op(&d) && !d.err && d.len == len, line);
	recv_b(NULL, 0, tag, FI_PEEK, &p);
	wait_op(&p);
	snprintf(line, sizeof(line), "1: %s: a peek after it finds nothing",
		 what);
	check(p.err == FI_ENOMSG, line);
	send_a(out[1], len, tag, &s[1]);
	memset(in, 0, len);
	recv_b(in, len, tag, 0, &r);
	snprintf(line, sizeof(line),
		 "1: %s: the next of its tag is received, every byte", what);
	check(wait_op(&r) && !r.err && r.len == len &&
	      same(in, len, (unsigned int)tag + 1), line);
	snprintf(line, sizeof(line), "1: %s: both sends completed", what);
	check(wait_op(&s[0]) && !s[0].err && wait_op(&s[1]) && !s[1].err,
	      line);
}

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

static ssize_t sread_ret;
static long long sread_ms;

static void *sleeper(void *arg)
{
	struct fi_cq_tagged_entry e;
	long long t = now_ms();

	sread_ret = fi_cq_sread(b.cq, &e, 1, NULL, 8000);
	sread_ms = now_ms() - t;
	return NULL;
}

static void part2(void)
{
	struct fi_cq_tagged_entry e;
	pthread_t t;
	long long t0;
	ssize_t n;

	pthread_create(&t, NULL, sleeper, NULL);
	usleep(300 * 1000);
	n = fi_cq_signal(b.cq);
	pthread_join(t, NULL);
	printf("# fi_cq_signal(): %zd; fi_cq_sread(): %zd after %lld ms\n", n,
	       sread_ret, sread_ms);
	check(!n && sread_ret == -FI_EAGAIN && sread_ms < 4000,
	      "2: fi_cq_signal() wakes fi_cq_sread()");
	t0 = now_ms();
	n = fi_cq_sread(b.cq, &e, 1, NULL, 300);
	t0 = now_ms() - t0;
	printf("# then fi_cq_sread(300 ms): %zd after %lld ms\n", n, t0);
	check(n == -FI_EAGAIN && t0 >= 250,
	      "2: the next fi_cq_sread() sleeps its time");
}

static void part3(void)
{
	static unsigned char out[NEPS][LEN], in[NEPS][LEN];
	struct fi_cq_attr cq_attr = {
		.format = FI_CQ_FORMAT_TAGGED, .wait_obj = FI_WAIT_FD,
		.size = 64,
	};
	struct op s[NEPS], r[NEPS];
	struct fid_cq *cq;
	fi_addr_t to0;
	char name[64];
	size_t len = sizeof(name);
	int i, ret, ok = 1;

	ret = fi_cq_open(domain, &cq_attr, &cq, NULL);
	if (ret)
		die("fi_cq_open", ret);
	for (i = 0; i < NEPS; i++) {
		extra[i].cq = cq;
		ret = fi_endpoint(domain, test_info, &extra[i].ep, NULL);
		if (ret)
			die("fi_endpoint", ret);
		ret = fi_ep_bind(extra[i].ep, &av->fid, 0);
		if (!ret)
			ret = fi_ep_bind(extra[i].ep, &cq->fid,
					 FI_TRANSMIT | FI_RECV);
		if (!ret)
			ret = fi_enable(extra[i].ep);
		if (ret) {
			printf("# endpoint %d on the CQ: %s\n", i,
			       fi_strerror(-ret));
			ok = 0;
			fi_close(&extra[i].ep->fid);
			extra[i].ep = NULL;
			break;
		}
	}
	check(ok, "3: six endpoints bound to one CQ and enabled");
	if (!ok) {
		while (i-- > 0) {
			fi_close(&extra[i].ep->fid);
			extra[i].ep = NULL;
		}
		fi_close(&cq->fid);
		return;
	}
	ret = fi_getname(&extra[0].ep->fid, name, &len);
	if (!ret && fi_av_insert(av, name, 1, &to0, 0, NULL) != 1)
		ret = -FI_EINVAL;
	if (ret)
		die("the sixth's name", ret);
	for (i = 1; i < NEPS; i++) {
		memset(&r[i], 0, sizeof(r[i]));
		ret = fi_trecv(extra[0].ep, in[i], LEN, NULL, FI_ADDR_UNSPEC,
			       30 + i, 0, &r[i]);
		if (ret)
			die("fi_trecv", ret);
	}
	for (i = 1; i < NEPS; i++) {
		memset(&s[i], 0, sizeof(s[i]));
		fill(out[i], LEN, 30 + i);
		while ((ret = fi_tsend(extra[i].ep, out[i], LEN, NULL, to0,
				       30 + i, &s[i])) == -FI_EAGAIN)
			drain(&extra[i]);
		if (ret)
			die("fi_tsend", ret);
	}
	for (i = 1; i < NEPS; i++)
		ok = ok && wait_op(&s[i]) && !s[i].err && wait_op(&r[i]) &&
		     !r[i].err && r[i].len == LEN && same(in[i], LEN, 30 + i);
	check(ok, "3: five send to the sixth: ten completions on the one CQ, every byte");
	for (i = 0; i < NEPS; i++) {
		fi_close(&extra[i].ep->fid);
		extra[i].ep = NULL;
	}
	fi_close(&cq->fid);
}

static void part4(void)
{
	static unsigned char out[LEN], in[LEN];
	const struct sockaddr_in *mine = test_info->src_addr;
	struct fi_info *src_info = NULL, *dest_info = NULL;
	const struct sockaddr_in *sin;
	struct side *s = &extra[NEPS];
	struct sockaddr_in name;
	char ip[INET_ADDRSTRLEN], port[16];
	size_t len = sizeof(name);
	struct op so, ro;
	fi_addr_t to;
	int ret, p = 40000 + getpid() % 10000;

	inet_ntop(AF_INET, &mine->sin_addr, ip, sizeof(ip));
	snprintf(port, sizeof(port), "%d", p);
	printf("# node %s, service %s\n", ip, port);
	ret = fi_getinfo(FI_VERSION(1, 17), ip, port, FI_SOURCE, test_hints,
			 &src_info);
	sin = ret ? NULL : src_info->src_addr;
	check(sin && sin->sin_family == AF_INET && ntohs(sin->sin_port) == p &&
	      sin->sin_addr.s_addr == mine->sin_addr.s_addr,
	      "4: FI_SOURCE: node and service are the source address");
	ret = fi_getinfo(FI_VERSION(1, 17), ip, port, 0, test_hints,
			 &dest_info);
	sin = ret ? NULL : dest_info->dest_addr;
	check(sin && sin->sin_family == AF_INET && ntohs(sin->sin_port) == p &&
	      sin->sin_addr.s_addr == mine->sin_addr.s_addr,
	      "4: without FI_SOURCE: they are the destination address");
	fi_freeinfo(dest_info);
	if (!src_info)
		return;

	/* An endpoint of that info, in this domain, with a CQ of its own. */
	fi_freeinfo(test_info);
	test_info = src_info;
	open_side(s, FI_WAIT_FD, 64);
	ret = fi_getname(&s->ep->fid, &name, &len);
	printf("# its name: port %u\n", ret ? 0 : ntohs(name.sin_port));
	check(!ret && ntohs(name.sin_port) == p,
	      "4: an endpoint of it listens on that port");
	ret = fi_av_insertsvc(av, ip, port, &to, 0, NULL);
	if (ret != 1)
		die("fi_av_insertsvc", ret < 0 ? ret : -FI_EINVAL);
	memset(&ro, 0, sizeof(ro));
	memset(in, 0, sizeof(in));
	ret = fi_trecv(s->ep, in, LEN, NULL, FI_ADDR_UNSPEC, 40, 0, &ro);
	if (ret)
		die("fi_trecv", ret);
	fill(out, LEN, 40);
	memset(&so, 0, sizeof(so));
	while ((ret = fi_tsend(a.ep, out, LEN, NULL, to, 40, &so)) ==
	       -FI_EAGAIN)
		drain(&a);
	if (ret)
		die("fi_tsend", ret);
	check(wait_op(&ro) && !ro.err && ro.len == LEN && same(in, LEN, 40) &&
	      wait_op(&so) && !so.err,
	      "4: a peer that inserts node and service reaches it, every byte");
	fi_close(&s->ep->fid);
	fi_close(&s->cq->fid);
	s->ep = NULL;
	/* Later endpoints of test_info take any port again. */
	((struct sockaddr_in *)test_info->src_addr)->sin_port = 0;
}

static char quota_was[32];

static int quota_set(const char *v)
{
	FILE *f = fopen(QUOTA_PARAM, "w");
	int ok;

	if (!f)
		return -errno;
	ok = fputs(v, f) >= 0;
	return fclose(f) || !ok ? -EIO : 0;
}

static void quota_restore(void)
{
	if (quota_was[0] && quota_set(quota_was))
		fprintf(stderr, "fi_calls: %s not put back to %s\n",
			QUOTA_PARAM, quota_was);
}

/* CAP_SYS_RESOURCE away: max_channels_per_user holds for what we open. */
static int drop_sys_resource(void)
{
	struct __user_cap_header_struct h = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct d[2];
	unsigned int i = CAP_SYS_RESOURCE / 32;
	unsigned int bit = 1U << (CAP_SYS_RESOURCE % 32);

	if (syscall(SYS_capget, &h, d))
		return -errno;
	d[i].effective &= ~bit;
	d[i].permitted &= ~bit;
	d[i].inheritable &= ~bit;
	return syscall(SYS_capset, &h, d) ? -errno : 0;
}

static void part5(void)
{
	static unsigned char out[LEN];
	struct side *q = &extra[NEPS + 1];
	struct op so;
	FILE *f;
	ssize_t n;
	int ret;

	f = fopen(QUOTA_PARAM, "r");
	if (!f || !fgets(quota_was, sizeof(quota_was), f)) {
		check(0, "5: max_channels_per_user readable (as root, with rmsg.ko)");
		if (f)
			fclose(f);
		return;
	}
	fclose(f);
	quota_was[strcspn(quota_was, "\n")] = 0;
	atexit(quota_restore);
	ret = drop_sys_resource();
	if (ret)
		die("capset", ret);
	/* a's and b's channel counts already: no room for one more. */
	open_side(q, FI_WAIT_FD, 64);
	ret = quota_set("1");
	if (ret)
		die("max_channels_per_user", ret);
	q->peer = a.peer;
	fill(out, LEN, 50);
	memset(&so, 0, sizeof(so));
	n = fi_tsend(q->ep, out, LEN, NULL, q->peer, 50, &so);
	printf("# fi_tsend(): %zd\n", n);
	if (!n)
		wait_op(&so);
	printf("# its completion: err %d (%s), prov_errno %d\n", so.err,
	       fi_strerror(so.err), so.prov_errno);
	check(!n && so.done && so.err == FI_ENOSPC && so.prov_errno == EDQUOT,
	      "5: a connect refused at once: FI_ENOSPC in the send's completion, EDQUOT its prov_errno");
	quota_restore();
	quota_was[0] = 0;
	fi_close(&q->ep->fid);
	fi_close(&q->cq->fid);
	q->ep = NULL;
}

static void part6(void)
{
	struct fi_info *hints = fi_dupinfo(test_hints), *got = NULL;
	struct fid_ep *ep;
	fi_addr_t addr;
	char buf[64];
	struct iovec iov = { buf, sizeof(buf) };
	struct fi_msg msg = {
		.msg_iov = &iov,
		.iov_count = 1,
		.addr = FI_ADDR_UNSPEC,
	};
	int ret;

	if (!hints)
		die("fi_dupinfo", -FI_ENOMEM);
	hints->caps |= FI_MULTI_RECV;
	ret = fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, hints, &got);
	check(ret == -FI_ENODATA,
	      "6: fi_getinfo() with FI_MULTI_RECV in the hints' caps: -FI_ENODATA");
	if (!ret)
		fi_freeinfo(got);
	fi_freeinfo(hints);
	check(fi_recvmsg(b.ep, &msg, FI_MULTI_RECV) == -FI_EBADFLAGS,
	      "6: fi_recvmsg() with FI_MULTI_RECV: -FI_EBADFLAGS");
	check(test_info->domain_attr->max_err_data >= sizeof(struct sockaddr_in),
	      "6: max_err_data holds an FI_SOURCE_ERR completion's address");

	ret = fi_endpoint(domain, test_info, &ep, NULL);
	if (!ret)
		ret = fi_ep_bind(ep, &a.cq->fid, FI_TRANSMIT | FI_RECV);
	if (ret)
		die("an endpoint without an AV", ret);
	check(fi_enable(ep) == -FI_ENOAV,
	      "6: fi_enable() of an endpoint without an AV: -FI_ENOAV");
	fi_close(&ep->fid);
	check(fi_av_insertsvc(av, "127.0.0.1", "80x", &addr, 0, NULL) ==
		-FI_EINVAL &&
	      fi_av_insertsvc(av, "127.0.0.1", "65536", &addr, 0, NULL) ==
		-FI_EINVAL &&
	      fi_av_insertsvc(av, "127.0.0.1", "", &addr, 0, NULL) ==
		-FI_EINVAL,
	      "6: fi_av_insertsvc() of a service that is no port number: -FI_EINVAL");
}

int main(void)
{
	test_open("fi_calls", FI_THREAD_SAFE, FI_WAIT_FD, 256);
	peek_discard(LEN, 10, "eager");
	peek_discard(BIG, 11, "rendezvous");
	part2();
	part3();
	part4();
	part5();
	part6();
	test_close();
	return failed;
}
