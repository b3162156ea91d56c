// SPDX-License-Identifier: GPL-2.0
/*
 * rmsg: channels on a link, what the link tells them
 * (Documentation/design.rst, "Channels on a link"): the ops the carrier
 * calls with the HELLOs and REFUSEs that arrive (rmsg_carrier_on_link()),
 * and the accepting side, which makes a channel for a HELLO CONNECT.
 *
 * The ops run in the carrier's completion (softirq) under its lock: they
 * copy, set bits and queue work. A CONNECT is queued for rmsg_lc_work(),
 * which finds the listener by service port in the carrier's namespace,
 * makes the channel as a connection request on the listener would
 * (rmsg_cm_request(): charged to the listener's owner, the same limits),
 * puts it on the carrier's connection and answers with its HELLO ACCEPT,
 * or refuses the CONNECT with the errno the connection request would have
 * been rejected with. A RECONNECT or a repair's ACCEPT is kept for the
 * repair of the channel it names (rmsg_repair.c). A carrier takes at
 * most RMSG_CARRIER_ACCEPTS
 * CONNECTs at a time (the rest are refused, EBUSY), so that a peer's
 * flood of them costs bounded memory. An ACCEPT for a dialling channel
 * is its ESTABLISHED; the ACCEPT's send is the accepting side's.
 *
 * Layer (Documentation/design.rst, "Layers"): of the module's files it
 * calls only these, all below it: rmsg_carrier.c, rmsg_channel.c,
 * rmsg_conn.c, rmsg_data.c, rmsg_lifecycle.c, rmsg_listen.c and
 * rmsg_wr.c.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/slab.h>
#include <linux/workqueue.h>
#include <net/net_namespace.h>

#include "rmsg.h"
#include "rmsg_carrier.h"
#include "rmsg_chan.h"
#include "rmsg_conn.h"
#include "rmsg_lifecycle.h"
#include "rmsg_link_chan.h"
#include "core/rmsg_link.h"

/*
 * A HELLO CONNECT taken, for rmsg_lc_work(), and the carrier's connection
 * it came on (@seq): the peer's link id in it names the peer's channel on
 * that connection only.
 */
struct rmsg_lc_req {
	struct list_head entry;
	struct rmsg_carrier *c;
	u32 seq;
	struct rmsg_lmsg m;
};

/*
 * The CONNECTs taken on every carrier, under @lock (taken in softirq by
 * the op): each holds its carrier and one of its RMSG_CARRIER_ACCEPTS.
 */
static struct {
	spinlock_t lock;
	struct list_head reqs;
	struct delayed_work work;
	bool dead;
} rmsg_lc;

/*
 * The peer's hello @m, as a REQ's or REP's would be kept: its channel the
 * peer's endpoint id of the channel, which a REQ or REP carries there and
 * the summary hints are written by (rmsg_data_hint()), not the peer's link
 * id, which is the carrier's to keep (struct rmsg_lchan's peer_id).
 */
static void rmsg_lc_peer_hello(struct rmsg_channel *ch,
			       const struct rmsg_lmsg *m)
{
	ch->peer = m->hello;
	ch->peer.channel = m->ep_chan;
}

/*
 * A RECONNECT for @ch, the accepting side of a channel on the link, from
 * the peer's end of it (the carrier checked the link ids): the peer
 * repairs the channel, and its hello says where its stream stands. Kept
 * for the channel's work, which answers it once the channel is off the
 * last connection and on this one (rmsg_repair.c). A channel still OPEN
 * is faulted (the peer saw the connection's end first); one whose repair
 * answered an earlier RECONNECT already gives that attempt up: the peer
 * dials again only when its attempt failed. Softirq, under the carrier's
 * lock. Return: 0, or why not (a negative errno).
 */
static int rmsg_lc_reconnect_take(struct rmsg_channel *ch,
				  const struct rmsg_lmsg *m)
{
	enum rmsg_chan_state state = READ_ONCE(ch->state);
	struct rmsg_hello h = m->hello;

	/* As a listener judges a RECONNECT (rmsg_cm_repair_request()). */
	if (ch->active || !ch->retain.on ||
	    (state != RMSG_CHAN_OPEN && state != RMSG_CHAN_RECOVERING))
		return -ENOENT;
	h.channel = m->ep_chan;
	switch (rmsg_repair_match(ch->peer.incarnation, ch->peer.channel,
				  READ_ONCE(ch->resil.epoch), &h)) {
	case RMSG_REPAIR_ACCEPT:
		break;
	case RMSG_REPAIR_STALE:
		return -ESTALE;
	default:
		return -ENOENT;
	}
	rmsg_carrier_answer_put(ch, m);
	if (state == RMSG_CHAN_OPEN ||
	    test_bit(RMSG_CHAN_LINK_ANSWERED, &ch->flags))
		rmsg_chan_kill_soft(ch, -ECONNRESET);
	else
		queue_work(rmsg_wq, &ch->work);
	return 0;
}

/*
 * The ACCEPT of @ch's repair, the dialling side's (the carrier checked
 * the link ids): for the attempt under way, its RECONNECT's epoch, from
 * the same peer endpoint, once. Kept for the channel's work, which
 * resumes from it (rmsg_repair.c). Softirq, under the carrier's lock.
 * Return: 0, or why not (a negative errno).
 */
static int rmsg_lc_reaccept_take(struct rmsg_channel *ch,
				 const struct rmsg_lmsg *m)
{
	if (READ_ONCE(ch->repair.phase) != RMSG_REPAIR_DIALING ||
	    m->hello.epoch != READ_ONCE(ch->resil.epoch))
		return -ENOENT;
	/* A stranger now: the peer's endpoint restarted. */
	if (m->hello.incarnation != ch->peer.incarnation)
		return -ECONNRESET;
	if (test_and_set_bit(RMSG_CHAN_LINK_ANSWERED, &ch->flags))
		return -EPROTO;
	rmsg_carrier_answer_put(ch, m);
	/* The answer before the bit: the work reads it after. */
	smp_mb__before_atomic();
	set_bit(RMSG_CHAN_LINK_UP, &ch->flags);
	queue_work(rmsg_wq, &ch->work);
	return 0;
}

/*
 * A HELLO arrived on a link: a CONNECT for a listener of ours (@ch NULL),
 * or the ACCEPT of a channel of ours that dialled. Softirq, under the
 * carrier's lock. Return: 0 when taken, else why not (a negative errno).
 */
static int rmsg_lc_hello_take(struct rmsg_carrier *c, struct rmsg_channel *ch,
			      const struct rmsg_lmsg *m)
{
	struct rmsg_lc_req *r;

	switch (m->hello.kind) {
	case RMSG_HELLO_CONNECT:
		r = kmalloc(sizeof(*r), GFP_ATOMIC);
		if (!r)
			return -ENOMEM;
		if (!rmsg_carrier_accept_take(c)) {
			kfree(r);
			return -EBUSY;
		}
		r->c = rmsg_carrier_get(c);
		r->seq = rmsg_carrier_seq(c);
		r->m = *m;
		spin_lock(&rmsg_lc.lock);
		list_add_tail(&r->entry, &rmsg_lc.reqs);
		spin_unlock(&rmsg_lc.lock);
		queue_delayed_work(rmsg_wq, &rmsg_lc.work, 0);
		return 0;
	case RMSG_HELLO_ACCEPT:
		if (ch->active &&
		    READ_ONCE(ch->state) == RMSG_CHAN_RECOVERING)
			return rmsg_lc_reaccept_take(ch, m);
		/* Only a dialling channel waits for one, and only once. */
		if (!ch->active || READ_ONCE(ch->state) != RMSG_CHAN_CONNECTING)
			return -ENOENT;
		if (test_and_set_bit(RMSG_CHAN_LINK_ANSWERED, &ch->flags))
			return -EPROTO;
		rmsg_lc_peer_hello(ch, m);
		/*
		 * It took our CONNECT's offer: it is the peer's READY, taken
		 * here, before whatever the peer sends after it on the link.
		 * (An ACCEPT that says so to a CONNECT that did not fails
		 * rmsg_lease_peer() in the work: RMSG_HELLO_F_LEASE.)
		 */
		if (ch->lease.on && (m->hello.flags & RMSG_HELLO_F_READY)) {
			set_bit(RMSG_CHAN_HELLO_READY, &ch->flags);
			rmsg_chan_peer_ready(ch, 0);
		}
		/* The hello before the bit: the work reads it after. */
		smp_mb__before_atomic();
		set_bit(RMSG_CHAN_LINK_UP, &ch->flags);
		queue_work(rmsg_wq, &ch->work);
		return 0;
	case RMSG_HELLO_RECONNECT:
		return rmsg_lc_reconnect_take(ch, m);
	default:
		return -EPROTO;
	}
}

/* The op: rmsg_carrier_ops.hello wants the errno positive. */
static int rmsg_lc_hello(struct rmsg_carrier *c, struct rmsg_channel *ch,
			 const struct rmsg_lmsg *m)
{
	return -rmsg_lc_hello_take(c, ch, m);
}

/*
 * The peer refused a HELLO of @ch's: our CONNECT (no listener, its
 * limits), our ACCEPT (its dialling channel is gone), or our RECONNECT
 * (its end of the channel is gone, or cannot be repaired). It has no end
 * for the channel (the carrier forgot the peer's id): the channel ends,
 * with @err; a repair ends as a reset by the peer would end it.
 */
static void rmsg_lc_refused(struct rmsg_channel *ch, int err)
{
	if (READ_ONCE(ch->state) == RMSG_CHAN_RECOVERING) {
		set_bit(RMSG_CHAN_PEER_RESET, &ch->flags);
		rmsg_chan_kill_soft(ch, -ECONNRESET);
		return;
	}
	rmsg_chan_kill_soft(ch, -err);
}

/*
 * @ch's HELLO left (@ok), or will not. The accepting side is connected
 * once its ACCEPT left: nothing of the peer's can come before the peer
 * read it. Softirq or bottom halves off, under the carrier's lock.
 */
static void rmsg_lc_hello_sent(struct rmsg_channel *ch, bool ok)
{
	if (!ok) {
		rmsg_chan_kill_soft(ch, -ECONNRESET);
	} else if (!ch->active) {
		set_bit(RMSG_CHAN_LINK_UP, &ch->flags);
		queue_work(rmsg_wq, &ch->work);
	}
}

static const struct rmsg_carrier_ops rmsg_lc_ops = {
	.hello		= rmsg_lc_hello,
	.refused	= rmsg_lc_refused,
	.hello_sent	= rmsg_lc_hello_sent,
};

/*
 * A channel for the CONNECT @m that came on @c, for the listener @l;
 * under rmsg_listen_registry_lock(), which keeps @l and its endpoint.
 * Charged to the listener's owner. Return: the channel, published and
 * setting up (which keeps its endpoint once the lock is dropped), or an
 * ERR_PTR of what rmsg_cm_request() would have rejected with.
 */
static struct rmsg_channel *rmsg_lc_new(struct rmsg_listener *l,
					const struct rmsg_lmsg *m)
{
	struct rmsg_channel *ch;
	int ret;

	/* A program answers each request itself: not on a link yet. */
	if (l->manual)
		return ERR_PTR(-EOPNOTSUPP);
	if (m->hello.block_size > l->peer_block_max)
		return ERR_PTR(-EMSGSIZE);
	ch = rmsg_chan_alloc();
	if (!ch)
		return ERR_PTR(-ENOMEM);
	rmsg_chan_init(ch, l->ep, RMSG_CHAN_ACCEPTING, l->user_data,
		       l->block_size);
	ch->opts = l->opts;
	rmsg_lc_peer_hello(ch, m);
	/* Published, it may be closed at once: the end waits for us. */
	ch->setting_up = true;
	ret = rmsg_chan_publish(ch);
	if (ret) {
		rmsg_chan_alloc_undo(ch);
		return ERR_PTR(ret);
	}
	return ch;
}

/*
 * Answer the CONNECT @m that came on @c's connection @seq. Return: 0 when
 * the channel's ACCEPT is on its way (or that connection ended, and with
 * it the peer's channel), else the negative errno to refuse the CONNECT
 * with.
 */
static int rmsg_lc_accept(struct rmsg_carrier *c, u32 seq,
			  const struct rmsg_lmsg *m)
{
	struct rmsg_carrier_conn cc;
	struct rmsg_listener *l;
	union rmsg_sockaddr local;
	struct rmsg_channel *ch;
	struct mem_cgroup *old;
	int ret;

	if (!rmsg_carrier_local(c, &local))
		return 0;
	rmsg_listen_registry_lock();
	/* Links are in the initial namespace only (rmsg_links.c). */
	l = rmsg_listen_find(&init_net, m->arg, &local.sa);
	if (!l) {
		rmsg_listen_registry_unlock();
		return -ECONNREFUSED;
	}
	old = rmsg_ep_charge_begin(l->ep);
	ch = rmsg_lc_new(l, m);
	rmsg_listen_registry_unlock();
	if (IS_ERR(ch)) {
		rmsg_ep_charge_end(old);
		return PTR_ERR(ch);
	}
	ret = rmsg_carrier_attach(c, ch, &cc);
	/*
	 * On a later connection than the CONNECT's the peer's channel is
	 * gone, and its link id may be another's of the peer's by now.
	 */
	if (!ret && cc.seq != seq)
		ret = -ENOTCONN;
	if (!ret)
		ret = rmsg_chan_link_setup(ch, &cc);
	if (!ret) {
		rmsg_chan_open_by(ch);
		/* Sized by the peer: made only once the request is taken. */
		ret = rmsg_data_shadow_create(ch);
	}
	/*
	 * The peer's end is named only once nothing can fail but the send:
	 * a channel refused knows no peer end, and its end waits for none
	 * (the peer's channel, refused, never learns of ours).
	 */
	if (!ret) {
		rmsg_carrier_set_peer(ch, m->hello.channel);
		/*
		 * A CONNECT that stands for the peer's READY, on a channel
		 * that leases as it asked: our ACCEPT stands for ours. The
		 * peer sends nothing more for the channel before our ACCEPT.
		 */
		if (ch->lease.on && (m->hello.flags & RMSG_HELLO_F_READY)) {
			set_bit(RMSG_CHAN_HELLO_READY, &ch->flags);
			local_bh_disable();
			rmsg_chan_peer_ready(ch, 0);
			local_bh_enable();
		}
		ret = rmsg_chan_link_hello(ch, RMSG_HELLO_ACCEPT, 0);
	}
	rmsg_chan_setup_done(ch);
	if (ret)
		rmsg_chan_kill(ch, ret);
	rmsg_ep_charge_end(old);
	return ret;
}

/*
 * The CONNECTs taken, in turn. A refusal goes into the carrier's ring of
 * answers, whose half for later refusals may be full while the link's
 * credits hold its answers back: the CONNECT then waits, and the work
 * tries again a tick later (its place among RMSG_CARRIER_ACCEPTS stays
 * taken meanwhile, so a peer that keeps its credits from us has more
 * CONNECTs refused at once, from the ring's other half). Those that wait
 * are set aside until the others, of every carrier, are answered: a peer
 * that holds its credits back delays only its own CONNECTs.
 */
static void rmsg_lc_work(struct work_struct *work)
{
	struct rmsg_lc_req *r;
	LIST_HEAD(later);
	int err;

	for (;;) {
		spin_lock_bh(&rmsg_lc.lock);
		r = list_first_entry_or_null(&rmsg_lc.reqs, struct rmsg_lc_req,
					     entry);
		if (r)
			list_del(&r->entry);
		spin_unlock_bh(&rmsg_lc.lock);
		if (!r)
			break;
		/* A CONNECT refused already (the ring was full) comes back. */
		err = r->m.type ? (READ_ONCE(rmsg_lc.dead) ? -ESHUTDOWN :
				   rmsg_lc_accept(r->c, r->seq, &r->m)) :
		      -(int)r->m.arg;
		/*
		 * Refused, on the wire as a positive errno; one the link's end
		 * made moot goes nowhere (rmsg_carrier_answer() says so).
		 */
		if (err < 0 && err >= -255 && !READ_ONCE(rmsg_lc.dead) &&
		    rmsg_carrier_answer(r->c, r->seq, r->m.hello.channel,
					-err) == -EBUSY) {
			/* Keep the errno, not the request: it was answered. */
			r->m.type = 0;
			r->m.arg = -err;
			list_add_tail(&r->entry, &later);
			continue;
		}
		rmsg_carrier_accept_done(r->c);
		rmsg_carrier_put(r->c);
		kfree(r);
	}
	if (list_empty(&later))
		return;
	spin_lock_bh(&rmsg_lc.lock);
	list_splice(&later, &rmsg_lc.reqs);
	spin_unlock_bh(&rmsg_lc.lock);
	queue_delayed_work(rmsg_wq, &rmsg_lc.work, 1);
}

/* At module load: the carriers hand HELLOs and REFUSEs here. */
void __init rmsg_link_chan_init_module(void)
{
	spin_lock_init(&rmsg_lc.lock);
	INIT_LIST_HEAD(&rmsg_lc.reqs);
	INIT_DELAYED_WORK(&rmsg_lc.work, rmsg_lc_work);
	rmsg_carrier_on_link(&rmsg_lc_ops);
}

/*
 * At module unload, once every carrier ended (rmsg_link_exit_module()):
 * CONNECTs still queued are dropped, and their carriers' references.
 */
void rmsg_link_chan_exit_module(void)
{
	WRITE_ONCE(rmsg_lc.dead, true);
	cancel_delayed_work_sync(&rmsg_lc.work);
	rmsg_lc_work(&rmsg_lc.work.work);
}
