// SPDX-License-Identifier: GPL-2.0
/*
 * The block window (RMSG_FEAT_BLOCK_WINDOW, Documentation/uapi.rst): every
 * channel's receive block in one read-only mapping of the endpoint.
 *
 *  - thousands of channels through librmsg cost no mapping each: more
 *    channels than vm.max_map_count would allow, each carrying a message;
 *  - an id held after its channel's end (its block still read there) goes
 *    to no other channel until the library drops it, and a new channel on
 *    it shows zeros, then only its own bytes;
 *  - a program on the rings alone never maps the window, never sees
 *    RMSG_CQE_F_WINDOW, and keeps its ids as before;
 *  - bad mappings of the window, and bad RMSG_IOC_CHAN_DROPs, are refused.
 */
#include <fcntl.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/mman.h>

#include "kselftest_harness.h"
#include "rmsg_test.h"

#define MAX_CH_PARAM	"/sys/module/rmsg/parameters/max_channels"
#define MAP_COUNT	"/proc/sys/vm/max_map_count"
#define EVENT_MS	60000
#define SHIFT		16	/* librmsg's default RMSG_WINDOW_SHIFT */
#define WIN_LEN		((size_t)RMSG_MAX_CHANNELS << SHIFT)
#define MANY		2048
#define BATCH		64
#define PG		4096

/* Lines of /proc/self/maps: the process's mappings. */
static long map_lines(void)
{
	FILE *f = fopen("/proc/self/maps", "r");
	long n = 0;
	int c;

	if (!f)
		return -1;
	while ((c = fgetc(f)) != EOF)
		n += c == '\n';
	fclose(f);
	return n;
}

/* The next raw CQE of @ep of @kind, others skipped; 0 or -ETIMEDOUT. */
static int next_of_kind(struct rmsg_ep *ep, unsigned int kind,
			struct rmsg_cqe *cqe)
{
	long deadline = rmsg_now_ms() + EVENT_MS;
	int ret;

	for (;;) {
		ret = rmsg_next_cqe(ep, cqe, deadline - rmsg_now_ms());
		if (ret)
			return ret;
		if (RMSG_CQE_KIND(cqe->flags) == kind)
			return 0;
	}
}

static bool all_zero(const unsigned char *p, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (p[i])
			return false;
	return true;
}

static int chan_drop(int fd, const __u32 *ids, __u32 count, __u32 flags,
		     __u32 *done)
{
	struct rmsg_chan_drop req = {
		.ids = (__u64)(uintptr_t)ids,
		.count = count,
		.flags = flags,
	};

	if (ioctl(fd, RMSG_IOC_CHAN_DROP, &req))
		return -errno;
	if (done)
		*done = req.done;
	return 0;
}

FIXTURE(win) {
	struct sockaddr_in addr;
	struct rmsg_ep *a, *b;
	long long saved_max, saved_maps;
	bool max_set, maps_set, opened;
};

FIXTURE_SETUP(win)
{
	if (!rmsg_local_addr(&self->addr, 0))
		SKIP(rmsg_setup_skipped(_metadata); return,
		     "RMSG_LOCAL_ADDR not set: not run by rmsg-vm");
	if (!rmsg_have_features(RMSG_FEAT_EAGER | RMSG_FEAT_BLOCK_WINDOW))
		SKIP(rmsg_setup_skipped(_metadata); return,
		     "the module does not announce RMSG_FEAT_BLOCK_WINDOW");
	self->saved_max = rmsg_read_number(MAX_CH_PARAM);
	self->saved_maps = rmsg_read_number(MAP_COUNT);
	if (self->saved_max < 0 || self->saved_maps < 0)
		SKIP(rmsg_setup_skipped(_metadata); return,
		     "no %s or %s", MAX_CH_PARAM, MAP_COUNT);
	/* The library's default shift, whatever the environment says. */
	ASSERT_EQ(0, setenv("RMSG_WINDOW_SHIFT", "16", 1));
	ASSERT_EQ(0, rmsg_ep_open(&self->a, 256, 4096));
	ASSERT_EQ(0, rmsg_ep_open(&self->b, 256, 4096));
	self->opened = true;
}

FIXTURE_TEARDOWN(win)
{
	if (self->opened) {
		rmsg_ep_drop(&self->a);
		rmsg_ep_drop(&self->b);
	}
	if (self->max_set)
		rmsg_write_number(MAX_CH_PARAM, self->saved_max);
	if (self->maps_set)
		rmsg_write_number(MAP_COUNT, self->saved_maps);
}

typedef FIXTURE_DATA(win) win_fixture;

static int set_max_channels(win_fixture *self, unsigned long n)
{
	self->max_set = true;
	return rmsg_write_number(MAX_CH_PARAM, n);
}

/* Both endpoints through librmsg: its first progress maps the window. */
static void lib_start(win_fixture *self)
{
	rmsg_ep_progress(self->a, NULL, 0);
	rmsg_ep_progress(self->b, NULL, 0);
}

/*
 * Open @n channels from b to a through librmsg, @BATCH at a time; b's ids
 * in @ids. 0, or the first failure.
 */
static int open_many(win_fixture *self, int n, __u32 *ids)
{
	struct sockaddr *sa = (struct sockaddr *)&self->addr;
	int i, j, id, ret, want;
	struct rmsg_event ev;

	for (i = 0; i < n; i += want) {
		want = n - i < BATCH ? n - i : BATCH;
		for (j = 0; j < want; j++) {
			id = rmsg_chan_connect(self->b, sa, sizeof(self->addr),
					       i + j, 0);
			if (id < 0)
				return id;
			ids[i + j] = id;
		}
		for (j = 0; j < want; j++) {
			ret = rmsg_lib_event(self->b, RMSG_CQE_CONNECTED, &ev,
					     EVENT_MS);
			if (ret || ev.res)
				return ret ?: ev.res;
			ret = rmsg_lib_event(self->a, RMSG_CQE_ACCEPTED, &ev,
					     EVENT_MS);
			if (ret || ev.res)
				return ret ?: ev.res;
		}
	}
	return 0;
}

/*
 * More channels than vm.max_map_count lets the process map blocks of:
 * with 256 mappings to spare, 2,048 channels (4,096 blocks, both ends in
 * this process) each carry a message, read through the window, and the
 * process gains no more than a few mappings (the two windows). Without
 * the window each block is a mapping and the opens fail past 256.
 */
TEST_F_TIMEOUT(win, beyond_max_map_count, 900)
{
	static __u32 ids[MANY];
	static unsigned char seen[MANY];
	long deadline, base, grown;
	struct rmsg_msg msg;
	__u32 v;
	int i, ret, got = 0;

	ASSERT_EQ(0, rmsg_ep_listen(self->a, (struct sockaddr *)&self->addr,
				    sizeof(self->addr), 0xa0, 0));
	lib_start(self);
	/*
	 * The library's tables grow with the channels: from the heap, not
	 * from mappings of malloc's own, which would count here.
	 */
	ASSERT_EQ(1, mallopt(M_MMAP_MAX, 0));
	base = map_lines();
	ASSERT_LT(0, base);
	self->maps_set = true;
	ASSERT_EQ(0, rmsg_write_number(MAP_COUNT, base + 256));
	ASSERT_EQ(0, open_many(self, MANY, ids));
	for (i = 0; i < MANY; i++) {
		v = i;
		deadline = rmsg_now_ms() + EVENT_MS;
		do {
			ret = rmsg_msg_send(self->b, ids[i], &v, sizeof(v), 0,
					    i);
			if (ret == -EAGAIN)
				rmsg_ep_progress(self->b, NULL, 0);
		} while (ret == -EAGAIN && rmsg_now_ms() < deadline);
		ASSERT_EQ(0, ret) TH_LOG("send on channel %u", ids[i]);
	}
	deadline = rmsg_now_ms() + EVENT_MS;
	while (got < MANY && rmsg_now_ms() < deadline) {
		rmsg_ep_progress(self->b, NULL, 0);
		rmsg_ep_progress(self->a, NULL, 0);
		ret = rmsg_msg_peek_any(self->a, &msg);
		if (ret == -EAGAIN) {
			rmsg_ep_wait(self->a, 10);
			continue;
		}
		ASSERT_EQ(0, ret);
		ASSERT_EQ(sizeof(v), msg.len);
		memcpy(&v, msg.data, sizeof(v));
		ASSERT_GT(MANY, v);
		EXPECT_EQ(0, seen[v]) TH_LOG("message %u twice", v);
		seen[v] = 1;
		got++;
		ASSERT_EQ(0, rmsg_msg_release(self->a, &msg));
	}
	EXPECT_EQ(MANY, got);
	grown = map_lines() - base;
	EXPECT_GE(4, grown) TH_LOG("%ld more mappings", grown);
}

/*
 * max_channels 2. b's channel ends with a message b peeked and did not
 * release: its id is held (b may still read the message in the window),
 * so with another channel open a third connect fails with ENOSPC. Once
 * the message is released the library drops the id; the next channel
 * takes it, and its slot shows zeros, then only the new channel's bytes.
 */
TEST_F_TIMEOUT(win, held_id_reuse, 300)
{
	struct sockaddr *sa = (struct sockaddr *)&self->addr;
	unsigned char old[64];
	const unsigned char *win, *slot;
	struct rmsg_event ev;
	struct rmsg_msg msg;
	__u32 id0, a0, id1;
	long deadline;
	int id, ret;

	memset(old, 0xaa, sizeof(old));
	ASSERT_EQ(0, set_max_channels(self, 2));
	ASSERT_EQ(0, rmsg_ep_listen(self->a, sa, sizeof(self->addr), 0xa0, 0));
	lib_start(self);
	/* The test's own view of b's window, the library's shift. */
	win = mmap(NULL, WIN_LEN, PROT_READ, MAP_SHARED | MAP_NORESERVE,
		   rmsg_ep_fd(self->b), (off_t)RMSG_OFF_WINDOW(SHIFT));
	ASSERT_NE(MAP_FAILED, win);

	id = rmsg_chan_connect(self->b, sa, sizeof(self->addr), 1, 0);
	ASSERT_LE(0, id);
	id0 = id;
	ASSERT_EQ(0, rmsg_lib_event(self->b, RMSG_CQE_CONNECTED, &ev,
				    EVENT_MS));
	ASSERT_EQ(0, ev.res);
	ASSERT_EQ(0, rmsg_lib_event(self->a, RMSG_CQE_ACCEPTED, &ev,
				    EVENT_MS));
	a0 = ev.channel;
	ASSERT_EQ(0, rmsg_msg_send(self->a, a0, old, sizeof(old), 0, 1));
	deadline = rmsg_now_ms() + EVENT_MS;
	do {
		rmsg_ep_progress(self->a, NULL, 0);
		ret = rmsg_msg_peek(self->b, id0, &msg);
		if (ret == -EAGAIN)
			rmsg_ep_wait(self->b, 10);
	} while (ret == -EAGAIN && rmsg_now_ms() < deadline);
	ASSERT_EQ(0, ret);
	ASSERT_EQ(sizeof(old), msg.len);
	slot = win + ((size_t)id0 << SHIFT);
	/* The library reads the block in the window, the test sees it too. */
	ASSERT_NE(NULL, memmem(slot, (size_t)1 << SHIFT, old, sizeof(old)));

	/* The channel ends; b keeps its message, so the id stays held. */
	ASSERT_EQ(0, rmsg_chan_close(self->a, a0, 0));
	ASSERT_EQ(0, rmsg_lib_event(self->b, RMSG_CQE_CLOSED, &ev, EVENT_MS));
	ASSERT_EQ(0, rmsg_lib_event(self->a, RMSG_CQE_CLOSED, &ev, EVENT_MS));
	EXPECT_EQ(0, memcmp(msg.data, old, sizeof(old)));
	EXPECT_NE(NULL, memmem(slot, (size_t)1 << SHIFT, old, sizeof(old)));

	id = rmsg_chan_connect(self->b, sa, sizeof(self->addr), 2, 0);
	ASSERT_LE(0, id);
	id1 = id;
	EXPECT_NE(id0, id1);
	ASSERT_EQ(0, rmsg_lib_event(self->b, RMSG_CQE_CONNECTED, &ev,
				    EVENT_MS));
	ASSERT_EQ(0, ev.res);
	ASSERT_EQ(0, rmsg_lib_event(self->a, RMSG_CQE_ACCEPTED, &ev,
				    EVENT_MS));
	/* id0 held, id1 open: nothing left under max_channels. */
	EXPECT_EQ(-ENOSPC, rmsg_chan_connect(self->b, sa, sizeof(self->addr),
					     3, 0));

	/* Released: the library drops the id, which comes free. */
	ASSERT_EQ(0, rmsg_msg_release(self->b, &msg));
	EXPECT_TRUE(all_zero(slot, (size_t)1 << SHIFT));
	id = rmsg_chan_connect(self->b, sa, sizeof(self->addr), 4, 0);
	ASSERT_LE(0, id);
	EXPECT_EQ(id0, (__u32)id);
	ASSERT_EQ(0, rmsg_lib_event(self->b, RMSG_CQE_CONNECTED, &ev,
				    EVENT_MS));
	ASSERT_EQ(0, ev.res);
	ASSERT_EQ(0, rmsg_lib_event(self->a, RMSG_CQE_ACCEPTED, &ev,
				    EVENT_MS));
	a0 = ev.channel;
	slot = win + ((size_t)id << SHIFT);
	EXPECT_TRUE(all_zero(slot, (size_t)1 << SHIFT));
	ASSERT_EQ(0, rmsg_echo(self->a, a0, self->b, id, 0x55, 64, EVENT_MS));
	EXPECT_EQ(NULL, memmem(slot, (size_t)1 << SHIFT, old, sizeof(old)));
	munmap((void *)win, WIN_LEN);
}

/*
 * A program on the rings alone (raw CQEs, never rmsg_ep_progress()): no
 * window is mapped, no open event carries RMSG_CQE_F_WINDOW, no id is
 * held. 200 channels open and close one after another under
 * max_channels 2, each id given again as before.
 */
TEST_F_TIMEOUT(win, rings_only_ids_as_before, 600)
{
	struct sockaddr *sa = (struct sockaddr *)&self->addr;
	struct rmsg_cqe cqe;
	int i, id;

	ASSERT_EQ(0, set_max_channels(self, 2));
	ASSERT_EQ(0, rmsg_ep_listen(self->a, sa, sizeof(self->addr), 0xa0, 0));
	for (i = 0; i < 200; i++) {
		id = rmsg_chan_connect(self->b, sa, sizeof(self->addr), i, 0);
		ASSERT_LE(0, id) TH_LOG("cycle %d: %s", i, strerror(-id));
		ASSERT_EQ(0, next_of_kind(self->b, RMSG_CQE_CONNECTED, &cqe));
		ASSERT_EQ(0, cqe.res) TH_LOG("cycle %d", i);
		EXPECT_EQ(0, cqe.flags & RMSG_CQE_F_WINDOW);
		ASSERT_EQ(0, next_of_kind(self->a, RMSG_CQE_ACCEPTED, &cqe));
		EXPECT_EQ(0, cqe.flags & RMSG_CQE_F_WINDOW);
		ASSERT_EQ(0, rmsg_chan_close(self->b, id, 0));
		ASSERT_EQ(0, next_of_kind(self->b, RMSG_CQE_CLOSED, &cqe));
		EXPECT_EQ(0, cqe.flags & RMSG_CQE_F_WINDOW);
		ASSERT_EQ(0, next_of_kind(self->a, RMSG_CQE_CLOSED, &cqe));
	}
}

/*
 * What the kernel refuses: a shift out of range, a mapping past the last
 * slot, a writable or private one, an offset inside a window, a second
 * shift once one is mapped, making a mapping writable later; and
 * RMSG_IOC_CHAN_DROP with flags, too many ids or a bad pointer. A window
 * mapped right reads as zero where no channel is, and a DROP of ids that
 * hold nothing does nothing.
 */
TEST_F(win, bad_window_maps)
{
	int fd = rmsg_ep_fd(self->b);
	size_t len = (size_t)4 << SHIFT;
	__u32 ids[RMSG_CHAN_DROP_MAX + 1] = { 0 }, done = 99;
	void *m, *ok, *ok2;

	m = mmap(NULL, PG, PROT_READ, MAP_SHARED, fd,
		 (off_t)RMSG_OFF_WINDOW(RMSG_WINDOW_SHIFT_MIN - 1));
	EXPECT_EQ(MAP_FAILED, m);
	EXPECT_EQ(EINVAL, errno);
	m = mmap(NULL, PG, PROT_READ, MAP_SHARED, fd,
		 (off_t)RMSG_OFF_WINDOW(RMSG_WINDOW_SHIFT_MAX + 1));
	EXPECT_EQ(MAP_FAILED, m);
	EXPECT_EQ(EINVAL, errno);
	m = mmap(NULL, WIN_LEN + PG, PROT_READ, MAP_SHARED | MAP_NORESERVE, fd,
		 (off_t)RMSG_OFF_WINDOW(SHIFT));
	EXPECT_EQ(MAP_FAILED, m);
	EXPECT_EQ(EINVAL, errno);
	m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		 (off_t)RMSG_OFF_WINDOW(SHIFT));
	EXPECT_EQ(MAP_FAILED, m);
	EXPECT_EQ(EPERM, errno);
	m = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd,
		 (off_t)RMSG_OFF_WINDOW(SHIFT));
	EXPECT_EQ(MAP_FAILED, m);
	EXPECT_EQ(EINVAL, errno);
	m = mmap(NULL, len, PROT_READ, MAP_SHARED, fd,
		 (off_t)(RMSG_OFF_WINDOW(SHIFT) + PG));
	EXPECT_EQ(MAP_FAILED, m);
	EXPECT_EQ(EINVAL, errno);

	ok = mmap(NULL, len, PROT_READ, MAP_SHARED, fd,
		  (off_t)RMSG_OFF_WINDOW(SHIFT));
	ASSERT_NE(MAP_FAILED, ok);
	EXPECT_TRUE(all_zero(ok, len));
	EXPECT_EQ(-1, mprotect(ok, len, PROT_READ | PROT_WRITE));
	/* The endpoint's shift is fixed now. */
	m = mmap(NULL, PG, PROT_READ, MAP_SHARED, fd,
		 (off_t)RMSG_OFF_WINDOW(SHIFT - 2));
	EXPECT_EQ(MAP_FAILED, m);
	EXPECT_EQ(EINVAL, errno);
	ok2 = mmap(NULL, PG, PROT_READ, MAP_SHARED, fd,
		   (off_t)RMSG_OFF_WINDOW(SHIFT));
	EXPECT_NE(MAP_FAILED, ok2);

	EXPECT_EQ(-EINVAL, chan_drop(fd, ids, 1, 1, NULL));
	EXPECT_EQ(-EINVAL, chan_drop(fd, ids, RMSG_CHAN_DROP_MAX + 1, 0,
				     NULL));
	EXPECT_EQ(-EFAULT, chan_drop(fd, (const __u32 *)8, 4, 0, NULL));
	ids[1] = RMSG_MAX_CHANNELS;
	ids[2] = 0xffffffff;
	EXPECT_EQ(0, chan_drop(fd, ids, 3, 0, &done));
	EXPECT_EQ(0, done);
	EXPECT_EQ(0, munmap(ok, len));
	if (ok2 != MAP_FAILED)
		EXPECT_EQ(0, munmap(ok2, PG));
}

int main(int argc, char **argv)
{
	return rmsg_test_main(argc, argv);
}
