/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rmsg-perf: what its source files share.
 */
#ifndef _RMSG_PERF_H
#define _RMSG_PERF_H

#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/epoll.h>

#include "rmsg_util.h"

/*
 * Counting system calls (syscount.c).
 *
 * The figure rmsg is judged by is system calls per message, so it has to be
 * counted, not inferred from the code. Two counters, the first that works:
 *
 *  - SC_TRACEPOINT: a perf counter on the raw_syscalls:sys_enter
 *    tracepoint for the calling thread. It sees every system call the
 *    thread makes, whoever makes it (rmsg-perf, librmsg, libc). It needs
 *    tracefs and the right to open tracepoint events (root, or a low
 *    perf_event_paranoid).
 *  - SC_WRAP: rmsg-perf is linked with -Wl,--wrap for ioctl, poll, ppoll
 *    and epoll_wait. librmsg is linked statically, so its calls go through
 *    the wrappers too; calls made inside libc itself are not seen. A lower
 *    bound, but the calls a data path would make are the ones it sees.
 *
 * RMSG_PERF_SYSCOUNT=tracepoint|wrap|none forces one.
 */
enum sc_method {
	SC_NONE,
	SC_TRACEPOINT,
	SC_WRAP,
};

struct sysctr {
	enum sc_method method;
	int fd;			/* the perf event (SC_TRACEPOINT) */
	uint64_t reads;		/* its own read()s, each one counted */
};

void sysctr_open(struct sysctr *sc);
void sysctr_close(struct sysctr *sc);
uint64_t sysctr_read(struct sysctr *sc);
const char *sysctr_method_name(enum sc_method method);

/* The wrappers of SC_WRAP, and what they wrap (see the Makefile). */
int __wrap_ioctl(int fd, unsigned long req, ...);
int __real_ioctl(int fd, unsigned long req, ...);
int __wrap_poll(struct pollfd *fds, nfds_t n, int timeout);
int __real_poll(struct pollfd *fds, nfds_t n, int timeout);
int __wrap_ppoll(struct pollfd *fds, nfds_t n, const struct timespec *ts,
		 const sigset_t *mask);
int __real_ppoll(struct pollfd *fds, nfds_t n, const struct timespec *ts,
		 const sigset_t *mask);
int __wrap_epoll_wait(int epfd, struct epoll_event *ev, int n, int timeout);
int __real_epoll_wait(int epfd, struct epoll_event *ev, int n, int timeout);

/*
 * Time (clock.c). Latency samples need a clock that is cheap to read and
 * makes no system call; clock_gettime() qualifies only where the clock
 * source is one the vDSO can read. Elsewhere (an emulated guest falls back
 * to HPET or the ACPI PM timer) rmsg-perf reads the TSC itself, as
 * perftest does, calibrated against CLOCK_MONOTONIC.
 */
void clock_setup(void);
const char *clock_name(void);
/* Nanoseconds on a monotonic scale with an arbitrary origin. */
uint64_t now_ns(void);

/* Memory one idle channel costs (mem.c). */
struct mem_result {
	long per_end;		/* bytes, median of the measured rounds */
	long warmup_per_end;	/* bytes, the warm-up round */
	long slab_per_end;	/* of which SUnreclaim grew */
	long vmalloc_per_end;	/* of which VmallocUsed grew */
	int rounds;		/* measured rounds */
};

/*
 * Open @channels idle channels from one endpoint to another listening one
 * in this process, several times over, and report what one channel end
 * costs. Both ends are in this kernel, so the figure is per end. Returns 0
 * or a negative errno.
 */
struct sockaddr;
int mem_measure(const struct sockaddr *addr, unsigned int addrlen,
		int channels, unsigned int block_size, int timeout_s,
		struct mem_result *res);

#endif /* _RMSG_PERF_H */
