/* SPDX-License-Identifier: GPL-2.0 */
/*
 * theta-PowerTCP (powertcp.txt, section 3.5 and Appendix B, Algorithm 2):
 * PowerTCP's law from the RTT and its gradient, no switch support:
 *	normPower = (dRTT/dt + 1) * RTT / tau,
 * smoothed as in PowerTCP; the window is updated once per RTT
 * (ack.seq >= lastUpdated), cwnd_old remembered once per RTT. Pacing
 * cwnd / tau. Included by law.h.
 */
#ifndef CCLAB_LAW_THETA_POWERTCP_H
#define CCLAB_LAW_THETA_POWERTCP_H

#define THETA_RTT_MAX_NS	10000000000ULL	/* 10 s: larger samples clamp */

struct theta_powertcp_params {
	__u64 base_rtt_ns;	/* tau, base RTT */
	__u32 host_bw_mbps;	/* HostBw, the NIC rate */
	__u32 gamma_ppm;	/* EWMA gamma (0.9) */
	__u32 beta_bytes;	/* additive increase; 0 = HostBw * tau / N */
	__u32 expected_flows;	/* N */
	__u32 init_cwnd_bytes;	/* 0 = HostBw * tau */
	__u32 max_cwnd_bytes;	/* window cap; 0 = HostBw * tau (line rate) */
};

struct theta_powertcp_state {
	__u64 cwnd;		/* bytes */
	__u64 cwnd_old;		/* bytes: window when the acked data was sent */
	__u64 power_ppm;	/* Gamma_smooth */
	__u64 beta;		/* bytes */
	__u64 prev_rtt_ns;	/* prevRTT, 0 = none yet */
	__u64 prev_t_ns;	/* t_c^prev */
	__u32 last_updated;	/* lastUpdated: window updated once per RTT */
	__u32 last_update_seq;	/* updateOld */
};

/* The window cap in force: the replay's and the tests' bound. */
LAW_INLINE __u64 theta_powertcp_max_cwnd(const struct theta_powertcp_params *p)
{
	return law_cwnd_cap(p->max_cwnd_bytes, p->host_bw_mbps,
			    law_clamp64(p->base_rtt_ns, 1000, LAW_RTT_MAX_NS));
}

LAW_INLINE int theta_powertcp_params_check(const struct theta_powertcp_params *p)
{
	THETA_POWERTCP_PARAMS(LAW_X_RANGE)
	return law_check_cap(p->init_cwnd_bytes, p->max_cwnd_bytes,
			     p->host_bw_mbps, p->base_rtt_ns);
}

LAW_INLINE void theta_powertcp_init(struct theta_powertcp_state *s,
				    const struct theta_powertcp_params *p,
				    __u32 snd_nxt, __u32 mss,
				    struct law_out *out)
{
	__builtin_memset(s, 0, sizeof(*s));
	if (!mss || mss > LAW_MSS_MAX)
		mss = LAW_MSS_DEFAULT;
	powertcp_start(&s->cwnd, &s->beta, &s->power_ppm, p->base_rtt_ns,
		       p->host_bw_mbps, p->expected_flows, p->init_cwnd_bytes,
		       p->beta_bytes);
	s->last_updated = snd_nxt;
	s->last_update_seq = snd_nxt;
	out->trace = LAW_TR_INIT;
	powertcp_output(&s->cwnd, law_clamp64(p->base_rtt_ns, 1000, LAW_RTT_MAX_NS),
			p->host_bw_mbps, law_cwnd_cap(p->max_cwnd_bytes, p->host_bw_mbps,
				     p->base_rtt_ns), mss, s->power_ppm, out);
	s->cwnd_old = s->cwnd;
}

/*
 * normPower: (theta_dot + 1) * RTT / tau in ppm, where
 * theta_dot + 1 = (RTT - prevRTT + dt) / dt, floored at 0. The product is
 * saturated at LAW_SIGNAL_MAX_PPM, never a factor: a gradient above the
 * cap times an RTT below tau may still be below it.
 */
LAW_INLINE __u64 theta_norm_power(__u64 rtt_ns, __u64 prev_rtt_ns, __u64 dt_ns,
				  __u64 tau_ns)
{
	__u64 grad1_ppm, rtt = law_min64(rtt_ns, THETA_RTT_MAX_NS);

	if (rtt + dt_ns <= prev_rtt_ns)
		return 0;
	/* rtt + dt <= 2e10, dt >= 1: grad1 < 2^55 */
	grad1_ppm = (rtt + dt_ns - prev_rtt_ns) * LAW_PPM / dt_ns;
	/* grad1 <= 1e9 and rtt <= 1e10: the product fits in 64 bits */
	if (LAW_LIKELY(grad1_ppm <= LAW_SIGNAL_MAX_PPM))
		return law_min64(grad1_ppm * rtt / tau_ns, LAW_SIGNAL_MAX_PPM);
	/* MAX * tau <= 1e18; below it grad1 * rtt <= MAX * tau fits too */
	if (!rtt || grad1_ppm > LAW_SIGNAL_MAX_PPM * tau_ns / rtt)
		return rtt ? LAW_SIGNAL_MAX_PPM : 0;
	return law_min64(grad1_ppm * rtt / tau_ns, LAW_SIGNAL_MAX_PPM);
}

LAW_INLINE void theta_powertcp_on_ack(struct theta_powertcp_state *s,
				      const struct theta_powertcp_params *p,
				      const struct law_ack *ack,
				      struct law_out *out)
{
	__u64 tau = law_clamp64(p->base_rtt_ns, 1000, LAW_RTT_MAX_NS);
	__u64 rtt = law_min64((__u64)ack->rtt_us * LAW_NSEC_PER_USEC,
			      THETA_RTT_MAX_NS);
	__u64 old = s->cwnd, dt;

	out->trace = 0;
	if (!rtt) {
		out->trace |= LAW_TR_NO_RTT | LAW_TR_HOLD;
	} else if (!s->prev_rtt_ns) {
		/* First sample: nothing to differentiate yet. */
		out->trace |= LAW_TR_HOLD;
		s->prev_rtt_ns = rtt;
		s->prev_t_ns = ack->now_ns;
	} else {
		/*
		 * dt = 0 (two ACKs in one instant, or a clock that went
		 * back): Delta t = 0 leaves Gamma_smooth as it is (Alg. 2,
		 * line 21). prevRTT and t_prev are taken on every ACK (lines
		 * 12-13) and updateWindow runs on its per-RTT gate alike.
		 */
		if (ack->now_ns > s->prev_t_ns) {
			dt = law_min64(ack->now_ns - s->prev_t_ns,
				       THETA_RTT_MAX_NS);
			s->power_ppm = law_smooth(s->power_ppm,
						  theta_norm_power(rtt,
								   s->prev_rtt_ns,
								   dt, tau),
						  dt, tau);
		}
		s->prev_rtt_ns = rtt;
		s->prev_t_ns = ack->now_ns;
		/* updateWindow runs once per RTT. */
		if (!law_seq_after(s->last_updated, ack->snd_una)) {
			s->cwnd = powertcp_update_window(s->cwnd, s->cwnd_old,
							 s->power_ppm, s->beta,
							 p->gamma_ppm);
			s->last_updated = ack->snd_nxt;
		}
	}
	powertcp_ack_end(&s->cwnd, &s->cwnd_old, &s->last_update_seq, old,
			 s->power_ppm, tau, p->host_bw_mbps, p->max_cwnd_bytes,
			 ack, out);
}

#endif /* CCLAB_LAW_THETA_POWERTCP_H */
