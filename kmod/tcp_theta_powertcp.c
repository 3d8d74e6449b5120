// SPDX-License-Identifier: GPL-2.0
/*
 * theta-PowerTCP (kmod/law/theta_powertcp.h) as a TCP congestion-control
 * module: PowerTCP's law from RTT samples alone, no INT needed.
 */
#define CCLAB_LAW	theta_powertcp
#define CCLAB_LAW_ID	CCLAB_LAW_THETA_POWERTCP
#define CCLAB_LAW_NAME	"theta_powertcp"
#include "cclab_cc.h"
#include "power_params.h"

CCLAB_POWER_PARAMS("window cap in bytes, 0 = HostBw*tau [65535, 2^30] (16 MiB)");

MODULE_DESCRIPTION("cclab theta-PowerTCP (RTT-based) congestion control");
