// SPDX-License-Identifier: GPL-2.0
/*
 * rmsg: /dev/rmsg, the character device programs reach rmsg through.
 *
 * Every ioctl argument is a struct from <rdma/rmsg.h> whose flags and
 * reserved fields must be zero: the kernel rejects anything else with EINVAL
 * so that those fields can be given a meaning later.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/fs.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "rmsg.h"

/* At most this many devices are described per RMSG_IOC_DEV_LIST call. */
#define RMSG_DEV_LIST_MAX	256

static bool rmsg_all_zero(const void *p, size_t len)
{
	return !memchr_inv(p, 0, len);
}

static long rmsg_ioctl_version(void __user *uarg)
{
	struct rmsg_version ver;

	if (copy_from_user(&ver, uarg, sizeof(ver)))
		return -EFAULT;
	if (ver.flags || !rmsg_all_zero(ver.resv, sizeof(ver.resv)))
		return -EINVAL;
	ver.abi_version = RMSG_ABI_VERSION;
	ver.features = RMSG_FEAT_DEV_LIST;
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
	if (req.flags || req.resv0 || !rmsg_all_zero(req.resv, sizeof(req.resv)))
		return -EINVAL;
	if (req.count && !req.devs)
		return -EFAULT;

	capacity = min_t(u32, req.count, RMSG_DEV_LIST_MAX);
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
	if (copy_to_user(uarg, &req, sizeof(req)))
		ret = -EFAULT;
out:
	kvfree(devs);
	return ret;
}

static long rmsg_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	void __user *uarg = (void __user *)arg;

	switch (cmd) {
	case RMSG_IOC_VERSION:
		return rmsg_ioctl_version(uarg);
	case RMSG_IOC_DEV_LIST:
		return rmsg_ioctl_dev_list(uarg);
	default:
		return -ENOTTY;
	}
}

static int rmsg_open(struct inode *inode, struct file *file)
{
	return nonseekable_open(inode, file);
}

static int rmsg_release(struct inode *inode, struct file *file)
{
	return 0;
}

static const struct file_operations rmsg_fops = {
	.owner		= THIS_MODULE,
	.open		= rmsg_open,
	.release	= rmsg_release,
	.unlocked_ioctl	= rmsg_ioctl,
	.compat_ioctl	= compat_ptr_ioctl,
	.llseek		= no_llseek,
};

static struct miscdevice rmsg_miscdev = {
	.minor	= MISC_DYNAMIC_MINOR,
	.name	= "rmsg",
	.fops	= &rmsg_fops,
	.mode	= 0600,
};

int rmsg_cdev_init(void)
{
	return misc_register(&rmsg_miscdev);
}

void rmsg_cdev_exit(void)
{
	misc_deregister(&rmsg_miscdev);
}
