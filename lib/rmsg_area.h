/* SPDX-License-Identifier: LGPL-2.1-or-later OR BSD-2-Clause */
/*
 * librmsg internal: the send-area allocator.
 *
 * The send area is memory the program shares with the kernel: a message is
 * copied (or built) there, an RMSG_OP_SEND names its offset, and the bytes
 * must stay untouched until the SEND's completion. Completions of one
 * channel come in order, but those of different channels do not, so records
 * are freed out of order. The allocator is a ring of records, each with a
 * small header in front of its payload:
 *
 *   | hdr | payload ... | hdr | payload | hdr(skip) ...........| end
 *   ^tail (oldest live)                 ^head (next allocation)
 *
 * A record is allocated at the head. Freeing marks its header free, and the
 * tail then moves over every free record it finds, so the space of a record
 * freed early comes back once the records before it are freed too. A record
 * that does not fit before the end of the area turns the rest of the area
 * into a free "skip" record and goes to the start. Everything is plain C
 * with no system call, so the host unit tests exercise it directly
 * (tools/testing/unit/test_area.c). Not thread-safe: the caller locks.
 */
#ifndef _RMSG_AREA_H
#define _RMSG_AREA_H

#include <stdint.h>

/* Internal to librmsg: not exported, even from the static library's view. */
#pragma GCC visibility push(hidden)

/* Records start and payloads start on this boundary. */
#define RMSG_AREA_ALIGN		16
#define RMSG_AREA_HDR		16

/* rmsg_area_hdr.state */
#define RMSG_AREA_BUSY		0x42757379U	/* allocated, not yet freed */
#define RMSG_AREA_FREE		0x46726565U	/* freed, tail not past it */

/**
 * struct rmsg_area_hdr - the header in front of every record
 * @size: bytes of the record, header included; a multiple of
 *	RMSG_AREA_ALIGN
 * @state: RMSG_AREA_BUSY or RMSG_AREA_FREE
 * @cookie: the caller's, e.g. the user_data of the send
 */
struct rmsg_area_hdr {
	uint32_t size;
	uint32_t state;
	uint64_t cookie;
};

/**
 * struct rmsg_area - allocator state
 * @base: the area
 * @size: its bytes, a multiple of RMSG_AREA_ALIGN
 * @head: offset of the next record; @size when the last record ended at
 *	the end of the area
 * @tail: offset of the oldest record not yet passed over
 * @used: bytes from @tail to @head, free records and skips included
 * @live: records allocated and not yet freed
 */
struct rmsg_area {
	unsigned char *base;
	uint32_t size;
	uint32_t head;
	uint32_t tail;
	uint32_t used;
	uint32_t live;
};

int rmsg_area_init(struct rmsg_area *a, void *base, uint32_t size);
uint32_t rmsg_area_max(const struct rmsg_area *a);
int rmsg_area_alloc(struct rmsg_area *a, uint32_t len, uint32_t *off);
int rmsg_area_shrink(struct rmsg_area *a, uint32_t off, uint32_t len);
int rmsg_area_cancel(struct rmsg_area *a, uint32_t off);
int rmsg_area_free(struct rmsg_area *a, uint32_t off, uint64_t *cookie);

/* The header of the record whose payload is at @off (a valid record). */
static inline struct rmsg_area_hdr *rmsg_area_hdr(const struct rmsg_area *a,
						  uint32_t off)
{
	return (struct rmsg_area_hdr *)(a->base + off - RMSG_AREA_HDR);
}

#pragma GCC visibility pop

#endif /* _RMSG_AREA_H */
