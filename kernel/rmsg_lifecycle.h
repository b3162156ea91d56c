/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rmsg_lifecycle.c: a channel's states and a repair's phases, and what
 * moves them. For every file above it; it calls only rmsg_conn.c, the data
 * path's open and reopen, and the endpoint's event ring.
 */
#ifndef RMSG_LIFECYCLE_H
#define RMSG_LIFECYCLE_H

#include "rmsg_chan.h"

extern unsigned int repair_backoff_ms;
extern unsigned int repair_backoff_max_ms;

void rmsg_chan_timers_init(struct rmsg_channel *ch);
void rmsg_hb_arm(struct rmsg_channel *ch);
void rmsg_chan_open_by(struct rmsg_channel *ch);
bool rmsg_chan_late(const struct rmsg_channel *ch);
unsigned int rmsg_stall_quiet_ms(const struct rmsg_channel *ch);

bool rmsg_chan_set_state(struct rmsg_channel *ch, enum rmsg_chan_state state,
			 int error);
void rmsg_repair_set_phase(struct rmsg_channel *ch,
			   enum rmsg_repair_phase phase);
void rmsg_chan_kill_locked(struct rmsg_channel *ch, int error);
void rmsg_chan_kill(struct rmsg_channel *ch, int error);
void rmsg_chan_setup_done(struct rmsg_channel *ch);
void rmsg_chan_fault_locked(struct rmsg_channel *ch, int error);
void rmsg_chan_fault(struct rmsg_channel *ch, int error);
void rmsg_chan_stalled(struct rmsg_channel *ch);
void rmsg_chan_liveness(struct rmsg_channel *ch);
void rmsg_chan_peer_ready(struct rmsg_channel *ch, u64 arg);
void rmsg_lifecycle_init_module(void);

#endif
