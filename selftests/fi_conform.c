// SPDX-License-Identifier: GPL-2.0
/*
 * fi_conform: what libfabric's conformance programs found the rmsg
 * provider doing against fi_getinfo(3) and fi_msg(3), through libfabric's
 * own API (libfabric_test.sh runs it in the test guest with
 * FI_PROVIDER_PATH set):
 *
 *   1. fi_getinfo() with hints the provider cannot give answers
 *      -FI_ENODATA rather than an info without them: FI_SHARED_AV in the
 *      domain's capabilities, an inject size of 16 KiB (4 KiB is what it
 *      can), a largest message over what rmsg carries, FI_RMA in the
 *      transmit capabilities, FI_DELIVERY_COMPLETE or FI_MATCH_COMPLETE
 *      as default transmit flags (an eager send completes when the kernel
 *      holds its bytes, not when the peer has them), FI_MULTI_RECV as a
 *      default receive flag; the same hints without them match, an inject
 *      size asked below the provider's is given at least, and
 *      FI_INJECT_COMPLETE as a default is given;
 *   2. an endpoint whose tx_attr->op_flags have FI_INJECT: fi_tsend() and
 *      fi_send() still write their completions (only the fi_inject*()
 *      calls write none), the buffer is the program's again when the
 *      call returns (it is overwritten at once), and the receiver gets
 *      every byte as it was; a fi_tinject() after them arrives whole, and
 *      the completions are exactly the two sends'; a fi_sendmsg() asking
 *      for FI_DELIVERY_COMPLETE is refused, -FI_EBADFLAGS.
 *
 * Prints one line per check and exits 0 when all hold; a completion that
 * never comes fails its check after LIMIT_S seconds.
 */
#include <time.h>

#include "fi_test.h"

#define LIMIT_S		20
#define LEN		1000

struct op {
	int done;
	int err;
	size_t len;
};

/* Completions read on each side, for the count of 2. */
static int completions;

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
		if (!op) {
			printf("# a completion without a context\n");
			failed = 1;
			continue;
		}
		op->done = 1;
		op->len = e.len;
		completions++;
	}
	if (n == -FI_EAVAIL) {
		memset(&err, 0, sizeof(err));
		if (fi_cq_readerr(s->cq, &err, 0) == 1 && err.op_context) {
			op = err.op_context;
			op->done = 1;
			op->err = err.err;
		}
	} else if (n != -FI_EAGAIN) {
		die("fi_cq_read", (int)n);
	}
}

static struct side c;

/* Drive a, b and c until @op completes: 1, or 0 after LIMIT_S. */
static int wait_op(struct op *op)
{
	time_t end = time(NULL) + LIMIT_S;

	while (!op->done) {
		drain(&a);
		drain(&b);
		drain(&c);
		if (time(NULL) > end)
			return 0;
	}
	return 1;
}

/* fi_getinfo() of the provider with @h: 0 or its error. */
static int getinfo(struct fi_info *h, struct fi_info **info)
{
	*info = NULL;
	return fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, h, info);
}

static struct fi_info *hints(void)
{
	struct fi_info *h = fi_dupinfo(test_hints);

	if (!h)
		die("fi_dupinfo", -FI_ENOMEM);
	return h;
}

static void part1(void)
{
	struct fi_info *h, *info;
	int ret;

	h = hints();
	h->domain_attr->caps = FI_SHARED_AV;
	ret = getinfo(h, &info);
	printf("# FI_SHARED_AV: %d\n", ret);
	check(ret == -FI_ENODATA, "1: FI_SHARED_AV asked for: -FI_ENODATA");
	fi_freeinfo(info);
	h->domain_attr->caps = FI_LOCAL_COMM | FI_REMOTE_COMM;
	ret = getinfo(h, &info);
	check(!ret, "1: FI_LOCAL_COMM | FI_REMOTE_COMM asked for: a match");
	fi_freeinfo(info);
	fi_freeinfo(h);

	h = hints();
	h->tx_attr->inject_size = 16384;
	ret = getinfo(h, &info);
	printf("# inject size 16384: %d, %zu\n", ret,
	       info ? info->tx_attr->inject_size : 0);
	check(ret == -FI_ENODATA, "1: an inject size of 16 KiB: -FI_ENODATA");
	fi_freeinfo(info);
	h->tx_attr->inject_size = 64;
	ret = getinfo(h, &info);
	check(!ret && info->tx_attr->inject_size >= 64,
	      "1: an inject size of 64 bytes: a match, with 64 or more");
	fi_freeinfo(info);
	fi_freeinfo(h);

	h = hints();
	h->ep_attr->max_msg_size = 1ULL << 40;
	ret = getinfo(h, &info);
	check(ret == -FI_ENODATA, "1: a largest message of 1 TiB: -FI_ENODATA");
	fi_freeinfo(info);
	fi_freeinfo(h);

	h = hints();
	h->tx_attr->caps = FI_MSG | FI_RMA;
	ret = getinfo(h, &info);
	check(ret == -FI_ENODATA, "1: FI_RMA to transmit: -FI_ENODATA");
	fi_freeinfo(info);
	fi_freeinfo(h);

	h = hints();
	h->tx_attr->op_flags = FI_COMPLETION | FI_DELIVERY_COMPLETE;
	ret = getinfo(h, &info);
	check(ret == -FI_ENODATA,
	      "1: FI_DELIVERY_COMPLETE by default: -FI_ENODATA");
	fi_freeinfo(info);
	h->tx_attr->op_flags = FI_COMPLETION | FI_MATCH_COMPLETE;
	ret = getinfo(h, &info);
	check(ret == -FI_ENODATA,
	      "1: FI_MATCH_COMPLETE by default: -FI_ENODATA");
	fi_freeinfo(info);
	h->tx_attr->op_flags = FI_COMPLETION | FI_INJECT_COMPLETE;
	ret = getinfo(h, &info);
	check(!ret && info->tx_attr->op_flags ==
		      (FI_COMPLETION | FI_INJECT_COMPLETE),
	      "1: FI_COMPLETION | FI_INJECT_COMPLETE: a match, given");
	fi_freeinfo(info);
	h->tx_attr->op_flags = 0;
	h->rx_attr->op_flags = FI_MULTI_RECV;
	ret = getinfo(h, &info);
	check(ret == -FI_ENODATA, "1: FI_MULTI_RECV receives: -FI_ENODATA");
	fi_freeinfo(info);
	fi_freeinfo(h);
}

/* Send from c to b with the call @how, then overwrite the buffer. */
static void send_c(int how, unsigned char *buf, unsigned int seed,
		   struct op *op)
{
	ssize_t n;

	memset(op, 0, sizeof(*op));
	fill(buf, LEN, seed);
	do {
		if (how == 0)
			n = fi_tsend(c.ep, buf, LEN, NULL, c.peer, seed, op);
		else if (how == 1)
			n = fi_send(c.ep, buf, LEN, NULL, c.peer, op);
		else
			n = fi_tinject(c.ep, buf, LEN, c.peer, seed);
		if (n == -FI_EAGAIN)
			drain(&c);
	} while (n == -FI_EAGAIN);
	if (n)
		die("a send with FI_INJECT", (int)n);
	fill(buf, LEN, seed + 100);	/* the program's again */
}

static void part2(void)
{
	static unsigned char out[LEN], in[3][LEN];
	struct op s[3], r[3];
	char name[64];
	size_t len = sizeof(name);
	uint64_t flags = test_info->tx_attr->op_flags;
	int ret, i, ok;

	/* c: an endpoint of the same domain with FI_INJECT in op_flags. */
	test_info->tx_attr->op_flags |= FI_INJECT;
	open_side(&c, FI_WAIT_NONE, 64);
	test_info->tx_attr->op_flags = flags;
	ret = fi_getname(&b.ep->fid, name, &len);
	if (!ret && fi_av_insert(av, name, 1, &c.peer, 0, NULL) != 1)
		ret = -FI_EINVAL;
	if (ret)
		die("b's name", ret);

	memset(in, 0, sizeof(in));
	for (i = 0; i < 3; i++) {
		memset(&r[i], 0, sizeof(r[i]));
		ret = i == 1 ? fi_recv(b.ep, in[i], LEN, NULL, FI_ADDR_UNSPEC,
				       &r[i]) :
			       fi_trecv(b.ep, in[i], LEN, NULL, FI_ADDR_UNSPEC,
					20 + i, 0, &r[i]);
		if (ret)
			die("a receive", ret);
	}
	completions = 0;
	send_c(0, out, 20, &s[0]);
	check(wait_op(&s[0]) && !s[0].err && s[0].len == LEN,
	      "2: fi_tsend() with FI_INJECT in op_flags completes");
	send_c(1, out, 21, &s[1]);
	check(wait_op(&s[1]) && !s[1].err && s[1].len == LEN,
	      "2: fi_send() with FI_INJECT in op_flags completes");
	send_c(2, out, 22, &s[2]);
	ok = 1;
	for (i = 0; i < 3; i++)
		ok = ok && wait_op(&r[i]) && !r[i].err && r[i].len == LEN &&
		     same(in[i], LEN, 20 + i);
	check(ok, "2: the two sends and an inject after them arrive, every byte");
	/* Time for a completion of the inject, which must not come. */
	for (i = 0; i < 1000; i++)
		drain(&c);
	printf("# completions: %d\n", completions);
	check(completions == 5,
	      "2: completions: the two sends' and the three receives'");
	{
		struct iovec iov = { out, LEN };
		struct fi_msg msg = {
			.msg_iov = &iov, .iov_count = 1, .addr = c.peer,
		};

		ret = (int)fi_sendmsg(c.ep, &msg, FI_DELIVERY_COMPLETE);
		check(ret == -FI_EBADFLAGS,
		      "2: fi_sendmsg() with FI_DELIVERY_COMPLETE: -FI_EBADFLAGS");
	}
	fi_close(&c.ep->fid);
	fi_close(&c.cq->fid);
	c.ep = NULL;
}

int main(void)
{
	test_open("fi_conform", 0, FI_WAIT_NONE, 64);
	part1();
	part2();
	test_close();
	return failed;
}
