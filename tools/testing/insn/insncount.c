// SPDX-License-Identifier: GPL-2.0
/*
 * insncount: a QEMU TCG plugin that counts the guest instructions each vCPU
 * executes, in user mode and in kernel mode, between two markers the guest
 * sets (Documentation/bench.rst, "Instructions per message").
 *
 *   qemu-system-x86_64 -plugin build/qemu/libinsncount.so,out=FILE ...
 *   qemu-system-x86_64 -plugin ...,out=FILE,profile=PFILE ...
 *
 * The markers are instructions that do nothing on x86, recognised when a
 * block is translated: xchg %cx,%cx (66 87 c9) starts a window (every
 * vCPU's counts back to zero, counting on), xchg %dx,%dx (66 87 d2) stops
 * it and appends one line to FILE (JSON, see write_window()). Markers hold
 * for all vCPUs at once: a measurement's two ends usually run on two.
 * tools/testing/insn/insn-mark.c sets them; nothing else in a Debian guest
 * uses 16-bit xchg of a register with itself.
 *
 * Counting is per translated block, not per instruction: one callback per
 * block executed adds the block's instruction count to its vCPU's user or
 * kernel counter, by the block's first address (the upper half of the
 * address space is the kernel's; a block never crosses a privilege change).
 * TCG takes interrupts between blocks, but an exception (a page fault, a
 * system call's instruction is the block's last) can leave a block early:
 * its instructions after the faulting one are counted all the same, an
 * error of less than one block per fault. The callback is the same whether
 * or not a window is open, so the plugin costs the same all through the run.
 *
 * With profile=PFILE, each block also counts the instructions it ran in the
 * window, and the window's stop appends them to PFILE (write_profile()):
 * a per-block profile for tools/testing/insn-profile. Without it, nothing
 * of the profile runs when a block executes (another callback does it).
 *
 * Only the few declarations of QEMU's plugin API that this file uses are
 * here, written from QEMU 7.2's documentation (include/qemu/qemu-plugin.h,
 * API version 1): Debian ships no header.
 */
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* --- the plugin API (QEMU 7.2) ------------------------------------------ */

typedef uint64_t qemu_plugin_id_t;

typedef struct {
	const char *target_name;
	struct {
		int min;
		int cur;
	} version;
	bool system_emulation;
	union {
		struct {
			int smp_vcpus;
			int max_vcpus;
		} system;
	};
} qemu_info_t;

struct qemu_plugin_tb;
struct qemu_plugin_insn;

enum qemu_plugin_cb_flags {
	QEMU_PLUGIN_CB_NO_REGS,
	QEMU_PLUGIN_CB_R_REGS,
	QEMU_PLUGIN_CB_RW_REGS,
};

typedef void (*qemu_plugin_udata_cb_t)(qemu_plugin_id_t id, void *userdata);
typedef void (*qemu_plugin_vcpu_udata_cb_t)(unsigned int vcpu_index,
					    void *userdata);
typedef void (*qemu_plugin_vcpu_tb_trans_cb_t)(qemu_plugin_id_t id,
					       struct qemu_plugin_tb *tb);

void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t id,
					   qemu_plugin_vcpu_tb_trans_cb_t cb);
void qemu_plugin_register_vcpu_tb_exec_cb(struct qemu_plugin_tb *tb,
					  qemu_plugin_vcpu_udata_cb_t cb,
					  enum qemu_plugin_cb_flags flags,
					  void *userdata);
void qemu_plugin_register_vcpu_insn_exec_cb(struct qemu_plugin_insn *insn,
					    qemu_plugin_vcpu_udata_cb_t cb,
					    enum qemu_plugin_cb_flags flags,
					    void *userdata);
void qemu_plugin_register_atexit_cb(qemu_plugin_id_t id,
				    qemu_plugin_udata_cb_t cb, void *userdata);
size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *tb);
uint64_t qemu_plugin_tb_vaddr(const struct qemu_plugin_tb *tb);
struct qemu_plugin_insn *qemu_plugin_tb_get_insn(const struct qemu_plugin_tb *tb,
						 size_t idx);
const void *qemu_plugin_insn_data(const struct qemu_plugin_insn *insn);
size_t qemu_plugin_insn_size(const struct qemu_plugin_insn *insn);
void qemu_plugin_outs(const char *string);

#define EXPORT __attribute__((visibility("default")))
EXPORT extern int qemu_plugin_version;
EXPORT int qemu_plugin_version = 1;
EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info,
			       int argc, char **argv);

/* --- the counter -------------------------------------------------------- */

enum { USER, KERNEL };
enum { MARK_START = 1, MARK_STOP = 2 };

/*
 * Busy-polling: a loop of up to MAXP blocks that a vCPU runs again and
 * again in one mode. Each vCPU keeps, per mode, the last RING blocks it
 * ran and where each block last ran (a small hash). The blocks are
 * periodic while each is the one that ran a period before; when one is
 * not, the distance to its own last run is the period tried next. Once a
 * whole period has repeated, every further block of the loop is counted
 * as "loop", as well as in the mode's count. A loop's first two passes
 * therefore count as work: a wait that finds its message at the first or
 * second look costs nothing extra. Copy and checksum loops are loops too
 * (the kernel's figure is best taken whole); at 8 to 64 bytes the user
 * side of both tools has few others (Documentation/bench.rst).
 */
#define RING 512
#define MAXP 256
#define LAST 1024

struct loop {
	uint64_t ring[RING];	/* addresses of the last blocks, this mode */
	uint64_t seq;		/* blocks run in this mode */
	unsigned int period;	/* the loop's length in blocks, or 0 */
	unsigned int matched;	/* blocks that repeated at that distance */
	struct {
		uint64_t vaddr;
		uint64_t seq;
	} last[LAST];
};

/* One vCPU's counts: only its own thread writes them. */
struct vcpu_count {
	uint64_t win[2];	/* this window's, user and kernel */
	uint64_t loop[2];	/* the part of win[] in repeated passes */
	uint64_t all[2];	/* since QEMU started */
	uint64_t blocks;	/* blocks executed in the window */
	struct loop seen[2];
} __attribute__((aligned(64)));

/* What a translated block's callback is given. */
struct block {
	uint64_t vaddr;
	uint32_t n;		/* instructions */
	uint32_t mode;		/* USER or KERNEL */
};

/*
 * A block with profile=: what it ran in the open window, all vCPUs
 * together. Several vCPUs run the same block at once under MTTCG (the
 * kernel's, libc's, a program's that both ends of a ping-pong run from the
 * same page cache), so a plain += would lose counts: each update is a
 * relaxed atomic add, one locked instruction on the host, paid only with
 * profile=. Relaxed is enough: nothing is published through these counts,
 * the window's ends are ordered by `counting` alone, and a window's
 * reader takes them as they are at that moment, like the vCPUs' counts.
 * Counters per vCPU would avoid the lock, but multiply the size of every
 * translation by the vCPUs and make a reset race with their owner.
 */
struct pblock {
	struct block b;
	uint64_t all;		/* instructions run in the window */
	uint64_t loop;		/* the part of all in further loop passes */
};

/*
 * Blocks live in slabs that are never freed (block_new()); the profile
 * walks all of them at a window's start and stop, newest slab first.
 */
#define SLAB_BLOCKS 65536

struct slab {
	struct slab *next;
	size_t used;		/* blocks handed out */
	uint64_t mem[];		/* SLAB_BLOCKS blocks of block_size bytes */
};

static struct vcpu_count *counts;
static unsigned int nvcpus;
static int counting;		/* a window is open */
static unsigned int windows;	/* windows closed so far */
static int out_fd = -1;
static FILE *profile;		/* profile=, or NULL */
static size_t block_size = sizeof(struct block);
static struct slab *slabs;
static pthread_mutex_t slab_lock = PTHREAD_MUTEX_INITIALIZER;

/*
 * Is this run of @b a further pass of a loop (struct loop)? Inlined by
 * force (<sys/cdefs.h>), as is count_block(): the per-block callback
 * without profile= stays the one function it was before the profile.
 */
static __always_inline bool in_loop(struct loop *l, const struct block *b)
{
	unsigned int h = (b->vaddr ^ b->vaddr >> 10 ^ b->vaddr >> 20) % LAST;
	uint64_t d;

	if (l->period && l->ring[(l->seq - l->period) % RING] == b->vaddr) {
		l->matched++;
	} else {
		d = l->last[h].vaddr == b->vaddr ? l->seq - l->last[h].seq : 0;
		l->period = d <= MAXP ? d : 0;
		l->matched = 0;
	}
	l->last[h].vaddr = b->vaddr;
	l->last[h].seq = l->seq;
	l->ring[l->seq++ % RING] = b->vaddr;
	return l->period && l->matched >= l->period;
}

enum { NOT_COUNTED, WORK, LOOP };

/* Count one run of @b on @vcpu: NOT_COUNTED outside a window. */
static __always_inline int count_block(unsigned int vcpu, const struct block *b)
{
	struct vcpu_count *c;
	bool loop;

	if (vcpu >= nvcpus)
		return NOT_COUNTED;
	c = &counts[vcpu];
	c->all[b->mode] += b->n;
	loop = in_loop(&c->seen[b->mode], b);
	if (!__atomic_load_n(&counting, __ATOMIC_RELAXED))
		return NOT_COUNTED;
	c->win[b->mode] += b->n;
	if (loop)
		c->loop[b->mode] += b->n;
	c->blocks++;
	return loop ? LOOP : WORK;
}

static void block_exec(unsigned int vcpu, void *udata)
{
	count_block(vcpu, udata);
}

/* block_exec() with profile=: the block's own counts too. */
static void block_exec_profile(unsigned int vcpu, void *udata)
{
	struct pblock *p = udata;
	int how = count_block(vcpu, &p->b);

	if (how == NOT_COUNTED)
		return;
	__atomic_fetch_add(&p->all, p->b.n, __ATOMIC_RELAXED);
	if (how == LOOP)
		__atomic_fetch_add(&p->loop, p->b.n, __ATOMIC_RELAXED);
}

/*
 * Blocks are allocated in slabs and never freed: QEMU may run a block's
 * callback as long as the translation lives, and says nothing when it
 * goes. A retranslation takes a new one. vCPUs translate at the same time
 * (MTTCG), hence the lock, which also keeps the list of slabs whole for
 * the profile's walks (each_pblock()).
 */
static struct block *block_new(void)
{
	struct block *b = NULL;
	struct slab *s;

	pthread_mutex_lock(&slab_lock);
	if (!slabs || slabs->used == SLAB_BLOCKS) {
		s = calloc(1, sizeof(*s) + SLAB_BLOCKS * block_size);
		if (s) {
			s->next = slabs;
			slabs = s;
		}
	}
	if (slabs && slabs->used < SLAB_BLOCKS)
		b = (struct block *)((char *)slabs->mem +
				     slabs->used++ * block_size);
	pthread_mutex_unlock(&slab_lock);
	return b;
}

/*
 * Call @fn on every block translated so far, under the slabs' lock: a
 * block translated meanwhile waits, and is new, so at zero.
 */
static void each_pblock(void (*fn)(struct pblock *p, void *arg), void *arg)
{
	struct slab *s;
	size_t i;

	pthread_mutex_lock(&slab_lock);
	for (s = slabs; s; s = s->next)
		for (i = 0; i < s->used; i++)
			fn((struct pblock *)((char *)s->mem + i * block_size),
			   arg);
	pthread_mutex_unlock(&slab_lock);
}

static void pblock_reset(struct pblock *p, void *arg)
{
	__atomic_store_n(&p->all, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&p->loop, 0, __ATOMIC_RELAXED);
}

/* One line of the profile: a guest address's counts in the window. */
struct prow {
	uint64_t vaddr;
	uint64_t all;
	uint64_t loop;
};

struct prows {
	struct prow *row;
	size_t n;
	size_t max;
	bool short_of_memory;
};

static void pblock_take(struct pblock *p, void *arg)
{
	struct prows *r = arg;
	uint64_t all = __atomic_load_n(&p->all, __ATOMIC_RELAXED);
	struct prow *grown;

	if (!all)
		return;
	if (r->n == r->max) {
		grown = realloc(r->row, (r->max * 2 + 4096) * sizeof(*r->row));
		if (!grown) {
			r->short_of_memory = true;
			return;
		}
		r->row = grown;
		r->max = r->max * 2 + 4096;
	}
	r->row[r->n].vaddr = p->b.vaddr;
	r->row[r->n].all = all;
	r->row[r->n].loop = __atomic_load_n(&p->loop, __ATOMIC_RELAXED);
	r->n++;
}

static int prow_cmp(const void *a, const void *b)
{
	const struct prow *x = a, *y = b;

	return x->vaddr < y->vaddr ? -1 : x->vaddr > y->vaddr;
}

static void out_line(const char *s)
{
	size_t len = strlen(s);

	if (out_fd < 0 || write(out_fd, s, len) != (ssize_t)len)
		qemu_plugin_outs(s);
}

/* The window's counts, summed over the vCPUs. */
struct sums {
	uint64_t u, k, ul, kl, b;
};

static void window_sums(struct sums *t)
{
	unsigned int i;

	memset(t, 0, sizeof(*t));
	for (i = 0; i < nvcpus; i++) {
		t->u += counts[i].win[USER];
		t->k += counts[i].win[KERNEL];
		t->ul += counts[i].loop[USER];
		t->kl += counts[i].loop[KERNEL];
		t->b += counts[i].blocks;
	}
}

/*
 * {"window": N, "by": VCPU, "user": U, "kernel": K, "user_loop": UL,
 *  "kernel_loop": KL, "blocks": B, "vcpus": [{"user": U0, ...}, ...]}:
 * one line per window, the sums over the vCPUs and then each vCPU's.
 * UL and KL are the parts of U and K in further passes of loops. Another
 * vCPU may be in the middle of a block when the window closes: the counts
 * are those of the moment.
 */
static void write_window(unsigned int by)
{
	char line[256 + 64 * 64], *p = line, *end = line + sizeof(line);
	struct sums t;
	unsigned int i;

	window_sums(&t);
	p += snprintf(p, end - p, "{\"window\": %u, \"by\": %u, \"user\": %" PRIu64
		      ", \"kernel\": %" PRIu64 ", \"user_loop\": %" PRIu64
		      ", \"kernel_loop\": %" PRIu64 ", \"blocks\": %" PRIu64
		      ", \"vcpus\": [", ++windows, by, t.u, t.k, t.ul, t.kl, t.b);
	for (i = 0; i < nvcpus && end - p > 128; i++)
		p += snprintf(p, end - p, "%s{\"user\": %" PRIu64 ", \"kernel\": %" PRIu64
			      ", \"user_loop\": %" PRIu64 ", \"kernel_loop\": %" PRIu64 "}",
			      i ? ", " : "", counts[i].win[USER],
			      counts[i].win[KERNEL], counts[i].loop[USER],
			      counts[i].loop[KERNEL]);
	snprintf(p, end - p, "]}\n");
	out_line(line);
}

/*
 * The window's profile, appended to profile=: a header line
 *
 *   {"profile": N, "rows": R, "user": U, "kernel": K, "user_loop": UL,
 *    "kernel_loop": KL, "complete": true}
 *
 * (N and the counts as in the window's line of out=) and then R lines
 *
 *   VADDR MODE ALL LOOP
 *
 * one per guest address whose blocks ran in the window, by address: VADDR
 * in hex, MODE u or k (the counters' rule: the upper half is the
 * kernel's), ALL the instructions its blocks ran, LOOP the part of ALL in
 * further passes of loops. Blocks of one address (retranslations, or the
 * same address in two processes) are summed: telling them apart is the
 * reader's business, which knows what the guest ran. The rows' sums are
 * U, K, UL and KL but for blocks other vCPUs were in at the moment the
 * window closed; "complete" is false when memory ran short and rows are
 * missing.
 */
static void write_profile(unsigned int window)
{
	struct prows r = { 0 };
	struct sums t;
	size_t i, j;

	each_pblock(pblock_take, &r);
	qsort(r.row, r.n, sizeof(*r.row), prow_cmp);
	for (i = 0, j = 0; i < r.n; i++) {
		if (j && r.row[j - 1].vaddr == r.row[i].vaddr) {
			r.row[j - 1].all += r.row[i].all;
			r.row[j - 1].loop += r.row[i].loop;
		} else {
			r.row[j++] = r.row[i];
		}
	}
	window_sums(&t);
	fprintf(profile, "{\"profile\": %u, \"rows\": %zu, \"user\": %" PRIu64
		", \"kernel\": %" PRIu64 ", \"user_loop\": %" PRIu64
		", \"kernel_loop\": %" PRIu64 ", \"complete\": %s}\n",
		window, j, t.u, t.k, t.ul, t.kl,
		r.short_of_memory ? "false" : "true");
	for (i = 0; i < j; i++)
		fprintf(profile, "%" PRIx64 " %c %" PRIu64 " %" PRIu64 "\n",
			r.row[i].vaddr, r.row[i].vaddr >> 63 ? 'k' : 'u',
			r.row[i].all, r.row[i].loop);
	if (fflush(profile))
		qemu_plugin_outs("insncount: cannot write the profile\n");
	free(r.row);
}

static void mark_exec(unsigned int vcpu, void *udata)
{
	unsigned int i;

	if ((uintptr_t)udata == MARK_START) {
		__atomic_store_n(&counting, 0, __ATOMIC_SEQ_CST);
		for (i = 0; i < nvcpus; i++) {
			memset(counts[i].win, 0, sizeof(counts[i].win));
			memset(counts[i].loop, 0, sizeof(counts[i].loop));
			counts[i].blocks = 0;
		}
		if (profile)
			each_pblock(pblock_reset, NULL);
		__atomic_store_n(&counting, 1, __ATOMIC_SEQ_CST);
	} else {
		__atomic_store_n(&counting, 0, __ATOMIC_SEQ_CST);
		write_window(vcpu);
		if (profile)
			write_profile(windows);
	}
}

static int marker(struct qemu_plugin_insn *insn)
{
	const uint8_t *b = qemu_plugin_insn_data(insn);

	if (qemu_plugin_insn_size(insn) != 3 || b[0] != 0x66 || b[1] != 0x87)
		return 0;
	return b[2] == 0xc9 ? MARK_START : b[2] == 0xd2 ? MARK_STOP : 0;
}

static void block_trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	struct block *b = block_new();
	size_t n = qemu_plugin_tb_n_insns(tb), i;
	uint64_t vaddr = qemu_plugin_tb_vaddr(tb);
	uint32_t mode = vaddr >> 63 ? KERNEL : USER;
	int m;

	if (!b)
		return;
	b->vaddr = vaddr;
	b->n = n;
	b->mode = mode;
	qemu_plugin_register_vcpu_tb_exec_cb(tb, profile ? block_exec_profile :
					     block_exec,
					     QEMU_PLUGIN_CB_NO_REGS, b);
	/* A marker is a user program's, so only user blocks are searched. */
	for (i = 0; mode == USER && i < n; i++) {
		struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);

		m = marker(insn);
		if (m)
			qemu_plugin_register_vcpu_insn_exec_cb(insn, mark_exec,
					QEMU_PLUGIN_CB_NO_REGS,
					(void *)(uintptr_t)m);
	}
}

static void at_exit(qemu_plugin_id_t id, void *udata)
{
	char line[128];
	unsigned int i;

	for (i = 0; i < nvcpus; i++) {
		snprintf(line, sizeof(line),
			 "{\"total\": %u, \"user\": %" PRIu64 ", \"kernel\": %" PRIu64 "}\n",
			 i, counts[i].all[USER], counts[i].all[KERNEL]);
		out_line(line);
	}
	if (out_fd >= 0)
		close(out_fd);
	if (profile)
		fclose(profile);
}

EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info,
			       int argc, char **argv)
{
	int i;

	if (!info->system_emulation || strcmp(info->target_name, "x86_64")) {
		qemu_plugin_outs("insncount: x86_64 system emulation only\n");
		return -1;
	}
	for (i = 0; i < argc; i++) {
		if (!strncmp(argv[i], "out=", 4)) {
			out_fd = open(argv[i] + 4, O_WRONLY | O_CREAT | O_APPEND |
				      O_CLOEXEC, 0644);
			if (out_fd < 0) {
				perror(argv[i] + 4);
				return -1;
			}
		} else if (!strncmp(argv[i], "profile=", 8)) {
			profile = fopen(argv[i] + 8, "ae");
			if (!profile) {
				perror(argv[i] + 8);
				return -1;
			}
			/* A window's rows go out in large writes. */
			setvbuf(profile, NULL, _IOFBF, 1 << 20);
			block_size = sizeof(struct pblock);
		} else {
			fprintf(stderr, "insncount: unknown argument %s\n",
				argv[i]);
			return -1;
		}
	}
	nvcpus = info->system.max_vcpus;
	counts = aligned_alloc(64, nvcpus * sizeof(*counts));
	if (!counts)
		return -1;
	memset(counts, 0, nvcpus * sizeof(*counts));
	qemu_plugin_register_vcpu_tb_trans_cb(id, block_trans);
	qemu_plugin_register_atexit_cb(id, at_exit, NULL);
	return 0;
}
