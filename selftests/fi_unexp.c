// SPDX-License-Identifier: GPL-2.0
/*
 * fi_unexp: rendezvous messages that arrive before their receive, through
 * libfabric's own API (libfabric_test.sh runs it in the test guest with
 * FI_PROVIDER_PATH set, and FI_LOG_LEVEL=info to read the provider's
 * counters at close).
 *
 * Two RDM endpoints of one domain, a sending to b, one thread that drives
 * both by reading their CQs. Each large message is sent, seen to have
 * arrived at b with FI_PEEK, and only then received:
 *
 *   1. one message: its bytes wait at the sender and are read straight
 *      into the receive posted late (no copy through the provider);
 *   2. two messages and a small one after them on the same channel,
 *      received in the other order (small, second, first): the first must
 *      be read into the provider's memory once the second needs its
 *      answer, the second goes straight into its receive, tag matching
 *      and the channel's order hold;
 *   3. FI_PEEK | FI_CLAIM, then a receive with FI_CLAIM: straight in;
 *   4. FI_DISCARD of one: the receive completes with no bytes, its send
 *      completes without error (the bytes never moved), and the next
 *      message is whole;
 *   5. one message, then more small ones than a held message may keep
 *      back, received small ones first: it is read into the provider's
 *      memory so that the sender does not stall, and is whole;
 *   7. (before 6) the order of one peer's messages (FI_ORDER_SAS) across
 *      the provider's ways of sending: injects from one buffer refilled at
 *      once (straight to librmsg while nothing of the peer's waits),
 *      sends that complete later, and rendezvous messages, all of one tag
 *      into receives posted before, so that the k-th message must land in
 *      the k-th receive, whole;
 *   6. a large message and a small one, then a's endpoint closes, all
 *      before b looks, so that b's progress finds the channel's end
 *      together with what came before it: the receive posted for the
 *      small one gets it whole, the one posted later for the large one
 *      fails (its bytes went with a) rather than waiting for ever, with
 *      the channel's end (ECONNRESET) as its prov_errno, and a
 *      receive from any source stays posted (a peer leaving fails nobody
 *      else's receives) until fi_cancel() takes it.
 *
 * Every byte of every message is checked, and every send must complete
 * without error. Prints one line per check and exits 0 when all hold.
 * libfabric_test.sh then checks the counters b's close logged: 7
 * messages straight into the posted buffer (1, 2's second, 3, 4's
 * second, 7's three), 2 through the provider's memory (2's first, 5).
 */
#include <errno.h>
#include <time.h>
#include <unistd.h>

#include "fi_test.h"

#define BIG		(256 * 1024)	/* rendezvous */
#define SMALL		3000		/* eager */
#define SMALLS		8		/* 24 KB: more than a held one keeps */
#define LIMIT_S		60
#define ORDERED		120		/* part 7: 3 of them large */
#define ORDERED_LEN(k)	(1 + (k) * 37 % SMALL)

/* An operation's context: its completion lands here. */
struct op {
	int done;
	int err;
	int prov_errno;
	size_t len;
	uint64_t tag;
};

/* Take what completed on @s's CQ into the contexts it names. */
static void drain(struct side *s)
{
	struct fi_cq_tagged_entry e;
	struct fi_cq_err_entry err;
	struct op *op;
	ssize_t n;

	while ((n = fi_cq_read(s->cq, &e, 1)) == 1) {
		op = e.op_context;
		op->done = 1;
		op->len = e.len;
		op->tag = e.tag;
	}
	if (n == -FI_EAVAIL) {
		memset(&err, 0, sizeof(err));
		if (fi_cq_readerr(s->cq, &err, 0) == 1) {
			op = err.op_context;
			op->done = 1;
			op->err = err.err;
			op->prov_errno = err.prov_errno;
			op->len = err.len;
			op->tag = err.tag;
		}
	} else if (n != -FI_EAGAIN) {
		die("fi_cq_read", (int)n);
	}
}

/* Drive @s alone until @op completes. */
static void wait_side(struct side *s, struct op *op, const char *what)
{
	time_t end = time(NULL) + LIMIT_S;

	while (!op->done) {
		drain(s);
		if (time(NULL) > end) {
			fprintf(stderr, "fi_unexp: %s: no completion in %d s\n",
				what, LIMIT_S);
			exit(2);
		}
	}
}

/* Drive both sides (b alone once a closed) until @op completes. */
static void wait_op(struct op *op, const char *what)
{
	time_t end = time(NULL) + LIMIT_S;

	while (!op->done) {
		if (a.ep)
			drain(&a);
		drain(&b);
		if (time(NULL) > end) {
			fprintf(stderr, "fi_unexp: %s: no completion in %d s\n",
				what, LIMIT_S);
			exit(2);
		}
	}
}

static void send_msg(const void *buf, size_t len, uint64_t tag, struct op *op)
{
	ssize_t n;

	memset(op, 0, sizeof(*op));
	while ((n = fi_tsend(a.ep, buf, len, NULL, a.peer, tag, op)) ==
	       -FI_EAGAIN) {
		drain(&a);
		drain(&b);
	}
	if (n)
		die("fi_tsend", (int)n);
}

static void inject_msg(const void *buf, size_t len, uint64_t tag)
{
	ssize_t n;

	while ((n = fi_tinject(a.ep, buf, len, a.peer, tag)) == -FI_EAGAIN) {
		drain(&a);
		drain(&b);
	}
	if (n)
		die("fi_tinject", (int)n);
}

static void recv_msg(void *buf, size_t len, uint64_t tag, uint64_t flags,
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
static size_t arrived(uint64_t tag, uint64_t flags, struct op *claim)
{
	time_t end = time(NULL) + LIMIT_S;
	struct op peek, *op = claim ? claim : &peek;

	do {
		recv_msg(NULL, 0, tag, FI_PEEK | flags, op);
		wait_op(op, "FI_PEEK");
		if (!op->err)
			return op->len;
		drain(&a);
	} while (time(NULL) <= end);
	fprintf(stderr, "fi_unexp: no message of tag %llu came\n",
		(unsigned long long)tag);
	exit(2);
}

int main(void)
{
	static unsigned char out[4][BIG], in[4][BIG];
	static unsigned char sout[SMALLS][SMALL], sin[SMALLS][SMALL];
	static unsigned char oout[ORDERED][SMALL], oin[ORDERED][SMALL];
	struct op s[4], r[4], ss[SMALLS], sr[SMALLS], claim;
	static struct op os[ORDERED], or[ORDERED];
	int i, ok;

	for (i = 0; i < 4; i++)
		fill(out[i], BIG, i + 1);
	for (i = 0; i < SMALLS; i++)
		fill(sout[i], SMALL, i + 11);
	test_open("fi_unexp", 0, FI_WAIT_NONE, 256);

	/* 1 */
	send_msg(out[0], BIG, 1, &s[0]);
	check(arrived(1, 0, NULL) == BIG, "1: FI_PEEK sees the message, its length");
	check(!s[0].done, "1: its send waits for the receive");
	recv_msg(in[0], BIG, 1, 0, &r[0]);
	wait_op(&r[0], "receive 1");
	wait_op(&s[0], "send 1");
	check(!r[0].err && r[0].len == BIG && same(in[0], BIG, 1),
	      "1: received late, every byte");
	check(!s[0].err, "1: the send completed");

	/* 2 */
	send_msg(out[1], BIG, 21, &s[1]);
	send_msg(out[2], BIG, 22, &s[2]);
	send_msg(sout[0], SMALL, 23, &ss[0]);
	arrived(23, 0, NULL);
	recv_msg(sin[0], SMALL, 23, 0, &sr[0]);
	wait_op(&sr[0], "receive 23");
	recv_msg(in[2], BIG, 22, 0, &r[2]);
	wait_op(&r[2], "receive 22");
	recv_msg(in[1], BIG, 21, 0, &r[1]);
	wait_op(&r[1], "receive 21");
	wait_op(&s[1], "send 21");
	wait_op(&s[2], "send 22");
	wait_op(&ss[0], "send 23");
	check(!sr[0].err && sr[0].len == SMALL && same(sin[0], SMALL, 11),
	      "2: the small one after them, first, every byte");
	check(!r[2].err && r[2].len == BIG && r[2].tag == 22 &&
	      same(in[2], BIG, 3), "2: the second, every byte");
	check(!r[1].err && r[1].len == BIG && r[1].tag == 21 &&
	      same(in[1], BIG, 2), "2: the first, last, every byte");
	check(!s[1].err && !s[2].err && !ss[0].err, "2: every send completed");

	/* 3 */
	send_msg(out[3], BIG, 3, &s[3]);
	check(arrived(3, FI_CLAIM, &claim) == BIG, "3: FI_PEEK | FI_CLAIM");
	memset(in[3], 0, BIG);
	recv_msg(in[3], BIG, 3, FI_CLAIM, &claim);
	wait_op(&claim, "receive 3");
	wait_op(&s[3], "send 3");
	check(!claim.err && claim.len == BIG && same(in[3], BIG, 4),
	      "3: the claimed message, every byte");
	check(!s[3].err, "3: the send completed");

	/* 4 */
	send_msg(out[0], BIG, 41, &s[0]);
	arrived(41, 0, NULL);
	recv_msg(NULL, 0, 41, FI_DISCARD, &r[0]);
	wait_op(&r[0], "discard 41");
	send_msg(out[1], BIG, 42, &s[1]);
	arrived(42, 0, NULL);
	memset(in[1], 0, BIG);
	recv_msg(in[1], BIG, 42, 0, &r[1]);
	wait_op(&r[1], "receive 42");
	wait_op(&s[0], "send 41");
	wait_op(&s[1], "send 42");
	check(!r[0].err, "4: FI_DISCARD completed");
	check(!s[0].err, "4: the discarded message's send completed");
	check(!r[1].err && r[1].len == BIG && same(in[1], BIG, 2),
	      "4: the next one, every byte");

	/* 5 */
	send_msg(out[2], BIG, 5, &s[2]);
	for (i = 0; i < SMALLS; i++)
		send_msg(sout[i], SMALL, 50 + i, &ss[i]);
	ok = 1;
	for (i = 0; i < SMALLS; i++) {
		recv_msg(sin[i], SMALL, 50 + i, 0, &sr[i]);
		wait_op(&sr[i], "a small one");
		ok &= !sr[i].err && sr[i].len == SMALL &&
		      same(sin[i], SMALL, i + 11);
	}
	check(ok, "5: the small ones after it, first, every byte");
	memset(in[2], 0, BIG);
	recv_msg(in[2], BIG, 5, 0, &r[2]);
	wait_op(&r[2], "receive 5");
	wait_op(&s[2], "send 5");
	ok = !s[2].err;
	for (i = 0; i < SMALLS; i++) {
		wait_op(&ss[i], "a small send");
		ok &= !ss[i].err;
	}
	check(!r[2].err && r[2].len == BIG && same(in[2], BIG, 3),
	      "5: the large one, last, every byte");
	check(ok, "5: every send completed");

	/* 7: message k is large when k % 40 == 20, a send when k % 10 == 5 */
	for (i = 0; i < ORDERED; i++) {
		if (i % 40 == 20)
			recv_msg(in[i / 40], BIG, 70, 0, &or[i]);
		else
			recv_msg(oin[i], SMALL, 70, 0, &or[i]);
	}
	for (i = 0; i < ORDERED; i++) {
		if (i % 40 == 20) {
			fill(out[i / 40], BIG, 200 + i);
			send_msg(out[i / 40], BIG, 70, &os[i]);
		} else if (i % 10 == 5) {
			fill(oout[i], ORDERED_LEN(i), 200 + i);
			send_msg(oout[i], ORDERED_LEN(i), 70, &os[i]);
		} else {
			/* The buffer is the program's again at once. */
			fill(oout[0], ORDERED_LEN(i), 200 + i);
			inject_msg(oout[0], ORDERED_LEN(i), 70);
			os[i].done = 1;
		}
	}
	ok = 1;
	for (i = 0; i < ORDERED; i++) {
		size_t want = i % 40 == 20 ? BIG : ORDERED_LEN(i);

		wait_op(&or[i], "an ordered receive");
		if (i % 40 != 20 && i % 10 == 5)
			wait_op(&os[i], "an ordered send");
		if (or[i].err || or[i].len != want ||
		    !same(i % 40 == 20 ? in[i / 40] : oin[i], want, 200 + i)) {
			printf("# message %d: err %d, %zu bytes (%zu)\n", i,
			       or[i].err, or[i].len, want);
			ok = 0;
		}
	}
	for (i = 20; i < ORDERED; i += 40) {
		wait_op(&os[i], "an ordered large send");
		ok &= !os[i].err;
	}
	check(ok, "7: injects, sends and large ones in their order, whole");

	/* 6 */
	send_msg(out[3], BIG, 61, &s[3]);
	send_msg(sout[0], SMALL, 62, &ss[0]);
	memset(sin[0], 0, SMALL);
	recv_msg(sin[0], SMALL, 62, 0, &sr[0]);
	recv_msg(sin[1], SMALL, 63, 0, &sr[1]);
	wait_side(&a, &ss[0], "send 62");
	fi_close(&a.ep->fid);
	a.ep = NULL;
	/* Time for a's RESET to reach b's kernel, with the bytes ahead. */
	sleep(1);
	wait_op(&sr[0], "receive 62");
	check(!sr[0].err && sr[0].len == SMALL && same(sin[0], SMALL, 11),
	      "6: sent before its sender closed, every byte");
	recv_msg(in[3], BIG, 61, 0, &r[3]);
	wait_op(&r[3], "receive 61");
	check(r[3].err == FI_EIO, "6: the large one fails: its sender left");
	printf("# its prov_errno: %d (%s)\n", r[3].prov_errno,
	       strerror(r[3].prov_errno));
	check(r[3].prov_errno == ECONNRESET,
	      "6: its prov_errno says why: ECONNRESET, the channel's end");
	for (i = 0; i < 100; i++)
		drain(&b);
	if (sr[1].done) {
		printf("# the receive from any source ended: %s\n",
		       fi_strerror(sr[1].err));
		sr[1].err = 0;
	} else if (!fi_cancel(&b.ep->fid, &sr[1])) {
		wait_op(&sr[1], "cancel 63");
	}
	check(sr[1].err == FI_ECANCELED,
	      "6: a receive from any source stays posted, fi_cancel() takes it");

	test_close();
	return failed;
}
