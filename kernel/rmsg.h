/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rmsg: internal declarations shared by the module's files.
 */
#ifndef _RMSG_H
#define _RMSG_H

#include <linux/types.h>
#include <linux/list.h>
#include <linux/atomic.h>
#include <rdma/ib_verbs.h>
#include <rdma/rmsg.h>

/**
 * struct rmsg_device - an RDMA device rmsg has seen through its ib_client
 * @node: entry in the device list, under rmsg_devices_lock
 * @ibdev: the RDMA core's device; valid until rmsg_ib_remove() returns
 * @event_handler: receives port and device events (any context)
 * @fatal_events: IB_EVENT_DEVICE_FATAL events seen
 * @nports: ports on the device
 * @port_events: per-port event counts, index port number - 1
 */
struct rmsg_device {
	struct list_head node;
	struct ib_device *ibdev;
	struct ib_event_handler event_handler;
	atomic_t fatal_events;
	u32 nports;
	atomic_t port_events[];
};

int rmsg_devices_init(void);
void rmsg_devices_exit(void);
int rmsg_devices_list(struct rmsg_dev_info *out, u32 capacity, u32 *total,
		      u32 *generation);

int rmsg_cdev_init(void);
void rmsg_cdev_exit(void);

#endif /* _RMSG_H */
