/* SPDX-License-Identifier: LGPL-2.1-or-later OR BSD-2-Clause */
/*
 * librmsg internal: what the library keeps per endpoint and per channel for
 * eager messages (Documentation/messages.rst). Not installed.
 */
#ifndef _RMSG_PRIV_H
#define _RMSG_PRIV_H

#include <pthread.h>
#include <stdbool.h>

#include "rmsg.h"
#include "rmsg_area.h"
#include "rmsg_vb.h"

#pragma GCC visibility push(hidden)

/*
 * The library owns the user_data of the SQEs it submits and tags them, so
 * that a completion says what it completes without a lookup: bits 63..32
 * are RMSG_TAG_MAGIC, 31..28 the operation, 27..0 its value (SEND: the
 * payload's send-area offset, below RMSG_SEND_AREA_MAX; CREDIT, ARM: the
 * channel, below RMSG_MAX_CHANNELS). The program's user_data of a send
 * waits in the send area's record header meanwhile.
 */
#define RMSG_TAG_MAGIC		0x726d7367ULL	/* "rmsg" */
#define RMSG_TAG(op, val)	(RMSG_TAG_MAGIC << 32 | (__u64)(op) << 28 | \
				 ((val) & 0xfffffffU))
#define RMSG_TAG_IS_LIB(ud)	((ud) >> 32 == RMSG_TAG_MAGIC)
#define RMSG_TAG_OP(ud)		((unsigned int)((ud) >> 28) & 0xf)
#define RMSG_TAG_VAL(ud)	((__u32)(ud) & 0xfffffffU)

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
 * @block: the receive block, mapped read-only, or NULL
 * @map_len: length of that mapping
 * @max_msg: the largest message this side may send (the event's aux)
 * @inflight: SENDs submitted whose completion has not been seen
 * @err: the error that stops reading (-EPROTO), else 0
 * @slot: index in rmsg_ep_data.active while @block is mapped
 * @state: enum rmsg_chan_state
 * @armed: an ARM is outstanding (its READABLE not yet seen)
 * @credit_owed: a credit update is due but found no SQE
 */
struct rmsg_chan {
	struct rmsg_vb_rx rx;
	const unsigned char *block;
	size_t map_len;
	__u32 max_msg;
	__u32 inflight;
	int err;
	__u32 slot;
	__u8 state;
	__u8 armed;
	__u8 credit_owed;
};

/**
 * struct rmsg_ep_data - the library's state of one endpoint
 * @chans: channel table, indexed by id, grown on demand
 * @nchans: entries in @chans
 * @active: ids of the channels with a mapped block, in no order
 * @nactive: entries used in @active
 * @active_cap: entries allocated in @active
 * @next: where rmsg_peek_any() looks first in @active
 * @owed: channels with credit_owed set
 * @area: allocator over the send area
 * @area_map: the send area's mapping, or NULL
 * @area_len: its length
 * @resv: a reservation of rmsg_reserve() waits for rmsg_commit()
 * @resv_chan: its channel
 * @resv_off: its payload offset in the send area
 * @resv_len: its bytes
 * @features: the module's RMSG_FEAT_* bits
 * @page_size: the system page size
 * @lock: the endpoint's mutex after rmsg_ep_set_locking(), else NULL
 * @lib_errors: library operations (CREDIT, ARM) the kernel failed
 * @bad_cqes: completions the library could not match to what it sent
 */
struct rmsg_ep_data {
	struct rmsg_chan *chans;
	__u32 nchans;
	__u32 *active;
	__u32 nactive;
	__u32 active_cap;
	__u32 next;
	__u32 owed;
	struct rmsg_area area;
	void *area_map;
	size_t area_len;
	bool resv;
	__u32 resv_chan;
	__u32 resv_off;
	__u32 resv_len;
	__u64 features;
	size_t page_size;
	pthread_mutex_t *lock;
	__u64 lib_errors;
	__u64 bad_cqes;
};

int rmsg_ep_data_init(struct rmsg_ep *ep, const struct rmsg_ep_setup *p);
void rmsg_ep_data_free(struct rmsg_ep *ep);

#pragma GCC visibility pop

#endif /* _RMSG_PRIV_H */
