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

/* One cache line per vCPU: each vCPU's thread writes only its own. */
struct vcpu_count {
	uint64_t win[2];	/* this window's, user and kernel */
	uint64_t all[2];	/* since QEMU started */
	uint64_t blocks;	/* blocks executed in the window */
	char pad[24];
} __attribute__((aligned(64)));

static struct vcpu_count *counts;
static unsigned int nvcpus;
static int counting;		/* a window is open */
static unsigned int windows;	/* windows closed so far */
static int out_fd = -1;

/* A block's userdata is its instruction count, shifted, and its mode. */
static void block_exec(unsigned int vcpu, void *udata)
{
	uintptr_t v = (uintptr_t)udata;
	struct vcpu_count *c;

	if (vcpu >= nvcpus)
		return;
	c = &counts[vcpu];
	c->all[v & 1] += v >> 1;
	if (__atomic_load_n(&counting, __ATOMIC_RELAXED)) {
		c->win[v & 1] += v >> 1;
		c->blocks++;
	}
}

static void out_line(const char *s)
{
	size_t len = strlen(s);

	if (out_fd < 0 || write(out_fd, s, len) != (ssize_t)len)
		qemu_plugin_outs(s);
}

/*
 * {"window": N, "by": VCPU, "user": U, "kernel": K, "blocks": B,
 *  "vcpus": [{"user": U0, "kernel": K0}, ...]}: one line per window,
 * U and K the sums over the vCPUs. Another vCPU may be in the middle of a
 * block when the window closes: the counts are those of the moment.
 */
static void write_window(unsigned int by)
{
	char line[256 + 64 * 64], *p = line, *end = line + sizeof(line);
	uint64_t u = 0, k = 0, b = 0;
	unsigned int i;

	for (i = 0; i < nvcpus; i++) {
		u += counts[i].win[USER];
		k += counts[i].win[KERNEL];
		b += counts[i].blocks;
	}
	p += snprintf(p, end - p, "{\"window\": %u, \"by\": %u, \"user\": %" PRIu64
		      ", \"kernel\": %" PRIu64 ", \"blocks\": %" PRIu64
		      ", \"vcpus\": [", ++windows, by, u, k, b);
	for (i = 0; i < nvcpus && end - p > 64; i++)
		p += snprintf(p, end - p, "%s{\"user\": %" PRIu64 ", \"kernel\": %" PRIu64 "}",
			      i ? ", " : "", counts[i].win[USER],
			      counts[i].win[KERNEL]);
	snprintf(p, end - p, "]}\n");
	out_line(line);
}

static void mark_exec(unsigned int vcpu, void *udata)
{
	unsigned int i;

	if ((uintptr_t)udata == MARK_START) {
		__atomic_store_n(&counting, 0, __ATOMIC_SEQ_CST);
		for (i = 0; i < nvcpus; i++) {
			counts[i].win[USER] = counts[i].win[KERNEL] = 0;
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
	size_t n = qemu_plugin_tb_n_insns(tb), i;
	uintptr_t mode = qemu_plugin_tb_vaddr(tb) >> 63 ? KERNEL : USER;
	int m;

	qemu_plugin_register_vcpu_tb_exec_cb(tb, block_exec,
					     QEMU_PLUGIN_CB_NO_REGS,
					     (void *)(n << 1 | mode));
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
