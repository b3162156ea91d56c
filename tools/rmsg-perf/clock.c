// SPDX-License-Identifier: GPL-2.0
/*
 * rmsg-perf: the clock latency samples are taken with (see rmsg-perf.h).
 *
 * The test guest runs on the HPET (its TSC is declared unstable under
 * emulation), where every clock_gettime() is a system call that costs
 * microseconds: it would count in the syscall figure and inflate every
 * sample. The TSC itself is still a steady counter there, as on any
 * x86-64 CPU of the last decade (constant_tsc), so rmsg-perf reads it
 * directly when the kernel's clock source is not one the vDSO serves.
 * RMSG_PERF_CLOCK=tsc|monotonic forces a choice.
 *
 * Calls nothing else of rmsg-perf's.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "rmsg-perf.h"

static bool use_tsc;
static double ns_per_tick;
static uint64_t tsc_origin;

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

#if defined(__x86_64__) || defined(__i386__)
static inline uint64_t read_tsc(void)
{
	return __builtin_ia32_rdtsc();
}

/* Clock sources whose clock_gettime() the vDSO answers without a syscall. */
static bool vdso_clock(void)
{
	static const char * const fast[] = {
		"tsc", "kvm-clock", "hyperv_clocksource_tsc_page",
	};
	char name[64] = "";
	unsigned int i;
	FILE *f;

	f = fopen("/sys/devices/system/clocksource/clocksource0/current_clocksource",
		  "re");
	if (!f)
		return true;
	if (!fgets(name, sizeof(name), f))
		name[0] = '\0';
	fclose(f);
	name[strcspn(name, "\n")] = '\0';
	for (i = 0; i < ARRAY_SIZE(fast); i++)
		if (!strcmp(name, fast[i]))
			return true;
	return false;
}

/*
 * A TSC reading and a CLOCK_MONOTONIC reading taken at (nearly) the same
 * moment: the TSC is read on both sides of the slow clock and averaged.
 */
static void pair(uint64_t *tsc, uint64_t *ns)
{
	uint64_t a = read_tsc();

	*ns = mono_ns();
	*tsc = a + (read_tsc() - a) / 2;
}

static void calibrate(void)
{
	uint64_t t0, t1, n0, n1;

	pair(&t0, &n0);
	usleep(100000);
	pair(&t1, &n1);
	ns_per_tick = (double)(n1 - n0) / (double)(t1 - t0);
	tsc_origin = t0;
}
#else
static inline uint64_t read_tsc(void)
{
	return 0;
}

static bool vdso_clock(void)
{
	return true;
}

static void calibrate(void)
{
}
#endif

void clock_setup(void)
{
	const char *force = getenv("RMSG_PERF_CLOCK");

	if (force && !strcmp(force, "tsc"))
		use_tsc = true;
	else if (force && !strcmp(force, "monotonic"))
		use_tsc = false;
	else
		use_tsc = !vdso_clock();
#if !defined(__x86_64__) && !defined(__i386__)
	use_tsc = false;
#endif
	if (use_tsc)
		calibrate();
}

const char *clock_name(void)
{
	return use_tsc ? "tsc" : "monotonic";
}

uint64_t now_ns(void)
{
	if (use_tsc)
		return (uint64_t)((double)(read_tsc() - tsc_origin) *
				  ns_per_tick);
	return mono_ns();
}
