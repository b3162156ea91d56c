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
 *
 * Second step: carriers carry the link's messages. RMSG_IOC_LINK_LIST
 * shows the links to an administrator; RMSG_FAULT_LINK_PROBE makes a
 * carrier send HELLOs that the peer module refuses, thousands of them,
 * which only arrive if both sides' LCREDITs flow (the link's receives are
 * 256 a side); the carrier is not repaired for them (no receiver-not-ready,
 * no protocol error), and the same holds on its next connection after a
 * forced QP error.
 */
#include <errno.h>
#include <stdlib.h>
#include <arpa/inet.h>
#include <sys/ioctl.h>
#include <sys/wait.h>

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

/* The module's links: @out gets up to @cap; the total, or -errno. */
static int link_list(int fd, struct rmsg_link_info *out, unsigned int cap)
{
	struct rmsg_link_list req = {
		.links = (uintptr_t)out,
		.capacity = cap,
	};

	if (ioctl(fd, RMSG_IOC_LINK_LIST, &req))
		return -errno;
	if (req.filled != (req.total < cap ? req.total : cap))
		return -EPROTO;
	return req.total;
}

/* The one link, once its carrier is open: 0, or -ETIMEDOUT. */
static int wait_link_open(int fd, struct rmsg_link_info *link, int ms)
{
	long deadline = rmsg_now_ms() + ms * rmsg_test_slow();

	do {
		if (link_list(fd, link, 1) == 1 &&
		    link->state == RMSG_CHAN_INFO_OPEN)
			return 0;
		usleep(50000);
	} while (rmsg_now_ms() < deadline);
	return -ETIMEDOUT;
}

static int link_probe(int fd, const struct rmsg_link_info *link, __u64 n)
{
	struct rmsg_fault f = {
		.ep_id = link->ep_id,
		.channel = link->channel,
		.kind = RMSG_FAULT_LINK_PROBE,
		.arg = n,
	};

	return ioctl(fd, RMSG_IOC_FAULT, &f) ? -errno : 0;
}

/* Until @want refusals came back and nothing is left to send. */
static int wait_refused(int fd, struct rmsg_link_info *link, __u64 want,
			int ms)
{
	long deadline = rmsg_now_ms() + ms * rmsg_test_slow();

	do {
		if (link_list(fd, link, 1) == 1 &&
		    link->refused_received >= want && !link->probes_left)
			return 0;
		usleep(50000);
	} while (rmsg_now_ms() < deadline);
	return -ETIMEDOUT;
}

/* The repairs the channel @id of endpoint @ep_id has had, or -1. */
static int chan_repairs(int fd, __u32 ep_id, __u32 id)
{
	struct rmsg_chan_info *chans = NULL;
	int i, n, repairs = -1;

	n = rmsg_node_channels(fd, RMSG_CHAN_LIST_F_ALL, &chans, NULL);
	for (i = 0; i < n; i++)
		if (chans[i].ep_id == ep_id && chans[i].channel == id)
			repairs = chans[i].repairs;
	free(chans);
	return repairs;
}

/*
 * A carrier to this node, through a program's channel from @b to @a's
 * listener: 0 with its link entry, or the step's error.
 */
static int open_link(struct rmsg_ep *a, struct rmsg_ep *b,
		     const struct sockaddr_in *addr, struct rmsg_link_info *link)
{
	__u32 a0, b0;
	int ret;

	ret = rmsg_write_param("link_port", LINK_PORT);
	if (!ret)
		ret = rmsg_ep_listen(a, (const struct sockaddr *)addr,
				     sizeof(*addr), 0xa0, 0);
	if (!ret)
		ret = lib_channel(a, b, addr, &a0, &b0);
	if (!ret)
		ret = wait_link_open(rmsg_ep_fd(a), link, 10000);
	return ret;
}

/*
 * The link list shows the link to this node (in the loopback guest the
 * peer is this node: one entry, the carrier this side dialled, both ends
 * of it this kernel's), with nothing carried yet.
 */
TEST_F_TIMEOUT(links, link_list, 120)
{
	int fd = rmsg_ep_fd(self->a);
	struct rmsg_link_info link[2];
	struct rmsg_link_list bad = { .flags = 1 };

	EXPECT_EQ(0, link_list(fd, NULL, 0)) TH_LOG("links while link_port is 0");
	EXPECT_EQ(-1, ioctl(fd, RMSG_IOC_LINK_LIST, &bad));
	EXPECT_EQ(EINVAL, errno);
	ASSERT_EQ(0, open_link(self->a, self->b, &self->addr, link));
	EXPECT_EQ(1, link_list(fd, link, 2));
	EXPECT_EQ(AF_INET, link[0].peer.ss_family);
	EXPECT_EQ(self->addr.sin_addr.s_addr,
		  ((struct sockaddr_in *)&link[0].peer)->sin_addr.s_addr);
	EXPECT_EQ(0, ((struct sockaddr_in *)&link[0].peer)->sin_port);
	EXPECT_EQ(RMSG_LINK_INFO_F_DIALLED, link[0].flags);
	EXPECT_NE(0, link[0].ep_id);
	EXPECT_EQ(RMSG_CHAN_INFO_OPEN, link[0].state);
	EXPECT_EQ(0, link[0].refused_received);
	EXPECT_EQ(0, link[0].probes_left);
	EXPECT_EQ(0, link[0].dropped);
	/* rmsgctl shows it: the peer, port 0, its carrier open, dialled. */
	EXPECT_EQ(0, rmsg_sh("tools/rmsgctl/rmsgctl links | grep -q '^%s:0 .* OPEN  *yes '",
			     inet_ntoa(self->addr.sin_addr)));
	EXPECT_EQ(0, rmsg_sh("tools/rmsgctl/rmsgctl --json links | grep -q '\"state\": \"OPEN\"'"));
}

/*
 * 3,000 HELLOs, each refused: more than ten times the link's receives
 * each way, so they arrive only if LCREDITs come back both ways; none is
 * lost, and the carrier is never repaired (an overrun would be a
 * receiver-not-ready, a bad credit a protocol error: either ends the
 * connection).
 */
#define PROBES		3000

TEST_F_TIMEOUT(links, probes_are_refused_within_credits, 240)
{
	int fd = rmsg_ep_fd(self->a);
	struct rmsg_link_info link;

	ASSERT_EQ(0, open_link(self->a, self->b, &self->addr, &link));
	ASSERT_EQ(0, link_probe(fd, &link, PROBES));
	ASSERT_EQ(0, wait_refused(fd, &link, PROBES, 60000))
		TH_LOG("%llu of %d refused, %llu to send",
		       (unsigned long long)link.refused_received, PROBES,
		       (unsigned long long)link.probes_left);
	EXPECT_EQ(PROBES, link.refused_received);
	EXPECT_EQ(0, link.dropped);
	/* Our HELLOs and LCREDITs; their REFUSEs and LCREDITs. */
	EXPECT_EQ(PROBES + link.lcredit_sent, link.sent);
	EXPECT_EQ(PROBES + link.lcredit_received, link.received);
	/* The peer announced receives again: at least 3000 / 256 times. */
	EXPECT_LE(PROBES / 256, link.lcredit_received);
	EXPECT_LE(PROBES / 256, link.lcredit_sent);
	EXPECT_EQ(RMSG_CHAN_INFO_OPEN, link.state);
	EXPECT_EQ(0, chan_repairs(fd, link.ep_id, link.channel));
	ksft_print_msg("link: sent %llu (LCREDIT %llu), received %llu (LCREDIT %llu, REFUSE %llu)\n",
		       (unsigned long long)link.sent,
		       (unsigned long long)link.lcredit_sent,
		       (unsigned long long)link.received,
		       (unsigned long long)link.lcredit_received,
		       (unsigned long long)link.refused_received);
}

/*
 * A forced QP error on the carrier: it is repaired as a channel is, and
 * its next connection starts its credits anew (probes all refused again).
 */
TEST_F_TIMEOUT(links, probes_after_carrier_qp_error, 240)
{
	int fd = rmsg_ep_fd(self->a);
	struct rmsg_link_info link;
	struct rmsg_fault f;
	long deadline;
	__u64 before;

	ASSERT_EQ(0, open_link(self->a, self->b, &self->addr, &link));
	ASSERT_EQ(0, link_probe(fd, &link, 600));
	ASSERT_EQ(0, wait_refused(fd, &link, 600, 60000));
	before = link.refused_received;
	memset(&f, 0, sizeof(f));
	f.ep_id = link.ep_id;
	f.channel = link.channel;
	f.kind = RMSG_FAULT_QP_ERROR;
	ASSERT_EQ(0, ioctl(fd, RMSG_IOC_FAULT, &f));
	deadline = rmsg_now_ms() + 30000 * rmsg_test_slow();
	while (chan_repairs(fd, link.ep_id, link.channel) < 1 &&
	       rmsg_now_ms() < deadline)
		usleep(50000);
	ASSERT_EQ(1, chan_repairs(fd, link.ep_id, link.channel));
	ASSERT_EQ(0, wait_link_open(fd, &link, 30000));
	ASSERT_EQ(0, link_probe(fd, &link, 600));
	ASSERT_EQ(0, wait_refused(fd, &link, before + 600, 60000));
	EXPECT_EQ(before + 600, link.refused_received);
	EXPECT_EQ(0, link.dropped);
}

/*
 * Probes: only a carrier, a count of 1 to RMSG_LINK_PROBE_MAX; links:
 * root's to see.
 */
static int nobody_child(int fd, const struct rmsg_link_info *link)
{
	struct rmsg_link_list req = { 0 };

	if (rmsg_become_nobody())
		return 1;
	if (!ioctl(fd, RMSG_IOC_LINK_LIST, &req) || errno != EPERM)
		return 2;
	if (link_probe(fd, link, 1) != -EPERM)
		return 3;
	return 0;
}

TEST_F_TIMEOUT(links, probe_rules, 120)
{
	int fd = rmsg_ep_fd(self->a);
	struct rmsg_link_info link;
	struct rmsg_fault f = { .kind = RMSG_FAULT_LINK_PROBE, .arg = 1 };
	__u32 a0, b0;
	pid_t pid;

	ASSERT_EQ(0, rmsg_write_param("link_port", LINK_PORT));
	ASSERT_EQ(0, rmsg_ep_listen(self->a, (struct sockaddr *)&self->addr,
				    sizeof(self->addr), 0xa0, 0));
	ASSERT_EQ(0, lib_channel(self->a, self->b, &self->addr, &a0, &b0));
	ASSERT_EQ(0, wait_link_open(fd, &link, 10000));
	/* A program's channel is no carrier. */
	f.channel = a0;
	EXPECT_EQ(-1, ioctl(fd, RMSG_IOC_FAULT, &f));
	EXPECT_EQ(EOPNOTSUPP, errno);
	EXPECT_EQ(-EINVAL, link_probe(fd, &link, 0));
	EXPECT_EQ(-EINVAL, link_probe(fd, &link, RMSG_LINK_PROBE_MAX + 1));
	/* Other kinds take no count. */
	f.channel = a0;
	f.kind = RMSG_FAULT_QP_ERROR;
	f.arg = 1;
	EXPECT_EQ(-1, ioctl(fd, RMSG_IOC_FAULT, &f));
	EXPECT_EQ(EINVAL, errno);
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid)
		_exit(nobody_child(fd, &link));
	EXPECT_EQ(0, rmsg_child_status(pid));
	EXPECT_EQ(0, rmsg_echo(self->b, b0, self->a, a0, 3, 100,
			       EVENT_TIMEOUT_MS));
}

/* Only ports a kernel binds: 1024 and above are refused. */
TEST_F(links, link_port_below_1024)
{
	EXPECT_EQ(-EIO, rmsg_write_param("link_port", "1024"));
	EXPECT_EQ(0, rmsg_write_param("link_port", LINK_PORT));
	EXPECT_EQ(0, rmsg_write_param("link_port", "0"));
}

TEST_HARNESS_MAIN
