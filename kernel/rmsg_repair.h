/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rmsg_repair.c: the steps of a repair. For rmsg_channel.c; it calls
 * rmsg_cm.c, rmsg_lifecycle.c, rmsg_conn.c and the data path.
 */
#ifndef RMSG_REPAIR_H
#define RMSG_REPAIR_H

#include "rmsg_chan.h"

int rmsg_repair_drop(struct rmsg_channel *ch);
void rmsg_chan_repair(struct rmsg_channel *ch);

#endif
