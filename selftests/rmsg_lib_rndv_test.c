// SPDX-License-Identifier: GPL-2.0
/*
 * Rendezvous messages through librmsg's message API (lib/rmsg_rndv.c):
 * rmsg_msg_send() choosing eager or rendezvous by the threshold,
 * rmsg_msg_send_zc(),
 * rmsg_msg_recv_into() with its completion events, rmsg_msg_discard() and the
 * discards of rmsg_msg_release(), rmsg_msg_recv()'s copy path, the threshold's
 * environment variable and rmsg_chan_protocol_info(). Both endpoints live in
 * this process and talk over the guest's rxe device. Every byte received
 * is checked, and so are the bytes around each destination. Each test runs
 * twice: arrival flags written by the device, and the write-with-immediate
 * fallback forced.
 */
#include <linux/capability.h>
#include <poll.h>
#include <stdarg.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>

#include "kselftest_harness.h"
#include "rmsg_test.h"

/*
 * RMSG_TEST_SLOW times on a slow kernel, as the harness's own limits: the
 * debug kernel's guest, with a build beside it on the host, took over
 * 120 s for plain_memory_sizes' 64 MiB (its largest size then).
 */
#define EVENT_TIMEOUT_MS	((int)(20000 * rmsg_test_slow()))
#define XFER_TIMEOUT_MS		((int)(120000 * rmsg_test_slow()))
#define IMM_PARAM		"/sys/module/rmsg/parameters/force_imm_arrival"
/*
 * Each endpoint's region: the largest transfer in one is 16 MiB, at a
 * page and a few bytes in (send_picks_by_threshold), and room. 40 MiB
 * each side before: pinning cost about 8 ms a MiB under emulation, and
 * each lrndv test pins and unpins both in its set-up and teardown.
 */
#define REGION			(20U << 20)
#define GUARD			4096
#define THRESH			8192	/* below the eager maximum */
#define LOG_MAX			512

/* Why a helper failed, for the assertion that reports it. */
static char why[512];

static bool fail(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	return false;
}

static unsigned char pattern(unsigned int seq, size_t i)
{
	return (unsigned char)(seq * 131 + i * 7 + (i >> 9) + 1);
}

static void fill(unsigned char *p, unsigned int seq, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		p[i] = pattern(seq, i);
}

static bool check(const unsigned char *p, unsigned int seq, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (p[i] != pattern(seq, i))
			return fail("message %u (%zu bytes): byte %zu is 0x%02x, expected 0x%02x",
				    seq, len, i, p[i], pattern(seq, i));
	return true;
}

/* The GUARD bytes on either side of @p..@p+@len must still be @c. */
static bool check_guards(const unsigned char *p, size_t len, unsigned char c)
{
	size_t i;

	for (i = 1; i <= GUARD; i++)
		if (p[-(ssize_t)i] != c || p[len + i - 1] != c)
			return fail("a byte around the destination changed (%zu from its edge)",
				    i);
	return true;
}

static bool rndv_supported(void)
{
	struct rmsg_version ver;
	int fd = rmsg_node_open();
	bool ok;

	if (fd < 0)
		return false;
	ok = !rmsg_node_version(fd, &ver) && (ver.features & RMSG_FEAT_RNDV) &&
	     (ver.features & RMSG_FEAT_EAGER);
	close(fd);
	return ok;
}

/* One endpoint, its events not yet looked at, and a registered region. */
struct side {
	struct rmsg_ep *ep;
	struct rmsg_event ev[LOG_MAX];
	unsigned int nev;
	unsigned int ch;
	unsigned char *mem;
	uint32_t handle;
	bool open;
};

struct pair {
	struct side a;	/* listens, receives */
	struct side b;	/* connects, sends */
};

/* Does the module pin memory in no region for a transfer? */
static bool pin_supported(struct side *s)
{
	struct rmsg_version ver;

	return !rmsg_node_version(rmsg_ep_fd(s->ep), &ver) &&
	       (ver.features & RMSG_FEAT_RNDV_PIN);
}

static bool pump(struct side *s)
{
	int n;

	if (s->nev == LOG_MAX)
		return fail("event log full");
	n = rmsg_ep_progress(s->ep, s->ev + s->nev, LOG_MAX - s->nev);
	if (n < 0)
		return fail("rmsg_ep_progress: %d", n);
	s->nev += n;
	return true;
}

/* Take the first logged event of @kind (and @ud for OP events). */
static bool take(struct side *s, unsigned int kind, uint64_t ud,
		 struct rmsg_event *out)
{
	unsigned int i;

	for (i = 0; i < s->nev; i++) {
		if (s->ev[i].kind != kind ||
		    (kind == RMSG_CQE_OP && s->ev[i].user_data != ud))
			continue;
		*out = s->ev[i];
		memmove(&s->ev[i], &s->ev[i + 1],
			(s->nev - i - 1) * sizeof(*out));
		s->nev--;
		return true;
	}
	return false;
}

/* Wait for an event of @s, making progress on both sides. */
static bool wait_ev(struct pair *p, struct side *s, unsigned int kind,
		    uint64_t ud, struct rmsg_event *out, int timeout_ms)
{
	long deadline = rmsg_now_ms() + timeout_ms;

	for (;;) {
		if (!pump(&p->a) || !pump(&p->b))
			return false;
		if (take(s, kind, ud, out))
			return true;
		if (rmsg_now_ms() > deadline)
			return fail("no event of kind %u, user_data 0x%llx in %d ms",
				    kind, (unsigned long long)ud, timeout_ms);
		poll(NULL, 0, 1);
	}
}

/* The next message of a's channel, in place. */
static bool next_msg(struct pair *p, struct rmsg_msg *m, int timeout_ms)
{
	long deadline = rmsg_now_ms() + timeout_ms;
	int ret;

	for (;;) {
		ret = rmsg_msg_peek(p->a.ep, p->a.ch, m);
		if (!ret)
			return true;
		if (ret != -EAGAIN)
			return fail("rmsg_msg_peek: %d", ret);
		if (!pump(&p->a) || !pump(&p->b))
			return false;
		if (rmsg_now_ms() > deadline)
			return fail("no message in %d ms", timeout_ms);
		rmsg_ep_wait(p->a.ep, 10);
	}
}

/* Send with rmsg_msg_send(), retrying while the library says -EAGAIN. */
static int send_wait(struct pair *p, const void *buf, size_t len, uint64_t ud)
{
	long deadline = rmsg_now_ms() + EVENT_TIMEOUT_MS;
	int ret;

	for (;;) {
		ret = rmsg_msg_send(p->b.ep, p->b.ch, buf, len, 0, ud);
		if (ret != -EAGAIN || rmsg_now_ms() > deadline)
			return ret;
		if (!pump(&p->a) || !pump(&p->b))
			return -EIO;
		poll(NULL, 0, 1);
	}
}

static int open_side(struct side *s, bool region, bool sqpoll)
{
	struct rmsg_ep_setup setup = {
		.sq_entries = 256,
		.cq_entries = 1024,
		.flags = RMSG_EP_F_SQPOLL,
		.send_area_size = RMSG_LIB_SEND_AREA,
	};
	int ret = sqpoll ? rmsg_ep_open_setup(&s->ep, &setup) :
			   rmsg_ep_open(&s->ep, 256, 1024);

	if (ret)
		return ret;
	s->open = true;
	if (!region)
		return 0;
	s->mem = mmap(NULL, REGION, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (s->mem == MAP_FAILED) {
		s->mem = NULL;
		return -errno;
	}
	return rmsg_reg(s->ep, s->mem, REGION, &s->handle);
}

static void close_side(struct side *s)
{
	if (s->open)
		rmsg_ep_drop(&s->ep);
	if (s->mem)
		munmap(s->mem, REGION);
	memset(s, 0, sizeof(*s));
}

/*
 * Open both endpoints, each with a region if @region, b with the kernel
 * poller if @sqpoll, and connect b to a.
 */
static bool pair_open_how(struct pair *p, bool region, bool sqpoll)
{
	struct sockaddr_in addr;
	struct rmsg_event ev;
	int ret, id;

	if (!rmsg_local_addr(&addr, 0))
		return fail("RMSG_LOCAL_ADDR not set");
	ret = open_side(&p->a, region, false);
	if (!ret)
		ret = open_side(&p->b, region, sqpoll);
	if (ret)
		return fail("opening an endpoint: %d", ret);
	ret = rmsg_ep_listen(p->a.ep, (struct sockaddr *)&addr, sizeof(addr),
			     0xa0, 0);
	if (ret)
		return fail("rmsg_ep_listen: %d", ret);
	id = rmsg_chan_connect(p->b.ep, (struct sockaddr *)&addr, sizeof(addr),
			       0xb0, 0);
	if (id < 0)
		return fail("rmsg_chan_connect: %d", id);
	if (!wait_ev(p, &p->b, RMSG_CQE_CONNECTED, 0, &ev, EVENT_TIMEOUT_MS))
		return false;
	if (ev.res || ev.channel != (unsigned int)id)
		return fail("CONNECTED: res %d channel %u", ev.res, ev.channel);
	p->b.ch = id;
	if (!wait_ev(p, &p->a, RMSG_CQE_ACCEPTED, 0, &ev, EVENT_TIMEOUT_MS))
		return false;
	if (ev.res)
		return fail("ACCEPTED: res %d", ev.res);
	p->a.ch = ev.channel;
	return true;
}

static bool pair_open(struct pair *p)
{
	return pair_open_how(p, true, false);
}

static void pair_close(struct pair *p)
{
	close_side(&p->a);
	close_side(&p->b);
}

/*
 * Send @len bytes of pattern @seq from b's region at offset @src with
 * rmsg_msg_send(); a must see a message of @kind and, for a rendezvous one,
 * receive it with rmsg_msg_recv_into() at offset @dst of its region. Both
 * completions and every byte are checked.
 */
/*
 * xfer_how()'s @zc: 0 for rmsg_msg_send(), else rmsg_msg_send_zc(), or
 * with RPut.
 */
#define ZC_PUT	2

static bool xfer_how(struct pair *p, unsigned int seq, size_t src,
		     size_t dst, size_t len, unsigned int kind, int zc)
{
	unsigned char *from = p->b.mem + src, *to = p->a.mem + dst;
	uint64_t ud = 0x5e000000ULL + seq, rud = 0x7e000000ULL + seq;
	struct rmsg_event ev;
	struct rmsg_msg m;
	int ret;

	fill(from, seq, len);
	memset(to - GUARD, 0xee, len + 2 * GUARD);
	if (zc)
		ret = rmsg_msg_send_zc(p->b.ep, p->b.ch, from, len,
				       zc == ZC_PUT ? RMSG_ZC_PUT : 0, ud);
	else
		ret = send_wait(p, from, len, ud);
	if (ret)
		return fail("sending %zu bytes: %d", len, ret);
	if (!next_msg(p, &m, XFER_TIMEOUT_MS))
		return false;
	if (m.kind != kind || m.len != len || m.channel != p->a.ch)
		return fail("%zu bytes: message kind %u len %u, expected kind %u",
			    len, m.kind, m.len, kind);
	if (kind == RMSG_MSG_EAGER) {
		if (!check(m.data, seq, len))
			return false;
	} else {
		if (m.data)
			return fail("a rendezvous message with data");
		ret = rmsg_msg_recv_into(p->a.ep, &m, to, len, rud);
		if (ret)
			return fail("rmsg_msg_recv_into(%zu bytes): %d", len,
				    ret);
		/* It may go at once; the transfer goes on. */
		ret = rmsg_msg_release(p->a.ep, &m);
		if (ret)
			return fail("rmsg_msg_release: %d", ret);
		if (!wait_ev(p, &p->a, RMSG_CQE_OP, rud, &ev, XFER_TIMEOUT_MS))
			return false;
		if (ev.res || ev.len != len || ev.channel != p->a.ch)
			return fail("receive event: res %d len %u", ev.res,
				    ev.len);
		if (!check(to, seq, len) || !check_guards(to, len, 0xee))
			return false;
	}
	if (kind == RMSG_MSG_EAGER && rmsg_msg_release(p->a.ep, &m))
		return fail("rmsg_msg_release failed");
	if (!wait_ev(p, &p->b, RMSG_CQE_OP, ud, &ev, XFER_TIMEOUT_MS))
		return false;
	if (ev.res || ev.len != len)
		return fail("send event: res %d len %u, expected 0 and %zu",
			    ev.res, ev.len, len);
	return true;
}

static bool xfer(struct pair *p, unsigned int seq, size_t src, size_t dst,
		 size_t len, unsigned int kind)
{
	return xfer_how(p, seq, src, dst, len, kind, false);
}

static bool has(const char *text, const char *want)
{
	return strstr(text, want) ? true : fail("no \"%s\" in:\n%s", want, text);
}

/* No OP event waits on @s (after taking what there is). */
static bool no_op_event(struct pair *p, struct side *s)
{
	unsigned int i;

	if (!pump(&p->a) || !pump(&p->b))
		return false;
	for (i = 0; i < s->nev; i++)
		if (s->ev[i].kind == RMSG_CQE_OP)
			return fail("unexpected OP event: res %d user_data 0x%llx",
				    s->ev[i].res,
				    (unsigned long long)s->ev[i].user_data);
	return true;
}

FIXTURE(lrndv) {
	struct pair p;
	bool imm_set;
};

FIXTURE_VARIANT(lrndv) {
	bool imm;
};

FIXTURE_VARIANT_ADD(lrndv, flag) {
	.imm = false,
};

FIXTURE_VARIANT_ADD(lrndv, imm) {
	.imm = true,
};

FIXTURE_SETUP(lrndv)
{
	struct sockaddr_in addr;

	if (!rmsg_local_addr(&addr, 0))
		SKIP(rmsg_setup_skipped(_metadata); return,
		     "RMSG_LOCAL_ADDR not set: not run by rmsg-vm");
	if (!rndv_supported())
		SKIP(rmsg_setup_skipped(_metadata); return,
		     "the module does not announce RMSG_FEAT_RNDV");
	if (access(IMM_PARAM, W_OK)) {
		if (variant->imm)
			SKIP(rmsg_setup_skipped(_metadata); return,
			     "no writable %s", IMM_PARAM);
	} else {
		ASSERT_EQ(0, rmsg_write_param("force_imm_arrival",
					      variant->imm ? "1" : "0"));
		self->imm_set = true;
	}
	unsetenv("RMSG_RNDV_THRESH");
	ASSERT_TRUE(pair_open(&self->p)) TH_LOG("%s", why);
	ASSERT_EQ(0, rmsg_ep_set_rndv_threshold(self->p.b.ep, THRESH));
	ASSERT_EQ(THRESH, rmsg_ep_rndv_threshold(self->p.b.ep));
}

FIXTURE_TEARDOWN(lrndv)
{
	pair_close(&self->p);
	if (self->imm_set)
		rmsg_write_param("force_imm_arrival", "0");
}

/* rmsg_msg_send() on both sides of the threshold, up to 16 MiB, unaligned. */
TEST_F_TIMEOUT(lrndv, send_picks_by_threshold, 600)
{
	struct pair *p = &self->p;
	int max = rmsg_chan_max_msg(p->b.ep, p->b.ch);
	static const size_t rsizes[] = {
		THRESH, THRESH + 1, THRESH + 4095, 65536, 1U << 20,
		(1U << 20) + 3, 16U << 20,
	};
	static const size_t offs[] = { 0, 1, 7, 4093 };
	unsigned int seq = 0, i;
	struct rmsg_event ev;
	struct rmsg_msg m;
	unsigned char *heap;

	ASSERT_GT(max, THRESH) TH_LOG("eager maximum %d", max);
	/* In a region, below the threshold: eager. */
	ASSERT_TRUE(xfer(p, seq++, GUARD + 1, GUARD, THRESH - 1,
			 RMSG_MSG_EAGER)) TH_LOG("%s", why);
	ASSERT_TRUE(xfer(p, seq++, GUARD, GUARD, 1, RMSG_MSG_EAGER))
		TH_LOG("%s", why);
	/* From the threshold: rendezvous, at any alignment either side. */
	for (i = 0; i < ARRAY_SIZE(rsizes); i++)
		ASSERT_TRUE(xfer(p, seq++, GUARD + offs[i % 4],
				 GUARD + offs[(i + 1) % 4], rsizes[i],
				 RMSG_MSG_RNDV)) TH_LOG("%s", why);
	/* The largest eager message, in a region: rendezvous. */
	ASSERT_TRUE(xfer(p, seq++, GUARD + 3, GUARD, max, RMSG_MSG_RNDV))
		TH_LOG("%s", why);

	/* Not in a region: eager up to the eager maximum. */
	heap = malloc((size_t)max + 1);
	ASSERT_NE(NULL, heap);
	fill(heap, 77, max);
	ASSERT_EQ(0, send_wait(p, heap, max, 77));
	ASSERT_TRUE(next_msg(p, &m, EVENT_TIMEOUT_MS)) TH_LOG("%s", why);
	ASSERT_EQ(RMSG_MSG_EAGER, m.kind);
	ASSERT_EQ((unsigned int)max, m.len);
	ASSERT_TRUE(check(m.data, 77, max)) TH_LOG("%s", why);
	ASSERT_EQ(0, rmsg_msg_release(p->a.ep, &m));
	ASSERT_TRUE(wait_ev(p, &p->b, RMSG_CQE_OP, 77, &ev, EVENT_TIMEOUT_MS))
		TH_LOG("%s", why);
	ASSERT_EQ(0, ev.res);
	free(heap);
	/* A threshold above the eager maximum: too large goes rendezvous. */
	ASSERT_EQ(0, rmsg_ep_set_rndv_threshold(p->b.ep, max + 1000));
	ASSERT_TRUE(xfer(p, seq++, GUARD, GUARD, max, RMSG_MSG_EAGER))
		TH_LOG("%s", why);
	ASSERT_TRUE(xfer(p, seq++, GUARD + 1, GUARD, max + 1, RMSG_MSG_RNDV))
		TH_LOG("%s", why);
	/* SIZE_MAX: never rendezvous. */
	ASSERT_EQ(0, rmsg_ep_set_rndv_threshold(p->b.ep, SIZE_MAX));
	ASSERT_TRUE(xfer(p, seq++, GUARD, GUARD, THRESH * 2 < max ?
			 THRESH * 2 : max, RMSG_MSG_EAGER)) TH_LOG("%s", why);
	ASSERT_EQ(-EMSGSIZE, rmsg_msg_send(p->b.ep, p->b.ch, p->b.mem, 1U << 20,
					   0,
				       80));
	/* 0: rendezvous from one byte on (an empty message stays eager). */
	ASSERT_EQ(0, rmsg_ep_set_rndv_threshold(p->b.ep, 0));
	ASSERT_TRUE(xfer(p, seq++, GUARD, GUARD + 5, 1, RMSG_MSG_RNDV))
		TH_LOG("%s", why);
	ASSERT_TRUE(xfer(p, seq++, GUARD, GUARD, 0, RMSG_MSG_EAGER))
		TH_LOG("%s", why);
}

/*
 * A channel's own threshold: its rmsg_msg_send()s follow it, not the
 * endpoint's, and rmsg_chan_protocol_info() shows it.
 */
TEST_F_TIMEOUT(lrndv, channel_threshold, 300)
{
	struct pair *p = &self->p;
	char *text = NULL;
	unsigned int seq = 300;
	size_t n = 0;
	FILE *f;

	EXPECT_EQ(-ENOTCONN, rmsg_chan_set_rndv_threshold(p->b.ep, 4000,
							  100));
	/* The endpoint's 8 KiB: 10000 bytes from the region go zero copy. */
	ASSERT_TRUE(xfer(p, seq++, GUARD, GUARD, 10000, RMSG_MSG_RNDV))
		TH_LOG("%s", why);
	/* The channel's: never, then from 100 bytes. */
	ASSERT_EQ(0, rmsg_chan_set_rndv_threshold(p->b.ep, p->b.ch,
						  SIZE_MAX));
	ASSERT_TRUE(xfer(p, seq++, GUARD, GUARD, 10000, RMSG_MSG_EAGER))
		TH_LOG("%s", why);
	ASSERT_EQ(0, rmsg_chan_set_rndv_threshold(p->b.ep, p->b.ch, 100));
	ASSERT_TRUE(xfer(p, seq++, GUARD + 1, GUARD, 200, RMSG_MSG_RNDV))
		TH_LOG("%s", why);
	ASSERT_TRUE(xfer(p, seq++, GUARD, GUARD, 99, RMSG_MSG_EAGER))
		TH_LOG("%s", why);
	/* The endpoint's threshold no longer applies to it. */
	ASSERT_EQ(0, rmsg_ep_set_rndv_threshold(p->b.ep, SIZE_MAX));
	ASSERT_TRUE(xfer(p, seq++, GUARD, GUARD, 300, RMSG_MSG_RNDV))
		TH_LOG("%s", why);
	f = open_memstream(&text, &n);
	ASSERT_NE(NULL, f);
	ASSERT_EQ(0, rmsg_chan_protocol_info(p->b.ep, p->b.ch, f));
	fclose(f);
	EXPECT_TRUE(has(text, "0 .. 99 ")) TH_LOG("%s", why);
	free(text);
}

/* Eager and rendezvous messages interleaved arrive in their order. */
TEST_F_TIMEOUT(lrndv, interleaved_in_order, 600)
{
	struct pair *p = &self->p;
	enum { N = 40 };
	static unsigned char small[N][256];
	size_t len[N], off[N], dst[N], next_dst = GUARD;
	unsigned int i, got = 0, sent = 0;
	struct rmsg_event ev;
	struct rmsg_msg m;
	const void *buf;
	long deadline;
	int ret;

	/* Every third message rendezvous, of varying sizes. */
	for (i = 0, off[0] = GUARD; i < N; i++) {
		len[i] = i % 3 == 1 ? THRESH + i * 1021 : 1 + i * 5;
		if (i)
			off[i] = off[i - 1] + len[i - 1] + 64 + i;
		if (i % 3 == 1)
			fill(p->b.mem + off[i], i, len[i]);
		else
			fill(small[i], i, len[i]);
	}
	/* Send while receiving: the sender has 8 transfers announced. */
	deadline = rmsg_now_ms() + XFER_TIMEOUT_MS;
	while (got < N) {
		ASSERT_LT(rmsg_now_ms(), deadline) TH_LOG("%u sent, %u got",
							  sent, got);
		if (sent < N) {
			buf = sent % 3 == 1 ? (void *)(p->b.mem + off[sent]) :
					      (void *)small[sent];
			ret = rmsg_msg_send(p->b.ep, p->b.ch, buf, len[sent], 0,
					    0x100 + sent);
			if (ret != -EAGAIN) {
				ASSERT_EQ(0, ret);
				sent++;
			}
		}
		ret = rmsg_msg_peek(p->a.ep, p->a.ch, &m);
		if (ret == -EAGAIN) {
			ASSERT_TRUE(pump(&p->a) && pump(&p->b)) TH_LOG("%s", why);
			continue;
		}
		ASSERT_EQ(0, ret);
		ASSERT_EQ(got % 3 == 1 ? RMSG_MSG_RNDV : RMSG_MSG_EAGER, m.kind)
			TH_LOG("message %u", got);
		ASSERT_EQ(len[got], m.len);
		if (m.kind == RMSG_MSG_EAGER) {
			ASSERT_TRUE(check(m.data, got, m.len)) TH_LOG("%s", why);
		} else {
			dst[got] = next_dst;
			next_dst += len[got] + 32;
			ASSERT_EQ(0, rmsg_msg_recv_into(p->a.ep, &m,
							p->a.mem + dst[got],
						    len[got], 0x200 + got));
		}
		ASSERT_EQ(0, rmsg_msg_release(p->a.ep, &m));
		got++;
	}
	for (i = 0; i < N; i++) {
		if (i % 3 == 1) {
			ASSERT_TRUE(wait_ev(p, &p->a, RMSG_CQE_OP, 0x200 + i,
					    &ev, XFER_TIMEOUT_MS))
				TH_LOG("%s", why);
			ASSERT_EQ(0, ev.res);
			ASSERT_EQ(len[i], ev.len);
			ASSERT_TRUE(check(p->a.mem + dst[i], i, len[i]))
				TH_LOG("%s", why);
		}
		ASSERT_TRUE(wait_ev(p, &p->b, RMSG_CQE_OP, 0x100 + i, &ev,
				    XFER_TIMEOUT_MS)) TH_LOG("%s", why);
		ASSERT_EQ(0, ev.res) TH_LOG("send %u", i);
		ASSERT_EQ(len[i], ev.len);
	}
}

/* rmsg_msg_recv_into()'s checks, and its completion events. */
TEST_F_TIMEOUT(lrndv, recv_into_checks, 300)
{
	struct pair *p = &self->p;
	const size_t L = 2 * THRESH + 5;
	unsigned char *heap = malloc(L), *to = p->a.mem + GUARD;
	struct rmsg_msg m[4];
	struct rmsg_event ev;
	unsigned int i;

	ASSERT_NE(NULL, heap);
	memset(p->a.mem, 0xee, 4 * L + 4 * GUARD);
	for (i = 0; i < 3; i++) {
		fill(p->b.mem + i * L, i, L);
		ASSERT_EQ(0, send_wait(p, p->b.mem + i * L, L, 1 + i));
	}
	fill(heap, 3, 100);
	ASSERT_EQ(0, send_wait(p, heap, 100, 4));
	for (i = 0; i < 4; i++)
		ASSERT_TRUE(next_msg(p, &m[i], EVENT_TIMEOUT_MS))
			TH_LOG("%s", why);
	for (i = 0; i < 3; i++) {
		ASSERT_EQ(RMSG_MSG_RNDV, m[i].kind);
		ASSERT_EQ(L, m[i].len);
	}
	ASSERT_EQ(RMSG_MSG_EAGER, m[3].kind);
	ASSERT_TRUE(check(m[3].data, 3, 100)) TH_LOG("%s", why);

	/*
	 * Out of order; too small; outside any region (an answer the kernel
	 * pins for, where it can: plain_memory_*); eager.
	 */
	EXPECT_EQ(-EINVAL, rmsg_msg_recv_into(p->a.ep, &m[1], to, L, 0x12));
	EXPECT_EQ(-EMSGSIZE, rmsg_msg_recv_into(p->a.ep, &m[0], to, L - 1,
						0x11));
	if (!pin_supported(&p->a)) {
		EXPECT_EQ(-EFAULT, rmsg_msg_recv_into(p->a.ep, &m[0], heap, L,
						      0x11));
		EXPECT_EQ(-EFAULT, rmsg_msg_recv_into(p->a.ep, &m[0],
						      p->a.mem + REGION - L / 2,
						  L, 0x11));
	}
	EXPECT_EQ(-EINVAL, rmsg_msg_recv_into(p->a.ep, &m[3], to, L, 0x14));
	EXPECT_EQ(-EINVAL, rmsg_msg_discard(p->a.ep, &m[3]));
	/* In order, each once; more room than needed is fine. */
	ASSERT_EQ(0, rmsg_msg_recv_into(p->a.ep, &m[0], to, L + 100, 0x11));
	EXPECT_EQ(-EINVAL, rmsg_msg_recv_into(p->a.ep, &m[0], to, L, 0x11));
	ASSERT_EQ(0, rmsg_msg_recv_into(p->a.ep, &m[1], to + L + GUARD, L,
					0x12));
	ASSERT_EQ(0, rmsg_msg_recv_into(p->a.ep, &m[2], to + 2 * (L + GUARD), L,
					0x13));
	ASSERT_EQ(0, rmsg_msg_release(p->a.ep, &m[3]));
	for (i = 0; i < 3; i++) {
		ASSERT_TRUE(wait_ev(p, &p->a, RMSG_CQE_OP, 0x11 + i, &ev,
				    XFER_TIMEOUT_MS)) TH_LOG("%s", why);
		EXPECT_EQ(0, ev.res);
		EXPECT_EQ(L, ev.len);
		EXPECT_EQ(p->a.ch, ev.channel);
		ASSERT_TRUE(check(to + i * (L + GUARD), i, L)) TH_LOG("%s", why);
		ASSERT_TRUE(check_guards(to + i * (L + GUARD), L, 0xee))
			TH_LOG("%s", why);
	}
	for (i = 0; i < 4; i++) {
		ASSERT_TRUE(wait_ev(p, &p->b, RMSG_CQE_OP, 1 + i, &ev,
				    XFER_TIMEOUT_MS)) TH_LOG("%s", why);
		EXPECT_EQ(0, ev.res);
	}
	free(heap);
}

/* rmsg_msg_send_zc()'s checks; it goes rendezvous whatever the size. */
TEST_F_TIMEOUT(lrndv, send_zc, 300)
{
	struct pair *p = &self->p;
	unsigned char heap[64];

	EXPECT_EQ(-EMSGSIZE, rmsg_msg_send_zc(p->b.ep, p->b.ch, p->b.mem, 0, 0,
					      1));
	EXPECT_EQ(-EMSGSIZE, rmsg_msg_send_zc(p->b.ep, p->b.ch, p->b.mem,
					      (size_t)RMSG_RNDV_MAX_LEN + 1, 0, 1));
	/* Outside any region: refused, unless the kernel pins for it. */
	if (!pin_supported(&p->b)) {
		EXPECT_EQ(-EFAULT, rmsg_msg_send_zc(p->b.ep, p->b.ch, heap,
						    sizeof(heap), 0, 1));
		EXPECT_EQ(-EFAULT, rmsg_msg_send_zc(p->b.ep, p->b.ch,
						    p->b.mem + REGION - 10, 11, 0,
						1));
	}
	EXPECT_EQ(-EINVAL, rmsg_msg_send_zc(p->b.ep, p->b.ch, p->b.mem, 10,
					    0x80, 1));
	EXPECT_EQ(-ENOTCONN, rmsg_msg_send_zc(p->b.ep, 4000, p->b.mem, 10, 0,
					      1));
	ASSERT_TRUE(no_op_event(p, &p->b)) TH_LOG("%s", why);
	ASSERT_TRUE(xfer_how(p, 1, GUARD + 1, GUARD, 1, RMSG_MSG_RNDV, true))
		TH_LOG("%s", why);
	ASSERT_TRUE(xfer_how(p, 2, GUARD, GUARD + 3, 100, RMSG_MSG_RNDV, true))
		TH_LOG("%s", why);
	ASSERT_TRUE(xfer_how(p, 3, GUARD + 9, GUARD, 5U << 20, RMSG_MSG_RNDV,
			     true)) TH_LOG("%s", why);
	/* RPut: the receiving program does the same. */
	ASSERT_TRUE(xfer_how(p, 4, GUARD + 5, GUARD + 1, 77, RMSG_MSG_RNDV,
			     ZC_PUT)) TH_LOG("%s", why);
	ASSERT_TRUE(xfer_how(p, 5, GUARD + 3, GUARD + 7, (3U << 20) + 5,
			     RMSG_MSG_RNDV, ZC_PUT)) TH_LOG("%s", why);
}

static uint64_t enters(struct side *s)
{
	struct rmsg_ep_stats st;

	memset(&st, 0, sizeof(st));
	if (ioctl(rmsg_ep_fd(s->ep), RMSG_IOC_EP_STATS, &st))
		return 0;
	return st.enters;
}

/*
 * On rxe, a busy poll that finds nothing while a rendezvous transfer is in
 * flight lends its CPU to the device (RMSG_ENTER_LEND): the endpoint says
 * it is on a software device, and each such poll enters the kernel. An
 * eager message never does: the same polls enter no more than the sends.
 */
TEST_F_TIMEOUT(lrndv, lends_while_moving, 300)
{
	struct pair *p = &self->p;
	uint64_t before, eager, rndv;
	unsigned int i;

	ASSERT_TRUE(RMSG_CQ_SOFT_DEVICE &
		    *rmsg_ep_rings(p->a.ep)->cq.flags);
	ASSERT_TRUE(RMSG_CQ_SOFT_DEVICE &
		    *rmsg_ep_rings(p->b.ep)->cq.flags);

	before = enters(&p->a) + enters(&p->b);
	for (i = 0; i < 4; i++)
		ASSERT_TRUE(xfer(p, 20 + i, GUARD, GUARD, 100,
				 RMSG_MSG_EAGER)) TH_LOG("%s", why);
	eager = enters(&p->a) + enters(&p->b) - before;

	before = enters(&p->a) + enters(&p->b);
	for (i = 0; i < 4; i++)
		ASSERT_TRUE(xfer_how(p, 30 + i, GUARD, GUARD, 4U << 20,
				     RMSG_MSG_RNDV, true)) TH_LOG("%s", why);
	rndv = enters(&p->a) + enters(&p->b) - before;
	ksft_print_msg("enters: %llu for 4 eager messages, %llu for 4 rendezvous ones\n",
		       (unsigned long long)eager, (unsigned long long)rndv);
	/*
	 * Without lending a zero-copy transfer enters about as often as an
	 * eager one (its SQEs); lending adds one per empty poll of each side.
	 */
	EXPECT_LT(eager + 4, rndv);
}

/* rmsg_msg_discard(): the sender hears -ECANCELED, the receiver nothing. */
TEST_F_TIMEOUT(lrndv, discard, 300)
{
	struct pair *p = &self->p;
	unsigned char small[16];
	struct rmsg_event ev;
	struct rmsg_msg m, e;

	fill(p->b.mem, 1, 3 * THRESH);
	fill(small, 2, sizeof(small));
	ASSERT_EQ(0, send_wait(p, p->b.mem, 3 * THRESH, 0x31));
	ASSERT_EQ(0, send_wait(p, small, sizeof(small), 0x32));
	ASSERT_TRUE(next_msg(p, &m, EVENT_TIMEOUT_MS)) TH_LOG("%s", why);
	ASSERT_EQ(RMSG_MSG_RNDV, m.kind);
	ASSERT_EQ(0, rmsg_msg_discard(p->a.ep, &m));
	EXPECT_EQ(-EINVAL, rmsg_msg_discard(p->a.ep, &m));
	EXPECT_EQ(-EINVAL, rmsg_msg_recv_into(p->a.ep, &m, p->a.mem, 3 * THRESH,
					      0x33));
	ASSERT_TRUE(wait_ev(p, &p->b, RMSG_CQE_OP, 0x31, &ev, XFER_TIMEOUT_MS))
		TH_LOG("%s", why);
	EXPECT_EQ(-ECANCELED, ev.res);
	ASSERT_TRUE(next_msg(p, &e, EVENT_TIMEOUT_MS)) TH_LOG("%s", why);
	ASSERT_EQ(RMSG_MSG_EAGER, e.kind);
	ASSERT_TRUE(check(e.data, 2, sizeof(small))) TH_LOG("%s", why);
	ASSERT_EQ(0, rmsg_msg_release(p->a.ep, &e));
	ASSERT_TRUE(wait_ev(p, &p->b, RMSG_CQE_OP, 0x32, &ev, XFER_TIMEOUT_MS))
		TH_LOG("%s", why);
	EXPECT_EQ(0, ev.res);
	ASSERT_TRUE(no_op_event(p, &p->a)) TH_LOG("%s", why);
	/* The channel goes on. */
	ASSERT_TRUE(xfer(p, 3, GUARD, GUARD, 2 * THRESH, RMSG_MSG_RNDV))
		TH_LOG("%s", why);
}

/*
 * Released unanswered, a rendezvous message is discarded: more than the
 * sender's window of them, then one released by a later message's
 * release, and the channel's transfers still go on.
 */
TEST_F_TIMEOUT(lrndv, release_discards, 300)
{
	struct pair *p = &self->p;
	enum { N = 20 };
	unsigned int i, got = 0, sent = 0;
	unsigned char small[8];
	struct rmsg_event ev;
	struct rmsg_msg m, m2;
	long deadline = rmsg_now_ms() + XFER_TIMEOUT_MS;
	int ret;

	fill(p->b.mem, 1, THRESH);
	while (got < N) {
		ASSERT_LT(rmsg_now_ms(), deadline);
		if (sent < N) {
			ret = rmsg_msg_send(p->b.ep, p->b.ch, p->b.mem, THRESH,
					    0,
					    0x400 + sent);
			if (ret != -EAGAIN) {
				ASSERT_EQ(0, ret);
				sent++;
			}
		}
		ret = rmsg_msg_peek(p->a.ep, p->a.ch, &m);
		if (ret == -EAGAIN) {
			ASSERT_TRUE(pump(&p->a) && pump(&p->b)) TH_LOG("%s", why);
			continue;
		}
		ASSERT_EQ(0, ret);
		ASSERT_EQ(RMSG_MSG_RNDV, m.kind);
		ASSERT_EQ(0, rmsg_msg_release(p->a.ep, &m));
		got++;
	}
	for (i = 0; i < N; i++) {
		ASSERT_TRUE(wait_ev(p, &p->b, RMSG_CQE_OP, 0x400 + i, &ev,
				    XFER_TIMEOUT_MS)) TH_LOG("%s", why);
		EXPECT_EQ(-ECANCELED, ev.res) TH_LOG("send %u", i);
	}
	/* Held, then covered by the release of the eager one after it. */
	fill(small, 9, sizeof(small));
	ASSERT_EQ(0, send_wait(p, p->b.mem, THRESH, 0x500));
	ASSERT_EQ(0, send_wait(p, small, sizeof(small), 0x501));
	ASSERT_TRUE(next_msg(p, &m, EVENT_TIMEOUT_MS)) TH_LOG("%s", why);
	ASSERT_TRUE(next_msg(p, &m2, EVENT_TIMEOUT_MS)) TH_LOG("%s", why);
	ASSERT_EQ(RMSG_MSG_RNDV, m.kind);
	ASSERT_EQ(RMSG_MSG_EAGER, m2.kind);
	ASSERT_EQ(0, rmsg_msg_release(p->a.ep, &m2));
	EXPECT_EQ(-EINVAL, rmsg_msg_recv_into(p->a.ep, &m, p->a.mem, THRESH,
					      1));
	ASSERT_TRUE(wait_ev(p, &p->b, RMSG_CQE_OP, 0x500, &ev, XFER_TIMEOUT_MS))
		TH_LOG("%s", why);
	EXPECT_EQ(-ECANCELED, ev.res);
	ASSERT_TRUE(wait_ev(p, &p->b, RMSG_CQE_OP, 0x501, &ev, XFER_TIMEOUT_MS))
		TH_LOG("%s", why);
	EXPECT_EQ(0, ev.res);
	ASSERT_TRUE(no_op_event(p, &p->a)) TH_LOG("%s", why);
	ASSERT_TRUE(xfer(p, 5, GUARD + 2, GUARD + 1, 1U << 20, RMSG_MSG_RNDV))
		TH_LOG("%s", why);
}

/* rmsg_msg_recv() copies rendezvous messages out, in order with eager ones. */
TEST_F_TIMEOUT(lrndv, recv_copy_path, 300)
{
	struct pair *p = &self->p;
	static const size_t len[] = {
		100, (1U << 20) + 3, 5, THRESH, 2U << 20, 1, THRESH + 1,
	};
	enum { N = ARRAY_SIZE(len) };
	size_t off = GUARD, cap = (2U << 20) + 64;
	unsigned char *buf = malloc(cap), small[128];
	long deadline = rmsg_now_ms() + XFER_TIMEOUT_MS;
	struct rmsg_event ev;
	unsigned int i, waits = 0;
	int ret;

	ASSERT_NE(NULL, buf);
	for (i = 0; i < N; i++) {
		if (len[i] >= THRESH) {
			fill(p->b.mem + off, i, len[i]);
			ASSERT_EQ(0, send_wait(p, p->b.mem + off, len[i], i));
			off += len[i] + 17;
		} else {
			fill(small, i, len[i]);
			ASSERT_EQ(0, send_wait(p, small, len[i], i));
		}
	}
	for (i = 0; i < N; i++) {
		/* Too small: -EMSGSIZE at once, and the message stays. */
		EXPECT_EQ(-EMSGSIZE, rmsg_msg_recv(p->a.ep, p->a.ch, buf,
						   len[i] - 1, 0)) TH_LOG("message %u", i);
		memset(buf, 0xee, cap);
		for (;;) {
			ret = rmsg_msg_recv(p->a.ep, p->a.ch, buf, cap, 0);
			if (ret != -EAGAIN)
				break;
			ASSERT_LT(rmsg_now_ms(), deadline);
			/* It sleeps until the transfer's CQE. */
			ASSERT_LE(0, rmsg_ep_wait(p->a.ep, 1000));
			waits++;
		}
		ASSERT_EQ((int)len[i], ret) TH_LOG("message %u", i);
		ASSERT_TRUE(check(buf, i, len[i])) TH_LOG("%s", why);
		ASSERT_EQ(0xee, buf[len[i]]);
	}
	for (i = 0; i < N; i++) {
		ASSERT_TRUE(wait_ev(p, &p->b, RMSG_CQE_OP, i, &ev,
				    XFER_TIMEOUT_MS)) TH_LOG("%s", why);
		EXPECT_EQ(0, ev.res) TH_LOG("send %u", i);
	}
	ASSERT_TRUE(no_op_event(p, &p->a)) TH_LOG("%s", why);
	TH_LOG("%u waits for %d rendezvous copies", waits, 4);
	ASSERT_EQ(-EAGAIN, rmsg_msg_recv(p->a.ep, p->a.ch, buf, cap, 0));
	free(buf);
}

/*
 * Memory in no region (RMSG_FEAT_RNDV_PIN): @tx sends @len bytes of
 * pattern @seq from malloc() memory at an odd offset with rmsg_msg_send() (or
 * rmsg_msg_send_zc() when @zc, RPut for ZC_PUT); @rx
 * takes it eager, or receives it with rmsg_msg_recv_into() into malloc()
 * memory between guards. Both completions and every byte are checked.
 */
static bool xfer_plain(struct pair *p, struct side *tx, struct side *rx,
		       unsigned int seq, size_t len, int zc)
{
	uint64_t ud = 0x91000000ULL + seq, rud = 0x92000000ULL + seq;
	int max = rmsg_chan_max_msg(tx->ep, tx->ch);
	unsigned char *src = malloc(len + 3), *dst = malloc(len + 2 * GUARD);
	long deadline = rmsg_now_ms() + XFER_TIMEOUT_MS;
	unsigned int kind = zc || (long)len > max ? RMSG_MSG_RNDV :
						   RMSG_MSG_EAGER;
	struct rmsg_event ev;
	struct rmsg_msg m;
	bool ok = false;
	int ret;

	if (!src || !dst || max <= 0) {
		fail("malloc of %zu bytes, or eager maximum %d", len, max);
		goto out;
	}
	fill(src + 3, seq, len);
	memset(dst, 0xee, len + 2 * GUARD);
	while ((ret = zc ? rmsg_msg_send_zc(tx->ep, tx->ch, src + 3, len,
					    zc == ZC_PUT ? RMSG_ZC_PUT : 0, ud) :
			   rmsg_msg_send(tx->ep, tx->ch, src + 3, len, 0,
					 ud)) ==
	       -EAGAIN && rmsg_now_ms() < deadline)
		if (!pump(&p->a) || !pump(&p->b))
			goto out;
	if (ret) {
		fail("rmsg_msg_send of %zu bytes in no region: %d", len, ret);
		goto out;
	}
	while ((ret = rmsg_msg_peek(rx->ep, rx->ch, &m)) == -EAGAIN &&
	       rmsg_now_ms() < deadline)
		if (!pump(&p->a) || !pump(&p->b))
			goto out;
	if (ret || m.kind != kind || m.len != len) {
		fail("%zu bytes: peek %d, kind %u len %u, expected kind %u",
		     len, ret, m.kind, m.len, kind);
		goto out;
	}
	if (kind == RMSG_MSG_EAGER) {
		if (!check(m.data, seq, len))
			goto out;
	} else {
		ret = rmsg_msg_recv_into(rx->ep, &m, dst + GUARD, len, rud);
		if (ret) {
			fail("rmsg_msg_recv_into(%zu bytes), no region: %d",
			     len,
			     ret);
			goto out;
		}
	}
	if (rmsg_msg_release(rx->ep, &m)) {
		fail("rmsg_msg_release");
		goto out;
	}
	if (kind == RMSG_MSG_RNDV) {
		if (!wait_ev(p, rx, RMSG_CQE_OP, rud, &ev, XFER_TIMEOUT_MS))
			goto out;
		if (ev.res || ev.len != len) {
			fail("receive event: res %d len %u", ev.res, ev.len);
			goto out;
		}
		if (!check(dst + GUARD, seq, len) ||
		    !check_guards(dst + GUARD, len, 0xee))
			goto out;
	}
	if (!wait_ev(p, tx, RMSG_CQE_OP, ud, &ev, XFER_TIMEOUT_MS))
		goto out;
	if (ev.res || ev.len != len) {
		fail("send event of %zu bytes: res %d len %u", len, ev.res,
		     ev.len);
		goto out;
	}
	ok = true;
out:
	free(src);
	free(dst);
	return ok;
}

/*
 * rmsg_msg_sendv() from b to a of @n pieces, @len bytes in all (pattern @seq),
 * each piece malloc()ed on its own at an odd address and, when there are
 * several, overwritten and freed as soon as the call returns (the library
 * copied them); a single piece belongs to its send until the completion,
 * as for rmsg_msg_send().
 * a takes the one message eager, or with rmsg_msg_recv_into() into malloc()
 * memory; both completions and every byte are checked.
 */
static bool xfer_gather(struct pair *p, unsigned int seq, int n, size_t len)
{
	uint64_t ud = 0x93000000ULL + seq, rud = 0x94000000ULL + seq;
	int max = rmsg_chan_max_msg(p->b.ep, p->b.ch);
	unsigned int kind = (long)len > max ? RMSG_MSG_RNDV : RMSG_MSG_EAGER;
	long deadline = rmsg_now_ms() + XFER_TIMEOUT_MS;
	unsigned char *whole = malloc(len + 1), *dst = NULL;
	struct iovec iov[RMSG_IOV_MAX];
	size_t off = 0, piece;
	struct rmsg_event ev;
	struct rmsg_msg m;
	bool ok = false;
	int i, ret;

	memset(iov, 0, sizeof(iov));
	if (!whole || n < 1 || n > RMSG_IOV_MAX)
		return fail("malloc, or %d pieces", n);
	fill(whole, seq, len);
	/* Uneven pieces, some empty; the last takes the rest. */
	for (i = 0; i < n; i++) {
		piece = i == n - 1 ? len - off :
			(i % 5 == 3) ? 0 : (len / n) + (i % 3) - 1;
		if (piece > len - off)
			piece = len - off;
		iov[i].iov_base = (unsigned char *)malloc(piece + 8) + (i % 7);
		iov[i].iov_len = piece;
		memcpy(iov[i].iov_base, whole + off, piece);
		off += piece;
	}
	while ((ret = rmsg_msg_sendv(p->b.ep, p->b.ch, iov, n, 0, ud)) ==
	       -EAGAIN && rmsg_now_ms() < deadline)
		if (!pump(&p->a) || !pump(&p->b))
			goto out;
	for (i = 0; n > 1 && i < n; i++) {
		memset(iov[i].iov_base, 0x55, iov[i].iov_len);
		free((unsigned char *)iov[i].iov_base - (i % 7));
	}
	if (ret) {
		fail("rmsg_msg_sendv of %d pieces, %zu bytes: %d", n, len, ret);
		goto out;
	}
	if (!next_msg(p, &m, XFER_TIMEOUT_MS))
		goto out;
	if (m.kind != kind || m.len != len) {
		fail("%d pieces: message kind %u len %u, expected %u and %zu",
		     n, m.kind, m.len, kind, len);
		goto out;
	}
	if (kind == RMSG_MSG_EAGER) {
		if (!check(m.data, seq, len))
			goto out;
	} else {
		dst = malloc(len);
		if (!dst || rmsg_msg_recv_into(p->a.ep, &m, dst, len, rud)) {
			fail("receiving %zu bytes", len);
			goto out;
		}
	}
	if (rmsg_msg_release(p->a.ep, &m)) {
		fail("rmsg_msg_release");
		goto out;
	}
	if (kind == RMSG_MSG_RNDV &&
	    (!wait_ev(p, &p->a, RMSG_CQE_OP, rud, &ev, XFER_TIMEOUT_MS) ||
	     (ev.res && fail("receive event: res %d", ev.res)) ||
	     !check(dst, seq, len)))
		goto out;
	if (!wait_ev(p, &p->b, RMSG_CQE_OP, ud, &ev, XFER_TIMEOUT_MS))
		goto out;
	ok = ev.res == 0 && ev.len == len ? true :
	     fail("send event: res %d len %u", ev.res, ev.len);
out:
	if (n == 1)
		free((unsigned char *)iov[0].iov_base);
	free(whole);
	free(dst);
	return ok;
}

/*
 * rmsg_msg_sendv(): 1 to 64 pieces, one message each, eager and (from pieces
 * gathered by the library, pinned by the kernel) rendezvous.
 */
TEST_F_TIMEOUT(lrndv, sendv, 600)
{
	struct pair *p = &self->p;
	int max = rmsg_chan_max_msg(p->b.ep, p->b.ch);
	static const int counts[] = { 1, 2, 3, 17, 64 };
	struct iovec iov[RMSG_IOV_MAX + 1];
	unsigned int seq = 400, i;
	long pin0 = rmsg_vmpin_kb();

	ASSERT_LT(0, max);
	memset(iov, 0, sizeof(iov));
	iov[0].iov_base = p->b.mem;
	iov[0].iov_len = 1;
	EXPECT_EQ(-EINVAL, rmsg_msg_sendv(p->b.ep, p->b.ch, iov, 0, 0, 1));
	EXPECT_EQ(-EINVAL, rmsg_msg_sendv(p->b.ep, p->b.ch, iov,
					  RMSG_IOV_MAX + 1, 0, 1));
	EXPECT_EQ(-EINVAL, rmsg_msg_sendv(p->b.ep, p->b.ch, NULL, 1, 0, 1));
	EXPECT_EQ(-EINVAL, rmsg_msg_sendv(p->b.ep, p->b.ch, iov, 1, 0x80, 1));
	/* More than a rendezvous carries, in all: nothing is read. */
	iov[0].iov_len = RMSG_RNDV_MAX_LEN / 2 + 1;
	iov[1].iov_base = p->b.mem;
	iov[1].iov_len = RMSG_RNDV_MAX_LEN / 2 + 1;
	EXPECT_EQ(-EMSGSIZE, rmsg_msg_sendv(p->b.ep, p->b.ch, iov, 2, 0, 1));
	EXPECT_EQ(-ENOTCONN, rmsg_msg_sendv(p->b.ep, 4000, iov, 1, 0, 1));
	ASSERT_TRUE(no_op_event(p, &p->b)) TH_LOG("%s", why);

	for (i = 0; i < ARRAY_SIZE(counts); i++) {
		ASSERT_TRUE(xfer_gather(p, seq++, counts[i], counts[i] * 7))
			TH_LOG("%d pieces, eager: %s", counts[i], why);
		ASSERT_TRUE(xfer_gather(p, seq++, counts[i], max))
			TH_LOG("%d pieces, the eager maximum: %s", counts[i],
			       why);
		if (!pin_supported(&p->b))
			continue;
		ASSERT_TRUE(xfer_gather(p, seq++, counts[i], max + 1))
			TH_LOG("%d pieces, rendezvous: %s", counts[i], why);
		ASSERT_TRUE(xfer_gather(p, seq++, counts[i],
					(1U << 20) + counts[i]))
			TH_LOG("%d pieces, 1 MiB: %s", counts[i], why);
	}
	EXPECT_EQ(pin0, rmsg_vmpin_kb());
}

/*
 * Any size from and into malloc() memory, both ways (PLAIN_LARGEST one
 * way): eager up to the eager maximum, zero copy from pages pinned for the
 * transfer above it; pinned memory goes back after each. The imm variant
 * leaves PLAIN_LARGEST out, as rndv.largest's does: with force_imm_arrival
 * only the arrival of the request differs, not the pinning or the move,
 * which the flag variant's covers (some 6 s of make check).
 *
 * PLAIN_LARGEST, twice the next size and above the fixture's regions, is
 * 8,192 pages pinned for one message. It was 64 MiB, whose second half
 * took some 4-5 s of make check under emulation: neither librmsg nor the
 * module treats a message differently between the two (RMSG_RNDV_MAX_LEN
 * is 1 GiB; the kernel moves any of them 1 MiB a READ).
 */
#define PLAIN_LARGEST		(32U << 20)

TEST_F_TIMEOUT(lrndv, plain_memory_sizes, 900)
{
	struct pair *p = &self->p;
	int max = rmsg_chan_max_msg(p->b.ep, p->b.ch);
	long pin0 = rmsg_vmpin_kb(), pins0 = rmsg_pins();
	size_t sizes[] = {
		0, 1, 4000, max, max + 1, (100U << 10) + 7, 1U << 20,
		(16U << 20) + 5, PLAIN_LARGEST,
	};
	unsigned int i, n, seq = 100;

	if (!pin_supported(&p->b))
		SKIP(return, "the module does not announce RMSG_FEAT_RNDV_PIN");
	ASSERT_LT(0, max);
	ASSERT_LE(0, pin0);
	/*
	 * Not PLAIN_LARGEST on a slow kernel: the debug kernel's rxe answers
	 * an RDMA READ in one softirq run, 64 MiB of KASAN-checked copies
	 * took over 20 s: the soft lockup watchdog's report, not rmsg's.
	 */
	n = rmsg_test_slow() > 1 ? ARRAY_SIZE(sizes) - 1 : ARRAY_SIZE(sizes);
	for (i = 0; i < n; i++) {
		if (variant->imm && sizes[i] == PLAIN_LARGEST)
			break;
		ASSERT_TRUE(xfer_plain(p, &p->b, &p->a, seq++, sizes[i], 0))
			TH_LOG("b to a: %s", why);
		/*
		 * The largest one way only: the way back is the same code on
		 * the other endpoint, and 64 MiB more cost 15 s a variant.
		 */
		if (i + 1 < n)
			ASSERT_TRUE(xfer_plain(p, &p->a, &p->b, seq++,
					       sizes[i], 0))
				TH_LOG("a to b: %s", why);
		EXPECT_EQ(pin0, rmsg_vmpin_kb()) TH_LOG("%zu bytes", sizes[i]);
		EXPECT_TRUE(rmsg_pins_are(pins0, 0)) TH_LOG("%zu bytes",
							    sizes[i]);
	}
	/* rmsg_msg_send_zc() from memory in no region: same path, RPut too. */
	ASSERT_TRUE(xfer_plain(p, &p->b, &p->a, seq++, 3U << 20, 1))
		TH_LOG("%s", why);
	ASSERT_TRUE(xfer_plain(p, &p->b, &p->a, seq++, 100, ZC_PUT))
		TH_LOG("%s", why);
	EXPECT_EQ(pin0, rmsg_vmpin_kb());
}

/*
 * Memory that is the program's but not yet in its page tables: a send from
 * a shared file mapping whose pages are only in the page cache, a receive
 * into anonymous memory never touched. Pinning either faults pages in
 * under mmap_lock, which the kernel must not do under a lock its rdma_cm
 * handlers take, while the fixture's open mapped receive blocks (mmap_lock
 * first) and opened channels: the three orders of the cycle
 * Documentation/hardening.rst describes, which lockdep names in make
 * check-debug when the pin is made under ep->lock. Every byte is checked.
 */
TEST_F_TIMEOUT(lrndv, plain_memory_not_faulted_in, 300)
{
	struct pair *p = &self->p;
	uint64_t ud = 0x93000001ULL, rud = 0x94000001ULL;
	size_t len = (1U << 20) + 100;
	unsigned char *src, *dst, *buf;
	struct rmsg_event ev;
	struct rmsg_msg m;
	long deadline;
	int fd, ret;

	if (!pin_supported(&p->b))
		SKIP(return, "the module does not announce RMSG_FEAT_RNDV_PIN");
	buf = malloc(len);
	ASSERT_NE(NULL, buf);
	fill(buf, 7, len);
	fd = memfd_create("rmsg-src", 0);
	ASSERT_LE(0, fd);
	ASSERT_EQ((ssize_t)len, write(fd, buf, len));
	free(buf);
	src = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, 0);
	ASSERT_NE(MAP_FAILED, src);
	dst = mmap(NULL, len, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, dst);

	deadline = rmsg_now_ms() + XFER_TIMEOUT_MS;
	while ((ret = rmsg_msg_send_zc(p->b.ep, p->b.ch, src, len, 0, ud)) ==
	       -EAGAIN && rmsg_now_ms() < deadline)
		ASSERT_TRUE(pump(&p->a) && pump(&p->b)) TH_LOG("%s", why);
	ASSERT_EQ(0, ret);
	while ((ret = rmsg_msg_peek(p->a.ep, p->a.ch, &m)) == -EAGAIN &&
	       rmsg_now_ms() < deadline)
		ASSERT_TRUE(pump(&p->a) && pump(&p->b)) TH_LOG("%s", why);
	ASSERT_EQ(0, ret);
	ASSERT_EQ(RMSG_MSG_RNDV, m.kind);
	ASSERT_EQ(len, m.len);
	ASSERT_EQ(0, rmsg_msg_recv_into(p->a.ep, &m, dst, len, rud));
	ASSERT_EQ(0, rmsg_msg_release(p->a.ep, &m));
	ASSERT_TRUE(wait_ev(p, &p->a, RMSG_CQE_OP, rud, &ev, XFER_TIMEOUT_MS))
		TH_LOG("%s", why);
	EXPECT_EQ(0, ev.res);
	EXPECT_EQ(len, ev.len);
	EXPECT_TRUE(check(dst, 7, len)) TH_LOG("%s", why);
	ASSERT_TRUE(wait_ev(p, &p->b, RMSG_CQE_OP, ud, &ev, XFER_TIMEOUT_MS))
		TH_LOG("%s", why);
	EXPECT_EQ(0, ev.res);
	EXPECT_EQ(len, ev.len);
	munmap(src, len);
	munmap(dst, len);
	close(fd);
}

/* Drop CAP_IPC_LOCK: RLIMIT_MEMLOCK then holds for pinned pages. */
static int drop_ipc_lock(void)
{
	struct __user_cap_header_struct h = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct d[2];
	unsigned int i = CAP_IPC_LOCK / 32, bit = 1U << (CAP_IPC_LOCK % 32);

	if (syscall(SYS_capget, &h, d))
		return -errno;
	d[i].effective &= ~bit;
	d[i].permitted &= ~bit;
	d[i].inheritable &= ~bit;
	return syscall(SYS_capset, &h, d) ? -errno : 0;
}

/*
 * Without CAP_IPC_LOCK, in a child with a 16 MiB RLIMIT_MEMLOCK and no
 * region: a 32 MiB send from memory in no region completes with -ENOMEM
 * and leaves nothing charged; 4 MiB both ways (8 MiB pinned at once in
 * this process) goes through. Returns 0, or the step that failed.
 */
static int memlock_child(void)
{
	struct rlimit rl = { .rlim_cur = 16U << 20, .rlim_max = 16U << 20 };
	size_t big = 32U << 20;
	struct rmsg_event ev;
	struct pair p = {};
	unsigned char *buf;
	long pin0;

	if (setrlimit(RLIMIT_MEMLOCK, &rl) || drop_ipc_lock())
		return 1;
	pin0 = rmsg_vmpin_kb();
	if (pin0 < 0 || !pair_open_how(&p, false, false))
		return 2;
	if (!pin_supported(&p.b))
		return 0;
	buf = malloc(big);
	if (!buf)
		return 3;
	memset(buf, 1, big);
	if (send_wait(&p, buf, big, 7))
		return 4;
	if (!wait_ev(&p, &p.b, RMSG_CQE_OP, 7, &ev, EVENT_TIMEOUT_MS))
		return 5;
	if (ev.res != -ENOMEM)
		return 6;
	if (rmsg_vmpin_kb() != pin0)
		return 7;
	if (!xfer_plain(&p, &p.b, &p.a, 8, 4U << 20, 0))
		return 8;
	if (rmsg_vmpin_kb() != pin0)
		return 9;
	free(buf);
	pair_close(&p);
	return 0;
}

/* Only for its timeout: a child with a pair of its own. */
FIXTURE(plain) {
	int unused;
};

FIXTURE_SETUP(plain)
{
}

FIXTURE_TEARDOWN(plain)
{
}

/*
 * With the kernel poller, whose thread has no memory of its own: it pins
 * the memory of the task that started it, which is this one.
 */
TEST_F_TIMEOUT(plain, sqpoll, 300)
{
	struct sockaddr_in addr;
	long pin0 = rmsg_vmpin_kb(), pins0 = rmsg_pins();
	struct pair p = {};

	if (!rmsg_local_addr(&addr, 0))
		SKIP(return, "RMSG_LOCAL_ADDR not set: not run by rmsg-vm");
	if (!rndv_supported())
		SKIP(return, "the module does not announce RMSG_FEAT_RNDV");
	ASSERT_TRUE(pair_open_how(&p, false, true)) TH_LOG("%s", why);
	if (!pin_supported(&p.b)) {
		pair_close(&p);
		SKIP(return, "the module does not announce RMSG_FEAT_RNDV_PIN");
	}
	EXPECT_TRUE(xfer_plain(&p, &p.b, &p.a, 200, (4U << 20) + 1, 0))
		TH_LOG("from the poller's side: %s", why);
	EXPECT_TRUE(xfer_plain(&p, &p.a, &p.b, 201, 1U << 20, 0))
		TH_LOG("into the poller's side: %s", why);
	EXPECT_TRUE(xfer_plain(&p, &p.b, &p.a, 202, 5000, ZC_PUT))
		TH_LOG("RPut from the poller's side: %s", why);
	pair_close(&p);
	EXPECT_EQ(pin0, rmsg_vmpin_kb());
	EXPECT_TRUE(rmsg_pins_are(pins0, 0));
}

TEST_F_TIMEOUT(plain, memlock, 300)
{
	struct sockaddr_in addr;
	long pins0 = rmsg_pins();
	int status;
	pid_t pid;

	if (!rmsg_local_addr(&addr, 0))
		SKIP(return, "RMSG_LOCAL_ADDR not set: not run by rmsg-vm");
	if (!rndv_supported())
		SKIP(return, "the module does not announce RMSG_FEAT_RNDV");
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		status = memlock_child();
		if (status)
			fprintf(stderr, "# step %d: %s\n", status, why);
		_exit(status);
	}
	EXPECT_EQ(0, rmsg_child_status(pid)) TH_LOG("the child failed a step");
	EXPECT_TRUE(rmsg_pins_are(pins0, 0));
}

/*
 * The program unmaps its buffer while the send is in flight: the pinned
 * pages outlive the mapping, the peer gets the bytes they held, nothing
 * leaks. A sink in read-only memory is refused (-EFAULT in the receive's
 * event, the message still to answer); a source in read-only memory is
 * fine.
 */
TEST_F_TIMEOUT(lrndv, plain_memory_unmapped_and_read_only, 600)
{
	struct pair *p = &self->p;
	size_t len = 8U << 20;
	long pin0 = rmsg_vmpin_kb(), pins0 = rmsg_pins();
	unsigned char *src, *dst;
	struct rmsg_event ev;
	struct rmsg_msg m;

	if (!pin_supported(&p->b))
		SKIP(return, "the module does not announce RMSG_FEAT_RNDV_PIN");
	src = mmap(NULL, len, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	dst = mmap(NULL, len, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, src);
	ASSERT_NE(MAP_FAILED, dst);
	fill(src, 41, len);
	ASSERT_EQ(0, send_wait(p, src, len, 41));
	/* The kernel took the SQE (and pinned) once the event can come. */
	ASSERT_TRUE(next_msg(p, &m, EVENT_TIMEOUT_MS)) TH_LOG("%s", why);
	ASSERT_EQ(RMSG_MSG_RNDV, m.kind);
	ASSERT_EQ(0, munmap(src, len));
	/* Read-only: refused for the sink, and the message stays to answer. */
	ASSERT_EQ(0, mprotect(dst, len, PROT_READ));
	ASSERT_EQ(0, rmsg_msg_recv_into(p->a.ep, &m, dst, len, 42));
	ASSERT_TRUE(wait_ev(p, &p->a, RMSG_CQE_OP, 42, &ev, EVENT_TIMEOUT_MS))
		TH_LOG("%s", why);
	EXPECT_EQ(-EFAULT, ev.res);
	ASSERT_EQ(0, mprotect(dst, len, PROT_READ | PROT_WRITE));
	ASSERT_EQ(0, rmsg_msg_recv_into(p->a.ep, &m, dst, len, 43));
	ASSERT_EQ(0, rmsg_msg_release(p->a.ep, &m));
	ASSERT_TRUE(wait_ev(p, &p->a, RMSG_CQE_OP, 43, &ev, XFER_TIMEOUT_MS))
		TH_LOG("%s", why);
	ASSERT_EQ(0, ev.res);
	EXPECT_TRUE(check(dst, 41, len)) TH_LOG("%s", why);
	ASSERT_TRUE(wait_ev(p, &p->b, RMSG_CQE_OP, 41, &ev, XFER_TIMEOUT_MS))
		TH_LOG("%s", why);
	EXPECT_EQ(0, ev.res);
	EXPECT_EQ(pin0, rmsg_vmpin_kb());
	EXPECT_TRUE(rmsg_pins_are(pins0, 0));

	/* A source that runs into unmapped memory: the send's -EFAULT. */
	ASSERT_EQ(0, munmap(dst + len - 4096, 4096));
	ASSERT_EQ(0, rmsg_msg_send_zc(p->b.ep, p->b.ch, dst + len - 8192, 8192,
				      0,
				  46));
	ASSERT_TRUE(wait_ev(p, &p->b, RMSG_CQE_OP, 46, &ev, EVENT_TIMEOUT_MS))
		TH_LOG("%s", why);
	EXPECT_EQ(-EFAULT, ev.res);
	len -= 4096;

	/* A source that is read-only is read all the same. */
	fill(dst, 44, len);
	ASSERT_EQ(0, mprotect(dst, len, PROT_READ));
	ASSERT_EQ(0, send_wait(p, dst, len, 44));
	ASSERT_TRUE(next_msg(p, &m, EVENT_TIMEOUT_MS)) TH_LOG("%s", why);
	ASSERT_EQ(RMSG_MSG_RNDV, m.kind);
	ASSERT_EQ(0, rmsg_msg_recv_into(p->a.ep, &m, p->a.mem, len, 45));
	ASSERT_EQ(0, rmsg_msg_release(p->a.ep, &m));
	ASSERT_TRUE(wait_ev(p, &p->a, RMSG_CQE_OP, 45, &ev, XFER_TIMEOUT_MS))
		TH_LOG("%s", why);
	ASSERT_EQ(0, ev.res);
	EXPECT_TRUE(check(p->a.mem, 44, len)) TH_LOG("%s", why);
	ASSERT_TRUE(wait_ev(p, &p->b, RMSG_CQE_OP, 44, &ev, XFER_TIMEOUT_MS))
		TH_LOG("%s", why);
	EXPECT_EQ(0, ev.res);
	munmap(dst, len);
	EXPECT_EQ(pin0, rmsg_vmpin_kb());
	EXPECT_TRUE(rmsg_pins_are(pins0, 0));
}

/* rmsg_chan_protocol_info() shows the boundaries. */
TEST_F(lrndv, protocol_info)
{
	struct pair *p = &self->p;
	int max = rmsg_chan_max_msg(p->b.ep, p->b.ch);
	char want[64], *text = NULL;
	size_t n = 0;
	FILE *f;

	ASSERT_GT(max, THRESH);
	f = open_memstream(&text, &n);
	ASSERT_NE(NULL, f);
	ASSERT_EQ(0, rmsg_chan_protocol_info(p->b.ep, p->b.ch, f));
	fclose(f);
	TH_LOG("\n%s", text);
	ASSERT_TRUE(has(text, "size range")) TH_LOG("%s", why);
	ASSERT_TRUE(has(text, "0 .. 8191 ")) TH_LOG("%s", why);
	snprintf(want, sizeof(want), "8192 .. %d ", max);
	ASSERT_TRUE(has(text, want)) TH_LOG("%s", why);
	snprintf(want, sizeof(want), "%d .. 1 GiB ", max + 1);
	ASSERT_TRUE(has(text, want)) TH_LOG("%s", why);
	ASSERT_TRUE(has(text, "eager copy")) TH_LOG("%s", why);
	ASSERT_TRUE(has(text, pin_supported(&p->b) ?
			"rendezvous RGet zero copy (a region's, or pinned for the send)" :
			"rendezvous RGet zero copy (region required)"))
		TH_LOG("%s", why);
	free(text);

	ASSERT_EQ(0, rmsg_ep_set_rndv_threshold(p->b.ep, 1000));
	f = open_memstream(&text, &n);
	ASSERT_NE(NULL, f);
	ASSERT_EQ(0, rmsg_chan_protocol_info(p->b.ep, p->b.ch, f));
	fclose(f);
	ASSERT_TRUE(has(text, "0 .. 999 ")) TH_LOG("%s", why);
	snprintf(want, sizeof(want), "1000 .. %d ", max);
	ASSERT_TRUE(has(text, want)) TH_LOG("%s", why);
	free(text);

	/* Above the eager maximum: no gap between eager and rendezvous. */
	ASSERT_EQ(0, rmsg_ep_set_rndv_threshold(p->b.ep, max + 1000));
	f = open_memstream(&text, &n);
	ASSERT_NE(NULL, f);
	ASSERT_EQ(0, rmsg_chan_protocol_info(p->b.ep, p->b.ch, f));
	fclose(f);
	snprintf(want, sizeof(want), "0 .. %d ", max);
	ASSERT_TRUE(has(text, want)) TH_LOG("%s", why);
	snprintf(want, sizeof(want), "%d .. 1 GiB ", max + 1);
	ASSERT_TRUE(has(text, want)) TH_LOG("%s", why);
	EXPECT_EQ(NULL, strstr(text, "if in a region")) TH_LOG("%s", text);
	free(text);

	f = open_memstream(&text, &n);
	ASSERT_NE(NULL, f);
	EXPECT_EQ(-ENOTCONN, rmsg_chan_protocol_info(p->b.ep, 4000, f));
	fclose(f);
	free(text);
}

/* RMSG_RNDV_THRESH sets the threshold of endpoints opened after it. */
TEST(env_threshold)
{
	static const struct {
		const char *val;
		size_t want;
	} cases[] = {
		{ "4K", 4096 }, { "2M", 2U << 20 }, { "123", 123 },
		{ "junk", RMSG_RNDV_THRESH_DEFAULT },
		{ "12Q", RMSG_RNDV_THRESH_DEFAULT },
	};
	struct sockaddr_in addr;
	struct pair p;
	struct rmsg_ep *ep = NULL;
	unsigned int i;

	if (!rmsg_local_addr(&addr, 0))
		SKIP(return, "RMSG_LOCAL_ADDR not set: not run by rmsg-vm");
	if (!rndv_supported())
		SKIP(return, "the module does not announce RMSG_FEAT_RNDV");
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		ASSERT_EQ(0, setenv("RMSG_RNDV_THRESH", cases[i].val, 1));
		ASSERT_EQ(0, rmsg_ep_open(&ep, 8, 0));
		EXPECT_EQ(cases[i].want, rmsg_ep_rndv_threshold(ep))
			TH_LOG("RMSG_RNDV_THRESH=%s", cases[i].val);
		rmsg_ep_drop(&ep);
	}
	ASSERT_EQ(0, unsetenv("RMSG_RNDV_THRESH"));
	ASSERT_EQ(0, rmsg_ep_open(&ep, 8, 0));
	EXPECT_EQ(RMSG_RNDV_THRESH_DEFAULT, rmsg_ep_rndv_threshold(ep));
	rmsg_ep_drop(&ep);

	/* And rmsg_msg_send() follows it. */
	memset(&p, 0, sizeof(p));
	ASSERT_EQ(0, setenv("RMSG_RNDV_THRESH", "4K", 1));
	ASSERT_TRUE(pair_open(&p)) TH_LOG("%s", why);
	unsetenv("RMSG_RNDV_THRESH");
	EXPECT_TRUE(xfer(&p, 1, GUARD, GUARD, 4095, RMSG_MSG_EAGER))
		TH_LOG("%s", why);
	EXPECT_TRUE(xfer(&p, 2, GUARD, GUARD, 4096, RMSG_MSG_RNDV))
		TH_LOG("%s", why);
	pair_close(&p);
}

int main(int argc, char **argv)
{
	return rmsg_test_main(argc, argv);
}
