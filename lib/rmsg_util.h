/* SPDX-License-Identifier: LGPL-2.1-or-later OR BSD-2-Clause */
/*
 * librmsg internal: small helpers the library shares with rmsg's own
 * tools (rmsg-perf, rmsgctl), which build with -Ilib. Not installed: it is
 * not part of the library's interface (lib/rmsg.h) nor of the ABI
 * (include/uapi/rdma/rmsg.h). Plain macros only, so that any file may
 * include it without pulling in the library's internals (rmsg_priv.h).
 * The selftests take kselftest.h's ARRAY_SIZE instead.
 */
#ifndef _RMSG_UTIL_H
#define _RMSG_UTIL_H

#ifndef ARRAY_SIZE
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#endif

#endif /* _RMSG_UTIL_H */
