// SPDX-License-Identifier: GPL-2.0
/*
 * Resilience, as far as the program sees it (Documentation/resilience.rst):
 * the channel list (RMSG_IOC_CHAN_LIST, rmsgctl chan) with its
 * permissions, fault injection (RMSG_IOC_FAULT) and its errors, and a
 * QP error injected under byte-checked eager streams on several channels
 * both ways. A module that repairs channels (RMSG_FEAT_REPAIR) must keep
 * every stream exact; one that does not must end the broken channels with
 * an error event, lose nothing it said was delivered, and hang nowhere.
 * Both endpoints live in this process and talk over the guest's rxe
 * device (loopback topology).
 *
 * Then the other fault classes, each under streams: a dropped connection
 * (RMSG_FAULT_DISCONNECT), many faults in a row on one channel, repair
 * with arrival flags from write-with-immediate, a peer process killed, a
 * repair that cannot succeed (the link under rxe0 down) and gives up, and
 * endpoints closed, then the module unloaded, while channels are being
 * repaired.
 */
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include "kselftest_harness.h"
#include "rmsg_test.h"

#define EVENT_TIMEOUT_MS	20000
#define NOBODY			65534
#define LISTEN_BLOCK		16384
#define CONNECT_BLOCK		65536
#define MAX_CHANS		8
#define STREAM_MSGS		3000
#define WARMUP_MSGS		300
#define MAX_PARAMS		4
/* Streams that run until the test stops them (stop_streams()). */
#define ENDLESS			(1ULL << 40)
#define HALF_LEN		4096
/* Streams with rendezvous send every this many-th message so. */
#define RNDV_EVERY		7

/* The next event of @ep, which must be of @kind: 0, or why not. */
static int wait_ev(struct rmsg_ep *ep, unsigned int kind,
		   struct rmsg_event *ev, int timeout_ms)
{
	long deadline = rmsg_now_ms() + timeout_ms;
	struct pollfd pfd = { .fd = rmsg_ep_fd(ep), .events = POLLIN };
	int n;

	for (;;) {
		n = rmsg_ep_progress(ep, ev, 1);
		if (n < 0)
			return n;
		if (n)
			return ev->kind == kind ? 0 : -EPROTO;
		if (rmsg_now_ms() > deadline)
			return -ETIMEDOUT;
		poll(&pfd, 1, 20);
	}
}

static bool module_has(__u64 feature)
{
	struct rmsg_version ver;
	int fd = rmsg_node_open();
	bool ok;

	if (fd < 0)
		return false;
	ok = !rmsg_node_version(fd, &ver) && (ver.features & feature);
	close(fd);
	return ok;
}

/* RMSG_IOC_CHAN_LIST as it is, for the tests of its edges. */
static int chan_list(int fd, struct rmsg_chan_info *chans, __u32 capacity,
		     __u32 flags, struct rmsg_chan_list *req)
{
	memset(req, 0, sizeof(*req));
	req->chans = (uintptr_t)chans;
	req->capacity = capacity;
	req->flags = flags;
	return ioctl(fd, RMSG_IOC_CHAN_LIST, req) ? -errno : 0;
}

static int fault(int fd, __u32 ep_id, __u32 channel, __u32 kind)
{
	struct rmsg_fault req = {
		.ep_id = ep_id, .channel = channel, .kind = kind,
	};

	return ioctl(fd, RMSG_IOC_FAULT, &req) ? -errno : 0;
}

/* The entry of channel @ch of endpoint @ep_id in @c, or NULL. */
static const struct rmsg_chan_info *find_info(const struct rmsg_chan_info *c,
					      int n, __u32 ep_id, __u32 ch)
{
	int i;

	for (i = 0; i < n; i++)
		if (c[i].ep_id == ep_id && c[i].channel == ch)
			return &c[i];
	return NULL;
}

static int count_ep(const struct rmsg_chan_info *c, int n, __u32 ep_id)
{
	int i, k = 0;

	for (i = 0; i < n; i++)
		k += c[i].ep_id == ep_id;
	return k;
}

/* A module parameter a test changed, and what it was. */
struct saved_param {
	const char *name;
	char val[32];
};

FIXTURE(resil) {
	struct rmsg_ep *a;	/* listens */
	struct rmsg_ep *b;	/* connects */
	struct sockaddr_in addr;
	__u32 a_ep, b_ep;	/* endpoint ids */
	__u32 a_ch[MAX_CHANS], b_ch[MAX_CHANS];
	int nch;
	bool opened;
	struct rmsg_streams *ss;
	/* What a test changed in the guest; the teardown puts it back. */
	struct saved_param params[MAX_PARAMS];
	int nparams;
	const char *netdev;
	bool link_down, netem, rxe_gone;
};

static int wait_ev(struct rmsg_ep *ep, unsigned int kind,
		   struct rmsg_event *ev, int timeout_ms);

/*
 * Can a new channel be opened over rxe0 (within 5 s, times RMSG_TEST_SLOW)?
 * 0 or why not.
 */
static int probe_connect(void)
{
	int wait_ms = 5000 * rmsg_test_slow();
	struct sockaddr_in addr;
	struct rmsg_event ev;
	struct rmsg_ep *l = NULL, *c = NULL;
	int ret, id;

	if (!rmsg_local_addr(&addr, 0))
		return -EINVAL;
	ret = rmsg_ep_open(&l, 64, 0);
	if (ret)
		return ret;
	ret = rmsg_ep_open(&c, 64, 0);
	if (ret) {
		rmsg_ep_drop(&l);
		return ret;
	}
	ret = rmsg_ep_listen(l, (struct sockaddr *)&addr, sizeof(addr), 1,
			     0);
	id = ret ? ret : rmsg_chan_connect(c, (struct sockaddr *)&addr,
					   sizeof(addr), 2, 0);
	if (id < 0) {
		ret = id;
	} else {
		/* A wait that ran out, a connect that timed out: both -110. */
		ret = wait_ev(c, RMSG_CQE_CONNECTED, &ev, wait_ms);
		if (ret)
			ksft_print_msg("probe: no CONNECTED event: %d\n", ret);
		else if (ev.res)
			ksft_print_msg("probe: CONNECTED with %d\n", ev.res);
		ret = ret ?: ev.res;
	}
	rmsg_ep_drop(&c);
	rmsg_ep_drop(&l);
	return ret;
}

/*
 * The link under rxe0 up again, the port active, and new channels work:
 * true if so. rmsg sends no CM message through a port that is down (on
 * the guest's 6.1 kernel one failed send leaves rxe's GSI QP deaf:
 * Documentation/resilience.rst, "A port that is down"), so new channels
 * must open at once. When they do not, rxe0 is made again so that the
 * tests after this one have a network, and the answer is still false
 * unless @may_remake.
 */
static bool link_up(const char *netdev, bool may_remake)
{
	bool ok;
	int fd, ret;

	if (rmsg_sh("ip link set %s up", netdev))
		return false;
	fd = rmsg_node_open();
	if (fd < 0)
		return false;
	ok = rmsg_wait_dev(fd, "rxe0", true, RMSG_PORT_ACTIVE, 20000);
	ret = ok ? probe_connect() : -ENODEV;
	if (ok && ret) {
		ksft_print_msg("no new channel after %s came back up (%d): making rxe0 again\n",
			       netdev, ret);
		ok = !rmsg_sh("rdma link delete rxe0") &&
		     !rmsg_sh("rdma link add rxe0 type rxe netdev %s",
			      netdev) &&
		     rmsg_wait_dev(fd, "rxe0", true, RMSG_PORT_ACTIVE, 20000);
		ret = ok ? probe_connect() : -ENODEV;
		ksft_print_msg("after making rxe0 again: %d\n", ret);
		ok = ok && may_remake;
	}
	close(fd);
	return ok && !ret;
}

FIXTURE_SETUP(resil)
{
	struct rmsg_chan_info *c;

	if (!rmsg_local_addr(&self->addr, 0))
		SKIP(rmsg_setup_skipped(_metadata); return,
		     "RMSG_LOCAL_ADDR not set: not run by rmsg-vm");
	if (!module_has(RMSG_FEAT_EAGER))
		SKIP(rmsg_setup_skipped(_metadata); return,
		     "the module does not announce RMSG_FEAT_EAGER");
	if (!module_has(RMSG_FEAT_CHAN_LIST) || !module_has(RMSG_FEAT_FAULT))
		SKIP(rmsg_setup_skipped(_metadata); return,
		     "the module does not announce RMSG_FEAT_CHAN_LIST and RMSG_FEAT_FAULT");
	ASSERT_EQ(0, rmsg_ep_open(&self->a, 256, 2048));
	ASSERT_EQ(0, rmsg_ep_open(&self->b, 256, 2048));
	self->opened = true;
	ASSERT_EQ(0, rmsg_ep_listen(self->a, (struct sockaddr *)&self->addr,
				    sizeof(self->addr), 0xa0, LISTEN_BLOCK));
	ASSERT_EQ(0, rmsg_node_channels(rmsg_ep_fd(self->a), 0, &c,
					&self->a_ep));
	ASSERT_EQ(0, rmsg_node_channels(rmsg_ep_fd(self->b), 0, &c,
					&self->b_ep));
	ASSERT_NE(0, self->a_ep);
	ASSERT_NE(0, self->b_ep);
	ASSERT_NE(self->a_ep, self->b_ep);
	self->ss = calloc(1, sizeof(*self->ss));
	ASSERT_NE(NULL, self->ss);
	self->netdev = getenv("RMSG_NETDEV");
}

FIXTURE_TEARDOWN(resil)
{
	int i;

	if (self->opened) {
		rmsg_ep_drop(&self->a);
		rmsg_ep_drop(&self->b);
	}
	free(self->ss);
	/* Leave the guest as the next test expects it. */
	if (self->netem)
		rmsg_sh("tc qdisc del dev %s root", self->netdev);
	/*
	 * Braces: an EXPECT's message is a loop after the condition's
	 * statement, run while the harness's trigger is set, and an ASSERT
	 * that ended the test left it set.
	 */
	if (self->link_down) {
		EXPECT_TRUE(link_up(self->netdev, false))
			TH_LOG("%s did not come back up, or rxe0 made no new channel",
			       self->netdev);
	}
	if (self->rxe_gone &&
	    (rmsg_sh("rdma link add rxe0 type rxe netdev %s", self->netdev) ||
	     !link_up(self->netdev, true)))
		TH_LOG("rxe0 could not be made again");
	for (i = self->nparams - 1; i >= 0; i--)
		if (rmsg_write_param(self->params[i].name, self->params[i].val))
			TH_LOG("could not restore %s", self->params[i].name);
}

typedef FIXTURE_DATA(resil) resil_fixture;

/*
 * Open @n channels from b to a, one at a time, so that a's ACCEPTED is
 * the same channel's: 0 or a negative errno.
 */
static int connect_n(resil_fixture *self, int n)
{
	struct rmsg_event ev;
	int i, id, ret;

	for (i = 0; i < n; i++) {
		id = rmsg_chan_connect(self->b, (struct sockaddr *)&self->addr,
				       sizeof(self->addr), 0xb0 + i,
				       CONNECT_BLOCK);
		if (id < 0)
			return id;
		ret = wait_ev(self->b, RMSG_CQE_CONNECTED, &ev,
			      EVENT_TIMEOUT_MS);
		if (ret || ev.res || ev.channel != (__u32)id)
			return ret ?: ev.res ?: -EPROTO;
		self->b_ch[i] = id;
		ret = wait_ev(self->a, RMSG_CQE_ACCEPTED, &ev,
			      EVENT_TIMEOUT_MS);
		if (ret || ev.res)
			return ret ?: ev.res;
		self->a_ch[i] = ev.channel;
	}
	self->nch = n;
	return 0;
}

/*
 * Set module parameter @name to @val for this test; the teardown puts the
 * old value back. 0 or a negative errno (-ENOENT: no such parameter).
 */
static int set_param(resil_fixture *self, const char *name, const char *val)
{
	struct saved_param *p = &self->params[self->nparams];
	int ret;

	if (self->nparams == MAX_PARAMS)
		return -ENOSPC;
	ret = rmsg_read_param(name, p->val, sizeof(p->val));
	if (ret)
		return ret;
	p->name = name;
	self->nparams++;
	return rmsg_write_param(name, val);
}

/*
 * Cut the peer off: the link under rxe0 goes down, so a connection
 * attempt finds no route to the address (rxe hands loopback packets to
 * itself, past the netdev's qdisc, so netem cannot do it here). The
 * teardown brings the link up again.
 */
static int block_net(resil_fixture *self)
{
	self->link_down = true;
	return rmsg_sh("ip link set %s down", self->netdev) ? -EIO : 0;
}

static bool unblock_net(resil_fixture *self)
{
	self->link_down = false;
	return link_up(self->netdev, false);
}

/* Channel @ch of endpoint @ep_id as the list shows it: 0 or -ENOENT. */
static int chan_get(int fd, __u32 ep_id, __u32 ch, struct rmsg_chan_info *out)
{
	const struct rmsg_chan_info *e;
	struct rmsg_chan_info *c;
	int n;

	n = rmsg_node_channels(fd, RMSG_CHAN_LIST_F_ALL, &c, NULL);
	if (n < 0)
		return n;
	e = find_info(c, n, ep_id, ch);
	if (e)
		*out = *e;
	free(c);
	return e ? 0 : -ENOENT;
}

/* Wait until the channel is in @state: true, or false at @timeout_ms. */
static bool wait_state(int fd, __u32 ep_id, __u32 ch, __u32 state,
		       int timeout_ms)
{
	long deadline = rmsg_now_ms() + timeout_ms;
	struct rmsg_chan_info e;

	do {
		if (!chan_get(fd, ep_id, ch, &e) && e.state == state)
			return true;
		usleep(5000);
	} while (rmsg_now_ms() < deadline);
	return false;
}

static void print_info(char side, const struct rmsg_chan_info *e)
{
	ksft_print_msg("%c:%u %s epoch %u repairs %u attempt %u of %u retx %llu msgs %llu bytes, recovering %.3f ms, last error %d\n",
		       side, e->channel, rmsg_chan_state_name(e->state),
		       e->epoch, e->repairs, e->attempts, e->max_attempts,
		       (unsigned long long)e->retx_msgs,
		       (unsigned long long)e->retx_bytes,
		       e->recover_ns / 1e6, e->last_error);
}

/* Channel @a_ch of a and @b_ch of b as the module shows them now. */
static void print_both(resil_fixture *self, int a_ch, int b_ch)
{
	struct rmsg_chan_info e;

	if (!chan_get(rmsg_ep_fd(self->a), self->a_ep, a_ch, &e))
		print_info('a', &e);
	if (!chan_get(rmsg_ep_fd(self->b), self->b_ep, b_ch, &e))
		print_info('b', &e);
}

/*
 * Open @nch channels from b to a and start a stream each way on each
 * (b to a at 2 * i, a to b at 2 * i + 1) of @total messages; warm them up.
 */
static void start_streams(struct __test_metadata *_metadata,
			  resil_fixture *self, int nch, __u64 total)
{
	struct rmsg_streams *ss = self->ss;
	int i;

	ASSERT_EQ(0, connect_n(self, nch));
	for (i = 0; i < nch; i++) {
		ASSERT_EQ(2 * i, rmsg_streams_add(ss, self->b, self->b_ch[i],
						  self->a, self->a_ch[i],
						  total));
		ASSERT_EQ(2 * i + 1,
			  rmsg_streams_add(ss, self->a, self->a_ch[i],
					   self->b, self->b_ch[i], total));
	}
	ASSERT_TRUE(rmsg_streams_run(ss, WARMUP_MSGS, 60000))
		TH_LOG("%s", ss->why);
}

/* Endless streams send no more than they did: they can now finish. */
static void stop_streams(struct rmsg_streams *ss)
{
	unsigned int i;

	for (i = 0; i < ss->n; i++)
		ss->s[i].total = ss->s[i].sent;
}

/* Every stream ran to its end and is exact. */
static void check_exact(struct __test_metadata *_metadata,
			struct rmsg_streams *ss)
{
	char buf[256];
	unsigned int i;

	ASSERT_TRUE(rmsg_streams_run(ss, ENDLESS, 120000))
		TH_LOG("%s", ss->why);
	for (i = 0; i < ss->n; i++) {
		rmsg_stream_str(&ss->s[i], buf, sizeof(buf));
		ksft_print_msg("stream %u (channel %u, %s): %s\n", i, i / 2,
			       i % 2 ? "a to b" : "b to a", buf);
		EXPECT_TRUE(rmsg_stream_exact(&ss->s[i]))
			TH_LOG("stream %u: %s", i, buf);
	}
}

/*
 * For a failure: every stream's counters and every channel of the list,
 * as they are now.
 */
static void dump_state(resil_fixture *self)
{
	struct rmsg_streams *ss = self->ss;
	struct rmsg_chan_info *c;
	char buf[256];
	unsigned int i;
	int n;

	for (i = 0; i < ss->n; i++) {
		rmsg_stream_str(&ss->s[i], buf, sizeof(buf));
		ksft_print_msg("stream %u (channel %u, %s): %s%s\n", i, i / 2,
			       i % 2 ? "a to b" : "b to a", buf,
			       ss->s[i].tx_dead ? ", send refused" : "");
	}
	n = rmsg_node_channels(rmsg_ep_fd(self->b), RMSG_CHAN_LIST_F_ALL, &c,
			       NULL);
	if (n < 0) {
		ksft_print_msg("channel list: %s\n", strerror(-n));
		return;
	}
	ksft_print_msg("%d channels listed (a is endpoint %u, b %u):\n", n,
		       self->a_ep, self->b_ep);
	for (i = 0; i < (unsigned int)n; i++) {
		ksft_print_msg("ep %u: attempt %u of %u\n", c[i].ep_id,
			       c[i].attempts, c[i].max_attempts);
		print_info(c[i].ep_id == self->a_ep ? 'a' :
			   c[i].ep_id == self->b_ep ? 'b' : '?', &c[i]);
	}
	free(c);
}

/* Each end's own list shows its open channels, as they are. */
TEST_F(resil, chan_list_own)
{
	struct rmsg_chan_info c[MAX_CHANS];
	const struct rmsg_chan_info *e;
	struct rmsg_chan_list req;
	struct rmsg_event ev;
	int i;

	ASSERT_EQ(0, chan_list(rmsg_ep_fd(self->a), c, MAX_CHANS, 0, &req));
	EXPECT_EQ(0, req.filled);
	EXPECT_EQ(0, req.total);
	EXPECT_EQ(self->a_ep, req.ep_id);

	ASSERT_EQ(0, connect_n(self, 3));
	ASSERT_EQ(0, chan_list(rmsg_ep_fd(self->a), c, MAX_CHANS, 0, &req));
	EXPECT_EQ(self->a_ep, req.ep_id);
	ASSERT_EQ(3, req.filled);
	ASSERT_EQ(3, req.total);
	for (i = 0; i < 3; i++) {
		e = find_info(c, req.filled, self->a_ep, self->a_ch[i]);
		ASSERT_NE(NULL, e) TH_LOG("a's channel %u missing",
					  self->a_ch[i]);
		EXPECT_EQ(RMSG_CHAN_INFO_OPEN, e->state);
		EXPECT_EQ(LISTEN_BLOCK, e->block_size);
		EXPECT_EQ(0, e->epoch);
		EXPECT_EQ(0, e->attempts);
		EXPECT_EQ(0, e->repairs);
		EXPECT_EQ(0, e->last_error);
		EXPECT_EQ(0, e->retx_msgs);
		EXPECT_EQ(0, e->recover_ns);
		EXPECT_EQ((__u32)getpid(), e->pid);
		EXPECT_EQ(geteuid(), e->uid);
		/*
		 * Not leased (lease_blocks off): the block is held whole.
		 * Leased, none until the peer sends (nothing did yet).
		 */
		EXPECT_EQ(rmsg_leases_on() ? 0 :
			  (LISTEN_BLOCK + getpagesize() - 1) &
			  ~(getpagesize() - 1), e->block_held);
		EXPECT_EQ(0, e->lease);
		/* An open channel is on a device. */
		EXPECT_NE(0, e->dev);
	}
	ASSERT_EQ(0, chan_list(rmsg_ep_fd(self->b), c, MAX_CHANS, 0, &req));
	EXPECT_EQ(self->b_ep, req.ep_id);
	ASSERT_EQ(3, req.filled);
	for (i = 0; i < 3; i++) {
		e = find_info(c, req.filled, self->b_ep, self->b_ch[i]);
		ASSERT_NE(NULL, e) TH_LOG("b's channel %u missing",
					  self->b_ch[i]);
		EXPECT_EQ(RMSG_CHAN_INFO_OPEN, e->state);
		EXPECT_EQ(CONNECT_BLOCK, e->block_size);
		EXPECT_EQ(0, e->epoch);
		EXPECT_EQ((__u32)getpid(), e->pid);
	}
	/* A closed channel leaves the list once its end is reported. */
	ASSERT_EQ(0, rmsg_chan_close(self->b, self->b_ch[0], 0));
	ASSERT_EQ(0, wait_ev(self->b, RMSG_CQE_CLOSED, &ev,
			     EVENT_TIMEOUT_MS));
	EXPECT_EQ(self->b_ch[0], ev.channel);
	ASSERT_EQ(0, chan_list(rmsg_ep_fd(self->b), c, MAX_CHANS, 0, &req));
	EXPECT_EQ(2, req.total);
	EXPECT_EQ(NULL, find_info(c, req.filled, self->b_ep, self->b_ch[0]));
}

/* Capacity 0 counts, a small one shows part, a huge one is no problem. */
TEST_F(resil, chan_list_capacity)
{
	struct rmsg_chan_info c[MAX_CHANS], *lc;
	struct rmsg_chan_list req;
	__u32 id;
	int n;

	ASSERT_EQ(0, connect_n(self, 5));
	ASSERT_EQ(0, chan_list(rmsg_ep_fd(self->b), NULL, 0, 0, &req));
	EXPECT_EQ(0, req.filled);
	EXPECT_EQ(5, req.total);
	EXPECT_EQ(self->b_ep, req.ep_id);

	memset(c, 0xee, sizeof(c));
	ASSERT_EQ(0, chan_list(rmsg_ep_fd(self->b), c, 2, 0, &req));
	EXPECT_EQ(2, req.filled);
	EXPECT_EQ(5, req.total);
	EXPECT_EQ(self->b_ep, c[0].ep_id);
	EXPECT_EQ(self->b_ep, c[1].ep_id);
	/* Nothing past the capacity is written. */
	EXPECT_EQ(0xeeeeeeeeU, c[2].ep_id);

	/* The kernel must not size anything by what the caller claims. */
	ASSERT_EQ(0, chan_list(rmsg_ep_fd(self->b), c, UINT32_MAX, 0, &req));
	EXPECT_EQ(5, req.filled);
	EXPECT_EQ(5, req.total);

	/* The same through the library. */
	n = rmsg_node_channels(rmsg_ep_fd(self->b), 0, &lc, &id);
	ASSERT_EQ(5, n);
	EXPECT_EQ(self->b_ep, id);
	EXPECT_EQ(5, count_ep(lc, n, self->b_ep));
	free(lc);
}

/* Flags and reserved fields must be zero; user pointers must be good. */
TEST_F(resil, chan_list_errors)
{
	struct rmsg_chan_info c[MAX_CHANS];
	struct rmsg_chan_list req;

	ASSERT_EQ(0, connect_n(self, 1));
	memset(&req, 0, sizeof(req));
	req.flags = 1U << 2;	/* the first flag no kernel knows */
	EXPECT_EQ(-1, ioctl(rmsg_ep_fd(self->a), RMSG_IOC_CHAN_LIST, &req));
	EXPECT_EQ(EINVAL, errno);
	memset(&req, 0, sizeof(req));
	req.flags = RMSG_CHAN_LIST_F_ALL | (1U << 31);
	EXPECT_EQ(-1, ioctl(rmsg_ep_fd(self->a), RMSG_IOC_CHAN_LIST, &req));
	EXPECT_EQ(EINVAL, errno);
	memset(&req, 0, sizeof(req));
	req.resv = 1;
	EXPECT_EQ(-1, ioctl(rmsg_ep_fd(self->a), RMSG_IOC_CHAN_LIST, &req));
	EXPECT_EQ(EINVAL, errno);

	EXPECT_EQ(-EFAULT, chan_list(rmsg_ep_fd(self->a), NULL, 4, 0, &req));
	EXPECT_EQ(-EFAULT, chan_list(rmsg_ep_fd(self->a), (void *)8, 4, 0,
				     &req));
	EXPECT_EQ(-EFAULT, chan_list(rmsg_ep_fd(self->a), (void *)8, 4,
				     RMSG_CHAN_LIST_F_ALL, &req));
	EXPECT_EQ(-1, ioctl(rmsg_ep_fd(self->a), RMSG_IOC_CHAN_LIST,
			    (void *)8));
	EXPECT_EQ(EFAULT, errno);
	/* And the endpoint is none the worse. */
	EXPECT_EQ(0, chan_list(rmsg_ep_fd(self->a), c, MAX_CHANS, 0, &req));
	EXPECT_EQ(1, req.filled);
}

/*
 * As root, F_ALL shows both endpoints (and rmsgctl chan, which opens an
 * endpoint of its own, shows them too).
 */
TEST_F(resil, chan_list_all_as_root)
{
	struct rmsg_chan_info *c;
	const struct rmsg_chan_info *e;
	int n;

	if (geteuid())
		SKIP(return, "needs root");
	ASSERT_EQ(0, connect_n(self, 2));
	n = rmsg_node_channels(rmsg_ep_fd(self->a), RMSG_CHAN_LIST_F_ALL, &c,
			       NULL);
	ASSERT_LE(4, n);
	EXPECT_EQ(2, count_ep(c, n, self->a_ep));
	EXPECT_EQ(2, count_ep(c, n, self->b_ep));
	e = find_info(c, n, self->b_ep, self->b_ch[1]);
	ASSERT_NE(NULL, e);
	EXPECT_EQ(RMSG_CHAN_INFO_OPEN, e->state);
	EXPECT_EQ(CONNECT_BLOCK, e->block_size);
	free(c);
	EXPECT_EQ(0, rmsg_sh("tools/rmsgctl/rmsgctl --json chan | grep -q '\"ep_id\": %u, \"pid\": %d, \"uid\": 0, \"channel\": %u, \"state\": \"OPEN\", \"epoch\": 0'",
			     self->b_ep, getpid(), self->b_ch[1]));
	/*
	 * Every column of the table, the error and device names included
	 * (they once printed a buffer nothing had written).
	 */
	EXPECT_EQ(0, rmsg_sh("tools/rmsgctl/rmsgctl chan | LC_ALL=C grep -Eq '^ *%u +%d +%u +OPEN +(-|[0-9]+ of [0-9]+) +0 +- +[[:alnum:]_]+ +[0-9.]+:[0-9]+ +[[:print:]]+$'",
			     self->a_ep, getpid(), self->a_ch[0]));
	EXPECT_EQ(0, rmsg_sh("tools/rmsgctl/rmsgctl --long chan | LC_ALL=C grep -Eq '^ *%u +%d +%u +OPEN +0 +(-|[0-9]+ of [0-9]+) +0 +0 +0 +- +[0-9.]+ms +[1-9][0-9]* +[[:alnum:]_]+ +[0-9.]+:[0-9]+ +[0-9.]+:[0-9]+ +[[:print:]]+$'",
			     self->a_ep, getpid(), self->a_ch[0]));
}

/*
 * With RMSG_CHAN_LIST_F_ADDRS each entry carries the channel's addresses:
 * the connecting side's peer is the listener, and the accepting side's
 * peer is the connecting side's local address; rmsgctl chan shows them.
 */
TEST_F(resil, chan_list_addrs)
{
	const struct rmsg_chan_info_addrs *ea = NULL, *eb = NULL;
	const struct sockaddr_in *bl, *bp, *ap;
	struct rmsg_chan_info_addrs *c;
	char ip[INET_ADDRSTRLEN];
	int i, n;

	ASSERT_EQ(0, connect_n(self, 1));
	n = rmsg_node_channel_addrs(rmsg_ep_fd(self->a), RMSG_CHAN_LIST_F_ALL,
				    &c, NULL);
	ASSERT_LE(2, n);
	for (i = 0; i < n; i++) {
		if (c[i].info.ep_id == self->a_ep &&
		    c[i].info.channel == self->a_ch[0])
			ea = &c[i];
		if (c[i].info.ep_id == self->b_ep &&
		    c[i].info.channel == self->b_ch[0])
			eb = &c[i];
	}
	ASSERT_NE(NULL, ea);
	ASSERT_NE(NULL, eb);
	bl = (const struct sockaddr_in *)&eb->local;
	bp = (const struct sockaddr_in *)&eb->peer;
	ap = (const struct sockaddr_in *)&ea->peer;
	EXPECT_EQ(AF_INET, bp->sin_family);
	EXPECT_EQ(self->addr.sin_addr.s_addr, bp->sin_addr.s_addr);
	EXPECT_EQ(self->addr.sin_port, bp->sin_port);
	EXPECT_EQ(bl->sin_addr.s_addr, ap->sin_addr.s_addr);
	EXPECT_EQ(bl->sin_port, ap->sin_port);
	EXPECT_EQ(RMSG_CHAN_INFO_OPEN, eb->info.state);
	ASSERT_NE(NULL, inet_ntop(AF_INET, &bp->sin_addr, ip, sizeof(ip)));
	EXPECT_EQ(0, rmsg_sh("tools/rmsgctl/rmsgctl --json chan | grep -q '\"ep_id\": %u, [^}]*\"channel\": %u, [^}]*\"peer\": \"%s:%u\"'",
			     self->b_ep, self->b_ch[0], ip,
			     ntohs(bp->sin_port)));
	free(c);
	/* The old list refuses the flag it cannot hold. */
	EXPECT_EQ(-EINVAL, rmsg_node_channels(rmsg_ep_fd(self->a),
					      RMSG_CHAN_LIST_F_ADDRS,
					  (struct rmsg_chan_info **)&c, NULL));
}

/*
 * As nobody, through endpoint a's descriptor (opened by root): a's own
 * channels are listed, b's (root's) are not, and b's cannot be faulted.
 * Returns 0 or the step that failed.
 */
static int nobody_child(resil_fixture *self)
{
	struct rmsg_chan_info c[64];
	struct rmsg_chan_list req;

	if (setgid(NOBODY) || setuid(NOBODY) || getuid() != NOBODY)
		return 1;
	if (chan_list(rmsg_ep_fd(self->a), c, 64, 0, &req) || req.filled != 2 ||
	    req.ep_id != self->a_ep)
		return 2;
	if (chan_list(rmsg_ep_fd(self->a), c, 64, RMSG_CHAN_LIST_F_ALL, &req))
		return 3;
	if (req.filled != req.total || count_ep(c, req.filled, self->a_ep) != 2)
		return 4;
	if (count_ep(c, req.filled, self->b_ep))
		return 5;
	/* Only a's: no other user's endpoint either. */
	if (count_ep(c, req.filled, self->a_ep) != (int)req.filled)
		return 6;
	if (fault(rmsg_ep_fd(self->a), self->b_ep, self->b_ch[0],
		  RMSG_FAULT_QP_ERROR) != -EPERM)
		return 7;
	if (fault(rmsg_ep_fd(self->a), self->b_ep, 12345,
		  RMSG_FAULT_QP_ERROR) !=
	    -EPERM)
		return 8;
	/* Its own endpoint, by 0 and by id, is the caller's to fault. */
	if (fault(rmsg_ep_fd(self->a), 0, 12345,
		  RMSG_FAULT_QP_ERROR) != -ENOENT)
		return 9;
	if (fault(rmsg_ep_fd(self->a), self->a_ep, 12345,
		  RMSG_FAULT_QP_ERROR) !=
	    -ENOENT)
		return 10;
	if (fault(rmsg_ep_fd(self->a), 0x7ffffff0, 0,
		  RMSG_FAULT_QP_ERROR) != -ENOENT)
		return 11;
	return 0;
}

TEST_F(resil, as_nobody)
{
	struct rmsg_chan_info *c;
	const struct rmsg_chan_info *e;
	pid_t pid;
	int n;

	if (geteuid())
		SKIP(return, "needs root to become nobody");
	ASSERT_EQ(0, connect_n(self, 2));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid)
		_exit(nobody_child(self));
	EXPECT_EQ(0, rmsg_child_status(pid));
	/* Root sees both, and b's channel was not touched. */
	n = rmsg_node_channels(rmsg_ep_fd(self->a), RMSG_CHAN_LIST_F_ALL, &c,
			       NULL);
	ASSERT_LE(4, n);
	e = find_info(c, n, self->b_ep, self->b_ch[0]);
	ASSERT_NE(NULL, e);
	EXPECT_EQ(RMSG_CHAN_INFO_OPEN, e->state);
	free(c);
}

/* What RMSG_IOC_FAULT refuses. */
TEST_F(resil, fault_errors)
{
	struct rmsg_fault req;

	ASSERT_EQ(0, connect_n(self, 1));
	EXPECT_EQ(-EINVAL, fault(rmsg_ep_fd(self->b), 0, self->b_ch[0], 0));
	EXPECT_EQ(-EINVAL, fault(rmsg_ep_fd(self->b), 0, self->b_ch[0],
				 RMSG_FAULT_LINK_PROBE + 1));
	EXPECT_EQ(-EINVAL, fault(rmsg_ep_fd(self->b), 0, self->b_ch[0],
				 UINT32_MAX));
	memset(&req, 0, sizeof(req));
	req.channel = self->b_ch[0];
	req.kind = RMSG_FAULT_QP_ERROR;
	req.flags = 1;
	EXPECT_EQ(-1, ioctl(rmsg_ep_fd(self->b), RMSG_IOC_FAULT, &req));
	EXPECT_EQ(EINVAL, errno);
	req.flags = 0;
	req.arg = 1;
	EXPECT_EQ(-1, ioctl(rmsg_ep_fd(self->b), RMSG_IOC_FAULT, &req));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, ioctl(rmsg_ep_fd(self->b), RMSG_IOC_FAULT, (void *)8));
	EXPECT_EQ(EFAULT, errno);
	EXPECT_EQ(-ENOENT, fault(rmsg_ep_fd(self->b), 0, self->b_ch[0] + 1000,
				 RMSG_FAULT_QP_ERROR));
	EXPECT_EQ(-ENOENT, fault(rmsg_ep_fd(self->b), self->b_ep,
				 self->b_ch[0] + 1000,
				 RMSG_FAULT_QP_ERROR));
	EXPECT_EQ(-ENOENT, fault(rmsg_ep_fd(self->b), 0x7ffffff0, self->b_ch[0],
				 RMSG_FAULT_QP_ERROR));
	/* Through the library, and rmsgctl. */
	EXPECT_EQ(-ENOENT, rmsg_node_fault(rmsg_ep_fd(self->b), 0, 999,
					   RMSG_FAULT_QP_ERROR));
	EXPECT_EQ(-EINVAL, rmsg_node_fault(rmsg_ep_fd(self->b), 0, 0, 9));
	EXPECT_NE(0, rmsg_sh("tools/rmsgctl/rmsgctl fault qp-error %u:%u 2>/dev/null",
			     self->b_ep, self->b_ch[0] + 1000));
	EXPECT_EQ(2, rmsg_sh("tools/rmsgctl/rmsgctl fault bogus %u:%u 2>/dev/null",
			     self->b_ep, self->b_ch[0]));
	EXPECT_STREQ("qp-error", rmsg_fault_kind_name(RMSG_FAULT_QP_ERROR));
	EXPECT_STREQ("RECOVERING",
		     rmsg_chan_state_name(RMSG_CHAN_INFO_RECOVERING));
	EXPECT_STREQ("?", rmsg_chan_state_name(0));
}

/*
 * A channel that is not open cannot be faulted: a request awaiting
 * RMSG_IOC_ACCEPT, and its connecting end.
 */
TEST_F(resil, fault_not_open)
{
	struct sockaddr_in addr;
	struct rmsg_chan_info *c;
	const struct rmsg_chan_info *e;
	struct rmsg_event ev;
	struct rmsg_ep *l = NULL;
	int id, n;

	ASSERT_TRUE(rmsg_local_addr(&addr, 0));
	ASSERT_EQ(0, rmsg_ep_open(&l, 64, 0));
	ASSERT_EQ(0, rmsg_ep_listen_flags(l, (struct sockaddr *)&addr,
					  sizeof(addr), 0x1, 0,
					  RMSG_LISTEN_F_ACCEPT));
	id = rmsg_chan_connect(self->b, (struct sockaddr *)&addr, sizeof(addr),
			       0xb9, 0);
	ASSERT_LE(0, id);
	ASSERT_EQ(0, wait_ev(l, RMSG_CQE_REQUEST, &ev, EVENT_TIMEOUT_MS));

	n = rmsg_node_channels(rmsg_ep_fd(l), 0, &c, NULL);
	ASSERT_EQ(1, n);
	EXPECT_EQ(ev.channel, c[0].channel);
	EXPECT_EQ(RMSG_CHAN_INFO_REQUESTED, c[0].state);
	free(c);
	n = rmsg_node_channels(rmsg_ep_fd(self->b), 0, &c, NULL);
	ASSERT_EQ(1, n);
	e = find_info(c, n, self->b_ep, id);
	ASSERT_NE(NULL, e);
	EXPECT_EQ(RMSG_CHAN_INFO_CONNECTING, e->state);
	free(c);

	EXPECT_EQ(-ENOTCONN, rmsg_node_fault(rmsg_ep_fd(l), 0, ev.channel,
					     RMSG_FAULT_QP_ERROR));
	EXPECT_EQ(-ENOTCONN, rmsg_node_fault(rmsg_ep_fd(self->a), self->b_ep,
					     id,
					       RMSG_FAULT_QP_ERROR));
	ASSERT_EQ(0, rmsg_chan_accept(l, ev.channel, 0, RMSG_ACCEPT_REJECT));
	ASSERT_EQ(0, wait_ev(self->b, RMSG_CQE_CONNECTED, &ev,
			     EVENT_TIMEOUT_MS));
	EXPECT_NE(0, ev.res);
	rmsg_ep_drop(&l);
}

/* Both ends of channel @i OPEN again after at least one repair. */
static bool both_repaired(resil_fixture *self, int i)
{
	struct rmsg_chan_info ea, eb;

	return !chan_get(rmsg_ep_fd(self->a), self->b_ep, self->b_ch[i], &eb) &&
	       !chan_get(rmsg_ep_fd(self->a), self->a_ep, self->a_ch[i], &ea) &&
	       eb.state == RMSG_CHAN_INFO_OPEN && eb.epoch >= 1 &&
	       ea.state == RMSG_CHAN_INFO_OPEN && ea.epoch >= 1;
}

/* The faulted channels of fault_streams(), by index. */
static bool faulted(int i)
{
	return i == 1 || i == 2;
}

/*
 * A fault of @kind under running streams: 4 channels, both ways, every
 * RNDV_EVERY-th message by rendezvous (RGet and RPut in turn, up to 192
 * KiB), the others eager. Channel 1 is faulted from its connecting end
 * (own endpoint, id 0), channel 2 at its accepting end, through the other
 * endpoint's descriptor by endpoint id.
 */
static void fault_streams(struct __test_metadata *_metadata,
			  resil_fixture *self, __u32 kind)
{
	struct rmsg_streams *ss = self->ss;
	bool repair = module_has(RMSG_FEAT_REPAIR);
	struct rmsg_chan_info *c;
	const struct rmsg_chan_info *e;
	long deadline;
	char buf[256];
	int i, k, n, ch, res;
	bool hit, ok;

	ksft_print_msg("%s\n", repair ?
		       "RMSG_FEAT_REPAIR announced: the streams must go on exact" :
		       "RMSG_FEAT_REPAIR not announced: faulted channels must close with an error, nothing lost that was acknowledged, nothing hung");
	/* Every seventh message by rendezvous, RGet and RPut in turn. */
	rmsg_streams_rndv(ss, RNDV_EVERY);
	/*
	 * With repairs the streams run until both faulted channels are
	 * repaired at both ends, and a second after: the fault lands
	 * mid-stream however fast the streams are (a QP error with nothing
	 * in flight is found by the next heartbeat, a second later).
	 */
	start_streams(_metadata, self, 4, repair ? ENDLESS : STREAM_MSGS);

	ASSERT_EQ(0, rmsg_node_fault(rmsg_ep_fd(self->b), 0, self->b_ch[1],
				     kind));
	ASSERT_EQ(0, rmsg_node_fault(rmsg_ep_fd(self->b), self->a_ep,
				     self->a_ch[2],
				       kind));
	if (repair) {
		deadline = rmsg_now_ms() + 60000;
		while (!both_repaired(self, 1) || !both_repaired(self, 2)) {
			if (rmsg_now_ms() > deadline) {
				dump_state(self);
				ASSERT_TRUE(false)
					TH_LOG("faulted channels not repaired in 60 s");
			}
			ASSERT_TRUE(rmsg_streams_run_for(ss, 50))
				TH_LOG("%s", ss->why);
		}
		ASSERT_TRUE(rmsg_streams_run_for(ss, 1000))
			TH_LOG("%s", ss->why);
		stop_streams(ss);
	}
	ok = rmsg_streams_run(ss, repair ? ENDLESS : STREAM_MSGS, 120000);
	if (!ok)
		dump_state(self);
	ASSERT_TRUE(ok) TH_LOG("%s", ss->why);

	for (i = 0; i < (int)ss->n; i++) {
		struct rmsg_stream *s = &ss->s[i];

		ch = i / 2;
		rmsg_stream_str(s, buf, sizeof(buf));
		ksft_print_msg("stream %d (channel %d, %s): %s\n", i, ch,
			       i % 2 ? "a to b" : "b to a", buf);
		if (repair || !faulted(ch)) {
			EXPECT_TRUE(rmsg_stream_exact(s))
				TH_LOG("stream %d: %s%s", i, buf,
				       s->first_error == -EPROTO ?
				       " (the repair ended the channel with EPROTO: a kernel bug)" :
				       "");
			continue;
		}
		EXPECT_TRUE(rmsg_stream_prefix(s)) TH_LOG("stream %d: %s", i,
							  buf);
		EXPECT_LE(WARMUP_MSGS, s->received);
		EXPECT_TRUE(s->tx_closed && s->rx_closed);
		/* The faulted end hears of its error. */
		res = ch == 1 ? (i % 2 ? s->rx_res : s->tx_res) :
				(i % 2 ? s->tx_res : s->rx_res);
		EXPECT_NE(0, res);
	}

	for (k = 0; k < 2; k++) {
		struct rmsg_ep *ep = k ? self->a : self->b;
		__u32 ep_id = k ? self->a_ep : self->b_ep;
		__u32 *ids = k ? self->a_ch : self->b_ch;

		n = rmsg_node_channels(rmsg_ep_fd(ep), 0, &c, NULL);
		ASSERT_LE(0, n);
		for (i = 0; i < 4; i++) {
			e = find_info(c, n, ep_id, ids[i]);
			if (!repair && faulted(i)) {
				EXPECT_EQ(NULL, e) TH_LOG("channel %d of %c listed after its end",
							  i, k ? 'a' : 'b');
				continue;
			}
			if (!e)
				dump_state(self);
			ASSERT_NE(NULL, e) TH_LOG("channel %d of %c missing",
						  i, k ? 'a' : 'b');
			EXPECT_EQ(RMSG_CHAN_INFO_OPEN, e->state);
			if (!faulted(i)) {
				EXPECT_EQ(0, e->epoch);
				continue;
			}
			print_info(k ? 'a' : 'b', e);
			EXPECT_LE(1, e->epoch);
			/* The end the fault hit ran the repair. */
			hit = (i == 1 && !k) || (i == 2 && k);
			EXPECT_LE(hit ? 1 : 0, e->repairs);
		}
		free(c);
	}
	if (!_metadata->passed)
		dump_state(self);
}

TEST_F_TIMEOUT(resil, qp_error_streams, 300)
{
	fault_streams(_metadata, self, RMSG_FAULT_QP_ERROR);
}

/* The connection dropped without a CLOSE (rdma_disconnect()), each end. */
TEST_F_TIMEOUT(resil, disconnect_streams, 300)
{
	fault_streams(_metadata, self, RMSG_FAULT_DISCONNECT);
}

/*
 * With force_imm_arrival the receiving kernels set arrival flags from
 * write-with-immediate completions: a repair must keep streams exact
 * there too (the completions of the old QP are lost with it).
 */
TEST_F_TIMEOUT(resil, qp_error_streams_imm, 300)
{
	int ret;

	if (!module_has(RMSG_FEAT_REPAIR))
		SKIP(return, "the module does not announce RMSG_FEAT_REPAIR");
	ret = set_param(self, "force_imm_arrival", "1");
	if (ret == -ENOENT)
		SKIP(return, "the module has no force_imm_arrival parameter");
	ASSERT_EQ(0, ret);
	fault_streams(_metadata, self, RMSG_FAULT_QP_ERROR);
}

/*
 * Open both endpoints again, set up with RMSG_EP_F_STALL_EVENTS and quiet
 * periods of @a_ms and @b_ms (0: the module's repair_quiet_ms), a
 * listening again: 0 or a negative errno.
 */
static int reopen_stall(resil_fixture *self, __u32 a_ms, __u32 b_ms)
{
	struct rmsg_chan_info *c;
	struct rmsg_ep_setup p;
	int k, ret;

	rmsg_ep_drop(&self->a);
	rmsg_ep_drop(&self->b);
	self->opened = false;
	for (k = 0; k < 2; k++) {
		memset(&p, 0, sizeof(p));
		p.sq_entries = 256;
		p.cq_entries = 2048;
		p.flags = RMSG_EP_F_STALL_EVENTS;
		p.stall_ms = k ? b_ms : a_ms;
		p.send_area_size = RMSG_LIB_SEND_AREA;
		ret = rmsg_ep_open_setup(k ? &self->b : &self->a, &p);
		if (ret) {
			if (k)
				rmsg_ep_drop(&self->a);
			return ret;
		}
	}
	self->opened = true;
	self->addr.sin_port = 0;
	ret = rmsg_ep_listen(self->a, (struct sockaddr *)&self->addr,
			     sizeof(self->addr), 0xa0, LISTEN_BLOCK);
	if (!ret)
		ret = rmsg_node_channels(rmsg_ep_fd(self->a), 0, &c,
					 &self->a_ep);
	if (ret >= 0)
		ret = rmsg_node_channels(rmsg_ep_fd(self->b), 0, &c,
					 &self->b_ep);
	return ret < 0 ? ret : 0;
}

static void print_stall_evs(resil_fixture *self, long t0)
{
	const struct rmsg_stall_ev *v;
	unsigned int i;

	for (i = 0; i < self->ss->nstall && i < RMSG_STALL_EVS; i++) {
		v = &self->ss->stall[i];
		ksft_print_msg("%c:%u %s res %d, %u ms (at %ld ms)\n",
			       v->ep == self->a ? 'a' : 'b', v->channel,
			       v->kind == RMSG_CQE_STALLED ? "STALLED" :
			       "RESUMED", v->res, v->ms, v->at_ms - t0);
	}
}

/* Has endpoint @ep taken an event of @kind for @ch? */
/* The first event @kind of channel @ch of @ep that was kept, or NULL. */
static const struct rmsg_stall_ev *find_stall_ev(const struct rmsg_streams *ss,
						 const struct rmsg_ep *ep,
						 __u32 ch, __u32 kind)
{
	unsigned int i;

	for (i = 0; i < ss->nstall && i < RMSG_STALL_EVS; i++)
		if (ss->stall[i].ep == ep && ss->stall[i].channel == ch &&
		    ss->stall[i].kind == kind)
			return &ss->stall[i];
	return NULL;
}

static bool has_stall_ev(const struct rmsg_streams *ss,
			 const struct rmsg_ep *ep, __u32 ch, __u32 kind)
{
	return find_stall_ev(ss, ep, ch, kind);
}

#define STALL_WAIT_MS	20000

/*
 * Run the streams until channel @ch of endpoint @ep_id is OPEN after at
 * least @repairs repairs: true, or false at @timeout_ms or when the
 * streams fail.
 */
static bool wait_repaired(resil_fixture *self, __u32 ep_id, __u32 ch,
			  __u32 repairs, int timeout_ms)
{
	long deadline = rmsg_now_ms() + timeout_ms;
	struct rmsg_chan_info e;

	do {
		if (!rmsg_streams_run_for(self->ss, 5))
			return false;
		if (!chan_get(rmsg_ep_fd(self->b), ep_id, ch, &e) &&
		    e.state == RMSG_CHAN_INFO_OPEN && e.repairs >= repairs)
			return true;
	} while (rmsg_now_ms() < deadline);
	return false;
}
#define GIVE_UP_SENDS	40

/*
 * A repair longer than the quiet period is reported: with
 * repair_quiet_ms at 1 ms (a repair takes milliseconds, more in the
 * emulated guest), a QP error at b's end of channel 0 under streams both
 * ways on two channels brings b RMSG_CQE_STALLED (res: the fault, len:
 * the milliseconds so far), then RMSG_CQE_RESUMED (len: the repair's
 * length), and nothing else: a asked for a quiet period of a minute
 * (rmsg_ep_setup.stall_ms), and channel 1 was not touched. Every stream
 * stays exact.
 */
TEST_F_TIMEOUT(resil, stall_events, 120)
{
	struct rmsg_streams *ss = self->ss;
	const struct rmsg_stall_ev *st, *rs;
	struct rmsg_chan_info eb;
	long t0;

	if (!module_has(RMSG_FEAT_REPAIR) ||
	    !module_has(RMSG_FEAT_STALL_EVENTS))
		SKIP(return, "the module does not announce RMSG_FEAT_REPAIR and RMSG_FEAT_STALL_EVENTS");
	ASSERT_EQ(0, set_param(self, "repair_quiet_ms", "1"));
	ASSERT_EQ(0, reopen_stall(self, 60000, 0));
	start_streams(_metadata, self, 2, ENDLESS);
	ASSERT_EQ(0, ss->nstall);

	ASSERT_EQ(0, rmsg_node_fault(rmsg_ep_fd(self->b), 0, self->b_ch[0],
				     RMSG_FAULT_QP_ERROR));
	t0 = rmsg_now_ms();
	while (!has_stall_ev(ss, self->b, self->b_ch[0], RMSG_CQE_RESUMED) &&
	       rmsg_now_ms() - t0 < STALL_WAIT_MS)
		ASSERT_TRUE(rmsg_streams_run_for(ss, 5)) TH_LOG("%s", ss->why);
	/* The streams go on across the repair, and end exact. */
	ASSERT_TRUE(rmsg_streams_run_for(ss, 300)) TH_LOG("%s", ss->why);
	stop_streams(ss);
	check_exact(_metadata, ss);
	print_stall_evs(self, t0);

	ASSERT_EQ(0, chan_get(rmsg_ep_fd(self->b), self->b_ep, self->b_ch[0],
			      &eb));
	print_info('b', &eb);
	EXPECT_EQ(1, eb.repairs);
	ASSERT_EQ(2, ss->nstall) TH_LOG("b's STALLED and RESUMED only");
	st = &ss->stall[0];
	rs = &ss->stall[1];
	EXPECT_TRUE(st->ep == self->b && st->channel == self->b_ch[0] &&
		    st->kind == RMSG_CQE_STALLED);
	EXPECT_TRUE(rs->ep == self->b && rs->channel == self->b_ch[0] &&
		    rs->kind == RMSG_CQE_RESUMED);
	/* STALLED says why, RESUMED how long it took. */
	EXPECT_NE(0, st->res);
	EXPECT_EQ(eb.last_error, st->res);
	EXPECT_LE(1, st->ms);
	EXPECT_EQ(0, rs->res);
	EXPECT_LE(st->ms, rs->ms);
	EXPECT_GE(eb.recover_ns / 1000000, rs->ms);
}

/*
 * A peer can make events on an endpoint that never reads its completion
 * ring: each fault it forces is a repair, which the endpoint hears of as
 * STALLED and RESUMED (quiet period 1 ms). The kernel keeps what does not
 * fit in the ring up to a bound (the ring's size, plus 8 per channel and
 * one), charged to the endpoint's owner, and counts the rest
 * (events_dropped) instead of allocating without end.
 */
TEST_F_TIMEOUT(resil, unread_events_are_bounded, 300)
{
	const unsigned int cq = 16, kept = 2 * cq + 16;
	unsigned int i, got = 0, stalled = 0, resumed = 0;
	struct rmsg_chan_info ea, *c;
	struct rmsg_ep_stats st;
	struct rmsg_ep_setup p;
	struct rmsg_cqe cqe;
	int b_ch, a_ch, n;
	long deadline;

	if (!module_has(RMSG_FEAT_REPAIR) ||
	    !module_has(RMSG_FEAT_STALL_EVENTS))
		SKIP(return, "the module does not announce RMSG_FEAT_REPAIR and RMSG_FEAT_STALL_EVENTS");
	ASSERT_EQ(0, set_param(self, "repair_quiet_ms", "1"));
	rmsg_ep_drop(&self->b);
	self->opened = false;
	memset(&p, 0, sizeof(p));
	p.sq_entries = 16;
	p.cq_entries = cq;
	p.flags = RMSG_EP_F_STALL_EVENTS;
	ASSERT_EQ(0, rmsg_ep_open_setup(&self->b, &p));
	self->opened = true;
	ASSERT_EQ(cq, rmsg_ep_rings(self->b)->cq.entries);
	b_ch = rmsg_chan_connect(self->b, (struct sockaddr *)&self->addr,
				 sizeof(self->addr), 0xb0, 0);
	ASSERT_LE(0, b_ch);
	ASSERT_EQ(0, rmsg_next_cqe(self->a, &cqe, EVENT_TIMEOUT_MS));
	ASSERT_EQ(RMSG_CQE_ACCEPTED, RMSG_CQE_KIND(cqe.flags));
	a_ch = cqe.channel;
	/*
	 * b's CONNECTED stays in its ring, unread, as everything after it.
	 * a is open once b's READY came; b only once a's came too. A fault
	 * in between ends b's connect (a connect is not repaired) while a
	 * repairs and waits for a dial that never comes: wait for b.
	 */
	n = rmsg_node_channels(rmsg_ep_fd(self->b), 0, &c, &self->b_ep);
	ASSERT_LE(0, n);
	free(c);
	ASSERT_TRUE(wait_state(rmsg_ep_fd(self->b), self->b_ep, b_ch,
			       RMSG_CHAN_INFO_OPEN, EVENT_TIMEOUT_MS));

	for (i = 1; i <= kept; i++) {
		ASSERT_EQ(0, rmsg_node_fault(rmsg_ep_fd(self->a), 0, a_ch,
					     RMSG_FAULT_QP_ERROR));
		deadline = rmsg_now_ms() + EVENT_TIMEOUT_MS;
		do {
			usleep(2000);
			ASSERT_EQ(0, chan_get(rmsg_ep_fd(self->a), self->a_ep,
					      a_ch,
					      &ea));
			if (rmsg_now_ms() >= deadline)
				print_both(self, a_ch, b_ch);
			ASSERT_GT(deadline, rmsg_now_ms())
				TH_LOG("repair %u did not end", i);
		} while (ea.state != RMSG_CHAN_INFO_OPEN || ea.repairs < i);
		memset(&st, 0, sizeof(st));
		ASSERT_EQ(0, ioctl(rmsg_ep_fd(self->b), RMSG_IOC_EP_STATS,
				   &st));
		if (st.events_dropped)
			break;
	}
	EXPECT_LT(0, st.events_dropped) TH_LOG("%u repairs", i);
	while (rmsg_next_cqe(self->b, &cqe, 1000) == 0) {
		got++;
		stalled += RMSG_CQE_KIND(cqe.flags) == RMSG_CQE_STALLED;
		resumed += RMSG_CQE_KIND(cqe.flags) == RMSG_CQE_RESUMED;
	}
	TH_LOG("%u repairs: %u events kept (%u STALLED, %u RESUMED), %llu dropped",
	       i, got, stalled, resumed,
	       (unsigned long long)st.events_dropped);
	EXPECT_EQ(kept, got);
	EXPECT_LE(kept - 1, stalled + resumed);
	EXPECT_GE(2 * i + 1, got + st.events_dropped);
}

/*
 * Repairs shorter than the quiet period (5 s, the default) are not
 * reported: QP errors on two channels, at either end, repaired under
 * streams that stay exact, and no STALLED or RESUMED anywhere.
 */
TEST_F_TIMEOUT(resil, stall_quiet, 120)
{
	struct rmsg_streams *ss = self->ss;
	struct rmsg_chan_info e;
	int i;

	if (!module_has(RMSG_FEAT_REPAIR) ||
	    !module_has(RMSG_FEAT_STALL_EVENTS))
		SKIP(return, "the module does not announce RMSG_FEAT_REPAIR and RMSG_FEAT_STALL_EVENTS");
	ASSERT_EQ(0, set_param(self, "repair_quiet_ms", "5000"));
	ASSERT_EQ(0, reopen_stall(self, 0, 0));
	start_streams(_metadata, self, 3, ENDLESS);
	ASSERT_EQ(0, rmsg_node_fault(rmsg_ep_fd(self->b), 0, self->b_ch[0],
				     RMSG_FAULT_QP_ERROR));
	ASSERT_EQ(0, rmsg_node_fault(rmsg_ep_fd(self->a), 0, self->a_ch[1],
				     RMSG_FAULT_QP_ERROR));
	for (i = 0; i < 2; i++)
		ASSERT_TRUE(wait_repaired(self, i ? self->a_ep : self->b_ep,
					  i ? self->a_ch[1] : self->b_ch[0], 1,
					  STALL_WAIT_MS))
			TH_LOG("%s", ss->why);
	ASSERT_TRUE(rmsg_streams_run_for(ss, 300)) TH_LOG("%s", ss->why);
	stop_streams(ss);
	check_exact(_metadata, ss);
	print_stall_evs(self, 0);
	for (i = 0; i < 2; i++) {
		ASSERT_EQ(0, chan_get(rmsg_ep_fd(self->b),
				      i ? self->a_ep : self->b_ep,
				      i ? self->a_ch[1] : self->b_ch[0], &e));
		print_info(i ? 'a' : 'b', &e);
		EXPECT_LE(1, e.repairs);
		/* Else the premise failed, not the module. */
		EXPECT_GT(5000ULL * 1000000, e.recover_ns);
	}
	EXPECT_EQ(0, ss->nstall);
}

/*
 * A repair that cannot succeed (the link under rxe0 down) is reported
 * after its quiet period (200 ms), sends are still taken after that, and
 * it then gives up (1.5 s): CLOSED with ETIMEDOUT, no RESUMED.
 */
TEST_F_TIMEOUT(resil, stall_give_up, 120)
{
	struct rmsg_streams *ss = self->ss;
	struct rmsg_stream *bs = &ss->s[0];
	const struct rmsg_stall_ev *st;
	bool stalled_open = false;
	long t0;
	int ret;

	if (!module_has(RMSG_FEAT_REPAIR) ||
	    !module_has(RMSG_FEAT_STALL_EVENTS))
		SKIP(return, "the module does not announce RMSG_FEAT_REPAIR and RMSG_FEAT_STALL_EVENTS");
	if (!self->netdev)
		SKIP(return, "RMSG_NETDEV not set: not run by rmsg-vm");
	ASSERT_EQ(0, set_param(self, "repair_quiet_ms", "200"));
	ASSERT_EQ(0, set_param(self, "repair_timeout_ms", "1500"));
	ASSERT_EQ(0, reopen_stall(self, 0, 0));
	start_streams(_metadata, self, 1, ENDLESS);
	stop_streams(ss);
	ASSERT_TRUE(rmsg_streams_run(ss, ENDLESS, 60000)) TH_LOG("%s", ss->why);

	ASSERT_EQ(0, block_net(self));
	/*
	 * ENOTCONN: the link going down broke the connection first (rxe
	 * fails a send on a port that is down, and a busy host may get
	 * there before this line): the repair that stalls is under way
	 * all the same.
	 */
	ret = rmsg_node_fault(rmsg_ep_fd(self->b), 0, self->b_ch[0],
			      RMSG_FAULT_QP_ERROR);
	ASSERT_TRUE(ret == 0 || ret == -ENOTCONN) TH_LOG("fault: %d", ret);
	t0 = rmsg_now_ms();
	while (!has_stall_ev(ss, self->b, self->b_ch[0], RMSG_CQE_STALLED) &&
	       !bs->tx_closed && rmsg_now_ms() - t0 < STALL_WAIT_MS)
		ASSERT_TRUE(rmsg_streams_run_for(ss, 5)) TH_LOG("%s", ss->why);
	stalled_open = !bs->tx_closed;
	/* Stalled, not dead: sends are still taken. */
	if (stalled_open) {
		bs->total += GIVE_UP_SENDS;
		EXPECT_EQ(GIVE_UP_SENDS, rmsg_stream_send(ss, 0, GIVE_UP_SENDS))
			TH_LOG("%s", ss->why);
	}
	ASSERT_TRUE(rmsg_streams_run(ss, ENDLESS, 40000)) TH_LOG("%s", ss->why);
	print_stall_evs(self, t0);
	ksft_print_msg("stream 0 closed %d, stream 1 closed %d\n", bs->tx_res,
		       ss->s[1].rx_res);

	EXPECT_TRUE(stalled_open) TH_LOG("no STALLED before the end");
	/*
	 * Both ends stall, in either order: the link going down may break
	 * a's connection before the fault breaks b's.
	 */
	st = find_stall_ev(ss, self->b, self->b_ch[0], RMSG_CQE_STALLED);
	ASSERT_NE(NULL, st) TH_LOG("b's channel never reported STALLED");
	EXPECT_NE(0, st->res);
	EXPECT_LE(200, st->ms);
	EXPECT_GT(1500, st->ms);
	EXPECT_FALSE(has_stall_ev(ss, self->b, self->b_ch[0],
				  RMSG_CQE_RESUMED));
	EXPECT_FALSE(has_stall_ev(ss, self->a, self->a_ch[0],
				  RMSG_CQE_RESUMED));
	EXPECT_EQ(-ETIMEDOUT, bs->tx_res);
	/* The sends queued during the stall failed; none was lost. */
	EXPECT_EQ(bs->sent, bs->ok + bs->failed);
	EXPECT_LE(stalled_open ? GIVE_UP_SENDS : 0, bs->failed);
	EXPECT_TRUE(rmsg_stream_prefix(bs));
	EXPECT_TRUE(rmsg_stream_prefix(&ss->s[1]));
}

/*
 * A channel's own give-up timeout (rmsg_chan_set()): with the link down,
 * the channel told to give up after 1.5 s ends with ETIMEDOUT, while its
 * neighbour on the module's default (30 s) is still being repaired.
 */
TEST_F_TIMEOUT(resil, own_give_up_timeout, 120)
{
	struct rmsg_chan_opts quick = { .repair_timeout_ms = 1500 };
	const struct rmsg_chan_info *e;
	struct rmsg_chan_info *c;
	struct rmsg_event ev;
	long t0, ms;
	int i, n, ret;

	if (!module_has(RMSG_FEAT_REPAIR) || !module_has(RMSG_FEAT_CHAN_OPTS))
		SKIP(return, "the module does not announce RMSG_FEAT_REPAIR and RMSG_FEAT_CHAN_OPTS");
	if (!self->netdev)
		SKIP(return, "RMSG_NETDEV not set: not run by rmsg-vm");
	ASSERT_EQ(0, connect_n(self, 2));
	ASSERT_EQ(0, rmsg_chan_set(self->b, self->b_ch[0], &quick));
	ASSERT_EQ(0, rmsg_chan_set(self->a, self->a_ch[0], &quick));

	ASSERT_EQ(0, block_net(self));
	t0 = rmsg_now_ms();
	for (i = 0; i < 2; i++) {
		ret = rmsg_node_fault(rmsg_ep_fd(self->b), 0, self->b_ch[i],
				      RMSG_FAULT_QP_ERROR);
		ASSERT_TRUE(ret == 0 || ret == -ENOTCONN) TH_LOG("fault: %d", ret);
	}
	ASSERT_EQ(0, wait_ev(self->b, RMSG_CQE_CLOSED, &ev,
			     20000 * rmsg_test_slow()));
	ms = rmsg_now_ms() - t0;
	EXPECT_EQ(self->b_ch[0], ev.channel);
	EXPECT_EQ(-ETIMEDOUT, ev.res);
	EXPECT_LE(1500, ms);
	ksft_print_msg("the quick channel ended after %ld ms\n", ms);
	/* Far from its 30 s, the other is still being repaired. */
	n = rmsg_node_channels(rmsg_ep_fd(self->b), 0, &c, NULL);
	ASSERT_LE(1, n);
	e = find_info(c, n, self->b_ep, self->b_ch[1]);
	ASSERT_NE(NULL, e);
	EXPECT_EQ(RMSG_CHAN_INFO_RECOVERING, e->state);
	free(c);
}

/* RMSG_IOC_CHAN_SET refuses what is out of range, and unknown channels. */
TEST_F(resil, chan_set_bad_arguments)
{
	struct rmsg_chan_opts o = { 0 };
	struct rmsg_chan_set req;

	if (!module_has(RMSG_FEAT_CHAN_OPTS))
		SKIP(return, "the module does not announce RMSG_FEAT_CHAN_OPTS");
	ASSERT_EQ(0, connect_n(self, 1));
	EXPECT_EQ(0, rmsg_chan_set(self->b, self->b_ch[0], &o));
	EXPECT_EQ(-ENOENT, rmsg_chan_set(self->b, RMSG_MAX_CHANNELS - 1, &o));
	o.repair_timeout_ms = RMSG_OPT_MS_MAX + 1;
	EXPECT_EQ(-EINVAL, rmsg_chan_set(self->b, self->b_ch[0], &o));
	o.repair_timeout_ms = RMSG_OPT_OFF;
	EXPECT_EQ(0, rmsg_chan_set(self->b, self->b_ch[0], &o));
	o.repair_timeout_ms = 0;
	o.stall_ms = RMSG_OPT_OFF;
	EXPECT_EQ(-EINVAL, rmsg_chan_set(self->b, self->b_ch[0], &o));
	o.stall_ms = 0;
	o.heartbeat_misses = RMSG_OPT_MISSES_MAX + 1;
	EXPECT_EQ(-EINVAL, rmsg_chan_set(self->b, self->b_ch[0], &o));
	o.heartbeat_misses = 0;
	o.resv = 1;
	EXPECT_EQ(-EINVAL, rmsg_chan_set(self->b, self->b_ch[0], &o));
	o.resv = 0;
	o.connect_timeout_ms = RMSG_OPT_MS_MAX + 1;
	EXPECT_EQ(-EINVAL, rmsg_chan_set(self->b, self->b_ch[0], &o));
	o.connect_timeout_ms = RMSG_OPT_OFF;
	EXPECT_EQ(0, rmsg_chan_set(self->b, self->b_ch[0], &o));
	o.connect_timeout_ms = 0;
	memset(&req, 0, sizeof(req));
	req.channel = self->b_ch[0];
	req.flags = 1;
	EXPECT_EQ(-1, ioctl(rmsg_ep_fd(self->b), RMSG_IOC_CHAN_SET, &req));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, ioctl(rmsg_ep_fd(self->b), RMSG_IOC_CHAN_SET, NULL));
	EXPECT_EQ(EFAULT, errno);
}

#define TRACEFS		"/sys/kernel/tracing"

static int trace_write(const char *file, const char *val)
{
	char path[128];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), TRACEFS "/%s", file);
	fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = write(fd, val, strlen(val));
	close(fd);
	return n == (ssize_t)strlen(val) ? 0 : -EIO;
}

/* The trace buffer's text, NUL-terminated (free() it), or NULL. */
static char *trace_read(void)
{
	size_t len = 0, cap = 1 << 16;
	char *buf = malloc(cap), *more;
	ssize_t n;
	int fd;

	fd = open(TRACEFS "/trace", O_RDONLY | O_CLOEXEC);
	if (fd < 0 || !buf) {
		free(buf);
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	while ((n = read(fd, buf + len, cap - len - 1)) > 0) {
		len += n;
		if (cap - len < 4096) {
			more = realloc(buf, cap * 2);
			if (!more)
				break;
			buf = more;
			cap *= 2;
		}
	}
	close(fd);
	buf[len] = 0;
	return buf;
}

/*
 * The state changes of channel @ch of endpoint @ep_id in @trace, as
 * "FROM>TO " words in order, into @out.
 */
static void trace_states(const char *trace, __u32 ep_id, __u32 ch,
			 char *out, size_t len)
{
	char key[64], from[16], to[16];
	const char *p = trace;
	size_t used = 0;

	out[0] = 0;
	snprintf(key, sizeof(key), "rmsg_chan_state: ep=%u ch=%u ", ep_id, ch);
	while ((p = strstr(p, key))) {
		p += strlen(key);
		if (sscanf(p, "%15s -> %15s", from, to) == 2 && used < len)
			used += snprintf(out + used, len - used, "%s>%s ",
					 from, to);
	}
}

/* How many lines of @trace hold both @a and @b. */
static int trace_count(const char *trace, const char *a, const char *b)
{
	const char *p = trace, *eol;
	int n = 0;

	while ((p = strstr(p, a))) {
		eol = strchr(p, '\n');
		if (!eol)
			eol = p + strlen(p);
		if (memmem(p, eol - p, b, strlen(b)))
			n++;
		p = eol;
	}
	return n;
}

/*
 * The tracepoints (events/rmsg) show a repair: a QP error at b's end of
 * channel 0 under streams gives OPEN -> RECOVERING -> OPEN on both ends,
 * the fault, the repair's phases and its end, and nothing on channel 1.
 */
TEST_F_TIMEOUT(resil, trace_repair, 120)
{
	struct rmsg_streams *ss = self->ss;
	char key[64], b0[512], a0[512], b1[512];
	char *trace;

	if (!module_has(RMSG_FEAT_REPAIR))
		SKIP(return, "the module does not announce RMSG_FEAT_REPAIR");
	if (access(TRACEFS "/events/rmsg", F_OK))
		rmsg_sh("mount -t tracefs nodev " TRACEFS);
	if (access(TRACEFS "/events/rmsg", F_OK))
		SKIP(return, "no " TRACEFS "/events/rmsg (tracefs, CONFIG_TRACEPOINTS)");
	start_streams(_metadata, self, 2, ENDLESS);
	ASSERT_EQ(0, trace_write("trace", ""));
	ASSERT_EQ(0, trace_write("events/rmsg/enable", "1"));
	ASSERT_EQ(0, rmsg_node_fault(rmsg_ep_fd(self->b), 0, self->b_ch[0],
				     RMSG_FAULT_QP_ERROR));
	ASSERT_TRUE(wait_repaired(self, self->b_ep, self->b_ch[0], 1,
				  STALL_WAIT_MS))
		TH_LOG("%s", ss->why);
	ASSERT_TRUE(rmsg_streams_run_for(ss, 300)) TH_LOG("%s", ss->why);
	trace_write("events/rmsg/enable", "0");
	stop_streams(ss);
	check_exact(_metadata, ss);

	trace = trace_read();
	ASSERT_NE(NULL, trace);
	trace_states(trace, self->b_ep, self->b_ch[0], b0, sizeof(b0));
	trace_states(trace, self->a_ep, self->a_ch[0], a0, sizeof(a0));
	trace_states(trace, self->b_ep, self->b_ch[1], b1, sizeof(b1));
	ksft_print_msg("b:%u %s\n", self->b_ch[0], b0);
	ksft_print_msg("a:%u %s\n", self->a_ch[0], a0);
	ksft_print_msg("b:%u %s\n", self->b_ch[1], b1);
	EXPECT_STREQ("OPEN>RECOVERING RECOVERING>OPEN ", b0);
	EXPECT_STREQ("OPEN>RECOVERING RECOVERING>OPEN ", a0);
	EXPECT_STREQ("", b1);
	snprintf(key, sizeof(key), "ep=%u ch=%u ", self->b_ep, self->b_ch[0]);
	EXPECT_LE(1, trace_count(trace, "rmsg_chan_fault: ", key));
	EXPECT_EQ(1, trace_count(trace, "rmsg_repair_done: ", key));
	/* The endpoints did not ask for stall events. */
	EXPECT_EQ(0, trace_count(trace, "rmsg_chan_stall: ", "ep="));
	EXPECT_LE(1, trace_count(trace, "rmsg_repair_phase: ", "-> DIALING"));
	/* b's repair begins and ends once: it dialled. */
	snprintf(key, sizeof(key), "ep=%u ch=%u NONE -> DOWN ", self->b_ep,
		 self->b_ch[0]);
	EXPECT_EQ(1, trace_count(trace, "rmsg_repair_phase: ", key));
	snprintf(key, sizeof(key), "ep=%u ch=%u DIALING -> NONE ",
		 self->b_ep, self->b_ch[0]);
	EXPECT_EQ(1, trace_count(trace, "rmsg_repair_phase: ", key));
	if (!_metadata->passed)
		ksft_print_msg("trace:\n%s", trace);
	free(trace);
}

#define REPEAT_FAULTS	20

/*
 * REPEAT_FAULTS QP errors on channel 0, at alternate ends, under streams
 * on it and on channel 1 (untouched). A fault is injected as soon as the
 * end is OPEN again (ENOTCONN while it is being repaired); every fourth
 * follows the one before without a pause, so it lands at the other end
 * while the repair the first started is still under way.
 */
TEST_F_TIMEOUT(resil, repeated_faults, 300)
{
	struct rmsg_streams *ss = self->ss;
	struct rmsg_chan_info ea, eb, e1;
	int i, k, ret, busy = 0;
	char buf[256];
	bool late;
	long t0, t, deadline;
	__u32 ep_id, ch;

	if (!module_has(RMSG_FEAT_REPAIR))
		SKIP(return, "the module does not announce RMSG_FEAT_REPAIR");
	rmsg_streams_rndv(ss, RNDV_EVERY);
	start_streams(_metadata, self, 2, ENDLESS);
	t0 = rmsg_now_ms();
	for (k = 0; k < REPEAT_FAULTS; k++) {
		ep_id = k % 2 ? self->a_ep : self->b_ep;
		ch = k % 2 ? self->a_ch[0] : self->b_ch[0];
		deadline = rmsg_now_ms() + 30000;
		for (;;) {
			ret = rmsg_node_fault(rmsg_ep_fd(self->b), ep_id, ch,
					      RMSG_FAULT_QP_ERROR);
			if (ret != -ENOTCONN)
				break;
			busy++;
			late = rmsg_now_ms() > deadline;
			if (late)
				rmsg_sh("tools/rmsgctl/rmsgctl chan >&2");
			ASSERT_FALSE(late)
				TH_LOG("fault %d at %c: not OPEN again in 30 s",
				       k, k % 2 ? 'a' : 'b');
			ASSERT_TRUE(rmsg_streams_run_for(ss, 2))
				TH_LOG("fault %d: %s", k, ss->why);
		}
		if (ret) {
			/* Gather what the streams saw of the end. */
			rmsg_streams_run_for(ss, 2000);
			for (i = 0; i < 4; i++) {
				rmsg_stream_str(&ss->s[i], buf, sizeof(buf));
				ksft_print_msg("stream %d: %s, closed %d/%d (tx %d rx %d)\n",
					       i, buf, ss->s[i].tx_res,
					       ss->s[i].rx_res,
					       ss->s[i].tx_closed,
					       ss->s[i].rx_closed);
			}
			rmsg_sh("tools/rmsgctl/rmsgctl chan >&2");
		}
		ASSERT_EQ(0, ret) TH_LOG("fault %d at %c, after %d refused",
					 k, k % 2 ? 'a' : 'b', busy);
		if (k % 4 != 3)
			ASSERT_TRUE(rmsg_streams_run_for(ss, 5 + k * 37 % 60))
				TH_LOG("fault %d: %s", k, ss->why);
	}
	t = rmsg_now_ms() - t0;
	/* Let the streams run on across the last repair, then end them. */
	ASSERT_TRUE(rmsg_streams_run_for(ss, 500)) TH_LOG("%s", ss->why);
	stop_streams(ss);
	check_exact(_metadata, ss);

	ASSERT_EQ(0, chan_get(rmsg_ep_fd(self->a), self->b_ep, self->b_ch[0],
			      &eb));
	ASSERT_EQ(0, chan_get(rmsg_ep_fd(self->a), self->a_ep, self->a_ch[0],
			      &ea));
	print_info('b', &eb);
	print_info('a', &ea);
	ksft_print_msg("%d faults in %ld ms, %d refused with ENOTCONN (a repair under way)\n",
		       REPEAT_FAULTS, t, busy);
	EXPECT_EQ(RMSG_CHAN_INFO_OPEN, eb.state);
	EXPECT_EQ(RMSG_CHAN_INFO_OPEN, ea.state);
	EXPECT_LE(1, eb.epoch);
	EXPECT_EQ(eb.epoch, ea.epoch);
	/* Faults that overlap share a repair, but not all of them do. */
	EXPECT_LE(2, eb.repairs);
	EXPECT_LE(2, ea.repairs);
	EXPECT_GE(eb.epoch, eb.repairs);
	/* The other channel was not touched. */
	ASSERT_EQ(0, chan_get(rmsg_ep_fd(self->a), self->b_ep, self->b_ch[1],
			      &e1));
	EXPECT_EQ(0, e1.epoch);
	EXPECT_EQ(0, e1.repairs);
}

/* What a forked peer tells its parent once it is set up. */
struct peer_hello {
	__u32 ep_id;
	__u16 port;	/* where it listens, network order; 0 if it connects */
};

#define PEER_KILL_AFTER	400

/*
 * The peer process of peer_killed: one channel to the parent (it connects
 * to @addr, or listens on another port of its address and accepts), and
 * half of a stream each way, run until it is killed. Returns why it
 * stopped (an exit status).
 */
static int peer_child(int wfd, const struct sockaddr_in *addr, bool connects)
{
	struct peer_hello hello = { 0 };
	struct rmsg_chan_info *c;
	struct rmsg_streams *ss;
	struct sockaddr_in la;
	struct rmsg_event ev;
	struct rmsg_ep *ep = NULL;
	int id;

	ss = calloc(1, sizeof(*ss));
	if (!ss || rmsg_ep_open(&ep, 256, 2048))
		return 10;
	if (rmsg_node_channels(rmsg_ep_fd(ep), 0, &c, &hello.ep_id) < 0)
		return 11;
	free(c);
	if (!connects) {
		la = *addr;
		la.sin_port = 0;
		if (rmsg_ep_listen(ep, (struct sockaddr *)&la, sizeof(la),
				   0xc0, LISTEN_BLOCK))
			return 12;
		hello.port = la.sin_port;
	}
	if (write(wfd, &hello, sizeof(hello)) != sizeof(hello))
		return 13;
	if (connects) {
		id = rmsg_chan_connect(ep, (const struct sockaddr *)addr,
				       sizeof(*addr), 0xc1, CONNECT_BLOCK);
		if (id < 0 ||
		    wait_ev(ep, RMSG_CQE_CONNECTED, &ev, EVENT_TIMEOUT_MS) ||
		    ev.res)
			return 14;
	} else if (wait_ev(ep, RMSG_CQE_ACCEPTED, &ev, EVENT_TIMEOUT_MS) ||
		   ev.res) {
		return 15;
	}
	/* Parent to child is stream 0, child to parent stream 1. */
	if (rmsg_streams_add_half(ss, false, ep, ev.channel, HALF_LEN,
				  ENDLESS) != 0 ||
	    rmsg_streams_add_half(ss, true, ep, ev.channel, HALF_LEN,
				  ENDLESS) != 1)
		return 16;
	rmsg_streams_run(ss, ENDLESS, 120000);
	return 17;
}

/*
 * The peer process is SIGKILLed mid-stream: its endpoint's release sends
 * RESET, so the surviving channel ends at once with ECONNRESET instead of
 * being repaired (which would wait for the 30 s give-up). What arrived is
 * an intact, gap-free prefix and every send completes.
 */
static void peer_killed(struct __test_metadata *_metadata,
			resil_fixture *self, bool child_connects)
{
	struct rmsg_streams *ss = self->ss;
	struct peer_hello hello;
	struct rmsg_stream *tx, *rx;
	struct rmsg_chan_info *c, e;
	struct sockaddr_in to;
	struct rmsg_event ev;
	struct rmsg_ep *ep = NULL;
	long t0, t_end, deadline;
	int pfd[2], n, id;
	char buf[256];
	pid_t pid;

	ASSERT_EQ(0, pipe(pfd));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		close(pfd[0]);
		_exit(peer_child(pfd[1], &self->addr, child_connects));
	}
	close(pfd[1]);
	n = read(pfd[0], &hello, sizeof(hello));
	close(pfd[0]);
	if (n != sizeof(hello)) {
		kill(pid, SIGKILL);
		ASSERT_EQ(sizeof(hello), n) TH_LOG("peer exited with %d",
						   rmsg_child_status(pid));
	}
	if (child_connects) {
		ep = self->a;
		ASSERT_EQ(0, wait_ev(ep, RMSG_CQE_ACCEPTED, &ev,
				     EVENT_TIMEOUT_MS));
		ASSERT_EQ(0, ev.res);
		id = ev.channel;
	} else {
		ep = self->b;
		to = self->addr;
		to.sin_port = hello.port;
		id = rmsg_chan_connect(ep, (struct sockaddr *)&to, sizeof(to),
				       0xb0, CONNECT_BLOCK);
		ASSERT_LE(0, id);
		ASSERT_EQ(0, wait_ev(ep, RMSG_CQE_CONNECTED, &ev,
				     EVENT_TIMEOUT_MS));
		ASSERT_EQ(0, ev.res);
	}
	ASSERT_EQ(0, rmsg_streams_add_half(ss, true, ep, id, HALF_LEN,
					   ENDLESS));
	ASSERT_EQ(1, rmsg_streams_add_half(ss, false, ep, id, HALF_LEN,
					   ENDLESS));
	tx = &ss->s[0];
	rx = &ss->s[1];
	ASSERT_TRUE(rmsg_streams_run(ss, PEER_KILL_AFTER, 60000))
		TH_LOG("%s", ss->why);

	ASSERT_EQ(0, kill(pid, SIGKILL));
	t0 = rmsg_now_ms();
	EXPECT_EQ(-1, rmsg_child_status(pid));
	/* Until both halves have seen the end, 10 s at most. */
	ASSERT_TRUE(rmsg_streams_run(ss, ENDLESS, 10000))
		TH_LOG("%s", ss->why);
	t_end = rmsg_now_ms() - t0;

	rmsg_stream_str(tx, buf, sizeof(buf));
	ksft_print_msg("to the peer: %s\n", buf);
	rmsg_stream_str(rx, buf, sizeof(buf));
	ksft_print_msg("from the peer: %s\n", buf);
	ksft_print_msg("channel ended %ld ms after the kill, res %d / %d\n",
		       t_end, tx->tx_res, rx->rx_res);
	EXPECT_EQ(-ECONNRESET, tx->tx_res);
	EXPECT_EQ(-ECONNRESET, rx->rx_res);
	EXPECT_GT(5000, t_end);
	EXPECT_EQ(tx->sent, tx->ok + tx->failed);
	EXPECT_LE(PEER_KILL_AFTER, tx->ok);
	EXPECT_LE(PEER_KILL_AFTER, rx->received);
	EXPECT_EQ(0, rx->lost);
	EXPECT_EQ(0, rx->dup);
	EXPECT_EQ(0, rx->corrupt);
	EXPECT_EQ(rx->received, rx->next);

	/* Both channels leave the list: the peer's endpoint is gone too. */
	EXPECT_EQ(-ENOENT, chan_get(rmsg_ep_fd(ep),
				    child_connects ? self->a_ep :
				    self->b_ep, id, &e));
	deadline = rmsg_now_ms() + 5000;
	do {
		n = rmsg_node_channels(rmsg_ep_fd(ep), RMSG_CHAN_LIST_F_ALL, &c,
				       NULL);
		ASSERT_LE(0, n);
		n = count_ep(c, n, hello.ep_id);
		free(c);
		if (!n)
			break;
		usleep(20000);
	} while (rmsg_now_ms() < deadline);
	EXPECT_EQ(0, n);
}

TEST_F_TIMEOUT(resil, peer_killed_connected, 120)
{
	peer_killed(_metadata, self, true);
}

TEST_F_TIMEOUT(resil, peer_killed_accepted, 120)
{
	peer_killed(_metadata, self, false);
}

#define NETEM_LOSS	"7%"
#define NETEM_MS	4000
#define NETEM_PROBE_MS	1000	/* the first part: any packet through netem? */

/* Packets sent through @netdev's root qdisc so far, or -1. */
static long qdisc_packets(const char *netdev)
{
	char cmd[128], line[256];
	long pkts = -1, b;
	FILE *f;

	snprintf(cmd, sizeof(cmd), "tc -s qdisc show dev %s root", netdev);
	f = popen(cmd, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, " Sent %ld bytes %ld pkt", &b, &pkts) == 2)
			break;
	pclose(f);
	return pkts;
}

/*
 * Random loss under the streams: RC retransmits, and a QP whose retries
 * run out is repaired. Streams exact either way.
 */
TEST_F_TIMEOUT(resil, netem_loss, 120)
{
	struct rmsg_streams *ss = self->ss;
	struct rmsg_chan_info e;
	long p0, p1;
	int i, k, ms;

	if (!module_has(RMSG_FEAT_REPAIR))
		SKIP(return, "the module does not announce RMSG_FEAT_REPAIR");
	if (!self->netdev)
		SKIP(return, "RMSG_NETDEV not set: not run by rmsg-vm");
	start_streams(_metadata, self, 2, ENDLESS);
	if (rmsg_sh("tc qdisc add dev %s root netem loss %s", self->netdev,
		    NETEM_LOSS))
		SKIP(return, "tc qdisc add ... netem failed: no sch_netem?");
	self->netem = true;
	p0 = qdisc_packets(self->netdev);
	/*
	 * Where rxe hands its loopback traffic to itself past the qdisc (the
	 * skip below), not one packet of the streams goes through netem in
	 * their first second, and the other three would not change that:
	 * the test stops there. Otherwise the streams run NETEM_MS under
	 * the loss.
	 */
	ASSERT_TRUE(rmsg_streams_run_for(ss, NETEM_PROBE_MS))
		TH_LOG("%s", ss->why);
	ms = NETEM_PROBE_MS;
	p1 = qdisc_packets(self->netdev);
	if (p1 != p0) {
		ASSERT_TRUE(rmsg_streams_run_for(ss, NETEM_MS - NETEM_PROBE_MS))
			TH_LOG("%s", ss->why);
		ms = NETEM_MS;
		p1 = qdisc_packets(self->netdev);
	}
	rmsg_sh("tc qdisc del dev %s root", self->netdev);
	self->netem = false;
	ksft_print_msg("%ld packets through netem on %s in %d ms\n", p1 - p0,
		       self->netdev, ms);
	stop_streams(ss);
	check_exact(_metadata, ss);
	for (i = 0; i < self->nch; i++)
		for (k = 0; k < 2; k++)
			if (!chan_get(rmsg_ep_fd(self->a),
				      k ? self->a_ep : self->b_ep,
				      k ? self->a_ch[i] : self->b_ch[i], &e))
				print_info(k ? 'a' : 'b', &e);
	/* A skip must not hide a failure of the streams. */
	if (p1 - p0 < 100 && _metadata->passed)
		SKIP(return, "rxe hands loopback traffic to itself past %s's qdisc (%ld packets went through it): netem cannot drop it here; pair.netem_loss_stream (selftests/pair_test.sh) runs it across two guests",
		     self->netdev, p1 - p0);
}

#define GIVE_UP_MS	1500

/*
 * A repair that cannot succeed gives up after repair_timeout_ms: the
 * link goes down, channel 0's QP is faulted at its connecting end (b),
 * whose attempts then find no route. The channel ends with ETIMEDOUT,
 * every send submitted during the repair completes with an error, and
 * poll() wakes the program for the event.
 */
TEST_F_TIMEOUT(resil, give_up, 120)
{
	struct rmsg_streams *ss = self->ss;
	struct pollfd pfd = { .fd = rmsg_ep_fd(self->b), .events = POLLIN };
	struct rmsg_stream *bs = &ss->s[0], *as = &ss->s[1];
	struct rmsg_chan_info e;
	long t0, t_rec, t_end = -1, t_a;
	__u64 queued;
	char buf[256];
	int i, n, ret;

	if (!module_has(RMSG_FEAT_REPAIR))
		SKIP(return, "the module does not announce RMSG_FEAT_REPAIR");
	if (!self->netdev)
		SKIP(return, "RMSG_NETDEV not set: not run by rmsg-vm");
	ASSERT_EQ(0, set_param(self, "repair_timeout_ms", "1500"));
	start_streams(_metadata, self, 1, ENDLESS);
	stop_streams(ss);
	ASSERT_TRUE(rmsg_streams_run(ss, ENDLESS, 60000)) TH_LOG("%s", ss->why);

	ASSERT_EQ(0, block_net(self));
	/*
	 * ENOTCONN: the link going down broke the connection first (rxe
	 * fails a send on a port that is down): a repair is under way all
	 * the same.
	 */
	ret = rmsg_node_fault(rmsg_ep_fd(self->b), 0, self->b_ch[0],
			      RMSG_FAULT_QP_ERROR);
	ASSERT_TRUE(ret == 0 || ret == -ENOTCONN) TH_LOG("fault: %d", ret);
	t0 = rmsg_now_ms();
	ASSERT_TRUE(wait_state(rmsg_ep_fd(self->b), self->b_ep, self->b_ch[0],
			       RMSG_CHAN_INFO_RECOVERING, 1000));
	t_rec = rmsg_now_ms() - t0;
	/* Sends into the channel under repair wait; b's are all queued. */
	for (i = 0; i < 2; i++)
		ss->s[i].total += GIVE_UP_SENDS;
	ASSERT_EQ(GIVE_UP_SENDS, rmsg_stream_send(ss, 0, GIVE_UP_SENDS))
		TH_LOG("%s", ss->why);
	rmsg_stream_send(ss, 1, GIVE_UP_SENDS);
	queued = bs->sent - bs->ok;
	if (!chan_get(rmsg_ep_fd(self->b), self->b_ep, self->b_ch[0], &e))
		ksft_print_msg("b:%u %s, attempt %u of %u, %llu sends queued\n",
			       e.channel, rmsg_chan_state_name(e.state),
			       e.attempts, e.max_attempts,
			       (unsigned long long)queued);

	/* Wait in poll() only, until b hears the end of its channel. */
	while (rmsg_now_ms() - t0 < GIVE_UP_MS + 10000) {
		n = poll(&pfd, 1, GIVE_UP_MS + 10000);
		ASSERT_LE(0, n);
		if (n && (pfd.revents & POLLIN)) {
			ASSERT_LE(0, rmsg_streams_events(ss, self->b))
				TH_LOG("%s", ss->why);
			if (bs->tx_closed) {
				t_end = rmsg_now_ms() - t0;
				break;
			}
		}
	}
	ASSERT_LE(0, t_end) TH_LOG("no CLOSED event in %d ms", GIVE_UP_MS + 10000);
	/* The other end hears of it too, sooner or later; both settle. */
	ASSERT_TRUE(rmsg_streams_run(ss, ENDLESS, 40000)) TH_LOG("%s", ss->why);
	t_a = rmsg_now_ms() - t0;
	EXPECT_TRUE(unblock_net(self));

	for (i = 0; i < 2; i++) {
		struct rmsg_stream *s = &ss->s[i];

		rmsg_stream_str(s, buf, sizeof(buf));
		ksft_print_msg("stream %d (%s): %s, closed %d/%d\n", i,
			       i ? "a to b" : "b to a", buf, s->tx_res,
			       s->rx_res);
		/* Every send got its completion; nothing garbled. */
		EXPECT_EQ(s->sent, s->ok + s->failed);
		EXPECT_EQ(0, s->lost);
		EXPECT_EQ(0, s->dup);
		EXPECT_EQ(0, s->corrupt);
		EXPECT_EQ(s->received, s->next);
	}
	ksft_print_msg("b RECOVERING after %ld ms, CLOSED after %ld ms (give-up %d ms); both ends closed after %ld ms\n",
		       t_rec, t_end, GIVE_UP_MS, t_a);
	EXPECT_EQ(-ETIMEDOUT, bs->tx_res);
	EXPECT_EQ(-ETIMEDOUT, as->rx_res);
	EXPECT_LE(GIVE_UP_MS - 100, t_end);
	EXPECT_GT(GIVE_UP_MS + 5000, t_end);
	/* The sends queued during the repair failed; none was lost. */
	EXPECT_LE(queued, bs->failed);
	EXPECT_LT(0, queued);
	EXPECT_NE(0, as->tx_res);
	EXPECT_EQ(-ENOENT, chan_get(rmsg_ep_fd(self->b), self->b_ep,
				    self->b_ch[0],
				    &e));
}

static bool module_loaded(void)
{
	struct stat st;

	return stat("/sys/module/rmsg", &st) == 0;
}

/*
 * Both endpoints are closed while their channels are being repaired (a
 * repair that cannot succeed: the link is down, the give-up 60 s away):
 * the close returns at once, the channels go, and the module unloads
 * (and is loaded again, for the tests after this one).
 */
TEST_F_TIMEOUT(resil, unload_during_recovery, 120)
{
	const char *ko = getenv("RMSG_KO");
	struct rmsg_chan_info e, *c;
	long t0, t_close;
	int i, n, fd, ret;

	if (!module_has(RMSG_FEAT_REPAIR))
		SKIP(return, "the module does not announce RMSG_FEAT_REPAIR");
	if (!self->netdev || !ko)
		SKIP(return, "RMSG_NETDEV or RMSG_KO not set: not run by rmsg-vm");
	ASSERT_EQ(0, set_param(self, "repair_timeout_ms", "60000"));
	start_streams(_metadata, self, 3, ENDLESS);
	ASSERT_EQ(0, block_net(self));
	/*
	 * Channel 0 from its connecting end, 1 from its accepting end.
	 * ENOTCONN: the link going down broke the connection first.
	 */
	ret = rmsg_node_fault(rmsg_ep_fd(self->b), 0, self->b_ch[0],
			      RMSG_FAULT_QP_ERROR);
	ASSERT_TRUE(ret == 0 || ret == -ENOTCONN) TH_LOG("fault: %d", ret);
	ret = rmsg_node_fault(rmsg_ep_fd(self->a), 0, self->a_ch[1],
			      RMSG_FAULT_QP_ERROR);
	ASSERT_TRUE(ret == 0 || ret == -ENOTCONN) TH_LOG("fault: %d", ret);
	ASSERT_TRUE(wait_state(rmsg_ep_fd(self->b), self->b_ep, self->b_ch[0],
			       RMSG_CHAN_INFO_RECOVERING, 2000));
	ASSERT_TRUE(wait_state(rmsg_ep_fd(self->a), self->a_ep, self->a_ch[1],
			       RMSG_CHAN_INFO_RECOVERING, 2000));
	/* Sends go on into the channels under repair, and wait there. */
	ASSERT_TRUE(rmsg_streams_run_for(self->ss, 300))
		TH_LOG("%s", self->ss->why);
	for (i = 0; i < 2; i++) {
		ASSERT_EQ(0, chan_get(rmsg_ep_fd(self->a),
				      i ? self->a_ep : self->b_ep,
				      i ? self->a_ch[1] : self->b_ch[0], &e));
		print_info(i ? 'a' : 'b', &e);
		EXPECT_EQ(RMSG_CHAN_INFO_RECOVERING, e.state);
	}

	t0 = rmsg_now_ms();
	rmsg_ep_drop(&self->b);
	rmsg_ep_drop(&self->a);
	self->opened = false;
	t_close = rmsg_now_ms() - t0;
	ksft_print_msg("both endpoints closed in %ld ms during the repair\n",
		       t_close);
	EXPECT_GT(3000, t_close);

	fd = rmsg_node_open();
	ASSERT_LE(0, fd);
	n = rmsg_node_channels(fd, RMSG_CHAN_LIST_F_ALL, &c, NULL);
	ASSERT_LE(0, n);
	EXPECT_EQ(0, count_ep(c, n, self->a_ep));
	EXPECT_EQ(0, count_ep(c, n, self->b_ep));
	free(c);
	close(fd);
	EXPECT_TRUE(unblock_net(self));

	/* Nothing of those channels pins the module. */
	ret = syscall(SYS_delete_module, "rmsg", O_NONBLOCK) ? -errno : 0;
	EXPECT_EQ(0, ret) TH_LOG("delete_module: %s", strerror(-ret));
	if (!ret) {
		fd = open(ko, O_RDONLY | O_CLOEXEC);
		ASSERT_LE(0, fd);
		ASSERT_EQ(0, syscall(SYS_finit_module, fd, "", 0));
		close(fd);
	}
	ASSERT_TRUE(module_loaded());
	/* The parameters are the defaults again: nothing to restore. */
	self->nparams = 0;
}

/* --- device removal, return and fatal errors ------------------------------ */

/* rxe0 goes: the RDMA core removes the device under every channel. */
static int rxe_delete(resil_fixture *self)
{
	self->rxe_gone = true;
	return rmsg_sh("rdma link delete rxe0") ? -EIO : 0;
}

/* rxe0 comes back, on the same netdev. */
static bool rxe_make(resil_fixture *self)
{
	if (rmsg_sh("rdma link add rxe0 type rxe netdev %s", self->netdev))
		return false;
	self->rxe_gone = false;
	return true;
}

/* ... and rmsg sees its port active: true. */
static bool rxe_add(resil_fixture *self)
{
	bool ok;
	int fd;

	if (!rxe_make(self))
		return false;
	fd = rmsg_node_open();
	if (fd < 0)
		return false;
	ok = rmsg_wait_dev(fd, "rxe0", true, RMSG_PORT_ACTIVE, 20000);
	close(fd);
	return ok;
}

/* Every channel of both ends in @state: true, or false at @timeout_ms. */
static bool wait_all(resil_fixture *self, __u32 state, int timeout_ms)
{
	long deadline = rmsg_now_ms() + timeout_ms;
	struct rmsg_chan_info e;
	bool all;
	int i, k;

	do {
		all = true;
		for (i = 0; i < self->nch && all; i++)
			for (k = 0; k < 2 && all; k++)
				all = !chan_get(rmsg_ep_fd(self->a),
						k ? self->a_ep : self->b_ep,
						k ? self->a_ch[i] : self->b_ch[i],
						&e) && e.state == state;
		if (all)
			return true;
		usleep(2000);
	} while (rmsg_now_ms() < deadline);
	return false;
}

/* Every channel of both ends open, and repaired at least once. */
static bool all_repaired(resil_fixture *self)
{
	struct rmsg_chan_info e;
	int i, k;

	for (i = 0; i < self->nch; i++)
		for (k = 0; k < 2; k++)
			if (chan_get(rmsg_ep_fd(self->a),
				     k ? self->a_ep : self->b_ep,
				     k ? self->a_ch[i] : self->b_ch[i], &e) ||
			    e.state != RMSG_CHAN_INFO_OPEN || !e.repairs)
				return false;
	return true;
}

/*
 * Run the streams until every channel of both ends is open again and
 * repaired (all_repaired()), giving up 30 s after @t0. Return: the ms
 * from @t0 to then (30 s or more if they never were), or -1 when a stream
 * failed (@self's streams say why).
 */
static long run_until_repaired(resil_fixture *self, long t0)
{
	while (!all_repaired(self) && rmsg_now_ms() - t0 < 30000)
		if (!rmsg_streams_run_for(self->ss, 5))
			return -1;
	return rmsg_now_ms() - t0;
}

/*
 * Every channel of both ends open again, each repaired at least once,
 * its epoch moved on; print them.
 */
static void check_repaired(struct __test_metadata *_metadata,
			   resil_fixture *self)
{
	struct rmsg_chan_info e;
	int i, k;

	for (i = 0; i < self->nch; i++)
		for (k = 0; k < 2; k++) {
			ASSERT_EQ(0, chan_get(rmsg_ep_fd(self->a),
					      k ? self->a_ep : self->b_ep,
					      k ? self->a_ch[i] : self->b_ch[i],
					      &e));
			print_info(k ? 'a' : 'b', &e);
			EXPECT_EQ(RMSG_CHAN_INFO_OPEN, e.state);
			EXPECT_LE(1, e.repairs);
			EXPECT_LE(1, e.epoch);
		}
}

#define HCA_CHANS	4
#define HCA_GONE_MS	500

/*
 * rxe0, the device under both ends of every channel, is deleted under
 * byte-checked streams both ways on four channels, and made again. Every
 * channel must go RECOVERING at both ends (the removal does not end
 * them), leave the device before the removal returns (else it would
 * hang), and open again on the new rxe0, with every stream exact: nothing
 * lost, repeated, out of order or damaged. Sends go on while the device
 * is gone, and wait.
 */
TEST_F_TIMEOUT(resil, hca_readd_streams, 300)
{
	struct rmsg_streams *ss = self->ss;
	long t0, t_del, t_add, t_open;

	if (!module_has(RMSG_FEAT_REPAIR))
		SKIP(return, "the module does not announce RMSG_FEAT_REPAIR");
	if (!self->netdev)
		SKIP(return, "RMSG_NETDEV not set: not run by rmsg-vm");
	/* Rendezvous transfers under way get new keys on the new device. */
	rmsg_streams_rndv(ss, RNDV_EVERY);
	start_streams(_metadata, self, HCA_CHANS, ENDLESS);

	t0 = rmsg_now_ms();
	ASSERT_EQ(0, rxe_delete(self));
	t_del = rmsg_now_ms() - t0;
	ASSERT_TRUE(wait_all(self, RMSG_CHAN_INFO_RECOVERING, 2000));
	ASSERT_TRUE(rmsg_streams_run_for(ss, HCA_GONE_MS)) TH_LOG("%s", ss->why);
	ASSERT_TRUE(wait_all(self, RMSG_CHAN_INFO_RECOVERING, 0));

	t0 = rmsg_now_ms();
	ASSERT_TRUE(rxe_add(self));
	t_add = rmsg_now_ms() - t0;
	t_open = run_until_repaired(self, rmsg_now_ms());
	ASSERT_LE(0, t_open) TH_LOG("%s", ss->why);
	ksft_print_msg("rdma link delete took %ld ms; add %ld ms; every channel open again %ld ms after that\n",
		       t_del, t_add, t_open);
	ASSERT_TRUE(wait_all(self, RMSG_CHAN_INFO_OPEN, 0));
	ASSERT_TRUE(rmsg_streams_run_for(ss, 300)) TH_LOG("%s", ss->why);
	stop_streams(ss);
	check_exact(_metadata, ss);
	check_repaired(_metadata, self);
}

#define FLAP_DOWN_MS	3000

/*
 * The link under rxe0, and so under both ends of every channel, goes down
 * for FLAP_DOWN_MS under byte-checked streams both ways on four channels,
 * and comes up again. Every channel must repair itself on the same rxe0,
 * with every stream exact, and a new channel must open afterwards without
 * rxe0 being made again.
 *
 * The race rmsg_cm_id_port_down() now closes (a repair's DREQ sent after
 * the netdev stopped but before the port's event reached the RDMA core's
 * cache broke QP1, and every repair gave up) did not come up in this
 * one-process test in four runs; with the two ends in two processes it
 * did in 3 of 4 flaps (RMSG_TOPOLOGY=loopback tools/testing/flap.sh).
 */
TEST_F_TIMEOUT(resil, link_flap_streams, 300)
{
	struct rmsg_streams *ss = self->ss;
	long t0, t_open;
	bool ok;
	int ret;

	if (!module_has(RMSG_FEAT_REPAIR))
		SKIP(return, "the module does not announce RMSG_FEAT_REPAIR");
	if (!self->netdev)
		SKIP(return, "RMSG_NETDEV not set: not run by rmsg-vm");
	rmsg_streams_rndv(ss, RNDV_EVERY);
	start_streams(_metadata, self, HCA_CHANS, ENDLESS);

	/*
	 * In the background, while the streams run: the link must go down
	 * under traffic in flight, or the first fault comes only after the
	 * port's event (and the race above never runs).
	 */
	self->link_down = true;
	ASSERT_EQ(0, rmsg_sh("{ sleep 0.3; ip link set %s down; } </dev/null >/dev/null 2>&1 &",
			     self->netdev));
	ok = true;
	t0 = rmsg_now_ms();
	while (ok && !wait_all(self, RMSG_CHAN_INFO_RECOVERING, 0) &&
	       rmsg_now_ms() - t0 < 10000)
		ok = rmsg_streams_run_for(ss, 5);
	ASSERT_TRUE(ok) TH_LOG("%s", ss->why);
	ASSERT_TRUE(wait_all(self, RMSG_CHAN_INFO_RECOVERING, 0))
		TH_LOG("not every channel noticed the link going down in 10 s");
	ASSERT_TRUE(rmsg_streams_run_for(ss, FLAP_DOWN_MS))
		TH_LOG("%s", ss->why);

	ASSERT_EQ(0, rmsg_sh("ip link set %s up", self->netdev));
	self->link_down = false;
	t_open = run_until_repaired(self, rmsg_now_ms());
	ASSERT_LE(0, t_open) TH_LOG("%s", ss->why);
	if (!all_repaired(self))
		dump_state(self);
	ASSERT_TRUE(all_repaired(self))
		TH_LOG("not every channel repaired within 30 s of the link's return");
	ksft_print_msg("link down %d ms; every channel open again %ld ms after it came back\n",
		       FLAP_DOWN_MS, t_open);
	ASSERT_TRUE(rmsg_streams_run_for(ss, 300)) TH_LOG("%s", ss->why);
	stop_streams(ss);
	check_exact(_metadata, ss);
	check_repaired(_metadata, self);
	/* rxe0 still makes connections: QP1 hears CM replies. */
	ret = probe_connect();
	EXPECT_EQ(0, ret) TH_LOG("no new channel on rxe0 after the flap: %d", ret);
}

/* Wait up to 30 s for the OP completion @user_data on @ep: its res. */
static int op_result(struct rmsg_ep *ep, __u64 user_data, int *res)
{
	long deadline = rmsg_now_ms() + 30000;
	struct rmsg_event ev;
	int n;

	while (rmsg_now_ms() < deadline) {
		n = rmsg_ep_progress(ep, &ev, 1);
		if (n < 0)
			return n;
		if (n && ev.kind == RMSG_CQE_OP && ev.user_data == user_data) {
			*res = ev.res;
			return 0;
		}
		if (!n)
			usleep(1000);
	}
	return -ETIMEDOUT;
}

#define HELD_LEN	(100 * 1024)

/* Two rendezvous messages, RGet then RPut, that a sent and b holds. */
struct held_rndv {
	__u8 *src, *dst;
	__u32 hsrc, hdst;
	struct rmsg_msg m[2];
};

/* Send them on the first channel, bytes from @seed; b peeks both. */
static void held_rndv_send(struct __test_metadata *_metadata,
			   resil_fixture *self, struct held_rndv *h,
			   unsigned int seed)
{
	int i;

	h->src = aligned_alloc(4096, 2 * HELD_LEN);
	h->dst = aligned_alloc(4096, 2 * HELD_LEN);
	ASSERT_TRUE(h->src && h->dst);
	for (i = 0; i < 2 * HELD_LEN; i++)
		h->src[i] = (__u8)(i * seed + i / 4093);
	memset(h->dst, 0, 2 * HELD_LEN);
	ASSERT_EQ(0, rmsg_reg(self->a, h->src, 2 * HELD_LEN, &h->hsrc));
	ASSERT_EQ(0, rmsg_reg(self->b, h->dst, 2 * HELD_LEN, &h->hdst));
	ASSERT_EQ(0, rmsg_msg_send_zc(self->a, self->a_ch[0], h->src,
				      HELD_LEN, 0, 1));
	ASSERT_EQ(0, rmsg_msg_send_zc(self->a, self->a_ch[0],
				      h->src + HELD_LEN, HELD_LEN,
				      RMSG_ZC_PUT, 2));
	for (i = 0; i < 2; i++) {
		long deadline = rmsg_now_ms() + 10000;
		int ret;

		while ((ret = rmsg_msg_peek(self->b, self->b_ch[0],
					    &h->m[i])) == -EAGAIN &&
		       rmsg_now_ms() < deadline) {
			rmsg_ep_progress(self->a, NULL, 0);
			rmsg_ep_progress(self->b, NULL, 0);
			usleep(1000);
		}
		ASSERT_EQ(0, ret);
		ASSERT_EQ(RMSG_MSG_RNDV, h->m[i].kind);
		ASSERT_EQ(HELD_LEN, h->m[i].len);
	}
}

/* b answers both now: every byte must arrive, both sends complete. */
static void held_rndv_take(struct __test_metadata *_metadata,
			   resil_fixture *self, struct held_rndv *h)
{
	int i, res;

	ASSERT_EQ(0, rmsg_msg_recv_into(self->b, &h->m[0], h->dst, HELD_LEN,
					11));
	ASSERT_EQ(0, rmsg_msg_recv_into(self->b, &h->m[1],
					h->dst + HELD_LEN, HELD_LEN, 12));
	ASSERT_EQ(0, rmsg_msg_release(self->b, &h->m[1]));
	for (i = 0; i < 2; i++) {
		ASSERT_EQ(0, op_result(self->b, 11 + i, &res))
			TH_LOG("receive %d never completed", i);
		EXPECT_EQ(0, res) TH_LOG("receive %d", i);
		ASSERT_EQ(0, op_result(self->a, 1 + i, &res));
		EXPECT_EQ(0, res) TH_LOG("send %d", i);
	}
	EXPECT_EQ(0, memcmp(h->src, h->dst, 2 * HELD_LEN));
}

static void held_rndv_free(struct __test_metadata *_metadata,
			   resil_fixture *self, struct held_rndv *h)
{
	ASSERT_EQ(0, rmsg_dereg(self->a, h->hsrc));
	ASSERT_EQ(0, rmsg_dereg(self->b, h->hdst));
	free(h->src);
	free(h->dst);
}

/*
 * Two rendezvous messages (RGet, then RPut) whose RTS records arrived but
 * which the receiver holds unanswered while rxe0 goes and comes back: the
 * keys they name died with the device. The sender must name new ones
 * (REKEY) before the receiver's kernel moves a byte; the receiver answers
 * only once every channel is open again, and every byte must arrive. The
 * counters say the keys came by REKEY: one REKEY at least from a, both
 * transfers rekeyed at b.
 */
TEST_F_TIMEOUT(resil, hca_readd_rndv_held, 300)
{
	struct rmsg_ep_stats sa, sb;
	struct held_rndv h;

	if (!module_has(RMSG_FEAT_REPAIR) || !module_has(RMSG_FEAT_RNDV))
		SKIP(return, "the module does not announce RMSG_FEAT_REPAIR and RMSG_FEAT_RNDV");
	if (!self->netdev)
		SKIP(return, "RMSG_NETDEV not set: not run by rmsg-vm");
	ASSERT_EQ(0, connect_n(self, 1));
	held_rndv_send(_metadata, self, &h, 7);

	ASSERT_EQ(0, rxe_delete(self));
	ASSERT_TRUE(wait_all(self, RMSG_CHAN_INFO_RECOVERING, 2000));
	ASSERT_TRUE(rxe_add(self));
	ASSERT_TRUE(wait_all(self, RMSG_CHAN_INFO_OPEN, 30000));

	held_rndv_take(_metadata, self, &h);
	ASSERT_EQ(0, ioctl(rmsg_ep_fd(self->a), RMSG_IOC_EP_STATS, &sa));
	ASSERT_EQ(0, ioctl(rmsg_ep_fd(self->b), RMSG_IOC_EP_STATS, &sb));
	ksft_print_msg("a: %llu REKEY sent; b: %llu transfers rekeyed\n",
		       (unsigned long long)sa.rekeys_out,
		       (unsigned long long)sb.rekeyed_in);
	EXPECT_LE(1, sa.rekeys_out);
	EXPECT_EQ(2, sb.rekeyed_in);
	check_repaired(_metadata, self);
	held_rndv_free(_metadata, self, &h);
}

/*
 * As hca_readd_rndv_held, but the connection that carries the sender's
 * first REKEY breaks before the REKEY and the REG_MRs ahead of it run
 * (fault_rekey_flush: they are lost as a QP error loses them), after the
 * receiver's kernel learned from the hello that new keys are coming. The
 * keys that area named were never registered: the next connection must
 * not name them again (a receiver that read with them would break that
 * connection and every one after it, a repair without end), but register
 * the transfers afresh and say so. Every byte must arrive, with few
 * repairs, and the fault must have been taken.
 */
TEST_F_TIMEOUT(resil, hca_readd_rekey_lost, 300)
{
	struct rmsg_chan_info e;
	struct held_rndv h;
	char left[16];

	if (!module_has(RMSG_FEAT_REPAIR) || !module_has(RMSG_FEAT_RNDV))
		SKIP(return, "the module does not announce RMSG_FEAT_REPAIR and RMSG_FEAT_RNDV");
	if (!self->netdev)
		SKIP(return, "RMSG_NETDEV not set: not run by rmsg-vm");
	ASSERT_EQ(0, connect_n(self, 1));
	held_rndv_send(_metadata, self, &h, 11);

	ASSERT_EQ(0, set_param(self, "fault_rekey_flush", "1"));
	ASSERT_EQ(0, rxe_delete(self));
	ASSERT_TRUE(wait_all(self, RMSG_CHAN_INFO_RECOVERING, 2000));
	ASSERT_TRUE(rxe_add(self));
	ASSERT_TRUE(wait_all(self, RMSG_CHAN_INFO_OPEN, 30000));

	held_rndv_take(_metadata, self, &h);
	/* The fault was taken: the REKEY's connection did break. */
	ASSERT_EQ(0, rmsg_read_param("fault_rekey_flush", left, sizeof(left)));
	EXPECT_STREQ("0", left);
	check_repaired(_metadata, self);
	/*
	 * The device's return, the lost REKEY's connection, and at most a
	 * few attempts more: not one repair after another.
	 */
	ASSERT_EQ(0, chan_get(rmsg_ep_fd(self->a), self->a_ep, self->a_ch[0],
			      &e));
	EXPECT_LE(2, e.repairs);
	EXPECT_GE(4, e.repairs);
	held_rndv_free(_metadata, self, &h);
}

/*
 * rxe0 deleted, and not made again within repair_timeout_ms: every
 * channel ends with ETIMEDOUT at both ends, every send gets its
 * completion, and what arrived is an exact prefix.
 */
TEST_F_TIMEOUT(resil, hca_gone_give_up, 120)
{
	long give_up = 1500 * rmsg_test_slow();
	struct rmsg_streams *ss = self->ss;
	struct rmsg_chan_info e;
	char buf[256];
	unsigned int i;
	long t0, t_end;

	if (!module_has(RMSG_FEAT_REPAIR))
		SKIP(return, "the module does not announce RMSG_FEAT_REPAIR");
	if (!self->netdev)
		SKIP(return, "RMSG_NETDEV not set: not run by rmsg-vm");
	/*
	 * RMSG_TEST_SLOW times on a slow kernel: the debug kernel's removal
	 * of rxe0 took longer than 1.5 s, and the repairs had ended before
	 * the test looked for them.
	 */
	snprintf(buf, sizeof(buf), "%ld", give_up);
	ASSERT_EQ(0, set_param(self, "repair_timeout_ms", buf));
	start_streams(_metadata, self, 2, ENDLESS);
	t0 = rmsg_now_ms();
	ASSERT_EQ(0, rxe_delete(self));
	ASSERT_TRUE(wait_all(self, RMSG_CHAN_INFO_RECOVERING,
			     (int)(1000 * rmsg_test_slow())));
	/* Sends go on into the repairs, and wait there until the end. */
	ASSERT_TRUE(rmsg_streams_run_for(ss, 200)) TH_LOG("%s", ss->why);
	stop_streams(ss);
	ASSERT_TRUE(rmsg_streams_run(ss, ENDLESS, 20000)) TH_LOG("%s", ss->why);
	t_end = rmsg_now_ms() - t0;
	ksft_print_msg("every channel ended %ld ms after the removal (give-up %ld ms)\n",
		       t_end, give_up);
	for (i = 0; i < ss->n; i++) {
		struct rmsg_stream *s = &ss->s[i];

		rmsg_stream_str(s, buf, sizeof(buf));
		ksft_print_msg("stream %u: %s, closed %d/%d\n", i, buf,
			       s->tx_res, s->rx_res);
		EXPECT_TRUE(rmsg_stream_prefix(s)) TH_LOG("stream %u: %s", i,
							  buf);
		EXPECT_EQ(s->sent, s->ok + s->failed);
		EXPECT_EQ(-ETIMEDOUT, s->tx_res);
		EXPECT_EQ(-ETIMEDOUT, s->rx_res);
	}
	EXPECT_LE(give_up - 100, t_end);
	for (i = 0; i < (unsigned int)self->nch; i++) {
		EXPECT_EQ(-ENOENT, chan_get(rmsg_ep_fd(self->a), self->a_ep,
					    self->a_ch[i], &e));
		EXPECT_EQ(-ENOENT, chan_get(rmsg_ep_fd(self->a), self->b_ep,
					    self->b_ch[i], &e));
	}
	/* rxe0 comes back, and the listener, deaf meanwhile, hears again. */
	ASSERT_TRUE(rxe_add(self));
	EXPECT_EQ(0, connect_n(self, 1));
}

/*
 * The endpoints close while rxe0 is gone and their channels are being
 * repaired, with no device (and a listener waiting to listen again); the
 * module unloads, rxe0 comes back, and the module loads again.
 */
TEST_F_TIMEOUT(resil, hca_gone_unload, 120)
{
	const char *ko = getenv("RMSG_KO");
	long t0, t_close;
	int fd, ret;

	if (!module_has(RMSG_FEAT_REPAIR))
		SKIP(return, "the module does not announce RMSG_FEAT_REPAIR");
	if (!self->netdev || !ko)
		SKIP(return, "RMSG_NETDEV or RMSG_KO not set: not run by rmsg-vm");
	start_streams(_metadata, self, 2, ENDLESS);
	ASSERT_EQ(0, rxe_delete(self));
	ASSERT_TRUE(wait_all(self, RMSG_CHAN_INFO_RECOVERING, 1000));
	ASSERT_TRUE(rmsg_streams_run_for(self->ss, 200))
		TH_LOG("%s", self->ss->why);
	t0 = rmsg_now_ms();
	rmsg_ep_drop(&self->b);
	rmsg_ep_drop(&self->a);
	self->opened = false;
	t_close = rmsg_now_ms() - t0;
	ksft_print_msg("both endpoints closed in %ld ms with rxe0 gone\n",
		       t_close);
	EXPECT_GT(3000, t_close);
	ret = syscall(SYS_delete_module, "rmsg", O_NONBLOCK) ? -errno : 0;
	EXPECT_EQ(0, ret) TH_LOG("delete_module: %s", strerror(-ret));
	/* Without the module: rmsg cannot say when the port is up. */
	EXPECT_TRUE(rxe_make(self));
	if (!ret) {
		fd = open(ko, O_RDONLY | O_CLOEXEC);
		ASSERT_LE(0, fd);
		ASSERT_EQ(0, syscall(SYS_finit_module, fd, "", 0));
		close(fd);
	}
	ASSERT_TRUE(module_loaded());
	self->nparams = 0;
	fd = rmsg_node_open();
	ASSERT_LE(0, fd);
	EXPECT_TRUE(rmsg_wait_dev(fd, "rxe0", true, RMSG_PORT_ACTIVE, 20000));
	close(fd);
}

/*
 * RMSG_FAULT_DEVICE_FATAL on one channel acts as IB_EVENT_DEVICE_FATAL
 * of rxe0: every channel on it, at both ends, leaves the device and is
 * repaired on it again (it still works), the streams exact.
 */
TEST_F_TIMEOUT(resil, device_fatal_streams, 300)
{
	struct rmsg_streams *ss = self->ss;
	long t0, t_open;

	if (!module_has(RMSG_FEAT_REPAIR))
		SKIP(return, "the module does not announce RMSG_FEAT_REPAIR");
	/* Leaving the device, even for itself, takes every key along. */
	rmsg_streams_rndv(ss, RNDV_EVERY);
	start_streams(_metadata, self, HCA_CHANS, ENDLESS);
	t0 = rmsg_now_ms();
	ASSERT_EQ(0, rmsg_node_fault(rmsg_ep_fd(self->b), 0, self->b_ch[1],
				     RMSG_FAULT_DEVICE_FATAL));
	/* Open again, and repaired: the work acts on it a moment later. */
	t_open = run_until_repaired(self, t0);
	ASSERT_LE(0, t_open) TH_LOG("%s", ss->why);
	ksft_print_msg("every channel open again %ld ms after the fatal error\n",
		       t_open);
	ASSERT_TRUE(rmsg_streams_run_for(ss, 300)) TH_LOG("%s", ss->why);
	stop_streams(ss);
	check_exact(_metadata, ss);
	check_repaired(_metadata, self);
	/* rmsgctl injects it too. */
	EXPECT_EQ(0, rmsg_sh("tools/rmsgctl/rmsgctl fault device-fatal %u:%u",
			     self->a_ep, self->a_ch[0]));
}

int main(int argc, char **argv)
{
	return rmsg_test_main(argc, argv);
}
