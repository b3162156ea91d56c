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
		return rmsg_chan_connect(ep, uarg);
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
	if (!ep)
		return -ENOMEM;
	file->private_data = ep;
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

static const struct file_operations rmsg_fops = {
	.owner		= THIS_MODULE,
	.open		= rmsg_open,
	.release	= rmsg_release,
	.unlocked_ioctl	= rmsg_ioctl,
	.mmap		= rmsg_mmap,
	.poll		= rmsg_poll,
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
