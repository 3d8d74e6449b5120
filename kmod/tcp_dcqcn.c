// SPDX-License-Identifier: GPL-2.0
/*
 * DCQCN (kmod/law/dcqcn.h) as a TCP congestion-control module: its
 * notification point runs at the sender on the ECN-Echo ACKs (the
 * receiver echoes CE exactly), its reaction point paces; the window is a
 * cap only.
 */
#define CCLAB_LAW	dcqcn
#define CCLAB_LAW_USES_ECN
#include "cclab_cc.h"

DCQCN_PARAMS(CCLAB_TABLE_PARAM)

MODULE_DESCRIPTION("cclab DCQCN (ECN, rate-based) congestion control");
