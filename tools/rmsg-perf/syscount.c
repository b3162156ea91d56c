// SPDX-License-Identifier: GPL-2.0
/*
 * rmsg-perf: counting the system calls of a thread (see rmsg-perf.h), and
 * the hold-syscount subcommand that keeps a counter open for the test bed.
 *
 * Calls nothing else of rmsg-perf's.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "rmsg-perf.h"

/* Calls the --wrap wrappers saw in this thread. */
static __thread uint64_t wrapped_calls;

int __wrap_ioctl(int fd, unsigned long req, ...)
{
	va_list ap;
	void *arg;

	va_start(ap, req);
	arg = va_arg(ap, void *);
	va_end(ap);
	wrapped_calls++;
	return __real_ioctl(fd, req, arg);
}

int __wrap_poll(struct pollfd *fds, nfds_t n, int timeout)
{
	wrapped_calls++;
	return __real_poll(fds, n, timeout);
}

int __wrap_ppoll(struct pollfd *fds, nfds_t n, const struct timespec *ts,
		 const sigset_t *mask)
{
	wrapped_calls++;
	return __real_ppoll(fds, n, ts, mask);
}

int __wrap_epoll_wait(int epfd, struct epoll_event *ev, int n, int timeout)
{
	wrapped_calls++;
	return __real_epoll_wait(epfd, ev, n, timeout);
}

/* The id of raw_syscalls:sys_enter, from wherever tracefs is mounted. */
static int tracepoint_id(void)
{
	static const char * const paths[] = {
		"/sys/kernel/tracing/events/raw_syscalls/sys_enter/id",
		"/sys/kernel/debug/tracing/events/raw_syscalls/sys_enter/id",
	};
	unsigned int i;
	int id = -1;
	FILE *f;

	for (i = 0; i < ARRAY_SIZE(paths) && id < 0; i++) {
		f = fopen(paths[i], "re");
		if (!f)
			continue;
		if (fscanf(f, "%d", &id) != 1)
			id = -1;
		fclose(f);
	}
	return id;
}

static int open_tracepoint(void)
{
	static int id = -2;
	struct perf_event_attr attr;

	/* The id is the same for every thread; look it up once. */
	if (id == -2)
		id = tracepoint_id();
	if (id < 0)
		return -1;
	memset(&attr, 0, sizeof(attr));
	attr.type = PERF_TYPE_TRACEPOINT;
	attr.size = sizeof(attr);
	attr.config = id;
	/*
	 * A plain counter of this thread (pid 0, any CPU), enabled at once.
	 * exclude_kernel must stay clear: the tracepoint fires in the
	 * kernel, with kernel registers.
	 */
	return syscall(SYS_perf_event_open, &attr, 0, -1, -1,
		       PERF_FLAG_FD_CLOEXEC);
}

void sysctr_open(struct sysctr *sc)
{
	const char *force = getenv("RMSG_PERF_SYSCOUNT");

	memset(sc, 0, sizeof(*sc));
	sc->fd = -1;
	if (force && !strcmp(force, "none"))
		return;
	if (!force || !strcmp(force, "tracepoint")) {
		sc->fd = open_tracepoint();
		if (sc->fd >= 0) {
			sc->method = SC_TRACEPOINT;
			return;
		}
		if (force) {
			fprintf(stderr, "rmsg-perf: no syscall tracepoint counter: %s\n",
				strerror(errno));
			return;
		}
	}
	sc->method = SC_WRAP;
}

void sysctr_close(struct sysctr *sc)
{
	if (sc->fd >= 0)
		close(sc->fd);
	sc->fd = -1;
}

/*
 * The thread's system calls so far, not counting the counter's own reads,
 * so that the difference of two readings is what happened between them.
 */
uint64_t sysctr_read(struct sysctr *sc)
{
	uint64_t val;

	switch (sc->method) {
	case SC_TRACEPOINT:
		sc->reads++;
		if (read(sc->fd, &val, sizeof(val)) != sizeof(val))
			return 0;
		return val - sc->reads;
	case SC_WRAP:
		return wrapped_calls;
	default:
		return 0;
	}
}

const char *sysctr_method_name(enum sc_method method)
{
	switch (method) {
	case SC_TRACEPOINT:
		return "tracepoint";
	case SC_WRAP:
		return "wrap";
	default:
		return "none";
	}
}



/*
 * Keep a system-call counter open until killed. Opening the first one, and
 * closing the last, patches kernel text (the syscall tracepoint's static
 * key and static call, perf's scheduler hooks); QEMU's TCG has been seen
 * to leave both vCPUs spinning on such a patched jump in
 * syscall_trace_enter() for minutes when two rmsg-perf processes opened
 * their counters at once. The test bed's guest holds one from boot, so
 * the kernel's text never changes under a measurement; it waits for the
 * line "held" with its other vCPU asleep (Documentation/testbed.rst).
 */
int hold_syscount(void)
{
	struct sysctr sc;

	sysctr_open(&sc);
	if (sc.method != SC_TRACEPOINT) {
		fprintf(stderr, "rmsg-perf: no syscall tracepoint counter to hold\n");
		return 1;
	}
	/* The caller may wait for this line: the text is patched by now. */
	printf("held\n");
	fflush(stdout);
	for (;;)
		pause();
}
