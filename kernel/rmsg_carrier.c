// SPDX-License-Identifier: GPL-2.0
/*
 * rmsg: a carrier's link messages (Documentation/design.rst, "How the
 * module will carry links"; the wire and the credits in
 * Documentation/protocol.rst, "Links").
 *
 * A carrier is a channel of the module's own endpoint (rmsg_links.c); its
 * connection carries, beside the channel's own control messages, the
 * link's: a control header naming a channel on the link, a HELLO with a
 * channel's hello, LCREDITs. Both share the connection's receive queue:
 * all RMSG_CARRIER_RECVS receives take the longer message, so either kind
 * can land in any of them, and neither kind can take the other's room,
 * because each side sends its own control messages within the channel's
 * RMSG_CTRL_RECVS as any channel does, and its link messages within what
 * the peer's LCREDITs announced (struct rmsg_link_credit, the protocol
 * core). A completion tells the kinds apart by the header:
 * rmsg_ctrl_decode() takes only the channel's own (no channel named, a
 * channel's type), and everything else must pass rmsg_lmsg_decode().
 *
 * What the link carries so far: LCREDITs, and the answers to HELLOs, all
 * REFUSEs while no channel rides on a link; probes (RMSG_FAULT_LINK_PROBE)
 * are HELLO CONNECTs to port RMSG_CARRIER_PROBE_PORT that the peer
 * refuses, which drive the whole credit cycle through real connections.
 *
 * Locking: struct rmsg_carrier's lock guards its credits, its send ring
 * and its queue of answers; completions take it in softirq, everything
 * else with bottom halves off. It nests inside the channel's chan_lock
 * (the probe) and takes nothing itself but the post: ib_post_send() of a
 * kernel QP, which rxe may follow by running its tasklet when bottom
 * halves come back on, after the lock is dropped.
 *
 * Lifetime: the struct comes with the channel's first device and goes
 * with the channel; its buffers are mapped for each device the channel
 * is on (rmsg_chan_dev_create() and _release()); its credits and send
 * ring start again with every connection, once the previous QP was
 * drained, so no completion of an earlier connection is still to come.
 *
 * Layer (Documentation/design.rst, "Layers"): of the module's files it
 * calls only these, all below it: rmsg_wr.c.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/slab.h>
#include <rdma/ib_verbs.h>

#include "rmsg.h"
#include "rmsg_carrier.h"
#include "rmsg_chan.h"
#include "rmsg_wr.h"
#include "core/rmsg_link.h"

/* The service port probes ask for: nothing listens on a link yet. */
#define RMSG_CARRIER_PROBE_PORT	1
/*
 * Answers owed to the peer's HELLOs. A peer within its credits has at
 * most RMSG_LINK_RECVS HELLOs unanswered while our answers wait for its
 * LCREDIT; twice that is a peer that keeps its credits from us.
 */
#define RMSG_CARRIER_ANSWERS	(2 * RMSG_LINK_RECVS)

/**
 * struct rmsg_carrier_buf - one receive or send buffer of a carrier
 * @cqe: its completion handler
 * @ch: the carrier
 * @dma: its mapping for the carrier's device, 0 while on none
 * @msg: the bytes, RMSG_WIRE_LMSG_MAX of them
 */
struct rmsg_carrier_buf {
	struct ib_cqe cqe;
	struct rmsg_channel *ch;
	u64 dma;
	u8 msg[RMSG_WIRE_LMSG_MAX];
};

/* A REFUSE owed: the peer's channel, and why. */
struct rmsg_carrier_answer {
	u32 chan;
	u8 err;
};

/**
 * struct rmsg_carrier - a carrier's link, this side
 * @lock: guards everything below but the buffers' mappings
 * @credit: the link's credits on the current connection
 * @live: a connection is there to post on (its receives were posted)
 * @tx_posted: link sends posted on the current connection
 * @tx_done: of those, completed (in order: all are signalled)
 * @answers: REFUSEs owed, a ring of RMSG_CARRIER_ANSWERS
 * @ans_head: next to send
 * @ans_tail: next free
 * @probe_chan: the link id the next probe names as its channel
 * @stats: what the link carried
 * @rx: RMSG_CARRIER_RECVS receive buffers
 * @tx: RMSG_CARRIER_SENDS send buffers, used in turn
 */
struct rmsg_carrier {
	spinlock_t lock;
	struct rmsg_link_credit credit;
	bool live;
	u32 tx_posted;
	u32 tx_done;
	struct rmsg_carrier_answer answers[RMSG_CARRIER_ANSWERS];
	u32 ans_head;
	u32 ans_tail;
	u32 probe_chan;
	struct rmsg_carrier_stats stats;
	struct rmsg_carrier_buf *rx;
	struct rmsg_carrier_buf *tx;
};

static void rmsg_carrier_recv_done(struct ib_cq *cq, struct ib_wc *wc);
static void rmsg_carrier_send_done(struct ib_cq *cq, struct ib_wc *wc);

static int rmsg_carrier_post_recv(struct rmsg_carrier_buf *buf)
{
	struct ib_sge sge = {
		.addr	= buf->dma,
		.length	= sizeof(buf->msg),
		.lkey	= buf->ch->dev.pd->local_dma_lkey,
	};
	struct ib_recv_wr wr = {
		.wr_cqe		= &buf->cqe,
		.sg_list	= &sge,
		.num_sge	= 1,
	};

	return ib_post_recv(buf->ch->conn->qp, &wr, NULL);
}

static int rmsg_carrier_repost(void *buf)
{
	return rmsg_carrier_post_recv(buf);
}

/* The next link message to go, if one may: under the lock. */
static bool rmsg_carrier_next(struct rmsg_channel *ch, struct rmsg_lmsg *m)
{
	struct rmsg_carrier *c = ch->carrier;

	memset(m, 0, sizeof(*m));
	if (rmsg_link_announce_due(&c->credit) &&
	    rmsg_link_may_announce(&c->credit)) {
		m->type = RMSG_CTRL_LCREDIT;
		m->chan = RMSG_LINK_SELF;
		m->arg = rmsg_link_announce(&c->credit);
		c->stats.lcredit_sent++;
		return true;
	}
	if (!rmsg_link_may_send(&c->credit))
		return false;
	if (c->ans_head != c->ans_tail) {
		struct rmsg_carrier_answer *a =
			&c->answers[c->ans_head++ % RMSG_CARRIER_ANSWERS];

		m->type = RMSG_CTRL_REFUSE;
		m->chan = a->chan;
		m->arg = a->err;
		c->stats.refused_sent++;
		return true;
	}
	if (c->stats.probes_left) {
		c->stats.probes_left--;
		m->type = RMSG_CTRL_HELLO;
		m->chan = RMSG_LINK_NO_CHAN;
		m->arg = RMSG_CARRIER_PROBE_PORT;
		m->hello.kind = RMSG_HELLO_CONNECT;
		m->hello.incarnation = ch->ep->incarnation;
		m->hello.channel = c->probe_chan;
		m->hello.peer_channel = RMSG_WIRE_NO_CHANNEL;
		m->hello.block_size = ch->block_size;
		c->probe_chan = c->probe_chan % RMSG_LINK_CHAN_MAX + 1;
		return true;
	}
	return false;
}

/*
 * Post what may go: LCREDITs first (they have a receive of the peer's to
 * themselves), then answers, then probes, while send buffers are free.
 * Under the lock. Return: 0, or the post's error (the connection failed).
 */
static int rmsg_carrier_push(struct rmsg_channel *ch)
{
	struct rmsg_carrier *c = ch->carrier;
	struct ib_device *ibdev = ch->dev.rdev->ibdev;
	struct rmsg_lmsg m;

	lockdep_assert_held(&c->lock);
	while (c->live && c->tx_posted - c->tx_done < RMSG_CARRIER_SENDS &&
	       rmsg_carrier_next(ch, &m)) {
		struct rmsg_carrier_buf *buf =
			&c->tx[c->tx_posted % RMSG_CARRIER_SENDS];
		u32 len = rmsg_lmsg_encode(buf->msg, &m);
		int ret;

		ib_dma_sync_single_for_device(ibdev, buf->dma, len,
					      DMA_TO_DEVICE);
		rmsg_link_sent(&c->credit);
		c->tx_posted++;
		c->stats.sent++;
		ret = rmsg_send_buf(ch, &buf->cqe, buf->dma, len);
		if (ret) {
			c->live = false;
			return ret;
		}
	}
	return 0;
}

/* Owe the peer's channel @chan a REFUSE: under the lock. */
static int rmsg_carrier_refuse(struct rmsg_carrier *c, u32 chan, int err)
{
	struct rmsg_carrier_answer *a;

	if (c->ans_tail - c->ans_head == RMSG_CARRIER_ANSWERS)
		return -EPROTO;
	a = &c->answers[c->ans_tail++ % RMSG_CARRIER_ANSWERS];
	a->chan = chan;
	a->err = err;
	return 0;
}

/* A link message, decoded and within its credits: under the lock. */
static int rmsg_carrier_take(struct rmsg_carrier *c, const struct rmsg_lmsg *m)
{
	switch (m->type) {
	case RMSG_CTRL_LCREDIT:
		c->stats.lcredit_received++;
		return rmsg_link_credit_in(&c->credit, m->arg);
	case RMSG_CTRL_HELLO:
		/*
		 * No channel rides on a link yet: nothing listens on one, and
		 * no channel of ours on it is there to resume or accept.
		 */
		return rmsg_carrier_refuse(c, m->hello.channel,
					   m->hello.kind == RMSG_HELLO_CONNECT ?
					   ECONNREFUSED : ENOENT);
	case RMSG_CTRL_REFUSE:
		c->stats.refused_received++;
		return 0;
	default:
		/* A channel's message for a channel this side does not have. */
		c->stats.dropped++;
		return 0;
	}
}

/*
 * A link message arrived: the peer's within its credits, or the carrier
 * ends (-EPROTO). Softirq; its buffer was posted again.
 */
static int rmsg_carrier_arrived(struct rmsg_channel *ch,
				const struct rmsg_lmsg *m)
{
	struct rmsg_carrier *c = ch->carrier;
	int ret;

	spin_lock(&c->lock);
	ret = rmsg_link_arrived(&c->credit);
	if (!ret) {
		rmsg_link_reposted(&c->credit);
		c->stats.received++;
		ret = rmsg_carrier_take(c, m);
	}
	if (!ret)
		ret = rmsg_carrier_push(ch);
	spin_unlock(&c->lock);
	return ret;
}

static void rmsg_carrier_recv_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct rmsg_carrier_buf *buf =
		container_of(wc->wr_cqe, struct rmsg_carrier_buf, cqe);
	struct rmsg_channel *ch = buf->ch;
	struct rmsg_lmsg m;
	u8 type;
	u64 arg;
	int ret;

	if (wc->status != IB_WC_SUCCESS) {
		/* The connection is over: nothing more is posted on it. */
		spin_lock(&ch->carrier->lock);
		ch->carrier->live = false;
		spin_unlock(&ch->carrier->lock);
		rmsg_ctrl_recv_failed(ch, wc);
		return;
	}
	ib_dma_sync_single_for_cpu(ch->dev.rdev->ibdev, buf->dma,
				   sizeof(buf->msg), DMA_FROM_DEVICE);
	/* The carrier's own, as on any channel's connection. */
	if (!rmsg_ctrl_decode(buf->msg, wc->byte_len, &type, &arg)) {
		rmsg_ctrl_recv_take(ch, type, arg, rmsg_carrier_repost, buf);
		return;
	}
	ret = rmsg_lmsg_decode(&m, buf->msg, wc->byte_len);
	if (ret) {
		pr_notice_ratelimited("carrier %u: a link message that is not one (%u bytes)\n",
				      ch->id, wc->byte_len);
		rmsg_chan_kill_soft(ch, -EPROTO);
		return;
	}
	/* Posted again first, as the credit it is about to announce says. */
	if (rmsg_carrier_post_recv(buf)) {
		rmsg_chan_kill_soft(ch, -ECONNRESET);
		return;
	}
	ret = rmsg_carrier_arrived(ch, &m);
	if (ret)
		rmsg_chan_kill_soft(ch, ret == -EPROTO ? -EPROTO : -ECONNRESET);
}

static void rmsg_carrier_send_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct rmsg_carrier_buf *buf =
		container_of(wc->wr_cqe, struct rmsg_carrier_buf, cqe);
	struct rmsg_channel *ch = buf->ch;
	struct rmsg_carrier *c = ch->carrier;
	int ret = 0;

	spin_lock(&c->lock);
	c->tx_done++;
	if (wc->status == IB_WC_SUCCESS)
		ret = rmsg_carrier_push(ch);
	else
		c->live = false;
	spin_unlock(&c->lock);
	if (ret || (wc->status != IB_WC_SUCCESS &&
		    wc->status != IB_WC_WR_FLUSH_ERR))
		rmsg_chan_kill_soft(ch, -ECONNRESET);
}

static void rmsg_carrier_unmap(struct rmsg_channel *ch,
			       struct rmsg_carrier_buf *bufs, u32 n,
			       enum dma_data_direction dir)
{
	u32 i;

	for (i = 0; i < n; i++) {
		if (bufs[i].dma)
			ib_dma_unmap_single(ch->dev.rdev->ibdev, bufs[i].dma,
					    sizeof(bufs[i].msg), dir);
		bufs[i].dma = 0;
	}
}

static int rmsg_carrier_map(struct rmsg_channel *ch,
			    struct rmsg_carrier_buf *bufs, u32 n,
			    enum dma_data_direction dir)
{
	struct ib_device *ibdev = ch->dev.rdev->ibdev;
	u32 i;

	for (i = 0; i < n; i++) {
		bufs[i].ch = ch;
		bufs[i].cqe.done = dir == DMA_FROM_DEVICE ?
				   rmsg_carrier_recv_done :
				   rmsg_carrier_send_done;
		bufs[i].dma = ib_dma_map_single(ibdev, bufs[i].msg,
						sizeof(bufs[i].msg), dir);
		if (ib_dma_mapping_error(ibdev, bufs[i].dma)) {
			bufs[i].dma = 0;
			return -ENOMEM;
		}
	}
	return 0;
}

/**
 * rmsg_carrier_dev_create() - a carrier's link buffers, for its device
 * @ch: a channel of the module's endpoint, just put on a device
 *
 * The state is made with the first device, kept for the channel's life
 * (its counters with it); the buffers are mapped anew for each device.
 * The memory is the module's, charged to no program, as the carrier is.
 *
 * Return: 0 or -ENOMEM; rmsg_carrier_dev_release() undoes a part done.
 */
int rmsg_carrier_dev_create(struct rmsg_channel *ch)
{
	struct rmsg_carrier *c = ch->carrier;
	int ret;

	if (!c) {
		c = kzalloc(sizeof(*c), GFP_KERNEL);
		if (!c)
			return -ENOMEM;
		c->rx = kcalloc(RMSG_CARRIER_RECVS, sizeof(*c->rx),
				GFP_KERNEL);
		c->tx = kcalloc(RMSG_CARRIER_SENDS, sizeof(*c->tx),
				GFP_KERNEL);
		if (!c->rx || !c->tx) {
			kfree(c->rx);
			kfree(c->tx);
			kfree(c);
			return -ENOMEM;
		}
		spin_lock_init(&c->lock);
		c->probe_chan = 1;
		ch->carrier = c;
	}
	ret = rmsg_carrier_map(ch, c->rx, RMSG_CARRIER_RECVS,
			       DMA_FROM_DEVICE);
	if (!ret)
		ret = rmsg_carrier_map(ch, c->tx, RMSG_CARRIER_SENDS,
				       DMA_TO_DEVICE);
	return ret;
}

/* Off its device: the buffers' mappings go (no QP uses them any more). */
void rmsg_carrier_dev_release(struct rmsg_channel *ch)
{
	struct rmsg_carrier *c = ch->carrier;

	if (!c)
		return;
	spin_lock_bh(&c->lock);
	c->live = false;
	spin_unlock_bh(&c->lock);
	rmsg_carrier_unmap(ch, c->rx, RMSG_CARRIER_RECVS, DMA_FROM_DEVICE);
	rmsg_carrier_unmap(ch, c->tx, RMSG_CARRIER_SENDS, DMA_TO_DEVICE);
}

/* The channel's end: it is on no device. */
void rmsg_carrier_free(struct rmsg_channel *ch)
{
	struct rmsg_carrier *c = ch->carrier;

	if (!c)
		return;
	ch->carrier = NULL;
	kfree(c->rx);
	kfree(c->tx);
	kfree(c);
}

/**
 * rmsg_carrier_post_recvs() - a carrier's new connection: its receives
 * @ch: the carrier, its new QP in INIT
 *
 * Every receive of the QP, the channel's own and the link's: the credits
 * start anew (the peer's receives are new ones too), and so does the send
 * ring; answers owed on the last connection are dropped, since the peer's
 * channels ask again on the new one. The previous QP was drained: none
 * of its completions is still to come.
 *
 * Return: 0, or what ib_post_recv() returns.
 */
int rmsg_carrier_post_recvs(struct rmsg_channel *ch)
{
	struct rmsg_carrier *c = ch->carrier;
	u32 i;
	int ret;

	spin_lock_bh(&c->lock);
	rmsg_link_credit_init(&c->credit, RMSG_LINK_RECVS, RMSG_LINK_RECVS);
	c->tx_posted = 0;
	c->tx_done = 0;
	c->ans_head = 0;
	c->ans_tail = 0;
	c->live = true;
	spin_unlock_bh(&c->lock);
	for (i = 0; i < RMSG_CARRIER_RECVS; i++) {
		ret = rmsg_carrier_post_recv(&c->rx[i]);
		if (ret)
			return ret;
	}
	return 0;
}

/**
 * rmsg_carrier_probe() - send HELLOs the peer module refuses
 * @ch: an open carrier (RMSG_FAULT_LINK_PROBE)
 * @count: how many, 1 to RMSG_LINK_PROBE_MAX (rmsg_ctl.c checks), on top of
 *	those not sent yet
 *
 * Each is a CONNECT to a port nothing listens on: the peer answers each
 * with a REFUSE. They go as credits allow, as a channel's would.
 *
 * Return: 0; -ENOTCONN while the carrier has no connection; -EBUSY with
 * 2^20 probes still waiting.
 */
int rmsg_carrier_probe(struct rmsg_channel *ch, u32 count)
{
	struct rmsg_carrier *c = ch->carrier;
	int ret = 0, post = 0;

	if (!c)
		return -ENOTCONN;
	spin_lock_bh(&c->lock);
	if (!c->live) {
		ret = -ENOTCONN;
	} else if (c->stats.probes_left + count > (1U << 20)) {
		ret = -EBUSY;
	} else {
		c->stats.probes_left += count;
		post = rmsg_carrier_push(ch);
	}
	spin_unlock_bh(&c->lock);
	if (post)
		rmsg_chan_kill_soft(ch, -ECONNRESET);
	return ret;
}

/* A carrier's counters, all zero before its first device. */
void rmsg_carrier_stats(struct rmsg_channel *ch,
			struct rmsg_carrier_stats *stats)
{
	struct rmsg_carrier *c = ch->carrier;

	memset(stats, 0, sizeof(*stats));
	if (!c)
		return;
	spin_lock_bh(&c->lock);
	*stats = c->stats;
	spin_unlock_bh(&c->lock);
}
