// SPDX-License-Identifier: GPL-2.0
/*
 * QCN-T (kmod/law/qcn.h): QCN's reaction point with the timer alone
 * driving the increases, as a TCP congestion-control module; feedback
 * from the INT echoes cclab_int.ko collects, rate-based.
 */
#define CCLAB_LAW	qcn_t
#include "cclab_cc.h"

QCN_T_PARAMS(CCLAB_TABLE_PARAM)

MODULE_DESCRIPTION("cclab QCN-T (QCN, timer-only increase, rate-based) congestion control");
