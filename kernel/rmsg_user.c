// SPDX-License-Identifier: GPL-2.0
/*
 * rmsg: what each user may hold, and what the module holds in all.
 *
 * Bounds (Documentation/uapi.rst, "Permissions and limits"):
 *  - endpoints per user (max_endpoints_per_user, EMFILE) and channels per
 *    user (max_channels_per_user, EDQUOT), counted in a struct rmsg_user
 *    per effective uid that lives while the user has an endpoint;
 *    CAP_SYS_RESOURCE at open exempts an endpoint from both;
 *  - the pages the kernel allocates for an endpoint and maps into the
 *    program (rings, send area, arrival summary, receive blocks, shadows)
 *    and its bookkeeping are charged to the opener's memory cgroup
 *    (rmsg_pages.c, RMSG_GFP_CHARGED), as io_uring's rings are; only the
 *    program's own memory pinned by RMSG_IOC_REG counts against
 *    RLIMIT_MEMLOCK, charged to its mm's pinned_vm as a verbs MR is
 *    (rmsg_region.c).
 *
 * What a channel costs beyond the cgroup's charge is the device's: its
 * queue pair and queues, its rdma_cm ids, its share of a completion
 * queue (about 60 KiB on rxe). That is what max_channels_per_user
 * bounds, so its default follows the machine's memory (one channel per
 * 512 KiB: a user at the limit holds about an eighth of it there), not a
 * count sized for a few programs: 131,072 on a 64 GiB node, room for 256
 * ranks with a channel to every other.
 *
 * The exemption is the opener's, taken at open, because an accepted
 * channel is made in an rdma_cm handler, long after and in no process of
 * the user's.
 *
 * Live objects of the whole module are counted too, for the leak checks:
 * /sys/kernel/debug/rmsg/objects shows them, and unloading with any of
 * them non-zero is a bug (rmsg_user_exit() warns).
 *
 * Layer (Documentation/design.rst, "Layers"): it calls no other file of
 * the module.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/capability.h>
#include <linux/cred.h>
#include <linux/debugfs.h>
#include <linux/hashtable.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/sched/signal.h>
#include <linux/sched/user.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/spinlock.h>

#include "rmsg.h"

static unsigned int max_endpoints_per_user = 1024;
module_param(max_endpoints_per_user, uint, 0644);
MODULE_PARM_DESC(max_endpoints_per_user,
		 "Open /dev/rmsg files per user at most, unless CAP_SYS_RESOURCE (0: no limit; default 1024)");

/* Not given at load: one per RMSG_RAM_PER_CHANNEL of memory, set at init. */
#define RMSG_CHANNELS_PER_USER_AUTO	UINT_MAX
#define RMSG_RAM_PER_CHANNEL_SHIFT	19	/* 512 KiB */
#define RMSG_CHANNELS_PER_USER_MIN	1024

static unsigned int max_channels_per_user = RMSG_CHANNELS_PER_USER_AUTO;
module_param(max_channels_per_user, uint, 0644);
MODULE_PARM_DESC(max_channels_per_user,
		 "Channels of all endpoints of a user at most, unless CAP_SYS_RESOURCE (0: no limit; default one per 512 KiB of memory, at least 1024)");

static unsigned int sqpoll_per_user = 2;
module_param(sqpoll_per_user, uint, 0644);
MODULE_PARM_DESC(sqpoll_per_user,
		 "Kernel pollers (RMSG_EP_F_SQPOLL) a user may have at once without CAP_SYS_NICE (0: none; default 2)");

static unsigned int sqpoll_user_idle_ms = 1000;
module_param(sqpoll_user_idle_ms, uint, 0644);
MODULE_PARM_DESC(sqpoll_user_idle_ms,
		 "Longest a poller of a caller without CAP_SYS_NICE spins without work before it sleeps, in ms (default 1000)");

/**
 * struct rmsg_user - what one user holds
 * @node: in rmsg_users, under rmsg_users_lock
 * @ref: one per endpoint of the user
 * @uid: the effective uid the endpoints were opened with
 * @endpoints: endpoints counted against max_endpoints_per_user
 * @channels: channels counted against max_channels_per_user
 * @pollers: kernel pollers of its endpoints, privileged or not
 */
struct rmsg_user {
	struct hlist_node node;
	refcount_t ref;
	kuid_t uid;
	atomic_t endpoints;
	atomic_t channels;
	atomic_t pollers;
};

static DEFINE_HASHTABLE(rmsg_users, 6);
static DEFINE_SPINLOCK(rmsg_users_lock);

atomic_long_t rmsg_live[RMSG_LIVE_NR];

static const char *const rmsg_live_names[RMSG_LIVE_NR] = {
	[RMSG_LIVE_USERS]	 = "users",
	[RMSG_LIVE_ENDPOINTS]	 = "endpoints",
	[RMSG_LIVE_CHANNELS]	 = "channels",
	[RMSG_LIVE_REGIONS]	 = "regions",
	[RMSG_LIVE_REGION_PAGES] = "region_pages",
	[RMSG_LIVE_KERNEL_PAGES] = "kernel_pages",
};

static struct dentry *rmsg_debugfs;

static struct rmsg_user *rmsg_user_find(kuid_t uid)
{
	struct rmsg_user *u;

	hash_for_each_possible(rmsg_users, u, node, __kuid_val(uid))
		if (uid_eq(u->uid, uid) && refcount_inc_not_zero(&u->ref))
			return u;
	return NULL;
}

/* The user's entry, with a reference; made when it has none. */
static struct rmsg_user *rmsg_user_get(kuid_t uid)
{
	struct rmsg_user *u, *fresh;

	spin_lock(&rmsg_users_lock);
	u = rmsg_user_find(uid);
	spin_unlock(&rmsg_users_lock);
	if (u)
		return u;

	fresh = kzalloc(sizeof(*fresh), GFP_KERNEL);
	if (!fresh)
		return NULL;
	refcount_set(&fresh->ref, 1);
	fresh->uid = uid;
	spin_lock(&rmsg_users_lock);
	/* Another open of the same user may have made it meanwhile. */
	u = rmsg_user_find(uid);
	if (!u) {
		hash_add(rmsg_users, &fresh->node, __kuid_val(uid));
		atomic_long_inc(&rmsg_live[RMSG_LIVE_USERS]);
		u = fresh;
		fresh = NULL;
	}
	spin_unlock(&rmsg_users_lock);
	kfree(fresh);
	return u;
}

static void rmsg_user_put(struct rmsg_user *u)
{
	if (!refcount_dec_and_lock(&u->ref, &rmsg_users_lock))
		return;
	hash_del(&u->node);
	spin_unlock(&rmsg_users_lock);
	atomic_long_dec(&rmsg_live[RMSG_LIVE_USERS]);
	kfree(u);
}

/* Count one more against @max unless @exempt; false when over it. */
static bool rmsg_user_take(atomic_t *count, unsigned int max, bool exempt)
{
	if (atomic_inc_return(count) <= max || !max || exempt)
		return true;
	atomic_dec(count);
	return false;
}

/**
 * rmsg_user_open() - account a new endpoint to the user opening it
 * @ep: the endpoint; its uid and owner are set here
 *
 * Records who opened it and what that process may do: the effective uid
 * (the owner) and CAP_SYS_RESOURCE. These stay with the endpoint,
 * whoever uses its file later.
 *
 * Return: 0, -ENOMEM, or -EMFILE when the user has max_endpoints_per_user
 * endpoints already.
 */
int rmsg_user_open(struct rmsg_endpoint *ep)
{
	struct rmsg_user *u;

	ep->uid = current_euid();
	ep->unlimited = ns_capable_noaudit(&init_user_ns, CAP_SYS_RESOURCE);
	u = rmsg_user_get(ep->uid);
	if (!u)
		return -ENOMEM;
	if (!rmsg_user_take(&u->endpoints,
			    READ_ONCE(max_endpoints_per_user), ep->unlimited)) {
		rmsg_user_put(u);
		return -EMFILE;
	}
	ep->owner = u;
	atomic_long_inc(&rmsg_live[RMSG_LIVE_ENDPOINTS]);
	return 0;
}

/* The endpoint is gone; its channels and pages went before it. */
void rmsg_user_close(struct rmsg_endpoint *ep)
{
	if (!ep->owner)
		return;
	atomic_dec(&ep->owner->endpoints);
	rmsg_user_put(ep->owner);
	ep->owner = NULL;
	atomic_long_dec(&rmsg_live[RMSG_LIVE_ENDPOINTS]);
}

/**
 * rmsg_user_chan_add() - count a new channel of @ep against its owner
 * @ep: the endpoint
 *
 * Return: false when the owner has max_channels_per_user channels.
 */
bool rmsg_user_chan_add(struct rmsg_endpoint *ep)
{
	/* The module's own endpoints (rmsg_ep_create_kernel()) have none. */
	if (!ep->owner)
		return true;
	if (!rmsg_user_take(&ep->owner->channels,
			    READ_ONCE(max_channels_per_user), ep->unlimited))
		return false;
	atomic_long_inc(&rmsg_live[RMSG_LIVE_CHANNELS]);
	return true;
}

void rmsg_user_chan_del(struct rmsg_endpoint *ep)
{
	if (!ep->owner)
		return;
	atomic_dec(&ep->owner->channels);
	atomic_long_dec(&rmsg_live[RMSG_LIVE_CHANNELS]);
}

/**
 * rmsg_user_sqpoll_add() - count a kernel poller of @ep against its owner
 * @ep: the endpoint
 * @idle_ms: in: the idle period asked for (0: the default); out: capped
 *	at sqpoll_user_idle_ms for a caller without CAP_SYS_NICE
 *
 * A poller spins on a CPU while there is work and for @idle_ms after, in
 * the caller's cgroups (rmsg_sqpoll.c). Who may raise priorities may have
 * any number; anyone else sqpoll_per_user at once, that sleep soon.
 *
 * Return: 0; -EPERM when sqpoll_per_user is 0 and the caller lacks
 * CAP_SYS_NICE; -EBUSY when its owner has sqpoll_per_user pollers.
 */
int rmsg_user_sqpoll_add(struct rmsg_endpoint *ep, u32 *idle_ms)
{
	unsigned int max = READ_ONCE(sqpoll_per_user);

	if (capable(CAP_SYS_NICE)) {
		atomic_inc(&ep->owner->pollers);
		return 0;
	}
	if (!max)
		return -EPERM;
	if (!rmsg_user_take(&ep->owner->pollers, max, false))
		return -EBUSY;
	*idle_ms = min(*idle_ms ?: RMSG_SQPOLL_IDLE_DEFAULT_MS,
		       max(READ_ONCE(sqpoll_user_idle_ms), 1U));
	return 0;
}

/* The poller of @ep is gone. */
void rmsg_user_sqpoll_del(struct rmsg_endpoint *ep)
{
	atomic_dec(&ep->owner->pollers);
}

/* Pages rmsg allocated (rmsg_pages.c), in the live count. */
void rmsg_kernel_pages_add(unsigned long npages)
{
	atomic_long_add(npages, &rmsg_live[RMSG_LIVE_KERNEL_PAGES]);
}

void rmsg_kernel_pages_sub(unsigned long npages)
{
	atomic_long_sub(npages, &rmsg_live[RMSG_LIVE_KERNEL_PAGES]);
}

static int rmsg_objects_show(struct seq_file *m, void *unused)
{
	int i;

	for (i = 0; i < RMSG_LIVE_NR; i++)
		seq_printf(m, "%s %ld\n", rmsg_live_names[i],
			   atomic_long_read(&rmsg_live[i]));
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(rmsg_objects);

void rmsg_user_init(void)
{
	if (max_channels_per_user == RMSG_CHANNELS_PER_USER_AUTO)
		max_channels_per_user =
			max_t(unsigned long, RMSG_CHANNELS_PER_USER_MIN,
			      totalram_pages() >>
			      (RMSG_RAM_PER_CHANNEL_SHIFT - PAGE_SHIFT));
	/* Only the leak checks need it: no failure is fatal. */
	rmsg_debugfs = debugfs_create_dir(KBUILD_MODNAME, NULL);
	debugfs_create_file("objects", 0444, rmsg_debugfs, NULL,
			    &rmsg_objects_fops);
}

/*
 * Unload: no file is open, so every endpoint, channel and mapping is
 * gone, and every transfer has put its region. Anything still counted
 * leaked.
 */
void rmsg_user_exit(void)
{
	int i;

	debugfs_remove_recursive(rmsg_debugfs);
	for (i = 0; i < RMSG_LIVE_NR; i++)
		WARN(atomic_long_read(&rmsg_live[i]),
		     "rmsg: %ld %s left at unload\n",
		     atomic_long_read(&rmsg_live[i]), rmsg_live_names[i]);
}
