// SPDX-License-Identifier: LGPL-2.1-or-later OR BSD-2-Clause
/*
 * librmsg: looking at channels and injecting faults (resilience).
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>

#include "rmsg.h"
#include "rmsg_util.h"

/* Channels come and go between calls: give up growing after this many. */
#define RMSG_CHAN_LIST_TRIES	16

/* RMSG_IOC_CHAN_LIST into a malloc()ed array of @esize entries. */
static int chan_list(int fd, unsigned int flags, size_t esize, void **chans,
		     uint32_t *ep_id)
{
	void *buf = NULL, *bigger;
	struct rmsg_chan_list req;
	unsigned int cap = 0, tries;

	/*
	 * Ask for the count, make room for it and a few more, and ask again
	 * until the list fits (or, with channels coming fast, take the last
	 * list as it is).
	 */
	for (tries = 0;; tries++) {
		memset(&req, 0, sizeof(req));
		req.chans = (uintptr_t)buf;
		req.capacity = cap;
		req.flags = flags;
		if (ioctl(fd, RMSG_IOC_CHAN_LIST, &req)) {
			int ret = -errno;

			free(buf);
			return ret;
		}
		if (req.filled == req.total || tries == RMSG_CHAN_LIST_TRIES)
			break;
		cap = req.total + 8;
		bigger = realloc(buf, (size_t)cap * esize);
		if (!bigger) {
			free(buf);
			return -ENOMEM;
		}
		buf = bigger;
	}
	if (!req.filled) {
		free(buf);
		buf = NULL;
	}
	if (ep_id)
		*ep_id = req.ep_id;
	*chans = buf;
	return req.filled;
}

int rmsg_node_channels(int fd, unsigned int flags,
		       struct rmsg_chan_info **chans,
		       uint32_t *ep_id)
{
	if (flags & RMSG_CHAN_LIST_F_ADDRS)
		return -EINVAL;
	return chan_list(fd, flags, sizeof(**chans), (void **)chans, ep_id);
}

int rmsg_node_channel_addrs(int fd, unsigned int flags,
			    struct rmsg_chan_info_addrs **chans, uint32_t *ep_id)
{
	return chan_list(fd, flags | RMSG_CHAN_LIST_F_ADDRS, sizeof(**chans),
			 (void **)chans, ep_id);
}

int rmsg_node_fault(int fd, uint32_t ep_id, uint32_t channel,
		    uint32_t kind)
{
	struct rmsg_fault req;

	memset(&req, 0, sizeof(req));
	req.ep_id = ep_id;
	req.channel = channel;
	req.kind = kind;
	return ioctl(fd, RMSG_IOC_FAULT, &req) ? -errno : 0;
}

int rmsg_node_links(int fd, struct rmsg_link_info **links)
{
	struct rmsg_link_info *buf = NULL, *bigger;
	struct rmsg_link_list req;
	unsigned int cap = 0, tries;

	/* As chan_list(): links come and go between the calls. */
	for (tries = 0;; tries++) {
		memset(&req, 0, sizeof(req));
		req.links = (uintptr_t)buf;
		req.capacity = cap;
		if (ioctl(fd, RMSG_IOC_LINK_LIST, &req)) {
			int ret = -errno;

			free(buf);
			return ret;
		}
		if (req.filled == req.total || tries == RMSG_CHAN_LIST_TRIES)
			break;
		cap = req.total + 8;
		bigger = realloc(buf, (size_t)cap * sizeof(*buf));
		if (!bigger) {
			free(buf);
			return -ENOMEM;
		}
		buf = bigger;
	}
	if (!req.filled) {
		free(buf);
		buf = NULL;
	}
	*links = buf;
	return req.filled;
}

const char *rmsg_chan_state_name(unsigned int state)
{
	static const char *const names[] = {
		[RMSG_CHAN_INFO_CONNECTING]	= "CONNECTING",
		[RMSG_CHAN_INFO_REQUESTED]	= "REQUESTED",
		[RMSG_CHAN_INFO_ACCEPTING]	= "ACCEPTING",
		[RMSG_CHAN_INFO_OPEN]		= "OPEN",
		[RMSG_CHAN_INFO_RECOVERING]	= "RECOVERING",
		[RMSG_CHAN_INFO_DYING]		= "DYING",
	};

	if (state >= ARRAY_SIZE(names) || !names[state])
		return "?";
	return names[state];
}

const char *rmsg_fault_kind_name(unsigned int kind)
{
	static const char *const names[] = {
		[RMSG_FAULT_QP_ERROR]		= "qp-error",
		[RMSG_FAULT_DISCONNECT]		= "disconnect",
		[RMSG_FAULT_DEVICE_FATAL]	= "device-fatal",
	};

	if (kind >= ARRAY_SIZE(names) || !names[kind])
		return "?";
	return names[kind];
}
