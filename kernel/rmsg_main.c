// SPDX-License-Identifier: GPL-2.0
/*
 * rmsg: reliable, self-repairing message channels over RDMA.
 *
 * Module entry and exit. Documentation/ describes the design.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>

#include "rmsg.h"

static int __init rmsg_init(void)
{
	int ret;

	rmsg_user_init();
	ret = rmsg_chan_init_module();
	if (ret)
		goto out_user;
	ret = rmsg_devices_init();
	if (ret)
		goto out_chan;
	ret = rmsg_cdev_init();
	if (ret)
		goto out_devices;
	pr_info("loaded, ABI version %u\n", RMSG_ABI_VERSION);
	return 0;

out_devices:
	rmsg_devices_exit();
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
	rmsg_devices_exit();
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
