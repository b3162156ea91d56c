// SPDX-License-Identifier: GPL-2.0
/*
 * rmsg: a carrier's link messages (Documentation/design.rst, "How the
 * module carries links"; the wire and the credits in
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
 * What the link carries: LCREDITs; the control messages and HELLOs of
 * the channels on the link (struct rmsg_lchan: a link id each, in the
 * carrier's xarray, from rmsg_carrier_attach() to rmsg_carrier_detach()),
 * sent in turn within the credits, each send's completion reported to
 * the channel (rmsg_ctrl_sent(), or the hello_sent op); the answers to
 * HELLOs. What arrives for a channel goes to it: its control types to the
 * handlers rmsg_wr.c keeps (rmsg_ctrl_recv_handle()), HELLOs and REFUSEs
 * to the ops a higher layer registered at module load
 * (rmsg_carrier_on_link()); with none registered every HELLO is refused.
 * Probes (RMSG_FAULT_LINK_PROBE) are HELLO CONNECTs to port
 * RMSG_CARRIER_PROBE_PORT that the peer refuses, which drive the whole
 * credit cycle through real connections.
 *
 * Locking: struct rmsg_carrier's lock guards its credits, its send ring,
 * its queue of answers, its channels (the xarray is written under it too)
 * and the copy of its connection (QP, PD, device); completions take it in
 * softirq, everything else with bottom halves off. It nests inside any
 * chan_lock (the probe, the ESTABLISHED handler) and takes nothing itself
 * but the xarray's lock and the post: ib_post_send() of a kernel QP, which
 * rxe may follow by running its tasklet when bottom halves come back on,
 * after the lock is dropped. What it calls of a channel on the link runs
 * under it (the handlers of rmsg_wr.c's tables, the registered ops): they
 * may set bits, complete and queue work, never send or attach, and that
 * is what keeps the channel alive while they run: rmsg_carrier_detach()
 * takes the channel out under the lock.
 *
 * Lifetime: the struct comes with the carrier's first device and is
 * counted: the carrier holds a reference until its end
 * (rmsg_carrier_free()), the links' entry one (rmsg_carrier_of()), each
 * channel on the link one. Its buffers are mapped for each device the
 * carrier is on (rmsg_chan_dev_create() and _release()) and freed at the
 * carrier's end, after which the struct only answers that it has no
 * connection. Its credits and send ring start again with every
 * connection, once the previous QP was drained, so no completion of an
 * earlier connection is still to come. The copy of the connection is set
 * when the connection is established (rmsg_carrier_established()) and
 * cleared at the first failed completion, which every connection's end
 * brings (the drain flushes the receives, always posted) before its QP
 * is destroyed, and when the carrier leaves its device.
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

/* A channel's kinds of control message are those of its send buffers. */
static_assert(RMSG_CTRL_SENDS <= RMSG_LINK_CTRLQ_KINDS);
/* The kind of a channel's HELLO in the send ring, beside its buffers. */
#define RMSG_CARRIER_KIND_HELLO	0xff
static_assert(RMSG_CTRL_BUFS < RMSG_CARRIER_KIND_HELLO);

/*
 * How long a channel's end waits for the peer's CLOSE before it ends the
 * link's connection, rather than deregister memory the peer may write.
 */
#define RMSG_CARRIER_CLOSE_MS	30000
/*
 * How long it then waits for the connection it ended to be over. Its
 * drain and DOWN run on rmsg_wq (a repair) or rmsg_link_wq (the carrier's
 * end), neither behind channels' teardowns, so this is the bound of a
 * stuck device, not of a wait for ourselves.
 */
#define RMSG_CARRIER_END_MS	10000
/*
 * rmsg_carrier_quiesce() names the channels still on the QP after this
 * long, and again each time as long again; at most this many each time.
 */
#define RMSG_CARRIER_QUIESCE_REPORT_MS	10000
#define RMSG_CARRIER_QUIESCE_REPORT_MAX	8

/* The service port probes ask for: nothing listens on a link yet. */
#define RMSG_CARRIER_PROBE_PORT	1
/*
 * The link id probes name as theirs, which no channel on the link takes:
 * the peer's REFUSEs of probes reach no channel.
 */
#define RMSG_CARRIER_PROBE_CHAN	RMSG_LINK_CHAN_MAX
/*
 * Answers owed to the peer's HELLOs. A peer within its credits has at
 * most RMSG_LINK_RECVS HELLOs unanswered while our answers wait for its
 * LCREDIT; twice that is a peer that keeps its credits from us. As many
 * again for the refusals a higher layer gives later, of HELLOs it took
 * (rmsg_carrier_answer()): one goes in only while fewer than half the
 * ring is owed, so that they never leave a peer within its credits
 * without room (which would end the carrier, the peer blamed).
 */
#define RMSG_CARRIER_PEER_ANSWERS	(2 * RMSG_LINK_RECVS)
#define RMSG_CARRIER_ANSWERS		(2 * RMSG_CARRIER_PEER_ANSWERS)
/* Free-running u32 indexes, taken modulo the size. */
static_assert((RMSG_CARRIER_ANSWERS & (RMSG_CARRIER_ANSWERS - 1)) == 0);
/* An answer owed, in a u32: the peer's link id, and the errno above it. */
#define RMSG_CARRIER_ANSWER_SHIFT	24
static_assert(RMSG_LINK_CHAN_MAX < (1U << RMSG_CARRIER_ANSWER_SHIFT));

struct rmsg_lchan;

/**
 * struct rmsg_carrier_buf - one receive or send buffer of a carrier
 * @cqe: its completion handler
 * @ch: the carrier
 * @dma: its mapping for the carrier's device, 0 while on none
 * @owner: a send buffer in flight with a channel's message: the channel,
 *	told of its completion; NULL for the link's own, or once the
 *	channel left the link (under the carrier's lock)
 * @kind: the channel's send buffer (enum rmsg_ctrl_send_buf) the message
 *	stands for, or RMSG_CARRIER_KIND_HELLO
 * @msg: the bytes, RMSG_WIRE_LMSG_MAX of them
 */
struct rmsg_carrier_buf {
	struct ib_cqe cqe;
	struct rmsg_channel *ch;
	u64 dma;
	struct rmsg_lchan *owner;
	u8 kind;
	u8 msg[RMSG_WIRE_LMSG_MAX];
};

/**
 * struct rmsg_carrier - a carrier's link, this side
 * @lock: guards everything below but the buffers' mappings and @ref
 * @ref: the carrier's, its links entry's, each channel's on the link
 * @ch: the carrier; NULL once it ended
 * @up: the connection is established (its QP sends): channels' messages
 *	may go, and @qp, @pd and @rdev are its
 * @qp: the carrier's QP while @up, else NULL
 * @pd: the carrier's PD on @rdev while @up, else NULL
 * @fence_mr: the carrier's fence MR in @pd while @up (rxe), else NULL
 * @rdev: the carrier's device while @up, else NULL
 * @conn_seq: the link's connections so far, each counted as its
 *	receives are posted, before anything arrives on it (a channel tells
 *	a new one from the one it set up with, and a message from the peer
 *	is for the connection it came on)
 * @drained_seq: the last connection whose every completion was handled
 *	(rmsg_carrier_quiesce()): its channels may let go of it from then on
 * @max_inline: bytes @qp takes inline, while @up
 * @max_sge: SGEs per send WR of @qp, while @up
 * @local: the carrier's address of the connection, while @up
 * @peer: the peer's, while @up
 * @share: the send queue room of the channels on the link; its wait
 *	queue is where channels leaving the link and rmsg_carrier_quiesce()
 *	wait
 * @nr_chans: channels attached (they hold @pd and @rdev until they
 *	detach)
 * @on_qp: of those, channels on @qp (or on the last QP, while the
 *	connection is down): rmsg_carrier_quiesce() waits for none to be
 * @evicting: the carrier leaves its device or ends: channels on the link
 *	are not repaired, and none attaches, until a connection comes up on
 *	a device again
 * @accepts: HELLO CONNECTs taken and not answered yet
 *	(rmsg_carrier_accept_take())
 * @chans: the channels on the link (struct rmsg_lchan), by link id
 * @next_id: the next link id to try (ids are taken in turn, so that a
 *	late message for a channel gone finds no new one in its place)
 * @wanting: channels with a message to send, in turn
 * @credit: the link's credits on the current connection
 * @live: a connection is there to post on (its receives were posted)
 * @tx_posted: link sends posted on the current connection
 * @tx_done: of those, completed (in order: all are signalled)
 * @answers: REFUSEs owed, a ring of RMSG_CARRIER_ANSWERS: the peer's
 *	channel, and why above it (RMSG_CARRIER_ANSWER_SHIFT)
 * @ans_head: next to send
 * @ans_tail: next free
 * @stats: what the link carried
 * @rx: RMSG_CARRIER_RECVS receive buffers
 * @tx: RMSG_CARRIER_SENDS send buffers, used in turn
 * @leaving: channels whose end waits for the link (struct rmsg_lchan's
 *	@leave_entry; rmsg_carrier_leave())
 * @leave_timer: at the earliest @leave_by of @leaving
 */
struct rmsg_carrier {
	spinlock_t lock;
	struct kref ref;
	struct rmsg_channel *ch;
	bool up;
	struct ib_qp *qp;
	struct ib_pd *pd;
	struct ib_mr *fence_mr;
	struct rmsg_device *rdev;
	u32 conn_seq;
	u32 drained_seq;
	u32 max_inline;
	u32 max_sge;
	union rmsg_sockaddr local;
	union rmsg_sockaddr peer;
	struct rmsg_wr_share share;
	u32 nr_chans;
	u32 on_qp;
	bool evicting;
	u32 accepts;
	struct xarray chans;
	u32 next_id;
	struct list_head wanting;
	struct rmsg_link_credit credit;
	bool live;
	u32 tx_posted;
	u32 tx_done;
	u32 answers[RMSG_CARRIER_ANSWERS];
	u32 ans_head;
	u32 ans_tail;
	struct rmsg_carrier_stats stats;
	struct rmsg_carrier_buf *rx;
	struct rmsg_carrier_buf *tx;
	struct list_head leaving;
	struct timer_list leave_timer;
};

/**
 * struct rmsg_lchan - a channel's place on a link
 * @c: the carrier's link, referenced
 * @ch: the channel
 * @id: its link id, in @c->chans: what the peer names it by
 * @peer_id: the peer's link id of its end, 0 until known
 *	(rmsg_carrier_set_peer())
 * @want_entry: in @c->wanting while it has a message waiting, else empty
 * @q: its control messages waiting for the link
 * @hello_due: @hello waits for the link, before anything in @q
 * @hello: its HELLO, ready to encode
 * @in_flight: its messages posted and not completed
 * @seq: the carrier's connection it attached or last rejoined on
 * @on_qp: it uses that connection's QP (counted in @c->on_qp)
 * @answer: the peer's HELLO its repair waits for, kept by the op that
 *	took it (a RECONNECT to the accepting side, an ACCEPT to the
 *	dialling side; rmsg_carrier_answer_put())
 * @answer_due: @answer is there and not taken yet
 * @answer_seq: the connection @answer came on
 * @leave_entry: in @c->leaving while the channel's end waits for the
 *	link, else empty
 * @leave_by: when that wait is over (jiffies)
 * @leave_ended: it waited RMSG_CARRIER_CLOSE_MS for the peer and had
 *	the connection ended; @leave_by is RMSG_CARRIER_END_MS later
 *
 * All under @c->lock, but @ch, @id and @c, fixed from attach to detach.
 */
struct rmsg_lchan {
	struct rmsg_carrier *c;
	struct rmsg_channel *ch;
	u32 id;
	u32 peer_id;
	struct list_head want_entry;
	struct rmsg_link_ctrlq q;
	bool hello_due;
	struct rmsg_lmsg hello;
	u32 in_flight;
	u32 seq;
	bool on_qp;
	struct rmsg_hello answer;
	bool answer_due;
	u32 answer_seq;
	struct list_head leave_entry;
	unsigned long leave_by;
	bool leave_ended;
};

static const struct rmsg_carrier_ops *rmsg_carrier_ops __ro_after_init;

static void rmsg_carrier_recv_done(struct ib_cq *cq, struct ib_wc *wc);
static void rmsg_carrier_leave_check(struct rmsg_carrier *c,
				     struct rmsg_lchan *l);
static void rmsg_carrier_leave_check_all(struct rmsg_carrier *c);
static void rmsg_carrier_leave_timeout(struct timer_list *t);
static void rmsg_carrier_send_done(struct ib_cq *cq, struct ib_wc *wc);

/*
 * Does @l's channel hear the peer on the link's last connection? From its
 * attach or rejoin until it lets go of the QP, which it does only once
 * that connection was drained (rmsg_carrier_drain_wait()): a message that
 * arrived whole on it was acknowledged to the peer, which counts it as
 * delivered, so it must reach the channel, even after the connection's
 * first failed completion. Under the lock.
 */
static bool rmsg_carrier_hears(const struct rmsg_carrier *c,
			       const struct rmsg_lchan *l)
{
	return l->on_qp && l->seq == c->conn_seq;
}

/*
 * Is @l's channel on the connection that is up now (attached or rejoined
 * on it, and not let go of its QP)? Under the lock. Only then may its
 * messages go, and the peer's reach it, but for the last word of a
 * channel's end (its CLOSE or RESET): that one goes and comes on any
 * connection, so that an end is heard while the other side repairs.
 */
static bool rmsg_carrier_joined(const struct rmsg_carrier *c,
				const struct rmsg_lchan *l)
{
	return c->up && rmsg_carrier_hears(c, l);
}

static bool rmsg_carrier_last_word(u8 type)
{
	return type == RMSG_CTRL_CLOSE || type == RMSG_CTRL_RESET;
}

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

/*
 * The next message of the channels on the link, in turn: a channel's
 * HELLO before its control messages, which go in the order it asked for
 * them. Under the lock, with the connection up and a send credit.
 */
static bool rmsg_carrier_next_chan(struct rmsg_carrier *c, struct rmsg_lmsg *m,
				   struct rmsg_lchan **owner, u8 *kind)
{
	struct rmsg_lchan *l;
	u32 k;
	u8 type;
	u64 arg;

	l = list_first_entry_or_null(&c->wanting, struct rmsg_lchan,
				     want_entry);
	if (!l)
		return false;
	if (l->hello_due) {
		l->hello_due = false;
		*m = l->hello;
		*kind = RMSG_CARRIER_KIND_HELLO;
	} else if (rmsg_link_ctrlq_pop(&l->q, &k, &type, &arg)) {
		m->type = type;
		m->chan = l->peer_id;
		m->arg = arg;
		*kind = RMSG_CTRL_RECVS + k;
	} else {
		/* Never on the list with nothing to send; all the same. */
		list_del_init(&l->want_entry);
		return false;
	}
	/* To the back of the line, if it has more. */
	list_del_init(&l->want_entry);
	if (l->hello_due || l->q.len)
		list_add_tail(&l->want_entry, &c->wanting);
	l->in_flight++;
	*owner = l;
	return true;
}

/*
 * The next link message to go, if one may, and whose it is (@owner NULL
 * for the link's own): under the lock.
 */
static bool rmsg_carrier_next(struct rmsg_channel *ch, struct rmsg_lmsg *m,
			      struct rmsg_lchan **owner, u8 *kind)
{
	struct rmsg_carrier *c = ch->carrier;

	memset(m, 0, sizeof(*m));
	*owner = NULL;
	*kind = 0;
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
		u32 a = c->answers[c->ans_head++ % RMSG_CARRIER_ANSWERS];

		m->type = RMSG_CTRL_REFUSE;
		m->chan = a & ((1U << RMSG_CARRIER_ANSWER_SHIFT) - 1);
		m->arg = a >> RMSG_CARRIER_ANSWER_SHIFT;
		c->stats.refused_sent++;
		return true;
	}
	if (c->up && rmsg_carrier_next_chan(c, m, owner, kind))
		return true;
	if (c->stats.probes_left) {
		c->stats.probes_left--;
		m->type = RMSG_CTRL_HELLO;
		m->chan = RMSG_LINK_NO_CHAN;
		m->arg = RMSG_CARRIER_PROBE_PORT;
		m->hello.kind = RMSG_HELLO_CONNECT;
		m->hello.incarnation = ch->ep->incarnation;
		m->hello.channel = RMSG_CARRIER_PROBE_CHAN;
		m->hello.peer_channel = RMSG_WIRE_NO_CHANNEL;
		m->hello.block_size = ch->block_size;
		return true;
	}
	return false;
}

/*
 * Tell a channel on the link how its message went. Under the lock, in
 * softirq or with bottom halves off.
 */
static void rmsg_carrier_report(struct rmsg_lchan *l, u8 kind, bool ok)
{
	if (kind != RMSG_CARRIER_KIND_HELLO)
		rmsg_ctrl_sent(l->ch, kind, ok);
	else if (rmsg_carrier_ops && rmsg_carrier_ops->hello_sent)
		rmsg_carrier_ops->hello_sent(l->ch, ok);
}

/*
 * A channel's messages that wait for the link will not go on this
 * connection: each is reported as a flushed send would be. Under the lock.
 */
static void rmsg_carrier_drop(struct rmsg_lchan *l)
{
	u32 kinds = rmsg_link_ctrlq_drop(&l->q);

	list_del_init(&l->want_entry);
	if (l->hello_due) {
		l->hello_due = false;
		rmsg_carrier_report(l, RMSG_CARRIER_KIND_HELLO, false);
	}
	while (kinds) {
		u32 k = __ffs(kinds);

		kinds &= kinds - 1;
		rmsg_carrier_report(l, RMSG_CTRL_RECVS + k, false);
	}
}

/*
 * The connection is over, or about to be: nothing more is posted on it,
 * nobody finds its QP, PD or device here any more, and what the channels
 * have waiting is reported as not sent. As after a flushed send, the
 * busy bits of those kinds stay set until the channel frees them between
 * two connections (rmsg_ctrl_free_all()), and it sends them again on the
 * next. Under the lock.
 */
static void rmsg_carrier_down(struct rmsg_carrier *c)
{
	struct rmsg_lchan *l, *next;
	bool was_up = c->up;
	unsigned long id;

	lockdep_assert_held(&c->lock);
	c->live = false;
	WRITE_ONCE(c->up, false);
	c->qp = NULL;
	c->pd = NULL;
	c->fence_mr = NULL;
	c->rdev = NULL;
	list_for_each_entry_safe(l, next, &c->wanting, want_entry)
		rmsg_carrier_drop(l);
	if (!was_up)
		return;
	/*
	 * Every channel on the link is faulted with the connection: each
	 * stops posting, waits for its work requests to be flushed, and
	 * lets go of the QP (a repair, rmsg_repair.c) or detaches (its end),
	 * which rmsg_carrier_quiesce() waits for before the QP goes. Only
	 * channels attached or rejoined while the connection was up use it
	 * (neither happens while it is down), so none escapes.
	 */
	xa_for_each(&c->chans, id, l)
		if (l->on_qp)
			rmsg_chan_kill_soft(l->ch, -ECONNRESET);
	rmsg_carrier_leave_check_all(c);
	wake_up_all(&c->share.wq);
}

/*
 * Post what may go: LCREDITs first (they have a receive of the peer's to
 * themselves), then answers, then the channels' messages, then probes,
 * while send buffers are free. Under the lock. Return: 0, or the post's
 * error (the connection failed).
 */
static int rmsg_carrier_push(struct rmsg_channel *ch)
{
	struct rmsg_carrier *c = ch->carrier;
	struct ib_device *ibdev = ch->dev.rdev->ibdev;
	struct rmsg_lchan *owner;
	struct rmsg_lmsg m;
	u8 kind;

	lockdep_assert_held(&c->lock);
	while (c->live && c->tx_posted - c->tx_done < RMSG_CARRIER_SENDS &&
	       rmsg_carrier_next(ch, &m, &owner, &kind)) {
		struct rmsg_carrier_buf *buf =
			&c->tx[c->tx_posted % RMSG_CARRIER_SENDS];
		u32 len = rmsg_lmsg_encode(buf->msg, &m);
		int ret;

		ib_dma_sync_single_for_device(ibdev, buf->dma, len,
					      DMA_TO_DEVICE);
		buf->owner = owner;
		buf->kind = kind;
		rmsg_link_sent(&c->credit);
		c->tx_posted++;
		c->stats.sent++;
		ret = rmsg_send_buf(ch, &buf->cqe, buf->dma, len);
		if (ret) {
			/*
			 * Not posted: no completion will report it. It did
			 * not leave, and neither will what waits behind it.
			 */
			buf->owner = NULL;
			if (owner) {
				owner->in_flight--;
				rmsg_carrier_report(owner, kind, false);
			}
			rmsg_carrier_down(c);
			return ret;
		}
	}
	return 0;
}

/*
 * Owe the peer's channel @chan (a valid link id) a REFUSE with @err (1 to
 * 255), unless @room answers are owed already: under the lock.
 */
static int rmsg_carrier_refuse(struct rmsg_carrier *c, u32 chan, int err,
			       u32 room)
{
	if (c->ans_tail - c->ans_head >= room)
		return -EPROTO;
	c->answers[c->ans_tail++ % RMSG_CARRIER_ANSWERS] =
		chan | (u32)err << RMSG_CARRIER_ANSWER_SHIFT;
	return 0;
}

/*
 * A HELLO: a CONNECT names no channel of ours; a RECONNECT or an ACCEPT
 * names one, which must be on the link. The registered op takes it or
 * says why not; with none (nothing rides on links) every HELLO is
 * refused. Under the lock.
 */
static int rmsg_carrier_hello_in(struct rmsg_carrier *c,
				 const struct rmsg_lmsg *m)
{
	bool connect = m->hello.kind == RMSG_HELLO_CONNECT;
	struct rmsg_lchan *l = NULL;
	int err = connect ? ECONNREFUSED : ENOENT;

	if (!connect)
		l = xa_load(&c->chans, m->chan);
	/*
	 * A RECONNECT, and an ACCEPT once the peer's end is known, come from
	 * that end: any other is for a channel we do not have.
	 */
	if (l && (m->hello.kind == RMSG_HELLO_RECONNECT ||
		  rmsg_link_chan_valid(l->peer_id)) &&
	    m->hello.channel != l->peer_id)
		l = NULL;
	if ((connect || l) && rmsg_carrier_ops && rmsg_carrier_ops->hello) {
		int ret = rmsg_carrier_ops->hello(c, l ? l->ch : NULL, m);

		/*
		 * An ACCEPT taken names the peer's end (a valid link id,
		 * rmsg_lmsg_decode() checked): the channel's messages go
		 * there from now on, its CLOSE included, whatever comes next.
		 */
		if (!ret && l && m->hello.kind == RMSG_HELLO_ACCEPT)
			l->peer_id = m->hello.channel;
		if (!ret)
			return 0;
		/*
		 * A REFUSE's argument is 1 to 255 on the wire: a negative
		 * errno's low byte could be 0, which the peer takes as a
		 * broken link.
		 */
		if (!WARN_ON_ONCE(ret < 1 || ret > 255))
			err = ret;
	}
	/* Past the whole ring, the peer went past its credits. */
	return rmsg_carrier_refuse(c, m->hello.channel, err,
				   RMSG_CARRIER_ANSWERS);
}

/* A link message, decoded and within its credits: under the lock. */
static int rmsg_carrier_take(struct rmsg_carrier *c, const struct rmsg_lmsg *m)
{
	struct rmsg_lchan *l;

	switch (m->type) {
	case RMSG_CTRL_LCREDIT:
		c->stats.lcredit_received++;
		return rmsg_link_credit_in(&c->credit, m->arg);
	case RMSG_CTRL_HELLO:
		return rmsg_carrier_hello_in(c, m);
	case RMSG_CTRL_REFUSE:
		c->stats.refused_received++;
		l = xa_load(&c->chans, m->chan);
		if (!l)
			return 0;
		/*
		 * The peer has no end for the channel (it refused our CONNECT,
		 * or our ACCEPT came for a channel it no longer has): nothing
		 * of it writes to us, nothing of ours is for it, and the
		 * channel's end waits for no word of the peer's.
		 */
		l->peer_id = 0;
		if (rmsg_carrier_ops && rmsg_carrier_ops->refused)
			rmsg_carrier_ops->refused(l->ch, m->arg);
		rmsg_carrier_leave_check(c, l);
		return 0;
	default:
		/* A channel's: its handlers, as on a direct connection. */
		l = xa_load(&c->chans, m->chan);
		/*
		 * A channel being repaired hears only HELLOs until it is on
		 * this connection; the peer's end sends nothing else before
		 * (rmsg_repair.c), but for its last word.
		 */
		if (!l || (!rmsg_carrier_hears(c, l) &&
			   !rmsg_carrier_last_word(m->type))) {
			c->stats.dropped++;
			return 0;
		}
		rmsg_ctrl_recv_handle(l->ch, m->type, m->arg);
		/* Its end may wait for the peer's (rmsg_carrier_leave()). */
		if (m->type == RMSG_CTRL_CLOSE || m->type == RMSG_CTRL_RESET)
			rmsg_carrier_leave_check(c, l);
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
		rmsg_carrier_down(ch->carrier);
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
	bool ok = wc->status == IB_WC_SUCCESS;
	int ret = 0;

	spin_lock(&c->lock);
	c->tx_done++;
	/* Under the lock: a channel leaving the link clears @owner first. */
	if (buf->owner) {
		struct rmsg_lchan *l = buf->owner;

		l->in_flight--;
		rmsg_carrier_report(l, buf->kind, ok);
		buf->owner = NULL;
		/* Its end may wait for its last message (its CLOSE). */
		if (!l->in_flight && list_empty(&l->want_entry))
			rmsg_carrier_leave_check(c, l);
		/* A repair letting go of the QP waits for its last one. */
		if (!l->in_flight)
			wake_up_all(&c->share.wq);
	}
	if (ok)
		ret = rmsg_carrier_push(ch);
	else
		rmsg_carrier_down(c);
	spin_unlock(&c->lock);
	/* A failure of the shared QP is the carrier's, not a channel's. */
	if (ret || (!ok && wc->status != IB_WC_WR_FLUSH_ERR))
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
		kref_init(&c->ref);
		c->ch = ch;
		xa_init_flags(&c->chans, XA_FLAGS_ALLOC1 | XA_FLAGS_LOCK_BH);
		c->next_id = 1;
		INIT_LIST_HEAD(&c->wanting);
		INIT_LIST_HEAD(&c->leaving);
		timer_setup(&c->leave_timer, rmsg_carrier_leave_timeout, 0);
		rmsg_wr_share_init(&c->share, RMSG_CARRIER_CHAN_WRS,
				   RMSG_CARRIER_SQ_SLACK);
		/* Its posts and its channels' on one QP, one at a time. */
		rmsg_wr_share_post(ch, &c->share);
		WRITE_ONCE(ch->carrier, c);
	}
	ret = rmsg_carrier_map(ch, c->rx, RMSG_CARRIER_RECVS,
			       DMA_FROM_DEVICE);
	if (!ret)
		ret = rmsg_carrier_map(ch, c->tx, RMSG_CARRIER_SENDS,
				       DMA_TO_DEVICE);
	return ret;
}

/*
 * The carrier leaves its device, or ends: the channels on the link cannot
 * go with it (their memory is registered in its PD on the device), so
 * each is ended, and this waits until all detached, their memory out of
 * the PD. No lock held: their ends run on rmsg_teardown_wq and wait for
 * nothing of the carrier's but its lock. Until a connection comes up on
 * a device again, no channel attaches or is repaired.
 */
static void rmsg_carrier_evict(struct rmsg_carrier *c)
{
	struct rmsg_lchan *l;
	unsigned long id;

	spin_lock_bh(&c->lock);
	c->evicting = true;
	rmsg_carrier_down(c);
	xa_for_each(&c->chans, id, l)
		rmsg_chan_kill_soft(l->ch, -ECONNRESET);
	spin_unlock_bh(&c->lock);
	wait_event(c->share.wq, !READ_ONCE(c->nr_chans));
}

/*
 * Off its device: the channels on the link end (rmsg_carrier_evict()),
 * and the buffers' mappings go (no QP uses them any more).
 */
void rmsg_carrier_dev_release(struct rmsg_channel *ch)
{
	struct rmsg_carrier *c = ch->carrier;

	if (!c)
		return;
	rmsg_carrier_evict(c);
	rmsg_carrier_unmap(ch, c->rx, RMSG_CARRIER_RECVS, DMA_FROM_DEVICE);
	rmsg_carrier_unmap(ch, c->tx, RMSG_CARRIER_SENDS, DMA_TO_DEVICE);
}

static void rmsg_carrier_release(struct kref *ref)
{
	struct rmsg_carrier *c = container_of(ref, struct rmsg_carrier, ref);

	/* Every channel left: each held a reference. */
	WARN_ON_ONCE(!xa_empty(&c->chans));
	/* None waits to leave, so the timer arms itself no more. */
	del_timer_sync(&c->leave_timer);
	xa_destroy(&c->chans);
	kfree(c);
}

/**
 * rmsg_carrier_get() - one more reference to a carrier's link
 * @c: referenced by the caller already (rmsg_carrier_of() gives one)
 *
 * Return: @c.
 */
struct rmsg_carrier *rmsg_carrier_get(struct rmsg_carrier *c)
{
	kref_get(&c->ref);
	return c;
}

/* Drop a reference of rmsg_carrier_of(), _get() or _attach(). */
void rmsg_carrier_put(struct rmsg_carrier *c)
{
	if (c)
		kref_put(&c->ref, rmsg_carrier_release);
}

/**
 * rmsg_carrier_of() - the link a carrier carries, referenced
 * @ch: a channel of the module's endpoint, kept alive by the caller (its
 *	endpoint's chan_lock, with the channel found in its table)
 *
 * Return: its struct rmsg_carrier, or NULL before its first device.
 */
struct rmsg_carrier *rmsg_carrier_of(struct rmsg_channel *ch)
{
	struct rmsg_carrier *c = READ_ONCE(ch->carrier);

	return c ? rmsg_carrier_get(c) : NULL;
}

/*
 * The carrier's end: it is on no device, its QP destroyed. Its buffers go;
 * the struct stays while references remain, with no connection.
 */
void rmsg_carrier_free(struct rmsg_channel *ch)
{
	struct rmsg_carrier *c = ch->carrier;
	struct rmsg_carrier_buf *rx, *tx;

	if (!c)
		return;
	spin_lock_bh(&c->lock);
	rmsg_carrier_down(c);
	c->ch = NULL;
	/* Under the lock: a channel's detach looks at the send buffers. */
	rx = c->rx;
	tx = c->tx;
	c->rx = NULL;
	c->tx = NULL;
	spin_unlock_bh(&c->lock);
	WRITE_ONCE(ch->carrier, NULL);
	rmsg_wr_share_post(ch, NULL);
	kfree(rx);
	kfree(tx);
	rmsg_carrier_put(c);
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
	/*
	 * Counted here, not when the connection comes up: the peer's first
	 * messages may arrive before our ESTABLISHED (its RTU is handled
	 * after them), and what they ask is for this connection.
	 */
	c->conn_seq++;
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
	stats->chans = c->nr_chans;
	spin_unlock_bh(&c->lock);
}

/**
 * rmsg_carrier_established() - a carrier's connection sends
 * @ch: the carrier, its QP in RTS (the rdma_cm's ESTABLISHED)
 *
 * From here until the connection's first failed completion, channels may
 * send on the link, and a channel that dials finds the connection's QP,
 * PD and device here (rmsg_carrier_up()), and the channels being
 * repaired are told to rejoin it. Callable under chan_lock.
 */
void rmsg_carrier_established(struct rmsg_channel *ch)
{
	struct rmsg_carrier *c = ch->carrier;
	struct rmsg_lchan *l;
	unsigned long id;
	int ret = 0;

	if (!c)
		return;
	spin_lock_bh(&c->lock);
	/* A failure before now was this connection's: it stays down. */
	if (c->live) {
		c->evicting = false;
		c->qp = ch->conn->qp;
		c->pd = ch->dev.pd;
		c->fence_mr = ch->dev.fence_mr;
		c->rdev = ch->dev.rdev;
		c->max_inline = ch->conn->max_inline;
		c->max_sge = ch->conn->max_sge;
		/* rmsg_chan_note_addrs() ran before, in the same handler. */
		c->local = ch->conn_local;
		c->peer = ch->conn_peer;
		WRITE_ONCE(c->up, true);
		/* Channels being repaired may rejoin (rmsg_carrier_rejoin()). */
		xa_for_each(&c->chans, id, l)
			if (!l->on_qp)
				queue_work(rmsg_wq, &l->ch->work);
		ret = rmsg_carrier_push(ch);
	}
	spin_unlock_bh(&c->lock);
	if (ret)
		rmsg_chan_kill_soft(ch, -ECONNRESET);
}

/**
 * rmsg_carrier_up() - is the link's connection up?
 * @c: the link
 *
 * A hint, for a dial choosing between the link and a connection of its
 * own: the connection may end right after. What the connection is (its
 * QP, PD, device) a channel learns only by attaching
 * (rmsg_carrier_attach()), which is what keeps those alive for it.
 *
 * Return: whether the connection is up.
 */
bool rmsg_carrier_up(struct rmsg_carrier *c)
{
	return READ_ONCE(c->up);
}

/*
 * rmsg_carrier_quiesce() has waited long for the channels still on the QP
 * (each should let go as soon as its work runs): name them, with where
 * their repair stands and whether their work is queued or running, so
 * that a repair that stalls there is read from the kernel log. Their
 * state, phase and flags are read without their locks: a report, not a
 * decision.
 */
static void rmsg_carrier_quiesce_report(struct rmsg_carrier *c,
					unsigned int waited_ms)
{
	struct rmsg_channel *ch;
	struct rmsg_lchan *l;
	unsigned long id;
	u32 named = 0;

	spin_lock_bh(&c->lock);
	xa_for_each(&c->chans, id, l) {
		if (!l->on_qp || named++ >= RMSG_CARRIER_QUIESCE_REPORT_MAX)
			continue;
		ch = l->ch;
		pr_notice("carrier %u: channel %u of endpoint %u still on the QP after %u ms: state %d, repair phase %d, flags %#lx, soft_error %d, work %#x, connection %u (now %u, drained %u), %u link messages in flight\n",
			  c->ch ? c->ch->id : U32_MAX, ch->id, ch->ep->id,
			  waited_ms, READ_ONCE(ch->state),
			  READ_ONCE(ch->repair.phase), READ_ONCE(ch->flags),
			  READ_ONCE(ch->soft_error), work_busy(&ch->work),
			  l->seq, c->conn_seq, c->drained_seq, l->in_flight);
	}
	if (named > RMSG_CARRIER_QUIESCE_REPORT_MAX)
		pr_notice("carrier %u: %u more channels still on the QP\n",
			  c->ch ? c->ch->id : U32_MAX,
			  named - RMSG_CARRIER_QUIESCE_REPORT_MAX);
	spin_unlock_bh(&c->lock);
}

/**
 * rmsg_carrier_quiesce() - a carrier's QP is about to go: wait for the
 *	channels on the link to leave it
 * @ch: the carrier, its QP in the error state and drained (so every work
 *	request of a channel on the link completed, flushed), about to be
 *	destroyed; with no lock held, since the channels' ends take theirs
 *
 * Every channel on the link was faulted when the connection went down
 * (rmsg_carrier_down()); each one's repair lets go of the QP
 * (rmsg_carrier_qp_release()), and each one's end detaches. Once this
 * returns none uses the QP, so it may be destroyed: the lifetime rule of
 * struct rmsg_carrier_conn. The channels being repaired keep their
 * memory in the carrier's PD, which stays while the carrier stays on its
 * device. A carrier that ends or leaves its device (@ch DYING, or its
 * device lost) ends the channels on the link instead and waits until
 * all detached (rmsg_carrier_evict()), so that the PD may go too. Finite:
 * a channel waits only for its own work requests, flushed by the drain,
 * and for the connection's end, which is here. Should a channel stay on
 * the QP all the same, the wait names it in the log every
 * RMSG_CARRIER_QUIESCE_REPORT_MS (rmsg_carrier_quiesce_report()).
 */
void rmsg_carrier_quiesce(struct rmsg_channel *ch)
{
	struct rmsg_carrier *c = ch->carrier;
	unsigned int waited_ms = 0;
	struct rmsg_lchan *l;
	unsigned long id;

	if (!c)
		return;
	if (READ_ONCE(ch->state) == RMSG_CHAN_DYING ||
	    test_bit(RMSG_CHAN_DEV_LOST, &ch->flags)) {
		rmsg_carrier_evict(c);
		return;
	}
	spin_lock_bh(&c->lock);
	rmsg_carrier_down(c);
	/*
	 * Every completion of the connection was handled: the channels still
	 * on it may let go now, and their repairs, which wait for that
	 * (rmsg_carrier_drain_wait()), go on.
	 */
	c->drained_seq = c->conn_seq;
	xa_for_each(&c->chans, id, l)
		if (l->on_qp)
			queue_work(rmsg_wq, &l->ch->work);
	spin_unlock_bh(&c->lock);
	while (!wait_event_timeout(c->share.wq, !READ_ONCE(c->on_qp),
				   msecs_to_jiffies(RMSG_CARRIER_QUIESCE_REPORT_MS))) {
		waited_ms += RMSG_CARRIER_QUIESCE_REPORT_MS;
		rmsg_carrier_quiesce_report(c, waited_ms);
	}
}

/*
 * @l's channel goes on the connection that is up: @conn is filled in with
 * it. Under the lock.
 */
static void rmsg_carrier_join(struct rmsg_carrier *c, struct rmsg_lchan *l,
			      struct rmsg_carrier_conn *conn)
{
	conn->qp = c->qp;
	conn->pd = c->pd;
	conn->fence_mr = c->fence_mr;
	conn->rdev = c->rdev;
	conn->share = &c->share;
	conn->max_inline = c->max_inline;
	conn->max_sge = c->max_sge;
	conn->local = c->local;
	conn->peer = c->peer;
	conn->seq = c->conn_seq;
	l->seq = c->conn_seq;
	l->on_qp = true;
	c->on_qp++;
}

/**
 * rmsg_carrier_attach() - put a channel on a link: a link id of its own
 * @c: the link, referenced by the caller
 * @ch: a channel on no link, in its work or before it is published
 * @conn: filled in with the link's connection
 *
 * The channel holds a reference of its own from here; messages the peer
 * sends to the id reach it from just before this returns, under the
 * carrier's lock (the peer learns the id from the channel's HELLO, but a
 * hostile one may guess it: the channel's control handlers must be ready
 * for any message before the call). Memory is charged as the caller's is
 * (rmsg_ep_charge_begin()).
 *
 * Only while the connection is up, and @conn is taken under the same lock
 * as the channel goes in: the carrier's QP, PD and device then stay until
 * the channel detaches (struct rmsg_carrier_conn), and the connection's
 * end faults it.
 *
 * Return: 0; -ENOMEM; -EBUSY when the link has RMSG_LINK_CHAN_MAX - 1
 * channels (the last id is the probes'); -ENOTCONN when the carrier ended
 * or its connection is down, or it leaves its device.
 */
int rmsg_carrier_attach(struct rmsg_carrier *c, struct rmsg_channel *ch,
			struct rmsg_carrier_conn *conn)
{
	struct rmsg_lchan *l;
	int ret;

	if (WARN_ON_ONCE(ch->lchan))
		return -EINVAL;
	l = kzalloc(sizeof(*l), RMSG_GFP_CHARGED);
	if (!l)
		return -ENOMEM;
	l->c = rmsg_carrier_get(c);
	l->ch = ch;
	INIT_LIST_HEAD(&l->want_entry);
	INIT_LIST_HEAD(&l->leave_entry);
	rmsg_link_ctrlq_init(&l->q);
	/*
	 * The id is reserved (a NULL entry, which lookups do not find) where
	 * memory may be allocated, out of the carrier's lock; the table's
	 * lock with bottom halves off, as it is taken under the carrier's
	 * lock, which completions take in softirq. The channel goes in under
	 * the carrier's lock, only once the carrier is known not to have
	 * ended: no completion finds it before, and none of a channel whose
	 * attach fails.
	 */
	ret = xa_alloc_cyclic_bh(&c->chans, &l->id, NULL,
				 XA_LIMIT(1, RMSG_CARRIER_PROBE_CHAN - 1),
				 &c->next_id, RMSG_GFP_CHARGED);
	if (ret < 0)
		goto fail;
	spin_lock_bh(&c->lock);
	if (c->ch && c->up && !c->evicting) {
		/* Into the reserved slot: nothing to allocate. */
		ret = xa_err(xa_store(&c->chans, l->id, l, GFP_NOWAIT));
		WARN_ON_ONCE(ret);
	} else {
		ret = -ENOTCONN;
	}
	if (!ret) {
		rmsg_carrier_join(c, l, conn);
		c->nr_chans++;
		c->stats.chans_total++;
	}
	if (ret)
		xa_erase(&c->chans, l->id);
	spin_unlock_bh(&c->lock);
	if (ret)
		goto fail;
	ch->lchan = l;
	return 0;
fail:
	rmsg_carrier_put(c);
	kfree(l);
	return ret == -EBUSY || ret == -ENOTCONN ? ret : -ENOMEM;
}

/**
 * rmsg_carrier_detach() - take a channel off its link
 * @ch: a channel on a link, done with it, in its work (its teardown
 *	waits for its own work requests on the carrier's QP; its control
 *	messages may still be in flight)
 *
 * Its id goes, and with it every message for it: what waits for the link
 * is dropped unreported, and a completion still to come of a message in
 * flight is nobody's (its send buffer is disowned). Once this returns no
 * handler of the carrier runs for the channel (they run under the
 * carrier's lock, which the erase takes), and the channel's reference is
 * dropped.
 */
void rmsg_carrier_detach(struct rmsg_channel *ch)
{
	struct rmsg_lchan *l = ch->lchan;
	struct rmsg_carrier *c;
	u32 i;

	if (!l)
		return;
	c = l->c;
	spin_lock_bh(&c->lock);
	xa_erase(&c->chans, l->id);
	rmsg_link_ctrlq_drop(&l->q);
	l->hello_due = false;
	list_del_init(&l->want_entry);
	/* Its end no longer waits: rmsg_carrier_leave() let it go. */
	WARN_ON_ONCE(!list_empty(&l->leave_entry));
	list_del_init(&l->leave_entry);
	if (l->in_flight && c->tx)
		for (i = 0; i < RMSG_CARRIER_SENDS; i++)
			if (c->tx[i].owner == l)
				c->tx[i].owner = NULL;
	if (l->on_qp)
		c->on_qp--;
	c->nr_chans--;
	/* rmsg_carrier_quiesce() may wait for the last one. */
	if (!c->nr_chans || !c->on_qp)
		wake_up_all(&c->share.wq);
	spin_unlock_bh(&c->lock);
	ch->lchan = NULL;
	rmsg_carrier_put(c);
	kfree(l);
}

/*
 * May @l's channel leave the link, as far as the link goes? Once the
 * connection it attached on ended, yes (nothing of the peer's can
 * arrive any more). Before that, once what it queued on the link (its
 * CLOSE last) has gone and been acknowledged, so that the peer hears the
 * end, and, when it knows the peer's end, once the peer's CLOSE or RESET
 * came: until then the peer may write into its block. Under the lock.
 */
static bool rmsg_carrier_may_leave(struct rmsg_carrier *c,
				   struct rmsg_lchan *l)
{
	struct rmsg_channel *ch = l->ch;

	lockdep_assert_held(&c->lock);
	return !c->up || c->conn_seq != l->seq ||
	       (!l->hello_due && !l->q.len && !l->in_flight &&
		(!rmsg_link_chan_valid(l->peer_id) ||
		 test_bit(RMSG_CHAN_PEER_CLOSED, &ch->flags) ||
		 test_bit(RMSG_CHAN_PEER_RESET, &ch->flags)));
}

/* Under the lock: @l's end waits no more; its teardown goes on. */
static void rmsg_carrier_let_go(struct rmsg_lchan *l)
{
	list_del_init(&l->leave_entry);
	rmsg_chan_teardown_resume(l->ch);
}

/*
 * Under the lock, after something @l's end may wait for happened (the
 * peer's CLOSE, RESET or refusal came; its last message completed).
 */
static void rmsg_carrier_leave_check(struct rmsg_carrier *c,
				     struct rmsg_lchan *l)
{
	if (!list_empty(&l->leave_entry) && rmsg_carrier_may_leave(c, l))
		rmsg_carrier_let_go(l);
}

/* Under the lock: the connection ended, and every waiting end may go. */
static void rmsg_carrier_leave_check_all(struct rmsg_carrier *c)
{
	struct rmsg_lchan *l, *next;

	list_for_each_entry_safe(l, next, &c->leaving, leave_entry)
		if (rmsg_carrier_may_leave(c, l))
			rmsg_carrier_let_go(l);
}

/*
 * The earliest end's wait is over. One that waited RMSG_CARRIER_CLOSE_MS
 * for the peer ends the link's connection it attached on (the peer may
 * still write into its block: its MR cannot go before the connection
 * does) and waits RMSG_CARRIER_END_MS more; one that waited that too
 * goes all the same.
 */
static void rmsg_carrier_leave_timeout(struct timer_list *t)
{
	struct rmsg_carrier *c = from_timer(c, t, leave_timer);
	unsigned long now = jiffies, next_at = 0;
	struct rmsg_lchan *l, *next;
	bool end_conn = false, armed = false;

	spin_lock(&c->lock);
	list_for_each_entry_safe(l, next, &c->leaving, leave_entry) {
		if (time_after_eq(now, l->leave_by) && l->leave_ended) {
			pr_warn_ratelimited("link channel %u: the link's connection did not end in %u ms: the channel leaves it all the same\n",
					    l->ch->id, RMSG_CARRIER_END_MS);
			rmsg_carrier_let_go(l);
			continue;
		}
		if (time_after_eq(now, l->leave_by)) {
			pr_notice_ratelimited("link channel %u: no CLOSE from the peer in %u ms: the link's connection ends\n",
					      l->ch->id, RMSG_CARRIER_CLOSE_MS);
			l->leave_ended = true;
			l->leave_by = now + msecs_to_jiffies(RMSG_CARRIER_END_MS);
			if (c->ch && c->up && c->conn_seq == l->seq)
				end_conn = true;
		}
		if (!armed || time_before(l->leave_by, next_at))
			next_at = l->leave_by;
		armed = true;
	}
	if (armed)
		mod_timer(&c->leave_timer, next_at);
	if (end_conn)
		rmsg_chan_kill_soft(c->ch, -ETIMEDOUT);
	spin_unlock(&c->lock);
}

/**
 * rmsg_carrier_leave() - may a channel's memory leave the carrier's PD?
 * @ch: a channel on a link, ending, in its teardown: its data path
 *	closed (it posts no more), its CLOSE or RESET queued if it had a
 *	peer, no lock held
 *
 * Its own work requests first, waited for here (each is signalled on the
 * link, rmsg_wr_link_wait()): they name its memory and its completions,
 * and each completes or is flushed in the QP's retry time. Then
 * rmsg_carrier_may_leave(): a write into a deregistered MR breaks the
 * carrier's QP for every channel on it, and a CLOSE dropped by the detach
 * would leave the peer waiting. That is not waited for here: the end of
 * the peer's channel, which sends its CLOSE, may be a teardown on the
 * same queue as this one (both ends on one host, or a thousand channels
 * closing at once), so a teardown that slept until then would hold the
 * worker the other needs. The channel joins @c->leaving instead, and
 * whatever makes it free to go queues its teardown again
 * (rmsg_chan_teardown_resume()).
 *
 * Bounded: a peer that does not answer in RMSG_CARRIER_CLOSE_MS has the
 * carrier's connection ended (and repaired), which the other channels on
 * the link do not survive yet, but the link does; past RMSG_CARRIER_END_MS
 * more the channel leaves all the same (rmsg_carrier_leave_timeout()). A
 * channel that knows no peer end (refused by the peer, or refusing it, or
 * never answered) waits only for its own work requests and what it
 * queued on the link.
 *
 * Return: true when it may leave now; false when its teardown is queued
 * again once it may (it must return, and then go on from here).
 */
bool rmsg_carrier_leave(struct rmsg_channel *ch)
{
	struct rmsg_lchan *l = ch->lchan;
	struct rmsg_carrier *c;
	bool ok;

	if (!l)
		return true;
	c = l->c;
	rmsg_wr_link_wait(ch);
	spin_lock_bh(&c->lock);
	ok = rmsg_carrier_may_leave(c, l);
	if (!ok) {
		l->leave_ended = false;
		l->leave_by = jiffies + msecs_to_jiffies(RMSG_CARRIER_CLOSE_MS);
		list_add_tail(&l->leave_entry, &c->leaving);
		timer_reduce(&c->leave_timer, l->leave_by);
	}
	spin_unlock_bh(&c->lock);
	return ok;
}

/**
 * rmsg_carrier_local() - the carrier's own address of its connection
 * @c: the link
 * @local: filled in while the connection is up
 *
 * For the listener a HELLO CONNECT is for (rmsg_listen_find()).
 *
 * Return: whether the connection is up.
 */
bool rmsg_carrier_local(struct rmsg_carrier *c, union rmsg_sockaddr *local)
{
	bool up;

	spin_lock_bh(&c->lock);
	up = c->up;
	if (up)
		*local = c->local;
	spin_unlock_bh(&c->lock);
	return up;
}

/**
 * rmsg_carrier_accept_take() - may the peer's HELLO CONNECT be taken?
 * @c: the link it came on; under its lock (the hello op)
 *
 * Return: true, and one of RMSG_CARRIER_ACCEPTS is taken until
 * rmsg_carrier_accept_done(); false when all are.
 */
bool rmsg_carrier_accept_take(struct rmsg_carrier *c)
{
	lockdep_assert_held(&c->lock);
	if (c->accepts >= RMSG_CARRIER_ACCEPTS) {
		c->stats.accepts_refused++;
		return false;
	}
	c->accepts++;
	return true;
}

/* A CONNECT taken is answered (or will not be): its place is free. */
void rmsg_carrier_accept_done(struct rmsg_carrier *c)
{
	spin_lock_bh(&c->lock);
	if (!WARN_ON_ONCE(!c->accepts))
		c->accepts--;
	spin_unlock_bh(&c->lock);
}

/**
 * rmsg_carrier_set_peer() - the peer's link id of a channel's other end
 * @ch: a channel on a link
 * @peer_id: from the peer's HELLO (CONNECT's or ACCEPT's channel), which
 *	rmsg_lmsg_decode() checked: a valid link id
 *
 * Its control messages name it from here on; before, they are refused.
 * Another id would make them messages the peer takes as a broken link,
 * ending it for every channel on it: such an id is a bug, and ignored.
 */
void rmsg_carrier_set_peer(struct rmsg_channel *ch, u32 peer_id)
{
	struct rmsg_lchan *l = ch->lchan;

	if (WARN_ON_ONCE(!rmsg_link_chan_valid(peer_id)))
		return;
	spin_lock_bh(&l->c->lock);
	l->peer_id = peer_id;
	spin_unlock_bh(&l->c->lock);
}

/*
 * Queue @l's message or HELLO and post what may go: under the lock, with
 * the connection up. A failed post ends the carrier's connection, which
 * reports the rest.
 */
static void rmsg_carrier_want(struct rmsg_carrier *c, struct rmsg_lchan *l)
{
	if (list_empty(&l->want_entry))
		list_add_tail(&l->want_entry, &c->wanting);
	if (rmsg_carrier_push(c->ch))
		rmsg_chan_kill_soft(c->ch, -ECONNRESET);
}

/**
 * rmsg_carrier_hello() - a channel's HELLO on its link
 * @ch: a channel on a link
 * @h: its hello as a REQ or REP would carry it (rmsg_lmsg_decode()'s
 *	rules: no IMM_ARRIVAL or LINK flag); its channel ids are replaced
 *	here by the link's
 * @port: a CONNECT's service port, 1 to 65535; 0 for the other kinds
 *
 * On the link the hello names the channel by link ids: its channel is
 * @ch's link id, a RECONNECT's and an ACCEPT's peer_channel the peer's
 * (rmsg_carrier_set_peer() first, or the ACCEPT that named it). The
 * endpoint's id of the channel, @h's channel (@ch->id), goes beside them
 * (struct rmsg_lmsg's ep_chan): the peer writes its arrival summary hints
 * by it, as it would by a REQ's or REP's channel.
 *
 * A CONNECT goes to RMSG_LINK_NO_CHAN, the others to the peer's end. It
 * goes before the channel's control messages; a newer HELLO that finds it
 * still waiting takes its place. Its completion goes to the hello_sent op.
 *
 * Return: 0; -ENOTCONN while the channel is not on the connection that
 * is up (rmsg_carrier_rejoin()); -EINVAL for a hello the peer would take
 * as a broken link (or one that is not a CONNECT before the peer's end is
 * known).
 */
int rmsg_carrier_hello(struct rmsg_channel *ch, const struct rmsg_hello *h,
		       u16 port)
{
	struct rmsg_lchan *l = ch->lchan;
	struct rmsg_carrier *c = l->c;
	bool connect = h->kind == RMSG_HELLO_CONNECT;
	int ret = 0;

	if (connect != !!port || h->channel >= RMSG_MAX_CHANNELS ||
	    (h->flags & (RMSG_HELLO_F_IMM_ARRIVAL | RMSG_HELLO_F_LINK)))
		return -EINVAL;
	spin_lock_bh(&c->lock);
	if (!connect && !rmsg_link_chan_valid(l->peer_id)) {
		ret = -EINVAL;
	} else if (!rmsg_carrier_joined(c, l)) {
		ret = -ENOTCONN;
	} else {
		memset(&l->hello, 0, sizeof(l->hello));
		l->hello.type = RMSG_CTRL_HELLO;
		l->hello.chan = connect ? RMSG_LINK_NO_CHAN : l->peer_id;
		l->hello.arg = port;
		l->hello.hello = *h;
		l->hello.hello.channel = l->id;
		l->hello.hello.peer_channel = connect ? RMSG_WIRE_NO_CHANNEL :
						       l->peer_id;
		l->hello.ep_chan = h->channel;
		l->hello_due = true;
		rmsg_carrier_want(c, l);
	}
	spin_unlock_bh(&c->lock);
	return ret;
}

/**
 * rmsg_carrier_seq() - which of the link's connections a HELLO came on
 * @c: the link; under its lock (the hello op)
 *
 * For the answer that comes later (rmsg_carrier_answer(), and an ACCEPT's
 * attach: struct rmsg_carrier_conn): the peer's link ids name its
 * channels on that connection only. Its end ended them, and a later
 * connection may have given an id to another channel of the peer's.
 *
 * Return: the connection's number.
 */
u32 rmsg_carrier_seq(struct rmsg_carrier *c)
{
	lockdep_assert_held(&c->lock);
	return c->conn_seq;
}

/**
 * rmsg_carrier_answer() - refuse a HELLO of the peer's, later
 * @c: the link it came on
 * @seq: the connection it came on (rmsg_carrier_seq())
 * @peer_chan: the peer's link id of the channel (the hello's channel)
 * @err: why, 1 to 255 (ECONNREFUSED, ENOENT, ...)
 *
 * For an op that took a HELLO (rmsg_carrier_ops.hello) and whose work
 * found it cannot be answered with an ACCEPT.
 *
 * Return: 0; -ENOTCONN while the link's connection is not up, or when it
 * is not the one the HELLO came on (the refusal is moot: the peer's
 * channel ended with that one); -EBUSY with half the ring of answers
 * owed (the rest is the peer's); -EINVAL.
 */
int rmsg_carrier_answer(struct rmsg_carrier *c, u32 seq, u32 peer_chan,
			int err)
{
	int ret;

	if (!rmsg_link_chan_valid(peer_chan) || err < 1 || err > 255)
		return -EINVAL;
	spin_lock_bh(&c->lock);
	if (!c->up || c->conn_seq != seq) {
		ret = -ENOTCONN;
	} else {
		ret = rmsg_carrier_refuse(c, peer_chan, err,
					  RMSG_CARRIER_ANSWERS -
					  RMSG_CARRIER_PEER_ANSWERS) ?
		      -EBUSY : 0;
		if (!ret && rmsg_carrier_push(c->ch))
			rmsg_chan_kill_soft(c->ch, -ECONNRESET);
	}
	spin_unlock_bh(&c->lock);
	return ret;
}

/*
 * rmsg_wr.c's way to a channel on a link (rmsg_ctrl_link_fn): its control
 * message waits on the carrier, one per kind, the newest value in the
 * place of an older one still waiting. @once (READY, CLOSE, RESET) takes
 * no busy bit, as on a direct connection; the other kinds take it while
 * a message of theirs is waiting or in flight, and a kind in flight (its
 * value out, not acknowledged) is -EAGAIN: its completion runs the data
 * work, which sends the newest then. The READY's buffer is the exception:
 * a leased channel's lease messages follow its READY there, one at a
 * time, and each must arrive (an ASK, a GRANT is not superseded by the
 * next), so a message of that kind waits for the last to complete, on
 * the link as on a direct connection.
 */
static int rmsg_carrier_ctrl_queue(struct rmsg_channel *ch, unsigned int idx,
				   u8 type, u64 arg, bool once)
{
	struct rmsg_lchan *l = ch->lchan;
	struct rmsg_carrier *c = l->c;
	u32 kind = idx - RMSG_CTRL_RECVS;
	bool replace;
	int ret = 0;

	/* The link's liveness is the carrier's: no channel has a heartbeat. */
	if (type == RMSG_CTRL_HEARTBEAT || idx < RMSG_CTRL_RECVS ||
	    idx >= RMSG_CTRL_BUFS)
		return -EOPNOTSUPP;
	spin_lock_bh(&c->lock);
	replace = idx != RMSG_CTRL_READY_BUF &&
		  rmsg_link_ctrlq_queued(&l->q, kind);
	if (!c->up || !rmsg_link_chan_valid(l->peer_id) ||
	    (!rmsg_carrier_joined(c, l) && !rmsg_carrier_last_word(type))) {
		ret = -ECONNRESET;
	} else if (!replace && !once &&
		   test_and_set_bit(rmsg_ctrl_busy_bit(idx), &ch->flags)) {
		ret = -EAGAIN;
	} else {
		rmsg_link_ctrlq_put(&l->q, kind, type, arg);
		rmsg_carrier_want(c, l);
	}
	spin_unlock_bh(&c->lock);
	return ret;
}

/**
 * rmsg_carrier_may_repair() - may a channel on a link be repaired?
 * @ch: a channel on a link
 *
 * Return: false once the carrier ended or leaves its device
 * (rmsg_carrier_evict()): the channel's memory is in the carrier's PD
 * there, and its repair would need the link on the same device.
 */
bool rmsg_carrier_may_repair(struct rmsg_channel *ch)
{
	struct rmsg_carrier *c = ch->lchan->c;
	bool ok;

	spin_lock_bh(&c->lock);
	ok = c->ch && !c->evicting;
	spin_unlock_bh(&c->lock);
	return ok;
}

/**
 * rmsg_carrier_drain_wait() - end the link's connection a faulted channel
 *	is on, and tell whether the channel must wait for its drain
 * @ch: a channel on a link, faulted (its repair's first step), in its work
 *
 * A channel that faulted alone, while the connection it is on is up,
 * cannot be repaired by itself: the peer may still be writing into its
 * block, and only the connection's end stops that. So the connection
 * ends here, and every channel on the link is repaired with it.
 *
 * Until the carrier has drained that connection the channel stays on it
 * and hears what the peer sent there (rmsg_carrier_hears()), as a direct
 * channel's drain hands it every message its QP took. The caller does
 * not sleep for that (the carrier's repair may need the worker it would
 * hold): it comes back when rmsg_carrier_quiesce() queues its work.
 *
 * Return: true while the channel must stay on the connection (its end
 * was asked for here or before, and the carrier has not drained it yet);
 * false once it may let go of the QP.
 */
bool rmsg_carrier_drain_wait(struct rmsg_channel *ch)
{
	struct rmsg_lchan *l = ch->lchan;
	struct rmsg_carrier *c = l->c;
	bool stay;

	spin_lock_bh(&c->lock);
	if (c->ch && rmsg_carrier_joined(c, l))
		rmsg_chan_kill_soft(c->ch, -ECONNRESET);
	stay = c->ch && !c->evicting && rmsg_carrier_hears(c, l) &&
	       c->drained_seq != c->conn_seq;
	spin_unlock_bh(&c->lock);
	return stay;
}

/**
 * rmsg_carrier_qp_release() - a channel on a link lets go of the QP
 * @ch: a channel on a link, faulted, posting no more (tx_live false)
 *
 * What it has waiting for the link is dropped (reported as not sent), and
 * rmsg_carrier_quiesce() no longer waits for it. It stays attached: its
 * link id, its peer's, and its memory in the carrier's PD stay, until it
 * rejoins a later connection (rmsg_carrier_rejoin()) or ends.
 */
void rmsg_carrier_qp_release(struct rmsg_channel *ch)
{
	struct rmsg_lchan *l = ch->lchan;
	struct rmsg_carrier *c = l->c;

	spin_lock_bh(&c->lock);
	rmsg_carrier_drop(l);
	if (l->on_qp) {
		l->on_qp = false;
		if (!--c->on_qp)
			wake_up_all(&c->share.wq);
	}
	spin_unlock_bh(&c->lock);
}

/**
 * rmsg_carrier_link_idle() - wait until no link message of a channel's
 *	is in flight
 * @ch: a channel on a link that let go of the QP (rmsg_carrier_qp_release())
 *
 * Each completes, or is flushed once the connection ended; its report
 * (rmsg_ctrl_sent()) then comes before the channel frees its control
 * buffers for the next connection. Finite, as rmsg_wr_link_wait().
 */
void rmsg_carrier_link_idle(struct rmsg_channel *ch)
{
	struct rmsg_lchan *l = ch->lchan;
	struct rmsg_carrier *c = l->c;

	wait_event(c->share.wq, !READ_ONCE(l->in_flight));
}

/**
 * rmsg_carrier_rejoin() - a channel being repaired goes on the link's
 *	new connection
 * @ch: a channel on a link that let go of the QP, in its work
 * @conn: filled in with the connection, as rmsg_carrier_attach() does
 * @answer: for the accepting side, the RECONNECT to answer, taken here
 *	(it must have come on this connection); NULL for the dialling side
 *
 * Only a connection newer than the one the channel left: that one ended,
 * or ends (rmsg_carrier_drain_wait()). From here the channel's messages go on
 * it, and the peer's reach the channel.
 *
 * Return: 0; -ENOTCONN while no newer connection is up, or the carrier
 * leaves its device; -EAGAIN when @answer is asked for and no RECONNECT
 * came on this connection yet.
 */
int rmsg_carrier_rejoin(struct rmsg_channel *ch, struct rmsg_carrier_conn *conn,
			struct rmsg_hello *answer)
{
	struct rmsg_lchan *l = ch->lchan;
	struct rmsg_carrier *c = l->c;
	int ret = 0;

	spin_lock_bh(&c->lock);
	if (!c->ch || !c->up || c->evicting || l->on_qp ||
	    l->seq == c->conn_seq)
		ret = -ENOTCONN;
	else if (answer && (!l->answer_due || l->answer_seq != c->conn_seq))
		ret = -EAGAIN;
	if (!ret) {
		if (answer) {
			*answer = l->answer;
			l->answer_due = false;
		}
		rmsg_carrier_join(c, l, conn);
	}
	spin_unlock_bh(&c->lock);
	return ret;
}

/**
 * rmsg_carrier_answer_put() - keep the peer's HELLO for a channel's repair
 * @ch: the channel it names, on a link
 * @m: a RECONNECT (for the accepting side) or a repair's ACCEPT (for the
 *	dialling side); its channel becomes the peer's endpoint id of the
 *	channel, as in a REQ or REP
 *
 * For the hello op, in softirq under the carrier's lock: the channel's
 * work takes it (rmsg_carrier_rejoin(), rmsg_carrier_answer_take()). A
 * newer one takes the place of one not taken.
 */
void rmsg_carrier_answer_put(struct rmsg_channel *ch, const struct rmsg_lmsg *m)
{
	struct rmsg_lchan *l = ch->lchan;

	lockdep_assert_held(&l->c->lock);
	l->answer = m->hello;
	l->answer.channel = m->ep_chan;
	l->answer_due = true;
	l->answer_seq = l->c->conn_seq;
}

/**
 * rmsg_carrier_answer_take() - the peer's ACCEPT of a channel's repair
 * @ch: the dialling side, rejoined, in its work
 * @answer: filled in
 *
 * Return: whether one came on the connection the channel rejoined.
 */
bool rmsg_carrier_answer_take(struct rmsg_channel *ch,
			      struct rmsg_hello *answer)
{
	struct rmsg_lchan *l = ch->lchan;
	struct rmsg_carrier *c = l->c;
	bool ok;

	spin_lock_bh(&c->lock);
	ok = l->answer_due && l->answer_seq == l->seq &&
	     rmsg_carrier_joined(c, l);
	if (ok) {
		*answer = l->answer;
		l->answer_due = false;
	}
	spin_unlock_bh(&c->lock);
	return ok;
}

/**
 * rmsg_carrier_on_link() - who hears of HELLOs and REFUSEs on links
 * @ops: the higher layer's handlers; at module load only
 */
void __init rmsg_carrier_on_link(const struct rmsg_carrier_ops *ops)
{
	rmsg_carrier_ops = ops;
}

/* At module load: rmsg_wr.c sends link channels' messages through here. */
void __init rmsg_carrier_init_module(void)
{
	rmsg_ctrl_on_link(rmsg_carrier_ctrl_queue);
}
