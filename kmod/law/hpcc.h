/* SPDX-License-Identifier: GPL-2.0 */
/*
 * HPCC (Li et al., SIGCOMM 2019, hpcc.txt), Algorithm 1, window-based:
 *	MeasureInflight: per hop txRate = dtxBytes / dts,
 *	  u = min(qlen, qlen_prev) / (B * T) + txRate / B; the largest u,
 *	  U = (1 - tau/T) * U + tau/T * u with tau = min(dts of that hop, T);
 *	ComputeWind: if U >= eta or incStage >= maxStage:
 *	  W = Wc / (U / eta) + W_AI (MI/MD), else W = Wc + W_AI (AI);
 *	  Wc = W (and incStage) only once per RTT (ack.seq > lastUpdateSeq).
 * Pacing W / T. Optional Variable AI and Sampling Frequency (vai.h): the
 * measured congestion is the largest queue on the path (bytes).
 * Included by law.h.
 */
#ifndef CCLAB_LAW_HPCC_H
#define CCLAB_LAW_HPCC_H

struct hpcc_params {
	__u64 base_rtt_ns;	/* T, slightly above the largest base RTT */
	__u64 int_max_age_ns;	/* an older echo is stale: hold */
	__u32 host_bw_mbps;	/* B_NIC: W_init = B_NIC * T */
	__u32 eta_ppm;		/* target utilisation eta (0.95) */
	__u32 max_stage;	/* maxStage (5) */
	__u32 wai_bytes;	/* W_AI; 0 = W_init * (1 - eta) / N */
	__u32 expected_flows;	/* N, concurrent flows expected on a link */
	__u32 init_cwnd_bytes;	/* 0 = W_init */
	__u32 max_cwnd_bytes;	/* window cap; 0 = B_NIC * T (line rate) */
	__u32 pad;
	struct vai_params vai;	/* bytes of queue: token_thresh 0 = W_init */
};

struct hpcc_state {
	struct int_prev prev;	/* L: link feedback at the last update */
	struct vai_state vai;
	__u64 w;		/* W, bytes */
	__u64 wc;		/* W^c, reference window, bytes */
	__u64 u_ppm;		/* U, normalised inflight */
	__u64 wai;		/* W_AI in force, bytes */
	__u32 inc_stage;	/* incStage */
	__u32 last_update_seq;	/* lastUpdateSeq */
};

/* The window cap in force: the replay's and the tests' bound. */
LAW_INLINE __u64 hpcc_max_cwnd(const struct hpcc_params *p)
{
	return law_cwnd_cap(p->max_cwnd_bytes, p->host_bw_mbps,
			    law_clamp64(p->base_rtt_ns, 1000, LAW_RTT_MAX_NS));
}

LAW_INLINE int hpcc_params_check(const struct hpcc_params *p)
{
	int err;

	HPCC_PARAMS(LAW_X_RANGE)
	err = law_check_cap(p->init_cwnd_bytes, p->max_cwnd_bytes,
			    p->host_bw_mbps, p->base_rtt_ns);
	return err ? err : vai_params_check(&p->vai);
}

LAW_INLINE void hpcc_output(struct hpcc_state *s, const struct hpcc_params *p,
			    __u32 mss, struct law_out *out)
{
	__u64 T = law_clamp64(p->base_rtt_ns, 1000, LAW_RTT_MAX_NS);

	s->w = law_out_cwnd(out, s->w, mss,
			    law_max64(law_cwnd_cap(p->max_cwnd_bytes,
						   p->host_bw_mbps, T), mss),
			    mss);
	out->pacing_rate = law_rate_Bps(s->w, T);	/* R = W / T */
	out->signal_ppm = s->u_ppm;
}

LAW_INLINE void hpcc_init(struct hpcc_state *s, const struct hpcc_params *p,
			  __u32 snd_nxt, __u32 mss, struct law_out *out)
{
	__u64 winit = powertcp_host_bdp(p->host_bw_mbps, p->base_rtt_ns);
	__u64 n = p->expected_flows ? p->expected_flows : 1;
	__u64 eta = law_min64(p->eta_ppm, LAW_PPM);

	__builtin_memset(s, 0, sizeof(*s));
	if (!mss || mss > LAW_MSS_MAX)
		mss = LAW_MSS_DEFAULT;
	s->w = p->init_cwnd_bytes ? p->init_cwnd_bytes : winit;
	s->wai = p->wai_bytes ? p->wai_bytes :
		 law_max64(winit * (LAW_PPM - eta) / LAW_PPM / n, 1);
	s->last_update_seq = snd_nxt;
	out->trace = LAW_TR_INIT;
	hpcc_output(s, p, mss, out);
	s->wc = s->w;
}

/* MeasureInflight's per-hop loop: the largest u (ppm), its dts, max qlen. */
LAW_SUBPROG __u64 hpcc_max_u(const struct int_prev *prev,
			     const struct int_echo *e, __u64 T,
			     __u64 *tau_out, __u64 *qmax_out)
{
	__u64 u = 0, tau = 0, qmax = 0;
	int i;

	if (!prev || !e || !tau_out || !qmax_out)
		return 0;

	for (i = 0; i < INT_MAX_HOPS && i < e->nhops; i++) {
		const struct int_hop *h = &e->hop[i], *o = &prev->hop[i];
		/* dts < 2^26, tx delta < 2^25, qlen < 2^32, rate <= 2^20 Mbit/s,
		 * T < 2^30: every product below stays under 2^64. */
		__u64 dts = int_ts_delta(h->ts, o->ts);
		__u64 rate = law_min64(h->rate_mbps, LAW_RATE_MAX_MBPS);
		__u64 b_Bps = law_mbps_to_Bps(rate);
		__u64 q = law_min64(h->qlen, o->qlen);
		__u64 dtx, tx_Bps, u1, bT;

		if (h->qlen > qmax)
			qmax = h->qlen;
		dtx = int_tx_delta(h->tx_bytes, o->tx_bytes);
		if (!dts || !int_tx_plausible(dtx, dts, rate))
			continue;
		b_Bps += !b_Bps;
		tx_Bps = dtx * LAW_NSEC_PER_SEC / dts;
		u1 = law_min64(tx_Bps, 1ULL << 40) * LAW_PPM / b_Bps;
		if (q) {	/* an empty queue adds 0: two divisions saved */
			bT = law_bdp_bytes(rate, T);
			bT += !bT;
			u1 += q * LAW_PPM / bT;
		}
		u1 = law_min64(u1, LAW_SIGNAL_MAX_PPM);
		if (u1 > u || !tau) {
			u = u1;
			tau = dts;
		}
	}
	*tau_out = tau;
	*qmax_out = qmax;
	return u;
}

/* ComputeWind(U, updateWc). */
LAW_INLINE void hpcc_compute_wind(struct hpcc_state *s,
				  const struct hpcc_params *p, __u64 wai,
				  int update_wc, struct law_out *out)
{
	__u64 eta = law_min64(p->eta_ppm, LAW_PPM);
	__u64 wc = law_min64(s->wc, LAW_CWND_CAP_MAX);

	if (s->u_ppm >= eta || s->inc_stage >= p->max_stage) {
		s->w = wc * eta / law_max64(s->u_ppm, LAW_SIGNAL_MIN_PPM) + wai;
		out->trace |= LAW_TR_MI;
		if (update_wc) {
			s->inc_stage = 0;
			s->wc = s->w;
		}
	} else {
		s->w = wc + wai;
		out->trace |= LAW_TR_AI;
		if (update_wc) {
			if (s->inc_stage < 0xffffffffU)
				s->inc_stage++;
			s->wc = s->w;
		}
	}
}

LAW_INLINE void hpcc_on_ack(struct hpcc_state *s, const struct hpcc_params *p,
			    const struct law_ack *ack, struct law_out *out)
{
	const struct int_echo *e = ack->echo;
	__u32 mss = law_mss(ack);
	__u64 T = law_clamp64(p->base_rtt_ns, 1000, LAW_RTT_MAX_NS);
	__u64 eta = law_min64(p->eta_ppm, LAW_PPM);
	__u64 old = s->w, u = 0, tau = 0, qmax = 0, wai;
	int rtt_end, dec, update_wc;
	__u32 why;

	out->trace = 0;
	why = int_sig_check(&s->prev, e, ack->now_ns, p->int_max_age_ns);
	if (!why) {
		u = hpcc_max_u(&s->prev, e, T, &tau, &qmax);
		int_prev_store(&s->prev, e);
		if (!tau)
			why = LAW_TR_INT_BAD;
	} else if (int_sig_restart(why)) {
		int_prev_store(&s->prev, e);
	}
	if (why) {
		/* No usable telemetry: hold W (and Wc, lastUpdateSeq). */
		out->trace |= why | LAW_TR_HOLD;
		hpcc_output(s, p, mss, out);
		return;
	}
	tau = law_min64(tau, T);
	s->u_ppm = ((T - tau) * s->u_ppm + tau * u) / T;

	rtt_end = law_seq_after(ack->snd_una, s->last_update_seq);
	dec = s->u_ppm >= eta;
	if (p->vai.sf_acks) {
		/* SF: decreases every sf_acks ACKs, increases once per RTT. */
		int sf = vai_sf_point(&s->vai, &p->vai);

		update_wc = dec ? sf : rtt_end;
		if (dec && sf)
			out->trace |= LAW_TR_SF;
	} else {
		update_wc = rtt_end;
	}
	if (p->vai.enable) {
		vai_observe(&s->vai, qmax, dec);
		if (rtt_end)
			vai_rtt_end(&s->vai, &p->vai, p->vai.token_thresh ?
				    p->vai.token_thresh :
				    powertcp_host_bdp(p->host_bw_mbps, T));
	}
	wai = s->wai * vai_tokens(&s->vai, &p->vai, update_wc);
	if (wai > s->wai)
		out->trace |= LAW_TR_VAI;
	hpcc_compute_wind(s, p, law_min64(wai, LAW_CWND_CAP_MAX), update_wc, out);
	if (update_wc) {
		s->vai.acks_since_dec = 0;
		out->trace |= LAW_TR_RTT_UPDATE;
	}
	if (rtt_end)
		s->last_update_seq = ack->snd_nxt;
	hpcc_output(s, p, mss, out);
	if (update_wc)
		s->wc = s->w;	/* the clamped window becomes the reference */
	if (s->w < old)
		out->trace |= LAW_TR_DECREASE;
	else if (s->w > old)
		out->trace |= LAW_TR_INCREASE;
}

#endif /* CCLAB_LAW_HPCC_H */
