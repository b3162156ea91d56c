// SPDX-License-Identifier: GPL-2.0
/*
 * Block leases, first slice (Documentation/design.rst, "Memory in
 * proportion to traffic"): with the lease_blocks module parameter set,
 * a new channel's ends hold no receive block (rmsg_chan_info.block_held
 * 0, lease 0); the first message makes the receiver's block (lease 1)
 * and arrives whole; many messages after it, both ways, wrap the leased
 * block and arrive in order, byte for byte. A leased channel whose
 * connection breaks (a QP error injected) is repaired: before any lease,
 * while the first lease is being asked for and granted, and with leases
 * held both ways and records unread, every message arrives once, in
 * order, byte for byte, and the leases stand where they stood. With the
 * parameter off a channel holds its block from the start, as before. Both
 * endpoints live in this process and talk over the guest's rxe device.
 */
#include <poll.h>
#include <stdint.h>
#include <sys/ioctl.h>

#include "kselftest_harness.h"
#include "rmsg_test.h"

#define TIMEOUT_MS	20000
#define BLOCK		32768	/* the module's default block size */
#define MANY		3000	/* each way: the block wraps many times */
#define OPENS		8	/* channels link_open_is_two_messages opens */

/* Byte @i of message @seq of direction @dir. */
static unsigned char pattern(unsigned int dir, unsigned int seq,
			     unsigned int i)
{
	return (unsigned char)(seq * 131 + dir * 29 + i * 7 + (i >> 8));
}

/* Sizes: the edges of the record granule, then a spread up to @max. */
static unsigned int size_of(unsigned int seq, unsigned int max)
{
	static const unsigned int edge[] = { 0, 1, 15, 16, 17 };
	unsigned int h = seq * 2654435761U;

	if (seq % 16 < 5)
		return edge[seq % 16];
	if (seq % 16 == 5)
		return max;
	return (h >> 9) % (max < 3000 ? max + 1 : 3000);
}

static int chan_list(int fd, struct rmsg_chan_info *chans, __u32 capacity,
		     struct rmsg_chan_list *req)
{
	memset(req, 0, sizeof(*req));
	req->chans = (uintptr_t)chans;
	req->capacity = capacity;
	return ioctl(fd, RMSG_IOC_CHAN_LIST, req) ? -errno : 0;
}

/* Channel @id of @ep, as the channel list shows it; false if missing. */
static bool chan_info(struct rmsg_ep *ep, unsigned int id,
		      struct rmsg_chan_info *out)
{
	struct rmsg_chan_info c[16];
	struct rmsg_chan_list req;
	__u32 i;

	if (chan_list(rmsg_ep_fd(ep), c, 16, &req))
		return false;
	for (i = 0; i < req.filled; i++) {
		if (c[i].channel == id) {
			*out = c[i];
			return true;
		}
	}
	return false;
}

FIXTURE(lease) {
	struct rmsg_ep *a;	/* listens */
	struct rmsg_ep *b;	/* connects */
	struct sockaddr_in addr;
	unsigned int a_id, b_id;
	char old[16];
	char old_port[16];
	bool param_set;
	bool opened;
};

/* Each test on a channel of its own, and on a link between the nodes. */
FIXTURE_VARIANT(lease) {
	bool on_link;
};

FIXTURE_VARIANT_ADD(lease, direct) {
	.on_link = false,
};

FIXTURE_VARIANT_ADD(lease, link) {
	.on_link = true,
};

typedef FIXTURE_DATA(lease) lease_fixture;

/* Why a helper failed, for the assertion that reports it. */
static char why[256];

/* The first link the module lists, in @link; false when there is none. */
static bool first_link(lease_fixture *self, struct rmsg_link_info *link)
{
	struct rmsg_link_list req = {
		.links = (uintptr_t)link,
		.capacity = 1,
	};

	return !ioctl(rmsg_ep_fd(self->a), RMSG_IOC_LINK_LIST, &req) &&
	       req.filled == 1;
}

/* The channels on the link to this node now, or -1 while it is not open. */
static int link_channels(lease_fixture *self)
{
	struct rmsg_link_info link;

	if (!first_link(self, &link) || link.state != RMSG_CHAN_INFO_OPEN)
		return -1;
	return link.channels;
}

static bool connect_one(lease_fixture *self);

/*
 * The link variant: a first channel brings the link up (it is a
 * connection of its own), and the tests' channels go on the link.
 */
static bool bring_link(lease_fixture *self)
{
	long deadline;

	if (!connect_one(self))
		return false;
	deadline = rmsg_now_ms() + TIMEOUT_MS * rmsg_test_slow();
	while (link_channels(self) < 0) {
		if (rmsg_now_ms() > deadline) {
			snprintf(why, sizeof(why), "no link open in %d ms",
				 TIMEOUT_MS);
			return false;
		}
		usleep(20000);
	}
	return true;
}

FIXTURE_SETUP(lease)
{
	if (!rmsg_local_addr(&self->addr, 0))
		SKIP(rmsg_setup_skipped(_metadata); return,
		     "RMSG_LOCAL_ADDR not set: not run by rmsg-vm");
	if (!rmsg_have_features(RMSG_FEAT_LEASE | RMSG_FEAT_EAGER))
		SKIP(rmsg_setup_skipped(_metadata); return,
		     "the module does not announce RMSG_FEAT_LEASE");
	if (rmsg_read_param("lease_blocks", self->old, sizeof(self->old)) ||
	    rmsg_read_param("link_port", self->old_port,
			    sizeof(self->old_port)))
		SKIP(rmsg_setup_skipped(_metadata); return,
		     "no lease_blocks or link_port parameter to read (root?)");
	/*
	 * Out of order, channels write with immediates (rx_imm), and a
	 * lease needs writes without (rmsg_lease_setup()): Linux 6.12's rxe.
	 */
	if (!rmsg_rxe0_ordered())
		SKIP(rmsg_setup_skipped(_metadata); return,
		     variant->on_link ?
		     "rxe0 places out of order here: channels do not go on a link" :
		     "rxe0 places out of order here: channels write with immediates, which leases do not take");
	ASSERT_EQ(0, rmsg_write_param("lease_blocks", "1"));
	self->param_set = true;
	ASSERT_EQ(0, rmsg_write_param("link_port",
				      variant->on_link ? "1021" : "0"));
	ASSERT_EQ(0, rmsg_ep_open(&self->a, 256, 2048));
	ASSERT_EQ(0, rmsg_ep_open(&self->b, 256, 2048));
	self->opened = true;
	ASSERT_EQ(0, rmsg_ep_listen(self->a, (struct sockaddr *)&self->addr,
				    sizeof(self->addr), 0xa0, 0));
	if (variant->on_link)
		ASSERT_TRUE(bring_link(self)) TH_LOG("%s", why);
}

FIXTURE_TEARDOWN(lease)
{
	if (self->opened) {
		rmsg_ep_drop(&self->a);
		rmsg_ep_drop(&self->b);
	}
	if (self->param_set) {
		rmsg_write_param("lease_blocks", self->old);
		rmsg_write_param("link_port", self->old_port);
	}
}

/* One channel from b to a, open at both ends. */
static bool connect_one(lease_fixture *self)
{
	long deadline = rmsg_now_ms() + TIMEOUT_MS;
	bool connected = false, accepted = false;
	struct rmsg_event ev;
	int id, n;

	id = rmsg_chan_connect(self->b, (struct sockaddr *)&self->addr,
			       sizeof(self->addr), 0xb0, 0);
	if (id < 0) {
		snprintf(why, sizeof(why), "connect: %d", id);
		return false;
	}
	self->b_id = id;
	while (!(connected && accepted)) {
		if (rmsg_now_ms() > deadline) {
			snprintf(why, sizeof(why), "not open in %d ms (%d %d)",
				 TIMEOUT_MS, connected, accepted);
			return false;
		}
		n = rmsg_ep_progress(self->b, &ev, 1);
		if (n == 1 && ev.kind == RMSG_CQE_CONNECTED) {
			if (ev.res) {
				snprintf(why, sizeof(why), "CONNECTED: %d",
					 ev.res);
				return false;
			}
			connected = true;
		}
		n = rmsg_ep_progress(self->a, &ev, 1);
		if (n == 1 && ev.kind == RMSG_CQE_ACCEPTED) {
			if (ev.res) {
				snprintf(why, sizeof(why), "ACCEPTED: %d",
					 ev.res);
				return false;
			}
			self->a_id = ev.channel;
			accepted = true;
		}
		usleep(1000);
	}
	return true;
}

/* Is @in (@ret bytes read) message @seq of direction @dir, byte for byte? */
static bool message_is(const unsigned char *in, int ret, unsigned int dir,
		       unsigned int seq, unsigned int max)
{
	unsigned int len = size_of(seq, max), i;

	if (ret != (int)len) {
		snprintf(why, sizeof(why),
			 "dir %u message %u: %d bytes, expected %u", dir, seq,
			 ret, len);
		return false;
	}
	for (i = 0; i < len; i++) {
		if (in[i] != pattern(dir, seq, i)) {
			snprintf(why, sizeof(why),
				 "dir %u message %u: byte %u is 0x%02x, expected 0x%02x",
				 dir, seq, i, in[i], pattern(dir, seq, i));
			return false;
		}
	}
	return true;
}

/*
 * @n messages from @tx's channel @tx_id to @rx's @rx_id, each checked
 * byte for byte on arrival, in order; sends that find no room wait for
 * the receiver to take what came (one thread does both).
 */
static bool stream(struct rmsg_ep *tx, unsigned int tx_id, struct rmsg_ep *rx,
		   unsigned int rx_id, unsigned int dir, unsigned int first,
		   unsigned int n, unsigned int max)
{
	long deadline = rmsg_now_ms() + TIMEOUT_MS * 3;
	static unsigned char out[BLOCK], in[BLOCK];
	unsigned int sent = first, got = first, len, i;
	struct rmsg_event ev[16];
	int ret, nev, k;

	while (got != first + n) {
		if (rmsg_now_ms() > deadline) {
			snprintf(why, sizeof(why),
				 "dir %u: %u sent, %u arrived, of %u", dir,
				 sent - first, got - first, n);
			return false;
		}
		while (sent != first + n) {
			len = size_of(sent, max);
			for (i = 0; i < len; i++)
				out[i] = pattern(dir, sent, i);
			/* Only a failed send has an event. */
			ret = rmsg_msg_send(tx, tx_id, out, len,
					    RMSG_SEND_SKIP_SUCCESS, sent);
			if (ret == -EAGAIN || ret == -ENOBUFS)
				break;
			if (ret) {
				snprintf(why, sizeof(why), "send %u: %d", sent,
					 ret);
				return false;
			}
			sent++;
		}
		nev = rmsg_ep_progress(tx, ev, 16);
		for (k = 0; k < nev; k++) {
			if (ev[k].kind == RMSG_CQE_OP && !ev[k].res)
				continue;
			snprintf(why, sizeof(why),
				 "dir %u: event %u res %d on channel %u (message %llu)",
				 dir, ev[k].kind, ev[k].res, ev[k].channel,
				 (unsigned long long)ev[k].user_data);
			return false;
		}
		ret = rmsg_msg_recv(rx, rx_id, in, sizeof(in), 0);
		if (ret == -EAGAIN) {
			usleep(200);
			continue;
		}
		if (!message_is(in, ret, dir, got, max))
			return false;
		got++;
	}
	return true;
}

/* What the channel list says of one end: its block held, its lease. */
static bool end_is(struct rmsg_ep *ep, unsigned int id, __u32 held,
		   __u32 lease)
{
	long deadline = rmsg_now_ms() + TIMEOUT_MS;
	struct rmsg_chan_info info;

	/* The receiver's block and lease are made in a work item. */
	for (;;) {
		if (!chan_info(ep, id, &info)) {
			snprintf(why, sizeof(why), "channel %u not listed", id);
			return false;
		}
		if (info.block_held == held && info.lease == lease)
			return true;
		if (rmsg_now_ms() > deadline)
			break;
		usleep(1000);
	}
	snprintf(why, sizeof(why),
		 "channel %u: block_held %u lease %u, expected %u and %u", id,
		 info.block_held, info.lease, held, lease);
	return false;
}

/* A new channel: neither end holds a block, no lease was granted. */
TEST_F(lease, fresh_channel_holds_no_block)
{
	struct rmsg_chan_info info;

	ASSERT_TRUE(connect_one(self)) TH_LOG("%s", why);
	/* The link variant's channel is on the link (the first is not). */
	if (variant->on_link)
		EXPECT_EQ(1, link_channels(self));
	ASSERT_TRUE(chan_info(self->a, self->a_id, &info));
	EXPECT_EQ(RMSG_CHAN_INFO_OPEN, info.state);
	EXPECT_EQ(BLOCK, info.block_size);
	EXPECT_EQ(0, info.block_held);
	EXPECT_EQ(0, info.lease);
	ASSERT_TRUE(chan_info(self->b, self->b_id, &info));
	EXPECT_EQ(0, info.block_held);
	EXPECT_EQ(0, info.lease);
}

/*
 * Link messages through the carrier end the link list shows first, each
 * counted once (sent by it or received by it), the link's own LCREDITs
 * and REFUSEs left out; -1 while there is no link.
 */
static long link_msgs(lease_fixture *self)
{
	struct rmsg_link_info link;

	if (!first_link(self, &link))
		return -1;
	return (long)(link.sent - link.lcredit_sent - link.refused_sent +
		      link.received - link.lcredit_received -
		      link.refused_received);
}

/*
 * On a link, a leased channel's hellos stand for its READYs
 * (RMSG_HELLO_F_READY): opening it is its HELLO CONNECT and the ACCEPT,
 * two link messages, where a READY each way after them made four. The
 * channels then carry both ways.
 */
TEST_F(lease, link_open_is_two_messages)
{
	long before, after;
	unsigned int n;

	if (!variant->on_link)
		SKIP(return, "a channel of its own sends no link messages");
	before = link_msgs(self);
	ASSERT_LE(0, before);
	for (n = 0; n < OPENS; n++)
		ASSERT_TRUE(connect_one(self)) TH_LOG("channel %u: %s", n, why);
	after = link_msgs(self);
	EXPECT_EQ(2 * OPENS, after - before);
	ASSERT_TRUE(stream(self->b, self->b_id, self->a, self->a_id, 4, 0, 20,
			   3000)) TH_LOG("%s", why);
	ASSERT_TRUE(stream(self->a, self->a_id, self->b, self->b_id, 5, 0, 20,
			   3000)) TH_LOG("%s", why);
	EXPECT_TRUE(end_is(self->a, self->a_id, BLOCK, 1)) TH_LOG("%s", why);
	EXPECT_TRUE(end_is(self->b, self->b_id, BLOCK, 1)) TH_LOG("%s", why);
}

/*
 * The first message makes the receiver's block (lease 1) and arrives
 * whole, from lap 0 of the new block; the sender's own block is still
 * not made, since nothing came its way.
 */
TEST_F(lease, first_message_arrives)
{
	ASSERT_TRUE(connect_one(self)) TH_LOG("%s", why);
	/* Message 5 of the sizes: 1000 bytes. */
	ASSERT_TRUE(stream(self->b, self->b_id, self->a, self->a_id, 0, 5, 1,
			   1000)) TH_LOG("%s", why);
	EXPECT_TRUE(end_is(self->a, self->a_id, BLOCK, 1)) TH_LOG("%s", why);
	EXPECT_TRUE(end_is(self->b, self->b_id, 0, 0)) TH_LOG("%s", why);
}

/*
 * Sends taken before any lease wait for it, and go in order: a burst of
 * more than a block, all sent before the receiver looks (as far as the
 * send queue and the send area take them), then checked in order.
 */
TEST_F(lease, burst_before_the_grant)
{
	ASSERT_TRUE(connect_one(self)) TH_LOG("%s", why);
	ASSERT_TRUE(stream(self->b, self->b_id, self->a, self->a_id, 1, 0, 80,
			   2000)) TH_LOG("%s", why);
	EXPECT_TRUE(end_is(self->a, self->a_id, BLOCK, 1)) TH_LOG("%s", why);
}

/* Many messages each way: both blocks leased once, wrapped many times. */
TEST_F(lease, many_both_ways)
{
	int max;

	ASSERT_TRUE(connect_one(self)) TH_LOG("%s", why);
	max = rmsg_chan_max_msg(self->b, self->b_id);
	ASSERT_GT(max, 0);
	if (max > BLOCK / 4)
		max = BLOCK / 4;
	ASSERT_TRUE(stream(self->b, self->b_id, self->a, self->a_id, 2, 0,
			   MANY, max)) TH_LOG("%s", why);
	ASSERT_TRUE(stream(self->a, self->a_id, self->b, self->b_id, 3, 0,
			   MANY, max)) TH_LOG("%s", why);
	EXPECT_TRUE(end_is(self->a, self->a_id, BLOCK, 1)) TH_LOG("%s", why);
	EXPECT_TRUE(end_is(self->b, self->b_id, BLOCK, 1)) TH_LOG("%s", why);
	/* And on, after both leases stand. */
	ASSERT_TRUE(stream(self->b, self->b_id, self->a, self->a_id, 2, MANY,
			   MANY, max)) TH_LOG("%s", why);
	EXPECT_TRUE(end_is(self->a, self->a_id, BLOCK, 1)) TH_LOG("%s", why);
}

/*
 * A message sent just before the sender closes is still read after the
 * receiver saw the channel end: the channel's last block stays behind
 * its mapping (struct rmsg_block_view), though the channel freed it.
 */
TEST_F(lease, read_after_close)
{
	long deadline;
	unsigned char out[1000], in[1000];
	struct rmsg_event ev;
	bool closed = false;
	unsigned int i;
	int ret;

	ASSERT_TRUE(connect_one(self)) TH_LOG("%s", why);
	for (i = 0; i < sizeof(out); i++)
		out[i] = pattern(5, 0, i);
	ASSERT_EQ(0, rmsg_msg_send(self->b, self->b_id, out, sizeof(out), 0,
				   1));
	/* Orderly: what was sent is written before the CLOSE. */
	ASSERT_EQ(0, rmsg_chan_close(self->b, self->b_id, 0));
	deadline = rmsg_now_ms() + TIMEOUT_MS;
	while (!closed) {
		ASSERT_LT(rmsg_now_ms(), deadline) TH_LOG("no CLOSED at a");
		if (rmsg_ep_progress(self->a, &ev, 1) == 1 &&
		    ev.kind == RMSG_CQE_CLOSED && ev.channel == self->a_id) {
			EXPECT_EQ(0, ev.res);
			closed = true;
		}
		rmsg_ep_progress(self->b, NULL, 0);
		usleep(1000);
	}
	/* The channel's end has freed its block by now, or soon will. */
	usleep(100 * 1000);
	ret = rmsg_msg_recv(self->a, self->a_id, in, sizeof(in), 0);
	ASSERT_EQ((int)sizeof(in), ret);
	EXPECT_EQ(0, memcmp(in, out, sizeof(in)));
}

/*
 * Messages @first to @first + @n - 1 of direction @dir, sent before (by
 * send_burst()), read from @rx's @rx_id and checked byte for byte.
 */
static bool recv_checked(struct rmsg_ep *rx, unsigned int rx_id,
			 unsigned int dir, unsigned int first, unsigned int n,
			 unsigned int max)
{
	long deadline = rmsg_now_ms() + TIMEOUT_MS * 3 * rmsg_test_slow();
	static unsigned char in[BLOCK];
	unsigned int seq;
	int ret;

	for (seq = first; seq != first + n; seq++) {
		do {
			ret = rmsg_msg_recv(rx, rx_id, in, sizeof(in), 0);
			if (ret == -EAGAIN)
				usleep(500);
		} while (ret == -EAGAIN && rmsg_now_ms() < deadline);
		if (!message_is(in, ret, dir, seq, max))
			return false;
	}
	return true;
}

/* Messages @first.. of direction @dir sent, none read; false on an error. */
static bool send_burst(struct rmsg_ep *tx, unsigned int tx_id,
		       unsigned int dir, unsigned int first, unsigned int n,
		       unsigned int max)
{
	static unsigned char out[BLOCK];
	unsigned int seq, i, len;
	int ret;

	for (seq = first; seq != first + n; seq++) {
		len = size_of(seq, max);
		for (i = 0; i < len; i++)
			out[i] = pattern(dir, seq, i);
		ret = rmsg_msg_send(tx, tx_id, out, len,
				    RMSG_SEND_SKIP_SUCCESS, seq);
		if (ret) {
			snprintf(why, sizeof(why), "send %u: %d", seq, ret);
			return false;
		}
	}
	return true;
}

/*
 * Break @id's connection (on the link variant the link's: the QP is the
 * carrier's) and wait until both ends are OPEN again, each with more
 * repairs than before. -errno of the fault, or -ETIMEDOUT.
 */
static int break_and_wait(lease_fixture *self, struct rmsg_ep *ep,
			  unsigned int id)
{
	struct rmsg_fault f = { .channel = id, .kind = RMSG_FAULT_QP_ERROR };
	struct rmsg_chan_info a, b;
	__u32 a_was, b_was;
	long deadline;

	if (!chan_info(self->a, self->a_id, &a) ||
	    !chan_info(self->b, self->b_id, &b))
		return -ENOENT;
	a_was = a.repairs;
	b_was = b.repairs;
	/* Endpoint 0: the caller's own. */
	if (ioctl(rmsg_ep_fd(ep), RMSG_IOC_FAULT, &f))
		return -errno;
	deadline = rmsg_now_ms() + TIMEOUT_MS * 3 * rmsg_test_slow();
	for (;;) {
		/* The library learns of the repair from the events. */
		rmsg_ep_progress(self->a, NULL, 0);
		rmsg_ep_progress(self->b, NULL, 0);
		if (chan_info(self->a, self->a_id, &a) &&
		    chan_info(self->b, self->b_id, &b) &&
		    a.state == RMSG_CHAN_INFO_OPEN &&
		    b.state == RMSG_CHAN_INFO_OPEN &&
		    a.repairs > a_was && b.repairs > b_was)
			return 0;
		if (rmsg_now_ms() > deadline) {
			snprintf(why, sizeof(why),
				 "not repaired: a state %u repairs %u (was %u), b state %u repairs %u (was %u)",
				 a.state, a.repairs, a_was, b.state, b.repairs,
				 b_was);
			return -ETIMEDOUT;
		}
		usleep(5000);
	}
}

/*
 * Repaired before either side leased: no block, no shadow, nothing to
 * write again. The first message after it makes the receiver's block
 * and arrives; the other end still holds none.
 */
TEST_F(lease, repaired_before_any_lease)
{
	ASSERT_TRUE(connect_one(self)) TH_LOG("%s", why);
	ASSERT_EQ(0, break_and_wait(self, self->b, self->b_id))
		TH_LOG("%s", why);
	EXPECT_TRUE(end_is(self->a, self->a_id, 0, 0)) TH_LOG("%s", why);
	ASSERT_TRUE(stream(self->b, self->b_id, self->a, self->a_id, 6, 0, 40,
			   2000)) TH_LOG("%s", why);
	EXPECT_TRUE(end_is(self->a, self->a_id, BLOCK, 1)) TH_LOG("%s", why);
	EXPECT_TRUE(end_is(self->b, self->b_id, 0, 0)) TH_LOG("%s", why);
}

/*
 * With both leases held and records sent but not read, from either end:
 * the records the peer's block lacks are written again under the
 * lease's key on the new connection, those it has are not written
 * twice, and the streams go on in order; neither end leases again.
 */
TEST_F(lease, repaired_with_leases_held)
{
	unsigned int round, sent = 0;
	struct rmsg_ep *faulty;
	unsigned int faulty_id;
	int max;

	ASSERT_TRUE(connect_one(self)) TH_LOG("%s", why);
	max = rmsg_chan_max_msg(self->b, self->b_id);
	ASSERT_GT(max, 0);
	if (max > BLOCK / 8)
		max = BLOCK / 8;
	ASSERT_TRUE(stream(self->b, self->b_id, self->a, self->a_id, 7, 0, 50,
			   max)) TH_LOG("%s", why);
	ASSERT_TRUE(stream(self->a, self->a_id, self->b, self->b_id, 8, 0, 50,
			   max)) TH_LOG("%s", why);
	sent = 50;
	for (round = 0; round < 4; round++) {
		faulty = round % 2 ? self->a : self->b;
		faulty_id = round % 2 ? self->a_id : self->b_id;
		ASSERT_EQ(0, break_and_wait(self, faulty, faulty_id))
			TH_LOG("round %u: %s", round, why);
		ASSERT_TRUE(stream(self->b, self->b_id, self->a, self->a_id,
				   7, sent, 200, max))
			TH_LOG("round %u: %s", round, why);
		ASSERT_TRUE(stream(self->a, self->a_id, self->b, self->b_id,
				   8, sent, 200, max))
			TH_LOG("round %u: %s", round, why);
		sent += 200;
	}
	EXPECT_TRUE(end_is(self->a, self->a_id, BLOCK, 1)) TH_LOG("%s", why);
	EXPECT_TRUE(end_is(self->b, self->b_id, BLOCK, 1)) TH_LOG("%s", why);
}

/*
 * Records sent, not read, across the fault, and more sent while the
 * channel is repaired: all arrive once and in order. The records left in
 * the receiver's block stay there; the sender writes again only what
 * the block lacks.
 */
TEST_F(lease, unread_records_across_a_repair)
{
	ASSERT_TRUE(connect_one(self)) TH_LOG("%s", why);
	ASSERT_TRUE(stream(self->b, self->b_id, self->a, self->a_id, 9, 0, 1,
			   1000)) TH_LOG("%s", why);
	ASSERT_TRUE(send_burst(self->b, self->b_id, 9, 1, 10, 1000))
		TH_LOG("%s", why);
	ASSERT_EQ(0, break_and_wait(self, self->b, self->b_id))
		TH_LOG("%s", why);
	ASSERT_TRUE(send_burst(self->b, self->b_id, 9, 11, 10, 1000))
		TH_LOG("%s", why);
	ASSERT_TRUE(recv_checked(self->a, self->a_id, 9, 1, 20, 1000))
		TH_LOG("%s", why);
	ASSERT_TRUE(stream(self->b, self->b_id, self->a, self->a_id, 9, 21,
			   100, 1000)) TH_LOG("%s", why);
	EXPECT_TRUE(end_is(self->a, self->a_id, BLOCK, 1)) TH_LOG("%s", why);
}

/*
 * The fault comes while the first lease is on its way: a burst sent,
 * then the connection broken at once, a little later each round, so
 * that the ASK, the block's making or the GRANT is cut off. Whatever
 * was lost, the READYs of the new connection settle it: the burst
 * arrives whole and in order under one lease.
 */
TEST_F(lease, repaired_while_the_lease_is_asked)
{
	unsigned int round;

	for (round = 0; round < 6; round++) {
		ASSERT_TRUE(connect_one(self))
			TH_LOG("round %u: %s", round, why);
		ASSERT_TRUE(send_burst(self->b, self->b_id, 10 + round, 0, 30,
				       1000)) TH_LOG("round %u: %s", round, why);
		usleep(round * 700);
		ASSERT_EQ(0, break_and_wait(self, round % 2 ? self->a : self->b,
					    round % 2 ? self->a_id :
							self->b_id))
			TH_LOG("round %u: %s", round, why);
		ASSERT_TRUE(recv_checked(self->a, self->a_id, 10 + round, 0,
					 30, 1000))
			TH_LOG("round %u: %s", round, why);
		ASSERT_TRUE(stream(self->b, self->b_id, self->a, self->a_id,
				   10 + round, 30, 30, 1000))
			TH_LOG("round %u: %s", round, why);
		EXPECT_TRUE(end_is(self->a, self->a_id, BLOCK, 1))
			TH_LOG("round %u: %s", round, why);
		EXPECT_TRUE(end_is(self->b, self->b_id, 0, 0))
			TH_LOG("round %u: %s", round, why);
	}
}

/* @ch's repairs at @ep, as the channel list counts them; -1 if missing. */
static long repairs_of(struct rmsg_ep *ep, unsigned int ch)
{
	struct rmsg_chan_info info;

	return chan_info(ep, ch, &info) ? (long)info.repairs : -1;
}

/*
 * Endpoints with an arrival summary, whose peers set their channel's
 * bytes in it after records (rmsg_data_hint(), through the block's MR),
 * and messages one way only: b holds a lease on a's block, a none on
 * b's, which has none. A fault then repairs each end once; the end
 * without a lease writes no hint into the block it has no key for (a
 * remote access error there broke the new connection, and the link's
 * with it, again and again), and both ways carry after.
 */
TEST_F(lease, one_way_with_a_summary_repaired_once)
{
	struct rmsg_ep_setup p = {
		.sq_entries = 256,
		.cq_entries = 2048,
		.flags = RMSG_EP_F_SUMMARY,
		.send_area_size = RMSG_LIB_SEND_AREA,
	};
	long a_was, b_was;

	rmsg_ep_drop(&self->a);
	rmsg_ep_drop(&self->b);
	ASSERT_EQ(0, rmsg_ep_open_setup(&self->a, &p));
	p.flags = RMSG_EP_F_SUMMARY;
	ASSERT_EQ(0, rmsg_ep_open_setup(&self->b, &p));
	ASSERT_EQ(0, rmsg_ep_listen(self->a, (struct sockaddr *)&self->addr,
				    sizeof(self->addr), 0xa0, 0));
	ASSERT_TRUE(connect_one(self)) TH_LOG("%s", why);
	ASSERT_TRUE(stream(self->b, self->b_id, self->a, self->a_id, 16, 0, 30,
			   1000)) TH_LOG("%s", why);
	EXPECT_TRUE(end_is(self->b, self->b_id, 0, 0)) TH_LOG("%s", why);
	a_was = repairs_of(self->a, self->a_id);
	b_was = repairs_of(self->b, self->b_id);
	ASSERT_LE(0, a_was);
	ASSERT_LE(0, b_was);
	ASSERT_EQ(0, break_and_wait(self, self->b, self->b_id))
		TH_LOG("%s", why);
	ASSERT_TRUE(stream(self->b, self->b_id, self->a, self->a_id, 16, 30,
			   30, 1000)) TH_LOG("%s", why);
	ASSERT_TRUE(stream(self->a, self->a_id, self->b, self->b_id, 17, 0, 30,
			   1000)) TH_LOG("%s", why);
	/* Quiet for a while: no repair after the one the fault asked for. */
	usleep(500 * 1000);
	rmsg_ep_progress(self->a, NULL, 0);
	rmsg_ep_progress(self->b, NULL, 0);
	EXPECT_EQ(a_was + 1, repairs_of(self->a, self->a_id));
	EXPECT_EQ(b_was + 1, repairs_of(self->b, self->b_id));
}

/* With the parameter off, a channel holds its block from the start. */
TEST_F(lease, off_holds_the_block)
{
	ASSERT_EQ(0, rmsg_write_param("lease_blocks", "0"));
	ASSERT_TRUE(connect_one(self)) TH_LOG("%s", why);
	EXPECT_TRUE(end_is(self->a, self->a_id, BLOCK, 0)) TH_LOG("%s", why);
	EXPECT_TRUE(end_is(self->b, self->b_id, BLOCK, 0)) TH_LOG("%s", why);
	ASSERT_TRUE(stream(self->b, self->b_id, self->a, self->a_id, 4, 0, 100,
			   1000)) TH_LOG("%s", why);
}

int main(int argc, char **argv)
{
	return rmsg_test_main(argc, argv);
}
