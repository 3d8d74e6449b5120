// SPDX-License-Identifier: GPL-2.0
/*
 * DCQCN's reaction point (kmod/law/dcqcn.h) as a TCP congestion-control
 * module: ECN-Echo ACKs are its congestion notifications, the rate is the
 * pacing rate, the window a cap only; the receiver echoes CE exactly.
 */
#define CCLAB_LAW	dcqcn
#define CCLAB_LAW_USES_ECN
#include "cclab_cc.h"

DCQCN_PARAMS(CCLAB_TABLE_PARAM)

MODULE_DESCRIPTION("cclab DCQCN (ECN, rate-based) congestion control");
