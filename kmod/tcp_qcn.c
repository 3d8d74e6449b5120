// SPDX-License-Identifier: GPL-2.0
/*
 * QCN's reaction point (kmod/law/qcn.h) as a TCP congestion-control
 * module: the feedback of QCN congestion points rides the INT option and
 * comes back in the echoes cclab_int.ko collects; the rate is the pacing
 * rate (byte counter and timer increases), the window a cap only.
 */
#define CCLAB_LAW	qcn
#include "cclab_cc.h"

QCN_PARAMS(CCLAB_TABLE_PARAM)

MODULE_DESCRIPTION("cclab QCN (INT-carried QCN feedback, rate-based) congestion control");
