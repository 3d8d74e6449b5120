// SPDX-License-Identifier: GPL-2.0
/*
 * Swift (kmod/law/swift.h) as a TCP congestion-control module: delay-based,
 * from the kernel's RTT samples; the hop count for topology-based scaling
 * comes from the INT echo when there is one. Variable AI and Sampling
 * Frequency (kmod/law/vai.h) are parameters, off by default.
 */
#define CCLAB_LAW	swift
#include "cclab_cc.h"

SWIFT_PARAMS(CCLAB_TABLE_PARAM)

MODULE_DESCRIPTION("cclab Swift (delay-based) congestion control, with optional Variable AI / Sampling Frequency");
