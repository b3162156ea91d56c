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
 */
#include <stdint.h>
#include <sys/ioctl.h>

#include "kselftest_harness.h"
#include "rmsg_test.h"

#define EVENT_TIMEOUT_MS	20000
#define NOBODY			65534
#define LISTEN_BLOCK		16384
#define CONNECT_BLOCK		65536
#define MAX_CHANS		8
#define STREAM_MSGS		3000
#define WARMUP_MSGS		300

/* The next event of @ep, which must be of @kind: 0, or why not. */
static int wait_ev(struct rmsg_ep *ep, unsigned int kind,
		   struct rmsg_event *ev, int timeout_ms)
{
	long deadline = rmsg_now_ms() + timeout_ms;
	struct pollfd pfd = { .fd = ep->fd, .events = POLLIN };
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
	int fd = rmsg_open_device();
	bool ok;

	if (fd < 0)
		return false;
	ok = !rmsg_query_version(fd, &ver) && (ver.features & feature);
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

FIXTURE(resil) {
	struct rmsg_ep a;	/* listens */
	struct rmsg_ep b;	/* connects */
	struct sockaddr_in addr;
	__u32 a_ep, b_ep;	/* endpoint ids */
	__u32 a_ch[MAX_CHANS], b_ch[MAX_CHANS];
	int nch;
	bool opened;
	struct rmsg_streams *ss;
};

FIXTURE_SETUP(resil)
{
	struct rmsg_chan_info *c;

	if (!rmsg_local_addr(&self->addr, 0))
		SKIP(return, "RMSG_LOCAL_ADDR not set: not run by rmsg-vm");
	if (!module_has(RMSG_FEAT_EAGER))
		SKIP(return, "the module does not announce RMSG_FEAT_EAGER");
	if (!module_has(RMSG_FEAT_CHAN_LIST) || !module_has(RMSG_FEAT_FAULT))
		SKIP(return, "the module does not announce RMSG_FEAT_CHAN_LIST and RMSG_FEAT_FAULT");
	ASSERT_EQ(0, rmsg_ep_open(&self->a, 256, 2048));
	ASSERT_EQ(0, rmsg_ep_open(&self->b, 256, 2048));
	self->opened = true;
	ASSERT_EQ(0, rmsg_ep_listen(&self->a, (struct sockaddr *)&self->addr,
				    sizeof(self->addr), 0xa0, LISTEN_BLOCK));
	ASSERT_EQ(0, rmsg_chan_list(self->a.fd, 0, &c, &self->a_ep));
	ASSERT_EQ(0, rmsg_chan_list(self->b.fd, 0, &c, &self->b_ep));
	ASSERT_NE(0, self->a_ep);
	ASSERT_NE(0, self->b_ep);
	ASSERT_NE(self->a_ep, self->b_ep);
	self->ss = calloc(1, sizeof(*self->ss));
	ASSERT_NE(NULL, self->ss);
}

FIXTURE_TEARDOWN(resil)
{
	if (self->opened) {
		rmsg_ep_close(&self->a);
		rmsg_ep_close(&self->b);
	}
	free(self->ss);
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
		id = rmsg_ep_connect(&self->b, (struct sockaddr *)&self->addr,
				     sizeof(self->addr), 0xb0 + i,
				     CONNECT_BLOCK);
		if (id < 0)
			return id;
		ret = wait_ev(&self->b, RMSG_CQE_CONNECTED, &ev,
			      EVENT_TIMEOUT_MS);
		if (ret || ev.res || ev.channel != (__u32)id)
			return ret ?: ev.res ?: -EPROTO;
		self->b_ch[i] = id;
		ret = wait_ev(&self->a, RMSG_CQE_ACCEPTED, &ev,
			      EVENT_TIMEOUT_MS);
		if (ret || ev.res)
			return ret ?: ev.res;
		self->a_ch[i] = ev.channel;
	}
	self->nch = n;
	return 0;
}

/* Each end's own list shows its open channels, as they are. */
TEST_F(resil, chan_list_own)
{
	struct rmsg_chan_info c[MAX_CHANS];
	const struct rmsg_chan_info *e;
	struct rmsg_chan_list req;
	struct rmsg_event ev;
	int i;

	ASSERT_EQ(0, chan_list(self->a.fd, c, MAX_CHANS, 0, &req));
	EXPECT_EQ(0, req.filled);
	EXPECT_EQ(0, req.total);
	EXPECT_EQ(self->a_ep, req.ep_id);

	ASSERT_EQ(0, connect_n(self, 3));
	ASSERT_EQ(0, chan_list(self->a.fd, c, MAX_CHANS, 0, &req));
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
		EXPECT_EQ(0, e->resv[0] | e->resv[1] | e->resv[2]);
	}
	ASSERT_EQ(0, chan_list(self->b.fd, c, MAX_CHANS, 0, &req));
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
	ASSERT_EQ(0, rmsg_ep_close_channel(&self->b, self->b_ch[0], 0));
	ASSERT_EQ(0, wait_ev(&self->b, RMSG_CQE_CLOSED, &ev,
			     EVENT_TIMEOUT_MS));
	EXPECT_EQ(self->b_ch[0], ev.channel);
	ASSERT_EQ(0, chan_list(self->b.fd, c, MAX_CHANS, 0, &req));
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
	ASSERT_EQ(0, chan_list(self->b.fd, NULL, 0, 0, &req));
	EXPECT_EQ(0, req.filled);
	EXPECT_EQ(5, req.total);
	EXPECT_EQ(self->b_ep, req.ep_id);

	memset(c, 0xee, sizeof(c));
	ASSERT_EQ(0, chan_list(self->b.fd, c, 2, 0, &req));
	EXPECT_EQ(2, req.filled);
	EXPECT_EQ(5, req.total);
	EXPECT_EQ(self->b_ep, c[0].ep_id);
	EXPECT_EQ(self->b_ep, c[1].ep_id);
	/* Nothing past the capacity is written. */
	EXPECT_EQ(0xeeeeeeeeU, c[2].ep_id);

	/* The kernel must not size anything by what the caller claims. */
	ASSERT_EQ(0, chan_list(self->b.fd, c, UINT32_MAX, 0, &req));
	EXPECT_EQ(5, req.filled);
	EXPECT_EQ(5, req.total);

	/* The same through the library. */
	n = rmsg_chan_list(self->b.fd, 0, &lc, &id);
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
	req.flags = 2;
	EXPECT_EQ(-1, ioctl(self->a.fd, RMSG_IOC_CHAN_LIST, &req));
	EXPECT_EQ(EINVAL, errno);
	memset(&req, 0, sizeof(req));
	req.flags = RMSG_CHAN_LIST_F_ALL | (1U << 31);
	EXPECT_EQ(-1, ioctl(self->a.fd, RMSG_IOC_CHAN_LIST, &req));
	EXPECT_EQ(EINVAL, errno);
	memset(&req, 0, sizeof(req));
	req.resv = 1;
	EXPECT_EQ(-1, ioctl(self->a.fd, RMSG_IOC_CHAN_LIST, &req));
	EXPECT_EQ(EINVAL, errno);

	EXPECT_EQ(-EFAULT, chan_list(self->a.fd, NULL, 4, 0, &req));
	EXPECT_EQ(-EFAULT, chan_list(self->a.fd, (void *)8, 4, 0, &req));
	EXPECT_EQ(-EFAULT, chan_list(self->a.fd, (void *)8, 4,
				     RMSG_CHAN_LIST_F_ALL, &req));
	EXPECT_EQ(-1, ioctl(self->a.fd, RMSG_IOC_CHAN_LIST, (void *)8));
	EXPECT_EQ(EFAULT, errno);
	/* And the endpoint is none the worse. */
	EXPECT_EQ(0, chan_list(self->a.fd, c, MAX_CHANS, 0, &req));
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
	n = rmsg_chan_list(self->a.fd, RMSG_CHAN_LIST_F_ALL, &c, NULL);
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
	EXPECT_EQ(0, rmsg_sh("tools/rmsgctl/rmsgctl chan | grep -Eq '^ *%u +%d +%u +OPEN '",
			     self->a_ep, getpid(), self->a_ch[0]));
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
	if (chan_list(self->a.fd, c, 64, 0, &req) || req.filled != 2 ||
	    req.ep_id != self->a_ep)
		return 2;
	if (chan_list(self->a.fd, c, 64, RMSG_CHAN_LIST_F_ALL, &req))
		return 3;
	if (req.filled != req.total || count_ep(c, req.filled, self->a_ep) != 2)
		return 4;
	if (count_ep(c, req.filled, self->b_ep))
		return 5;
	/* Only a's: no other user's endpoint either. */
	if (count_ep(c, req.filled, self->a_ep) != (int)req.filled)
		return 6;
	if (fault(self->a.fd, self->b_ep, self->b_ch[0],
		  RMSG_FAULT_QP_ERROR) != -EPERM)
		return 7;
	if (fault(self->a.fd, self->b_ep, 12345, RMSG_FAULT_QP_ERROR) !=
	    -EPERM)
		return 8;
	/* Its own endpoint, by 0 and by id, is the caller's to fault. */
	if (fault(self->a.fd, 0, 12345, RMSG_FAULT_QP_ERROR) != -ENOENT)
		return 9;
	if (fault(self->a.fd, self->a_ep, 12345, RMSG_FAULT_QP_ERROR) !=
	    -ENOENT)
		return 10;
	if (fault(self->a.fd, 0x7ffffff0, 0, RMSG_FAULT_QP_ERROR) != -ENOENT)
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
	n = rmsg_chan_list(self->a.fd, RMSG_CHAN_LIST_F_ALL, &c, NULL);
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
	EXPECT_EQ(-EINVAL, fault(self->b.fd, 0, self->b_ch[0], 0));
	EXPECT_EQ(-EINVAL, fault(self->b.fd, 0, self->b_ch[0], 4));
	EXPECT_EQ(-EINVAL, fault(self->b.fd, 0, self->b_ch[0], UINT32_MAX));
	memset(&req, 0, sizeof(req));
	req.channel = self->b_ch[0];
	req.kind = RMSG_FAULT_QP_ERROR;
	req.flags = 1;
	EXPECT_EQ(-1, ioctl(self->b.fd, RMSG_IOC_FAULT, &req));
	EXPECT_EQ(EINVAL, errno);
	req.flags = 0;
	req.resv = 1;
	EXPECT_EQ(-1, ioctl(self->b.fd, RMSG_IOC_FAULT, &req));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, ioctl(self->b.fd, RMSG_IOC_FAULT, (void *)8));
	EXPECT_EQ(EFAULT, errno);
	EXPECT_EQ(-ENOENT, fault(self->b.fd, 0, self->b_ch[0] + 1000,
				 RMSG_FAULT_QP_ERROR));
	EXPECT_EQ(-ENOENT, fault(self->b.fd, self->b_ep, self->b_ch[0] + 1000,
				 RMSG_FAULT_QP_ERROR));
	EXPECT_EQ(-ENOENT, fault(self->b.fd, 0x7ffffff0, self->b_ch[0],
				 RMSG_FAULT_QP_ERROR));
	/* Through the library, and rmsgctl. */
	EXPECT_EQ(-ENOENT, rmsg_inject_fault(self->b.fd, 0, 999,
					     RMSG_FAULT_QP_ERROR));
	EXPECT_EQ(-EINVAL, rmsg_inject_fault(self->b.fd, 0, 0, 9));
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
	struct rmsg_ep l;
	int id, n;

	ASSERT_TRUE(rmsg_local_addr(&addr, 0));
	ASSERT_EQ(0, rmsg_ep_open(&l, 64, 0));
	ASSERT_EQ(0, rmsg_ep_listen_flags(&l, (struct sockaddr *)&addr,
					  sizeof(addr), 0x1, 0,
					  RMSG_LISTEN_F_ACCEPT));
	id = rmsg_ep_connect(&self->b, (struct sockaddr *)&addr, sizeof(addr),
			     0xb9, 0);
	ASSERT_LE(0, id);
	ASSERT_EQ(0, wait_ev(&l, RMSG_CQE_REQUEST, &ev, EVENT_TIMEOUT_MS));

	n = rmsg_chan_list(l.fd, 0, &c, NULL);
	ASSERT_EQ(1, n);
	EXPECT_EQ(ev.channel, c[0].channel);
	EXPECT_EQ(RMSG_CHAN_INFO_REQUESTED, c[0].state);
	free(c);
	n = rmsg_chan_list(self->b.fd, 0, &c, NULL);
	ASSERT_EQ(1, n);
	e = find_info(c, n, self->b_ep, id);
	ASSERT_NE(NULL, e);
	EXPECT_EQ(RMSG_CHAN_INFO_CONNECTING, e->state);
	free(c);

	EXPECT_EQ(-ENOTCONN, rmsg_inject_fault(l.fd, 0, ev.channel,
					       RMSG_FAULT_QP_ERROR));
	EXPECT_EQ(-ENOTCONN, rmsg_inject_fault(self->a.fd, self->b_ep, id,
					       RMSG_FAULT_QP_ERROR));
	ASSERT_EQ(0, rmsg_ep_accept(&l, ev.channel, 0, RMSG_ACCEPT_REJECT));
	ASSERT_EQ(0, wait_ev(&self->b, RMSG_CQE_CONNECTED, &ev,
			     EVENT_TIMEOUT_MS));
	EXPECT_NE(0, ev.res);
	rmsg_ep_close(&l);
}

/* The faulted channels of qp_error_streams, by index. */
static bool faulted(int i)
{
	return i == 1 || i == 2;
}

/*
 * A QP error under running streams: 4 channels, both ways, eager only.
 * Channel 1 is faulted from its connecting end (own endpoint, id 0),
 * channel 2 at its accepting end, through the other endpoint's
 * descriptor by endpoint id.
 */
TEST_F_TIMEOUT(resil, qp_error_streams, 300)
{
	struct rmsg_streams *ss = self->ss;
	bool repair = module_has(RMSG_FEAT_REPAIR);
	struct rmsg_chan_info *c;
	const struct rmsg_chan_info *e;
	char buf[256];
	int i, k, n, ch, res;
	bool hit;

	ksft_print_msg("%s\n", repair ?
		       "RMSG_FEAT_REPAIR announced: the streams must go on exact" :
		       "RMSG_FEAT_REPAIR not announced: faulted channels must close with an error, nothing lost that was acknowledged, nothing hung");
	ASSERT_EQ(0, connect_n(self, 4));
	for (i = 0; i < 4; i++) {
		ASSERT_EQ(2 * i, rmsg_streams_add(ss, &self->b, self->b_ch[i],
						  &self->a, self->a_ch[i],
						  STREAM_MSGS));
		ASSERT_EQ(2 * i + 1,
			  rmsg_streams_add(ss, &self->a, self->a_ch[i],
					   &self->b, self->b_ch[i],
					   STREAM_MSGS));
	}
	ASSERT_TRUE(rmsg_streams_run(ss, WARMUP_MSGS, 60000))
		TH_LOG("%s", ss->why);

	ASSERT_EQ(0, rmsg_inject_fault(self->b.fd, 0, self->b_ch[1],
				       RMSG_FAULT_QP_ERROR));
	ASSERT_EQ(0, rmsg_inject_fault(self->b.fd, self->a_ep, self->a_ch[2],
				       RMSG_FAULT_QP_ERROR));
	ASSERT_TRUE(rmsg_streams_run(ss, STREAM_MSGS, 120000))
		TH_LOG("%s", ss->why);

	for (i = 0; i < (int)ss->n; i++) {
		struct rmsg_stream *s = &ss->s[i];

		ch = i / 2;
		rmsg_stream_str(s, buf, sizeof(buf));
		ksft_print_msg("stream %d (channel %d, %s): %s\n", i, ch,
			       i % 2 ? "a to b" : "b to a", buf);
		if (repair || !faulted(ch)) {
			EXPECT_TRUE(rmsg_stream_exact(s))
				TH_LOG("stream %d: %s", i, buf);
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
		struct rmsg_ep *ep = k ? &self->a : &self->b;
		__u32 ep_id = k ? self->a_ep : self->b_ep;
		__u32 *ids = k ? self->a_ch : self->b_ch;

		n = rmsg_chan_list(ep->fd, 0, &c, NULL);
		ASSERT_LE(0, n);
		for (i = 0; i < 4; i++) {
			e = find_info(c, n, ep_id, ids[i]);
			if (!repair && faulted(i)) {
				EXPECT_EQ(NULL, e) TH_LOG("channel %d of %c listed after its end",
							  i, k ? 'a' : 'b');
				continue;
			}
			ASSERT_NE(NULL, e) TH_LOG("channel %d of %c missing",
						  i, k ? 'a' : 'b');
			EXPECT_EQ(RMSG_CHAN_INFO_OPEN, e->state);
			if (!faulted(i)) {
				EXPECT_EQ(0, e->epoch);
				continue;
			}
			ksft_print_msg("%c:%u epoch %u repairs %u retx %llu msgs %llu bytes, recovering %llu ns, last error %d\n",
				       k ? 'a' : 'b', ids[i], e->epoch,
				       e->repairs,
				       (unsigned long long)e->retx_msgs,
				       (unsigned long long)e->retx_bytes,
				       (unsigned long long)e->recover_ns,
				       e->last_error);
			EXPECT_LE(1, e->epoch);
			/* The end the fault hit ran the repair. */
			hit = (i == 1 && !k) || (i == 2 && k);
			EXPECT_LE(hit ? 1 : 0, e->repairs);
		}
		free(c);
	}
}

TEST_HARNESS_MAIN
