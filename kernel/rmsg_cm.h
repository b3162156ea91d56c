/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rmsg_cm.c: the rdma_cm events of a channel's ids, accepting, and a
 * connection's addresses. For rmsg_listen.c, rmsg_channel.c and
 * rmsg_repair.c; it calls rmsg_lifecycle.c and rmsg_conn.c.
 */
#ifndef RMSG_CM_H
#define RMSG_CM_H

#include "rmsg_chan.h"

extern unsigned int resolve_timeout_ms;

int rmsg_cm_handler(struct rdma_cm_id *cm_id, struct rdma_cm_event *event);
struct rdma_cm_id *rmsg_cm_settle(struct rmsg_channel *ch,
				  struct rdma_cm_id *id);
void rmsg_chan_do_accept(struct rmsg_channel *ch);
void rmsg_dial_addr(struct rmsg_channel *ch, struct sockaddr_storage *ss);
void rmsg_repair_reject(struct rdma_cm_id *id, bool gone);
void rmsg_repair_refuse(struct rdma_cm_id *id, bool gone);

#endif
