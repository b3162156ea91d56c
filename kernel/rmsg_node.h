/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rmsg_node.c: liveness per peer node. For the life cycle, which makes
 * open channels members and takes them out; it uses only rmsg_wr.c's
 * workqueue.
 */
#ifndef RMSG_NODE_H
#define RMSG_NODE_H

#include "rmsg_chan.h"

extern unsigned int heartbeat_ms;
extern unsigned int heartbeat_misses;

int rmsg_node_join(struct rmsg_channel *ch);
void rmsg_node_leave(struct rmsg_channel *ch);

#endif
