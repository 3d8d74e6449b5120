// SPDX-License-Identifier: GPL-2.0
/*
 * Swift (kmod/law/swift.h) as a TCP congestion-control module: delay-based,
 * from the kernel's RTT samples; the hop count for topology-based scaling
 * comes from the INT echo when there is one. Variable AI and Sampling
 * Frequency (kmod/law/vai.h) are parameters, off by default.
 */
#define CCLAB_LAW	swift
#define CCLAB_LAW_ID	CCLAB_LAW_SWIFT
#define CCLAB_LAW_NAME	"swift"
#include "cclab_cc.h"
#include "vai_params.h"

CCLAB_PARAM(base_rtt_ns, base_rtt_ns, "base RTT in ns (initial window HostBw*base_rtt) [1000, 1e9] (50000)");
CCLAB_PARAM(base_target_ns, base_target_ns, "base target delay in ns, above the base RTT [1000, 1e9] (55000)");
CCLAB_PARAM(per_hop_ns, per_hop_ns, "topology-based scaling: target added per hop, ns (2000)");
CCLAB_PARAM(fs_range_ns, fs_range_ns, "flow-based scaling range in ns, 0 = off (25000)");
CCLAB_PARAM(fs_min_cwnd_mppm, fs_min_cwnd_mppm, "flow-based scaling: window of full range, segments*1e6 (100000)");
CCLAB_PARAM(fs_max_cwnd_segs, fs_max_cwnd_segs, "flow-based scaling: window of no scaling, segments (100)");
CCLAB_PARAM(hops, hops, "hops assumed when an ACK has no INT echo (1)");
CCLAB_PARAM(host_bw_mbps, host_bw_mbps, "host NIC rate in Mbit/s [1, 800000] (1000)");
CCLAB_PARAM(ai_bytes, ai_bytes, "additive increase per RTT in bytes (1448)");
CCLAB_PARAM(beta_ppm, beta_ppm, "multiplicative decrease gain beta in ppm [1, 1000000] (800000)");
CCLAB_PARAM(max_mdf_ppm, max_mdf_ppm, "floor of the decrease factor in ppm [1, 999999] (500000)");
CCLAB_PARAM(min_cwnd_bytes, min_cwnd_bytes, "smallest (fractional) window in bytes (15)");
CCLAB_PARAM(init_cwnd_bytes, init_cwnd_bytes, "initial window in bytes, 0 = HostBw*base_rtt (0)");
CCLAB_PARAM(max_cwnd_bytes, max_cwnd_bytes, "window cap in bytes [65535, 2^30] (16 MiB)");
CCLAB_VAI_PARAMS("ns of delay", "30");

MODULE_DESCRIPTION("cclab Swift (delay-based) congestion control, with optional Variable AI / Sampling Frequency");
