// SPDX-License-Identifier: GPL-2.0
/*
 * rmsg: listeners: RMSG_IOC_LISTEN, the rdma_cm handler of every id a
 * listener makes, and the connection requests it hears (a new channel, or
 * a repair's RECONNECT for one it has); and the registry of programs'
 * listeners by port, in which a channel that opens on a link finds its
 * listener (rmsg_listen_find()).
 *
 * Layer (Documentation/design.rst, "Layers"): of the module's files it
 * calls only these, all below it: rmsg_channel.c, rmsg_cm.c, rmsg_conn.c,
 * rmsg_lifecycle.c and rmsg_wr.c.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/dma-mapping.h>
#include <linux/hashtable.h>
#include <linux/kref.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/random.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>
#include <net/ipv6.h>
#include <rdma/ib_cm.h>
#include <rdma/rdma_cm.h>

#include "rmsg.h"
#include "rmsg_compat.h"
#include "rmsg_chan.h"
#include "rmsg_cm.h"
#include "rmsg_conn.h"
#include "rmsg_lifecycle.h"
#include "rmsg_trace.h"

/*
 * An accepting side mirrors the connecting peer's block in memory of its
 * own (the shadow, up to RMSG_VB_MAX_BLOCK): a stranger who reaches a
 * listener must not size that beyond what the listener allows.
 */
static unsigned int peer_block_max = 1 << 20;
module_param(peer_block_max, uint, 0644);
MODULE_PARM_DESC(peer_block_max,
		 "Largest receive block a connecting peer may announce to a listener that sets no limit of its own, in bytes (default 1 MiB; at least the listener's own block)");

/*
 * Programs' listeners by port (struct rmsg_listener.port_node): a HELLO
 * CONNECT on a link names a service port, and the carrier's network
 * namespace and local address pick the listener. The module's own
 * listener (links) is not in it: nothing opens on a link to it.
 *
 * rmsg_listeners_lock guards the table and is taken with no endpoint
 * lock held; who holds it may take a listener's endpoint's chan_lock
 * (rmsg_listeners_lock -> ep->chan_lock -> ep->lock). A listener found
 * stays, with its endpoint, while the lock is held: rmsg_chan_unlisten()
 * takes it out under the lock before it is freed, and an endpoint's
 * release stops listening before it frees anything.
 */
static DEFINE_MUTEX(rmsg_listeners_lock);
static DEFINE_HASHTABLE(rmsg_listeners_by_port, 8);

/* The address family of a wildcard address @ss, else 0. */
static sa_family_t rmsg_wildcard_family(const struct sockaddr_storage *ss)
{
	const struct sockaddr_in *sin = (const struct sockaddr_in *)ss;
	const struct sockaddr_in6 *sin6 = (const struct sockaddr_in6 *)ss;

	if (ss->ss_family == AF_INET && sin->sin_addr.s_addr == INADDR_ANY)
		return AF_INET;
	if (ss->ss_family == AF_INET6 && ipv6_addr_any(&sin6->sin6_addr))
		return AF_INET6;
	return 0;
}

/*
 * The listener hears a RECONNECT: hand it to the channel it names, if that
 * channel is this peer's and the attempt is newer than any seen. Called in
 * the listener's handler for the new @cm_id; a non-zero return has the
 * rdma_cm destroy it.
 */
static int rmsg_cm_repair_request(struct rmsg_endpoint *ep,
				  struct rdma_cm_id *cm_id,
				  const struct rmsg_hello *h)
{
	enum rmsg_repair_verdict verdict = RMSG_REPAIR_INVALID;
	struct rmsg_channel *ch;
	int ret = -ECONNRESET;

	mutex_lock(&ep->chan_lock);
	ch = xa_load(&ep->channels, h->peer_channel);
	if (ch && !ch->active && ch->retain.on &&
	    (ch->state == RMSG_CHAN_OPEN || ch->state == RMSG_CHAN_RECOVERING))
		verdict = rmsg_repair_match(ch->peer.incarnation,
					    ch->peer.channel, ch->resil.epoch,
					    h);
	if (verdict == RMSG_REPAIR_ACCEPT && ch->repair.id &&
	    ch->repair.stale_id)
		verdict = RMSG_REPAIR_STALE;	/* come again later */
	if (verdict == RMSG_REPAIR_ACCEPT) {
		/*
		 * An attempt taken before and not finished is one the peer
		 * gave up (it may never have heard our answer, on a path
		 * that fails one way): drop it now, take this one.
		 */
		if (ch->state == RMSG_CHAN_RECOVERING && rmsg_chan_cm_id(ch))
			set_bit(RMSG_CHAN_ATTEMPT_FAILED, &ch->flags);
		/* The peer saw the fault first. */
		if (ch->state == RMSG_CHAN_OPEN)
			rmsg_chan_fault_locked(ch, -ECONNRESET);
		if (ch->repair.id)
			ch->repair.stale_id = ch->repair.id;
		ch->repair.id = cm_id;
		ch->repair.hello = *h;
		ch->resil.epoch = h->epoch;
		cm_id->context = &ch->cm;
		queue_work(rmsg_wq, &ch->work);
		ret = 0;
	}
	mutex_unlock(&ep->chan_lock);
	/*
	 * A stale attempt, or one that must come again later, is refused as
	 * a busy peer would (the dialling side tries again); anything else
	 * tells the peer the channel is not coming back (it gives up at
	 * once).
	 */
	if (ret)
		rmsg_repair_reject(cm_id, verdict != RMSG_REPAIR_STALE);
	return ret;
}

/* The port a request came from (65535 when it has none). */
static u16 rmsg_cm_peer_port(const struct rdma_cm_id *cm_id)
{
	const struct sockaddr *sa = (const void *)&cm_id->route.addr.dst_addr;

	if (sa->sa_family == AF_INET)
		return ntohs(((const struct sockaddr_in *)sa)->sin_port);
	if (sa->sa_family == AF_INET6)
		return ntohs(((const struct sockaddr_in6 *)sa)->sin6_port);
	return U16_MAX;
}

/* A connection request on the listener; @cm_id is the new connection's. */
static int rmsg_cm_request(struct rmsg_listener *l, struct rdma_cm_id *cm_id,
			   const struct rdma_cm_event *event)
{
	struct rmsg_endpoint *ep = l->ep;
	struct rmsg_channel *ch;
	int ret;

	ch = rmsg_chan_zalloc();
	if (!ch)
		return -ENOMEM;
	ret = rmsg_conn_hello_decode(&ch->peer, event, ep);
	if (!ret && ch->peer.kind == RMSG_HELLO_RECONNECT) {
		ret = rmsg_cm_repair_request(ep, cm_id, &ch->peer);
		rmsg_chan_alloc_undo(ch);
		return ret;
	}
	if (!ret && ch->peer.kind != RMSG_HELLO_CONNECT)
		ret = -EPROTO;
	/*
	 * The module's own listener (links) hears only other kernels: the
	 * rdma_cm binds a port below 1024 for no program without
	 * CAP_NET_BIND_SERVICE.
	 */
	if (!ret && rmsg_ep_is_module(ep) && rmsg_cm_peer_port(cm_id) >= 1024)
		ret = -EACCES;
	if (!ret && ch->peer.block_size > l->peer_block_max)
		ret = -EMSGSIZE;
	if (!ret) {
		ch->conn = rmsg_conn_new(cm_id);
		if (!ch->conn)
			ret = -ENOMEM;
	}
	if (ret) {
		rmsg_chan_alloc_undo(ch);
		return ret;
	}
	rmsg_chan_init(ch, ep, l->manual ? RMSG_CHAN_REQUESTED :
					   RMSG_CHAN_ACCEPTING,
		       l->user_data, l->block_size);
	ch->opts = l->opts;
	ch->repair.adv_family = rmsg_wildcard_family(&l->addr);

	/*
	 * Published, the program may close it at once (its id is easy to
	 * guess): the end waits until this handler is done with it.
	 */
	ch->setting_up = true;
	ret = rmsg_chan_publish(ch);
	if (ret) {
		rmsg_chan_alloc_undo(ch);
		return ret;
	}
	cm_id->context = &ch->cm;

	ret = rmsg_chan_create_qp(ch);
	if (!ret && l->manual) {
		/* Its teardown rejects it if nobody accepts it first. */
		ch->requested = true;
		rmsg_chan_setup_done(ch);
		rmsg_chan_event(ch, RMSG_CQE_REQUEST, 0);
		return 0;
	}
	if (!ret) {
		/* The channel's work accepts it, once this handler is done. */
		set_bit(RMSG_CHAN_ACCEPT_DUE, &ch->flags);
		rmsg_chan_setup_done(ch);
		queue_work(rmsg_wq, &ch->work);
		return 0;
	}
	/* Returning an error makes the rdma_cm destroy cm_id. */
	rmsg_chan_release_verbs(ch, true);
	mutex_lock(&ep->chan_lock);
	xa_erase(&ep->channels, ch->id);
	mutex_unlock(&ep->chan_lock);
	/*
	 * Not freed here: rmsg_chan_free() waits for the channel's work,
	 * whose accept step takes a cm handler lock, and this handler holds
	 * two (lockdep's report, Documentation/design.rst "Lock order").
	 * Still setting up, the work never touches cm_id, which the rdma_cm
	 * destroys on return; the endpoint's end waits for nr_channels.
	 */
	INIT_WORK(&ch->teardown, rmsg_chan_free_work);
	queue_work(rmsg_teardown_wq, &ch->teardown);
	return ret;
}

/* Take and release the registry's lock, around rmsg_listen_find(). */
void rmsg_listen_registry_lock(void)
{
	mutex_lock(&rmsg_listeners_lock);
}

void rmsg_listen_registry_unlock(void)
{
	mutex_unlock(&rmsg_listeners_lock);
}

/**
 * rmsg_listen_find() - the listener a channel opening on a link is for
 * @net: the carrier's network namespace
 * @port: the service port its HELLO CONNECT names
 * @local: the carrier's local address (its port is not looked at)
 *
 * A listener bound to one address takes only a carrier whose local
 * address is that one; one bound to a wildcard address takes any of its
 * family (an IPv6 one IPv4 too, as the rdma_cm listens). One bound to the
 * very address comes first. Under rmsg_listen_registry_lock(), which
 * keeps the listener and its endpoint alive until it is released; whether
 * the endpoint still takes channels (ep->listener, ep->dying) is for the
 * caller to check under its chan_lock.
 *
 * Return: the listener, or NULL.
 */
struct rmsg_listener *rmsg_listen_find(const struct net *net, u16 port,
				       const struct sockaddr *local)
{
	struct rmsg_listener *l, *any = NULL;
	union rmsg_sockaddr host;

	lockdep_assert_held(&rmsg_listeners_lock);
	if (!rmsg_sockaddr_host(&host, local))
		return NULL;
	hash_for_each_possible(rmsg_listeners_by_port, l, port_node, port) {
		if (l->port != port || !net_eq(l->net, net))
			continue;
		if (!l->any_family) {
			if (!memcmp(&l->bound, &host, sizeof(host)))
				return l;
		} else if (!any && (l->any_family == local->sa_family ||
				    l->any_family == AF_INET6)) {
			any = l;
		}
	}
	return any;
}

/*
 * A program's listener, bound to @addr: into the registry. No endpoint
 * lock held.
 */
static void rmsg_listen_register(struct rmsg_listener *l,
				 const struct sockaddr_storage *addr)
{
	const struct sockaddr *sa = (const struct sockaddr *)addr;

	if (rmsg_ep_is_module(l->ep) || !rmsg_sockaddr_host(&l->bound, sa))
		return;
	l->port = sa->sa_family == AF_INET ?
		  ntohs(((const struct sockaddr_in *)sa)->sin_port) :
		  ntohs(((const struct sockaddr_in6 *)sa)->sin6_port);
	l->any_family = rmsg_wildcard_family(addr);
	mutex_lock(&rmsg_listeners_lock);
	hash_add(rmsg_listeners_by_port, &l->port_node, l->port);
	mutex_unlock(&rmsg_listeners_lock);
}

/*
 * Out of the registry, if it is there. No endpoint lock held; the module's
 * listener is never there, and goes under rmsg_links_lock, which this
 * lock does not nest in.
 */
static void rmsg_listen_unregister(struct rmsg_listener *l)
{
	if (rmsg_ep_is_module(l->ep))
		return;
	mutex_lock(&rmsg_listeners_lock);
	hash_del(&l->port_node);
	mutex_unlock(&rmsg_listeners_lock);
}

/* How often a deaf listener tries to listen again (a device's return). */
#define RMSG_REBIND_MS		100

/*
 * The device under a listener goes away. The rdma_cm does not finish
 * removing it while the id lives, so the id is handed to the rdma_cm to
 * destroy (a non-zero return) unless rmsg_chan_unlisten() already took it
 * and is destroying it itself (it waits for this handler). The listener
 * stays, deaf, and tries to listen again on its address until a device
 * has it: the peers of its channels dial back there. (A listener on a
 * wildcard address never hears of this: the rdma_cm keeps it listening on
 * every device, those to come included.)
 */
static int rmsg_cm_listener_removed(struct rmsg_listener *l)
{
	struct rmsg_endpoint *ep = l->ep;
	int ret = 0;

	mutex_lock(&ep->chan_lock);
	if (ep->listener == l && l->cm_id) {
		l->cm_id = NULL;
		ret = 1;
		queue_delayed_work(rmsg_wq, &l->rebind,
				   msecs_to_jiffies(RMSG_REBIND_MS));
	}
	mutex_unlock(&ep->chan_lock);
	return ret;
}

/*
 * The rdma_cm handler of a listener's id and of every id born of its
 * requests: the request itself and the listener's own events here, the
 * events of an id that became a channel's (its context is then the
 * channel's) in rmsg_cm_handler().
 */
static int rmsg_listen_handler(struct rdma_cm_id *cm_id,
			       struct rdma_cm_event *event)
{
	struct rmsg_cm_ctx *ctx = cm_id->context;
	struct rmsg_listener *l;
	struct mem_cgroup *old;
	int ret = 0;

	if (event->event != RDMA_CM_EVENT_CONNECT_REQUEST &&
	    ctx->kind == RMSG_CM_CHANNEL)
		return rmsg_cm_handler(cm_id, event);
	l = container_of(ctx, struct rmsg_listener, cm);
	old = rmsg_ep_charge_begin(l->ep);
	if (event->event == RDMA_CM_EVENT_CONNECT_REQUEST) {
		ret = rmsg_cm_request(l, cm_id, event);
		/*
		 * ib_cm answers a request whose handler failed with -ENOMEM
		 * with nothing at all, for the peer to try again: at a
		 * memory cgroup's limit it would try for a minute and more.
		 * Any other error is a reject, which the peer hears at once.
		 */
		if (ret == -ENOMEM)
			ret = -ECONNREFUSED;
	} else if (event->event == RDMA_CM_EVENT_DEVICE_REMOVAL) {
		ret = rmsg_cm_listener_removed(l);
	}
	rmsg_ep_charge_end(old);
	return ret;
}

/* A new listening id on the listener's address. */
static struct rdma_cm_id *rmsg_listen_id(struct rmsg_listener *l,
					 struct sockaddr *addr)
{
	struct rdma_cm_id *cm_id;
	int ret;

	cm_id = rdma_create_id(l->net, rmsg_listen_handler, &l->cm, RDMA_PS_TCP,
			       IB_QPT_RC);
	if (IS_ERR(cm_id))
		return cm_id;
	ret = rdma_bind_addr(cm_id, addr);
	/*
	 * A specific address with no RDMA device behind it (127.0.0.1, an
	 * address of a plain Ethernet port) binds, but no request could
	 * ever reach it.
	 */
	if (!ret && !cm_id->device && !rmsg_wildcard_family(
			(struct sockaddr_storage *)&cm_id->route.addr.src_addr))
		ret = -EADDRNOTAVAIL;
	/*
	 * The bound address (the port the rdma_cm chose for port 0), kept
	 * for listening again there. Before rdma_listen(): the request
	 * handler reads it, and no request comes before.
	 */
	if (!ret) {
		memcpy(&l->addr, &cm_id->route.addr.src_addr, sizeof(l->addr));
		ret = rdma_listen(cm_id, l->backlog);
	}
	if (ret) {
		rdma_destroy_id(cm_id);
		return ERR_PTR(ret);
	}
	return cm_id;
}

/* A deaf listener tries to listen again; rmsg_chan_unlisten() cancels. */
static void rmsg_listener_rebind(struct work_struct *work)
{
	struct rmsg_listener *l = container_of(to_delayed_work(work),
					       struct rmsg_listener, rebind);
	struct rmsg_endpoint *ep = l->ep;
	struct rdma_cm_id *cm_id;

	cm_id = rmsg_listen_id(l, (struct sockaddr *)&l->addr);
	mutex_lock(&ep->chan_lock);
	if (!IS_ERR(cm_id) && ep->listener == l && !l->cm_id) {
		l->cm_id = cm_id;
		cm_id = NULL;
	} else if (IS_ERR(cm_id) && ep->listener == l && !l->cm_id) {
		queue_delayed_work(rmsg_wq, &l->rebind,
				   msecs_to_jiffies(RMSG_REBIND_MS));
	}
	mutex_unlock(&ep->chan_lock);
	if (!IS_ERR_OR_NULL(cm_id))
		rdma_destroy_id(cm_id);
}

/**
 * rmsg_chan_listen() - RMSG_IOC_LISTEN: accept channels on an address
 * @ep: the endpoint, with rings
 * @uarg: struct rmsg_listen
 *
 * Return: 0, or -EINVAL, -EFAULT, -EAFNOSUPPORT, -EBUSY (already
 * listening), -EADDRINUSE, -EADDRNOTAVAIL, -ENOMEM.
 */
long rmsg_chan_listen(struct rmsg_endpoint *ep, void __user *uarg)
{
	struct rmsg_listen_args la;
	struct rmsg_listen req;
	u32 len;
	int ret;

	if (copy_from_user(&req, uarg, sizeof(req)))
		return -EFAULT;
	if ((req.flags & ~RMSG_LISTEN_F_ACCEPT) || req.resv32)
		return -EINVAL;
	ret = rmsg_opts_copy(&la.opts, req.opts);
	if (ret)
		return ret;
	ret = rmsg_chan_args(ep, &req.block_size, &la.addr, req.addr,
			     req.addr_len);
	if (ret)
		return ret;
	if (req.peer_block_max && rmsg_vb_check_block(req.peer_block_max))
		return -EINVAL;
	la.net = current->nsproxy->net_ns;
	la.manual = req.flags & RMSG_LISTEN_F_ACCEPT;
	la.user_data = req.user_data;
	la.block_size = req.block_size;
	la.peer_block_max = req.peer_block_max;
	la.backlog = req.backlog;
	ret = rmsg_listen_start(ep, &la);
	if (ret)
		return ret;

	/* Tell the program which port it got when it asked for any. */
	len = min_t(u32, req.addr_len, sizeof(la.addr));
	if (copy_to_user(u64_to_user_ptr(req.addr), &la.addr, len)) {
		rmsg_chan_unlisten(ep);
		return -EFAULT;
	}
	return 0;
}

/**
 * rmsg_listen_start() - make @ep's listener
 * @ep: the endpoint, with no listener
 * @la: what to listen with (checked by the caller); @la->addr is set to
 *	the address bound (with the port the rdma_cm chose for port 0)
 *
 * Return: 0, -EBUSY (the endpoint listens already, or is being released),
 * -ENOMEM, or what the rdma_cm refuses (-EADDRINUSE, -EADDRNOTAVAIL).
 */
int rmsg_listen_start(struct rmsg_endpoint *ep, struct rmsg_listen_args *la)
{
	struct rmsg_listener *l;
	struct rdma_cm_id *cm_id;
	int ret;

	l = kzalloc(sizeof(*l), RMSG_GFP_CHARGED);
	if (!l)
		return -ENOMEM;
	l->cm.kind = RMSG_CM_LISTENER;
	l->ep = ep;
	l->manual = la->manual;
	l->user_data = la->user_data;
	l->block_size = la->block_size;
	l->opts = la->opts;
	l->peer_block_max = la->peer_block_max ?:
			    max(READ_ONCE(peer_block_max), la->block_size);
	/*
	 * As ucma's max_backlog: iWARP's listen allocates per entry, and the
	 * program's u32 must not become a negative int.
	 */
	l->backlog = clamp_t(u32, la->backlog ?: 128, 1,
			     RMSG_LISTEN_BACKLOG_MAX);
	l->net = get_net(la->net);
	INIT_DELAYED_WORK(&l->rebind, rmsg_listener_rebind);
	INIT_HLIST_NODE(&l->port_node);

	mutex_lock(&ep->chan_lock);
	if (ep->listener || ep->dying) {
		mutex_unlock(&ep->chan_lock);
		put_net(l->net);
		kfree(l);
		return -EBUSY;
	}
	ep->listener = l;
	mutex_unlock(&ep->chan_lock);

	cm_id = rmsg_listen_id(l, (struct sockaddr *)&la->addr);
	if (IS_ERR(cm_id)) {
		ret = PTR_ERR(cm_id);
		goto fail;
	}
	/*
	 * Copied before the id is published: once it is, a device's removal
	 * may destroy it (rmsg_cm_listener_removed()) and a rebind rewrite
	 * l->addr.
	 */
	memcpy(&la->addr, &l->addr, sizeof(la->addr));
	mutex_lock(&ep->chan_lock);
	l->cm_id = cm_id;
	mutex_unlock(&ep->chan_lock);
	/* From the copy: a rebind may rewrite l->addr. */
	rmsg_listen_register(l, &la->addr);
	return 0;
fail:
	mutex_lock(&ep->chan_lock);
	ep->listener = NULL;
	mutex_unlock(&ep->chan_lock);
	put_net(l->net);
	kfree(l);
	return ret;
}

/* Stop listening; waits for a connection request being handled. */
void rmsg_chan_unlisten(struct rmsg_endpoint *ep)
{
	struct rmsg_listener *l;
	struct rdma_cm_id *cm_id;

	mutex_lock(&ep->chan_lock);
	l = ep->listener;
	ep->listener = NULL;
	/* NULL when the rdma_cm destroyed it on device removal. */
	cm_id = l ? l->cm_id : NULL;
	mutex_unlock(&ep->chan_lock);
	if (!l)
		return;
	/* No channel opens on a link to it from here on. */
	rmsg_listen_unregister(l);
	if (cm_id)
		rdma_destroy_id(cm_id);
	/* It sees the listener gone, and destroys any id it made itself. */
	cancel_delayed_work_sync(&l->rebind);
	put_net(l->net);
	kfree(l);
}
