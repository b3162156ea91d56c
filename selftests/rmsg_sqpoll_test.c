// SPDX-License-Identifier: GPL-2.0
/*
 * The kernel submission poller (RMSG_EP_F_SQPOLL): setup, zero system calls
 * per message while it polls, NEED_WAKEUP and the wakeup after idle, bad
 * indices and descriptors while it runs, and its end (close, kill, fork).
 */
#include <dirent.h>
#include <sched.h>
#include <sys/stat.h>
#include <signal.h>
#include <stdint.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "rmsg_test.h"

/* A user_data no two operations of a test share; not a plain counter. */
static __u64 ud(unsigned int stream, unsigned int i)
{
	return ((__u64)stream << 40) ^ ((__u64)i * 0x9e3779b97f4a7c15ULL >> 24)
		^ i;
}

static int sqp_open(struct rmsg_ep **ep, __u32 sq, __u32 cq, __u32 idle_ms)
{
	struct rmsg_ep_setup p;

	memset(&p, 0, sizeof(p));
	p.sq_entries = sq;
	p.cq_entries = cq;
	p.flags = RMSG_EP_F_SQPOLL;
	p.sqpoll_idle_ms = idle_ms;
	return rmsg_ep_open_setup(ep, &p);
}

static int raw_setup(int fd, __u32 sq, __u32 flags, __u32 idle_ms,
		     struct rmsg_ep_setup *p)
{
	memset(p, 0, sizeof(*p));
	p->sq_entries = sq;
	p->flags = flags;
	p->sqpoll_idle_ms = idle_ms;
	return ioctl(fd, RMSG_IOC_EP_SETUP, p) ? -errno : 0;
}

/*
 * Publish what is queued; enter only when the library says the kernel
 * needs it (NEED_WAKEUP), and count those system calls in *enters.
 */
static int kick(struct rmsg_ep *ep, unsigned long *enters)
{
	unsigned int n = rmsg_sq_submit(ep);

	if (!n)
		return 0;
	(*enters)++;
	return rmsg_ep_enter(ep, n, 0, 0);
}

/* Busy-poll the CQ (no GETEVENTS) until @want CQEs are ready. */
static bool wait_cqes(struct rmsg_ep *ep, unsigned int want,
		      unsigned long *enters, long timeout_ms)
{
	long deadline = rmsg_now_ms() + timeout_ms;
	unsigned long spins = 0;

	while (rmsg_cq_ready(ep) < want) {
		if (rmsg_now_ms() > deadline)
			return false;
		if (enters && !(++spins & 63))
			kick(ep, enters);
	}
	return true;
}

static bool sqp_flag(struct rmsg_ep *ep)
{
	return __atomic_load_n(rmsg_ep_rings(ep)->sq.flags, __ATOMIC_ACQUIRE) &
		RMSG_SQ_NEED_WAKEUP;
}

/* Wait until NEED_WAKEUP is @set: true, or false at @timeout_ms. */
static bool wait_flag(struct rmsg_ep *ep, bool set, long timeout_ms)
{
	long deadline = rmsg_now_ms() + timeout_ms;

	while (sqp_flag(ep) != set) {
		if (rmsg_now_ms() > deadline)
			return false;
		usleep(1000);
	}
	return true;
}

/*
 * The poller threads named after process @pid ("rmsg-sqp/<pid>"): how many,
 * and the id of the last one found in *tid.
 */
static int pollers(pid_t pid, pid_t *tid)
{
	char want[32], path[300], comm[64];
	struct dirent *d;
	int n = 0;
	DIR *dir;
	FILE *f;

	snprintf(want, sizeof(want), "rmsg-sqp/%d\n", (int)pid);
	dir = opendir("/proc");
	if (!dir)
		return -1;
	while ((d = readdir(dir))) {
		if (d->d_name[0] < '1' || d->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/comm", d->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (fgets(comm, sizeof(comm), f) && !strcmp(comm, want)) {
			n++;
			if (tid)
				*tid = atoi(d->d_name);
		}
		fclose(f);
	}
	closedir(dir);
	return n;
}

/* Wait until process @pid has @n poller threads. */
static int wait_pollers(pid_t pid, int n, long timeout_ms)
{
	long deadline = rmsg_now_ms() + timeout_ms;
	int got;

	while ((got = pollers(pid, NULL)) != n && rmsg_now_ms() < deadline)
		usleep(10000);
	return got;
}

/* utime + stime of a thread, in clock ticks; -1 when it is gone. */
static long thread_ticks(pid_t tid, char *state)
{
	char path[64], buf[1024], *p;
	unsigned long utime, stime;
	FILE *f;
	size_t len;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)tid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	len = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[len] = 0;
	p = strrchr(buf, ')');
	/* After the comm: state, 10 fields, then utime and stime. */
	if (!p || sscanf(p + 2, "%c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu",
			 state, &utime, &stime) != 3)
		return -1;
	return (long)(utime + stime);
}

/* The tests need no state; the fixture is for TEST_F_TIMEOUT. */
FIXTURE(sqp) {
	int unused;
};

FIXTURE_SETUP(sqp)
{
}

FIXTURE_TEARDOWN(sqp)
{
}

TEST(setup_announces_sqpoll)
{
	struct rmsg_ep_setup p;
	struct rmsg_version ver;
	struct rmsg_ep *ep = NULL;
	unsigned long enters = 0;
	pid_t tid = 0;
	int ret;

	ret = rmsg_node_open();
	ASSERT_LE(0, ret);
	ASSERT_EQ(0, rmsg_node_version(ret, &ver));
	EXPECT_TRUE(ver.features & RMSG_FEAT_SQPOLL);
	close(ret);

	EXPECT_EQ(0, pollers(getpid(), NULL));
	memset(&p, 0, sizeof(p));
	p.sq_entries = 8;
	p.flags = RMSG_EP_F_SQPOLL;
	p.sqpoll_idle_ms = 5000;
	ret = rmsg_ep_open_setup(&ep, &p);
	ASSERT_EQ(0, ret) TH_LOG("rmsg_ep_open_setup: %s", strerror(-ret));
	EXPECT_TRUE(p.features & RMSG_FEAT_SQPOLL);
	EXPECT_EQ(8, p.sq_entries);
	EXPECT_EQ(16, p.cq_entries);
	EXPECT_NE(NULL, rmsg_ep_rings(ep)->sq.map);
	EXPECT_NE(NULL, rmsg_ep_rings(ep)->cq.map);
	/* Awake from the start: no wakeup needed. */
	EXPECT_FALSE(sqp_flag(ep));
	EXPECT_EQ(1, pollers(getpid(), &tid));

	/* A NOP goes through without a system call. */
	ASSERT_TRUE(rmsg_queue_nop(ep, ud(1, 0)));
	EXPECT_EQ(0, rmsg_sq_submit(ep));
	ASSERT_TRUE(wait_cqes(ep, 1, NULL, 5000));
	EXPECT_EQ(ud(1, 0), rmsg_cq_peek(ep)->user_data);
	EXPECT_EQ(0, rmsg_cq_peek(ep)->res);
	rmsg_cq_advance(ep, 1);
	EXPECT_EQ(0, enters);

	rmsg_ep_drop(&ep);
	EXPECT_EQ(0, wait_pollers(getpid(), 0, 2000));
}

TEST(setup_rejects_bad_flags_and_idle)
{
	static const struct { __u32 flags, idle; } bad[] = {
		{ 1U << 3, 0 },		/* the first flag not defined */
		{ 1U << 31, 0 },
		{ ~0U, 0 },
		{ RMSG_EP_F_SQPOLL | 1U << 3, 0 },
		{ RMSG_EP_F_SQPOLL, RMSG_SQPOLL_IDLE_MAX_MS + 1 },
		{ RMSG_EP_F_SQPOLL, ~0U },
		{ 0, 1 },			/* idle without SQPOLL */
		{ 0, RMSG_SQPOLL_IDLE_MAX_MS },
	};
	struct rmsg_ep_setup p;
	unsigned int i;
	int fd = rmsg_node_open();

	ASSERT_LE(0, fd);
	for (i = 0; i < ARRAY_SIZE(bad); i++)
		EXPECT_EQ(-EINVAL, raw_setup(fd, 8, bad[i].flags, bad[i].idle,
					     &p)) TH_LOG("case %u", i);
	/* A bad ring size with SQPOLL: no thread left behind. */
	EXPECT_EQ(-EINVAL, raw_setup(fd, 0, RMSG_EP_F_SQPOLL, 0, &p));
	EXPECT_EQ(0, pollers(getpid(), NULL));
	/* None of that set anything up; the largest idle time is fine. */
	EXPECT_EQ(0, raw_setup(fd, 8, RMSG_EP_F_SQPOLL,
			       RMSG_SQPOLL_IDLE_MAX_MS, &p));
	EXPECT_EQ(1, pollers(getpid(), NULL));
	EXPECT_EQ(-EBUSY, raw_setup(fd, 8, RMSG_EP_F_SQPOLL, 0, &p));
	EXPECT_EQ(1, pollers(getpid(), NULL));
	close(fd);
	EXPECT_EQ(0, wait_pollers(getpid(), 0, 2000));
}

/*
 * 100000 NOPs, one rmsg_sq_submit() per message, the CQ busy-polled: with
 * the poller awake almost none needs a system call. Its idle time is 1 s,
 * not the default 10 ms: a busy host stops the guest's vCPUs for tens of
 * milliseconds at a time, and the poller would fall asleep in those gaps.
 */
/*
 * @n NOPs through @ep's poller, a window of 128 in flight, one
 * rmsg_sq_submit() per NOP, the CQ busy-polled (within 240 s). Returns the
 * NOPs completed; wrong CQEs are counted in *@bad, system calls in
 * *@enters.
 */
static unsigned int nop_stream(struct rmsg_ep *ep, unsigned int n,
			       unsigned long *enters, unsigned int *bad)
{
	unsigned int sent = 0, got = 0, window = 128;
	long deadline = rmsg_now_ms() + 240000;
	unsigned long idle_spins = 0;
	struct rmsg_cqe *cqe;

	while (got < n && rmsg_now_ms() < deadline) {
		bool progress = false;

		while (sent < n && sent - got < window) {
			if (!rmsg_queue_nop(ep, ud(2, sent)) ||
			    kick(ep, enters) < 0)
				return got;
			sent++;
			progress = true;
		}
		while ((cqe = rmsg_cq_peek(ep))) {
			if (cqe->user_data != ud(2, got) || cqe->res)
				(*bad)++;
			rmsg_cq_advance(ep, 1);
			got++;
			progress = true;
		}
		/* Nothing moved: the poller may be asleep. */
		if (!progress && !(++idle_spins & 1023) && kick(ep, enters) < 0)
			return got;
	}
	return got;
}

TEST_F_TIMEOUT(sqp, nops_without_syscalls, 300)
{
	enum { N = 100000 };
	unsigned int got, bad = 0;
	unsigned long enters = 0;
	struct rmsg_ep *ep = NULL;
	long t0;
	int ret;

	ret = sqp_open(&ep, 256, 512, 1000);
	ASSERT_EQ(0, ret) TH_LOG("sqp_open: %s", strerror(-ret));
	t0 = rmsg_now_ms();
	got = nop_stream(ep, N, &enters, &bad);
	TH_LOG("%u NOPs in %ld ms with %lu enter calls", got,
	       rmsg_now_ms() - t0, enters);
	EXPECT_EQ(N, got);
	EXPECT_EQ(0, bad);
	EXPECT_GE(N / 100, enters);
	rmsg_ep_drop(&ep);
}

/* The nice value of thread @tid, or 100 when it cannot be read. */
static int thread_nice(pid_t tid)
{
	char path[64], buf[1024], *p;
	int nice = 100;
	FILE *f;
	size_t len;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)tid);
	f = fopen(path, "r");
	if (!f)
		return nice;
	len = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[len] = 0;
	p = strrchr(buf, ')');
	/* After the comm: fields 3 (state) to 18, then the nice value. */
	if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %d",
			 &nice) != 1)
		return 100;
	return nice;
}

/*
 * As nobody, without CAP_SYS_NICE, in a child: two pollers at once
 * (sqpoll_per_user's default), the third refused with EBUSY until one
 * goes; a poller that asked to spin 10 s idle sleeps after the 1 s of
 * sqpoll_user_idle_ms; its nice level is the caller's; NOPs through it
 * need as few system calls as a privileged one's. Returns the step that
 * failed, or 0.
 */
static int unprivileged_child(void)
{
	unsigned long enters = 0;
	struct rmsg_ep *e1 = NULL, *e2 = NULL, *e3 = NULL;
	unsigned int bad = 0;
	pid_t tid = 0;

	if (rmsg_become_nobody() || nice(3) == -1)
		return 1;
	if (sqp_open(&e1, 8, 0, RMSG_SQPOLL_IDLE_MAX_MS))
		return 2;
	if (pollers(getpid(), &tid) != 1 || thread_nice(tid) != 3)
		return 3;
	/*
	 * The same 1 s idle as nops_without_syscalls' privileged poller
	 * (the most an unprivileged one may have): with the 10 ms default
	 * every time a loaded host leaves this program off its CPU for
	 * longer, the poller sleeps and costs an enter.
	 */
	if (sqp_open(&e2, 256, 512, 1000))
		return 4;
	if (sqp_open(&e3, 8, 0, 0) != -EBUSY)
		return 5;
	/* Asked for 10 s; the bound is 1 s: a loaded host gets 5 more. */
	if (!wait_flag(e1, true, 6000))
		return 6;
	rmsg_ep_drop(&e1);
	if (sqp_open(&e3, 8, 0, 0))
		return 7;
	if (nop_stream(e2, 20000, &enters, &bad) != 20000 || bad)
		return 8;
	fprintf(stderr, "# unprivileged: 20000 NOPs, %lu enter calls\n",
		enters);
	if (enters > 20000 / 100)
		return 9;
	rmsg_ep_drop(&e2);
	rmsg_ep_drop(&e3);
	return 0;
}

TEST_F_TIMEOUT(sqp, unprivileged, 300)
{
	int fd = rmsg_node_open();
	char old[16];
	pid_t pid;

	ASSERT_LE(0, fd);
	close(fd);
	ASSERT_EQ(0, rmsg_read_param("sqpoll_per_user", old, sizeof(old)))
		TH_LOG("a module without sqpoll_per_user");
	ASSERT_EQ(0, rmsg_write_param("sqpoll_per_user", "2"));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid)
		_exit(unprivileged_child());
	EXPECT_EQ(0, rmsg_child_status(pid)) TH_LOG("the child failed a step");

	/* 0: no poller without CAP_SYS_NICE. */
	ASSERT_EQ(0, rmsg_write_param("sqpoll_per_user", "0"));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		struct rmsg_ep *ep = NULL;

		_exit(rmsg_become_nobody() ? 1 :
		      sqp_open(&ep, 8, 0, 0) == -EPERM ? 0 : 2);
	}
	EXPECT_EQ(0, rmsg_child_status(pid));
	EXPECT_EQ(0, rmsg_write_param("sqpoll_per_user", old));
}

/*
 * The poller runs in its starter's cgroup (cgroup v2: a child group made
 * for the test), so the CPU it spins on is charged there.
 */
TEST_F_TIMEOUT(sqp, poller_in_callers_cgroup, 60)
{
	const char *grp = "/sys/fs/cgroup/rmsg-sqpoll-test";
	char path[300], line[300] = "";
	struct rmsg_ep *ep = NULL;
	pid_t pid, tid = 0;
	int status;
	FILE *f;

	if (access("/sys/fs/cgroup/cgroup.procs", F_OK) &&
	    rmsg_sh("mount -t cgroup2 none /sys/fs/cgroup"))
		SKIP(return, "no cgroup2 hierarchy at /sys/fs/cgroup");
	rmdir(grp);
	ASSERT_EQ(0, mkdir(grp, 0755)) TH_LOG("mkdir %s: %s", grp,
					      strerror(errno));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		status = rmsg_sh("echo %d > %s/cgroup.procs", getpid(), grp);
		if (status || sqp_open(&ep, 8, 0, 0) ||
		    pollers(getpid(), &tid) != 1)
			_exit(1);
		snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)tid);
		f = fopen(path, "r");
		if (!f || !fgets(line, sizeof(line), f))
			_exit(2);
		fclose(f);
		fprintf(stderr, "# the poller's cgroup: %s", line);
		_exit(strcmp(line, "0::/rmsg-sqpoll-test\n") ? 3 : 0);
	}
	EXPECT_EQ(0, rmsg_child_status(pid));
	/* Its endpoint closed with the child: the poller leaves the group. */
	EXPECT_EQ(0, wait_pollers(pid, 0, 5000));
	EXPECT_EQ(0, rmdir(grp)) TH_LOG("rmdir %s: %s", grp, strerror(errno));
}

/*
 * After the idle time the poller sets NEED_WAKEUP and sleeps (no CPU);
 * rmsg_sq_submit() then asks for ENTER, which wakes it.
 */
TEST_F_TIMEOUT(sqp, idle_sets_need_wakeup_and_enter_wakes, 60)
{
	unsigned int entered = 0;
	struct rmsg_ep *ep = NULL;
	long t1, t2;
	pid_t tid = 0;
	char state = '?';
	int i, ret;

	ret = sqp_open(&ep, 8, 0, 200);
	ASSERT_EQ(0, ret) TH_LOG("sqp_open: %s", strerror(-ret));
	ASSERT_EQ(1, pollers(getpid(), &tid));

	ASSERT_TRUE(rmsg_queue_nop(ep, ud(3, 0)));
	/*
	 * A loaded host may have let the new poller idle already; ENTER
	 * then takes the SQE itself (1) or leaves it to the poller (0).
	 */
	if (rmsg_sq_submit(ep))
		ASSERT_LE(0, rmsg_ep_enter(ep, 1, 0, 0));
	ASSERT_TRUE(wait_cqes(ep, 1, NULL, 5000));
	rmsg_cq_advance(ep, 1);

	/*
	 * Idle: the flag is set and the thread sleeps, using no CPU. The
	 * wait is long only for a busy host; the poller sleeps after 200 ms.
	 */
	ASSERT_TRUE(wait_flag(ep, true, 20000));
	/*
	 * The CPU time of /proc is the scheduler's clock: a host that stops
	 * the vCPU just before the poller's schedule() charges the poller
	 * for the pause. A poller that spins is charged in every window;
	 * one window of three with no CPU used is the proof it sleeps.
	 */
	for (i = 0; i < 3; i++) {
		t1 = thread_ticks(tid, &state);
		ASSERT_LE(0, t1);
		usleep(1000000);
		t2 = thread_ticks(tid, &state);
		if (state == 'S' && t2 - t1 <= 5)
			break;
		TH_LOG("poller used %ld ticks in 1 s while idle (state %c)",
		       t2 - t1, state);
	}
	EXPECT_EQ('S', state);
	EXPECT_GE(5, t2 - t1);

	/* A submit now asks for ENTER, and nothing happens without it. */
	ASSERT_TRUE(rmsg_queue_nop(ep, ud(3, 1)));
	EXPECT_EQ(1, rmsg_sq_submit(ep));
	usleep(300000);
	EXPECT_EQ(0, rmsg_cq_ready(ep));
	/*
	 * ENTER takes the SQE (or waits for the poller it woke to take it):
	 * the CQE is there when it returns, without a second ENTER.
	 */
	ret = rmsg_ep_enter(ep, 1, 0, 0);
	EXPECT_TRUE(ret == 0 || ret == 1) TH_LOG("enter: %d", ret);
	EXPECT_EQ(1, rmsg_cq_ready(ep));
	EXPECT_EQ(rmsg_ep_rings(ep)->sq.cached_prod,
		  __atomic_load_n(rmsg_ep_rings(ep)->sq.consumer,
				  __ATOMIC_ACQUIRE));
	ASSERT_TRUE(wait_cqes(ep, 1, NULL, 5000));
	EXPECT_EQ(ud(3, 1), rmsg_cq_peek(ep)->user_data);
	EXPECT_EQ(0, rmsg_cq_peek(ep)->res);
	rmsg_cq_advance(ep, 1);
	/*
	 * Awake again once it runs: the flag clears, and a submit needs no
	 * system call. A host that stops this process for longer than the
	 * poller's 200 ms lets it fall asleep between the two: then the
	 * submit asks for ENTER, and the test tries again (a few times).
	 */
	for (i = 0; i < 5; i++) {
		EXPECT_TRUE(wait_flag(ep, false, 5000));
		ASSERT_TRUE(rmsg_queue_nop(ep, ud(3, 2 + i)));
		entered = rmsg_sq_submit(ep);
		if (entered)
			ASSERT_LE(0, rmsg_ep_enter(ep, 1, 0, 0));
		ASSERT_TRUE(wait_cqes(ep, 1, NULL, 5000));
		EXPECT_EQ(ud(3, 2 + i), rmsg_cq_peek(ep)->user_data);
		rmsg_cq_advance(ep, 1);
		if (!entered)
			break;
		TH_LOG("the poller fell asleep before submit %d", i);
	}
	EXPECT_EQ(0, entered);

	/* Asleep again; ENTER with GETEVENTS wakes it and waits. */
	ASSERT_TRUE(wait_flag(ep, true, 20000));
	ASSERT_TRUE(rmsg_queue_nop(ep, ud(3, 10)));
	ASSERT_TRUE(rmsg_queue_nop(ep, ud(3, 11)));
	EXPECT_EQ(2, rmsg_sq_submit(ep));
	ret = rmsg_ep_enter(ep, 2, 2, RMSG_ENTER_GETEVENTS);
	EXPECT_TRUE(ret >= 0 && ret <= 2) TH_LOG("enter: %d", ret);
	ASSERT_EQ(2, rmsg_cq_ready(ep));
	EXPECT_EQ(ud(3, 10), rmsg_cq_peek(ep)->user_data);
	rmsg_cq_advance(ep, 1);
	EXPECT_EQ(ud(3, 11), rmsg_cq_peek(ep)->user_data);
	rmsg_cq_advance(ep, 1);
	rmsg_ep_drop(&ep);
}

/*
 * The ENTER that wakes a sleeping poller clears NEED_WAKEUP itself, before
 * the thread runs: the submits that follow need no system call however
 * long the woken thread waits for a CPU (it cost sqp.unprivileged 1031
 * and 3310 calls for one wakeup when the thread cleared it). The test
 * keeps the thread waiting for certain: both on one CPU, the test
 * SCHED_FIFO there, which a SCHED_OTHER thread cannot preempt.
 */
TEST_F_TIMEOUT(sqp, enter_clears_need_wakeup, 60)
{
	struct sched_param fifo = { .sched_priority = 1 };
	struct sched_param other = { .sched_priority = 0 };
	struct rmsg_ep *ep = NULL;
	unsigned int again;
	bool flag_after;
	cpu_set_t cpu0;
	pid_t tid = 0;
	int ret, entered;

	ret = sqp_open(&ep, 8, 0, 100);
	ASSERT_EQ(0, ret) TH_LOG("sqp_open: %s", strerror(-ret));
	ASSERT_EQ(1, pollers(getpid(), &tid));
	CPU_ZERO(&cpu0);
	CPU_SET(0, &cpu0);
	ASSERT_EQ(0, sched_setaffinity(0, sizeof(cpu0), &cpu0));
	ASSERT_EQ(0, sched_setaffinity(tid, sizeof(cpu0), &cpu0))
		TH_LOG("pin the poller %d: %s", (int)tid, strerror(errno));
	ASSERT_TRUE(wait_flag(ep, true, 20000));

	ASSERT_EQ(0, sched_setscheduler(0, SCHED_FIFO, &fifo))
		TH_LOG("SCHED_FIFO: %s", strerror(errno));
	ASSERT_TRUE(rmsg_queue_nop(ep, ud(9, 0)));
	entered = rmsg_sq_submit(ep) ? rmsg_ep_enter(ep, 1, 0, 0) : -ENOENT;
	/* The woken poller cannot have run yet: this CPU is ours. */
	flag_after = sqp_flag(ep);
	ASSERT_TRUE(rmsg_queue_nop(ep, ud(9, 1)));
	again = rmsg_sq_submit(ep);
	ASSERT_EQ(0, sched_setscheduler(0, SCHED_OTHER, &other));

	EXPECT_LE(0, entered) TH_LOG("enter: %d", entered);
	EXPECT_FALSE(flag_after);
	EXPECT_EQ(0, again);
	if (again)
		ASSERT_LE(0, rmsg_ep_enter(ep, again, 0, 0));
	/* The first taken by ENTER, the second by the poller once it runs. */
	ASSERT_TRUE(wait_cqes(ep, 2, NULL, 10000));
	EXPECT_EQ(ud(9, 0), rmsg_cq_peek(ep)->user_data);
	rmsg_cq_advance(ep, 1);
	EXPECT_EQ(ud(9, 1), rmsg_cq_peek(ep)->user_data);
	EXPECT_EQ(0, rmsg_cq_peek(ep)->res);
	rmsg_cq_advance(ep, 1);
	rmsg_ep_drop(&ep);
}

/* A full CQ stops the poller; consuming CQEs lets it go on. */
TEST_F_TIMEOUT(sqp, cq_full_back_pressure, 60)
{
	unsigned long enters = 0;
	struct rmsg_ep *ep = NULL;
	unsigned int i;
	int ret;

	ret = sqp_open(&ep, 4, 4, 5000);
	ASSERT_EQ(0, ret) TH_LOG("sqp_open: %s", strerror(-ret));
	for (i = 0; i < 4; i++)
		ASSERT_TRUE(rmsg_queue_nop(ep, ud(4, i)));
	kick(ep, &enters);
	ASSERT_TRUE(wait_cqes(ep, 4, &enters, 5000));
	for (i = 4; i < 8; i++)
		ASSERT_TRUE(rmsg_queue_nop(ep, ud(4, i)));
	kick(ep, &enters);
	usleep(200000);
	/* The CQ is full: nothing more was taken. */
	EXPECT_EQ(4, rmsg_cq_ready(ep));
	EXPECT_EQ(4, __atomic_load_n(rmsg_ep_rings(ep)->sq.consumer,
				     __ATOMIC_ACQUIRE));
	for (i = 0; i < 4; i++) {
		EXPECT_EQ(ud(4, i), rmsg_cq_peek(ep)->user_data);
		rmsg_cq_advance(ep, 1);
	}
	ASSERT_TRUE(wait_cqes(ep, 4, &enters, 5000));
	for (i = 4; i < 8; i++) {
		EXPECT_EQ(ud(4, i), rmsg_cq_peek(ep)->user_data);
		rmsg_cq_advance(ep, 1);
	}
	EXPECT_EQ(0, enters);
	rmsg_ep_drop(&ep);
}

/* Bad descriptors and indices while the poller runs: as with ENTER. */
TEST_F_TIMEOUT(sqp, bad_sqes_and_indices, 60)
{
	unsigned long enters = 0;
	struct rmsg_sqe *sqe;
	struct rmsg_ep *ep = NULL;
	__u32 good;
	int ret;

	ret = sqp_open(&ep, 8, 0, 5000);
	ASSERT_EQ(0, ret) TH_LOG("sqp_open: %s", strerror(-ret));

	/* A bad SQE completes with -EINVAL; the ones around it run. */
	ASSERT_TRUE(rmsg_queue_nop(ep, ud(5, 0)));
	sqe = rmsg_sq_get_sqe(ep);
	ASSERT_NE(NULL, sqe);
	sqe->opcode = 200;
	sqe->user_data = ud(5, 1);
	sqe = rmsg_sq_get_sqe(ep);
	ASSERT_NE(NULL, sqe);
	sqe->opcode = RMSG_OP_NOP;
	sqe->len = 1;
	sqe->user_data = ud(5, 2);
	ASSERT_TRUE(rmsg_queue_nop(ep, ud(5, 3)));
	kick(ep, &enters);
	ASSERT_TRUE(wait_cqes(ep, 4, &enters, 5000));
	EXPECT_EQ(0, rmsg_cq_peek(ep)->res);
	rmsg_cq_advance(ep, 1);
	EXPECT_EQ(ud(5, 1), rmsg_cq_peek(ep)->user_data);
	EXPECT_EQ(-EINVAL, rmsg_cq_peek(ep)->res);
	rmsg_cq_advance(ep, 1);
	EXPECT_EQ(ud(5, 2), rmsg_cq_peek(ep)->user_data);
	EXPECT_EQ(-EINVAL, rmsg_cq_peek(ep)->res);
	rmsg_cq_advance(ep, 1);
	EXPECT_EQ(ud(5, 3), rmsg_cq_peek(ep)->user_data);
	EXPECT_EQ(0, rmsg_cq_peek(ep)->res);
	rmsg_cq_advance(ep, 1);

	/* A producer too far ahead, then one behind: nothing is taken. */
	good = rmsg_ep_rings(ep)->sq.cached_prod;
	__atomic_store_n(rmsg_ep_rings(ep)->sq.producer,
			 good + rmsg_ep_rings(ep)->sq.entries + 3,
			 __ATOMIC_RELEASE);
	usleep(200000);
	__atomic_store_n(rmsg_ep_rings(ep)->sq.producer, good - 1,
			 __ATOMIC_RELEASE);
	usleep(200000);
	EXPECT_EQ(0, rmsg_cq_ready(ep));
	EXPECT_EQ(good, __atomic_load_n(rmsg_ep_rings(ep)->sq.consumer,
					__ATOMIC_ACQUIRE));

	/* Put right, the endpoint works again. */
	ASSERT_TRUE(rmsg_queue_nop(ep, ud(5, 4)));
	kick(ep, &enters);
	ASSERT_TRUE(wait_cqes(ep, 1, &enters, 5000));
	EXPECT_EQ(ud(5, 4), rmsg_cq_peek(ep)->user_data);
	EXPECT_EQ(0, rmsg_cq_peek(ep)->res);
	rmsg_cq_advance(ep, 1);
	rmsg_ep_drop(&ep);
}

/* Closing, or being killed, while the poller is busy: no hang, no leak. */
TEST_F_TIMEOUT(sqp, close_while_busy, 120)
{
	struct rmsg_ep *ep = NULL;
	unsigned int i, k, round;
	int ret, status;
	pid_t pid;

	for (round = 0; round < 30; round++) {
		ret = sqp_open(&ep, 256, 256, 0);
		ASSERT_EQ(0, ret) TH_LOG("sqp_open: %s", strerror(-ret));
		for (i = 0; i < 256; i++)
			ASSERT_TRUE(rmsg_queue_nop(ep, ud(6, i)));
		rmsg_sq_submit(ep);
		/* Close with the poller still taking them. */
		for (k = 0; k < round * 100; k++)
			__atomic_load_n(rmsg_ep_rings(ep)->cq.producer,
					__ATOMIC_ACQUIRE);
		rmsg_ep_drop(&ep);
	}
	EXPECT_EQ(0, wait_pollers(getpid(), 0, 2000));

	for (round = 0; round < 5; round++) {
		pid = fork();
		ASSERT_LE(0, pid);
		if (pid == 0) {
			unsigned long enters = 0;
			unsigned int n = 0;

			if (sqp_open(&ep, 64, 0, 0))
				_exit(1);
			for (;;) {
				while (rmsg_queue_nop(ep, n))
					n++;
				kick(ep, &enters);
				rmsg_cq_advance(ep, rmsg_cq_ready(ep));
			}
		}
		ASSERT_EQ(1, wait_pollers(pid, 1, 5000));
		usleep(100000 + round * 50000);
		ASSERT_EQ(0, kill(pid, SIGKILL));
		ASSERT_EQ(pid, waitpid(pid, &status, 0));
		EXPECT_TRUE(WIFSIGNALED(status));
		EXPECT_EQ(0, wait_pollers(pid, 0, 2000));
	}
}

/* 16 endpoints with a poller each, one stream per endpoint. */
TEST_F_TIMEOUT(sqp, sixteen_endpoints, 300)
{
	enum { NEP = 16, OPS = 2000, WINDOW = 16 };
	static struct rmsg_ep *eps[NEP];
	unsigned int sent[NEP] = { 0 }, got[NEP] = { 0 }, bad = 0;
	unsigned long enters = 0;
	unsigned int i, done = 0;
	struct rmsg_cqe *cqe;
	long deadline;
	int ret;

	for (i = 0; i < NEP; i++) {
		ret = sqp_open(&eps[i], 32, 0, 0);
		ASSERT_EQ(0, ret) TH_LOG("endpoint %u: %s", i, strerror(-ret));
	}
	EXPECT_EQ(NEP, pollers(getpid(), NULL));
	deadline = rmsg_now_ms() + 240000;
	while (done < NEP && rmsg_now_ms() < deadline) {
		done = 0;
		for (i = 0; i < NEP; i++) {
			while (sent[i] < OPS && sent[i] - got[i] < WINDOW &&
			       rmsg_queue_nop(eps[i], ud(100 + i, sent[i]))) {
				sent[i]++;
				ASSERT_LE(0, kick(eps[i], &enters));
			}
			while ((cqe = rmsg_cq_peek(eps[i]))) {
				if (cqe->user_data != ud(100 + i, got[i]) ||
				    cqe->res)
					bad++;
				rmsg_cq_advance(eps[i], 1);
				got[i]++;
			}
			if (sent[i] != got[i])
				ASSERT_LE(0, kick(eps[i], &enters));
			done += got[i] == OPS;
		}
	}
	TH_LOG("%u x %u NOPs with %lu enter calls", NEP, OPS, enters);
	EXPECT_EQ(NEP, done);
	EXPECT_EQ(0, bad);
	for (i = 0; i < NEP; i++)
		rmsg_ep_drop(&eps[i]);
	EXPECT_EQ(0, wait_pollers(getpid(), 0, 2000));
}

/*
 * fork: the child shares the endpoint; its exit stops nothing. Then the
 * parent lets go first, and the child's exit releases the endpoint.
 */
TEST_F_TIMEOUT(sqp, fork_and_exit, 60)
{
	unsigned long enters = 0;
	struct rmsg_ep *ep = NULL;
	int ret, status, go[2];
	pid_t pid;
	char c;

	ret = sqp_open(&ep, 8, 0, 0);
	ASSERT_EQ(0, ret) TH_LOG("sqp_open: %s", strerror(-ret));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		rmsg_queue_nop(ep, 77);
		kick(ep, &enters);
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_EQ(0, WEXITSTATUS(status));
	/* The child's SQE went through the shared ring. */
	rmsg_ep_rings(ep)->sq.cached_prod = __atomic_load_n(rmsg_ep_rings(ep)->sq.producer, __ATOMIC_ACQUIRE);
	ASSERT_TRUE(wait_cqes(ep, 1, &enters, 5000));
	EXPECT_EQ(77, rmsg_cq_peek(ep)->user_data);
	rmsg_cq_advance(ep, 1);
	EXPECT_EQ(1, pollers(getpid(), NULL));
	ASSERT_TRUE(rmsg_queue_nop(ep, 78));
	kick(ep, &enters);
	ASSERT_TRUE(wait_cqes(ep, 1, &enters, 5000));
	EXPECT_EQ(78, rmsg_cq_peek(ep)->user_data);
	rmsg_cq_advance(ep, 1);

	/* The child uses the ring only after the parent let go of it. */
	ASSERT_EQ(0, pipe(go));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		close(go[1]);
		if (read(go[0], &c, 1) != 1)
			_exit(2);
		rmsg_queue_nop(ep, 79);
		kick(ep, &enters);
		if (!wait_cqes(ep, 1, &enters, 5000) ||
		    rmsg_cq_peek(ep)->user_data != 79)
			_exit(1);
		_exit(0);
	}
	close(go[0]);
	rmsg_ep_drop(&ep);
	/* The child still holds the endpoint: the poller lives on. */
	EXPECT_EQ(1, pollers(getpid(), NULL));
	EXPECT_EQ(1, write(go[1], "g", 1));
	close(go[1]);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
	EXPECT_EQ(0, wait_pollers(getpid(), 0, 2000));
}

int main(int argc, char **argv)
{
	return rmsg_test_main(argc, argv);
}
