// SPDX-License-Identifier: GPL-2.0
/*
 * rmsg: /dev/rmsg, the character device programs reach rmsg through.
 *
 * Every ioctl argument is a struct from <rdma/rmsg.h> whose flags and
 * reserved fields must be zero: the kernel rejects anything else with EINVAL
 * so that those fields can be given a meaning later.
 *
 * Layer (Documentation/design.rst, "Layers"): of the module's files it
 * calls only these, all below it: rmsg_channel.c, rmsg_ctl.c,
 * rmsg_devices.c, rmsg_endpoint.c, rmsg_links.c, rmsg_listen.c and
 * rmsg_region.c.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/cdev.h>
#include <linux/device.h>
#include <linux/fs.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "rmsg.h"
#include "rmsg_compat.h"
#include "rmsg_links.h"
#include "rmsg_region.h"

static long rmsg_ioctl_version(void __user *uarg)
{
	struct rmsg_version ver;

	if (copy_from_user(&ver, uarg, sizeof(ver)))
		return -EFAULT;
	if (ver.flags || !rmsg_all_zero(ver.resv, sizeof(ver.resv)))
		return -EINVAL;
	ver.abi_version = RMSG_ABI_VERSION;
	ver.features = RMSG_FEATURES;
	if (copy_to_user(uarg, &ver, sizeof(ver)))
		return -EFAULT;
	return 0;
}

static long rmsg_ioctl_dev_list(void __user *uarg)
{
	struct rmsg_dev_info *devs = NULL;
	struct rmsg_dev_list req;
	u32 capacity, total, generation;
	int n;
	long ret = 0;

	if (copy_from_user(&req, uarg, sizeof(req)))
		return -EFAULT;
	if (req.flags || !rmsg_all_zero(req.resv, sizeof(req.resv)))
		return -EINVAL;
	if (req.count && !req.devs)
		return -EFAULT;

	/*
	 * The kernel buffer is bounded by the devices that exist, not by what
	 * the caller claims to have room for; devices added meanwhile are
	 * reported in count, and filled tells the caller to ask again.
	 */
	capacity = min(req.count, rmsg_devices_count());
	if (capacity) {
		devs = kvcalloc(capacity, sizeof(*devs), GFP_KERNEL);
		if (!devs)
			return -ENOMEM;
	}
	n = rmsg_devices_list(devs, capacity, &total, &generation);

	if (n && copy_to_user(u64_to_user_ptr(req.devs), devs,
			      array_size(n, sizeof(*devs)))) {
		ret = -EFAULT;
		goto out;
	}
	req.count = total;
	req.generation = generation;
	req.filled = n;
	if (copy_to_user(uarg, &req, sizeof(req)))
		ret = -EFAULT;
out:
	kvfree(devs);
	return ret;
}

/* A channel connects; with links on, its peer gets a carrier too. */
static long rmsg_cdev_connect(struct rmsg_endpoint *ep, void __user *uarg)
{
	struct sockaddr_storage dst;
	long ret;

	ret = rmsg_chan_connect(ep, uarg, &dst, rmsg_link_carrier);
	if (!ret)
		rmsg_link_want(current->nsproxy->net_ns, &dst);
	return ret;
}

static long rmsg_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	void __user *uarg = (void __user *)arg;
	struct rmsg_endpoint *ep = file->private_data;

	switch (cmd) {
	case RMSG_IOC_VERSION:
		return rmsg_ioctl_version(uarg);
	case RMSG_IOC_DEV_LIST:
		return rmsg_ioctl_dev_list(uarg);
	case RMSG_IOC_EP_SETUP:
		return rmsg_ep_setup(ep, uarg);
	case RMSG_IOC_ENTER:
		return rmsg_ep_enter(ep, uarg);
	case RMSG_IOC_LISTEN:
		return rmsg_chan_listen(ep, uarg);
	case RMSG_IOC_CONNECT:
		return rmsg_cdev_connect(ep, uarg);
	case RMSG_IOC_CLOSE:
		return rmsg_chan_close(ep, uarg);
	case RMSG_IOC_ACCEPT:
		return rmsg_chan_accept(ep, uarg);
	case RMSG_IOC_EP_STATS:
		return rmsg_ep_get_stats(ep, uarg);
	case RMSG_IOC_REG:
		return rmsg_region_reg(ep, uarg);
	case RMSG_IOC_DEREG:
		return rmsg_region_dereg(ep, uarg);
	case RMSG_IOC_CHAN_LIST:
		return rmsg_ctl_chan_list(ep, uarg);
	case RMSG_IOC_FAULT:
		return rmsg_ctl_fault(ep, uarg);
	case RMSG_IOC_CHAN_ADDR:
		return rmsg_chan_addr(ep, uarg);
	case RMSG_IOC_CHAN_SET:
		return rmsg_chan_set(ep, uarg);
	case RMSG_IOC_LINK_LIST:
		return rmsg_link_list(uarg);
	case RMSG_IOC_CHAN_DROP:
		return rmsg_chan_drop(ep, uarg);
	default:
		return -ENOTTY;
	}
}

/* Every open file is an endpoint (rmsg_endpoint.c). */
static int rmsg_open(struct inode *inode, struct file *file)
{
	struct rmsg_endpoint *ep;
	int ret;

	ret = nonseekable_open(inode, file);
	if (ret)
		return ret;
	ep = rmsg_ep_create();
	if (IS_ERR(ep))
		return PTR_ERR(ep);
	file->private_data = ep;
	/*
	 * Mappings of this file are found in an address space of the
	 * endpoint's own: zapping a leased block's range there reaches this
	 * endpoint's mappings only (struct rmsg_endpoint).
	 */
	ep->block_mapping.host = inode;
	file->f_mapping = &ep->block_mapping;
	return 0;
}

/* Runs after the last mapping of the rings is gone: each holds the file. */
static int rmsg_release(struct inode *inode, struct file *file)
{
	rmsg_ep_destroy(file->private_data);
	return 0;
}

static int rmsg_mmap(struct file *file, struct vm_area_struct *vma)
{
	return rmsg_ep_mmap(file->private_data, vma);
}

static __poll_t rmsg_poll(struct file *file, poll_table *wait)
{
	return rmsg_ep_poll(file->private_data, file, wait);
}

/*
 * No .llseek: a file without one is not seekable, lseek() fails with
 * ESPIPE (6.0 on; 6.12 removed no_llseek(), which did the same).
 */
static const struct file_operations rmsg_fops = {
	.owner		= THIS_MODULE,
	.open		= rmsg_open,
	.release	= rmsg_release,
	.unlocked_ioctl	= rmsg_ioctl,
	.mmap		= rmsg_mmap,
	.poll		= rmsg_poll,
	.compat_ioctl	= compat_ptr_ioctl,
};

/*
 * Who may open /dev/rmsg is the node's mode and group, which devtmpfs
 * takes from the device (a udev rule may still change them). The default
 * lets every user open it, as the RDMA core's own rdma_cm and uverbs
 * nodes do: what a user can hold is bounded per user (rmsg_user.c), and
 * nothing acts on another user's endpoint without CAP_NET_ADMIN.
 */
static ushort dev_mode = 0666;
module_param(dev_mode, ushort, 0444);
MODULE_PARM_DESC(dev_mode,
		 "Mode of /dev/rmsg, read and write bits only (default 0666)");

static uint dev_gid;
module_param(dev_gid, uint, 0444);
MODULE_PARM_DESC(dev_gid, "Group of /dev/rmsg (default 0)");

static dev_t rmsg_devt;
static struct cdev rmsg_cdev;
static struct class *rmsg_class;
static struct device *rmsg_dev;
static kgid_t rmsg_dev_kgid;

static char *rmsg_devnode(RMSG_DEVNODE_CONST struct device *dev,
			  umode_t *mode, kuid_t *uid, kgid_t *gid)
{
	if (mode)
		*mode = dev_mode;
	if (gid)
		*gid = rmsg_dev_kgid;
	return NULL;
}

static const struct device_type rmsg_dev_type = {
	.name		= "rmsg",
	.devnode	= rmsg_devnode,
};

static void rmsg_dev_release(struct device *dev)
{
	kfree(dev);
}

/**
 * rmsg_cdev_init() - create /dev/rmsg
 *
 * A character device of its own rather than a misc device: the misc core
 * gives devtmpfs a node's mode but not its group.
 *
 * Return: 0, or -EINVAL for a bad dev_mode or dev_gid, or the error of
 * the driver core.
 */
int rmsg_cdev_init(void)
{
	int ret;

	rmsg_dev_kgid = make_kgid(&init_user_ns, dev_gid);
	if (dev_mode & ~0666 || !gid_valid(rmsg_dev_kgid)) {
		pr_err("dev_mode %#o or dev_gid %u is not valid\n", dev_mode,
		       dev_gid);
		return -EINVAL;
	}
	ret = alloc_chrdev_region(&rmsg_devt, 0, 1, "rmsg");
	if (ret)
		return ret;
	rmsg_class = rmsg_class_create("rmsg");
	if (IS_ERR(rmsg_class)) {
		ret = PTR_ERR(rmsg_class);
		goto out_region;
	}
	rmsg_dev = kzalloc(sizeof(*rmsg_dev), GFP_KERNEL);
	if (!rmsg_dev) {
		ret = -ENOMEM;
		goto out_class;
	}
	device_initialize(rmsg_dev);
	rmsg_dev->devt = rmsg_devt;
	rmsg_dev->class = rmsg_class;
	rmsg_dev->type = &rmsg_dev_type;
	rmsg_dev->release = rmsg_dev_release;
	ret = dev_set_name(rmsg_dev, "rmsg");
	if (ret)
		goto out_dev;
	cdev_init(&rmsg_cdev, &rmsg_fops);
	rmsg_cdev.owner = THIS_MODULE;
	ret = cdev_device_add(&rmsg_cdev, rmsg_dev);
	if (ret)
		goto out_dev;
	return 0;

out_dev:
	put_device(rmsg_dev);
out_class:
	class_destroy(rmsg_class);
out_region:
	unregister_chrdev_region(rmsg_devt, 1);
	return ret;
}

void rmsg_cdev_exit(void)
{
	cdev_device_del(&rmsg_cdev, rmsg_dev);
	put_device(rmsg_dev);
	class_destroy(rmsg_class);
	unregister_chrdev_region(rmsg_devt, 1);
}
