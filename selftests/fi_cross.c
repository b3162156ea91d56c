// SPDX-License-Identifier: GPL-2.0
/*
 * fi_cross: two endpoints that both open a channel to the other end up
 * sharing one, through libfabric's own API (libfabric_test.sh runs it in
 * the test guest with FI_PROVIDER_PATH set, and FI_LOG_LEVEL=info to read
 * the provider's counters at close).
 *
 * Two RDM endpoints of one domain, each in the other's address vector,
 * one thread that drives them by reading their CQs:
 *
 *   1. each posts a receive from any source; a sends to b and is driven
 *      alone until its send completes (its channel is open and greeted);
 *      then b sends to a: b reads a's hello first, so its send goes on
 *      a's channel and b opens none. Both receives complete with every
 *      byte and the sender's address;
 *   2. a ping-pong of PINGS messages each way, sizes from 1 byte to past
 *      the eager limit (rendezvous), every byte checked, in order;
 *   0. (before 1, on two endpoints c and d of their own) each sends to the
 *      other before either is driven, so that both open a channel at once:
 *      the one of the greater name holds its hello back for the other's
 *      and then gives its own channel up. Both messages and a ping-pong
 *      come whole; which of the two channels stays depends on the order
 *      the kernel reports the two connections in.
 *   3. (after 0, on endpoints e and f of their own) both open and greet a
 *      channel before either reads the other's hello: f sends to e and is
 *      not driven; once f's channel is up in the kernel, e sends to f and
 *      is driven alone until its message is out (e's channel open and
 *      greeted); f, driven then, hears its own channel open before e's
 *      (the kernel reports them in that order), greets it, and only then
 *      reads e's hello. The one of the greater name moves its sends to
 *      the other's channel behind a LAST on its own. BURST messages each
 *      way, sizes past the eager limit too, all with one tag so that they
 *      match in the order they come, sent before the move and after, must
 *      come whole and in order; then a ping-pong;
 *   4. (on g and h) g sends to h before g's name is in the address vector:
 *      h reads its hello and message from an unknown address
 *      (FI_ADDR_NOTAVAIL); then g's name goes in and h sends to g on the
 *      channel g opened, opening none. A burst and a ping-pong as in 3.
 *   5. (on GROUP endpoints of their own, GROUP_ROUNDS times, each time
 *      new ones) every endpoint sends to every other before any is
 *      driven, so that every pair dials at once while each endpoint has
 *      other peers' channels opening too; then, on the channels they
 *      settled on, a second message each way past the eager limit. The
 *      endpoints send and are driven in another order each round. Every
 *      message whole, from the right peer;
 *   6. (on STEP_EPS endpoints of their own, STEP_ROUNDS times) the pattern
 *      of MPI_Barrier's recursive doubling: in step k each endpoint i
 *      exchanges a message with i XOR k (k = 1, 2, 4), both sending at
 *      once, and waits for both before the next step: channels given up
 *      in one step are closing while the next step opens new ones. Then
 *      the steps again on the channels they left.
 *   7. (first of all, before the program opens anything) PROCS processes
 *      of one endpoint each, as an MPI job's ranks, PROC_ROUNDS times,
 *      each time with new endpoints: the steps of a barrier as in 6, each
 *      process driving only its own endpoint, then every process sends to
 *      every other at once, past the eager limit. A process's receives
 *      must all come whole, from the right peer; the parent checks that
 *      every process exited 0. Their log level is FI_CROSS_LOG's (default
 *      warn): debug shows each one's channel events with a provider built
 *      PROV_DEBUG=1.
 *
 * A receive that does not complete in LIMIT_S seconds ends the program
 * (exit 2); with FI_RMSG_DUMP=1 the provider prints its state first.
 *
 * libfabric_test.sh then checks the counters the first six and the last
 * two closes logged (c, d, e, f, g, h, and a, b; those of 5 and 6 come
 * between): c, d, e, f, g and a opened one channel each, h and b none; of
 * c and d at most one closed its own, of e and f exactly one, of g and h
 * none.
 */
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fi_test.h"

#define LIMIT_S		60
#define PINGS		40
#define MAXLEN		(96 * 1024)
#define PING_LEN(k)	((k) % 4 == 3 ? MAXLEN - (k) : 1 + (k) * 613 % 4000)
#define BURST		16
#define GROUP		4
#define GROUP_ROUNDS	12
#define STEP_EPS	8
#define STEP_ROUNDS	6
#define PROCS		4
#define PROC_ROUNDS	6

struct op {
	int done;
	int err;
	size_t len;
	uint64_t tag;
	fi_addr_t src;
};

static void drain(struct side *s)
{
	struct fi_cq_tagged_entry e;
	struct fi_cq_err_entry err;
	fi_addr_t src;
	struct op *op;
	ssize_t n;

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
		}
	} else if (n != -FI_EAGAIN) {
		die("fi_cq_readfrom", (int)n);
	}
}

static struct side c, d, e, f, g, h;

/* Drive @only (or all, for NULL) until @op completes. */
static void wait_op(struct side *only, struct op *op, const char *what)
{
	time_t end = time(NULL) + LIMIT_S;

	while (!op->done) {
		if (only)
			drain(only);
		if (!only) {
			drain(&a);
			drain(&b);
		}
		if (!only && c.ep) {
			drain(&c);
			drain(&d);
		}
		if (!only && e.ep) {
			drain(&e);
			drain(&f);
		}
		if (!only && g.ep) {
			drain(&g);
			drain(&h);
		}
		if (time(NULL) > end) {
			fprintf(stderr, "fi_cross: %s: no completion in %d s\n",
				what, LIMIT_S);
			/* FI_RMSG_DUMP: the provider's state, at a progress. */
			if (only && getenv("FI_RMSG_DUMP")) {
				raise(SIGUSR2);
				drain(only);
			}
			exit(2);
		}
	}
}

static void send_to(struct side *from, fi_addr_t to, const void *buf,
		    size_t len, uint64_t tag, struct op *op)
{
	ssize_t n;

	memset(op, 0, sizeof(*op));
	while ((n = fi_tsend(from->ep, buf, len, NULL, to, tag, op)) ==
	       -FI_EAGAIN)
		drain(from);
	if (n)
		die("fi_tsend", (int)n);
}

static void recv_on(struct side *s, void *buf, size_t len, uint64_t tag,
		    struct op *op)
{
	ssize_t n;

	memset(op, 0, sizeof(*op));
	n = fi_trecv(s->ep, buf, len, NULL, FI_ADDR_UNSPEC, tag, 0, op);
	if (n)
		die("fi_trecv", (int)n);
}

static fi_addr_t av_add(struct side *s, const char *what)
{
	fi_addr_t fa;
	char addr[64];
	size_t len = sizeof(addr);
	int ret;

	ret = fi_getname(&s->ep->fid, addr, &len);
	if (!ret && fi_av_insert(av, addr, 1, &fa, 0, NULL) != 1)
		ret = -FI_EINVAL;
	if (ret)
		die(what, ret);
	return fa;
}

/*
 * A ping-pong of PINGS messages between @x (at @to_y) and @y (at @to_x),
 * every byte checked.
 */
static int ping_pong(struct side *x, fi_addr_t to_y, struct side *y,
		     fi_addr_t to_x, unsigned char (*out)[MAXLEN],
		     unsigned char (*in)[MAXLEN])
{
	struct op s[2], r[2];
	int k, ok = 1;

	for (k = 0; k < PINGS && ok; k++) {
		size_t n = PING_LEN(k);

		fill(out[0], n, 10 + k);
		recv_on(y, in[1], MAXLEN, 100 + k, &r[1]);
		send_to(x, to_y, out[0], n, 100 + k, &s[0]);
		wait_op(NULL, &r[1], "ping");
		ok = !r[1].err && r[1].len == n && same(in[1], n, 10 + k);
		fill(out[1], n, 50 + k);
		recv_on(x, in[0], MAXLEN, 200 + k, &r[0]);
		send_to(y, to_x, out[1], n, 200 + k, &s[1]);
		wait_op(NULL, &r[0], "pong");
		ok = ok && !r[0].err && r[0].len == n &&
		     same(in[0], n, 50 + k);
		wait_op(NULL, &s[0], "ping's send");
		wait_op(NULL, &s[1], "pong's send");
		ok = ok && !s[0].err && !s[1].err;
	}
	return ok;
}

/* BURST messages each way between @x and @y at once, matched in order. */
static int burst_both_ways(struct side *x, fi_addr_t to_x, struct side *y,
		 fi_addr_t to_y)
{
	static unsigned char out[2][BURST][MAXLEN], in[2][BURST][MAXLEN];
	static struct op s[2][BURST], r[2][BURST];
	int k, ok = 1;

	for (k = 0; k < BURST; k++) {
		recv_on(y, in[0][k], MAXLEN, 12, &r[0][k]);
		recv_on(x, in[1][k], MAXLEN, 12, &r[1][k]);
	}
	for (k = 0; k < BURST; k++) {
		fill(out[0][k], PING_LEN(k), 20 + k);
		fill(out[1][k], PING_LEN(k), 60 + k);
		send_to(x, to_y, out[0][k], PING_LEN(k), 12, &s[0][k]);
		send_to(y, to_x, out[1][k], PING_LEN(k), 12, &s[1][k]);
	}
	for (k = 0; k < BURST; k++) {
		wait_op(NULL, &r[0][k], "a receive of the volley");
		wait_op(NULL, &r[1][k], "a receive of the volley");
		wait_op(NULL, &s[0][k], "a send of the volley");
		wait_op(NULL, &s[1][k], "a send of the volley");
		ok = ok && !s[0][k].err && !s[1][k].err && !r[0][k].err &&
		     !r[1][k].err && r[0][k].len == (size_t)PING_LEN(k) &&
		     same(in[0][k], PING_LEN(k), 20 + k) &&
		     r[1][k].len == (size_t)PING_LEN(k) &&
		     same(in[1][k], PING_LEN(k), 60 + k) &&
		     r[0][k].src == to_x && r[1][k].src == to_y;
	}
	return ok;
}

/* The endpoints of scenarios 5 and 6, and their addresses. */
static struct side grp[STEP_EPS];
static fi_addr_t grp_at[STEP_EPS];

/* Drive the first @n endpoints of grp, from @first on, until @op completes. */
static void wait_group(int n, int first, struct op *op, const char *what)
{
	time_t end = time(NULL) + LIMIT_S;
	int i;

	while (!op->done) {
		for (i = 0; i < n; i++)
			drain(&grp[(first + i) % n]);
		if (time(NULL) > end) {
			fprintf(stderr, "fi_cross: %s: no completion in %d s\n",
				what, LIMIT_S);
			/* FI_RMSG_DUMP: the provider's state, at each progress. */
			if (getenv("FI_RMSG_DUMP")) {
				raise(SIGUSR2);
				for (i = 0; i < n; i++)
					drain(&grp[i]);
			}
			exit(2);
		}
	}
}

static void group_open(int n)
{
	int i;

	for (i = 0; i < n; i++) {
		open_side(&grp[i], FI_WAIT_NONE, 256);
		grp_at[i] = av_add(&grp[i], "a group endpoint's name");
	}
}

static void group_close(int n)
{
	int i;

	for (i = 0; i < n; i++) {
		fi_close(&grp[i].ep->fid);
		fi_close(&grp[i].cq->fid);
		grp[i].ep = NULL;
	}
}

/* The bytes of @round's message of @phase from endpoint @i to @j. */
static unsigned int group_seed(int round, int phase, int i, int j)
{
	return 1000 + round * 256 + phase * 64 + i * STEP_EPS + j;
}

static size_t group_len(int round, int phase, int i, int j)
{
	return phase ? MAXLEN - 977 * (i * STEP_EPS + j) % 5000 :
		       1 + (round * 131 + i * 29 + j * 7) % 3000;
}

/*
 * Every endpoint of the first @n sends to every other at once and every
 * message is checked: the endpoints send, and are driven, from @first on.
 * Returns whether all came whole, from the right peer.
 */
static int group_all_to_all(int n, int round, int phase, int first)
{
	static unsigned char out[GROUP][GROUP][MAXLEN], in[GROUP][GROUP][MAXLEN];
	static struct op s[GROUP][GROUP], r[GROUP][GROUP];
	uint64_t tag = 0x500 + phase;
	int i, j, k, m, ok = 1;

	for (j = 0; j < n; j++)
		for (i = 0; i < n; i++)
			if (i != j)
				recv_on(&grp[j], in[j][i], MAXLEN,
					tag << 8 | i << 4 | j, &r[j][i]);
	for (k = 0; k < n; k++) {
		i = (first + k) % n;
		for (m = 1; m < n; m++) {
			j = (i + m) % n;
			fill(out[i][j], group_len(round, phase, i, j),
			     group_seed(round, phase, i, j));
			send_to(&grp[i], grp_at[j], out[i][j],
				group_len(round, phase, i, j),
				tag << 8 | i << 4 | j, &s[i][j]);
		}
	}
	for (j = 0; j < n; j++)
		for (i = 0; i < n; i++) {
			size_t len = group_len(round, phase, i, j);

			if (i == j)
				continue;
			wait_group(n, first, &r[j][i], "5: a receive");
			wait_group(n, first, &s[i][j], "5: a send");
			if (s[i][j].err || r[j][i].err ||
			    r[j][i].len != len ||
			    !same(in[j][i], len,
				  group_seed(round, phase, i, j)) ||
			    r[j][i].src != grp_at[i]) {
				fprintf(stderr,
					"fi_cross: 5: round %d phase %d: %d to %d: err %d %d len %zu of %zu src %llu not %llu\n",
					round, phase, i, j, s[i][j].err,
					r[j][i].err, r[j][i].len, len,
					(unsigned long long)r[j][i].src,
					(unsigned long long)grp_at[i]);
				ok = 0;
			}
		}
	return ok;
}

/* Scenario 5: see the top of the file. */
static int group_crossed(void)
{
	int round, ok = 1;

	for (round = 0; round < GROUP_ROUNDS; round++) {
		group_open(GROUP);
		ok = group_all_to_all(GROUP, round, 0, round % GROUP) && ok;
		ok = group_all_to_all(GROUP, round, 1, (round + 1) % GROUP) &&
		     ok;
		group_close(GROUP);
	}
	return ok;
}

/*
 * One step of scenario 6: each endpoint exchanges a message with its
 * partner i XOR @k, sending from @first on; both must come whole.
 */
static int barrier_step(int round, int pass, int k, int first)
{
	static unsigned char out[STEP_EPS][MAXLEN], in[STEP_EPS][MAXLEN];
	static struct op s[STEP_EPS], r[STEP_EPS];
	uint64_t tag = 0x600 + pass * 8 + k;
	int i, j, m, ok = 1;

	for (i = 0; i < STEP_EPS; i++)
		recv_on(&grp[i], in[i], MAXLEN, tag, &r[i]);
	for (m = 0; m < STEP_EPS; m++) {
		i = (first + m) % STEP_EPS;
		fill(out[i], group_len(round, pass, i, i ^ k),
		     group_seed(round, pass, i, i ^ k));
		send_to(&grp[i], grp_at[i ^ k], out[i],
			group_len(round, pass, i, i ^ k), tag, &s[i]);
	}
	for (i = 0; i < STEP_EPS; i++) {
		size_t len;

		j = i ^ k;
		len = group_len(round, pass, j, i);
		wait_group(STEP_EPS, first, &r[i], "6: a step's receive");
		wait_group(STEP_EPS, first, &s[j], "6: a step's send");
		if (s[j].err || r[i].err || r[i].len != len ||
		    !same(in[i], len, group_seed(round, pass, j, i)) ||
		    r[i].src != grp_at[j]) {
			fprintf(stderr,
				"fi_cross: 6: round %d pass %d step %d: %d to %d: err %d %d len %zu of %zu\n",
				round, pass, k, j, i, s[j].err, r[i].err,
				r[i].len, len);
			ok = 0;
		}
	}
	return ok;
}

/* Scenario 6: see the top of the file. */
static int barrier_crossed(void)
{
	int round, pass, k, ok = 1;

	for (round = 0; round < STEP_ROUNDS; round++) {
		group_open(STEP_EPS);
		for (pass = 0; pass < 2; pass++)
			for (k = 1; k < STEP_EPS; k <<= 1)
				ok = barrier_step(round, pass, k,
						  (round + k) % STEP_EPS) &&
				     ok;
		group_close(STEP_EPS);
	}
	return ok;
}

/*
 * What the processes of scenario 7 share: each one's endpoint name in
 * each round, and how far each has come (PROC_READY, PROC_DONE).
 */
struct mesh {
	char name[PROC_ROUNDS][PROCS][64];
	size_t name_len[PROC_ROUNDS][PROCS];
	int stage[PROC_ROUNDS][PROCS];
};

enum { PROC_READY = 1, PROC_DONE = 2 };

/* The process of @me: drive its endpoint until all have reached @stage. */
static void mesh_wait(struct mesh *m, int round, int me, int stage)
{
	time_t end = time(NULL) + LIMIT_S;
	int k;

	for (k = 0; k < PROCS; k++)
		while (__atomic_load_n(&m->stage[round][k], __ATOMIC_ACQUIRE) <
		       stage) {
			if (grp[me].ep)
				drain(&grp[me]);
			sched_yield();
			if (time(NULL) > end) {
				fprintf(stderr,
					"fi_cross: 7: process %d: process %d not there in %d s\n",
					me, k, LIMIT_S);
				exit(2);
			}
		}
}

/* Process @me of scenario 7, round @round, on its endpoint grp[me]. */
static int mesh_round(struct mesh *m, int round, int me)
{
	static unsigned char out[PROCS][MAXLEN], in[PROCS][MAXLEN];
	static struct op s[PROCS], r[PROCS];
	int j, k, ok = 1;
	size_t len;

	open_side(&grp[me], FI_WAIT_NONE, 256);
	m->name_len[round][me] = sizeof(m->name[round][me]);
	if (fi_getname(&grp[me].ep->fid, m->name[round][me],
		       &m->name_len[round][me]))
		die("7: fi_getname", -FI_EINVAL);
	__atomic_store_n(&m->stage[round][me], PROC_READY, __ATOMIC_RELEASE);
	mesh_wait(m, round, me, PROC_READY);
	for (j = 0; j < PROCS; j++)
		if (fi_av_insert(av, m->name[round][j], 1, &grp_at[j], 0,
				 NULL) != 1)
			die("7: fi_av_insert", -FI_EINVAL);

	/* The steps of a barrier, then every process to every other. */
	for (k = 1; k <= PROCS; k <<= 1) {
		int all = k == PROCS;

		for (j = 0; j < PROCS; j++) {
			if (j == me || (!all && j != (me ^ k)))
				continue;
			recv_on(&grp[me], in[j], MAXLEN, 0x700 + k * 16 + j,
				&r[j]);
		}
		for (j = 0; j < PROCS; j++) {
			if (j == me || (!all && j != (me ^ k)))
				continue;
			len = group_len(round, all, me, j);
			fill(out[j], len, group_seed(round, all, me, j));
			send_to(&grp[me], grp_at[j], out[j], len,
				0x700 + k * 16 + me, &s[j]);
		}
		for (j = 0; j < PROCS; j++) {
			if (j == me || (!all && j != (me ^ k)))
				continue;
			len = group_len(round, all, j, me);
			wait_op(&grp[me], &r[j], "7: a receive");
			wait_op(&grp[me], &s[j], "7: a send");
			if (s[j].err || r[j].err || r[j].len != len ||
			    !same(in[j], len, group_seed(round, all, j, me)) ||
			    r[j].src != grp_at[j]) {
				fprintf(stderr,
					"fi_cross: 7: round %d step %d: %d to %d: err %d %d len %zu of %zu\n",
					round, k, j, me, s[j].err, r[j].err,
					r[j].len, len);
				ok = 0;
			}
		}
	}
	__atomic_store_n(&m->stage[round][me], PROC_DONE, __ATOMIC_RELEASE);
	mesh_wait(m, round, me, PROC_DONE);
	fi_close(&grp[me].ep->fid);
	fi_close(&grp[me].cq->fid);
	grp[me].ep = NULL;
	return ok;
}

/*
 * Scenario 7: see the top of the file. Forks before the program opens
 * anything of libfabric's; each process has its own fabric, domain and
 * AV. Returns whether every process exited 0.
 */
static int mesh_processes(void)
{
	struct mesh *m;
	int k, round, status, ok = 1;
	pid_t pid[PROCS];

	m = mmap(NULL, sizeof(*m), PROT_READ | PROT_WRITE,
		 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		die("7: mmap", -FI_ENOMEM);
	memset(m, 0, sizeof(*m));
	fflush(stdout);
	for (k = 0; k < PROCS; k++) {
		pid[k] = fork();
		if (pid[k] < 0)
			die("7: fork", -FI_EAGAIN);
		if (pid[k])
			continue;
		/* Its closes' counters stay out of the parent's log. */
		setenv("FI_LOG_LEVEL", getenv("FI_CROSS_LOG") ?: "warn", 1);
		test_fabric("fi_cross", 0);
		for (round = 0; round < PROC_ROUNDS; round++)
			ok = mesh_round(m, round, k) && ok;
		test_close_fabric();
		exit(ok ? 0 : 1);
	}
	for (k = 0; k < PROCS; k++) {
		if (waitpid(pid[k], &status, 0) != pid[k] ||
		    !WIFEXITED(status) || WEXITSTATUS(status)) {
			fprintf(stderr, "fi_cross: 7: process %d: status %#x\n",
				k, status);
			ok = 0;
		}
	}
	munmap(m, sizeof(*m));
	return ok;
}

/* Scenario 3: see the top of the file. */
static int crossed_after_greeting(void)
{
	static unsigned char out[2][MAXLEN], in[2][MAXLEN];
	fi_addr_t to_e, to_f;
	struct op s[2], r[2];
	int ok;

	open_side(&e, FI_WAIT_NONE, 256);
	open_side(&f, FI_WAIT_NONE, 256);
	to_e = av_add(&e, "e's name");
	to_f = av_add(&f, "f's name");
	fill(out[0], 3000, 5);
	fill(out[1], 3000, 6);
	recv_on(&e, in[0], MAXLEN, 11, &r[0]);
	recv_on(&f, in[1], MAXLEN, 11, &r[1]);
	send_to(&f, to_e, out[1], 3000, 11, &s[1]);
	/* f's channel up in the kernel, its events waiting at f and e. */
	usleep(300 * 1000);
	send_to(&e, to_f, out[0], 3000, 11, &s[0]);
	wait_op(&e, &s[0], "e's first send");
	ok = burst_both_ways(&e, to_e, &f, to_f);
	wait_op(NULL, &r[0], "e's first receive");
	wait_op(NULL, &r[1], "f's first receive");
	wait_op(NULL, &s[1], "f's first send");
	ok = ok && !s[0].err && !s[1].err && !r[0].err && !r[1].err &&
	     r[1].len == 3000 && same(in[1], 3000, 5) && r[1].src == to_e &&
	     r[0].len == 3000 && same(in[0], 3000, 6) && r[0].src == to_f;
	ok = ping_pong(&e, to_f, &f, to_e, out, in) && ok;
	fi_close(&e.ep->fid);
	fi_close(&f.ep->fid);
	e.ep = NULL;
	fi_close(&e.cq->fid);
	fi_close(&f.cq->fid);
	return ok;
}

/* Scenario 4: see the top of the file. */
static int named_late(void)
{
	static unsigned char out[2][MAXLEN], in[2][MAXLEN];
	fi_addr_t to_g, to_h;
	struct op s, r;
	int ok;

	open_side(&g, FI_WAIT_NONE, 256);
	open_side(&h, FI_WAIT_NONE, 256);
	to_h = av_add(&h, "h's name");
	fill(out[0], 3000, 7);
	recv_on(&h, in[0], MAXLEN, 13, &r);
	send_to(&g, to_h, out[0], 3000, 13, &s);
	wait_op(&g, &s, "g's first send");
	/* Driven alone: h reads g's hello with g's name not in the AV. */
	wait_op(&h, &r, "h's first receive");
	ok = !s.err && !r.err && r.len == 3000 && same(in[0], 3000, 7) &&
	     r.src == FI_ADDR_NOTAVAIL;
	check(ok, "4: h received g's message from an address not in the AV");
	to_g = av_add(&g, "g's name");
	ok = burst_both_ways(&g, to_g, &h, to_h);
	ok = ping_pong(&g, to_h, &h, to_g, out, in) && ok;
	fi_close(&g.ep->fid);
	fi_close(&h.ep->fid);
	g.ep = NULL;
	fi_close(&g.cq->fid);
	fi_close(&h.cq->fid);
	return ok;
}

int main(void)
{
	static unsigned char out[2][MAXLEN], in[2][MAXLEN];
	fi_addr_t b_to_a, to_c, to_d;
	struct op s[2], r[2];
	int mesh_ok;

	/* 7 */
	mesh_ok = mesh_processes();
	test_open("fi_cross", 0, FI_WAIT_NONE, 256);
	check(mesh_ok,
	      "7: four processes in the steps of a barrier, then all to all: every message each way whole, from the right peer");
	b_to_a = av_add(&a, "a's name");

	/* 0 */
	open_side(&c, FI_WAIT_NONE, 256);
	open_side(&d, FI_WAIT_NONE, 256);
	to_c = av_add(&c, "c's name");
	to_d = av_add(&d, "d's name");
	fill(out[0], 3000, 3);
	fill(out[1], 3000, 4);
	recv_on(&c, in[0], MAXLEN, 9, &r[0]);
	recv_on(&d, in[1], MAXLEN, 9, &r[1]);
	send_to(&c, to_d, out[0], 3000, 9, &s[0]);
	send_to(&d, to_c, out[1], 3000, 9, &s[1]);
	wait_op(NULL, &s[0], "c's send");
	wait_op(NULL, &s[1], "d's send");
	wait_op(NULL, &r[0], "c's receive");
	wait_op(NULL, &r[1], "d's receive");
	check(!s[0].err && !s[1].err && !r[0].err && !r[1].err &&
	      r[1].len == 3000 && same(in[1], 3000, 3) && r[1].src == to_c &&
	      r[0].len == 3000 && same(in[0], 3000, 4) && r[0].src == to_d,
	      "0: sent at once both ways: both whole, from the right peer");
	check(ping_pong(&c, to_d, &d, to_c, out, in),
	      "0: every ping and pong whole, in order");
	fi_close(&c.ep->fid);
	fi_close(&d.ep->fid);
	c.ep = NULL;
	fi_close(&c.cq->fid);
	fi_close(&d.cq->fid);

	/* 3, 4 */
	check(crossed_after_greeting(),
	      "3: both greeted first: every message whole, in order, from the right peer, across the move");
	check(named_late(),
	      "4: named late: every message whole, in order, from the right peer");

	/* 5, 6 */
	check(group_crossed(),
	      "5: four endpoints dial each other at once: every message each way whole, from the right peer");
	check(barrier_crossed(),
	      "6: eight endpoints in the steps of a barrier: every message each way whole, from the right peer");

	/* 1 */
	fill(out[0], 3000, 1);
	fill(out[1], 3000, 2);
	recv_on(&a, in[0], MAXLEN, 7, &r[0]);
	recv_on(&b, in[1], MAXLEN, 7, &r[1]);
	send_to(&a, a.peer, out[0], 3000, 7, &s[0]);
	wait_op(&a, &s[0], "a's send");
	/* b's listener has long reported a's channel open when b looks. */
	usleep(100 * 1000);
	send_to(&b, b_to_a, out[1], 3000, 7, &s[1]);
	wait_op(NULL, &s[1], "b's send");
	wait_op(NULL, &r[0], "a's receive");
	wait_op(NULL, &r[1], "b's receive");
	check(!s[0].err && !s[1].err, "1: both sends completed");
	check(!r[1].err && r[1].len == 3000 && same(in[1], 3000, 1) &&
	      r[1].src == b_to_a, "1: b received a's message, whole, from a");
	check(!r[0].err && r[0].len == 3000 && same(in[0], 3000, 2) &&
	      r[0].src == a.peer, "1: a received b's message, whole, from b");

	/* 2 */
	check(ping_pong(&a, a.peer, &b, b_to_a, out, in),
	      "2: every ping and pong whole, in order");

	test_close();
	return failed;
}
