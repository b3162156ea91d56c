// SPDX-License-Identifier: GPL-2.0
/*
 * Loading and unloading rmsg.ko: repeatedly, with devices present or not,
 * and while /dev/rmsg is held open.
 *
 * Every test leaves the module loaded and rxe0 present, so the order of
 * tests does not matter.
 */
#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include "kselftest_harness.h"
#include "rmsg_test.h"

static bool rmsg_loaded(void)
{
	struct stat st;

	return stat("/sys/module/rmsg", &st) == 0;
}

static int rmsg_load(const char *ko)
{
	int fd = open(ko, O_RDONLY | O_CLOEXEC);
	int ret;

	if (fd < 0)
		return -errno;
	ret = syscall(SYS_finit_module, fd, "", 0);
	ret = ret ? -errno : 0;
	close(fd);
	return ret;
}

static int rmsg_unload(void)
{
	return syscall(SYS_delete_module, "rmsg", O_NONBLOCK) ? -errno : 0;
}

/* /dev/rmsg appears asynchronously (devtmpfs); wait for it. */
static int rmsg_open_when_ready(void)
{
	long deadline = rmsg_now_ms() + 5000;
	int fd;

	do {
		fd = open(RMSG_DEVICE_PATH, O_RDWR | O_CLOEXEC);
		if (fd >= 0 || errno != ENOENT)
			return fd;
		usleep(10000);
	} while (rmsg_now_ms() < deadline);
	return -1;
}

FIXTURE(module) {
	const char *ko;
	const char *netdev;
};

FIXTURE_SETUP(module)
{
	self->ko = getenv("RMSG_KO");
	self->netdev = getenv("RMSG_NETDEV");
	if (!self->ko || !self->netdev)
		SKIP(rmsg_setup_skipped(_metadata); return,
		     "RMSG_KO or RMSG_NETDEV not set: not run by rmsg-vm");
	if (!rmsg_loaded())
		ASSERT_EQ(0, rmsg_load(self->ko));
}

FIXTURE_TEARDOWN(module)
{
	if (!self->ko || !self->netdev)
		return;
	if (rmsg_sh("rdma link show rxe0/1 >/dev/null 2>&1"))
		rmsg_sh("rdma link add rxe0 type rxe netdev %s", self->netdev);
	if (!rmsg_loaded())
		rmsg_load(self->ko);
}

TEST_F_TIMEOUT(module, load_unload_repeated, 180)
{
	struct rmsg_version ver;
	int i, fd;

	for (i = 0; i < 20; i++) {
		ASSERT_EQ(0, rmsg_unload()) TH_LOG("round %d", i);
		ASSERT_FALSE(rmsg_loaded());
		ASSERT_EQ(0, rmsg_load(self->ko)) TH_LOG("round %d", i);
		fd = rmsg_open_when_ready();
		ASSERT_LE(0, fd) TH_LOG("round %d: %s", i, strerror(errno));
		EXPECT_EQ(0, rmsg_node_version(fd, &ver));
		/* The device that was there before the load is found. */
		EXPECT_EQ(1, rmsg_find_dev(fd, "rxe0", NULL, NULL));
		close(fd);
	}
}

/* Loading twice is refused; the loaded module keeps working. */
TEST_F(module, double_load_refused)
{
	int fd;

	EXPECT_EQ(-EEXIST, rmsg_load(self->ko));
	fd = rmsg_open_when_ready();
	ASSERT_LE(0, fd);
	EXPECT_EQ(1, rmsg_find_dev(fd, "rxe0", NULL, NULL));
	close(fd);
}

/* An open /dev/rmsg pins the module: unload is refused, nothing breaks. */
TEST_F(module, unload_while_open_refused)
{
	struct rmsg_version ver;
	int fd, ret;

	fd = rmsg_open_when_ready();
	ASSERT_LE(0, fd);
	ret = rmsg_unload();
	EXPECT_TRUE(ret == -EWOULDBLOCK || ret == -EBUSY)
		TH_LOG("delete_module: %s", strerror(-ret));
	EXPECT_TRUE(rmsg_loaded());
	EXPECT_EQ(0, rmsg_node_version(fd, &ver));
	EXPECT_EQ(1, rmsg_find_dev(fd, "rxe0", NULL, NULL));
	EXPECT_NE(0, rmsg_sh("rmmod rmsg 2>/dev/null"));
	close(fd);
	EXPECT_EQ(0, rmsg_unload());
	EXPECT_FALSE(rmsg_loaded());
}

/* Unloading while a device exists releases it; a load finds it again. */
TEST_F_TIMEOUT(module, unload_with_device_then_remove_device, 60)
{
	int fd;

	ASSERT_EQ(0, rmsg_unload());
	/* The device goes and comes back while rmsg is not loaded. */
	ASSERT_EQ(0, rmsg_sh("rdma link delete rxe0"));
	ASSERT_EQ(0, rmsg_load(self->ko));
	fd = rmsg_open_when_ready();
	ASSERT_LE(0, fd);
	EXPECT_EQ(0, rmsg_find_dev(fd, "rxe0", NULL, NULL));
	ASSERT_EQ(0, rmsg_sh("rdma link add rxe0 type rxe netdev %s",
			     self->netdev));
	EXPECT_TRUE(rmsg_wait_dev(fd, "rxe0", true, RMSG_PORT_ACTIVE, 10000));
	close(fd);
}

/* Unload with no device at all, then load with one. */
TEST_F_TIMEOUT(module, unload_without_devices, 60)
{
	int fd;

	ASSERT_EQ(0, rmsg_sh("rdma link delete rxe0"));
	fd = rmsg_open_when_ready();
	ASSERT_LE(0, fd);
	EXPECT_TRUE(rmsg_wait_dev(fd, "rxe0", false, -1, 5000));
	close(fd);
	ASSERT_EQ(0, rmsg_unload());
	ASSERT_EQ(0, rmsg_sh("rdma link add rxe0 type rxe netdev %s",
			     self->netdev));
	ASSERT_EQ(0, rmsg_load(self->ko));
	fd = rmsg_open_when_ready();
	ASSERT_LE(0, fd);
	EXPECT_TRUE(rmsg_wait_dev(fd, "rxe0", true, RMSG_PORT_ACTIVE, 10000));
	close(fd);
}

int main(int argc, char **argv)
{
	return rmsg_test_main(argc, argv);
}
