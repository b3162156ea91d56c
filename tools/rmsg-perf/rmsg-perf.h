/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rmsg-perf: what its source files share.
 *
 * Each file calls only the files above it in this list (and librmsg, and
 * the checked messages of tools/common/rmsg_check.c); main.c may call any. A file lower down reaches a higher one only through
 * a function pointer it was handed: the client and the server run a test
 * through its struct perf_test, the event pump hands the recover test's
 * own completions to perf_test->on_mix_op, and the rendezvous mix tells
 * recover of an arrival through worker->arrival.
 *
 *   clock.c      time without a system call
 *   syscount.c   system calls counted; the hold-syscount subcommand
 *   common.c     the options, the threads' state, dying, message stamps
 *   report.c     what the tests' reports share: header, JSON keys, figures
 *   event.c      waiting, events, the control protocol
 *   ep.c         endpoints, registered memory, a run's set-up
 *   data.c       data messages of lat, bw and rate: sent, received, checked
 *   mix.c        recover's messages: eager with every Nth by rendezvous
 *   lat.c        lat
 *   stream.c     bw and rate
 *   recover.c    recover
 *   mem.c        mem
 *   poll.c       poll
 *   client.c     the client: connects, runs each size, reports
 *   server.c     the server: accepts, runs what the client asks
 *   main.c       options, and which subcommand runs
 *
 * Documentation/bench.rst describes the tests and their figures.
 */
#ifndef _RMSG_PERF_H
#define _RMSG_PERF_H

#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/epoll.h>
#include <sys/socket.h>

#include <rmsg.h>

#include "rmsg_check.h"
#include "rmsg_util.h"

/*
 * Counting system calls (syscount.c).
 *
 * The figure rmsg is judged by is system calls per message, so it has to be
 * counted, not inferred from the code. Two counters, the first that works:
 *
 *  - SC_TRACEPOINT: a perf counter on the raw_syscalls:sys_enter
 *    tracepoint for the calling thread. It sees every system call the
 *    thread makes, whoever makes it (rmsg-perf, librmsg, libc). It needs
 *    tracefs and the right to open tracepoint events (root, or a low
 *    perf_event_paranoid).
 *  - SC_WRAP: rmsg-perf is linked with -Wl,--wrap for ioctl, poll, ppoll
 *    and epoll_wait. librmsg is linked statically, so its calls go through
 *    the wrappers too; calls made inside libc itself are not seen. A lower
 *    bound, but the calls a data path would make are the ones it sees.
 *
 * RMSG_PERF_SYSCOUNT=tracepoint|wrap|none forces one.
 */
enum sc_method {
	SC_NONE,
	SC_TRACEPOINT,
	SC_WRAP,
};

struct sysctr {
	enum sc_method method;
	int fd;			/* the perf event (SC_TRACEPOINT) */
	uint64_t reads;		/* its own read()s, each one counted */
};

void sysctr_open(struct sysctr *sc);
void sysctr_close(struct sysctr *sc);
uint64_t sysctr_read(struct sysctr *sc);
const char *sysctr_method_name(enum sc_method method);
/* rmsg-perf hold-syscount: keep a counter open until killed. */
int hold_syscount(void);

/* The wrappers of SC_WRAP, and what they wrap (see the Makefile). */
int __wrap_ioctl(int fd, unsigned long req, ...);
int __real_ioctl(int fd, unsigned long req, ...);
int __wrap_poll(struct pollfd *fds, nfds_t n, int timeout);
int __real_poll(struct pollfd *fds, nfds_t n, int timeout);
int __wrap_ppoll(struct pollfd *fds, nfds_t n, const struct timespec *ts,
		 const sigset_t *mask);
int __real_ppoll(struct pollfd *fds, nfds_t n, const struct timespec *ts,
		 const sigset_t *mask);
int __wrap_epoll_wait(int epfd, struct epoll_event *ev, int n, int timeout);
int __real_epoll_wait(int epfd, struct epoll_event *ev, int n, int timeout);

/*
 * Time (clock.c). Latency samples need a clock that is cheap to read and
 * makes no system call; clock_gettime() qualifies only where the clock
 * source is one the vDSO can read. Elsewhere (an emulated guest falls back
 * to HPET or the ACPI PM timer) rmsg-perf reads the TSC itself, as
 * perftest does, calibrated against CLOCK_MONOTONIC.
 */
void clock_setup(void);
const char *clock_name(void);
/* Nanoseconds on a monotonic scale with an arbitrary origin. */
uint64_t now_ns(void);

/* Memory one idle channel costs (mem.c). */
#define MEM_SLAB_TOP	10

struct mem_result {
	long per_end;		/* bytes, median of the measured rounds */
	long warmup_per_end;	/* bytes, the warm-up round */
	long slab_per_end;	/* of which SUnreclaim grew */
	long vmalloc_per_end;	/* of which VmallocUsed grew */
	int rounds;		/* measured rounds */
	/*
	 * The slab caches that grew most in the median round, bytes per
	 * end (num_objs * objsize of /proc/slabinfo, root's to read): the
	 * largest first, nslab of them (0 when slabinfo is not readable).
	 */
	struct {
		char name[32];
		long per_end;
	} slab[MEM_SLAB_TOP];
	int nslab;
};

/*
 * Open @channels idle channels from one endpoint to another listening one
 * in this process, several times over, and report what one channel end
 * costs. Both ends are in this kernel, so the figure is per end. Returns 0
 * or a negative errno.
 */
int mem_measure(const struct sockaddr *addr, unsigned int addrlen,
		int channels, unsigned int block_size, int timeout_s,
		struct mem_result *res);
/* rmsg-perf mem: measure and report; the exit status. */
int run_mem(void);
/*
 * Open @n channels from @b to @a's listener on @addr (at most 64
 * connecting), @b_ids[i] the id at @b of the i-th; close them from @b.
 * Each fails on an unexpected event or after @timeout_s without one.
 */
int mem_open(struct rmsg_ep *a, struct rmsg_ep *b,
	     const struct sockaddr *addr, unsigned int addrlen, int n,
	     unsigned int block_size, int timeout_s, int *b_ids);
int mem_close(struct rmsg_ep *a, struct rmsg_ep *b, int n, int timeout_s,
	      const int *b_ids);
/* rmsg-perf poll: what finding messages costs with many channels (poll.c). */
int run_poll(void);


#define DEFAULT_PORT	18520	/* perftest's is 18515: both may run */
#define MAX_CHANNELS	1024	/* per thread */
#define MAX_THREADS	64
#define MIN_ALL_SIZE	2	/* -a starts here, as perftest's does */
#define BW_WINDOW	64	/* -W of bw and rate */

/*
 * Registered buffers of rendezvous runs: per channel a ring of slots, one
 * per send in flight (the sender may not touch a message's bytes until its
 * completion) and one per receive answered. More than twice the kernel's
 * window of rendezvous transfers per channel gains nothing, and the memory
 * of one thread's slots is bounded (it is pinned, and the test guest has
 * 2 GiB for both sides).
 */
#define RNDV_SLOTS	16
#define DEFAULT_REG_MEM	(128UL << 20)
#define THRESH_NEVER	UINT64_MAX	/* --rndv-thresh=never */

/* recover: faults per run, and the pause from one repair to the next fault */
#define RECOVER_FAULTS	100
#define RECOVER_INTERVAL_MS 200

/*
 * Not a kind of RMSG_IOC_FAULT: the client deletes the RDMA device under
 * its channels (rxe0) and makes it again on RMSG_NETDEV; a sample runs
 * from the end of "rdma link add" to the channel's next echo.
 */
#define FAULT_HCA_READD		(RMSG_FAULT_DEVICE_FATAL + 1)

/*
 * recover --rndv-every: the rendezvous mix of rmsg_check.h. Per channel
 * and direction MIX_SLOTS buffers of MIX_STRIDE bytes, each for one
 * rendezvous message of 1 byte to MIX_MAX that starts at an offset of up
 * to 4 KiB into it.
 */
#define MIX_SLOTS	RMSG_CHECK_RNDV_SLOTS
#define MIX_MAX		RMSG_CHECK_RNDV_MAX
#define MIX_STRIDE	(MIX_MAX + 4096)

/* The subcommands; the numbers travel in HELLO (struct ctl's @test). */
enum test {
	TEST_LAT = 1,
	TEST_BW,
	TEST_RATE,
	TEST_MEM,
	TEST_RECOVER,
	TEST_POLL,
};

extern const char * const test_names[];

struct options {
	enum test test;
	uint32_t size;		/* 0: the test's default */
	bool all;
	int64_t iters;		/* -1: default */
	int64_t warmup;		/* -1: default */
	uint32_t window;
	int channels;
	int threads;
	uint16_t port;
	uint32_t block;
	bool sqpoll;
	uint32_t sqpoll_idle_ms;	/* 0: the module's default */
	bool json;
	bool full_check;
	bool more;		/* data sends with RMSG_SEND_MORE */
	const char *samples;	/* lat: every round trip to this file */
	int timeout_s;
	const char *server;	/* NULL: be the server */

	/* Rendezvous. */
	bool reg;		/* registered buffers, rmsg_msg_send(): see above */
	bool zc;		/* rmsg_msg_send_zc() for every message */
	bool put;		/* RPut (RMSG_ZC_PUT) */
	bool unreg;		/* the buffers in no region (pinned per transfer) */
	bool thresh_set;
	uint64_t rndv_thresh;	/* THRESH_NEVER: never automatically */
	uint32_t max_size;	/* -a stops here (0: the default) */
	uint64_t reg_mem;	/* registered bytes per thread and side */

	/* recover. */
	uint32_t fault;		/* enum rmsg_fault_kind, 0: alternate both */
	uint32_t interval_ms;	/* from one repair to the next fault */
	bool no_fault;		/* --fault=none: inject nothing */
	uint32_t duration_s;	/* --fault=none: stream this long */
	uint32_t rndv_every;	/* every this many-th message rendezvous */
	bool window_set;
};

/* The options (common.c has their defaults, main.c parses them). */
extern struct options opt;
/*
 * The control protocol between client and server. Control messages travel
 * on the first channel of each thread, at points where no data message can
 * be in the way. Fields are in host byte order; a peer of the other order
 * shows up as a bad magic number.
 *
 * The rendezvous fields came later, appended, and travel only between
 * peers that both know them: a client sets CTL_F_EXT in its HELLOs (which
 * are of the first length, CTL_V1_LEN, so an older server takes them), a
 * server that knows the extension answers with an ACK of the full length
 * and CTL_CAP_RNDV, and from then on both send full-length messages. An
 * older peer on either side thus still runs the eager tests, and a client
 * asked for rendezvous by an older server stops with a reason.
 */
#define CTL_MAGIC	0x46504d52	/* "RMPF" */
#define CTL_VERSION	1

enum ctl_type {
	CTL_HELLO = 1,	/* client, on every channel: who it is, what to run */
	CTL_ACK,	/* server: accepted (or error and why) */
	CTL_RUN,	/* client: run one message size */
	CTL_RESULT,	/* server: its side of the run */
	CTL_BYE,	/* client: done */
	CTL_ABORT,	/* either side, in a run: giving up, and why (@text) */
	CTL_STOP,	/* client: the end of a recover run's data */
};

#define CTL_F_FULL_CHECK	(1U << 0)
#define CTL_F_EXT		(1U << 1)	/* HELLO: knows the full length */
#define CTL_F_REG		(1U << 2)	/* RUN: registered buffers */
#define CTL_F_ZC		(1U << 3)	/* RUN: rmsg_msg_send_zc() always */
#define CTL_F_PUT		(1U << 4)	/* RUN: RPut */
#define CTL_F_UNREG		(1U << 5)	/* RUN: buffers in no region */

#define CTL_CAP_RNDV		(1U << 0)	/* ACK: the flags above */

struct ctl {
	uint32_t magic;
	uint16_t version;
	uint16_t type;
	uint32_t test;
	uint32_t threads;
	uint32_t thread;
	uint32_t channels;
	uint32_t chan_idx;	/* HELLO: which of the thread's channels */
	uint32_t size;		/* RUN */
	uint32_t window;	/* RUN */
	uint32_t flags;		/* RUN: CTL_F_* */
	uint32_t max_msg;	/* ACK: largest message the server can send */
	int32_t error;		/* ACK: 0, or an errno and @text */
	uint64_t iters;		/* RUN */
	uint64_t warmup;	/* RUN */
	uint64_t msgs;		/* RESULT: messages measured */
	uint64_t bytes;		/* RESULT: their payload bytes */
	uint64_t t0, t1;	/* RESULT: the measured interval, server's ns */
	uint64_t syscalls;	/* RESULT: the server's, in that interval */
	/*
	 * RESULT of recover: @msgs pings echoed, @bytes bytes written again,
	 * @iters pings that came by rendezvous, @warmup echoes sent so
	 */
	uint32_t sc_method;	/* RESULT: enum sc_method */
	/*
	 * RUN of recover (CTL_F_EXT peers): every this many-th data message
	 * goes by rendezvous, 0: none. A peer before it sends 0 here.
	 */
	uint32_t rndv_every;
	char text[96];		/* ACK: why the server refused; ABORT: why */
	/* Extension (CTL_F_EXT): */
	uint64_t rndv_thresh;	/* RUN: the endpoints' threshold */
	/* RESULT: measured ones that came rendezvous (recover: records the
	 * server wrote again)
	 */
	uint64_t rndv_msgs;
	uint32_t caps;		/* ACK: CTL_CAP_* */
	uint32_t repairs;	/* RESULT, recover: the server's repairs */
};

#define CTL_V1_LEN	offsetof(struct ctl, rndv_thresh)

#define CTL_BIT(type)	(1U << (type))

/*
 * Threads, endpoints and channels.
 */
struct chan {
	uint32_t id;		/* the endpoint's channel id */
	uint32_t max_msg;	/* largest message it can send */
	uint64_t tx_seq;	/* data messages sent */
	uint64_t rx_seq;	/* data messages received */
	uint32_t inflight;	/* sends not completed yet */
	bool open;
	uint64_t retry_at;	/* client: connect again then (ns), or 0 */

	/* Rendezvous runs: the channel's slots in the worker's region. */
	uint8_t *tx_slots, *rx_slots;
	uint32_t tx_busy;	/* slots of zero-copy sends in flight */
	uint32_t rx_busy;	/* slots answered, not completed */
	uint64_t rx_answered;	/* rendezvous messages answered */

	/* recover: the rendezvous mix (--rndv-every) and the echoes. */
	uint64_t mark;		/* client: messages taken before the fault */
	uint64_t owed;		/* server: echoes not sent yet */
	uint64_t mix_rx[MIX_SLOTS];	/* seq + 1 answered into a slot, 0 */
	uint32_t mix_pending;	/* answers not completed */
	uint64_t rndv_sent, rndv_arrived;
};

struct worker {
	int idx;
	bool server;
	pthread_t tid;
	struct rmsg_ep *ep;
	struct sysctr sc;
	struct chan ch[MAX_CHANNELS];
	int nch;		/* channels of this thread */
	int32_t *by_id;		/* endpoint channel id -> index in ch[] */
	uint32_t *unplaced;	/* server: accepted, no HELLO yet */
	int nunplaced;
	int placed;		/* server: channels with their HELLO */
	bool closing;		/* CLOSED events are expected now */
	int lost;		/* a channel ended unasked: its error, or 0 */
	uint32_t lost_id;
	uint32_t peer_max;	/* the server's largest message */

	/* The run in progress. */
	uint32_t size;
	uint64_t iters, warmup;
	uint32_t window;
	uint32_t flags;
	uint64_t thresh;	/* rendezvous threshold (CTL_F_REG) */
	bool zc_now;		/* this run's sends go rendezvous */
	uint32_t ntx, nrx;	/* slots per channel */
	size_t stride;		/* bytes from one slot to the next */

	/* The registered region (rendezvous runs), grown as needed. */
	uint8_t *reg;
	size_t reg_len;
	uint32_t reg_handle;	/* 0: in no region (CTL_F_UNREG) */

	/* The control protocol's extension (see struct ctl). */
	size_t ctl_len;
	bool ext;
	bool aborting;		/* giving up: failed sends are expected */

	/* What this side measured of it. */
	uint64_t *samples;	/* lat client: round trips, ns */
	uint64_t sys;		/* system calls in the measured part */
	uint64_t msgs;		/* messages sent + received in it */
	uint64_t t0, t1;	/* stream client: sender's interval */
	struct ctl result;	/* client: the server's RESULT */
	uint64_t arrived;	/* data messages received whole, this run */
	uint64_t rndv_msgs;	/* of which by rendezvous, measured part */
	uint64_t clock_at;	/* stream server: the arrival starting it */
	uint64_t first_measured;	/* lat: the first measured message */
	uint64_t rx_t0, rx_t1, rx_s0;	/* stream server's interval */

	/*
	 * recover's rendezvous mix: every @rndv_every-th message of a
	 * channel's direction goes rendezvous. A rendezvous message that
	 * cannot be answered yet (its slot busy, the SQ full) is @held:
	 * peeking goes on past it, so nothing is peeked until it is
	 * answered.
	 */
	uint32_t rndv_every;
	struct rmsg_msg held;
	bool holding;
	/*
	 * recover's client: message @seq of @c has arrived whole and
	 * checked, which may end the sample of a fault. NULL elsewhere.
	 */
	void (*arrival)(struct worker *w, struct chan *c, uint64_t seq);
};

/*
 * Busy-waiting with a deadline: every spin of a wait loop calls tick(),
 * which every TICK_EVERY spins takes events (a send area or a window may
 * be waiting for completions, and a closed channel must end the wait) and
 * reads the clock, failing the run when nothing has happened for
 * opt.timeout_s seconds. The deadline is set at the first such read (0
 * until then, and again after wait_renew(); UINT64_MAX is never): a wait
 * that ends within a few spins, as a round trip's does, costs no clock
 * read. Loops that need completions to go on pump() themselves.
 */
#define TICK_EVERY	4096

struct waiter {
	uint64_t deadline;
	unsigned int spins;
	const char *what;
};

/*
 * The user_data of rendezvous runs' operations: data sends (whose
 * completion frees their slot) and rmsg_msg_recv_into() answers, each with the
 * message's sequence number. Control messages and eager runs' data sends
 * carry no tag.
 */
#define TAG_TX		(1ULL << 63)
#define TAG_RX		(1ULL << 62)
#define TAG_MIX		(1ULL << 61)	/* recover's rendezvous mix */
#define TAG_SEQ		(TAG_MIX - 1)

/*
 * A test of the client-server family (lat, bw, rate, recover): what the
 * client and the server call to run it, one message size at a time.
 */
struct perf_test {
	/* The client's half of a run, after its CTL_RUN went. */
	void (*client)(struct worker *w);
	/* The server's half, which fills in its CTL_RESULT @res. */
	void (*server)(struct worker *w, struct ctl *res);
	/* Thread 0, once every thread's run of size @s is over. */
	void (*report)(int s);
	/*
	 * Completions of the operations tagged TAG_MIX (the rendezvous mix
	 * of mix.c); also says the test runs that mix (--rndv-every).
	 */
	void (*on_mix_op)(struct worker *w, struct chan *c,
			  const struct rmsg_event *ev);
	/* After the last report: the exit status (NULL: 0). */
	int (*finish)(void);
	bool pingpong;		/* both sides send and receive in turn */
	bool samples;		/* the client keeps a sample per iteration */
};

extern const struct perf_test lat_test, stream_test, recover_test;

/* The test that runs (main.c picks it), and the threads running it. */
extern const struct perf_test *perf_test;
extern struct worker *workers;
extern pthread_barrier_t barrier;
/* The sizes the client runs (client.c), and how many. */
extern uint32_t *sizes;
extern int nsizes;
/* The client's rendezvous threshold, which the server's runs use too. */
extern uint64_t run_thresh;
/* The server's address (client.c; main.c resolves it). */
extern const struct sockaddr *server_sa;
extern socklen_t server_salen;

/*
 * Every data message carries its sequence number in its first and last 8
 * bytes (or in every byte, for messages under 16 bytes), with --full-check
 * (and in recover's streams) a pattern in every byte between, and every
 * one received is checked for its length, channel and sequence number
 * (tools/common/rmsg_check.h, RMSG_CHECK_ENDS). A mismatch stops the run
 * with an error instead of a number: a benchmark must not report figures
 * for data that did not arrive intact and in order.
 */
static inline void stamp(uint8_t *p, uint32_t len, uint64_t seq, bool full)
{
	rmsg_check_fill(p, len, full ? RMSG_CHECK_ENDS_FULL : RMSG_CHECK_ENDS,
			0, seq);
}

static inline bool stamp_ok(const uint8_t *p, uint32_t len, uint64_t seq,
			    bool full)
{
	return rmsg_check_ok(p, len, full ? RMSG_CHECK_ENDS_FULL :
			     RMSG_CHECK_ENDS, 0, seq);
}

/* common.c */
_Noreturn void die(struct worker *w, const char *fmt, ...);
void print_chans(struct worker *w, const char *when);
struct chan *chan_of(struct worker *w, uint32_t id);
void resolve(const char *host, struct sockaddr_storage *ss, socklen_t *len);
void arrived(struct worker *w, bool rndv);
void check_abort(struct worker *w, const void *data, uint32_t len);

/* report.c */
extern const char rule[];
void print_header(void);
const char *protocol(uint64_t rndv, uint64_t msgs);
void json_common(uint32_t size, uint64_t iters, uint64_t warmup);
void json_reg(uint64_t rndv, uint64_t msgs);
int cmp_u64(const void *x, const void *y);
uint64_t percentile(const uint64_t *v, uint64_t n, double p);
double ratio(uint64_t a, uint64_t b);

/* event.c */
void wait_init(struct waiter *wt, const char *what);
void wait_renew(struct waiter *wt);
void tick(struct worker *w, struct waiter *wt);
int pump(struct worker *w);
void drain_sends(struct worker *w);
void send_ctl(struct worker *w, struct chan *c, struct ctl *ctl,
	      enum ctl_type type);
bool ctl_valid(struct worker *w, const struct ctl *ctl, int len,
	       unsigned int types, bool fatal);
void recv_ctl(struct worker *w, struct chan *c, struct ctl *ctl,
	      unsigned int types);
_Noreturn void give_up(struct worker *w, const char *fmt, ...);

/* ep.c */
void open_ep(struct worker *w);
void reg_grow(struct worker *w, size_t need);
void setup_run(struct worker *w, bool sender, bool receiver);
void close_ep(struct worker *w, bool initiate);

/* data.c */
void send_data(struct worker *w, struct chan *c);
void take_data(struct worker *w, struct chan *c, const struct rmsg_msg *msg);
void answer_rndv(struct worker *w, struct chan *c,
		 const struct rmsg_msg *msg);
void send_one(struct worker *w, struct chan *c);
void recv_one(struct worker *w, struct chan *c);

/* mix.c */
void mix_setup(struct worker *w);
bool mix_can_send(const struct worker *w, const struct chan *c);
void mix_send(struct worker *w, struct chan *c);
int mix_take(struct worker *w, const struct rmsg_msg *msg);
bool mix_unheld(struct worker *w);
int mix_rx(struct worker *w, bool *stop);
void mix_op(struct worker *w, struct chan *c, const struct rmsg_event *ev);
uint32_t mix_pending(const struct worker *w);

/* recover.c */
const char *fault_name(uint32_t kind);

/* client.c, server.c: the threads of each side */
void *cli_thread(void *arg);
void *srv_thread(void *arg);

#endif /* _RMSG_PERF_H */
