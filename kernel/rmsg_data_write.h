/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rmsg_data_write.c: the record writer and the rewrite after a repair,
 * and what they share with rmsg_data.c, which calls them
 */
#ifndef _RMSG_DATA_WRITE_H
#define _RMSG_DATA_WRITE_H

#include <linux/build_bug.h>
#include <linux/list.h>
#include <linux/types.h>

#include "rmsg_chan.h"

#define RMSG_PEND_MASK		(RMSG_CHAN_MAX_PENDING - 1)
static_assert(!(RMSG_CHAN_MAX_PENDING & RMSG_PEND_MASK));
static_assert(RMSG_MAX_INLINE >= RMSG_VB_TRAILER_SIZE);
/*
 * The zeros for clear zones and padding sit after the trailers, then the
 * ones a summary hint writes from on a device without inline data.
 */
#define RMSG_ZEROS		RMSG_TX_SLOTS
#define RMSG_ONES		(RMSG_TX_SLOTS + 1)
#define RMSG_TRAILER_ENTRIES	(RMSG_TX_SLOTS + 2)
/* The summary hint's writes: the channel's byte, then its group's. */
#define RMSG_HINT_WRS		2
static_assert(RMSG_VB_CLEAR <= RMSG_VB_TRAILER_SIZE);
/* A trailer never spans two pages, nor two chunks of the shadow. */
static_assert(RMSG_VB_ALIGN >= RMSG_VB_TRAILER_SIZE);
static_assert(!(PAGE_SIZE % RMSG_VB_ALIGN));

/**
 * struct rmsg_area_map - the send area as one device sees it
 * @node: entry in ep->area_maps
 * @ibdev: the device
 * @users: channels on @ibdev using it
 * @dma: bus address of each RMSG_AREA_CHUNK of the area
 */
struct rmsg_area_map {
	struct list_head node;
	struct ib_device *ibdev;
	u32 users;
	u64 dma[];
};

void rmsg_data_flush_signal(struct rmsg_channel *ch);
void rmsg_data_hint(struct rmsg_channel *ch);
int rmsg_data_rewrite(struct rmsg_channel *ch);
int rmsg_data_write(struct rmsg_channel *ch, u32 idx, bool more,
		    bool cqe_now);

#endif /* _RMSG_DATA_WRITE_H */
