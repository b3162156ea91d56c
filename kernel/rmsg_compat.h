/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rmsg: every difference between the kernels rmsg builds for, in one
 * place. The module's .c files include this header and use the names it
 * defines; none of them tests a kernel version itself.
 *
 * Kernels built for and tested: Debian 12's 6.1 and 6.12 (README.md).
 * Each entry names the release that made the change, so an entry can go
 * once the oldest kernel supported has it.
 */
#ifndef _RMSG_COMPAT_H
#define _RMSG_COMPAT_H

#include <linux/version.h>
#include <linux/device.h>
#include <linux/mm.h>
#ifdef CONFIG_X86_64
#include <asm/cpufeature.h>
#endif

/*
 * The one test of the kernel's version (checkpatch's LINUX_VERSION_CODE
 * check is for in-tree code; make checkpatch lets this header alone pass
 * it). A change a stable series may have backported is probed instead.
 */
#define RMSG_KERNEL_AT_LEAST(major, minor)				\
	(KERNEL_VERSION(major, minor, 0) <= LINUX_VERSION_CODE)

/*
 * 6.12 moved the unaligned accessors from <asm/unaligned.h> to
 * <linux/unaligned.h>; which one exists is the test.
 */
#if __has_include("linux/unaligned.h")
#include <linux/unaligned.h>
#else
#include <asm/unaligned.h>
#endif

/*
 * 6.2 made a device type's devnode() take a const struct device: the
 * qualifier of rmsg's devnode() argument.
 */
#if RMSG_KERNEL_AT_LEAST(6, 2)
#define RMSG_DEVNODE_CONST const
#else
#define RMSG_DEVNODE_CONST
#endif

/* 6.4 dropped class_create()'s owner argument. */
#if RMSG_KERNEL_AT_LEAST(6, 4)
#define rmsg_class_create(name)	class_create(name)
#else
#define rmsg_class_create(name)	class_create(THIS_MODULE, name)
#endif

/*
 * 6.3 made vma->vm_flags read-only outside mm/ and gave drivers
 * vm_flags_set() and vm_flags_clear(), which also assert the mmap lock.
 * Called from ->mmap(), where that lock is held for writing.
 */
static inline void rmsg_vm_flags_mod(struct vm_area_struct *vma,
				     vm_flags_t set, vm_flags_t clear)
{
#if RMSG_KERNEL_AT_LEAST(6, 3)
	vm_flags_mod(vma, set, clear);
#else
	vma->vm_flags = (vma->vm_flags | set) & ~clear;
#endif
}

/*
 * 6.5 dropped pin_user_pages_remote()'s vmas argument, which rmsg never
 * used.
 */
static inline long rmsg_pin_user_pages_remote(struct mm_struct *mm,
					      unsigned long start,
					      unsigned long nr_pages,
					      unsigned int gup_flags,
					      struct page **pages,
					      int *locked)
{
#if RMSG_KERNEL_AT_LEAST(6, 5)
	return pin_user_pages_remote(mm, start, nr_pages, gup_flags, pages,
				     locked);
#else
	return pin_user_pages_remote(mm, start, nr_pages, gup_flags, pages,
				     NULL, locked);
#endif
}

/**
 * rmsg_memcpy_ascending() - does memcpy() write its destination in
 *	ascending address order on this kernel and CPU
 *
 * The software RDMA devices (rxe, siw) place a write's bytes with the
 * kernel's memcpy(), so a receive block on them may be polled for its
 * last byte (RMSG_DEV_F_ORDERED) only when memcpy() writes that byte
 * last. On x86-64, 6.1's memcpy() is "rep movsb" (or "rep movsq" and
 * "rep movsb") when the CPU has ERMS or REP_GOOD, ascending; 6.12's is
 * "rep movsb" only with FSRM, and otherwise memcpy_orig, which copies
 * backward when the destination's low address byte is below the
 * source's (arch/x86/lib/memcpy_64.S). Seen on 6.12 in the TCG guest,
 * whose CPU has no FSRM: received messages whose first bytes were not
 * yet written when their flag was. The release between that made the
 * change is not pinned down here, so from 6.2 on FSRM is asked for: a
 * wrong "no" only costs the write-with-immediate fallback. Other
 * architectures are taken to copy in order, as before, untested.
 *
 * Return: true if a software device's write lands in ascending order.
 */
static inline bool rmsg_memcpy_ascending(void)
{
#ifdef CONFIG_X86_64
#if RMSG_KERNEL_AT_LEAST(6, 2)
	return boot_cpu_has(X86_FEATURE_FSRM);
#else
	return boot_cpu_has(X86_FEATURE_ERMS) ||
	       boot_cpu_has(X86_FEATURE_REP_GOOD);
#endif
#else
	return true;
#endif
}

#endif /* _RMSG_COMPAT_H */
