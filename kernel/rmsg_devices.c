// SPDX-License-Identifier: GPL-2.0
/*
 * rmsg: the RDMA devices rmsg can use, as they come and go.
 *
 * rmsg registers an ib_client, so the RDMA core calls rmsg_ib_add() for every
 * device present at load time and added later, and rmsg_ib_remove() before a
 * device goes away (unregistered, hot-removed, or its driver reset).
 *
 * Lifetime: a struct rmsg_device lives from rmsg_ib_add() to the end of
 * rmsg_ib_remove(). rmsg_ib_remove() unlinks it under rmsg_devices_lock, so
 * anyone who finds a device on the list while holding the lock may call into
 * its ib_device: the RDMA core does not finish unregistering it until the
 * remove callback has returned.
 *
 * Layer (Documentation/design.rst, "Layers"): it calls no other file of
 * the module. It reaches the channel layer and the registry only through
 * the struct rmsg_device_watch rmsg_main.c gives it.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/inetdevice.h>
#include <linux/netdevice.h>
#include <net/addrconf.h>
#include <net/if_inet6.h>
#include <rdma/ib_cache.h>
#include <rdma/rdma_cm.h>

#include "rmsg.h"
#include "rmsg_compat.h"
#include "rmsg_wire.h"

static LIST_HEAD(rmsg_devices);
static DEFINE_MUTEX(rmsg_devices_lock);
/* Bumped under rmsg_devices_lock on every add and remove. */
static u32 rmsg_devices_generation;
/* Entries on rmsg_devices; written under the lock, read without it. */
static u32 rmsg_devices_nr;

static struct ib_client rmsg_ib_client;
/* Set once at module load, before the client is registered. */
static const struct rmsg_device_watch *rmsg_watch __ro_after_init;

static void rmsg_fatal_work(struct work_struct *work)
{
	struct rmsg_device *rdev = container_of(work, struct rmsg_device,
						fatal_work);

	rmsg_watch->fatal(rdev);
}

/**
 * rmsg_device_fatal() - act on a device's fatal error
 * @rdev: the device, which stays registered
 *
 * Any context. Its channels are repaired elsewhere, leaving it first
 * (the watch's @fatal, rmsg_chan_device_fatal(), in process context).
 */
void rmsg_device_fatal(struct rmsg_device *rdev)
{
	queue_work(system_wq, &rdev->fatal_work);
}

/*
 * A port came up again after a link flap: a repair should not wait out
 * the rest of its back-off (seconds, by then) to find it, any more than
 * it does for a new device. The event comes after the RDMA core's cached
 * port state says active, so the dial is not refused as through a port
 * that is down.
 */
static void rmsg_active_work(struct work_struct *work)
{
	rmsg_watch->added();
}

static void rmsg_ib_event(struct ib_event_handler *handler,
			  struct ib_event *event)
{
	struct rmsg_device *rdev =
		container_of(handler, struct rmsg_device, event_handler);
	u32 port;

	/* May run in interrupt context: count, and leave the rest to others. */
	switch (event->event) {
	case IB_EVENT_DEVICE_FATAL:
		atomic_inc(&rdev->fatal_events);
		rmsg_device_fatal(rdev);
		break;
	case IB_EVENT_PORT_ACTIVE:
		/* Ids parked for the port down may say goodbye now. */
		mod_delayed_work(system_wq, &rdev->parked_work, 0);
		/* Repairs waiting out a back-off may dial now. */
		queue_work(system_wq, &rdev->active_work);
		fallthrough;
	case IB_EVENT_PORT_ERR:
	case IB_EVENT_LID_CHANGE:
	case IB_EVENT_PKEY_CHANGE:
	case IB_EVENT_GID_CHANGE:
	case IB_EVENT_SM_CHANGE:
	case IB_EVENT_CLIENT_REREGISTER:
		port = event->element.port_num;
		if (port >= 1 && port <= rdev->nports)
			atomic_inc(&rdev->port_events[port - 1]);
		break;
	default:
		break;
	}
	pr_debug("%s: event %s\n", dev_name(&rdev->ibdev->dev),
		 ib_event_msg(event->event));
}

/*
 * Retired connections.
 *
 * A connection's rdma_cm id sends CM messages when it goes: a DREQ
 * (rdma_disconnect(), or rdma_destroy_id() of an established one), a REJ
 * (one whose REQ is still unanswered). When the port under it is down,
 * that send fails in the driver, and rxe (as in Linux 6.1) answers a
 * failed send on the GSI QP by moving QP1 to the error state. The MAD
 * layer moves it back to RTS, which revives its sending half only: rxe's
 * responder stays in error and the flushed receives are never posted
 * again, so once the link is back the node sends CM requests and never
 * hears a reply, and makes no connection on that device until it is
 * made again. A channel repaired across a link flap would be stuck.
 *
 * So an id whose port is down is not destroyed but parked on its device,
 * its events going to a handler that ignores them, and destroyed when the
 * port is active again (IB_EVENT_PORT_ACTIVE, or a check every second),
 * or when the device goes (the GSI QP goes with it).
 */
struct rmsg_parked_id {
	struct list_head node;
	struct rdma_cm_id *id;
};

/**
 * rmsg_cm_id_port_down() - is the port under an rdma_cm id down
 * @id: the id; one not bound to a device yet has no port
 *
 * No CM message should be sent through a port that is not active: see
 * "Retired connections" above. The RDMA core's cached state, not
 * ib_query_port(): rxe's takes the RTNL, which an rdma_cm handler must not
 * wait for. The cache is updated before clients hear of the port's event.
 *
 * On RoCE the netdev the id is bound to is asked too. A RoCE driver sends
 * the port's event only after the netdev went down, and the cache is
 * updated from a work queue after that; the connection's own traffic
 * fails as soon as the netdev stops. So the fault that starts a repair can
 * come first, and its DREQ went out through the dead port while the cache
 * still said active: every link flap in the loopback guest, where both
 * ends of a channel are on the one port, broke QP1 that way.
 *
 * Return: true if @id is bound to a port that is not active.
 */
bool rmsg_cm_id_port_down(struct rdma_cm_id *id)
{
	const struct rdma_dev_addr *addr = &id->route.addr.dev_addr;
	struct net_device *ndev;
	enum ib_port_state state;
	bool down = false;

	if (!id->device || !rdma_is_port_valid(id->device, id->port_num))
		return false;
	if (ib_get_cached_port_state(id->device, id->port_num, &state))
		return false;
	if (state != IB_PORT_ACTIVE)
		return true;
	if (!rdma_protocol_roce(id->device, id->port_num) ||
	    !addr->bound_dev_if || !addr->net)
		return false;
	rcu_read_lock();
	ndev = dev_get_by_index_rcu(addr->net, addr->bound_dev_if);
	if (ndev)
		down = !netif_running(ndev) || !netif_carrier_ok(ndev);
	rcu_read_unlock();
	return down;
}

/**
 * rmsg_cm_id_disconnect() - tell a connection's peer it is over (a DREQ)
 * @id: the connected id
 *
 * Not through a port that is down (see "Retired connections"): the id is
 * then left to rmsg_cm_id_retire(), which parks it.
 */
void rmsg_cm_id_disconnect(struct rdma_cm_id *id)
{
	if (!rmsg_cm_id_port_down(id))
		rdma_disconnect(id);
}

static int rmsg_parked_cm_handler(struct rdma_cm_id *id,
				  struct rdma_cm_event *event)
{
	return 0;
}

/*
 * Put @node on a list of @ibdev's rmsg_device, under its lock, unless the
 * device is being removed (rmsg_ib_remove() empties both lists once it
 * has set ->dying): its channels, or with @parked its parked ids, whose
 * check is then scheduled. Return: the device, or NULL.
 */
static struct rmsg_device *rmsg_device_add(struct ib_device *ibdev,
					   struct list_head *node, bool parked)
{
	struct rmsg_device *rdev, *found = NULL;

	mutex_lock(&rmsg_devices_lock);
	list_for_each_entry(rdev, &rmsg_devices, node) {
		if (rdev->ibdev != ibdev)
			continue;
		mutex_lock(&rdev->lock);
		if (!rdev->dying) {
			list_add_tail(node, parked ? &rdev->parked :
						     &rdev->channels);
			if (parked)
				queue_delayed_work(system_wq,
						   &rdev->parked_work, HZ);
			found = rdev;
		}
		mutex_unlock(&rdev->lock);
		break;
	}
	mutex_unlock(&rmsg_devices_lock);
	return found;
}

/**
 * rmsg_cm_id_retire() - destroy a connection's rdma_cm id, or park it
 * @id: the id, which no channel uses any more; its QP is destroyed
 *
 * Process context; may wait for a handler of @id to return. An id whose
 * port is down is parked on its device (see "Retired connections") and
 * destroyed later; the caller must not have sent a DREQ for it then
 * (rmsg_cm_id_port_down() tells it not to).
 */
void rmsg_cm_id_retire(struct rdma_cm_id *id)
{
	struct rmsg_parked_id *p;

	if (!rmsg_cm_id_port_down(id))
		goto destroy;
	p = kmalloc(sizeof(*p), GFP_KERNEL);
	if (!p)
		goto destroy;
	p->id = id;
	/* Whatever happens to it from now on concerns no channel. */
	rdma_lock_handler(id);
	id->event_handler = rmsg_parked_cm_handler;
	id->context = NULL;
	rdma_unlock_handler(id);

	if (rmsg_device_add(id->device, &p->node, true)) {
		dev_dbg(&id->device->dev, "rmsg: port %u down, id parked\n",
			id->port_num);
		return;
	}
	/* The device is going: so is its GSI QP. */
	kfree(p);
destroy:
	rdma_destroy_id(id);
}

/* Destroy the parked ids of @rdev whose port is up, or all of them. */
static void rmsg_parked_destroy(struct rmsg_device *rdev, bool all)
{
	struct rmsg_parked_id *p, *next;
	LIST_HEAD(ready);

	mutex_lock(&rdev->lock);
	list_for_each_entry_safe(p, next, &rdev->parked, node)
		if (all || !rmsg_cm_id_port_down(p->id))
			list_move_tail(&p->node, &ready);
	if (!list_empty(&rdev->parked))
		queue_delayed_work(system_wq, &rdev->parked_work, HZ);
	mutex_unlock(&rdev->lock);

	list_for_each_entry_safe(p, next, &ready, node) {
		rdma_destroy_id(p->id);
		kfree(p);
	}
}

static void rmsg_parked_work(struct work_struct *work)
{
	struct rmsg_device *rdev = container_of(to_delayed_work(work),
						struct rmsg_device,
						parked_work);

	rmsg_parked_destroy(rdev, false);
}

static void rmsg_addrs_add(struct rmsg_addrs *out, u8 family,
			   const void *addr, size_t len)
{
	struct rmsg_addr *a;

	if (out->count >= ARRAY_SIZE(out->addr))
		return;
	a = &out->addr[out->count];
	memset(a, 0, sizeof(*a));
	a->family = family;
	memcpy(a->addr, addr, len);
	if (rmsg_addr_usable(a))
		out->count++;
}

static void rmsg_addrs_v6(struct net_device *ndev, struct rmsg_addrs *out)
{
#if IS_ENABLED(CONFIG_IPV6)
	struct inet6_ifaddr *ifp;
	struct inet6_dev *idev;

	idev = __in6_dev_get(ndev);
	if (!idev)
		return;
	read_lock_bh(&idev->lock);
	list_for_each_entry(ifp, &idev->addr_list, if_list) {
		/* Not yet (or never) the node's: nobody answers there. */
		if (ifp->flags & (IFA_F_TENTATIVE | IFA_F_DADFAILED))
			continue;
		rmsg_addrs_add(out, RMSG_ADDR_IPV6, &ifp->addr,
			       sizeof(ifp->addr));
	}
	read_unlock_bh(&idev->lock);
#endif
}

/**
 * rmsg_local_addrs() - addresses a peer may dial to reach this node by RDMA
 * @net: the network namespace
 * @v6: IPv6 addresses too (after every IPv4 one), not only IPv4
 * @out: filled with at most RMSG_WIRE_ADDRS_MAX of them
 *
 * The addresses of every network device in @net that is up, has its
 * carrier and has an RDMA device (RoCE, iWARP), in the order of the
 * devices; those rmsg_addr_usable() refuses (loopback, IPv6 link-local,
 * ...) are left out. An accepting side sends them in its ACCEPT, so that
 * a repair may dial another of them when the first fails.
 */
void rmsg_local_addrs(struct net *net, bool v6, struct rmsg_addrs *out)
{
	struct net_device *ndev;
	struct ib_device *ibdev;
	const struct in_ifaddr *ifa;
	struct in_device *in_dev;
	int pass;

	out->count = 0;
	rcu_read_lock();
	for (pass = 0; pass < (v6 ? 2 : 1); pass++) {
		for_each_netdev_rcu(net, ndev) {
			if (!netif_running(ndev) || !netif_carrier_ok(ndev))
				continue;
			ibdev = ib_device_get_by_netdev(ndev,
							RDMA_DRIVER_UNKNOWN);
			if (!ibdev)
				continue;
			ib_device_put(ibdev);
			if (pass) {
				rmsg_addrs_v6(ndev, out);
				continue;
			}
			in_dev = __in_dev_get_rcu(ndev);
			if (!in_dev)
				continue;
			in_dev_for_each_ifa_rcu(ifa, in_dev)
				rmsg_addrs_add(out, RMSG_ADDR_IPV4,
					       &ifa->ifa_local,
					       sizeof(ifa->ifa_local));
		}
	}
	rcu_read_unlock();
}

/**
 * rmsg_addr_on_link() - is @ss on a subnet of this node's RDMA interfaces?
 * @net: the network namespace
 * @ss: an IPv4 or IPv6 address
 *
 * A peer lists addresses for repairs to dial (its ACCEPT): only those on
 * the subnet of an address of a network device in @net that is up and has
 * an RDMA device are taken, so that a peer cannot have this node open
 * connections to any host the fabric routes to.
 */
bool rmsg_addr_on_link(struct net *net, const struct sockaddr_storage *ss)
{
	const struct sockaddr_in *sin = (const struct sockaddr_in *)ss;
	struct net_device *ndev;
	const struct in_ifaddr *ifa;
	struct ib_device *ibdev;
	struct in_device *in_dev;
	bool found = false;

	rcu_read_lock();
	for_each_netdev_rcu(net, ndev) {
		if (!netif_running(ndev))
			continue;
		ibdev = ib_device_get_by_netdev(ndev, RDMA_DRIVER_UNKNOWN);
		if (!ibdev)
			continue;
		ib_device_put(ibdev);
		if (ss->ss_family == AF_INET6) {
#if IS_ENABLED(CONFIG_IPV6)
			found = ipv6_chk_prefix(
				&((const struct sockaddr_in6 *)ss)->sin6_addr,
				ndev);
#endif
		} else if (ss->ss_family == AF_INET) {
			in_dev = __in_dev_get_rcu(ndev);
			if (!in_dev)
				continue;
			in_dev_for_each_ifa_rcu(ifa, in_dev)
				if (inet_ifa_match(sin->sin_addr.s_addr, ifa))
					found = true;
		}
		if (found)
			break;
	}
	rcu_read_unlock();
	return found;
}

static int rmsg_ib_add(struct ib_device *ibdev)
{
	u32 nports = rdma_end_port(ibdev);
	struct rmsg_device *rdev;

	rdev = kzalloc(struct_size(rdev, port_events, nports), GFP_KERNEL);
	if (!rdev)
		return -ENOMEM;
	rdev->ibdev = ibdev;
	rdev->nports = nports;
	mutex_init(&rdev->lock);
	INIT_LIST_HEAD(&rdev->channels);
	INIT_LIST_HEAD(&rdev->parked);
	INIT_DELAYED_WORK(&rdev->parked_work, rmsg_parked_work);
	INIT_WORK(&rdev->fatal_work, rmsg_fatal_work);
	INIT_WORK(&rdev->active_work, rmsg_active_work);
	init_waitqueue_head(&rdev->wq);
	INIT_IB_EVENT_HANDLER(&rdev->event_handler, ibdev, rmsg_ib_event);
	ib_register_event_handler(&rdev->event_handler);
	ib_set_client_data(ibdev, &rmsg_ib_client, rdev);

	mutex_lock(&rmsg_devices_lock);
	list_add_tail(&rdev->node, &rmsg_devices);
	WRITE_ONCE(rmsg_devices_nr, rmsg_devices_nr + 1);
	rmsg_devices_generation++;
	mutex_unlock(&rmsg_devices_lock);

	dev_info(&ibdev->dev, "rmsg: device added (%u ports)\n", nports);
	/* Channels being repaired may reach their peers through it. */
	rmsg_watch->added();
	return 0;
}

static void rmsg_ib_remove(struct ib_device *ibdev, void *client_data)
{
	struct rmsg_device *rdev = client_data;

	mutex_lock(&rmsg_devices_lock);
	list_del(&rdev->node);
	WRITE_ONCE(rmsg_devices_nr, rmsg_devices_nr - 1);
	rmsg_devices_generation++;
	mutex_unlock(&rmsg_devices_lock);

	/* No fatal work from now on, but an injected one may be queued. */
	ib_unregister_event_handler(&rdev->event_handler);
	cancel_work_sync(&rdev->active_work);
	/* Before the callback returns, nothing of rmsg may be left on it. */
	rmsg_watch->removed(rdev);
	/* No channel is on it to inject another one. */
	cancel_work_sync(&rdev->fatal_work);
	/* Nobody parks an id on it any more (it is dying). */
	cancel_delayed_work_sync(&rdev->parked_work);
	rmsg_parked_destroy(rdev, true);
	dev_info(&ibdev->dev, "rmsg: device removed\n");
	mutex_destroy(&rdev->lock);
	kfree(rdev);
}

static struct ib_client rmsg_ib_client = {
	.name	= "rmsg",
	.add	= rmsg_ib_add,
	.remove	= rmsg_ib_remove,
};

static u8 rmsg_port_protocol(struct ib_device *ibdev, u32 port)
{
	if (rdma_protocol_roce(ibdev, port))
		return RMSG_PROTO_ROCE;
	if (rdma_protocol_iwarp(ibdev, port))
		return RMSG_PROTO_IWARP;
	if (rdma_protocol_ib(ibdev, port))
		return RMSG_PROTO_IB;
	return RMSG_PROTO_UNKNOWN;
}

/* The netdev under an Ethernet port, from the first populated GID entry. */
static void rmsg_port_netdev(struct ib_device *ibdev, u32 port, u32 gids,
			     char *name, size_t size)
{
	const struct ib_gid_attr *attr;
	struct net_device *ndev;
	u32 i;

	for (i = 0; i < gids; i++) {
		attr = rdma_get_gid_attr(ibdev, port, i);
		if (IS_ERR(attr))
			continue;
		rcu_read_lock();
		ndev = rdma_read_gid_attr_ndev_rcu(attr);
		if (!IS_ERR(ndev))
			strscpy(name, ndev->name, size);
		rcu_read_unlock();
		rdma_put_gid_attr(attr);
		return;
	}
}

static void rmsg_fill_port(struct rmsg_device *rdev, u32 port,
			   struct rmsg_port_info *info)
{
	struct ib_device *ibdev = rdev->ibdev;
	struct ib_port_attr attr;

	info->port_num = port;
	info->protocol = rmsg_port_protocol(ibdev, port);
	info->events = atomic_read(&rdev->port_events[port - 1]);
	if (ib_query_port(ibdev, port, &attr))
		return;
	info->state = attr.state;
	info->phys_state = attr.phys_state;
	info->active_mtu = ib_mtu_enum_to_int(attr.active_mtu);
	if (info->active_mtu > (u32)INT_MAX)	/* -1: not a valid MTU */
		info->active_mtu = 0;
	info->gid_tbl_len = attr.gid_tbl_len;
	if (info->protocol == RMSG_PROTO_IB)
		info->lid = attr.lid;
	if (info->protocol == RMSG_PROTO_ROCE ||
	    info->protocol == RMSG_PROTO_IWARP)
		rmsg_port_netdev(ibdev, port, attr.gid_tbl_len, info->netdev,
				 sizeof(info->netdev));
}

/**
 * rmsg_device_ordered() - does the device place RDMA WRITE data in order
 * @ibdev: the device
 *
 * Those listed are known to write a message's bytes to host memory in
 * ascending address order (the software devices copy them with memcpy(),
 * which does so on some kernels and CPUs only: rmsg_memcpy_ascending();
 * the mlx4 and mlx5 HCAs are documented and relied upon to). Others get
 * the write-with-immediate fallback, which costs a completion per message
 * but is correct on any device.
 *
 * Return: true if a receive block on it may be polled for its last byte.
 */
bool rmsg_device_ordered(struct ib_device *ibdev)
{
	switch (ibdev->ops.driver_id) {
	case RDMA_DRIVER_RXE:
	case RDMA_DRIVER_SIW:
		return rmsg_memcpy_ascending();
	case RDMA_DRIVER_MLX4:
	case RDMA_DRIVER_MLX5:
		return true;
	default:
		return false;
	}
}

/* The pages one page list of rxe holds in 6.1 (RXE_BUF_PER_MAP). */
#define RMSG_RXE_BUFS_PER_MAP	(PAGE_SIZE / (2 * sizeof(u64)))

/**
 * rmsg_alloc_mr() - a fast-registration MR for up to @pages pages
 * @pd: its protection domain
 * @pages: the most pages it will map
 *
 * rxe in 6.1 keeps an MR's pages in lists of RXE_BUF_PER_MAP; its
 * rxe_mr_copy(), after a copy that ends exactly at the end of a list,
 * steps to the next list's first entry, reading one pointer past the
 * array of lists when that was the last list (KASAN: slab-out-of-bounds,
 * seen on every READ to the end of a full 2 MiB rendezvous segment).
 * Later kernels keep the pages in an xarray. An MR sized one page larger
 * gives rxe a last list that is never used but can be read: the cost is
 * that list (a page) per MR, on rxe only.
 *
 * Return: the MR, or an ERR_PTR().
 */
struct ib_mr *rmsg_alloc_mr(struct ib_pd *pd, u32 pages)
{
	if (pd->device->ops.driver_id == RDMA_DRIVER_RXE &&
	    !(pages % RMSG_RXE_BUFS_PER_MAP))
		pages++;
	return ib_alloc_mr(pd, IB_MR_TYPE_MEM_REG, pages);
}

static void rmsg_fill_device(struct rmsg_device *rdev,
			     struct rmsg_dev_info *info)
{
	struct ib_device *ibdev = rdev->ibdev;
	u32 port;

	memset(info, 0, sizeof(*info));
	strscpy(info->name, dev_name(&ibdev->dev), sizeof(info->name));
	info->index = ibdev->index;
	info->num_ports = rdev->nports;
	info->node_guid = be64_to_cpu(ibdev->node_guid);
	info->fatal_events = atomic_read(&rdev->fatal_events);
	if (info->fatal_events)
		info->flags |= RMSG_DEV_F_FATAL;
	if (rmsg_device_ordered(ibdev))
		info->flags |= RMSG_DEV_F_ORDERED;
	for (port = 1; port <= rdev->nports && port <= RMSG_MAX_PORTS; port++)
		rmsg_fill_port(rdev, port, &info->port[port - 1]);
}

/**
 * rmsg_devices_count() - how many devices rmsg sees, at this instant
 *
 * Return: a count that may be stale by the time the caller uses it; it only
 * sizes buffers for rmsg_devices_list(), which takes the real snapshot.
 */
u32 rmsg_devices_count(void)
{
	return READ_ONCE(rmsg_devices_nr);
}

/**
 * rmsg_devices_list() - describe the devices rmsg sees
 * @out: room for @capacity entries (may be NULL when @capacity is 0)
 * @capacity: entries @out can take
 * @total: set to the number of devices, which may exceed @capacity
 * @generation: set to the device list's generation
 *
 * Return: the number of entries written, min(@capacity, *@total).
 */
int rmsg_devices_list(struct rmsg_dev_info *out, u32 capacity, u32 *total,
		      u32 *generation)
{
	struct rmsg_device *rdev;
	u32 n = 0;

	mutex_lock(&rmsg_devices_lock);
	list_for_each_entry(rdev, &rmsg_devices, node) {
		if (n < capacity)
			rmsg_fill_device(rdev, &out[n]);
		n++;
	}
	*total = n;
	*generation = rmsg_devices_generation;
	mutex_unlock(&rmsg_devices_lock);
	return min(n, capacity);
}

/**
 * rmsg_device_attach() - put a channel on the device its connection uses
 * @ibdev: the RDMA core's device
 * @node: the channel's entry for the device's channel list
 *
 * Looks the device up in rmsg's own list rather than by client data: a
 * device being removed is off the list before its resources go.
 *
 * Return: the device, or NULL when rmsg does not (or no longer) use it.
 */
struct rmsg_device *rmsg_device_attach(struct ib_device *ibdev,
				       struct list_head *node)
{
	return rmsg_device_add(ibdev, node, false);
}

/**
 * rmsg_device_detach() - take a channel off its device
 * @rdev: the device rmsg_device_attach() returned
 * @node: the channel's entry
 *
 * Return: whether the device is being removed, which is then the reason
 * the channel ended, whatever its peer saw first.
 */
bool rmsg_device_detach(struct rmsg_device *rdev, struct list_head *node)
{
	bool dying;

	mutex_lock(&rdev->lock);
	list_del_init(node);
	dying = rdev->dying;
	/*
	 * Under the lock: removal frees @rdev once the list is empty and it
	 * has taken the lock after that (rmsg_chan_device_removed()).
	 */
	wake_up_all(&rdev->wq);
	mutex_unlock(&rdev->lock);
	return dying;
}

/**
 * rmsg_devices_init() - start tracking devices
 * @watch: what to call as they come, go and fail; it must outlive the
 *	module's devices (rmsg_devices_exit())
 *
 * Return: 0 or a negative errno of ib_register_client().
 */
int rmsg_devices_init(const struct rmsg_device_watch *watch)
{
	rmsg_watch = watch;
	return ib_register_client(&rmsg_ib_client);
}

void rmsg_devices_exit(void)
{
	/* Calls rmsg_ib_remove() for every device still present. */
	ib_unregister_client(&rmsg_ib_client);
}
