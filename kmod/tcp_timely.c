// SPDX-License-Identifier: GPL-2.0
/*
 * TIMELY (kmod/law/timely.h) as a TCP congestion-control module:
 * rate-based on the RTT gradient from the kernel's RTT samples, updated
 * per completion event (seg_bytes acknowledged; 0: once per RTT); the
 * rate is the pacing rate, the window a cap only.
 */
#define CCLAB_LAW	timely
#include "cclab_cc.h"

TIMELY_PARAMS(CCLAB_TABLE_PARAM)

MODULE_DESCRIPTION("cclab TIMELY (RTT-gradient, rate-based) congestion control");
