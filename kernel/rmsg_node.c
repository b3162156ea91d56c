// SPDX-License-Identifier: GPL-2.0
/*
 * rmsg: liveness per peer node, not per channel.
 *
 * A node here is a peer as one local device port reaches it: the network
 * namespace, the device, the port and the peer's address (its port left
 * out), which is what a later link will be keyed by. Every open channel
 * that keeps the module's heartbeat (no heartbeat option of its own)
 * is a member of its node while it is open, and the node, not each
 * channel, keeps the heartbeat: one period's work per node, whatever the
 * number of channels on it.
 *
 * Each period (heartbeat_ms), under the node's lock, the beat:
 *  - takes every member's RMSG_CHAN_HEARD bit: an op of any member that
 *    the peer acknowledged shows the node is there;
 *  - for a member that heard nothing while it waits on its queue pair (a
 *    send queue found full, rendezvous READs out), counts a miss of its
 *    own and asks it for a HEARTBEAT of its own, as every channel used to
 *    send: a stuck queue pair is found on a node that answers
 *    (RMSG_CHAN_SILENT at heartbeat_misses, the channel repaired with
 *    ETIMEDOUT);
 *  - counts a miss of the node when no member heard anything although a
 *    HEARTBEAT of a member was out, unanswered, during the period (at
 *    its start or at its end); at heartbeat_misses every member is
 *    repaired (ETIMEDOUT), as each would have been alone;
 *  - asks one member, in turn, for a HEARTBEAT (RMSG_CHAN_BEACON_DUE):
 *    what keeps an idle node heard, and over time looks at every
 *    member's queue pair. A member with an end already on its way (the
 *    peer's CLOSE arrived, its work has not run yet) is passed over.
 *
 * Why a miss needs a HEARTBEAT out: silence is evidence against the peer
 * only if we asked something of it. A period in which ours could not go
 * (the member asked was ending, or our own work queue was behind: a
 * thousand channels closing at once) says nothing about the peer, and
 * counting it once made a mass close by the peer, who had closed every
 * channel but had not yet sent every CLOSE, repair all the channels
 * still open and end them with ETIMEDOUT. A dead peer still adds a miss
 * every period, from the first: the HEARTBEAT asked at a beat goes out
 * and is unanswered at the next. (Requiring one out for the whole
 * period found a dead peer a period later, and lost the count when the
 * member whose HEARTBEAT failed left the node: on the debug kernel an
 * idle channel then took over 10 s to see a link go down.)
 *
 * An idle channel thus sends nothing: the idle traffic between two
 * nodes is one HEARTBEAT a period each way (and its acknowledgement),
 * however many channels they share. A channel whose queue pair broke
 * finds out at once when it is ours (its receives flush), when the peer
 * disconnects, when it sends, or when its turn as beacon comes.
 *
 * The beat only sets channel bits and queues channel work (never a
 * channel lock, never a sleep), so members join and leave under their
 * endpoint's chan_lock with two spinlocks, rmsg_nodes_lock, then the
 * node's. The last member to leave takes the node out of the table and
 * queues its beat at once, under the node's lock; the beat that finds no
 * member and no beat queued behind it frees the node: no one waits for
 * a beat.
 *
 * Layer (Documentation/design.rst, "Layers"): of the module's files it
 * calls only these, all below it: rmsg_wr.c.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/hashtable.h>
#include <linux/jhash.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/workqueue.h>

#include "rmsg.h"
#include "rmsg_chan.h"
#include "rmsg_node.h"
#include "rmsg_trace.h"
#include "rmsg_wr.h"

unsigned int heartbeat_ms = 1000;
module_param(heartbeat_ms, uint, 0644);
MODULE_PARM_DESC(heartbeat_ms,
		 "Each peer node (and each open channel with a heartbeat of its own) is sent a HEARTBEAT this often, and checked for something of ours acknowledged (0: no heartbeats)");

unsigned int heartbeat_misses = 4;
module_param(heartbeat_misses, uint, 0644);
MODULE_PARM_DESC(heartbeat_misses,
		 "Heartbeat periods in a row with nothing of ours acknowledged before the connection counts as broken");

/* With heartbeats off, how often a node's beat looks at the setting. */
#define RMSG_NODE_IDLE_MS	1000

/**
 * struct rmsg_node_key - what tells nodes apart
 * @net: the network namespace of the channels (never dereferenced)
 * @ibdev: the local device (never dereferenced)
 * @port: the local port
 * @addr: the peer's address, its port 0
 */
struct rmsg_node_key {
	struct net *net;
	struct ib_device *ibdev;
	u32 port;
	union rmsg_sockaddr addr;
};

/**
 * struct rmsg_node - a peer node's liveness
 * @hash: in rmsg_nodes, under rmsg_nodes_lock, while it has members
 * @key: which node
 * @lock: guards @members, @nr_members and every member's @node_entry
 * @members: open channels that keep the module's heartbeat
 * @nr_members: how many
 * @misses: periods in a row in which no member heard anything although a
 *	HEARTBEAT was out (in @beat)
 * @hb_out: at the last beat, a member's HEARTBEAT was out, unanswered
 *	(in @beat)
 * @beat: the period's work; frees the node once it has no member
 */
struct rmsg_node {
	struct hlist_node hash;
	struct rmsg_node_key key;
	spinlock_t lock;
	struct list_head members;
	u32 nr_members;
	u32 misses;
	bool hb_out;
	struct delayed_work beat;
};

static DEFINE_HASHTABLE(rmsg_nodes, 8);
static DEFINE_SPINLOCK(rmsg_nodes_lock);

static u32 rmsg_node_hash(const struct rmsg_node_key *key)
{
	return jhash(key, sizeof(*key), 0);
}

/* The key of @ch's node; false when it has no connection to take it from. */
static bool rmsg_node_key_of(struct rmsg_channel *ch,
			     struct rmsg_node_key *key)
{
	struct rdma_cm_id *id = rmsg_chan_cm_id(ch);

	memset(key, 0, sizeof(*key));
	if (!id || !ch->dev.rdev)
		return false;
	/* The id's: an accepted channel has no namespace of its own. */
	key->net = id->route.addr.dev_addr.net;
	key->ibdev = ch->dev.rdev->ibdev;
	key->port = id->port_num;
	return rmsg_sockaddr_host(&key->addr, &ch->conn_peer.sa);
}

/* Is @ch waiting on its queue pair: a completion it needs, or READs out? */
static bool rmsg_node_chan_waits(const struct rmsg_channel *ch)
{
	return READ_ONCE(ch->wrs.room_wanted) ||
	       READ_ONCE(ch->rndv.rd_posted) != READ_ONCE(ch->rndv.rd_done);
}

static void rmsg_node_ask(struct rmsg_channel *ch, unsigned int bit)
{
	set_bit(bit, &ch->flags);
	queue_work(rmsg_wq, &ch->work);
}

/* Has a completion already asked @ch's work to end it (READ_ONCE: softirq)? */
static bool rmsg_node_chan_ending(const struct rmsg_channel *ch)
{
	return READ_ONCE(ch->soft_error) != 1;
}

/*
 * The member to ask for this period's HEARTBEAT: the first, in turn, that
 * is not ending, moved to the end of the line. NULL if all are ending.
 */
static struct rmsg_channel *rmsg_node_next_beacon(struct rmsg_node *node)
{
	struct rmsg_channel *ch;

	list_for_each_entry(ch, &node->members, node_entry) {
		if (!rmsg_node_chan_ending(ch)) {
			list_move_tail(&ch->node_entry, &node->members);
			return ch;
		}
	}
	return NULL;
}

static void rmsg_node_beat(struct work_struct *work)
{
	struct rmsg_node *node = container_of(to_delayed_work(work),
					      struct rmsg_node, beat);
	unsigned int ms = READ_ONCE(heartbeat_ms);
	unsigned int misses = READ_ONCE(heartbeat_misses) ?: 1;
	bool heard = false, hb_out = false, was_out, pending;
	struct rmsg_channel *ch;

	spin_lock(&node->lock);
	if (!node->nr_members) {
		/*
		 * Out of the table: nothing can find it any more. The last
		 * member queued this beat under the lock; one queued behind
		 * a running beat frees it instead.
		 */
		pending = delayed_work_pending(&node->beat);
		spin_unlock(&node->lock);
		if (!pending)
			kfree(node);
		return;
	}
	if (!ms)
		goto again;
	list_for_each_entry(ch, &node->members, node_entry) {
		if (test_and_clear_bit(RMSG_CHAN_HEARD, &ch->flags)) {
			heard = true;
			ch->repair.hb_misses = 0;
		} else if (rmsg_node_chan_waits(ch)) {
			rmsg_node_ask(ch, ++ch->repair.hb_misses >= misses ?
					  RMSG_CHAN_SILENT :
					  RMSG_CHAN_BEACON_DUE);
		} else {
			ch->repair.hb_misses = 0;
		}
		if (rmsg_ctrl_unanswered(ch, RMSG_CTRL_HEARTBEAT_BUF))
			hb_out = true;
	}
	/*
	 * One out at the last beat (since answered: then heard; failed: its
	 * member's own fault; or still out) or out now: the period asked the
	 * peer something. Nothing out at either end: it asked nothing.
	 */
	was_out = node->hb_out || hb_out;
	node->hb_out = hb_out;
	if (heard) {
		node->misses = 0;
	} else if (was_out && ++node->misses >= misses) {
		trace_rmsg_node_beat(node->nr_members, heard, was_out,
				     node->misses, ~0U, ~0U);
		node->misses = 0;
		node->hb_out = false;
		list_for_each_entry(ch, &node->members, node_entry)
			rmsg_node_ask(ch, RMSG_CHAN_SILENT);
		goto again;
	}
	ch = rmsg_node_next_beacon(node);
	if (ch)
		rmsg_node_ask(ch, RMSG_CHAN_BEACON_DUE);
	trace_rmsg_node_beat(node->nr_members, heard, was_out, node->misses,
			     ch ? ch->ep->id : ~0U, ch ? ch->id : ~0U);
again:
	queue_delayed_work(rmsg_wq, &node->beat,
			   msecs_to_jiffies(ms ?: RMSG_NODE_IDLE_MS));
	spin_unlock(&node->lock);
}

static struct rmsg_node *rmsg_node_find(const struct rmsg_node_key *key,
					u32 hash)
{
	struct rmsg_node *node;

	hash_for_each_possible(rmsg_nodes, node, hash, hash)
		if (!memcmp(&node->key, key, sizeof(*key)))
			return node;
	return NULL;
}

/**
 * rmsg_node_join() - make an open channel a member of its peer node
 * @ch: an open channel, with the module's heartbeat; caller holds its
 *	endpoint's chan_lock
 *
 * A member again after a repair: what was asked of it before is void.
 *
 * Return: 0 (a member), or -ENOMEM or -EINVAL (no node: the caller keeps
 * the channel's own heartbeat).
 */
int rmsg_node_join(struct rmsg_channel *ch)
{
	struct rmsg_node *node, *fresh;
	struct rmsg_node_key key;
	u32 hash;

	lockdep_assert_held(&ch->ep->chan_lock);
	if (ch->node)
		return 0;
	if (!rmsg_node_key_of(ch, &key))
		return -EINVAL;
	hash = rmsg_node_hash(&key);
	/* Shared by every user of the node: charged to none. */
	fresh = kzalloc(sizeof(*fresh), GFP_KERNEL);
	if (!fresh)
		return -ENOMEM;
	spin_lock(&rmsg_nodes_lock);
	node = rmsg_node_find(&key, hash);
	if (!node) {
		node = fresh;
		fresh = NULL;
		node->key = key;
		spin_lock_init(&node->lock);
		INIT_LIST_HEAD(&node->members);
		INIT_DELAYED_WORK(&node->beat, rmsg_node_beat);
		hash_add(rmsg_nodes, &node->hash, hash);
		queue_delayed_work(rmsg_wq, &node->beat,
				   msecs_to_jiffies(READ_ONCE(heartbeat_ms) ?:
						    RMSG_NODE_IDLE_MS));
	}
	spin_lock(&node->lock);
	clear_bit(RMSG_CHAN_SILENT, &ch->flags);
	clear_bit(RMSG_CHAN_BEACON_DUE, &ch->flags);
	list_add_tail(&ch->node_entry, &node->members);
	node->nr_members++;
	ch->node = node;
	spin_unlock(&node->lock);
	spin_unlock(&rmsg_nodes_lock);
	kfree(fresh);
	return 0;
}

/**
 * rmsg_node_leave() - a channel stops being a member of its node
 * @ch: the channel, a member or not; caller holds its endpoint's chan_lock
 *
 * Called when it leaves OPEN and when it takes a heartbeat of its own.
 * Never sleeps.
 */
void rmsg_node_leave(struct rmsg_channel *ch)
{
	struct rmsg_node *node = ch->node;

	lockdep_assert_held(&ch->ep->chan_lock);
	if (!node)
		return;
	spin_lock(&rmsg_nodes_lock);
	spin_lock(&node->lock);
	list_del(&ch->node_entry);
	if (!--node->nr_members) {
		hash_del(&node->hash);
		/* Its beat frees it, now rather than a period later. */
		mod_delayed_work(rmsg_wq, &node->beat, 0);
	}
	spin_unlock(&node->lock);
	spin_unlock(&rmsg_nodes_lock);
	ch->node = NULL;
}
