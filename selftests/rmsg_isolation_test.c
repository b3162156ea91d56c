// SPDX-License-Identifier: GPL-2.0
/*
 * What a peer that is not rmsg can do to a listener's endpoint. Isolation
 * between channels on one device: a QP may reach only the memory its own
 * channel was granted. Control messages nobody asked for make no events.
 *
 * The attacker is anyone who reaches a listener: here a plain verbs program
 * (librdmacm, libibverbs) that speaks rmsg's hello itself and opens two
 * channels, X and Y, to an rmsg endpoint. Each ACCEPT hello tells it where
 * its channel's receive block is (address and rkey). Through Y's own
 * connection an RDMA WRITE into Y's block goes through (the keys are right,
 * so the test can fail); through X's connection, with Y's key, it must be
 * refused by the device (remote access error) and Y's block left as it
 * was: every channel has its own protection domain. (The program sends
 * READY itself, so that the channels open and Y's block can be mapped.) The hello must not
 * carry a bus address either: blocks are addressed from 0.
 */
#include <endian.h>
#include <fcntl.h>
#include <stdint.h>
#include <sys/ioctl.h>
#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include "kselftest_harness.h"
#include "rmsg_test.h"
#include "rmsg_wire.h"

#define EVENT_TIMEOUT_MS	20000
#define BLOCK			32768
#define PROBE_OFF		4096
#define NRECV			4

/* One raw connection to the rmsg listener: the attacker's end. */
struct raw_conn {
	struct rdma_event_channel *evch;
	struct rdma_cm_id *id;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	unsigned char buf[(NRECV + 1) * 64 + BLOCK];
	struct rmsg_hello peer;		/* the ACCEPT hello */
};

static int next_cm_event(struct raw_conn *c, enum rdma_cm_event_type want,
			 struct rmsg_hello *hello)
{
	struct pollfd p = { .fd = c->evch->fd, .events = POLLIN };
	struct rdma_cm_event *ev;
	int ret;

	if (poll(&p, 1, EVENT_TIMEOUT_MS) != 1)
		return -ETIMEDOUT;
	if (rdma_get_cm_event(c->evch, &ev))
		return -errno;
	ret = ev->event == want ? 0 : -EPROTO;
	if (!ret && hello)
		ret = rmsg_hello_decode(hello, ev->param.conn.private_data,
					ev->param.conn.private_data_len);
	if (ev->event != want)
		ksft_print_msg("rdma_cm event %s (%d), status %d, wanted %s\n",
			       rdma_event_str(ev->event), ev->event,
			       ev->status, rdma_event_str(want));
	rdma_ack_cm_event(ev);
	return ret;
}

/*
 * The next completion of @c's CQ with a wr_id of at least @min_id (our
 * sends; receives are 0 to NRECV - 1, and what rmsg sends after it opened
 * is skipped): its status, or -ETIMEDOUT.
 */
static int next_wc(struct raw_conn *c, struct ibv_wc *wc, uint64_t min_id)
{
	long deadline = rmsg_now_ms() + EVENT_TIMEOUT_MS;
	int n;

	for (;;) {
		n = ibv_poll_cq(c->cq, 1, wc);
		if (n < 0)
			return -EIO;
		if (n && wc->wr_id >= min_id)
			return (int)wc->status;
		if (rmsg_now_ms() > deadline)
			return -ETIMEDOUT;
		if (!n)
			usleep(1000);
	}
}

/*
 * Connect to @sin as a new rmsg peer (channel @chan of incarnation
 * @inc) and wait for the channel's READY: by then its block is
 * registered. 0 or a negative errno.
 */
/*
 * Dial the listener at @sin with @hello (its block fields are filled in
 * here). Returns 0 once the connection is established and the ACCEPT
 * hello is in @c->peer, or what went wrong: -EPROTO for another rdma_cm
 * event, such as a reject (it is printed).
 */
static int raw_dial(struct raw_conn *c, struct sockaddr_in *sin,
		    struct rmsg_hello hello)
{
	struct ibv_qp_init_attr qa = {
		.cap = { .max_send_wr = 8, .max_recv_wr = NRECV,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.qp_type = IBV_QPT_RC,
	};
	struct rdma_conn_param param = {
		.responder_resources = 1,
		.initiator_depth = 1,
		.retry_count = 1,
		.rnr_retry_count = 7,
	};
	struct rmsg_wire_hello wire;
	struct ibv_recv_wr rwr, *bad;
	struct ibv_sge sge;
	struct ibv_wc wc;
	int i, ret;

	c->evch = rdma_create_event_channel();
	if (!c->evch)
		return -errno;
	if (rdma_create_id(c->evch, &c->id, NULL, RDMA_PS_TCP))
		return -errno;
	if (rdma_resolve_addr(c->id, NULL, (struct sockaddr *)sin, 2000))
		return -errno;
	ret = next_cm_event(c, RDMA_CM_EVENT_ADDR_RESOLVED, NULL);
	if (ret)
		return ret;
	if (rdma_resolve_route(c->id, 2000))
		return -errno;
	ret = next_cm_event(c, RDMA_CM_EVENT_ROUTE_RESOLVED, NULL);
	if (ret)
		return ret;
	c->pd = ibv_alloc_pd(c->id->verbs);
	c->cq = c->pd ? ibv_create_cq(c->id->verbs, 16, NULL, NULL, 0) : NULL;
	c->mr = c->cq ? ibv_reg_mr(c->pd, c->buf, sizeof(c->buf),
				   IBV_ACCESS_LOCAL_WRITE |
				   IBV_ACCESS_REMOTE_WRITE) : NULL;
	if (!c->mr)
		return -ENOMEM;
	qa.send_cq = c->cq;
	qa.recv_cq = c->cq;
	if (rdma_create_qp(c->id, c->pd, &qa))
		return -errno;
	for (i = 0; i < NRECV; i++) {
		sge.addr = (uintptr_t)c->buf + i * 64;
		sge.length = 64;
		sge.lkey = c->mr->lkey;
		memset(&rwr, 0, sizeof(rwr));
		rwr.wr_id = i;
		rwr.sg_list = &sge;
		rwr.num_sge = 1;
		if (ibv_post_recv(c->id->qp, &rwr, &bad))
			return -EIO;
	}
	/* Our own block, never written to: the peer waits for our READY. */
	hello.block_addr = (uintptr_t)c->buf + (NRECV + 1) * 64;
	hello.block_rkey = c->mr->rkey;
	rmsg_hello_encode(&wire, &hello);
	param.private_data = &wire;
	param.private_data_len = sizeof(wire);
	if (rdma_connect(c->id, &param))
		return -errno;
	ret = next_cm_event(c, RDMA_CM_EVENT_ESTABLISHED, &c->peer);
	if (ret)
		return ret;
	/* READY comes after the REG_MR of the block on the same queue. */
	ret = next_wc(c, &wc, 0);
	if (ret)
		return ret < 0 ? ret : -EIO;
	if (wc.opcode != IBV_WC_RECV)
		return -EPROTO;
	return 0;
}

/* A first connection, channel @chan of endpoint incarnation @inc. */
static int raw_connect(struct raw_conn *c, struct sockaddr_in *sin,
		       uint64_t inc, uint32_t chan)
{
	struct rmsg_hello hello = {
		.kind = RMSG_HELLO_CONNECT,
		.incarnation = inc,
		.channel = chan,
		.peer_channel = RMSG_WIRE_NO_CHANNEL,
		.block_size = BLOCK,
	};

	return raw_dial(c, sin, hello);
}

/*
 * Post one signalled send WR of @len bytes at @src (in @c's buffer): a
 * SEND, or an RDMA WRITE to @addr/@rkey. Its completion's status.
 */
static int raw_post(struct raw_conn *c, enum ibv_wr_opcode op, void *src,
		    uint32_t len, uint64_t addr, uint32_t rkey)
{
	struct ibv_send_wr wr, *bad;
	struct ibv_sge sge;
	struct ibv_wc wc;

	sge.addr = (uintptr_t)src;
	sge.length = len;
	sge.lkey = c->mr->lkey;
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 100;
	wr.opcode = op;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.wr.rdma.remote_addr = addr;
	wr.wr.rdma.rkey = rkey;
	if (ibv_post_send(c->id->qp, &wr, &bad))
		return -EIO;
	return next_wc(c, &wc, 100);
}

/* Send rmsg a control message of @type: its completion's status. */
static int raw_ctrl(struct raw_conn *c, __u8 type)
{
	struct rmsg_wire_ctrl *msg = (void *)(c->buf + NRECV * 64);

	rmsg_ctrl_encode(msg, type, 0);
	return raw_post(c, IBV_WR_SEND, msg, sizeof(*msg), 0, 0);
}

/* Tell the rmsg side our block is registered (READY): it opens. */
static int raw_ready(struct raw_conn *c)
{
	return raw_ctrl(c, RMSG_CTRL_READY);
}

/*
 * Connect @c as channel 1 of incarnation @inc, say READY, and wait for
 * the listener's endpoint @ep to report the channel ACCEPTED: 0, or what
 * went wrong.
 */
static int raw_open(struct raw_conn *c, struct sockaddr_in *sin,
		    struct rmsg_ep *ep, uint64_t inc)
{
	struct rmsg_cqe cqe;
	int ret;

	ret = raw_connect(c, sin, inc, 1);
	if (ret)
		return ret;
	if (raw_ready(c) != IBV_WC_SUCCESS)
		return -EIO;
	ret = rmsg_next_cqe(ep, &cqe, EVENT_TIMEOUT_MS);
	if (ret)
		return ret;
	return RMSG_CQE_KIND(cqe.flags) == RMSG_CQE_ACCEPTED ? 0 : -EPROTO;
}

/* RDMA WRITE 8 bytes of 0xa5 through @via into @addr/@rkey: its status. */
static int raw_write(struct raw_conn *via, uint64_t addr, uint32_t rkey)
{
	unsigned char *src = via->buf + NRECV * 64;

	memset(src, 0xa5, 8);
	return raw_post(via, IBV_WR_RDMA_WRITE, src, 8, addr, rkey);
}

static void raw_close(struct raw_conn *c)
{
	if (c->id && c->id->qp)
		rdma_destroy_qp(c->id);
	if (c->mr)
		ibv_dereg_mr(c->mr);
	if (c->cq)
		ibv_destroy_cq(c->cq);
	if (c->pd)
		ibv_dealloc_pd(c->pd);
	if (c->id)
		rdma_destroy_id(c->id);
	if (c->evch)
		rdma_destroy_event_channel(c->evch);
}

FIXTURE(iso) {
	struct rmsg_ep *a;
	struct sockaddr_in addr;
	struct raw_conn *x, *y;
	bool opened;
};

FIXTURE_SETUP(iso)
{
	if (!rmsg_local_addr(&self->addr, 0))
		SKIP(rmsg_setup_skipped(_metadata); return,
		     "RMSG_LOCAL_ADDR not set: not run by rmsg-vm");
	ASSERT_EQ(0, rmsg_ep_open(&self->a, 16, 64));
	self->opened = true;
	ASSERT_EQ(0, rmsg_ep_listen(self->a, (struct sockaddr *)&self->addr,
				    sizeof(self->addr), 0xa0, BLOCK));
	self->x = calloc(1, sizeof(*self->x));
	self->y = calloc(1, sizeof(*self->y));
	ASSERT_NE(NULL, self->x);
	ASSERT_NE(NULL, self->y);
}

FIXTURE_TEARDOWN(iso)
{
	if (self->x)
		raw_close(self->x);
	if (self->y)
		raw_close(self->y);
	free(self->x);
	free(self->y);
	if (self->opened)
		rmsg_ep_drop(&self->a);
}

/* The block of the accepted channel the ACCEPTED event names, mapped. */
static const unsigned char *map_block(struct rmsg_ep *ep, __u32 channel)
{
	void *p = mmap(NULL, BLOCK, PROT_READ, MAP_SHARED, rmsg_ep_fd(ep),
		       RMSG_OFF_BLOCK(channel));

	return p == MAP_FAILED ? NULL : p;
}

TEST_F_TIMEOUT(iso, other_channels_key_is_refused, 180)
{
	const unsigned char *yblock;
	uint64_t inc = ((uint64_t)getpid() << 20) | 1;
	struct rmsg_cqe cqe;
	unsigned int i;
	int ret;

	ASSERT_EQ(0, raw_connect(self->y, &self->addr, inc, 1));
	ASSERT_EQ(0, raw_connect(self->x, &self->addr, inc, 2));
	/* Blocks are addressed from 0, not by a bus address. */
	EXPECT_EQ(0, self->y->peer.block_addr);
	EXPECT_EQ(0, self->x->peer.block_addr);
	EXPECT_NE(self->x->peer.block_rkey, self->y->peer.block_rkey);

	/* Both open on the listener's side once they hear our READY. */
	ASSERT_EQ(IBV_WC_SUCCESS, raw_ready(self->y));
	ASSERT_EQ(IBV_WC_SUCCESS, raw_ready(self->x));
	for (i = 0; i < 2; i++) {
		ASSERT_EQ(0, rmsg_next_cqe(self->a, &cqe, EVENT_TIMEOUT_MS));
		ASSERT_EQ(RMSG_CQE_ACCEPTED, RMSG_CQE_KIND(cqe.flags));
	}
	/* The ACCEPT hello names the channel on the listener's side. */
	yblock = map_block(self->a, self->y->peer.channel);
	ASSERT_NE(NULL, yblock);

	/* The way in is right: through Y's own connection. */
	ASSERT_EQ(IBV_WC_SUCCESS,
		  raw_write(self->y, self->y->peer.block_addr + PROBE_OFF,
			    self->y->peer.block_rkey));
	for (i = 0; i < 8; i++)
		ASSERT_EQ(0xa5, yblock[PROBE_OFF + i]);
	/* Another channel's QP, with Y's key: refused, nothing written. */
	ret = raw_write(self->x, self->y->peer.block_addr + PROBE_OFF + 64,
			self->y->peer.block_rkey);
	EXPECT_NE(IBV_WC_SUCCESS, ret) TH_LOG("X wrote into Y's block");
	TH_LOG("through X with Y's key: %s",
	       ret < 0 ? strerror(-ret) : ibv_wc_status_str(ret));
	for (i = 0; i < 8; i++)
		EXPECT_EQ(0, yblock[PROBE_OFF + 64 + i]);
	munmap((void *)yblock, BLOCK);
}

/*
 * A WAKE answers an ARM; one the program did not arm for is dropped. It
 * used to make a READABLE event each, and with the completion ring full
 * each went on the kernel's list of kept events: a peer could grow the
 * kernel's memory at will.
 */
TEST_F_TIMEOUT(iso, unasked_wakes_make_no_events, 180)
{
	uint64_t inc = ((uint64_t)getpid() << 20) | 2;
	struct rmsg_ep_stats st;
	struct rmsg_cqe cqe;
	unsigned int i;
	long deadline;

	ASSERT_EQ(0, raw_open(self->y, &self->addr, self->a, inc));
	/* More than the 64-entry ring: one at a time, each taken. */
	for (i = 0; i < 200; i++)
		ASSERT_EQ(IBV_WC_SUCCESS, raw_ctrl(self->y, RMSG_CTRL_WAKE))
			TH_LOG("WAKE %u", i);
	/*
	 * A send's success says a's device received the WAKE, not that a's
	 * kernel has handled its completion yet: on a busy host the last
	 * few are still on their way (197 of 200 seen once). Wait for them.
	 */
	deadline = rmsg_now_ms() + EVENT_TIMEOUT_MS;
	do {
		memset(&st, 0, sizeof(st));
		ASSERT_EQ(0, ioctl(rmsg_ep_fd(self->a), RMSG_IOC_EP_STATS,
				   &st));
		if (st.wakes_in >= 200)
			break;
		usleep(10000);
	} while (rmsg_now_ms() < deadline);
	EXPECT_EQ(200, st.wakes_in);
	EXPECT_EQ(0, st.events_dropped);
	EXPECT_EQ(-ETIMEDOUT, rmsg_next_cqe(self->a, &cqe, 1000))
		TH_LOG("an event of kind %u", RMSG_CQE_KIND(cqe.flags));
}

/*
 * A RECONNECT that names an open channel but comes from another endpoint
 * (another incarnation) is not that channel's peer: it is refused, and the
 * channel stays as it was. A stranger who reaches the listener could
 * otherwise end any accepted channel by guessing its small id.
 */
TEST_F_TIMEOUT(iso, strangers_reconnect_leaves_channel_alone, 180)
{
	uint64_t inc = ((uint64_t)getpid() << 20) | 3;
	struct rmsg_hello reconnect = {
		.kind = RMSG_HELLO_RECONNECT,
		.incarnation = inc + 1,
		.channel = 1,
		.epoch = 5,
		.block_size = BLOCK,
	};
	const unsigned char *yblock;
	struct rmsg_cqe cqe;
	unsigned int i;
	int ret;

	ASSERT_EQ(0, raw_open(self->y, &self->addr, self->a, inc));

	/* Y's channel id on the listener's side, as its ACCEPT said. */
	reconnect.peer_channel = self->y->peer.channel;
	ret = raw_dial(self->x, &self->addr, reconnect);
	EXPECT_EQ(-EPROTO, ret) TH_LOG("the stranger's RECONNECT: %d", ret);

	/* No event: the channel neither ended nor went into a repair. */
	ret = rmsg_next_cqe(self->a, &cqe, 2000);
	EXPECT_EQ(-ETIMEDOUT, ret)
		TH_LOG("an event of kind %u, res %d", RMSG_CQE_KIND(cqe.flags),
		       cqe.res);
	/* And Y's connection still carries writes into its block. */
	yblock = map_block(self->a, self->y->peer.channel);
	ASSERT_NE(NULL, yblock);
	ASSERT_EQ(IBV_WC_SUCCESS,
		  raw_write(self->y, self->y->peer.block_addr + PROBE_OFF,
			    self->y->peer.block_rkey));
	for (i = 0; i < 8; i++)
		EXPECT_EQ(0xa5, yblock[PROBE_OFF + i]);
	munmap((void *)yblock, BLOCK);
}

/*
 * A program is not a kernel: a hello that claims to carry a link
 * (RMSG_HELLO_F_LINK) is refused, and the listener makes no channel of it.
 * Then the same peer, as a channel, is taken.
 */
TEST_F_TIMEOUT(iso, carrier_hello_is_refused, 180)
{
	uint64_t inc = ((uint64_t)getpid() << 20) | 5;
	struct rmsg_hello carrier = {
		.kind = RMSG_HELLO_CONNECT,
		.flags = RMSG_HELLO_F_LINK,
		.incarnation = inc,
		.channel = 1,
		.peer_channel = RMSG_WIRE_NO_CHANNEL,
		.block_size = BLOCK,
	};
	struct rmsg_cqe cqe;
	int ret;

	ret = raw_dial(self->x, &self->addr, carrier);
	EXPECT_EQ(-EPROTO, ret) TH_LOG("the carrier's CONNECT: %d", ret);
	ret = rmsg_next_cqe(self->a, &cqe, 1000);
	EXPECT_EQ(-ETIMEDOUT, ret)
		TH_LOG("an event of kind %u, res %d", RMSG_CQE_KIND(cqe.flags),
		       cqe.res);
	ASSERT_EQ(0, raw_open(self->y, &self->addr, self->a, inc + 1));
}

/*
 * A SEND longer than any control message breaks the protocol: the channel
 * ends with EPROTO at once. (It used to count as a broken link, and the
 * accepting side waited the whole give-up timeout for a repair.)
 */
TEST_F_TIMEOUT(iso, oversized_control_message_ends_channel, 180)
{
	uint64_t inc = ((uint64_t)getpid() << 20) | 4;
	unsigned char *big = self->y->buf + NRECV * 64;
	struct rmsg_cqe cqe;

	ASSERT_EQ(0, raw_open(self->y, &self->addr, self->a, inc));

	memset(big, 0x5a, 256);
	raw_post(self->y, IBV_WR_SEND, big, 256, 0, 0);
	ASSERT_EQ(0, rmsg_next_cqe(self->a, &cqe, EVENT_TIMEOUT_MS));
	EXPECT_EQ(RMSG_CQE_CLOSED, RMSG_CQE_KIND(cqe.flags));
	EXPECT_EQ(-EPROTO, cqe.res);
}

int main(int argc, char **argv)
{
	return rmsg_test_main(argc, argv);
}
