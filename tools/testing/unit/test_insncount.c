// SPDX-License-Identifier: GPL-2.0
/*
 * Host unit tests for the insncount QEMU plugin (tools/testing/insn/):
 * the plugin is built into this test with a stand-in for the few calls of
 * QEMU's plugin API it makes, and two threads play two vCPUs running the
 * same translated blocks at once, as MTTCG does. Checked: the window's
 * line, and with profile= the rows of the window's profile (merged by
 * address, summing to the window's counts, reset at the next start).
 */
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include "kselftest_harness.h"

#include "../insn/insncount.c"

/* --- the stand-in for QEMU ----------------------------------------------- */

struct qemu_plugin_insn {
	uint8_t data[3];
	size_t size;
	qemu_plugin_vcpu_udata_cb_t cb;
	void *udata;
};

struct qemu_plugin_tb {
	uint64_t vaddr;
	size_t n;
	struct qemu_plugin_insn insn[4];
	qemu_plugin_vcpu_udata_cb_t cb;
	void *udata;
};

static qemu_plugin_vcpu_tb_trans_cb_t trans_cb;
static qemu_plugin_udata_cb_t exit_cb;

void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t id,
					   qemu_plugin_vcpu_tb_trans_cb_t cb)
{
	trans_cb = cb;
}

void qemu_plugin_register_vcpu_tb_exec_cb(struct qemu_plugin_tb *tb,
					  qemu_plugin_vcpu_udata_cb_t cb,
					  enum qemu_plugin_cb_flags flags,
					  void *userdata)
{
	tb->cb = cb;
	tb->udata = userdata;
}

void qemu_plugin_register_vcpu_insn_exec_cb(struct qemu_plugin_insn *insn,
					    qemu_plugin_vcpu_udata_cb_t cb,
					    enum qemu_plugin_cb_flags flags,
					    void *userdata)
{
	insn->cb = cb;
	insn->udata = userdata;
}

void qemu_plugin_register_atexit_cb(qemu_plugin_id_t id,
				    qemu_plugin_udata_cb_t cb, void *userdata)
{
	exit_cb = cb;
}

size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *tb)
{
	return tb->n;
}

uint64_t qemu_plugin_tb_vaddr(const struct qemu_plugin_tb *tb)
{
	return tb->vaddr;
}

struct qemu_plugin_insn *qemu_plugin_tb_get_insn(const struct qemu_plugin_tb *tb,
						 size_t idx)
{
	return (struct qemu_plugin_insn *)&tb->insn[idx < 4 ? idx : 3];
}

const void *qemu_plugin_insn_data(const struct qemu_plugin_insn *insn)
{
	return insn->data;
}

size_t qemu_plugin_insn_size(const struct qemu_plugin_insn *insn)
{
	return insn->size;
}

void qemu_plugin_outs(const char *string)
{
	fputs(string, stderr);
}

/* A translated block of @n instructions at @vaddr (marker: 0, 0xc9, 0xd2). */
static struct qemu_plugin_tb *translate(uint64_t vaddr, size_t n, int marker)
{
	struct qemu_plugin_tb *tb = calloc(1, sizeof(*tb));
	size_t i;

	tb->vaddr = vaddr;
	tb->n = n;
	for (i = 0; i < 4; i++) {
		/* A 2-byte nop: no marker. */
		tb->insn[i].data[0] = 0x66;
		tb->insn[i].data[1] = 0x90;
		tb->insn[i].size = 2;
	}
	if (marker) {
		tb->insn[0].data[1] = 0x87;
		tb->insn[0].data[2] = marker;
		tb->insn[0].size = 3;
	}
	trans_cb(1, tb);
	return tb;
}

/* Run @tb on @vcpu: the block's callback, then its instructions'. */
static void run(struct qemu_plugin_tb *tb, unsigned int vcpu)
{
	size_t i;

	tb->cb(vcpu, tb->udata);
	for (i = 0; i < tb->n && i < 4; i++)
		if (tb->insn[i].cb)
			tb->insn[i].cb(vcpu, tb->insn[i].udata);
}

static int install(const char *out, const char *prof)
{
	qemu_info_t info = { .target_name = "x86_64",
			     .system_emulation = true };
	char a[300], b[300];
	char *argv[2];

	info.system.smp_vcpus = 2;
	info.system.max_vcpus = 2;
	snprintf(a, sizeof(a), "out=%s", out);
	snprintf(b, sizeof(b), "profile=%s", prof ? prof : "");
	argv[0] = a;
	argv[1] = b;
	return qemu_plugin_install(1, &info, prof ? 2 : 1, argv);
}

#define USER_A	0x555555555040ULL
#define USER_B	0x7ffff7e01230ULL
#define KERN	0xffffffff81001000ULL
#define RUNS	20000

struct vcpu_arg {
	unsigned int vcpu;
	struct qemu_plugin_tb *a, *a2, *b, *k;
};

/* One vCPU: the program's block, a system call's kernel block, a libc one. */
static void *vcpu_thread(void *p)
{
	struct vcpu_arg *v = p;
	int i;

	for (i = 0; i < RUNS; i++) {
		/* The retranslation of A runs on vCPU 1 only, a tenth. */
		run(v->vcpu && i % 10 == 0 ? v->a2 : v->a, v->vcpu);
		run(v->k, v->vcpu);
		if (i % 4 == 0)
			run(v->b, v->vcpu);
	}
	return NULL;
}

struct row {
	uint64_t vaddr;
	char mode;
	uint64_t all, loop;
};

/* The number after "KEY": in a JSON line of the plugin's, or -1. */
static int64_t field(const char *line, const char *key)
{
	char quoted[64];
	const char *p;

	snprintf(quoted, sizeof(quoted), "\"%s\": ", key);
	p = strstr(line, quoted);
	return p ? (int64_t)strtoull(p + strlen(quoted), NULL, 10) : -1;
}

/*
 * The profile's rows of window @window, from @path, and the window's
 * counts from its header (user, kernel, user_loop, kernel_loop): the
 * number of rows, negative when the header's is not that.
 */
static int read_profile(const char *path, int window, struct row *rows,
			int max, int64_t sums[4])
{
	static const char * const keys[] = {
		"user", "kernel", "user_loop", "kernel_loop"
	};
	char line[512];
	int n = -1, nrows = -1, i;
	FILE *f = fopen(path, "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (line[0] == '{') {
			if (field(line, "profile") != window ||
			    !strstr(line, "\"complete\": true")) {
				n = -1;
				continue;
			}
			nrows = field(line, "rows");
			for (i = 0; i < 4; i++)
				sums[i] = field(line, keys[i]);
			n = 0;
			continue;
		}
		if (n < 0 || n >= max)
			continue;
		if (sscanf(line, "%" SCNx64 " %c %" SCNu64 " %" SCNu64,
			   &rows[n].vaddr, &rows[n].mode, &rows[n].all,
			   &rows[n].loop) == 4)
			n++;
	}
	fclose(f);
	return n == nrows ? n : -2;
}

static void temp_paths(char *out, char *prof, size_t len)
{
	int fd;

	snprintf(out, len, "/tmp/insncount-out.XXXXXX");
	fd = mkstemp(out);
	if (fd >= 0)
		close(fd);
	snprintf(prof, len, "/tmp/insncount-profile.XXXXXX");
	fd = mkstemp(prof);
	if (fd >= 0)
		close(fd);
}

TEST(profile_of_two_vcpus)
{
	char out[64], prof[64];
	struct qemu_plugin_tb *start, *stop;
	struct vcpu_arg v[2];
	pthread_t t[2];
	struct row rows[16];
	int64_t sums[4], got[4] = { 0 };
	int n, i;

	temp_paths(out, prof, sizeof(out));
	ASSERT_EQ(0, install(out, prof));
	start = translate(0x555555556000ULL, 1, 0xc9);
	stop = translate(0x555555556010ULL, 2, 0xd2);
	/* Both vCPUs run the same translations, as QEMU's are shared. */
	v[0].vcpu = 0;
	v[0].a = translate(USER_A, 5, 0);
	v[0].a2 = translate(USER_A, 5, 0);
	v[0].b = translate(USER_B, 3, 0);
	v[0].k = translate(KERN, 7, 0);
	v[1] = v[0];
	v[1].vcpu = 1;
	/* Before the window: counted nowhere. */
	run(v[0].a, 0);
	run(start, 0);
	for (i = 0; i < 2; i++)
		ASSERT_EQ(0, pthread_create(&t[i], NULL, vcpu_thread, &v[i]));
	for (i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	run(stop, 1);

	n = read_profile(prof, 1, rows, 16, sums);
	ASSERT_EQ(4, n);
	/* By address; the blocks of one address merged. */
	EXPECT_EQ(USER_A, rows[0].vaddr);
	EXPECT_EQ('u', rows[0].mode);
	EXPECT_EQ(2ULL * RUNS * 5, rows[0].all);
	/* The stop marker's block runs before its marker. */
	EXPECT_EQ(0x555555556010ULL, rows[1].vaddr);
	EXPECT_EQ(2ULL, rows[1].all);
	EXPECT_EQ(USER_B, rows[2].vaddr);
	EXPECT_EQ(2ULL * (RUNS / 4) * 3, rows[2].all);
	EXPECT_EQ(KERN, rows[3].vaddr);
	EXPECT_EQ('k', rows[3].mode);
	EXPECT_EQ(2ULL * RUNS * 7, rows[3].all);
	/* A kernel block run over and over: all but two passes a loop's. */
	EXPECT_EQ(2ULL * (RUNS - 2) * 7, rows[3].loop);
	for (i = 0; i < n; i++) {
		got[rows[i].mode == 'k'] += rows[i].all;
		got[2 + (rows[i].mode == 'k')] += rows[i].loop;
	}
	/* The rows add up to the window's counts. */
	for (i = 0; i < 4; i++)
		EXPECT_EQ(sums[i], got[i]);
	EXPECT_EQ(2LL * RUNS * 5 + 2 + 2 * (RUNS / 4) * 3, sums[0]);

	/* The next window starts from zero. */
	run(start, 1);
	run(v[0].k, 0);
	run(stop, 0);
	n = read_profile(prof, 2, rows, 16, sums);
	ASSERT_EQ(2, n);
	EXPECT_EQ(0x555555556010ULL, rows[0].vaddr);
	EXPECT_EQ(KERN, rows[1].vaddr);
	EXPECT_EQ(7ULL, rows[1].all);
	EXPECT_EQ(7LL, sums[1]);
	exit_cb(1, NULL);
	unlink(out);
	unlink(prof);
}

TEST(no_profile)
{
	char out[64], prof[64], line[1024] = "";
	struct qemu_plugin_tb *start, *stop, *a;
	FILE *f;
	int i;

	temp_paths(out, prof, sizeof(out));
	ASSERT_EQ(0, install(out, NULL));
	start = translate(0x555555556000ULL, 1, 0xc9);
	stop = translate(0x555555556010ULL, 2, 0xd2);
	a = translate(USER_A, 5, 0);
	/* The block callback without profile= is the plain one. */
	EXPECT_TRUE(a->cb == block_exec);
	run(start, 0);
	for (i = 0; i < 10; i++)
		run(a, 1);
	run(stop, 0);
	f = fopen(out, "r");
	ASSERT_NE(NULL, f);
	ASSERT_NE(NULL, fgets(line, sizeof(line), f));
	fclose(f);
	EXPECT_EQ(1, field(line, "window"));
	/* Ten runs of five, and the stop marker's block of two. */
	EXPECT_EQ(52, field(line, "user"));
	EXPECT_EQ(0, field(line, "kernel"));
	/* All but the first two runs of five. */
	EXPECT_EQ(40, field(line, "user_loop"));
	exit_cb(1, NULL);
	unlink(out);
	unlink(prof);
}

TEST_HARNESS_MAIN
