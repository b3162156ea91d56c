// SPDX-License-Identifier: GPL-2.0
/*
 * insncount: a QEMU TCG plugin that counts the guest instructions each vCPU
 * executes, in user mode and in kernel mode, between two markers the guest
 * sets (Documentation/bench.rst, "Instructions per message").
 *
 *   qemu-system-x86_64 -plugin build/qemu/libinsncount.so,out=FILE ...
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
 * error of less than one block per fault. The callback is the same whether or not a window is open, so the
 * plugin costs the same all through the run.
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

static struct vcpu_count *counts;
static unsigned int nvcpus;
static int counting;		/* a window is open */
static unsigned int windows;	/* windows closed so far */
static int out_fd = -1;

/* Is this run of @b a further pass of a loop (struct loop)? */
static bool in_loop(struct loop *l, const struct block *b)
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

static void block_exec(unsigned int vcpu, void *udata)
{
	const struct block *b = udata;
	struct vcpu_count *c;
	bool loop;

	if (vcpu >= nvcpus)
		return;
	c = &counts[vcpu];
	c->all[b->mode] += b->n;
	loop = in_loop(&c->seen[b->mode], b);
	if (__atomic_load_n(&counting, __ATOMIC_RELAXED)) {
		c->win[b->mode] += b->n;
		if (loop)
			c->loop[b->mode] += b->n;
		c->blocks++;
	}
}

/*
 * Blocks are allocated in slabs and never freed: QEMU may run a block's
 * callback as long as the translation lives, and says nothing when it
 * goes. A retranslation takes a new one. vCPUs translate at the same time
 * (MTTCG), hence the lock.
 */
static struct block *block_new(void)
{
	static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	static struct block *slab;
	static size_t left;
	struct block *b = NULL;

	pthread_mutex_lock(&lock);
	if (!left) {
		slab = calloc(65536, sizeof(*slab));
		left = slab ? 65536 : 0;
	}
	if (left) {
		left--;
		b = slab++;
	}
	pthread_mutex_unlock(&lock);
	return b;
}

static void out_line(const char *s)
{
	size_t len = strlen(s);

	if (out_fd < 0 || write(out_fd, s, len) != (ssize_t)len)
		qemu_plugin_outs(s);
}

/*
 * {"window": N, "by": VCPU, "user": U, "kernel": K, "user_loop": UL,
 *  "kernel_loop": KL, "blocks": B, "vcpus": [{"user": U0, ...}, ...]}:
 * one line per window, the sums over the vCPUs and then each vCPU's.
 * UL and KL are the parts of U and K in further passes of loops. Another vCPU may be in the middle of a
 * block when the window closes: the counts are those of the moment.
 */
static void write_window(unsigned int by)
{
	char line[256 + 64 * 64], *p = line, *end = line + sizeof(line);
	uint64_t u = 0, k = 0, ul = 0, kl = 0, b = 0;
	unsigned int i;

	for (i = 0; i < nvcpus; i++) {
		u += counts[i].win[USER];
		k += counts[i].win[KERNEL];
		ul += counts[i].loop[USER];
		kl += counts[i].loop[KERNEL];
		b += counts[i].blocks;
	}
	p += snprintf(p, end - p, "{\"window\": %u, \"by\": %u, \"user\": %" PRIu64
		      ", \"kernel\": %" PRIu64 ", \"user_loop\": %" PRIu64
		      ", \"kernel_loop\": %" PRIu64 ", \"blocks\": %" PRIu64
		      ", \"vcpus\": [", ++windows, by, u, k, ul, kl, b);
	for (i = 0; i < nvcpus && end - p > 128; i++)
		p += snprintf(p, end - p, "%s{\"user\": %" PRIu64 ", \"kernel\": %" PRIu64
			      ", \"user_loop\": %" PRIu64 ", \"kernel_loop\": %" PRIu64 "}",
			      i ? ", " : "", counts[i].win[USER],
			      counts[i].win[KERNEL], counts[i].loop[USER],
			      counts[i].loop[KERNEL]);
	snprintf(p, end - p, "]}\n");
	out_line(line);
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
		__atomic_store_n(&counting, 1, __ATOMIC_SEQ_CST);
	} else {
		__atomic_store_n(&counting, 0, __ATOMIC_SEQ_CST);
		write_window(vcpu);
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
	qemu_plugin_register_vcpu_tb_exec_cb(tb, block_exec,
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
