// SPDX-License-Identifier: LGPL-2.1-or-later OR BSD-2-Clause
/*
 * librmsg internal: the send-area allocator (see rmsg_area.h).
 *
 * Invariants, with offsets taken modulo the area in the direction of
 * allocation:
 *  - the records from @tail to @head are contiguous and cover exactly @used
 *    bytes; a skip record fills the end of the area when the next record
 *    went to the start;
 *  - when @used is 0, @head and @tail are both 0, so an idle area always
 *    offers its whole size in one piece;
 *  - every record header that lies between @tail and @head is valid, and
 *    the header at @tail is RMSG_AREA_BUSY unless @used is 0.
 * The headers lie in memory the program can write, so the walks below
 * check each header before trusting its size: a scribbled header makes the
 * allocator refuse work, never read or write outside the area.
 */
#include <errno.h>
#include <string.h>

#include "rmsg_area.h"

static uint32_t rmsg_area_rec(uint32_t len)
{
	if (!len)
		len = 1;	/* a payload offset inside the area, even for 0 */
	return RMSG_AREA_HDR +
	       ((len + RMSG_AREA_ALIGN - 1) & ~(uint32_t)(RMSG_AREA_ALIGN - 1));
}

/**
 * rmsg_area_init() - start an empty allocator over an area
 * @a: the state to set up
 * @base: the area, RMSG_AREA_ALIGN-aligned
 * @size: its bytes; rounded down to RMSG_AREA_ALIGN
 *
 * Return: 0, or -EINVAL when the area cannot hold one record.
 */
int rmsg_area_init(struct rmsg_area *a, void *base, uint32_t size)
{
	memset(a, 0, sizeof(*a));
	size &= ~(uint32_t)(RMSG_AREA_ALIGN - 1);
	if (size < 2 * RMSG_AREA_HDR || (uintptr_t)base % RMSG_AREA_ALIGN)
		return -EINVAL;
	a->base = base;
	a->size = size;
	return 0;
}

/**
 * rmsg_area_max() - the largest payload the area can ever hold
 * @a: the allocator
 *
 * Return: bytes (the area less one header).
 */
uint32_t rmsg_area_max(const struct rmsg_area *a)
{
	return a->size - RMSG_AREA_HDR;
}

/**
 * rmsg_area_alloc() - take room for a payload at the head
 * @a: the allocator
 * @len: payload bytes
 * @off: out: offset of the payload from the area's start
 *
 * The record's cookie starts at 0 (rmsg_area_hdr() sets it).
 *
 * Return: 0; -EMSGSIZE when @len exceeds rmsg_area_max(); -EAGAIN when the
 * room is not free yet (free records first).
 */
int rmsg_area_alloc(struct rmsg_area *a, uint32_t len, uint32_t *off)
{
	uint32_t rec, left, room = a->size - a->used;
	struct rmsg_area_hdr *h;

	if (len > rmsg_area_max(a))
		return -EMSGSIZE;
	rec = rmsg_area_rec(len);
	left = a->size - a->head;
	if (rec > left) {
		/*
		 * The record goes to the start; what is left at the end is
		 * given up until the tail passes it. The free bytes from the
		 * start are the room less that part (the tail is before the
		 * head, or the area is idle and left is all of it).
		 */
		if (left + rec > room)
			return -EAGAIN;
		if (left) {
			h = (struct rmsg_area_hdr *)(a->base + a->head);
			h->size = left;
			h->state = RMSG_AREA_FREE;
			h->cookie = 0;
			a->used += left;
		}
		a->head = 0;
	} else if (rec > room) {
		return -EAGAIN;
	}
	h = (struct rmsg_area_hdr *)(a->base + a->head);
	h->size = rec;
	h->state = RMSG_AREA_BUSY;
	h->cookie = 0;
	*off = a->head + RMSG_AREA_HDR;
	a->head += rec;
	a->used += rec;
	a->live++;
	return 0;
}

/* Whether @hoff is the header of a record between tail and head. */
static int rmsg_area_live(const struct rmsg_area *a, uint32_t hoff)
{
	const struct rmsg_area_hdr *h;
	uint32_t dist;

	if (hoff >= a->size || hoff % RMSG_AREA_ALIGN || !a->used)
		return 0;
	dist = hoff >= a->tail ? hoff - a->tail : hoff + a->size - a->tail;
	if (dist >= a->used)
		return 0;
	h = (const struct rmsg_area_hdr *)(a->base + hoff);
	return h->state == RMSG_AREA_BUSY && h->size >= RMSG_AREA_HDR &&
	       h->size % RMSG_AREA_ALIGN == 0 &&
	       h->size <= a->size - hoff && h->size <= a->used - dist;
}

/* The newest record's header, if @off is its payload; else NULL. */
static struct rmsg_area_hdr *rmsg_area_newest(const struct rmsg_area *a,
					      uint32_t off)
{
	struct rmsg_area_hdr *h;

	if (off < RMSG_AREA_HDR || !rmsg_area_live(a, off - RMSG_AREA_HDR))
		return NULL;
	h = rmsg_area_hdr(a, off);
	return off - RMSG_AREA_HDR + h->size == a->head ? h : NULL;
}

/* The allocator went idle: start over at offset 0. */
static void rmsg_area_idle(struct rmsg_area *a)
{
	if (!a->used)
		a->head = a->tail = 0;
}

/**
 * rmsg_area_shrink() - give back the end of the newest record
 * @a: the allocator
 * @off: the newest record's payload offset
 * @len: payload bytes to keep, at most what it was allocated with
 *
 * Lets a caller reserve room for the largest message, build a shorter one
 * in place and keep only what it used.
 *
 * Return: 0, or -EINVAL when @off is not the newest record or @len is
 * larger than it.
 */
int rmsg_area_shrink(struct rmsg_area *a, uint32_t off, uint32_t len)
{
	struct rmsg_area_hdr *h = rmsg_area_newest(a, off);
	uint32_t rec;

	if (!h || len > h->size - RMSG_AREA_HDR)
		return -EINVAL;
	rec = rmsg_area_rec(len);
	a->head -= h->size - rec;
	a->used -= h->size - rec;
	h->size = rec;
	return 0;
}

/**
 * rmsg_area_cancel() - take back the newest record as if never allocated
 * @a: the allocator
 * @off: the newest record's payload offset
 *
 * A skip the allocation made stays until the tail passes it.
 *
 * Return: 0, or -EINVAL when @off is not the newest record.
 */
int rmsg_area_cancel(struct rmsg_area *a, uint32_t off)
{
	struct rmsg_area_hdr *h = rmsg_area_newest(a, off);

	if (!h)
		return -EINVAL;
	a->head -= h->size;
	a->used -= h->size;
	a->live--;
	h->state = 0;
	rmsg_area_idle(a);
	return 0;
}

/**
 * rmsg_area_free() - free a record, in any order
 * @a: the allocator
 * @off: the record's payload offset (from rmsg_area_alloc())
 * @cookie: if not NULL, set to the record's cookie
 *
 * Return: 0, or -EINVAL when @off is not a live record (never allocated,
 * or freed already); -EIO when the tail met a header that was overwritten
 * (the record is freed, but its room may not come back).
 */
int rmsg_area_free(struct rmsg_area *a, uint32_t off, uint64_t *cookie)
{
	struct rmsg_area_hdr *h;

	if (off < RMSG_AREA_HDR || !rmsg_area_live(a, off - RMSG_AREA_HDR))
		return -EINVAL;
	h = rmsg_area_hdr(a, off);
	if (cookie)
		*cookie = h->cookie;
	h->state = RMSG_AREA_FREE;
	a->live--;
	while (a->used) {
		h = (struct rmsg_area_hdr *)(a->base + a->tail);
		if (h->state == RMSG_AREA_BUSY)
			break;
		if (h->state != RMSG_AREA_FREE || h->size < RMSG_AREA_HDR ||
		    h->size % RMSG_AREA_ALIGN || h->size > a->used ||
		    h->size > a->size - a->tail)
			return -EIO;
		a->tail += h->size;
		a->used -= h->size;
		if (a->tail == a->size)
			a->tail = 0;
	}
	rmsg_area_idle(a);
	return 0;
}
