// SPDX-License-Identifier: LGPL-2.1-or-later OR BSD-2-Clause
/*
 * librmsg: opening /dev/rmsg, the module's version, and names for what a
 * device port reports.
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
