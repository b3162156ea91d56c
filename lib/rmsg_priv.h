/* SPDX-License-Identifier: LGPL-2.1-or-later OR BSD-2-Clause */
/*
 * librmsg internal: what the library keeps per endpoint and per channel for
 * eager messages (Documentation/messages.rst). Not installed.
 */
#ifndef _RMSG_PRIV_H
#define _RMSG_PRIV_H

#include <pthread.h>
#include <stddef.h>
#include <stdbool.h>

#include "rmsg.h"
#include "rmsg_area.h"
#include "rmsg_vb.h"

#pragma GCC visibility push(hidden)

/*
 * An endpoint (opaque to programs). It begins with its rings: the inline
 * helpers of rmsg.h reach them through rmsg_ep_rings(), a cast, so they
 * stay first for as long as the soname does. Anything may follow.
 */
struct rmsg_ep {
	struct rmsg_rings rings;
	int fd;
	struct rmsg_ep_data *data;
};
_Static_assert(offsetof(struct rmsg_ep, rings) == 0,
	       "rmsg_ep_rings() casts the endpoint to its rings");

/*
 * The library owns the user_data of the SQEs it submits and tags them, so
 * that a completion says what it completes without a lookup: bits 63..32
 * are RMSG_TAG_MAGIC, 31..28 the operation, 27..0 its value (SEND: the
 * payload's send-area offset, below RMSG_SEND_AREA_MAX; CREDIT, ARM: the
 * channel, below RMSG_MAX_CHANNELS; SEND_RNDV, RECV_RNDV: an index in the
 * endpoint's table of rendezvous operations, or one of the two values
 * below for the library's own answers). The program's user_data of a send
 * waits in the send area's record header meanwhile, that of a rendezvous
 * operation in its table entry.
 */
#define RMSG_TAG_MAGIC		0x726d7367ULL	/* "rmsg" */
#define RMSG_TAG(op, val)	(RMSG_TAG_MAGIC << 32 | (__u64)(op) << 28 | \
				 ((val) & 0xfffffffU))
#define RMSG_TAG_IS_LIB(ud)	((ud) >> 32 == RMSG_TAG_MAGIC)
#define RMSG_TAG_OP(ud)		((unsigned int)((ud) >> 28) & 0xf)
#define RMSG_TAG_VAL(ud)	((__u32)(ud) & 0xfffffffU)
/*
 * In a SEND's value, whose send-area offset is a multiple of
 * RMSG_AREA_ALIGN: the program sent with RMSG_SEND_SKIP_SUCCESS.
 */
#define RMSG_TAG_SEND_QUIET	0x1U

/* RECV_RNDV tags of the library's own answers (no table entry). */
#define RMSG_RV_TAG_DISCARD	0xfffffffU	/* a message released unanswered */
#define RMSG_RV_TAG_BOUNCE	0xffffffeU	/* rmsg_msg_recv()'s bounce region */
#define RMSG_RV_OPS_MAX		0x1000000U	/* table entries at most */

/*
 * Rendezvous messages of a channel the program has seen but not answered,
 * at most: the sender's kernel has at most RMSG_RNDV_WINDOW (8) announced
 * and unfinished, and a transfer finishes only once answered.
 */
#define RMSG_RV_RING		16

/* rmsg_chan.state */
enum rmsg_chan_state {
	RMSG_CH_FREE = 0,	/* no channel the library knows of */
	RMSG_CH_OPEN,		/* open: send, receive, arm */
	RMSG_CH_CLOSED,		/* CLOSED seen: the rest can still be read */
	RMSG_CH_DEAD,		/* aborted by the library; CLOSED will say */
};

/**
 * struct rmsg_chan - the library's side of one channel
 * @rx: receive-block state; its consumed counter is the peek position
 * @peeked_from: @rx's reading position before the last message peeked,
 *	which rmsg_msg_unpeek() goes back to
 * @block: the receive block, mapped read-only, or NULL
 * @map_len: length of that mapping; 0 for a block in the window
 * @in_window: the kernel put the channel's block in the endpoint's block
 *	window (RMSG_CQE_F_WINDOW): @block points there, and the id is held
 *	after the channel's end until the library drops it (RMSG_IOC_CHAN_DROP)
 * @max_msg: the largest message this side may send (the event's aux)
 * @inflight: SENDs submitted whose completion has not been seen
 * @err: the error that stops reading (-EPROTO), else 0
 * @slot: index in rmsg_ep_data.active while @block is mapped
 * @state: enum rmsg_chan_state
 * @closing: the program closed it (rmsg_chan_close()): sends fail with
 *	-ENOTCONN at once, what arrived can still be read until CLOSED
 * @armed: an ARM is outstanding (its READABLE not yet seen)
 * @to_arm: the id is on rmsg_ep_data.unarmed, at @arm_slot
 * @arm_slot: see @to_arm
 * @credit_owed: a credit update is due but found no SQE
 * @rv_owed: discards are due (@rv_drop past @rv_answer) but found no SQE
 * @rv_refused: answers the kernel refused since the last one it took
 * @rv_seen: cookie after the last rendezvous message peeked
 * @rv_answer: cookie of the next rendezvous message to answer
 * @rv_drop: rendezvous messages before this cookie are released; those of
 *	them not answered yet are discarded by the library
 * @rv_end: the end (rmsg_msg.end) of each rendezvous message peeked, by
 *	cookie % RMSG_RV_RING
 * @rv_own: the channel has its own rendezvous threshold, @rv_thresh
 *	(rmsg_chan_set_rndv_threshold()), instead of the endpoint's
 * @rv_thresh: that threshold
 */
struct rmsg_chan {
	struct rmsg_vb_rx rx;
	struct rmsg_vb_rx peeked_from;
	const unsigned char *block;
	size_t map_len;
	bool in_window;
	__u32 max_msg;
	__u32 inflight;
	int err;
	__u32 slot;
	__u32 arm_slot;
	__u8 state;
	__u8 closing;
	__u8 armed;
	__u8 to_arm;
	__u8 credit_owed;
	__u8 rv_owed;
	__u8 rv_refused;
	__u32 rv_seen;
	__u32 rv_answer;
	__u32 rv_drop;
	__u32 rv_end[RMSG_RV_RING];
	bool rv_own;
	size_t rv_thresh;
	/*
	 * The program's connect holds the id, its CONNECTED still to come
	 * with @dial_ud: kept across rmsg_chan_drop() (rmsg_chan_dialed()).
	 */
	bool dialing;
	__u64 dial_ud;
};

/**
 * struct rmsg_rv_region - a region the program registered on the endpoint
 * @addr: its first byte
 * @len: its bytes
 * @handle: the kernel's handle
 */
struct rmsg_rv_region {
	uintptr_t addr;
	size_t len;
	__u32 handle;
};

/* rmsg_rv_op.type */
enum rmsg_rv_op_type {
	RMSG_RVOP_FREE = 0,
	RMSG_RVOP_SEND,		/* rmsg_msg_send_zc() or a rendezvous rmsg_msg_send() */
	RMSG_RVOP_RECV,		/* rmsg_msg_recv_into() */
};

/**
 * struct rmsg_rv_op - a rendezvous operation whose CQE is outstanding
 * @user_data: the program's
 * @next_free: FREE: index + 1 of the next free entry, 0 for none
 * @type: enum rmsg_rv_op_type
 * @copy: a gather's bytes copied by the library (rmsg_msg_sendv()), freed
 *	with the entry; else NULL
 * @quiet: a send made with RMSG_SEND_SKIP_SUCCESS: a success is no event
 */
struct rmsg_rv_op {
	__u64 user_data;
	__u32 next_free;
	__u32 type;
	void *copy;
	bool quiet;
};

/**
 * struct rmsg_bounce - rmsg_msg_recv()'s region for rendezvous messages
 * @map: its memory (mmap), or NULL
 * @len: its bytes
 * @handle: its region
 * @busy: a message was answered into it and not collected yet
 * @done: that transfer's CQE came
 * @gone: the program released the message meanwhile: free on the CQE
 * @res: the CQE's res
 * @channel: the message's channel
 * @cookie: its cookie
 * @start: the channel's peek position before the message
 * @end: the message's end
 */
struct rmsg_bounce {
	void *map;
	size_t len;
	__u32 handle;
	bool busy;
	bool done;
	bool gone;
	int res;
	__u32 channel;
	__u32 cookie;
	__u32 start;
	__u32 end;
};

/**
 * struct rmsg_ep_data - the library's state of one endpoint
 * @chans: channel table, indexed by id, grown on demand
 * @nchans: entries in @chans
 * @active: ids of the channels with a mapped block, in no order
 * @nactive: entries used in @active
 * @active_cap: entries allocated in @active
 * @next: with a summary, the channel of @active the next sweep looks at
 *	whatever the summary says (a peer may clear bytes it should not);
 *	without, where rmsg_msg_peek_any() looks first in @active
 * @summary: the arrival summary (RMSG_OFF_SUMMARY) of an endpoint set up
 *	with RMSG_EP_F_SUMMARY, else NULL: every open channel is looked at
 * @maybe: by group of 64 ids, the channels to look at whatever the
 *	summary says: news the library learnt itself (an event, an unpeek)
 *	or a channel that had a message at its last look
 * @maybe_groups: a bit per group whose @maybe is not zero
 * @maybe_words: a bit per word of @maybe_groups that is not zero, so that
 *	an empty search learns there is nothing the library knows of in one
 *	load, whatever the number of channels
 * @group_next: by group, the bit where its next look starts (turns)
 * @group_start: the group where the next look for a message starts
 * @empty_polls: searches that found nothing, for rmsg_sweep()
 * @unarmed: ids of channels that may need an ARM (@to_arm set), so that
 *	arming costs what changed, not the number of channels
 * @nunarmed: entries used in @unarmed
 * @unarmed_cap: entries allocated in @unarmed
 * @owed: channels with credit_owed set
 * @area: allocator over the send area
 * @area_map: the send area's mapping, or NULL
 * @area_len: its length
 * @resv: a reservation of rmsg_msg_reserve() waits for rmsg_msg_commit()
 * @resv_chan: its channel
 * @resv_off: its payload offset in the send area
 * @resv_len: its bytes
 * @features: the module's RMSG_FEAT_* bits
 * @page_size: the system page size
 * @lock: the endpoint's mutex after rmsg_ep_set_locking(), else NULL
 * @lib_errors: library operations (CREDIT, ARM, discards) the kernel failed
 * @readables: READABLE events taken; rmsg_ep_wait() compares it across its
 *	arming to see whether an ARM it counts on was answered already
 * @bad_cqes: completions the library could not match to what it sent
 * @rv_thresh: rmsg_msg_send() goes rendezvous from this many bytes
 * @rv_owed: channels with rv_owed set
 * @regs: the regions registered with rmsg_reg(), in no order
 * @nregs: entries used in @regs
 * @regs_cap: entries allocated in @regs
 * @ops: rendezvous operations, by the index in their tag
 * @nops: entries in @ops
 * @ops_free: index + 1 of the first free entry of @ops, 0 for none
 * @ops_busy: entries of @ops in use: rendezvous transfers in flight
 * @bounce: rmsg_msg_recv()'s region for rendezvous messages
 * @fd: the endpoint's file descriptor, for RMSG_IOC_CHAN_DROP
 * @win: the block window (RMSG_OFF_WINDOW), mapped at the first
 *	rmsg_lib_progress(), or NULL: each channel's block is mapped alone
 * @win_shift: log2 of a window slot's bytes
 * @win_tried: the window was tried (mapped or not): not again
 * @drops: by id, the ids of channels in the window the library forgot
 *	and the kernel still holds: one RMSG_IOC_CHAN_DROP lets them go at
 *	the end of rmsg_lib_progress() or in rmsg_msg_release(); allocated
 *	at the first, NULL before
 * @ndrops: bits set in @drops
 */
struct rmsg_ep_data {
	struct rmsg_chan *chans;
	__u32 nchans;
	__u32 *active;
	__u32 nactive;
	__u32 active_cap;
	__u32 next;
	__u32 owed;
	__u8 *summary;
	__u64 maybe[RMSG_MAX_CHANNELS >> RMSG_SUMMARY_SHIFT];
	__u64 maybe_groups[RMSG_MAX_CHANNELS >> (2 * RMSG_SUMMARY_SHIFT)];
	__u64 maybe_words;
	__u8 group_next[RMSG_MAX_CHANNELS >> RMSG_SUMMARY_SHIFT];
	__u32 group_start;
	__u32 empty_polls;
	__u32 *unarmed;
	__u32 nunarmed;
	__u32 unarmed_cap;
	struct rmsg_area area;
	void *area_map;
	size_t area_len;
	bool resv;
	/*
	 * A send with RMSG_SEND_MORE is being queued: its SQEs are published
	 * but the kernel is not entered for them (rmsg_lib_kick()).
	 */
	bool more;
	__u32 resv_chan;
	__u32 resv_off;
	__u32 resv_len;
	__u64 features;
	size_t page_size;
	pthread_mutex_t *lock;
	__u64 lib_errors;
	__u64 readables;
	__u64 bad_cqes;
	size_t rv_thresh;
	/* RMSG_LEND=0: never lend the CPU to a software device. */
	bool no_lend;
	__u32 rv_owed;
	struct rmsg_rv_region *regs;
	__u32 nregs;
	__u32 regs_cap;
	struct rmsg_rv_op *ops;
	__u32 nops;
	__u32 ops_free;
	__u32 ops_busy;
	struct rmsg_bounce bounce;
	/*
	 * Events a waiting call (RMSG_MSG_WAIT) took off the completion ring
	 * so that poll() sleeps: rmsg_ep_progress() returns them first, in
	 * their order. aside[aside_head .. aside_head + aside_len).
	 */
	struct rmsg_event *aside;
	__u32 aside_head;
	__u32 aside_len;
	__u32 aside_cap;
	/*
	 * Aside events taken out so far, by anyone: a waiting call that
	 * finds it changed looks at the queue from its head again.
	 */
	__u64 aside_taken;
	/* The limit of RMSG_MSG_WAIT calls: ms, -1 for none */
	int wait_ms;
	int fd;
	const unsigned char *win;
	unsigned int win_shift;
	bool win_tried;
	__u64 *drops;
	__u32 ndrops;
};
_Static_assert(sizeof(((struct rmsg_ep_data *)0)->maybe_groups) / 8 <= 64,
	       "rmsg_ep_data.maybe_words has a bit per word of maybe_groups");

static inline void rmsg_lock(struct rmsg_ep_data *d)
{
	if (d->lock)
		pthread_mutex_lock(d->lock);
}

static inline void rmsg_unlock(struct rmsg_ep_data *d)
{
	if (d->lock)
		pthread_mutex_unlock(d->lock);
}

static inline struct rmsg_chan *rmsg_chan_get(struct rmsg_ep_data *d,
					      __u32 id)
{
	return id < d->nchans ? &d->chans[id] : NULL;
}

int rmsg_ep_data_init(struct rmsg_ep *ep, const struct rmsg_ep_setup *p);
int rmsg_chan_closing(struct rmsg_ep *ep, __u32 id, int err);
int rmsg_chan_closing_locked(struct rmsg_ep_data *d, __u32 id, int err);
void rmsg_lib_abort_locked(struct rmsg_ep *ep, __u32 id);
void rmsg_chan_dialed(struct rmsg_ep_data *d, __u32 id, __u64 user_data);
void rmsg_ep_data_free(struct rmsg_ep *ep);

/* rmsg_lib.c, under rmsg_msg.c and rmsg_rndv.c; the caller holds the lock */
struct rmsg_sqe *rmsg_lib_sqe(struct rmsg_ep *ep);
void rmsg_lib_kick(struct rmsg_ep *ep);

/*
 * The kernel has taken every SQE handed out: a kick has nothing to do.
 * The acquire pairs with the kernel's release of the consumer index (D).
 */
static inline bool rmsg_sq_taken(struct rmsg_ep *ep)
{
	return ep->rings.sq.cached_prod ==
	       __atomic_load_n(ep->rings.sq.consumer, __ATOMIC_ACQUIRE);
}
void rmsg_lib_broken(struct rmsg_ep *ep, __u32 id, int err);
int rmsg_lib_max_msg(struct rmsg_ep_data *d, __u32 id);

/* rmsg_msg.c; the caller holds the endpoint's lock */
int rmsg_lib_progress(struct rmsg_ep *ep, struct rmsg_event *ev,
		      unsigned int max);
int rmsg_lib_release(struct rmsg_ep *ep, const struct rmsg_msg *msg);
__s64 rmsg_lib_now_ms(void);
__s64 rmsg_wait_deadline(struct rmsg_ep_data *d);

/* Whether @ev is the one a waiting call wants. */
typedef bool (*rmsg_event_match)(const struct rmsg_event *ev,
				 const void *arg);

/*
 * rmsg_msg.c, called without the lock: wait until the program's events
 * hold one that @match takes, up to @deadline (rmsg_wait_deadline()), and
 * move it to *@out; the rest stay set aside, in order, for
 * rmsg_ep_progress(). Return: 0, -ETIMEDOUT, -EINTR, -ENOMEM.
 */
int rmsg_lib_wait_event(struct rmsg_ep *ep, rmsg_event_match match,
			const void *arg, struct rmsg_event *out,
			__s64 deadline);

/* rmsg_region.c: the ioctls alone, for regions kept out of the table */
int rmsg_lib_reg(int fd, void *addr, size_t len, uint32_t *handle);
int rmsg_lib_dereg(int fd, uint32_t handle);

/* rmsg_rndv.c; the caller holds the endpoint's lock */
void rmsg_rv_init(struct rmsg_ep_data *d);
void rmsg_rv_free(struct rmsg_ep *ep);
int rmsg_rv_peeked(struct rmsg_chan *ch, const void *rts, __u32 size,
		   __u32 end, struct rmsg_msg *msg);
void rmsg_rv_released(struct rmsg_ep *ep, __u32 id, __u32 end);
void rmsg_rv_chan_gone(struct rmsg_ep_data *d, __u32 id);
void rmsg_rv_flush(struct rmsg_ep *ep);
int rmsg_rv_cqe(struct rmsg_ep *ep, const struct rmsg_cqe *cqe,
		struct rmsg_event *ev);
size_t rmsg_rv_thresh(struct rmsg_ep_data *d, __u32 id);
bool rmsg_rv_region_of(struct rmsg_ep_data *d, const void *buf, size_t len,
		       __u32 *handle);
int rmsg_rv_send(struct rmsg_ep *ep, __u32 id, const void *buf, size_t len,
		 unsigned int flags, __u64 user_data, __u32 handle, void *copy);
void rmsg_rv_answer(struct rmsg_chan *ch, __u32 id, struct rmsg_sqe *sqe,
		    const void *addr, __u32 len, __u32 handle, __u64 tag);
void rmsg_rv_discards(struct rmsg_ep *ep, __u32 id);
bool rmsg_rv_blocked(const struct rmsg_ep_data *d, __u32 id);

#pragma GCC visibility pop

#endif /* _RMSG_PRIV_H */
