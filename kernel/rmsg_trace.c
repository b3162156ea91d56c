// SPDX-License-Identifier: GPL-2.0
/*
 * rmsg: the tracepoints of rmsg_trace.h, defined once here. The module is
 * built out of tree, so define_trace.h finds the header by the
 * TRACE_INCLUDE_PATH it sets (".") and Kbuild's -I$(src) for this file.
 */
#define CREATE_TRACE_POINTS
#include "rmsg_trace.h"
