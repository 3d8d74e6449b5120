// SPDX-License-Identifier: GPL-2.0
/*
 * theta-PowerTCP (kmod/law/theta_powertcp.h) as a TCP congestion-control
 * module: PowerTCP's law from RTT samples alone, no INT needed.
 */
#define CCLAB_LAW	theta_powertcp
#define CCLAB_LAW_ID	CCLAB_LAW_THETA_POWERTCP
#define CCLAB_LAW_NAME	"theta_powertcp"
#include "cclab_cc.h"

CCLAB_PARAM(base_rtt_ns, base_rtt_ns, "base RTT tau in ns [1000, 1e9] (50000)");
CCLAB_PARAM(host_bw_mbps, host_bw_mbps, "host NIC rate HostBw in Mbit/s [1, 800000] (1000)");
CCLAB_PARAM(gamma_ppm, gamma_ppm, "EWMA weight gamma in ppm [1, 1000000] (900000)");
CCLAB_PARAM(beta_bytes, beta_bytes, "additive increase beta in bytes, 0 = HostBw*tau/N (0)");
CCLAB_PARAM(expected_flows, expected_flows, "expected flows N sharing the NIC [1, 100000] (100)");
CCLAB_PARAM(init_cwnd_bytes, init_cwnd_bytes, "initial window in bytes, 0 = HostBw*tau (0)");
CCLAB_PARAM(max_cwnd_bytes, max_cwnd_bytes, "window cap in bytes [65535, 2^30] (16 MiB)");

MODULE_DESCRIPTION("cclab theta-PowerTCP (RTT-based) congestion control");
