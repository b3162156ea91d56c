// SPDX-License-Identifier: GPL-2.0
/*
 * rmsg: reliable, self-repairing message channels over RDMA.
 *
 * Module entry and exit. Documentation/ describes the design.
 *
 * Layer (Documentation/design.rst, "Layers"): of the module's files it
 * calls only these, all below it: rmsg_carrier.c, rmsg_cdev.c,
 * rmsg_channel.c, rmsg_ctl.c, rmsg_data.c, rmsg_devices.c,
 * rmsg_leases.c, rmsg_lifecycle.c, rmsg_link_chan.c, rmsg_links.c,
 * rmsg_rndv.c, rmsg_user.c and rmsg_wr.c.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>

#include "rmsg.h"
#include "rmsg_carrier.h"
#include "rmsg_links.h"
#include "rmsg_chan.h"
#include "rmsg_lifecycle.h"
#include "rmsg_link_chan.h"
#include "rmsg_wr.h"

/* The device layer's calls up: channels and the endpoint registry. */
static const struct rmsg_device_watch rmsg_device_watch = {
	.added		= rmsg_ctl_device_added,
	.removed	= rmsg_chan_device_removed,
	.fatal		= rmsg_chan_device_fatal,
};

static int __init rmsg_init(void)
{
	int ret;

	rmsg_user_init();
	ret = rmsg_chan_init_module();
	if (ret)
		goto out_user;
	ret = rmsg_data_init_module();
	if (ret)
		goto out_chan;
	/* Who takes which control message: before any channel exists. */
	rmsg_lifecycle_init_module();
	rmsg_rndv_init_module();
	rmsg_carrier_init_module();
	rmsg_link_chan_init_module();
	rmsg_link_init_module();
	rmsg_leases_init_module();
	ret = rmsg_wr_init_module();
	if (ret)
		goto out_data;
	ret = rmsg_devices_init(&rmsg_device_watch);
	if (ret)
		goto out_wr;
	ret = rmsg_cdev_init();
	if (ret)
		goto out_devices;
	pr_info("loaded, ABI version %u\n", RMSG_ABI_VERSION);
	return 0;

out_devices:
	rmsg_devices_exit();
out_wr:
	rmsg_wr_exit_module();
out_data:
	rmsg_data_exit_module();
out_chan:
	rmsg_chan_exit_module();
out_user:
	rmsg_user_exit();
	return ret;
}

/*
 * /dev/rmsg goes first so that no new caller arrives; an open file holds a
 * module reference, so none is left by the time we get here.
 */
static void __exit rmsg_exit(void)
{
	rmsg_cdev_exit();
	/* The carriers are channels on devices: before the devices go. */
	rmsg_link_exit_module();
	rmsg_link_chan_exit_module();
	rmsg_devices_exit();
	rmsg_wr_exit_module();
	rmsg_data_exit_module();
	rmsg_chan_exit_module();
	/* Last: everything it counts is gone by now, or leaked. */
	rmsg_user_exit();
	pr_info("unloaded\n");
}

module_init(rmsg_init);
module_exit(rmsg_exit);

MODULE_AUTHOR("The rmsg developers");
MODULE_DESCRIPTION("Reliable, self-repairing message channels over RDMA");
MODULE_LICENSE("GPL");
