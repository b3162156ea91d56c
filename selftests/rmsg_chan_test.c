// SPDX-License-Identifier: GPL-2.0
/*
 * Channels: listening, connecting, accepting and closing over the kernel
 * rdma_cm on Soft-RoCE, and what the program hears of it on its completion
 * ring. Both endpoints live in this process and talk over the guest's rxe
 * device (loopback topology).
 */
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/mman.h>

#include <pthread.h>
#include <sys/ioctl.h>

#include "kselftest_harness.h"
#include "rmsg_test.h"

#define EVENT_TIMEOUT_MS	20000

/* The next event must be of @kind; returns its CQE through @out. */
#define EXPECT_EVENT(ep, kind, out) do { \
	ASSERT_EQ(0, rmsg_next_cqe(ep, out, EVENT_TIMEOUT_MS)) \
		TH_LOG("no event %d", kind); \
	ASSERT_EQ(kind, RMSG_CQE_KIND((out)->flags)) \
		TH_LOG("res %d channel %u", (out)->res, (out)->channel); \
} while (0)

FIXTURE(chan) {
	struct rmsg_ep *a;	/* listens */
	struct rmsg_ep *b;	/* connects */
	struct sockaddr_in addr;
	bool opened;
};

FIXTURE_SETUP(chan)
{
	if (!rmsg_local_addr(&self->addr, 0))
		SKIP(rmsg_setup_skipped(_metadata); return,
		     "RMSG_LOCAL_ADDR not set: not run by rmsg-vm");
	ASSERT_EQ(0, rmsg_ep_open(&self->a, 64, 1024));
	ASSERT_EQ(0, rmsg_ep_open(&self->b, 64, 1024));
	self->opened = true;
	ASSERT_EQ(0, rmsg_ep_listen(self->a, (struct sockaddr *)&self->addr,
				    sizeof(self->addr), 0xa0, 0));
	ASSERT_NE(0, self->addr.sin_port);
}

#define REPAIR_TIMEOUT	"/sys/module/rmsg/parameters/repair_timeout_ms"
#define SAVED_REPAIR_TIMEOUT	"/tmp/rmsg_chan_test.repair_timeout_ms"

FIXTURE_TEARDOWN(chan)
{
	const char *netdev = getenv("RMSG_NETDEV");

	if (self->opened) {
		rmsg_ep_drop(&self->a);
		rmsg_ep_drop(&self->b);
	}
	if (netdev && rmsg_sh("rdma link show rxe0/1 >/dev/null 2>&1"))
		rmsg_sh("rdma link add rxe0 type rxe netdev %s", netdev);
	/* What device_removed_under_channels changed, even if it failed. */
	rmsg_sh("[ ! -e %s ] || { cat %s >%s && rm %s; }", SAVED_REPAIR_TIMEOUT,
		SAVED_REPAIR_TIMEOUT, REPAIR_TIMEOUT, SAVED_REPAIR_TIMEOUT);
}

struct pair {
	struct rmsg_ep *a, *b;
	struct sockaddr_in *addr;
};

#define PAIR(f) (&(struct pair){ (f)->a, (f)->b, &(f)->addr })

/* Connect one channel from b to a; returns b's id, a's id in *peer. */
static int open_channel(struct __test_metadata *_metadata,
			const struct pair *self, u_int64_t user_data,
			unsigned int *peer)
{
	struct rmsg_cqe cqe;
	int id;

	id = rmsg_chan_connect(self->b, (struct sockaddr *)self->addr,
			       sizeof(*self->addr), user_data, 0);
	EXPECT_LE(0, id);
	if (id < 0)
		return id;
	EXPECT_EQ(0, rmsg_next_cqe(self->b, &cqe, EVENT_TIMEOUT_MS));
	EXPECT_EQ(RMSG_CQE_CONNECTED, RMSG_CQE_KIND(cqe.flags));
	EXPECT_EQ(0, cqe.res);
	EXPECT_EQ(id, cqe.channel);
	EXPECT_EQ(user_data, cqe.user_data);
	EXPECT_EQ(0, rmsg_next_cqe(self->a, &cqe, EVENT_TIMEOUT_MS));
	EXPECT_EQ(RMSG_CQE_ACCEPTED, RMSG_CQE_KIND(cqe.flags));
	EXPECT_EQ(0, cqe.res);
	EXPECT_EQ(0xa0, cqe.user_data);
	*peer = cqe.channel;
	return id;
}

TEST_F_TIMEOUT(chan, connect_accept_close, 120)
{
	struct rmsg_cqe cqe;
	unsigned int peer;
	int id;

	id = open_channel(_metadata, PAIR(self), 0xb1, &peer);
	ASSERT_LE(0, id);
	ASSERT_EQ(0, rmsg_chan_close(self->b, id, 0));
	EXPECT_EVENT(self->b, RMSG_CQE_CLOSED, &cqe);
	EXPECT_EQ(0, cqe.res);
	EXPECT_EQ(id, cqe.channel);
	EXPECT_EQ(0xb1, cqe.user_data);
	EXPECT_EVENT(self->a, RMSG_CQE_CLOSED, &cqe);
	EXPECT_EQ(0, cqe.res) TH_LOG("the peer's orderly close is not an error");
	EXPECT_EQ(peer, cqe.channel);
	EXPECT_EQ(0xa0, cqe.user_data);
	/* Each side heard exactly what it should, nothing more. */
	EXPECT_EQ(-ETIMEDOUT, rmsg_next_cqe(self->a, &cqe, 300));
	EXPECT_EQ(-ETIMEDOUT, rmsg_next_cqe(self->b, &cqe, 300));
}

static bool all_zero(const unsigned char *p, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (p[i])
			return false;
	return true;
}

/* A listener that asks: each request waits for the program's answer. */
static int asking_listener(struct __test_metadata *_metadata,
			   struct rmsg_ep **c, struct sockaddr_in *addr)
{
	if (!rmsg_local_addr(addr, 0))
		return -EINVAL;
	EXPECT_EQ(0, rmsg_ep_open(c, 64, 1024));
	return rmsg_ep_listen_flags(*c, (struct sockaddr *)addr, sizeof(*addr),
				    0xc0, 0, RMSG_LISTEN_F_ACCEPT);
}

/*
 * Each end's local address is the other's peer address, port included; the
 * connecting side's peer is the listener's address. Before its connection
 * a channel has none; no such channel, or reserved bits set, are errors.
 */
TEST_F_TIMEOUT(chan, addresses, 120)
{
	struct sockaddr_storage a_local, a_peer, b_local, b_peer;
	struct sockaddr_in *al = (struct sockaddr_in *)&a_local;
	struct sockaddr_in *ap = (struct sockaddr_in *)&a_peer;
	struct sockaddr_in *bl = (struct sockaddr_in *)&b_local;
	struct sockaddr_in *bp = (struct sockaddr_in *)&b_peer;
	struct rmsg_chan_addr req;
	struct sockaddr_in caddr;
	struct rmsg_cqe cqe;
	unsigned int peer;
	struct rmsg_ep *c = NULL;
	int id;

	/*
	 * Not connected yet, however fast the host: a request that a
	 * listener which asks has not answered holds the connect back.
	 */
	ASSERT_EQ(0, asking_listener(_metadata, &c, &caddr));
	id = rmsg_chan_connect(self->b, (struct sockaddr *)&caddr,
			       sizeof(caddr), 0xb3, 0);
	ASSERT_LE(0, id);
	EXPECT_EVENT(c, RMSG_CQE_REQUEST, &cqe);
	EXPECT_EQ(-ENOTCONN, rmsg_chan_addr(self->b, id, &b_local, &b_peer));
	rmsg_ep_drop(&c);
	EXPECT_EVENT(self->b, RMSG_CQE_CONNECTED, &cqe);
	EXPECT_GT(0, cqe.res);

	id = rmsg_chan_connect(self->b, (struct sockaddr *)&self->addr,
			       sizeof(self->addr), 0xb3, 0);
	ASSERT_LE(0, id);
	ASSERT_EQ(0, rmsg_next_cqe(self->b, &cqe, EVENT_TIMEOUT_MS));
	ASSERT_EQ(RMSG_CQE_CONNECTED, RMSG_CQE_KIND(cqe.flags));
	ASSERT_EQ(0, cqe.res);
	ASSERT_EQ(0, rmsg_next_cqe(self->a, &cqe, EVENT_TIMEOUT_MS));
	ASSERT_EQ(RMSG_CQE_ACCEPTED, RMSG_CQE_KIND(cqe.flags));
	peer = cqe.channel;

	memset(&a_local, 0xee, sizeof(a_local));
	memset(&b_peer, 0xee, sizeof(b_peer));
	ASSERT_EQ(0, rmsg_chan_addr(self->b, id, &b_local, &b_peer));
	ASSERT_EQ(0, rmsg_chan_addr(self->a, peer, &a_local, &a_peer));
	EXPECT_EQ(AF_INET, al->sin_family);
	EXPECT_EQ(AF_INET, bl->sin_family);
	EXPECT_EQ(AF_INET, ap->sin_family);
	EXPECT_EQ(AF_INET, bp->sin_family);
	EXPECT_EQ(self->addr.sin_addr.s_addr, bp->sin_addr.s_addr);
	EXPECT_EQ(self->addr.sin_port, bp->sin_port);
	EXPECT_EQ(self->addr.sin_addr.s_addr, al->sin_addr.s_addr);
	EXPECT_EQ(self->addr.sin_port, al->sin_port);
	EXPECT_EQ(bl->sin_addr.s_addr, ap->sin_addr.s_addr);
	EXPECT_EQ(bl->sin_port, ap->sin_port);
	EXPECT_NE(0, bl->sin_port);
	/* The kernel fills the whole storage: nothing of ours is left. */
	EXPECT_TRUE(all_zero((unsigned char *)&a_local + sizeof(*al),
			     sizeof(a_local) - sizeof(*al)));
	EXPECT_TRUE(all_zero((unsigned char *)&b_peer + sizeof(*bp),
			     sizeof(b_peer) - sizeof(*bp)));
	/* Either pointer may be NULL. */
	EXPECT_EQ(0, rmsg_chan_addr(self->a, peer, NULL, NULL));

	EXPECT_EQ(-ENOENT, rmsg_chan_addr(self->a, RMSG_MAX_CHANNELS - 1,
					  NULL, NULL));
	memset(&req, 0, sizeof(req));
	req.channel = peer;
	req.flags = 1;
	EXPECT_EQ(-1, ioctl(rmsg_ep_fd(self->a), RMSG_IOC_CHAN_ADDR, &req));
	EXPECT_EQ(EINVAL, errno);
	req.flags = 0;
	req.resv = 1;
	EXPECT_EQ(-1, ioctl(rmsg_ep_fd(self->a), RMSG_IOC_CHAN_ADDR, &req));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, ioctl(rmsg_ep_fd(self->a), RMSG_IOC_CHAN_ADDR, NULL));
	EXPECT_EQ(EFAULT, errno);

	ASSERT_EQ(0, rmsg_chan_close(self->b, id, 0));
	EXPECT_EVENT(self->b, RMSG_CQE_CLOSED, &cqe);
	EXPECT_EVENT(self->a, RMSG_CQE_CLOSED, &cqe);
}

/* A connect from a named source address: the node's, or refused at once. */
TEST_F_TIMEOUT(chan, source_address, 120)
{
	struct sockaddr_in src = self->addr, away = self->addr;
	struct sockaddr_storage local;
	struct rmsg_connect conn;
	struct rmsg_cqe cqe;

	src.sin_port = 0;
	memset(&conn, 0, sizeof(conn));
	conn.addr = (uintptr_t)&self->addr;
	conn.addr_len = sizeof(self->addr);
	conn.src_addr = (uintptr_t)&src;
	conn.src_addr_len = sizeof(src);
	conn.user_data = 0xb4;
	ASSERT_EQ(0, ioctl(rmsg_ep_fd(self->b), RMSG_IOC_CONNECT, &conn));
	ASSERT_EQ(0, rmsg_next_cqe(self->b, &cqe, EVENT_TIMEOUT_MS));
	ASSERT_EQ(RMSG_CQE_CONNECTED, RMSG_CQE_KIND(cqe.flags));
	ASSERT_EQ(0, cqe.res);
	ASSERT_EQ(0, rmsg_chan_addr(self->b, conn.channel, &local, NULL));
	EXPECT_EQ(src.sin_addr.s_addr,
		  ((struct sockaddr_in *)&local)->sin_addr.s_addr);
	EXPECT_EVENT(self->a, RMSG_CQE_ACCEPTED, &cqe);
	ASSERT_EQ(0, rmsg_chan_close(self->b, conn.channel, 0));
	EXPECT_EVENT(self->b, RMSG_CQE_CLOSED, &cqe);
	EXPECT_EVENT(self->a, RMSG_CQE_CLOSED, &cqe);

	/* TEST-NET-1 (RFC 5737) is no address of this node. */
	away.sin_port = 0;
	away.sin_addr.s_addr = htonl(0xc0000201);
	conn.src_addr = (uintptr_t)&away;
	conn.channel = 0;
	EXPECT_EQ(-1, ioctl(rmsg_ep_fd(self->b), RMSG_IOC_CONNECT, &conn));
	EXPECT_TRUE(errno == EADDRNOTAVAIL || errno == ENODEV)
		TH_LOG("errno %d (%s)", errno, strerror(errno));
	/* Refused at once: no channel, no event. */
	EXPECT_EQ(-ETIMEDOUT, rmsg_next_cqe(self->b, &cqe, 300));
}

TEST_F_TIMEOUT(chan, close_by_acceptor, 120)
{
	struct rmsg_cqe cqe;
	unsigned int peer;
	int id;

	id = open_channel(_metadata, PAIR(self), 0xb2, &peer);
	ASSERT_LE(0, id);
	ASSERT_EQ(0, rmsg_chan_close(self->a, peer, 0));
	EXPECT_EVENT(self->a, RMSG_CQE_CLOSED, &cqe);
	EXPECT_EQ(0, cqe.res);
	EXPECT_EVENT(self->b, RMSG_CQE_CLOSED, &cqe);
	EXPECT_EQ(0, cqe.res);
	EXPECT_EQ(id, cqe.channel);
	/* Closing again: the channel is gone, or going. */
	EXPECT_GT(0, rmsg_chan_close(self->a, peer, 0));
}

/* Wait until @ep has an event to read, without reading it. */
static bool event_waiting(struct rmsg_ep *ep, int timeout_ms)
{
	long deadline = rmsg_now_ms() + timeout_ms;
	struct pollfd pfd = { .fd = rmsg_ep_fd(ep), .events = POLLIN };

	while (!rmsg_cq_peek(ep)) {
		if (rmsg_now_ms() >= deadline)
			return false;
		poll(&pfd, 1, 20);
	}
	return true;
}

#define QUARANTINE	64	/* the module's RMSG_ID_QUARANTINE */

/*
 * A channel that ended keeps its id from the next channels until
 * QUARANTINE more have ended: a program that closes it before it reads
 * the end gets -ENOENT, not the close of a channel dialled meanwhile.
 * The ids come back after that, so the ids stay few.
 */
TEST_F_TIMEOUT(chan, ended_ids_are_held_back, 300)
{
	int ended[QUARANTINE + 8], id, again, i, k, max_id = 0;
	struct rmsg_cqe cqe;
	unsigned int peer;

	id = open_channel(_metadata, PAIR(self), 0xb5, &peer);
	ASSERT_LE(0, id);
	ASSERT_EQ(0, rmsg_chan_close(self->a, peer, 0));
	EXPECT_EVENT(self->a, RMSG_CQE_CLOSED, &cqe);
	/* b's channel has ended; b has not read it yet. */
	ASSERT_TRUE(event_waiting(self->b, EVENT_TIMEOUT_MS));
	again = rmsg_chan_connect(self->b, (struct sockaddr *)&self->addr,
				  sizeof(self->addr), 0xb6, 0);
	ASSERT_LE(0, again);
	EXPECT_NE(id, again) TH_LOG("the ended channel's id came back at once");
	EXPECT_EQ(-ENOENT, rmsg_chan_close(self->b, id, 0));
	EXPECT_EVENT(self->b, RMSG_CQE_CLOSED, &cqe);
	EXPECT_EQ(id, cqe.channel);
	EXPECT_EQ(0xb5, cqe.user_data);
	EXPECT_EVENT(self->b, RMSG_CQE_CONNECTED, &cqe);
	EXPECT_EQ(0, cqe.res) TH_LOG("the close of the old id reached it");
	EXPECT_EQ(again, cqe.channel);
	EXPECT_EVENT(self->a, RMSG_CQE_ACCEPTED, &cqe);
	ASSERT_EQ(0, rmsg_chan_close(self->b, again, 0));
	EXPECT_EVENT(self->b, RMSG_CQE_CLOSED, &cqe);
	EXPECT_EVENT(self->a, RMSG_CQE_CLOSED, &cqe);
	ended[0] = id;
	ended[1] = again;

	/* One channel at a time: none takes an id of the last 64 ended. */
	for (i = 2; i < QUARANTINE + 8; i++) {
		id = open_channel(_metadata, PAIR(self), 0xc00 + i, &peer);
		ASSERT_LE(0, id);
		for (k = i > QUARANTINE ? i - QUARANTINE : 0; k < i; k++)
			ASSERT_NE(ended[k], id)
				TH_LOG("channel %d took the id of the %d-th before it",
				       i, i - k);
		if (id > max_id)
			max_id = id;
		ASSERT_EQ(0, rmsg_chan_close(self->b, id, 0));
		EXPECT_EVENT(self->b, RMSG_CQE_CLOSED, &cqe);
		EXPECT_EVENT(self->a, RMSG_CQE_CLOSED, &cqe);
		ended[i] = id;
	}
	/*
	 * Then the oldest come back: the 65th end frees the first id, which
	 * the 66th channel takes; no more ids than ends held back, and one.
	 */
	EXPECT_GE(QUARANTINE, max_id) TH_LOG("ids up to %d", max_id);
	EXPECT_EQ(ended[0], ended[QUARANTINE + 1])
		TH_LOG("the first id held back was not the first given again");
}

/* An abort does not tell the peer: it sees a reset, not a close. */
TEST_F_TIMEOUT(chan, abort_is_a_reset_for_the_peer, 120)
{
	struct rmsg_cqe cqe;
	unsigned int peer;
	int id;

	id = open_channel(_metadata, PAIR(self), 0xb3, &peer);
	ASSERT_LE(0, id);
	ASSERT_EQ(0, rmsg_chan_close(self->b, id, RMSG_CLOSE_ABORT));
	EXPECT_EVENT(self->b, RMSG_CQE_CLOSED, &cqe);
	EXPECT_EQ(0, cqe.res);
	EXPECT_EVENT(self->a, RMSG_CQE_CLOSED, &cqe);
	EXPECT_GT(0, cqe.res);
	TH_LOG("peer saw %d (%s)", cqe.res, strerror(-cqe.res));
}

/* No listener on the port: the connect fails, reported once. */
TEST_F_TIMEOUT(chan, connect_refused, 120)
{
	struct sockaddr_in none = self->addr;
	struct rmsg_cqe cqe;
	int id;

	none.sin_port = htons(ntohs(self->addr.sin_port) + 1);
	id = rmsg_chan_connect(self->b, (struct sockaddr *)&none, sizeof(none),
			       0xb4, 0);
	ASSERT_LE(0, id);
	EXPECT_EVENT(self->b, RMSG_CQE_CONNECTED, &cqe);
	EXPECT_EQ(-ECONNREFUSED, cqe.res) TH_LOG("res %d", cqe.res);
	EXPECT_EQ(id, cqe.channel);
	EXPECT_EQ(-ETIMEDOUT, rmsg_next_cqe(self->a, &cqe, 300));
	/* The id names nothing (it is held back, not another channel's). */
	EXPECT_EQ(-ENOENT, rmsg_chan_close(self->b, id, 0));
}

/* An address nobody answers for: the connect fails, it does not hang. */
TEST_F_TIMEOUT(chan, connect_unreachable, 120)
{
	struct sockaddr_in nobody;
	struct rmsg_cqe cqe;
	int id;

	ASSERT_TRUE(rmsg_local_addr(&nobody, 4791));
	nobody.sin_addr.s_addr = htonl(ntohl(nobody.sin_addr.s_addr) + 98);
	id = rmsg_chan_connect(self->b, (struct sockaddr *)&nobody,
			       sizeof(nobody), 0xb5, 0);
	if (id < 0) {
		/* Refused at once is as good as refused later. */
		EXPECT_TRUE(id == -EHOSTUNREACH || id == -ENETUNREACH ||
			    id == -EADDRNOTAVAIL) TH_LOG("%d", id);
		return;
	}
	EXPECT_EVENT(self->b, RMSG_CQE_CONNECTED, &cqe);
	EXPECT_GT(0, cqe.res);
	TH_LOG("unreachable: %d (%s)", cqe.res, strerror(-cqe.res));
}

/*
 * An address with no RDMA device behind it: listening there is refused,
 * not a listener that could never hear a request. A wildcard address is
 * every device's, those to come included.
 */
TEST(listen_needs_an_rdma_address)
{
	struct sockaddr_in lo = { .sin_family = AF_INET,
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	struct sockaddr_in any = { .sin_family = AF_INET };
	struct rmsg_ep *ep;

	if (!getenv("RMSG_LOCAL_ADDR"))
		SKIP(return, "RMSG_LOCAL_ADDR not set: not run by rmsg-vm");
	ASSERT_EQ(0, rmsg_ep_open(&ep, 8, 16));
	EXPECT_EQ(-EADDRNOTAVAIL,
		  rmsg_ep_listen(ep, (struct sockaddr *)&lo, sizeof(lo), 0, 0));
	/* Nothing was kept of the refused one. */
	EXPECT_EQ(0, rmsg_ep_listen(ep, (struct sockaddr *)&any, sizeof(any),
				    0, 0));
	rmsg_ep_close(ep);
}

TEST_F_TIMEOUT(chan, explicit_accept, 120)
{
	struct sockaddr_in addr;
	struct rmsg_cqe cqe;
	struct rmsg_ep *c = NULL;
	unsigned int req;
	int id;

	ASSERT_EQ(0, asking_listener(_metadata, &c, &addr));
	id = rmsg_chan_connect(self->b, (struct sockaddr *)&addr, sizeof(addr),
			       0xb6, 16384);
	ASSERT_LE(0, id);
	EXPECT_EVENT(c, RMSG_CQE_REQUEST, &cqe);
	EXPECT_EQ(0, cqe.res);
	EXPECT_EQ(0xc0, cqe.user_data);
	EXPECT_EQ(16384, cqe.len) TH_LOG("the peer's block size");
	req = cqe.channel;
	/* Nothing opens until the program says so. */
	EXPECT_EQ(-ETIMEDOUT, rmsg_next_cqe(self->b, &cqe, 1000));
	EXPECT_EQ(-EINVAL, rmsg_chan_accept(c, req, 0, 2));
	EXPECT_EQ(-ENOENT, rmsg_chan_accept(c, req + 1000, 0, 0));
	ASSERT_EQ(0, rmsg_chan_accept(c, req, 0xacc, 0));
	EXPECT_EQ(-EINVAL, rmsg_chan_accept(c, req, 0xacc, 0))
		TH_LOG("answered already");
	EXPECT_EVENT(self->b, RMSG_CQE_CONNECTED, &cqe);
	EXPECT_EQ(0, cqe.res);
	EXPECT_EQ(id, cqe.channel);
	EXPECT_EVENT(c, RMSG_CQE_ACCEPTED, &cqe);
	EXPECT_EQ(0, cqe.res);
	EXPECT_EQ(req, cqe.channel);
	EXPECT_EQ(0xacc, cqe.user_data) TH_LOG("the accept's user_data");
	ASSERT_EQ(0, rmsg_chan_close(self->b, id, 0));
	EXPECT_EVENT(c, RMSG_CQE_CLOSED, &cqe);
	EXPECT_EQ(0xacc, cqe.user_data);
	EXPECT_EVENT(self->b, RMSG_CQE_CLOSED, &cqe);
	rmsg_ep_drop(&c);
}

TEST_F_TIMEOUT(chan, explicit_reject, 120)
{
	struct sockaddr_in addr;
	struct rmsg_cqe cqe;
	struct rmsg_ep *c = NULL;
	int id, i;

	ASSERT_EQ(0, asking_listener(_metadata, &c, &addr));
	/* Refused by the answer, then by a close before any answer. */
	for (i = 0; i < 2; i++) {
		id = rmsg_chan_connect(self->b, (struct sockaddr *)&addr,
				       sizeof(addr), 0xb7, 0);
		ASSERT_LE(0, id);
		EXPECT_EVENT(c, RMSG_CQE_REQUEST, &cqe);
		if (i == 0) {
			ASSERT_EQ(0, rmsg_chan_accept(c, cqe.channel, 0,
						      RMSG_ACCEPT_REJECT));
		} else {
			ASSERT_EQ(0, rmsg_chan_close(c, cqe.channel, 0));
		}
		EXPECT_EVENT(self->b, RMSG_CQE_CONNECTED, &cqe);
		EXPECT_EQ(-ECONNREFUSED, cqe.res) TH_LOG("res %d", cqe.res);
		EXPECT_EQ(id, cqe.channel);
		/* The refused channel leaves no event behind. */
		EXPECT_EQ(-ETIMEDOUT, rmsg_next_cqe(c, &cqe, 300));
	}
	/* A request nobody answers goes when the endpoint does. */
	id = rmsg_chan_connect(self->b, (struct sockaddr *)&addr, sizeof(addr),
			       0xb8, 0);
	ASSERT_LE(0, id);
	EXPECT_EVENT(c, RMSG_CQE_REQUEST, &cqe);
	rmsg_ep_drop(&c);
	EXPECT_EVENT(self->b, RMSG_CQE_CONNECTED, &cqe);
	EXPECT_GT(0, cqe.res);
}

/*
 * A connect timeout (struct rmsg_chan_opts) ends a connect that a listener
 * holds unanswered: CONNECTED with -ETIMEDOUT. The rdma_cm's own give-up
 * takes a minute of REQ retries; the bound here is 300 ms, so the event's
 * wait may be long under any load and still tell the two apart.
 */
TEST_F_TIMEOUT(chan, connect_timeout, 120)
{
	struct rmsg_chan_opts opts = { .connect_timeout_ms = 300 };
	struct rmsg_connect conn;
	struct sockaddr_in caddr;
	struct rmsg_version ver;
	struct rmsg_cqe cqe;
	struct rmsg_ep *c = NULL;

	ASSERT_EQ(0, rmsg_node_version(rmsg_ep_fd(self->b), &ver));
	if (!(ver.features & RMSG_FEAT_CONNECT_TIMEOUT))
		SKIP(return, "no RMSG_FEAT_CONNECT_TIMEOUT");
	ASSERT_EQ(0, asking_listener(_metadata, &c, &caddr));
	memset(&conn, 0, sizeof(conn));
	conn.addr = (uintptr_t)&caddr;
	conn.addr_len = sizeof(caddr);
	conn.user_data = 0xb9;
	conn.opts = (uintptr_t)&opts;
	ASSERT_EQ(0, ioctl(rmsg_ep_fd(self->b), RMSG_IOC_CONNECT, &conn));
	EXPECT_EVENT(c, RMSG_CQE_REQUEST, &cqe);
	EXPECT_EVENT(self->b, RMSG_CQE_CONNECTED, &cqe);
	EXPECT_EQ(-ETIMEDOUT, cqe.res);
	EXPECT_EQ(conn.channel, cqe.channel);
	EXPECT_EQ(0xb9, cqe.user_data);
	rmsg_ep_drop(&c);
}

TEST_F(chan, bad_arguments)
{
	struct rmsg_chan_opts opts = { 0 };
	struct sockaddr_in6 six = { .sin6_family = AF_INET6,
				    .sin6_addr = IN6ADDR_LOOPBACK_INIT };
	struct sockaddr_in sin = self->addr;
	struct rmsg_connect conn;
	struct rmsg_listen lis;
	struct rmsg_close cl;
	int fd;

	/* One listener per endpoint. */
	EXPECT_EQ(-EBUSY, rmsg_ep_listen(self->a, (struct sockaddr *)&sin,
					 sizeof(sin), 0, 0));
	EXPECT_EQ(-EFAULT, rmsg_chan_connect(self->b, NULL, sizeof(sin), 0, 0));
	EXPECT_EQ(-EINVAL, rmsg_chan_connect(self->b, (struct sockaddr *)&sin,
					     1, 0, 0));
	EXPECT_EQ(-EINVAL, rmsg_chan_connect(self->b, (struct sockaddr *)&sin,
					     4096, 0, 0));
	sin.sin_family = AF_UNIX;
	EXPECT_EQ(-EAFNOSUPPORT, rmsg_chan_connect(self->b,
						   (struct sockaddr *)&sin,
						 sizeof(sin), 0, 0));
	sin = self->addr;
	/* Receive blocks the Veloblock core would refuse. */
	EXPECT_EQ(-EINVAL, rmsg_chan_connect(self->b, (struct sockaddr *)&sin,
					     sizeof(sin), 0, 100));
	EXPECT_EQ(-EINVAL, rmsg_chan_connect(self->b, (struct sockaddr *)&sin,
					     sizeof(sin), 0, 4096 + 8));
	EXPECT_EQ(-EINVAL, rmsg_chan_connect(self->b, (struct sockaddr *)&sin,
					     sizeof(sin), 0, 1U << 30));

	memset(&conn, 0, sizeof(conn));
	conn.addr = (uintptr_t)&sin;
	conn.addr_len = sizeof(sin);
	conn.flags = 1;
	EXPECT_EQ(-1, ioctl(rmsg_ep_fd(self->b), RMSG_IOC_CONNECT, &conn));
	EXPECT_EQ(EINVAL, errno);
	conn.flags = 0;
	/* Settings: readable, and in range. */
	conn.opts = 8;
	EXPECT_EQ(-1, ioctl(rmsg_ep_fd(self->b), RMSG_IOC_CONNECT, &conn));
	EXPECT_EQ(EFAULT, errno);
	conn.opts = (uintptr_t)&opts;
	opts.heartbeat_ms = RMSG_OPT_MS_MAX + 1;
	EXPECT_EQ(-1, ioctl(rmsg_ep_fd(self->b), RMSG_IOC_CONNECT, &conn));
	EXPECT_EQ(EINVAL, errno);
	opts.heartbeat_ms = RMSG_OPT_HEARTBEAT_MIN_MS - 1;
	EXPECT_EQ(-1, ioctl(rmsg_ep_fd(self->b), RMSG_IOC_CONNECT, &conn));
	EXPECT_EQ(EINVAL, errno);
	opts.heartbeat_ms = 0;
	opts.resv = 1;
	EXPECT_EQ(-1, ioctl(rmsg_ep_fd(self->b), RMSG_IOC_CONNECT, &conn));
	EXPECT_EQ(EINVAL, errno);
	opts.resv = 0;
	opts.resv0 = 1;
	EXPECT_EQ(-1, ioctl(rmsg_ep_fd(self->b), RMSG_IOC_CONNECT, &conn));
	EXPECT_EQ(EINVAL, errno);
	opts.resv0 = 0;
	opts.connect_timeout_ms = RMSG_OPT_MS_MAX + 1;
	EXPECT_EQ(-1, ioctl(rmsg_ep_fd(self->b), RMSG_IOC_CONNECT, &conn));
	EXPECT_EQ(EINVAL, errno);
	conn.opts = 0;
	/* A source address: readable, whole, and of the peer's family. */
	conn.src_addr = 0;
	conn.src_addr_len = sizeof(sin);
	EXPECT_EQ(-1, ioctl(rmsg_ep_fd(self->b), RMSG_IOC_CONNECT, &conn));
	EXPECT_EQ(EFAULT, errno);
	conn.src_addr = (uintptr_t)&sin;
	conn.src_addr_len = 2;
	EXPECT_EQ(-1, ioctl(rmsg_ep_fd(self->b), RMSG_IOC_CONNECT, &conn));
	EXPECT_EQ(EINVAL, errno);
	conn.src_addr_len = 4096;
	EXPECT_EQ(-1, ioctl(rmsg_ep_fd(self->b), RMSG_IOC_CONNECT, &conn));
	EXPECT_EQ(EINVAL, errno);
	conn.src_addr = (uintptr_t)&six;
	conn.src_addr_len = sizeof(six);
	EXPECT_EQ(-1, ioctl(rmsg_ep_fd(self->b), RMSG_IOC_CONNECT, &conn));
	EXPECT_EQ(EINVAL, errno);

	memset(&cl, 0, sizeof(cl));
	cl.channel = 12345;
	EXPECT_EQ(-1, ioctl(rmsg_ep_fd(self->b), RMSG_IOC_CLOSE, &cl));
	EXPECT_EQ(ENOENT, errno);
	cl.flags = 2;
	EXPECT_EQ(-1, ioctl(rmsg_ep_fd(self->b), RMSG_IOC_CLOSE, &cl));
	EXPECT_EQ(EINVAL, errno);

	/* Without rings there is nowhere to report events. */
	fd = open(RMSG_DEVICE_PATH, O_RDWR);
	ASSERT_LE(0, fd);
	memset(&lis, 0, sizeof(lis));
	lis.addr = (uintptr_t)&sin;
	lis.addr_len = sizeof(sin);
	EXPECT_EQ(-1, ioctl(fd, RMSG_IOC_LISTEN, &lis));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, ioctl(fd, RMSG_IOC_CONNECT, &conn));
	EXPECT_EQ(EINVAL, errno);
	close(fd);
}

/* Connect from @b with a @block-byte block: the CONNECTED event's res. */
static int connect_block(struct __test_metadata *_metadata, struct rmsg_ep *b,
			 struct sockaddr_in *sin, __u32 block)
{
	struct rmsg_cqe cqe;
	int id;

	id = rmsg_chan_connect(b, (struct sockaddr *)sin, sizeof(*sin), block,
			       block);
	EXPECT_LE(0, id);
	if (id < 0)
		return id;
	EXPECT_EQ(0, rmsg_next_cqe(b, &cqe, EVENT_TIMEOUT_MS));
	EXPECT_EQ(RMSG_CQE_CONNECTED, RMSG_CQE_KIND(cqe.flags));
	EXPECT_EQ(id, cqe.channel);
	return cqe.res;
}

/*
 * The accepting side mirrors the connecting peer's block (the shadow): a
 * listener refuses a block larger than it allows, before allocating
 * anything for it. The module's default: 1 MiB, or the listener's own
 * block if larger; a listener's own limit (rmsg_listen.peer_block_max).
 */
TEST_F_TIMEOUT(chan, peer_block_limit, 180)
{
	struct sockaddr_in sin;
	struct rmsg_listen lis;
	struct rmsg_cqe cqe;
	struct rmsg_ep *c = NULL;

	EXPECT_GT(0, connect_block(_metadata, self->b, &self->addr, 2 << 20));
	EXPECT_EQ(-ETIMEDOUT, rmsg_next_cqe(self->a, &cqe, 500))
		TH_LOG("the refused request made event %u",
		       RMSG_CQE_KIND(cqe.flags));
	EXPECT_EQ(0, connect_block(_metadata, self->b, &self->addr, 1 << 20));
	EXPECT_EVENT(self->a, RMSG_CQE_ACCEPTED, &cqe);

	ASSERT_EQ(0, rmsg_ep_open(&c, 16, 64));
	ASSERT_TRUE(rmsg_local_addr(&sin, 0));
	memset(&lis, 0, sizeof(lis));
	lis.addr = (uintptr_t)&sin;
	lis.addr_len = sizeof(sin);
	lis.peer_block_max = 100;
	EXPECT_EQ(-1, ioctl(rmsg_ep_fd(c), RMSG_IOC_LISTEN, &lis));
	EXPECT_EQ(EINVAL, errno);
	lis.peer_block_max = 65536;
	lis.resv32 = 1;
	EXPECT_EQ(-1, ioctl(rmsg_ep_fd(c), RMSG_IOC_LISTEN, &lis));
	EXPECT_EQ(EINVAL, errno);
	lis.resv32 = 0;
	ASSERT_EQ(0, ioctl(rmsg_ep_fd(c), RMSG_IOC_LISTEN, &lis));
	EXPECT_GT(0, connect_block(_metadata, self->b, &sin, 131072));
	EXPECT_EQ(0, connect_block(_metadata, self->b, &sin, 65536));
	EXPECT_EVENT(c, RMSG_CQE_ACCEPTED, &cqe);
	EXPECT_EQ(-ETIMEDOUT, rmsg_next_cqe(c, &cqe, 300));
	rmsg_ep_drop(&c);
}

#define MANY 100

TEST_F_TIMEOUT(chan, many_channels, 300)
{
	static unsigned char seen_a[RMSG_MAX_CHANNELS], seen_b[MANY];
	struct rmsg_cqe cqe;
	int i, ids[MANY];

	memset(seen_a, 0, sizeof(seen_a));
	memset(seen_b, 0, sizeof(seen_b));
	for (i = 0; i < MANY; i++) {
		ids[i] = rmsg_chan_connect(self->b,
					   (struct sockaddr *)&self->addr,
					   sizeof(self->addr), 1000 + i, 0);
		ASSERT_LE(0, ids[i]);
	}
	for (i = 0; i < MANY; i++) {
		EXPECT_EVENT(self->b, RMSG_CQE_CONNECTED, &cqe);
		ASSERT_EQ(0, cqe.res) TH_LOG("channel %u", cqe.channel);
		ASSERT_LE(1000, cqe.user_data);
		ASSERT_GT(1000 + MANY, cqe.user_data);
		/* The event names the channel the user_data belongs to. */
		ASSERT_EQ(ids[cqe.user_data - 1000], cqe.channel);
		ASSERT_EQ(0, seen_b[cqe.user_data - 1000]++);
		EXPECT_EVENT(self->a, RMSG_CQE_ACCEPTED, &cqe);
		ASSERT_EQ(0, seen_a[cqe.channel]++);
	}
	for (i = 0; i < MANY; i++)
		ASSERT_EQ(0, rmsg_chan_close(self->b, ids[i], 0));
	for (i = 0; i < MANY; i++) {
		EXPECT_EVENT(self->b, RMSG_CQE_CLOSED, &cqe);
		EXPECT_EQ(0, cqe.res);
		EXPECT_EVENT(self->a, RMSG_CQE_CLOSED, &cqe);
		EXPECT_EQ(0, cqe.res);
		ASSERT_EQ(1, seen_a[cqe.channel]++);
	}
}

/* Events that find the completion ring full wait; none is lost. */
TEST_F_TIMEOUT(chan, events_wait_for_room, 300)
{
	struct rmsg_ep *small = NULL;
	struct sockaddr_in sin;
	struct rmsg_cqe cqe;
	unsigned char seen[64] = { 0 };
	int i, n = 40;

	ASSERT_EQ(0, rmsg_ep_open(&small, 8, 16));
	ASSERT_TRUE(rmsg_local_addr(&sin, 0));
	ASSERT_EQ(0, rmsg_ep_listen(small, (struct sockaddr *)&sin,
				    sizeof(sin), 0x5a, 0));
	for (i = 0; i < n; i++)
		ASSERT_LE(0, rmsg_chan_connect(self->b, (struct sockaddr *)&sin,
					       sizeof(sin), i, 0));
	/* All are open before the small endpoint reaps anything. */
	for (i = 0; i < n; i++) {
		EXPECT_EVENT(self->b, RMSG_CQE_CONNECTED, &cqe);
		ASSERT_EQ(0, cqe.res);
	}
	for (i = 0; i < n; i++) {
		EXPECT_EVENT(small, RMSG_CQE_ACCEPTED, &cqe);
		ASSERT_GT(64, cqe.channel);
		ASSERT_EQ(0, seen[cqe.channel]++);
	}
	EXPECT_EQ(-ETIMEDOUT, rmsg_next_cqe(small, &cqe, 300));
	rmsg_ep_drop(&small);
	/* Releasing the endpoint ends its channels: the peers hear it. */
	for (i = 0; i < n; i++) {
		EXPECT_EVENT(self->b, RMSG_CQE_CLOSED, &cqe);
		EXPECT_GT(0, cqe.res);
	}
}

/*
 * The receive block is the program's to read, never to write, and a mapping
 * stays readable after the channel is gone.
 */
TEST_F_TIMEOUT(chan, receive_block_mapping, 120)
{
	const size_t size = 32768;
	unsigned char *blk, *peer_blk;
	struct rmsg_cqe cqe;
	unsigned int peer;
	void *p;
	int id;

	id = open_channel(_metadata, PAIR(self), 0xd0, &peer);
	ASSERT_LE(0, id);

	blk = mmap(NULL, size, PROT_READ, MAP_SHARED, rmsg_ep_fd(self->b),
		   RMSG_OFF_BLOCK(id));
	ASSERT_NE(MAP_FAILED, blk) TH_LOG("%s", strerror(errno));
	peer_blk = mmap(NULL, size, PROT_READ, MAP_SHARED, rmsg_ep_fd(self->a),
			RMSG_OFF_BLOCK(peer));
	ASSERT_NE(MAP_FAILED, peer_blk);
	/* Nothing was sent yet: both blocks are as allocated, zero. */
	EXPECT_TRUE(all_zero(blk, size));
	EXPECT_TRUE(all_zero(peer_blk, size));

	/* Read-only, and it stays so. */
	EXPECT_EQ(MAP_FAILED, mmap(NULL, size, PROT_READ | PROT_WRITE,
				   MAP_SHARED, rmsg_ep_fd(self->b), RMSG_OFF_BLOCK(id)));
	EXPECT_EQ(EPERM, errno);
	EXPECT_EQ(-1, mprotect(blk, size, PROT_READ | PROT_WRITE));
	EXPECT_EQ(EACCES, errno);
	/* Shared only; no larger than the block; whole channel slots. */
	EXPECT_EQ(MAP_FAILED, mmap(NULL, size, PROT_READ, MAP_PRIVATE,
				   rmsg_ep_fd(self->b), RMSG_OFF_BLOCK(id)));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(MAP_FAILED, mmap(NULL, size + 4096, PROT_READ, MAP_SHARED,
				   rmsg_ep_fd(self->b), RMSG_OFF_BLOCK(id)));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(MAP_FAILED, mmap(NULL, 4096, PROT_READ, MAP_SHARED,
				   rmsg_ep_fd(self->b), RMSG_OFF_BLOCK(id) + 4096));
	EXPECT_EQ(EINVAL, errno);
	/* Another endpoint's channel ids are not this endpoint's. */
	EXPECT_EQ(MAP_FAILED, mmap(NULL, 4096, PROT_READ, MAP_SHARED,
				   rmsg_ep_fd(self->b), RMSG_OFF_BLOCK(id + 1000)));
	EXPECT_EQ(ENOENT, errno);
	/* A smaller mapping of the start is fine. */
	p = mmap(NULL, 4096, PROT_READ, MAP_SHARED, rmsg_ep_fd(self->b),
		 RMSG_OFF_BLOCK(id));
	ASSERT_NE(MAP_FAILED, p);
	EXPECT_EQ(0, munmap(p, 4096));

	ASSERT_EQ(0, rmsg_chan_close(self->b, id, 0));
	EXPECT_EVENT(self->b, RMSG_CQE_CLOSED, &cqe);
	EXPECT_EVENT(self->a, RMSG_CQE_CLOSED, &cqe);
	/* The channel is gone; its pages are not, while mapped. */
	EXPECT_TRUE(all_zero(blk, size));
	EXPECT_TRUE(all_zero(peer_blk, size));
	EXPECT_EQ(MAP_FAILED, mmap(NULL, size, PROT_READ, MAP_SHARED,
				   rmsg_ep_fd(self->b), RMSG_OFF_BLOCK(id)));
	EXPECT_EQ(ENOENT, errno);
	EXPECT_EQ(0, munmap(blk, size));
	EXPECT_EQ(0, munmap(peer_blk, size));
}

/*
 * A device removed under open channels, with repairs off
 * (repair_timeout_ms 0), ends them with ENODEV; nothing is left over.
 * With repairs on they wait for a device instead: rmsg_resil_test's
 * hca_* tests.
 */
TEST_F_TIMEOUT(chan, device_removed_under_channels, 120)
{
	unsigned int peer[3];
	struct rmsg_cqe cqe;
	int i;

	if (!getenv("RMSG_NETDEV"))
		SKIP(return, "RMSG_NETDEV not set: not run by rmsg-vm");
	for (i = 0; i < 3; i++)
		ASSERT_LE(0, open_channel(_metadata, PAIR(self), 0xc0 + i, &peer[i]));
	/*
	 * A module without repairs has no such parameter, and ends them. The
	 * teardown puts the value back.
	 */
	if (!access(REPAIR_TIMEOUT, F_OK))
		ASSERT_EQ(0, rmsg_sh("cat %s >%s && echo 0 >%s",
				     REPAIR_TIMEOUT, SAVED_REPAIR_TIMEOUT,
				     REPAIR_TIMEOUT));
	ASSERT_EQ(0, rmsg_sh("rdma link delete rxe0"));
	for (i = 0; i < 3; i++) {
		EXPECT_EVENT(self->a, RMSG_CQE_CLOSED, &cqe);
		EXPECT_EQ(-ENODEV, cqe.res);
		EXPECT_EVENT(self->b, RMSG_CQE_CLOSED, &cqe);
		EXPECT_EQ(-ENODEV, cqe.res);
	}
}

/*
 * Found by rmsg_abi_fuzz_test: a CLOSE of a channel id while the CONNECT
 * that made it was still setting it up queued its teardown, and the
 * CONNECT's failure path (an address with no route fails at once) freed
 * the channel under it (use after free in the workqueue). The CLOSE now
 * waits for the CONNECT; here one thread dials nowhere while another
 * closes the ids it gets.
 */
struct racer {
	int fd;
	bool stop;
	unsigned long closes;
};

static void *close_ids(void *arg)
{
	struct racer *r = arg;
	struct rmsg_close c = { 0 };

	while (!__atomic_load_n(&r->stop, __ATOMIC_RELAXED)) {
		c.channel = r->closes++ % 4;
		ioctl(r->fd, RMSG_IOC_CLOSE, &c);
	}
	return NULL;
}

TEST_F_TIMEOUT(chan, close_races_failing_connect, 120)
{
	struct sockaddr_in nowhere = { .sin_family = AF_INET,
				       .sin_port = htons(7) };
	struct rmsg_connect c = { 0 };
	struct racer r = { .fd = rmsg_ep_fd(self->b) };
	struct rmsg_cqe cqe;
	pthread_t t;
	int i, unreach = 0;

	nowhere.sin_addr.s_addr = htonl(0x01020304);
	ASSERT_EQ(0, pthread_create(&t, NULL, close_ids, &r));
	for (i = 0; i < 3000; i++) {
		memset(&c, 0, sizeof(c));
		c.addr = (uintptr_t)&nowhere;
		c.addr_len = sizeof(nowhere);
		if (ioctl(rmsg_ep_fd(self->b), RMSG_IOC_CONNECT, &c))
			unreach += errno == ENETUNREACH;
		while (rmsg_take_cqe(self->b, &cqe))
			;
	}
	__atomic_store_n(&r.stop, true, __ATOMIC_RELAXED);
	pthread_join(t, NULL);
	TH_LOG("%d connects failed at once, %lu closes", unreach, r.closes);
	EXPECT_LT(0, unreach);
}

int main(int argc, char **argv)
{
	return rmsg_test_main(argc, argv);
}
