/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers shared by rmsg's selftests. They run as root inside the test guest
 * (tools/testing/rmsg-vm), which exports RMSG_NETDEV (the netdev under rxe0)
 * and RMSG_KO (the module's path).
 */
#ifndef _RMSG_TEST_H
#define _RMSG_TEST_H

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/types.h>
#include <sys/wait.h>

#include <rmsg.h>

/* Run a shell command; its output goes to stderr so KTAP stays clean. */
static inline int rmsg_sh(const char *fmt, ...)
{
	char cmd[512];
	va_list ap;
	int status;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	fflush(stdout);
	status = system(cmd);
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static inline long rmsg_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

/*
 * Look up a device by name through librmsg. Returns 1 and fills *info when
 * found, 0 when not, a negative errno on failure.
 */
static inline int rmsg_find_dev(int fd, const char *name,
				struct rmsg_dev_info *info,
				unsigned int *generation)
{
	struct rmsg_dev_info *devs;
	int i, n, found = 0;

	n = rmsg_query_devices(fd, &devs, generation);
	if (n < 0)
		return n;
	for (i = 0; i < n; i++) {
		if (!strcmp(devs[i].name, name)) {
			if (info)
				*info = devs[i];
			found = 1;
		}
	}
	free(devs);
	return found;
}

/* Wait until the device is present (or absent) with port 1 in @state. */
static inline bool rmsg_wait_dev(int fd, const char *name, bool present,
				 int state, int timeout_ms)
{
	long deadline = rmsg_now_ms() + timeout_ms;
	struct rmsg_dev_info info = { 0 };
	int found;

	do {
		found = rmsg_find_dev(fd, name, &info, NULL);
		if (found == (present ? 1 : 0) &&
		    (!present || state < 0 || info.port[0].state == state))
			return true;
		usleep(20000);
	} while (rmsg_now_ms() < deadline);
	return false;
}

/* Does `rmsgctl dev` print a line for this device? */
static inline bool rmsgctl_shows(const char *name)
{
	return rmsg_sh("tools/rmsgctl/rmsgctl dev | grep -q '^%s '", name) == 0;
}

/* The guest's own address (RMSG_LOCAL_ADDR) with @port; false outside it. */
static inline bool rmsg_local_addr(struct sockaddr_in *sin,
				   unsigned short port)
{
	const char *ip = getenv("RMSG_LOCAL_ADDR");

	memset(sin, 0, sizeof(*sin));
	sin->sin_family = AF_INET;
	sin->sin_port = htons(port);
	return ip && inet_pton(AF_INET, ip, &sin->sin_addr) == 1;
}

/* Queue one NOP; false when the SQ is full. */
static inline bool rmsg_queue_nop(struct rmsg_ep *ep, __u64 user_data)
{
	struct rmsg_sqe *sqe = rmsg_sq_get_sqe(ep);

	if (!sqe)
		return false;
	sqe->opcode = RMSG_OP_NOP;
	sqe->user_data = user_data;
	return true;
}

/* Take the next CQE if there is one: true and *@out filled, else false. */
static inline bool rmsg_take_cqe(struct rmsg_ep *ep, struct rmsg_cqe *out)
{
	struct rmsg_cqe *cqe = rmsg_cq_peek(ep);

	if (!cqe)
		return false;
	*out = *cqe;
	rmsg_cq_advance(ep, 1);
	return true;
}

/* The next CQE of @ep, waiting up to @timeout_ms; 0 or -ETIMEDOUT. */
static inline int rmsg_next_cqe(struct rmsg_ep *ep, struct rmsg_cqe *out,
				int timeout_ms)
{
	long deadline = rmsg_now_ms() + timeout_ms;
	struct pollfd pfd = { .fd = ep->fd, .events = POLLIN };

	for (;;) {
		if (rmsg_take_cqe(ep, out))
			return 0;
		if (rmsg_now_ms() >= deadline) {
			memset(out, 0, sizeof(*out));
			return -ETIMEDOUT;
		}
		poll(&pfd, 1, 20);
	}
}

/*
 * Connect @b to @a, which listens at @addr: 0 with the CONNECTED event of
 * @b in *@cb and the ACCEPTED event of @a in *@ca, both successful, or a
 * negative errno (-EPROTO for an event that is not the one expected).
 */
static inline int rmsg_pair_up(struct rmsg_ep *a, struct rmsg_ep *b,
			       const struct sockaddr_in *addr,
			       struct rmsg_cqe *ca, struct rmsg_cqe *cb,
			       int timeout_ms)
{
	int id, ret;

	ret = rmsg_ep_listen(a, (const struct sockaddr *)addr, sizeof(*addr),
			     0xa0, 0);
	if (ret)
		return ret;
	id = rmsg_ep_connect(b, (const struct sockaddr *)addr, sizeof(*addr),
			     0xb0, 0);
	if (id < 0)
		return id;
	ret = rmsg_next_cqe(b, cb, timeout_ms);
	if (ret)
		return ret;
	if (RMSG_CQE_KIND(cb->flags) != RMSG_CQE_CONNECTED || cb->res ||
	    cb->channel != (__u32)id)
		return cb->res ?: -EPROTO;
	ret = rmsg_next_cqe(a, ca, timeout_ms);
	if (ret)
		return ret;
	if (RMSG_CQE_KIND(ca->flags) != RMSG_CQE_ACCEPTED || ca->res)
		return ca->res ?: -EPROTO;
	return 0;
}

/* The process's pinned memory in KiB, as /proc/self/status shows it. */
static inline long rmsg_vmpin_kb(void)
{
	char line[256];
	long kb = -1;
	FILE *f = fopen("/proc/self/status", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmPin: %ld kB", &kb) == 1)
			break;
	fclose(f);
	return kb;
}

/*
 * Page pins held in the whole system (pinned minus released, from
 * /proc/vmstat after folding the per-CPU counters): VmPin is only the
 * charge, this sees pins a bug would leak. -1 when it cannot be read
 * (needs root); the guest runs nothing else that pins.
 */
static inline long rmsg_pins(void)
{
	long acq = -1, rel = -1, v;
	char name[64];
	FILE *f = fopen("/proc/sys/vm/stat_refresh", "w");

	if (!f)
		return -1;
	if (fputs("1\n", f) < 0) {
		fclose(f);
		return -1;
	}
	if (fclose(f))
		return -1;
	f = fopen("/proc/vmstat", "r");
	if (!f)
		return -1;
	while (fscanf(f, "%63s %ld", name, &v) == 2) {
		if (!strcmp(name, "nr_foll_pin_acquired"))
			acq = v;
		else if (!strcmp(name, "nr_foll_pin_released"))
			rel = v;
	}
	fclose(f);
	return acq < 0 || rel < 0 ? -1 : acq - rel;
}

/* Outstanding pins are @base plus @n pages, or cannot be counted. */
static inline bool rmsg_pins_are(long base, long n)
{
	return base < 0 || rmsg_pins() == base + n;
}

/* Wait for a child; its exit status, or -1 when it did not exit. */
static inline int rmsg_child_status(pid_t pid)
{
	int status;

	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

#endif /* _RMSG_TEST_H */
