// SPDX-License-Identifier: GPL-2.0
/*
 * rmsg: the endpoint registry, and the ioctls that look at or act on
 * channels of any endpoint: RMSG_IOC_CHAN_LIST (what rmsgctl chan shows)
 * and RMSG_IOC_FAULT (fault injection). Documentation/resilience.rst.
 *
 * Every endpoint has a global id, from 1, given when its file is opened
 * and not reused soon after (cyclic allocation), so that an id read from
 * the channel list names the same endpoint a moment later, or none.
 *
 * Lifetime rule: an endpoint other than the caller's own is only ever
 * reached through rmsg_eps, and only while rmsg_eps_lock is held. Release
 * takes the endpoint out of rmsg_eps, under rmsg_eps_lock, before it
 * tears anything down (rmsg_ep_destroy()), so whoever holds the lock and
 * found an endpoint there may use it, and its chan_lock, until the lock is
 * dropped. Lock order: rmsg_eps_lock, then an endpoint's chan_lock. Nothing
 * that holds a chan_lock or ep->lock takes rmsg_eps_lock; nothing copies
 * to or from user memory under it (a page fault may take arbitrarily long,
 * and would stall every open and close of /dev/rmsg meanwhile).
 *
 * Layer (Documentation/design.rst, "Layers"): of the module's files it
 * calls only these, all below it: rmsg_channel.c.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/capability.h>
#include <linux/cred.h>
#include <linux/pid_namespace.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/timekeeping.h>
#include <linux/uaccess.h>
#include <linux/xarray.h>

#include "rmsg.h"
#include "rmsg_chan.h"

static DEFINE_XARRAY_ALLOC1(rmsg_eps);
static DEFINE_MUTEX(rmsg_eps_lock);
static u32 rmsg_eps_next = 1;

/*
 * Entries copied out per pass of RMSG_IOC_CHAN_LIST: the kernel buffer
 * stays small however large a capacity the caller claims, and the lock is
 * dropped for each copy to user memory.
 */
#define RMSG_CTL_BATCH		64

static_assert(sizeof(struct rmsg_chan_info) == 80);
static_assert(sizeof(struct rmsg_chan_list) == 32);
static_assert(sizeof(struct rmsg_fault) == 24);

/**
 * rmsg_ctl_register() - give a new endpoint its id and make it findable
 * @ep: the endpoint, fully initialised
 *
 * Return: 0 or a negative errno.
 */
int rmsg_ctl_register(struct rmsg_endpoint *ep)
{
	int ret;

	mutex_lock(&rmsg_eps_lock);
	ret = xa_alloc_cyclic(&rmsg_eps, &ep->id, ep, xa_limit_31b,
			      &rmsg_eps_next, GFP_KERNEL_ACCOUNT);
	mutex_unlock(&rmsg_eps_lock);
	return ret < 0 ? ret : 0;
}

/**
 * rmsg_ctl_unregister() - take an endpoint being released out of the registry
 * @ep: the endpoint
 *
 * Returns once nobody can reach @ep through the registry any more: any
 * ioctl that found it there held rmsg_eps_lock, and has dropped it.
 */
void rmsg_ctl_unregister(struct rmsg_endpoint *ep)
{
	mutex_lock(&rmsg_eps_lock);
	xa_erase(&rmsg_eps, ep->id);
	mutex_unlock(&rmsg_eps_lock);
}

/**
 * rmsg_ctl_device_added() - tell every endpoint that a device came
 *
 * Their channels being repaired dial at once, and listeners whose device
 * went listen again (rmsg_chan_device_added()).
 */
void rmsg_ctl_device_added(void)
{
	struct rmsg_endpoint *ep;
	unsigned long id;

	mutex_lock(&rmsg_eps_lock);
	xa_for_each(&rmsg_eps, id, ep)
		rmsg_chan_device_added(ep);
	mutex_unlock(&rmsg_eps_lock);
}

/* May the caller see or act on another endpoint? Its owner, or an admin. */
/* The module's endpoint is nobody's: an administrator's to look into. */
static bool rmsg_ctl_may(const struct rmsg_endpoint *ep)
{
	return (!rmsg_ep_is_module(ep) && uid_eq(ep->uid, current_euid())) ||
	       capable(CAP_NET_ADMIN);
}

/* A channel's state as RMSG_IOC_CHAN_LIST and RMSG_IOC_LINK_LIST show it. */
u32 rmsg_ctl_chan_state(enum rmsg_chan_state state)
{
	switch (state) {
	case RMSG_CHAN_CONNECTING:
		return RMSG_CHAN_INFO_CONNECTING;
	case RMSG_CHAN_REQUESTED:
		return RMSG_CHAN_INFO_REQUESTED;
	case RMSG_CHAN_ACCEPTING:
		return RMSG_CHAN_INFO_ACCEPTING;
	case RMSG_CHAN_OPEN:
		return RMSG_CHAN_INFO_OPEN;
	case RMSG_CHAN_RECOVERING:
		return RMSG_CHAN_INFO_RECOVERING;
	case RMSG_CHAN_DYING:
		break;
	}
	return RMSG_CHAN_INFO_DYING;
}

/* One channel as the caller sees it. Caller holds ep->chan_lock. */
static void rmsg_ctl_info(struct rmsg_endpoint *ep, struct rmsg_channel *ch,
			  struct rmsg_chan_info *info, u64 now)
{
	const struct rmsg_chan_resil *r = &ch->resil;

	lockdep_assert_held(&ep->chan_lock);
	memset(info, 0, sizeof(*info));
	info->ep_id = ep->id;
	info->channel = ch->id;
	/* As the caller's namespaces see them: 0 and overflowuid otherwise. */
	info->pid = pid_nr_ns(ep->tgid, task_active_pid_ns(current));
	info->uid = from_kuid_munged(current_user_ns(), ep->uid);
	info->state = rmsg_ctl_chan_state(ch->state);
	info->epoch = r->epoch;
	info->attempts = r->attempts;
	info->max_attempts = r->max_attempts;
	info->repairs = r->repairs;
	info->last_error = r->last_error;
	info->retx_msgs = r->retx_msgs;
	info->retx_bytes = r->retx_bytes;
	info->recover_ns = r->recover_ns;
	/* The repair under way counts too. */
	if (ch->state == RMSG_CHAN_RECOVERING && r->recover_start &&
	    now > r->recover_start)
		info->recover_ns += now - r->recover_start;
	info->block_size = ch->block_size;
	info->dev = READ_ONCE(ch->dev.dev_id);
	/* Snapshots: set under the table's lock and ep->lock, not chan_lock. */
	info->block_held = READ_ONCE(ch->block) ?
				   PAGE_ALIGN(ch->block_size) : 0;
	if (ch->lease.on)
		info->lease = READ_ONCE(ch->lease.rx.lease);
}

/* rmsg_ctl_info() and the channel's addresses (zero before it had any). */
static void rmsg_ctl_info_addrs(struct rmsg_endpoint *ep,
				struct rmsg_channel *ch,
				struct rmsg_chan_info_addrs *e, u64 now)
{
	memset(e, 0, sizeof(*e));
	rmsg_ctl_info(ep, ch, &e->info, now);
	memcpy(&e->local, &ch->conn_local, sizeof(ch->conn_local));
	memcpy(&e->peer, &ch->conn_peer, sizeof(ch->conn_peer));
}

/**
 * struct rmsg_ctl_walk - one RMSG_IOC_CHAN_LIST in progress
 * @buf: this pass's entries
 * @addrs: they are struct rmsg_chan_info_addrs, not struct rmsg_chan_info
 * @room: entries this pass may fill
 * @n: entries this pass filled
 * @last: this pass reaches the caller's capacity: once @room is used up,
 *	channels are only counted
 * @total: channels shown or counted so far, over all passes
 * @ep_id: where the next pass starts: this endpoint...
 * @chan: ...at this channel
 * @now: ktime_get_ns() at the start of the ioctl
 */
struct rmsg_ctl_walk {
	void *buf;
	bool addrs;
	u32 room;
	u32 n;
	bool last;
	u32 total;
	u32 ep_id;
	u32 chan;
	u64 now;
};

/*
 * Fill or count the channels of @ep from @first on. Returns true when the
 * pass is full and more is to be shown: the walk then points at the first
 * channel not taken.
 */
static bool rmsg_ctl_walk_ep(struct rmsg_ctl_walk *w, struct rmsg_endpoint *ep,
			     u32 first)
{
	struct rmsg_channel *ch;
	unsigned long id;
	bool full = false;

	mutex_lock(&ep->chan_lock);
	xa_for_each_start(&ep->channels, id, ch, first) {
		if (w->n < w->room && w->addrs) {
			rmsg_ctl_info_addrs(ep, ch,
					    (struct rmsg_chan_info_addrs *)w->buf +
					    w->n++, w->now);
		} else if (w->n < w->room) {
			rmsg_ctl_info(ep, ch,
				      (struct rmsg_chan_info *)w->buf + w->n++,
				      w->now);
		} else if (!w->last) {
			w->ep_id = ep->id;
			w->chan = id;
			full = true;
			break;
		}
		w->total++;
	}
	mutex_unlock(&ep->chan_lock);
	return full;
}

/*
 * One pass over every endpoint the caller may see, from where the last
 * one stopped. Returns true when it stopped early.
 */
static bool rmsg_ctl_walk_all(struct rmsg_ctl_walk *w,
			      struct rmsg_endpoint *self, bool admin)
{
	struct rmsg_endpoint *ep;
	unsigned long id;
	bool full = false;

	mutex_lock(&rmsg_eps_lock);
	xa_for_each_start(&rmsg_eps, id, ep, w->ep_id) {
		if (ep != self && !admin && !uid_eq(ep->uid, current_euid()))
			continue;
		full = rmsg_ctl_walk_ep(w, ep, id == w->ep_id ? w->chan : 0);
		if (full)
			break;
		cond_resched();
	}
	mutex_unlock(&rmsg_eps_lock);
	return full;
}

/**
 * rmsg_ctl_chan_list() - RMSG_IOC_CHAN_LIST
 * @self: the caller's endpoint
 * @uarg: struct rmsg_chan_list
 *
 * The entries are copied out in passes of RMSG_CTL_BATCH; the list is not
 * one snapshot: a channel that comes or goes meanwhile may or may not be
 * in it, and each entry is consistent in itself (read under its
 * endpoint's chan_lock).
 *
 * Return: 0, -EINVAL, -EFAULT or -ENOMEM.
 */
long rmsg_ctl_chan_list(struct rmsg_endpoint *self, void __user *uarg)
{
	struct rmsg_ctl_walk w = {};
	struct rmsg_chan_list req;
	u8 __user *out;
	u32 filled = 0;
	bool all, admin, more;
	size_t esize;
	long ret = 0;

	if (copy_from_user(&req, uarg, sizeof(req)))
		return -EFAULT;
	if ((req.flags & ~(RMSG_CHAN_LIST_F_ALL | RMSG_CHAN_LIST_F_ADDRS)) ||
	    req.resv)
		return -EINVAL;
	if (req.capacity && !req.chans)
		return -EFAULT;
	out = u64_to_user_ptr(req.chans);
	all = req.flags & RMSG_CHAN_LIST_F_ALL;
	admin = all && capable(CAP_NET_ADMIN);
	w.addrs = req.flags & RMSG_CHAN_LIST_F_ADDRS;
	esize = w.addrs ? sizeof(struct rmsg_chan_info_addrs) :
			  sizeof(struct rmsg_chan_info);
	if (req.capacity) {
		w.buf = kcalloc(min_t(u32, req.capacity, RMSG_CTL_BATCH),
				esize, GFP_KERNEL);
		if (!w.buf)
			return -ENOMEM;
	}
	w.now = ktime_get_ns();
	w.ep_id = all ? 1 : self->id;
	do {
		w.n = 0;
		w.room = min_t(u32, req.capacity - filled, RMSG_CTL_BATCH);
		w.last = w.room == req.capacity - filled;
		/* The caller's own endpoint cannot go away under its ioctl. */
		if (all)
			more = rmsg_ctl_walk_all(&w, self, admin);
		else
			more = rmsg_ctl_walk_ep(&w, self, w.chan);
		if (w.n && copy_to_user(out + array_size(filled, esize), w.buf,
					array_size(w.n, esize))) {
			ret = -EFAULT;
			goto out;
		}
		filled += w.n;
		if (more && fatal_signal_pending(current)) {
			ret = -EINTR;
			goto out;
		}
	} while (more);

	req.filled = filled;
	req.total = w.total;
	req.ep_id = self->id;
	if (copy_to_user(uarg, &req, sizeof(req)))
		ret = -EFAULT;
out:
	kfree(w.buf);
	return ret;
}

/**
 * rmsg_ctl_fault() - RMSG_IOC_FAULT
 * @self: the caller's endpoint
 * @uarg: struct rmsg_fault
 *
 * Return: 0, -EINVAL, -EFAULT, -ENOENT (no such endpoint or channel),
 * -EPERM (another user's endpoint, or RMSG_FAULT_DEVICE_FATAL, without
 * CAP_NET_ADMIN), or what rmsg_chan_inject() returns (-ENOTCONN,
 * -EOPNOTSUPP, -EPERM for a QP error on a link).
 */
long rmsg_ctl_fault(struct rmsg_endpoint *self, void __user *uarg)
{
	struct rmsg_endpoint *ep = self;
	struct rmsg_channel *ch;
	struct rmsg_fault req;
	long ret;

	if (copy_from_user(&req, uarg, sizeof(req)))
		return -EFAULT;
	if (req.flags)
		return -EINVAL;
	switch (req.kind) {
	case RMSG_FAULT_QP_ERROR:
	case RMSG_FAULT_DISCONNECT:
	case RMSG_FAULT_DEVICE_FATAL:
		if (req.arg)
			return -EINVAL;
		break;
	case RMSG_FAULT_LINK_PROBE:
		if (!req.arg || req.arg > RMSG_LINK_PROBE_MAX)
			return -EINVAL;
		break;
	default:
		return -EINVAL;
	}

	/*
	 * A device's fatal error ends up at every channel on it, of every
	 * user: only an administrator may pretend one, even on a channel of
	 * their own.
	 */
	if (req.kind == RMSG_FAULT_DEVICE_FATAL && !capable(CAP_NET_ADMIN))
		return -EPERM;

	mutex_lock(&rmsg_eps_lock);
	if (req.ep_id && req.ep_id != self->id) {
		ep = xa_load(&rmsg_eps, req.ep_id);
		if (!ep) {
			ret = -ENOENT;
			goto out;
		}
		if (!rmsg_ctl_may(ep)) {
			ret = -EPERM;
			goto out;
		}
	}
	mutex_lock(&ep->chan_lock);
	ch = xa_load(&ep->channels, req.channel);
	ret = ch ? rmsg_chan_inject(ch, req.kind, req.arg) : -ENOENT;
	mutex_unlock(&ep->chan_lock);
out:
	mutex_unlock(&rmsg_eps_lock);
	return ret;
}
