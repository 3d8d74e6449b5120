/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The module parameters PowerTCP and theta-PowerTCP share
 * (kmod/law/power_window.h), for a law whose parameters have these fields.
 * The window cap's default differs (PowerTCP: the line-rate window), so its
 * description is the argument:
 *
 *	CCLAB_POWER_PARAMS("window cap in bytes ... (16 MiB)");
 *
 * Include after cclab_cc.h (CCLAB_PARAM).
 */
#ifndef CCLAB_POWER_PARAMS_H
#define CCLAB_POWER_PARAMS_H

#define CCLAB_POWER_PARAMS(max_cwnd_desc)					\
	CCLAB_PARAM(base_rtt_ns, base_rtt_ns,					\
		    "base RTT tau in ns [1000, 1e9] (50000)");			\
	CCLAB_PARAM(host_bw_mbps, host_bw_mbps,					\
		    "host NIC rate HostBw in Mbit/s [1, 800000] (1000)");	\
	CCLAB_PARAM(gamma_ppm, gamma_ppm,					\
		    "EWMA weight gamma in ppm [1, 1000000] (900000)");		\
	CCLAB_PARAM(beta_bytes, beta_bytes,					\
		    "additive increase beta in bytes, 0 = HostBw*tau/N (0)");	\
	CCLAB_PARAM(expected_flows, expected_flows,				\
		    "expected flows N sharing the NIC [1, 100000] (100)");	\
	CCLAB_PARAM(init_cwnd_bytes, init_cwnd_bytes,				\
		    "initial window in bytes, 0 = HostBw*tau (0)");		\
	CCLAB_PARAM(max_cwnd_bytes, max_cwnd_bytes, max_cwnd_desc)

#endif /* CCLAB_POWER_PARAMS_H */
