/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * rmsg protocol core: the few types and helpers the core needs, so that the
 * same sources build into rmsg.ko and into host unit tests.
 *
 * The core includes nothing else: kernel headers in the kernel, libc headers
 * on the host. Only memcpy, memset and memcmp may be used from either.
 */
#ifndef _RMSG_CORE_TYPES_H
#define _RMSG_CORE_TYPES_H

#ifdef __KERNEL__

#include <linux/types.h>
#include <linux/string.h>
#include <linux/errno.h>
#include <linux/build_bug.h>
#include <asm/byteorder.h>
#include <asm/barrier.h>

/* Read a byte that a peer (by DMA) or another CPU may write. */
static inline u8 rmsg_load_acquire_u8(const u8 *p)
{
	/* Reads after this one see what landed before the flag byte. */
	return smp_load_acquire(p);
}

/* Write a byte that publishes what was written before it. */
static inline void rmsg_store_release_u8(u8 *p, u8 v)
{
	/* Pairs with rmsg_load_acquire_u8() in the reader. */
	smp_store_release(p, v);
}

#else /* !__KERNEL__ */

#include <stdint.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>
#include <errno.h>
#include <endian.h>
#include <assert.h>
/* __le16, __le32 and __u8 come from the UAPI's <linux/types.h>. */
#include <linux/types.h>

typedef uint8_t u8;
typedef uint16_t u16;
typedef uint32_t u32;
typedef uint64_t u64;
typedef int32_t s32;

#define le16_to_cpu(x)	((u16)le16toh((u16)(x)))
#define le32_to_cpu(x)	((u32)le32toh((u32)(x)))
#define cpu_to_le16(x)	((__le16)htole16((u16)(x)))
#define cpu_to_le32(x)	((__le32)htole32((u32)(x)))
#define le64_to_cpu(x)	((u64)le64toh((u64)(x)))
#define cpu_to_le64(x)	((__le64)htole64((u64)(x)))

static inline u8 rmsg_load_acquire_u8(const u8 *p)
{
	return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}

static inline void rmsg_store_release_u8(u8 *p, u8 v)
{
	__atomic_store_n(p, v, __ATOMIC_RELEASE);
}

#endif /* __KERNEL__ */

#endif /* _RMSG_CORE_TYPES_H */
