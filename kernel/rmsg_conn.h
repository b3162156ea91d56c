/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rmsg_conn.c: a channel's connection on one device and its control
 * messages. For every channel file above it; it calls the data path,
 * rendezvous and rmsg_devices.c.
 */
#ifndef RMSG_CONN_H
#define RMSG_CONN_H

#include "rmsg_chan.h"

struct rmsg_carrier_conn;

/*
 * What a REQ or REP carries: the hello, and after an ACCEPT the accepting
 * side's addresses (the REP has room for them, the REQ has not).
 */
struct rmsg_conn_data {
	struct rmsg_wire_hello hello;
	struct rmsg_wire_addrs addrs;
};
static_assert(offsetof(struct rmsg_conn_data, addrs) == RMSG_WIRE_HELLO_SIZE);
static_assert(sizeof(struct rmsg_conn_data) <= RMSG_WIRE_REP_SIZE);

struct rmsg_conn *rmsg_conn_new(struct rdma_cm_id *id);
void rmsg_chan_set_conn(struct rmsg_channel *ch, struct rmsg_conn *conn);
int rmsg_block_register(struct rmsg_channel *ch);
int rmsg_chan_connection(struct rmsg_channel *ch, struct rdma_cm_id *id);
int rmsg_chan_create_qp(struct rmsg_channel *ch);
void rmsg_block_lease_make(struct rmsg_channel *ch);
void rmsg_qp_drain(struct rdma_cm_id *id, struct ib_qp *qp, bool handler_held);
void rmsg_chan_release_verbs(struct rmsg_channel *ch, bool in_handler);
bool rmsg_chan_dev_release(struct rmsg_channel *ch);
int rmsg_conn_hello_decode(struct rmsg_hello *hello,
			   const struct rdma_cm_event *event,
			   const struct rmsg_endpoint *ep);
u32 rmsg_chan_hello(struct rmsg_channel *ch, u8 kind,
		    struct rmsg_conn_data *data);
int rmsg_chan_link_setup(struct rmsg_channel *ch,
			 const struct rmsg_carrier_conn *cc);
int rmsg_chan_link_hello(struct rmsg_channel *ch, u8 kind, u16 port);
int rmsg_chan_link_up(struct rmsg_channel *ch);
void rmsg_chan_link_let_go(struct rmsg_channel *ch);
int rmsg_chan_link_rejoin(struct rmsg_channel *ch, struct rmsg_hello *answer);
void rmsg_conn_param(struct rmsg_channel *ch, struct rdma_cm_id *id,
		     struct rdma_conn_param *param,
		     struct rmsg_conn_data *data, u32 len);

#endif
