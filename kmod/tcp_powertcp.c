// SPDX-License-Identifier: GPL-2.0
/*
 * PowerTCP (kmod/law/powertcp.h) as a TCP congestion-control module: the
 * window follows the normalised power of the path computed from the INT
 * echoes cclab_int.ko collects. Without echoes it holds its window.
 */
#define CCLAB_LAW	powertcp
#define CCLAB_LAW_ID	CCLAB_LAW_POWERTCP
#define CCLAB_LAW_NAME	"powertcp"
#include "cclab_cc.h"
#include "power_params.h"

CCLAB_POWER_PARAMS("window cap in bytes, 0 = HostBw*tau (line rate) [65535, 2^30] (0)");
CCLAB_PARAM(int_max_age_ns, int_max_age_ns, "INT echoes older than this (ns) are stale [1000, 1e9] (1000000)");

MODULE_DESCRIPTION("cclab PowerTCP (INT-based) congestion control");
