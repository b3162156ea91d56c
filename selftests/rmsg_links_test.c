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
 *
 * Third step: programs' channels opened on a link. Once the link to a
 * node is up, a channel dialled to it goes on the link (a HELLO CONNECT
 * on the carrier, answered by the listener's kernel with an ACCEPT),
 * not on a connection of its own: many channels open, each carries
 * messages both ways, eager and rendezvous, byte for byte, and they close
 * leaving the link up with no channel on it. A port nothing listens on is
 * refused (ECONNREFUSED) through the link. When the link's connection
 * breaks, the channels on it are repaired with it, every message
 * delivered once and in order.
 *
 * Only a device that places a write's bytes in order carries channels on
 * a link: one that does not (rxe on 6.12 under a CPU without FSRM, as in
 * the TCG guest) has the peer write with immediates, whose receives a
 * link's shared QP does not have, and a channel dialled to the node goes
 * on a connection of its own. There the tests of channels on the link are
 * skipped, saying so, and the others check that fallback.
 */
#include <errno.h>
#include <stdlib.h>
#include <arpa/inet.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
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
	bool ordered;
};

FIXTURE_SETUP(links)
{
	if (!rmsg_local_addr(&self->addr, 0))
		SKIP(rmsg_setup_skipped(_metadata); return,
		     "RMSG_LOCAL_ADDR not set: not run by rmsg-vm");
	if (rmsg_read_param("link_port", self->saved, sizeof(self->saved)))
		SKIP(rmsg_setup_skipped(_metadata); return,
		     "no link_port parameter (not root, or an old rmsg)");
	ASSERT_EQ(0, rmsg_write_param("link_port", "0"));
	ASSERT_EQ(0, rmsg_ep_open(&self->a, 64, 1024));
	ASSERT_EQ(0, rmsg_ep_open(&self->b, 64, 1024));
	self->opened = true;
	self->ordered = rmsg_rxe0_ordered();
}

#define NOT_ORDERED \
	"rxe0 places out of order here (writes with immediate): channels do not go on a link"

/*
 * A test of channels on the link skips where they do not go on one:
 * if (unordered_skip(_metadata, self->ordered)) return; (a function, not
 * a macro that returns, which checkpatch refuses).
 */
static bool unordered_skip(struct __test_metadata *_metadata, bool ordered)
{
	if (!ordered)
		SKIP(return true, NOT_ORDERED);
	return false;
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
	int ret;

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
	/*
	 * A second channel to the same node makes no second carrier: it
	 * goes on the link.
	 */
	ASSERT_EQ(0, lib_channel(self->a, self->b, &self->addr, &a1, &b1));
	usleep(500000);
	EXPECT_EQ(2, carrier_ends(fd));
	EXPECT_EQ(0, rmsg_echo(self->b, b1, self->a, a1, 9, 100,
			       EVENT_TIMEOUT_MS));

	/*
	 * Links off: the carriers end, and with them the channel on the
	 * link (not repaired with it yet); the direct one goes on. Where
	 * the device places out of order the second channel went on a
	 * connection of its own (the fallback) and goes on too.
	 */
	ASSERT_EQ(0, rmsg_write_param("link_port", "0"));
	EXPECT_EQ(0, carrier_ends(fd));
	EXPECT_EQ(0, rmsg_echo(self->a, a0, self->b, b0, 11, 100,
			       EVENT_TIMEOUT_MS));
	ret = rmsg_echo(self->b, b1, self->a, a1, 13, 100,
			self->ordered ? 2000 : EVENT_TIMEOUT_MS);
	EXPECT_EQ(self->ordered, ret != 0);
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

/* --- channels on a link ------------------------------------------------- */

#define LINK_CHANS	64
/* A message each way that goes by rendezvous (over the 16 KiB default). */
#define RNDV_LEN	(256 * 1024)

/* The link's entry (the carrier this side dialled): 0, or -ENOENT. */
static int link_now(int fd, struct rmsg_link_info *link)
{
	return link_list(fd, link, 1) == 1 ? 0 : -ENOENT;
}

/* Until the link's carrier has @want channels on it: 0, or -ETIMEDOUT. */
static int wait_link_chans(int fd, struct rmsg_link_info *link,
			   unsigned int want, int ms)
{
	long deadline = rmsg_now_ms() + ms * rmsg_test_slow();

	do {
		if (!link_now(fd, link) && link->channels == want)
			return 0;
		usleep(50000);
	} while (rmsg_now_ms() < deadline);
	return -ETIMEDOUT;
}

/*
 * rmsg_msg_send() of @len bytes of @buf on @tx's channel @ct, retried
 * while the channel has no room (a repair holds sends back, or the block
 * is full) until @deadline (rmsg_now_ms()); @tx's events are taken
 * meanwhile, so that completions make room: 0 or the send's error.
 */
static int send_retry(struct rmsg_ep *tx, __u32 ct, const void *buf,
		      size_t len, __u64 user_data, long deadline)
{
	struct rmsg_event ev[16];
	int ret;

	for (;;) {
		ret = rmsg_msg_send(tx, ct, buf, len, RMSG_SEND_COPY,
				    user_data);
		if (ret != -EAGAIN || rmsg_now_ms() >= deadline)
			return ret;
		rmsg_ep_progress(tx, ev, 16);
		rmsg_ep_wait(tx, 10);
	}
}

/*
 * The next message on @rx's channel @cr into @buf (@cap bytes), waited
 * for until @deadline; @tx's events (its sends' completions) and @rx's
 * are taken meanwhile: the message's length or a negative errno.
 */
static int recv_wait(struct rmsg_ep *rx, __u32 cr, struct rmsg_ep *tx,
		     void *buf, size_t cap, long deadline)
{
	struct rmsg_event ev[16];
	int ret;

	for (;;) {
		rmsg_ep_progress(tx, ev, 16);
		ret = rmsg_msg_recv(rx, cr, buf, cap, 0);
		if (ret != -EAGAIN || rmsg_now_ms() >= deadline)
			return ret;
		rmsg_ep_progress(rx, ev, 16);
		rmsg_ep_wait(rx, 10);
	}
}

/*
 * @len bytes (any size: eager or rendezvous) from @tx's channel @ct to
 * @rx's channel @cr, a pattern of @tag, checked byte for byte: 0, -EIO
 * for other bytes or length, or a negative errno. Both sides' events are
 * taken meanwhile (sends' completions among them).
 */
static int link_echo(struct rmsg_ep *tx, __u32 ct, struct rmsg_ep *rx,
		     __u32 cr, unsigned char tag, size_t len, int timeout_ms)
{
	long deadline = rmsg_now_ms() + timeout_ms * rmsg_test_slow();
	unsigned char *out = malloc(len + 1), *in = malloc(len + 1);
	struct rmsg_event ev[16];
	size_t i;
	int ret;

	if (!out || !in) {
		free(out);
		free(in);
		return -ENOMEM;
	}
	for (i = 0; i < len; i++)
		out[i] = (unsigned char)(tag + i * 13 + (i >> 12));
	ret = send_retry(tx, ct, out, len, tag, deadline);
	if (!ret)
		ret = recv_wait(rx, cr, tx, in, len + 1, deadline);
	if (ret >= 0)
		ret = (size_t)ret == len && !memcmp(in, out, len) ? 0 : -EIO;
	/* The send's completion (a rendezvous one frees the library's copy). */
	rmsg_ep_progress(tx, ev, 16);
	free(out);
	free(in);
	return ret;
}

/*
 * With the link up, LINK_CHANS channels open on it (the link's carrier
 * counts them; none of them is a carrier of its own), each carries a
 * message each way checked byte for byte, the first a rendezvous one each
 * way too; they all close, orderly on both sides, and the link stays up
 * with no channel on it, never repaired for them.
 */
TEST_F_TIMEOUT(links, channels_open_on_the_link, 600)
{
	int fd = rmsg_ep_fd(self->a);
	__u32 a[LINK_CHANS], b[LINK_CHANS], a0, b0;
	struct rmsg_link_info link;
	struct rmsg_event ev;
	__u32 total, seen_a = 0, seen_b = 0;
	int i, j;

	if (unordered_skip(_metadata, self->ordered))
		return;
	/* A first channel brings the link (it is not on it itself). */
	ASSERT_EQ(0, open_link(self->a, self->b, &self->addr, &link));
	EXPECT_EQ(0, link.channels);
	total = link.channels_total;
	ASSERT_EQ(2, wait_carrier_ends(fd, 2, 10000));

	for (i = 0; i < LINK_CHANS; i++)
		ASSERT_EQ(0, lib_channel(self->a, self->b, &self->addr,
					 &a[i], &b[i])) TH_LOG("channel %d", i);
	/* On the link: the carrier counts them, and no carrier came. */
	ASSERT_EQ(0, wait_link_chans(fd, &link, LINK_CHANS, 10000))
		TH_LOG("%u channels on the link", link.channels);
	EXPECT_EQ(total + LINK_CHANS, link.channels_total);
	EXPECT_EQ(2, carrier_ends(fd));

	for (i = 0; i < LINK_CHANS; i++) {
		ASSERT_EQ(0, link_echo(self->b, b[i], self->a, a[i], 2 * i + 1,
				       1 + (i * 997) % 4000, EVENT_TIMEOUT_MS))
			TH_LOG("channel %d, b to a", i);
		ASSERT_EQ(0, link_echo(self->a, a[i], self->b, b[i], 2 * i + 2,
				       1 + (i * 1409) % 4000,
				       EVENT_TIMEOUT_MS))
			TH_LOG("channel %d, a to b", i);
	}
	ASSERT_EQ(0, link_echo(self->b, b[0], self->a, a[0], 0x5a, RNDV_LEN,
			       60000)) TH_LOG("rendezvous, b to a");
	ASSERT_EQ(0, link_echo(self->a, a[0], self->b, b[0], 0xa5, RNDV_LEN,
			       60000)) TH_LOG("rendezvous, a to b");
	/* And eager again after it, on the same channel. */
	ASSERT_EQ(0, link_echo(self->b, b[0], self->a, a[0], 0x33, 1000,
			       EVENT_TIMEOUT_MS));

	for (i = 0; i < LINK_CHANS; i++)
		ASSERT_EQ(0, rmsg_chan_close(self->b, b[i], 0));
	/* Every one ends, orderly, on both sides. */
	for (j = 0; j < LINK_CHANS; j++) {
		if (rmsg_lib_event(self->b, RMSG_CQE_CLOSED, &ev,
				   EVENT_TIMEOUT_MS))
			break;
		EXPECT_EQ(0, ev.res) TH_LOG("channel %u of b", ev.channel);
		seen_b++;
	}
	for (j = 0; j < LINK_CHANS; j++) {
		if (rmsg_lib_event(self->a, RMSG_CQE_CLOSED, &ev,
				   EVENT_TIMEOUT_MS))
			break;
		EXPECT_EQ(0, ev.res) TH_LOG("channel %u of a", ev.channel);
		seen_a++;
	}
	EXPECT_EQ(LINK_CHANS, seen_a);
	EXPECT_EQ(LINK_CHANS, seen_b);
	/* The link stays, with nothing on it, and was never repaired. */
	EXPECT_EQ(0, wait_link_chans(fd, &link, 0, 10000))
		TH_LOG("%u channels left on the link", link.channels);
	EXPECT_EQ(RMSG_CHAN_INFO_OPEN, link.state);
	EXPECT_EQ(0, chan_repairs(fd, link.ep_id, link.channel));
	EXPECT_EQ(2, carrier_ends(fd));
	/* A new channel still opens on it and carries. */
	ASSERT_EQ(0, lib_channel(self->a, self->b, &self->addr, &a0, &b0));
	EXPECT_EQ(0, wait_link_chans(fd, &link, 1, 10000));
	EXPECT_EQ(0, link_echo(self->b, b0, self->a, a0, 7, 100,
			       EVENT_TIMEOUT_MS));
}

/*
 * A port nothing listens on, dialled while the link is up: the peer's
 * kernel refuses the HELLO CONNECT, and the dial ends ECONNREFUSED, as a
 * connection of its own would; the link goes on, with no channel left.
 */
TEST_F_TIMEOUT(links, no_listener_is_refused_on_the_link, 180)
{
	int fd = rmsg_ep_fd(self->a);
	struct sockaddr_in to = self->addr;
	struct rmsg_link_info link;
	struct rmsg_event ev;
	__u64 refused;
	int id;

	ASSERT_EQ(0, open_link(self->a, self->b, &self->addr, &link));
	refused = link.refused_received;
	to.sin_port = htons(ntohs(self->addr.sin_port) + 7);
	id = rmsg_chan_connect(self->b, (struct sockaddr *)&to, sizeof(to),
			       0xb7, 0);
	ASSERT_LE(0, id);
	ASSERT_EQ(0, rmsg_lib_event(self->b, RMSG_CQE_CONNECTED, &ev,
				    EVENT_TIMEOUT_MS));
	EXPECT_EQ((__u32)id, ev.channel);
	EXPECT_EQ(-ECONNREFUSED, ev.res);
	/*
	 * It was the link that refused it (or, where channels do not go on
	 * a link, the peer's rdma_cm: the link saw nothing).
	 */
	ASSERT_EQ(0, link_now(fd, &link));
	EXPECT_EQ(refused + self->ordered, link.refused_received);
	EXPECT_EQ(0, wait_link_chans(fd, &link, 0, 10000));
	EXPECT_EQ(RMSG_CHAN_INFO_OPEN, link.state);
	EXPECT_EQ(0, chan_repairs(fd, link.ep_id, link.channel));
}

/* --- channels repaired with their link ----------------------------------- */

#define RPR_CHANS	4
/* Messages per channel before the fault, and as many during the repair. */
#define RPR_MSGS	6
/* Message 3 of each batch goes by rendezvous (above the eager limit). */
#define RPR_RNDV_LEN	70000

static unsigned char rpr_out[RPR_RNDV_LEN], rpr_in[RPR_RNDV_LEN + 1];

/* Message @i of channel @k: its length, its bytes in @buf. */
static size_t rpr_msg(unsigned char *buf, int k, int i)
{
	size_t len = i % RPR_MSGS == 3 ? RPR_RNDV_LEN : 24 + 211 * i + k, j;

	for (j = 0; j < len; j++)
		buf[j] = (unsigned char)(k * 41 + i * 17 + j * 5 + (j >> 9));
	return len;
}

/*
 * Message @i of channel @k from @tx's channel @ct, the send retried while
 * the channel has no room (a repair holds sends back): 0 or the error.
 */
static int rpr_send(struct rmsg_ep *tx, __u32 ct, int k, int i)
{
	long deadline = rmsg_now_ms() + EVENT_TIMEOUT_MS * rmsg_test_slow();

	return send_retry(tx, ct, rpr_out, rpr_msg(rpr_out, k, i), i,
			  deadline);
}

/*
 * The next message on @rx's channel @cr must be message @i of channel
 * @k, byte for byte: 0, -EIO for other bytes or length, or the error.
 * @tx's events (its sends' completions) are taken meanwhile.
 */
static int rpr_recv(struct rmsg_ep *rx, __u32 cr, struct rmsg_ep *tx,
		    int k, int i, int timeout_ms)
{
	long deadline = rmsg_now_ms() + timeout_ms * rmsg_test_slow();
	size_t len = rpr_msg(rpr_out, k, i);
	int ret;

	ret = recv_wait(rx, cr, tx, rpr_in, sizeof(rpr_in), deadline);
	if (ret < 0)
		return ret;
	return (size_t)ret == len && !memcmp(rpr_in, rpr_out, len) ? 0 : -EIO;
}

/*
 * How many of @ids (@n of them) of the endpoint @ep are OPEN with at least
 * one repair, or a negative errno.
 */
static int all_repaired(struct rmsg_ep *ep, const __u32 *ids, int n)
{
	struct rmsg_chan_info *chans = NULL;
	int i, j, cnt, good = 0;
	__u32 ep_id;

	cnt = rmsg_node_channels(rmsg_ep_fd(ep), 0, &chans, &ep_id);
	if (cnt < 0)
		return cnt;
	for (i = 0; i < n; i++)
		for (j = 0; j < cnt; j++)
			if (chans[j].ep_id == ep_id && chans[j].channel == ids[i] &&
			    chans[j].state == RMSG_CHAN_INFO_OPEN &&
			    chans[j].repairs >= 1)
				good++;
	free(chans);
	return good;
}

/*
 * Until both ends of @n channels (@ea's @a, @eb's @b) are OPEN with a
 * repair counted, within @ms: 0, or -ETIMEDOUT.
 */
static int wait_repaired(struct rmsg_ep *ea, const __u32 *a,
			 struct rmsg_ep *eb, const __u32 *b, int n, int ms)
{
	long deadline = rmsg_now_ms() + ms * rmsg_test_slow();

	do {
		if (all_repaired(ea, a, n) + all_repaired(eb, b, n) == 2 * n)
			return 0;
		usleep(50000);
	} while (rmsg_now_ms() < deadline);
	return -ETIMEDOUT;
}

/*
 * The link's connection breaks (a QP error on it, through a channel on
 * the link: their QP is the carrier's): the carrier is repaired, and
 * every channel on it with it, each resuming where its stream stood.
 * Messages sent before the fault and not read yet, and messages sent
 * while the link is down, eager and rendezvous, all arrive once, in
 * order, byte for byte; the channels carry messages both ways after, all
 * OPEN with a repair counted at both ends; the link keeps its channels
 * and takes new ones.
 */
TEST_F_TIMEOUT(links, channels_repair_with_their_link, 600)
{
	int fd = rmsg_ep_fd(self->a);
	struct rmsg_link_info link;
	struct rmsg_fault f = { .kind = RMSG_FAULT_QP_ERROR };
	__u32 a[RPR_CHANS], b[RPR_CHANS], a0, b0;
	int i, k;

	if (unordered_skip(_metadata, self->ordered))
		return;
	ASSERT_EQ(0, open_link(self->a, self->b, &self->addr, &link));
	for (k = 0; k < RPR_CHANS; k++)
		ASSERT_EQ(0, lib_channel(self->a, self->b, &self->addr,
					 &a[k], &b[k]));
	ASSERT_EQ(0, wait_link_chans(fd, &link, RPR_CHANS, 10000));
	ASSERT_EQ(0, link_echo(self->b, b[1], self->a, a[1], 1, 500,
			       EVENT_TIMEOUT_MS));
	/* Sent, and left unread in the receive blocks across the fault. */
	for (k = 0; k < RPR_CHANS; k++)
		for (i = 0; i < RPR_MSGS; i++)
			ASSERT_EQ(0, rpr_send(self->b, b[k], k, i));
	/* Endpoint 0: the caller's own, @b's. */
	f.channel = b[1];
	ASSERT_EQ(0, ioctl(rmsg_ep_fd(self->b), RMSG_IOC_FAULT, &f));
	/* Sent while the link is repaired (held back, or sent again). */
	for (k = 0; k < RPR_CHANS; k++)
		for (i = RPR_MSGS; i < 2 * RPR_MSGS; i++)
			ASSERT_EQ(0, rpr_send(self->b, b[k], k, i));
	for (k = 0; k < RPR_CHANS; k++)
		for (i = 0; i < 2 * RPR_MSGS; i++)
			ASSERT_EQ(0, rpr_recv(self->a, a[k], self->b, k, i,
					      60000)) {
				TH_LOG("channel %d, message %d", k, i);
			}
	for (k = 0; k < RPR_CHANS; k++) {
		EXPECT_EQ(0, link_echo(self->b, b[k], self->a, a[k], 20 + k,
				       300 + k, EVENT_TIMEOUT_MS));
		EXPECT_EQ(0, link_echo(self->a, a[k], self->b, b[k], 40 + k,
				       RPR_RNDV_LEN + k, EVENT_TIMEOUT_MS));
	}
	/* Both ends of every channel: OPEN again, a repair counted. */
	EXPECT_EQ(0, wait_repaired(self->a, a, self->b, b, RPR_CHANS, 30000));
	/* The link is up with the same channels, its carrier repaired. */
	ASSERT_EQ(0, wait_link_open(fd, &link, 60000));
	EXPECT_EQ(0, wait_link_chans(fd, &link, RPR_CHANS, 30000));
	EXPECT_LE(1, chan_repairs(fd, link.ep_id, link.channel));
	ASSERT_EQ(0, lib_channel(self->a, self->b, &self->addr, &a0, &b0));
	EXPECT_EQ(0, link_echo(self->b, b0, self->a, a0, 9, 300,
			       EVENT_TIMEOUT_MS));
	EXPECT_EQ(0, wait_link_chans(fd, &link, RPR_CHANS + 1, 10000));
}

/* Rendezvous rounds across link repairs (the test below). */
#define RTR_CHANS	8
#define RTR_ROUNDS	24
/*
 * Small messages a round sends ahead of its rendezvous one, one way:
 * more than a signalling period of WRs (RMSG_SIGNAL_EVERY) a channel.
 */
#define RTR_BURST	40
/* A send's user_data from here up is the test's, counted by rtr_take(). */
#define RTR_TAG		(1ULL << 40)

/* One side of the rounds: its endpoint, channels, sends completed. */
struct rtr_side {
	struct rmsg_ep *ep;
	__u32 ch[RTR_CHANS];
	long done;
	int failed;
};

/*
 * Message @k of round @r from side @dir: its length, its bytes in @buf.
 * @i from 0 to RTR_BURST - 1: the round's small (eager) ones of @b; @i
 * RTR_BURST: its rendezvous one.
 */
static size_t rtr_msg(unsigned char *buf, int r, int k, int dir, int i)
{
	size_t len = i < RTR_BURST ? 40 + (size_t)(i * 13 + k) % 90 :
		     RPR_RNDV_LEN - (size_t)(r * RTR_CHANS + k) * 7;
	size_t j;

	for (j = 0; j < len; j++)
		buf[j] = (unsigned char)(r * 29 + k * 11 + dir * 101 + i * 7 +
					 j * 3 + (j >> 10));
	return len;
}

/*
 * @s's events: each of the test's sends that completed is counted in
 * @s->done, a failed one in @s->failed.
 */
static void rtr_take(struct rtr_side *s)
{
	struct rmsg_event ev[16];
	int n, i;

	while ((n = rmsg_ep_progress(s->ep, ev, 16)) > 0)
		for (i = 0; i < n; i++) {
			if (ev[i].kind != RMSG_CQE_OP ||
			    ev[i].user_data < RTR_TAG)
				continue;
			if (ev[i].res)
				s->failed = ev[i].res;
			else
				s->done++;
		}
}

/*
 * Message @i for channel @k of round @r from @tx to @rx, retried while
 * there is no room.
 */
static int rtr_send(struct rtr_side *tx, struct rtr_side *rx, int r, int k,
		    int dir, int i)
{
	long deadline = rmsg_now_ms() + EVENT_TIMEOUT_MS * rmsg_test_slow();
	size_t len = rtr_msg(rpr_out, r, k, dir, i);
	int ret;

	for (;;) {
		ret = rmsg_msg_send(tx->ep, tx->ch[k], rpr_out, len,
				    RMSG_SEND_COPY, RTR_TAG + r);
		if (ret != -EAGAIN || rmsg_now_ms() >= deadline)
			return ret;
		rtr_take(tx);
		rtr_take(rx);
		rmsg_ep_wait(tx->ep, 10);
	}
}

/* The next message on @rx's channel @k must be rtr_msg(@r, @k, @dir, @i). */
static int rtr_recv(struct rtr_side *rx, struct rtr_side *tx, int r, int k,
		    int dir, int i)
{
	long deadline = rmsg_now_ms() + 60000 * rmsg_test_slow();
	size_t len = rtr_msg(rpr_out, r, k, dir, i);
	int ret;

	for (;;) {
		rtr_take(tx);
		ret = rmsg_msg_recv(rx->ep, rx->ch[k], rpr_in, sizeof(rpr_in),
				    0);
		if (ret != -EAGAIN || rmsg_now_ms() >= deadline)
			break;
		rtr_take(rx);
		rmsg_ep_wait(rx->ep, 10);
	}
	if (ret < 0)
		return ret;
	return (size_t)ret == len && !memcmp(rpr_in, rpr_out, len) ? 0 : -EIO;
}

/*
 * A QP error forced through @s's channel @k (the link's QP), once the
 * channel is OPEN (the last round's repair may still be under way): 0 or
 * the fault's error.
 */
static int rtr_fault(struct rtr_side *s, int k)
{
	long deadline = rmsg_now_ms() + 60000 * rmsg_test_slow();
	/* Endpoint 0: the caller's own. */
	struct rmsg_fault f = {
		.kind = RMSG_FAULT_QP_ERROR,
		.channel = s->ch[k],
	};
	int ret;

	for (;;) {
		ret = ioctl(rmsg_ep_fd(s->ep), RMSG_IOC_FAULT, &f) ? -errno : 0;
		if (ret != -ENOTCONN || rmsg_now_ms() >= deadline)
			return ret;
		rtr_take(s);
		usleep(5000);
	}
}

/*
 * Until both sides' sends of @rounds rounds all completed (@b's bursts
 * too): 0 or -ETIMEDOUT.
 */
static int rtr_all_done(struct rtr_side *a, struct rtr_side *b, int rounds)
{
	long deadline = rmsg_now_ms() + 60000 * rmsg_test_slow();
	long want = (long)rounds * RTR_CHANS;

	do {
		rtr_take(a);
		rtr_take(b);
		if (a->done >= want && b->done >= want * (RTR_BURST + 1))
			return 0;
		rmsg_ep_wait(a->ep, 10);
	} while (rmsg_now_ms() < deadline);
	return -ETIMEDOUT;
}

/*
 * Rendezvous transfers both ways on channels of a link, each round broken
 * by a QP error forced through one of them (the link's QP: its connection
 * ends, and every channel is repaired with it): in even rounds on b's
 * side just before a burst of small messages of b's (those written
 * before its channels noticed are written again by the repair; the
 * others wait for it); in odd ones, a's side and b's in turn, just after
 * a transfer was read, while its FIN may be on the wire. Every message arrives once, in
 * order, byte for byte, and every send completes: the queue a rewrite
 * fills is given back, and a FIN the peer's transport acknowledged
 * reaches its channel even when the receive's completion is handled
 * after the connection's first failed one (the sender does not send it
 * again).
 */
TEST_F_TIMEOUT(links, rendezvous_through_link_repairs, 900)
{
	struct rtr_side sa = { .ep = self->a }, sb = { .ep = self->b };
	struct rmsg_link_info link;
	int fd = rmsg_ep_fd(self->a);
	int r, k, i, hit;

	if (unordered_skip(_metadata, self->ordered))
		return;
	ASSERT_EQ(0, open_link(self->a, self->b, &self->addr, &link));
	for (k = 0; k < RTR_CHANS; k++)
		ASSERT_EQ(0, lib_channel(self->a, self->b, &self->addr,
					 &sa.ch[k], &sb.ch[k]));
	ASSERT_EQ(0, wait_link_chans(fd, &link, RTR_CHANS, 10000));
	for (r = 0; r < RTR_ROUNDS; r++) {
		struct rtr_side *faulty = r % 4 < 2 ? &sb : &sa;

		hit = r % RTR_CHANS;
		/*
		 * b's QP in error before its burst: what it writes until its
		 * channels notice is flushed, and written again after.
		 */
		if (r % 2 == 0)
			ASSERT_EQ(0, rtr_fault(&sb, hit));
		for (k = 0; k < RTR_CHANS; k++) {
			for (i = 0; i <= RTR_BURST; i++)
				ASSERT_EQ(0, rtr_send(&sb, &sa, r, k, 0, i));
			ASSERT_EQ(0, rtr_send(&sa, &sb, r, k, 1, RTR_BURST));
		}
		for (k = 0; k < RTR_CHANS; k++) {
			for (i = 0; i <= RTR_BURST; i++)
				ASSERT_EQ(0, rtr_recv(&sa, &sb, r, k, 0, i)) {
					TH_LOG("round %d, channel %d, message %d to a",
					       r, k, i);
				}
			ASSERT_EQ(0, rtr_recv(&sb, &sa, r, k, 1, RTR_BURST)) {
				TH_LOG("round %d, channel %d, to b", r, k);
			}
			if (r % 2 && k == hit)
				ASSERT_EQ(0, rtr_fault(faulty, k));
		}
		ASSERT_EQ(0, rtr_all_done(&sa, &sb, r + 1)) {
			TH_LOG("round %d: sends completed %ld and %ld", r,
			       sa.done, sb.done);
		}
		EXPECT_EQ(0, sa.failed);
		EXPECT_EQ(0, sb.failed);
	}
	/* Every channel repaired at both ends (the last repair may still
	 * be under way), and still on the link.
	 */
	EXPECT_EQ(0, wait_repaired(self->a, sa.ch, self->b, sb.ch, RTR_CHANS,
				   30000));
	EXPECT_EQ(0, wait_link_chans(fd, &link, RTR_CHANS, 30000));
}

/*
 * The CLOSED events of @ep's @n channels @ids, in any order, within @ms:
 * 0 with their results in @res, or -ETIMEDOUT.
 */
static int closed_all(struct rmsg_ep *ep, const __u32 *ids, int *res, int n,
		      int ms)
{
	long deadline = rmsg_now_ms() + ms * rmsg_test_slow();
	struct rmsg_event ev;
	int i, left = n;

	while (left && rmsg_now_ms() < deadline) {
		if (rmsg_lib_event(ep, RMSG_CQE_CLOSED, &ev, 1000))
			continue;
		for (i = 0; i < n; i++)
			if (ev.channel == ids[i]) {
				res[i] = ev.res;
				left--;
			}
	}
	return left ? -ETIMEDOUT : 0;
}

/*
 * A channel closed by its accepting side while the link is repaired:
 * its end there tells nobody (the link is down) and leaves the link, so
 * the dialling side's RECONNECT finds no channel and is refused, and
 * that side ends too (ECONNRESET, or 0 had the close come after the
 * repair), well before the repair's deadline (repair_timeout_ms, 30 s:
 * ETIMEDOUT would say the refusal was lost). The link's other channel is
 * repaired and carries messages both ways.
 */
TEST_F_TIMEOUT(links, channel_closed_during_link_repair, 300)
{
	int fd = rmsg_ep_fd(self->a);
	struct rmsg_link_info link;
	struct rmsg_fault f = { .kind = RMSG_FAULT_QP_ERROR };
	__u32 a[2], b[2];
	int k, res = 1;

	if (unordered_skip(_metadata, self->ordered))
		return;
	ASSERT_EQ(0, open_link(self->a, self->b, &self->addr, &link));
	for (k = 0; k < 2; k++)
		ASSERT_EQ(0, lib_channel(self->a, self->b, &self->addr,
					 &a[k], &b[k]));
	ASSERT_EQ(0, wait_link_chans(fd, &link, 2, 10000));
	f.channel = b[1];
	ASSERT_EQ(0, ioctl(rmsg_ep_fd(self->b), RMSG_IOC_FAULT, &f));
	ASSERT_EQ(0, rmsg_chan_close(self->a, a[0], 0));
	ASSERT_EQ(0, closed_all(self->b, &b[0], &res, 1, 20000));
	EXPECT_TRUE(res == 0 || res == -ECONNRESET) {
		TH_LOG("the dialling side ended with %d", res);
	}
	ASSERT_EQ(0, closed_all(self->a, &a[0], &res, 1, 20000));
	EXPECT_EQ(0, link_echo(self->b, b[1], self->a, a[1], 5, 900,
			       EVENT_TIMEOUT_MS));
	EXPECT_EQ(0, link_echo(self->a, a[1], self->b, b[1], 6,
			       RPR_RNDV_LEN, EVENT_TIMEOUT_MS));
	EXPECT_EQ(1, all_repaired(self->a, &a[1], 1));
	EXPECT_EQ(1, all_repaired(self->b, &b[1], 1));
	EXPECT_EQ(0, wait_link_chans(fd, &link, 1, 10000));
}

/*
 * rxe0 removed under channels on the link: they cannot follow the
 * carrier to another device (their memory is registered in its PD), so
 * both ends of each end, with an error, within the removal (not at the
 * repair's deadline), and none stays on the link; once rxe0 is back the
 * link is repaired and takes a new channel, which carries messages.
 */
TEST_F_TIMEOUT(links, channels_end_when_the_link_leaves_its_device, 300)
{
	const char *netdev = getenv("RMSG_NETDEV");
	int fd = rmsg_ep_fd(self->a);
	struct rmsg_link_info link;
	__u32 a[2], b[2], a0, b0;
	int k, res[4] = { 0 };

	if (!netdev)
		SKIP(return, "RMSG_NETDEV not set: not run by rmsg-vm");
	if (unordered_skip(_metadata, self->ordered))
		return;
	ASSERT_EQ(0, open_link(self->a, self->b, &self->addr, &link));
	for (k = 0; k < 2; k++)
		ASSERT_EQ(0, lib_channel(self->a, self->b, &self->addr,
					 &a[k], &b[k]));
	ASSERT_EQ(0, wait_link_chans(fd, &link, 2, 10000));
	ASSERT_EQ(0, rmsg_sh("rdma link delete rxe0"));
	/* Both ends of both, in whatever order their CLOSED events come. */
	EXPECT_EQ(0, closed_all(self->a, a, res, 2, 20000));
	EXPECT_EQ(0, closed_all(self->b, b, res + 2, 2, 20000));
	for (k = 0; k < 4; k++) {
		EXPECT_NE(0, res[k]);
		EXPECT_NE(-ETIMEDOUT, res[k]);
	}
	usleep(500000);
	ASSERT_EQ(0, rmsg_sh("rdma link add rxe0 type rxe netdev %s", netdev));
	ASSERT_EQ(0, wait_link_open(fd, &link, 60000));
	EXPECT_EQ(0, wait_link_chans(fd, &link, 0, 10000));
	ASSERT_EQ(0, lib_channel(self->a, self->b, &self->addr, &a0, &b0));
	EXPECT_EQ(0, link_echo(self->b, b0, self->a, a0, 7, 300,
			       EVENT_TIMEOUT_MS));
	EXPECT_EQ(0, wait_link_chans(fd, &link, 1, 10000));
}

/* --- arrival summaries of channels on a link ----------------------------- */

#define SUM_CHANS	8
/*
 * Channels put on the link before the summary endpoints' own, so that a
 * channel's link id (taken in turn on each carrier, from 1) is not its
 * endpoint id (the lowest free, from 0): a hint written by the one lands
 * elsewhere than the other.
 */
#define SUM_SHIFT	5
/* A byte of the summary, which the kernels write as the test reads. */
#define SUM(sum, i)	__atomic_load_n(&(sum)[i], __ATOMIC_RELAXED)

static int open_summary_ep(struct rmsg_ep **ep)
{
	struct rmsg_ep_setup p = {
		.sq_entries = 256,
		.cq_entries = 2048,
		.flags = RMSG_EP_F_SUMMARY,
		.send_area_size = RMSG_LIB_SEND_AREA,
	};

	return rmsg_ep_open_setup(ep, &p);
}

/* The endpoint's arrival summary, mapped a second time: NULL on failure. */
static unsigned char *map_summary(struct rmsg_ep *ep)
{
	void *p = mmap(NULL, RMSG_SUMMARY_SIZE, PROT_READ | PROT_WRITE,
		       MAP_SHARED, rmsg_ep_fd(ep), (off_t)RMSG_OFF_SUMMARY);

	return p == MAP_FAILED ? NULL : p;
}

/*
 * The summary @sum marks exactly the channels @ids (@n of them): their
 * channel bytes and their groups' set, every other byte clear. Return: -1
 * when so, else the first byte that is not as it should be.
 */
static long summary_marks(const unsigned char *sum, const __u32 *ids, int n)
{
	long g;
	int i;

	for (g = 0; g < RMSG_SUMMARY_SIZE; g++) {
		bool want = false;

		for (i = 0; i < n; i++)
			want |= g == RMSG_SUMMARY_CHANNEL(ids[i]) ||
				g == RMSG_SUMMARY_GROUP(ids[i]);
		if (want != (SUM(sum, g) != 0))
			return g;
	}
	return -1;
}

/* Message @i of the summary test: its length and its bytes in @buf. */
static size_t sum_msg(unsigned char *buf, int i, unsigned char tag)
{
	size_t len = 40 + 97 * i, k;

	for (k = 0; k < len; k++)
		buf[k] = (unsigned char)(tag + i * 31 + k * 7);
	return len;
}

/*
 * One message from each of @tx's @n channels @ct (message i on the i-th),
 * every one's send completed: 0 or an error. Nothing of the receiving
 * endpoint's is read or waited on, so its summary is as the peer wrote it.
 */
static int sum_send_all(struct rmsg_ep *tx, const __u32 *ct, int n,
			unsigned char tag)
{
	unsigned char buf[2048];
	struct rmsg_event ev;
	int i, ret;

	for (i = 0; i < n; i++) {
		ret = rmsg_msg_send(tx, ct[i], buf, sum_msg(buf, i, tag),
				    RMSG_SEND_COPY, tag + i);
		if (ret)
			return ret;
	}
	for (i = 0; i < n; i++) {
		ret = rmsg_lib_event(tx, RMSG_CQE_OP, &ev,
				     EVENT_TIMEOUT_MS * rmsg_test_slow());
		if (ret)
			return ret;
		if (ev.res)
			return ev.res;
	}
	/* The hints follow the records on the link's QP: let them land. */
	usleep(300000 * rmsg_test_slow());
	return 0;
}

/*
 * Read the @n messages with rmsg_msg_peek_any() alone, all marked by the
 * summary, so that each call finds one (an unmarked channel is found only
 * by the look at one channel in 16 empty calls): each of @ids once, its
 * bytes checked. Return: 0, or which step failed.
 */
static int sum_read_all(struct rmsg_ep *rx, const __u32 *ids, int n,
			unsigned char tag)
{
	unsigned char want[2048];
	bool seen[SUM_CHANS] = { false };
	struct rmsg_msg msg;
	int i, j, ret;

	for (i = 0; i < n; i++) {
		ret = rmsg_msg_peek_any(rx, &msg);
		if (ret)
			return 100 + i;
		for (j = 0; j < n && ids[j] != msg.channel; j++)
			;
		if (j == n || seen[j])
			return 200 + i;
		seen[j] = true;
		if (msg.len != sum_msg(want, j, tag) ||
		    memcmp(msg.data, want, msg.len))
			return 300 + j;
		if (rmsg_msg_release(rx, &msg))
			return 400 + j;
	}
	return rmsg_msg_peek_any(rx, &msg) == -EAGAIN ? 0 : 500;
}

/*
 * Endpoints with an arrival summary (RMSG_EP_F_SUMMARY) whose channels
 * are on the link: the peer's kernel marks, after each burst, the byte of
 * the receiving endpoint's id of the channel and of its group, as on a
 * direct connection, nothing else; rmsg_msg_peek_any() then finds every
 * message at once, both ways (the accepting side, and the dialling side,
 * which learns the peer's id from the ACCEPT). The ids differ from the
 * link ids here (SUM_SHIFT channels on the link first): a hint written at
 * a link id marks another channel, or none.
 */
TEST_F_TIMEOUT(links, summary_endpoint_on_the_link, 300)
{
	int fd = rmsg_ep_fd(self->a);
	struct sockaddr_in sa = self->addr;
	__u32 a[SUM_SHIFT], b[SUM_SHIFT], s[SUM_CHANS], t[SUM_CHANS];
	unsigned char *sum_s, *sum_t;
	struct rmsg_link_info link;
	struct rmsg_ep *se = NULL, *te = NULL;
	struct rmsg_msg msg;
	long bad;
	int i;

	if (unordered_skip(_metadata, self->ordered))
		return;
	ASSERT_EQ(0, open_link(self->a, self->b, &self->addr, &link));
	for (i = 0; i < SUM_SHIFT; i++)
		ASSERT_EQ(0, lib_channel(self->a, self->b, &self->addr, &a[i],
					 &b[i]));
	ASSERT_EQ(0, wait_link_chans(fd, &link, SUM_SHIFT, 10000));

	ASSERT_EQ(0, open_summary_ep(&se));
	ASSERT_EQ(0, open_summary_ep(&te));
	sa.sin_port = htons(ntohs(self->addr.sin_port) + 3);
	ASSERT_EQ(0, rmsg_ep_listen(se, (struct sockaddr *)&sa, sizeof(sa),
				    0x5e, 0));
	for (i = 0; i < SUM_CHANS; i++)
		ASSERT_EQ(0, lib_channel(se, te, &sa, &s[i], &t[i]))
			TH_LOG("channel %d", i);
	ASSERT_EQ(0, wait_link_chans(fd, &link, SUM_SHIFT + SUM_CHANS, 10000))
		TH_LOG("%u channels on the link", link.channels);
	sum_s = map_summary(se);
	sum_t = map_summary(te);
	ASSERT_NE(NULL, sum_s);
	ASSERT_NE(NULL, sum_t);
	/* The opens marked the channels in the library: look once, empty. */
	EXPECT_EQ(-EAGAIN, rmsg_msg_peek_any(se, &msg));
	EXPECT_EQ(-EAGAIN, rmsg_msg_peek_any(te, &msg));
	EXPECT_EQ(-1, summary_marks(sum_s, s, 0));
	EXPECT_EQ(-1, summary_marks(sum_t, t, 0));

	/* To the accepting side. */
	ASSERT_EQ(0, sum_send_all(te, t, SUM_CHANS, 0x11));
	bad = summary_marks(sum_s, s, SUM_CHANS);
	EXPECT_EQ(-1, bad) TH_LOG("summary byte %ld is %u", bad,
				  bad < 0 ? 0 : SUM(sum_s, bad));
	EXPECT_EQ(0, sum_read_all(se, s, SUM_CHANS, 0x11));

	/* To the dialling side. */
	ASSERT_EQ(0, sum_send_all(se, s, SUM_CHANS, 0x77));
	bad = summary_marks(sum_t, t, SUM_CHANS);
	EXPECT_EQ(-1, bad) TH_LOG("summary byte %ld is %u", bad,
				  bad < 0 ? 0 : SUM(sum_t, bad));
	EXPECT_EQ(0, sum_read_all(te, t, SUM_CHANS, 0x77));

	/* They were on the link, which was never repaired for them. */
	ASSERT_EQ(0, link_now(fd, &link));
	EXPECT_EQ(SUM_SHIFT + SUM_CHANS, link.channels);
	EXPECT_EQ(0, chan_repairs(fd, link.ep_id, link.channel));
	munmap(sum_s, RMSG_SUMMARY_SIZE);
	munmap(sum_t, RMSG_SUMMARY_SIZE);
	rmsg_ep_drop(&te);
	rmsg_ep_drop(&se);
}

/* --- what a program may do to a link ------------------------------------- */

/*
 * As nobody, with @fd (an endpoint of root's, inherited): a QP error on
 * its channel @on_link is refused, since the QP is the carrier's and its
 * error would end every channel on the link, of every user; the same
 * call reaches the channel otherwise (DISCONNECT: EOPNOTSUPP on a link),
 * and a QP error on its direct channel @direct, a QP of its own, is
 * taken. The exit status says which step failed.
 */
static int fault_child(int fd, __u32 on_link, __u32 direct)
{
	struct rmsg_fault f = {
		.kind = RMSG_FAULT_QP_ERROR,
		.channel = on_link,
	};

	if (rmsg_become_nobody())
		return 1;
	if (!ioctl(fd, RMSG_IOC_FAULT, &f))
		return 2;
	if (errno != EPERM)
		return 3;
	f.kind = RMSG_FAULT_DISCONNECT;
	if (!ioctl(fd, RMSG_IOC_FAULT, &f) || errno != EOPNOTSUPP)
		return 4;
	f.kind = RMSG_FAULT_QP_ERROR;
	f.channel = direct;
	if (ioctl(fd, RMSG_IOC_FAULT, &f))
		return 5;
	return 0;
}

/*
 * RMSG_FAULT_QP_ERROR on a channel on a link needs CAP_NET_ADMIN (its QP
 * is the link's): an unprivileged user gets EPERM, and the link, the
 * channel on it and the link's other channels go on, never repaired; the
 * user's direct channel, which it may break, is repaired.
 */
TEST_F_TIMEOUT(links, qp_error_on_a_link_needs_admin, 240)
{
	int fd = rmsg_ep_fd(self->a);
	struct rmsg_link_info link;
	__u32 a0, b0, a1, b1;
	pid_t pid;

	if (unordered_skip(_metadata, self->ordered))
		return;
	ASSERT_EQ(0, rmsg_write_param("link_port", LINK_PORT));
	ASSERT_EQ(0, rmsg_ep_listen(self->a, (struct sockaddr *)&self->addr,
				    sizeof(self->addr), 0xa0, 0));
	/* The first channel brings the link; it is a direct one. */
	ASSERT_EQ(0, lib_channel(self->a, self->b, &self->addr, &a0, &b0));
	ASSERT_EQ(0, wait_link_open(fd, &link, 10000));
	ASSERT_EQ(0, lib_channel(self->a, self->b, &self->addr, &a1, &b1));
	ASSERT_EQ(0, wait_link_chans(fd, &link, 1, 10000));
	ASSERT_EQ(0, link_echo(self->b, b1, self->a, a1, 0x21, 700,
			       EVENT_TIMEOUT_MS));

	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid)
		_exit(fault_child(rmsg_ep_fd(self->b), b1, b0));
	EXPECT_EQ(0, rmsg_child_status(pid));

	/* The link was not broken: open, the channel still on it, carrying. */
	usleep(500000);
	ASSERT_EQ(0, link_now(fd, &link));
	EXPECT_EQ(RMSG_CHAN_INFO_OPEN, link.state);
	EXPECT_EQ(0, chan_repairs(fd, link.ep_id, link.channel));
	EXPECT_EQ(1, link.channels);
	EXPECT_EQ(0, link_echo(self->b, b1, self->a, a1, 0x22, 900,
			       EVENT_TIMEOUT_MS));
	EXPECT_EQ(0, link_echo(self->a, a1, self->b, b1, 0x23, 1100,
			       EVENT_TIMEOUT_MS));
	/* The direct channel the child broke is repaired, and carries. */
	EXPECT_EQ(0, rmsg_echo(self->b, b0, self->a, a0, 0x24, 300,
			       60000 * rmsg_test_slow()));
}

/*
 * A flood of HELLO CONNECTs: FLOOD_PROCS processes dial FLOOD_EACH
 * channels each at once through the link, to one listener, so that more
 * than RMSG_CARRIER_ACCEPTS (64) wait for the accepting side's work at a
 * time. Those past the 64 are refused EBUSY (the accepting carrier counts
 * them, accepts_refused); every dial ends opened or EBUSY, and the link
 * stays up, never repaired, and takes a channel afterwards.
 */
#define FLOOD_PROCS	6
#define FLOOD_EACH	30
#define FLOOD_FAIL	200	/* exit statuses from here: a step failed */

/* One flooding process: the number of its dials refused EBUSY. */
static int flood_child(const struct sockaddr_in *to, int slot)
{
	struct rmsg_event ev;
	struct rmsg_ep *ep;
	int i, busy = 0, opened = 0;

	if (rmsg_ep_open(&ep, 256, 1024))
		return FLOOD_FAIL;
	for (i = 0; i < FLOOD_EACH; i++)
		if (rmsg_chan_connect(ep, (const struct sockaddr *)to,
				      sizeof(*to), 0xf000 + slot, 0) < 0)
			return FLOOD_FAIL + 1;
	for (i = 0; i < FLOOD_EACH; i++) {
		if (rmsg_lib_event(ep, RMSG_CQE_CONNECTED, &ev,
				   60000 * rmsg_test_slow()))
			return FLOOD_FAIL + 2;
		if (!ev.res)
			opened++;
		else if (ev.res == -EBUSY)
			busy++;
		else
			return FLOOD_FAIL + 3;
	}
	if (opened + busy != FLOOD_EACH)
		return FLOOD_FAIL + 4;
	/* Its channels close with the endpoint, as the process exits. */
	return busy;
}

TEST_F_TIMEOUT(links, connect_flood_is_refused_busy, 600)
{
	int fd = rmsg_ep_fd(self->a);
	struct sockaddr_in to = self->addr;
	struct rmsg_link_info link;
	struct rmsg_ep *fl = NULL;
	pid_t pid[FLOOD_PROCS];
	int i, st, busy = 0, bad = 0;
	__u64 refused;
	__u32 a0, b0;

	if (unordered_skip(_metadata, self->ordered))
		return;
	ASSERT_EQ(0, open_link(self->a, self->b, &self->addr, &link));
	refused = link.refused_received;
	/* A listener of its own, whose events nobody reads meanwhile. */
	ASSERT_EQ(0, rmsg_ep_open(&fl, 64, 4096));
	to.sin_port = htons(ntohs(self->addr.sin_port) + 5);
	ASSERT_EQ(0, rmsg_ep_listen(fl, (struct sockaddr *)&to, sizeof(to),
				    0xf1, 0));
	for (i = 0; i < FLOOD_PROCS; i++) {
		pid[i] = fork();
		ASSERT_LE(0, pid[i]);
		if (!pid[i])
			_exit(flood_child(&to, i));
	}
	for (i = 0; i < FLOOD_PROCS; i++) {
		st = rmsg_child_status(pid[i]);
		if (st < 0 || st >= FLOOD_FAIL) {
			TH_LOG("flooding process %d: status %d", i, st);
			bad++;
		} else {
			busy += st;
		}
	}
	EXPECT_EQ(0, bad);
	ksft_print_msg("%d of %d dials refused EBUSY\n", busy,
		       FLOOD_PROCS * FLOOD_EACH);

	/* Every refusal came back over the link; the link stayed up. */
	ASSERT_EQ(0, link_now(fd, &link));
	EXPECT_EQ(refused + busy, link.refused_received);
	EXPECT_EQ(RMSG_CHAN_INFO_OPEN, link.state);
	EXPECT_EQ(0, chan_repairs(fd, link.ep_id, link.channel));
	EXPECT_EQ(0, link.dropped);
	/* The flood's channels ended with their processes. */
	EXPECT_EQ(0, wait_link_chans(fd, &link, 0, 60000))
		TH_LOG("%u channels left on the link", link.channels);
	ASSERT_EQ(0, lib_channel(self->a, self->b, &self->addr, &a0, &b0));
	EXPECT_EQ(0, wait_link_chans(fd, &link, 1, 10000));
	EXPECT_EQ(0, link_echo(self->b, b0, self->a, a0, 0x3c, 500,
			       EVENT_TIMEOUT_MS));
	rmsg_ep_drop(&fl);
	/*
	 * The accepting side's work kept up: never more than 64 waited. The
	 * rest held, but the limit was not reached: say so, not pass.
	 */
	if (!busy && !bad && _metadata->passed)
		SKIP(return, "the accepting side kept up with %d dials: the 64 were never all taken",
		     FLOOD_PROCS * FLOOD_EACH);
}

/*
 * Not here: a peer that never answers a CLOSE on a link (the 30 s after
 * which the carrier's connection is ended, and the bound after that).
 * No fault makes a peer kernel keep its CLOSE (RMSG_FAULT_* has none),
 * and in the loopback guest the peer is this kernel, which answers.
 */

/* Only ports a kernel binds: 1024 and above are refused. */
/* Channels of many_channels_close_at_once: more than a queue's workers. */
#define LINK_MANY	1024

/*
 * @n channels from @b to @a's listener, up to 64 dials at a time, their
 * ids in @ib: 0, or the first error (an event's, or -ETIMEDOUT).
 */
static int many_channels(struct rmsg_ep *a, struct rmsg_ep *b,
			 const struct sockaddr_in *addr, __u32 *ib, int n)
{
	long deadline = rmsg_now_ms() + 120000L * rmsg_test_slow();
	int issued = 0, connected = 0, accepted = 0, i, got, id;
	struct rmsg_event ev[64];

	while (connected < n || accepted < n) {
		while (issued < n && issued - connected < 64) {
			id = rmsg_chan_connect(b, (const struct sockaddr *)addr,
					       sizeof(*addr), issued, 0);
			if (id < 0)
				return id;
			ib[issued++] = id;
		}
		got = rmsg_ep_progress(b, ev, 64);
		for (i = 0; i < got; i++, connected++)
			if (ev[i].kind != RMSG_CQE_CONNECTED || ev[i].res)
				return ev[i].res ?: -EPROTO;
		got = rmsg_ep_progress(a, ev, 64);
		for (i = 0; i < got; i++, accepted++)
			if (ev[i].kind != RMSG_CQE_ACCEPTED || ev[i].res)
				return ev[i].res ?: -EPROTO;
		if (rmsg_now_ms() > deadline)
			return -ETIMEDOUT;
		rmsg_ep_wait(b, 1);
	}
	return 0;
}

/*
 * The CLOSED events of @n channels of @ep: how many said 0; a channel
 * that ends otherwise is logged. Stops at the first quiet EVENT_TIMEOUT_MS.
 */
static int closed_orderly(struct __test_metadata *_metadata,
			  struct rmsg_ep *ep, const char *side, int n)
{
	int i, orderly = 0;
	struct rmsg_event ev;

	for (i = 0; i < n; i++) {
		if (rmsg_lib_event(ep, RMSG_CQE_CLOSED, &ev, EVENT_TIMEOUT_MS))
			break;
		if (ev.res)
			TH_LOG("channel %u of %s ended %d", ev.channel, side,
			       ev.res);
		else
			orderly++;
	}
	return orderly;
}

/*
 * LINK_MANY channels on the link, closed at once from one side: each end
 * waits for the peer's CLOSE, which the peer's teardown sends, both on
 * this host's one teardown queue. A teardown that held its worker while
 * it waited took the workers the peer's ends needed: the link's
 * connection was ended after RMSG_CARRIER_CLOSE_MS (30 s) and every
 * channel still on it ended ECONNRESET. Now every one ends orderly, on
 * both sides, well within that, and the link is never repaired.
 */
TEST_F_TIMEOUT(links, many_channels_close_at_once, 900)
{
	int fd = rmsg_ep_fd(self->a);
	struct rmsg_ep *a = NULL, *b = NULL;
	struct sockaddr_in to = self->addr;
	struct rmsg_link_info link;
	long start, took;
	__u32 *ib;
	int i;

	if (unordered_skip(_metadata, self->ordered))
		return;
	ASSERT_EQ(0, open_link(self->a, self->b, &self->addr, &link));
	ASSERT_EQ(0, rmsg_ep_open(&a, 64, 4 * LINK_MANY));
	ASSERT_EQ(0, rmsg_ep_open(&b, 64, 4 * LINK_MANY));
	ib = calloc(LINK_MANY, sizeof(*ib));
	ASSERT_NE(NULL, ib);
	/* A listener of their own: the fixture's listens on port 0. */
	to.sin_port = htons(0xa1a1);
	ASSERT_EQ(0, rmsg_ep_listen(a, (const struct sockaddr *)&to,
				    sizeof(to), 0xa1, 0));
	ASSERT_EQ(0, many_channels(a, b, &to, ib, LINK_MANY));
	ASSERT_EQ(0, wait_link_chans(fd, &link, LINK_MANY, 20000))
		TH_LOG("%u channels on the link", link.channels);

	start = rmsg_now_ms();
	for (i = 0; i < LINK_MANY; i++)
		ASSERT_EQ(0, rmsg_chan_close(b, ib[i], 0));
	EXPECT_EQ(LINK_MANY, closed_orderly(_metadata, b, "b", LINK_MANY));
	EXPECT_EQ(LINK_MANY, closed_orderly(_metadata, a, "a", LINK_MANY));
	took = rmsg_now_ms() - start;
	TH_LOG("%d channels closed in %ld ms", LINK_MANY, took);
	EXPECT_EQ(0, wait_link_chans(fd, &link, 0, 20000))
		TH_LOG("%u channels left on the link", link.channels);
	EXPECT_EQ(RMSG_CHAN_INFO_OPEN, link.state);
	EXPECT_EQ(0, chan_repairs(fd, link.ep_id, link.channel));
	free(ib);
	rmsg_ep_drop(&a);
	rmsg_ep_drop(&b);
}

TEST_F(links, link_port_below_1024)
{
	EXPECT_EQ(-EIO, rmsg_write_param("link_port", "1024"));
	EXPECT_EQ(0, rmsg_write_param("link_port", LINK_PORT));
	EXPECT_EQ(0, rmsg_write_param("link_port", "0"));
}

int main(int argc, char **argv)
{
	return rmsg_test_main(argc, argv);
}
