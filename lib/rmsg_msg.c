// SPDX-License-Identifier: LGPL-2.1-or-later OR BSD-2-Clause
/*
 * librmsg: eager messages (Documentation/messages.rst).
 *
 * Sending copies the message into the endpoint's send area (rmsg_area.c)
 * and submits RMSG_OP_SEND; the record stays allocated until the SEND's
 * completion comes back through rmsg_ep_progress(). Receiving polls the
 * channel's receive block, mapped read-only, with the protocol core
 * (rmsg_vb_rx_poll()) and hands out messages in place; releasing them
 * returns their bytes to the sender with RMSG_OP_CREDIT once enough have
 * gathered. Nothing here allocates memory, takes a lock (unless the program
 * asked for one) or makes a system call per message, except the doorbell
 * rmsg_sq_submit() asks for when no kernel poller runs.
 *
 * Every SQE the library submits carries a tagged user_data (rmsg_priv.h),
 * so completions are matched without searching. The CQEs of the library's
 * own CREDIT and ARM operations, and the READABLE events ARM asks for, are
 * consumed here and never reach the program.
 *
 * Calls rmsg_rndv.c for rendezvous messages, and rmsg_lib.c for what both
 * share (SQEs, the doorbell, broken channels).
 */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "rmsg_priv.h"
#include "rmsg_summary.h"

/* -------------------------------------------------------------------- */
/* Endpoint data, locking, the channel table                             */

int rmsg_ep_data_init(struct rmsg_ep *ep, const struct rmsg_ep_setup *p)
{
	struct rmsg_ep_data *d = calloc(1, sizeof(*d));
	void *map;

	if (!d)
		return -ENOMEM;
	ep->data = d;
	d->fd = ep->fd;
	d->features = p->features;
	d->page_size = (size_t)sysconf(_SC_PAGESIZE);
	d->wait_ms = -1;
	rmsg_rv_init(d);
	if (p->flags & RMSG_EP_F_SUMMARY) {
		map = mmap(NULL, RMSG_SUMMARY_SIZE, PROT_READ | PROT_WRITE,
			   MAP_SHARED, ep->fd, (off_t)RMSG_OFF_SUMMARY);
		if (map == MAP_FAILED)
			return -errno;
		d->summary = map;
	}
	if (!p->send_area_size)
		return 0;
	map = mmap(NULL, p->send_area_size, PROT_READ | PROT_WRITE, MAP_SHARED,
		   ep->fd, (off_t)RMSG_OFF_SEND_AREA);
	if (map == MAP_FAILED)
		return -errno;
	d->area_map = map;
	d->area_len = p->send_area_size;
	return rmsg_area_init(&d->area, map, p->send_area_size);
}

void rmsg_ep_data_free(struct rmsg_ep *ep)
{
	struct rmsg_ep_data *d = ep->data;
	__u32 i;

	if (!d)
		return;
	for (i = 0; i < d->nchans; i++)
		if (d->chans[i].block && d->chans[i].map_len)
			munmap((void *)d->chans[i].block, d->chans[i].map_len);
	if (d->win)
		munmap((void *)d->win, (size_t)RMSG_MAX_CHANNELS << d->win_shift);
	free(d->drops);
	if (d->area_map)
		munmap(d->area_map, d->area_len);
	if (d->summary)
		munmap(d->summary, RMSG_SUMMARY_SIZE);
	rmsg_rv_free(ep);
	if (d->lock) {
		pthread_mutex_destroy(d->lock);
		free(d->lock);
	}
	free(d->chans);
	free(d->active);
	free(d->unarmed);
	free(d->aside);
	free(d);
	ep->data = NULL;
}

int rmsg_ep_set_locking(struct rmsg_ep *ep)
{
	struct rmsg_ep_data *d = ep->data;
	pthread_mutex_t *m;

	if (!d)
		return -EINVAL;
	if (d->lock)
		return 0;
	m = malloc(sizeof(*m));
	if (!m)
		return -ENOMEM;
	pthread_mutex_init(m, NULL);
	d->lock = m;
	return 0;
}

/* Make room for channel @id; ids are small (the kernel allocates from 0). */
static int rmsg_chan_grow(struct rmsg_ep_data *d, __u32 id)
{
	struct rmsg_chan *p;
	__u32 n;

	if (id < d->nchans)
		return 0;
	if (id >= RMSG_MAX_CHANNELS)
		return -EINVAL;
	n = d->nchans ? d->nchans : 16;
	while (n <= id)
		n *= 2;
	p = realloc(d->chans, n * sizeof(*p));
	if (!p)
		return -ENOMEM;
	memset(p + d->nchans, 0, (n - d->nchans) * sizeof(*p));
	d->chans = p;
	d->nchans = n;
	return 0;
}

static int rmsg_active_add(struct rmsg_ep_data *d, __u32 id)
{
	__u32 *p, n;

	if (d->nactive == d->active_cap) {
		n = d->active_cap ? 2 * d->active_cap : 16;
		p = realloc(d->active, n * sizeof(*p));
		if (!p)
			return -ENOMEM;
		d->active = p;
		d->active_cap = n;
	}
	d->chans[id].slot = d->nactive;
	d->active[d->nactive++] = id;
	return 0;
}

static void rmsg_active_del(struct rmsg_ep_data *d, __u32 id)
{
	__u32 slot = d->chans[id].slot, last = d->active[--d->nactive];

	d->active[slot] = last;
	d->chans[last].slot = slot;
	if (d->next >= d->nactive)
		d->next = 0;
}

/* Group @g has channels in @maybe: its bit, and its word's. */
static inline void rmsg_maybe_group(struct rmsg_ep_data *d, __u32 g)
{
	d->maybe_groups[g >> 6] |= 1ULL << (g & 63);
	d->maybe_words |= 1ULL << (g >> 6);
}

/* Group @g has no channel left in @maybe. */
static inline void rmsg_maybe_group_clear(struct rmsg_ep_data *d, __u32 g)
{
	d->maybe_groups[g >> 6] &= ~(1ULL << (g & 63));
	if (!d->maybe_groups[g >> 6])
		d->maybe_words &= ~(1ULL << (g >> 6));
}

/*
 * Look at channel @id in the next search for a message, whatever the
 * summary says: the library learnt of news itself.
 */
static void rmsg_mark(struct rmsg_ep_data *d, __u32 id)
{
	__u32 g = RMSG_SUMMARY_GROUP(id);

	/* Only a search by the summary reads the marks. */
	if (!d->summary || id >= d->nchans)
		return;
	d->maybe[g] |= 1ULL << (id & 63);
	rmsg_maybe_group(d, g);
}

/*
 * Room in @unarmed for every channel with a block, made when one opens:
 * a channel is on it at most once, and putting it there cannot fail.
 */
static int rmsg_unarmed_reserve(struct rmsg_ep_data *d)
{
	__u32 *p;

	if (d->unarmed_cap >= d->active_cap)
		return 0;
	p = realloc(d->unarmed, d->active_cap * sizeof(*p));
	if (!p)
		return -ENOMEM;
	d->unarmed = p;
	d->unarmed_cap = d->active_cap;
	return 0;
}

/* Channel @id (with a block) may need an ARM at the next arming. */
static void rmsg_to_arm(struct rmsg_ep_data *d, __u32 id)
{
	struct rmsg_chan *ch = &d->chans[id];

	if (ch->to_arm || !ch->block)
		return;
	ch->to_arm = 1;
	ch->arm_slot = d->nunarmed;
	d->unarmed[d->nunarmed++] = id;
}

static void rmsg_unarmed_del(struct rmsg_ep_data *d, __u32 id)
{
	__u32 slot = d->chans[id].arm_slot, last = d->unarmed[--d->nunarmed];

	d->unarmed[slot] = last;
	d->chans[last].arm_slot = slot;
	d->chans[id].to_arm = 0;
}

/* Drop the reservation of rmsg_msg_reserve(), if any: nothing came after it. */
static void rmsg_resv_drop(struct rmsg_ep_data *d)
{
	if (d->resv)
		rmsg_area_cancel(&d->area, d->resv_off);
	d->resv = false;
}

/*
 * Let the kernel have @count ids of the window back (RMSG_IOC_CHAN_DROP).
 * A failure can only be the library's own mistake (the ids are checked,
 * the pointer is ours): counted, the ids stay held.
 */
static void rmsg_drop_ids(struct rmsg_ep_data *d, const __u32 *ids,
			  __u32 count)
{
	struct rmsg_chan_drop req = {
		.ids = (__u64)(uintptr_t)ids,
		.count = count,
	};

	if (ioctl(d->fd, RMSG_IOC_CHAN_DROP, &req))
		d->lib_errors++;
}

/*
 * Give the kernel back the ids of the window's channels the library
 * forgot since the last time, RMSG_CHAN_DROP_MAX at a time: one system
 * call for all the channels that ended in a rmsg_lib_progress().
 */
static void rmsg_drops_flush(struct rmsg_ep_data *d)
{
	__u32 ids[RMSG_CHAN_DROP_MAX], n = 0, w;
	__u64 bits;

	for (w = 0; d->ndrops && w < RMSG_MAX_CHANNELS / 64; w++) {
		bits = d->drops[w];
		d->drops[w] = 0;
		while (bits) {
			ids[n++] = w * 64 + (__u32)__builtin_ctzll(bits);
			bits &= bits - 1;
			d->ndrops--;
			if (n == RMSG_CHAN_DROP_MAX) {
				rmsg_drop_ids(d, ids, n);
				n = 0;
			}
		}
	}
	if (n)
		rmsg_drop_ids(d, ids, n);
}

/*
 * The library forgets channel @id of the window: its id goes back to the
 * kernel with the next flush, or at once when the queue cannot be made.
 */
static void rmsg_drop_queue(struct rmsg_ep_data *d, __u32 id)
{
	if (!d->drops)
		d->drops = calloc(RMSG_MAX_CHANNELS / 64, sizeof(*d->drops));
	if (!d->drops) {
		rmsg_drop_ids(d, &id, 1);
		return;
	}
	if (!(d->drops[id / 64] & (1ULL << (id % 64)))) {
		d->drops[id / 64] |= 1ULL << (id % 64);
		d->ndrops++;
	}
}

/*
 * Forget channel @id: unmap its block (or, in the window, queue its id
 * to be dropped), free its slot in the table.
 */
static void rmsg_chan_drop(struct rmsg_ep_data *d, __u32 id)
{
	struct rmsg_chan *ch = &d->chans[id];
	__u64 dial_ud = ch->dial_ud;
	bool dialing = ch->dialing;

	if (ch->in_window) {
		rmsg_drop_queue(d, id);
		ch->in_window = false;
	}
	/* A block in the window has no mapping of its own (map_len 0). */
	if (ch->block && ch->map_len)
		munmap((void *)ch->block, ch->map_len);
	if (ch->block)
		rmsg_active_del(d, id);
	if (ch->to_arm)
		rmsg_unarmed_del(d, id);
	if (ch->credit_owed)
		d->owed--;
	if (ch->rv_owed)
		d->rv_owed--;
	rmsg_rv_chan_gone(d, id);
	if (d->resv && d->resv_chan == id)
		rmsg_resv_drop(d);
	memset(ch, 0, sizeof(*ch));
	/* The id's next channel, which a connect took already. */
	ch->dialing = dialing;
	ch->dial_ud = dial_ud;
}

/* Whether a record (or something the peer may not write) waits unpeeked. */
static bool rmsg_chan_pending(const struct rmsg_chan *ch)
{
	struct rmsg_vb_rx rx = ch->rx;
	struct rmsg_vb_msg m;

	if (!ch->block || ch->err)
		return false;
	/* A copy of the state: looking must not consume. */
	return rmsg_vb_rx_poll(&rx, ch->block, &m) != 0;
}

/*
 * Nothing new in the open channel's block: what a busy poll mostly
 * finds, answered from one flag byte (rmsg_vb_rx_idle()) before any copy
 * or call. A closed channel is looked at in full (its end is news).
 */
static inline bool rmsg_chan_idle(const struct rmsg_chan *ch)
{
	return ch->state == RMSG_CH_OPEN &&
	       rmsg_vb_rx_idle(&ch->rx, ch->block);
}

/*
 * A closed channel goes once the program has read and released all it
 * had: every peeked message released, nothing more in the block.
 */
static void rmsg_chan_settle(struct rmsg_ep_data *d, __u32 id)
{
	struct rmsg_chan *ch = &d->chans[id];

	if (ch->state == RMSG_CH_CLOSED && ch->rx.freed == ch->rx.consumed &&
	    (ch->err || !rmsg_chan_pending(ch)))
		rmsg_chan_drop(d, id);
}

static int rmsg_find(struct rmsg_ep *ep, struct rmsg_msg *msg);

/* -------------------------------------------------------------------- */
/* Submitting                                                            */

/*
 * Queue a credit update for channel @id when one is due (R8 of rmsg_vb.c).
 * The released counter is only taken (advertised) once an SQE carries it;
 * without an SQE the channel owes the update and rmsg_ep_progress() tries
 * again. Returns true when an SQE was queued (the caller kicks).
 */
static bool rmsg_chan_credit(struct rmsg_ep *ep, __u32 id)
{
	struct rmsg_ep_data *d = ep->data;
	struct rmsg_chan *ch = &d->chans[id];
	struct rmsg_sqe *sqe = NULL;
	bool due;

	due = ch->state == RMSG_CH_OPEN && !ch->err &&
	      rmsg_vb_rx_credit_due(&ch->rx);
	if (due) {
		sqe = rmsg_lib_sqe(ep);
		if (sqe) {
			sqe->opcode = RMSG_OP_CREDIT;
			sqe->channel = id;
			sqe->addr = rmsg_vb_rx_advertise(&ch->rx);
			sqe->user_data = RMSG_TAG(RMSG_OP_CREDIT, id);
			due = false;
		}
	}
	if (due != ch->credit_owed) {
		ch->credit_owed = due;
		if (due)
			d->owed++;
		else
			d->owed--;
	}
	return sqe;
}

/* Retry the credit updates and discards that found the SQ full, kick. */
static void rmsg_flush(struct rmsg_ep *ep)
{
	struct rmsg_ep_data *d = ep->data;
	__u32 i;

	for (i = 0; d->owed && i < d->nactive; i++)
		if (d->chans[d->active[i]].credit_owed)
			rmsg_chan_credit(ep, d->active[i]);
	rmsg_rv_flush(ep);
	rmsg_lib_kick(ep);
}

/* -------------------------------------------------------------------- */
/* Completions and events                                                */

/*
 * Map the block window, once, at the first rmsg_lib_progress(): a program
 * on the rings alone never gets here, and so never has an id held
 * (RMSG_CQE_F_WINDOW comes only once a window is mapped). Without the
 * features, with RMSG_WINDOW_SHIFT=0 or a shift out of range, or when the
 * mapping fails (a 32-bit address space, a small RLIMIT_AS), the library
 * maps each channel's block alone, as before the window.
 */
static void rmsg_win_try(struct rmsg_ep_data *d)
{
	const __u64 need = RMSG_FEAT_EAGER | RMSG_FEAT_BLOCK_WINDOW;
	const char *env = getenv("RMSG_WINDOW_SHIFT");
	unsigned long shift = 16;
	char *end;
	void *map;

	d->win_tried = true;
	if ((d->features & need) != need)
		return;
	if (env) {
		shift = strtoul(env, &end, 10);
		if (*env == '\0' || *end != '\0')
			return;
	}
	if (shift < RMSG_WINDOW_SHIFT_MIN || shift > RMSG_WINDOW_SHIFT_MAX ||
	    shift + 16 >= sizeof(size_t) * 8 || (1UL << shift) < d->page_size)
		return;
	map = mmap(NULL, (size_t)RMSG_MAX_CHANNELS << shift, PROT_READ,
		   MAP_SHARED | MAP_NORESERVE, d->fd,
		   (off_t)RMSG_OFF_WINDOW(shift));
	if (map == MAP_FAILED)
		return;
	d->win = map;
	d->win_shift = (unsigned int)shift;
}

/*
 * A channel opened (CONNECTED or ACCEPTED with res 0): find its receive
 * block (in the window, or mapped alone) and start reading it at the
 * beginning of the stream.
 */
static int rmsg_chan_open(struct rmsg_ep *ep, const struct rmsg_cqe *cqe)
{
	struct rmsg_ep_data *d = ep->data;
	__u32 id = cqe->channel;
	struct rmsg_chan *ch;
	size_t len;
	void *map;
	int ret;

	if (!(d->features & RMSG_FEAT_EAGER))
		return 0;	/* a module without a data path: events only */
	ret = rmsg_chan_grow(d, id);
	if (ret)
		return ret;
	ch = &d->chans[id];
	/*
	 * The id's previous channel closed (its CLOSED came first) but the
	 * program left messages in it; the id now names the new channel.
	 */
	if (ch->state != RMSG_CH_FREE) {
		/* The kernel gave the id again: it holds it no more. */
		ch->in_window = false;
		rmsg_chan_drop(d, id);
	}
	/*
	 * First: whatever fails below, the id is held until the library
	 * drops it with the channel (rmsg_chan_drop()).
	 */
	if (cqe->flags & RMSG_CQE_F_WINDOW)
		ch->in_window = true;
	ret = rmsg_vb_rx_init(&ch->rx, cqe->len, 0, 0);
	if (ret)
		return ret;
	if (ch->in_window) {
		/* The window's slots are never unmapped one by one. */
		if (!d->win)
			return -EPROTO;
		len = 0;
		map = (void *)(d->win + ((size_t)id << d->win_shift));
	} else {
		len = (cqe->len + d->page_size - 1) & ~(d->page_size - 1);
		map = mmap(NULL, len, PROT_READ, MAP_SHARED, ep->fd,
			   (off_t)RMSG_OFF_BLOCK(id));
		if (map == MAP_FAILED)
			return -errno;
	}
	ret = rmsg_active_add(d, id);
	if (!ret) {
		ret = rmsg_unarmed_reserve(d);
		if (ret)
			rmsg_active_del(d, id);
	}
	if (ret) {
		if (len)
			munmap(map, len);
		return ret;
	}
	ch->block = map;
	ch->map_len = len;
	ch->max_msg = cqe->aux < RMSG_VB_MAX_PAYLOAD ? (__u32)cqe->aux :
						      RMSG_VB_MAX_PAYLOAD;
	ch->state = RMSG_CH_OPEN;
	ch->closing = 0;
	/* Records may be there already; and it is not armed yet. */
	rmsg_mark(d, id);
	rmsg_to_arm(d, id);
	return 0;
}

/*
 * The program asked to close channel @id, and the kernel answered @err.
 * On success its sends fail from now on, at once, instead of reaching a
 * kernel that completes them later with an error. A channel the kernel
 * no longer has, or has ending already, that the library saw open ended
 * either by the program's earlier close (-EALREADY) or by itself
 * (-ENOTCONN: its CLOSED says how). Returns what rmsg_chan_close() says.
 * The caller holds the endpoint's lock, if it has one.
 */
int rmsg_chan_closing_locked(struct rmsg_ep_data *d, __u32 id, int err)
{
	struct rmsg_chan *ch;

	if (err && err != -ENOENT && err != -EALREADY)
		return err;
	ch = rmsg_chan_get(d, id);
	/* One the library never saw open: the kernel's word stands. */
	if (ch && ch->state != RMSG_CH_FREE) {
		if (!err)
			ch->closing = 1;
		else if (ch->closing)
			err = -EALREADY;
		else if (ch->state != RMSG_CH_DEAD)
			err = -ENOTCONN;
	}
	return err;
}

int rmsg_chan_closing(struct rmsg_ep *ep, __u32 id, int err)
{
	struct rmsg_ep_data *d = ep->data;

	if (!d)
		return err;
	rmsg_lock(d);
	err = rmsg_chan_closing_locked(d, id, err);
	rmsg_unlock(d);
	return err;
}

/*
 * The program's connect took id @id, its events to carry @user_data;
 * caller holds the lock. The kernel frees a channel's id before the
 * program has read that channel's last events, so events of an earlier
 * channel may still come for @id: an ACCEPTED (its channel is gone; it
 * is swallowed), or a CONNECTED with other user_data (reported as it is,
 * for the program to tell by its user_data). Neither opens, or aborts,
 * the id's new channel (rmsg_cqe_take()).
 */
void rmsg_chan_dialed(struct rmsg_ep_data *d, __u32 id, __u64 user_data)
{
	if (rmsg_chan_grow(d, id))
		return;
	d->chans[id].dialing = true;
	d->chans[id].dial_ud = user_data;
}

/*
 * The library could not take an open channel on: end it, and swallow its
 * CLOSED, since the program was told that it failed.
 */
static void rmsg_chan_abort(struct rmsg_ep *ep, __u32 id)
{
	struct rmsg_ep_data *d = ep->data;

	if (!rmsg_chan_grow(d, id)) {
		memset(&d->chans[id].rx, 0, sizeof(d->chans[id].rx));
		d->chans[id].state = RMSG_CH_DEAD;
	}
	rmsg_lib_abort_locked(ep, id);
}

static void rmsg_chan_closed(struct rmsg_ep_data *d, __u32 id)
{
	struct rmsg_chan *ch = rmsg_chan_get(d, id);

	if (!ch || ch->state != RMSG_CH_OPEN)
		return;
	ch->state = RMSG_CH_CLOSED;
	ch->armed = 0;
	if (ch->credit_owed) {
		ch->credit_owed = 0;
		d->owed--;
	}
	rmsg_chan_settle(d, id);
}

/*
 * A SEND completed: free its record, count it, report it unless it was
 * sent with RMSG_SEND_SKIP_SUCCESS and succeeded. Returns as
 * rmsg_cqe_take(): -1 (nothing done) when it must be reported and @ev is
 * NULL.
 */
static int rmsg_send_done(struct rmsg_ep_data *d, const struct rmsg_cqe *cqe,
			  struct rmsg_event *ev)
{
	struct rmsg_chan *ch = rmsg_chan_get(d, cqe->channel);
	__u32 val = RMSG_TAG_VAL(cqe->user_data);
	bool quiet = (val & RMSG_TAG_SEND_QUIET) && cqe->res >= 0;
	uint64_t cookie = 0;

	if (!ev && !quiet)
		return -1;
	/* -EIO: a scribbled header further on; this record is freed. */
	if (rmsg_area_free(&d->area, val & ~RMSG_TAG_SEND_QUIET,
			   &cookie) == -EINVAL) {
		d->bad_cqes++;
		return 0;
	}
	if (ch && ch->state != RMSG_CH_FREE && ch->inflight)
		ch->inflight--;
	if (quiet)
		return 0;
	ev->kind = RMSG_CQE_OP;
	ev->res = cqe->res;
	ev->channel = cqe->channel;
	ev->len = cqe->len;
	ev->user_data = cookie;
	return 1;
}

/*
 * Take one CQE. Returns 1 when it became an event in *@ev, 0 when the
 * library consumed it, and -1 when it must be reported but @ev is NULL (no
 * room): it is then left alone, with nothing done.
 */
static int rmsg_cqe_take(struct rmsg_ep *ep, const struct rmsg_cqe *cqe,
			 struct rmsg_event *ev)
{
	struct rmsg_ep_data *d = ep->data;
	unsigned int kind = RMSG_CQE_KIND(cqe->flags);
	struct rmsg_chan *ch;
	int res = cqe->res;

	switch (kind) {
	case RMSG_CQE_OP:
		if (!RMSG_TAG_IS_LIB(cqe->user_data))
			break;	/* the program's own SQE */
		if (RMSG_TAG_OP(cqe->user_data) == RMSG_OP_SEND)
			return rmsg_send_done(d, cqe, ev);
		if (RMSG_TAG_OP(cqe->user_data) == RMSG_OP_SEND_RNDV ||
		    RMSG_TAG_OP(cqe->user_data) == RMSG_OP_RECV_RNDV) {
			/* A transfer's end may let its channel be read on. */
			rmsg_mark(d, cqe->channel);
			return rmsg_rv_cqe(ep, cqe, ev);
		}
		/* CREDIT and ARM complete only when they fail. */
		d->lib_errors++;
		ch = rmsg_chan_get(d, RMSG_TAG_VAL(cqe->user_data));
		if (ch && RMSG_TAG_OP(cqe->user_data) == RMSG_OP_ARM) {
			ch->armed = 0;
			rmsg_to_arm(d, RMSG_TAG_VAL(cqe->user_data));
		}
		return 0;
	case RMSG_CQE_READABLE:
		d->readables++;
		ch = rmsg_chan_get(d, cqe->channel);
		if (ch) {
			ch->armed = 0;
			rmsg_mark(d, cqe->channel);
			rmsg_to_arm(d, cqe->channel);
		}
		return 0;
	case RMSG_CQE_CONNECTED:
	case RMSG_CQE_ACCEPTED:
		ch = rmsg_chan_get(d, cqe->channel);
		/* An earlier channel's: the id is a connect's now. */
		if (ch && ch->dialing && kind == RMSG_CQE_ACCEPTED)
			return 0;
		if (!ev)
			return -1;
		if (ch && ch->dialing && cqe->user_data != ch->dial_ud)
			break;
		if (ch)
			ch->dialing = false;
		if (!res) {
			res = rmsg_chan_open(ep, cqe);
			if (res)
				rmsg_chan_abort(ep, cqe->channel);
		}
		break;
	case RMSG_CQE_CLOSED:
		rmsg_mark(d, cqe->channel);
		ch = rmsg_chan_get(d, cqe->channel);
		if (ch && ch->state == RMSG_CH_DEAD) {
			rmsg_chan_drop(d, cqe->channel);
			return 0;
		}
		if (!ev)
			return -1;
		rmsg_chan_closed(d, cqe->channel);
		break;
	}
	if (!ev)
		return -1;
	/*
	 * REQUEST, STALLED, RESUMED, kinds newer than the library and the
	 * program's own completions pass as they are: none changes what the
	 * library keeps (a stalled channel still takes sends).
	 */
	ev->kind = kind;
	ev->res = res;
	ev->channel = cqe->channel;
	ev->len = cqe->len;
	ev->user_data = cqe->user_data;
	return 1;
}

int rmsg_lib_progress(struct rmsg_ep *ep, struct rmsg_event *ev,
		      unsigned int max)
{
	struct rmsg_ring_view *cq = &ep->rings.cq;
	unsigned int n = 0, done, ready = rmsg_cq_ready(ep);
	struct rmsg_ep_data *d = ep->data;
	const struct rmsg_cqe *cqe;
	int r;

	if (!d->win_tried)
		rmsg_win_try(d);
	/*
	 * A busy poll's common case: no CQE, nothing owed, and no SQE the
	 * kernel has not taken (rmsg_flush() would find nothing to do).
	 */
	if (!ready && !d->owed && !d->rv_owed && !d->more && !d->ndrops &&
	    rmsg_sq_taken(ep))
		return 0;

	for (done = 0; done < ready; done++) {
		cqe = (const struct rmsg_cqe *)cq->descs +
		      ((cq->cached_cons + done) & cq->mask);
		r = rmsg_cqe_take(ep, cqe, n < max ? &ev[n] : NULL);
		if (r < 0)
			break;
		n += r;
	}
	if (done)
		rmsg_cq_advance(ep, done);
	rmsg_flush(ep);
	if (d->ndrops)
		rmsg_drops_flush(d);
	return (int)n;
}

/*
 * Take everything on the completion ring: the library's own CQEs are
 * handled, the program's events go aside for rmsg_ep_progress(). With the
 * ring empty, poll() on the endpoint sleeps until the kernel posts again.
 * Return: whether anything was taken, or -ENOMEM (nothing lost: what did
 * not fit stays on the ring).
 */
static int rmsg_aside_fill(struct rmsg_ep *ep)
{
	struct rmsg_ep_data *d = ep->data;
	unsigned int ready = rmsg_cq_ready(ep);
	struct rmsg_event *ev;
	__u32 want, cap;
	int n;

	if (!ready)
		return 0;
	if (d->aside_head && d->aside_len)
		memmove(d->aside, d->aside + d->aside_head,
			d->aside_len * sizeof(*d->aside));
	d->aside_head = 0;
	want = d->aside_len + ready;
	if (want > d->aside_cap) {
		cap = d->aside_cap ? d->aside_cap : 16;
		while (cap < want)
			cap *= 2;
		ev = realloc(d->aside, cap * sizeof(*ev));
		if (!ev)
			return -ENOMEM;
		d->aside = ev;
		d->aside_cap = cap;
	}
	n = rmsg_lib_progress(ep, d->aside + d->aside_len,
			      d->aside_cap - d->aside_len);
	if (n > 0)
		d->aside_len += (__u32)n;
	return 1;
}

/*
 * Whether a busy poll that found nothing should lend its CPU to the device
 * (RMSG_ENTER_LEND): a rendezvous transfer is in flight, and a software
 * device moves its bytes in bottom halves that the poll would otherwise
 * compete with for the CPU. Only rendezvous transfers: an eager message
 * is placed by one packet, and a system call per poll would only delay
 * seeing it.
 */
static bool rmsg_lend_due(struct rmsg_ep *ep)
{
	struct rmsg_ep_data *d = ep->data;

	/* Only a kernel with RMSG_FEAT_ENTER_LEND sets the flag. */
	return d->ops_busy && !d->no_lend &&
	       (__atomic_load_n(ep->rings.cq.flags, __ATOMIC_RELAXED) &
		RMSG_CQ_SOFT_DEVICE);
}

int rmsg_ep_progress(struct rmsg_ep *ep, struct rmsg_event *ev,
		     unsigned int max)
{
	struct rmsg_ep_data *d = ep->data;
	unsigned int n;
	bool lend;
	int more;

	if (!d || (max && !ev))
		return -EINVAL;
	rmsg_lock(d);
	/* What a waiting call set aside came off the ring first. */
	n = d->aside_len < max ? d->aside_len : max;
	if (n) {
		memcpy(ev, d->aside + d->aside_head, n * sizeof(*ev));
		d->aside_head += n;
		d->aside_len -= n;
		d->aside_taken += n;
		if (!d->aside_len)
			d->aside_head = 0;
	}
	more = d->aside_len ? rmsg_lib_progress(ep, NULL, 0) :
			      rmsg_lib_progress(ep, max > n ? ev + n : NULL,
						max - n);
	lend = !n && !more && rmsg_lend_due(ep);
	rmsg_unlock(d);
	/* Outside the lock: the device's work may take milliseconds. */
	if (lend)
		rmsg_ep_enter(ep, 0, 0, RMSG_ENTER_LEND);
	return more < 0 ? more : (int)n + more;
}

/* -------------------------------------------------------------------- */
/* Waiting                                                               */

/* Whether a message or a CQE for the program is there. */
static bool rmsg_ready_locked(struct rmsg_ep *ep)
{
	struct rmsg_ep_data *d = ep->data;

	/* Swallow READABLE and the like first, or they would look ready. */
	rmsg_lib_progress(ep, NULL, 0);
	if (rmsg_cq_ready(ep) || d->aside_len)
		return true;
	return rmsg_find(ep, NULL) == 0;
}

/*
 * ARM every open channel that has no ARM outstanding. Only channels put
 * on @unarmed (opened, or their ARM answered or failed) can be such a
 * channel: the cost is what changed since the last arming.
 */
static int rmsg_arm_locked(struct rmsg_ep *ep)
{
	struct rmsg_ep_data *d = ep->data;
	struct rmsg_sqe *sqe;
	struct rmsg_chan *ch;
	unsigned int n = 0;
	int ret = 0;
	__u32 i, id;

	for (i = 0; i < d->nunarmed;) {
		id = d->unarmed[i];
		ch = &d->chans[id];
		if (ch->state != RMSG_CH_OPEN || ch->armed || ch->err) {
			rmsg_unarmed_del(d, id);
			continue;
		}
		/*
		 * rmsg_msg_recv()'s transfer holds up the channel: its CQE, not
		 * a READABLE for the message it waits on, is the wake-up.
		 */
		if (rmsg_rv_blocked(d, id)) {
			i++;
			continue;
		}
		sqe = rmsg_lib_sqe(ep);
		if (!sqe) {
			ret = -EAGAIN;
			break;
		}
		sqe->opcode = RMSG_OP_ARM;
		sqe->channel = id;
		/* Wake for anything beyond what was peeked so far. */
		sqe->addr = ch->rx.consumed;
		sqe->user_data = RMSG_TAG(RMSG_OP_ARM, id);
		ch->armed = 1;
		rmsg_unarmed_del(d, id);
		n++;
	}
	if (n)
		rmsg_lib_kick(ep);
	return ret;
}

int rmsg_ep_arm(struct rmsg_ep *ep)
{
	struct rmsg_ep_data *d = ep->data;
	int ret;

	if (!d)
		return -EINVAL;
	rmsg_lock(d);
	ret = rmsg_arm_locked(ep);
	rmsg_unlock(d);
	return ret;
}

int rmsg_ep_wait(struct rmsg_ep *ep, int timeout_ms)
{
	struct rmsg_ep_data *d = ep->data;
	struct pollfd pfd = { .fd = ep->fd, .events = POLLIN };
	__u64 readables;
	bool ready;
	int ret;

	if (!d)
		return -EINVAL;
	rmsg_lock(d);
	/* Sends queued with RMSG_SEND_MORE go before the program sleeps. */
	rmsg_lib_kick(ep);
	ready = rmsg_ready_locked(ep);
	if (!ready) {
		/*
		 * Arm, then look again: a message that landed before the ARM
		 * reached the kernel is seen here, one that lands after it
		 * makes the kernel post READABLE, which ends the poll().
		 * When the SQ has no room to arm, do not sleep: the caller
		 * makes progress and comes back.
		 *
		 * The second look swallows READABLEs, and each disarms its
		 * channel. One may answer an ARM older than this call, made
		 * before the program read the message it announces: the arm
		 * step skipped that channel as armed, and sleeping now would
		 * leave it unarmed, its next message waking nobody. So a
		 * READABLE taken there sends the caller round once more.
		 */
		readables = d->readables;
		ready = rmsg_arm_locked(ep) || rmsg_ready_locked(ep) ||
			d->readables != readables;
	}
	rmsg_unlock(d);
	if (ready)
		return 1;
	ret = poll(&pfd, 1, timeout_ms);
	if (ret < 0)
		return -errno;
	return ret > 0;
}

int rmsg_ep_set_timeout(struct rmsg_ep *ep, int timeout_ms)
{
	struct rmsg_ep_data *d = ep->data;

	if (!d || timeout_ms < -1)
		return -EINVAL;
	rmsg_lock(d);
	d->wait_ms = timeout_ms;
	rmsg_unlock(d);
	return 0;
}

__s64 rmsg_lib_now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (__s64)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/* When a waiting call that starts now gives up: -1 for never. */
__s64 rmsg_wait_deadline(struct rmsg_ep_data *d)
{
	int ms;

	rmsg_lock(d);
	ms = d->wait_ms;
	rmsg_unlock(d);
	return ms < 0 ? -1 : rmsg_lib_now_ms() + ms;
}

/*
 * One sleep of a waiting call on channel @id that just got -EAGAIN: for
 * a message on it (@recv), or for what frees room to send (a completion).
 * The program's events go aside, so that only a new CQE (a completion,
 * the READABLE of an ARM, a state change) ends the poll(); the caller
 * then tries again. Return: 0 to try again, -ETIMEDOUT, -EINTR, -ENOMEM.
 */
static int rmsg_wait_once(struct rmsg_ep *ep, __u32 id, bool recv,
			  __s64 deadline)
{
	struct rmsg_ep_data *d = ep->data;
	struct pollfd pfd = { .fd = ep->fd, .events = POLLIN };
	struct rmsg_chan *ch;
	struct rmsg_sqe *sqe;
	int ret, ms = -1;

	rmsg_lock(d);
	/* Sends queued with RMSG_SEND_MORE go before the program sleeps. */
	rmsg_lib_kick(ep);
	ret = rmsg_aside_fill(ep);
	ch = rmsg_chan_get(d, id);
	if (ret)
		goto out;
	/*
	 * Not open any more: the call's next try gives the answer, unless
	 * rmsg_msg_recv()'s transfer is still out (its CQE ends the sleep).
	 */
	if (!ch || ((ch->state != RMSG_CH_OPEN || ch->err) &&
		    !rmsg_rv_blocked(d, id))) {
		ret = 1;
		goto out;
	}
	if (!recv || rmsg_rv_blocked(d, id))
		goto out;
	if (rmsg_chan_pending(ch)) {
		ret = 1;
		goto out;
	}
	/* A message that lands after the ARM reached the kernel wakes us. */
	if (!ch->armed && ch->state == RMSG_CH_OPEN) {
		sqe = rmsg_lib_sqe(ep);
		if (!sqe) {
			ret = 1;	/* the SQ is full: its CQEs are coming */
			goto out;
		}
		sqe->opcode = RMSG_OP_ARM;
		sqe->channel = id;
		sqe->addr = ch->rx.consumed;
		sqe->user_data = RMSG_TAG(RMSG_OP_ARM, id);
		ch->armed = 1;
		rmsg_lib_kick(ep);
		ret = rmsg_aside_fill(ep);
		if (!ret && rmsg_chan_pending(ch))
			ret = 1;
	}
out:
	rmsg_unlock(d);
	if (ret)
		return ret < 0 ? ret : 0;
	if (deadline >= 0) {
		__s64 left = deadline - rmsg_lib_now_ms();

		if (left <= 0)
			return -ETIMEDOUT;
		ms = left > 0x7fffffff ? 0x7fffffff : (int)left;
	}
	ret = poll(&pfd, 1, ms);
	if (ret < 0)
		return -errno;
	if (!ret && deadline >= 0 && rmsg_lib_now_ms() >= deadline)
		return -ETIMEDOUT;
	return 0;
}

/* Take the aside event at @i out of the queue, keeping the others' order. */
static void rmsg_aside_take(struct rmsg_ep_data *d, __u32 i,
			    struct rmsg_event *out)
{
	struct rmsg_event *ev = d->aside + d->aside_head + i;

	*out = *ev;
	memmove(ev, ev + 1, (d->aside_len - i - 1) * sizeof(*ev));
	d->aside_taken++;
	if (!--d->aside_len)
		d->aside_head = 0;
}

int rmsg_lib_wait_event(struct rmsg_ep *ep, rmsg_event_match match,
			const void *arg, struct rmsg_event *out, __s64 deadline)
{
	struct rmsg_ep_data *d = ep->data;
	struct pollfd pfd = { .fd = ep->fd, .events = POLLIN };
	__u64 taken = 0;
	__u32 i, seen = 0;
	__s64 left;
	int ret, ms;

	for (;;) {
		rmsg_lock(d);
		rmsg_lib_kick(ep);
		ret = rmsg_aside_fill(ep);
		/*
		 * Only what the fills added since the last look, unless some
		 * were taken out meanwhile (by another thread): a dial with
		 * thousands of events set aside is not a walk per wake-up.
		 */
		if (d->aside_taken != taken || seen > d->aside_len) {
			taken = d->aside_taken;
			seen = 0;
		}
		for (i = seen; ret >= 0 && i < d->aside_len; i++) {
			if (match(&d->aside[d->aside_head + i], arg)) {
				rmsg_aside_take(d, i, out);
				rmsg_unlock(d);
				return 0;
			}
		}
		seen = d->aside_len;
		rmsg_unlock(d);
		if (ret < 0)
			return ret;
		if (ret)
			continue;	/* the ring had CQEs: look once more */
		ms = -1;
		if (deadline >= 0) {
			left = deadline - rmsg_lib_now_ms();
			if (left <= 0)
				return -ETIMEDOUT;
			ms = left > 0x7fffffff ? 0x7fffffff : (int)left;
		}
		/* The ring is empty: the kernel's next CQE ends the poll(). */
		if (poll(&pfd, 1, ms) < 0)
			return -errno;
	}
}

/* -------------------------------------------------------------------- */
/* Sending                                                               */

int rmsg_chan_max_msg(struct rmsg_ep *ep, uint32_t channel)
{
	struct rmsg_ep_data *d = ep->data;
	int ret;

	if (!d)
		return -EINVAL;
	rmsg_lock(d);
	ret = rmsg_lib_max_msg(d, channel);
	rmsg_unlock(d);
	return ret;
}

/* Whether a message of @len bytes may go on channel @id now. */
static int rmsg_send_check(struct rmsg_ep_data *d, __u32 id, size_t len)
{
	struct rmsg_chan *ch = rmsg_chan_get(d, id);

	if (!(d->features & RMSG_FEAT_EAGER))
		return -EOPNOTSUPP;
	if (!ch || ch->state != RMSG_CH_OPEN || ch->closing || ch->err)
		return -ENOTCONN;
	if (!d->area_map)
		return -ENOBUFS;
	if (len > ch->max_msg || len > rmsg_area_max(&d->area))
		return -EMSGSIZE;
	/* The kernel refuses more (-ENOBUFS); wait for completions. */
	if (ch->inflight >= RMSG_CHAN_MAX_PENDING)
		return -EAGAIN;
	return 0;
}

/*
 * Submit the SEND of the record at @off; the record's cookie is @ud.
 * @flags: the program's; only RMSG_SEND_SKIP_SUCCESS matters here.
 */
static int rmsg_send_submit(struct rmsg_ep *ep, __u32 id, __u32 off,
			    __u32 len, __u64 ud, unsigned int flags)
{
	struct rmsg_ep_data *d = ep->data;
	struct rmsg_sqe *sqe = rmsg_lib_sqe(ep);

	_Static_assert(RMSG_TAG_SEND_QUIET < RMSG_AREA_ALIGN,
		       "the quiet bit is below a record's alignment");
	if (!sqe)
		return -EAGAIN;
	rmsg_area_hdr(&d->area, off)->cookie = ud;
	sqe->opcode = RMSG_OP_SEND;
	sqe->channel = id;
	sqe->addr = off;
	sqe->len = len;
	sqe->user_data = RMSG_TAG(RMSG_OP_SEND,
				  off | (flags & RMSG_SEND_SKIP_SUCCESS ?
					 RMSG_TAG_SEND_QUIET : 0));
	d->chans[id].inflight++;
	/* A: the payload is written before the producer store publishes it. */
	rmsg_lib_kick(ep);
	return 0;
}

/* The @iovcnt pieces of @iov, @len bytes in all, one after the other. */
static void rmsg_gather(unsigned char *to, const struct iovec *iov,
			int iovcnt)
{
	int i;

	for (i = 0; i < iovcnt; i++) {
		if (iov[i].iov_len)
			memcpy(to, iov[i].iov_base, iov[i].iov_len);
		to += iov[i].iov_len;
	}
}

/*
 * One message of @len bytes from the pieces of @iov, by the rules of
 * rmsg_msg_send() (the threshold, regions, pinning). A single piece may go
 * zero copy from where it is, unless @flags has RMSG_SEND_COPY; several,
 * or a copy asked for, that go rendezvous are gathered into memory of the
 * library's, which the kernel pins and the send's completion frees
 * (rmsg_rv_send()), so the program may reuse its pieces at once.
 */
static int rmsg_msg_send_once(struct rmsg_ep *ep, uint32_t channel,
			      const struct iovec *iov, int iovcnt, size_t len,
			      unsigned int flags, uint64_t user_data)
{
	struct rmsg_ep_data *d = ep->data;
	const void *buf = iov[0].iov_base;
	__u32 off, handle;
	size_t thresh;
	void *copy;
	int ret;

	rmsg_lock(d);
	d->more = flags & RMSG_SEND_MORE;
	thresh = rmsg_rv_thresh(d, channel);
	/*
	 * Large, and in a region: zero copy (rmsg_rndv.c). Too large for
	 * eager counts as large, or a threshold above the channel's eager
	 * maximum would leave sizes that fail with -EMSGSIZE.
	 */
	if (iovcnt == 1 && !(flags & RMSG_SEND_COPY) && d->nregs && len &&
	    len <= RMSG_RNDV_MAX_LEN &&
	    (d->features & RMSG_FEAT_RNDV) &&
	    (len >= thresh ||
	     (thresh != SIZE_MAX &&
	      (long long)len > rmsg_lib_max_msg(d, channel))) &&
	    rmsg_rv_region_of(d, buf, len, &handle)) {
		rmsg_resv_drop(d);
		ret = rmsg_rv_send(ep, channel, buf, len,
				   flags & RMSG_SEND_SKIP_SUCCESS, user_data,
				   handle, NULL);
		goto out;
	}
	/*
	 * Too large for eager, in no region: zero copy all the same, from
	 * pages the kernel pins for this send only (handle 0).
	 */
	if (len <= RMSG_RNDV_MAX_LEN && (d->features & RMSG_FEAT_RNDV_PIN) &&
	    thresh != SIZE_MAX &&
	    (long long)len > rmsg_lib_max_msg(d, channel) &&
	    rmsg_lib_max_msg(d, channel) >= 0) {
		rmsg_resv_drop(d);
		copy = NULL;
		if (iovcnt > 1 || (flags & RMSG_SEND_COPY)) {
			copy = malloc(len);
			if (!copy) {
				ret = -ENOMEM;
				goto out;
			}
			rmsg_gather(copy, iov, iovcnt);
			buf = copy;
		}
		ret = rmsg_rv_send(ep, channel, buf, len,
				   flags & RMSG_SEND_SKIP_SUCCESS, user_data, 0,
				   copy);
		goto out;
	}
	ret = rmsg_send_check(d, channel, len);
	if (ret)
		goto out;
	rmsg_resv_drop(d);
	ret = rmsg_area_alloc(&d->area, (__u32)len, &off);
	if (ret)
		goto out;
	rmsg_gather(d->area.base + off, iov, iovcnt);
	ret = rmsg_send_submit(ep, channel, off, (__u32)len, user_data, flags);
	if (ret)
		rmsg_area_cancel(&d->area, off);
out:
	d->more = false;
	rmsg_unlock(d);
	return ret;
}

int rmsg_msg_sendv(struct rmsg_ep *ep, uint32_t channel,
		   const struct iovec *iov,
		   int iovcnt, unsigned int flags, uint64_t user_data)
{
	struct rmsg_ep_data *d = ep->data;
	size_t len = 0;
	__s64 deadline;
	int i, ret;

	if (!d || !iov || iovcnt < 1 || iovcnt > RMSG_IOV_MAX ||
	    (flags & ~(RMSG_SEND_MORE | RMSG_MSG_WAIT | RMSG_SEND_COPY |
		       RMSG_SEND_SKIP_SUCCESS)))
		return -EINVAL;
	for (i = 0; i < iovcnt; i++) {
		if (iov[i].iov_len > RMSG_RNDV_MAX_LEN - len)
			return -EMSGSIZE;
		len += iov[i].iov_len;
	}
	ret = rmsg_msg_send_once(ep, channel, iov, iovcnt, len, flags,
				 user_data);
	if (ret != -EAGAIN || !(flags & RMSG_MSG_WAIT))
		return ret;
	deadline = rmsg_wait_deadline(d);
	do {
		ret = rmsg_wait_once(ep, channel, false, deadline);
		if (!ret)
			ret = rmsg_msg_send_once(ep, channel, iov, iovcnt, len,
						 flags, user_data);
	} while (ret == -EAGAIN);
	return ret;
}

int rmsg_msg_send(struct rmsg_ep *ep, uint32_t channel, const void *buf,
		  size_t len, unsigned int flags, uint64_t user_data)
{
	struct iovec one = { .iov_base = (void *)buf, .iov_len = len };

	return rmsg_msg_sendv(ep, channel, &one, 1, flags, user_data);
}

int rmsg_ep_flush(struct rmsg_ep *ep)
{
	struct rmsg_ep_data *d = ep->data;

	if (!d)
		return -EINVAL;
	rmsg_lock(d);
	rmsg_lib_kick(ep);
	rmsg_unlock(d);
	return 0;
}

int rmsg_msg_reserve(struct rmsg_ep *ep, uint32_t channel, size_t len,
		     void **buf)
{
	struct rmsg_ep_data *d = ep->data;
	__u32 off;
	int ret;

	if (!d)
		return -EINVAL;
	rmsg_lock(d);
	ret = rmsg_send_check(d, channel, len);
	if (ret)
		goto out;
	rmsg_resv_drop(d);
	ret = rmsg_area_alloc(&d->area, (__u32)len, &off);
	if (ret)
		goto out;
	d->resv = true;
	d->resv_chan = channel;
	d->resv_off = off;
	d->resv_len = (__u32)len;
	*buf = d->area.base + off;
out:
	rmsg_unlock(d);
	return ret;
}

int rmsg_msg_commit(struct rmsg_ep *ep, uint32_t channel, size_t len,
		    unsigned int flags, uint64_t user_data)
{
	struct rmsg_ep_data *d = ep->data;
	int ret;

	if (!d || (flags & ~(RMSG_SEND_MORE | RMSG_SEND_SKIP_SUCCESS)))
		return -EINVAL;
	rmsg_lock(d);
	d->more = flags & RMSG_SEND_MORE;
	if (!d->resv || d->resv_chan != channel || len > d->resv_len) {
		ret = -EINVAL;
		goto out;
	}
	ret = rmsg_send_check(d, channel, len);
	if (ret && ret != -EAGAIN) {
		rmsg_resv_drop(d);	/* the channel is gone */
		goto out;
	}
	if (ret)
		goto out;	/* keep the reservation for a retry */
	/* Building what was reserved is the common case: nothing to give. */
	if (len < d->resv_len) {
		rmsg_area_shrink(&d->area, d->resv_off, (__u32)len);
		d->resv_len = (__u32)len;
	}
	ret = rmsg_send_submit(ep, channel, d->resv_off, (__u32)len,
			       user_data, flags);
	if (!ret)
		d->resv = false;
out:
	d->more = false;
	rmsg_unlock(d);
	return ret;
}

/* -------------------------------------------------------------------- */
/* Receiving                                                             */

/*
 * The next message of channel @id, without forgetting a drained closed
 * channel (rmsg_msg_peek_any() walks the active list). -EAGAIN: nothing yet;
 * -ENOTCONN: nothing and the channel is closed (or unknown).
 */
static int rmsg_chan_next(struct rmsg_ep *ep, __u32 id, struct rmsg_msg *msg)
{
	struct rmsg_chan *ch = rmsg_chan_get(ep->data, id);
	struct rmsg_vb_rx save;
	struct rmsg_vb_msg m;
	int ret;

	if (!ch || !ch->block)
		return -ENOTCONN;
	if (ch->err)
		return ch->err;
	if (rmsg_chan_idle(ch))
		return -EAGAIN;
	save = ch->rx;
	ret = rmsg_vb_rx_poll(&ch->rx, ch->block, &m);
	if (ret > 0) {
		if (m.type == RMSG_VB_RTS) {
			/* Rendezvous: the record announces the bytes. */
			ret = rmsg_rv_peeked(ch, ch->block + m.off, m.len,
					     m.end, msg);
		} else {
			msg->data = ch->block + m.off;
			msg->len = m.len;
			msg->kind = RMSG_MSG_EAGER;
			msg->cookie = 0;
			ret = 0;
		}
		msg->channel = id;
		msg->end = m.end;
		if (!ret) {
			ch->peeked_from = save;
			return 0;
		}
	}
	if (ret < 0) {
		/* Keep consumed at the last good message for the releases. */
		ch->rx = save;
		rmsg_lib_broken(ep, id, ret);
		return ret;
	}
	return ch->state == RMSG_CH_OPEN ? -EAGAIN : -ENOTCONN;
}

static int rmsg_peek_locked(struct rmsg_ep *ep, __u32 id, struct rmsg_msg *msg)
{
	int ret = rmsg_chan_next(ep, id, msg);

	if (ret == -ENOTCONN && id < ep->data->nchans)
		rmsg_chan_settle(ep->data, id);
	return ret;
}

/*
 * Finding the next message without looking at every channel.
 *
 * The arrival summary (RMSG_OFF_SUMMARY) has a byte per group of 64
 * channel ids and a byte per channel, which the peers' kernels set after
 * writing records, the channel's first; @maybe has the channels the
 * library knows to look at itself. A search looks only at marked groups.
 * In one, it clears the group byte, a full barrier, and reads the group's
 * 64 channel bytes (a cache line); each set is cleared, a full barrier,
 * and those channels' blocks are looked at, with those @maybe names. A
 * byte set before its clear is for records the look sees, one set later
 * stays set. A channel found with a message stays in @maybe until a look
 * finds it idle: the program may not read everything at once, and the
 * peer set its bytes only once. An empty search reads one word of
 * @maybe_words and the table's group bytes (ngroups bytes, whole cache
 * lines ORed together: rmsg_summary_any()), and one in RMSG_SWEEP_EVERY
 * looks at one channel's block in turn, for a peer that cleared bytes it
 * should not have.
 */
#define RMSG_SWEEP_EVERY	16

/* Groups that exist for the channel table as it is. */
static inline __u32 rmsg_ngroups(const struct rmsg_ep_data *d)
{
	return (d->nchans + 63) >> RMSG_SUMMARY_SHIFT;
}

/* The group bytes of groups [8 @w, 8 @w + 8) as one word. */
static inline __u64 rmsg_summary_word(const struct rmsg_ep_data *d, __u32 w)
{
	return rmsg_summary_group_word(d->summary, w);
}

/* Whether any group is marked, by @maybe or by the summary. */
static bool rmsg_any_marked(const struct rmsg_ep_data *d, __u32 ngroups)
{
	return d->maybe_words || rmsg_summary_any(d->summary, ngroups);
}

/* The groups among [8 @w, 8 @w + 8) that are marked, a bit each. */
static unsigned int rmsg_marked8(const struct rmsg_ep_data *d, __u32 w)
{
	__u64 sum = rmsg_summary_word(d, w);
	unsigned int mask, b;

	mask = (d->maybe_groups[w >> 3] >> ((w & 7) * 8)) & 0xff;
	if (sum)
		for (b = 0; b < 8; b++)
			if ((sum >> (8 * b)) & 0xff)
				mask |= 1U << b;
	return mask;
}

/*
 * Every RMSG_SWEEP_EVERY empty searches: look at one channel's block
 * whatever the summary says, and mark it when it has something. Returns
 * whether it marked one.
 */
static bool rmsg_sweep(struct rmsg_ep_data *d)
{
	struct rmsg_chan *ch;
	__u32 id;

	if (!d->nactive || ++d->empty_polls % RMSG_SWEEP_EVERY)
		return false;
	if (d->next >= d->nactive)
		d->next = 0;
	id = d->active[d->next++];
	ch = &d->chans[id];
	if (ch->err || rmsg_chan_idle(ch))
		return false;
	rmsg_mark(d, id);
	return true;
}

/*
 * The channels of group @g with news by the summary: clear the group
 * byte, then read and clear the set channel bytes (RMSG_OFF_SUMMARY);
 * A bit per channel of the group.
 */
static __u64 rmsg_group_news(struct rmsg_ep_data *d, __u32 g)
{
	__u64 *line, v, news = 0;
	unsigned int w, b;

	if (!__atomic_load_n(&d->summary[g], __ATOMIC_RELAXED))
		return 0;
	__atomic_store_n(&d->summary[g], 0, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	line = (__u64 *)(d->summary +
			 RMSG_SUMMARY_CHANNEL(g << RMSG_SUMMARY_SHIFT));
	for (w = 0; w < 8; w++) {
		v = __atomic_load_n(&line[w], __ATOMIC_RELAXED);
		if (!v)
			continue;
		for (b = 0; b < 8; b++)
			if ((v >> (8 * b)) & 0xff)
				news |= 1ULL << (8 * w + b);
		/* Bytes, not the word: the peer may set another meanwhile. */
		for (b = 0; b < 8; b++)
			if ((v >> (8 * b)) & 0xff)
				__atomic_store_n((__u8 *)&line[w] + b, 0,
						 __ATOMIC_RELAXED);
	}
	if (news)
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
	return news;
}

/*
 * Look at group @g. With @msg, peek the next message of the first
 * channel in turn that has one; without, only say whether one could be
 * read (rmsg_ep_wait()). Returns 0 with a message (or the news), the
 * error of a channel whose block is broken, or -EAGAIN.
 */
static int rmsg_group_look(struct rmsg_ep *ep, __u32 g, struct rmsg_msg *msg)
{
	struct rmsg_ep_data *d = ep->data;
	__u32 first = g << RMSG_SUMMARY_SHIFT, start = d->group_next[g];
	__u64 look = d->maybe[g] | rmsg_group_news(d, g), left;
	struct rmsg_chan *ch;
	unsigned int b, bit;
	__u32 id;
	int ret;

	/* Channels past the table: a later open marks them. */
	if (d->nchans - first < 64)
		look &= (1ULL << (d->nchans - first)) - 1;
	/* In turn from @start: rotate, so that bit b is channel start + b. */
	left = start ? look >> start | look << (64 - start) : look;
	for (; left; left &= left - 1) {
		b = (unsigned int)__builtin_ctzll(left);
		bit = (b + start) & 63;
		id = first + bit;
		ch = &d->chans[id];
		look &= ~(1ULL << bit);
		/* Reported once already, or nothing new (no call then). */
		if (!ch->block || ch->err || rmsg_chan_idle(ch))
			continue;
		if (!msg) {
			if (!rmsg_chan_pending(ch) || rmsg_rv_blocked(d, id))
				continue;
			ret = 0;
		} else {
			ret = rmsg_chan_next(ep, id, msg);
			if (ret == -EAGAIN || ret == -ENOTCONN)
				continue;
			if (ret)
				msg->channel = id;
			/* Take turns: the next look starts after it. */
			d->group_next[g] = (bit + 1) & 63;
		}
		/* The rest still to look at, and this one: it may have more. */
		d->maybe[g] = look | 1ULL << bit;
		rmsg_maybe_group(d, g);
		return ret;
	}
	d->maybe[g] = 0;
	rmsg_maybe_group_clear(d, g);
	return -EAGAIN;
}

/*
 * Without a summary (an endpoint set up without RMSG_EP_F_SUMMARY): look
 * at every open channel, from the one after the last that had a message.
 */
static int rmsg_walk(struct rmsg_ep *ep, struct rmsg_msg *msg)
{
	struct rmsg_ep_data *d = ep->data;
	struct rmsg_chan *ch;
	int ret = -EAGAIN;
	__u32 i, slot, id;

	for (i = 0; i < d->nactive; i++) {
		slot = d->next + i;
		if (slot >= d->nactive)
			slot -= d->nactive;
		id = d->active[slot];
		ch = &d->chans[id];
		/* Reported once already, or nothing new (no call then). */
		if (ch->err || rmsg_chan_idle(ch))
			continue;
		if (!msg) {
			if (rmsg_chan_pending(ch) && !rmsg_rv_blocked(d, id))
				return 0;
			continue;
		}
		ret = rmsg_chan_next(ep, id, msg);
		if (ret == -EAGAIN || ret == -ENOTCONN) {
			ret = -EAGAIN;
			continue;
		}
		/* Take turns: the next call starts after this channel. */
		d->next = slot + 1 < d->nactive ? slot + 1 : 0;
		if (ret)
			msg->channel = id;
		return ret;
	}
	return -EAGAIN;
}

/*
 * The next message of any channel (@msg), or whether there is one (@msg
 * NULL), looking at marked groups only, from the group after the last
 * one that had a message. Returns as rmsg_group_look().
 */
static int rmsg_find(struct rmsg_ep *ep, struct rmsg_msg *msg)
{
	struct rmsg_ep_data *d = ep->data;
	__u32 ngroups = rmsg_ngroups(d), nwords, i, w, g;
	unsigned int mask;
	int ret;

	if (!d->summary)
		return rmsg_walk(ep, msg);
	if (!d->nactive)
		return -EAGAIN;
	if (!rmsg_any_marked(d, ngroups) && !rmsg_sweep(d))
		return -EAGAIN;
	if (d->group_start >= ngroups)
		d->group_start = 0;
	nwords = (ngroups + 7) >> 3;
	/* The start word twice: its groups from the start, then before it. */
	for (i = 0; i <= nwords; i++) {
		w = (d->group_start >> 3) + i;
		if (w >= nwords)
			w -= nwords;
		mask = rmsg_marked8(d, w);
		if (i == 0)
			mask &= ~0U << (d->group_start & 7);
		else if (i == nwords)
			mask &= ~(~0U << (d->group_start & 7));
		for (; mask; mask &= mask - 1) {
			g = (w << 3) + (unsigned int)__builtin_ctz(mask);
			if (g >= ngroups)
				break;
			ret = rmsg_group_look(ep, g, msg);
			if (ret == -EAGAIN)
				continue;
			if (msg)
				d->group_start = g + 1 < ngroups ? g + 1 : 0;
			return ret;
		}
	}
	return -EAGAIN;
}

int rmsg_lib_release(struct rmsg_ep *ep, const struct rmsg_msg *msg)
{
	struct rmsg_ep_data *d = ep->data;
	struct rmsg_chan *ch = rmsg_chan_get(d, msg->channel);
	int ret;

	if (!ch || !ch->block)
		return -ENOTCONN;
	/*
	 * Released already (again, or an earlier one than the last
	 * release): nothing to do. Less than a block behind is all a
	 * message the program still has can be.
	 */
	if (ch->rx.freed - msg->end <= ch->rx.size)
		return 0;
	ret = rmsg_vb_rx_release(&ch->rx, msg->end);
	if (ret)
		return ret;
	/* Unanswered rendezvous messages among them are discarded. */
	rmsg_rv_released(ep, msg->channel, msg->end);
	/* What a transfer held up may be read now. */
	rmsg_mark(d, msg->channel);
	if (ch->state == RMSG_CH_OPEN) {
		if (rmsg_chan_credit(ep, msg->channel))
			rmsg_lib_kick(ep);
	} else {
		rmsg_chan_settle(d, msg->channel);
	}
	return 0;
}

int rmsg_msg_peek(struct rmsg_ep *ep, uint32_t channel, struct rmsg_msg *msg)
{
	struct rmsg_ep_data *d = ep->data;
	int ret;

	if (!d)
		return -EINVAL;
	if (!(d->features & RMSG_FEAT_EAGER))
		return -EOPNOTSUPP;
	rmsg_lock(d);
	ret = rmsg_peek_locked(ep, channel, msg);
	rmsg_unlock(d);
	return ret;
}

int rmsg_msg_peek_any(struct rmsg_ep *ep, struct rmsg_msg *msg)
{
	struct rmsg_ep_data *d = ep->data;
	int ret;

	if (!d)
		return -EINVAL;
	if (!(d->features & RMSG_FEAT_EAGER))
		return -EOPNOTSUPP;
	rmsg_lock(d);
	ret = rmsg_find(ep, msg);
	rmsg_unlock(d);
	return ret;
}

int rmsg_msg_unpeek(struct rmsg_ep *ep, const struct rmsg_msg *msg)
{
	struct rmsg_ep_data *d = ep->data;
	struct rmsg_chan *ch;
	int ret = 0;

	if (!d || !msg)
		return -EINVAL;
	rmsg_lock(d);
	ch = rmsg_chan_get(d, msg->channel);
	if (!ch || !ch->block) {
		ret = -ENOTCONN;
		goto out;
	}
	/*
	 * Only the channel's last peek, not released (a release frees whole
	 * records: before this one's end is before its start), and for a
	 * rendezvous message not answered or discarded yet: the library's
	 * rendezvous state expects to see it again, unchanged
	 * (rmsg_rv_peeked()).
	 */
	if (msg->end != ch->rx.consumed ||
	    msg->end == ch->peeked_from.consumed || msg->end == ch->rx.freed ||
	    (msg->kind == RMSG_MSG_RNDV &&
	     ((__s32)(ch->rv_answer - msg->cookie) > 0 ||
	      (__s32)(ch->rv_drop - msg->cookie) > 0))) {
		ret = -EINVAL;
		goto out;
	}
	/* The reading position only: releases and credit stay as they are. */
	ch->rx.pos = ch->peeked_from.pos;
	ch->rx.lap = ch->peeked_from.lap;
	ch->rx.seq = ch->peeked_from.seq;
	ch->rx.consumed = ch->peeked_from.consumed;
	/* Readable again, though the last look may have found it idle. */
	rmsg_mark(d, msg->channel);
out:
	rmsg_unlock(d);
	return ret;
}

int rmsg_msg_release(struct rmsg_ep *ep, const struct rmsg_msg *msg)
{
	struct rmsg_ep_data *d = ep->data;
	int ret;

	if (!d)
		return -EINVAL;
	rmsg_lock(d);
	ret = rmsg_lib_release(ep, msg);
	/* The release may have let a closed channel of the window go. */
	if (d->ndrops)
		rmsg_drops_flush(d);
	rmsg_unlock(d);
	return ret;
}

/* Make the bounce region at least @len bytes. */
static int rmsg_bounce_grow(struct rmsg_ep *ep, size_t len)
{
	struct rmsg_ep_data *d = ep->data;
	struct rmsg_bounce *b = &d->bounce;
	size_t size;
	__u32 handle;
	void *map;
	int ret;

	if (b->map && b->len >= len)
		return 0;
	if (b->map) {
		ret = rmsg_lib_dereg(ep->fd, b->handle);
		if (ret)
			return ret;
		munmap(b->map, b->len);
		b->map = NULL;
	}
	/* Whole pages, and not less than 64 KiB, to grow seldom. */
	size = len < 65536 ? 65536 : len;
	size = (size + d->page_size - 1) & ~(d->page_size - 1);
	map = mmap(NULL, size, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (map == MAP_FAILED)
		return -ENOMEM;
	ret = rmsg_lib_reg(ep->fd, map, size, &handle);
	if (ret) {
		munmap(map, size);
		return ret;
	}
	b->map = map;
	b->len = size;
	b->handle = handle;
	return 0;
}

/*
 * rmsg_msg_recv() of the rendezvous message @msg it peeked (@save: the
 * channel's state before), through the library's bounce region: answered
 * with rmsg_rndv.c's answer, its completion taken by progressing the
 * endpoint. The message stays unread (the peek is undone) unless it is
 * copied out or failed. Returns what rmsg_msg_recv() returns.
 */
static int rmsg_recv_rndv(struct rmsg_ep *ep, const struct rmsg_msg *msg,
			  const struct rmsg_vb_rx *save, void *buf, size_t len)
{
	struct rmsg_ep_data *d = ep->data;
	struct rmsg_bounce *b = &d->bounce;
	__u32 id = msg->channel;
	struct rmsg_chan *ch;
	struct rmsg_sqe *sqe;
	int ret;

	if (b->busy && b->channel == id && b->cookie == msg->cookie &&
	    b->start == save->consumed) {
		/* Take its CQE, if it is there (nothing is reported). */
		if (!b->done)
			rmsg_lib_progress(ep, NULL, 0);
		ch = &d->chans[id];
		if (!b->done) {
			ch->rx = *save;
			return -EAGAIN;
		}
		b->busy = false;
		ret = b->res;
		if (!ret) {
			memcpy(buf, b->map, msg->len);
			ret = (int)msg->len;
		}
		rmsg_lib_release(ep, msg);
		return ret;
	}
	ch = &d->chans[id];
	if (msg->len > len) {
		ch->rx = *save;
		return -EMSGSIZE;
	}
	if (!(d->features & RMSG_FEAT_RNDV))
		return -EOPNOTSUPP;
	if (ch->state != RMSG_CH_OPEN || ch->err) {
		/* Its bytes can no longer come: skip it. */
		rmsg_lib_release(ep, msg);
		return -ECONNRESET;
	}
	if (b->busy) {
		/* One transfer at a time; perhaps it ends now. */
		ch->rx = *save;
		rmsg_lib_progress(ep, NULL, 0);
		return -EAGAIN;
	}
	ret = rmsg_bounce_grow(ep, msg->len);
	if (ret) {
		ch->rx = *save;
		return ret;
	}
	/* This call releases what the program holds before it: discard. */
	if ((__s32)(msg->cookie - ch->rv_drop) > 0)
		ch->rv_drop = msg->cookie;
	rmsg_rv_discards(ep, id);
	if (ch->rv_answer != msg->cookie) {
		ch->rx = *save;
		return (__s32)(ch->rv_answer - msg->cookie) > 0 ? -EINVAL :
								   -EAGAIN;
	}
	sqe = rmsg_lib_sqe(ep);
	if (!sqe) {
		ch->rx = *save;
		return -EAGAIN;
	}
	rmsg_rv_answer(ch, id, sqe, b->map, msg->len, b->handle,
		       RMSG_TAG(RMSG_OP_RECV_RNDV, RMSG_RV_TAG_BOUNCE));
	b->busy = true;
	b->done = false;
	b->gone = false;
	b->res = 0;
	b->channel = id;
	b->cookie = msg->cookie;
	b->start = save->consumed;
	b->end = msg->end;
	ch->rx = *save;
	rmsg_lib_kick(ep);
	return -EAGAIN;
}

/* One try of rmsg_msg_recv(): -EAGAIN when nothing can be copied yet. */
static int rmsg_recv_once(struct rmsg_ep *ep, uint32_t channel, void *buf,
			  size_t len)
{
	struct rmsg_ep_data *d = ep->data;
	struct rmsg_vb_rx save;
	struct rmsg_chan *ch;
	struct rmsg_msg msg;
	int ret;

	if (!d)
		return -EINVAL;
	if (!(d->features & RMSG_FEAT_EAGER))
		return -EOPNOTSUPP;
	rmsg_lock(d);
	ch = rmsg_chan_get(d, channel);
	if (ch)
		save = ch->rx;
	else
		memset(&save, 0, sizeof(save));
	ret = rmsg_peek_locked(ep, channel, &msg);
	if (ret)
		goto out;
	if (msg.kind == RMSG_MSG_RNDV) {
		/* Through the bounce region; the peek may be undone. */
		ret = rmsg_recv_rndv(ep, &msg, &save, buf, len);
		goto out;
	}
	if (msg.len > len) {
		/* Unread: the next peek or recv finds it again. */
		ch->rx = save;
		ret = -EMSGSIZE;
		goto out;
	}
	memcpy(buf, msg.data, msg.len);
	ret = rmsg_lib_release(ep, &msg);
	if (!ret)
		ret = (int)msg.len;
out:
	rmsg_unlock(d);
	return ret;
}

int rmsg_msg_recv(struct rmsg_ep *ep, uint32_t channel, void *buf,
		  size_t len, unsigned int flags)
{
	struct rmsg_ep_data *d = ep->data;
	__s64 deadline;
	int ret;

	if (!d || (flags & ~RMSG_MSG_WAIT))
		return -EINVAL;
	ret = rmsg_recv_once(ep, channel, buf, len);
	if (ret != -EAGAIN || !(flags & RMSG_MSG_WAIT))
		return ret;
	deadline = rmsg_wait_deadline(d);
	do {
		ret = rmsg_wait_once(ep, channel, true, deadline);
		if (!ret)
			ret = rmsg_recv_once(ep, channel, buf, len);
	} while (ret == -EAGAIN);
	return ret;
}

