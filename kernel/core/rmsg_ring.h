/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * rmsg protocol core: power-of-two rings with free-running 32-bit indices,
 * and wrap-safe sequence number comparison.
 *
 * Producer and consumer indices count entries since the ring was set up and
 * wrap at 2^32; the slot of index i is i & (size - 1). The number of entries
 * in use is always prod - cons in u32 arithmetic, even across the wrap, as
 * long as it never exceeds the size. A size of at most 2^31 keeps "moved
 * backwards" (a distance near 2^32) apart from "moved forwards" (a distance
 * of at most the size).
 */
#ifndef _RMSG_RING_H
#define _RMSG_RING_H

#include "rmsg_core_types.h"

#define RMSG_RING_MAX_SIZE	(1U << 31)

/* True for a usable ring size: a power of two from 1 to 2^31. */
static inline bool rmsg_ring_size_ok(u32 size)
{
	return size && size <= RMSG_RING_MAX_SIZE && !(size & (size - 1));
}

/* Slot of free-running index @idx in a ring of @size entries. */
static inline u32 rmsg_ring_slot(u32 size, u32 idx)
{
	return idx & (size - 1);
}

/* Entries written but not yet consumed. */
static inline u32 rmsg_ring_used(u32 prod, u32 cons)
{
	return prod - cons;
}

/* Entries the producer may still write; assumes a sane prod and cons. */
static inline u32 rmsg_ring_free(u32 size, u32 prod, u32 cons)
{
	return size - (prod - cons);
}

/**
 * rmsg_ring_prod_ok() - check a producer index from an untrusted writer
 * @size: ring size (rmsg_ring_size_ok())
 * @cons: the consumer index, trusted
 * @old_prod: the last producer index accepted, trusted
 * @new_prod: the producer index just read, untrusted
 *
 * The producer may only add entries: it must not move back behind
 * @old_prod (which would make consumed entries look new, or let the next
 * check see a huge distance) and must not run more than @size ahead of the
 * consumer (which would overwrite unconsumed entries).
 *
 * Return: true when @new_prod may be accepted.
 */
static inline bool rmsg_ring_prod_ok(u32 size, u32 cons, u32 old_prod,
				     u32 new_prod)
{
	return new_prod - cons <= size && new_prod - old_prod <= size;
}

/**
 * rmsg_ring_cons_ok() - check a consumer index from an untrusted reader
 * @prod: the producer index, trusted
 * @old_cons: the last consumer index accepted, trusted
 * @new_cons: the consumer index just read, untrusted
 *
 * The consumer may only move forwards and not past what was produced, so
 * that the producer never reuses a slot the consumer still reads.
 *
 * Return: true when @new_cons may be accepted.
 */
static inline bool rmsg_ring_cons_ok(u32 prod, u32 old_cons, u32 new_cons)
{
	return new_cons - old_cons <= prod - old_cons;
}

/*
 * Sequence numbers wrap at 2^32; a is before b when b is less than 2^31
 * steps ahead of a. Only meaningful for numbers less than 2^31 apart.
 */
static inline bool rmsg_seq_before(u32 a, u32 b)
{
	return (s32)(a - b) < 0;
}

static inline bool rmsg_seq_after(u32 a, u32 b)
{
	return rmsg_seq_before(b, a);
}

/* True when @seq lies in [@lo, @hi], walking forwards from @lo. */
static inline bool rmsg_seq_between(u32 seq, u32 lo, u32 hi)
{
	return seq - lo <= hi - lo;
}

#endif /* _RMSG_RING_H */
