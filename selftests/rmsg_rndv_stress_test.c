// SPDX-License-Identifier: GPL-2.0
/*
 * Rendezvous transfers under load and at their edges, through the raw rings
 * as in rmsg_rndv_test.c: eight channels with three windows of transfers
 * queued each way among eager messages; RLIMIT_MEMLOCK with transfers on
 * the registered memory; memory the program has unmapped, spans outside
 * any region and regions that are busy; and a peer process killed in the
 * middle of a 64 MiB transfer. Every byte that arrives is checked, every
 * CQE is accounted for, and the pinned pages go back when the regions go.
 */
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>

#include "kselftest_harness.h"
#include "rmsg_test.h"
#include "rmsg_vb.h"

#define EVENT_TIMEOUT_MS	20000
#define PG			4096UL
#define NOBODY			65534
#define GUARD_BYTE		0xee
#define IMM_PARAM		"/sys/module/rmsg/parameters/force_imm_arrival"

/* --- rings, regions and bytes ------------------------------------------- */

/* Hand the kernel the SQEs queued: 0, or a negative errno. */
static int submit(struct rmsg_ep *ep)
{
	unsigned int n = rmsg_sq_submit(ep);
	int ret = n ? rmsg_ep_enter(ep, n, 0, 0) : 0;

	if (ret < 0)
		return ret;
	return ret == (int)n ? 0 : -EAGAIN;
}

static struct rmsg_sqe *sqe_of(struct rmsg_ep *ep, __u8 op,
			       unsigned int channel, __u64 user_data)
{
	struct rmsg_sqe *sqe = rmsg_sq_get_sqe(ep);

	if (sqe) {
		sqe->opcode = op;
		sqe->channel = channel;
		sqe->user_data = user_data;
	}
	return sqe;
}

static unsigned char *map_anon(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

/* Pages [p, p + len) touches. */
static long span_pages(const void *p, size_t len)
{
	uintptr_t a = (uintptr_t)p;

	return (long)((a + len - 1) / PG - a / PG + 1);
}

/* Eight bytes of message @id at word @word of it. */
static uint64_t mix(uint32_t id, uint64_t word)
{
	uint64_t x = ((uint64_t)id << 40 ^ word) + 0x9e3779b97f4a7c15ULL;

	x ^= x >> 31;
	x *= 0x7fb5d329728ea185ULL;
	x ^= x >> 27;
	x *= 0x81dadef4bc2dd44dULL;
	return x ^ x >> 33;
}

/*
 * The bytes of message @id: each depends on the message and on its
 * position, so a byte moved by any distance, lost, repeated or taken from
 * another message shows.
 */
static void fill(unsigned char *p, uint64_t len, uint32_t id)
{
	uint64_t i, w = 0;

	for (i = 0; i < len; i++) {
		if (!(i & 7))
			w = mix(id, i >> 3);
		p[i] = (unsigned char)(w >> (i & 7) * 8);
	}
}

/* The first byte of @p that is not message @id's, or @len. */
static uint64_t first_bad(const unsigned char *p, uint64_t len, uint32_t id)
{
	uint64_t i, w = 0;

	for (i = 0; i < len; i++) {
		if (!(i & 7))
			w = mix(id, i >> 3);
		if (p[i] != (unsigned char)(w >> (i & 7) * 8))
			break;
	}
	return i;
}

/* The first byte of @p that is not @c, or @len. */
static uint64_t first_not(const unsigned char *p, uint64_t len,
			  unsigned char c)
{
	uint64_t i;

	for (i = 0; i < len; i++)
		if (p[i] != c)
			break;
	return i;
}

/* --- channels ----------------------------------------------------------- */

/* One end of a channel: its id and its receive block, read in place. */
struct chan_end {
	unsigned int id;
	const unsigned char *block;
	unsigned int block_len;
	unsigned int max_msg;
	struct rmsg_vb_rx rx;
};

static int open_ep(struct rmsg_ep **ep, unsigned int sq, unsigned int cq,
		   unsigned int area, unsigned char **area_map)
{
	struct rmsg_ep_setup p = {
		.sq_entries = sq,
		.cq_entries = cq,
		.send_area_size = area,
	};
	void *m;
	int ret = rmsg_ep_open_setup(ep, &p);

	if (ret || !area_map)
		return ret;
	m = mmap(NULL, p.send_area_size, PROT_READ | PROT_WRITE, MAP_SHARED,
		 rmsg_ep_fd(*ep), RMSG_OFF_SEND_AREA);
	if (m == MAP_FAILED)
		return -errno;
	*area_map = m;
	return 0;
}

/* After its CONNECTED or ACCEPTED event: map the block, start reading. */
static int start_chan(struct rmsg_ep *ep, struct chan_end *ch,
		      const struct rmsg_cqe *cqe)
{
	void *p;

	ch->id = cqe->channel;
	ch->block_len = cqe->len;
	ch->max_msg = cqe->aux;
	p = mmap(NULL, cqe->len, PROT_READ, MAP_SHARED, rmsg_ep_fd(ep),
		 RMSG_OFF_BLOCK(cqe->channel));
	if (p == MAP_FAILED)
		return -errno;
	ch->block = p;
	return rmsg_vb_rx_init(&ch->rx, cqe->len, 0, 0);
}

/* The next CQE must be the channel event @kind, successful. */
static int wait_event_ok(struct rmsg_ep *ep, unsigned int kind,
			 struct rmsg_cqe *cqe)
{
	int ret = rmsg_next_cqe(ep, cqe, EVENT_TIMEOUT_MS);

	if (ret)
		return ret;
	if (RMSG_CQE_KIND(cqe->flags) != kind)
		return -EPROTO;
	return cqe->res;
}

/*
 * Connect @n channels from @b to @a, which listens at @addr (port 0: any,
 * written back), one after the other, so that @ca[i] and @cb[i] are the
 * two ends of one connection.
 */
static int connect_chans(struct rmsg_ep *a, struct chan_end *ca,
			 struct rmsg_ep *b, struct chan_end *cb,
			 unsigned int n, struct sockaddr_in *addr)
{
	struct rmsg_cqe ev;
	unsigned int i;
	int id, ret;

	ret = rmsg_ep_listen(a, (struct sockaddr *)addr, sizeof(*addr), 0xa0,
			     0);
	if (ret)
		return ret;
	for (i = 0; i < n; i++) {
		id = rmsg_chan_connect(b, (struct sockaddr *)addr,
				       sizeof(*addr),
				       0xb0 + i, 0);
		if (id < 0)
			return id;
		ret = wait_event_ok(b, RMSG_CQE_CONNECTED, &ev);
		if (!ret && ev.channel != (__u32)id)
			ret = -EPROTO;
		if (!ret)
			ret = start_chan(b, &cb[i], &ev);
		if (!ret)
			ret = wait_event_ok(a, RMSG_CQE_ACCEPTED, &ev);
		if (!ret)
			ret = start_chan(a, &ca[i], &ev);
		if (ret)
			return ret;
	}
	return 0;
}

/*
 * Small steps of one transfer, for the tests that look at each one. They
 * return 0 or a negative errno and assert nothing, so that a forked child
 * can use them too.
 */
static int send_rndv(struct rmsg_ep *ep, const struct chan_end *ch,
		     __u32 region, const void *addr, __u32 len, __u64 ud)
{
	struct rmsg_sqe *sqe = sqe_of(ep, RMSG_OP_SEND_RNDV, ch->id, ud);

	if (!sqe)
		return -ENOSPC;
	sqe->region = region;
	sqe->addr = (uintptr_t)addr;
	sqe->len = len;
	return submit(ep);
}

/* Wait for the next record of @ch: an RTS of @len bytes and @cookie. */
static int wait_rts(struct chan_end *ch, struct rmsg_vb_msg *msg, __u32 len,
		    __u32 cookie)
{
	long deadline = rmsg_now_ms() + EVENT_TIMEOUT_MS;
	const struct rmsg_rts *rts;
	int ret;

	while (!(ret = rmsg_vb_rx_poll(&ch->rx, ch->block, msg))) {
		if (rmsg_now_ms() > deadline)
			return -ETIMEDOUT;
		usleep(1000);
	}
	if (ret < 0)
		return ret;
	rts = (const void *)(ch->block + msg->off);
	if (msg->type != RMSG_VB_RTS || msg->len < sizeof(*rts) ||
	    le64toh(rts->len) != len || le32toh(rts->cookie) != cookie)
		return -EPROTO;
	return 0;
}

/* Queue a RECV_RNDV answering @cookie; submit() sends it. */
static int queue_answer(struct rmsg_ep *ep, const struct chan_end *ch,
			__u32 region, void *addr, __u32 room, __u64 cookie,
			__u8 flags, __u64 ud)
{
	struct rmsg_sqe *sqe = sqe_of(ep, RMSG_OP_RECV_RNDV, ch->id, ud);

	if (!sqe)
		return -ENOSPC;
	sqe->region = region;
	sqe->addr = (uintptr_t)addr;
	sqe->len = room;
	sqe->aux = cookie;
	sqe->flags = flags;
	return 0;
}

/* Let the record go (after its answer), with credit when it is due. */
static int release(struct rmsg_ep *ep, struct chan_end *ch,
		   const struct rmsg_vb_msg *msg)
{
	struct rmsg_sqe *sqe;
	int ret = rmsg_vb_rx_release(&ch->rx, msg->end);

	if (ret)
		return ret;
	if (rmsg_vb_rx_credit_due(&ch->rx)) {
		sqe = sqe_of(ep, RMSG_OP_CREDIT, ch->id, 0);
		if (!sqe)
			return -ENOSPC;
		sqe->addr = rmsg_vb_rx_advertise(&ch->rx);
	}
	return submit(ep);
}

/* The next CQE must be the completion of @ud; its result in *@res. */
static int wait_op(struct rmsg_ep *ep, __u64 ud, struct rmsg_cqe *cqe)
{
	int ret = rmsg_next_cqe(ep, cqe, EVENT_TIMEOUT_MS);

	if (ret)
		return ret;
	if (RMSG_CQE_KIND(cqe->flags) != RMSG_CQE_OP || cqe->user_data != ud)
		return -EPROTO;
	return 0;
}

/*
 * One message of @len bytes from @src (region @sreg of @tx) into @dst
 * (@room bytes in region @drg of @rx), answered at once: 0 when both
 * CQEs say it went through with the right lengths and cookie.
 */
static int xfer(struct rmsg_ep *tx, struct chan_end *tch, __u32 sreg,
		const void *src, __u32 len, struct rmsg_ep *rx,
		struct chan_end *rch, __u32 drg, void *dst, __u32 room,
		__u32 cookie)
{
	struct rmsg_vb_msg msg;
	struct rmsg_cqe cqe;
	int ret;

	ret = send_rndv(tx, tch, sreg, src, len, 100 + cookie);
	if (!ret)
		ret = wait_rts(rch, &msg, len, cookie);
	if (!ret)
		ret = queue_answer(rx, rch, drg, dst, room, cookie, 0,
				   200 + cookie);
	if (!ret)
		ret = release(rx, rch, &msg);
	if (!ret)
		ret = wait_op(rx, 200 + cookie, &cqe);
	if (!ret && (cqe.res || cqe.len != len || cqe.aux != cookie))
		ret = cqe.res ?: -EPROTO;
	if (!ret)
		ret = wait_op(tx, 100 + cookie, &cqe);
	if (!ret && (cqe.res || cqe.len != len ||
		     cqe.aux != (uintptr_t)src))
		ret = cqe.res ?: -EPROTO;
	return ret;
}

/* --- many transfers, many channels, both ways --------------------------- */

#define NCHAN		8
#define NRNDV		24	/* per channel and way: three windows */
#define NITEMS		64
#define STRESS_AREA	(2U << 20)

/* What a user_data names: kind, way, channel, item. */
enum { K_EAGER = 1, K_TX, K_RX };

static __u64 tag(unsigned int kind, unsigned int way, unsigned int c,
		 unsigned int item)
{
	return (__u64)kind << 56 | (__u64)way << 48 | (__u64)c << 32 | item;
}

/* One message of a flow, eager or rendezvous, in the order sent. */
struct item {
	bool rndv;
	__u32 k;	/* the cookie, or the eager message's number */
	__u32 len;
	__u32 room;	/* rendezvous: what the receiver offers */
	__u64 src;	/* rendezvous: offset in the sender's memory;
			 * eager: offset in its send area
			 */
	__u64 dst;	/* rendezvous: offset in the receiver's memory */
	__u32 id;	/* of its bytes */
	bool tx_done;
	bool rx_done;
};

/* The messages of one channel one way. */
struct flow {
	struct item items[NITEMS];
	unsigned int n;
	unsigned int queued;
	unsigned int read;	/* records the receiver has read */
	unsigned int tx_cqes;
	unsigned int rx_cqes;
	int last_eager;		/* eager SENDs complete in order */
};

struct end {
	struct rmsg_ep *ep;
	unsigned char *area;
	__u64 area_used;
	unsigned char *mem;
	size_t mem_len;
	__u64 tx_used;		/* sources from mem[0] */
	__u64 rx_base;		/* destinations from mem[rx_base] */
	__u64 rx_used;
	__u32 region;
	struct chan_end ch[NCHAN];
};

struct stress {
	struct end end[2];	/* 0 listens, 1 connects */
	struct flow flow[NCHAN][2];	/* way 0: 1 to 0; way 1: 0 to 1 */
	bool put_odd;		/* every other rendezvous send is an RPut */
};

static struct end *sender(struct stress *s, unsigned int way)
{
	return &s->end[!way];
}

static struct end *receiver(struct stress *s, unsigned int way)
{
	return &s->end[way];
}

/* 1 byte to 3 MiB, unaligned: two large ones a flow, the rest small. */
static __u32 rndv_len(unsigned int c, unsigned int way, unsigned int k)
{
	static const __u32 small[] = {
		1, 2, 3, 63, 64, 65, 511, 4095, 4096, 4097, 8191, 12289,
		30001, 65535, 65537, 100003, 131077, 200001, 262147, 7, 1000,
		33333,
	};
	unsigned int big = (c * 3 + way * 5) % NRNDV;

	if (k == big)
		return (c + way) % 4 ? (1U << 20) + c * 4099 + way * 7 + 1 :
				       (3U << 20) - (c + way) * 5;
	if (k == (big + NRNDV / 2) % NRNDV)
		return (256U << 10) + c * 333 + way + 3;
	return small[(k + c * 5 + way * 11) % ARRAY_SIZE(small)];
}

static __u32 eager_len(unsigned int e, unsigned int max_msg)
{
	static const __u32 sizes[] = { 0, 1, 15, 16, 17, 255, 1000, 4097, 64,
				       3000, ~0U };

	return sizes[e % ARRAY_SIZE(sizes)] < max_msg ?
	       sizes[e % ARRAY_SIZE(sizes)] : max_msg;
}

static void add_eager(struct stress *s, struct flow *f, unsigned int c,
		      unsigned int way, unsigned int *e)
{
	struct end *tx = sender(s, way);
	struct item *it = &f->items[f->n++];

	it->k = (*e)++;
	it->len = eager_len(it->k + c + way, tx->ch[c].max_msg);
	it->src = tx->area_used;
	it->id = tag(K_EAGER, way, c, f->n - 1);
	tx->area_used += (it->len + 63) & ~63U;
}

/*
 * The plan: per flow, 24 rendezvous messages with eager ones between
 * (about two in three, and pairs now and then), each source and
 * destination at its own unaligned place, destinations apart by at
 * least 64 untouched bytes.
 */
static void plan(struct stress *s)
{
	unsigned int c, way, k, e;
	struct item *it;
	struct flow *f;
	struct end *tx, *rx;

	for (c = 0; c < NCHAN; c++) {
		for (way = 0; way < 2; way++) {
			f = &s->flow[c][way];
			tx = sender(s, way);
			rx = receiver(s, way);
			f->last_eager = -1;
			for (k = 0, e = 0; k < NRNDV; k++) {
				if ((k * 7 + c + way) % 3 != 2)
					add_eager(s, f, c, way, &e);
				it = &f->items[f->n++];
				it->rndv = true;
				it->k = k;
				it->len = rndv_len(c, way, k);
				it->room = it->len + (k % 4 == 1 ? k + 1 : 0);
				it->src = tx->tx_used + 1 + (k * 5 + c) % 4093;
				tx->tx_used = it->src + it->len;
				it->dst = rx->rx_used + 64 + k * 13 % 61;
				rx->rx_used = it->dst + it->room;
				it->id = tag(K_TX, way, c, f->n - 1);
				if (k % 6 == 5) {
					add_eager(s, f, c, way, &e);
					add_eager(s, f, c, way, &e);
				}
			}
		}
	}
	for (c = 0; c < 2; c++) {
		s->end[c].rx_base = s->end[c].tx_used + PG;
		s->end[c].mem_len = s->end[c].rx_base + s->end[c].rx_used + PG;
	}
}

FIXTURE(stress) {
	struct stress *s;
	struct sockaddr_in addr;
	long pin0;
	long pins0;
	bool imm_set;
};

/*
 * Arrival flags from the device, or from the kernel (write-with-imm); and
 * RGet and RPut mixed on every channel.
 */
FIXTURE_VARIANT(stress) {
	bool imm;
	bool put_odd;
};

FIXTURE_VARIANT_ADD(stress, flag) {
	.imm = false,
};

FIXTURE_VARIANT_ADD(stress, imm) {
	.imm = true,
};

FIXTURE_VARIANT_ADD(stress, get_put) {
	.put_odd = true,
};

FIXTURE_SETUP(stress)
{
	struct stress *s;
	unsigned int i;

	if (!rmsg_local_addr(&self->addr, 0))
		SKIP(rmsg_setup_skipped(_metadata); return,
		     "RMSG_LOCAL_ADDR not set: not run by rmsg-vm");
	ASSERT_EQ(0, rmsg_sh("echo %d > " IMM_PARAM, variant->imm));
	self->imm_set = true;
	s = calloc(1, sizeof(*s));
	ASSERT_NE(NULL, s);
	self->s = s;
	s->put_odd = variant->put_odd;
	for (i = 0; i < 2; i++)
		ASSERT_EQ(0, open_ep(&s->end[i].ep, 256, 4096, STRESS_AREA,
				     &s->end[i].area));
	ASSERT_EQ(0, connect_chans(s->end[0].ep, s->end[0].ch,
				   s->end[1].ep, s->end[1].ch, NCHAN,
				   &self->addr));
	self->pin0 = rmsg_vmpin_kb();
	self->pins0 = rmsg_pins();
	plan(s);
	for (i = 0; i < 2; i++) {
		ASSERT_GE(STRESS_AREA, s->end[i].area_used);
		s->end[i].mem = map_anon(s->end[i].mem_len);
		ASSERT_NE(NULL, s->end[i].mem);
	}
}

FIXTURE_TEARDOWN(stress)
{
	unsigned int i;

	if (self->imm_set)
		rmsg_sh("echo 0 > " IMM_PARAM);
	if (!self->s)
		return;
	for (i = 0; i < 2; i++) {
		if (self->s->end[i].ep)
			rmsg_ep_drop(&self->s->end[i].ep);
		if (self->s->end[i].mem)
			munmap(self->s->end[i].mem, self->s->end[i].mem_len);
	}
	free(self->s);
}

/* Queue up to @max more messages of flow (@c, @way). */
static void queue_flow(struct __test_metadata *_metadata, struct stress *s,
		       unsigned int c, unsigned int way, unsigned int max)
{
	struct flow *f = &s->flow[c][way];
	struct end *tx = sender(s, way);
	struct rmsg_sqe *sqe;
	struct item *it;
	unsigned int i;

	for (; max && f->queued < f->n; max--, f->queued++) {
		i = f->queued;
		it = &f->items[i];
		sqe = sqe_of(tx->ep, it->rndv ? RMSG_OP_SEND_RNDV :
				      RMSG_OP_SEND, tx->ch[c].id,
			     tag(it->rndv ? K_TX : K_EAGER, way, c, i));
		ASSERT_NE(NULL, sqe);
		sqe->len = it->len;
		if (it->rndv) {
			sqe->region = tx->region;
			sqe->addr = (uintptr_t)tx->mem + it->src;
			if (s->put_odd && i & 1)
				sqe->flags = RMSG_RNDV_F_PUT;
		} else {
			sqe->addr = it->src;
		}
	}
}

/*
 * Read what flow (@c, @way) put in the receiver's block: each record must
 * be the next message of the plan, an eager one with its bytes or an RTS
 * with its length and cookie, which is answered before its release.
 */
static void read_flow(struct __test_metadata *_metadata, struct stress *s,
		      unsigned int c, unsigned int way)
{
	struct flow *f = &s->flow[c][way];
	struct end *rx = receiver(s, way);
	struct chan_end *ch = &rx->ch[c];
	const struct rmsg_rts *rts;
	struct rmsg_vb_msg msg;
	struct item *it;
	int ret;

	while ((ret = rmsg_vb_rx_poll(&ch->rx, ch->block, &msg)) > 0) {
		ASSERT_GT(f->n, f->read) TH_LOG("chan %u way %u: a record more",
						c, way);
		it = &f->items[f->read];
		if (it->rndv) {
			rts = (const void *)(ch->block + msg.off);
			ASSERT_EQ(RMSG_VB_RTS, msg.type)
				TH_LOG("chan %u way %u item %u: not the RTS",
				       c, way, f->read);
			ASSERT_LE(sizeof(*rts), msg.len);
			ASSERT_EQ(it->len, le64toh(rts->len));
			ASSERT_EQ(it->k, le32toh(rts->cookie));
			ASSERT_EQ(0, queue_answer(rx->ep, ch, rx->region,
						  rx->mem + rx->rx_base +
						  it->dst, it->room, it->k, 0,
						  tag(K_RX, way, c, f->read)));
		} else {
			ASSERT_EQ(RMSG_VB_DATA, msg.type)
				TH_LOG("chan %u way %u item %u: not eager",
				       c, way, f->read);
			ASSERT_EQ(it->len, msg.len);
			ASSERT_EQ(it->len, first_bad(ch->block + msg.off,
						     msg.len, it->id))
				TH_LOG("chan %u way %u item %u", c, way,
				       f->read);
		}
		ASSERT_EQ(0, rmsg_vb_rx_release(&ch->rx, msg.end));
		f->read++;
	}
	ASSERT_EQ(0, ret) TH_LOG("chan %u way %u: the block broke the protocol",
				 c, way);
	/* The answers go in the batch before the credit. */
	if (rmsg_vb_rx_credit_due(&ch->rx)) {
		struct rmsg_sqe *sqe = sqe_of(rx->ep, RMSG_OP_CREDIT, ch->id,
					      0);

		ASSERT_NE(NULL, sqe);
		sqe->addr = rmsg_vb_rx_advertise(&ch->rx);
	}
}

/* Account for one CQE of end @e: once each, with its own len and aux. */
static void account(struct __test_metadata *_metadata, struct stress *s,
		    unsigned int e, const struct rmsg_cqe *cqe)
{
	unsigned int kind = cqe->user_data >> 56;
	unsigned int way = cqe->user_data >> 48 & 0xff;
	unsigned int c = cqe->user_data >> 32 & 0xffff;
	unsigned int i = (__u32)cqe->user_data;
	struct end *me = &s->end[e];
	struct flow *f;
	struct item *it;

	ASSERT_EQ(RMSG_CQE_OP, RMSG_CQE_KIND(cqe->flags))
		TH_LOG("end %u: event %u res %d on channel %u", e,
		       RMSG_CQE_KIND(cqe->flags), cqe->res, cqe->channel);
	ASSERT_TRUE(kind >= K_EAGER && kind <= K_RX && way < 2 &&
		    c < NCHAN) TH_LOG("user_data %llx", cqe->user_data);
	f = &s->flow[c][way];
	ASSERT_GT(f->n, i);
	it = &f->items[i];
	ASSERT_EQ(me->ch[c].id, cqe->channel);
	EXPECT_EQ(0, cqe->res) TH_LOG("kind %u chan %u way %u item %u", kind,
				      c, way, i);
	/* Each side hears only of what it did itself. */
	ASSERT_EQ(kind == K_RX ? receiver(s, way) : sender(s, way), me);
	ASSERT_EQ(kind != K_EAGER, it->rndv);
	ASSERT_EQ(it->len, cqe->len);
	if (kind == K_RX) {
		ASSERT_FALSE(it->rx_done) TH_LOG("item %u twice", i);
		ASSERT_EQ(it->k, cqe->aux);
		it->rx_done = true;
		f->rx_cqes++;
		return;
	}
	ASSERT_FALSE(it->tx_done) TH_LOG("item %u twice", i);
	if (kind == K_EAGER) {
		ASSERT_EQ(it->src, cqe->aux);
		ASSERT_LT(f->last_eager, (int)i);
		f->last_eager = i;
	} else {
		ASSERT_EQ((uintptr_t)me->mem + it->src, cqe->aux);
	}
	it->tx_done = true;
	f->tx_cqes++;
}

static bool stress_done(const struct stress *s, unsigned int *tx,
			unsigned int *rx, unsigned int *read)
{
	unsigned int c, way, want = 0;

	*tx = *rx = *read = 0;
	for (c = 0; c < NCHAN; c++) {
		for (way = 0; way < 2; way++) {
			*tx += s->flow[c][way].tx_cqes;
			*rx += s->flow[c][way].rx_cqes;
			*read += s->flow[c][way].read;
			want += s->flow[c][way].n;
		}
	}
	return *tx == want && *read == want && *rx == 2 * NCHAN * NRNDV;
}

/* The destinations of end @e: each message's bytes, 0xee around them. */
static void check_dst(struct __test_metadata *_metadata, struct stress *s,
		      unsigned int e)
{
	const unsigned char *rxm = s->end[e].mem + s->end[e].rx_base;
	unsigned int c, i;
	struct item *it;
	struct flow *f;
	__u64 at = 0;

	/* The plan laid them out in this order. */
	for (c = 0; c < NCHAN; c++) {
		f = &s->flow[c][e];
		for (i = 0; i < f->n; i++) {
			it = &f->items[i];
			if (!it->rndv)
				continue;
			ASSERT_EQ(it->dst - at,
				  first_not(rxm + at, it->dst - at,
					    GUARD_BYTE))
				TH_LOG("end %u: written before chan %u item %u",
				       e, c, i);
			ASSERT_EQ(it->len, first_bad(rxm + it->dst, it->len,
						     it->id))
				TH_LOG("end %u chan %u item %u (%u bytes)",
				       e, c, i, it->len);
			at = it->dst + it->len;
		}
	}
	ASSERT_EQ(s->end[e].mem_len - s->end[e].rx_base - at,
		  first_not(rxm + at, s->end[e].mem_len - s->end[e].rx_base -
			    at, GUARD_BYTE));
}

/*
 * Eight channels, each with 24 rendezvous messages queued at once each
 * way (three times the window), eager messages between them, all from
 * one thread: every record arrives in the order sent, every CQE comes
 * once, every byte lands where it should and nowhere else. Twice: with
 * arrival flags from the device, and from the kernel.
 */
TEST_F_TIMEOUT(stress, many_channels_both_ways, 600)
{
	long deadline = rmsg_now_ms() + 240000, t0 = rmsg_now_ms();
	struct stress *s = self->s;
	unsigned int c, way, e, i, tx, rx, read;
	struct rmsg_ep_stats st;
	struct rmsg_cqe cqe;
	struct item *it;
	__u64 bytes = 0;
	bool idle;

	for (e = 0; e < 2; e++) {
		memset(s->end[e].mem, GUARD_BYTE, s->end[e].mem_len);
		ASSERT_EQ(0, rmsg_reg(s->end[e].ep, s->end[e].mem,
				      s->end[e].mem_len, &s->end[e].region));
	}
	for (c = 0; c < NCHAN; c++) {
		for (way = 0; way < 2; way++) {
			struct end *txe = sender(s, way);

			for (i = 0; i < s->flow[c][way].n; i++) {
				it = &s->flow[c][way].items[i];
				fill(it->rndv ? txe->mem + it->src :
				     txe->area + it->src, it->len, it->id);
				bytes += it->rndv ? it->len : 0;
			}
		}
	}
	while (!stress_done(s, &tx, &rx, &read)) {
		ASSERT_GT(deadline, rmsg_now_ms())
			TH_LOG("stuck: %u CQEs of sends, %u of receives, %u records read",
			       tx, rx, read);
		/* A few more of each flow, round the channels, both ways. */
		for (e = 0; e < 2; e++) {
			for (c = 0; c < NCHAN; c++)
				queue_flow(_metadata, s, c, !e, 3);
			ASSERT_EQ(0, submit(s->end[e].ep));
		}
		for (e = 0; e < 2; e++) {
			for (c = 0; c < NCHAN; c++)
				read_flow(_metadata, s, c, e);
			ASSERT_EQ(0, submit(s->end[e].ep));
		}
		idle = true;
		for (e = 0; e < 2; e++) {
			while (rmsg_take_cqe(s->end[e].ep, &cqe)) {
				account(_metadata, s, e, &cqe);
				idle = false;
			}
		}
		if (idle)
			usleep(1000);
	}
	TH_LOG("%u messages, %llu rendezvous bytes, in %ld ms", read, bytes,
	       rmsg_now_ms() - t0);
	/* Nothing more: no record, no CQE. */
	usleep(100000);
	for (e = 0; e < 2; e++) {
		struct rmsg_vb_msg msg;

		for (c = 0; c < NCHAN; c++)
			EXPECT_EQ(0, rmsg_vb_rx_poll(&s->end[e].ch[c].rx,
						     s->end[e].ch[c].block,
						     &msg));
		EXPECT_FALSE(rmsg_take_cqe(s->end[e].ep, &cqe));
		ASSERT_EQ(0, ioctl(rmsg_ep_fd(s->end[e].ep), RMSG_IOC_EP_STATS,
				   &st));
		EXPECT_EQ(0, st.bad_desc + st.bad_index);
		/* The kernel set arrival flags only when told to. */
		EXPECT_EQ(variant->imm || !rmsg_rxe0_ordered(),
			  st.imm_arrivals > 0);
	}
	check_dst(_metadata, s, 0);
	check_dst(_metadata, s, 1);
	/* Every transfer is over: the regions go at once, and their pins. */
	for (e = 0; e < 2; e++)
		EXPECT_EQ(0, rmsg_dereg(s->end[e].ep, s->end[e].region));
	EXPECT_EQ(self->pin0, rmsg_vmpin_kb());
	EXPECT_TRUE(rmsg_pins_are(self->pins0, 0));
}

/* --- one channel: limits, freed memory, bad spans ----------------------- */

FIXTURE(pair) {
	struct rmsg_ep *a;	/* listens, receives */
	struct rmsg_ep *b;	/* connects, sends */
	struct chan_end ca;
	struct chan_end cb;
	struct sockaddr_in addr;
	long pin0;
	long pins0;
	bool opened;
	bool a_closed;
};

FIXTURE_SETUP(pair)
{
	if (!rmsg_local_addr(&self->addr, 0))
		SKIP(rmsg_setup_skipped(_metadata); return,
		     "RMSG_LOCAL_ADDR not set: not run by rmsg-vm");
	ASSERT_EQ(0, open_ep(&self->a, 64, 256, 0, NULL));
	ASSERT_EQ(0, open_ep(&self->b, 64, 256, 0, NULL));
	self->opened = true;
	ASSERT_EQ(0, connect_chans(self->a, &self->ca, self->b, &self->cb,
				   1, &self->addr));
	self->pin0 = rmsg_vmpin_kb();
	ASSERT_LE(0, self->pin0) TH_LOG("no VmPin in /proc/self/status");
	self->pins0 = rmsg_pins();
}

FIXTURE_TEARDOWN(pair)
{
	if (self->opened) {
		if (!self->a_closed)
			rmsg_ep_drop(&self->a);
		rmsg_ep_drop(&self->b);
	}
}

/*
 * As nobody (no CAP_IPC_LOCK) with RLIMIT_MEMLOCK at 64 pages, on the
 * endpoints the parent opened: register up to the limit exactly, find the
 * next page refused, and move messages through the registered memory,
 * also while a registration fails. Returns 0, or the step that failed.
 */
static int memlock_child(struct rmsg_ep *a, struct chan_end *ca,
			 struct rmsg_ep *b, struct chan_end *cb)
{
	struct rlimit rl = { .rlim_cur = 64 * PG, .rlim_max = 64 * PG };
	unsigned char *buf = map_anon(80 * PG);
	unsigned char *src, *dst;
	static const __u32 lens[] = { 1, 4097, 32 * PG - 1 };
	struct rmsg_vb_msg msg;
	struct rmsg_cqe cqe;
	__u32 hs, hd, h;
	unsigned int i;
	long pin0;

	if (!buf || setrlimit(RLIMIT_MEMLOCK, &rl))
		return 1;
	if (setgid(NOBODY) || setuid(NOBODY) || getuid() != NOBODY)
		return 2;
	pin0 = rmsg_vmpin_kb();
	if (pin0 < 0)
		return 3;
	/* 32 pages less a byte from an unaligned start, and 32 more. */
	src = buf + 1;
	dst = buf + 40 * PG;
	if (rmsg_reg(b, src, 32 * PG - 1, &hs))
		return 4;
	if (rmsg_reg(a, dst, 32 * PG, &hd))
		return 5;
	if (rmsg_vmpin_kb() != pin0 + 256)
		return 6;
	if (rmsg_reg(a, buf + 75 * PG, 1, &h) != -ENOMEM)
		return 7;
	for (i = 0; i < ARRAY_SIZE(lens); i++) {
		fill(src, lens[i], 7 + i);
		memset(dst, GUARD_BYTE, 32 * PG);
		if (xfer(b, cb, hs, src, lens[i], a, ca, hd, dst, 32 * PG, i))
			return 10 + i;
		if (first_bad(dst, lens[i], 7 + i) != lens[i] ||
		    first_not(dst + lens[i], 32 * PG - lens[i], GUARD_BYTE) !=
		    32 * PG - lens[i])
			return 20 + i;
	}
	/* A registration refused while a transfer runs leaves it alone. */
	fill(src, 32 * PG - 1, 99);
	if (send_rndv(b, cb, hs, src, 32 * PG - 1, 1))
		return 30;
	if (rmsg_reg(b, buf + 75 * PG, 2 * PG, &h) != -ENOMEM)
		return 31;
	if (wait_rts(ca, &msg, 32 * PG - 1, i) ||
	    queue_answer(a, ca, hd, dst + 1, 32 * PG - 1, i, 0, 2) ||
	    release(a, ca, &msg))
		return 32;
	if (rmsg_reg(a, buf + 75 * PG, 1, &h) != -ENOMEM)
		return 33;
	if (wait_op(a, 2, &cqe) || cqe.res || wait_op(b, 1, &cqe) || cqe.res)
		return 34;
	if (first_bad(dst + 1, 32 * PG - 1, 99) != 32 * PG - 1)
		return 35;
	if (rmsg_vmpin_kb() != pin0 + 256)
		return 36;
	if (rmsg_dereg(a, hd) || rmsg_dereg(b, hs))
		return 37;
	if (rmsg_vmpin_kb() != pin0)
		return 38;
	/* What went back may be registered again. */
	if (rmsg_reg(a, buf, 64 * PG, &h) || rmsg_dereg(a, h))
		return 39;
	return 0;
}

TEST_F(pair, memlock_through_transfers)
{
	pid_t pid = fork();

	ASSERT_LE(0, pid);
	if (!pid)
		_exit(memlock_child(self->a, &self->ca, self->b, &self->cb));
	EXPECT_EQ(0, rmsg_child_status(pid)) TH_LOG("the child failed a step");
	EXPECT_EQ(self->pin0, rmsg_vmpin_kb());
	EXPECT_TRUE(rmsg_pins_are(self->pins0, 0));
}

/*
 * The program unmaps the memory it registered, and maps other memory at
 * the same address: a transfer still sends the pinned pages, written
 * before the munmap. The charge stays until the region goes.
 */
TEST_F(pair, source_unmapped)
{
	size_t len = 3 << 20, dlen = 3 << 20;
	unsigned char *buf = map_anon(len), *dst = map_anon(dlen), *again;
	unsigned char *src;
	__u32 hs, hd, n1 = (2 << 20) + 5000, n2 = 4097;
	long pages;

	ASSERT_NE(NULL, buf);
	ASSERT_NE(NULL, dst);
	src = buf + 123;
	fill(src, n1, 1);
	fill(src + n1 + 3, n2, 2);
	memset(dst, GUARD_BYTE, dlen);
	ASSERT_EQ(0, rmsg_reg(self->b, src, len - 200, &hs));
	ASSERT_EQ(0, rmsg_reg(self->a, dst, dlen, &hd));
	pages = span_pages(src, len - 200) + span_pages(dst, dlen);
	ASSERT_EQ(0, munmap(buf, len));
	again = mmap(buf, len, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
	ASSERT_EQ(buf, again);
	memset(again, 0x33, len);
	EXPECT_EQ(self->pin0 + 4 * pages, rmsg_vmpin_kb());
	EXPECT_TRUE(rmsg_pins_are(self->pins0, pages));

	/* Across a 2 MiB segment boundary, then a piece after it. */
	ASSERT_EQ(0, xfer(self->b, &self->cb, hs, src, n1, self->a,
			  &self->ca, hd, dst + 1, n1, 0));
	EXPECT_EQ(1, first_not(dst, 1, GUARD_BYTE));
	EXPECT_EQ(n1, first_bad(dst + 1, n1, 1));
	ASSERT_EQ(0, xfer(self->b, &self->cb, hs, src + n1 + 3, n2,
			  self->a, &self->ca, hd, dst + (2 << 20) + 7000, n2,
			  1));
	EXPECT_EQ(n2, first_bad(dst + (2 << 20) + 7000, n2, 2));
	EXPECT_EQ(dlen - (2 << 20) - 7000 - n2,
		  first_not(dst + (2 << 20) + 7000 + n2,
			    dlen - (2 << 20) - 7000 - n2, GUARD_BYTE));
	/* The new mapping was never touched. */
	EXPECT_EQ(len, first_not(again, len, 0x33));

	EXPECT_EQ(0, rmsg_dereg(self->b, hs));
	EXPECT_EQ(0, rmsg_dereg(self->a, hd));
	EXPECT_EQ(self->pin0, rmsg_vmpin_kb());
	EXPECT_TRUE(rmsg_pins_are(self->pins0, 0));
	munmap(again, len);
	munmap(dst, dlen);
}

/*
 * A destination the program unmaps while the message is read into it:
 * shared memory (memfd), so the bytes can still be seen through the file.
 * Both regions refuse to go (EBUSY) until their transfer's CQE, and go at
 * once after it.
 */
TEST_F(pair, destination_unmapped_mid_transfer)
{
	size_t dlen = 10 << 20, slen = (8 << 20) + PG;
	__u32 n = 8 << 20, off = 4096 + 3, hs, hd;
	unsigned char *src = map_anon(slen), *dst, *back;
	int fd = memfd_create("rmsg-dst", 0);
	struct rmsg_vb_msg msg;
	struct rmsg_cqe cqe;
	unsigned int busy = 0;
	long deadline;
	int ret;

	ASSERT_NE(NULL, src);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, ftruncate(fd, dlen));
	dst = mmap(NULL, dlen, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	ASSERT_NE(MAP_FAILED, dst);
	memset(dst, GUARD_BYTE, dlen);
	fill(src + 5, n, 3);
	ASSERT_EQ(0, rmsg_reg(self->b, src, slen, &hs));
	ASSERT_EQ(0, rmsg_reg(self->a, dst, dlen, &hd));

	ASSERT_EQ(0, send_rndv(self->b, &self->cb, hs, src + 5, n, 1));
	ASSERT_EQ(0, wait_rts(&self->ca, &msg, n, 0));
	/* Unanswered: the sender's region is busy already. */
	EXPECT_EQ(-EBUSY, rmsg_dereg(self->b, hs));
	ASSERT_EQ(0, queue_answer(self->a, &self->ca, hd, dst + off, n, 0, 0,
				  2));
	ASSERT_EQ(0, release(self->a, &self->ca, &msg));
	/* Answered, 8 MiB to read: busy, and the mapping goes meanwhile. */
	EXPECT_EQ(-EBUSY, rmsg_dereg(self->a, hd));
	ASSERT_EQ(0, munmap(dst, dlen));
	deadline = rmsg_now_ms() + EVENT_TIMEOUT_MS;
	while (!rmsg_take_cqe(self->a, &cqe)) {
		ASSERT_GT(deadline, rmsg_now_ms());
		ret = rmsg_dereg(self->a, hd);
		if (ret == -EBUSY) {
			busy++;
			usleep(10000);
			continue;
		}
		/* Gone before its CQE: only if the CQE is there now. */
		ASSERT_EQ(0, ret);
		ASSERT_TRUE(rmsg_take_cqe(self->a, &cqe));
		hd = 0;
		break;
	}
	EXPECT_EQ(2, cqe.user_data);
	EXPECT_EQ(0, cqe.res);
	EXPECT_EQ(n, cqe.len);
	if (hd)
		EXPECT_EQ(0, rmsg_dereg(self->a, hd));
	TH_LOG("%u DEREGs refused with EBUSY while the message was read",
	       busy);
	ASSERT_EQ(0, wait_op(self->b, 1, &cqe));
	EXPECT_EQ(0, cqe.res);
	EXPECT_EQ(0, rmsg_dereg(self->b, hs));
	EXPECT_EQ(self->pin0, rmsg_vmpin_kb());
	EXPECT_TRUE(rmsg_pins_are(self->pins0, 0));

	/* What the file holds: the message, and the guard bytes around. */
	back = malloc(dlen);
	ASSERT_NE(NULL, back);
	ASSERT_EQ((ssize_t)dlen, pread(fd, back, dlen, 0));
	EXPECT_EQ(off, first_not(back, off, GUARD_BYTE));
	EXPECT_EQ(n, first_bad(back + off, n, 3));
	EXPECT_EQ(dlen - off - n, first_not(back + off + n, dlen - off - n,
					    GUARD_BYTE));
	free(back);
	close(fd);
	munmap(src, slen);
}

/*
 * Spans a region does not hold, handles that name nothing, addresses
 * never mapped (in a region or in none): each SQE fails with the errno of
 * include/uapi/rdma/rmsg.h
 * and nothing reaches the peer. A refused answer leaves the RTS waiting
 * for a good one.
 */
TEST_F(pair, spans_outside_regions)
{
	unsigned char *buf = map_anon(8 * PG), *dbuf = map_anon(8 * PG);
	__u64 nowhere = 0x10000;	/* below mmap_min_addr: never mapped */
	unsigned char *src, *dst;
	__u32 hs, hd, gone, len = 5000;
	struct rmsg_vb_msg msg;
	struct rmsg_cqe cqe;
	unsigned int i;
	struct {
		__u32 region;
		__u64 addr;
		__u32 len;
		__u8 flags;
		__u64 cookie;
		int res;
	} tx[8], rx[9];

	ASSERT_NE(NULL, buf);
	ASSERT_NE(NULL, dbuf);
	src = buf + PG;
	dst = dbuf + PG;
	ASSERT_EQ(0, rmsg_reg(self->b, src, 4 * PG, &hs));
	ASSERT_EQ(0, rmsg_reg(self->a, dst, 4 * PG, &hd));
	ASSERT_EQ(0, rmsg_reg(self->a, dbuf, PG, &gone));
	ASSERT_EQ(0, rmsg_dereg(self->a, gone));

	/* The sender's SQEs. */
	tx[0] = (typeof(tx[0])){ hs, (uintptr_t)src - 1, 10, 0, 0, -EFAULT };
	tx[1] = (typeof(tx[0])){ hs, (uintptr_t)src + 4 * PG - 5, 10, 0, 0,
				 -EFAULT };
	tx[2] = (typeof(tx[0])){ hs, nowhere, 10, 0, 0, -EFAULT };
	tx[3] = (typeof(tx[0])){ hs, ~0ULL - 10, 100, 0, 0, -EFAULT };
	tx[4] = (typeof(tx[0])){ gone, (uintptr_t)dbuf, 10, 0, 0, -ENOENT };
	/* Region 0: memory in no region, pinned for the send, if mapped. */
	tx[5] = (typeof(tx[0])){ 0, nowhere, 10, 0, 0, -EFAULT };
	tx[6] = (typeof(tx[0])){ hs, (uintptr_t)src, 0, 0, 0, -EINVAL };
	tx[7] = (typeof(tx[0])){ hs, (uintptr_t)src, RMSG_RNDV_MAX_LEN + 1, 0,
				 0, -EINVAL };
	for (i = 0; i < ARRAY_SIZE(tx); i++) {
		struct rmsg_sqe *sqe = sqe_of(self->b, RMSG_OP_SEND_RNDV,
					      self->cb.id, 10 + i);

		ASSERT_NE(NULL, sqe);
		sqe->region = tx[i].region;
		sqe->addr = tx[i].addr;
		sqe->len = tx[i].len;
	}
	ASSERT_EQ(0, submit(self->b));
	for (i = 0; i < ARRAY_SIZE(tx); i++) {
		ASSERT_EQ(0, wait_op(self->b, 10 + i, &cqe));
		EXPECT_EQ(tx[i].res, cqe.res) TH_LOG("send %u", i);
		EXPECT_EQ(tx[i].len, cqe.len);
		EXPECT_EQ(tx[i].addr, cqe.aux);
	}
	EXPECT_EQ(0, rmsg_vb_rx_poll(&self->ca.rx, self->ca.block, &msg));

	/* A good message; the receiver's answers, all bad but the last. */
	fill(src + 3, len, 4);
	memset(dbuf, GUARD_BYTE, 8 * PG);
	ASSERT_EQ(0, send_rndv(self->b, &self->cb, hs, src + 3, len, 1));
	ASSERT_EQ(0, wait_rts(&self->ca, &msg, len, 0));
	rx[0] = (typeof(rx[0])){ hd, (uintptr_t)dst - 1, len, 0, 0, -EFAULT };
	rx[1] = (typeof(rx[0])){ hd, (uintptr_t)dst + 4 * PG - len + 1, len,
				 0, 0, -EFAULT };
	rx[2] = (typeof(rx[0])){ hd, nowhere, len, 0, 0, -EFAULT };
	rx[3] = (typeof(rx[0])){ gone, (uintptr_t)dbuf, len, 0, 0, -ENOENT };
	rx[4] = (typeof(rx[0])){ hd, (uintptr_t)dst, 0, 0, 0, -EINVAL };
	rx[5] = (typeof(rx[0])){ hd, (uintptr_t)dst, len, 0x80, 0, -EINVAL };
	rx[6] = (typeof(rx[0])){ hd, (uintptr_t)dst, len, 0, 1, -EINVAL };
	rx[7] = (typeof(rx[0])){ hd, (uintptr_t)dst, len,
				 RMSG_RNDV_F_DISCARD, 0, -EINVAL };
	rx[8] = (typeof(rx[0])){ hd, (uintptr_t)dst + 11, len, 0, 0, 0 };
	for (i = 0; i < ARRAY_SIZE(rx); i++)
		ASSERT_EQ(0, queue_answer(self->a, &self->ca, rx[i].region,
					  (void *)(uintptr_t)rx[i].addr,
					  rx[i].len, rx[i].cookie,
					  rx[i].flags, 20 + i));
	ASSERT_EQ(0, release(self->a, &self->ca, &msg));
	for (i = 0; i < ARRAY_SIZE(rx); i++) {
		ASSERT_EQ(0, wait_op(self->a, 20 + i, &cqe));
		EXPECT_EQ(rx[i].res, cqe.res) TH_LOG("answer %u", i);
		EXPECT_EQ(rx[i].cookie, cqe.aux);
	}
	EXPECT_EQ(len, cqe.len);
	ASSERT_EQ(0, wait_op(self->b, 1, &cqe));
	EXPECT_EQ(0, cqe.res);
	EXPECT_EQ(PG + 11, first_not(dbuf, PG + 11, GUARD_BYTE));
	EXPECT_EQ(len, first_bad(dst + 11, len, 4));
	EXPECT_EQ(7 * PG - 11 - len, first_not(dst + 11 + len,
					       7 * PG - 11 - len, GUARD_BYTE));
	EXPECT_EQ(0, rmsg_dereg(self->b, hs));
	EXPECT_EQ(0, rmsg_dereg(self->a, hd));
	EXPECT_EQ(-ENOENT, rmsg_dereg(self->a, gone));
	EXPECT_EQ(self->pin0, rmsg_vmpin_kb());
	EXPECT_TRUE(rmsg_pins_are(self->pins0, 0));
	munmap(buf, 8 * PG);
	munmap(dbuf, 8 * PG);
}

/* --- a peer killed in the middle -------------------------------------- */

#define BIG		(64U << 20)
#define KILL_TIMEOUT_MS	60000

/*
 * The forked child's end: its own endpoint, connected to the parent's
 * listener at @addr, with a region of BIG bytes and two more pages.
 * Returns 0 or a negative errno.
 */
static int child_open(struct rmsg_ep **epp, struct chan_end *ch,
		      unsigned char **mem, __u32 *region,
		      const struct sockaddr_in *addr)
{
	struct rmsg_cqe ev;
	struct rmsg_ep *ep;
	int id, ret;

	ret = open_ep(epp, 64, 256, 64 << 10, NULL);
	if (ret)
		return ret;
	ep = *epp;
	*mem = map_anon(BIG + 2 * PG);
	if (!*mem)
		return -ENOMEM;
	ret = rmsg_reg(ep, *mem, BIG + 2 * PG, region);
	if (ret)
		return ret;
	id = rmsg_chan_connect(ep, (const struct sockaddr *)addr,
			       sizeof(*addr), 0xc0, 0);
	if (id < 0)
		return id;
	ret = wait_event_ok(ep, RMSG_CQE_CONNECTED, &ev);
	return ret ?: start_chan(ep, ch, &ev);
}

/* Tell the parent @c, then wait to be killed. */
static void child_signal_and_wait(int fd, char c)
{
	if (write(fd, &c, 1) != 1)
		_exit(2);
	for (;;)
		pause();
}

/* Wait until mem[i] is @c: the message is arriving there. */
static bool wait_byte(const unsigned char *mem, size_t i, unsigned char c)
{
	long deadline = rmsg_now_ms() + KILL_TIMEOUT_MS;

	while (__atomic_load_n(&mem[i], __ATOMIC_RELAXED) != c) {
		if (rmsg_now_ms() > deadline)
			return false;
		usleep(1000);
	}
	return true;
}

/* Read one byte from the child, waiting at most KILL_TIMEOUT_MS. */
static char from_child(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	char c = 0;

	if (poll(&p, 1, KILL_TIMEOUT_MS) != 1 || read(fd, &c, 1) != 1)
		return 0;
	return c;
}

/*
 * The surviving end after the kill: every CQE of @uds comes once with an
 * error (unless @ok_ud, which may have gone through), then the channel's
 * CLOSED event with an error; each within bounded time.
 */
static void expect_all_fail(struct __test_metadata *_metadata,
			    struct rmsg_ep *ep, const __u64 *uds,
			    unsigned int n, __u64 ok_ud)
{
	unsigned int seen[16] = { 0 }, i;
	struct rmsg_cqe cqe;
	bool closed = false;

	while (!closed) {
		ASSERT_EQ(0, rmsg_next_cqe(ep, &cqe, KILL_TIMEOUT_MS))
			TH_LOG("hung after the peer died");
		if (RMSG_CQE_KIND(cqe.flags) == RMSG_CQE_CLOSED) {
			/*
			 * The peer's release said RESET, even with megabytes
			 * of READs ahead of it: not a repair that gave up.
			 */
			EXPECT_EQ(-ECONNRESET, cqe.res);
			closed = true;
			continue;
		}
		ASSERT_EQ(RMSG_CQE_OP, RMSG_CQE_KIND(cqe.flags));
		for (i = 0; i < n && uds[i] != cqe.user_data; i++)
			;
		ASSERT_GT(n, i) TH_LOG("user_data %llu", cqe.user_data);
		seen[i]++;
		if (cqe.user_data != ok_ud)
			EXPECT_GT(0, cqe.res) TH_LOG("user_data %llu",
						     cqe.user_data);
	}
	for (i = 0; i < n; i++)
		EXPECT_EQ(1, seen[i]) TH_LOG("user_data %llu", uds[i]);
	EXPECT_FALSE(rmsg_take_cqe(ep, &cqe));
}

/* Wait for the pins to come back: a killed process lets go as it exits. */
static bool pins_back(long pins0)
{
	long deadline = rmsg_now_ms() + 5000;

	while (!rmsg_pins_are(pins0, 0)) {
		if (rmsg_now_ms() > deadline)
			return false;
		usleep(10000);
	}
	return true;
}

FIXTURE(peer) {
	struct rmsg_ep *a;
	struct chan_end ca;
	struct sockaddr_in addr;
	int pipefd[2];
	pid_t pid;
	long pin0;
	long pins0;
	bool opened;
};

FIXTURE_SETUP(peer)
{
	self->pid = -1;
	if (!rmsg_local_addr(&self->addr, 0))
		SKIP(rmsg_setup_skipped(_metadata); return,
		     "RMSG_LOCAL_ADDR not set: not run by rmsg-vm");
	self->pin0 = rmsg_vmpin_kb();
	self->pins0 = rmsg_pins();
	ASSERT_EQ(0, open_ep(&self->a, 64, 256, 64 << 10, NULL));
	self->opened = true;
	ASSERT_EQ(0, rmsg_ep_listen(self->a, (struct sockaddr *)&self->addr,
				    sizeof(self->addr), 0xa0, 0));
	ASSERT_EQ(0, pipe(self->pipefd));
}

FIXTURE_TEARDOWN(peer)
{
	if (self->pid > 0) {
		kill(self->pid, SIGKILL);
		waitpid(self->pid, NULL, 0);
	}
	if (self->opened)
		rmsg_ep_drop(&self->a);
}

/* Accept the child's channel; the child has connected by then. */
static void accept_child(struct __test_metadata *_metadata, struct rmsg_ep *a,
			 struct chan_end *ca, int *write_end)
{
	struct rmsg_cqe ev;

	close(*write_end);
	*write_end = -1;
	ASSERT_EQ(0, wait_event_ok(a, RMSG_CQE_ACCEPTED, &ev));
	ASSERT_EQ(0, start_chan(a, ca, &ev));
}

static void kill_child(struct __test_metadata *_metadata, pid_t *pid)
{
	int status;

	ASSERT_EQ(0, kill(*pid, SIGKILL));
	ASSERT_EQ(*pid, waitpid(*pid, &status, 0));
	*pid = -1;
	EXPECT_TRUE(WIFSIGNALED(status));
}

/*
 * The child reads 64 MiB from us and is killed once the bytes are
 * arriving. Our sends all complete with an error: the one being read,
 * seven more whose RTS records went unanswered, four waiting behind the
 * window, and an eager one behind those.
 */
TEST_F_TIMEOUT(peer, reader_killed, 300)
{
	unsigned char *mem = map_anon(BIG + (2 << 20));
	__u64 uds[14];
	struct rmsg_sqe *sqe;
	unsigned int i;
	__u32 region;

	ASSERT_NE(NULL, mem);
	self->pid = fork();
	ASSERT_LE(0, self->pid);
	if (!self->pid) {
		struct rmsg_ep *ep = NULL;
		struct chan_end ch;
		struct rmsg_vb_msg msg;
		unsigned char *dst;
		__u32 h;

		close(self->pipefd[0]);
		if (child_open(&ep, &ch, &dst, &h, &self->addr) ||
		    wait_rts(&ch, &msg, BIG, 0) ||
		    queue_answer(ep, &ch, h, dst + 1, BIG, 0, 0, 9) ||
		    release(ep, &ch, &msg))
			_exit(1);
		/* The first MiB is in, the last byte is not. */
		if (!wait_byte(dst, 1 << 20, 0x5a))
			_exit(1);
		child_signal_and_wait(self->pipefd[1], dst[BIG] ? 'F' : 'R');
	}
	accept_child(_metadata, self->a, &self->ca, &self->pipefd[1]);
	memset(mem, 0x5a, BIG + (2 << 20));
	ASSERT_EQ(0, rmsg_reg(self->a, mem, BIG + (2 << 20), &region));
	ASSERT_EQ(0, send_rndv(self->a, &self->ca, region, mem, BIG, 1));
	uds[0] = 1;
	for (i = 1; i < 13; i++) {
		uds[i] = 1 + i;
		ASSERT_EQ(0, send_rndv(self->a, &self->ca, region,
				       mem + BIG + i * 8192 + i, 4097 + i,
				       uds[i]));
	}
	sqe = sqe_of(self->a, RMSG_OP_SEND, self->ca.id, 20);
	ASSERT_NE(NULL, sqe);
	sqe->len = 100;
	uds[13] = 20;
	ASSERT_EQ(0, submit(self->a));
	ASSERT_EQ('R', from_child(self->pipefd[0]))
		TH_LOG("the child never saw the bytes arrive, or all of them");
	kill_child(_metadata, &self->pid);
	expect_all_fail(_metadata, self->a, uds, ARRAY_SIZE(uds), 0);
	EXPECT_EQ(0, rmsg_dereg(self->a, region));
	EXPECT_EQ(self->pin0, rmsg_vmpin_kb());
	EXPECT_TRUE(pins_back(self->pins0));
	munmap(mem, BIG + (2 << 20));
}

/*
 * We read 64 MiB from the child, and kill it once the bytes are arriving:
 * our RECV_RNDVs, of that message and of the next one, complete with an
 * error, nothing is written past the room, and the pins of both
 * processes go back.
 */
TEST_F_TIMEOUT(peer, sender_killed, 300)
{
	unsigned char *mem = map_anon(BIG + (2 << 20));
	static const __u64 uds[] = { 9, 10 };
	struct rmsg_vb_msg msg;
	__u32 region;

	ASSERT_NE(NULL, mem);
	self->pid = fork();
	ASSERT_LE(0, self->pid);
	if (!self->pid) {
		struct rmsg_ep *ep = NULL;
		struct chan_end ch;
		unsigned char *src;
		__u32 h;

		close(self->pipefd[0]);
		if (child_open(&ep, &ch, &src, &h, &self->addr))
			_exit(1);
		memset(src, 0x5a, BIG + 2 * PG);
		if (send_rndv(ep, &ch, h, src, BIG, 1) ||
		    send_rndv(ep, &ch, h, src + 1, 1 << 20, 2))
			_exit(1);
		child_signal_and_wait(self->pipefd[1], 'S');
	}
	accept_child(_metadata, self->a, &self->ca, &self->pipefd[1]);
	ASSERT_EQ(0, rmsg_reg(self->a, mem, BIG + (2 << 20), &region));
	ASSERT_EQ(0, wait_rts(&self->ca, &msg, BIG, 0));
	ASSERT_EQ(0, queue_answer(self->a, &self->ca, region, mem + 1, BIG,
				  0, 0, 9));
	ASSERT_EQ(0, release(self->a, &self->ca, &msg));
	/* The second waits for the reads of the first: answered, unread. */
	ASSERT_EQ(0, wait_rts(&self->ca, &msg, 1 << 20, 1));
	ASSERT_EQ(0, queue_answer(self->a, &self->ca, region,
				  mem + BIG + 1, 1 << 20, 1, 0, 10));
	ASSERT_EQ(0, release(self->a, &self->ca, &msg));
	ASSERT_EQ('S', from_child(self->pipefd[0]));
	ASSERT_TRUE(wait_byte(mem, 1 << 20, 0x5a));
	ASSERT_EQ(0, mem[BIG]) TH_LOG("all of it came before the kill");
	kill_child(_metadata, &self->pid);
	expect_all_fail(_metadata, self->a, uds, ARRAY_SIZE(uds), 0);
	EXPECT_EQ(0, mem[0]);
	/* Nothing past the first room, nothing of the second message. */
	EXPECT_EQ((2 << 20) - 1, first_not(mem + BIG + 1, (2 << 20) - 1, 0));
	EXPECT_EQ(0, rmsg_dereg(self->a, region));
	EXPECT_EQ(self->pin0, rmsg_vmpin_kb());
	EXPECT_TRUE(pins_back(self->pins0));
	munmap(mem, BIG + (2 << 20));
}

/* --- the receiving process forks, or lets go, in the middle ---------- */

/* Wait until the first @n bytes of message @id are at @p. */
static bool wait_bytes(const unsigned char *p, uint64_t n, uint32_t id)
{
	long deadline = rmsg_now_ms() + KILL_TIMEOUT_MS;

	while (first_bad(p, n, id) != n) {
		if (rmsg_now_ms() > deadline)
			return false;
		usleep(1000);
	}
	return true;
}

/*
 * The receiver forks while a message is read into its region, and writes
 * to the region's first and last pages afterwards: the pinned pages stay
 * its own (the child gets copies), so it sees every byte the transfer
 * writes, after the fork too.
 */
TEST_F(pair, fork_while_reading)
{
	size_t len = 8 << 20;
	unsigned char *src = map_anon(len), *dst = map_anon(len + PG);
	__u32 hs, hd, n = len - 5;
	struct rmsg_vb_msg msg;
	struct rmsg_cqe cqe;
	pid_t pid;

	ASSERT_NE(NULL, src);
	ASSERT_NE(NULL, dst);
	fill(src + 5, n, 5);
	memset(dst, GUARD_BYTE, len + PG);
	ASSERT_EQ(0, rmsg_reg(self->b, src, len, &hs));
	ASSERT_EQ(0, rmsg_reg(self->a, dst, len + PG, &hd));
	ASSERT_EQ(0, send_rndv(self->b, &self->cb, hs, src + 5, n, 1));
	ASSERT_EQ(0, wait_rts(&self->ca, &msg, n, 0));
	ASSERT_EQ(0, queue_answer(self->a, &self->ca, hd, dst + 3, n, 0, 0,
				  2));
	ASSERT_EQ(0, release(self->a, &self->ca, &msg));
	ASSERT_TRUE(wait_bytes(dst + 3, 4096, 5));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid)
		_exit(0);
	/* The guard bytes, written again: a fault would copy the page. */
	dst[0] = GUARD_BYTE;
	dst[3 + n] = GUARD_BYTE;
	EXPECT_EQ(0, rmsg_child_status(pid));
	ASSERT_EQ(0, wait_op(self->a, 2, &cqe));
	EXPECT_EQ(0, cqe.res);
	ASSERT_EQ(0, wait_op(self->b, 1, &cqe));
	EXPECT_EQ(0, cqe.res);
	EXPECT_EQ(3, first_not(dst, 3, GUARD_BYTE));
	EXPECT_EQ(n, first_bad(dst + 3, n, 5));
	EXPECT_EQ(len + PG - 3 - n, first_not(dst + 3 + n, len + PG - 3 - n,
					      GUARD_BYTE));
	EXPECT_EQ(0, rmsg_dereg(self->a, hd));
	EXPECT_EQ(0, rmsg_dereg(self->b, hs));
	EXPECT_EQ(self->pin0, rmsg_vmpin_kb());
	EXPECT_TRUE(rmsg_pins_are(self->pins0, 0));
	munmap(src, len);
	munmap(dst, len + PG);
}

/*
 * The receiver lets go of its endpoint (the last descriptor and the
 * last mapping) while a message is read into its region: its pins go
 * with it, and the sender's SEND_RNDV completes with an error.
 */
TEST_F(pair, receiver_released_mid_read)
{
	size_t len = 8 << 20;
	unsigned char *src = map_anon(len), *dst = map_anon(len);
	static const __u64 uds[] = { 1 };
	struct rmsg_vb_msg msg;
	__u32 hs, hd;

	ASSERT_NE(NULL, src);
	ASSERT_NE(NULL, dst);
	memset(src, 0x5a, len);
	ASSERT_EQ(0, rmsg_reg(self->b, src, len, &hs));
	ASSERT_EQ(0, rmsg_reg(self->a, dst, len, &hd));
	ASSERT_EQ(0, send_rndv(self->b, &self->cb, hs, src, len, 1));
	ASSERT_EQ(0, wait_rts(&self->ca, &msg, len, 0));
	ASSERT_EQ(0, queue_answer(self->a, &self->ca, hd, dst, len, 0, 0,
				  2));
	ASSERT_EQ(0, release(self->a, &self->ca, &msg));
	ASSERT_TRUE(wait_byte(dst, (1 << 20) - 1, 0x5a));
	ASSERT_EQ(0, dst[len - 1]) TH_LOG("all of it came before the close");
	munmap((void *)self->ca.block, self->ca.block_len);
	rmsg_ep_drop(&self->a);
	self->a_closed = true;
	EXPECT_EQ(self->pin0 + 4 * span_pages(src, len), rmsg_vmpin_kb());
	EXPECT_TRUE(rmsg_pins_are(self->pins0, span_pages(src, len)));
	expect_all_fail(_metadata, self->b, uds, ARRAY_SIZE(uds), 0);
	EXPECT_EQ(0, rmsg_dereg(self->b, hs));
	EXPECT_EQ(self->pin0, rmsg_vmpin_kb());
	EXPECT_TRUE(rmsg_pins_are(self->pins0, 0));
	munmap(src, len);
	munmap(dst, len);
}

int main(int argc, char **argv)
{
	return rmsg_test_main(argc, argv);
}
