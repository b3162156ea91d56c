// SPDX-License-Identifier: GPL-2.0
/*
 * rmsg-perf: endpoints, the registered region of rendezvous runs, and the
 * set-up of a run (its threshold and buffer slots) on both sides.
 *
 * Calls common.c and event.c.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "rmsg-perf.h"

/* ------------------------------------------------------------------------
 * Endpoints.
 */
static unsigned int pow2_at_least(uint64_t n)
{
	unsigned int p = 1;

	while (p < n && p < (1U << 31))
		p <<= 1;
	return p;
}

void open_ep(struct worker *w)
{
	struct rmsg_ep_setup p;
	uint64_t inflight, area;
	int ret;

	/*
	 * Every send in flight has a completion to come, and every channel
	 * up to two events: the CQ holds them all, so the library never has
	 * to leave one on the kernel's overflow list.
	 */
	inflight = (uint64_t)(w->server ? 4 : opt.window) * opt.channels;
	/* Rendezvous runs: each answered receive has a completion too. */
	inflight += (uint64_t)RNDV_SLOTS * opt.channels;
	memset(&p, 0, sizeof(p));
	p.cq_entries = pow2_at_least(inflight + 2 * MAX_CHANNELS + 64);
	if (p.cq_entries > RMSG_MAX_CQ_ENTRIES)
		die(w, "window × channels too large for one completion ring");
	p.sq_entries = p.cq_entries / 2;
	if (p.sq_entries > RMSG_MAX_RING_ENTRIES)
		p.sq_entries = RMSG_MAX_RING_ENTRIES;
	if (opt.sqpoll) {
		p.flags |= RMSG_EP_F_SQPOLL;
		p.sqpoll_idle_ms = opt.sqpoll_idle_ms;
	}
	/* Room for a full window of the largest message, at least 1 MiB. */
	area = inflight * ((opt.all || opt.size > RMSG_VB_MAX_PAYLOAD ?
			    RMSG_VB_MAX_PAYLOAD : opt.size) + 64);
	if (area < RMSG_LIB_SEND_AREA)
		area = RMSG_LIB_SEND_AREA;
	if (area > RMSG_SEND_AREA_MAX)
		area = RMSG_SEND_AREA_MAX;
	p.send_area_size = area;
	ret = rmsg_ep_open_setup(&w->ep, &p);
	if (ret)
		die(w, "opening an endpoint: %s", strerror(-ret));
	w->by_id = malloc(RMSG_MAX_CHANNELS * sizeof(*w->by_id));
	w->unplaced = malloc(MAX_CHANNELS * sizeof(*w->unplaced));
	if (!w->by_id || !w->unplaced)
		die(w, "out of memory");
	memset(w->by_id, 0xff, RMSG_MAX_CHANNELS * sizeof(*w->by_id));
	w->ctl_len = CTL_V1_LEN;
}

/*
 * The registered region of rendezvous runs: at least @need bytes, grown
 * (registered anew) between runs, when no transfer is using it. With
 * CTL_F_UNREG the same memory is left in no region (handle 0): the kernel
 * pins each transfer's pages itself.
 */
void reg_grow(struct worker *w, size_t need)
{
	size_t len = (need + (2UL << 20) - 1) & ~((2UL << 20) - 1);
	bool unreg = w->flags & CTL_F_UNREG;
	void *p;
	int ret;

	if (need <= w->reg_len && !w->reg_handle == unreg)
		return;
	if (w->reg_handle) {
		ret = rmsg_dereg(w->ep, w->reg_handle);
		if (ret)
			die(w, "rmsg_dereg: %s", strerror(-ret));
		w->reg_handle = 0;
	}
	if (w->reg) {
		munmap(w->reg, w->reg_len);
		w->reg = NULL;
		w->reg_len = 0;
	}
	p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		die(w, "mapping %zu bytes for the buffers: %s", len,
		    strerror(errno));
	w->reg = p;
	w->reg_len = len;
	/* Touched, so that the first transfer does not pay the faults. */
	memset(p, 0, len);
	if (unreg)
		return;
	ret = rmsg_reg(w->ep, p, len, &w->reg_handle);
	if (ret == -ENOMEM)
		die(w, "registering %zu bytes: %s (pinned memory counts in RLIMIT_MEMLOCK: raise ulimit -l, or lower --reg-mem)",
		    len, strerror(-ret));
	if (ret)
		die(w, "registering %zu bytes: %s", len, strerror(-ret));
}

static uint32_t clamp_slots(uint64_t fit, uint32_t most)
{
	if (fit > most)
		fit = most;
	return fit ? fit : 1;
}

/*
 * Before a run (both sides, outside the measured part): the endpoint's
 * threshold, whether this run's sends go rendezvous, and the slots. A
 * stream's sender needs a slot per send in flight, its receiver one per
 * answer outstanding; a ping-pong needs one each way, and a second one to
 * send from while the previous send's completion is still on its way.
 */
void setup_run(struct worker *w, bool sender, bool receiver)
{
	uint64_t per_chan;
	size_t need;
	int i, ret;

	w->arrived = 0;
	w->rndv_msgs = 0;
	w->clock_at = 0;
	w->first_measured = 0;
	w->zc_now = false;
	w->ntx = w->nrx = 0;
	if (!(w->flags & CTL_F_REG))
		return;
	ret = rmsg_ep_set_rndv_threshold(w->ep, w->thresh == THRESH_NEVER ?
					 SIZE_MAX : (size_t)w->thresh);
	if (ret)
		die(w, "rmsg_ep_set_rndv_threshold(%" PRIu64 "): %s",
		    w->thresh, strerror(-ret));
	w->zc_now = (w->flags & CTL_F_ZC) || w->size >= w->thresh;
	w->stride = w->size < 4096 ? (w->size + 63) & ~63U :
		    ((size_t)w->size + 4095) & ~(size_t)4095;
	per_chan = opt.reg_mem / w->nch / w->stride;
	if (sender && receiver) {
		w->nrx = 1;
		w->ntx = clamp_slots(per_chan > 1 ? per_chan - 1 : 1, 2);
	} else if (sender) {
		w->ntx = clamp_slots(per_chan, w->window < RNDV_SLOTS ?
						w->window : RNDV_SLOTS);
	} else {
		w->nrx = clamp_slots(per_chan, RNDV_SLOTS);
	}
	need = (size_t)w->nch * (w->ntx + w->nrx) * w->stride;
	reg_grow(w, need);
	for (i = 0; i < w->nch; i++) {
		struct chan *c = &w->ch[i];

		c->tx_slots = w->reg + (size_t)i * (w->ntx + w->nrx) *
			      w->stride;
		c->rx_slots = c->tx_slots + (size_t)w->ntx * w->stride;
		c->tx_busy = c->rx_busy = 0;
	}
}

/*
 * End the thread's channels and endpoint: the client closes them, the
 * server waits for that.
 */
void close_ep(struct worker *w, bool initiate)
{
	struct waiter wt;
	int i, ret, open;

	/* From here on a channel that ends is expected to. */
	w->closing = true;
	w->lost = 0;
	drain_sends(w);
	for (i = 0; initiate && i < w->nch; i++) {
		if (!w->ch[i].open)
			continue;
		ret = rmsg_chan_close(w->ep, w->ch[i].id, 0);
		if (ret)
			die(w, "closing channel %u: %s", w->ch[i].id,
			    strerror(-ret));
	}
	wait_init(&wt, "the channels to close");
	do {
		for (i = 0, open = 0; i < w->nch; i++)
			open += w->ch[i].open;
		if (open) {
			pump(w);
			tick(w, &wt);
		}
	} while (open);
	rmsg_ep_close(w->ep);
	w->ep = NULL;
	if (w->reg)
		munmap(w->reg, w->reg_len);
	free(w->by_id);
	free(w->unplaced);
}
