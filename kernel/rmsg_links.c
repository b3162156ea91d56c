// SPDX-License-Identifier: GPL-2.0
/*
 * rmsg: links between rmsg kernels (Documentation/design.rst, "How the
 * module carries links"): the carriers.
 *
 * With link_port set, the module has an endpoint of its own in the initial
 * network namespace (rmsg_ep_create_kernel()), listening on link_port on
 * every address, and a program's channel that connects makes sure there
 * is a carrier to the peer's address: a channel of that endpoint to the
 * peer module's, dialled from a port below 1024 (which only a kernel or a
 * privileged program can bind, and which the peer's listener requires).
 * A carrier is a channel like any other: it repairs itself, fails over,
 * keeps its peer node's heartbeat. Once it is open, programs' channels to
 * the peer open on it (rmsg_link_carrier(), rmsg_link_chan.c), and are
 * repaired with it on the same device (rmsg_repair.c, "repair on a
 * link").
 *
 * rmsg_links_lock guards all of it; it is taken with no endpoint lock
 * held, and the module endpoint's chan_lock only under it. The endpoint's
 * events come in under that chan_lock at times, so they are only queued,
 * for rmsg_link_work().
 *
 * Layer (Documentation/design.rst, "Layers"): of the module's files it
 * calls only these, all below it: rmsg_carrier.c, rmsg_channel.c,
 * rmsg_ctl.c, rmsg_endpoint.c, rmsg_listen.c and rmsg_wr.c.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/hashtable.h>
#include <linux/jhash.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/workqueue.h>
#include <net/net_namespace.h>

#include "rmsg.h"
#include "rmsg_carrier.h"
#include "rmsg_chan.h"
#include "rmsg_links.h"

/* A carrier's receive block: the smallest; nothing is written there. */
#define RMSG_LINK_BLOCK		4096
/* Source ports a carrier is dialled from: below 1024, from the top. */
#define RMSG_LINK_SPORT_MAX	1023
#define RMSG_LINK_SPORT_MIN	600
/* A peer whose carrier failed is dialled again after this. */
#define RMSG_LINK_RETRY_MS	10000
/* A link with no carrier up is looked at again at most this often. */
#define RMSG_LINK_CHECK_MS	1000

/**
 * struct rmsg_link - a carrier, or a peer we want one to
 * @entry: in rmsg_links.links
 * @hash: in rmsg_links_by_peer, by @peer
 * @peer: the peer's address, its port 0
 * @chan: the carrier's channel id in rmsg_links.ep; U32_MAX while none
 * @carrier: the carrier's link, referenced, once the carrier opened; NULL
 *	before, and once it ended: what a channel to @peer goes on
 *	(rmsg_link_carrier())
 * @dialled: we dial it (else the peer did)
 * @retry_at: a failed dial: not before then (jiffies)
 * @checked_at: rmsg_link_want() asks for rmsg_link_check() again not
 *	before then (jiffies)
 */
struct rmsg_link {
	struct list_head entry;
	struct hlist_node hash;
	union rmsg_sockaddr peer;
	u32 chan;
	struct rmsg_carrier *carrier;
	bool dialled;
	unsigned long retry_at;
	unsigned long checked_at;
};

/* An event of the module's endpoint, for rmsg_link_work(). */
struct rmsg_link_event {
	struct list_head entry;
	struct rmsg_cqe cqe;
};

/**
 * struct rmsg_links - the module's links
 * @ep: its endpoint, while link_port is set
 * @links: struct rmsg_link
 * @events: struct rmsg_link_event, under @events_lock
 * @events_lock: guards @events (taken under the endpoint's chan_lock)
 * @work: takes the events
 * @dead: the module is going: link_port may not change any more
 */
static struct rmsg_links {
	struct rmsg_endpoint *ep;
	struct list_head links;
	struct list_head events;
	spinlock_t events_lock;
	struct work_struct work;
	bool dead;
} rmsg_links;

static DEFINE_MUTEX(rmsg_links_lock);
/* The links by peer, for the connect path (rmsg_link_want()). */
static DEFINE_HASHTABLE(rmsg_links_by_peer, 8);

static unsigned int link_port;

static bool rmsg_link_same(const union rmsg_sockaddr *a,
			   const union rmsg_sockaddr *b)
{
	if (a->sa.sa_family != b->sa.sa_family)
		return false;
	if (a->sa.sa_family == AF_INET)
		return a->in.sin_addr.s_addr == b->in.sin_addr.s_addr;
	return ipv6_addr_equal(&a->in6.sin6_addr, &b->in6.sin6_addr) &&
	       a->in6.sin6_scope_id == b->in6.sin6_scope_id;
}


static struct rmsg_link *rmsg_link_find(const union rmsg_sockaddr *peer)
{
	struct rmsg_link *link;

	lockdep_assert_held(&rmsg_links_lock);
	hash_for_each_possible(rmsg_links_by_peer, link, hash,
			       jhash(peer, sizeof(*peer), 0))
		if (rmsg_link_same(&link->peer, peer))
			return link;
	return NULL;
}

/* A new entry for @peer, with no carrier yet; NULL without memory. */
static struct rmsg_link *rmsg_link_new(const union rmsg_sockaddr *peer,
				       bool dialled)
{
	struct rmsg_link *link = kzalloc(sizeof(*link), GFP_KERNEL);

	lockdep_assert_held(&rmsg_links_lock);
	if (!link)
		return NULL;
	link->peer = *peer;
	link->chan = U32_MAX;
	link->dialled = dialled;
	list_add_tail(&link->entry, &rmsg_links.links);
	hash_add(rmsg_links_by_peer, &link->hash, jhash(peer, sizeof(*peer), 0));
	return link;
}

/* @link goes: under the lock. */
static void rmsg_link_free(struct rmsg_link *link)
{
	lockdep_assert_held(&rmsg_links_lock);
	list_del(&link->entry);
	hash_del(&link->hash);
	rmsg_carrier_put(link->carrier);
	kfree(link);
}

static struct rmsg_link *rmsg_link_by_chan(u32 chan)
{
	struct rmsg_link *link;

	lockdep_assert_held(&rmsg_links_lock);
	list_for_each_entry(link, &rmsg_links.links, entry)
		if (link->chan == chan)
			return link;
	return NULL;
}

/* @addr's port, IPv4 or IPv6 (links' keys have no other family). */
static void rmsg_link_set_port(struct sockaddr_storage *addr, u16 port)
{
	if (addr->ss_family == AF_INET)
		((struct sockaddr_in *)addr)->sin_port = htons(port);
	else
		((struct sockaddr_in6 *)addr)->sin6_port = htons(port);
}

/*
 * Dial @link's carrier from the highest free port below 1024. Under
 * rmsg_links_lock, with the module's endpoint.
 */
static int rmsg_link_dial(struct rmsg_link *link)
{
	struct sockaddr_storage src = {};
	struct rmsg_dial d = {
		.net = &init_net,
		.block_size = RMSG_LINK_BLOCK,
	};
	struct rmsg_channel *ch;
	u16 sport;
	int ret = -EADDRINUSE;

	lockdep_assert_held(&rmsg_links_lock);
	memcpy(&d.dst, &link->peer, sizeof(link->peer));
	src.ss_family = link->peer.sa.sa_family;
	rmsg_link_set_port(&d.dst, link_port);
	for (sport = RMSG_LINK_SPORT_MAX;
	     sport >= RMSG_LINK_SPORT_MIN && ret == -EADDRINUSE; sport--) {
		ch = rmsg_chan_dial(rmsg_links.ep, &d);
		if (IS_ERR(ch))
			return PTR_ERR(ch);
		rmsg_link_set_port(&src, sport);
		link->chan = ch->id;
		ret = rmsg_chan_dial_start(ch, &src);
	}
	if (ret)
		link->chan = U32_MAX;
	return ret;
}

static void rmsg_link_hold(struct rmsg_link *link, u32 id);

/*
 * What @link's carrier is now, from the module endpoint's table rather
 * than from its events, one of which may have been lost (an event is
 * queued with memory that may not be there): a carrier that opened is
 * held, one that is gone (its id free, or another peer's) is forgotten,
 * and dialled again when the link is ours to dial. Under rmsg_links_lock.
 *
 * Return: the link is the peer's to dial and its carrier is gone: the
 * caller frees it, as the carrier's CLOSED event would have.
 */
static bool rmsg_link_check(struct rmsg_link *link)
{
	struct rmsg_endpoint *ep = rmsg_links.ep;
	union rmsg_sockaddr peer;
	struct rmsg_channel *ch;
	bool gone, open = false;

	lockdep_assert_held(&rmsg_links_lock);
	if (link->chan == U32_MAX)
		return !link->dialled;
	mutex_lock(&ep->chan_lock);
	ch = xa_load(&ep->channels, link->chan);
	gone = !ch || ch->state == RMSG_CHAN_DYING;
	/* Before it opened it has no peer address yet. */
	if (!gone && ch->conn_peer.sa.sa_family != AF_UNSPEC)
		gone = !rmsg_sockaddr_host(&peer, &ch->conn_peer.sa) ||
		       memcmp(&peer, &link->peer, sizeof(peer));
	if (!gone)
		open = ch->state == RMSG_CHAN_OPEN;
	mutex_unlock(&ep->chan_lock);
	if (gone) {
		link->chan = U32_MAX;
		rmsg_carrier_put(link->carrier);
		link->carrier = NULL;
		link->retry_at = jiffies;
	} else if (open && !link->carrier) {
		rmsg_link_hold(link, link->chan);
	}
	return gone && !link->dialled;
}

/*
 * Look at every link's carrier (rmsg_link_check()); dial every carrier
 * wanted and not dialled, unless it failed lately.
 */
static void rmsg_link_dial_wanted(void)
{
	struct rmsg_link *link, *next;

	lockdep_assert_held(&rmsg_links_lock);
	list_for_each_entry_safe(link, next, &rmsg_links.links, entry) {
		if (rmsg_link_check(link)) {
			rmsg_link_free(link);
			continue;
		}
		if (link->chan != U32_MAX || !link->dialled ||
		    time_before(jiffies, link->retry_at))
			continue;
		if (rmsg_link_dial(link))
			link->retry_at = jiffies +
					 msecs_to_jiffies(RMSG_LINK_RETRY_MS);
	}
}

/**
 * rmsg_link_want() - a channel connects to @addr: make sure a carrier is
 *	there, or on its way
 * @net: the channel's network namespace
 * @addr: the peer's address (its port is the program's, not used)
 *
 * Links are only in the initial namespace for now. The carrier is dialled
 * by rmsg_link_work(), whose memory is charged to no program; a dial that
 * failed is tried again no sooner than RMSG_LINK_RETRY_MS later.
 */
void rmsg_link_want(struct net *net, const struct sockaddr_storage *addr)
{
	union rmsg_sockaddr peer;
	struct rmsg_link *link;

	if (!READ_ONCE(link_port) || !net_eq(net, &init_net) ||
	    !rmsg_sockaddr_host(&peer, (const struct sockaddr *)addr))
		return;
	mutex_lock(&rmsg_links_lock);
	if (!rmsg_links.ep)
		goto out;
	link = rmsg_link_find(&peer);
	if (link) {
		/*
		 * A dial that failed is due again; a link with no carrier
		 * held is looked at again (rmsg_link_check()), at most once
		 * a RMSG_LINK_CHECK_MS.
		 */
		if ((link->chan == U32_MAX &&
		     !time_before(jiffies, link->retry_at)) ||
		    ((!link->carrier || !rmsg_carrier_up(link->carrier)) &&
		     !time_before(jiffies, link->checked_at))) {
			link->checked_at = jiffies +
				msecs_to_jiffies(RMSG_LINK_CHECK_MS);
			queue_work(rmsg_wq, &rmsg_links.work);
		}
		goto out;
	}
	if (rmsg_link_new(&peer, true))
		queue_work(rmsg_wq, &rmsg_links.work);
out:
	mutex_unlock(&rmsg_links_lock);
}

/* @link as RMSG_IOC_LINK_LIST shows it; under rmsg_links_lock. */
static void rmsg_link_info_fill(const struct rmsg_link *link,
				struct rmsg_link_info *info)
{
	struct rmsg_endpoint *ep = rmsg_links.ep;
	struct rmsg_carrier_stats stats;
	struct rmsg_channel *ch;

	memset(info, 0, sizeof(*info));
	memcpy(&info->peer, &link->peer, sizeof(link->peer));
	info->ep_id = ep->id;
	if (link->dialled)
		info->flags |= RMSG_LINK_INFO_F_DIALLED;
	if (link->chan == U32_MAX)
		return;
	mutex_lock(&ep->chan_lock);
	ch = xa_load(&ep->channels, link->chan);
	if (ch) {
		info->channel = ch->id;
		info->state = rmsg_ctl_chan_state(ch->state);
		rmsg_carrier_stats(ch, &stats);
		info->sent = stats.sent;
		info->received = stats.received;
		info->lcredit_sent = stats.lcredit_sent;
		info->lcredit_received = stats.lcredit_received;
		info->refused_sent = stats.refused_sent;
		info->refused_received = stats.refused_received;
		info->probes_left = stats.probes_left;
		info->dropped = stats.dropped;
		info->channels = stats.chans;
		info->channels_total = stats.chans_total;
		info->accepts_refused = stats.accepts_refused;
	}
	mutex_unlock(&ep->chan_lock);
}

/**
 * rmsg_link_list() - RMSG_IOC_LINK_LIST
 * @uarg: struct rmsg_link_list
 *
 * Return: 0, -EPERM without CAP_NET_ADMIN, -EINVAL, -EFAULT, -ENOMEM.
 */
long rmsg_link_list(void __user *uarg)
{
	struct rmsg_link_list req;
	struct rmsg_link_info *infos = NULL;
	struct rmsg_link *link;
	u32 n = 0, room, total = 0;
	long ret = 0;

	if (!capable(CAP_NET_ADMIN))
		return -EPERM;
	if (copy_from_user(&req, uarg, sizeof(req)))
		return -EFAULT;
	if (req.flags || req.resv || (req.capacity && !req.links))
		return -EINVAL;
	mutex_lock(&rmsg_links_lock);
	if (!rmsg_links.ep)
		goto out;
	list_for_each_entry(link, &rmsg_links.links, entry)
		total++;
	room = min(req.capacity, total);
	if (room) {
		infos = kvcalloc(room, sizeof(*infos), GFP_KERNEL);
		if (!infos) {
			ret = -ENOMEM;
			goto out;
		}
	}
	list_for_each_entry(link, &rmsg_links.links, entry) {
		if (n == room)
			break;
		rmsg_link_info_fill(link, &infos[n++]);
	}
out:
	mutex_unlock(&rmsg_links_lock);
	if (!ret && n &&
	    copy_to_user(u64_to_user_ptr(req.links), infos,
			 array_size(n, sizeof(*infos))))
		ret = -EFAULT;
	kvfree(infos);
	if (ret)
		return ret;
	req.filled = n;
	req.total = total;
	if (copy_to_user(uarg, &req, sizeof(req)))
		return -EFAULT;
	return 0;
}

/**
 * rmsg_link_carrier() - the link a channel to @addr can go on
 * @net: the channel's network namespace
 * @addr: the peer's address (its port is the program's, not looked at)
 *
 * For the connect path: found under rmsg_links_lock and the carrier's
 * lock, with no endpoint lock, so that the caller may go on to put its
 * channel on the carrier's device (rmsg_devices_lock and rdev->lock come
 * before any chan_lock, Documentation/design.rst "Lock order"). Links
 * are only in the initial namespace for now.
 *
 * Return: the carrier's link, referenced (rmsg_carrier_put()), when its
 * connection is up; else NULL.
 */
struct rmsg_carrier *rmsg_link_carrier(struct net *net,
				       const struct sockaddr_storage *addr)
{
	struct rmsg_carrier *c = NULL;
	union rmsg_sockaddr peer;
	struct rmsg_link *link;

	if (!net_eq(net, &init_net) ||
	    !rmsg_sockaddr_host(&peer, (const struct sockaddr *)addr))
		return NULL;
	mutex_lock(&rmsg_links_lock);
	link = rmsg_links.ep ? rmsg_link_find(&peer) : NULL;
	/*
	 * A carrier that opened and whose event rmsg_link_work() has not
	 * taken yet (or lost) is held here: a channel dialled right after
	 * the link opened goes on it.
	 */
	if (link && !link->carrier)
		rmsg_link_check(link);
	if (link && link->carrier && rmsg_carrier_up(link->carrier))
		c = rmsg_carrier_get(link->carrier);
	mutex_unlock(&rmsg_links_lock);
	return c;
}

/*
 * @link's carrier, channel @id of the module's endpoint, opened: hold its
 * link. Under rmsg_links_lock.
 */
static void rmsg_link_hold(struct rmsg_link *link, u32 id)
{
	struct rmsg_endpoint *ep = rmsg_links.ep;
	struct rmsg_channel *ch;

	lockdep_assert_held(&rmsg_links_lock);
	if (link->carrier)
		return;
	mutex_lock(&ep->chan_lock);
	ch = xa_load(&ep->channels, id);
	if (ch)
		link->carrier = rmsg_carrier_of(ch);
	mutex_unlock(&ep->chan_lock);
}

/* The peer's address of the module endpoint's channel @id. */
static bool rmsg_link_chan_peer(u32 id, union rmsg_sockaddr *peer)
{
	struct rmsg_endpoint *ep = rmsg_links.ep;
	struct rmsg_channel *ch;
	bool ok = false;

	mutex_lock(&ep->chan_lock);
	ch = xa_load(&ep->channels, id);
	if (ch)
		ok = rmsg_sockaddr_host(peer, &ch->conn_peer.sa);
	mutex_unlock(&ep->chan_lock);
	return ok;
}

static void rmsg_link_take(const struct rmsg_cqe *cqe)
{
	union rmsg_sockaddr peer;
	struct rmsg_link *link;

	switch (RMSG_CQE_KIND(cqe->flags)) {
	case RMSG_CQE_CONNECTED:
		link = rmsg_link_by_chan(cqe->channel);
		if (!link)
			return;
		if (!cqe->res) {
			rmsg_link_hold(link, cqe->channel);
			return;
		}
		/* The peer has no links, or is not there: later, maybe. */
		link->chan = U32_MAX;
		link->retry_at = jiffies + msecs_to_jiffies(RMSG_LINK_RETRY_MS);
		return;
	case RMSG_CQE_ACCEPTED:
		if (cqe->res || !rmsg_link_chan_peer(cqe->channel, &peer))
			return;
		link = rmsg_link_find(&peer) ?: rmsg_link_new(&peer, false);
		if (!link)
			return;
		/* Ours, if we dialled too, stays: both are carriers. */
		if (link->chan == U32_MAX) {
			link->chan = cqe->channel;
			link->dialled = false;
			rmsg_link_hold(link, cqe->channel);
		}
		return;
	case RMSG_CQE_CLOSED:
		link = rmsg_link_by_chan(cqe->channel);
		if (link)
			rmsg_link_free(link);
		return;
	}
}

static void rmsg_link_work(struct work_struct *work)
{
	struct rmsg_link_event *ev, *next;
	LIST_HEAD(events);

	spin_lock(&rmsg_links.events_lock);
	list_splice_init(&rmsg_links.events, &events);
	spin_unlock(&rmsg_links.events_lock);
	mutex_lock(&rmsg_links_lock);
	list_for_each_entry_safe(ev, next, &events, entry) {
		if (rmsg_links.ep)
			rmsg_link_take(&ev->cqe);
		kfree(ev);
	}
	if (rmsg_links.ep)
		rmsg_link_dial_wanted();
	mutex_unlock(&rmsg_links_lock);
}

/* The module endpoint's events: maybe under its chan_lock, so queued. */
static void rmsg_link_event(struct rmsg_endpoint *ep,
			    const struct rmsg_cqe *cqe)
{
	struct rmsg_link_event *ev = kmalloc(sizeof(*ev), GFP_KERNEL);

	/* A lost event: rmsg_link_check() finds out at the next want. */
	if (!ev)
		return;
	ev->cqe = *cqe;
	spin_lock(&rmsg_links.events_lock);
	list_add_tail(&ev->entry, &rmsg_links.events);
	spin_unlock(&rmsg_links.events_lock);
	queue_work(rmsg_wq, &rmsg_links.work);
}

static const struct rmsg_ep_kops rmsg_link_kops = {
	.event = rmsg_link_event,
};

/* Links off: every carrier ends, the endpoint goes. Under the lock. */
static void rmsg_links_stop(void)
{
	struct rmsg_link *link, *next;
	struct rmsg_endpoint *ep = rmsg_links.ep;

	lockdep_assert_held(&rmsg_links_lock);
	if (!ep)
		return;
	rmsg_links.ep = NULL;
	/* Its channels' ends post CLOSED events: taken with ep NULL. */
	rmsg_ep_destroy(ep);
	list_for_each_entry_safe(link, next, &rmsg_links.links, entry)
		rmsg_link_free(link);
}

/* Links on @port: the endpoint and its listener on every address. */
static int rmsg_links_start(u16 port)
{
	struct rmsg_listen_args la = {
		.net = &init_net,
		.block_size = RMSG_LINK_BLOCK,
	};
	struct rmsg_endpoint *ep;
	struct sockaddr_in *in = (struct sockaddr_in *)&la.addr;
	int ret;

	lockdep_assert_held(&rmsg_links_lock);
	ep = rmsg_ep_create_kernel(&rmsg_link_kops, NULL);
	if (IS_ERR(ep))
		return PTR_ERR(ep);
	in->sin_family = AF_INET;
	in->sin_addr.s_addr = htonl(INADDR_ANY);
	in->sin_port = htons(port);
	ret = rmsg_listen_start(ep, &la);
	if (ret) {
		rmsg_ep_destroy(ep);
		return ret;
	}
	rmsg_links.ep = ep;
	return 0;
}

static int link_port_set(const char *val, const struct kernel_param *kp)
{
	unsigned int port;
	int ret;

	ret = kstrtouint(val, 0, &port);
	if (ret)
		return ret;
	/* Only a kernel (or a privileged program) binds below 1024. */
	if (port >= 1024)
		return -EINVAL;
	mutex_lock(&rmsg_links_lock);
	if (rmsg_links.dead) {
		ret = -ENODEV;
	} else if (port != link_port) {
		rmsg_links_stop();
		WRITE_ONCE(link_port, port);
		if (port) {
			ret = rmsg_links_start(port);
			if (ret)
				WRITE_ONCE(link_port, 0);
		}
	}
	mutex_unlock(&rmsg_links_lock);
	return ret;
}

static const struct kernel_param_ops link_port_ops = {
	.set = link_port_set,
	.get = param_get_uint,
};
module_param_cb(link_port, &link_port_ops, &link_port, 0644);
MODULE_PARM_DESC(link_port,
		 "Port below 1024 of the module's own listener, for links between rmsg kernels in the initial network namespace (0: no links). Channels to a peer open on its link once it is up, and are repaired with the link's connection on the same device");

void rmsg_link_init_module(void)
{
	INIT_LIST_HEAD(&rmsg_links.links);
	INIT_LIST_HEAD(&rmsg_links.events);
	spin_lock_init(&rmsg_links.events_lock);
	INIT_WORK(&rmsg_links.work, rmsg_link_work);
}

/* Before the devices go: every carrier ends, link_port stays 0. */
void rmsg_link_exit_module(void)
{
	mutex_lock(&rmsg_links_lock);
	rmsg_links.dead = true;
	rmsg_links_stop();
	WRITE_ONCE(link_port, 0);
	mutex_unlock(&rmsg_links_lock);
	flush_work(&rmsg_links.work);
}
