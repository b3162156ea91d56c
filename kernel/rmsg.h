/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rmsg: internal declarations shared by the module's files.
 */
#ifndef _RMSG_H
#define _RMSG_H

#include <linux/types.h>
#include <linux/fs.h>
#include <linux/rwsem.h>
#include <linux/list.h>
#include <linux/atomic.h>
#include <linux/kref.h>
#include <linux/log2.h>
#include <linux/mutex.h>
#include <linux/pid.h>
#include <linux/sched/mm.h>
#include <linux/poll.h>
#include <linux/string.h>
#include <linux/uidgid.h>
#include <linux/workqueue.h>
#include <linux/wait.h>
#include <rdma/ib_verbs.h>
#include <rdma/rmsg.h>

/**
 * struct rmsg_device - an RDMA device rmsg has seen through its ib_client
 * @node: entry in the device list, under rmsg_devices_lock
 * @ibdev: the RDMA core's device; valid until rmsg_ib_remove() returns
 * @event_handler: receives port and device events (any context)
 * @fatal_events: IB_EVENT_DEVICE_FATAL events seen
 * @fatal_work: takes the channels off the device after such an event
 * @active_work: tells the layers above that a port became active
 * @lock: guards @channels and @dying
 * @channels: channels whose connection runs on the device
 * @dying: the device is being removed; no channel may attach
 * @wq: woken when a channel detaches
 * @nports: ports on the device
 * @port_events: per-port event counts, index port number - 1
 */
struct rmsg_device {
	struct list_head node;
	struct ib_device *ibdev;
	struct ib_event_handler event_handler;
	atomic_t fatal_events;
	struct work_struct fatal_work;
	struct work_struct active_work;
	struct mutex lock;
	struct list_head channels;
	/* Retired rdma_cm ids waiting for a port to come up: rmsg_parked_id */
	struct list_head parked;
	struct delayed_work parked_work;
	bool dying;
	wait_queue_head_t wq;
	u32 nports;
	atomic_t port_events[];
};

/**
 * struct rmsg_device_watch - what the layers above do when devices change
 * @added: a device came, or a port of one became active again; channels
 *	being repaired may reach their peers by it
 * @removed: @rdev is going: nothing of rmsg may be left on it on return
 * @fatal: @rdev had a fatal error and stays registered; process context
 *
 * rmsg_main.c hands rmsg_devices_init() the channel layer's and the
 * registry's functions, so that the device layer calls up through this
 * table alone, and no file of the layers above needs to be known here.
 */
struct rmsg_device_watch {
	void (*added)(void);
	void (*removed)(struct rmsg_device *rdev);
	void (*fatal)(struct rmsg_device *rdev);
};

int rmsg_devices_init(const struct rmsg_device_watch *watch);
void rmsg_devices_exit(void);
u32 rmsg_devices_count(void);
struct rmsg_device *rmsg_device_attach(struct ib_device *ibdev,
				       struct list_head *node);
bool rmsg_device_detach(struct rmsg_device *rdev, struct list_head *node);
void rmsg_device_fatal(struct rmsg_device *rdev);
struct rdma_cm_id;
bool rmsg_cm_id_port_down(struct rdma_cm_id *id);
void rmsg_cm_id_disconnect(struct rdma_cm_id *id);
void rmsg_cm_id_retire(struct rdma_cm_id *id);
struct net;
struct rmsg_addrs;
void rmsg_local_addrs(struct net *net, bool v6, struct rmsg_addrs *out);
struct sockaddr_storage;
bool rmsg_addr_on_link(struct net *net, const struct sockaddr_storage *ss);
int rmsg_devices_list(struct rmsg_dev_info *out, u32 capacity, u32 *total,
		      u32 *generation);

/* What RMSG_IOC_VERSION and RMSG_IOC_EP_SETUP announce. */
#define RMSG_FEATURES		(RMSG_FEAT_DEV_LIST | RMSG_FEAT_RINGS | \
				 RMSG_FEAT_SQPOLL | RMSG_FEAT_CHANNELS | \
				 RMSG_FEAT_EAGER | RMSG_FEAT_RNDV | \
				 RMSG_FEAT_CHAN_LIST | RMSG_FEAT_FAULT | \
				 RMSG_FEAT_REPAIR | RMSG_FEAT_STALL_EVENTS | \
				 RMSG_FEAT_CHAN_ADDR | RMSG_FEAT_CHAN_OPTS | \
				 RMSG_FEAT_ENTER_COUNT | RMSG_FEAT_RNDV_PIN | \
				 RMSG_FEAT_SQPOLL_USER | \
				 RMSG_FEAT_CONNECT_TIMEOUT | \
				 RMSG_FEAT_ENTER_LEND | RMSG_FEAT_SUMMARY | \
				 RMSG_FEAT_LINKS | RMSG_FEAT_LEASE | \
				 RMSG_FEAT_BLOCK_WINDOW)

/*
 * Flags and reserved fields of the ABI must be zero. Those checked per
 * submission (an SQE's, ENTER's) are a few whole words: ORed inline, not
 * scanned a byte at a time.
 */
static inline bool rmsg_all_zero(const void *p, size_t len)
{
	const u8 *b = p;
	u64 acc = 0, w;
	size_t i;

	if (__builtin_constant_p(len) && len <= 32 && !(len % 8)) {
		for (i = 0; i < len; i += 8) {
			memcpy(&w, b + i, sizeof(w));
			acc |= w;
		}
		return !acc;
	}
	return !memchr_inv(p, 0, len);
}

/**
 * struct rmsg_ep_ring - one ring of an endpoint, as the kernel sees it
 * @pages: the ring's pages, which the program maps (rmsg_pages_mmap())
 * @mem: the kernel's mapping of @pages (vmap())
 * @mmap_size: bytes of @mem, a multiple of PAGE_SIZE
 * @producer: producer index in @mem
 * @consumer: consumer index in @mem
 * @flags: flags word in @mem
 * @descs: descriptor array in @mem
 * @entries: ring size, a power of two
 *
 * Everything @mem holds may be rewritten by the program at any time.
 */
struct rmsg_ep_ring {
	struct rmsg_pages *pages;
	void *mem;
	size_t mmap_size;
	u32 *producer;
	u32 *consumer;
	u32 *flags;
	void *descs;
	u32 entries;
};

/* Counters of struct rmsg_ep_stats after bad_index and bad_desc. */
enum rmsg_ep_stat {
	RMSG_STAT_SENDS,
	RMSG_STAT_SEND_WAITS,
	RMSG_STAT_WRITES_INLINE,
	RMSG_STAT_WRITES_SIGNALLED,
	RMSG_STAT_WRAPS,
	RMSG_STAT_CREDITS_OUT,
	RMSG_STAT_CREDITS_IN,
	RMSG_STAT_WAKES_OUT,
	RMSG_STAT_WAKES_IN,
	RMSG_STAT_IMM_ARRIVALS,
	RMSG_STAT_REKEYS_OUT,
	RMSG_STAT_REKEYED_IN,
	RMSG_STAT_EVENTS_DROPPED,
	RMSG_STAT_ENTERS,
	RMSG_STAT_NR,
};

struct rmsg_endpoint;

/**
 * struct rmsg_ep_kops - what the module's own endpoints do with events
 * @event: a channel's event (struct rmsg_cqe as a program would read it),
 *	in process context, from the channel's work or an ioctl's caller,
 *	maybe under the endpoint's chan_lock: it may not take that lock,
 *	nor wait for the channel
 */
struct rmsg_ep_kops {
	void (*event)(struct rmsg_endpoint *ep, const struct rmsg_cqe *cqe);
};

/**
 * struct rmsg_endpoint - one open /dev/rmsg: its submission and completion
 *	rings
 * @submit_lock: one submitter at a time (ENTER or the poller): held
 *	across a whole rmsg_ep_submit(), which drops @lock while it pins
 *	program memory; outside @lock and every channel lock
 * @pinned: what rmsg_ep_submit() pinned, outside @lock, for the SQE it is
 *	running (a region, an ERR_PTR() or NULL); under @submit_lock
 * @lock: serialises setup and submission; never held across an access to
 *	program memory (page faults), since rdma_cm handlers take it
 * @wq: woken when CQEs are posted (poll and RMSG_ENTER_GETEVENTS)
 * @ready: the rings exist; set once, with release, under @lock
 * @sq: submission ring
 * @cq: completion ring
 * @sq_cons: the kernel's SQ consumer index, under @lock
 * @sq_prod: the last SQ producer index accepted, under @lock
 * @cq_prod: the kernel's CQ producer index, written under @lock
 * @cq_cons: the last CQ consumer index accepted, under @lock
 * @bad_index: impossible indices the program wrote
 * @bad_desc: SQEs rejected with -EINVAL
 * @sqpoll: the kernel submission poller (RMSG_EP_F_SQPOLL) or NULL; set
 *	under @lock before @ready, cleared by release (rmsg_sqpoll.c)
 * @chan_lock: guards @channels, @listener, @dying and every channel's
 *	state (rmsg_lifecycle.c)
 * @channels: the endpoint's channels by id
 * @listener: the listening rdma_cm id, or NULL
 * @dying: release has begun; no new channel
 * @nr_channels: channels not yet freed
 * @chan_wq: woken when @nr_channels drops to zero
 * @incarnation: random, never 0: tells this endpoint from a later one
 * @overflow: events that found the completion ring full, under @lock
 * @overflow_len: entries on @overflow
 * @cq_reserved: completion ring entries owed to SENDs in flight, under
 *	@lock; submission leaves them free
 * @area: the send area, or NULL; set once under @lock before @ready
 * @area_size: its bytes
 * @summary: the arrival summary (RMSG_OFF_SUMMARY), or NULL without
 *	RMSG_EP_F_SUMMARY; set once under @lock before @ready. Every
 *	channel's block MR maps it first, at offset 0, so that peers can set
 *	a channel's bytes
 * @area_maps: the send area as each device of a channel sees it, under
 *	@chan_lock (rmsg_data.c)
 * @sig_owed: channels whose last write of this batch needs signalling,
 *	under @lock (rmsg_data.c)
 * @stats: enum rmsg_ep_stat counters, bumped from any context
 * @regions: memory regions by handle, from 1, under their own xa_lock
 *	(rmsg_region.c)
 * @id: global id, from 1, while in the registry of rmsg_ctl.c
 * @tgid: the opener's thread group (a reference)
 * @uid: the opener's effective uid: who may list the endpoint's channels
 * @stall_events: RMSG_EP_F_STALL_EVENTS: report long repairs (fixed at
 *	setup, before any channel)
 * @stall_ms: the quiet period it asked for, 0 for the module's
 *	and inject faults into them
 * @owner: the user @uid, whose endpoints and channels are counted
 *	(rmsg_user.c)
 * @unlimited: the opener had CAP_SYS_RESOURCE: no per-user counts apply
 * @pin_mm: the memory the poller's transfers from no region pin: that of
 *	the task that started the poller (grabbed while it runs), NULL
 *	without a poller (rmsg_sqpoll.c, rmsg_region.c)
 * @pin_limit: that task's RLIMIT_MEMLOCK in pages, ULONG_MAX when it had
 *	CAP_IPC_LOCK
 * @kops: a kernel endpoint's (rmsg_ep_create_kernel()): where its
 *	channels' events go; NULL for a program's
 * @kpriv: for @kops
 * @block_mapping: the address space of the endpoint's file (its
 *	f_mapping; the misc device's inode, and so its own, is every
 *	endpoint's), so that a leased block can be taken out of the
 *	program's mappings of this endpoint alone (unmap_mapping_range())
 * @block_map_lock: the fault of a leased block's mapping holds it for
 *	reading while it puts a page in; a new block is published, and the
 *	range zapped, under it for writing (rmsg_conn.c); so are the block
 *	window's slots (rmsg_window.c). Taken under chan_lock, never the
 *	other way round.
 * @window: the block window (rmsg_window.c), made by its first mapping,
 *	NULL before; read with smp_load_acquire(), never changed again
 *	until the endpoint is destroyed
 */
struct rmsg_region;
struct rmsg_block_window;

/*
 * How many ended channels' ids an endpoint holds back (struct
 * rmsg_endpoint's @quarantine): a program that reads its events in order
 * and names a channel it has not yet seen end cannot reach another
 * channel by that id unless it lags RMSG_ID_QUARANTINE ends behind.
 */
#define RMSG_ID_QUARANTINE	64

struct rmsg_endpoint {
	struct mutex submit_lock;
	struct rmsg_region *pinned;
	struct mutex lock;
	wait_queue_head_t wq;
	bool ready;
	struct rmsg_ep_ring sq;
	struct rmsg_ep_ring cq;
	u32 sq_cons;
	u32 sq_prod;
	u32 cq_prod;
	u32 cq_cons;
	atomic_long_t bad_index;
	atomic_long_t bad_desc;
	struct rmsg_sqpoll *sqpoll;
	struct mutex chan_lock;
	struct xarray channels;
	/*
	 * The ids of the last RMSG_ID_QUARANTINE channels whose end the
	 * program was told of, oldest first from @quarantine_head: still
	 * reserved in @channels (a NULL entry, which lookups do not find),
	 * so that no new channel takes one while the program may still name
	 * the old one. Under @chan_lock.
	 */
	u32 quarantine[RMSG_ID_QUARANTINE];
	u32 quarantine_head;
	u32 quarantine_len;
	struct rmsg_listener *listener;
	bool dying;
	atomic_t nr_channels;
	wait_queue_head_t chan_wq;
	u64 incarnation;
	struct list_head overflow;
	u32 overflow_len;
	u32 cq_reserved;
	struct rmsg_pages *area;
	u32 area_size;
	struct rmsg_pages *summary;
	struct list_head area_maps;
	struct list_head sig_owed;
	struct list_head room_held;
	atomic64_t stats[RMSG_STAT_NR];
	struct xarray regions;
	u32 id;
	struct pid *tgid;
	/* The opener's memory cgroup, charged for what work items allocate. */
	struct mem_cgroup *memcg;
	kuid_t uid;
	bool stall_events;
	u32 stall_ms;
	struct rmsg_user *owner;
	bool unlimited;
	struct mm_struct *pin_mm;
	unsigned long pin_limit;
	const struct rmsg_ep_kops *kops;
	void *kpriv;
	struct address_space block_mapping;
	struct rw_semaphore block_map_lock;
	struct rmsg_block_window *window;
};

/*
 * What rmsg allocates for an endpoint with __GFP_ACCOUNT in work items and
 * rdma_cm handlers (receive blocks, shadows, trailers, rendezvous tables)
 * is charged to the memory cgroup of the endpoint's opener, not to the
 * kernel thread's: between these two calls.
 */
/*
 * Charged to the opener's memory cgroup, and failing (ENOMEM) at its limit
 * instead of calling its OOM killer, which may have nobody to kill: a new
 * channel is refused, the rest go on.
 */
#define RMSG_GFP_CHARGED	(GFP_KERNEL_ACCOUNT | __GFP_NORETRY | __GFP_NOWARN)

static inline struct mem_cgroup *rmsg_ep_charge_begin(struct rmsg_endpoint *ep)
{
	return set_active_memcg(ep->memcg);
}

static inline void rmsg_ep_charge_end(struct mem_cgroup *old)
{
	set_active_memcg(old);
}

static inline void rmsg_ep_count(struct rmsg_endpoint *ep,
				 enum rmsg_ep_stat stat)
{
	atomic64_inc(&ep->stats[stat]);
}

/* rmsg_user.c: per-user bounds, memory charges, live objects */
enum rmsg_live {
	RMSG_LIVE_USERS,
	RMSG_LIVE_ENDPOINTS,
	RMSG_LIVE_CHANNELS,
	RMSG_LIVE_REGIONS,
	RMSG_LIVE_REGION_PAGES,
	RMSG_LIVE_KERNEL_PAGES,
	RMSG_LIVE_NR,
};

extern atomic_long_t rmsg_live[RMSG_LIVE_NR];

struct user_struct;

void rmsg_user_init(void);
void rmsg_user_exit(void);
int rmsg_user_open(struct rmsg_endpoint *ep);
void rmsg_user_close(struct rmsg_endpoint *ep);
bool rmsg_user_chan_add(struct rmsg_endpoint *ep);
void rmsg_user_chan_del(struct rmsg_endpoint *ep);
int rmsg_user_sqpoll_add(struct rmsg_endpoint *ep, u32 *idle_ms);
void rmsg_user_sqpoll_del(struct rmsg_endpoint *ep);
void rmsg_kernel_pages_add(unsigned long npages);
void rmsg_kernel_pages_sub(unsigned long npages);

struct rmsg_endpoint *rmsg_ep_create(void);
struct rmsg_endpoint *rmsg_ep_create_kernel(const struct rmsg_ep_kops *kops,
					    void *priv);
void rmsg_ep_destroy(struct rmsg_endpoint *ep);

/*
 * The module's own endpoint (rmsg_ep_create_kernel(); the links', the only
 * one): its channels are the carriers of links, and only its.
 */
static inline bool rmsg_ep_is_module(const struct rmsg_endpoint *ep)
{
	return ep->kops;
}

long rmsg_ep_setup(struct rmsg_endpoint *ep, void __user *uarg);
long rmsg_ep_enter(struct rmsg_endpoint *ep, void __user *uarg);
int rmsg_ep_mmap(struct rmsg_endpoint *ep, struct vm_area_struct *vma);
__poll_t rmsg_ep_poll(struct rmsg_endpoint *ep, struct file *file,
		      poll_table *wait);
long rmsg_ep_get_stats(struct rmsg_endpoint *ep, void __user *uarg);

int rmsg_sqpoll_start(struct rmsg_endpoint *ep, u32 idle_ms);
void rmsg_sqpoll_stop(struct rmsg_endpoint *ep);
void rmsg_sqpoll_wake(struct rmsg_endpoint *ep);

/**
 * struct rmsg_pages - pages a program maps and a device may use
 * @ref: the owner's reference and one per mapping of the pages
 * @npages: pages in @pages
 * @pages: zeroed order-0 pages, physically contiguous by chunk
 *
 * The pages are put, and their memory cgroup charge given back, when the
 * last reference goes: a program's mapping holds one, so the charge lasts
 * as long as the program can reach the pages.
 */
struct rmsg_pages {
	struct kref ref;
	u32 npages;
	struct page *pages[];
};

/**
 * struct rmsg_block_view - what the mappings of a leased block show
 * @ref: the channel's, until it ends, and one per mapping (vm_ops open
 *	and close): a mapping keeps the view, and the view its block
 * @block: the block of the lease out, with a reference of the view's;
 *	after the channel ended, its last block, so that what arrived in it
 *	can still be read through a mapping, as from a block that is not
 *	leased; NULL while the channel has no block. Written under the
 *	endpoint's block_map_lock for writing (rmsg_conn.c, with a zap of
 *	the mappings), read by the fault handler under it for reading.
 *
 * One per leased channel, never shared: a mapping of a channel that
 * ended never shows the block of another that took its id.
 */
struct rmsg_block_view {
	struct kref ref;
	struct rmsg_pages *block;
};

/*
 * The send area comes in physically contiguous 64 KiB chunks: a message,
 * at most RMSG_VB_MAX_PAYLOAD bytes, then spans at most two, and the
 * device reads it with at most two scatter-gather entries.
 */
#define RMSG_AREA_CHUNK		RMSG_SEND_AREA_ALIGN
#define RMSG_AREA_CHUNK_ORDER	(ilog2(RMSG_AREA_CHUNK) - PAGE_SHIFT)

struct rmsg_pages *rmsg_pages_new(u32 size, unsigned int order);
void rmsg_pages_put(struct rmsg_pages *p);
void rmsg_summary_mark(struct rmsg_pages *summary, u32 channel);
struct rmsg_block_view *rmsg_block_view_new(void);
void rmsg_block_view_put(struct rmsg_block_view *v);
int rmsg_pages_mmap(struct rmsg_pages *p, struct vm_area_struct *vma,
		    bool writable);

/* rmsg_window.c: the block window (RMSG_OFF_WINDOW) */
int rmsg_window_mmap(struct rmsg_endpoint *ep, struct vm_area_struct *vma);
bool rmsg_window_fits(struct rmsg_endpoint *ep, u32 block_size);
int rmsg_window_reserve(struct rmsg_endpoint *ep, u32 id);
struct rmsg_pages *rmsg_window_set(struct rmsg_endpoint *ep, u32 id,
				   struct rmsg_pages *block);
struct rmsg_pages *rmsg_window_clear(struct rmsg_endpoint *ep, u32 id);
bool rmsg_window_held(struct rmsg_endpoint *ep, u32 id);
void rmsg_window_hold(struct rmsg_endpoint *ep, u32 id);
void rmsg_window_unhold(struct rmsg_endpoint *ep, u32 id);
void rmsg_window_free(struct rmsg_endpoint *ep);

int rmsg_cdev_init(void);
void rmsg_cdev_exit(void);

struct rmsg_listener;

bool rmsg_data_exec(struct rmsg_endpoint *ep, const struct rmsg_sqe *sqe,
		    const struct rmsg_sqe *next, struct rmsg_cqe *cqe);
void rmsg_data_batch_end(struct rmsg_endpoint *ep);
bool rmsg_device_ordered(struct ib_device *ibdev);
struct ib_mr *rmsg_alloc_mr(struct ib_pd *pd, u32 pages);

static inline bool rmsg_ep_ready(struct rmsg_endpoint *ep)
{
	/* The rings exist; pairs with the store-release at the end of setup. */
	return smp_load_acquire(&ep->ready);
}

/* rmsg_ctl.c: the endpoint registry, RMSG_IOC_CHAN_LIST, RMSG_IOC_FAULT */
int rmsg_ctl_register(struct rmsg_endpoint *ep);
void rmsg_ctl_unregister(struct rmsg_endpoint *ep);
long rmsg_ctl_chan_list(struct rmsg_endpoint *ep, void __user *uarg);
long rmsg_ctl_fault(struct rmsg_endpoint *ep, void __user *uarg);
void rmsg_ctl_device_added(void);

long rmsg_chan_listen(struct rmsg_endpoint *ep, void __user *uarg);

/**
 * struct rmsg_listen_args - what a listener is made with
 *	(rmsg_listen_start())
 * @net: the network namespace (the listener takes its own reference)
 * @addr: the address to bind, then the address bound
 * @manual: RMSG_LISTEN_F_ACCEPT
 * @user_data: for the events of accepted channels
 * @block_size: the receive block of accepted channels, checked
 * @peer_block_max: the largest block a peer may announce, 0 for the
 *	default
 * @backlog: rdma_listen()'s, 0 for the default
 * @opts: the settings of accepted channels, checked
 */
struct rmsg_listen_args {
	struct net *net;
	struct sockaddr_storage addr;
	bool manual;
	u64 user_data;
	u32 block_size;
	u32 peer_block_max;
	u32 backlog;
	struct rmsg_chan_opts opts;
};
int rmsg_listen_start(struct rmsg_endpoint *ep, struct rmsg_listen_args *la);
void rmsg_chan_unlisten(struct rmsg_endpoint *ep);
struct rmsg_listener;
void rmsg_listen_registry_lock(void);
void rmsg_listen_registry_unlock(void);
struct rmsg_listener *rmsg_listen_find(const struct net *net, u16 port,
				       const struct sockaddr *local);
struct rmsg_carrier;
/* Finds a link to a peer for a dial (rmsg_link_carrier()). */
typedef struct rmsg_carrier *(*rmsg_link_find_fn)(struct net *net,
				const struct sockaddr_storage *addr);
long rmsg_chan_connect(struct rmsg_endpoint *ep, void __user *uarg,
		       struct sockaddr_storage *dst, rmsg_link_find_fn find);

/**
 * struct rmsg_dial - what a channel is dialled with (rmsg_chan_dial())
 * @net: the network namespace (the channel takes its own reference)
 * @dst: the peer's address and port
 * @block_size: the receive block, checked (rmsg_vb_check_block())
 * @timeout_ms: address and route resolution, 0 for resolve_timeout_ms
 * @user_data: for the channel's events
 * @opts: the channel's own settings, checked
 * @carrier: a link whose connection is up to put the channel on, or NULL
 *	for a connection of its own (then it has an rdma_cm id from the start)
 */
struct rmsg_dial {
	struct net *net;
	struct sockaddr_storage dst;
	u32 block_size;
	u32 timeout_ms;
	u64 user_data;
	struct rmsg_chan_opts opts;
	struct rmsg_carrier *carrier;
};
struct rmsg_channel *rmsg_chan_dial(struct rmsg_endpoint *ep,
				    const struct rmsg_dial *d);
int rmsg_chan_dial_start(struct rmsg_channel *ch,
			 const struct sockaddr_storage *src);
void rmsg_chan_dial_abort(struct rmsg_channel *ch);
long rmsg_chan_close(struct rmsg_endpoint *ep, void __user *uarg);
long rmsg_chan_accept(struct rmsg_endpoint *ep, void __user *uarg);
long rmsg_chan_addr(struct rmsg_endpoint *ep, void __user *uarg);
long rmsg_chan_set(struct rmsg_endpoint *ep, void __user *uarg);
long rmsg_chan_drop(struct rmsg_endpoint *ep, void __user *uarg);
int rmsg_chan_mmap(struct rmsg_endpoint *ep, struct vm_area_struct *vma);
void rmsg_chan_release_all(struct rmsg_endpoint *ep);
void rmsg_chan_device_removed(struct rmsg_device *rdev);
void rmsg_chan_device_fatal(struct rmsg_device *rdev);
void rmsg_chan_device_added(struct rmsg_endpoint *ep);

#endif /* _RMSG_H */
