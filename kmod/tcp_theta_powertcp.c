// SPDX-License-Identifier: GPL-2.0
/*
 * theta-PowerTCP (kmod/law/theta_powertcp.h) as a TCP congestion-control
 * module: PowerTCP's law from RTT samples alone, no INT needed.
 */
#define CCLAB_LAW	theta_powertcp
#include "cclab_cc.h"

THETA_POWERTCP_PARAMS(CCLAB_TABLE_PARAM)

MODULE_DESCRIPTION("cclab theta-PowerTCP (RTT-based) congestion control");
