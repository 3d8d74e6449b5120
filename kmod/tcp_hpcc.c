// SPDX-License-Identifier: GPL-2.0
/*
 * HPCC (kmod/law/hpcc.h) as a TCP congestion-control module: the window
 * follows the normalised inflight of the most loaded hop in the INT echoes
 * cclab_int.ko collects; Variable AI and Sampling Frequency (kmod/law/vai.h)
 * are parameters, off by default. Without echoes it holds its window.
 */
#define CCLAB_LAW	hpcc
#define CCLAB_LAW_ID	CCLAB_LAW_HPCC
#define CCLAB_LAW_NAME	"hpcc"
#include "cclab_cc.h"
#include "vai_params.h"

CCLAB_PARAM(base_rtt_ns, base_rtt_ns, "T, slightly above the largest base RTT, in ns [1000, 1e9] (50000)");
CCLAB_PARAM(int_max_age_ns, int_max_age_ns, "INT echoes older than this (ns) are stale [1000, 1e9] (1000000)");
CCLAB_PARAM(host_bw_mbps, host_bw_mbps, "host NIC rate B_NIC in Mbit/s [1, 800000] (1000)");
CCLAB_PARAM(eta_ppm, eta_ppm, "target utilisation eta in ppm [100000, 1000000] (950000)");
CCLAB_PARAM(max_stage, max_stage, "maxStage additive steps before a multiplicative one [0, 100] (5)");
CCLAB_PARAM(wai_bytes, wai_bytes, "additive increase W_AI in bytes, 0 = W_init*(1-eta)/N (0)");
CCLAB_PARAM(expected_flows, expected_flows, "expected flows N on a link [1, 100000] (100)");
CCLAB_PARAM(init_cwnd_bytes, init_cwnd_bytes, "initial window in bytes, 0 = B_NIC*T (0)");
CCLAB_PARAM(max_cwnd_bytes, max_cwnd_bytes, "window cap in bytes [65535, 2^30] (16 MiB)");
CCLAB_VAI_PARAMS("bytes of queue", "1024");

MODULE_DESCRIPTION("cclab HPCC (INT-based) congestion control, with optional Variable AI / Sampling Frequency");
