// SPDX-License-Identifier: GPL-2.0
/*
 * Endpoints: setup of the submission and completion rings, their mapping,
 * NOP round trips, back-pressure, and what the kernel does with indices and
 * descriptors a program gets wrong.
 */
#include <arpa/inet.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <sys/epoll.h>
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

static int ep_setup(int fd, struct rmsg_ep_setup *p, __u32 sq, __u32 cq)
{
	memset(p, 0, sizeof(*p));
	p->sq_entries = sq;
	p->cq_entries = cq;
	return ioctl(fd, RMSG_IOC_EP_SETUP, p) ? -errno : 0;
}

static int raw_enter(int fd, __u32 to_submit, __u32 min_complete,
		     __u32 flags, __u32 *submitted)
{
	struct rmsg_enter e;

	memset(&e, 0, sizeof(e));
	e.to_submit = to_submit;
	e.min_complete = min_complete;
	e.flags = flags;
	if (ioctl(fd, RMSG_IOC_ENTER, &e))
		return -errno;
	if (submitted)
		*submitted = e.submitted;
	return 0;
}

/* Publish what is queued and have the kernel take it. */
static int submit_all(struct rmsg_ep *ep)
{
	unsigned int n = rmsg_sq_submit(ep);

	return n ? rmsg_ep_enter(ep, n, 0, 0) : 0;
}

FIXTURE(ring) {
	struct rmsg_ep *ep;
};

FIXTURE_SETUP(ring)
{
	int ret = rmsg_ep_open(&self->ep, 8, 16);

	ASSERT_EQ(0, ret) TH_LOG("rmsg_ep_open: %s", strerror(-ret));
}

FIXTURE_TEARDOWN(ring)
{
	rmsg_ep_drop(&self->ep);
}

TEST(version_announces_rings)
{
	struct rmsg_version ver;
	int fd = rmsg_node_open();

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, rmsg_node_version(fd, &ver));
	EXPECT_TRUE(ver.features & RMSG_FEAT_RINGS);
	EXPECT_TRUE(ver.features & RMSG_FEAT_DEV_LIST);
	close(fd);
}

TEST(setup_rejects_bad_arguments)
{
	struct rmsg_ep_setup p;
	unsigned int i;
	int fd = rmsg_node_open();

	ASSERT_LE(0, fd);
	EXPECT_EQ(-EINVAL, ep_setup(fd, &p, 0, 0));
	EXPECT_EQ(-EINVAL, ep_setup(fd, &p, 0, 16));
	EXPECT_EQ(-EINVAL, ep_setup(fd, &p, RMSG_MAX_RING_ENTRIES + 1, 0));
	EXPECT_EQ(-EINVAL, ep_setup(fd, &p, 0xffffffffU, 0));
	EXPECT_EQ(-EINVAL, ep_setup(fd, &p, 16, 8));
	EXPECT_EQ(-EINVAL, ep_setup(fd, &p, 16, 1));
	EXPECT_EQ(-EINVAL, ep_setup(fd, &p, 16, RMSG_MAX_CQ_ENTRIES + 1));
	EXPECT_EQ(-EINVAL, ep_setup(fd, &p, 16, 0x80000001U));

	memset(&p, 0, sizeof(p));
	p.sq_entries = 8;
	p.flags = 1U << 31;
	EXPECT_EQ(-1, ioctl(fd, RMSG_IOC_EP_SETUP, &p));
	EXPECT_EQ(EINVAL, errno);
	memset(&p, 0, sizeof(p));
	p.sq_entries = 8;
	p.sqpoll_idle_ms = 1U << 31;	/* without RMSG_EP_F_SQPOLL */
	EXPECT_EQ(-1, ioctl(fd, RMSG_IOC_EP_SETUP, &p));
	EXPECT_EQ(EINVAL, errno);
	for (i = 0; i < ARRAY_SIZE(p.resv); i++) {
		memset(&p, 0, sizeof(p));
		p.sq_entries = 8;
		p.resv[i] = 1;
		EXPECT_EQ(-1, ioctl(fd, RMSG_IOC_EP_SETUP, &p));
		EXPECT_EQ(EINVAL, errno);
	}
	EXPECT_EQ(-1, ioctl(fd, RMSG_IOC_EP_SETUP, NULL));
	EXPECT_EQ(EFAULT, errno);

	/* None of that set anything up: a good setup still works, once. */
	ASSERT_EQ(0, ep_setup(fd, &p, 8, 0));
	EXPECT_EQ(-EBUSY, ep_setup(fd, &p, 8, 0));
	EXPECT_EQ(-EBUSY, ep_setup(fd, &p, 16, 64));
	close(fd);
}

/*
 * A second EP_SETUP is refused with EBUSY and changes nothing: the send
 * area set up by the first stays the endpoint's. (It used to be freed by
 * the refusal's error path: the next mmap() of it failed, or, racing with
 * the refusal, mapped freed pages; found by the ABI fuzzer as a general
 * protection fault in vm_insert_pages().)
 */
TEST(second_setup_keeps_send_area)
{
	struct rmsg_ep_setup p = { .sq_entries = 8, .send_area_size = 65536 };
	int fd = rmsg_node_open();
	unsigned char *area;
	int i;

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, ioctl(fd, RMSG_IOC_EP_SETUP, &p));
	ASSERT_EQ(65536, p.send_area_size);
	for (i = 0; i < 3; i++) {
		struct rmsg_ep_setup again = { .sq_entries = 8,
					       .send_area_size = 4096 };

		EXPECT_EQ(-1, ioctl(fd, RMSG_IOC_EP_SETUP, &again));
		EXPECT_EQ(EBUSY, errno);
	}
	area = mmap(NULL, 65536, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		    RMSG_OFF_SEND_AREA);
	ASSERT_NE(MAP_FAILED, area) TH_LOG("mmap of the send area: %s",
					   strerror(errno));
	memset(area, 0x5a, 65536);
	EXPECT_EQ(0x5a, area[65535]);
	munmap(area, 65536);
	close(fd);
}

TEST(setup_rounds_and_reports_layout)
{
	static const struct { __u32 sq, cq, want_sq, want_cq; } cases[] = {
		{ 1, 0, 1, 2 },
		{ 5, 0, 8, 16 },
		{ 3, 5, 4, 8 },
		{ 6, 5, 8, 8 },
		{ 100, 1000, 128, 1024 },
		{ RMSG_MAX_RING_ENTRIES, 0, RMSG_MAX_RING_ENTRIES,
		  RMSG_MAX_CQ_ENTRIES },
		{ RMSG_MAX_RING_ENTRIES - 1, RMSG_MAX_CQ_ENTRIES - 1,
		  RMSG_MAX_RING_ENTRIES, RMSG_MAX_CQ_ENTRIES },
	};
	struct rmsg_ep_setup p;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		const struct rmsg_ring_offsets *o[2] = { &p.sq_off, &p.cq_off };
		__u64 size[2], dsize[2] = { sizeof(struct rmsg_sqe),
					    sizeof(struct rmsg_cqe) };
		__u32 n[2];
		int j, fd = rmsg_node_open();

		ASSERT_LE(0, fd);
		ASSERT_EQ(0, ep_setup(fd, &p, cases[i].sq, cases[i].cq))
			TH_LOG("case %u", i);
		EXPECT_EQ(cases[i].want_sq, p.sq_entries) TH_LOG("case %u", i);
		EXPECT_EQ(cases[i].want_cq, p.cq_entries) TH_LOG("case %u", i);
		EXPECT_TRUE(p.features & RMSG_FEAT_RINGS);
		n[0] = p.sq_entries;
		n[1] = p.cq_entries;
		size[0] = p.sq_mmap_size;
		size[1] = p.cq_mmap_size;
		for (j = 0; j < 2; j++) {
			/* Each word on its own cache line. */
			EXPECT_LE(64, o[j]->consumer > o[j]->producer ?
				  o[j]->consumer - o[j]->producer :
				  o[j]->producer - o[j]->consumer);
			EXPECT_LE(64, o[j]->flags > o[j]->consumer ?
				  o[j]->flags - o[j]->consumer :
				  o[j]->consumer - o[j]->flags);
			EXPECT_EQ(0, o[j]->producer % 64);
			EXPECT_EQ(0, o[j]->consumer % 64);
			EXPECT_EQ(0, o[j]->descs % 64);
			EXPECT_GE(o[j]->descs, o[j]->flags + 4);
			EXPECT_GE(size[j], o[j]->descs + n[j] * dsize[j]);
			EXPECT_EQ(0, size[j] % getpagesize());
			EXPECT_EQ(0, o[j]->resv[0] | o[j]->resv[1] |
				  o[j]->resv[2] | o[j]->resv[3]);
		}
		close(fd);
	}
}

TEST(mmap_rules)
{
	long pg = getpagesize();
	struct rmsg_ep_setup p;
	__u32 *prod, *flags, submitted = 0;
	struct rmsg_sqe *sqe;
	void *m, *sq;
	int rfd, fd = rmsg_node_open();

	ASSERT_LE(0, fd);
	/* Before setup there is nothing to map. */
	EXPECT_EQ(MAP_FAILED, mmap(NULL, pg, PROT_READ | PROT_WRITE,
				   MAP_SHARED, fd, RMSG_OFF_SQ_RING));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(MAP_FAILED, mmap(NULL, pg, PROT_READ | PROT_WRITE,
				   MAP_SHARED, fd, RMSG_OFF_CQ_RING));
	EXPECT_EQ(EINVAL, errno);

	ASSERT_EQ(0, ep_setup(fd, &p, 8, 16));
	/* Unknown offsets, and offsets inside a region. */
	EXPECT_EQ(MAP_FAILED, mmap(NULL, pg, PROT_READ, MAP_SHARED, fd,
				   0x4000000));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(MAP_FAILED, mmap(NULL, pg, PROT_READ, MAP_SHARED, fd, pg));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(MAP_FAILED, mmap(NULL, pg, PROT_READ, MAP_SHARED, fd,
				   RMSG_OFF_CQ_RING + pg));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(MAP_FAILED, mmap(NULL, pg, PROT_READ, MAP_SHARED, fd,
				   RMSG_OFF_CQ_RING - pg));
	EXPECT_EQ(EINVAL, errno);
	/* Larger than the region. */
	EXPECT_EQ(MAP_FAILED, mmap(NULL, p.sq_mmap_size + pg, PROT_READ,
				   MAP_SHARED, fd, RMSG_OFF_SQ_RING));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(MAP_FAILED, mmap(NULL, p.cq_mmap_size + pg, PROT_READ,
				   MAP_SHARED, fd, RMSG_OFF_CQ_RING));
	EXPECT_EQ(EINVAL, errno);
	/* Private copies of a ring make no sense. */
	EXPECT_EQ(MAP_FAILED, mmap(NULL, p.sq_mmap_size,
				   PROT_READ | PROT_WRITE, MAP_PRIVATE, fd,
				   RMSG_OFF_SQ_RING));
	EXPECT_EQ(EINVAL, errno);

	/* Exactly the region, or less of it, is fine. */
	m = mmap(NULL, p.sq_mmap_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		 RMSG_OFF_SQ_RING);
	ASSERT_NE(MAP_FAILED, m);
	flags = (__u32 *)((char *)m + p.sq_off.flags);
	/* No kernel poller: the kernel needs ENTER, always. */
	EXPECT_EQ(RMSG_SQ_NEED_WAKEUP, *flags);
	/* The mapping cannot grow past the region. */
	EXPECT_EQ(MAP_FAILED, mremap(m, p.sq_mmap_size, p.sq_mmap_size + pg,
				     0));
	EXPECT_EQ(0, munmap(m, p.sq_mmap_size));
	m = mmap(NULL, pg, PROT_READ, MAP_SHARED, fd, RMSG_OFF_CQ_RING);
	ASSERT_NE(MAP_FAILED, m);
	EXPECT_EQ(0, munmap(m, pg));

	/*
	 * Read-only mappings are allowed (to watch a ring): one shows the
	 * CQ producer the kernel moves.
	 */
	m = mmap(NULL, p.cq_mmap_size, PROT_READ, MAP_SHARED, fd,
		 RMSG_OFF_CQ_RING);
	ASSERT_NE(MAP_FAILED, m);
	prod = (__u32 *)((char *)m + p.cq_off.producer);
	EXPECT_EQ(0, *prod);
	sq = mmap(NULL, p.sq_mmap_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		  RMSG_OFF_SQ_RING);
	ASSERT_NE(MAP_FAILED, sq);
	sqe = (struct rmsg_sqe *)((char *)sq + p.sq_off.descs);
	memset(sqe, 0, sizeof(*sqe));
	sqe->user_data = 42;
	__atomic_store_n((__u32 *)((char *)sq + p.sq_off.producer), 1,
			 __ATOMIC_RELEASE);
	EXPECT_EQ(0, raw_enter(fd, 1, 0, 0, &submitted));
	EXPECT_EQ(1, submitted);
	EXPECT_EQ(1, __atomic_load_n(prod, __ATOMIC_ACQUIRE));
	EXPECT_EQ(42, ((struct rmsg_cqe *)((char *)m +
					   p.cq_off.descs))->user_data);
	munmap(sq, p.sq_mmap_size);
	munmap(m, p.cq_mmap_size);

	/* A read-only file can map read-only, not writable. */
	rfd = open(RMSG_DEVICE_PATH, O_RDONLY);
	ASSERT_LE(0, rfd);
	ASSERT_EQ(0, ep_setup(rfd, &p, 8, 16));
	m = mmap(NULL, p.cq_mmap_size, PROT_READ, MAP_SHARED, rfd,
		 RMSG_OFF_CQ_RING);
	EXPECT_NE(MAP_FAILED, m);
	if (m != MAP_FAILED)
		munmap(m, p.cq_mmap_size);
	EXPECT_EQ(MAP_FAILED, mmap(NULL, p.cq_mmap_size,
				   PROT_READ | PROT_WRITE, MAP_SHARED, rfd,
				   RMSG_OFF_CQ_RING));
	EXPECT_EQ(EACCES, errno);
	close(rfd);
	close(fd);
}

TEST(enter_rejects_bad_arguments)
{
	struct rmsg_enter e;
	struct rmsg_ep_setup p;
	unsigned int i;
	int fd = rmsg_node_open();

	ASSERT_LE(0, fd);
	/* Before setup. */
	EXPECT_EQ(-EINVAL, raw_enter(fd, 0, 0, 0, NULL));
	ASSERT_EQ(0, ep_setup(fd, &p, 8, 16));
	EXPECT_EQ(0, raw_enter(fd, 0, 0, 0, NULL));
	/* Lending with nothing pending returns at once. */
	EXPECT_EQ(0, raw_enter(fd, 0, 0, RMSG_ENTER_LEND, NULL));
	EXPECT_EQ(-EINVAL, raw_enter(fd, 0, 0, 1U << 2, NULL));
	EXPECT_EQ(-EINVAL, raw_enter(fd, 0, 0, 1U << 31, NULL));
	/* Waiting for more than the CQ can hold would never end. */
	EXPECT_EQ(-EINVAL, raw_enter(fd, 0, 17, RMSG_ENTER_GETEVENTS, NULL));
	memset(&e, 0, sizeof(e));
	e.resv0 = 1;
	EXPECT_EQ(-1, ioctl(fd, RMSG_IOC_ENTER, &e));
	EXPECT_EQ(EINVAL, errno);
	memset(&e, 0, sizeof(e));
	e.resv1 = 1;
	EXPECT_EQ(-1, ioctl(fd, RMSG_IOC_ENTER, &e));
	EXPECT_EQ(EINVAL, errno);
	for (i = 0; i < ARRAY_SIZE(e.resv); i++) {
		memset(&e, 0, sizeof(e));
		e.resv[i] = 1ULL << 40;
		EXPECT_EQ(-1, ioctl(fd, RMSG_IOC_ENTER, &e));
		EXPECT_EQ(EINVAL, errno);
	}
	/* Nothing published: nothing taken, whatever to_submit says. */
	EXPECT_EQ(0, raw_enter(fd, 0xffffffffU, 0, 0, &p.sq_entries));
	EXPECT_EQ(0, p.sq_entries);
	close(fd);
}

/* 100000 NOPs in batches of every size: indices wrap the ring often. */
TEST_F_TIMEOUT(ring, nop_round_trips, 120)
{
	struct rmsg_ep *ep = self->ep;
	unsigned int sent = 0, got = 0, batch = 1, i, n;
	const unsigned int total = 100000;
	struct rmsg_cqe *cqe;
	int ret;

	EXPECT_EQ(8, rmsg_ep_rings(ep)->sq.entries);
	EXPECT_EQ(16, rmsg_ep_rings(ep)->cq.entries);
	while (got < total) {
		for (i = 0; i < batch && sent < total; i++) {
			if (!rmsg_queue_nop(ep, ud(1, sent)))
				break;
			sent++;
		}
		ret = submit_all(ep);
		ASSERT_LE(0, ret) TH_LOG("enter: %s", strerror(-ret));
		n = rmsg_cq_ready(ep);
		ASSERT_LE(n, rmsg_ep_rings(ep)->cq.entries);
		for (i = 0; i < n; i++) {
			cqe = rmsg_cq_peek(ep);
			ASSERT_NE(NULL, cqe);
			ASSERT_EQ(ud(1, got), cqe->user_data)
				TH_LOG("completion %u", got);
			ASSERT_EQ(0, cqe->res);
			ASSERT_EQ(0, cqe->flags);
			ASSERT_EQ(0, cqe->channel);
			ASSERT_EQ(0, cqe->len | cqe->aux);
			rmsg_cq_advance(ep, 1);
			got++;
		}
		batch = batch % 11 + 1;
	}
	EXPECT_EQ(total, sent);
	EXPECT_EQ(NULL, rmsg_cq_peek(ep));
	/* The indices in the shared memory moved as far as we did. */
	EXPECT_EQ(total, __atomic_load_n(rmsg_ep_rings(ep)->sq.producer,
					 __ATOMIC_ACQUIRE));
	EXPECT_EQ(total, __atomic_load_n(rmsg_ep_rings(ep)->sq.consumer,
					 __ATOMIC_ACQUIRE));
	EXPECT_EQ(total, __atomic_load_n(rmsg_ep_rings(ep)->cq.producer,
					 __ATOMIC_ACQUIRE));
	EXPECT_EQ(total, __atomic_load_n(rmsg_ep_rings(ep)->cq.consumer,
					 __ATOMIC_ACQUIRE));
}

/*
 * Three CQs' worth of NOPs without reaping: the kernel stops taking SQEs
 * when the CQ is full instead of overwriting CQEs; nothing is lost.
 */
TEST_F(ring, cq_full_back_pressure)
{
	struct rmsg_ep *ep = self->ep;
	const unsigned int total = 3 * 16;
	unsigned char seen[3 * 16] = { 0 };
	unsigned int queued = 0, got = 0, i, n, rounds = 0;
	struct rmsg_cqe *cqe;
	int ret;

	/* Fill both rings without reaping. */
	while (queued < total && rmsg_queue_nop(ep, ud(2, queued)))
		queued++;
	for (;;) {
		ret = submit_all(ep);
		if (ret == -EBUSY)
			break;
		ASSERT_LT(0, ret) TH_LOG("enter: %s", strerror(-ret));
		while (queued < total && rmsg_queue_nop(ep, ud(2, queued)))
			queued++;
	}
	/* CQ full (16), SQ full (8) and nothing more fits. */
	EXPECT_EQ(16 + 8, queued);
	EXPECT_EQ(16, rmsg_cq_ready(ep));
	EXPECT_FALSE(rmsg_queue_nop(ep, 0));
	EXPECT_EQ(-EBUSY, rmsg_ep_enter(ep, 8, 0, 0));
	/* The full CQ holds the first 16, in order, untouched. */
	for (i = 0; i < 16; i++)
		EXPECT_EQ(ud(2, i),
			  ((struct rmsg_cqe *)rmsg_ep_rings(ep)->cq.descs)[i].user_data);

	while (got < total) {
		ASSERT_LT(++rounds, 1000);
		n = rmsg_cq_ready(ep);
		for (i = 0; i < n; i++) {
			cqe = rmsg_cq_peek(ep);
			ASSERT_NE(NULL, cqe);
			ASSERT_EQ(0, cqe->res);
			ASSERT_EQ(ud(2, got), cqe->user_data);
			seen[got]++;
			got++;
			rmsg_cq_advance(ep, 1);
		}
		while (queued < total && rmsg_queue_nop(ep, ud(2, queued)))
			queued++;
		ret = submit_all(ep);
		ASSERT_LE(0, ret) TH_LOG("enter: %s", strerror(-ret));
	}
	for (i = 0; i < total; i++)
		EXPECT_EQ(1, seen[i]) TH_LOG("user_data %u", i);
	EXPECT_EQ(0, rmsg_cq_ready(ep));
}

/* Run a few NOPs and reap them: the endpoint works. */
static int ring_works(struct rmsg_ep *ep, unsigned int stream, unsigned int n)
{
	unsigned int i;
	struct rmsg_cqe *cqe;
	int ret;

	for (i = 0; i < n; i++)
		if (!rmsg_queue_nop(ep, ud(stream, i)))
			return -ENOSPC;
	ret = submit_all(ep);
	if (ret != (int)n)
		return ret < 0 ? ret : -EIO;
	for (i = 0; i < n; i++) {
		cqe = rmsg_cq_peek(ep);
		if (!cqe || cqe->user_data != ud(stream, i) || cqe->res)
			return -EIO;
		rmsg_cq_advance(ep, 1);
	}
	return rmsg_cq_peek(ep) ? -EIO : 0;
}

TEST_F(ring, bad_sq_producer)
{
	struct rmsg_ep *ep = self->ep;
	__u32 good, cq_prod;

	ASSERT_EQ(0, ring_works(ep, 3, 5));
	good = *rmsg_ep_rings(ep)->sq.producer;
	cq_prod = *rmsg_ep_rings(ep)->cq.producer;

	/* Far ahead, and just more than one ring ahead of the consumer. */
	__atomic_store_n(rmsg_ep_rings(ep)->sq.producer, good + 0x10000000,
			 __ATOMIC_RELEASE);
	EXPECT_EQ(-EINVAL, rmsg_ep_enter(ep, 1, 0, 0));
	__atomic_store_n(rmsg_ep_rings(ep)->sq.producer, good + 9,
			 __ATOMIC_RELEASE);
	EXPECT_EQ(-EINVAL, rmsg_ep_enter(ep, 1, 0, 0));
	/* Backwards, behind what was accepted. */
	__atomic_store_n(rmsg_ep_rings(ep)->sq.producer, good - 1,
			 __ATOMIC_RELEASE);
	EXPECT_EQ(-EINVAL, rmsg_ep_enter(ep, 1, 0, 0));
	__atomic_store_n(rmsg_ep_rings(ep)->sq.producer, good - 0x80000000U,
			 __ATOMIC_RELEASE);
	EXPECT_EQ(-EINVAL, rmsg_ep_enter(ep, 100, 0, 0));
	/* Nothing was taken or completed. */
	EXPECT_EQ(good, *rmsg_ep_rings(ep)->sq.consumer);
	EXPECT_EQ(cq_prod, *rmsg_ep_rings(ep)->cq.producer);

	/* Put right, the ring works again. */
	__atomic_store_n(rmsg_ep_rings(ep)->sq.producer, good,
			 __ATOMIC_RELEASE);
	EXPECT_EQ(0, ring_works(ep, 4, 8));
	/* Exactly one ring ahead is allowed. */
	EXPECT_EQ(0, ring_works(ep, 5, 8));
}

TEST_F(ring, bad_cq_consumer)
{
	struct rmsg_ep *ep = self->ep;
	__u32 good, sq_cons;

	ASSERT_EQ(0, ring_works(ep, 6, 3));
	/*
	 * The kernel checks the consumer when it posts: one more round, so
	 * that it has accepted 3 and the program has moved on to 4.
	 */
	ASSERT_EQ(0, ring_works(ep, 6, 1));
	good = *rmsg_ep_rings(ep)->cq.consumer;
	ASSERT_EQ(4, good);
	ASSERT_TRUE(rmsg_queue_nop(ep, 7));
	ASSERT_EQ(1, rmsg_sq_submit(ep));
	sq_cons = *rmsg_ep_rings(ep)->sq.consumer;

	/* Past the producer, behind what was accepted, and far off. */
	__atomic_store_n(rmsg_ep_rings(ep)->cq.consumer, good + 1,
			 __ATOMIC_RELEASE);
	EXPECT_EQ(-EINVAL, rmsg_ep_enter(ep, 1, 0, 0));
	__atomic_store_n(rmsg_ep_rings(ep)->cq.consumer, good - 2,
			 __ATOMIC_RELEASE);
	EXPECT_EQ(-EINVAL, rmsg_ep_enter(ep, 1, 0, 0));
	__atomic_store_n(rmsg_ep_rings(ep)->cq.consumer, good + 0x40000000,
			 __ATOMIC_RELEASE);
	EXPECT_EQ(-EINVAL, rmsg_ep_enter(ep, 1, 0, 0));
	/* A wait that could never be right ends instead of hanging. */
	__atomic_store_n(rmsg_ep_rings(ep)->cq.consumer, good + 1,
			 __ATOMIC_RELEASE);
	EXPECT_EQ(-EINVAL, rmsg_ep_enter(ep, 0, 1, RMSG_ENTER_GETEVENTS));
	EXPECT_EQ(sq_cons, *rmsg_ep_rings(ep)->sq.consumer);

	__atomic_store_n(rmsg_ep_rings(ep)->cq.consumer, good,
			 __ATOMIC_RELEASE);
	EXPECT_EQ(1, rmsg_ep_enter(ep, 1, 0, 0));
	ASSERT_NE(NULL, rmsg_cq_peek(ep));
	EXPECT_EQ(7, rmsg_cq_peek(ep)->user_data);
	rmsg_cq_advance(ep, 1);
	EXPECT_EQ(0, ring_works(ep, 8, 8));
}

TEST_F(ring, bad_sqes_complete_with_einval)
{
	struct rmsg_ep *ep = self->ep;
	struct rmsg_sqe *sqe;
	struct rmsg_cqe *cqe;
	unsigned int i, k;
	/* Every other SQE is bad; each bad one in a different way. */
	const unsigned int nbad = 10;

	for (k = 0; k < nbad; k++) {
		for (i = 0; i < 2; i++) {
			sqe = rmsg_sq_get_sqe(ep);
			ASSERT_NE(NULL, sqe);
			sqe->user_data = ud(9, 2 * k + i);
			if (i)
				continue;	/* a good NOP */
			switch (k) {
			case 0:
				sqe->opcode = RMSG_OP_LAST;
				break;
			case 1:
				sqe->opcode = 0xff;
				break;
			case 2:
				sqe->flags = 1;
				break;
			case 3:
				sqe->resv0 = 0x8000;
				break;
			case 4:
				sqe->region = 1;	/* NOP takes none */
				break;
			case 5:
				sqe->aux = 1;
				break;
			case 6:
				sqe->resv[2] = 1ULL << 63;
				break;
			case 7:
				sqe->channel = 1;
				break;
			case 8:
				sqe->addr = 4096;
				break;
			default:
				sqe->len = 1;
				break;
			}
		}
		ASSERT_EQ(2, submit_all(ep));
		for (i = 0; i < 2; i++) {
			cqe = rmsg_cq_peek(ep);
			ASSERT_NE(NULL, cqe);
			EXPECT_EQ(ud(9, 2 * k + i), cqe->user_data);
			EXPECT_EQ(i ? 0 : -EINVAL, cqe->res) TH_LOG("case %u", k);
			rmsg_cq_advance(ep, 1);
		}
	}
	EXPECT_EQ(0, ring_works(ep, 10, 8));
}

TEST_F(ring, poll_and_epoll)
{
	struct rmsg_ep *ep = self->ep;
	struct pollfd pfd = { .fd = rmsg_ep_fd(ep), .events = POLLIN };
	struct epoll_event ev = { .events = EPOLLIN }, out;
	long t0;
	int efd;

	t0 = rmsg_now_ms();
	EXPECT_EQ(0, poll(&pfd, 1, 100));
	EXPECT_LE(90, rmsg_now_ms() - t0);
	ASSERT_TRUE(rmsg_queue_nop(ep, 11));
	ASSERT_EQ(1, submit_all(ep));
	EXPECT_EQ(1, poll(&pfd, 1, 1000));
	EXPECT_EQ(POLLIN, pfd.revents & (POLLIN | POLLERR | POLLHUP));
	rmsg_cq_advance(ep, rmsg_cq_ready(ep));
	EXPECT_EQ(0, poll(&pfd, 1, 50));

	efd = epoll_create1(0);
	ASSERT_LE(0, efd);
	ASSERT_EQ(0, epoll_ctl(efd, EPOLL_CTL_ADD, rmsg_ep_fd(ep), &ev));
	EXPECT_EQ(0, epoll_wait(efd, &out, 1, 50));
	ASSERT_TRUE(rmsg_queue_nop(ep, 12));
	ASSERT_EQ(1, submit_all(ep));
	EXPECT_EQ(1, epoll_wait(efd, &out, 1, 1000));
	EXPECT_TRUE(out.events & EPOLLIN);
	rmsg_cq_advance(ep, rmsg_cq_ready(ep));
	EXPECT_EQ(0, epoll_wait(efd, &out, 1, 50));
	close(efd);

	/* Before setup: nothing to report, no error. */
	pfd.fd = rmsg_node_open();
	ASSERT_LE(0, pfd.fd);
	EXPECT_EQ(0, poll(&pfd, 1, 20));
	close(pfd.fd);
}

struct waiter {
	struct rmsg_ep *ep;
	unsigned int min;
	int ret;
	int done;
};

static void *wait_events(void *arg)
{
	struct waiter *w = arg;

	w->ret = rmsg_ep_enter(w->ep, 0, w->min, RMSG_ENTER_GETEVENTS);
	__atomic_store_n(&w->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

static void on_usr1(int sig)
{
}

TEST_F(ring, getevents_waits_for_completions)
{
	struct rmsg_ep *ep = self->ep;
	struct waiter w = { .ep = ep, .min = 2 };
	pthread_t t;
	long t0;

	/* Enough already there: no wait. */
	ASSERT_TRUE(rmsg_queue_nop(ep, 1));
	ASSERT_TRUE(rmsg_queue_nop(ep, 2));
	t0 = rmsg_now_ms();
	EXPECT_EQ(2, rmsg_ep_enter(ep, rmsg_sq_submit(ep), 2,
				   RMSG_ENTER_GETEVENTS));
	EXPECT_EQ(0, rmsg_ep_enter(ep, 0, 2, RMSG_ENTER_GETEVENTS));
	EXPECT_GT(500, rmsg_now_ms() - t0);
	rmsg_cq_advance(ep, 2);

	/* None there: the waiter blocks until a second NOP arrives. */
	ASSERT_EQ(0, pthread_create(&t, NULL, wait_events, &w));
	usleep(200000);
	EXPECT_EQ(0, __atomic_load_n(&w.done, __ATOMIC_ACQUIRE));
	ASSERT_TRUE(rmsg_queue_nop(ep, 3));
	ASSERT_EQ(1, submit_all(ep));
	usleep(200000);
	EXPECT_EQ(0, __atomic_load_n(&w.done, __ATOMIC_ACQUIRE));
	ASSERT_TRUE(rmsg_queue_nop(ep, 4));
	ASSERT_EQ(1, submit_all(ep));
	t0 = rmsg_now_ms();
	while (!__atomic_load_n(&w.done, __ATOMIC_ACQUIRE) &&
	       rmsg_now_ms() - t0 < 5000)
		usleep(1000);
	EXPECT_EQ(1, __atomic_load_n(&w.done, __ATOMIC_ACQUIRE));
	pthread_join(t, NULL);
	EXPECT_EQ(0, w.ret);
	EXPECT_EQ(2, rmsg_cq_ready(ep));
}

TEST_F(ring, getevents_interrupted_by_signal)
{
	struct sigaction sa = { .sa_handler = on_usr1 };
	struct waiter w = { .ep = self->ep, .min = 1 };
	pthread_t t;
	long t0;

	/* SA_RESTART too: an interrupted wait is reported, not restarted. */
	sa.sa_flags = SA_RESTART;
	ASSERT_EQ(0, sigaction(SIGUSR1, &sa, NULL));
	ASSERT_EQ(0, pthread_create(&t, NULL, wait_events, &w));
	usleep(200000);
	EXPECT_EQ(0, __atomic_load_n(&w.done, __ATOMIC_ACQUIRE));
	ASSERT_EQ(0, pthread_kill(t, SIGUSR1));
	t0 = rmsg_now_ms();
	while (!__atomic_load_n(&w.done, __ATOMIC_ACQUIRE) &&
	       rmsg_now_ms() - t0 < 5000)
		usleep(1000);
	ASSERT_EQ(1, __atomic_load_n(&w.done, __ATOMIC_ACQUIRE));
	pthread_join(t, NULL);
	EXPECT_EQ(-EINTR, w.ret);
}

/*
 * An impossible consumer index (behind what the kernel accepted) while an
 * event waits for room it can never get: GETEVENTS ends with EINVAL, as a
 * wait with nothing kept does, instead of spinning in the kernel where no
 * signal reaches it. The wait runs in a child, so that a spin is seen as
 * one (the child would not even die of SIGKILL) instead of hanging the
 * test.
 */
TEST_F_TIMEOUT(ring, getevents_impossible_consumer_with_kept_event, 120)
{
	struct rmsg_ep *ep = self->ep;
	__u32 *consumer = rmsg_ep_rings(ep)->cq.consumer;
	struct sockaddr_in none;
	struct rmsg_cqe cqe;
	__u32 good;
	int id, status = 0;
	pid_t pid, done = 0;
	long t0;

	/* A port nobody listens on: the connect's failure is the event. */
	if (!rmsg_local_addr(&none, 0xf00d))
		SKIP(return, "RMSG_LOCAL_ADDR not set: not run by rmsg-vm");
	good = __atomic_load_n(consumer, __ATOMIC_ACQUIRE);
	__atomic_store_n(consumer, good - 1, __ATOMIC_RELEASE);
	id = rmsg_chan_connect(ep, (struct sockaddr *)&none, sizeof(none),
			       0xc0, 0);
	ASSERT_LE(0, id) TH_LOG("connect: %s", strerror(-id));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid)
		_exit(raw_enter(rmsg_ep_fd(ep), 0, 2, RMSG_ENTER_GETEVENTS,
				NULL) == -EINVAL ? 0 : 1);
	t0 = rmsg_now_ms();
	while (!(done = waitpid(pid, &status, WNOHANG)) &&
	       rmsg_now_ms() - t0 < 30000)
		usleep(10000);
	if (!done)
		kill(pid, SIGKILL);
	ASSERT_EQ(pid, done) TH_LOG("GETEVENTS still running after 30 s");
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status)) TH_LOG("GETEVENTS did not fail with EINVAL");

	/* The index put right, the kept event comes. */
	__atomic_store_n(consumer, good, __ATOMIC_RELEASE);
	ASSERT_EQ(0, rmsg_next_cqe(ep, &cqe, 20000));
	EXPECT_EQ(RMSG_CQE_CONNECTED, RMSG_CQE_KIND(cqe.flags));
	EXPECT_EQ(id, cqe.channel);
	EXPECT_GT(0, cqe.res);
}

/* 64 endpoints at once, each with its own rings and its own stream. */
TEST(many_endpoints)
{
	enum { NEP = 64, OPS = 1000 };
	static struct rmsg_ep *eps[NEP];
	unsigned int sent[NEP] = { 0 }, got[NEP] = { 0 };
	unsigned int i, k, done = 0;
	struct rmsg_cqe *cqe;
	int ret;

	for (i = 0; i < NEP; i++) {
		ret = rmsg_ep_open(&eps[i], 1 + i % 16, 0);
		ASSERT_EQ(0, ret) TH_LOG("endpoint %u: %s", i, strerror(-ret));
	}
	while (done < NEP) {
		done = 0;
		for (i = 0; i < NEP; i++) {
			for (k = 0; k < 1 + (i + sent[i]) % 5 &&
			     sent[i] < OPS; k++) {
				if (!rmsg_queue_nop(eps[i], ud(100 + i,
							       sent[i])))
					break;
				sent[i]++;
			}
			ret = submit_all(eps[i]);
			ASSERT_LE(0, ret) TH_LOG("endpoint %u", i);
			while ((cqe = rmsg_cq_peek(eps[i]))) {
				ASSERT_EQ(ud(100 + i, got[i]), cqe->user_data)
					TH_LOG("endpoint %u op %u", i, got[i]);
				rmsg_cq_advance(eps[i], 1);
				got[i]++;
			}
			done += got[i] == OPS;
		}
	}
	for (i = 0; i < NEP; i++) {
		EXPECT_EQ(OPS, sent[i]);
		rmsg_ep_drop(&eps[i]);
	}
}

/*
 * Closing the file while the rings are mapped: the mappings keep the
 * memory (and the file) until they go; touching them is fine.
 */
TEST(close_while_mapped)
{
	struct rmsg_ep *ep = NULL;
	struct rmsg_ep *other = NULL;
	struct rmsg_cqe *cqe;
	int i;

	for (i = 0; i < 20; i++) {
		ASSERT_EQ(0, rmsg_ep_open(&ep, 4, 0));
		ASSERT_TRUE(rmsg_queue_nop(ep, ud(20, i)));
		ASSERT_EQ(1, submit_all(ep));
		ASSERT_EQ(0, close(rmsg_ep_fd(ep)));

		/* The memory is still the rings'. */
		cqe = rmsg_cq_peek(ep);
		ASSERT_NE(NULL, cqe);
		EXPECT_EQ(ud(20, i), cqe->user_data);
		rmsg_cq_advance(ep, 1);
		EXPECT_TRUE(rmsg_queue_nop(ep, 1));
		rmsg_sq_submit(ep);
		memset(rmsg_ep_rings(ep)->sq.descs, 0x5a,
		       4 * sizeof(struct rmsg_sqe));
		EXPECT_EQ(0x5a,
			  ((unsigned char *)rmsg_ep_rings(ep)->sq.descs)[255]);
		/* Unmap the SQ first, then the CQ: each holds the file. */
		EXPECT_EQ(0, munmap(rmsg_ep_rings(ep)->sq.map,
				    rmsg_ep_rings(ep)->sq.map_size));
		EXPECT_EQ(ud(20, i),
			  ((struct rmsg_cqe *)rmsg_ep_rings(ep)->cq.descs)[0].user_data);
		*rmsg_ep_rings(ep)->cq.consumer = 12345;
		EXPECT_EQ(0, munmap(rmsg_ep_rings(ep)->cq.map,
				    rmsg_ep_rings(ep)->cq.map_size));
	}
	/* A new endpoint gets fresh, zeroed rings. */
	ASSERT_EQ(0, rmsg_ep_open(&other, 4, 0));
	EXPECT_EQ(0, *rmsg_ep_rings(other)->cq.consumer);
	EXPECT_EQ(0, *rmsg_ep_rings(other)->sq.producer);
	EXPECT_EQ(NULL, rmsg_cq_peek(other));
	EXPECT_EQ(0, ring_works(other, 21, 4));
	rmsg_ep_drop(&other);
}

/* A child process inherits the mapping; the kernel copes. */
TEST(mapping_survives_fork_and_exit)
{
	struct rmsg_ep *ep = NULL;
	pid_t pid;
	int status;

	ASSERT_EQ(0, rmsg_ep_open(&ep, 4, 0));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		close(rmsg_ep_fd(ep));
		/* The child writes into the shared SQ; the parent sees it. */
		rmsg_queue_nop(ep, 77);
		rmsg_sq_submit(ep);
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_EQ(1, __atomic_load_n(rmsg_ep_rings(ep)->sq.producer,
				     __ATOMIC_ACQUIRE));
	EXPECT_EQ(1, rmsg_ep_enter(ep, 1, 1, RMSG_ENTER_GETEVENTS));
	ASSERT_NE(NULL, rmsg_cq_peek(ep));
	EXPECT_EQ(77, rmsg_cq_peek(ep)->user_data);
	rmsg_ep_drop(&ep);
}

int main(int argc, char **argv)
{
	return rmsg_test_main(argc, argv);
}
