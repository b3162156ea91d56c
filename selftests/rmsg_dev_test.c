// SPDX-License-Identifier: GPL-2.0
/*
 * /dev/rmsg, its control ioctls, and the RDMA devices rmsg tracks.
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/ioctl.h>
#include <sys/mman.h>

#include "kselftest_harness.h"
#include "rmsg_test.h"

FIXTURE(dev) {
	int fd;
	const char *netdev;
};

FIXTURE_SETUP(dev)
{
	self->netdev = getenv("RMSG_NETDEV");
	self->fd = open(RMSG_DEVICE_PATH, O_RDWR);
	ASSERT_LE(0, self->fd) TH_LOG("open %s: %s", RMSG_DEVICE_PATH,
				      strerror(errno));
}

FIXTURE_TEARDOWN(dev)
{
	/* Leave rxe0 behind for the tests that follow, whatever happened. */
	if (self->netdev && rmsg_find_dev(self->fd, "rxe0", NULL, NULL) == 0)
		rmsg_sh("rdma link add rxe0 type rxe netdev %s", self->netdev);
	close(self->fd);
}

/* Opening and closing many times neither fails nor leaks. */
TEST(open_close_many)
{
	int i, fd, fds[64];

	for (i = 0; i < 2000; i++) {
		fd = open(RMSG_DEVICE_PATH, O_RDWR);
		ASSERT_LE(0, fd);
		ASSERT_EQ(0, close(fd));
	}
	for (i = 0; i < 64; i++) {
		fds[i] = open(RMSG_DEVICE_PATH, O_RDWR | O_CLOEXEC);
		ASSERT_LE(0, fds[i]);
	}
	for (i = 0; i < 64; i++)
		ASSERT_EQ(0, close(fds[i]));
}

TEST_F(dev, version)
{
	struct rmsg_version ver;

	memset(&ver, 0xff, sizeof(ver));
	ver.flags = 0;
	memset(ver.resv, 0, sizeof(ver.resv));
	ASSERT_EQ(0, ioctl(self->fd, RMSG_IOC_VERSION, &ver));
	EXPECT_EQ(RMSG_ABI_VERSION, ver.abi_version);
	EXPECT_TRUE(ver.features & RMSG_FEAT_DEV_LIST);
	/* The library reports the same and agrees on the ABI. */
	ASSERT_EQ(0, rmsg_node_version(self->fd, &ver));
	EXPECT_EQ(RMSG_ABI_VERSION, ver.abi_version);
}

/* Reserved and flag fields must be zero so that they can be used later. */
TEST_F(dev, version_rejects_nonzero_reserved)
{
	struct rmsg_version ver;
	unsigned int i;

	memset(&ver, 0, sizeof(ver));
	ver.flags = 1;
	EXPECT_EQ(-1, ioctl(self->fd, RMSG_IOC_VERSION, &ver));
	EXPECT_EQ(EINVAL, errno);
	for (i = 0; i < 2; i++) {
		memset(&ver, 0, sizeof(ver));
		ver.resv[i] = 1ULL << 63;
		EXPECT_EQ(-1, ioctl(self->fd, RMSG_IOC_VERSION, &ver));
		EXPECT_EQ(EINVAL, errno);
	}
}

TEST_F(dev, bad_pointers_fault)
{
	void *ro = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS,
			-1, 0);

	ASSERT_NE(MAP_FAILED, ro);
	EXPECT_EQ(-1, ioctl(self->fd, RMSG_IOC_VERSION, NULL));
	EXPECT_EQ(EFAULT, errno);
	EXPECT_EQ(-1, ioctl(self->fd, RMSG_IOC_VERSION, (void *)16));
	EXPECT_EQ(EFAULT, errno);
	/* Readable but not writable: the kernel reads, then cannot answer. */
	EXPECT_EQ(-1, ioctl(self->fd, RMSG_IOC_VERSION, ro));
	EXPECT_EQ(EFAULT, errno);
	EXPECT_EQ(-1, ioctl(self->fd, RMSG_IOC_DEV_LIST, ro));
	EXPECT_EQ(EFAULT, errno);
	/* A kernel address is never the program's memory. */
	EXPECT_EQ(-1, ioctl(self->fd, RMSG_IOC_DEV_LIST,
			    (void *)0xffffffff81000000UL));
	EXPECT_EQ(EFAULT, errno);
	munmap(ro, 4096);
}

TEST_F(dev, unknown_ioctls)
{
	char buf[256] = { 0 };
	const unsigned long cmds[] = {
		_IOWR(RMSG_IOC_MAGIC, 0x7f, struct rmsg_version),
		_IO(RMSG_IOC_MAGIC, 0x00),
		/* The right number with the wrong size or direction. */
		_IOWR(RMSG_IOC_MAGIC, 0x00, char[8]),
		_IOR(RMSG_IOC_MAGIC, 0x00, struct rmsg_version),
		_IOWR(RMSG_IOC_MAGIC, 0x01, struct rmsg_version),
		/* Another subsystem's magic. */
		_IOWR('T', 0x00, struct rmsg_version),
		0,
	};
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(cmds); i++) {
		errno = 0;
		EXPECT_EQ(-1, ioctl(self->fd, cmds[i], buf))
			TH_LOG("cmd 0x%lx", cmds[i]);
		EXPECT_EQ(ENOTTY, errno) TH_LOG("cmd 0x%lx", cmds[i]);
	}
}

/*
 * There is no read, write or seek, and nothing to mmap before the rings are
 * set up (rmsg_ring_test covers mmap after RMSG_IOC_EP_SETUP).
 */
TEST_F(dev, no_read_write_seek)
{
	char c = 0;

	EXPECT_EQ(-1, read(self->fd, &c, 1));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, write(self->fd, &c, 1));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, lseek(self->fd, 0, SEEK_SET));
	EXPECT_EQ(ESPIPE, errno);
	EXPECT_EQ(MAP_FAILED, mmap(NULL, 4096, PROT_READ, MAP_SHARED,
				   self->fd, 0));
	EXPECT_EQ(EINVAL, errno);
}

TEST_F(dev, lists_rxe)
{
	struct rmsg_dev_info info;

	if (!self->netdev)
		SKIP(return, "RMSG_NETDEV not set: not run by rmsg-vm");
	ASSERT_TRUE(rmsg_wait_dev(self->fd, "rxe0", true, RMSG_PORT_ACTIVE,
				  5000));
	ASSERT_EQ(1, rmsg_find_dev(self->fd, "rxe0", &info, NULL));
	EXPECT_EQ(1, info.num_ports);
	EXPECT_EQ(1, info.port[0].port_num);
	EXPECT_EQ(RMSG_PORT_ACTIVE, info.port[0].state);
	EXPECT_EQ(RMSG_PROTO_ROCE, info.port[0].protocol);
	EXPECT_STREQ(self->netdev, info.port[0].netdev);
	EXPECT_LT(0, info.port[0].active_mtu);
	EXPECT_LT(0, info.port[0].gid_tbl_len);
	EXPECT_NE(0, info.node_guid);
	EXPECT_EQ(rmsg_rxe_expect_ordered() ? RMSG_DEV_F_ORDERED : 0, info.flags)
		TH_LOG("rxe copies in order where memcpy() does, no fatal event");
	EXPECT_TRUE(rmsgctl_shows("rxe0"));
}

/* The kernel writes no more entries than the caller has room for. */
TEST_F(dev, list_respects_capacity)
{
	struct rmsg_dev_info devs[2];
	struct rmsg_dev_list req;
	unsigned char guard[sizeof(devs[1])];

	memset(&req, 0, sizeof(req));
	ASSERT_EQ(0, ioctl(self->fd, RMSG_IOC_DEV_LIST, &req));
	ASSERT_LE(1, req.count);

	memset(devs, 0xa5, sizeof(devs));
	memset(guard, 0xa5, sizeof(guard));
	memset(&req, 0, sizeof(req));
	req.count = 1;
	req.devs = (uintptr_t)devs;
	ASSERT_EQ(0, ioctl(self->fd, RMSG_IOC_DEV_LIST, &req));
	EXPECT_LE(1, req.count);
	EXPECT_EQ(1, req.filled);
	EXPECT_NE(0, devs[0].name[0]);
	EXPECT_EQ(0, memcmp(&devs[1], guard, sizeof(guard)));
}

TEST_F(dev, list_rejects_bad_arguments)
{
	struct rmsg_dev_info devs[1];
	struct rmsg_dev_list req;
	unsigned int i;
	int ret;

	memset(&req, 0, sizeof(req));
	req.flags = 1;
	EXPECT_EQ(-1, ioctl(self->fd, RMSG_IOC_DEV_LIST, &req));
	EXPECT_EQ(EINVAL, errno);

	/* filled is output only: garbage in it on input is ignored. */
	memset(&req, 0, sizeof(req));
	req.filled = 0xdead;
	EXPECT_EQ(0, ioctl(self->fd, RMSG_IOC_DEV_LIST, &req));
	EXPECT_EQ(0, req.filled);

	for (i = 0; i < 2; i++) {
		memset(&req, 0, sizeof(req));
		req.resv[i] = 1;
		EXPECT_EQ(-1, ioctl(self->fd, RMSG_IOC_DEV_LIST, &req));
		EXPECT_EQ(EINVAL, errno);
	}

	/* Room claimed but no array. */
	memset(&req, 0, sizeof(req));
	req.count = 4;
	EXPECT_EQ(-1, ioctl(self->fd, RMSG_IOC_DEV_LIST, &req));
	EXPECT_EQ(EFAULT, errno);

	/* An array that is not mapped. */
	memset(&req, 0, sizeof(req));
	req.count = 1;
	req.devs = 4096;
	EXPECT_EQ(-1, ioctl(self->fd, RMSG_IOC_DEV_LIST, &req));
	EXPECT_EQ(EFAULT, errno);

	/* An absurd count with a one-entry array: only the devices present
	 * are written, so this works while one device exists and faults
	 * (never overflows) beyond.
	 */
	memset(&req, 0, sizeof(req));
	req.count = UINT32_MAX;
	req.devs = (uintptr_t)devs;
	ret = ioctl(self->fd, RMSG_IOC_DEV_LIST, &req);
	EXPECT_TRUE(ret ? errno == EFAULT : req.filled == req.count);
}

TEST_F_TIMEOUT(dev, port_state_follows_link, 60)
{
	struct rmsg_dev_info before = { 0 }, after = { 0 };

	if (!self->netdev)
		SKIP(return, "RMSG_NETDEV not set: not run by rmsg-vm");
	ASSERT_TRUE(rmsg_wait_dev(self->fd, "rxe0", true, RMSG_PORT_ACTIVE,
				  5000));
	ASSERT_EQ(1, rmsg_find_dev(self->fd, "rxe0", &before, NULL));

	ASSERT_EQ(0, rmsg_sh("ip link set %s down", self->netdev));
	EXPECT_TRUE(rmsg_wait_dev(self->fd, "rxe0", true, RMSG_PORT_DOWN,
				  10000));
	ASSERT_EQ(0, rmsg_sh("ip link set %s up", self->netdev));
	ASSERT_TRUE(rmsg_wait_dev(self->fd, "rxe0", true, RMSG_PORT_ACTIVE,
				  10000));

	/* rmsg saw the port go down and come back: at least two events. */
	ASSERT_EQ(1, rmsg_find_dev(self->fd, "rxe0", &after, NULL));
	EXPECT_LE(before.port[0].events + 2, after.port[0].events);
}

/* rmsg follows a device removed and added back while it is loaded. */
TEST_F_TIMEOUT(dev, device_removed_and_added, 60)
{
	unsigned int gen0, gen1, gen2;

	if (!self->netdev)
		SKIP(return, "RMSG_NETDEV not set: not run by rmsg-vm");
	ASSERT_EQ(1, rmsg_find_dev(self->fd, "rxe0", NULL, &gen0));
	EXPECT_TRUE(rmsgctl_shows("rxe0"));

	ASSERT_EQ(0, rmsg_sh("rdma link delete rxe0"));
	EXPECT_TRUE(rmsg_wait_dev(self->fd, "rxe0", false, -1, 5000));
	EXPECT_FALSE(rmsgctl_shows("rxe0"));
	ASSERT_EQ(0, rmsg_find_dev(self->fd, "rxe0", NULL, &gen1));
	EXPECT_NE(gen0, gen1);

	ASSERT_EQ(0, rmsg_sh("rdma link add rxe0 type rxe netdev %s",
			     self->netdev));
	EXPECT_TRUE(rmsg_wait_dev(self->fd, "rxe0", true, RMSG_PORT_ACTIVE,
				  10000));
	EXPECT_TRUE(rmsgctl_shows("rxe0"));
	ASSERT_EQ(1, rmsg_find_dev(self->fd, "rxe0", NULL, &gen2));
	EXPECT_NE(gen1, gen2);
}

/* A second device is listed beside the first and goes away alone. */
TEST_F_TIMEOUT(dev, second_device, 60)
{
	struct rmsg_dev_info info;

	if (!self->netdev)
		SKIP(return, "RMSG_NETDEV not set: not run by rmsg-vm");
	if (rmsg_sh("ip link show vb >/dev/null 2>&1"))
		SKIP(return, "no second netdev (vb) in this topology");
	ASSERT_EQ(0, rmsg_sh("rdma link add rxe1 type rxe netdev vb"));
	EXPECT_TRUE(rmsg_wait_dev(self->fd, "rxe1", true, -1, 5000));
	ASSERT_EQ(1, rmsg_find_dev(self->fd, "rxe1", &info, NULL));
	EXPECT_STREQ("vb", info.port[0].netdev);
	EXPECT_EQ(1, rmsg_find_dev(self->fd, "rxe0", NULL, NULL));
	EXPECT_TRUE(rmsgctl_shows("rxe1"));

	ASSERT_EQ(0, rmsg_sh("rdma link delete rxe1"));
	EXPECT_TRUE(rmsg_wait_dev(self->fd, "rxe1", false, -1, 5000));
	EXPECT_EQ(1, rmsg_find_dev(self->fd, "rxe0", NULL, NULL));
}

struct churn {
	int fd;
	int stop;	/* set once by the test, read by the listers */
	int lists;
	int errors;
};

static void *churn_lister(void *arg)
{
	struct churn *c = arg;
	struct rmsg_dev_info *devs;
	int i, n;

	while (!__atomic_load_n(&c->stop, __ATOMIC_RELAXED)) {
		n = rmsg_node_devices(c->fd, &devs, NULL);
		if (n < 0) {
			c->errors++;
			continue;
		}
		for (i = 0; i < n; i++)
			if (!memchr(devs[i].name, 0, sizeof(devs[i].name)) ||
			    !devs[i].name[0])
				c->errors++;
		free(devs);
		c->lists++;
	}
	return NULL;
}

/*
 * Listing devices while they come and go is safe and always consistent.
 * Five removals take about 125 s on a lockdep and KASAN guest kernel.
 */
TEST_F_TIMEOUT(dev, list_during_device_churn, 300)
{
	struct churn c = { .fd = self->fd };
	pthread_t threads[4];
	int i;

	if (!self->netdev)
		SKIP(return, "RMSG_NETDEV not set: not run by rmsg-vm");
	for (i = 0; i < 4; i++)
		ASSERT_EQ(0, pthread_create(&threads[i], NULL, churn_lister,
					    &c));
	for (i = 0; i < 5; i++) {
		EXPECT_EQ(0, rmsg_sh("rdma link delete rxe0"));
		EXPECT_EQ(0, rmsg_sh("rdma link add rxe0 type rxe netdev %s",
				     self->netdev));
	}
	__atomic_store_n(&c.stop, 1, __ATOMIC_RELAXED);
	for (i = 0; i < 4; i++)
		pthread_join(threads[i], NULL);
	EXPECT_EQ(0, c.errors);
	EXPECT_LT(0, c.lists);
	EXPECT_TRUE(rmsg_wait_dev(self->fd, "rxe0", true, RMSG_PORT_ACTIVE,
				  10000));
}

int main(int argc, char **argv)
{
	return rmsg_test_main(argc, argv);
}
