// SPDX-License-Identifier: GPL-2.0
/*
 * Memory regions (RMSG_IOC_REG, RMSG_IOC_DEREG): what registration accepts
 * and refuses, how many pages it pins (VmPin in /proc/self/status counts
 * them, as it counts the RDMA core's user MRs), RLIMIT_MEMLOCK for a
 * process without CAP_IPC_LOCK, and that pinned memory goes back on
 * deregistration, on the endpoint's close, and not when a forked child
 * closes its copy of the file. No transfer exists yet, so the kernel never
 * reads or writes a region here: the data checks are that registration and
 * fork leave the program's bytes, and the pages under them, alone.
 */
#include <fcntl.h>
#include <stdint.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "rmsg_test.h"

#define PG		4096UL
#define NOBODY		65534

/* Pages [addr, addr + len) touches, counted here independently. */
static long span_pages(uintptr_t addr, size_t len)
{
	return (long)((addr + len - 1) / PG - addr / PG + 1);
}

static unsigned char *map_pages(size_t npages, int prot)
{
	void *p = mmap(NULL, npages * PG, prot, MAP_PRIVATE | MAP_ANONYMOUS,
		       -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

static void fill(unsigned char *p, size_t len, unsigned int seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		p[i] = (unsigned char)(i * 131 + seed + (i >> 12));
}

static bool filled(const unsigned char *p, size_t len, unsigned int seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (p[i] != (unsigned char)(i * 131 + seed + (i >> 12)))
			return false;
	return true;
}

/* The page frame under @p (root only), 0 when it cannot be read. */
static uint64_t pfn_of(const void *p)
{
	uint64_t ent = 0;
	int fd = open("/proc/self/pagemap", O_RDONLY);

	if (fd < 0)
		return 0;
	if (pread(fd, &ent, sizeof(ent), (off_t)((uintptr_t)p / PG * 8)) !=
	    sizeof(ent))
		ent = 0;
	close(fd);
	if (!(ent >> 63))	/* not present */
		return 0;
	return ent & ((1ULL << 55) - 1);
}

TEST(version_announces_rndv)
{
	struct rmsg_version ver;
	int fd = rmsg_node_open();

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, rmsg_node_version(fd, &ver));
	EXPECT_TRUE(ver.features & RMSG_FEAT_RNDV);
	close(fd);
}

FIXTURE(region) {
	struct rmsg_ep *ep;
	long pin0;
	long pins0;
};

FIXTURE_SETUP(region)
{
	int ret = rmsg_ep_open(&self->ep, 8, 0);

	ASSERT_EQ(0, ret) TH_LOG("rmsg_ep_open: %s", strerror(-ret));
	self->pin0 = rmsg_vmpin_kb();
	ASSERT_LE(0, self->pin0) TH_LOG("no VmPin in /proc/self/status");
	self->pins0 = rmsg_pins();
	if (self->pins0 < 0)
		TH_LOG("no pin counters: only VmPin is checked");
}

FIXTURE_TEARDOWN(region)
{
	rmsg_ep_drop(&self->ep);
}

TEST_F(region, reg_dereg_keeps_data)
{
	size_t len = 16 * PG;
	unsigned char *buf = map_pages(16, PROT_READ | PROT_WRITE);
	uint64_t pfn;
	__u32 h = 0;

	ASSERT_NE(NULL, buf);
	fill(buf, len, 1);
	pfn = pfn_of(buf + 5 * PG);
	ASSERT_EQ(0, rmsg_reg(self->ep, buf, len, &h));
	EXPECT_NE(0, h);
	EXPECT_EQ(self->pin0 + 64, rmsg_vmpin_kb());
	EXPECT_TRUE(rmsg_pins_are(self->pins0, 16));
	EXPECT_TRUE(filled(buf, len, 1));
	/* The program keeps using the very pages a transfer would. */
	fill(buf, len, 2);
	EXPECT_TRUE(filled(buf, len, 2));
	EXPECT_EQ(pfn, pfn ? pfn_of(buf + 5 * PG) : 0);

	ASSERT_EQ(0, rmsg_dereg(self->ep, h));
	EXPECT_EQ(self->pin0, rmsg_vmpin_kb());
	EXPECT_TRUE(rmsg_pins_are(self->pins0, 0));
	EXPECT_TRUE(filled(buf, len, 2));
	EXPECT_EQ(-ENOENT, rmsg_dereg(self->ep, h));
	/* The memory is the program's again: it can go. */
	EXPECT_EQ(0, munmap(buf, len));
}

/* Registration needs no rings: any open /dev/rmsg will do. */
TEST(without_rings)
{
	unsigned char *buf = map_pages(3, PROT_READ | PROT_WRITE);
	long pin0 = rmsg_vmpin_kb();
	int epfd = rmsg_node_open();
	__u32 h = 0;

	ASSERT_LE(0, epfd);
	ASSERT_NE(NULL, buf);
	ASSERT_EQ(0, rmsg_fd_reg(epfd, buf + 1, 2 * PG, &h));
	EXPECT_EQ(pin0 + 12, rmsg_vmpin_kb());
	EXPECT_EQ(0, rmsg_fd_dereg(epfd, h));
	EXPECT_EQ(pin0, rmsg_vmpin_kb());
	close(epfd);
	munmap(buf, 3 * PG);
}

/* Any start and end: every page the span touches is pinned, no more. */
TEST_F(region, unaligned_spans)
{
	static const struct { size_t off, len; } cases[] = {
		{ 0, 1 }, { 1, 1 }, { 4095, 1 }, { 4095, 2 }, { 0, 4096 },
		{ 1, 4095 }, { 1, 4096 }, { 0, 4097 }, { 100, 8192 },
		{ 4095, 8194 }, { 2048, 3 * 4096 }, { 7, 5 * 4096 - 14 },
	};
	unsigned char *buf = map_pages(8, PROT_READ | PROT_WRITE);
	unsigned int i;
	__u32 h;

	ASSERT_NE(NULL, buf);
	fill(buf, 8 * PG, 3);
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		unsigned char *p = buf + cases[i].off;
		long pages = span_pages((uintptr_t)p, cases[i].len);

		ASSERT_EQ(0, rmsg_reg(self->ep, p, cases[i].len, &h))
			TH_LOG("case %u", i);
		EXPECT_EQ(self->pin0 + 4 * pages, rmsg_vmpin_kb())
			TH_LOG("case %u: off %zu len %zu", i, cases[i].off,
			       cases[i].len);
		EXPECT_TRUE(rmsg_pins_are(self->pins0, pages)) TH_LOG("case %u", i);
		ASSERT_EQ(0, rmsg_dereg(self->ep, h));
		EXPECT_EQ(self->pin0, rmsg_vmpin_kb());
	}
	EXPECT_TRUE(filled(buf, 8 * PG, 3));
	munmap(buf, 8 * PG);
}

/* The same memory twice is two regions, pinned and charged twice. */
TEST_F(region, same_memory_twice)
{
	unsigned char *buf = map_pages(2, PROT_READ | PROT_WRITE);
	__u32 a, b;

	ASSERT_NE(NULL, buf);
	ASSERT_EQ(0, rmsg_reg(self->ep, buf, 2 * PG, &a));
	ASSERT_EQ(0, rmsg_reg(self->ep, buf, 2 * PG, &b));
	EXPECT_NE(a, b);
	EXPECT_EQ(self->pin0 + 16, rmsg_vmpin_kb());
	EXPECT_EQ(0, rmsg_dereg(self->ep, a));
	EXPECT_EQ(self->pin0 + 8, rmsg_vmpin_kb());
	EXPECT_EQ(0, rmsg_dereg(self->ep, b));
	EXPECT_EQ(self->pin0, rmsg_vmpin_kb());
	munmap(buf, 2 * PG);
}

/* A freed handle goes to the next region; it then names that one. */
TEST_F(region, handle_reuse)
{
	unsigned char *buf = map_pages(8, PROT_READ | PROT_WRITE);
	__u32 h1, h2, h3;

	ASSERT_NE(NULL, buf);
	ASSERT_EQ(0, rmsg_reg(self->ep, buf, PG, &h1));
	ASSERT_EQ(0, rmsg_reg(self->ep, buf + PG, 2 * PG, &h2));
	EXPECT_NE(0, h1);
	EXPECT_NE(0, h2);
	EXPECT_NE(h1, h2);
	EXPECT_EQ(self->pin0 + 12, rmsg_vmpin_kb());
	ASSERT_EQ(0, rmsg_dereg(self->ep, h1));
	EXPECT_EQ(self->pin0 + 8, rmsg_vmpin_kb());

	ASSERT_EQ(0, rmsg_reg(self->ep, buf + 3 * PG, 4 * PG, &h3));
	EXPECT_EQ(h1, h3);
	EXPECT_EQ(self->pin0 + 24, rmsg_vmpin_kb());
	/* h2 is untouched by all that; h3 is the 4-page region. */
	ASSERT_EQ(0, rmsg_dereg(self->ep, h2));
	EXPECT_EQ(self->pin0 + 16, rmsg_vmpin_kb());
	ASSERT_EQ(0, rmsg_dereg(self->ep, h3));
	EXPECT_EQ(self->pin0, rmsg_vmpin_kb());
	EXPECT_EQ(-ENOENT, rmsg_dereg(self->ep, h1));
	munmap(buf, 8 * PG);
}

TEST_F(region, unknown_handles)
{
	unsigned char *buf = map_pages(1, PROT_READ | PROT_WRITE);
	__u32 h;

	ASSERT_NE(NULL, buf);
	EXPECT_EQ(-ENOENT, rmsg_dereg(self->ep, 0));
	EXPECT_EQ(-ENOENT, rmsg_dereg(self->ep, 1));
	EXPECT_EQ(-ENOENT, rmsg_dereg(self->ep, 0xffffffffU));
	ASSERT_EQ(0, rmsg_reg(self->ep, buf, PG, &h));
	EXPECT_EQ(-ENOENT, rmsg_dereg(self->ep, h + 1));
	EXPECT_EQ(-ENOENT, rmsg_dereg(self->ep, 0));
	EXPECT_EQ(-ENOENT, rmsg_dereg(self->ep, h ^ 0x80000000U));
	EXPECT_EQ(self->pin0 + 4, rmsg_vmpin_kb());
	EXPECT_EQ(0, rmsg_dereg(self->ep, h));
	EXPECT_EQ(-ENOENT, rmsg_dereg(self->ep, h));
	munmap(buf, PG);
}

/* Regions are per endpoint: another endpoint does not know the handle. */
TEST_F(region, handles_are_per_endpoint)
{
	unsigned char *buf = map_pages(1, PROT_READ | PROT_WRITE);
	int other = rmsg_node_open();
	__u32 h;

	ASSERT_LE(0, other);
	ASSERT_NE(NULL, buf);
	ASSERT_EQ(0, rmsg_reg(self->ep, buf, PG, &h));
	EXPECT_EQ(-ENOENT, rmsg_fd_dereg(other, h));
	close(other);
	EXPECT_EQ(self->pin0 + 4, rmsg_vmpin_kb());
	EXPECT_EQ(0, rmsg_dereg(self->ep, h));
	munmap(buf, PG);
}

TEST_F(region, bad_fields)
{
	unsigned char *buf = map_pages(2, PROT_READ | PROT_WRITE);
	__u64 a = (uintptr_t)buf;
	int fd = rmsg_ep_fd(self->ep);
	__u32 h;

	ASSERT_NE(NULL, buf);
	EXPECT_EQ(-EINVAL, rmsg_raw_reg(fd, a, PG, 1, 0, 0, &h));
	EXPECT_EQ(-EINVAL, rmsg_raw_reg(fd, a, PG, 1U << 31, 0, 0, &h));
	EXPECT_EQ(-EINVAL, rmsg_raw_reg(fd, a, PG, 0, 1, 0, &h));
	EXPECT_EQ(-EINVAL, rmsg_raw_reg(fd, a, PG, 0, 0, 1ULL << 63, &h));
	EXPECT_EQ(-EINVAL, rmsg_raw_reg(fd, a, 0, 0, 0, 0, &h));
	EXPECT_EQ(-EINVAL,
		  rmsg_raw_reg(fd, a, RMSG_REG_MAX_LEN + 1, 0, 0, 0, &h));
	EXPECT_EQ(-EINVAL, rmsg_raw_reg(fd, a, ~0ULL, 0, 0, 0, &h));
	/* addr + len wraps around. */
	EXPECT_EQ(-EINVAL, rmsg_raw_reg(fd, ~0ULL - 10, 100, 0, 0, 0, &h));
	EXPECT_EQ(-EINVAL, rmsg_raw_reg(fd, ~0ULL, 1ULL << 20, 0, 0, 0, &h));
	EXPECT_EQ(-EINVAL, rmsg_reg(self->ep, buf, 0, &h));
	EXPECT_EQ(-1, ioctl(fd, RMSG_IOC_REG, NULL));
	EXPECT_EQ(EFAULT, errno);
	EXPECT_EQ(self->pin0, rmsg_vmpin_kb());

	/* Nothing was registered: the same fields, valid, still work. */
	ASSERT_EQ(0, rmsg_raw_reg(fd, a, PG, 0, 0, 0, &h));
	EXPECT_EQ(-EINVAL, rmsg_raw_dereg(fd, h, 1, 0));
	EXPECT_EQ(-EINVAL, rmsg_raw_dereg(fd, h, 0, 1));
	EXPECT_EQ(-EINVAL, rmsg_raw_dereg(fd, 0, 1, 0));
	EXPECT_EQ(-1, ioctl(fd, RMSG_IOC_DEREG, NULL));
	EXPECT_EQ(EFAULT, errno);
	EXPECT_EQ(self->pin0 + 4, rmsg_vmpin_kb());
	EXPECT_EQ(0, rmsg_raw_dereg(fd, h, 0, 0));
	EXPECT_EQ(self->pin0, rmsg_vmpin_kb());
	munmap(buf, 2 * PG);
}

/* RMSG_REG_MAX_LEN itself passes the checks (then fails to pin). */
TEST_F(region, max_len_is_valid)
{
	void *res = mmap(NULL, RMSG_REG_MAX_LEN, PROT_NONE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	__u32 h;

	if (res == MAP_FAILED)
		SKIP(return, "no room for a %llu-byte reservation",
		     (unsigned long long)RMSG_REG_MAX_LEN);
	EXPECT_EQ(-EFAULT, rmsg_reg(self->ep, res, RMSG_REG_MAX_LEN, &h));
	EXPECT_EQ(self->pin0, rmsg_vmpin_kb());
	munmap(res, RMSG_REG_MAX_LEN);
}

TEST_F(region, efault)
{
	unsigned char *buf = map_pages(4, PROT_READ | PROT_WRITE);
	unsigned char *ro = map_pages(2, PROT_READ);
	unsigned char *none = map_pages(2, PROT_NONE);
	unsigned char *gone = map_pages(2, PROT_READ | PROT_WRITE);
	__u32 h;

	ASSERT_NE(NULL, buf);
	ASSERT_NE(NULL, ro);
	ASSERT_NE(NULL, none);
	ASSERT_NE(NULL, gone);
	gone[0] = 1;
	ASSERT_EQ(0, munmap(gone, 2 * PG));

	EXPECT_EQ(-EFAULT, rmsg_reg(self->ep, (void *)PG, PG, &h));
	EXPECT_EQ(-EFAULT, rmsg_raw_reg(rmsg_ep_fd(self->ep),
					0xffff888000000000ULL, PG, 0, 0, 0,
					&h));
	EXPECT_EQ(-EFAULT, rmsg_reg(self->ep, ro, PG, &h));
	EXPECT_EQ(-EFAULT, rmsg_reg(self->ep, ro + 10, 1, &h));
	EXPECT_EQ(-EFAULT, rmsg_reg(self->ep, none, 2 * PG, &h));
	EXPECT_EQ(-EFAULT, rmsg_reg(self->ep, gone, 2 * PG, &h));
	EXPECT_EQ(-EFAULT, rmsg_reg(self->ep, gone + PG - 1, 2, &h));
	EXPECT_EQ(self->pin0, rmsg_vmpin_kb());
	EXPECT_TRUE(rmsg_pins_are(self->pins0, 0));

	/* Writable at the start, not at the end: nothing stays pinned. */
	ASSERT_EQ(0, mprotect(buf + 3 * PG, PG, PROT_READ));
	EXPECT_EQ(-EFAULT, rmsg_reg(self->ep, buf, 4 * PG, &h));
	EXPECT_EQ(-EFAULT, rmsg_reg(self->ep, buf + 3 * PG - 1, 2, &h));
	EXPECT_EQ(self->pin0, rmsg_vmpin_kb());
	EXPECT_TRUE(rmsg_pins_are(self->pins0, 0));
	/* A hole in the middle. */
	ASSERT_EQ(0, munmap(buf + PG, PG));
	EXPECT_EQ(-EFAULT, rmsg_reg(self->ep, buf, 3 * PG, &h));
	EXPECT_EQ(self->pin0, rmsg_vmpin_kb());
	EXPECT_TRUE(rmsg_pins_are(self->pins0, 0));
	/* What is left writable still registers. */
	ASSERT_EQ(0, rmsg_reg(self->ep, buf + 2 * PG, PG, &h));
	EXPECT_EQ(self->pin0 + 4, rmsg_vmpin_kb());
	EXPECT_EQ(0, rmsg_dereg(self->ep, h));
	EXPECT_EQ(self->pin0, rmsg_vmpin_kb());
	munmap(buf, 4 * PG);
	munmap(ro, 2 * PG);
	munmap(none, 2 * PG);
}

/* The bad page only in the second batch of pins: the first goes back. */
TEST_F(region, efault_after_many_pages)
{
	size_t n = 1500;
	unsigned char *buf = map_pages(n, PROT_READ | PROT_WRITE);
	__u32 h;

	ASSERT_NE(NULL, buf);
	ASSERT_EQ(0, mprotect(buf + (n - 1) * PG, PG, PROT_READ));
	EXPECT_EQ(-EFAULT, rmsg_reg(self->ep, buf + 1, n * PG - 1, &h));
	EXPECT_EQ(self->pin0, rmsg_vmpin_kb());
	EXPECT_TRUE(rmsg_pins_are(self->pins0, 0));
	ASSERT_EQ(0, rmsg_reg(self->ep, buf + 1, (n - 1) * PG - 1, &h));
	EXPECT_EQ(self->pin0 + 4 * (long)(n - 1), rmsg_vmpin_kb());
	EXPECT_TRUE(rmsg_pins_are(self->pins0, n - 1));
	EXPECT_EQ(0, rmsg_dereg(self->ep, h));
	EXPECT_EQ(self->pin0, rmsg_vmpin_kb());
	EXPECT_TRUE(rmsg_pins_are(self->pins0, 0));
	munmap(buf, n * PG);
}

/*
 * As nobody (no CAP_IPC_LOCK) with a 64 KiB RLIMIT_MEMLOCK, in a child
 * that opened /dev/rmsg as root. Returns 0, or the step that failed.
 */
static int memlock_child(int fd)
{
	struct rlimit rl = { .rlim_cur = 16 * PG, .rlim_max = 16 * PG };
	int epfd = fd;
	unsigned char *buf = map_pages(40, PROT_READ | PROT_WRITE);
	long pin0;
	__u32 a = 0, b = 0, c = 0;

	if (!buf || setrlimit(RLIMIT_MEMLOCK, &rl))
		return 1;
	if (setgid(NOBODY) || setuid(NOBODY) || getuid() != NOBODY)
		return 2;
	pin0 = rmsg_vmpin_kb();
	if (pin0 < 0)
		return 3;
	/* 8 of 16 pages, then 12 more is over: nothing of those stays. */
	if (rmsg_fd_reg(epfd, buf, 8 * PG, &a))
		return 4;
	if (rmsg_fd_reg(epfd, buf + 8 * PG, 12 * PG, &b) != -ENOMEM)
		return 5;
	if (rmsg_vmpin_kb() != pin0 + 32)
		return 6;
	/* Up to the limit exactly, then one byte more is one page more. */
	if (rmsg_fd_reg(epfd, buf + 8 * PG, 8 * PG, &b))
		return 7;
	if (rmsg_fd_reg(epfd, buf + 20 * PG, 1, &c) != -ENOMEM)
		return 8;
	if (rmsg_vmpin_kb() != pin0 + 64)
		return 9;
	if (rmsg_fd_dereg(epfd, a) || rmsg_fd_dereg(epfd, b))
		return 10;
	if (rmsg_vmpin_kb() != pin0)
		return 11;
	/* 16 pages' worth of bytes, unaligned, touch 17 pages. */
	if (rmsg_fd_reg(epfd, buf + 1, 16 * PG, &a) != -ENOMEM)
		return 12;
	if (rmsg_fd_reg(epfd, buf + 1, 16 * PG - 1, &a))
		return 13;
	if (rmsg_fd_dereg(epfd, a))
		return 14;
	/* Far over the limit, and failing after the charge: no leak. */
	if (rmsg_fd_reg(epfd, buf, 40 * PG, &a) != -ENOMEM)
		return 15;
	if (rmsg_vmpin_kb() != pin0)
		return 16;
	return 0;
}

TEST(memlock_unprivileged)
{
	long pin0 = rmsg_vmpin_kb(), pins0 = rmsg_pins();
	int fd = rmsg_node_open();
	pid_t pid;

	ASSERT_LE(0, fd);
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid)
		_exit(memlock_child(fd));
	EXPECT_EQ(0, rmsg_child_status(pid)) TH_LOG("the child failed a step");
	EXPECT_EQ(pin0, rmsg_vmpin_kb());
	EXPECT_TRUE(rmsg_pins_are(pins0, 0));
	close(fd);
}

/* CAP_IPC_LOCK goes past RLIMIT_MEMLOCK, as it does for user MRs. */
TEST_F(region, memlock_capable)
{
	struct rlimit old, rl = { .rlim_cur = 4 * PG, .rlim_max = 4 * PG };
	unsigned char *buf = map_pages(32, PROT_READ | PROT_WRITE);
	__u32 h;

	ASSERT_NE(NULL, buf);
	ASSERT_EQ(0, getrlimit(RLIMIT_MEMLOCK, &old));
	ASSERT_EQ(0, setrlimit(RLIMIT_MEMLOCK, &rl));
	EXPECT_EQ(0, rmsg_reg(self->ep, buf, 32 * PG, &h));
	EXPECT_EQ(self->pin0 + 128, rmsg_vmpin_kb());
	EXPECT_EQ(0, rmsg_dereg(self->ep, h));
	EXPECT_EQ(self->pin0, rmsg_vmpin_kb());
	setrlimit(RLIMIT_MEMLOCK, &old);
	munmap(buf, 32 * PG);
}

/* Closing the endpoint without DEREG unpins everything. */
TEST(close_unpins)
{
	unsigned char *buf = map_pages(8, PROT_READ | PROT_WRITE);
	long pin0 = rmsg_vmpin_kb(), pins0 = rmsg_pins();
	struct rmsg_ep *ep = NULL;
	__u32 h;
	int fd;

	ASSERT_NE(NULL, buf);
	fd = rmsg_node_open();
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, rmsg_fd_reg(fd, buf, 3 * PG, &h));
	ASSERT_EQ(0, rmsg_fd_reg(fd, buf + 100, 5000, &h));
	ASSERT_EQ(0, rmsg_fd_reg(fd, buf, 8 * PG, &h));
	EXPECT_EQ(pin0 + 4 * (3 + 2 + 8), rmsg_vmpin_kb());
	EXPECT_TRUE(rmsg_pins_are(pins0, 3 + 2 + 8));
	close(fd);
	EXPECT_EQ(pin0, rmsg_vmpin_kb());
	EXPECT_TRUE(rmsg_pins_are(pins0, 0));

	/* And with rings, mapped and then unmapped by rmsg_ep_close(). */
	ASSERT_EQ(0, rmsg_ep_open(&ep, 8, 0));
	ASSERT_EQ(0, rmsg_reg(ep, buf, 8 * PG, &h));
	EXPECT_EQ(pin0 + 32, rmsg_vmpin_kb());
	rmsg_ep_drop(&ep);
	EXPECT_EQ(pin0, rmsg_vmpin_kb());
	EXPECT_TRUE(rmsg_pins_are(pins0, 0));
	munmap(buf, 8 * PG);
}

TEST(many_regions_then_close)
{
	enum { N = 1000 };
	unsigned char *buf = map_pages(N, PROT_READ | PROT_WRITE);
	static unsigned char seen[N + 1];
	long pin0 = rmsg_vmpin_kb(), pins0 = rmsg_pins();
	int i, fd, dups = 0, out_of_range = 0;
	__u32 h[N];

	ASSERT_NE(NULL, buf);
	fd = rmsg_node_open();
	ASSERT_LE(0, fd);
	for (i = 0; i < N; i++) {
		ASSERT_EQ(0, rmsg_fd_reg(fd, buf + i * PG + i % 7, PG - i % 7, &h[i]))
			TH_LOG("region %d", i);
		if (!h[i] || h[i] > N)
			out_of_range++;
		else if (seen[h[i]]++)
			dups++;
	}
	EXPECT_EQ(0, dups);
	EXPECT_EQ(0, out_of_range);
	EXPECT_EQ(pin0 + 4 * N, rmsg_vmpin_kb());
	/* Every other one by DEREG, the rest by close. */
	for (i = 0; i < N; i += 2)
		EXPECT_EQ(0, rmsg_fd_dereg(fd, h[i]));
	EXPECT_EQ(pin0 + 4 * N / 2, rmsg_vmpin_kb());
	EXPECT_TRUE(rmsg_pins_are(pins0, N / 2));
	close(fd);
	EXPECT_EQ(pin0, rmsg_vmpin_kb());
	EXPECT_TRUE(rmsg_pins_are(pins0, 0));
	munmap(buf, N * PG);
}

/*
 * A forked child shares the endpoint: its close of its copy of the file
 * frees nothing. The parent's pinned pages stay its own (the child gets
 * copies at fork), so what the parent writes lands in the pages a
 * transfer would use, and the child's writes never reach them.
 */
TEST_F(region, fork_child_close_keeps_regions)
{
	size_t len = 16 * PG;
	unsigned char *buf = map_pages(16, PROT_READ | PROT_WRITE);
	uint64_t pfn;
	pid_t pid;
	__u32 h;

	ASSERT_NE(NULL, buf);
	fill(buf, len, 5);
	ASSERT_EQ(0, rmsg_reg(self->ep, buf, len, &h));
	pfn = pfn_of(buf);
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		int bad = !filled(buf, len, 5);

		fill(buf, len, 6);
		rmsg_ep_drop(&self->ep);
		_exit(bad);
	}
	EXPECT_EQ(0, rmsg_child_status(pid));
	EXPECT_EQ(self->pin0 + 64, rmsg_vmpin_kb());
	EXPECT_TRUE(rmsg_pins_are(self->pins0, 16));
	EXPECT_TRUE(filled(buf, len, 5));
	fill(buf, len, 7);
	EXPECT_TRUE(filled(buf, len, 7));
	/* Page frame numbers need root; without them, nothing to compare. */
	EXPECT_EQ(pfn, pfn ? pfn_of(buf) : 0);
	EXPECT_EQ(0, rmsg_dereg(self->ep, h));
	EXPECT_EQ(self->pin0, rmsg_vmpin_kb());
	munmap(buf, len);
}

/*
 * A region of a child that has exited, charged to the child's mm: the
 * parent deregisters it (or closes) and nothing is charged to the parent.
 */
TEST_F(region, fork_child_region_outlives_child)
{
	unsigned char *buf = map_pages(4, PROT_READ | PROT_WRITE);
	int pipefd[2];
	__u32 h[2] = { 0, 0 };
	pid_t pid;

	ASSERT_NE(NULL, buf);
	ASSERT_EQ(0, pipe(pipefd));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		int bad = rmsg_reg(self->ep, buf, 4 * PG, &h[0]) ||
			  rmsg_reg(self->ep, buf + 1, PG, &h[1]) ||
			  rmsg_vmpin_kb() != 16 + 8;

		if (write(pipefd[1], h, sizeof(h)) != sizeof(h))
			bad = 1;
		_exit(bad);
	}
	close(pipefd[1]);
	EXPECT_EQ(0, rmsg_child_status(pid));
	ASSERT_EQ(sizeof(h), read(pipefd[0], h, sizeof(h)));
	close(pipefd[0]);
	EXPECT_EQ(self->pin0, rmsg_vmpin_kb());
	EXPECT_TRUE(rmsg_pins_are(self->pins0, 4 + 2));
	EXPECT_EQ(0, rmsg_dereg(self->ep, h[0]));
	EXPECT_EQ(self->pin0, rmsg_vmpin_kb());
	EXPECT_TRUE(rmsg_pins_are(self->pins0, 2));
	/* h[1] goes with the endpoint, in the fixture's teardown. */
	munmap(buf, 4 * PG);
}

int main(int argc, char **argv)
{
	return rmsg_test_main(argc, argv);
}
