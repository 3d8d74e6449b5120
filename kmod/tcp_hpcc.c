// SPDX-License-Identifier: GPL-2.0
/*
 * HPCC (kmod/law/hpcc.h) as a TCP congestion-control module: the window
 * follows the normalised inflight of the most loaded hop in the INT echoes
 * cclab_int.ko collects; Variable AI and Sampling Frequency (kmod/law/vai.h)
 * are parameters, off by default. Without echoes it holds its window.
 */
#define CCLAB_LAW	hpcc
#include "cclab_cc.h"

HPCC_PARAMS(CCLAB_TABLE_PARAM)

MODULE_DESCRIPTION("cclab HPCC (INT-based) congestion control, with optional Variable AI / Sampling Frequency");
