/* SPDX-License-Identifier: GPL-2.0 */
/*
 * TIMELY (Mittal et al., "TIMELY: RTT-based Congestion Control for the
 * Datacenter", SIGCOMM 2015, Algorithm 1), rate-based on the RTT gradient.
 * On every completion event, with new_rtt the RTT sample of the ACK that
 * completes it:
 *	new_rtt_diff = new_rtt - prev_rtt;	prev_rtt = new_rtt
 *	rtt_diff = (1 - alpha) * rtt_diff + alpha * new_rtt_diff
 *	g = rtt_diff / minRTT				(normalised gradient)
 *	new_rtt < T_low:	rate += delta
 *	new_rtt > T_high:	rate *= 1 - beta * (1 - T_high / new_rtt)
 *	g <= 0:			rate += N * delta, N = hai_n when g < 0 at this
 *				completion and the hai_n - 1 before it (HAI),
 *				else 1
 *	else:			rate *= 1 - beta * g	(factor floored at 0)
 * then rate within [min_rate, HostBw]. A completion is a segment of
 * seg_bytes acknowledged: snd_una reaches the next multiple of seg_bytes
 * counted from snd_nxt at init (at most one per ACK: an ACK that passes
 * several boundaries completes once, the next completion is the next
 * boundary past snd_una; an ACK without an RTT sample leaves its
 * completion to the next ACK with one). seg_bytes 0 is the per-RTT clock
 * of the HPCC and PowerTCP simulators instead: an update when snd_una
 * reaches the snd_nxt of the last one. prev_rtt starts as the first
 * sample (its difference 0). Starts at line rate, or at init_rate_kbps.
 * The rate is the pacing rate; TIMELY has no window, so the window is the
 * cap only.
 *
 * TIMELY+TCD (tcd = 1; docs/lossless.md), the TCD fragment's rule:
 * "senders do not update the sending rate if the gradient is above zero
 * (T_low < RTT < T_high) and the packet is marked with UE simultaneously.
 * We change the rate reduction factor beta from default 0.8 to 1.6 to
 * decrease the rate of congested flows aggressively." So with tcd on, a
 * completion whose ACK has LAW_ACK_UE, with T_low < new_rtt < T_high
 * (strictly) and g > 0, leaves the rate as it is (the gradient's EWMA is
 * still updated: it is a measurement, not a rate); beta is the beta_ppm
 * parameter, which TIMELY+TCD sets to 1600000 (range up to 1.6: the
 * factor 1 - beta * g is floored at 0, and beta * g <= 1.6e6 * 1e9 <
 * 2^51 fits). tcd 0 is TIMELY as above, whatever the ACK carries.
 * Included by law.h.
 */
#ifndef CCLAB_LAW_TIMELY_H
#define CCLAB_LAW_TIMELY_H

#define TIMELY_RTT_MAX_NS	LAW_RTT_MAX_NS	/* larger samples clamp */

struct timely_params {
	__u64 min_rtt_ns;	/* minRTT, the gradient's normaliser */
	__u64 t_low_ns;		/* T_low */
	__u64 t_high_ns;	/* T_high */
	__u32 host_bw_mbps;	/* line rate: the start and the ceiling */
	__u32 alpha_ppm;	/* EWMA weight of the newest difference */
	__u32 beta_ppm;		/* multiplicative decrease */
	__u32 hai_n;		/* N: completions with g < 0 for HAI, its step */
	__u32 delta_kbps;	/* delta, the additive step; 0 = HostBw / 1000 */
	__u32 min_rate_kbps;	/* rate floor; 0 = HostBw / 100 */
	__u32 max_cwnd_bytes;	/* the window: a cap only */
	__u32 init_rate_kbps;	/* the starting rate; 0 = HostBw */
	__u32 seg_bytes;	/* a completion per segment; 0 = once per RTT */
	__u32 tcd;		/* TIMELY+TCD: no cut on UE with T_low < RTT < T_high */
};

struct timely_state {
	__u64 rate_Bps;		/* bytes/s */
	__u64 rtt_diff_ns;	/* rtt_diff, magnitude */
	__u64 prev_rtt_ns;	/* 0 = no sample yet */
	__u32 rtt_diff_neg;	/* rtt_diff < 0 */
	__u32 neg_grads;	/* consecutive completions with g < 0 */
	__u32 next_seq;		/* the next completion when snd_una reaches it */
	__u32 pad;
};

/* The window cap in force: the replay's and the tests' bound. */
LAW_INLINE __u64 timely_max_cwnd(const struct timely_params *p)
{
	return p->max_cwnd_bytes;
}

LAW_INLINE int timely_params_check(const struct timely_params *p)
{
	TIMELY_PARAMS(LAW_X_RANGE)
	if (p->t_low_ns >= p->t_high_ns)
		return LAW_E_TIMELY_T;
	return LAW_OK;
}

/* delta: delta_kbps, or HostBw / 1000 */
LAW_INLINE __u64 timely_delta_Bps(const struct timely_params *p)
{
	return rate_law_Bps(p->delta_kbps, p->host_bw_mbps, 1000);
}

/* x * ppm / 1e6 on a magnitude (x < 2^43, ppm <= 1e6: the product fits). */
LAW_INLINE __u64 timely_scale(__u64 x, __u64 ppm)
{
	return law_min64(x, 1ULL << 43) * ppm / LAW_PPM;
}

LAW_INLINE void timely_output(struct timely_state *s,
			      const struct timely_params *p, __u32 mss,
			      struct law_out *out)
{
	rate_law_output(out, s->rate_Bps, p->max_cwnd_bytes, mss);
}

LAW_INLINE void timely_init(struct timely_state *s,
			    const struct timely_params *p, __u32 snd_nxt,
			    __u32 mss, struct law_out *out)
{
	__builtin_memset(s, 0, sizeof(*s));
	if (!mss || mss > LAW_MSS_MAX)
		mss = LAW_MSS_DEFAULT;
	s->rate_Bps = rate_law_init_Bps(p->init_rate_kbps, p->min_rate_kbps,
					p->host_bw_mbps);
	s->next_seq = law_seq_add(snd_nxt, p->seg_bytes);
	out->trace = LAW_TR_INIT;
	out->signal_ppm = LAW_PPM;
	timely_output(s, p, mss, out);
}

/*
 * rtt_diff = (1 - alpha) * rtt_diff + alpha * new_diff, both signed, kept
 * as sign and magnitude (BPF has no signed division).
 */
LAW_INLINE void timely_ewma(struct timely_state *s, __u64 new_mag, int new_neg,
			    __u32 alpha_ppm)
{
	__u64 a = timely_scale(s->rtt_diff_ns, LAW_PPM - alpha_ppm);
	__u64 b = timely_scale(new_mag, alpha_ppm);
	int a_neg = s->rtt_diff_neg && a;

	if (a_neg == new_neg) {
		s->rtt_diff_ns = a + b;
		s->rtt_diff_neg = new_neg && (a + b);
	} else if (a >= b) {
		s->rtt_diff_ns = a - b;
		s->rtt_diff_neg = a_neg && a > b;
	} else {
		s->rtt_diff_ns = b - a;
		s->rtt_diff_neg = new_neg;
	}
}

/*
 * Where the completion after this ACK's is: the first multiple of
 * seg_bytes past snd_una (from the current boundary, which snd_una has
 * reached: d < 2^31, so the step stays below 2^32 and wraps as sequence
 * numbers do); or, per RTT, snd_nxt.
 */
LAW_INLINE __u32 timely_next_seq(const struct timely_state *s,
				 const struct timely_params *p,
				 const struct law_ack *ack)
{
	__u32 d = law_seq_sub(ack->snd_una, s->next_seq);

	if (!p->seg_bytes)
		return ack->snd_nxt;
	return law_seq_add(s->next_seq,
			   (__u32)(((__u64)d / p->seg_bytes + 1) * p->seg_bytes));
}

/*
 * rate * (1 - beta * x), x in ppm, the factor floored at 0. beta up to
 * 1.6e6 ppm, x capped at 1e9 ppm: the product < 2^51 fits.
 */
LAW_INLINE __u64 timely_cut(__u64 rate, __u32 beta_ppm, __u64 x_ppm)
{
	__u64 bx = law_min64(x_ppm, LAW_SIGNAL_MAX_PPM) * beta_ppm / LAW_PPM;

	if (bx >= LAW_PPM)
		return 0;
	/* rate < 2^37 (800 Gbit/s), factor <= 1e6: fits */
	return rate * (LAW_PPM - bx) / LAW_PPM;
}

LAW_INLINE void timely_on_ack(struct timely_state *s,
			      const struct timely_params *p,
			      const struct law_ack *ack, struct law_out *out)
{
	__u64 rtt = law_min64((__u64)ack->rtt_us * LAW_NSEC_PER_USEC,
			      TIMELY_RTT_MAX_NS);
	__u64 line = rate_law_line_Bps(p->host_bw_mbps);
	__u64 rate = s->rate_Bps, mag, grad;
	__u32 mss = law_mss(ack);
	int neg;

	out->trace = 0;
	if (!rtt) {
		out->trace |= LAW_TR_NO_RTT | LAW_TR_HOLD;
		goto done;
	}
	if (law_seq_after(s->next_seq, ack->snd_una)) {
		out->trace |= LAW_TR_HOLD;	/* no completion */
		goto done;
	}
	s->next_seq = timely_next_seq(s, p, ack);
	out->trace |= LAW_TR_RTT_UPDATE;
	if (!s->prev_rtt_ns)	/* the first sample: a difference of 0 */
		s->prev_rtt_ns = rtt;
	neg = rtt < s->prev_rtt_ns;
	mag = neg ? s->prev_rtt_ns - rtt : rtt - s->prev_rtt_ns;
	s->prev_rtt_ns = rtt;
	timely_ewma(s, mag, neg, p->alpha_ppm);
	s->neg_grads = s->rtt_diff_neg ? law_min64(s->neg_grads + 1, 1000000) : 0;
	/* |g| in ppm: rtt_diff < 2^43, so the product fits */
	grad = s->rtt_diff_ns * LAW_PPM / law_max64(p->min_rtt_ns, 1);
	if (rtt < p->t_low_ns) {
		rate += timely_delta_Bps(p);
	} else if (rtt > p->t_high_ns) {
		/* 1 - T_high / rtt, in ppm */
		rate = timely_cut(rate, p->beta_ppm,
				  LAW_PPM - p->t_high_ns * LAW_PPM / rtt);
	} else if (s->rtt_diff_neg || !grad) {
		rate += (s->neg_grads >= p->hai_n ? p->hai_n : 1) *
			timely_delta_Bps(p);
	} else if (p->tcd && (ack->flags & LAW_ACK_UE) &&
		   rtt > p->t_low_ns && rtt < p->t_high_ns) {
		out->trace |= LAW_TR_HOLD;	/* TCD: undetermined, no update */
	} else {
		rate = timely_cut(rate, p->beta_ppm, grad);
	}
	rate = law_clamp64(rate, rate_law_floor_Bps(p->min_rate_kbps, p->host_bw_mbps), line);
	if (rate < s->rate_Bps)
		out->trace |= LAW_TR_DECREASE;
	else if (rate > s->rate_Bps)
		out->trace |= LAW_TR_INCREASE;
	s->rate_Bps = rate;
done:
	/* signal: 1 + g, floored at 0 (1.0 = a flat RTT) */
	grad = s->rtt_diff_ns * LAW_PPM / law_max64(p->min_rtt_ns, 1);
	out->signal_ppm = s->rtt_diff_neg ? (grad >= LAW_PPM ? 0 : LAW_PPM - grad) :
			  law_min64(LAW_PPM + grad, LAW_SIGNAL_MAX_PPM);
	timely_output(s, p, mss, out);
}

#endif /* CCLAB_LAW_TIMELY_H */
