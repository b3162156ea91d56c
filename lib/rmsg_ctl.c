// SPDX-License-Identifier: LGPL-2.1-or-later OR BSD-2-Clause
/*
 * librmsg: the module's lists (channels, links, devices) and injecting
 * faults (resilience).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>

#include "rmsg.h"
#include "rmsg_util.h"

/*
 * Entries come and go between calls: snapshots asked for at most, beyond
 * the first, so that entries that keep coming faster than we ask do not
 * keep the caller here.
 */
#define RMSG_LIST_TRIES	16

/*
 * A list ioctl's request: @req (zeroed by the caller) asks for @cap
 * entries into @buf, and says how many it wrote and how many there were.
 */
struct list_ask {
	unsigned long cmd;
	void (*fill)(void *req, void *buf, unsigned int cap, unsigned int flags);
	void (*counts)(const void *req, uint32_t *filled, uint32_t *total);
	size_t req_size;
	bool whole;
};

/*
 * @ask's list into a malloc()ed array of @esize entries: ask for the
 * count, make room for it and a few more, and ask again until the list
 * fits. With entries coming fast, after RMSG_LIST_TRIES more asks, take
 * the last list as it is, or fail with -EAGAIN if @ask wants it @whole.
 * @req is left with the last answer. Return: the entries, or -errno.
 */
static int list_grow(int fd, const struct list_ask *ask, unsigned int flags,
		     size_t esize, void *req, void **out)
{
	void *buf = NULL, *bigger;
	uint32_t filled, total;
	unsigned int cap = 0, tries;

	for (tries = 0;; tries++) {
		memset(req, 0, ask->req_size);
		ask->fill(req, buf, cap, flags);
		if (ioctl(fd, ask->cmd, req)) {
			int ret = -errno;

			free(buf);
			return ret;
		}
		ask->counts(req, &filled, &total);
		if (filled == total)
			break;
		if (tries == RMSG_LIST_TRIES) {
			if (!ask->whole)
				break;
			free(buf);
			return -EAGAIN;
		}
		cap = total + 8;
		bigger = realloc(buf, (size_t)cap * esize);
		if (!bigger) {
			free(buf);
			return -ENOMEM;
		}
		buf = bigger;
	}
	if (!filled) {
		free(buf);
		buf = NULL;
	}
	*out = buf;
	return filled;
}

static void chan_list_fill(void *req, void *buf, unsigned int cap,
			   unsigned int flags)
{
	struct rmsg_chan_list *r = req;

	r->chans = (uintptr_t)buf;
	r->capacity = cap;
	r->flags = flags;
}

static void chan_list_counts(const void *req, uint32_t *filled,
			     uint32_t *total)
{
	const struct rmsg_chan_list *r = req;

	*filled = r->filled;
	*total = r->total;
}

static const struct list_ask chan_list_ask = {
	.cmd = RMSG_IOC_CHAN_LIST,
	.fill = chan_list_fill,
	.counts = chan_list_counts,
	.req_size = sizeof(struct rmsg_chan_list),
};

/* RMSG_IOC_CHAN_LIST into a malloc()ed array of @esize entries. */
static int chan_list(int fd, unsigned int flags, size_t esize, void **chans,
		     uint32_t *ep_id)
{
	struct rmsg_chan_list req;
	int n;

	n = list_grow(fd, &chan_list_ask, flags, esize, &req, chans);
	if (n >= 0 && ep_id)
		*ep_id = req.ep_id;
	return n;
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

static void link_list_fill(void *req, void *buf, unsigned int cap,
			   unsigned int flags)
{
	struct rmsg_link_list *r = req;

	r->links = (uintptr_t)buf;
	r->capacity = cap;
	r->flags = flags;
}

static void link_list_counts(const void *req, uint32_t *filled,
			     uint32_t *total)
{
	const struct rmsg_link_list *r = req;

	*filled = r->filled;
	*total = r->total;
}

static const struct list_ask link_list_ask = {
	.cmd = RMSG_IOC_LINK_LIST,
	.fill = link_list_fill,
	.counts = link_list_counts,
	.req_size = sizeof(struct rmsg_link_list),
};

int rmsg_node_links(int fd, struct rmsg_link_info **links)
{
	struct rmsg_link_list req;

	return list_grow(fd, &link_list_ask, 0, sizeof(**links), &req,
			 (void **)links);
}

static void dev_list_fill(void *req, void *buf, unsigned int cap,
			  unsigned int flags)
{
	struct rmsg_dev_list *r = req;

	r->devs = (uintptr_t)buf;
	r->count = cap;
}

static void dev_list_counts(const void *req, uint32_t *filled,
			    uint32_t *total)
{
	const struct rmsg_dev_list *r = req;

	*filled = r->filled;
	*total = r->count;
}

/* Each answer is one consistent snapshot: only a whole one will do. */
static const struct list_ask dev_list_ask = {
	.cmd = RMSG_IOC_DEV_LIST,
	.fill = dev_list_fill,
	.counts = dev_list_counts,
	.req_size = sizeof(struct rmsg_dev_list),
	.whole = true,
};

int rmsg_node_devices(int fd, struct rmsg_dev_info **devs,
		      unsigned int *generation)
{
	struct rmsg_dev_list req;
	int n;

	n = list_grow(fd, &dev_list_ask, 0, sizeof(**devs), &req,
		      (void **)devs);
	if (n >= 0 && generation)
		*generation = req.generation;
	return n;
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
