/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The steps PowerTCP (Algorithm 1) and theta-PowerTCP (Algorithm 2) of
 * powertcp.txt share: they differ only in how they measure normalised
 * power (INT per hop, or the RTT gradient) and in how often the window is
 * updated. Shared here: the start values, the smoothing of power,
 * updateWindow, updateOld and the output (window cap, pacing cwnd / tau at
 * most HostBw). The window cap and its check serve HPCC too. Included by law.h.
 */
#ifndef CCLAB_LAW_POWER_WINDOW_H
#define CCLAB_LAW_POWER_WINDOW_H

/*
 * The window cap of PowerTCP, theta-PowerTCP and HPCC: max_cwnd_bytes, or
 * when 0 the line-rate window HostBw * tau (their reference
 * implementations cap the rate at the NIC's line rate).
 */
LAW_INLINE __u64 law_cwnd_cap(__u32 max_cwnd_bytes, __u32 host_bw_mbps,
			      __u64 base_rtt_ns)
{
	__u64 bdp;

	if (max_cwnd_bytes)
		return max_cwnd_bytes;
	bdp = law_bdp_bytes(law_min64(host_bw_mbps, LAW_RATE_MAX_MBPS),
			    law_min64(base_rtt_ns, LAW_RTT_MAX_NS));
	return law_clamp64(bdp, 1, LAW_CWND_CAP_MAX);
}

/*
 * The window cap's relations (PowerTCP, theta-PowerTCP, HPCC): the cap 0
 * (the line-rate window) or at least the largest segment, and the initial
 * window at most the cap. The ranges are law_table.h's.
 */
LAW_INLINE int law_check_cap(__u32 init_cwnd_bytes, __u32 max_cwnd_bytes,
			     __u32 host_bw_mbps, __u64 base_rtt_ns)
{
	if (max_cwnd_bytes && max_cwnd_bytes < LAW_MSS_MAX)
		return LAW_E_CWND_CAP;
	if (init_cwnd_bytes > law_cwnd_cap(max_cwnd_bytes, host_bw_mbps,
					   base_rtt_ns))
		return LAW_E_INIT_CWND;
	return LAW_OK;
}

/* HostBw * tau, at least one byte. */
LAW_INLINE __u64 powertcp_host_bdp(__u32 host_bw_mbps, __u64 base_rtt_ns)
{
	__u64 bdp = law_bdp_bytes(law_min64(host_bw_mbps, LAW_RATE_MAX_MBPS),
				  law_min64(base_rtt_ns, LAW_RTT_MAX_NS));

	return bdp ? bdp : 1;
}

/*
 * Fill out from the state: window clamp, pacing cwnd / tau but never above
 * HostBw. The paper's sender cannot exceed its NIC's line rate; here the
 * host's link (a veth) has no such limit, so the rate the law asks for is
 * bounded where the paper's NIC would bound it. Without this a window
 * inflated by a low-power sample (an idle gap, 100x at the signal floor)
 * was sent at Gbit/s and filled the bottleneck's whole buffer at once.
 */
LAW_INLINE void powertcp_output(__u64 *cwnd, __u64 base_rtt_ns,
				__u32 host_bw_mbps, __u64 cap, __u32 mss,
				__u64 power_ppm, struct law_out *out)
{
	__u64 line_Bps = law_mbps_to_Bps(law_clamp64(host_bw_mbps, 1,
						     LAW_RATE_MAX_MBPS));

	*cwnd = law_out_cwnd(out, *cwnd, mss, law_max64(cap, mss), mss);
	out->pacing_rate = law_min64(law_rate_Bps(*cwnd, base_rtt_ns), line_Bps);
	out->signal_ppm = power_ppm;
}

/* Gamma_smooth = (Gamma_smooth * (tau - dt) + Gamma_norm * dt) / tau */
LAW_INLINE __u64 law_smooth(__u64 smooth, __u64 sample, __u64 dt, __u64 tau)
{
	if (dt > tau)
		dt = tau;
	return (smooth * (tau - dt) + sample * dt) / tau;	/* tau >= 1000 */
}

/* updateWindow: gamma * (cwnd_old / power + beta) + (1 - gamma) * cwnd */
LAW_INLINE __u64 powertcp_update_window(__u64 cwnd, __u64 cwnd_old,
					__u64 power_ppm, __u64 beta,
					__u32 gamma_ppm)
{
	__u64 p = law_max64(power_ppm, LAW_SIGNAL_MIN_PPM);
	__u64 target = law_min64(cwnd_old, LAW_CWND_CAP_MAX) * LAW_PPM / p +
		       law_min64(beta, LAW_CWND_CAP_MAX);
	__u64 g = law_min64(gamma_ppm, LAW_PPM);

	cwnd = law_min64(cwnd, LAW_CWND_CAP_MAX);
	return (g * target + (LAW_PPM - g) * cwnd) / LAW_PPM;
}

/* updateOld(cwnd, ack.seq): remember the window once per RTT. */
LAW_INLINE void law_update_old(__u64 *cwnd_old, __u32 *last_update_seq,
			       __u64 cwnd, const struct law_ack *ack,
			       struct law_out *out)
{
	if (law_seq_after(ack->snd_una, *last_update_seq)) {
		*cwnd_old = cwnd;
		*last_update_seq = ack->snd_nxt;
		out->trace |= LAW_TR_RTT_UPDATE;
	}
}


/*
 * Both algorithms start alike: cwnd = HostBw * tau and beta = HostBw * tau
 * / N unless configured, power 1 (as if at equilibrium).
 */
LAW_INLINE void powertcp_start(__u64 *cwnd, __u64 *beta, __u64 *power_ppm,
			       __u64 base_rtt_ns, __u32 host_bw_mbps,
			       __u32 expected_flows, __u32 init_cwnd_bytes,
			       __u32 beta_bytes)
{
	__u64 bdp = powertcp_host_bdp(host_bw_mbps, base_rtt_ns);
	__u32 n = expected_flows ? expected_flows : 1;

	*cwnd = init_cwnd_bytes ? init_cwnd_bytes : bdp;
	*beta = beta_bytes ? beta_bytes : law_max64(bdp / n, 1);
	*power_ppm = LAW_PPM;
}

/*
 * Both algorithms end an ACK alike: the window capped and paced, whether
 * it moved from old traced, then updateOld.
 */
LAW_INLINE void powertcp_ack_end(__u64 *cwnd, __u64 *cwnd_old,
				 __u32 *last_update_seq, __u64 old,
				 __u64 power_ppm, __u64 tau,
				 __u32 host_bw_mbps, __u32 max_cwnd_bytes,
				 const struct law_ack *ack,
				 struct law_out *out)
{
	powertcp_output(cwnd, tau, host_bw_mbps,
			law_cwnd_cap(max_cwnd_bytes, host_bw_mbps, tau),
			law_mss(ack), power_ppm, out);
	if (*cwnd < old)
		out->trace |= LAW_TR_DECREASE;
	else if (*cwnd > old)
		out->trace |= LAW_TR_INCREASE;
	law_update_old(cwnd_old, last_update_seq, *cwnd, ack, out);
}

#endif /* CCLAB_LAW_POWER_WINDOW_H */
