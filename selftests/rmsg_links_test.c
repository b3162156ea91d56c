// SPDX-License-Identifier: GPL-2.0
/*
 * Links between rmsg kernels, first step (Documentation/design.rst, "How
 * the module will carry links"): with the link_port parameter set, a
 * program's channel that connects makes the module dial a carrier to the
 * peer's module, a channel of the module's own endpoint (process 0 in the
 * channel list) from a port below 1024, accepted by the peer module's
 * listener on link_port. In the loopback guest both ends are this
 * kernel's: two carrier ends, one dialled, one accepted. A program that
 * dials link_port itself (from a port of its own, 1024 or above) is
 * refused. Carriers are repaired as channels are (rxe0 removed and made
 * again). Clearing link_port ends the carriers; programs' channels go on.
 */
#include <errno.h>
#include <stdlib.h>

#include "kselftest_harness.h"
#include "rmsg_test.h"

#define EVENT_TIMEOUT_MS	20000
#define LINK_PORT		"1021"

/* Open channels of the module's own endpoints (process 0): carrier ends. */
static int carrier_ends(int fd)
{
	struct rmsg_chan_info *chans = NULL;
	int i, n, open = 0;

	n = rmsg_node_channels(fd, RMSG_CHAN_LIST_F_ALL, &chans, NULL);
	if (n < 0)
		return n;
	for (i = 0; i < n; i++)
		if (!chans[i].pid && chans[i].state == RMSG_CHAN_INFO_OPEN)
			open++;
	free(chans);
	return open;
}

/* Wait up to @ms for exactly @want carrier ends; the last count seen. */
static int wait_carrier_ends(int fd, int want, int ms)
{
	long deadline = rmsg_now_ms() + ms * rmsg_test_slow();
	int n;

	do {
		n = carrier_ends(fd);
		if (n == want)
			return n;
		usleep(50000);
	} while (rmsg_now_ms() < deadline);
	return n;
}

FIXTURE(links) {
	struct rmsg_ep *a, *b;
	struct sockaddr_in addr;
	char saved[32];
	bool opened;
};

FIXTURE_SETUP(links)
{
	if (!rmsg_local_addr(&self->addr, 0))
		SKIP(return, "RMSG_LOCAL_ADDR not set: not run by rmsg-vm");
	if (rmsg_read_param("link_port", self->saved, sizeof(self->saved)))
		SKIP(return, "no link_port parameter (not root, or an old rmsg)");
	ASSERT_EQ(0, rmsg_write_param("link_port", "0"));
	ASSERT_EQ(0, rmsg_ep_open(&self->a, 64, 1024));
	ASSERT_EQ(0, rmsg_ep_open(&self->b, 64, 1024));
	self->opened = true;
}

FIXTURE_TEARDOWN(links)
{
	const char *netdev = getenv("RMSG_NETDEV");

	if (netdev && rmsg_sh("rdma link show rxe0/1 >/dev/null 2>&1"))
		rmsg_sh("rdma link add rxe0 type rxe netdev %s", netdev);
	if (self->opened) {
		rmsg_ep_drop(&self->a);
		rmsg_ep_drop(&self->b);
	}
	if (self->saved[0])
		rmsg_write_param("link_port", self->saved);
}

/*
 * A program's channel brings a carrier; the carrier stays while the
 * program's channel carries a message; clearing link_port ends it and
 * leaves the program's channel open.
 */
/* @b dials @a's listener: 0 with both ends' ids, through the library. */
static int lib_channel(struct rmsg_ep *a, struct rmsg_ep *b,
		       const struct sockaddr_in *addr, __u32 *ida, __u32 *idb)
{
	struct rmsg_event ev;
	int id;

	id = rmsg_chan_connect(b, (const struct sockaddr *)addr,
			       sizeof(*addr), 0xb0, 0);
	if (id < 0)
		return id;
	if (rmsg_lib_event(b, RMSG_CQE_CONNECTED, &ev, EVENT_TIMEOUT_MS) ||
	    ev.res || ev.channel != (__u32)id)
		return -ENOTCONN;
	*idb = id;
	if (rmsg_lib_event(a, RMSG_CQE_ACCEPTED, &ev, EVENT_TIMEOUT_MS) ||
	    ev.res)
		return -ENOTCONN;
	*ida = ev.channel;
	return 0;
}

TEST_F_TIMEOUT(links, carrier_follows_a_channel, 180)
{
	int fd = rmsg_ep_fd(self->a);
	__u32 a0, b0, a1, b1;

	ASSERT_EQ(0, carrier_ends(fd));
	ASSERT_EQ(0, rmsg_write_param("link_port", LINK_PORT));
	ASSERT_EQ(0, rmsg_ep_listen(self->a, (struct sockaddr *)&self->addr,
				    sizeof(self->addr), 0xa0, 0));
	/* Nothing yet: a carrier follows a channel. */
	usleep(300000);
	EXPECT_EQ(0, carrier_ends(fd));

	ASSERT_EQ(0, lib_channel(self->a, self->b, &self->addr, &a0, &b0));
	/* Dialled and accepted, both in this kernel. */
	EXPECT_EQ(2, wait_carrier_ends(fd, 2, 10000));
	EXPECT_EQ(0, rmsg_echo(self->b, b0, self->a, a0, 7, 100,
			       EVENT_TIMEOUT_MS));
	/* A second channel to the same node makes no second carrier. */
	ASSERT_EQ(0, lib_channel(self->a, self->b, &self->addr, &a1, &b1));
	usleep(500000);
	EXPECT_EQ(2, carrier_ends(fd));

	/* Links off: the carriers end, the programs' channels go on. */
	ASSERT_EQ(0, rmsg_write_param("link_port", "0"));
	EXPECT_EQ(0, carrier_ends(fd));
	EXPECT_EQ(0, rmsg_echo(self->b, b1, self->a, a1, 9, 100,
			       EVENT_TIMEOUT_MS));
	EXPECT_EQ(0, rmsg_echo(self->a, a0, self->b, b0, 11, 100,
			       EVENT_TIMEOUT_MS));
}

/* The module's listener hears no program: a port of 1024 or above. */
TEST_F_TIMEOUT(links, program_cannot_dial_link_port, 120)
{
	struct sockaddr_in to = self->addr;
	struct rmsg_cqe cqe;
	int id;

	ASSERT_EQ(0, rmsg_write_param("link_port", LINK_PORT));
	to.sin_port = htons(atoi(LINK_PORT));
	id = rmsg_chan_connect(self->b, (struct sockaddr *)&to, sizeof(to),
			       0xb0, 0);
	ASSERT_LE(0, id);
	ASSERT_EQ(0, rmsg_next_cqe(self->b, &cqe, EVENT_TIMEOUT_MS));
	EXPECT_EQ(RMSG_CQE_CONNECTED, RMSG_CQE_KIND(cqe.flags));
	EXPECT_NE(0, cqe.res) TH_LOG("a program's channel to link_port opened");
	/* Its own carrier to this node is the module's, and does open. */
	EXPECT_EQ(2, wait_carrier_ends(rmsg_ep_fd(self->b), 2, 10000));
}

/*
 * A carrier is a channel: rxe0 removed and made again under it, it is
 * repaired (both ends open again), as the program's channel is.
 */
TEST_F_TIMEOUT(links, carriers_repair_after_device_readd, 240)
{
	const char *netdev = getenv("RMSG_NETDEV");
	int fd = rmsg_ep_fd(self->a);
	__u32 a0, b0;

	if (!netdev)
		SKIP(return, "RMSG_NETDEV not set: not run by rmsg-vm");
	ASSERT_EQ(0, rmsg_write_param("link_port", LINK_PORT));
	ASSERT_EQ(0, rmsg_ep_listen(self->a, (struct sockaddr *)&self->addr,
				    sizeof(self->addr), 0xa0, 0));
	ASSERT_EQ(0, lib_channel(self->a, self->b, &self->addr, &a0, &b0));
	ASSERT_EQ(2, wait_carrier_ends(fd, 2, 10000));
	ASSERT_EQ(0, rmsg_sh("rdma link delete rxe0"));
	EXPECT_EQ(0, wait_carrier_ends(fd, 0, 10000));
	usleep(500000);
	ASSERT_EQ(0, rmsg_sh("rdma link add rxe0 type rxe netdev %s", netdev));
	EXPECT_EQ(2, wait_carrier_ends(fd, 2, 60000));
	EXPECT_EQ(0, rmsg_echo(self->b, b0, self->a, a0, 5, 100,
			       60000 * rmsg_test_slow()));
}

/* Only ports a kernel binds: 1024 and above are refused. */
TEST_F(links, link_port_below_1024)
{
	EXPECT_EQ(-EIO, rmsg_write_param("link_port", "1024"));
	EXPECT_EQ(0, rmsg_write_param("link_port", LINK_PORT));
	EXPECT_EQ(0, rmsg_write_param("link_port", "0"));
}

TEST_HARNESS_MAIN
