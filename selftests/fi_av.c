// SPDX-License-Identifier: GPL-2.0
/*
 * fi_av: the rmsg provider's address vector as fi_av(3) and its clients
 * want it, through libfabric's own API (libfabric_test.sh runs it in the
 * test guest with FI_PROVIDER_PATH set).
 *
 * RDM endpoints of one domain with FI_DIRECTED_RECV and FI_SOURCE, one
 * address vector for all, one thread that drives them by reading their
 * CQs (fi_cq_readfrom(): the source of each receive is checked):
 *
 *   1. a duplicate insert of b's address returns b's entry (libfabric's
 *      own AV does; Open MPI inserts a peer it knows again when it builds
 *      an intercommunicator), also with FI_MORE; a receive directed to
 *      the entry the duplicate returned takes b's message;
 *   2. c's entry removed and c inserted again: a receive directed to the
 *      new entry takes c's next message, and its source is that entry;
 *      removing one of b's two references leaves b in the AV;
 *   3. d sends two messages to a before d is in the AV; once d is
 *      inserted, a receive directed to d takes the first, and a receive
 *      from any source the second, each with d's entry as its source;
 *   4. FI_SYNC_ERR: the status of each address of an insert, 0 or a
 *      fabric errno, in the array the context points to;
 *   5. an AV opened with FI_EVENT (asynchronous inserts, deprecated) is
 *      refused with -FI_ENOSYS: not offered, rather than not valid;
 *   6. 5000 addresses inserted, then each again in the other order: the
 *      same entries (the AV finds an address without a scan of them all);
 *   7. FI_SOURCE_ERR, asked for with FI_SOURCE (alone it gives no
 *      match): messages from a sender not in the AV complete as errors,
 *      FI_EADDRNOTAVAIL, with every byte received and the sender's name
 *      as err_data, in the program's buffer or, without one, the
 *      provider's; inserted from that name, the sender's next message
 *      completes as usual, with its entry as the source.
 *
 * Every byte of every message is checked. Prints one line per check and
 * exits 0 when all hold; a receive that never matches fails its check
 * after LIMIT_S seconds and is cancelled.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <time.h>

#include "fi_test.h"

#define LIMIT_S		20
#define LEN		3000
#define MANY		5000

struct op {
	int done;
	int err;
	size_t len;
	uint64_t tag;
	fi_addr_t src;
};

static struct side c, d;
/* Part 7: a receiver with FI_SOURCE_ERR and a sender not in the AV. */
static struct side rcv, unk;

static void drain(struct side *s)
{
	struct fi_cq_tagged_entry e;
	struct fi_cq_err_entry err;
	fi_addr_t src;
	struct op *op;
	ssize_t n;

	if (!s->ep)
		return;
	while ((n = fi_cq_readfrom(s->cq, &e, 1, &src)) == 1) {
		op = e.op_context;
		op->done = 1;
		op->len = e.len;
		op->tag = e.tag;
		op->src = src;
	}
	if (n == -FI_EAVAIL) {
		memset(&err, 0, sizeof(err));
		if (fi_cq_readerr(s->cq, &err, 0) == 1) {
			op = err.op_context;
			op->done = 1;
			op->err = err.err;
			op->len = err.len;
			op->tag = err.tag;
		}
	} else if (n != -FI_EAGAIN) {
		die("fi_cq_readfrom", (int)n);
	}
}

/* Drive every endpoint until @op completes: 1, or 0 after LIMIT_S. */
static int wait_op(struct op *op)
{
	time_t end = time(NULL) + LIMIT_S;

	while (!op->done) {
		drain(&a);
		drain(&b);
		drain(&c);
		drain(&d);
		drain(&unk);
		if (time(NULL) > end)
			return 0;
	}
	return 1;
}

static void send_to(struct side *from, fi_addr_t to, const void *buf,
		    uint64_t tag, struct op *op)
{
	ssize_t n;

	memset(op, 0, sizeof(*op));
	while ((n = fi_tsend(from->ep, buf, LEN, NULL, to, tag, op)) ==
	       -FI_EAGAIN)
		drain(from);
	if (n)
		die("fi_tsend", (int)n);
}

/* A receive of @tag on a from @src; @flags FI_PEEK: only a look. */
static void recv_a(void *buf, fi_addr_t src, uint64_t tag, uint64_t flags,
		   struct op *op)
{
	struct iovec iov = { .iov_base = buf, .iov_len = buf ? LEN : 0 };
	struct fi_msg_tagged m = {
		.msg_iov = &iov, .iov_count = 1, .addr = src, .tag = tag,
		.context = op,
	};
	ssize_t n;

	memset(op, 0, sizeof(*op));
	n = fi_trecvmsg(a.ep, &m, flags | FI_COMPLETION);
	if (n)
		die("fi_trecvmsg", (int)n);
}

/*
 * A receive on a of @tag from @src: 1 when it took the message of @seed
 * whole, with @want as its source; a receive that never matches is
 * cancelled.
 */
static int received(fi_addr_t src, uint64_t tag, unsigned int seed,
		    fi_addr_t want)
{
	static unsigned char in[LEN];
	struct op r;

	memset(in, 0, sizeof(in));
	recv_a(in, src, tag, 0, &r);
	if (!wait_op(&r)) {
		printf("# the receive of tag %llu never matched\n",
		       (unsigned long long)tag);
		if (!fi_cancel(&a.ep->fid, &r))
			wait_op(&r);
		return 0;
	}
	if (r.err || r.len != LEN || !same(in, LEN, seed) || r.src != want) {
		printf("# tag %llu: err %d, %zu bytes, source %llu (%llu)\n",
		       (unsigned long long)tag, r.err, r.len,
		       (unsigned long long)r.src, (unsigned long long)want);
		return 0;
	}
	return 1;
}

/* Peek at a until a message of @tag has arrived. */
static void arrived(uint64_t tag)
{
	time_t end = time(NULL) + LIMIT_S;
	struct op peek;

	do {
		recv_a(NULL, FI_ADDR_UNSPEC, tag, FI_PEEK, &peek);
		wait_op(&peek);
		if (!peek.err)
			return;
		drain(&c);
		drain(&d);
	} while (time(NULL) <= end);
	fprintf(stderr, "fi_av: no message of tag %llu came\n",
		(unsigned long long)tag);
	exit(2);
}

static void name_of(struct side *s, struct sockaddr_in *sin)
{
	size_t len = sizeof(*sin);
	int ret = fi_getname(&s->ep->fid, sin, &len);

	if (ret)
		die("fi_getname", ret);
}

static fi_addr_t insert(const struct sockaddr_in *sin, uint64_t flags)
{
	fi_addr_t fa = FI_ADDR_NOTAVAIL;
	int ret = fi_av_insert(av, sin, 1, &fa, flags, NULL);

	if (ret != 1) {
		printf("# fi_av_insert: %d (%s)\n", ret,
		       ret < 0 ? fi_strerror(-ret) : "");
		return FI_ADDR_NOTAVAIL;
	}
	return fa;
}

/*
 * r's next completion, an error one into @err (with @err_buf for its
 * err_data, if not NULL), within LIMIT_S: its return, 1 for an error.
 */
static int next_on_r(struct fi_cq_tagged_entry *e, fi_addr_t *src,
		     struct fi_cq_err_entry *err, void *err_buf)
{
	time_t end = time(NULL) + LIMIT_S;
	ssize_t n;

	do {
		drain(&unk);
		n = fi_cq_readfrom(rcv.cq, e, 1, src);
		if (n == 1)
			return 0;
		if (n == -FI_EAVAIL) {
			memset(err, 0, sizeof(*err));
			err->err_data = err_buf;
			err->err_data_size = err_buf ? 64 : 0;
			return fi_cq_readerr(rcv.cq, err, 0) == 1 ? 1 : -1;
		}
		if (n != -FI_EAGAIN)
			die("fi_cq_readfrom", (int)n);
	} while (time(NULL) <= end);
	return -1;
}

static void part7(void)
{
	static unsigned char out[3][LEN], in[3][LEN];
	struct fi_info *h = fi_dupinfo(test_hints), *info = NULL;
	struct sockaddr_in nu, nr, from, *mine;
	struct fi_cq_tagged_entry e;
	struct fi_cq_err_entry err;
	unsigned char err_buf[64];
	fi_addr_t to_r, fu, src;
	struct op s[3];
	int ret, i, ok;

	if (!h)
		die("fi_dupinfo", -FI_ENOMEM);
	h->caps = FI_MSG | FI_TAGGED | FI_SOURCE_ERR;
	ret = fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, h, &info);
	check(ret == -FI_ENODATA, "7: FI_SOURCE_ERR without FI_SOURCE: no match");
	fi_freeinfo(info);
	info = NULL;
	h->caps = FI_MSG | FI_TAGGED | FI_SOURCE | FI_SOURCE_ERR;
	ret = fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, h, &info);
	fi_freeinfo(h);
	check(!ret && (info->caps & FI_SOURCE_ERR),
	      "7: FI_SOURCE_ERR with FI_SOURCE: offered");
	if (ret)
		return;
	mine = info->src_addr;
	mine->sin_port = 0;
	fi_freeinfo(test_info);
	test_info = info;
	open_side(&rcv, FI_WAIT_NONE, 64);
	name_of(&rcv, &nr);
	to_r = insert(&nr, 0);
	open_side(&unk, FI_WAIT_NONE, 64);
	name_of(&unk, &nu);
	for (i = 0; i < 3; i++) {
		fill(out[i], LEN, 70 + i);
		if (fi_trecv(rcv.ep, in[i], LEN, NULL, FI_ADDR_UNSPEC, 70 + i, 0,
			     &in[i]))
			die("fi_trecv", -FI_EIO);
	}
	send_to(&unk, to_r, out[0], 70, &s[0]);
	send_to(&unk, to_r, out[1], 71, &s[1]);
	ret = next_on_r(&e, &src, &err, err_buf);
	memcpy(&from, err_buf, sizeof(from));
	printf("# from an unknown sender: %d, err %d, err_data_size %zu\n",
	       ret, err.err, err.err_data_size);
	check(ret == 1 && err.err == FI_EADDRNOTAVAIL &&
	      err.op_context == in[0] && err.len == LEN &&
	      same(in[0], LEN, 70) && err.err_data == err_buf &&
	      err.err_data_size == sizeof(from) &&
	      from.sin_port == nu.sin_port &&
	      from.sin_addr.s_addr == nu.sin_addr.s_addr,
	      "7: FI_EADDRNOTAVAIL, every byte, the sender's name in the buffer given");
	ret = next_on_r(&e, &src, &err, NULL);
	ok = ret == 1 && err.err == FI_EADDRNOTAVAIL &&
	     err.op_context == in[1] && same(in[1], LEN, 71) &&
	     err.err_data && err.err_data_size == sizeof(from);
	if (ok)
		memcpy(&from, err.err_data, sizeof(from));
	check(ok && from.sin_port == nu.sin_port,
	      "7: without a buffer, the sender's name in the provider's");
	fu = insert(&from, 0);
	send_to(&unk, to_r, out[2], 72, &s[2]);
	ret = next_on_r(&e, &src, &err, NULL);
	check(ret == 0 && e.op_context == in[2] && e.len == LEN &&
	      same(in[2], LEN, 72) && src == fu && fu != FI_ADDR_NOTAVAIL,
	      "7: inserted from it, the sender's next message has its entry");
	ok = 1;
	for (i = 0; i < 3; i++)
		ok = ok && wait_op(&s[i]) && !s[i].err;
	check(ok, "7: the sends completed");
	fi_close(&unk.ep->fid);
	fi_close(&unk.cq->fid);
	unk.ep = NULL;
	fi_close(&rcv.ep->fid);
	fi_close(&rcv.cq->fid);
	rcv.ep = NULL;
}

int main(void)
{
	static unsigned char out[4][LEN];
	static struct sockaddr_in many[MANY];
	static fi_addr_t many_fa[MANY];
	struct sockaddr_in na, nb, nc, nd, got, two[2];
	struct fi_av_attr ev_attr = { .type = FI_AV_TABLE, .flags = FI_EVENT };
	fi_addr_t fa, dup, fc, fc2, fd, two_fa[2];
	struct fid_av *ev_av = NULL;
	struct op s[4];
	size_t len;
	int i, ok, ret, status[2] = { -1, -1 };

	for (i = 0; i < 4; i++)
		fill(out[i], LEN, i + 1);
	test_caps = FI_DIRECTED_RECV | FI_SOURCE;
	test_open("fi_av", 0, FI_WAIT_NONE, 256);
	open_side(&c, FI_WAIT_NONE, 256);
	open_side(&d, FI_WAIT_NONE, 256);
	name_of(&a, &na);
	name_of(&b, &nb);
	name_of(&c, &nc);
	name_of(&d, &nd);

	/* 1 */
	fa = insert(&na, FI_MORE);
	check(fa != FI_ADDR_NOTAVAIL, "1: an insert with FI_MORE");
	if (fa == FI_ADDR_NOTAVAIL)
		fa = insert(&na, 0);
	dup = insert(&nb, 0);
	check(dup == a.peer, "1: a duplicate insert returns the entry there");
	check(insert(&na, 0) == fa, "1: so does one after FI_MORE");
	send_to(&b, fa, out[0], 11, &s[0]);
	check(received(dup, 11, 1, a.peer),
	      "1: a receive directed to the duplicate's entry takes the message");
	ok = wait_op(&s[0]) && !s[0].err;

	/* 2 */
	fc = insert(&nc, 0);
	send_to(&c, fa, out[1], 21, &s[1]);
	check(received(fc, 21, 2, fc), "2: c's message, from c");
	ok = ok && wait_op(&s[1]) && !s[1].err;
	ret = fi_av_remove(av, &fc, 1, 0);
	len = sizeof(got);
	check(!ret && fi_av_lookup(av, fc, &got, &len) == -FI_EINVAL,
	      "2: c's entry removed");
	fc2 = insert(&nc, 0);
	len = sizeof(got);
	check(fc2 != FI_ADDR_NOTAVAIL && !fi_av_lookup(av, fc2, &got, &len) &&
	      got.sin_port == nc.sin_port, "2: c inserted again");
	send_to(&c, fa, out[2], 22, &s[2]);
	check(received(fc2, 22, 3, fc2),
	      "2: a receive directed to c's new entry takes c's message");
	ok = ok && wait_op(&s[2]) && !s[2].err;
	ret = fi_av_remove(av, &dup, 1, 0);
	len = sizeof(got);
	check(!ret && !fi_av_lookup(av, a.peer, &got, &len) &&
	      got.sin_port == nb.sin_port,
	      "2: b stays after one of its two references is removed");

	/* 3 */
	send_to(&d, fa, out[3], 31, &s[3]);
	send_to(&d, fa, out[0], 32, &s[0]);
	arrived(31);
	arrived(32);
	fd = insert(&nd, 0);
	check(received(fd, 31, 4, fd),
	      "3: a receive directed to a sender inserted after its message came takes it");
	check(received(FI_ADDR_UNSPEC, 32, 1, fd),
	      "3: a receive from any source gives that sender's entry as the source");
	ok = ok && wait_op(&s[3]) && !s[3].err && wait_op(&s[0]) && !s[0].err;
	check(ok, "every send completed");

	/* 4 */
	two[0] = nc;
	memset(&two[1], 0, sizeof(two[1]));	/* no address family */
	ret = fi_av_insert(av, two, 2, two_fa, FI_SYNC_ERR, status);
	printf("# FI_SYNC_ERR: %d, status %d %d\n", ret, status[0], status[1]);
	check(ret == 1 && two_fa[0] == fc2 && two_fa[1] == FI_ADDR_NOTAVAIL &&
	      status[0] == 0 && status[1] == FI_EINVAL,
	      "4: FI_SYNC_ERR gives each address's status");

	/* 5 */
	ret = fi_av_open(domain, &ev_attr, &ev_av, NULL);
	printf("# fi_av_open(FI_EVENT): %d\n", ret);
	check(ret == -FI_ENOSYS, "5: FI_EVENT: -FI_ENOSYS");
	if (!ret)
		fi_close(&ev_av->fid);

	/* 6 */
	for (i = 0; i < MANY; i++) {
		many[i].sin_family = AF_INET;
		many[i].sin_addr.s_addr = htonl(0x0a000000 + i / 7);
		many[i].sin_port = htons(20000 + i % 7);
	}
	ret = fi_av_insert(av, many, MANY, many_fa, 0, NULL);
	ok = ret == MANY;
	for (i = MANY - 1; ok && i >= 0; i--) {
		len = sizeof(got);
		ok = insert(&many[i], 0) == many_fa[i] &&
		     !fi_av_lookup(av, many_fa[i], &got, &len) &&
		     got.sin_addr.s_addr == many[i].sin_addr.s_addr &&
		     got.sin_port == many[i].sin_port;
	}
	check(ok, "6: 5000 addresses, each inserted again: the same entries");

	part7();

	fi_close(&c.ep->fid);
	fi_close(&d.ep->fid);
	fi_close(&c.cq->fid);
	fi_close(&d.cq->fid);
	test_close();
	return failed;
}
