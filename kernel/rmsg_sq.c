// SPDX-License-Identifier: GPL-2.0
/*
 * rmsg: the submission ring (SQ) from the kernel's side: taking the
 * program's SQEs, for ENTER (rmsg_endpoint.c) or the endpoint's kernel
 * poller (rmsg_sqpoll.c), and running each. The SQ is written by the
 * program and untrusted: the kernel keeps its own copy of the indices,
 * checks each index the program wrote (rmsg_ring_prod_ok(),
 * rmsg_ring_cons_ok()), and copies each SQE once before looking at it.
 * Barriers A to D are those of Documentation/rings.rst.
 *
 * Layer (Documentation/design.rst, "Layers"): of the module's files it
 * calls only these, all below it: rmsg_cq.c, rmsg_data.c and
 * rmsg_region.c.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/minmax.h>
#include <linux/poll.h>
#include <linux/string.h>

#include "rmsg.h"
#include "rmsg_cq.h"
#include "rmsg_region.h"
#include "rmsg_ring.h"

/*
 * Run one SQE (the kernel's own copy; @next is a copy of the SQE after it,
 * or NULL). Returns whether *@cqe was filled in: a SEND may owe its CQE
 * until its write completes, and CREDIT and ARM post none unless they fail.
 */
static bool rmsg_ep_exec(struct rmsg_endpoint *ep, const struct rmsg_sqe *sqe,
			 const struct rmsg_sqe *next, struct rmsg_cqe *cqe)
{
	int res = -EINVAL;

	memset(cqe, 0, sizeof(*cqe));
	cqe->user_data = sqe->user_data;
	cqe->channel = sqe->channel;
	if (sqe->resv0 || !rmsg_all_zero(sqe->resv, sizeof(sqe->resv)))
		goto done;
	/* Only rendezvous operations take a region, a cookie or flags. */
	if (sqe->opcode != RMSG_OP_SEND_RNDV &&
	    sqe->opcode != RMSG_OP_RECV_RNDV &&
	    (sqe->flags || sqe->region || sqe->aux))
		goto done;
	switch (sqe->opcode) {
	case RMSG_OP_NOP:
		if (!sqe->channel && !sqe->addr && !sqe->len)
			res = 0;
		break;
	case RMSG_OP_SEND:
	case RMSG_OP_CREDIT:
	case RMSG_OP_ARM:
	case RMSG_OP_SEND_RNDV:
	case RMSG_OP_RECV_RNDV:
		return rmsg_data_exec(ep, sqe, next, cqe);
	default:
		break;
	}
done:
	if (res == -EINVAL)
		atomic_long_inc(&ep->bad_desc);
	cqe->res = res;
	return true;
}

/*
 * Does @sqe move program memory that is in no region? Then the memory is
 * pinned for it alone (writable for a receive's sink), and that is done
 * before the SQE runs, outside ep->lock: pinning faults pages in, under
 * mmap_lock, and rdma_cm handlers and repairs take ep->lock. What is
 * obviously invalid is left to the SQE's own checks, unpinned.
 */
static bool rmsg_sqe_pins(const struct rmsg_sqe *sqe, bool *writable)
{
	if (sqe->region || !sqe->len || sqe->len > RMSG_RNDV_MAX_LEN)
		return false;
	if (sqe->opcode == RMSG_OP_SEND_RNDV) {
		*writable = false;
		return !(sqe->flags & ~RMSG_RNDV_F_PUT);
	}
	if (sqe->opcode == RMSG_OP_RECV_RNDV) {
		*writable = true;
		return !sqe->flags;
	}
	return false;
}

/*
 * Hand the program what this submission took and completed so far
 * (@sq_cons, @cq_prod), and wake its waiters. Under ep->lock.
 */
static void rmsg_ep_submit_publish(struct rmsg_endpoint *ep, u32 sq_cons,
				   u32 cq_prod)
{
	if (sq_cons == ep->sq_cons)
		return;
	ep->sq_cons = sq_cons;
	WRITE_ONCE(ep->cq_prod, cq_prod);
	/* D: the SQEs are read before their slots are handed back. */
	smp_store_release(ep->sq.consumer, sq_cons);
	/* C: the CQEs are written before the producer publishes them. */
	smp_store_release(ep->cq.producer, cq_prod);
	rmsg_ep_wake(ep);
}

/*
 * Pin what @sqe moves into ep->pinned, with ep->lock dropped meanwhile
 * (what was taken before is published first: others post CQEs while the
 * lock is free). Returns false, with nothing pinned, when the SQE cannot
 * run now after all: events came meanwhile and fill the ring, or wait
 * older than it on the overflow list.
 */
static bool rmsg_ep_submit_pin(struct rmsg_endpoint *ep,
			       const struct rmsg_sqe *sqe, bool writable,
			       u32 sq_cons, u32 *cq_prod, u32 *cons)
{
	struct rmsg_region *r;

	rmsg_data_batch_end(ep);
	rmsg_ep_submit_publish(ep, sq_cons, *cq_prod);
	mutex_unlock(&ep->lock);
	r = rmsg_region_pin(ep, sqe->addr, sqe->len, writable);
	mutex_lock(&ep->lock);
	rmsg_cq_flush_locked(ep);
	*cq_prod = ep->cq_prod;
	/* Accepted by whoever posted meanwhile; never behind ours. */
	*cons = ep->cq_cons;
	if (!list_empty(&ep->overflow) ||
	    rmsg_ring_free(ep->cq.entries, *cq_prod, *cons) <= ep->cq_reserved) {
		if (!IS_ERR(r))
			rmsg_region_put(r);
		return false;
	}
	ep->pinned = r;
	return true;
}

/*
 * Take up to @to_submit SQEs, stopping early when the CQ is full: a CQE the
 * program has not consumed is never overwritten. Returns the number taken,
 * -EBUSY when SQEs were waiting but the CQ had no room for any, -EINVAL
 * (taking nothing) when the program wrote an impossible index. Called by
 * ENTER, or by the endpoint's kernel poller (rmsg_sqpoll.c) instead, under
 * ep->submit_lock, which keeps the two from running the same SQE while
 * ep->lock is dropped for a pin.
 */
int rmsg_ep_submit(struct rmsg_endpoint *ep, u32 to_submit)
{
	struct rmsg_ep_ring *sq = &ep->sq, *cq = &ep->cq;
	const struct rmsg_sqe *sqes = sq->descs;
	struct rmsg_cqe *cqes = cq->descs;
	u32 prod, cons, sq_cons, cq_prod, n, done;
	struct rmsg_sqe sqe, next;
	struct rmsg_cqe cqe;
	bool writable;
	int ret;

	mutex_lock(&ep->submit_lock);
	mutex_lock(&ep->lock);
	/* A: the SQEs before prod were written before prod. */
	prod = smp_load_acquire(sq->producer);
	/* D: the program finished reading the CQEs before cons. */
	cons = smp_load_acquire(cq->consumer);
	if (!rmsg_ring_prod_ok(sq->entries, ep->sq_cons, ep->sq_prod, prod) ||
	    !rmsg_ring_cons_ok(ep->cq_prod, ep->cq_cons, cons)) {
		atomic_long_inc(&ep->bad_index);
		ret = -EINVAL;
		goto out;
	}
	ep->sq_prod = prod;
	ep->cq_cons = cons;
	/* Kept events are older than what this call completes. */
	rmsg_cq_flush_locked(ep);
	/* The program may have overwritten it; the poller owns it, if any. */
	if (!ep->sqpoll)
		WRITE_ONCE(*sq->flags, RMSG_SQ_NEED_WAKEUP);

	sq_cons = ep->sq_cons;
	cq_prod = ep->cq_prod;
	n = min(to_submit, rmsg_ring_used(prod, sq_cons));
	/*
	 * One copy of each SQE, then only the copy is looked at: the program
	 * may rewrite a slot at any time (no double fetch). The next one is
	 * copied ahead, for a SEND to see whether more follow on its channel.
	 */
	if (n)
		memcpy(&sqe, &sqes[rmsg_ring_slot(sq->entries, sq_cons)],
		       sizeof(sqe));
	for (done = 0; done < n; done++) {
		/* Room for this SQE's CQE beside those owed to SENDs. */
		if (rmsg_ring_free(cq->entries, cq_prod, cons) <=
		    ep->cq_reserved)
			break;
		if (done + 1 < n)
			memcpy(&next, &sqes[rmsg_ring_slot(sq->entries,
							   sq_cons + 1)],
			       sizeof(next));
		barrier();
		if (rmsg_sqe_pins(&sqe, &writable) &&
		    !rmsg_ep_submit_pin(ep, &sqe, writable, sq_cons, &cq_prod,
					&cons))
			break;
		if (rmsg_ep_exec(ep, &sqe, done + 1 < n ? &next : NULL, &cqe))
			cqes[rmsg_ring_slot(cq->entries, cq_prod++)] = cqe;
		/* Not taken when the SQE failed before it wanted the pages. */
		if (ep->pinned) {
			if (!IS_ERR(ep->pinned))
				rmsg_region_put(ep->pinned);
			ep->pinned = NULL;
		}
		sq_cons++;
		sqe = next;
	}
	rmsg_data_batch_end(ep);
	rmsg_ep_submit_publish(ep, sq_cons, cq_prod);
	ret = done ? done : n ? -EBUSY : 0;
out:
	mutex_unlock(&ep->lock);
	mutex_unlock(&ep->submit_lock);
	return ret;
}
