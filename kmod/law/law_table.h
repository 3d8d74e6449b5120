/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The one table of the laws: each law's identity and each parameter's
 * name, unit, default, range and description. Everything else derives
 * from it: the <law>_params_default() functions, the range checks and
 * their messages (law.h), the module parameters and their help
 * (kmod/tcp_*.c), the ids in trace records (BPF and module), the Go
 * package (names, `cclab law params`) and the parameter tables of
 * kmod/law/README.md (TestREADMEParamTables). A new law is one LAW_TABLE
 * row, one <NAME>_PARAMS list and its law header.
 *
 * LAW_TABLE(X) calls X(id, name, NAME, signal, traits) per law: id the
 * number in trace records and the replay (1..LAW_ID_COUNT; 0 is none),
 * name the C prefix, the congestion-control name and the one spelling
 * every command accepts (its core is kmod/law/<name>.h), signal the name
 * of what law_out.signal_ppm carries (the signal_name column of
 * cc_trace.csv; kmod/law/README.md per law), traits what the builds and
 * the runs must give the law (LAW_T_*). kmod/law/lawgen writes the BPF
 * build's source, the module Kbuild and dkms.conf and the header list
 * from it; scripts/laws prints it for the shell scripts.
 *
 * <NAME>_PARAMS(P) calls P(NAME, member, name, unit, def, lo, hi, rel, desc)
 * per parameter: NAME the law's, member the field of struct <name>_params, name the parameter
 * name (an identifier: module parameters use it), unit its unit, def the
 * default, [lo, hi] the range every value must be in, rel 1 when another
 * parameter narrows the range further (desc says how; <law>_params_check
 * checks it), desc one line. Numbers are plain decimal literals: they are
 * stringified into messages and help texts.
 */
#ifndef CCLAB_LAW_TABLE_H
#define CCLAB_LAW_TABLE_H

/*
 * A law's traits, OR-ed in the table's last column. Plain decimal
 * numbers: scripts/laws and lawgen read them.
 */
#define LAW_T_INT	1	/* reads the INT echo (hop records or QCN feedback): a run stamps INT for its flows */
#define LAW_T_ECN	2	/* reads ECN marks: asks TCP for ECN, its receiver echoes CE exactly */
#define LAW_T_QCN	4	/* reacts to QCN feedback in the echo (with LAW_T_INT): needs a congestion point */
#define LAW_T_PRIV	8	/* its state fits the socket's private area: the BPF build keeps no socket storage */
#define LAW_T_HOPS	16	/* takes its path's hop count from the path table (cclab_path_hops) at init */
#define LAW_T_MODULE	32	/* has a kernel-module build, kmod/tcp_<name>.c */
#define LAW_T_UE	64	/* reads TCD's UE from the INT echo (LAW_ACK_UE) when its tcd parameter is 1: such a run stamps INT v1 */

#define LAW_TABLE(X)								\
	X(1, powertcp, POWERTCP, "norm_power", LAW_T_INT | LAW_T_MODULE)	\
	X(2, theta_powertcp, THETA_POWERTCP, "norm_power",			\
	  LAW_T_PRIV | LAW_T_MODULE)						\
	X(3, hpcc, HPCC, "U", LAW_T_INT | LAW_T_MODULE)				\
	X(4, swift, SWIFT, "delay", LAW_T_PRIV | LAW_T_HOPS | LAW_T_MODULE)	\
	X(5, dctcp, DCTCP, "alpha", LAW_T_ECN | LAW_T_PRIV)			\
	X(6, timely, TIMELY, "grad1", LAW_T_PRIV | LAW_T_MODULE | LAW_T_UE)	\
	X(7, dcqcn, DCQCN, "alpha",						\
	  LAW_T_ECN | LAW_T_PRIV | LAW_T_MODULE | LAW_T_UE)			\
	X(8, qcn, QCN, "fb", LAW_T_INT | LAW_T_QCN | LAW_T_PRIV | LAW_T_MODULE)	\
	X(9, qcn_t, QCN_T, "fb", LAW_T_INT | LAW_T_QCN | LAW_T_PRIV | LAW_T_MODULE)

/* The parameters PowerTCP and theta-PowerTCP share, the cap's default theirs. */
#define LAW_POWER_PARAMS(P, NAME, cap_def)						\
	P(NAME, base_rtt_ns, base_rtt_ns, "ns", 50000, 1000, 1000000000, 0,		\
	  "tau, the base RTT (serialisation included)")				\
	P(NAME, host_bw_mbps, host_bw_mbps, "Mbit/s", 1000, 1, 800000, 0,		\
	  "HostBw, the NIC rate")						\
	P(NAME, gamma_ppm, gamma_ppm, "ppm", 900000, 1, 1000000, 0,			\
	  "gamma, the EWMA weight of updateWindow (paper: 0.9)")		\
	P(NAME, beta_bytes, beta_bytes, "bytes", 0, 0, 1073741824, 0,			\
	  "beta, the additive increase; 0 = HostBw*tau/N")			\
	P(NAME, expected_flows, expected_flows, "flows", 100, 1, 100000, 0,		\
	  "N, flows expected to share the NIC")					\
	P(NAME, init_cwnd_bytes, init_cwnd_bytes, "bytes", 0, 0, 1073741824, 1,	\
	  "initial window, at most the cap; 0 = HostBw*tau")			\
	P(NAME, max_cwnd_bytes, max_cwnd_bytes, "bytes", cap_def, 0, 1073741824, 1,	\
	  "window cap, 0 or at least 65535; 0 = HostBw*tau, the line-rate window (the papers' NIC bound)")

#define LAW_INT_AGE_PARAM(P, NAME)							\
	P(NAME, int_max_age_ns, int_max_age_ns, "ns", 1000000, 1000, 1000000000, 0,	\
	  "an INT echo older than this is stale: the window holds")

/* Variable AI and Sampling Frequency (vai.h), in the law's unit of congestion. */
#define LAW_VAI_PARAMS(P, NAME, unit, ai_div_def)					\
	P(NAME, vai.enable, vai_enable, "0/1", 0, 0, 1, 0,				\
	  "Variable AI: 0 off, 1 on")						\
	P(NAME, vai.sf_acks, vai_sf_acks, "ACKs", 0, 0, 100000, 0,			\
	  "Sampling Frequency: a decrease point every N ACKs, 0 off (paper: 30)") \
	P(NAME, vai.token_thresh, vai_token_thresh, unit, 0, 0, 1099511627776, 0,	\
	  "VAI Token_Thresh; 0 = the law's automatic value")			\
	P(NAME, vai.ai_div, vai_ai_div, unit, ai_div_def, 1, 1000000000, 0,		\
	  "VAI AI_DIV: congestion per token")					\
	P(NAME, vai.bank_cap, vai_bank_cap, "tokens", 1000, 1, 1000000, 1,		\
	  "VAI Bank_Cap, at least vai_ai_cap")							\
	P(NAME, vai.ai_cap, vai_ai_cap, "tokens", 100, 1, 1000000, 1,			\
	  "VAI AI_Cap, tokens spent per adjustment at most, up to vai_bank_cap") \
	P(NAME, vai.dampener_const, vai_dampener_const, "1", 8, 1, 1000, 0,		\
	  "VAI Dampener_Constant")

#define POWERTCP_PARAMS(P)							\
	LAW_POWER_PARAMS(P, POWERTCP, 0)					\
	LAW_INT_AGE_PARAM(P, POWERTCP)

#define THETA_POWERTCP_PARAMS(P)						\
	LAW_POWER_PARAMS(P, THETA_POWERTCP, 16777216)

#define HPCC_PARAMS(P)								\
	P(HPCC, base_rtt_ns, base_rtt_ns, "ns", 50000, 1000, 1000000000, 0,		\
	  "T, slightly above the largest base RTT")				\
	P(HPCC, host_bw_mbps, host_bw_mbps, "Mbit/s", 1000, 1, 800000, 0,		\
	  "B_NIC, the NIC rate: W_init = B_NIC*T")				\
	P(HPCC, eta_ppm, eta_ppm, "ppm", 950000, 100000, 1000000, 0,			\
	  "eta, the target utilisation (paper: 95 %)")				\
	P(HPCC, max_stage, max_stage, "stages", 5, 0, 100, 0,				\
	  "maxStage, additive steps before a multiplicative one")		\
	P(HPCC, wai_bytes, wai_bytes, "bytes", 0, 0, 1073741824, 0,			\
	  "W_AI, the additive increase; 0 = W_init*(1-eta)/N")			\
	P(HPCC, expected_flows, expected_flows, "flows", 100, 1, 100000, 0,		\
	  "N, flows expected on a link")					\
	P(HPCC, init_cwnd_bytes, init_cwnd_bytes, "bytes", 0, 0, 1073741824, 1,	\
	  "initial window, at most the cap; 0 = W_init")			\
	P(HPCC, max_cwnd_bytes, max_cwnd_bytes, "bytes", 16777216, 0, 1073741824, 1, \
	  "window cap, 0 or at least 65535; 0 = B_NIC*T, the line-rate window") \
	LAW_INT_AGE_PARAM(P, HPCC)						\
	LAW_VAI_PARAMS(P, HPCC, "bytes of queue", 1024)

#define SWIFT_PARAMS(P)								\
	P(SWIFT, base_rtt_ns, base_rtt_ns, "ns", 50000, 1000, 1000000000, 0,		\
	  "base RTT: initial window HostBw*base_rtt, pacing before a sample")	\
	P(SWIFT, host_bw_mbps, host_bw_mbps, "Mbit/s", 1000, 1, 800000, 0,		\
	  "HostBw, the NIC rate")						\
	P(SWIFT, base_target_ns, base_target_ns, "ns", 55000, 1000, 1000000000, 0,	\
	  "base target delay: the whole RTT meets it, so above the base RTT (50 us + 5 us)")			\
	P(SWIFT, per_hop_ns, per_hop_ns, "ns", 2000, 0, 62500000, 0,			\
	  "topology-based scaling: target added per hop")			\
	P(SWIFT, hops, hops, "hops", 1, 0, 15, 0,					\
	  "hops when neither INT nor the path table gives the flow's")	\
	P(SWIFT, fs_range_ns, fs_range_ns, "ns", 25000, 0, 1000000000, 0,		\
	  "flow-based scaling range; 0 = off")					\
	P(SWIFT, fs_min_cwnd_mppm, fs_min_cwnd_mppm, "segments*1e6", 100000,	\
	  1000, 4294967295, 1,							\
	  "flow-based scaling: window given the whole range, below fs_max_cwnd_segs") \
	P(SWIFT, fs_max_cwnd_segs, fs_max_cwnd_segs, "segments", 100, 1, 100000, 0,	\
	  "flow-based scaling: window given no scaling (paper: 100; 50 on small topologies)")			\
	P(SWIFT, ai_bytes, ai_bytes, "bytes", 1448, 1, 16777216, 0,			\
	  "additive increase per RTT (paper: 50 Mbit/s at 100 Gbit/s = BDP/2000, derived by the calibration; default one MSS)") \
	P(SWIFT, beta_ppm, beta_ppm, "ppm", 800000, 1, 1000000, 0,			\
	  "beta, the multiplicative decrease gain (0.8)")			\
	P(SWIFT, max_mdf_ppm, max_mdf_ppm, "ppm", 500000, 1, 999999, 0,		\
	  "floor of the decrease factor (0.5)")					\
	P(SWIFT, min_cwnd_bytes, min_cwnd_bytes, "bytes", 15, 1, 1448, 0,		\
	  "smallest (fractional) window")					\
	P(SWIFT, init_cwnd_bytes, init_cwnd_bytes, "bytes", 0, 0, 1073741824, 1,	\
	  "initial window, at most max_cwnd_bytes; 0 = HostBw*base_rtt")	\
	P(SWIFT, max_cwnd_bytes, max_cwnd_bytes, "bytes", 16777216, 65535, 1073741824, 0, \
	  "window cap")								\
	P(SWIFT, pace_always, pace_always, "0/1", 0, 0, 1, 0,			\
	  "1 = pace every window at cwnd/base_rtt (at most HostBw), as the ns-3 RDMA NIC of the fast-convergence paper; 0 = pace only below one segment (the Swift paper)") \
	LAW_VAI_PARAMS(P, SWIFT, "ns of delay", 30)

#define DCTCP_PARAMS(P)								\
	P(DCTCP, g_shift, g_shift, "shift", 4, 0, 16, 0,				\
	  "g = 2^-g_shift, the EWMA gain of alpha (1/16)")			\
	P(DCTCP, alpha_init_ppm, alpha_init_ppm, "ppm", 1000000, 0, 1000000, 0,	\
	  "alpha before the first window")					\
	P(DCTCP, init_cwnd_segs, init_cwnd_segs, "segments", 10, 1, 16384, 1,		\
	  "initial window, at most max_cwnd_bytes/65535")			\
	P(DCTCP, max_cwnd_bytes, max_cwnd_bytes, "bytes", 16777216, 65535, 1073741824, 1, \
	  "window cap, at least init_cwnd_segs*65535")

#define LAW_RATE_LAW_PARAMS(P, NAME)							\
	P(NAME, host_bw_mbps, host_bw_mbps, "Mbit/s", 1000, 1, 800000, 0,		\
	  "the NIC rate: the ceiling, and the starting rate unless init_rate_kbps")			\
	P(NAME, min_rate_kbps, min_rate_kbps, "kbit/s", 0, 0, 800000000, 0,		\
	  "rate floor; 0 = HostBw/100 (HPCC's simulations: 1 Gbit/s at 100 Gbit/s)") \
	P(NAME, init_rate_kbps, init_rate_kbps, "kbit/s", 0, 0, 800000000, 0,	\
	  "the starting rate, within [floor, HostBw]; 0 = HostBw (the papers')") \
	P(NAME, max_cwnd_bytes, max_cwnd_bytes, "bytes", 16777216, 65535, 1073741824, 0, \
	  "the window, a cap only: the law is rate-based")

#define TIMELY_PARAMS(P)							\
	P(TIMELY, seg_bytes, seg_bytes, "bytes", 65536, 0, 1073741824, 0,		\
	  "a completion event per segment of this many bytes acked: the update clock (paper: 16-64 KB); 0 = once per RTT (the HPCC and PowerTCP simulators')") \
	P(TIMELY, min_rtt_ns, min_rtt_ns, "ns", 20000, 1000, 1000000000, 0,		\
	  "minRTT, the gradient's normaliser (paper: 20 us)")			\
	P(TIMELY, t_low_ns, t_low_ns, "ns", 50000, 1000, 1000000000, 1,		\
	  "T_low: below it, additive increase (paper: 50 us); below t_high_ns") \
	P(TIMELY, t_high_ns, t_high_ns, "ns", 500000, 1000, 1000000000, 1,		\
	  "T_high: above it, decrease by T_high/RTT (paper: 500 us)")		\
	P(TIMELY, alpha_ppm, alpha_ppm, "ppm", 875000, 1, 1000000, 0,		\
	  "alpha, the EWMA weight of the newest RTT difference (0.875)")	\
	P(TIMELY, beta_ppm, beta_ppm, "ppm", 800000, 1, 1600000, 0,			\
	  "beta, the multiplicative decrease (0.8; TIMELY+TCD: 1.6)")		\
	P(TIMELY, hai_n, hai_n, "completions", 5, 1, 1000, 0,			\
	  "N: after N completions with a negative gradient, hyper-active increase by N*delta (5)") \
	P(TIMELY, delta_kbps, delta_kbps, "kbit/s", 0, 0, 800000000, 0,		\
	  "delta, the additive step; 0 = HostBw/1000 (10 Mbit/s at 10 Gbit/s)") \
	P(TIMELY, tcd, tcd, "0/1", 0, 0, 1, 0,					\
	  "TCD: 1 = no rate cut on a UE-marked ACK with a positive gradient, T_low < RTT < T_high (the TCD fragment; with beta_ppm 1600000)") \
	LAW_RATE_LAW_PARAMS(P, TIMELY)

#define DCQCN_PARAMS(P)								\
	P(DCQCN, alpha_ns, alpha_ns, "ns", 55000, 1000, 1000000000, 0,		\
	  "K: alpha decays every K without a CNP (paper: 55 us)")		\
	P(DCQCN, cnp_ns, cnp_ns, "ns", 50000, 0, 1000000000, 0,			\
	  "N: a mark N or more after the last CNP is a CNP at once, one within N a CNP at that window's end (paper: 50 us)") \
	P(DCQCN, timer_ns, timer_ns, "ns", 55000, 1000, 1000000000, 0,		\
	  "T: the rate-increase timer (paper: 55 us)")				\
	P(DCQCN, byte_counter_bytes, byte_counter_bytes, "bytes", 10485760, 0,	\
	  1073741824, 0, "B: an increase event per B bytes acked, 0 off (paper: 10 MB)") \
	P(DCQCN, g_shift, g_shift, "shift", 8, 0, 16, 0,				\
	  "g = 2^-g_shift, the EWMA gain of alpha (1/256)")			\
	P(DCQCN, fast_recovery, fast_recovery, "events", 5, 0, 100, 0,		\
	  "F: increase events of fast recovery after a cut (5)")		\
	P(DCQCN, rai_kbps, rai_kbps, "kbit/s", 0, 0, 800000000, 0,			\
	  "R_AI, the additive step; 0 = HostBw/1000 (40 Mbit/s at 40 Gbit/s)")	\
	P(DCQCN, rhai_kbps, rhai_kbps, "kbit/s", 0, 0, 800000000, 0,		\
	  "R_HAI, the hyper step; 0 = 10*R_AI")					\
	P(DCQCN, tcd, tcd, "0/1", 0, 0, 1, 0,					\
	  "TCD: 1 = a UE-marked ACK without CE cuts gently, at most once per N: half a CNP's cut, alpha unchanged (cclab's reading of the TCD fragment)") \
	LAW_RATE_LAW_PARAMS(P, DCQCN)

/* QCN's and QCN-T's reaction point (qcn.h): the steps they share. */
#define LAW_QCN_STEP_PARAMS(P, NAME)							\
	P(NAME, gd_shift, gd_shift, "shift", 7, 6, 16, 0,				\
	  "Gd = 2^-gd_shift, the decrease per unit of Fb (1/128: Gd*63 ~ 0.5)")	\
	P(NAME, rai_kbps, rai_kbps, "kbit/s", 0, 0, 800000000, 0,			\
	  "R_AI, the active-increase step; 0 = HostBw/2000 (0.5 Mbit/s at 1 Gbit/s)") \
	P(NAME, rhai_kbps, rhai_kbps, "kbit/s", 0, 0, 800000000, 0,			\
	  "R_HAI, the hyper-active step; 0 = 10*R_AI")

#define QCN_PARAMS(P)								\
	P(QCN, byte_counter_bytes, byte_counter_bytes, "bytes", 150000, 0,		\
	  1073741824, 0,							\
	  "byte counter: an increase event per cycle of this many bytes acked, half after F cycles; 0 off (paper: 150 KB)") \
	P(QCN, timer_ns, timer_ns, "ns", 15000000, 1000, 1000000000, 0,		\
	  "timer: an increase event per cycle, half after F cycles (paper: 15 ms)") \
	P(QCN, fast_recovery, fast_recovery, "cycles", 5, 0, 100, 0,			\
	  "F: fast-recovery cycles of each counter after a decrease (5)")	\
	LAW_QCN_STEP_PARAMS(P, QCN)						\
	LAW_RATE_LAW_PARAMS(P, QCN)

#define QCN_T_PARAMS(P)								\
	P(QCN_T, timer_ns, timer_ns, "ns", 2400000, 1000, 1000000000, 0,		\
	  "t: the timer, the only increase clock (paper: 2.4 ms at 1 Gbit/s)")	\
	P(QCN_T, fast_recovery, fast_recovery, "cycles", 5, 0, 100, 0,		\
	  "F: fast-recovery cycles after a decrease (5)")			\
	P(QCN_T, hai_cycles, hai_cycles, "cycles", 0, 0, 1000000, 0,			\
	  "H: hyper-active increase after H cycles, at least F; 0 = 75 ms/t (31 at 2.4 ms)") \
	LAW_QCN_STEP_PARAMS(P, QCN_T)						\
	LAW_RATE_LAW_PARAMS(P, QCN_T)

/* enum law_id: LAW_ID_POWERTCP = 1, ... */
#define LAW_X_ENUM(id, name, NAME, signal, traits)	LAW_ID_##NAME = id,
enum law_id {
	LAW_ID_NONE = 0,
	LAW_TABLE(LAW_X_ENUM)
	LAW_ID_END
};
#define LAW_ID_COUNT	(LAW_ID_END - 1)

/* law_id_of_<name>: the id from the C prefix (glue that knows only the name). */
#define LAW_X_ID_OF(id, name, NAME, signal, traits)	law_id_of_##name = id,
enum law_id_of {
	LAW_TABLE(LAW_X_ID_OF)
};

/* law_traits_of_<name>: the traits from the C prefix. */
#define LAW_X_TRAITS_OF(id, name, NAME, signal, traits)	law_traits_of_##name = (traits),
enum law_traits_of {
	LAW_TABLE(LAW_X_TRAITS_OF)
};

/*
 * One error per parameter out of its range, LAW_E_<NAME>_<param>, after
 * the relational errors of law.h (enum law_err); its message from the
 * table. Used as X(...) of LAW_TABLE.
 */
#define LAW_X_ERR_ONE(NAME, member, name, unit, def, lo, hi, rel, desc)	\
	LAW_E_##NAME##_##name,
#define LAW_X_ERR(id, name, NAME, signal, traits)	NAME##_PARAMS(LAW_X_ERR_ONE)

#define LAW_X_MSG_ONE(NAME, member, name, unit, def, lo, hi, rel, desc)	\
	case LAW_E_##NAME##_##name:						\
		return #name " out of range [" #lo ", " #hi "]";
#define LAW_X_MSG(id, name, NAME, signal, traits)	NAME##_PARAMS(LAW_X_MSG_ONE)

/*
 * In <law>_params_default(p): every field its default (after zeroing the
 * struct, padding included).
 */
#define LAW_X_DEFAULT(NAME, member, name, unit, def, lo, hi, rel, desc)	\
	p->member = def;

/*
 * In <law>_params_check(p), first: every field within its range, the
 * error naming it. Then the law checks the relations (rel = 1).
 */
#define LAW_X_RANGE(NAME, member, name, unit, def, lo, hi, rel, desc)	\
	if (!law_in_range(p->member, lo, hi))				\
		return LAW_E_##NAME##_##name;

#endif /* CCLAB_LAW_TABLE_H */
