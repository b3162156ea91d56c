// SPDX-License-Identifier: GPL-2.0
/*
 * ABI fuzzing of /dev/rmsg (issue 6, item 2): a seeded random program that
 * opens several endpoints and issues every ioctl with random and
 * boundary-mutated arguments (sizes, flags, reserved fields; user pointers
 * that are NULL, unmapped, kernel addresses, misaligned, straddling a guard
 * page or pointing into its own read-only mappings), maps every offset kind
 * with random lengths, offsets and protections, writes random ring indices
 * and random SQEs into the mapped rings and enters, makes real channels on
 * the guest's loopback address so that the data path, rendezvous and
 * regions are reached with bad arguments on live channels, injects faults,
 * closes endpoints with everything in flight, and forks children that act
 * on the same files and die abruptly.
 *
 * It judges what a program can see: a known ioctl never fails with ENOTTY,
 * every failure is one of the errnos the ABI documents for that call, no
 * page pin is left behind once every endpoint is gone, and the module still
 * works afterwards (a fresh channel carries a byte-checked message). The
 * kernel log is judged by rmsg-vm: a WARN, oops or slub report fails the run.
 *
 * One pass as root and one as nobody (uid 65534). /dev/rmsg is created
 * 0600, so nobody cannot open it; the test says so and makes it 0666 for
 * the unprivileged pass, and puts the mode back afterwards.
 *
 *   rmsg_abi_fuzz_test [--seed N] [--secs S] [--iters N] [--as root|nobody]
 *
 * The environment gives the defaults (ABIFUZZ_SEED, ABIFUZZ_SECS: seconds
 * per pass, 6; ABIFUZZ_ITERS: 0 for no limit), since selftests/run.sh
 * passes no arguments. The seed is printed; the same seed gives the same
 * sequence of calls, though not the same timing of the kernel's events.
 * KTAP on stdout.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <grp.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>

#include <rdma/rmsg.h>
#include <rmsg.h>
#include "rmsg_test.h"

#define NSLOTS		6	/* endpoints open at once, at most */
#define NMAPS		12	/* mappings kept per endpoint */
#define NCHANS		16	/* channel ids remembered per endpoint */
#define NREGS		8	/* region handles remembered per endpoint */
#define NCHILDREN	2	/* forked children alive at once */
#define CHILD_STEPS	40
#define PAGE		4096UL
#define NOBODY		65534
#define MAX_ERRNO	140

enum kind {
	K_VERSION, K_DEV_LIST, K_EP_SETUP, K_ENTER, K_LISTEN, K_CONNECT,
	K_CLOSE, K_EP_STATS, K_ACCEPT, K_REG, K_DEREG, K_CHAN_LIST, K_FAULT,
	K_CHAN_ADDR, K_CHAN_SET, K_UNKNOWN, K_NR
};

static const char *const kind_name[K_NR] = {
	"VERSION", "DEV_LIST", "EP_SETUP", "ENTER", "LISTEN", "CONNECT",
	"CLOSE", "EP_STATS", "ACCEPT", "REG", "DEREG", "CHAN_LIST", "FAULT",
	"CHAN_ADDR", "CHAN_SET", "unknown",
};

/*
 * What each ioctl may fail with, besides EINTR (the fuzzer's timer) and
 * ENOMEM: Documentation/uapi.rst, rings.rst, channels.rst, rendezvous.rst,
 * resilience.rst and the header. Anything else is a surprise.
 */
#define ALLOWED_MAX 12
static const int allowed[K_NR][ALLOWED_MAX] = {
	[K_VERSION]	= { EFAULT, EINVAL },
	[K_DEV_LIST]	= { EFAULT, EINVAL },
	/*
	 * EPERM, EBUSY: SQPOLL past the per-user bound of pollers (or again
	 * on a set-up endpoint: EBUSY).
	 */
	[K_EP_SETUP]	= { EFAULT, EINVAL, EBUSY, EPERM },
	[K_ENTER]	= { EFAULT, EINVAL, EBUSY },
	[K_LISTEN]	= { EFAULT, EINVAL, EAFNOSUPPORT, EBUSY, EADDRINUSE,
			    EADDRNOTAVAIL, ENODEV },
	/*
	 * EDQUOT: a per-user channel limit, where the module has one.
	 * EADDRINUSE: a source address whose port another id holds.
	 */
	[K_CONNECT]	= { EFAULT, EINVAL, EAFNOSUPPORT, ENOSPC, EDQUOT,
			    EADDRNOTAVAIL, EADDRINUSE, ENETUNREACH,
			    EHOSTUNREACH, ENODEV },
	[K_CLOSE]	= { EFAULT, EINVAL, ENOENT, EALREADY },
	[K_EP_STATS]	= { EFAULT },
	[K_ACCEPT]	= { EFAULT, EINVAL, ENOENT },
	[K_REG]		= { EFAULT, EINVAL },
	[K_DEREG]	= { EFAULT, EINVAL, ENOENT, EBUSY },
	[K_CHAN_LIST]	= { EFAULT, EINVAL },
	[K_FAULT]	= { EFAULT, EINVAL, ENOENT, ENOTCONN, EPERM,
			    EOPNOTSUPP },
	[K_CHAN_ADDR]	= { EFAULT, EINVAL, ENOENT, ENOTCONN },
	[K_CHAN_SET]	= { EFAULT, EINVAL, ENOENT, EALREADY },
	[K_UNKNOWN]	= { ENOTTY },
};

static bool is_allowed(enum kind k, int e)
{
	int i;

	if (e == EINTR || e == ENOMEM)
		return true;
	for (i = 0; i < ALLOWED_MAX && allowed[k][i]; i++)
		if (allowed[k][i] == e)
			return true;
	return false;
}

/* Counters of all processes of a pass, in a shared mapping. */
struct stats {
	unsigned long iters;
	unsigned long calls[K_NR];
	unsigned long ok[K_NR];
	unsigned long err[K_NR][MAX_ERRNO];
	unsigned long mmaps, mmap_ok, mmap_err[MAX_ERRNO];
	unsigned long sqes, index_writes, cqes, events[8];
	unsigned long op_res[RMSG_OP_LAST + 1][MAX_ERRNO];
	unsigned long forks, opens, open_err[MAX_ERRNO], racer_calls;
	unsigned long channels_open;
	unsigned long out_redirected;	/* see out_ptr() */
	unsigned long surprises;
	char surprise[8][160];
	/* A fault of the pass itself: where, and in which of its mappings. */
	int fault_sig, fault_code, fault_step, fault_map;
	void *fault_addr;
	uint64_t fault_off;
	size_t fault_len;
	int fault_prot;
};

static struct stats *st;

/* xorshift64*: small, seeded, the same sequence everywhere. */
static uint64_t rng_state;

static uint64_t rnd64(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 2685821657736338717ULL;
}

static uint32_t rn(uint32_t n)
{
	return n ? (uint32_t)(rnd64() % n) : 0;
}

static bool chance(unsigned int pct)
{
	return rn(100) < pct;
}

static void add(unsigned long *c)
{
	__atomic_fetch_add(c, 1, __ATOMIC_RELAXED);
}

static const uint64_t interesting[] = {
	0, 1, 2, 3, 4, 7, 8, 15, 16, 17, 31, 32, 63, 64, 65, 127, 128, 255,
	256, 257, 1023, 1024, 4095, 4096, 4097, 8192, 16383, 16384, 32767,
	32768, 32769, 65535, 65536, 65537, 1 << 20, (64 << 20) - 1, 64 << 20,
	(64 << 20) + 1, 1U << 30, (1U << 30) + 1, 0x7fffffff, 0x80000000,
	0xfffffffe, 0xffffffff, 1ULL << 32, (1ULL << 32) + 1, 1ULL << 40,
	0x7fffffffffffULL, 0x800000000000ULL, 0x7fffffffffffffffULL,
	0x8000000000000000ULL, 0xfffffffffffff000ULL, ~0ULL,
};

static uint64_t some_value(void)
{
	switch (rn(4)) {
	case 0:
		return rnd64();
	case 1:
		return rn(64);
	default:
		return interesting[rn(sizeof(interesting) /
				      sizeof(interesting[0]))];
	}
}

/* Overwrite a random naturally aligned field of @p with a boundary value. */
static void mutate(void *p, size_t size)
{
	unsigned char *b = p;
	uint64_t v = some_value();
	size_t off;

	switch (rn(4)) {
	case 0:
		off = rn(size);
		b[off] = (unsigned char)v;
		break;
	case 1:
		off = rn(size / 4) * 4;
		memcpy(b + off, &v, 4);
		break;
	case 2:
		off = rn(size / 8) * 8;
		memcpy(b + off, &v, 8);
		break;
	default:
		off = rn(size * 8);
		b[off / 8] ^= 1 << (off % 8);
		break;
	}
}

/* Mutate 0 (mostly), 1 or several fields. */
static void maybe_mutate(void *p, size_t size)
{
	int n = chance(70) ? 0 : 1 + rn(3);

	while (n--)
		mutate(p, size);
}

/*
 * Memory to point the kernel at: a page before a PROT_NONE guard page (a
 * struct may straddle it), a read-only page, an unmapped hole, and two
 * buffers for regions.
 */
static unsigned char *guard;	/* guard[0..PAGE) rw, then PROT_NONE */
static unsigned char *ro_page;
static unsigned char *hole;
static unsigned char *heap_buf;
#define HEAP_LEN	(256 << 10)
static unsigned char *anon_buf;
#define ANON_LEN	(1 << 20)
/* Lists the kernel fills, at the end of this, before its guard page. */
static unsigned char *sink;
#define SINK_LEN	(64 << 10)
#define SINK_AT(n, type)	((type *)(sink + SINK_LEN - (n) * sizeof(type)))

struct slot {
	int fd;			/* -1: free */
	bool setup;
	struct rmsg_ep_setup p;
	unsigned char *sq, *cq, *area;	/* mappings of the rings, area */
	bool sq_rw, cq_rw;
	uint32_t sq_prod, cq_cons;	/* what we last wrote */
	struct { void *addr; size_t len; uint64_t off; int prot; } map[NMAPS];
	uint32_t chans[NCHANS];
	int nchans;
	uint32_t open_chans[NCHANS];	/* reported open, not closed yet */
	int nopen;
	uint32_t regs[NREGS];
	uint64_t reg_addr[NREGS], reg_len[NREGS];
	int nregs;
	struct sockaddr_in listen_addr;	/* port 0: not listening */
	uint32_t ep_id;
};

static struct slot slots[NSLOTS];
static struct sockaddr_in local_addr;
static bool have_addr;
static bool in_child;

static void surprise(const char *fmt, ...)
{
	unsigned long n = __atomic_fetch_add(&st->surprises, 1,
					     __ATOMIC_RELAXED);
	va_list ap;

	if (n >= 8)
		return;
	va_start(ap, fmt);
	vsnprintf(st->surprise[n], sizeof(st->surprise[n]), fmt, ap);
	va_end(ap);
}

static void count_errno(unsigned long *arr, int e)
{
	add(&arr[e > 0 && e < MAX_ERRNO ? e : 0]);
}

/*
 * A pointer for an ioctl's argument: mostly @good (or a misaligned copy
 * of it, which is as good), sometimes one the kernel must refuse with
 * EFAULT. *@bad tells which.
 */
static void *arg_ptr(void *good, size_t size, bool *bad)
{
	unsigned char *p;

	*bad = false;
	if (chance(85)) {
		if (chance(20)) {
			/* Misaligned but readable and writable. */
			p = guard + 1 + rn(7);
			memcpy(p, good, size);
			return p;
		}
		return good;
	}
	*bad = true;
	switch (rn(9)) {
	case 0:
		return NULL;
	case 1:
		return (void *)(uintptr_t)(1 + rn(PAGE));
	case 2:
		return (void *)0xffffffff81000000UL;
	case 3:
		return (void *)0xffff888000000000UL;
	case 4:
		return hole + rn(PAGE);
	case 5:
		/* Readable only: the kernel cannot write the answer. */
		return ro_page + rn(8) * 8;
	case 6:
		/* The last bytes before the guard page: cut short. */
		p = guard + PAGE - size + 1 + rn(size);
		memcpy(p, good, guard + PAGE - p);
		return p;
	case 7:
		return (void *)0x800000000000UL;
	default:
		{
			struct slot *s = &slots[rn(NSLOTS)];

			/* A ring mapped read-only, if there is one. */
			if (s->cq && !s->cq_rw)
				return s->cq;
			return (void *)~0UL;
		}
	}
}

/* An address for the kernel to read or pin: anything we know of. */
static uint64_t some_addr(size_t *len)
{
	struct slot *s = &slots[rn(NSLOTS)];
	int i;

	*len = 1 + rn(PAGE);
	switch (rn(12)) {
	case 0:
		*len = 1 + rn(HEAP_LEN);
		return (uintptr_t)heap_buf + rn(HEAP_LEN - *len + 1);
	case 1:
	case 2:
		*len = 1 + rn(ANON_LEN);
		return (uintptr_t)anon_buf + rn(ANON_LEN - *len + 1);
	case 3:
		return (uintptr_t)ro_page;
	case 4:
		return (uintptr_t)hole;
	case 5:
		return 0xffffffff81000000UL;
	case 6:
		return s->sq ? (uintptr_t)s->sq : 0;
	case 7:
		return s->area ? (uintptr_t)s->area : (uintptr_t)guard;
	case 8:
		i = rn(NMAPS);
		*len = s->map[i].len ? 1 + rn(s->map[i].len) : *len;
		return (uintptr_t)s->map[i].addr;
	case 9:
		*len = some_value();
		return (uintptr_t)anon_buf;
	case 10:
		return (uintptr_t)guard + PAGE - rn(64);
	default:
		return some_value();
	}
}

static bool within(uint64_t a, const void *base, size_t len)
{
	return a >= (uintptr_t)base && a - (uintptr_t)base < len;
}

/* [a, a + len) inside [base, base + size)? */
static bool inside(uint64_t a, uint64_t len, const void *base, size_t size)
{
	return within(a, base, size) &&
	       len <= size - (a - (uintptr_t)base);
}

/*
 * May the kernel write @len bytes at @a, an address inside an ioctl's
 * argument (a list, a bound address, a region's pages for rendezvous
 * data)? Only into the fuzzer's own targets: its buffers, each followed by
 * a guard page that stops a longer write, and its rmsg mappings for the
 * whole length; or where no mapping of the process can be (below
 * mmap_min_addr, beyond user space). A mutated pointer can aim anywhere,
 * at glibc's locks or the stack, and the kernel rightly writes there: the
 * pass then dies of its own hand or deadlocks.
 */
static bool out_ok(uint64_t a, uint64_t len)
{
	int k, i;

	if (a < 65536 || a >= 0x800000000000ULL)
		return true;
	if (within(a, guard, PAGE) || within(a, heap_buf, HEAP_LEN) ||
	    within(a, anon_buf, ANON_LEN) || within(a, sink, SINK_LEN))
		return true;
	/* No guard page behind these. */
	if (inside(a, len, ro_page, PAGE) || inside(a, len, hole, PAGE))
		return true;
	for (k = 0; k < NSLOTS; k++)
		for (i = 0; i < NMAPS; i++)
			if (slots[k].map[i].addr &&
			    inside(a, len, slots[k].map[i].addr,
				   slots[k].map[i].len))
				return true;
	return false;
}

/*
 * @a if out_ok(), or if the write fits in @own (the caller's buffer for
 * it, @own_len bytes), else an address the kernel must refuse.
 */
static uint64_t out_ptr(uint64_t a, uint64_t len, const void *own,
			size_t own_len)
{
	unsigned char vec;

	if (out_ok(a, len) || (own && inside(a, len, own, own_len)))
		return a;
	/* Counted when it hit a mapping: the kernel would have written. */
	if (!mincore((void *)(uintptr_t)(a & ~(PAGE - 1)), 1, &vec))
		add(&st->out_redirected);
	switch (rn(3)) {
	case 0:
		return (uintptr_t)hole + rn(PAGE);
	case 1:
		return 0xffffffff81000000UL;
	default:
		return 0x800000000000UL;
	}
}

static int do_ioctl(int fd, enum kind k, unsigned long cmd, void *arg)
{
	int ret, e;

	add(&st->calls[k]);
	ret = ioctl(fd, cmd, arg);
	if (ret == 0) {
		add(&st->ok[k]);
		return 0;
	}
	e = errno;
	if (ret != -1)
		surprise("%s returned %d", kind_name[k], ret);
	count_errno(st->err[k], e);
	if (!is_allowed(k, e))
		surprise("%s failed with %s (%d)", kind_name[k], strerror(e),
			 e);
	errno = e;
	return -1;
}

static struct slot *any_slot(void)
{
	return &slots[rn(NSLOTS)];
}

static struct slot *open_slot(void)
{
	int i, start = rn(NSLOTS);

	for (i = 0; i < NSLOTS; i++) {
		struct slot *s = &slots[(start + i) % NSLOTS];

		if (s->fd >= 0)
			return s;
	}
	return NULL;
}

static uint32_t some_channel(struct slot *s)
{
	/* Open channels first: the data path is behind them. */
	if (s->nopen && chance(70))
		return s->open_chans[rn(s->nopen)];
	if (s->nchans && chance(85))
		return s->chans[rn(s->nchans)];
	return chance(50) ? rn(8) : (uint32_t)some_value();
}

static void remember_chan(struct slot *s, uint32_t ch)
{
	int i;

	for (i = 0; i < s->nchans; i++)
		if (s->chans[i] == ch)
			return;
	if (s->nchans < NCHANS)
		s->chans[s->nchans++] = ch;
	else
		s->chans[rn(NCHANS)] = ch;
}

static void forget_maps(struct slot *s)
{
	int i;

	for (i = 0; i < NMAPS; i++) {
		if (s->map[i].addr && chance(80))
			munmap(s->map[i].addr, s->map[i].len);
		/* Else left mapped: the endpoint outlives its fd. */
		s->map[i].addr = NULL;
		s->map[i].len = 0;
	}
	s->sq = s->cq = s->area = NULL;
}

static void slot_close(struct slot *s)
{
	if (s->fd < 0)
		return;
	forget_maps(s);
	close(s->fd);
	memset(s, 0, sizeof(*s));
	s->fd = -1;
}

static void act_open(void)
{
	struct slot *s = any_slot();
	int fd;

	if (s->fd >= 0) {
		slot_close(s);
		return;
	}
	fd = open(RMSG_DEVICE_PATH, chance(90) ? O_RDWR : O_RDONLY);
	add(&st->opens);
	if (fd < 0) {
		count_errno(st->open_err, errno);
		return;
	}
	memset(s, 0, sizeof(*s));
	s->fd = fd;
}

/* Stop tracking mapping @i of @s, and the rings or area it was. */
static void untrack_map(struct slot *s, int i)
{
	if (s->map[i].addr == s->sq)
		s->sq = NULL;
	if (s->map[i].addr == s->cq)
		s->cq = NULL;
	if (s->map[i].addr == s->area)
		s->area = NULL;
	s->map[i].addr = NULL;
	s->map[i].len = 0;
}

static void keep_map(struct slot *s, void *addr, size_t len, uint64_t off,
		     int prot)
{
	int i = rn(NMAPS);

	if (s->map[i].addr) {
		munmap(s->map[i].addr, s->map[i].len);
		untrack_map(s, i);
	}
	s->map[i].addr = addr;
	s->map[i].len = len;
	s->map[i].off = off;
	s->map[i].prot = prot;
}

/* Map at @off for @len; NULL when refused. */
static void *map(struct slot *s, uint64_t off, size_t len, int prot, int flags)
{
	void *p;

	add(&st->mmaps);
	p = mmap(NULL, len, prot, flags, s->fd, off);
	if (p == MAP_FAILED) {
		count_errno(st->mmap_err, errno);
		return NULL;
	}
	add(&st->mmap_ok);
	keep_map(s, p, len, off, prot);
	return p;
}

static void act_setup(struct slot *s)
{
	struct rmsg_ep_setup p = { 0 };
	bool bad;
	void *arg;

	p.sq_entries = chance(80) ? 1 + rn(64) : (uint32_t)some_value();
	p.cq_entries = chance(50) ? 0 : p.sq_entries + rn(128);
	if (chance(20))
		p.cq_entries = 1 + rn(4);	/* smaller than the SQ */
	if (chance(15)) {
		p.flags |= RMSG_EP_F_SQPOLL;
		p.sqpoll_idle_ms = rn(20);
	}
	if (chance(20)) {
		p.flags |= RMSG_EP_F_STALL_EVENTS;
		p.stall_ms = rn(100);
	}
	if (chance(30))
		p.flags |= RMSG_EP_F_SUMMARY;
	p.send_area_size = chance(70) ? RMSG_SEND_AREA_ALIGN * (1 + rn(2)) :
			   (uint32_t)some_value();
	maybe_mutate(&p, sizeof(p));
	arg = arg_ptr(&p, sizeof(p), &bad);
	if (do_ioctl(s->fd, K_EP_SETUP, RMSG_IOC_EP_SETUP, arg))
		return;
	if (bad)
		surprise("EP_SETUP took a bad pointer %p", arg);
	if (arg != &p)
		memcpy(&p, arg, sizeof(p));
	s->setup = true;
	s->p = p;
	s->sq_prod = 0;
	s->cq_cons = 0;
	/* Usually map both rings read-write at once: the deep paths. */
	if (chance(90)) {
		s->sq = map(s, RMSG_OFF_SQ_RING, p.sq_mmap_size,
			    PROT_READ | PROT_WRITE, MAP_SHARED);
		s->sq_rw = !!s->sq;
		/* A read-only CQ cannot be reaped: the CQ fills up. */
		s->cq_rw = chance(90);
		s->cq = map(s, RMSG_OFF_CQ_RING, p.cq_mmap_size,
			    s->cq_rw ? PROT_READ | PROT_WRITE : PROT_READ,
			    MAP_SHARED);
		if (p.send_area_size)
			s->area = map(s, RMSG_OFF_SEND_AREA, p.send_area_size,
				      PROT_READ | PROT_WRITE, MAP_SHARED);
	}
}

static void act_mmap(struct slot *s)
{
	static const int prots[] = {
		PROT_READ, PROT_READ | PROT_WRITE, PROT_WRITE, PROT_NONE,
		PROT_READ | PROT_EXEC, PROT_READ | PROT_WRITE | PROT_EXEC,
	};
	uint64_t off;
	size_t len;
	int prot = prots[rn(6)];
	int flags = chance(85) ? MAP_SHARED : MAP_PRIVATE;
	void *p;

	switch (rn(7)) {
	case 0:
		off = RMSG_OFF_SQ_RING;
		len = s->p.sq_mmap_size;
		break;
	case 5:
		off = RMSG_OFF_SUMMARY;
		len = RMSG_SUMMARY_SIZE;
		break;
	case 1:
		off = RMSG_OFF_CQ_RING;
		len = s->p.cq_mmap_size;
		break;
	case 2:
		off = RMSG_OFF_SEND_AREA;
		len = s->p.send_area_size;
		break;
	case 3:
	case 4:
		off = RMSG_OFF_BLOCK(some_channel(s));
		len = 32768;
		if (chance(70))
			prot = PROT_READ;
		break;
	default:
		off = some_value() & ~(PAGE - 1);
		len = PAGE;
		break;
	}
	if (chance(10))
		off += PAGE * (1 + rn(4));
	switch (rn(5)) {
	case 0:
		len = PAGE * (1 + rn(4));
		break;
	case 1:
		len += PAGE;
		break;
	case 2:
		len = 1 + rn(3 * PAGE);
		break;
	default:
		break;
	}
	if (!len || len > (256UL << 20))
		len = PAGE;
	p = map(s, off, len, prot, flags);
	if (p && flags == MAP_PRIVATE)
		surprise("MAP_PRIVATE mapping at %#llx was allowed",
			 (unsigned long long)off);
	/* Read what may be read: a mapping must be backed everywhere. */
	if (p && (prot & PROT_READ)) {
		const unsigned char *b = p;
		size_t i;

		for (i = 0; i < len; i += PAGE)
			__atomic_load_n(&b[i], __ATOMIC_RELAXED);
	}
	if (p && rn(3) == 0 && off == RMSG_OFF_SQ_RING &&
	    (prot & PROT_WRITE) && len >= s->p.sq_mmap_size)
		s->sq = p, s->sq_rw = true;
}

/*
 * What a program may do to a mapping afterwards: make it writable (never
 * for a receive block), grow it (never: VM_DONTEXPAND), shrink it, unmap
 * part of it, advise on it. Reading what is left must not fault.
 */
static void act_vma(struct slot *s)
{
	int i = rn(NMAPS);
	unsigned char *p = s->map[i].addr;
	size_t len = s->map[i].len, j;
	void *q;

	bool in_use = p == s->sq || p == s->cq || p == s->area;

	if (!p)
		return;
	switch (rn(5)) {
	case 0:
		if (!mprotect(p, len, PROT_READ | PROT_WRITE)) {
			if (s->map[i].off >= RMSG_OFF_BLOCK_BASE)
				surprise("a receive block became writable");
			s->map[i].prot = PROT_READ | PROT_WRITE;
		}
		break;
	case 1:
		q = mremap(p, len, len + PAGE * (1 + rn(4)), MREMAP_MAYMOVE);
		if (q != MAP_FAILED) {
			surprise("a mapping at %#llx grew",
				 (unsigned long long)s->map[i].off);
			s->map[i].addr = q;
			s->map[i].len += PAGE;
		}
		return;
	case 2:
		if (!in_use && len > PAGE && mremap(p, len, PAGE, 0) != MAP_FAILED)
			s->map[i].len = len = PAGE;
		break;
	case 3:
		/* Not DONTNEED: these mappings have no fault handler. */
		madvise(p, len, chance(50) ? MADV_WILLNEED : MADV_DONTFORK);
		break;
	default:
		/* The last page goes; the rest stays mapped. */
		if (!in_use && len > PAGE &&
		    !munmap(p + ((len - 1) & ~(PAGE - 1)), PAGE))
			s->map[i].len = len = (len - 1) & ~(PAGE - 1);
		break;
	}
	if (s->map[i].prot & PROT_READ)
		for (j = 0; j < len; j += PAGE)
			__atomic_load_n(&p[j], __ATOMIC_RELAXED);
}

static void fill_sqe(struct slot *s, struct rmsg_sqe *q)
{
	size_t len;

	memset(q, 0, sizeof(*q));
	q->opcode = chance(90) ? rn(RMSG_OP_LAST) : (uint8_t)rnd64();
	/* The opcode in the low byte: CQE results are counted by it. */
	q->user_data = (rnd64() & ~0xffULL) | q->opcode;
	if (q->opcode != RMSG_OP_NOP)
		q->channel = some_channel(s);
	switch (q->opcode) {
	case RMSG_OP_SEND:
		q->addr = chance(70) ? rn(s->p.send_area_size + 1) & ~15U :
			  some_value();
		q->len = chance(70) ? rn(2048) : (uint32_t)some_value();
		break;
	case RMSG_OP_CREDIT:
		/* A bogus credit ends the channel (EPROTO): rarely. */
		q->addr = chance(90) ? 0 : some_value();
		break;
	case RMSG_OP_ARM:
		q->addr = chance(60) ? rn(65536) : some_value();
		break;
	case RMSG_OP_SEND_RNDV:
	case RMSG_OP_RECV_RNDV:
		if (s->nregs && chance(80)) {
			/* Mostly inside a region of the endpoint's. */
			int i = rn(s->nregs);
			uint64_t off = rn(s->reg_len[i]);

			q->region = s->regs[i];
			q->addr = s->reg_addr[i] + off;
			q->len = chance(80) ? rn(s->reg_len[i] - off + 1) :
				 (uint32_t)some_value();
		} else {
			q->region = (uint32_t)some_value();
			q->addr = some_addr(&len);
			q->len = chance(70) ? len : (uint32_t)some_value();
		}
		if (q->opcode == RMSG_OP_RECV_RNDV)
			q->aux = chance(70) ? rn(16) : some_value();
		q->flags = chance(70) ? rn(4) : (uint8_t)rnd64();
		break;
	default:
		break;
	}
	maybe_mutate(q, sizeof(*q));
}

static uint32_t *ring_word(unsigned char *ring, __u64 off)
{
	return (uint32_t *)(ring + off);
}

/* Take the CQEs there are, learning channels from events. */
static void reap(struct slot *s)
{
	uint32_t prod, entries = s->p.cq_entries;
	struct rmsg_cqe *cqes;
	int n = 0;

	if (!s->cq || !entries || entries & (entries - 1))
		return;
	prod = __atomic_load_n(ring_word(s->cq, s->p.cq_off.producer),
			       __ATOMIC_ACQUIRE);
	cqes = (struct rmsg_cqe *)(s->cq + s->p.cq_off.descs);
	while (s->cq_cons != prod && n++ < 1024) {
		struct rmsg_cqe c = cqes[s->cq_cons & (entries - 1)];
		unsigned int kind = RMSG_CQE_KIND(c.flags);

		add(&st->cqes);
		add(&st->events[kind < 8 ? kind : 0]);
		if (kind == RMSG_CQE_OP && c.res <= 0)
			count_errno(st->op_res[(c.user_data & 0xff) <
					       RMSG_OP_LAST ?
					       c.user_data & 0xff :
					       RMSG_OP_LAST], -c.res);
		if ((kind == RMSG_CQE_ACCEPTED || kind == RMSG_CQE_CONNECTED) &&
		    !c.res) {
			remember_chan(s, c.channel);
			add(&st->channels_open);
			if (s->nopen < NCHANS)
				s->open_chans[s->nopen++] = c.channel;
		}
		if (kind == RMSG_CQE_CLOSED) {
			int i;

			for (i = 0; i < s->nopen; i++)
				if (s->open_chans[i] == c.channel)
					s->open_chans[i] =
						s->open_chans[--s->nopen];
		}
		if (kind == RMSG_CQE_REQUEST) {
			struct rmsg_accept a = {
				.channel = c.channel,
				.flags = chance(30) ? RMSG_ACCEPT_REJECT : 0,
				.user_data = rnd64(),
			};

			remember_chan(s, c.channel);
			do_ioctl(s->fd, K_ACCEPT, RMSG_IOC_ACCEPT, &a);
		}
		s->cq_cons++;
	}
	if (s->cq_rw)
		__atomic_store_n(ring_word(s->cq, s->p.cq_off.consumer),
				 s->cq_cons, __ATOMIC_RELEASE);
}

static void act_enter(struct slot *s)
{
	struct rmsg_enter e = { 0 };
	uint32_t entries = s->p.sq_entries;
	bool bad;
	int i, n;

	if (s->sq && s->sq_rw && entries && !(entries & (entries - 1))) {
		struct rmsg_sqe *sqes = (struct rmsg_sqe *)(s->sq +
							    s->p.sq_off.descs);
		uint32_t cons = __atomic_load_n(ring_word(s->sq,
							  s->p.sq_off.consumer),
						__ATOMIC_ACQUIRE);

		n = rn(entries + 1);
		if (n > (int)(entries - (s->sq_prod - cons)))
			n = entries - (s->sq_prod - cons);
		for (i = 0; i < n; i++) {
			fill_sqe(s, &sqes[s->sq_prod & (entries - 1)]);
			s->sq_prod++;
			add(&st->sqes);
		}
		if (chance(5)) {
			/* An impossible (or merely odd) producer index. */
			add(&st->index_writes);
			__atomic_store_n(ring_word(s->sq, s->p.sq_off.producer),
					 (uint32_t)some_value(),
					 __ATOMIC_RELEASE);
		} else {
			__atomic_store_n(ring_word(s->sq, s->p.sq_off.producer),
					 s->sq_prod, __ATOMIC_RELEASE);
		}
		if (chance(3)) {
			add(&st->index_writes);
			*ring_word(s->sq, s->p.sq_off.consumer) = rnd64();
			*ring_word(s->sq, s->p.sq_off.flags) = rnd64();
		}
	}
	if (s->cq && s->cq_rw && chance(4)) {
		add(&st->index_writes);
		__atomic_store_n(ring_word(s->cq, s->p.cq_off.consumer),
				 chance(50) ? (uint32_t)some_value() :
				 s->cq_cons + rn(8) - 4, __ATOMIC_RELEASE);
		if (chance(50))
			*ring_word(s->cq, s->p.cq_off.producer) = rnd64();
	}
	e.to_submit = chance(80) ? entries : (uint32_t)some_value();
	if (chance(30)) {
		e.flags = RMSG_ENTER_GETEVENTS;
		e.min_complete = rn(3);
	}
	maybe_mutate(&e, sizeof(e));
	do_ioctl(s->fd, K_ENTER, RMSG_IOC_ENTER, arg_ptr(&e, sizeof(e), &bad));
	reap(s);
	/* Put the indices right again, most of the time. */
	if (s->sq && s->sq_rw && chance(90)) {
		uint32_t cons = __atomic_load_n(ring_word(s->sq,
							  s->p.sq_off.consumer),
						__ATOMIC_ACQUIRE);

		if (s->sq_prod - cons > entries)
			s->sq_prod = cons;
		__atomic_store_n(ring_word(s->sq, s->p.sq_off.producer),
				 s->sq_prod, __ATOMIC_RELEASE);
	}
	if (s->cq && s->cq_rw && chance(90)) {
		s->cq_cons = __atomic_load_n(ring_word(s->cq,
						       s->p.cq_off.producer),
					     __ATOMIC_ACQUIRE);
		__atomic_store_n(ring_word(s->cq, s->p.cq_off.consumer),
				 s->cq_cons, __ATOMIC_RELEASE);
	}
}

/* An address for LISTEN or CONNECT, and its length. */
static void fill_sockaddr(struct sockaddr_storage *ss, __u32 *len,
			  const struct sockaddr_in *target)
{
	struct sockaddr_in *sin = (struct sockaddr_in *)ss;

	memset(ss, 0, sizeof(*ss));
	*sin = *target;
	*len = sizeof(*sin);
	switch (rn(10)) {
	case 0:
		*len = (uint32_t)some_value();
		break;
	case 1:
		sin->sin_family = rn(64);
		break;
	case 2:
		{
			struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;

			memset(s6, 0, sizeof(*s6));
			s6->sin6_family = AF_INET6;
			s6->sin6_port = target->sin_port;
			s6->sin6_addr.s6_addr[15] = 1;
			*len = sizeof(*s6);
		}
		break;
	case 3:
		sin->sin_addr.s_addr = rnd64();
		break;
	default:
		break;
	}
}

/* Settings in and out of their ranges, RMSG_OPT_OFF among them. */
static void fill_opts(struct rmsg_chan_opts *o)
{
	static const uint32_t ms[] = {
		0, 1, 50, 1000, RMSG_OPT_MS_MAX, RMSG_OPT_MS_MAX + 1,
		RMSG_OPT_OFF,
	};
	const uint32_t n = sizeof(ms) /
			   sizeof(ms[0]);

	memset(o, 0, sizeof(*o));
	o->repair_timeout_ms = chance(50) ? 0 : ms[rn(n)];
	o->stall_ms = chance(50) ? 0 : ms[rn(n)];
	o->heartbeat_ms = chance(50) ? 0 : ms[rn(n)];
	o->heartbeat_misses = chance(70) ? 0 : rn(RMSG_OPT_MISSES_MAX + 2);
	maybe_mutate(o, sizeof(*o));
}

/* A pointer to settings for LISTEN or CONNECT: mostly none. */
static uint64_t some_opts(struct rmsg_chan_opts *o)
{
	size_t len;

	if (chance(70))
		return 0;
	fill_opts(o);
	if (chance(10))
		return some_addr(&len);
	return (uintptr_t)o;
}

static void act_listen(struct slot *s)
{
	struct sockaddr_storage ss;
	struct rmsg_listen l = { 0 };
	struct sockaddr_in target = local_addr;
	struct rmsg_chan_opts opts;
	bool bad;

	target.sin_port = chance(70) ? 0 : htons(20000 + rn(100));
	fill_sockaddr(&ss, &l.addr_len, &target);
	l.addr = (uintptr_t)&ss;
	if (chance(10)) {
		size_t len;

		l.addr = some_addr(&len);
	}
	l.backlog = chance(80) ? 0 : (uint32_t)some_value();
	l.block_size = chance(60) ? 0 : chance(50) ? 4096 << rn(4) :
		       (uint32_t)some_value();
	l.flags = chance(30) ? RMSG_LISTEN_F_ACCEPT : 0;
	l.user_data = rnd64();
	l.opts = some_opts(&opts);
	maybe_mutate(&l, sizeof(l));
	/* The bound address is written back. */
	l.addr = out_ptr(l.addr, l.addr_len < sizeof(ss) ? l.addr_len :
			 sizeof(ss), &ss, sizeof(ss));
	if (do_ioctl(s->fd, K_LISTEN, RMSG_IOC_LISTEN,
		     arg_ptr(&l, sizeof(l), &bad)))
		return;
	if (l.addr == (uintptr_t)&ss && ss.ss_family == AF_INET &&
	    l.addr_len >= sizeof(struct sockaddr_in))
		s->listen_addr = *(struct sockaddr_in *)&ss;
}

static void act_connect(struct slot *s)
{
	struct sockaddr_storage ss, src;
	struct rmsg_connect c = { 0 };
	struct sockaddr_in target = local_addr;
	struct slot *peer = any_slot();
	struct rmsg_chan_opts opts;
	void *arg;
	bool bad;

	if (peer->listen_addr.sin_port)
		target = peer->listen_addr;
	else
		target.sin_port = htons(20000 + rn(100));
	fill_sockaddr(&ss, &c.addr_len, &target);
	c.addr = (uintptr_t)&ss;
	c.user_data = rnd64();
	c.block_size = chance(60) ? 0 : chance(50) ? 4096 << rn(4) :
		       (uint32_t)some_value();
	c.timeout_ms = chance(70) ? 0 : (uint32_t)some_value();
	if (chance(20)) {
		struct sockaddr_in from = local_addr;

		from.sin_port = chance(80) ? 0 : htons(20000 + rn(100));
		fill_sockaddr(&src, &c.src_addr_len, &from);
		c.src_addr = (uintptr_t)&src;
	}
	c.opts = some_opts(&opts);
	maybe_mutate(&c, sizeof(c));
	arg = arg_ptr(&c, sizeof(c), &bad);
	if (do_ioctl(s->fd, K_CONNECT, RMSG_IOC_CONNECT, arg))
		return;
	if (bad) {
		surprise("CONNECT took a bad pointer %p", arg);
		return;
	}
	remember_chan(s, ((struct rmsg_connect *)arg)->channel);
}

static void act_close_chan(struct slot *s)
{
	struct rmsg_close c = {
		.channel = some_channel(s),
		.flags = chance(50) ? RMSG_CLOSE_ABORT : 0,
	};
	bool bad;

	maybe_mutate(&c, sizeof(c));
	do_ioctl(s->fd, K_CLOSE, RMSG_IOC_CLOSE, arg_ptr(&c, sizeof(c), &bad));
}

static void act_accept(struct slot *s)
{
	struct rmsg_accept a = {
		.channel = some_channel(s),
		.flags = rn(2),
		.user_data = rnd64(),
	};
	bool bad;

	maybe_mutate(&a, sizeof(a));
	do_ioctl(s->fd, K_ACCEPT, RMSG_IOC_ACCEPT,
		 arg_ptr(&a, sizeof(a), &bad));
}

static void act_reg(struct slot *s)
{
	struct rmsg_reg r = { 0 };
	size_t len;
	void *arg;
	bool bad;
	int i;

	r.addr = some_addr(&len);
	r.len = chance(80) ? len : some_value();
	maybe_mutate(&r, sizeof(r));
	/* Rendezvous receives write into a region's pages. */
	r.addr = out_ptr(r.addr, r.len, NULL, 0);
	arg = arg_ptr(&r, sizeof(r), &bad);
	if (do_ioctl(s->fd, K_REG, RMSG_IOC_REG, arg))
		return;
	if (bad) {
		surprise("REG took a bad pointer %p", arg);
		return;
	}
	i = s->nregs < NREGS ? s->nregs++ : (int)rn(NREGS);
	s->regs[i] = ((struct rmsg_reg *)arg)->handle;
	s->reg_addr[i] = ((struct rmsg_reg *)arg)->addr;
	s->reg_len[i] = ((struct rmsg_reg *)arg)->len;
}

static void act_dereg(struct slot *s)
{
	struct rmsg_dereg d = { 0 };
	bool bad;
	int i = s->nregs ? (int)rn(s->nregs) : -1;

	d.handle = i >= 0 && chance(85) ? s->regs[i] : (uint32_t)some_value();
	maybe_mutate(&d, sizeof(d));
	if (!do_ioctl(s->fd, K_DEREG, RMSG_IOC_DEREG,
		      arg_ptr(&d, sizeof(d), &bad)) && i >= 0 &&
	    s->regs[i] == d.handle) {
		s->nregs--;
		s->regs[i] = s->regs[s->nregs];
		s->reg_addr[i] = s->reg_addr[s->nregs];
		s->reg_len[i] = s->reg_len[s->nregs];
	}
}

static uint32_t known_ep_ids[16];
static int n_ep_ids;

static void act_chan_list(struct slot *s)
{
	struct rmsg_chan_info *info = SINK_AT(8, struct rmsg_chan_info);
	struct rmsg_chan_list l = { 0 };
	size_t esz;
	void *arg;
	bool bad;
	int i;

	l.chans = (uintptr_t)info;
	l.capacity = rn(9);
	l.flags = chance(50) ? RMSG_CHAN_LIST_F_ALL : 0;
	if (chance(30)) {
		/* With addresses: larger elements, as far from the end. */
		l.flags |= RMSG_CHAN_LIST_F_ADDRS;
		l.chans = (uintptr_t)SINK_AT(8, struct rmsg_chan_info_addrs);
	}
	if (chance(15)) {
		size_t len;

		l.chans = some_addr(&len);
		l.capacity = (uint32_t)some_value();
	}
	maybe_mutate(&l, sizeof(l));
	/* What the kernel will write, by the flags it will see. */
	esz = l.flags & RMSG_CHAN_LIST_F_ADDRS ?
	      sizeof(struct rmsg_chan_info_addrs) : sizeof(*info);
	l.chans = out_ptr(l.chans, (uint64_t)l.capacity * esz, NULL, 0);
	arg = arg_ptr(&l, sizeof(l), &bad);
	if (do_ioctl(s->fd, K_CHAN_LIST, RMSG_IOC_CHAN_LIST, arg))
		return;
	if (bad) {
		surprise("CHAN_LIST took a bad pointer %p", arg);
		return;
	}
	memcpy(&l, arg, sizeof(l));
	s->ep_id = l.ep_id;
	if (l.chans != (uintptr_t)info || l.capacity > 8 ||
	    (l.flags & RMSG_CHAN_LIST_F_ADDRS))
		return;
	if (l.filled > l.capacity || l.filled > l.total)
		surprise("CHAN_LIST filled %u of capacity %u", l.filled,
			 l.capacity);
	for (i = 0; i < (int)l.filled && i < 8; i++)
		known_ep_ids[n_ep_ids++ % 16] = info[i].ep_id;
}

static void act_chan_addr(struct slot *s)
{
	struct rmsg_chan_addr a = { .channel = some_channel(s) };
	bool bad;

	maybe_mutate(&a, sizeof(a));
	do_ioctl(s->fd, K_CHAN_ADDR, RMSG_IOC_CHAN_ADDR,
		 arg_ptr(&a, sizeof(a), &bad));
}

static void act_chan_set(struct slot *s)
{
	struct rmsg_chan_set c = { .channel = some_channel(s) };
	bool bad;

	fill_opts(&c.opts);
	maybe_mutate(&c, sizeof(c));
	do_ioctl(s->fd, K_CHAN_SET, RMSG_IOC_CHAN_SET,
		 arg_ptr(&c, sizeof(c), &bad));
}

static void act_fault(struct slot *s)
{
	struct rmsg_fault f = { 0 };
	bool bad;

	f.ep_id = chance(60) ? 0 : chance(70) && n_ep_ids ?
		  known_ep_ids[rn(n_ep_ids < 16 ? n_ep_ids : 16)] :
		  (uint32_t)some_value();
	f.channel = some_channel(s);
	/* Device-fatal repairs every channel of rxe0: rarely. */
	f.kind = rn(8) == 0 ? RMSG_FAULT_DEVICE_FATAL :
		 chance(50) ? RMSG_FAULT_QP_ERROR : RMSG_FAULT_DISCONNECT;
	if (chance(10))
		f.kind = (uint32_t)some_value();
	maybe_mutate(&f, sizeof(f));
	do_ioctl(s->fd, K_FAULT, RMSG_IOC_FAULT, arg_ptr(&f, sizeof(f), &bad));
}

static void act_simple(struct slot *s)
{
	union {
		struct rmsg_version v;
		struct rmsg_dev_list d;
		struct rmsg_ep_stats e;
	} u;
	struct rmsg_dev_info *devs = SINK_AT(2, struct rmsg_dev_info);
	bool bad;

	memset(&u, 0, sizeof(u));
	switch (rn(3)) {
	case 0:
		maybe_mutate(&u.v, sizeof(u.v));
		do_ioctl(s->fd, K_VERSION, RMSG_IOC_VERSION,
			 arg_ptr(&u.v, sizeof(u.v), &bad));
		break;
	case 1:
		u.d.count = rn(3);
		u.d.devs = (uintptr_t)devs;
		if (chance(20)) {
			size_t len;

			u.d.devs = some_addr(&len);
			u.d.count = (uint32_t)some_value();
		}
		maybe_mutate(&u.d, sizeof(u.d));
		u.d.devs = out_ptr(u.d.devs,
				   (uint64_t)u.d.count * sizeof(*devs),
				   NULL, 0);
		do_ioctl(s->fd, K_DEV_LIST, RMSG_IOC_DEV_LIST,
			 arg_ptr(&u.d, sizeof(u.d), &bad));
		break;
	default:
		do_ioctl(s->fd, K_EP_STATS, RMSG_IOC_EP_STATS,
			 arg_ptr(&u.e, sizeof(u.e), &bad));
		break;
	}
}

/* Commands no one knows: other numbers, sizes and directions. */
static void act_unknown(struct slot *s)
{
	static const unsigned int dirs[] = {
		_IOC_NONE, _IOC_READ, _IOC_WRITE, _IOC_READ | _IOC_WRITE,
	};
	unsigned long cmd;
	unsigned int nr = chance(50) ? rn(0x10) : rn(256);
	unsigned int size = chance(50) ? rn(256) : (uint32_t)some_value();

	cmd = _IOC(dirs[rn(4)], chance(90) ? RMSG_IOC_MAGIC : rn(256), nr,
		   size & _IOC_SIZEMASK);
	switch (cmd) {
	case RMSG_IOC_VERSION: case RMSG_IOC_DEV_LIST:
	case RMSG_IOC_EP_SETUP: case RMSG_IOC_ENTER:
	case RMSG_IOC_LISTEN: case RMSG_IOC_CONNECT:
	case RMSG_IOC_CLOSE: case RMSG_IOC_EP_STATS:
	case RMSG_IOC_ACCEPT: case RMSG_IOC_REG:
	case RMSG_IOC_DEREG: case RMSG_IOC_CHAN_LIST:
	case RMSG_IOC_FAULT: case RMSG_IOC_CHAN_ADDR:
	case RMSG_IOC_CHAN_SET:
		return;
	}
	/* Generic file ioctls (FIONREAD, FIOCLEX...) are the VFS's. */
	if (_IOC_TYPE(cmd) == 'T' || _IOC_TYPE(cmd) == 'f' ||
	    _IOC_TYPE(cmd) == 0 || _IOC_TYPE(cmd) == 0x12 ||
	    _IOC_TYPE(cmd) == 'X')
		return;
	do_ioctl(s->fd, K_UNKNOWN, cmd, sink);
}

/*
 * A channel pair on loopback: one endpoint listens, another connects.
 * The events come later; reap() learns the ids.
 */
static void act_pair(void)
{
	struct slot *a = open_slot(), *b = open_slot();
	struct rmsg_listen l = { 0 };
	struct rmsg_connect c = { 0 };
	struct sockaddr_in sin = local_addr;

	if (!a || !b || !a->setup || !b->setup)
		return;
	if (!a->listen_addr.sin_port) {
		sin.sin_port = 0;
		l.addr = (uintptr_t)&sin;
		l.addr_len = sizeof(sin);
		l.flags = chance(20) ? RMSG_LISTEN_F_ACCEPT : 0;
		if (do_ioctl(a->fd, K_LISTEN, RMSG_IOC_LISTEN, &l))
			return;
		a->listen_addr = sin;
	}
	c.addr = (uintptr_t)&a->listen_addr;
	c.addr_len = sizeof(a->listen_addr);
	c.block_size = chance(50) ? 0 : 4096 << rn(3);
	c.user_data = rnd64();
	if (!do_ioctl(b->fd, K_CONNECT, RMSG_IOC_CONNECT, &c))
		remember_chan(b, c.channel);
}

static void act_misc(struct slot *s)
{
	char buf[16];
	struct pollfd pfd = { .fd = s->fd, .events = POLLIN | POLLOUT };

	switch (rn(4)) {
	case 0:
		if (read(s->fd, buf, sizeof(buf)) >= 0)
			surprise("read() of /dev/rmsg succeeded");
		break;
	case 1:
		if (write(s->fd, buf, sizeof(buf)) >= 0)
			surprise("write() of /dev/rmsg succeeded");
		break;
	case 2:
		poll(&pfd, 1, 0);
		break;
	default:
		if (lseek(s->fd, 0, SEEK_SET) >= 0)
			surprise("lseek() of /dev/rmsg succeeded");
		break;
	}
}

static void step(bool allow_fork);

static int nchildren;

static void act_fork(void)
{
	pid_t pid;
	int i, n;

	if (nchildren >= NCHILDREN)
		return;
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		return;
	if (pid > 0) {
		add(&st->forks);
		nchildren++;
		rnd64();
		return;
	}
	/* The child: a different stream, the same files and mappings. */
	in_child = true;
	/* Its faults are its own (MADV_DONTFORK holes): not the pass's. */
	signal(SIGSEGV, SIG_DFL);
	signal(SIGBUS, SIG_DFL);
	rng_state ^= 0x9e3779b97f4a7c15ULL * (uint64_t)getpid();
	{
		struct itimerval it = {
			.it_interval = { 0, 50000 },
			.it_value = { 0, 50000 },
		};

		setitimer(ITIMER_REAL, &it, NULL);
	}
	n = rn(CHILD_STEPS);
	for (i = 0; i < n; i++)
		step(false);
	switch (rn(3)) {
	case 0:
		raise(SIGKILL);
		break;
	case 1:
		/* Leave with mappings and files as they are. */
		_exit(0);
	default:
		for (i = 0; i < NSLOTS; i++)
			if (slots[i].fd >= 0 && chance(50))
				close(slots[i].fd);
		_exit(0);
	}
	_exit(0);
}

static void reap_children(bool all)
{
	int status;

	while (nchildren && waitpid(-1, &status, all ? 0 : WNOHANG) > 0)
		nchildren--;
}

/*
 * ABIFUZZ_CHECK_MAPS=1: after every step, every mapping the pass tracks
 * must still be mapped (mincore() fails with ENOMEM on a hole); the first
 * step that broke one is a surprise naming its draw. A diagnostic: it
 * slows the pass down several times.
 */
static bool check_maps;

static void check_tracked_maps(int draw)
{
	static unsigned char vec[4096];
	int k, i;

	for (k = 0; k < NSLOTS; k++)
		for (i = 0; i < NMAPS; i++) {
			struct slot *s = &slots[k];
			size_t len = s->map[i].len;

			if (!s->map[i].addr || !len || len > sizeof(vec) * PAGE)
				continue;
			if (!mincore(s->map[i].addr, len, vec) ||
			    errno != ENOMEM)
				continue;
			surprise("step draw %d left a hole in tracked mapping %d.%d (offset %#llx, %zu bytes)",
				 draw, k, i,
				 (unsigned long long)s->map[i].off, len);
			/* Forget it, so that one cause is reported once. */
			untrack_map(s, i);
		}
}

/* The action step() last chose (its random draw), for a fault report. */
static int cur_step;

static void step(bool allow_fork)
{
	struct slot *s = open_slot();
	unsigned int r = rn(1000);

	add(&st->iters);
	__atomic_store_n(&cur_step, r, __ATOMIC_RELAXED);
	if (!s || r < 30) {
		act_open();
		return;
	}
	if (!s->setup && r < 400) {
		act_setup(s);
		return;
	}
	if (r < 60)
		act_setup(s);
	else if (r < 100)
		act_mmap(s);
	else if (r < 110)
		act_vma(s);
	else if (r < 420)
		act_enter(s);
	else if (r < 460)
		have_addr ? act_pair() : act_enter(s);
	else if (r < 490)
		have_addr ? act_listen(s) : act_enter(s);
	else if (r < 520)
		have_addr ? act_connect(s) : act_enter(s);
	else if (r < 560)
		act_close_chan(s);
	else if (r < 580)
		act_accept(s);
	else if (r < 650)
		act_reg(s);
	else if (r < 700)
		act_dereg(s);
	else if (r < 730)
		act_chan_list(s);
	else if (r < 750)
		act_fault(s);
	else if (r < 765)
		act_chan_addr(s);
	else if (r < 780)
		act_chan_set(s);
	else if (r < 800)
		act_simple(s);
	else if (r < 830)
		act_unknown(s);
	else if (r < 850)
		act_misc(s);
	else if (r < 855 && allow_fork)
		act_fork();
	else
		reap(s);
	/* Not in forked children: MADV_DONTFORK leaves them holes. */
	if (check_maps && !in_child)
		check_tracked_maps(r);
}

static void on_alarm(int sig)
{
}

/*
 * A SIGSEGV or SIGBUS of the pass: note the address, whether it lies in a
 * mapping of /dev/rmsg the pass believes it has (then the kernel left a
 * mapping unbacked or changed it: its failure) and the action, and die of
 * it as before (SA_RESETHAND: the access faults again).
 */
static void on_fault(int sig, siginfo_t *si, void *uc)
{
	uintptr_t a = (uintptr_t)si->si_addr;
	int k, i;

	st->fault_sig = sig;
	st->fault_code = si->si_code;
	st->fault_addr = si->si_addr;
	st->fault_step = __atomic_load_n(&cur_step, __ATOMIC_RELAXED);
	st->fault_map = -1;
	for (k = 0; k < NSLOTS; k++)
		for (i = 0; i < NMAPS; i++) {
			if (slots[k].map[i].addr &&
			    within(a, slots[k].map[i].addr,
				   slots[k].map[i].len)) {
				st->fault_map = k * NMAPS + i;
				st->fault_off = slots[k].map[i].off;
				st->fault_len = slots[k].map[i].len;
				st->fault_prot = slots[k].map[i].prot;
			}
		}
}

/*
 * A second thread racing the first with ioctls on the same files: ENTER,
 * CLOSE, FAULT, DEREG and CHAN_LIST while the first closes files, unmaps
 * rings and releases endpoints. It touches no memory of the slots (the
 * first thread unmaps it), only their file descriptors, which may be
 * closed (EBADF) or reused meanwhile; its results are counted, not judged.
 */
static bool racer_stop;
static unsigned long racer_calls;

static void *racer_main(void *arg)
{
	uint64_t x = (uintptr_t)arg | 1;
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGALRM);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	while (!__atomic_load_n(&racer_stop, __ATOMIC_RELAXED)) {
		int fd = slots[x % NSLOTS].fd;
		union {
			struct rmsg_enter e;
			struct rmsg_close c;
			struct rmsg_fault f;
			struct rmsg_dereg d;
			struct rmsg_chan_list l;
		} u;

		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		memset(&u, 0, sizeof(u));
		if (fd < 0) {
			usleep(1000);
			continue;
		}
		switch ((x >> 8) % 5) {
		case 0:
			u.e.to_submit = 8;
			ioctl(fd, RMSG_IOC_ENTER, &u.e);
			break;
		case 1:
			u.c.channel = (x >> 16) % 8;
			u.c.flags = (x >> 20) & RMSG_CLOSE_ABORT;
			ioctl(fd, RMSG_IOC_CLOSE, &u.c);
			break;
		case 2:
			if ((x >> 24) % 16 == 0) {
				u.f.channel = (x >> 16) % 8;
				u.f.kind = RMSG_FAULT_QP_ERROR +
					   (x >> 30) % 2;
				ioctl(fd, RMSG_IOC_FAULT, &u.f);
			}
			break;
		case 3:
			u.d.handle = 1 + (x >> 16) % 8;
			ioctl(fd, RMSG_IOC_DEREG, &u.d);
			break;
		default:
			u.l.chans = (uintptr_t)SINK_AT(16,
						       struct rmsg_chan_info);
			u.l.capacity = 16;
			ioctl(fd, RMSG_IOC_CHAN_LIST, &u.l);
			break;
		}
		racer_calls++;
		if (!(racer_calls & 15))
			usleep(200);
	}
	return NULL;
}

/* @len bytes followed by a PROT_NONE page; NULL on failure. */
static unsigned char *guarded(size_t len)
{
	unsigned char *p = mmap(NULL, len + PAGE, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED || mprotect(p + len, PAGE, PROT_NONE))
		return NULL;
	return p;
}

/*
 * Memory of the fuzzer's own to point the kernel at. Whatever the kernel
 * may write to (answers, lists, rendezvous data landing in a region) is
 * a mapping of its own with a guard page behind it, never the stack or
 * the heap: the fuzzer claims absurd sizes on purpose.
 */
static int setup_memory(void)
{
	guard = guarded(PAGE);
	ro_page = mmap(NULL, PAGE, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS,
		       -1, 0);
	/* Mapped but inaccessible: an unmapped hole could be reused. */
	hole = mmap(NULL, PAGE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	anon_buf = guarded(ANON_LEN);
	heap_buf = guarded(HEAP_LEN);
	sink = guarded(SINK_LEN);
	if (!guard || ro_page == MAP_FAILED || hole == MAP_FAILED ||
	    !anon_buf || !heap_buf || !sink)
		return -1;
	memset(heap_buf, 0xa5, HEAP_LEN);
	memset(anon_buf, 0x5a, ANON_LEN);
	return 0;
}

/* One pass, in this (child) process: runs until the budget is spent. */
/*
 * Sequences that once broke the kernel, played exactly at the start of
 * every pass, before the random ones, with the interval timer running.
 *
 * A consumer index behind what the kernel accepted, an event the ring
 * then cannot take (a CONNECT nobody answers), and GETEVENTS for two:
 * the kernel spun in the wait, deaf to signals and SIGKILL, until the
 * index was found impossible there too. Now the wait ends with EINVAL
 * (EINTR when the timer comes first: the call is made again).
 */
static void known_traps(void)
{
	struct rmsg_ep_setup p = { .sq_entries = 8, .cq_entries = 8 };
	struct sockaddr_in nobody = local_addr;
	struct rmsg_connect c = { 0 };
	struct rmsg_enter e = { 0 };
	struct timespec t0, t;
	void *cq = MAP_FAILED;
	int fd, ret = 0;

	if (!have_addr)
		return;
	fd = open("/dev/rmsg", O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return;
	if (ioctl(fd, RMSG_IOC_EP_SETUP, &p))
		goto out;
	cq = mmap(NULL, p.cq_mmap_size, PROT_READ | PROT_WRITE, MAP_SHARED,
		  fd, RMSG_OFF_CQ_RING);
	if (cq == MAP_FAILED)
		goto out;
	__atomic_store_n((uint32_t *)((char *)cq + p.cq_off.consumer),
			 (uint32_t)-1, __ATOMIC_RELEASE);
	nobody.sin_port = htons(19999);
	c.addr = (uintptr_t)&nobody;
	c.addr_len = sizeof(nobody);
	if (ioctl(fd, RMSG_IOC_CONNECT, &c))
		goto out;
	e.flags = RMSG_ENTER_GETEVENTS;
	e.min_complete = 2;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		ret = ioctl(fd, RMSG_IOC_ENTER, &e) ? errno : 0;
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while (ret == EINTR && t.tv_sec - t0.tv_sec < 20);
	if (ret != EINVAL)
		surprise("GETEVENTS over an impossible consumer index and a kept event: %s",
			 ret ? strerror(ret) : "0");
out:
	if (cq != MAP_FAILED)
		munmap(cq, p.cq_mmap_size);
	close(fd);
}

static int fuzz_pass(uint64_t seed, unsigned long iters, unsigned int secs)
{
	struct sigaction sa = { .sa_handler = on_alarm };
	struct sigaction fault_sa = { .sa_sigaction = on_fault,
				      .sa_flags = SA_SIGINFO | SA_RESETHAND };
	struct itimerval it = {
		.it_interval = { 0, 100000 },
		.it_value = { 0, 100000 },
	};
	struct timespec t0, t;
	pthread_t racer;
	unsigned long i;
	int k;

	rng_state = seed ? seed : 1;
	check_maps = getenv("ABIFUZZ_CHECK_MAPS") &&
		     !strcmp(getenv("ABIFUZZ_CHECK_MAPS"), "1");
	if (setup_memory())
		return 1;
	for (k = 0; k < NSLOTS; k++)
		slots[k].fd = -1;
	/* Interrupt any wait the kernel allows to be interrupted. */
	sigaction(SIGALRM, &sa, NULL);
	sigaction(SIGSEGV, &fault_sa, NULL);
	sigaction(SIGBUS, &fault_sa, NULL);
	setitimer(ITIMER_REAL, &it, NULL);
	known_traps();
	if (pthread_create(&racer, NULL, racer_main,
			   (void *)(uintptr_t)(seed * 7)))
		return 1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 0; !iters || i < iters; i++) {
		step(true);
		if (!(i & 63)) {
			reap_children(false);
			clock_gettime(CLOCK_MONOTONIC, &t);
			if (t.tv_sec - t0.tv_sec >= (long)secs)
				break;
		}
	}
	__atomic_store_n(&racer_stop, true, __ATOMIC_RELAXED);
	pthread_join(racer, NULL);
	st->racer_calls = racer_calls;
	/* Kill the children still running, abruptly. */
	signal(SIGCHLD, SIG_DFL);
	kill(0, SIGKILL);	/* never reached: see main's process group */
	return 0;
}

static int run_pass(const char *name, int num, uid_t uid, uint64_t seed,
		    unsigned long iters, unsigned int secs)
{
	pid_t pid;
	int status, k, e;

	memset(st, 0, sizeof(*st));
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		struct itimerval off = { 0 };

		/* Its own process group: the pass ends with a kill of it. */
		setpgid(0, 0);
		if (uid && (setgroups(0, NULL) || setresgid(uid, uid, uid) ||
			    setresuid(uid, uid, uid)))
			_exit(2);
		fuzz_pass(seed, iters, secs);
		setitimer(ITIMER_REAL, &off, NULL);
		_exit(0);
	}
	/* The pass kills its own group at the end, itself included. */
	if (waitpid(pid, &status, 0) != pid)
		return -1;
	kill(-pid, SIGKILL);
	while (waitpid(-pid, NULL, 0) > 0)
		;
	printf("# %s: %lu iterations, %lu racing ioctls, %lu forks, %lu opens (%lu refused)\n",
	       name, st->iters, st->racer_calls, st->forks, st->opens,
	       st->open_err[EACCES] + st->open_err[EPERM]);
	printf("# %s: %lu mutated output pointers aimed at the fuzzer's own memory, turned away\n",
	       name, st->out_redirected);
	for (k = 0; k < K_NR; k++) {
		char line[512];
		int len;

		if (!st->calls[k])
			continue;
		len = snprintf(line, sizeof(line), "# %s:   %-9s %6lu calls, %6lu ok",
			       name, kind_name[k], st->calls[k], st->ok[k]);
		for (e = 0; e < MAX_ERRNO && len < (int)sizeof(line) - 32;
		     e++)
			if (st->err[k][e])
				len += snprintf(line + len, sizeof(line) - len,
						", %s %lu",
						e ? strerrorname_np(e) : "?",
						st->err[k][e]);
		printf("%s\n", line);
	}
	{
		char line[512];
		int len = snprintf(line, sizeof(line),
				   "# %s:   mmap      %6lu calls, %6lu ok",
				   name, st->mmaps, st->mmap_ok);

		for (e = 0; e < MAX_ERRNO; e++)
			if (st->mmap_err[e])
				len += snprintf(line + len, sizeof(line) - len,
						", %s %lu",
						e ? strerrorname_np(e) : "?",
						st->mmap_err[e]);
		printf("%s\n", line);
	}
	printf("# %s: %lu SQEs written, %lu index writes, %lu CQEs read (op %lu, connected %lu, accepted %lu, closed %lu, readable %lu, request %lu, stalled %lu, resumed %lu), %lu channels opened\n",
	       name, st->sqes, st->index_writes, st->cqes, st->events[0],
	       st->events[1], st->events[2], st->events[3], st->events[4],
	       st->events[5], st->events[6], st->events[7],
	       st->channels_open);
	for (k = 0; k <= RMSG_OP_LAST; k++) {
		static const char *const op_name[] = {
			"NOP", "SEND", "CREDIT", "ARM", "SEND_RNDV",
			"RECV_RNDV", "bad op",
		};
		char line[512];
		int len = snprintf(line, sizeof(line), "# %s:   CQE %-9s",
				   name, op_name[k]);

		for (e = 0; e < MAX_ERRNO && len < (int)sizeof(line) - 32;
		     e++)
			if (st->op_res[k][e])
				len += snprintf(line + len, sizeof(line) - len,
						" %s %lu",
						e ? strerrorname_np(e) : "ok",
						st->op_res[k][e]);
		printf("%s\n", line);
	}
	for (k = 0; k < (int)st->surprises && k < 8; k++)
		printf("# %s: surprise: %s\n", name, st->surprise[k]);
	if (st->fault_sig && st->fault_map >= 0)
		printf("# %s: signal %d (code %d) at %p, in a mapping of offset %#llx, %zu bytes, prot %d; step draw %d\n",
		       name, st->fault_sig, st->fault_code, st->fault_addr,
		       (unsigned long long)st->fault_off, st->fault_len,
		       st->fault_prot, st->fault_step);
	else if (st->fault_sig)
		printf("# %s: signal %d (code %d) at %p, in none of the mappings of /dev/rmsg the pass tracks; step draw %d\n",
		       name, st->fault_sig, st->fault_code, st->fault_addr,
		       st->fault_step);
	if (WIFSIGNALED(status) && WTERMSIG(status) != SIGKILL) {
		printf("not ok %d abifuzz.%s # the fuzzer died of signal %d\n",
		       num, name, WTERMSIG(status));
		return 1;
	}
	if (WIFEXITED(status) && WEXITSTATUS(status) == 2) {
		printf("not ok %d abifuzz.%s # could not become uid %u\n", num,
		       name, uid);
		return 1;
	}
	if (st->surprises) {
		printf("not ok %d abifuzz.%s # %lu surprising results\n", num,
		       name, st->surprises);
		return 1;
	}
	if (st->opens && st->opens == st->open_err[EACCES] +
	    st->open_err[EPERM]) {
		printf("not ok %d abifuzz.%s # /dev/rmsg could not be opened\n",
		       num, name);
		return 1;
	}
	printf("ok %d abifuzz.%s\n", num, name);
	return 0;
}

/* Wait for an event of @kind on @ep; its res, or -ETIMEDOUT. */
static int wait_kind(struct rmsg_ep *ep, unsigned int kind, uint32_t *channel)
{
	struct rmsg_event ev;
	struct pollfd pfd = { .fd = rmsg_ep_fd(ep), .events = POLLIN };
	int i, n;

	for (i = 0; i < 3000; i++) {
		n = rmsg_ep_progress(ep, &ev, 1);
		if (n < 0)
			return n;
		if (n == 1 && ev.kind == kind) {
			if (channel)
				*channel = ev.channel;
			return ev.res;
		}
		if (!n)
			poll(&pfd, 1, 20);
	}
	return -ETIMEDOUT;
}

/* A fresh pair of endpoints carries a byte-checked message. */
static const char *round_trip(void)
{
	static char why[160];
	unsigned char out[1000], in[1000];
	struct sockaddr_in sin = local_addr;
	struct rmsg_ep *a = NULL, *b = NULL;
	uint32_t ca = 0, cb = 0;
	int ret, i;

	if (rmsg_ep_open(&a, 16, 0))
		return "rmsg_ep_open fails";
	if (rmsg_ep_open(&b, 16, 0)) {
		rmsg_ep_drop(&a);
		return "rmsg_ep_open fails";
	}
	sin.sin_port = 0;
	ret = rmsg_ep_listen(a, (struct sockaddr *)&sin, sizeof(sin), 1, 0);
	if (!ret) {
		ret = rmsg_chan_connect(b, (struct sockaddr *)&sin, sizeof(sin),
					2, 0);
		cb = ret;
		ret = ret < 0 ? ret : wait_kind(b, RMSG_CQE_CONNECTED, NULL);
	}
	if (!ret)
		ret = wait_kind(a, RMSG_CQE_ACCEPTED, &ca);
	for (i = 0; i < (int)sizeof(out); i++)
		out[i] = i * 7 + 3;
	if (!ret)
		ret = rmsg_msg_send(b, cb, out, sizeof(out), 0, 3);
	for (i = 0; !ret && i < 3000; i++) {
		ret = rmsg_msg_recv(a, ca, in, sizeof(in), 0);
		if (ret != -EAGAIN)
			break;
		rmsg_ep_progress(a, NULL, 0);
		ret = 0;
		usleep(1000);
	}
	rmsg_ep_drop(&b);
	rmsg_ep_drop(&a);
	if (ret != (int)sizeof(out) || memcmp(in, out, sizeof(out))) {
		snprintf(why, sizeof(why),
			 "a fresh channel does not carry a message: %d", ret);
		return why;
	}
	return NULL;
}

/*
 * After the passes: no endpoint's channel is left in the kernel, no page
 * is still pinned, and a fresh pair of endpoints carries a message.
 * Returns NULL or what is wrong.
 */
static const char *sane_after(long pins_before)
{
	static char why[160];
	struct rmsg_ep_setup p = { .sq_entries = 8,
				   .send_area_size = RMSG_SEND_AREA_ALIGN };
	struct rmsg_chan_list cl = { .flags = RMSG_CHAN_LIST_F_ALL };
	struct rmsg_version v = { 0 };
	int fd, i;
	long now = -1;

	/*
	 * Channels of the dead children end in the background, some after
	 * an rdma_cm timeout of their connection's state (seen: over 10 s),
	 * and release their regions' pages only then.
	 */
	for (i = 0; i < 900; i++) {
		now = rmsg_pins();
		if (pins_before < 0 || now == pins_before)
			break;
		usleep(100000);
	}
	if (i)
		printf("# pages pinned back to where they were after %d.%d s\n",
		       i / 10, i % 10);
	if (pins_before >= 0 && now != pins_before) {
		snprintf(why, sizeof(why), "%ld pages still pinned",
			 now - pins_before);
		return why;
	}
	fd = open(RMSG_DEVICE_PATH, O_RDWR);
	if (fd < 0)
		return "cannot open /dev/rmsg";
	if (ioctl(fd, RMSG_IOC_VERSION, &v) || v.abi_version != RMSG_ABI_VERSION) {
		close(fd);
		return "VERSION fails";
	}
	for (i = 0; i < 100; i++) {
		if (ioctl(fd, RMSG_IOC_CHAN_LIST, &cl)) {
			close(fd);
			return "CHAN_LIST fails";
		}
		if (!cl.total)
			break;
		usleep(100000);
	}
	if (cl.total) {
		snprintf(why, sizeof(why),
			 "%u channels left after every endpoint closed",
			 cl.total);
		close(fd);
		return why;
	}
	if (ioctl(fd, RMSG_IOC_EP_SETUP, &p)) {
		close(fd);
		return "EP_SETUP fails";
	}
	close(fd);
	return have_addr ? round_trip() : NULL;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "seed", required_argument, NULL, 's' },
		{ "secs", required_argument, NULL, 't' },
		{ "iters", required_argument, NULL, 'i' },
		{ "as", required_argument, NULL, 'a' },
		{ NULL, 0, NULL, 0 },
	};
	const char *env, *as = "both", *why;
	uint64_t seed;
	unsigned int secs = 6;
	unsigned long iters = 0;
	struct stat sb;
	long pins_before;
	int c, fails = 0, fd;
	bool chmodded = false;

	env = getenv("ABIFUZZ_SEED");
	seed = env ? strtoull(env, NULL, 0) : 0;
	env = getenv("ABIFUZZ_SECS");
	if (env)
		secs = strtoul(env, NULL, 0);
	env = getenv("ABIFUZZ_ITERS");
	if (env)
		iters = strtoul(env, NULL, 0);
	/* ABIFUZZ_AS=root|nobody: one pass only, as --as says. */
	env = getenv("ABIFUZZ_AS");
	if (env && *env)
		as = env;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 's':
			seed = strtoull(optarg, NULL, 0);
			break;
		case 't':
			secs = strtoul(optarg, NULL, 0);
			break;
		case 'i':
			iters = strtoul(optarg, NULL, 0);
			break;
		case 'a':
			as = optarg;
			break;
		default:
			fprintf(stderr, "usage: %s [--seed N] [--secs S] [--iters N] [--as root|nobody|both]\n",
				argv[0]);
			return 2;
		}
	}
	if (!seed) {
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		seed = ((uint64_t)ts.tv_sec << 20) ^ ts.tv_nsec ^ getpid();
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("TAP version 13\n1..3\n");
	printf("# seed %llu, %u s per pass%s (reproduce: %s --seed %llu)\n",
	       (unsigned long long)seed, secs, iters ? ", iteration limit" : "",
	       argv[0], (unsigned long long)seed);

	st = mmap(NULL, sizeof(*st), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (st == MAP_FAILED) {
		printf("Bail out! no memory\n");
		return 1;
	}
	fd = open(RMSG_DEVICE_PATH, O_RDWR);
	if (fd < 0 || geteuid()) {
		printf("ok 1 abifuzz.root # SKIP %s\n",
		       fd < 0 ? "/dev/rmsg cannot be opened" : "not root");
		printf("ok 2 abifuzz.nobody # SKIP not root\n");
		printf("ok 3 abifuzz.sane_after # SKIP not run\n");
		return 0;
	}
	close(fd);
	have_addr = getenv("RMSG_LOCAL_ADDR") &&
		    inet_pton(AF_INET, getenv("RMSG_LOCAL_ADDR"),
			      &local_addr.sin_addr) == 1;
	local_addr.sin_family = AF_INET;
	if (!have_addr)
		printf("# RMSG_LOCAL_ADDR not set: no channels (not run by rmsg-vm)\n");
	pins_before = rmsg_pins();

	if (strcmp(as, "nobody"))
		fails += run_pass("root", 1, 0, seed, iters, secs);
	else
		printf("ok 1 abifuzz.root # SKIP --as nobody\n");

	if (strcmp(as, "root") && !stat(RMSG_DEVICE_PATH, &sb)) {
		if (!(sb.st_mode & 0006)) {
			/*
			 * Today only root may open /dev/rmsg; the
			 * unprivileged pass runs with the node opened up.
			 */
			printf("# /dev/rmsg is mode %04o: nobody cannot open it; 0666 for this pass\n",
			       sb.st_mode & 07777);
			chmodded = !chmod(RMSG_DEVICE_PATH, 0666);
		}
		fails += run_pass("nobody", 2, NOBODY, seed ^ 0x6e6f626f6479ULL,
				  iters, secs);
		if (chmodded)
			chmod(RMSG_DEVICE_PATH, sb.st_mode & 07777);
	} else {
		printf("ok 2 abifuzz.nobody # SKIP %s\n",
		       strcmp(as, "root") ? "no /dev/rmsg to open up" :
		       "--as root (or ABIFUZZ_AS=root)");
	}

	why = sane_after(pins_before);
	if (why) {
		printf("not ok 3 abifuzz.sane_after # %s\n", why);
		fails++;
	} else {
		printf("ok 3 abifuzz.sane_after\n");
	}
	printf("# Totals: pass:%d fail:%d xfail:0 xpass:0 skip:0 error:0\n",
	       3 - fails, fails);
	return fails ? 1 : 0;
}
