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
#include <fcntl.h>
#include <grp.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/types.h>
#include <sys/wait.h>

#include <rmsg.h>

#include "rmsg_check.h"

/*
 * The harness's own limit for a test without TEST_F_TIMEOUT (30 s in
 * kselftest_harness.h, which must come first) is sized for real hardware
 * on an idle machine. Ours run under emulation on a 2-CPU host that may be
 * busy with something else, and many wait up to a minute for a bounded
 * event (a peer's death, an rdma_cm timeout): a test is stopped only when
 * it has clearly hung. Kernel hangs end the run sooner (rmsg-vm's hung
 * task watch).
 */
#ifdef TEST_TIMEOUT_DEFAULT
#undef TEST_TIMEOUT_DEFAULT
#define TEST_TIMEOUT_DEFAULT	180
#endif

/*
 * A guest kernel with lockdep and KASAN (make check-debug) runs many times
 * slower: RMSG_TEST_SLOW=N multiplies every test's harness limit and the
 * waits for a stream to settle. Both are limits for something that has
 * stopped, never a clock a passing test is held to.
 */
static inline long rmsg_test_slow(void)
{
	const char *env = getenv("RMSG_TEST_SLOW");
	long n = env ? strtol(env, NULL, 10) : 1;

	return n >= 1 && n <= 20 ? n : 1;
}

static inline int rmsg_open_param(const char *name, int flags)
{
	char path[128];

	snprintf(path, sizeof(path), "/sys/module/rmsg/parameters/%s", name);
	return open(path, flags | O_CLOEXEC);
}

/* Module parameter @name (root only) into @val, without its newline. */
static inline int rmsg_read_param(const char *name, char *val, size_t len)
{
	int fd = rmsg_open_param(name, O_RDONLY);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, val, len - 1);
	close(fd);
	if (n <= 0)
		return -EIO;
	val[n] = 0;
	val[strcspn(val, "\n")] = 0;
	return 0;
}

/* The number a sysfs or procfs file holds (decimal, or 0x hex), -1 if none. */
static inline long long rmsg_read_number(const char *path)
{
	long long v = -1;
	FILE *f = fopen(path, "re");

	if (!f)
		return -1;
	if (fscanf(f, "%lli", &v) != 1)
		v = -1;
	fclose(f);
	return v;
}

/* Write @val to a sysfs or procfs file: 0, or -errno, or -EIO. */
static inline int rmsg_write_number(const char *path, long long val)
{
	FILE *f = fopen(path, "we");
	int ok;

	if (!f)
		return -errno;
	ok = fprintf(f, "%lld\n", val) > 0;
	return fclose(f) || !ok ? -EIO : 0;
}

/* Does the module announce every feature of @mask (RMSG_FEAT_*)? */
static inline bool rmsg_have_features(__u64 mask)
{
	struct rmsg_version ver;
	int fd = rmsg_node_open();
	bool ok;

	if (fd < 0)
		return false;
	ok = !rmsg_node_version(fd, &ver) && (ver.features & mask) == mask;
	close(fd);
	return ok;
}

/* Is the module's lease_blocks on? (New channels lease their blocks.) */
static inline bool rmsg_leases_on(void)
{
	char val[8];

	return !rmsg_read_param("lease_blocks", val, sizeof(val)) &&
	       (val[0] == 'Y' || val[0] == '1');
}

static inline int rmsg_write_param(const char *name, const char *val)
{
	int fd = rmsg_open_param(name, O_WRONLY);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = write(fd, val, strlen(val));
	close(fd);
	return n == (ssize_t)strlen(val) ? 0 : -EIO;
}

/*
 * Is test @fixture.@name among RMSG_TEST_FILTER's comma-separated names
 * (either "fixture.test" or "test")? Unset: every test is. For reruns of
 * one test (the 6.1 harness has no -t).
 */
static inline bool rmsg_test_wanted(const char *fixture, const char *name)
{
	const char *filter = getenv("RMSG_TEST_FILTER");
	const char *p, *end;
	size_t flen = strlen(fixture), nlen = strlen(name), len;

	if (!filter || !*filter)
		return true;
	for (p = filter; *p; p = *end ? end + 1 : end) {
		end = strchrnul(p, ',');
		len = end - p;
		if ((len == nlen && !memcmp(p, name, nlen)) ||
		    (len == flen + 1 + nlen && !memcmp(p, fixture, flen) &&
		     p[flen] == '.' && !memcmp(p + flen + 1, name, nlen)))
			return true;
	}
	return false;
}

#ifdef __KSELFTEST_HARNESS_H
/*
 * Before the harness runs: scale each test's limit (rmsg_test_slow()) and
 * keep only the tests RMSG_TEST_FILTER names. Registration is over (it
 * runs in constructors), so the lists are only walked by their next links
 * from here on. On a slower kernel the module's drain of a closing
 * channel is scaled too (close_drain_ms, from its default 5000; set, not
 * multiplied, since each program does it and a module reload resets it):
 * a RESET queued behind megabytes of READs must still leave before the
 * close gives up on it (rmsg_data_close_sent()).
 */
static inline void rmsg_test_prepare(void)
{
	struct __fixture_metadata *f;
	struct __test_metadata *t, **link;
	long slow = rmsg_test_slow();
	char drain[24];

	if (slow > 1) {
		snprintf(drain, sizeof(drain), "%ld", 5000 * slow);
		rmsg_write_param("close_drain_ms", drain);
	}

	for (f = __fixture_list; f; f = f->next) {
		link = &f->tests;
		while ((t = *link)) {
			if (!rmsg_test_wanted(f->name, t->name)) {
				*link = t->next;
				continue;
			}
			t->timeout *= slow;
			link = &t->next;
		}
	}
}

/* Each program's main(): the harness's, after rmsg_test_prepare(). */
static inline int rmsg_test_main(int argc, char **argv)
{
	rmsg_test_prepare();
	return test_harness_run(argc, argv);
}
#endif

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

	n = rmsg_node_devices(fd, &devs, generation);
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

/*
 * What rxe0 should report as RMSG_DEV_F_ORDERED here, found apart from
 * the module: rxe places a write's bytes with the kernel's memcpy(), on
 * x86-64 ascending on 6.1 with ERMS or REP_GOOD, from 6.2 on only with
 * FSRM (kernel/rmsg_compat.h, rmsg_memcpy_ascending()); read from the
 * running kernel's release and the CPU flags of /proc/cpuinfo.
 */
static inline bool rmsg_rxe_expect_ordered(void)
{
	bool fsrm = false, erms = false, rep_good = false;
	unsigned int major = 0, minor = 0;
	char line[8192];
	FILE *f;

#if !defined(__x86_64__)
	return true;
#endif
	f = fopen("/proc/sys/kernel/osrelease", "r");
	if (f) {
		if (fscanf(f, "%u.%u", &major, &minor) != 2)
			major = 0;
		fclose(f);
	}
	f = fopen("/proc/cpuinfo", "r");
	while (f && fgets(line, sizeof(line), f)) {
		if (strncmp(line, "flags", 5))
			continue;
		fsrm = strstr(line, " fsrm");
		erms = strstr(line, " erms");
		rep_good = strstr(line, " rep_good");
		break;
	}
	if (f)
		fclose(f);
	if (major > 6 || (major == 6 && minor >= 2))
		return fsrm;
	return erms || rep_good;
}

/*
 * A FIXTURE_SETUP that skips: SKIP(rmsg_setup_skipped(_metadata); return,
 * "why"). The 6.1 harness (kselftest_harness.h) runs a test's body after
 * its setup unless the setup failed, a skip included; the body then ran
 * without what the setup lacked. Marked failed as well, the setup stops
 * the test, and the harness still reports it skipped, with the reason
 * (it looks at the skip before the result). A macro: this header does
 * not include the harness.
 */
#define rmsg_setup_skipped(metadata)	((metadata)->passed = 0)

/*
 * Whether rxe0 says it places in order (RMSG_DEV_F_ORDERED): if not, the
 * module has every receive block on it written with immediates, whatever
 * force_imm_arrival says, and a test of the flag path runs that one.
 * True when there is no rxe0 to ask.
 */
static inline bool rmsg_rxe0_ordered(void)
{
	struct rmsg_dev_info info = { 0 };
	bool ordered = true;
	int fd = rmsg_node_open();

	if (fd < 0)
		return true;
	if (rmsg_find_dev(fd, "rxe0", &info, NULL) == 1)
		ordered = info.flags & RMSG_DEV_F_ORDERED;
	close(fd);
	if (!ordered)
		printf("# rxe0 does not place a write's bytes in order on this kernel and CPU: records arrive by write with immediate, not by the flag path\n");
	return ordered;
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

/*
 * Close an endpoint and forget it: a fixture's teardown closes what is
 * left, and a test may have closed some already.
 */
static inline void rmsg_ep_drop(struct rmsg_ep **ep)
{
	rmsg_ep_close(*ep);
	*ep = NULL;
}

/*
 * Register and unregister on a bare /dev/rmsg file, with no endpoint set
 * up on it (rmsg_reg() needs an endpoint): what the kernel accepts there.
 * The raw forms fill every field of the UAPI structure, reserved ones
 * included, so that a test can show what the kernel refuses.
 */
static inline int rmsg_raw_reg(int fd, __u64 addr, __u64 len, __u32 flags,
			       __u64 resv0, __u64 resv1, __u32 *handle)
{
	struct rmsg_reg r;

	memset(&r, 0, sizeof(r));
	r.addr = addr;
	r.len = len;
	r.flags = flags;
	r.resv[0] = resv0;
	r.resv[1] = resv1;
	if (ioctl(fd, RMSG_IOC_REG, &r))
		return -errno;
	if (handle)
		*handle = r.handle;
	return 0;
}

static inline int rmsg_raw_dereg(int fd, __u32 handle, __u32 flags,
				 __u64 resv)
{
	struct rmsg_dereg d;

	memset(&d, 0, sizeof(d));
	d.handle = handle;
	d.flags = flags;
	d.resv = resv;
	return ioctl(fd, RMSG_IOC_DEREG, &d) ? -errno : 0;
}

static inline int rmsg_fd_reg(int fd, void *addr, size_t len, __u32 *handle)
{
	return rmsg_raw_reg(fd, (uintptr_t)addr, len, 0, 0, 0, handle);
}

static inline int rmsg_fd_dereg(int fd, __u32 handle)
{
	return rmsg_raw_dereg(fd, handle, 0, 0);
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
	struct pollfd pfd = { .fd = rmsg_ep_fd(ep), .events = POLLIN };

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
	id = rmsg_chan_connect(b, (const struct sockaddr *)addr, sizeof(*addr),
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

#define RMSG_NOBODY	65534

/* Become nobody (uid and gid 65534, no other groups): 0 or -1. */
static inline int rmsg_become_nobody(void)
{
	gid_t g = RMSG_NOBODY;

	if (setgroups(1, &g) || setresgid(RMSG_NOBODY, RMSG_NOBODY,
					  RMSG_NOBODY) ||
	    setresuid(RMSG_NOBODY, RMSG_NOBODY, RMSG_NOBODY))
		return -1;
	return geteuid() == RMSG_NOBODY ? 0 : -1;
}

/* Wait for a child; its exit status, or -1 when it did not exit. */
static inline int rmsg_child_status(pid_t pid)
{
	int status;

	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

/*
 * The next event of @kind through the library (which maps blocks on
 * them), other kinds skipped: 0 with it in *@ev (its res is the
 * caller's to check), -ETIMEDOUT after @timeout_ms, or librmsg's error.
 */
static inline int rmsg_lib_event(struct rmsg_ep *ep, unsigned int kind,
				 struct rmsg_event *ev, int timeout_ms)
{
	long deadline = rmsg_now_ms() + timeout_ms;
	int n;

	while (rmsg_now_ms() < deadline) {
		n = rmsg_ep_progress(ep, ev, 1);
		if (n < 0)
			return n;
		if (n && ev->kind == kind)
			return 0;
		if (!n)
			rmsg_ep_wait(ep, 20);
	}
	return -ETIMEDOUT;
}

#define RMSG_ECHO_MAX	4096

/*
 * One message of @len bytes (at most RMSG_ECHO_MAX) from @tx's channel
 * @ct to @rx's channel @cr, its bytes a pattern of @tag, checked byte for
 * byte: 0, -EIO for other bytes or length, or a negative errno.
 */
static inline int rmsg_echo(struct rmsg_ep *tx, __u32 ct, struct rmsg_ep *rx,
			    __u32 cr, unsigned char tag, unsigned int len,
			    int timeout_ms)
{
	unsigned char out[RMSG_ECHO_MAX], in[RMSG_ECHO_MAX];
	long deadline = rmsg_now_ms() + timeout_ms;
	unsigned int i;
	int ret;

	if (len > RMSG_ECHO_MAX)
		return -EINVAL;
	for (i = 0; i < len; i++)
		out[i] = (unsigned char)(tag + i * 13);
	do {
		ret = rmsg_msg_send(tx, ct, out, len, 0, tag);
		if (ret == -EAGAIN)
			rmsg_ep_wait(tx, 10);
	} while (ret == -EAGAIN && rmsg_now_ms() < deadline);
	if (ret)
		return ret;
	do {
		rmsg_ep_progress(tx, NULL, 0);
		ret = rmsg_msg_recv(rx, cr, in, sizeof(in), 0);
		if (ret == -EAGAIN)
			rmsg_ep_wait(rx, 10);
	} while (ret == -EAGAIN && rmsg_now_ms() < deadline);
	if (ret < 0)
		return ret;
	return ret == (int)len && !memcmp(in, out, len) ? 0 : -EIO;
}

/*
 * Byte-checked streams, for tests that break channels underneath traffic
 * (rmsg_resil_test). A stream is one direction of one channel, sent with
 * rmsg_msg_send() and read in place with rmsg_msg_peek_any(). Each message
 * carries
 * its stream and sequence number in its first RMSG_STREAM_HDR bytes and a
 * pattern of both after them (RMSG_CHECK_HDR of tools/common/rmsg_check.h,
 * whose rendezvous mix rmsg_streams_rndv() turns on), so the receiver
 * counts what was lost, repeated or corrupted instead of stopping at the
 * first surprise; the test then asserts the counts it expects
 * (rmsg_stream_exact(), rmsg_stream_prefix()). A channel that ends is
 * followed, not failed: its streams stop sending (-ENOTCONN), every send
 * still completes, and what the receive block holds is read out.
 *
 * A stream may have only one of its ends in this process (the other in a
 * child, rmsg_streams_add_half()): each process then drives its half, and
 * both must add their streams in the same order, so that the indices the
 * messages carry agree.
 */
#define RMSG_STREAMS_MAX	32
#define RMSG_STREAM_HDR		RMSG_CHECK_HDR_LEN
#define RMSG_STREAM_UD		0x5354000000000000ULL	/* "ST" */
/* A stream's rendezvous sends, and its answers to them. */
#define RMSG_STREAM_UD_ZC	0x535a000000000000ULL	/* "SZ" */
#define RMSG_STREAM_UD_INTO	0x5349000000000000ULL	/* "SI" */
/*
 * With rendezvous (rmsg_streams_rndv()), each stream has this many
 * buffers of RMSG_STREAM_RNDV_MAX bytes at each end: at most that many of
 * its rendezvous messages are in flight (the kernel's window is 8 too).
 */
#define RMSG_STREAM_RNDV_SLOTS	RMSG_CHECK_RNDV_SLOTS
#define RMSG_STREAM_RNDV_MAX	RMSG_CHECK_RNDV_MAX

/**
 * struct rmsg_stream - one direction of one channel
 * @tx: sending endpoint (NULL: another process sends)
 * @rx: receiving endpoint (NULL: another process receives)
 * @tx_ch: the channel's id at @tx
 * @rx_ch: its id at @rx
 * @total: messages to send
 * @max_len: the largest message
 * @sent: accepted by rmsg_msg_send()
 * @ok: completed with res 0 (a prefix of those sent)
 * @failed: completed with an error (after the last @ok)
 * @received: messages read, each counted once
 * @next: the sequence number expected next
 * @lost: sequence numbers skipped
 * @dup: messages at or behind one already read
 * @corrupt: messages of the wrong length or content
 * @first_error: the first send or completion error, 0 if none
 * @tx_dead: rmsg_msg_send() said the channel is gone: no more sending
 * @tx_closed: the sending end's CLOSED event came, with @tx_res
 * @rx_closed: the receiving end's CLOSED event came, with @rx_res
 * @rx_drained: and everything its block held has been read
 * @tx_res: res of the sending end's CLOSED event
 * @rx_res: res of the receiving end's CLOSED event
 * @rndv_every: every this many-th message goes by rendezvous, 0: none
 * @next_eager_cqe: the eager send whose completion comes next (a
 *	rendezvous send completes when the peer has read it, out of turn)
 * @zc_buf: RMSG_STREAM_RNDV_SLOTS sending buffers, in a region
 * @zc_busy: which of them a send in flight holds
 * @into_buf: as many receiving buffers, in a region
 * @into_seq: the sequence number each answered message must carry,
 *	+ 1; 0 when the buffer is free
 * @rndv_sent: rendezvous messages sent
 * @rndv_received: and received (their answers completed)
 * @rndv_pending: answers not completed yet
 * @held: a rendezvous message peeked but not answered yet (no buffer or
 *	no SQ room): peeking on goes past a message, so it is kept here,
 *	and its endpoint is not peeked until it is answered
 * @holding: @held is such a message
 */
struct rmsg_stream {
	struct rmsg_ep *tx, *rx;
	__u32 tx_ch, rx_ch;
	__u64 total;
	__u32 max_len;
	__u64 sent, ok, failed;
	__u64 received, next, lost, dup, corrupt;
	int first_error;
	bool tx_dead, tx_closed, rx_closed, rx_drained;
	int tx_res, rx_res;
	unsigned int rndv_every;
	__u64 next_eager_cqe;
	unsigned char *zc_buf;
	bool zc_busy[RMSG_STREAM_RNDV_SLOTS];
	unsigned char *into_buf;
	__u64 into_seq[RMSG_STREAM_RNDV_SLOTS];
	__u64 rndv_sent, rndv_received, rndv_pending;
	struct rmsg_msg held;
	bool holding;
};

/* A RMSG_CQE_STALLED or RMSG_CQE_RESUMED event the streams took. */
struct rmsg_stall_ev {
	struct rmsg_ep *ep;
	__u32 kind;
	__u32 channel;
	__u32 ms;
	int res;
	long at_ms;
};

#define RMSG_STALL_EVS		64

/**
 * struct rmsg_streams - streams driven together from one thread
 * @s: the streams
 * @n: how many
 * @eps: the endpoints they use, each once
 * @neps: how many
 * @stall: STALLED and RESUMED events, in the order taken (endpoints set
 *	up with RMSG_EP_F_STALL_EVENTS); other channel events than CLOSED
 *	fail the streams
 * @nstall: how many (more than RMSG_STALL_EVS: only the first are kept)
 * @why: what went wrong when a function returned false or -1
 * @rndv_every: what streams added from now on get as their @rndv_every
 * @buf: a message being built
 */
struct rmsg_streams {
	struct rmsg_stream s[RMSG_STREAMS_MAX];
	unsigned int n;
	struct rmsg_ep *eps[2 * RMSG_STREAMS_MAX];
	unsigned int neps;
	struct rmsg_stall_ev stall[RMSG_STALL_EVS];
	unsigned int nstall;
	unsigned int rndv_every;
	char why[256];
	unsigned char buf[RMSG_VB_MAX_PAYLOAD];
};

static inline bool rmsg_stream_is_rndv(const struct rmsg_stream *s,
				       __u64 seq)
{
	return rmsg_check_rndv(s->rndv_every, seq);
}

/*
 * Mostly small messages, every 97th the largest: the block wraps often.
 * Rendezvous messages: 1 byte to RMSG_STREAM_RNDV_MAX, most above 16 KiB.
 */
static inline __u32 rmsg_stream_len(const struct rmsg_stream *s, __u64 seq)
{
	__u32 h = (__u32)seq * 2654435761U;
	__u32 span = s->max_len - RMSG_STREAM_HDR;

	if (rmsg_stream_is_rndv(s, seq))
		return rmsg_check_rndv_len(seq, RMSG_STREAM_HDR);
	if (seq % 97 == 96)
		return s->max_len;
	return RMSG_STREAM_HDR + (h >> 8) % (span < 1500 ? span + 1 : 1500);
}

static inline void rmsg_streams_ep(struct rmsg_streams *ss,
				   struct rmsg_ep *ep)
{
	unsigned int i;

	if (!ep)
		return;
	for (i = 0; i < ss->neps; i++)
		if (ss->eps[i] == ep)
			return;
	ss->eps[ss->neps++] = ep;
}

/*
 * Streams added from now on send every @every-th message by rendezvous
 * (rmsg_msg_send_zc(), alternately RGet and RPut) and answer those with
 * rmsg_msg_recv_into(); 0 turns it off. Both ends must be in this process.
 */
static inline void rmsg_streams_rndv(struct rmsg_streams *ss,
				     unsigned int every)
{
	ss->rndv_every = every;
}

/* RMSG_STREAM_RNDV_SLOTS buffers, registered on @ep; NULL on failure. */
static inline unsigned char *rmsg_stream_region(struct rmsg_ep *ep)
{
	size_t len = (size_t)RMSG_STREAM_RNDV_SLOTS * RMSG_STREAM_RNDV_MAX;
	__u32 handle;
	void *p;

	p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	if (rmsg_reg(ep, p, len, &handle)) {
		munmap(p, len);
		return NULL;
	}
	return p;
}

/* The buffers of a rendezvous stream, in a region at each end. */
static inline int rmsg_stream_rndv_bufs(struct rmsg_streams *ss,
					struct rmsg_stream *s)
{
	if (!s->tx || !s->rx)
		return -1;
	s->zc_buf = rmsg_stream_region(s->tx);
	s->into_buf = rmsg_stream_region(s->rx);
	if (!s->zc_buf || !s->into_buf)
		return -1;
	s->rndv_every = ss->rndv_every;
	return 0;
}

/*
 * Add a stream of @total messages from channel @tx_ch of @tx to its other
 * end, @rx_ch of @rx. Returns its index, or -1.
 */
static inline int rmsg_streams_add(struct rmsg_streams *ss, struct rmsg_ep *tx,
				   __u32 tx_ch, struct rmsg_ep *rx, __u32 rx_ch,
				   __u64 total)
{
	struct rmsg_stream *s;
	int max = rmsg_chan_max_msg(tx, tx_ch);

	if (ss->n == RMSG_STREAMS_MAX || max < RMSG_STREAM_HDR)
		return -1;
	s = &ss->s[ss->n];
	memset(s, 0, sizeof(*s));
	s->tx = tx;
	s->rx = rx;
	s->tx_ch = tx_ch;
	s->rx_ch = rx_ch;
	s->total = total;
	s->max_len = max < 4096 ? max : 4096;
	if (ss->rndv_every && rmsg_stream_rndv_bufs(ss, s))
		return -1;
	rmsg_streams_ep(ss, tx);
	rmsg_streams_ep(ss, rx);
	return ss->n++;
}

/*
 * Add the half of a stream that lives in this process: its sending end
 * (@tx true) or its receiving end, channel @ch of @ep. The other process
 * adds the other half, with the same @max_len and @total. Returns its
 * index, or -1.
 */
static inline int rmsg_streams_add_half(struct rmsg_streams *ss, bool tx,
					struct rmsg_ep *ep, __u32 ch,
					__u32 max_len, __u64 total)
{
	struct rmsg_stream *s;

	if (ss->n == RMSG_STREAMS_MAX || max_len < RMSG_STREAM_HDR ||
	    max_len > RMSG_VB_MAX_PAYLOAD ||
	    (tx && rmsg_chan_max_msg(ep, ch) < (int)max_len))
		return -1;
	s = &ss->s[ss->n];
	memset(s, 0, sizeof(*s));
	if (tx) {
		s->tx = ep;
		s->tx_ch = ch;
	} else {
		s->rx = ep;
		s->rx_ch = ch;
	}
	s->total = total;
	s->max_len = max_len;
	rmsg_streams_ep(ss, ep);
	return ss->n++;
}

static inline int rmsg_streams_fail(struct rmsg_streams *ss,
				    const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(ss->why, sizeof(ss->why), fmt, ap);
	va_end(ap);
	return -1;
}

/* Send up to @burst messages of stream @i: how many, or -1. */
static inline int rmsg_stream_send(struct rmsg_streams *ss, unsigned int i,
				   unsigned int burst)
{
	struct rmsg_stream *s = &ss->s[i];
	unsigned int k, len, slot = 0;
	unsigned char *p;
	bool zc;
	__u64 seq;
	int ret;

	if (!s->tx)
		return 0;
	for (k = 0; k < burst && !s->tx_dead && s->sent < s->total; k++) {
		seq = s->sent;
		len = rmsg_stream_len(s, seq);
		p = ss->buf;
		zc = rmsg_stream_is_rndv(s, seq);
		if (zc) {
			slot = rmsg_check_rndv_slot(s->rndv_every, seq);
			if (s->zc_busy[slot])
				break;
			p = s->zc_buf + (size_t)slot * RMSG_STREAM_RNDV_MAX;
		}
		rmsg_check_fill(p, len, RMSG_CHECK_HDR, i, seq);
		if (zc)
			ret = rmsg_msg_send_zc(s->tx, s->tx_ch, p, len,
					       rmsg_check_rndv_put(s->rndv_every,
								   seq) ?
					   RMSG_ZC_PUT : 0,
					   RMSG_STREAM_UD_ZC | (__u64)i << 32 |
					   (__u32)seq);
		else
			ret = rmsg_msg_send(s->tx, s->tx_ch, p, len, 0,
					    RMSG_STREAM_UD | (__u64)i << 32 |
					    (__u32)seq);
		if (ret == -EAGAIN)
			break;
		if (ret == -ENOTCONN) {
			s->tx_dead = true;
			if (!s->first_error)
				s->first_error = ret;
			break;
		}
		if (ret)
			return rmsg_streams_fail(ss, "stream %u: send %llu: %d",
						 i, (unsigned long long)seq,
						 ret);
		if (zc) {
			s->zc_busy[slot] = true;
			s->rndv_sent++;
		}
		s->sent++;
	}
	return k;
}

/* Check one received message and count it. */
static inline void rmsg_stream_check(struct rmsg_streams *ss,
				     struct rmsg_stream *s, unsigned int i,
				     const unsigned char *p, __u32 len)
{
	uint32_t st;
	uint64_t seq;

	if (!rmsg_check_hdr(p, len, &st, &seq)) {
		s->corrupt++;
		return;
	}
	if (st != i) {
		s->corrupt++;
		return;
	}
	if (seq < s->next) {
		s->dup++;
		return;
	}
	s->lost += seq - s->next;
	s->next = seq + 1;
	s->received++;
	if (len != rmsg_stream_len(s, seq) ||
	    !rmsg_check_ok(p, len, RMSG_CHECK_HDR, i, seq))
		s->corrupt++;
}

static inline int rmsg_streams_find(struct rmsg_streams *ss, bool tx,
				    struct rmsg_ep *ep, __u32 ch)
{
	unsigned int i;

	for (i = 0; i < ss->n; i++) {
		if (tx ? ss->s[i].tx == ep && ss->s[i].tx_ch == ch :
		    ss->s[i].rx == ep && ss->s[i].rx_ch == ch)
			return i;
	}
	return -1;
}

/*
 * Answer a rendezvous message of stream @i, which must be the one the
 * stream expects next: its bytes are checked when the answer completes
 * (rmsg_stream_answered()). -EAGAIN while no buffer is free, 0, or -1.
 */
static inline int rmsg_stream_answer(struct rmsg_streams *ss, unsigned int i,
				     const struct rmsg_msg *msg)
{
	struct rmsg_stream *s = &ss->s[i];
	__u64 seq = s->next;
	unsigned int slot;
	int ret;

	if (!s->rndv_every || !rmsg_stream_is_rndv(s, seq)) {
		/* Not where one belongs: the stream lost or repeated some. */
		s->corrupt++;
		ret = rmsg_msg_discard(s->rx, msg);
		return ret ? rmsg_streams_fail(ss, "stream %u: discard: %d",
					       i, ret) : 0;
	}
	slot = rmsg_check_rndv_slot(s->rndv_every, seq);
	if (s->into_seq[slot])
		return -EAGAIN;
	ret = rmsg_msg_recv_into(s->rx, msg,
				 s->into_buf + (size_t)slot * RMSG_STREAM_RNDV_MAX,
				 RMSG_STREAM_RNDV_MAX,
				 RMSG_STREAM_UD_INTO | (__u64)i << 32 | (__u32)seq);
	if (ret == -EAGAIN)
		return ret;
	if (ret)
		return rmsg_streams_fail(ss, "stream %u: recv_into %llu: %d", i,
					 (unsigned long long)seq, ret);
	s->into_seq[slot] = seq + 1;
	s->rndv_pending++;
	s->next = seq + 1;
	s->received++;
	return 0;
}

/* The answer to rendezvous message @seq of stream @i completed. */
static inline int rmsg_stream_answered(struct rmsg_streams *ss,
				       unsigned int i, __u32 seq32,
				       const struct rmsg_event *ev)
{
	struct rmsg_stream *s = &ss->s[i];
	unsigned int slot;
	unsigned char *p;
	__u64 seq;

	if (!s->rx || !s->rndv_every)
		return rmsg_streams_fail(ss, "stream %u: an answer's completion, no answers made",
					 i);
	for (slot = 0; slot < RMSG_STREAM_RNDV_SLOTS; slot++)
		if (s->into_seq[slot] && (__u32)(s->into_seq[slot] - 1) == seq32)
			break;
	if (slot == RMSG_STREAM_RNDV_SLOTS)
		return rmsg_streams_fail(ss, "stream %u: completion of answer %u, not made",
					 i, seq32);
	seq = s->into_seq[slot] - 1;
	s->into_seq[slot] = 0;
	s->rndv_pending--;
	p = s->into_buf + (size_t)slot * RMSG_STREAM_RNDV_MAX;
	if (ev->res) {
		if (!s->first_error)
			s->first_error = ev->res;
		s->corrupt++;
		return 0;
	}
	s->rndv_received++;
	if (ev->len != rmsg_stream_len(s, seq) ||
	    !rmsg_check_ok(p, ev->len, RMSG_CHECK_HDR, i, seq))
		s->corrupt++;
	return 0;
}

/* Read what @ep has (at most @max messages): how many, or -1. */
static inline int rmsg_streams_recv(struct rmsg_streams *ss,
				    struct rmsg_ep *ep, unsigned int max)
{
	struct rmsg_msg msg;
	unsigned int k;
	int i, ret;

	for (i = 0; i < (int)ss->n; i++) {
		if (ss->s[i].rx != ep || !ss->s[i].holding)
			continue;
		ret = rmsg_stream_answer(ss, i, &ss->s[i].held);
		if (ret == -EAGAIN)
			return 0;
		if (ret)
			return -1;
		ss->s[i].holding = false;
		ret = rmsg_msg_release(ep, &ss->s[i].held);
		if (ret)
			return rmsg_streams_fail(ss, "stream %d: release: %d",
						 i, ret);
	}
	memset(&msg, 0, sizeof(msg));
	for (k = 0; k < max; k++) {
		ret = rmsg_msg_peek_any(ep, &msg);
		if (ret == -EAGAIN)
			break;
		if (ret)
			return rmsg_streams_fail(ss, "peek_any: %d (channel %u)",
						 ret, msg.channel);
		i = rmsg_streams_find(ss, false, ep, msg.channel);
		if (i < 0)
			return rmsg_streams_fail(ss, "a message on channel %u, no stream's",
						 msg.channel);
		if (msg.kind == RMSG_MSG_RNDV) {
			ret = rmsg_stream_answer(ss, i, &msg);
			if (ret == -EAGAIN) {
				ss->s[i].held = msg;
				ss->s[i].holding = true;
				break;
			}
			if (ret)
				return -1;
		} else if (msg.kind != RMSG_MSG_EAGER) {
			return rmsg_streams_fail(ss, "stream %d: kind %u", i,
						 msg.kind);
		} else {
			rmsg_stream_check(ss, &ss->s[i], i, msg.data, msg.len);
		}
		ret = rmsg_msg_release(ep, &msg);
		if (ret)
			return rmsg_streams_fail(ss, "stream %d: release: %d",
						 i, ret);
	}
	return k;
}

/* Take @ep's completions and channel events: how many, or -1. */
static inline int rmsg_streams_events(struct rmsg_streams *ss,
				      struct rmsg_ep *ep)
{
	struct rmsg_event ev[32];
	struct rmsg_stream *s;
	unsigned int st;
	__u64 ud;
	__u32 seq;
	int i, j, n;

	n = rmsg_ep_progress(ep, ev, 32);
	if (n < 0)
		return rmsg_streams_fail(ss, "progress: %d", n);
	for (i = 0; i < n; i++) {
		if (ev[i].kind == RMSG_CQE_CLOSED) {
			j = rmsg_streams_find(ss, true, ep, ev[i].channel);
			if (j >= 0) {
				ss->s[j].tx_closed = true;
				ss->s[j].tx_res = ev[i].res;
			}
			j = rmsg_streams_find(ss, false, ep, ev[i].channel);
			if (j >= 0) {
				ss->s[j].rx_closed = true;
				ss->s[j].rx_res = ev[i].res;
			}
			continue;
		}
		if (ev[i].kind == RMSG_CQE_STALLED ||
		    ev[i].kind == RMSG_CQE_RESUMED) {
			if (ss->nstall < RMSG_STALL_EVS)
				ss->stall[ss->nstall] = (struct rmsg_stall_ev){
					.ep = ep, .kind = ev[i].kind,
					.channel = ev[i].channel,
					.ms = ev[i].len, .res = ev[i].res,
					.at_ms = rmsg_now_ms(),
				};
			ss->nstall++;
			continue;
		}
		st = (ev[i].user_data >> 32) & 0xffff;
		seq = (__u32)ev[i].user_data;
		ud = ev[i].user_data & ~0xffffffffffffULL;
		if (ev[i].kind != RMSG_CQE_OP ||
		    (ud != RMSG_STREAM_UD && ud != RMSG_STREAM_UD_ZC &&
		     ud != RMSG_STREAM_UD_INTO) || st >= ss->n)
			return rmsg_streams_fail(ss, "unexpected event %u (res %d, channel %u, user_data %#llx)",
						 ev[i].kind, ev[i].res,
						 ev[i].channel,
						 (unsigned long long)ev[i].user_data);
		s = &ss->s[st];
		if (ud == RMSG_STREAM_UD_INTO) {
			if (s->rx != ep || ev[i].channel != s->rx_ch)
				return rmsg_streams_fail(ss, "stream %u: an answer's completion on channel %u",
							 st, ev[i].channel);
			if (rmsg_stream_answered(ss, st, seq, &ev[i]))
				return -1;
			continue;
		}
		if (s->tx != ep || ev[i].channel != s->tx_ch)
			return rmsg_streams_fail(ss, "stream %u: completion of %u on channel %u",
						 st, seq, ev[i].channel);
		if (ud == RMSG_STREAM_UD_ZC) {
			/* Out of turn: when the peer has read it. */
			if (!s->rndv_every || !rmsg_stream_is_rndv(s, seq))
				return rmsg_streams_fail(ss, "stream %u: rendezvous completion of %u",
							 st, seq);
			s->zc_busy[rmsg_check_rndv_slot(s->rndv_every,
							seq)] = false;
		} else {
			if (seq != (__u32)s->next_eager_cqe)
				return rmsg_streams_fail(ss, "stream %u: completion of %u, expected %llu",
							 st, seq,
							 (unsigned long long)s->next_eager_cqe);
			do
				s->next_eager_cqe++;
			while (rmsg_stream_is_rndv(s, s->next_eager_cqe));
		}
		if (!ev[i].res && s->failed)
			return rmsg_streams_fail(ss, "stream %u: %u (%s) completed after a failed send (first error %d)",
						 st, seq,
						 ud == RMSG_STREAM_UD_ZC ?
						 "rendezvous" : "eager",
						 s->first_error);
		if (ev[i].res) {
			s->failed++;
			if (!s->first_error)
				s->first_error = ev[i].res;
		} else {
			s->ok++;
		}
	}
	return n;
}

/* A closed channel's block may still hold messages: read them out. */
static inline int rmsg_streams_drain(struct rmsg_streams *ss, unsigned int i)
{
	struct rmsg_stream *s = &ss->s[i];
	struct rmsg_msg msg;
	int ret;

	while (s->rx && s->rx_closed && !s->rx_drained) {
		ret = rmsg_msg_peek(s->rx, s->rx_ch, &msg);
		if (ret == -ENOTCONN) {
			s->rx_drained = true;
			break;
		}
		if (ret == -EAGAIN)
			break;
		if (ret)
			return rmsg_streams_fail(ss, "stream %u: peek: %d", i,
						 ret);
		/* Announced on a channel that ended: it cannot be read. */
		if (msg.kind == RMSG_MSG_RNDV)
			s->corrupt++;
		else
			rmsg_stream_check(ss, s, i, msg.data, msg.len);
		ret = rmsg_msg_release(s->rx, &msg);
		if (ret)
			return rmsg_streams_fail(ss, "stream %u: release: %d",
						 i, ret);
	}
	return 0;
}

/*
 * Is stream @s where it can go, for a run to @goal messages? It received
 * and saw completed @goal of them (or all), or its channel ended and
 * every send completed and the receive block was read out.
 */
static inline bool rmsg_stream_settled(const struct rmsg_stream *s,
				       __u64 goal)
{
	bool tx_end, rx_end;

	if (goal > s->total)
		goal = s->total;
	tx_end = (s->tx_dead || s->sent == s->total) &&
		 s->ok + s->failed == s->sent && s->tx_closed;
	rx_end = s->rx_closed && s->rx_drained;
	/* Half a stream: only its own end counts. */
	if (!s->rx)
		return s->ok >= goal || tx_end;
	if (!s->tx)
		return s->received >= goal || rx_end;
	/* At the end, every answer's bytes must have been checked too. */
	if (s->received >= goal && s->ok >= goal &&
	    (goal < s->total || !s->rndv_pending))
		return true;
	return tx_end && rx_end;
}

/*
 * One round over every stream: send a burst, read, take completions and
 * events. Returns how much moved, or -1 with ss->why said.
 */
static inline int rmsg_streams_step(struct rmsg_streams *ss)
{
	unsigned int i;
	int r, moved = 0;

	for (i = 0; i < ss->n; i++) {
		/* Bursts of a few, so the streams interleave. */
		r = rmsg_stream_send(ss, i, 1 + (i + ss->s[i].sent) % 5);
		if (r < 0)
			return -1;
		moved += r;
	}
	for (i = 0; i < ss->neps; i++) {
		r = rmsg_streams_recv(ss, ss->eps[i], 64);
		if (r < 0)
			return -1;
		moved += r;
		r = rmsg_streams_events(ss, ss->eps[i]);
		if (r < 0)
			return -1;
		moved += r;
	}
	for (i = 0; i < ss->n; i++)
		if (rmsg_streams_drain(ss, i))
			return -1;
	return moved;
}

/* Step the streams for @ms milliseconds: true, or false with ss->why. */
static inline bool rmsg_streams_run_for(struct rmsg_streams *ss, long ms)
{
	long end = rmsg_now_ms() + ms;
	int moved;

	do {
		moved = rmsg_streams_step(ss);
		if (moved < 0)
			return false;
		if (!moved)
			usleep(200);
	} while (rmsg_now_ms() < end);
	return true;
}

/*
 * Drive every stream until each has settled for @goal messages
 * (rmsg_stream_settled()). True, or false with ss->why said.
 */
static inline bool rmsg_streams_run(struct rmsg_streams *ss, __u64 goal,
				    long timeout_ms)
{
	long deadline = rmsg_now_ms() + timeout_ms * rmsg_test_slow();
	unsigned int i;
	bool all;
	int moved;

	for (;;) {
		moved = rmsg_streams_step(ss);
		if (moved < 0)
			return false;
		all = true;
		for (i = 0; i < ss->n; i++)
			all &= rmsg_stream_settled(&ss->s[i], goal);
		if (all)
			return true;
		if (rmsg_now_ms() > deadline) {
			for (i = 0; i < ss->n; i++)
				if (!rmsg_stream_settled(&ss->s[i], goal))
					break;
			rmsg_streams_fail(ss, "timeout: stream %u sent %llu ok %llu failed %llu received %llu of %llu, rendezvous sent %llu received %llu answers pending %llu%s%s",
					  i, (unsigned long long)ss->s[i].sent,
					  (unsigned long long)ss->s[i].ok,
					  (unsigned long long)ss->s[i].failed,
					  (unsigned long long)ss->s[i].received,
					  (unsigned long long)goal,
					  (unsigned long long)ss->s[i].rndv_sent,
					  (unsigned long long)ss->s[i].rndv_received,
					  (unsigned long long)ss->s[i].rndv_pending,
					  ss->s[i].tx_dead ? ", send refused" : "",
					  ss->s[i].rx_closed ? ", rx closed" : "");
			return false;
		}
		if (!moved)
			usleep(200);
	}
}

/* Every message sent, completed with res 0, received once, in order, intact. */
static inline bool rmsg_stream_exact(const struct rmsg_stream *s)
{
	return s->sent == s->total && s->ok == s->total && !s->failed &&
	       s->received == s->total && s->next == s->total && !s->lost &&
	       !s->dup && !s->corrupt && !s->rndv_pending &&
	       s->rndv_received == s->rndv_sent;
}

/*
 * A stream whose channel ended: what arrived is a gap-free prefix, intact,
 * holding at least every message whose send completed with res 0.
 */
static inline bool rmsg_stream_prefix(const struct rmsg_stream *s)
{
	return !s->lost && !s->dup && !s->corrupt && s->next == s->received &&
	       s->received >= s->ok && s->received <= s->sent &&
	       s->ok + s->failed == s->sent;
}

static inline const char *rmsg_stream_str(const struct rmsg_stream *s,
					  char *buf, size_t len)
{
	snprintf(buf, len, "sent %llu ok %llu failed %llu received %llu lost %llu dup %llu corrupt %llu rendezvous %llu/%llu first error %d; sender %s (%d), receiver %s (%d)",
		 (unsigned long long)s->sent, (unsigned long long)s->ok,
		 (unsigned long long)s->failed,
		 (unsigned long long)s->received, (unsigned long long)s->lost,
		 (unsigned long long)s->dup, (unsigned long long)s->corrupt,
		 (unsigned long long)s->rndv_received,
		 (unsigned long long)s->rndv_sent,
		 s->first_error, s->tx_closed ? "closed" : "open", s->tx_res,
		 s->rx_closed ? "closed" : "open", s->rx_res);
	return buf;
}

#endif /* _RMSG_TEST_H */
