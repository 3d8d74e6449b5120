/* SPDX-License-Identifier: GPL-2.0 */
/*
 * PowerTCP (Addanki et al., NSDI 2022, powertcp.txt), Algorithm 1.
 * Per hop: current = dq/dt + txRate, voltage = qlen + B*tau, normalised
 * power = current * voltage / (B^2 * tau), saturated at LAW_SIGNAL_MAX_PPM
 * as a product (never a factor); the largest over hops is
 * smoothed over dt/tau and drives
 *	cwnd = gamma * (cwnd_old / power + beta) + (1 - gamma) * cwnd,
 * cwnd_old being the window in force when the acked data was sent
 * (remembered once per RTT). Pacing cwnd / tau, at most HostBw; the window
 * is capped by default at HostBw * tau (kmod/law/README.md says why).
 * Included by law.h.
 */
#ifndef CCLAB_LAW_POWERTCP_H
#define CCLAB_LAW_POWERTCP_H

struct powertcp_params {
	__u64 base_rtt_ns;	/* tau, base RTT */
	__u64 int_max_age_ns;	/* an older echo is stale: hold */
	__u32 host_bw_mbps;	/* HostBw, the NIC rate */
	__u32 gamma_ppm;	/* EWMA gamma (0.9) */
	__u32 beta_bytes;	/* additive increase; 0 = HostBw * tau / N */
	__u32 expected_flows;	/* N, flows expected to share the NIC */
	__u32 init_cwnd_bytes;	/* 0 = HostBw * tau */
	__u32 max_cwnd_bytes;	/* window cap; 0 = HostBw * tau (line rate) */
};

struct powertcp_state {
	struct int_prev prev;	/* prevInt */
	__u64 cwnd;		/* bytes */
	__u64 cwnd_old;		/* bytes: window when the acked data was sent */
	__u64 power_ppm;	/* Gamma_smooth, normalised power */
	__u64 beta;		/* bytes, effective additive increase */
	__u32 last_update_seq;	/* updateOld: snd_nxt when cwnd_old was taken */
	__u32 pad;
};

/*
 * The window cap in force: the replay's and the tests' bound. Its default
 * (law_table.h) is the line-rate window HostBw * tau (0), as the paper's
 * implementation bounds a flow: with a larger cap one low-power sample (an
 * idle gap between echoes: the signal floor allows 100x per update)
 * inflated the window without limit, compounding through cwnd_old every
 * RTT.
 */
LAW_INLINE __u64 powertcp_max_cwnd(const struct powertcp_params *p)
{
	return law_cwnd_cap(p->max_cwnd_bytes, p->host_bw_mbps,
			    law_clamp64(p->base_rtt_ns, 1000, LAW_RTT_MAX_NS));
}

LAW_INLINE int powertcp_params_check(const struct powertcp_params *p)
{
	POWERTCP_PARAMS(LAW_X_RANGE)
	return law_check_cap(p->init_cwnd_bytes, p->max_cwnd_bytes,
			     p->host_bw_mbps, p->base_rtt_ns);
}

LAW_INLINE void powertcp_init(struct powertcp_state *s,
			      const struct powertcp_params *p, __u32 snd_nxt,
			      __u32 mss, struct law_out *out)
{
	__builtin_memset(s, 0, sizeof(*s));
	if (!mss || mss > LAW_MSS_MAX)
		mss = LAW_MSS_DEFAULT;
	powertcp_start(&s->cwnd, &s->beta, &s->power_ppm, p->base_rtt_ns,
		       p->host_bw_mbps, p->expected_flows, p->init_cwnd_bytes,
		       p->beta_bytes);
	s->last_update_seq = snd_nxt;
	out->trace = LAW_TR_INIT;
	powertcp_output(&s->cwnd, p->base_rtt_ns, p->host_bw_mbps,
			law_cwnd_cap(p->max_cwnd_bytes, p->host_bw_mbps,
				     p->base_rtt_ns), mss,
			s->power_ppm, out);
	s->cwnd_old = s->cwnd;
}

/*
 * normPower(ack): the largest normalised power over the hops (ppm) and the
 * dt of that hop (ns); dt 0 when no hop has a usable pair.
 */
LAW_SUBPROG __u64 powertcp_norm_power(const struct int_prev *prev,
				      const struct int_echo *e,
				      __u64 tau_ns, __u64 *dt_out)
{
	__u64 norm = 0, best_dt = 0;
	int i;

	if (!prev || !e || !dt_out)
		return 0;

	for (i = 0; i < INT_MAX_HOPS && i < e->nhops; i++) {
		const struct int_hop *h = &e->hop[i], *o = &prev->hop[i];
		/* Bounds that keep every product below 2^64 without checks:
		 * dt < 2^26, dtx < 2^25, qlen < 2^32, rate <= 2^20 Mbit/s,
		 * tau < 2^30 so B*tau < 2^38. */
		__u64 dt_ns = int_ts_delta(h->ts, o->ts);
		__u64 dtx = int_tx_delta(h->tx_bytes, o->tx_bytes);
		__u64 rate = law_min64(h->rate_mbps, LAW_RATE_MAX_MBPS);
		__u64 b_Bps = law_mbps_to_Bps(rate);
		__u64 num = dtx + h->qlen;
		__u64 current_Bps, i_ppm, bdp, v_ppm, power;

		if (!dt_ns || !int_tx_plausible(dtx, dt_ns, rate))
			continue;
		b_Bps += !b_Bps;
		/* current = (qlen - qlen_prev + txBytes delta) / dt, >= 0 */
		num = num > o->qlen ? num - o->qlen : 0;
		current_Bps = law_min64(num * LAW_NSEC_PER_SEC / dt_ns, 1ULL << 40);
		/* current / B and voltage / (B * tau), each as ppm */
		i_ppm = law_min64(current_Bps * LAW_PPM / b_Bps, LAW_SIGNAL_MAX_PPM);
		if (LAW_LIKELY(!h->qlen)) {
			/* voltage = B * tau exactly: power = i_ppm, 3 divisions saved */
			power = i_ppm;
		} else {
			bdp = law_bdp_bytes(rate, tau_ns);
			bdp += !bdp;
			/* (qlen + bdp) < 2^39: v < 2^59, unclamped: the
			 * product saturates, not a factor (i < 1 with a
			 * queue of more than 1000 BDP) */
			v_ppm = (h->qlen + bdp) * LAW_PPM / bdp;
			if (i_ppm && v_ppm > LAW_SIGNAL_MAX_PPM * LAW_PPM / i_ppm)
				power = LAW_SIGNAL_MAX_PPM;
			else	/* i * v <= MAX * 1e6 = 1e15 */
				power = i_ppm * v_ppm / LAW_PPM;
		}
		if (power > norm || !best_dt) {
			norm = power;
			best_dt = dt_ns;
		}
	}
	*dt_out = best_dt;
	return norm;
}

LAW_INLINE void powertcp_on_ack(struct powertcp_state *s,
				const struct powertcp_params *p,
				const struct law_ack *ack, struct law_out *out)
{
	const struct int_echo *e = ack->echo;
	__u64 tau = law_clamp64(p->base_rtt_ns, 1000, LAW_RTT_MAX_NS);
	__u64 old = s->cwnd, dt = 0, norm;
	__u32 why;

	out->trace = 0;
	why = int_sig_check(&s->prev, e, ack->now_ns, p->int_max_age_ns);
	if (why) {
		/* No usable telemetry: hold the window. */
		out->trace |= why | LAW_TR_HOLD;
		if (int_sig_restart(why))
			int_prev_store(&s->prev, e);
	} else {
		norm = powertcp_norm_power(&s->prev, e, tau, &dt);
		int_prev_store(&s->prev, e);
		if (!dt) {
			out->trace |= LAW_TR_INT_BAD | LAW_TR_HOLD;
		} else {
			s->power_ppm = law_smooth(s->power_ppm, norm, dt, tau);
			s->cwnd = powertcp_update_window(s->cwnd, s->cwnd_old,
							 s->power_ppm, s->beta,
							 p->gamma_ppm);
		}
	}
	powertcp_ack_end(&s->cwnd, &s->cwnd_old, &s->last_update_seq, old,
			 s->power_ppm, tau, p->host_bw_mbps, p->max_cwnd_bytes,
			 ack, out);
}

#endif /* CCLAB_LAW_POWERTCP_H */
