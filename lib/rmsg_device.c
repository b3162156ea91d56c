// SPDX-License-Identifier: LGPL-2.1-or-later OR BSD-2-Clause
/*
 * librmsg: opening /dev/rmsg and asking the module what it sees.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "rmsg.h"
#include "rmsg_util.h"

/* Snapshots asked for at most, beyond the first, before giving up. */
#define RMSG_DEV_LIST_TRIES	16

int rmsg_node_open(void)
{
	int fd = open(RMSG_DEVICE_PATH, O_RDWR | O_CLOEXEC);

	return fd < 0 ? -errno : fd;
}

int rmsg_node_version(int fd, struct rmsg_version *ver)
{
	memset(ver, 0, sizeof(*ver));
	if (ioctl(fd, RMSG_IOC_VERSION, ver))
		return -errno;
	return ver->abi_version == RMSG_ABI_VERSION ? 0 : -EPROTO;
}

static int rmsg_dev_list(int fd, struct rmsg_dev_info *devs, unsigned int cap,
			 struct rmsg_dev_list *req)
{
	memset(req, 0, sizeof(*req));
	req->count = cap;
	req->devs = (uintptr_t)devs;
	return ioctl(fd, RMSG_IOC_DEV_LIST, req) ? -errno : 0;
}

int rmsg_node_devices(int fd, struct rmsg_dev_info **devs,
		      unsigned int *generation)
{
	struct rmsg_dev_info *buf = NULL, *bigger;
	struct rmsg_dev_list req;
	unsigned int cap = 0, tries;
	int ret;

	/*
	 * Each call returns one consistent snapshot; grow until a snapshot
	 * fits whole (devices may come between calls), a bounded number of
	 * times: devices that keep coming faster than we ask do not keep
	 * the caller here.
	 */
	for (tries = 0;; tries++) {
		ret = rmsg_dev_list(fd, buf, cap, &req);
		if (ret)
			goto fail;
		if (req.filled == req.count)
			break;
		if (tries == RMSG_DEV_LIST_TRIES) {
			ret = -EAGAIN;
			goto fail;
		}
		cap = req.count + 4;
		bigger = realloc(buf, (size_t)cap * sizeof(*buf));
		if (!bigger) {
			ret = -ENOMEM;
			goto fail;
		}
		buf = bigger;
	}
	if (generation)
		*generation = req.generation;
	*devs = buf;
	return req.count;
fail:
	free(buf);
	return ret;
}

const char *rmsg_port_state_name(unsigned int state)
{
	static const char *const names[] = {
		[RMSG_PORT_NOP]		 = "NOP",
		[RMSG_PORT_DOWN]	 = "DOWN",
		[RMSG_PORT_INIT]	 = "INIT",
		[RMSG_PORT_ARMED]	 = "ARMED",
		[RMSG_PORT_ACTIVE]	 = "ACTIVE",
		[RMSG_PORT_ACTIVE_DEFER] = "ACTIVE_DEFER",
	};

	return state < ARRAY_SIZE(names) ? names[state] : "?";
}

const char *rmsg_port_phys_state_name(unsigned int phys_state)
{
	static const char *const names[] = {
		[1] = "Sleep", [2] = "Polling", [3] = "Disabled",
		[4] = "Training", [5] = "LinkUp", [6] = "LinkErrRecovery",
		[7] = "PhyTest",
	};

	if (phys_state >= ARRAY_SIZE(names) || !names[phys_state])
		return "?";
	return names[phys_state];
}

const char *rmsg_port_protocol_name(unsigned int protocol)
{
	switch (protocol) {
	case RMSG_PROTO_IB:
		return "IB";
	case RMSG_PROTO_ROCE:
		return "RoCE";
	case RMSG_PROTO_IWARP:
		return "iWARP";
	default:
		return "?";
	}
}
