// SPDX-License-Identifier: GPL-2.0
/*
 * PowerTCP (kmod/law/powertcp.h) as a TCP congestion-control module: the
 * window follows the normalised power of the path computed from the INT
 * echoes cclab_int.ko collects. Without echoes it holds its window.
 */
#define CCLAB_LAW	powertcp
#include "cclab_cc.h"

POWERTCP_PARAMS(CCLAB_TABLE_PARAM)

MODULE_DESCRIPTION("cclab PowerTCP (INT-based) congestion control");
