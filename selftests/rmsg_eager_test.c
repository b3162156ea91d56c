// SPDX-License-Identifier: GPL-2.0
/*
 * The eager data path as the kernel offers it, driven through the raw rings
 * (no librmsg message functions): the send area, RMSG_OP_SEND, _CREDIT and
 * _ARM, and what lands in the peer's receive block, read with the protocol
 * core's own receiver (kernel/core/rmsg_vb.c). Every payload is checked byte
 * for byte. Each test runs twice: with the arrival flag written by the
 * device, and with the write-with-immediate fallback forced.
 */
#include <fcntl.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/mman.h>

#include "kselftest_harness.h"
#include "rmsg_test.h"
#include "rmsg_vb.h"

#define EVENT_TIMEOUT_MS	20000
/* stream_checked's messages one way, then back on the same channel */
#define STREAM_OUT		1500
#define STREAM_BACK		500
#define AREA			(256 * 1024)
#define SLOT			(20 * 1024)	/* above the largest message */
#define SLOTS			(AREA / SLOT)

struct side {
	struct rmsg_ep *ep;
	unsigned char *area;
	const unsigned char *block;
	unsigned int block_len;
	struct rmsg_vb_rx rx;
	unsigned int channel;
	unsigned int max_msg;
};

static int submit(struct rmsg_ep *ep)
{
	unsigned int n = rmsg_sq_submit(ep);

	return n ? rmsg_ep_enter(ep, n, 0, 0) : 0;
}

static bool queue(struct rmsg_ep *ep, __u8 op, unsigned int channel,
		  __u64 addr, __u32 len, __u64 user_data)
{
	struct rmsg_sqe *sqe = rmsg_sq_get_sqe(ep);

	if (!sqe)
		return false;
	sqe->opcode = op;
	sqe->channel = channel;
	sqe->addr = addr;
	sqe->len = len;
	sqe->user_data = user_data;
	return true;
}

static int open_side(struct side *s, unsigned int area)
{
	struct rmsg_ep_setup p = {
		.sq_entries = 256,
		.cq_entries = 1024,
		.send_area_size = area,
	};
	int ret = rmsg_ep_open_setup(&s->ep, &p);

	if (ret)
		return ret;
	if (!area)
		return 0;
	s->area = mmap(NULL, p.send_area_size, PROT_READ | PROT_WRITE,
		       MAP_SHARED, rmsg_ep_fd(s->ep), RMSG_OFF_SEND_AREA);
	return s->area == MAP_FAILED ? -errno : 0;
}

/* After CONNECTED or ACCEPTED: map the block, start the receiver. */
static int start_side(struct side *s, const struct rmsg_cqe *cqe)
{
	void *p;

	s->channel = cqe->channel;
	s->max_msg = cqe->aux;
	s->block_len = cqe->len;
	p = mmap(NULL, cqe->len, PROT_READ, MAP_SHARED, rmsg_ep_fd(s->ep),
		 RMSG_OFF_BLOCK(cqe->channel));
	if (p == MAP_FAILED)
		return -errno;
	s->block = p;
	return rmsg_vb_rx_init(&s->rx, cqe->len, 0, 0);
}

/* The byte at @i of message @seq: any loss, repeat or reorder shows. */
static unsigned char pattern(unsigned int seq, unsigned int i)
{
	return (unsigned char)(seq * 131 + i * 7 + (i >> 8));
}

static unsigned int size_of(unsigned int seq, unsigned int max)
{
	static const unsigned int sizes[] = { 0, 1, 15, 16, 17, 64, 255, 256,
					      257, 1000, 4096, 4097 };

	if (seq % 7 == 6)
		return max;
	if (seq % 2)
		return (seq * 2654435761U >> 7) % (max + 1);
	return sizes[seq / 2 % ARRAY_SIZE(sizes)] % (max + 1);
}

FIXTURE(eager) {
	struct side a;		/* listens */
	struct side b;		/* connects */
	struct sockaddr_in addr;
	bool opened;
	bool imm_set;
};

FIXTURE_VARIANT(eager) {
	bool imm;
};

FIXTURE_VARIANT_ADD(eager, flag) {
	.imm = false,
};

FIXTURE_VARIANT_ADD(eager, imm) {
	.imm = true,
};

/* force_imm_arrival, written directly: a shell per test was a fork. */
static int set_imm(bool on)
{
	return rmsg_write_param("force_imm_arrival", on ? "1" : "0");
}

FIXTURE_SETUP(eager)
{
	struct rmsg_cqe ca, cb;
	int ret;

	if (!rmsg_local_addr(&self->addr, 0))
		SKIP(rmsg_setup_skipped(_metadata); return,
		     "RMSG_LOCAL_ADDR not set: not run by rmsg-vm");
	ASSERT_EQ(0, set_imm(variant->imm));
	self->imm_set = true;
	ASSERT_EQ(0, open_side(&self->a, AREA));
	ASSERT_EQ(0, open_side(&self->b, AREA));
	self->opened = true;
	ret = rmsg_pair_up(self->a.ep, self->b.ep, &self->addr, &ca, &cb,
			   EVENT_TIMEOUT_MS);
	ASSERT_EQ(0, ret) TH_LOG("pairing: %s", strerror(-ret));
	ASSERT_EQ(0, start_side(&self->b, &cb));
	ASSERT_EQ(0, start_side(&self->a, &ca));
}

FIXTURE_TEARDOWN(eager)
{
	if (self->opened) {
		rmsg_ep_drop(&self->a.ep);
		rmsg_ep_drop(&self->b.ep);
	}
	if (self->imm_set)
		set_imm(false);
}

/* What the CONNECTED and ACCEPTED events say about the channel. */
TEST_F(eager, open_events_describe_the_channel)
{
	EXPECT_EQ(32768, self->a.block_len);
	EXPECT_EQ(32768, self->b.block_len);
	EXPECT_EQ(rmsg_vb_max_payload(32768), self->a.max_msg);
	EXPECT_EQ(rmsg_vb_max_payload(32768), self->b.max_msg);
	EXPECT_GE(SLOT, self->b.max_msg);
}

/*
 * Stream @n messages from @tx to @rx; the receiver releases as it reads,
 * returns credit when the core says it is due, and checks every byte.
 * Each SEND's CQE is checked too: once each, in order, res 0.
 */
static void stream(struct __test_metadata *_metadata, struct side *tx,
		   struct side *rx, unsigned int n)
{
	unsigned int sent = 0, completed = 0, received = 0, len, i;
	long deadline = rmsg_now_ms() + 120000;
	struct rmsg_vb_msg msg;
	struct rmsg_cqe cqe;
	const unsigned char *p;
	int ret;

	while (received < n) {
		ASSERT_GT(deadline, rmsg_now_ms())
			TH_LOG("stuck: sent %u completed %u received %u",
			       sent, completed, received);
		/* Keep SLOTS sends in flight; a slot is reused after its CQE. */
		while (sent < n && sent - completed < SLOTS) {
			len = size_of(sent, tx->max_msg);
			for (i = 0; i < len; i++)
				tx->area[sent % SLOTS * SLOT + i] =
					pattern(sent, i);
			if (!queue(tx->ep, RMSG_OP_SEND, tx->channel,
				   sent % SLOTS * SLOT, len, sent))
				break;
			sent++;
		}
		ASSERT_LE(0, submit(tx->ep));
		while (rmsg_take_cqe(tx->ep, &cqe)) {
			ASSERT_EQ(RMSG_CQE_OP, RMSG_CQE_KIND(cqe.flags));
			ASSERT_EQ(0, cqe.res) TH_LOG("send %llu",
						     cqe.user_data);
			ASSERT_EQ(completed, cqe.user_data);
			ASSERT_EQ(size_of(completed, tx->max_msg), cqe.len);
			ASSERT_EQ(completed % SLOTS * SLOT, cqe.aux);
			completed++;
		}
		while ((ret = rmsg_vb_rx_poll(&rx->rx, rx->block, &msg)) > 0) {
			ASSERT_EQ(size_of(received, tx->max_msg), msg.len)
				TH_LOG("message %u", received);
			p = rx->block + msg.off;
			for (i = 0; i < msg.len; i++)
				if (p[i] != pattern(received, i))
					break;
			ASSERT_EQ(msg.len, i) TH_LOG("message %u byte %u",
						     received, i);
			ASSERT_EQ(0, rmsg_vb_rx_release(&rx->rx, msg.end));
			received++;
		}
		ASSERT_EQ(0, ret) TH_LOG("the block broke the protocol");
		if (rmsg_vb_rx_credit_due(&rx->rx)) {
			ASSERT_TRUE(queue(rx->ep, RMSG_OP_CREDIT, rx->channel,
					  rmsg_vb_rx_advertise(&rx->rx), 0, 0));
			ASSERT_LE(0, submit(rx->ep));
		}
		/* CREDIT posts nothing when it works. */
		ASSERT_FALSE(rmsg_take_cqe(rx->ep, &cqe))
			TH_LOG("kind %u res %d", RMSG_CQE_KIND(cqe.flags),
			       cqe.res);
	}
	while (completed < n) {
		ASSERT_EQ(0, rmsg_next_cqe(tx->ep, &cqe, EVENT_TIMEOUT_MS))
			TH_LOG("send %u never completed", completed);
		ASSERT_EQ(0, cqe.res);
		ASSERT_EQ(completed, cqe.user_data);
		completed++;
	}
	EXPECT_EQ(0, rmsg_vb_rx_poll(&rx->rx, rx->block, &msg));
}

static void get_stats(struct __test_metadata *_metadata, struct side *s,
		      struct rmsg_ep_stats *st)
{
	memset(st, 0xff, sizeof(*st));
	ASSERT_EQ(0, ioctl(rmsg_ep_fd(s->ep), RMSG_IOC_EP_STATS, st));
}

/* Enough traffic to go round the 32 KiB block hundreds of times. */
TEST_F_TIMEOUT(eager, stream_checked, 300)
{
	struct rmsg_ep_stats sa, sb;

	stream(_metadata, &self->b, &self->a, STREAM_OUT);
	/* And back, on the same channel. */
	stream(_metadata, &self->a, &self->b, STREAM_BACK);

	get_stats(_metadata, &self->a, &sa);
	get_stats(_metadata, &self->b, &sb);
	EXPECT_EQ(STREAM_OUT, sb.sends);
	EXPECT_EQ(STREAM_BACK, sa.sends);
	EXPECT_LT(0, sb.wraps);
	EXPECT_LT(0, sb.writes_inline);
	/* Far fewer completions than messages: unsignalled writes. */
	EXPECT_GT(sb.sends / 4, sb.writes_signalled);
	/* Credit went back by message, and arrived. */
	EXPECT_LT(0, sa.credits_out);
	EXPECT_EQ(sa.credits_out, sb.credits_in);
	EXPECT_EQ(0, sa.bad_desc + sb.bad_desc + sa.bad_index + sb.bad_index);
	EXPECT_EQ(0, sa.events_dropped);
	/* Each side entered to submit (no poller): counted. */
	EXPECT_LT(0, sa.enters);
	EXPECT_LT(0, sb.enters);
	/* Nothing moved to another device. */
	EXPECT_EQ(0, sa.rekeys_out + sa.rekeyed_in);
	/* Who set the arrival flags: the device's write, or the kernel. */
	if (variant->imm || !rmsg_rxe0_ordered()) {
		/* One per record and per WRAP the peer wrote. */
		EXPECT_EQ(STREAM_OUT + sb.wraps, sa.imm_arrivals);
		EXPECT_EQ(STREAM_BACK + sa.wraps, sb.imm_arrivals);
	} else {
		EXPECT_EQ(0, sa.imm_arrivals + sb.imm_arrivals);
	}
	TH_LOG("b: %llu sends, %llu inline, %llu signalled, %llu wraps, %llu waits; a: %llu credits",
	       sb.sends, sb.writes_inline, sb.writes_signalled, sb.wraps,
	       sb.send_waits, sa.credits_out);
}

TEST_F(eager, send_errors)
{
	struct rmsg_cqe cqe;

	ASSERT_TRUE(queue(self->b.ep, RMSG_OP_SEND, self->b.channel + 100, 0,
			  1, 1));
	ASSERT_TRUE(queue(self->b.ep, RMSG_OP_SEND, self->b.channel,
			  AREA - 8, 9, 2));
	ASSERT_TRUE(queue(self->b.ep, RMSG_OP_SEND, self->b.channel,
			  ~0ULL - 4, 8, 3));
	ASSERT_TRUE(queue(self->b.ep, RMSG_OP_SEND, self->b.channel, 0,
			  self->b.max_msg + 1, 4));
	ASSERT_TRUE(queue(self->b.ep, RMSG_OP_CREDIT, self->b.channel,
			  1ULL << 32, 0, 5));
	ASSERT_TRUE(queue(self->b.ep, RMSG_OP_ARM, self->b.channel, 0, 1, 6));
	ASSERT_LE(0, submit(self->b.ep));
	/* A failed SEND's CQE carries its len and offset like any other. */
	ASSERT_EQ(0, rmsg_next_cqe(self->b.ep, &cqe, EVENT_TIMEOUT_MS));
	EXPECT_EQ(-ENOTCONN, cqe.res);
	EXPECT_EQ(1, cqe.len);
	EXPECT_EQ(0, cqe.aux);
	ASSERT_EQ(0, rmsg_next_cqe(self->b.ep, &cqe, EVENT_TIMEOUT_MS));
	EXPECT_EQ(-EFAULT, cqe.res);
	EXPECT_EQ(9, cqe.len);
	EXPECT_EQ(AREA - 8, cqe.aux);
	ASSERT_EQ(0, rmsg_next_cqe(self->b.ep, &cqe, EVENT_TIMEOUT_MS));
	EXPECT_EQ(-EFAULT, cqe.res);
	EXPECT_EQ(~0ULL - 4, cqe.aux);
	ASSERT_EQ(0, rmsg_next_cqe(self->b.ep, &cqe, EVENT_TIMEOUT_MS));
	EXPECT_EQ(-EMSGSIZE, cqe.res);
	EXPECT_EQ(self->b.max_msg + 1, cqe.len);
	ASSERT_EQ(0, rmsg_next_cqe(self->b.ep, &cqe, EVENT_TIMEOUT_MS));
	EXPECT_EQ(-EINVAL, cqe.res);
	EXPECT_EQ(5, cqe.user_data);
	ASSERT_EQ(0, rmsg_next_cqe(self->b.ep, &cqe, EVENT_TIMEOUT_MS));
	EXPECT_EQ(-EINVAL, cqe.res);
	EXPECT_EQ(6, cqe.user_data);
	/* Nothing reached the peer. */
	EXPECT_EQ(0, rmsg_vb_rx_poll(&self->a.rx, self->a.block,
				     &(struct rmsg_vb_msg){}));
	/* The channel still works. */
	stream(_metadata, &self->b, &self->a, 10);
}

/* ARM before the message: READABLE comes with it, after its bytes. */
TEST_F(eager, arm_then_message)
{
	struct rmsg_vb_msg msg;
	struct rmsg_cqe cqe;

	ASSERT_TRUE(queue(self->a.ep, RMSG_OP_ARM, self->a.channel,
			  self->a.rx.consumed, 0, 0xa1));
	ASSERT_LE(0, submit(self->a.ep));
	/* Nothing to wake for yet. */
	EXPECT_EQ(-ETIMEDOUT, rmsg_next_cqe(self->a.ep, &cqe, 500));
	memset(self->b.area, 0x42, 100);
	ASSERT_TRUE(queue(self->b.ep, RMSG_OP_SEND, self->b.channel, 0, 100,
			  1));
	ASSERT_LE(0, submit(self->b.ep));
	ASSERT_EQ(0, rmsg_next_cqe(self->a.ep, &cqe, EVENT_TIMEOUT_MS));
	EXPECT_EQ(RMSG_CQE_READABLE, RMSG_CQE_KIND(cqe.flags));
	EXPECT_EQ(0xa1, cqe.user_data);
	EXPECT_EQ(self->a.channel, cqe.channel);
	/* The event never overtakes the message. */
	ASSERT_EQ(1, rmsg_vb_rx_poll(&self->a.rx, self->a.block, &msg));
	EXPECT_EQ(100, msg.len);
	EXPECT_EQ(0x42, self->a.block[msg.off + 99]);
	/* One event per ARM. */
	ASSERT_TRUE(queue(self->b.ep, RMSG_OP_SEND, self->b.channel, 0, 100,
			  2));
	ASSERT_LE(0, submit(self->b.ep));
	ASSERT_EQ(0, rmsg_next_cqe(self->b.ep, &cqe, EVENT_TIMEOUT_MS));
	EXPECT_EQ(-ETIMEDOUT, rmsg_next_cqe(self->a.ep, &cqe, 500));
}

/* The message came before the ARM: READABLE at once, not never. */
TEST_F(eager, message_then_arm)
{
	struct rmsg_cqe cqe;

	memset(self->b.area, 0x43, 10);
	ASSERT_TRUE(queue(self->b.ep, RMSG_OP_SEND, self->b.channel, 0, 10,
			  1));
	ASSERT_LE(0, submit(self->b.ep));
	ASSERT_EQ(0, rmsg_next_cqe(self->b.ep, &cqe, EVENT_TIMEOUT_MS));
	ASSERT_EQ(0, cqe.res);
	/* The program looked before the message landed, then armed. */
	ASSERT_TRUE(queue(self->a.ep, RMSG_OP_ARM, self->a.channel,
			  self->a.rx.consumed, 0, 0xa2));
	ASSERT_LE(0, submit(self->a.ep));
	ASSERT_EQ(0, rmsg_next_cqe(self->a.ep, &cqe, EVENT_TIMEOUT_MS));
	EXPECT_EQ(RMSG_CQE_READABLE, RMSG_CQE_KIND(cqe.flags));
	EXPECT_EQ(0xa2, cqe.user_data);
}

/*
 * More sends than the block has credit for, then an orderly close: the
 * kernel writes the ones waiting for credit as the receiver returns it,
 * and only then closes. The receiver reads every one.
 */
TEST_F_TIMEOUT(eager, close_delivers_pending_sends, 180)
{
	unsigned int n = 200, i, got = 0, len = 1000, completed = 0;
	struct rmsg_vb_msg msg;
	struct rmsg_cqe cqe;
	bool closed = false;
	long deadline;
	int ret;

	for (i = 0; i < n; i++) {
		memset(self->b.area + i * len, (int)i, len);
		ASSERT_TRUE(queue(self->b.ep, RMSG_OP_SEND, self->b.channel,
				  i * len, len, i));
	}
	ASSERT_LE(0, submit(self->b.ep));
	ASSERT_EQ(0, rmsg_chan_close(self->b.ep, self->b.channel, 0));
	deadline = rmsg_now_ms() + 60000;
	while (got < n || !closed) {
		ASSERT_GT(deadline, rmsg_now_ms()) TH_LOG("got %u", got);
		while ((ret = rmsg_vb_rx_poll(&self->a.rx, self->a.block,
					      &msg)) > 0) {
			ASSERT_EQ(len, msg.len);
			ASSERT_EQ((unsigned char)got,
				  self->a.block[msg.off + len - 1]);
			ASSERT_EQ(0, rmsg_vb_rx_release(&self->a.rx, msg.end));
			got++;
		}
		ASSERT_LE(0, ret);
		if (!closed && rmsg_vb_rx_credit_due(&self->a.rx)) {
			ASSERT_TRUE(queue(self->a.ep, RMSG_OP_CREDIT,
					  self->a.channel,
					  rmsg_vb_rx_advertise(&self->a.rx), 0,
					  0));
			ASSERT_LE(0, submit(self->a.ep));
		}
		if (rmsg_take_cqe(self->a.ep, &cqe)) {
			/* A CREDIT racing the close may fail; nothing else. */
			if (RMSG_CQE_KIND(cqe.flags) == RMSG_CQE_OP) {
				EXPECT_EQ(-ENOTCONN, cqe.res);
				continue;
			}
			ASSERT_EQ(RMSG_CQE_CLOSED, RMSG_CQE_KIND(cqe.flags));
			EXPECT_EQ(0, cqe.res);
			closed = true;
		}
		usleep(1000);
	}
	EXPECT_EQ(n, got);
	/* The sender's side: every send completed, then the close. */
	while (completed < n) {
		ASSERT_EQ(0, rmsg_next_cqe(self->b.ep, &cqe, EVENT_TIMEOUT_MS));
		ASSERT_EQ(RMSG_CQE_OP, RMSG_CQE_KIND(cqe.flags));
		ASSERT_EQ(0, cqe.res) TH_LOG("send %llu", cqe.user_data);
		ASSERT_EQ(completed, cqe.user_data);
		completed++;
	}
	ASSERT_EQ(0, rmsg_next_cqe(self->b.ep, &cqe, EVENT_TIMEOUT_MS));
	EXPECT_EQ(RMSG_CQE_CLOSED, RMSG_CQE_KIND(cqe.flags));
	EXPECT_EQ(0, cqe.res);
}

/* A send after the channel closed fails; it is never half-sent. */
TEST_F(eager, send_after_close)
{
	struct rmsg_cqe cqe;

	ASSERT_EQ(0, rmsg_chan_close(self->b.ep, self->b.channel, 0));
	ASSERT_EQ(0, rmsg_next_cqe(self->b.ep, &cqe, EVENT_TIMEOUT_MS));
	ASSERT_EQ(RMSG_CQE_CLOSED, RMSG_CQE_KIND(cqe.flags));
	ASSERT_TRUE(queue(self->b.ep, RMSG_OP_SEND, self->b.channel, 0, 8, 9));
	ASSERT_LE(0, submit(self->b.ep));
	ASSERT_EQ(0, rmsg_next_cqe(self->b.ep, &cqe, EVENT_TIMEOUT_MS));
	EXPECT_EQ(-ENOTCONN, cqe.res);
	EXPECT_EQ(9, cqe.user_data);
}

/* The send area: its size rules and its mapping. */
TEST(send_area_setup)
{
	struct rmsg_ep_setup p;
	struct rmsg_ep *ep = NULL;
	void *m;
	int fd;

	fd = rmsg_node_open();
	ASSERT_LE(0, fd);
	memset(&p, 0, sizeof(p));
	p.sq_entries = 8;
	p.send_area_size = RMSG_SEND_AREA_MAX + 1;
	EXPECT_EQ(-1, ioctl(fd, RMSG_IOC_EP_SETUP, &p));
	EXPECT_EQ(EINVAL, errno);
	p.send_area_size = 1;
	p.stall_ms = 1;
	EXPECT_EQ(-1, ioctl(fd, RMSG_IOC_EP_SETUP, &p));
	EXPECT_EQ(EINVAL, errno);
	p.stall_ms = 0;
	ASSERT_EQ(0, ioctl(fd, RMSG_IOC_EP_SETUP, &p));
	EXPECT_EQ(RMSG_SEND_AREA_ALIGN, p.send_area_size);
	EXPECT_TRUE(p.features & RMSG_FEAT_EAGER);
	/* Shared only, at most its size; writable. */
	m = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd,
		 RMSG_OFF_SEND_AREA);
	EXPECT_EQ(MAP_FAILED, m);
	m = mmap(NULL, RMSG_SEND_AREA_ALIGN + 4096, PROT_READ | PROT_WRITE,
		 MAP_SHARED, fd, RMSG_OFF_SEND_AREA);
	EXPECT_EQ(MAP_FAILED, m);
	m = mmap(NULL, RMSG_SEND_AREA_ALIGN, PROT_READ | PROT_WRITE,
		 MAP_SHARED, fd, RMSG_OFF_SEND_AREA);
	ASSERT_NE(MAP_FAILED, m);
	/* Zeroed: no stale kernel data. */
	EXPECT_EQ(0, ((unsigned char *)m)[100]);
	EXPECT_EQ(0, ((unsigned char *)m)[RMSG_SEND_AREA_ALIGN - 1]);
	memset(m, 0x5a, RMSG_SEND_AREA_ALIGN);
	close(fd);
	/* The mapping outlives the file. */
	EXPECT_EQ(0x5a, ((unsigned char *)m)[RMSG_SEND_AREA_ALIGN - 1]);
	munmap(m, RMSG_SEND_AREA_ALIGN);

	/* No area: no mapping of one, and SEND cannot name one. */
	ASSERT_EQ(0, rmsg_ep_open(&ep, 8, 0) < 0 ? -1 : 0);
	rmsg_ep_drop(&ep);
	fd = rmsg_node_open();
	memset(&p, 0, sizeof(p));
	p.sq_entries = 8;
	ASSERT_EQ(0, ioctl(fd, RMSG_IOC_EP_SETUP, &p));
	EXPECT_EQ(0, p.send_area_size);
	m = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		 RMSG_OFF_SEND_AREA);
	EXPECT_EQ(MAP_FAILED, m);
	close(fd);
}

TEST(device_reports_ordering)
{
	struct rmsg_dev_info info = { 0 };
	int fd = rmsg_node_open();

	ASSERT_LE(0, fd);
	if (rmsg_find_dev(fd, "rxe0", &info, NULL) != 1)
		SKIP(return, "no rxe0: not run by rmsg-vm");
	EXPECT_EQ(rmsg_rxe_expect_ordered(),
		  !!(info.flags & RMSG_DEV_F_ORDERED))
		TH_LOG("rxe copies a write in order where memcpy() does");
	close(fd);
}

int main(int argc, char **argv)
{
	return rmsg_test_main(argc, argv);
}
