// SPDX-License-Identifier: GPL-2.0
/*
 * rmsg: the rdma_cm side of channels: the event handler of every id
 * rmsg makes, listeners, connection requests (new channels and a
 * repair's RECONNECT), accepting, and the addresses of a connection.
 *
 * Layer (Documentation/design.rst, "Layers"): of the module's files it
 * calls only these, all below it: rmsg_carrier.c, rmsg_conn.c,
 * rmsg_data.c, rmsg_devices.c, rmsg_leases.c, rmsg_lifecycle.c and
 * rmsg_wr.c.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/dma-mapping.h>
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
#include "rmsg_carrier.h"
#include "rmsg_chan.h"
#include "rmsg_wr.h"
#include "rmsg_cm.h"
#include "rmsg_conn.h"
#include "rmsg_lifecycle.h"
#include "rmsg_trace.h"

unsigned int resolve_timeout_ms = 2000;
module_param(resolve_timeout_ms, uint, 0644);
MODULE_PARM_DESC(resolve_timeout_ms,
		 "Default address and route resolution timeout");

/*
 * A request is accepted (RMSG_IOC_ACCEPT, or at once by a listener without
 * RMSG_LISTEN_F_ACCEPT): the shadow of the peer's block is made, and the
 * REP goes. Not in the request's handler: that runs in ib_cm's only
 * thread, which every connection of the node waits for. rdma_accept() needs
 * the id's handler lock when called outside a handler; teardown waits for
 * this work before it destroys the id, and the state, checked under the
 * handler lock, says whether a teardown has begun.
 */
void rmsg_chan_do_accept(struct rmsg_channel *ch)
{
	struct rdma_conn_param param;
	struct rmsg_conn_data data;
	bool go;
	u32 len;
	int ret;

	rdma_lock_handler(ch->conn->cm_id);
	mutex_lock(&ch->ep->chan_lock);
	go = ch->state == RMSG_CHAN_ACCEPTING;
	mutex_unlock(&ch->ep->chan_lock);
	if (go)
		rmsg_chan_open_by(ch);
	ret = 0;
	if (go) {
		/* Sized by the peer: made only once the request is accepted. */
		ret = rmsg_data_shadow_create(ch);
		if (!ret) {
			len = rmsg_chan_hello(ch, RMSG_HELLO_ACCEPT, &data);
			rmsg_conn_param(ch, ch->conn->cm_id, &param, &data, len);
			ret = rdma_accept(ch->conn->cm_id, &param);
		}
	}
	rdma_unlock_handler(ch->conn->cm_id);
	if (ret)
		rmsg_chan_kill(ch, ret);
}

/*
 * Failover: the connecting side dials the address the channel was opened
 * with, or another of the peer's (rmsg_cm_peer_addrs()); each failed
 * attempt moves to the next, round-robin.
 */

static __be16 rmsg_sockaddr_port(const struct sockaddr_storage *ss)
{
	if (ss->ss_family == AF_INET)
		return ((const struct sockaddr_in *)ss)->sin_port;
	return ((const struct sockaddr_in6 *)ss)->sin6_port;
}

/* @a as a socket address with @port. */
static void rmsg_addr_sockaddr(const struct rmsg_addr *a, __be16 port,
			       struct sockaddr_storage *ss)
{
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)ss;
	struct sockaddr_in *sin = (struct sockaddr_in *)ss;

	memset(ss, 0, sizeof(*ss));
	if (a->family == RMSG_ADDR_IPV4) {
		sin->sin_family = AF_INET;
		sin->sin_port = port;
		memcpy(&sin->sin_addr, a->addr, sizeof(sin->sin_addr));
	} else {
		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = port;
		memcpy(&sin6->sin6_addr, a->addr, sizeof(sin6->sin6_addr));
	}
}

/* The same host address (the port aside)? */
static bool rmsg_sockaddr_same_ip(const struct sockaddr_storage *a,
				  const struct sockaddr_storage *b)
{
	if (a->ss_family != b->ss_family)
		return false;
	if (a->ss_family == AF_INET)
		return ((const struct sockaddr_in *)a)->sin_addr.s_addr ==
		       ((const struct sockaddr_in *)b)->sin_addr.s_addr;
	if (a->ss_family == AF_INET6)
		return ipv6_addr_equal(&((const struct sockaddr_in6 *)a)->sin6_addr,
				       &((const struct sockaddr_in6 *)b)->sin6_addr);
	return false;
}

/* Where the next attempt dials. Caller holds ep->chan_lock. */
void rmsg_dial_addr(struct rmsg_channel *ch,
			   struct sockaddr_storage *ss)
{
	u32 i = ch->repair.dial_idx;

	lockdep_assert_held(&ch->ep->chan_lock);
	if (!i || i > ch->repair.alt_addrs.count)
		*ss = ch->repair.peer_addr;
	else
		rmsg_addr_sockaddr(&ch->repair.alt_addrs.addr[i - 1],
				   rmsg_sockaddr_port(&ch->repair.peer_addr),
				   ss);
}

/**
 * rmsg_cm_settle() - wait until an id the channel let go of is the caller's
 * @ch: the channel
 * @id: an id it dropped (rmsg_repair_drop()), or its id when it is DYING
 *	(teardown: the connection's id is cleared if the rdma_cm took it
 *	back); NULL waits for the handlers only
 *
 * Handlers that start after the channel let go of @id ignore it; one that
 * found it the channel's (it may be making a QP) is waited for here, and
 * so is the end of @id's route query if one is under way. Until then the
 * caller must not touch @id: a route query that the device's removal ends
 * makes its handler give @id back to the rdma_cm (rmsg_cm_give_back()),
 * which destroys it at once.
 *
 * Return: @id, or NULL when the rdma_cm took it back.
 */
struct rdma_cm_id *rmsg_cm_settle(struct rmsg_channel *ch,
					 struct rdma_cm_id *id)
{
	bool routing = id && READ_ONCE(ch->route_id) == id;

	wait_event(ch->cm_wq, !READ_ONCE(ch->cm_busy) &&
			      (!id || READ_ONCE(ch->route_id) != id));
	mutex_lock(&ch->ep->chan_lock);
	if (id && ch->given_id == id) {
		ch->given_id = NULL;
		if (rmsg_chan_cm_id(ch) == id) /* teardown's */
			ch->conn->cm_id = NULL;
		id = NULL;
	}
	mutex_unlock(&ch->ep->chan_lock);
	if (routing)
		pr_debug("channel %u: waited for a route query's end: id %s\n",
			 ch->id, id ? "ours to destroy" : "given back");
	return id;
}

/*
 * Refuse a RECONNECT: @gone says the channel is not coming back, and the
 * dialling side ends it; otherwise it only fails that attempt.
 */
void rmsg_repair_reject(struct rdma_cm_id *id, bool gone)
{
	__le32 why = cpu_to_le32(RMSG_WIRE_REJ_GONE);

	if (gone)
		rdma_reject(id, &why, sizeof(why), IB_CM_REJ_CONSUMER_DEFINED);
	else
		rdma_reject(id, NULL, 0, IB_CM_REJ_NO_RESOURCES);
}

/* Reject and destroy an attempt the accepting side will not take. */
void rmsg_repair_refuse(struct rdma_cm_id *id, bool gone)
{
	rdma_lock_handler(id);
	rmsg_repair_reject(id, gone);
	rdma_unlock_handler(id);
	rdma_destroy_id(id);
}

/* Does a REJ say the channel is gone (rmsg_repair_reject())? */
static bool rmsg_repair_rejected_gone(const struct rdma_cm_event *event)
{
	const u8 *p = event->param.conn.private_data;

	return event->status == IB_CM_REJ_CONSUMER_DEFINED && p &&
	       event->param.conn.private_data_len >= RMSG_WIRE_REJ_SIZE &&
	       get_unaligned_le32(p) == RMSG_WIRE_REJ_GONE;
}

/* --- rdma_cm events ---------------------------------------------------- */

static int rmsg_cm_error(const struct rdma_cm_event *event, int fallback)
{
	return event->status < 0 ? event->status : fallback;
}

/*
 * The peer's addresses after its ACCEPT hello (connecting side): kept for
 * the repairs, less those equal to the address the channel was opened
 * with and those on no subnet of this node's RDMA interfaces (the peer
 * says where to dial: rmsg_addr_on_link()); the next repair starts at the
 * address this connection is on.
 */
static int rmsg_cm_peer_addrs(struct rmsg_channel *ch,
			      struct rdma_cm_id *cm_id,
			      const struct rdma_cm_event *event)
{
	const u8 *p = event->param.conn.private_data;
	u32 len = event->param.conn.private_data_len;
	struct sockaddr_storage *dst = &cm_id->route.addr.dst_addr;
	struct sockaddr_storage ss;
	struct rmsg_addrs addrs;
	u32 i, j, n = 0, idx = 0;
	int ret;

	addrs.count = 0;
	if (p && len > RMSG_WIRE_HELLO_SIZE) {
		ret = rmsg_addrs_decode(&addrs, p + RMSG_WIRE_HELLO_SIZE,
					len - RMSG_WIRE_HELLO_SIZE);
		if (ret)
			return ret;
	}
	for (i = 0; i < addrs.count; i++) {
		rmsg_addr_sockaddr(&addrs.addr[i],
				   rmsg_sockaddr_port(&ch->repair.peer_addr),
				   &ss);
		if (rmsg_sockaddr_same_ip(&ss, &ch->repair.peer_addr) ||
		    !rmsg_addr_on_link(ch->net, &ss))
			continue;
		for (j = 0; j < n; j++)
			if (!memcmp(&addrs.addr[j], &addrs.addr[i],
				    sizeof(addrs.addr[i])))
				break;
		if (j < n)
			continue;
		if (rmsg_sockaddr_same_ip(&ss, dst))
			idx = n + 1;
		addrs.addr[n++] = addrs.addr[i];
	}
	addrs.count = n;
	mutex_lock(&ch->ep->chan_lock);
	ch->repair.alt_addrs = addrs;
	ch->repair.dial_idx = idx;
	mutex_unlock(&ch->ep->chan_lock);
	return 0;
}

/* A repair's ACCEPT hello: the same peer, and where it wants us to go on. */
static int rmsg_cm_repair_accepted(struct rmsg_channel *ch,
				   const struct rdma_cm_event *event)
{
	struct rmsg_hello h;
	int ret;

	ret = rmsg_conn_hello_decode(&h, event, ch->ep);
	if (ret || h.kind != RMSG_HELLO_ACCEPT || h.channel != ch->peer.channel)
		return -EPROTO;
	if (h.incarnation != ch->peer.incarnation)
		return -ECONNRESET;	/* a stranger now: it restarted */
	ret = rmsg_cm_peer_addrs(ch, ch->conn->cm_id, event);
	if (ret)
		return ret;
	return rmsg_data_resume(ch, &h);
}

/*
 * Route queries and device removal: after a DEVICE_REMOVAL handler returns
 * 0, Linux 6.1's rdma_cm cancels the id's route query, if it was in one,
 * through the id's device, and a concurrent rdma_destroy_id() clears that
 * device (a NULL dereference in cma_cancel_operation(), seen in a soak of
 * 1000 device removals). So an id whose route query is under way is not
 * destroyed by rmsg until the query has ended (rmsg_cm_settle() waits),
 * and at a device's removal the rdma_cm is given back, to destroy itself
 * (the handler returns 1):
 *  - the channel's own attempt that has no QP yet (@owned): the channel
 *    forgets it, and its repair dials again;
 *  - an id the channel let go of whose route query the removal ends: it
 *    is marked @ch->given_id for the waiter, which no longer touches it.
 * Decided here, in one hold of ep->chan_lock (the caller's), so that the
 * repair cannot take an id between the decision and the forgetting.
 *
 * Return: 1 when the rdma_cm is to destroy @cm_id, else 0.
 */
static int rmsg_cm_give_back(struct rmsg_channel *ch,
			     struct rdma_cm_id *cm_id,
			     enum rdma_cm_event_type event, bool owned)
{
	bool routing = cm_id == ch->route_id;

	lockdep_assert_held(&ch->ep->chan_lock);
	if (routing && (event == RDMA_CM_EVENT_ROUTE_RESOLVED ||
			event == RDMA_CM_EVENT_ROUTE_ERROR ||
			event == RDMA_CM_EVENT_DEVICE_REMOVAL)) {
		ch->route_id = NULL;
		wake_up_all(&ch->cm_wq);
	}
	if (event != RDMA_CM_EVENT_DEVICE_REMOVAL)
		return 0;
	if (owned && ch->active && !cm_id->qp && !ch->conn->qp)
		ch->conn->cm_id = NULL;
	else if (!owned && routing)
		ch->given_id = cm_id;
	else
		return 0;
	pr_debug("channel %u: %s id given back at device removal%s\n", ch->id,
		 owned ? "its attempt's" : "a dropped",
		 routing ? ", its route query ended" : "");
	return 1;
}

static void rmsg_sockaddr_copy(union rmsg_sockaddr *to,
			       const struct sockaddr_storage *from)
{
	memset(to, 0, sizeof(*to));
	if (from->ss_family == AF_INET)
		to->in = *(const struct sockaddr_in *)from;
	else if (from->ss_family == AF_INET6)
		to->in6 = *(const struct sockaddr_in6 *)from;
}

/* The newest connection's addresses, for RMSG_IOC_CHAN_ADDR. */
static void rmsg_chan_note_addrs(struct rmsg_channel *ch,
				 const struct rdma_cm_id *id)
{
	mutex_lock(&ch->ep->chan_lock);
	rmsg_sockaddr_copy(&ch->conn_local, &id->route.addr.src_addr);
	rmsg_sockaddr_copy(&ch->conn_peer, &id->route.addr.dst_addr);
	mutex_unlock(&ch->ep->chan_lock);
}

static int rmsg_cm_owned_event(struct rmsg_channel *ch,
			       struct rdma_cm_id *cm_id,
			       const struct rdma_cm_event *event, bool repair)
{
	struct rdma_conn_param param;
	struct rmsg_conn_data data;
	u32 len;
	int ret;

	switch (event->event) {
	case RDMA_CM_EVENT_ADDR_RESOLVED:
		ret = rdma_resolve_route(cm_id, resolve_timeout_ms);
		if (ret) {
			rmsg_chan_fault(ch, ret);
			break;
		}
		/* Its end is this id's next event: we hold its handler. */
		mutex_lock(&ch->ep->chan_lock);
		ch->route_id = cm_id;
		mutex_unlock(&ch->ep->chan_lock);
		break;
	case RDMA_CM_EVENT_ROUTE_RESOLVED:
		/* A REQ would fail, and harm: rmsg_cm_id_retire(). */
		if (rmsg_cm_id_port_down(cm_id))
			ret = -ENETDOWN;
		else if (repair)
			ret = rmsg_chan_connection(ch, cm_id);
		else
			ret = rmsg_chan_create_qp(ch);
		if (!ret) {
			len = rmsg_chan_hello(ch, repair ?
					      RMSG_HELLO_RECONNECT :
					      RMSG_HELLO_CONNECT, &data);
			rmsg_conn_param(ch, cm_id, &param, &data, len);
			ret = rdma_connect_locked(cm_id, &param);
		}
		if (ret)
			rmsg_chan_fault(ch, ret);
		break;
	case RDMA_CM_EVENT_ESTABLISHED:
		if (ch->active && repair) {
			ret = rmsg_cm_repair_accepted(ch, event);
			if (ret) {
				rmsg_chan_kill(ch, ret);
				break;
			}
		} else if (ch->active) {
			ret = rmsg_conn_hello_decode(&ch->peer, event,
						     ch->ep);
			/* Leases both ways or none (rmsg_lease_setup()). */
			if (!ret)
				ret = rmsg_lease_peer(ch);
			if (!ret && ch->peer.kind != RMSG_HELLO_ACCEPT)
				ret = -EPROTO;
			/*
			 * The shadow, sized by the peer, is made by the
			 * channel's work before it opens, not here on ib_cm's
			 * one thread that the node's connections share.
			 */
			if (!ret)
				ret = rmsg_cm_peer_addrs(ch, cm_id, event);
			if (ret) {
				rmsg_chan_kill(ch, ret);
				break;
			}
		}
		set_bit(RMSG_CHAN_CONNECTED, &ch->flags);
		rmsg_chan_note_addrs(ch, cm_id);
		/* Its QP sends: the channels on its link may. */
		if (rmsg_chan_is_carrier(ch))
			rmsg_carrier_established(ch);
		/*
		 * The send queue runs REG_MR before the READY that follows. A
		 * repair keeps the block's registration, unless the channel
		 * came to a device again.
		 */
		ret = test_bit(RMSG_CHAN_REGISTERED, &ch->flags) ? 0 :
		      rmsg_block_register(ch);
		/* On a leased channel the lease messages follow the READY. */
		if (!ret)
			ret = rmsg_ctrl_send(ch, RMSG_CTRL_READY_BUF,
					     RMSG_CTRL_READY,
					     rmsg_lease_connected(ch, true));
		if (ret)
			rmsg_chan_fault(ch, -ECONNRESET);
		else if (repair)
			queue_work(rmsg_wq, &ch->work);
		break;
	case RDMA_CM_EVENT_REJECTED:
		/* A repair the peer refuses: it no longer knows the channel. */
		if (repair && rmsg_repair_rejected_gone(event))
			rmsg_chan_kill(ch, -ECONNRESET);
		else
			rmsg_chan_fault(ch, -ECONNREFUSED);
		break;
	case RDMA_CM_EVENT_ADDR_ERROR:
	case RDMA_CM_EVENT_ROUTE_ERROR:
	case RDMA_CM_EVENT_UNREACHABLE:
		rmsg_chan_fault(ch, rmsg_cm_error(event, -EHOSTUNREACH));
		break;
	case RDMA_CM_EVENT_CONNECT_ERROR:
		rmsg_chan_fault(ch, rmsg_cm_error(event, -ECONNABORTED));
		break;
	case RDMA_CM_EVENT_DISCONNECTED:
		if (test_bit(RMSG_CHAN_PEER_CLOSED, &ch->flags))
			rmsg_chan_kill(ch, 0);
		else
			rmsg_chan_fault(ch, -ECONNRESET);
		break;
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
		/*
		 * rmsg_ib_remove() moved the channels on the device already;
		 * this is an attempt whose id was on it, with a QP (else
		 * rmsg_cm_give_back() took it). Its repair drops the id,
		 * which the rdma_cm waits for.
		 */
		rmsg_chan_fault(ch, -ENODEV);
		break;
	default:
		break;
	}
	/* Channels destroy their cm_id themselves, in teardown. */
	return 0;
}

static int rmsg_cm_channel_event(struct rmsg_channel *ch,
				 struct rdma_cm_id *cm_id,
				 const struct rdma_cm_event *event)
{
	bool owned, repair;
	int ret;

	/*
	 * An id the channel let go of, or an attempt not adopted yet, says
	 * nothing about the connection the channel is on.
	 */
	mutex_lock(&ch->ep->chan_lock);
	owned = cm_id == rmsg_chan_cm_id(ch) && ch->state != RMSG_CHAN_DYING;
	repair = ch->state == RMSG_CHAN_RECOVERING;
	ret = rmsg_cm_give_back(ch, cm_id, event->event, owned);
	if (owned)
		ch->cm_busy++;
	mutex_unlock(&ch->ep->chan_lock);
	if (!owned)
		return ret;

	if (ret)	/* the device under the attempt goes: dial again */
		rmsg_chan_fault(ch, -ENODEV);
	else
		ret = rmsg_cm_owned_event(ch, cm_id, event, repair);

	mutex_lock(&ch->ep->chan_lock);
	if (!--ch->cm_busy)
		wake_up_all(&ch->cm_wq);
	mutex_unlock(&ch->ep->chan_lock);
	return ret;
}

/**
 * rmsg_cm_handler() - the rdma_cm handler of a channel's ids
 * @cm_id: an id of a channel: made by RMSG_IOC_CONNECT or a repair's dial,
 *	or born of a listener's request (whose handler hands its events here)
 * @event: what happened to it
 *
 * Runs in process context, one event at a time per id, charged to the
 * channel's endpoint.
 *
 * Return: non-zero to have the rdma_cm destroy @cm_id.
 */
int rmsg_cm_handler(struct rdma_cm_id *cm_id, struct rdma_cm_event *event)
{
	struct rmsg_channel *ch = container_of(cm_id->context,
					       struct rmsg_channel, cm);
	struct mem_cgroup *old;
	int ret;

	old = rmsg_ep_charge_begin(ch->ep);
	ret = rmsg_cm_channel_event(ch, cm_id, event);
	rmsg_ep_charge_end(old);
	return ret;
}
