// SPDX-License-Identifier: GPL-2.0
/*
 * Channels at scale (issue 3): a thousand channels on one endpoint, 64
 * listening endpoints with a channel each, and what an idle channel costs
 * in kernel memory. Every endpoint lives in this process and talks over the
 * guest's rxe device (loopback topology), so each channel has both of its
 * ends in this kernel.
 */
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/resource.h>

#include "kselftest_harness.h"
#include "rmsg_test.h"

/* The guest is emulated and shares its CPUs: progress may be slow. */
#define STALL_MS	60000

#define THOUSAND	1000
#define THOUSAND_CQ	4096
#define LISTENER_DATA	0xa0

#define PAIRS		64
#define PAIR_B_DATA	0x1000
#define PAIR_A_DATA	0x2000

#define MEM_CHANNELS	200
#define MEM_ROUNDS	3	/* the first is a warm-up */
#define MEM_BLOCK	32768	/* the module's default block_size */
#define TRACE		false	/* true: log every memory sample */

/*
 * Wait until one of @n endpoints may have a CQE, at most @timeout_ms. The
 * poll also lets the kernel post events that waited for room.
 */
static void wait_eps(struct rmsg_ep **eps, int n, int timeout_ms)
{
	struct pollfd pfd[2 * PAIRS];
	int i;

	for (i = 0; i < n && i < 2 * PAIRS; i++) {
		pfd[i].fd = rmsg_ep_fd(eps[i]);
		pfd[i].events = POLLIN;
		pfd[i].revents = 0;
	}
	poll(pfd, i, timeout_ms);
}

/* After a short quiet time, no endpoint of @eps has anything left. */
static int count_stray(struct rmsg_ep **eps, int n, int quiet_ms)
{
	struct rmsg_cqe cqe;
	int i, stray = 0;

	usleep(quiet_ms * 1000);
	wait_eps(eps, n, 0);
	for (i = 0; i < n; i++)
		while (rmsg_take_cqe(eps[i], &cqe))
			stray++;
	return stray;
}

FIXTURE(scale) {
	struct rmsg_ep **eps;	/* all endpoints of the test */
	int neps;		/* how many of them are open */
	struct sockaddr_in addr;
	char heartbeat_ms[32];	/* to restore, if a test changed it */
};

FIXTURE_SETUP(scale)
{
	long factor = rmsg_test_slow() > 3 ? rmsg_test_slow() : 3;
	char period[32];

	if (!rmsg_local_addr(&self->addr, 0))
		SKIP(rmsg_setup_skipped(_metadata); return,
		     "RMSG_LOCAL_ADDR not set: not run by rmsg-vm");
	self->eps = calloc(2 * PAIRS, sizeof(*self->eps));
	ASSERT_NE(NULL, self->eps);
	/*
	 * What these tests check is carrying, opening and closing at scale,
	 * not liveness (resil and pair test that): the period is three times
	 * the module's, or RMSG_TEST_SLOW times if more, a margin for a slow
	 * kernel (the debug kernel's guest) or a loaded host. The misses
	 * these tests once met were not the peer's silence but periods in
	 * which the node's HEARTBEAT could not go (a mass close; rmsg_node.c
	 * counts those no more): thousand_channels closes on a short period
	 * on purpose to keep that so. A node that does miss its heartbeat
	 * still repairs every member, each with a connection of its own,
	 * until links carry channels (issue 37).
	 */
	ASSERT_EQ(0, rmsg_read_param("heartbeat_ms", self->heartbeat_ms,
				     sizeof(self->heartbeat_ms)));
	snprintf(period, sizeof(period), "%ld",
		 strtol(self->heartbeat_ms, NULL, 10) * factor);
	ASSERT_EQ(0, rmsg_write_param("heartbeat_ms", period));
}

FIXTURE_TEARDOWN(scale)
{
	int i;

	for (i = 0; i < self->neps; i++)
		rmsg_ep_drop(&self->eps[i]);
	free(self->eps);
	/* Also after a failed assertion: later tests want the module's. */
	if (self->heartbeat_ms[0])
		EXPECT_EQ(0, rmsg_write_param("heartbeat_ms",
					      self->heartbeat_ms));
}

/* Open endpoint number self->neps with the given rings. */
#define OPEN_EP(sq, cq) do { \
	ASSERT_EQ(0, rmsg_ep_open(&self->eps[self->neps], sq, cq)); \
	self->neps++; \
} while (0)

/*
 * One listening endpoint (eps[0]) and one connecting endpoint (eps[1])
 * with @n channels between them, and the bookkeeping to check their
 * events: b_ids[i] is the connecting side's id of channel i (user_data i),
 * a_seen[] counts the events of each of the listening side's ids.
 */
struct many {
	struct rmsg_ep **eps;	/* a and b */
	struct rmsg_ep *a, *b;
	struct sockaddr_in *addr;
	int n;
	u_int32_t block_size;
	int *b_ids;
	unsigned char *b_seen;	/* by user_data */
	unsigned char *a_seen;	/* by channel id */
	unsigned char *b_id_used;	/* by channel id */
};

static void many_reset(struct many *m)
{
	memset(m->b_seen, 0, m->n);
	memset(m->a_seen, 0, RMSG_MAX_CHANNELS);
	memset(m->b_id_used, 0, RMSG_MAX_CHANNELS);
}

static void many_free(struct many *m)
{
	free(m->b_ids);
	free(m->b_seen);
	free(m->a_seen);
	free(m->b_id_used);
}

static bool many_alloc(struct many *m, struct rmsg_ep **eps,
		       struct sockaddr_in *addr, int n, u_int32_t block_size)
{
	m->eps = eps;
	m->a = eps[0];
	m->b = eps[1];
	m->addr = addr;
	m->n = n;
	m->block_size = block_size;
	m->b_ids = calloc(n, sizeof(*m->b_ids));
	m->b_seen = calloc(n, 1);
	m->a_seen = calloc(RMSG_MAX_CHANNELS, 1);
	m->b_id_used = calloc(RMSG_MAX_CHANNELS, 1);
	if (m->b_ids && m->b_seen && m->a_seen && m->b_id_used)
		return true;
	many_free(m);
	return false;
}

/*
 * For a stall: how many of @ep's channels are in each state, so that the
 * log says where the missing ones stand (still resolving or connecting,
 * accepted but not opened, repairing).
 */
static void log_states(struct __test_metadata *_metadata,
		       struct rmsg_ep *ep, const char *name)
{
	struct rmsg_chan_info *info = NULL;
	unsigned int count[8] = { 0 }, other = 0, st;
	int n, i;

	n = rmsg_node_channels(rmsg_ep_fd(ep), 0, &info, NULL);
	if (n < 0) {
		TH_LOG("%s: rmsg_node_channels: %s", name, strerror(-n));
		return;
	}
	for (i = 0; i < n; i++) {
		if (info[i].state < ARRAY_SIZE(count))
			count[info[i].state]++;
		else
			other++;
	}
	free(info);
	for (st = 0; st < ARRAY_SIZE(count); st++)
		if (count[st])
			TH_LOG("%s: %u channels %s", name, count[st],
			       rmsg_chan_state_name(st));
	if (other)
		TH_LOG("%s: %u channels in an unknown state", name, other);
}

/*
 * Connect m->n channels from b to a, at most @window not yet reported at
 * a time, and collect one CONNECTED (res 0) per channel on b and one
 * ACCEPTED per channel on a. Returns the number of failures (logged).
 */
static int many_open(struct __test_metadata *_metadata, struct many *m,
		     int window)
{
	int issued = 0, connected = 0, accepted = 0, failed = 0;
	long stall = rmsg_now_ms() + STALL_MS;
	struct rmsg_cqe cqe;
	bool progress;
	int id;

	while (connected < m->n || accepted < m->n) {
		progress = false;
		while (issued < m->n && issued - connected < window) {
			id = rmsg_chan_connect(m->b, (struct sockaddr *)m->addr,
					       sizeof(*m->addr), issued,
					       m->block_size);
			if (id < 0) {
				TH_LOG("connect %d: %d (%s)", issued, id,
				       strerror(-id));
				return failed + m->n - issued;
			}
			if (m->b_id_used[id]++) {
				TH_LOG("connect %d: id %d in use", issued, id);
				failed++;
			}
			m->b_ids[issued++] = id;
		}
		while (rmsg_take_cqe(m->b, &cqe)) {
			progress = true;
			connected++;
			if (RMSG_CQE_KIND(cqe.flags) != RMSG_CQE_CONNECTED ||
			    cqe.res || cqe.user_data >= (u_int64_t)issued ||
			    m->b_ids[cqe.user_data] != (int)cqe.channel ||
			    m->b_seen[cqe.user_data]++) {
				if (failed++ < 10)
					TH_LOG("b: kind %u res %d (%s) user_data %llu channel %u",
					       RMSG_CQE_KIND(cqe.flags), cqe.res,
					       strerror(-cqe.res),
					       (unsigned long long)cqe.user_data,
					       cqe.channel);
			}
		}
		while (rmsg_take_cqe(m->a, &cqe)) {
			progress = true;
			accepted++;
			if (RMSG_CQE_KIND(cqe.flags) != RMSG_CQE_ACCEPTED ||
			    cqe.res || cqe.user_data != LISTENER_DATA ||
			    cqe.channel >= RMSG_MAX_CHANNELS ||
			    m->a_seen[cqe.channel]++) {
				if (failed++ < 10)
					TH_LOG("a: kind %u res %d user_data %llu channel %u",
					       RMSG_CQE_KIND(cqe.flags), cqe.res,
					       (unsigned long long)cqe.user_data,
					       cqe.channel);
			}
		}
		if (progress) {
			stall = rmsg_now_ms() + STALL_MS;
			continue;
		}
		if (rmsg_now_ms() > stall) {
			TH_LOG("stalled: %d issued, %d connected, %d accepted",
			       issued, connected, accepted);
			log_states(_metadata, m->b, "b (connecting)");
			log_states(_metadata, m->a, "a (listening)");
			return failed + 1;
		}
		wait_eps(m->eps, 2, 100);
	}
	return failed;
}

/*
 * Close every channel from b and collect one CLOSED (res 0) per channel on
 * each side. Returns the number of failures (logged).
 */
static int many_close(struct __test_metadata *_metadata, struct many *m)
{
	int i, ret, a_closed = 0, b_closed = 0, failed = 0;
	long stall = rmsg_now_ms() + STALL_MS;
	struct rmsg_cqe cqe;
	bool progress;

	for (i = 0; i < m->n; i++) {
		ret = rmsg_chan_close(m->b, m->b_ids[i], 0);
		if (ret) {
			TH_LOG("close %d (id %d): %d", i, m->b_ids[i], ret);
			return failed + m->n - i;
		}
	}
	while (a_closed < m->n || b_closed < m->n) {
		progress = false;
		while (rmsg_take_cqe(m->b, &cqe)) {
			progress = true;
			b_closed++;
			if (RMSG_CQE_KIND(cqe.flags) != RMSG_CQE_CLOSED ||
			    cqe.res || cqe.user_data >= (u_int64_t)m->n ||
			    m->b_ids[cqe.user_data] != (int)cqe.channel ||
			    m->b_seen[cqe.user_data]++ != 1) {
				if (failed++ < 10)
					TH_LOG("b: kind %u res %d (%s) user_data %llu channel %u",
					       RMSG_CQE_KIND(cqe.flags), cqe.res,
					       strerror(-cqe.res),
					       (unsigned long long)cqe.user_data,
					       cqe.channel);
			}
		}
		while (rmsg_take_cqe(m->a, &cqe)) {
			progress = true;
			a_closed++;
			if (RMSG_CQE_KIND(cqe.flags) != RMSG_CQE_CLOSED ||
			    cqe.res || cqe.user_data != LISTENER_DATA ||
			    cqe.channel >= RMSG_MAX_CHANNELS ||
			    m->a_seen[cqe.channel]++ != 1) {
				if (failed++ < 10)
					TH_LOG("a: kind %u res %d (%s) user_data %llu channel %u",
					       RMSG_CQE_KIND(cqe.flags), cqe.res,
					       strerror(-cqe.res),
					       (unsigned long long)cqe.user_data,
					       cqe.channel);
			}
		}
		if (progress) {
			stall = rmsg_now_ms() + STALL_MS;
			continue;
		}
		if (rmsg_now_ms() > stall) {
			TH_LOG("stalled: %d closed on b, %d on a", b_closed,
			       a_closed);
			return failed + 1;
		}
		wait_eps(m->eps, 2, 100);
	}
	return failed;
}

/* eps[0] listens, eps[1] connects. */
#define OPEN_TWO(cq_entries, block_size) do { \
	OPEN_EP(64, cq_entries); \
	OPEN_EP(64, cq_entries); \
	ASSERT_EQ(0, rmsg_ep_listen(self->eps[0], \
				    (struct sockaddr *)&self->addr, \
				    sizeof(self->addr), LISTENER_DATA, \
				    block_size)); \
	ASSERT_NE(0, self->addr.sin_port); \
} while (0)

/*
 * A thousand channels between two endpoints, connected all at once (no
 * window), then closed all at once on a short heartbeat (CLOSE_HEARTBEAT_MS,
 * below). The module's default block (32 KiB):
 * 2000 ends are about 64 MiB of blocks, which the guest's 2 GiB hold.
 *
 * On a kernel several times slower (RMSG_TEST_SLOW, the lockdep and KASAN
 * guest) at most THOUSAND_SLOW_WINDOW connects are in flight: a thousand
 * at once outlast the rdma_cm's retries, whose timeouts are fixed. (The
 * channels' heartbeats, one per end and second when they were per
 * channel, once took all of both CPUs there; they are per peer node now.)
 */
#define THOUSAND_SLOW_WINDOW		100

/*
 * The close runs with heartbeats of this period (RMSG_TEST_SLOW times on
 * a slow kernel), a tenth or less of what the close takes, so that a
 * node's heartbeat falls due many times while one end is closing a
 * thousand channels and the other has not yet heard of most closes. Each
 * period asked a member for a HEARTBEAT, the member asked was one whose
 * peer had closed (its work, behind hundreds of others, not yet run) and
 * dropped the request, and four such periods counted as the peer's
 * silence: the node repaired every channel still open, and they ended
 * with ETIMEDOUT (281 of 1,000 with 100 ms here before rmsg_node.c counted
 * only periods with a HEARTBEAT out; 166 at the module's 1 s on the debug
 * kernel with a kernel build beside it).
 */
#define CLOSE_HEARTBEAT_MS		100

/*
 * Make @ms the heartbeat period, and wait until every node's beat runs on
 * it: a beat takes the period at its next run, one @old_ms away at most.
 */
static int heartbeat_period(long old_ms, long ms)
{
	char period[32];

	snprintf(period, sizeof(period), "%ld", ms);
	if (rmsg_write_param("heartbeat_ms", period))
		return -1;
	usleep((old_ms + ms) * 1000);
	return 0;
}

TEST_F_TIMEOUT(scale, thousand_channels, 900)
{
	bool slow = rmsg_test_slow() > 1;
	int window = slow ? THOUSAND_SLOW_WINDOW : THOUSAND;
	struct many m;
	long t0, t_open, t_close;
	char period[32];

	OPEN_TWO(THOUSAND_CQ, 0);
	ASSERT_TRUE(many_alloc(&m, self->eps, &self->addr, THOUSAND, 0));
	many_reset(&m);

	t0 = rmsg_now_ms();
	EXPECT_EQ(0, many_open(_metadata, &m, window));
	t_open = rmsg_now_ms() - t0;
	TH_LOG("%d channels open in %ld ms, at most %d connecting at once",
	       THOUSAND, t_open, window);
	if (!_metadata->passed)
		goto out;
	EXPECT_EQ(0, count_stray(self->eps, 2, 300));
	ASSERT_EQ(0, rmsg_read_param("heartbeat_ms", period, sizeof(period)));
	ASSERT_EQ(0, heartbeat_period(strtol(period, NULL, 10),
				      CLOSE_HEARTBEAT_MS * rmsg_test_slow()));

	t0 = rmsg_now_ms();
	EXPECT_EQ(0, many_close(_metadata, &m));
	t_close = rmsg_now_ms() - t0;
	TH_LOG("%d channels closed in %ld ms", THOUSAND, t_close);
	EXPECT_EQ(0, count_stray(self->eps, 2, 300));
	printf("# thousand_channels_open_ms: %ld\n", t_open);
	printf("# thousand_channels_close_ms: %ld\n", t_close);
	fflush(stdout);
out:
	many_free(&m);
}

/*
 * Liveness per peer node (issue 37, item 3): IDLE_CHANNELS idle channels
 * between two endpoints of this guest (both ends reach the same peer
 * node, the guest's own address on rxe0) share one heartbeat, not one per
 * channel end: over IDLE_PERIODS periods of IDLE_HB_MS, rxe0 sends at
 * most twice (and a little) what it sends with one channel open, and at
 * most IDLE_PKTS_MAX packets (a HEARTBEAT each way and their
 * acknowledgements a period, and slack; one per end would be
 * 2 * IDLE_CHANNELS a period, and as many acknowledgements), and at least
 * one HEARTBEAT and its acknowledgement (the node is still watched). Then IDLE_OWN of them
 * take a heartbeat of their own (rmsg_chan_set()), which each sends
 * every period as every channel used to: the count must grow by at least
 * IDLE_OWN a period, which shows it sees heartbeats at all.
 */
#define IDLE_CHANNELS	128
#define IDLE_HB_MS	200
#define IDLE_PERIODS	10
#define IDLE_PKTS_MAX	(4 * IDLE_PERIODS + 8)
#define IDLE_OWN	16
#define RXE0_SENT	"/sys/class/infiniband/rxe0/ports/1/hw_counters/sent_pkts"

static long long rxe0_sent(void)
{
	return rmsg_read_number(RXE0_SENT);
}

/* rxe0's packets sent over IDLE_PERIODS heartbeat periods of @hb_ms. */
static long long idle_packets(int hb_ms)
{
	long long before = rxe0_sent(), after;

	usleep(IDLE_PERIODS * hb_ms * 1000);
	after = rxe0_sent();
	return before < 0 || after < 0 ? -1 : after - before;
}

TEST_F_TIMEOUT(scale, idle_channels_share_one_heartbeat, 600)
{
	/*
	 * The period scales with a slow kernel's RMSG_TEST_SLOW: at 200 ms,
	 * the debug kernel's guest missed heartbeats of channels on periods
	 * of their own and they ended (ETIMEDOUT).
	 */
	int hb = IDLE_HB_MS * rmsg_test_slow();
	struct rmsg_chan_opts own = { .heartbeat_ms = hb };
	long long one, shared, owned;
	char period[16];
	struct many m;
	int i;

	if (rxe0_sent() < 0)
		SKIP(return, "no %s", RXE0_SENT);
	/* The module's own, unless the set-up saved it already. */
	if (!self->heartbeat_ms[0])
		ASSERT_EQ(0, rmsg_read_param("heartbeat_ms",
					     self->heartbeat_ms,
					     sizeof(self->heartbeat_ms)));
	snprintf(period, sizeof(period), "%d", hb);
	ASSERT_EQ(0, rmsg_write_param("heartbeat_ms", period));
	OPEN_TWO(1024, 0);
	ASSERT_TRUE(many_alloc(&m, self->eps, &self->addr, IDLE_CHANNELS, 0));
	many_reset(&m);
	/* One channel first: what the goal compares with. */
	m.n = 1;
	ASSERT_EQ(0, many_open(_metadata, &m, 64));
	EXPECT_EQ(0, count_stray(self->eps, 2, 2 * hb));
	one = idle_packets(hb);
	TH_LOG("1 idle channel: %lld packets in %d heartbeat periods", one,
	       IDLE_PERIODS);
	many_reset(&m);
	m.n = IDLE_CHANNELS;
	ASSERT_EQ(0, many_open(_metadata, &m, 64));
	/* The opens' own packets are over. */
	EXPECT_EQ(0, count_stray(self->eps, 2, 2 * hb));

	shared = idle_packets(hb);
	TH_LOG("%d idle channels: %lld packets in %d heartbeat periods",
	       IDLE_CHANNELS, shared, IDLE_PERIODS);
	EXPECT_LE(2, one);
	EXPECT_LE(2, shared);
	EXPECT_GE(IDLE_PKTS_MAX, shared);
	/* Issue 37's goal: at most twice what one idle channel costs. */
	EXPECT_GE(2 * one + 4, shared);

	for (i = 0; i < IDLE_OWN; i++)
		ASSERT_EQ(0, rmsg_chan_set(m.b, m.b_ids[i], &own));
	owned = idle_packets(hb);
	TH_LOG("with %d of them on heartbeats of their own: %lld packets",
	       IDLE_OWN, owned);
	EXPECT_LE(shared + IDLE_OWN * IDLE_PERIODS / 2, owned);
	printf("# idle_channels: %d\n# idle_packets_one: %lld\n# idle_packets_shared: %lld\n# idle_packets_own_%d: %lld\n",
	       IDLE_CHANNELS, one, shared, IDLE_OWN, owned);
	fflush(stdout);

	EXPECT_EQ(0, many_close(_metadata, &m));
	many_free(&m);
}

/*
 * Thousands of channels through librmsg, each carrying a message each way:
 * what an MPI rank with a channel per peer does. b opens CARRY channels to
 * a's listener (at most CARRY_WINDOW connecting), sends on each a message
 * naming its index, a finds them all with rmsg_msg_peek_any() and answers
 * each on the channel it came on, and b finds the answers the same way.
 * Every message is checked byte for byte, every channel must carry exactly
 * one each way, and each answer must come on the channel its question
 * went on. The empty rmsg_msg_peek_any() of a is timed with every channel
 * open (logged, not asserted: the figure to watch is make bench's
 * peek_any_scaling).
 */
#define CARRY			2048
#define CARRY_SLOW		512
#define CARRY_WINDOW		64
#define CARRY_CQ		8192
#define CARRY_EMPTY_POLLS	20000

struct carry_msg {
	uint32_t index;
	uint32_t answer;
	uint64_t check;
	unsigned char fill[48];
};

static void carry_fill(struct carry_msg *m, uint32_t index, bool answer)
{
	unsigned int i;

	memset(m, 0, sizeof(*m));
	m->index = index;
	m->answer = answer;
	m->check = 0x9e3779b97f4a7c15ULL * (index + 1) ^ answer;
	for (i = 0; i < sizeof(m->fill); i++)
		m->fill[i] = (unsigned char)(index * 7 + i + answer);
}

/*
 * Take @ep's events: opens (CONNECTED at b, ACCEPTED at a) are counted in
 * *@opens, with @ids[user_data] = channel at b and @ids[*opens] = channel
 * at a; send completions in *@sent. Returns false on any other event.
 */
static bool carry_events(struct __test_metadata *_metadata,
			 struct rmsg_ep *ep, bool is_b, int *ids, int *opens,
			 int *sent, int n)
{
	struct rmsg_event ev[64];
	int i, got;

	got = rmsg_ep_progress(ep, ev, 64);
	if (got < 0) {
		TH_LOG("progress: %d", got);
		return false;
	}
	for (i = 0; i < got; i++) {
		if (ev[i].res) {
			TH_LOG("%s: event %u res %d on channel %u",
			       is_b ? "b" : "a", ev[i].kind, ev[i].res,
			       ev[i].channel);
			return false;
		}
		if (ev[i].kind == RMSG_CQE_OP) {
			(*sent)++;
		} else if (is_b && ev[i].kind == RMSG_CQE_CONNECTED &&
			   ev[i].user_data < (uint64_t)n &&
			   ids[ev[i].user_data] == (int)ev[i].channel) {
			(*opens)++;
		} else if (!is_b && ev[i].kind == RMSG_CQE_ACCEPTED &&
			   *opens < n) {
			ids[(*opens)++] = (int)ev[i].channel;
		} else {
			TH_LOG("%s: unexpected event %u on channel %u",
			       is_b ? "b" : "a", ev[i].kind, ev[i].channel);
			return false;
		}
	}
	return true;
}

/*
 * Send message @m (the kind given by @answer) on every channel of @tx
 * (@tx_ids, by index) and take them all at @rx with peek_any; @rx_ids is
 * the channel of each index at @rx, -1 where not known yet (filled in).
 * Returns the number of failures (logged).
 */
static int carry_round(struct __test_metadata *_metadata, struct rmsg_ep *tx,
		       const int *tx_ids, struct rmsg_ep *rx, int *rx_ids,
		       unsigned char *seen_ch, bool answer, int n)
{
	unsigned char *seen = calloc(n, 1);
	int next = 0, got = 0, done = 0, opens = 0, failed = 0, ret;
	long stall = rmsg_now_ms() + STALL_MS;
	struct carry_msg m, want;
	struct rmsg_msg msg;
	bool progress;

	if (!seen)
		return 1;
	memset(seen_ch, 0, RMSG_MAX_CHANNELS);
	while ((got < n || done < n) && failed < 10) {
		progress = false;
		while (next < n) {
			carry_fill(&m, next, answer);
			ret = rmsg_msg_send(tx, tx_ids[next], &m, sizeof(m), 0,
					    next);
			if (ret == -EAGAIN)
				break;
			if (ret) {
				TH_LOG("send %d on %d: %d", next, tx_ids[next],
				       ret);
				failed++;
			}
			next++;
			progress = true;
		}
		if (!carry_events(_metadata, tx, false, NULL, &opens, &done, 0))
			failed++;
		while ((ret = rmsg_msg_peek_any(rx, &msg)) == 0) {
			progress = true;
			memcpy(&m, msg.data, msg.len < sizeof(m) ? msg.len :
								   sizeof(m));
			if (msg.len != sizeof(m) || m.index >= (uint32_t)n) {
				TH_LOG("channel %u: %u bytes, index %u",
				       msg.channel, msg.len, m.index);
				failed++;
			} else {
				carry_fill(&want, m.index, answer);
				if (memcmp(&m, &want, sizeof(m)) ||
				    seen[m.index]++ ||
				    seen_ch[msg.channel]++ ||
				    (rx_ids[m.index] >= 0 &&
				     rx_ids[m.index] != (int)msg.channel)) {
					TH_LOG("message %u on channel %u: bad bytes, twice, or on the wrong channel",
					       m.index, msg.channel);
					failed++;
				}
				rx_ids[m.index] = (int)msg.channel;
			}
			got++;
			if (rmsg_msg_release(rx, &msg))
				failed++;
		}
		if (ret != -EAGAIN) {
			TH_LOG("peek_any: %d", ret);
			failed++;
		}
		if (progress) {
			stall = rmsg_now_ms() + STALL_MS;
			continue;
		}
		if (rmsg_now_ms() > stall) {
			TH_LOG("stalled: %d sent, %d completed, %d received",
			       next, done, got);
			failed++;
			break;
		}
		usleep(1000);
	}
	free(seen);
	return failed;
}

/* The mean of @polls empty rmsg_msg_peek_any() calls on @ep, in ns. */
static double empty_peek_ns(struct rmsg_ep *ep, int polls)
{
	struct timespec t0, t1;
	struct rmsg_msg msg;
	int i;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 0; i < polls; i++)
		if (rmsg_msg_peek_any(ep, &msg) != -EAGAIN)
			return -1;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	return ((t1.tv_sec - t0.tv_sec) * 1e9 + (t1.tv_nsec - t0.tv_nsec)) /
	       polls;
}

/*
 * Objects in use of slab cache @name (/proc/slabinfo's active_objs), or -1
 * if it is not listed. SLUB counts the free objects of a CPU's slab as
 * in use: a few more than the truth.
 */
static long slab_in_use(const char *name)
{
	char line[512], cache[64];
	long objs, in_use = -1;
	FILE *f = fopen("/proc/slabinfo", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%63s %ld", cache, &objs) == 2 &&
		    !strcmp(cache, name)) {
			in_use = objs;
			break;
		}
	fclose(f);
	return in_use;
}

TEST_F_TIMEOUT(scale, every_channel_carries_a_message, 900)
{
	long pend_base, pend_open, pend_sent, pend_answered;
	int n = rmsg_test_slow() > 1 ? CARRY_SLOW : CARRY;
	int *b_ids, *a_ids, issued = 0, connected = 0, accepted = 0, sent = 0;
	int i, closed_a = 0, closed_b = 0, id;
	long stall, t0, t_open;
	unsigned char *seen_ch;
	struct rmsg_event ev[64];
	struct rmsg_ep *a, *b;
	double ns;
	int got;

	b_ids = calloc(n, sizeof(*b_ids));
	a_ids = calloc(n, sizeof(*a_ids));
	seen_ch = calloc(RMSG_MAX_CHANNELS, 1);
	ASSERT_TRUE(b_ids && a_ids && seen_ch);
	/* Both with an arrival summary: peek_any must not walk 2,048. */
	for (i = 0; i < 2; i++) {
		struct rmsg_ep_setup p = {
			.sq_entries = 64,
			.cq_entries = CARRY_CQ,
			.flags = RMSG_EP_F_SUMMARY,
			.send_area_size = RMSG_LIB_SEND_AREA,
		};

		ASSERT_EQ(0, rmsg_ep_open_setup(&self->eps[self->neps], &p));
		self->neps++;
	}
	a = self->eps[0];
	b = self->eps[1];
	ASSERT_EQ(0, rmsg_ep_listen(a, (struct sockaddr *)&self->addr,
				    sizeof(self->addr), LISTENER_DATA, 0));
	/*
	 * A channel end's pending ring (6 KiB) is made by its first send
	 * (Documentation/design.rst): counted in the module's own cache.
	 */
	pend_base = slab_in_use("rmsg_pending");
	ASSERT_LE(0, pend_base)
		TH_LOG("no rmsg_pending cache in /proc/slabinfo (merged, or no rmsg?)");

	t0 = rmsg_now_ms();
	stall = t0 + STALL_MS;
	while (connected < n || accepted < n) {
		while (issued < n && issued - connected < CARRY_WINDOW) {
			id = rmsg_chan_connect(b, (struct sockaddr *)&self->addr,
					       sizeof(self->addr), issued, 0);
			ASSERT_LE(0, id) TH_LOG("connect %d", issued);
			b_ids[issued++] = id;
		}
		i = connected + accepted;
		ASSERT_TRUE(carry_events(_metadata, b, true, b_ids, &connected,
					 &sent, n));
		ASSERT_TRUE(carry_events(_metadata, a, false, a_ids, &accepted,
					 &sent, n));
		if (connected + accepted != i) {
			stall = rmsg_now_ms() + STALL_MS;
			continue;
		}
		ASSERT_GT(stall, rmsg_now_ms())
			TH_LOG("stalled: %d issued, %d connected, %d accepted",
			       issued, connected, accepted);
		wait_eps(self->eps, 2, 100);
	}
	t_open = rmsg_now_ms() - t0;
	TH_LOG("%d channels open in %ld ms", n, t_open);

	/* a_ids[] is rebuilt by index: which channel each question came on. */
	for (i = 0; i < n; i++)
		a_ids[i] = -1;
	pend_open = slab_in_use("rmsg_pending") - pend_base;
	EXPECT_EQ(0, carry_round(_metadata, b, b_ids, a, a_ids, seen_ch, false,
				 n));
	pend_sent = slab_in_use("rmsg_pending") - pend_base;
	/* Answers must come back on b's channel of the same index. */
	EXPECT_EQ(0, carry_round(_metadata, a, a_ids, b, b_ids, seen_ch, true,
				 n));
	pend_answered = slab_in_use("rmsg_pending") - pend_base;
	TH_LOG("pending rings made: %ld with %d channels open, %ld once b sent, %ld once a answered",
	       pend_open, n, pend_sent, pend_answered);
	/* None for an idle end; one for each end that sent, b's then a's. */
	EXPECT_GT(n / 8, pend_open);
	EXPECT_LE(n - n / 8, pend_sent);
	EXPECT_GT(n + n / 8, pend_sent);
	EXPECT_LE(2 * n - n / 8, pend_answered);

	ns = empty_peek_ns(a, CARRY_EMPTY_POLLS);
	EXPECT_LE(0, ns);
	TH_LOG("empty rmsg_msg_peek_any() with %d channels: %.0f ns", n, ns);
	printf("# carry_channels: %d\n# carry_open_ms: %ld\n# carry_empty_peek_ns: %.0f\n",
	       n, t_open, ns);
	fflush(stdout);

	for (i = 0; i < n; i++)
		ASSERT_EQ(0, rmsg_chan_close(b, b_ids[i], 0));
	stall = rmsg_now_ms() + STALL_MS;
	while (closed_a < n || closed_b < n) {
		got = rmsg_ep_progress(b, ev, 64);
		ASSERT_LE(0, got);
		for (i = 0; i < got; i++)
			EXPECT_TRUE(ev[i].kind == RMSG_CQE_CLOSED && !ev[i].res);
		closed_b += got;
		got = rmsg_ep_progress(a, ev, 64);
		ASSERT_LE(0, got);
		for (i = 0; i < got; i++)
			EXPECT_TRUE(ev[i].kind == RMSG_CQE_CLOSED && !ev[i].res);
		closed_a += got;
		ASSERT_GT(stall, rmsg_now_ms())
			TH_LOG("%d closed at b, %d at a", closed_b, closed_a);
		if (closed_a < n || closed_b < n)
			wait_eps(self->eps, 2, 100);
	}
	free(b_ids);
	free(a_ids);
	free(seen_ch);
}

/*
 * A node of ranks as an ordinary user (issue 37, item 6): nobody, with
 * Debian's default limits (RLIMIT_MEMLOCK 8 MiB, RLIMIT_NOFILE 1024) and
 * the module's default per-user caps, opens RANKS library endpoints (a
 * 1 MiB send area each, 32 times that RLIMIT_MEMLOCK) and each rank dials
 * the next RANK_PEERS ranks: RANK_CHANNELS channels, with twice as many
 * ends as the per-user cap had before it followed the machine's memory
 * (1,024), and blocks and shadows far past the limit. Every channel
 * carries a checked question and its answer, on the same channel.
 */
#define RANKS		256
#define RANK_PEERS	4
#define RANK_CHANNELS	(RANKS * RANK_PEERS)
#define RANK_WINDOW	64	/* connects in flight */
#define DEBIAN_MEMLOCK	(8 << 20)
#define DEBIAN_NOFILE	1024

struct rank_msg {
	uint32_t index;		/* the channel: dialler * RANK_PEERS + k */
	uint32_t answer;
	uint64_t check;
};

static void rank_fill(struct rank_msg *m, uint32_t index, uint32_t answer)
{
	m->index = index;
	m->answer = answer;
	m->check = 0x9e3779b97f4a7c15ULL * (index + 1) ^ (answer ? ~0ULL : 0);
}

struct ranks {
	struct rmsg_ep *eps[RANKS];
	int dial[RANK_CHANNELS];	/* the channel at the dialler */
	unsigned char asked[RANK_CHANNELS], answered[RANK_CHANNELS];
	int connected, accepted, sent, got;
};

static int rank_send(struct rmsg_ep *ep, uint32_t channel,
		     const struct rank_msg *m)
{
	long deadline = rmsg_now_ms() + STALL_MS;
	int ret;

	while ((ret = rmsg_msg_send(ep, channel, m, sizeof(*m), 0,
				    m->index)) == -EAGAIN &&
	       rmsg_now_ms() < deadline)
		rmsg_ep_wait(ep, 10);
	return ret;
}

/* Rank @r's events; false on one that should not come. */
static bool rank_events(struct ranks *s, int r)
{
	struct rmsg_event ev[64];
	int i, got;

	got = rmsg_ep_progress(s->eps[r], ev, 64);
	if (got < 0)
		return false;
	for (i = 0; i < got; i++) {
		if (ev[i].res) {
			fprintf(stderr, "# rank %d: event %u res %d\n", r,
				ev[i].kind, ev[i].res);
			return false;
		}
		if (ev[i].kind == RMSG_CQE_OP)
			s->sent++;
		else if (ev[i].kind == RMSG_CQE_ACCEPTED)
			s->accepted++;
		else if (ev[i].kind == RMSG_CQE_CONNECTED &&
			 ev[i].user_data / RANK_PEERS == (uint64_t)r &&
			 s->dial[ev[i].user_data] == (int)ev[i].channel)
			s->connected++;
		else
			return false;
	}
	return true;
}

/* Rank @r's messages: answer questions, check answers; false on a bad one. */
static bool rank_messages(struct ranks *s, int r)
{
	struct rank_msg m, want;
	struct rmsg_msg msg;
	int ret;

	while ((ret = rmsg_msg_peek_any(s->eps[r], &msg)) == 0) {
		if (msg.len != sizeof(m))
			return false;
		memcpy(&m, msg.data, sizeof(m));
		if (m.index >= RANK_CHANNELS)
			return false;
		rank_fill(&want, m.index, m.answer);
		if (memcmp(&m, &want, sizeof(m)))
			return false;
		if (!m.answer) {
			/* A question reaches the rank dialled, once. */
			if ((m.index / RANK_PEERS + m.index % RANK_PEERS + 1) %
			    RANKS != (uint32_t)r || s->asked[m.index]++)
				return false;
			rank_fill(&want, m.index, 1);
			if (rank_send(s->eps[r], msg.channel, &want))
				return false;
		} else if (m.index / RANK_PEERS != (uint32_t)r ||
			   s->dial[m.index] != (int)msg.channel ||
			   s->answered[m.index]++) {
			return false;	/* an answer comes back where asked */
		}
		s->got++;
		if (rmsg_msg_release(s->eps[r], &msg))
			return false;
	}
	return ret == -EAGAIN;
}

static int ranks_child(struct ranks *s, const struct sockaddr_in *ip)
{
	struct rlimit ml = { DEBIAN_MEMLOCK, DEBIAN_MEMLOCK };
	struct rlimit nf = { DEBIAN_NOFILE, DEBIAN_NOFILE };
	struct sockaddr_in addr[RANKS];
	int r, issued = 0, idx, to, seen;
	long stall, t0;
	struct rank_msg m;

	if (setrlimit(RLIMIT_MEMLOCK, &ml) || setrlimit(RLIMIT_NOFILE, &nf) ||
	    rmsg_become_nobody())
		return 1;
	for (r = 0; r < RANKS; r++) {
		if (rmsg_ep_open(&s->eps[r], 64, 256)) {
			fprintf(stderr, "# rank %d: no endpoint\n", r);
			return 2;
		}
		addr[r] = *ip;
		addr[r].sin_port = 0;
		if (rmsg_ep_listen(s->eps[r], (struct sockaddr *)&addr[r],
				   sizeof(addr[r]), r, 0))
			return 3;
	}
	t0 = rmsg_now_ms();
	stall = t0 + STALL_MS;
	while (s->connected < RANK_CHANNELS || s->accepted < RANK_CHANNELS) {
		while (issued < RANK_CHANNELS &&
		       issued - s->connected < RANK_WINDOW) {
			r = issued / RANK_PEERS;
			to = (r + issued % RANK_PEERS + 1) % RANKS;
			s->dial[issued] = rmsg_chan_connect(s->eps[r],
				(struct sockaddr *)&addr[to], sizeof(addr[to]),
				issued, 0);
			if (s->dial[issued] < 0) {
				fprintf(stderr, "# connect %d: %d\n", issued,
					s->dial[issued]);
				return 4;
			}
			issued++;
		}
		seen = s->connected + s->accepted;
		for (r = 0; r < RANKS; r++)
			if (!rank_events(s, r))
				return 5;
		if (s->connected + s->accepted != seen)
			stall = rmsg_now_ms() + STALL_MS;
		if (rmsg_now_ms() > stall)
			return 6;
		usleep(1000);
	}
	fprintf(stderr, "# %d ranks, %d channels open in %ld ms\n", RANKS,
		RANK_CHANNELS, rmsg_now_ms() - t0);

	for (idx = 0; idx < RANK_CHANNELS; idx++) {
		rank_fill(&m, idx, 0);
		if (rank_send(s->eps[idx / RANK_PEERS], s->dial[idx], &m))
			return 7;
	}
	stall = rmsg_now_ms() + STALL_MS;
	while (s->got < 2 * RANK_CHANNELS || s->sent < 2 * RANK_CHANNELS) {
		seen = s->got + s->sent;
		for (r = 0; r < RANKS; r++)
			if (!rank_events(s, r) || !rank_messages(s, r))
				return 8;
		if (s->got + s->sent != seen)
			stall = rmsg_now_ms() + STALL_MS;
		if (rmsg_now_ms() > stall)
			return 9;
		usleep(1000);
	}
	for (idx = 0; idx < RANK_CHANNELS; idx++)
		if (s->asked[idx] != 1 || s->answered[idx] != 1)
			return 10;
	for (r = 0; r < RANKS; r++)
		rmsg_ep_drop(&s->eps[r]);
	return 0;
}

TEST_F_TIMEOUT(scale, node_of_ranks_as_nobody, 900)
{
	unsigned int cap = 0;
	struct ranks *s;
	FILE *f;
	pid_t pid;

	if (geteuid())
		SKIP(return, "needs root to become nobody");
	f = fopen("/sys/module/rmsg/parameters/max_channels_per_user", "r");
	ASSERT_NE(NULL, f);
	ASSERT_EQ(1, fscanf(f, "%u", &cap));
	fclose(f);
	TH_LOG("max_channels_per_user %u (default, from the guest's memory)",
	       cap);
	s = calloc(1, sizeof(*s));
	ASSERT_NE(NULL, s);
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid)
		_exit(ranks_child(s, &self->addr));
	EXPECT_EQ(0, rmsg_child_status(pid)) TH_LOG("the child failed a step");
	free(s);
}

/*
 * 64 listening endpoints, each on its own port, and 64 connecting ones with
 * one channel each, all open at once; then half are closed by the
 * connecting side and half by the accepting side. Every event is checked.
 */
TEST_F_TIMEOUT(scale, sixty_four_endpoints, 600)
{
	struct sockaddr_in addr[PAIRS];
	int b_id[PAIRS], a_id[PAIRS];
	unsigned char a_ev[PAIRS] = { 0 }, b_ev[PAIRS] = { 0 };
	struct rmsg_ep **a = self->eps, **b = self->eps + PAIRS;
	long stall, t0;
	struct rmsg_cqe cqe;
	int i, done, phase;
	bool progress;

	for (i = 0; i < 2 * PAIRS; i++)
		OPEN_EP(8, 16);
	for (i = 0; i < PAIRS; i++) {
		ASSERT_TRUE(rmsg_local_addr(&addr[i], 0));
		ASSERT_EQ(0, rmsg_ep_listen(a[i], (struct sockaddr *)&addr[i],
					    sizeof(addr[i]), PAIR_A_DATA + i,
					    0));
	}
	/* Port 0 picked a free port for each: all differ. */
	for (i = 0; i < PAIRS; i++) {
		int j;

		ASSERT_NE(0, addr[i].sin_port);
		for (j = 0; j < i; j++)
			ASSERT_NE(addr[j].sin_port, addr[i].sin_port);
	}

	t0 = rmsg_now_ms();
	for (i = 0; i < PAIRS; i++) {
		b_id[i] = rmsg_chan_connect(b[i], (struct sockaddr *)&addr[i],
					    sizeof(addr[i]), PAIR_B_DATA + i, 0);
		ASSERT_LE(0, b_id[i]) TH_LOG("pair %d", i);
	}

	/* Phase 0: one CONNECTED and one ACCEPTED per pair; 1: two CLOSED. */
	for (phase = 0; phase < 2; phase++) {
		u_int32_t b_kind = phase ? RMSG_CQE_CLOSED : RMSG_CQE_CONNECTED;
		u_int32_t a_kind = phase ? RMSG_CQE_CLOSED : RMSG_CQE_ACCEPTED;

		done = 0;
		stall = rmsg_now_ms() + STALL_MS;
		while (done < 2 * PAIRS) {
			progress = false;
			for (i = 0; i < PAIRS; i++) {
				while (rmsg_take_cqe(b[i], &cqe)) {
					progress = true;
					done++;
					ASSERT_EQ(b_kind, RMSG_CQE_KIND(cqe.flags))
						TH_LOG("pair %d", i);
					ASSERT_EQ(0, cqe.res)
						TH_LOG("pair %d: %s", i,
						       strerror(-cqe.res));
					ASSERT_EQ(PAIR_B_DATA + i, cqe.user_data);
					ASSERT_EQ(b_id[i], cqe.channel);
					ASSERT_EQ(phase, b_ev[i]++);
				}
				while (rmsg_take_cqe(a[i], &cqe)) {
					progress = true;
					done++;
					ASSERT_EQ(a_kind, RMSG_CQE_KIND(cqe.flags))
						TH_LOG("pair %d", i);
					ASSERT_EQ(0, cqe.res)
						TH_LOG("pair %d: %s", i,
						       strerror(-cqe.res));
					ASSERT_EQ(PAIR_A_DATA + i, cqe.user_data);
					/* Closed: the id it was accepted with. */
					ASSERT_EQ(phase ? a_id[i] : cqe.channel,
						  cqe.channel);
					a_id[i] = cqe.channel;
					ASSERT_EQ(phase, a_ev[i]++);
				}
			}
			if (progress) {
				stall = rmsg_now_ms() + STALL_MS;
				continue;
			}
			ASSERT_GT(stall, rmsg_now_ms())
				TH_LOG("stalled in phase %d: %d of %d events",
				       phase, done, 2 * PAIRS);
			wait_eps(self->eps, 2 * PAIRS, 100);
		}
		TH_LOG("%d pairs %s in %ld ms", PAIRS,
		       phase ? "closed" : "open", rmsg_now_ms() - t0);
		ASSERT_EQ(0, count_stray(self->eps, 2 * PAIRS, 300));
		if (phase)
			break;
		t0 = rmsg_now_ms();
		for (i = 0; i < PAIRS; i++) {
			if (i & 1) {
				ASSERT_EQ(0, rmsg_chan_close(a[i],
							     a_id[i], 0));
			} else {
				ASSERT_EQ(0, rmsg_chan_close(b[i],
							     b_id[i], 0));
			}
		}
	}
	for (i = 0; i < PAIRS; i++) {
		EXPECT_EQ(2, a_ev[i]);
		EXPECT_EQ(2, b_ev[i]);
	}
}

/* --- memory per channel ---------------------------------------------- */

struct meminfo {
	long free;		/* MemFree */
	long pcp;		/* free pages on the per-CPU lists */
	long sunreclaim;	/* SUnreclaim */
	long vmalloc;		/* VmallocUsed */
};

/* Sum the per-CPU free page counts of every zone ("count:" lines). */
static long pcp_pages(void)
{
	char line[256];
	long n, sum = 0;
	FILE *f;

	f = fopen("/proc/zoneinfo", "re");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, " count: %ld", &n) == 1)
			sum += n;
	fclose(f);
	return sum;
}

static bool read_meminfo(int fd, struct meminfo *mi)
{
	char buf[8192], *line;
	ssize_t len;
	int sfd, found = 0;

	/* Reading stat_refresh folds the per-CPU counter deltas first. */
	sfd = open("/proc/sys/vm/stat_refresh", O_RDONLY | O_CLOEXEC);
	if (sfd >= 0) {
		if (read(sfd, buf, sizeof(buf)) < 0)
			buf[0] = '\0';
		close(sfd);
	}
	mi->pcp = pcp_pages() * sysconf(_SC_PAGESIZE);
	len = pread(fd, buf, sizeof(buf) - 1, 0);
	if (len <= 0)
		return false;
	buf[len] = '\0';
	for (line = buf; line; line = strchr(line, '\n')) {
		long kb;

		if (*line == '\n')
			line++;
		if (sscanf(line, "MemFree: %ld kB", &kb) == 1) {
			mi->free = kb * 1024;
			found++;
		} else if (sscanf(line, "SUnreclaim: %ld kB", &kb) == 1) {
			mi->sunreclaim = kb * 1024;
			found++;
		} else if (sscanf(line, "VmallocUsed: %ld kB", &kb) == 1) {
			mi->vmalloc = kb * 1024;
			found++;
		}
	}
	return found == 3;
}

/* The free pages, wherever the page allocator keeps them. */
static long free_bytes(const struct meminfo *mi)
{
	return mi->free + mi->pcp;
}

/*
 * Let deferred frees finish, then sample: once a second, until two samples
 * in a row agree within 256 KiB (at most 15 s). The test does no file I/O
 * in between, so the page cache stays put.
 */
static bool settle_and_read(int fd, struct meminfo *mi, bool trace)
{
	struct meminfo prev;
	long t0 = rmsg_now_ms();
	int i;

	if (!read_meminfo(fd, &prev))
		return false;
	for (i = 0; i < 15; i++) {
		sleep(1);
		if (!read_meminfo(fd, mi))
			return false;
		if (trace)
			fprintf(stderr, "#   %5ld ms: MemFree %ld pcp %ld SUnreclaim %ld VmallocUsed %ld\n",
				rmsg_now_ms() - t0, mi->free, mi->pcp,
				mi->sunreclaim, mi->vmalloc);
		if (labs(free_bytes(mi) - free_bytes(&prev)) < 256 * 1024)
			return true;
		prev = *mi;
	}
	return true;
}

static int cmp_long(const void *x, const void *y)
{
	long a = *(const long *)x, b = *(const long *)y;

	return a < b ? -1 : a > b;
}

/*
 * What one idle channel end costs in kernel memory, with the default 32 KiB
 * block. The measure is how many free pages are gone while MEM_CHANNELS
 * channels are open: MemFree plus the pages on the per-CPU free lists
 * (/proc/zoneinfo "count:"), after folding the per-CPU counters
 * (/proc/sys/vm/stat_refresh). That counts every page the kernel takes,
 * whatever allocator takes it: slab, vmalloc (rxe's queues), and the
 * block's pages, which come straight from the page allocator and show in
 * neither Slab nor VmallocUsed. MemFree alone is not enough: freed pages
 * sit on the per-CPU lists, tens of MiB of them here, and MemFree does not
 * count them. MemAvailable would add estimates of reclaimable caches that
 * have nothing to do with channels. SUnreclaim and VmallocUsed give a
 * breakdown. Both ends of each channel are in this kernel, so the figure is
 * divided by 2N.
 *
 * Round 0 is a warm-up: it grows what is kept afterwards (the device's CQ
 * pool, work queue threads, slab caches), so the figure is the median of
 * the later rounds, the steady cost of one more channel. The round-0 figure
 * is logged too.
 *
 * Checks that can fail: the figure is at least the block and below 1 MiB;
 * after each round's close, the free pages are back within a tenth of what
 * the round took (a leak of a tenth of a channel per channel would show);
 * and over the measured rounds the baseline does not creep by as much.
 */
TEST_F_TIMEOUT(scale, memory_per_channel, 900)
{
	long per_end[MEM_ROUNDS], delta, left, creep, slab, vmal;
	struct meminfo base, opened, closed, first = { 0 };
	const long ends = 2 * MEM_CHANNELS;
	struct many m;
	int fd, round;

	fd = open("/proc/meminfo", O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, fd);
	OPEN_TWO(1024, 0);
	ASSERT_TRUE(many_alloc(&m, self->eps, &self->addr, MEM_CHANNELS, 0));

	for (round = 0; round < MEM_ROUNDS; round++) {
		many_reset(&m);
		/*
		 * A later round's base is the reading its predecessor
		 * settled on after its close: nothing runs in between but
		 * many_reset()'s memsets of pages it touched already. Taking
		 * it again cost a second or two of settling a round.
		 */
		if (round)
			base = closed;
		else
			ASSERT_TRUE(settle_and_read(fd, &base, TRACE));
		if (round == 1)
			first = base;
		ASSERT_EQ(0, many_open(_metadata, &m, 64));
		ASSERT_TRUE(settle_and_read(fd, &opened, TRACE));
		ASSERT_EQ(0, many_close(_metadata, &m));
		ASSERT_TRUE(settle_and_read(fd, &closed, TRACE));

		delta = free_bytes(&base) - free_bytes(&opened);
		left = free_bytes(&base) - free_bytes(&closed);
		slab = opened.sunreclaim - base.sunreclaim;
		vmal = opened.vmalloc - base.vmalloc;
		per_end[round] = delta / ends;
		TH_LOG("round %d: %ld B per end (slab %ld, vmalloc %ld, other pages %ld); after close %ld B not back",
		       round, per_end[round], slab / ends, vmal / ends,
		       (delta - slab - vmal) / ends, left);
		ASSERT_LT(0, delta);
		if (round == 0)
			continue;
		EXPECT_GT(delta / 10, left)
			TH_LOG("round %d: %ld B not returned after close",
			       round, left);
	}
	creep = free_bytes(&first) - free_bytes(&closed);
	EXPECT_GT(per_end[1] * ends / 10, creep)
		TH_LOG("free memory crept down by %ld B over %d rounds", creep,
		       MEM_ROUNDS - 1);

	qsort(per_end + 1, MEM_ROUNDS - 1, sizeof(per_end[0]), cmp_long);
	delta = per_end[1 + (MEM_ROUNDS - 1) / 2];
	TH_LOG("idle channel end: %ld B (median of %d rounds of %d channels, 32 KiB block; warm-up round %ld B)",
	       delta, MEM_ROUNDS - 1, MEM_CHANNELS, per_end[0]);
	printf("# mem_per_channel_bytes: %ld\n", delta);
	fflush(stdout);
	EXPECT_LE(MEM_BLOCK, delta);
	EXPECT_GT(1L << 20, delta);
	many_free(&m);
	close(fd);
}

int main(int argc, char **argv)
{
	return rmsg_test_main(argc, argv);
}
