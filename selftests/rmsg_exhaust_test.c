// SPDX-License-Identifier: GPL-2.0
/*
 * Exhaustion (issue 6, item 5): what a program meets at each of rmsg's
 * limits must be a clear errno or a documented behaviour, never an oops
 * (rmsg-vm fails the run on any kernel warning). Documentation/hardening.rst
 * lists the limits these tests hold the module to:
 *
 *  - endpoints: bounded by the process's RLIMIT_NOFILE (EMFILE), nothing
 *    of rmsg's own;
 *  - channels: max_channels per endpoint; CONNECT beyond fails at once with
 *    ENOSPC, a connection to a listener that is full is refused
 *    (ECONNREFUSED in the dialler's CONNECTED event);
 *  - regions: RLIMIT_MEMLOCK without CAP_IPC_LOCK (ENOMEM), counted with
 *    everything the process has pinned;
 *  - a completion queue nobody reaps: SENDs stop being taken (ENTER says
 *    EBUSY), nothing is overwritten or lost, channel events wait in the
 *    kernel and come in order once there is room;
 *  - memory: rings, send areas, receive blocks, shadows and trailers are
 *    charged to the opener's memory cgroup; at its limit an endpoint's
 *    setup or a new channel fails with ENOMEM (or ECONNREFUSED, the
 *    accepting side's ENOMEM), and the channels already open go on.
 */
#include <fcntl.h>
#include <malloc.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include "kselftest_harness.h"
#include "rmsg_test.h"

#define NOBODY		65534
#define PG		4096
#define MAX_CH_PARAM	"/sys/module/rmsg/parameters/max_channels"
#define EVENT_MS	60000

static int read_param(const char *path, unsigned int *val)
{
	FILE *f = fopen(path, "r");
	int ok;

	if (!f)
		return -errno;
	ok = fscanf(f, "%u", val) == 1;
	fclose(f);
	return ok ? 0 : -EIO;
}

static int write_param(const char *path, unsigned int val)
{
	FILE *f = fopen(path, "w");
	int ok;

	if (!f)
		return -errno;
	ok = fprintf(f, "%u\n", val) > 0;
	return fclose(f) || !ok ? -EIO : 0;
}

/* The next CQE of @ep that is of @kind; others are skipped and counted. */
static int next_of_kind(struct rmsg_ep *ep, unsigned int kind,
			struct rmsg_cqe *cqe, int *skipped)
{
	long deadline = rmsg_now_ms() + EVENT_MS;
	int ret;

	for (;;) {
		ret = rmsg_next_cqe(ep, cqe, deadline - rmsg_now_ms());
		if (ret)
			return ret;
		if (RMSG_CQE_KIND(cqe->flags) == kind)
			return 0;
		if (skipped)
			(*skipped)++;
	}
}

/*
 * Endpoints: open /dev/rmsg until the kernel refuses. rmsg keeps no count
 * of its own; the file table does (EMFILE at RLIMIT_NOFILE). Every one of
 * them is a working endpoint up to the last.
 */
TEST(endpoints_until_emfile)
{
	struct rlimit old, rl = { .rlim_cur = 256, .rlim_max = 256 };
	struct rmsg_ep_setup p = { .sq_entries = 1 };
	int fds[256], n = 0, i, err = 0;

	ASSERT_EQ(0, getrlimit(RLIMIT_NOFILE, &old));
	rl.rlim_max = old.rlim_max;
	ASSERT_EQ(0, setrlimit(RLIMIT_NOFILE, &rl));
	while (n < 256) {
		fds[n] = open(RMSG_DEVICE_PATH, O_RDWR);
		if (fds[n] < 0) {
			err = errno;
			break;
		}
		n++;
	}
	EXPECT_EQ(EMFILE, err);
	EXPECT_LT(200, n);
	/* Each has its rings, the last one too. */
	for (i = 0; i < n; i++) {
		memset(&p, 0, sizeof(p));
		p.sq_entries = 1;
		if (ioctl(fds[i], RMSG_IOC_EP_SETUP, &p))
			break;
	}
	EXPECT_EQ(n, i) TH_LOG("EP_SETUP of endpoint %d: %s", i,
			       strerror(errno));
	for (i = 0; i < n; i++)
		close(fds[i]);
	setrlimit(RLIMIT_NOFILE, &old);
	/* And all of that is gone again: a fresh endpoint works. */
	i = open(RMSG_DEVICE_PATH, O_RDWR);
	ASSERT_LE(0, i);
	memset(&p, 0, sizeof(p));
	p.sq_entries = 1;
	EXPECT_EQ(0, ioctl(i, RMSG_IOC_EP_SETUP, &p));
	close(i);
}

/*
 * The largest rings and send area an endpoint may ask for; one more entry
 * or byte is EINVAL, not an allocation attempt.
 */
TEST(largest_endpoint)
{
	struct rmsg_ep_setup p = { 0 };
	int fd = open(RMSG_DEVICE_PATH, O_RDWR);

	ASSERT_LE(0, fd);
	p.sq_entries = RMSG_MAX_RING_ENTRIES + 1;
	EXPECT_EQ(-1, ioctl(fd, RMSG_IOC_EP_SETUP, &p));
	EXPECT_EQ(EINVAL, errno);
	memset(&p, 0, sizeof(p));
	p.sq_entries = 1;
	p.cq_entries = RMSG_MAX_CQ_ENTRIES + 1;
	EXPECT_EQ(-1, ioctl(fd, RMSG_IOC_EP_SETUP, &p));
	EXPECT_EQ(EINVAL, errno);
	memset(&p, 0, sizeof(p));
	p.sq_entries = 1;
	p.send_area_size = RMSG_SEND_AREA_MAX + 1;
	EXPECT_EQ(-1, ioctl(fd, RMSG_IOC_EP_SETUP, &p));
	EXPECT_EQ(EINVAL, errno);
	memset(&p, 0, sizeof(p));
	p.sq_entries = RMSG_MAX_RING_ENTRIES;
	p.cq_entries = RMSG_MAX_CQ_ENTRIES;
	p.send_area_size = RMSG_SEND_AREA_MAX;
	ASSERT_EQ(0, ioctl(fd, RMSG_IOC_EP_SETUP, &p));
	EXPECT_EQ(RMSG_MAX_RING_ENTRIES, p.sq_entries);
	EXPECT_EQ(RMSG_MAX_CQ_ENTRIES, p.cq_entries);
	EXPECT_EQ(RMSG_SEND_AREA_MAX, p.send_area_size);
	close(fd);
}

/*
 * max_channels takes 1 to RMSG_MAX_CHANNELS. 0 used to be taken and made
 * the id limit wrap to none at all; a larger value gave ids that have no
 * receive block offset.
 */
TEST(max_channels_bounds)
{
	unsigned int saved, now;

	if (read_param(MAX_CH_PARAM, &saved))
		SKIP(return, "no %s", MAX_CH_PARAM);
	EXPECT_EQ(-EIO, write_param(MAX_CH_PARAM, 0));
	EXPECT_EQ(-EIO, write_param(MAX_CH_PARAM, RMSG_MAX_CHANNELS + 1));
	ASSERT_EQ(0, read_param(MAX_CH_PARAM, &now));
	EXPECT_EQ(saved, now);
	EXPECT_EQ(0, write_param(MAX_CH_PARAM, 1));
	ASSERT_EQ(0, read_param(MAX_CH_PARAM, &now));
	EXPECT_EQ(1, now);
	EXPECT_EQ(0, write_param(MAX_CH_PARAM, RMSG_MAX_CHANNELS));
	ASSERT_EQ(0, read_param(MAX_CH_PARAM, &now));
	EXPECT_EQ(RMSG_MAX_CHANNELS, now);
	write_param(MAX_CH_PARAM, saved);
}

FIXTURE(chans) {
	struct sockaddr_in addr;
	struct rmsg_ep *a, *b, *c;
	unsigned int saved;
	bool set, opened;
};

#define SMALL_MAX	8

FIXTURE_SETUP(chans)
{
	if (!rmsg_local_addr(&self->addr, 0))
		SKIP(rmsg_setup_skipped(_metadata); return,
		     "RMSG_LOCAL_ADDR not set: not run by rmsg-vm");
	if (read_param(MAX_CH_PARAM, &self->saved))
		SKIP(rmsg_setup_skipped(_metadata); return,
		     "no %s", MAX_CH_PARAM);
	ASSERT_EQ(0, write_param(MAX_CH_PARAM, SMALL_MAX));
	self->set = true;
	ASSERT_EQ(0, rmsg_ep_open(&self->a, 64, 256));
	ASSERT_EQ(0, rmsg_ep_open(&self->b, 64, 256));
	ASSERT_EQ(0, rmsg_ep_open(&self->c, 64, 256));
	self->opened = true;
	ASSERT_EQ(0, rmsg_ep_listen(self->a, (struct sockaddr *)&self->addr,
				    sizeof(self->addr), 0xa0, 0));
}

FIXTURE_TEARDOWN(chans)
{
	if (self->opened) {
		rmsg_ep_drop(&self->a);
		rmsg_ep_drop(&self->b);
		rmsg_ep_drop(&self->c);
	}
	if (self->set)
		write_param(MAX_CH_PARAM, self->saved);
}

/*
 * max_channels on both sides: the dialler's CONNECT beyond it fails at
 * once with ENOSPC; a listener that is full refuses the connection
 * (ECONNREFUSED there), and takes one again once a channel is gone. An
 * ended channel's id is given again only when no other is free.
 */
TEST_F_TIMEOUT(chans, beyond_max_channels, 300)
{
	struct sockaddr *sa = (struct sockaddr *)&self->addr;
	int ids[SMALL_MAX], i, id;
	struct rmsg_cqe cqe;

	for (i = 0; i < SMALL_MAX; i++) {
		ids[i] = rmsg_chan_connect(self->b, sa, sizeof(self->addr),
					   i, 0);
		ASSERT_LE(0, ids[i]) TH_LOG("connect %d: %d", i, ids[i]);
	}
	/* The dialler's own limit, before anything goes out. */
	EXPECT_EQ(-ENOSPC, rmsg_chan_connect(self->b, sa, sizeof(self->addr),
					     99, 0));
	for (i = 0; i < SMALL_MAX; i++) {
		ASSERT_EQ(0, next_of_kind(self->b, RMSG_CQE_CONNECTED, &cqe,
					  NULL));
		ASSERT_EQ(0, cqe.res);
		ASSERT_EQ(0, next_of_kind(self->a, RMSG_CQE_ACCEPTED, &cqe,
					  NULL));
	}
	/* The listener is full: another endpoint is refused, cleanly. */
	id = rmsg_chan_connect(self->c, sa, sizeof(self->addr), 0xc0, 0);
	ASSERT_LE(0, id);
	ASSERT_EQ(0, next_of_kind(self->c, RMSG_CQE_CONNECTED, &cqe, NULL));
	EXPECT_EQ(id, (int)cqe.channel);
	EXPECT_EQ(-ECONNREFUSED, cqe.res) TH_LOG("res %d (%s)", cqe.res,
						 strerror(-cqe.res));
	/*
	 * Its id is held back (c has others free): the same CONNECT gets
	 * another, and the old one names nothing.
	 */
	i = rmsg_chan_connect(self->c, sa, sizeof(self->addr), 0xc1, 0);
	EXPECT_LE(0, i);
	EXPECT_NE(id, i);
	EXPECT_EQ(-ENOENT, rmsg_chan_close(self->c, id, 0));
	ASSERT_EQ(0, next_of_kind(self->c, RMSG_CQE_CONNECTED, &cqe, NULL));
	EXPECT_EQ(i, (int)cqe.channel);
	EXPECT_EQ(-ECONNREFUSED, cqe.res);
	/* One channel fewer at the listener: room for c's. */
	ASSERT_EQ(0, rmsg_chan_close(self->b, ids[0], 0));
	ASSERT_EQ(0, next_of_kind(self->b, RMSG_CQE_CLOSED, &cqe, NULL));
	ASSERT_EQ(0, next_of_kind(self->a, RMSG_CQE_CLOSED, &cqe, NULL));
	id = rmsg_chan_connect(self->c, sa, sizeof(self->addr), 0xc2, 0);
	ASSERT_LE(0, id);
	ASSERT_EQ(0, next_of_kind(self->c, RMSG_CQE_CONNECTED, &cqe, NULL));
	EXPECT_EQ(0, cqe.res);
	/* And b's freed id is b's again: b has no other free. */
	EXPECT_EQ(ids[0], rmsg_chan_connect(self->b, sa, sizeof(self->addr),
					    0, 0));
}

/*
 * A completion queue nobody reaps, while sends complete: the kernel stops
 * taking SQEs when the CQE they would need has no room (ENTER fails with
 * EBUSY, the SQEs stay in the SQ), never overwrites a CQE, and keeps
 * channel events (here the peer's close) until there is room. Reaping
 * then gives every completion exactly once, in order, then the event.
 */
TEST_F_TIMEOUT(chans, cq_nobody_reaps, 300)
{
	struct sockaddr *sa = (struct sockaddr *)&self->addr;
	struct rmsg_ep_setup p = { .sq_entries = 8, .cq_entries = 8,
				   .send_area_size = RMSG_SEND_AREA_ALIGN };
	struct rmsg_ep *small = NULL;
	struct rmsg_cqe cqe;
	unsigned int queued = 0, got = 0, busy = 0, total = 40, i;
	unsigned int a_ch;
	int id, ret, closed_at = -1;
	long deadline;

	ASSERT_EQ(0, rmsg_ep_open_setup(&small, &p));
	id = rmsg_chan_connect(small, sa, sizeof(self->addr), 0x5, 0);
	ASSERT_LE(0, id);
	ASSERT_EQ(0, next_of_kind(small, RMSG_CQE_CONNECTED, &cqe, NULL));
	ASSERT_EQ(0, cqe.res);
	ASSERT_EQ(0, next_of_kind(self->a, RMSG_CQE_ACCEPTED, &cqe, NULL));
	a_ch = cqe.channel;

	/* 40 SENDs of 64 bytes each, raw, through an 8-entry CQ. */
	deadline = rmsg_now_ms() + EVENT_MS;
	while (busy < 3 && rmsg_now_ms() < deadline) {
		struct rmsg_sqe *sqe;

		while (queued < total && (sqe = rmsg_sq_get_sqe(small))) {
			sqe->opcode = RMSG_OP_SEND;
			sqe->channel = id;
			sqe->addr = (queued % 64) * 64;
			sqe->len = 64;
			sqe->user_data = queued++;
		}
		rmsg_sq_submit(small);
		ret = rmsg_ep_enter(small, 8, 0, 0);
		if (ret == -EBUSY)
			busy++;
		else
			ASSERT_LE(0, ret);
		usleep(10000);
	}
	ASSERT_EQ(3, busy) TH_LOG("ENTER never said the CQ was full");
	/* Full, not past full; the SQ holds what was not taken. */
	EXPECT_EQ(8, rmsg_cq_ready(small));
	EXPECT_EQ(queued - 8,
		  *rmsg_ep_rings(small)->sq.producer - *rmsg_ep_rings(small)->sq.consumer);
	/* In order from the consumer (the CONNECTED event came first). */
	for (i = 0; i < 8; i++) {
		cqe = ((struct rmsg_cqe *)rmsg_ep_rings(small)->cq.descs)
			[(rmsg_ep_rings(small)->cq.cached_cons + i) & rmsg_ep_rings(small)->cq.mask];
		EXPECT_EQ(i, cqe.user_data);
		EXPECT_EQ(0, cqe.res);
	}

	/* The peer closes meanwhile: the event has to wait for room. */
	ASSERT_EQ(0, rmsg_chan_close(self->a, a_ch, 0));
	usleep(500000);
	EXPECT_EQ(8, rmsg_cq_ready(small));

	/* Reap: every SEND once, in order, then CLOSED. */
	deadline = rmsg_now_ms() + EVENT_MS;
	while (closed_at < 0 && rmsg_now_ms() < deadline) {
		while (rmsg_take_cqe(small, &cqe)) {
			if (RMSG_CQE_KIND(cqe.flags) == RMSG_CQE_CLOSED) {
				closed_at = got;
				EXPECT_EQ(0, cqe.res);
				EXPECT_EQ(id, (int)cqe.channel);
				continue;
			}
			ASSERT_EQ(RMSG_CQE_OP, RMSG_CQE_KIND(cqe.flags));
			EXPECT_EQ(got, cqe.user_data);
			EXPECT_EQ(closed_at < 0 ? 0 : -ENOTCONN, cqe.res)
				TH_LOG("SEND %u: %d", got, cqe.res);
			got++;
		}
		rmsg_ep_enter(small, 8, 0, 0);
		usleep(10000);
	}
	/*
	 * Every SEND completes: those taken after the close with ENOTCONN.
	 */
	while (got < queued && rmsg_now_ms() < deadline) {
		if (rmsg_take_cqe(small, &cqe)) {
			EXPECT_EQ(got, cqe.user_data);
			EXPECT_EQ(-ENOTCONN, cqe.res);
			got++;
		} else {
			rmsg_ep_enter(small, 8, 0, 0);
			usleep(10000);
		}
	}
	EXPECT_EQ(queued, got);
	EXPECT_LE(8, closed_at);
	rmsg_ep_drop(&small);
}

/*
 * As nobody with a small RLIMIT_MEMLOCK: one-page regions until the kernel
 * refuses, which it does with ENOMEM at exactly the limit; deregistering
 * one makes room for one more.
 */
static int memlock_child(int fd)
{
	struct rlimit rl = { .rlim_cur = 16 * PG, .rlim_max = 16 * PG };
	int epfd = fd;
	unsigned char *buf = mmap(NULL, 64 * PG, PROT_READ | PROT_WRITE,
				  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	__u32 h[64];
	int n = 0, ret = 0;

	if (buf == MAP_FAILED || setrlimit(RLIMIT_MEMLOCK, &rl))
		return 1;
	if (setgid(NOBODY) || setuid(NOBODY) || getuid() != NOBODY)
		return 2;
	memset(buf, 1, 64 * PG);
	while (n < 64) {
		ret = rmsg_fd_reg(epfd, buf + n * PG, PG, &h[n]);
		if (ret)
			break;
		n++;
	}
	if (ret != -ENOMEM)
		return 3;
	if (n != 16)
		return 4;
	if (rmsg_fd_dereg(epfd, h[3]))
		return 5;
	if (rmsg_fd_reg(epfd, buf + 40 * PG, PG, &h[3]))
		return 6;
	if (rmsg_fd_reg(epfd, buf + 41 * PG, PG, &h[16]) != -ENOMEM)
		return 7;
	return 0;
}

TEST(regions_beyond_memlock_as_nobody)
{
	struct rmsg_ep_setup p = { .sq_entries = 8 };
	long pins0 = rmsg_pins();
	int fd = open(RMSG_DEVICE_PATH, O_RDWR);
	pid_t pid;

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, ioctl(fd, RMSG_IOC_EP_SETUP, &p));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid)
		_exit(memlock_child(fd));
	EXPECT_EQ(0, rmsg_child_status(pid)) TH_LOG("the child failed a step");
	close(fd);
	EXPECT_TRUE(rmsg_pins_are(pins0, 0));
}

/*
 * Memory pressure. A child in a memory cgroup of CG_MAX bytes, which the
 * OOM killer may not pick (oom_score_adj -1000, so that a charge beyond
 * the limit fails instead of killing), opens channels with CG_BLOCK-byte
 * receive blocks between two endpoints of its own until the kernel
 * refuses one. The refusal must be a clear one (ENOMEM from CONNECT, or
 * ENOMEM or ECONNREFUSED, the accepting side's ENOMEM, in the CONNECTED
 * event), and the first channel must still carry a message both ways at
 * the limit. Everything goes when the child exits (run.sh checks rmsg's
 * objects after the program, vm-guest.sh the kernel's counters).
 */
#define CG_DIR		"/sys/fs/cgroup/rmsg-exhaust"
#define CG_MAX		(24 << 20)
#define CG_BLOCK	(256 << 10)
#define CG_CHANNELS	400

static int cg_write(const char *file, const char *val)
{
	int fd, ret = 0;

	fd = open(file, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (write(fd, val, strlen(val)) != (ssize_t)strlen(val))
		ret = -errno;
	close(fd);
	return ret;
}

/* A memory cgroup of CG_MAX bytes at CG_DIR: 0, or why not (a SKIP). */
static const char *cg_make(void)
{
	char max[32];

	if (access("/sys/fs/cgroup/cgroup.controllers", R_OK) &&
	    mount("none", "/sys/fs/cgroup", "cgroup2", 0, NULL))
		return "no cgroup2 hierarchy, and it cannot be mounted";
	if (cg_write("/sys/fs/cgroup/cgroup.subtree_control", "+memory"))
		return "the memory controller cannot be enabled";
	if (mkdir(CG_DIR, 0755) && errno != EEXIST)
		return "cannot make " CG_DIR;
	snprintf(max, sizeof(max), "%d", CG_MAX);
	if (cg_write(CG_DIR "/memory.max", max))
		return "cannot set memory.max";
	cg_write(CG_DIR "/memory.swap.max", "0");
	return NULL;
}

static int memcg_child(const struct sockaddr_in *addr)
{
	const struct sockaddr *sa = (const struct sockaddr *)addr;
	struct rmsg_ep *a = NULL, *b = NULL;
	struct rmsg_event ev;
	__u32 a0 = 0, b0 = 0;
	char pid[32];
	int i, id, why = 0;

	void *heap;

	/*
	 * The child's own memory is faulted in before it joins the cgroup,
	 * and stays in its heap: a page fault at the limit, with nobody the
	 * OOM killer may take, would wait instead of failing.
	 */
	mallopt(M_TRIM_THRESHOLD, 64 << 20);
	mallopt(M_MMAP_THRESHOLD, 64 << 20);
	heap = malloc(8 << 20);
	if (!heap)
		return 10;
	memset(heap, 1, 8 << 20);
	free(heap);
	/*
	 * So are its text and libraries, every page of them, and they stay:
	 * a code path first run at the limit faulted a page of the program
	 * in, charged to the cgroup, and the OOM killer reported that it had
	 * no one to kill (a Call Trace in the kernel log, which fails the
	 * run).
	 */
	if (mlockall(MCL_CURRENT))
		return 10;
	snprintf(pid, sizeof(pid), "%d", getpid());
	if (cg_write("/proc/self/oom_score_adj", "-1000") ||
	    cg_write(CG_DIR "/cgroup.procs", pid))
		return 12;
	/* An endpoint charges its opener's cgroup from its open on. */
	if (rmsg_ep_open(&a, 64, 256) || rmsg_ep_open(&b, 64, 256))
		return 10;
	if (rmsg_ep_listen(a, sa, sizeof(*addr), 0xa0, CG_BLOCK))
		return 11;
	for (i = 0; i < CG_CHANNELS && !why; i++) {
		id = rmsg_chan_connect(b, sa, sizeof(*addr), i, CG_BLOCK);
		if (id < 0) {
			why = id;
			break;
		}
		if (rmsg_lib_event(b, RMSG_CQE_CONNECTED, &ev, EVENT_MS))
			return 13;
		if (ev.res) {
			why = ev.res;
			break;
		}
		if (rmsg_lib_event(a, RMSG_CQE_ACCEPTED, &ev, EVENT_MS))
			return 14;
		if (ev.res) {
			why = ev.res;
			break;
		}
		if (!i) {
			b0 = id;
			a0 = ev.channel;
		}
	}
	fprintf(stderr, "# %d channels of %d KiB blocks, then %d (%s)\n", i,
		CG_BLOCK >> 10, why, strerror(-why));
	if (!i)
		return 15;		/* not even one: the limit is too low */
	if (why != -ENOMEM && why != -ECONNREFUSED)
		return 16;		/* the limit was never met, or an odd error */
	/* At the limit, the first channel still works both ways. */
	if (rmsg_echo(b, b0, a, a0, 0x5a, 200, EVENT_MS) ||
	    rmsg_echo(a, a0, b, b0, 0xa5, 200, EVENT_MS))
		return 17;
	rmsg_ep_drop(&b);
	rmsg_ep_drop(&a);
	return 0;
}

FIXTURE(memcg) {
	struct sockaddr_in addr;
	bool made;
};

FIXTURE_SETUP(memcg)
{
	const char *why;

	if (!rmsg_local_addr(&self->addr, 0))
		SKIP(rmsg_setup_skipped(_metadata); return,
		     "RMSG_LOCAL_ADDR not set: not run by rmsg-vm");
	why = cg_make();
	if (why)
		SKIP(rmsg_setup_skipped(_metadata); return, "%s", why);
	self->made = true;
}

FIXTURE_TEARDOWN(memcg)
{
	/* Braces: see rmsg_resil_test.c's teardown. */
	if (self->made) {
		EXPECT_EQ(0, rmdir(CG_DIR)) TH_LOG("rmdir %s: %s", CG_DIR,
						   strerror(errno));
	}
}

TEST_F_TIMEOUT(memcg, pressure, 300)
{
	char lease_was[8];
	bool lease_set;
	pid_t pid;

	/*
	 * Blocks made at open, charged there: leased blocks come with the
	 * first message, and idle channels would not reach the limit.
	 */
	lease_set = !rmsg_read_param("lease_blocks", lease_was,
				     sizeof(lease_was));
	if (lease_set)
		ASSERT_EQ(0, rmsg_write_param("lease_blocks", "0"));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid)
		_exit(memcg_child(&self->addr));
	EXPECT_EQ(0, rmsg_child_status(pid)) TH_LOG("the child failed a step");
	if (lease_set)
		EXPECT_EQ(0, rmsg_write_param("lease_blocks", lease_was));
}

/*
 * An endpoint's rings and send area are charged to its opener's memory
 * cgroup (not to RLIMIT_MEMLOCK): in the cgroup of CG_MAX bytes, a send
 * area larger than that is refused with ENOMEM, and one of CG_AREA
 * raises the cgroup's memory.current by at least its size.
 */
#define CG_AREA		(4 << 20)

static long cg_current(void)
{
	char buf[32] = { 0 };
	int fd = open(CG_DIR "/memory.current", O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	return n > 0 ? atol(buf) : -1;
}

static int cg_pages_child(void)
{
	struct rmsg_ep_setup p = { .sq_entries = 8 };
	long before, after;
	char pid[32];
	int fd;

	snprintf(pid, sizeof(pid), "%d", getpid());
	if (cg_write("/proc/self/oom_score_adj", "-1000") ||
	    cg_write(CG_DIR "/cgroup.procs", pid))
		return 1;
	fd = open(RMSG_DEVICE_PATH, O_RDWR);
	if (fd < 0)
		return 2;
	p.send_area_size = RMSG_SEND_AREA_MAX;
	if (!ioctl(fd, RMSG_IOC_EP_SETUP, &p) || errno != ENOMEM)
		return 3;
	before = cg_current();
	memset(&p, 0, sizeof(p));
	p.sq_entries = 8;
	p.send_area_size = CG_AREA;
	if (ioctl(fd, RMSG_IOC_EP_SETUP, &p))
		return 4;
	after = cg_current();
	fprintf(stderr, "# memory.current %ld -> %ld with a %d KiB send area\n",
		before, after, CG_AREA >> 10);
	if (before < 0 || after - before < CG_AREA)
		return 5;
	close(fd);
	return 0;
}

TEST_F_TIMEOUT(memcg, endpoint_pages, 120)
{
	pid_t pid = fork();

	ASSERT_LE(0, pid);
	if (!pid)
		_exit(cg_pages_child());
	EXPECT_EQ(0, rmsg_child_status(pid)) TH_LOG("the child failed a step");
}

int main(int argc, char **argv)
{
	return rmsg_test_main(argc, argv);
}
