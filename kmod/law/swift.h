/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Swift (Kumar et al., SIGCOMM 2020), as summarised in section II of the
 * fast-convergence paper (fast-convergence-to-fairness-vai-sf.txt):
 *	target = base_target + hops * per_hop (topology-based scaling)
 *	         + fbs(cwnd) (flow-based scaling: higher for small windows);
 *	delay < target: additive increase, ai bytes per RTT
 *	  (cwnd += ai * acked / cwnd, the remainder carried; below one segment
 *	  cwnd += ai * acked / mss);
 *	else, at most once per RTT: cwnd *= max(1 - beta * (delay - target) /
 *	  delay, max_mdf).
 * Windows below one segment are kept (down to min_cwnd_bytes) and enforced
 * by pacing at cwnd / RTT; above one segment Swift does not pace, unless
 * pace_always asks for cwnd / base RTT (at most HostBw) on every window:
 * the rate at which the ns-3 RDMA NIC the fast-convergence paper ran Swift
 * on sends a window-limited queue pair (HPCC's simulator).
 * Optional Variable AI and Sampling Frequency (vai.h): the measured
 * congestion is the largest delay in an RTT (ns); with SF every ACK's
 * window is computed from a reference window committed every sf_acks ACKs
 * (decreasing) or once per RTT (increasing). Included by law.h.
 */
#ifndef CCLAB_LAW_SWIFT_H
#define CCLAB_LAW_SWIFT_H

#define SWIFT_DELAY_MAX_NS	10000000000ULL	/* 10 s: larger samples clamp */

struct swift_params {
	__u64 base_rtt_ns;	/* base RTT: initial window HostBw * base_rtt */
	__u64 base_target_ns;	/* base target delay */
	__u64 per_hop_ns;	/* topology-based scaling: added per hop */
	__u64 fs_range_ns;	/* flow-based scaling range; 0 = FBS off */
	__u32 fs_min_cwnd_mppm;	/* FBS: window (segments * 1e6) of full range */
	__u32 fs_max_cwnd_segs;	/* FBS: window (segments) of no scaling */
	__u32 hops;		/* hops when neither INT nor the path tells */
	__u32 host_bw_mbps;	/* HostBw */
	__u32 ai_bytes;		/* additive increase per RTT */
	__u32 beta_ppm;		/* MD gain beta (0.8) */
	__u32 max_mdf_ppm;	/* floor of the decrease factor (0.5) */
	__u32 min_cwnd_bytes;	/* smallest (fractional) window */
	__u32 init_cwnd_bytes;	/* 0 = HostBw * base_rtt (line rate) */
	__u32 max_cwnd_bytes;	/* window cap */
	__u32 pace_always;	/* 1: pace every window at cwnd / base_rtt */
	struct vai_params vai;	/* ns of delay: token_thresh 0 = target + base_rtt */
};

/*
 * 88 bytes, so that with the eBPF glue's 16 it fits the socket's
 * congestion-control private area (kmod/bpf/cc_law.h).
 */
struct swift_state {
	struct vai_state vai;
	__u64 cwnd;		/* bytes, may be below one segment */
	__u64 t_last_decrease;	/* ns */
	__u32 delay_us;		/* last delay sample (the ACK's rtt_us) */
	__u32 ai_rem;		/* AI: what ai * acked / cwnd left over (< cwnd) */
	__u64 wref;		/* SF: reference window, bytes */
	__u32 target_ns;	/* last target delay (< 2^32: swift_target_ns) */
	__u32 fbs_hi_ppm;	/* 1/sqrt(fs_min_cwnd), cached at init (<= 1e9) */
	__u32 fbs_lo_ppm;	/* 1/sqrt(fs_max_cwnd), cached at init (<= 1e9) */
	__u32 last_rtt_seq;	/* snd_nxt at the last RTT boundary */
	__u32 fbs_root;		/* FBS: last floor(sqrt(cwnd_mppm)), 0 = none */
	__u32 fbs_cwnd;		/* FBS memo: the term for this window ... */
	__u32 fbs_ns;		/* ... is this ... */
	__u16 fbs_mss;		/* ... for this mss (0 = no memo) */
	__u8 decreased;		/* t_last_decrease is valid */
	__u8 path_hops;		/* the flow's hop count, 0 = unknown (swift_set_path_hops) */
};

/* The window cap in force: the replay's and the tests' bound. */
LAW_INLINE __u64 swift_max_cwnd(const struct swift_params *p)
{
	return p->max_cwnd_bytes;
}

LAW_INLINE int swift_params_check(const struct swift_params *p)
{
	SWIFT_PARAMS(LAW_X_RANGE)
	if ((__u64)p->fs_min_cwnd_mppm >= (__u64)p->fs_max_cwnd_segs * LAW_PPM)
		return LAW_E_FBS;
	if (p->init_cwnd_bytes > p->max_cwnd_bytes)
		return LAW_E_INIT_CWND;
	return vai_params_check(&p->vai);
}

/* 1/sqrt(x) in ppm for a window x in segments * 1e6 (x >= 1). */
LAW_INLINE __u64 swift_inv_sqrt_ppm(__u64 x_mppm)
{
	__u64 r = law_isqrt(law_max64(x_mppm, 1));

	return 1000000000ULL / (r ? r : 1);	/* 1e6 * 1e3 / sqrt(x_mppm) */
}

/*
 * floor(sqrt(x)) by integer Newton steps r = (r + x / r) / 2 from r, each
 * of which lands at or above the root, so the first r with r^2 <= x is
 * the root, and r - 1 is when (r - 1)^2 <= x < r^2: steps 2 to 4 of
 * swift_isqrt_near() (r is after step 1), then law_isqrt() if they did
 * not converge.
 */
LAW_COLD __u64 swift_isqrt_steps(__u64 x, __u64 r)
{
	int i;

	for (i = 1; i < 4; i++) {
		r = (r + x / (r ? r : 1)) >> 1;
		/* r >= sqrt(x) >= 1 here; r >= 2^32 would overflow r^2 */
		if (r >= (1ULL << 32))
			continue;
		if (r * r <= x)
			return r;
		if ((r - 1) * (r - 1) <= x)
			return r - 1;
	}
	return law_isqrt(x);
}

/*
 * floor(sqrt(x)) for 1 <= x < 2^62, starting from a guess g (the root of
 * the previous ACK's window: windows move little between ACKs), by up to
 * 4 Newton steps (swift_isqrt_steps). From a near guess the first step
 * ends it: one division and two multiplications, few and predictable
 * branches (which cost more than the division on a cold path). Exactly
 * law_isqrt(x), whose 31 steps remain the fallback (no guess, or not
 * converged).
 */
LAW_SUBPROG __u64 swift_isqrt_near(__u64 x, __u64 g)
{
	__u64 r;

	if (LAW_UNLIKELY(!x || x >= (1ULL << 62) || !g || g >= (1ULL << 31)))
		return law_isqrt(x);
	r = (g + x / g) >> 1;
	if (LAW_LIKELY(r < (1ULL << 32))) {
		if (r * r <= x)
			return r;
		if ((r - 1) * (r - 1) <= x)
			return r - 1;
	}
	return swift_isqrt_steps(x, r);
}

/*
 * Flow-based scaling: alpha / sqrt(cwnd) + beta clamped to [0, fs_range],
 * alpha = fs_range / (1/sqrt(fs_min) - 1/sqrt(fs_max)),
 * beta = -alpha / sqrt(fs_max); i.e. fs_range * (1/sqrt(cwnd) -
 * 1/sqrt(fs_max)) / (1/sqrt(fs_min) - 1/sqrt(fs_max)).
 * hi = 1/sqrt(fs_min) and lo = 1/sqrt(fs_max) in ppm (cached in the state),
 * the window in segments * 1e6.
 *
 * Inside (fs_min, fs_max), from root = floor(sqrt(cwnd_mppm)) >= 1 and top =
 * the range (< 2^30).
 */
LAW_SUBPROG __u64 swift_fbs_of_root(__u64 top, __u64 hi, __u64 lo,
				    __u64 root)
{
	/* swift_inv_sqrt_ppm(cwnd_mppm) */
	__u64 c = 1000000000ULL / (root ? root : 1);

	if (LAW_UNLIKELY(c <= lo))
		return 0;
	if (LAW_UNLIKELY(c >= hi || hi <= lo))
		return top;
	/* top < 2^30, c - lo < 2^30: the product fits */
	return law_min64(top, LAW_RTT_MAX_NS) * (c - lo) / (hi - lo);
}

LAW_INLINE __u64 swift_fbs_hi_ppm(const struct swift_params *p)
{
	return swift_inv_sqrt_ppm(law_max64(p->fs_min_cwnd_mppm, 1));
}

LAW_INLINE __u64 swift_fbs_lo_ppm(const struct swift_params *p)
{
	return swift_inv_sqrt_ppm((__u64)law_max64(p->fs_max_cwnd_segs, 1) * LAW_PPM);
}

/*
 * The FBS term for the current window, its square
 * root taken from the previous ACK's (kept in s->fbs_root), and the term
 * itself kept for an unchanged window.
 */
LAW_INLINE __u64 swift_fbs_now(struct swift_state *s,
			       const struct swift_params *p, __u32 mss)
{
	__u64 cwnd = law_min64(s->cwnd, LAW_CWND_CAP_MAX), x, root, fbs;
	__u64 top = law_min64(p->fs_range_ns, LAW_RTT_MAX_NS);

	/* Held windows (congested ACKs between decreases) repeat the term. */
	if (LAW_UNLIKELY(s->fbs_mss == mss && s->fbs_cwnd == cwnd))
		return s->fbs_ns;
	x = cwnd * LAW_PPM / mss;
	if (LAW_UNLIKELY(!top || x >= (__u64)p->fs_max_cwnd_segs * LAW_PPM)) {
		fbs = 0;
	} else if (LAW_UNLIKELY(x <= p->fs_min_cwnd_mppm)) {
		fbs = top;
	} else {
		root = swift_isqrt_near(x, s->fbs_root);
		s->fbs_root = (__u32)root;	/* x < 2^62: root < 2^31 */
		fbs = swift_fbs_of_root(top, s->fbs_hi_ppm, s->fbs_lo_ppm,
					root);
	}
	/* cwnd <= 2^30, mss <= 65535, fbs <= 1e9: all fit */
	s->fbs_cwnd = (__u32)cwnd;
	s->fbs_mss = (__u16)mss;	/* law_mss(): <= 65535 */
	s->fbs_ns = (__u32)fbs;
	return fbs;
}

/*
 * Target delay: base + hops * per_hop + FBS (bounds cached in s). hops is
 * the flow's own (the paper counts it from the TTL): the INT echo's record
 * count, else the path's as the glue found it (swift_set_path_hops), else
 * the parameter.
 */
LAW_INLINE __u64 swift_target_ns(struct swift_state *s,
				 const struct swift_params *p,
				 const struct law_ack *ack, __u32 mss)
{
	__u64 hops = s->path_hops ? s->path_hops : p->hops, fbs = 0;

	if (LAW_UNLIKELY(ack->echo && ack->echo->nhops > 0 &&
			 ack->echo->nhops <= INT_MAX_HOPS))
		hops = ack->echo->nhops;
	hops = law_min64(hops, INT_MAX_HOPS * 3);
	if (p->fs_range_ns)
		fbs = swift_fbs_now(s, p, mss);
	return law_min64(p->base_target_ns, LAW_RTT_MAX_NS) +
	       hops * law_min64(p->per_hop_ns, LAW_RTT_MAX_NS / 16) + fbs;
}

/* mdf = max(1 - beta * (delay - target) / delay, max_mdf), ppm. */
LAW_SUBPROG __u64 swift_mdf_ppm(__u64 delay, __u64 target, __u32 beta_ppm,
			       __u32 max_mdf_ppm)
{
	__u64 cut, floor = law_min64(max_mdf_ppm, LAW_PPM);

	if (!delay || delay <= target)
		return LAW_PPM;
	cut = law_min64(beta_ppm, LAW_PPM) * ((delay - target) * LAW_PPM /
					       delay) / LAW_PPM;
	if (cut >= LAW_PPM - floor)
		return floor;
	return LAW_PPM - cut;
}

LAW_INLINE void swift_output(struct swift_state *s, const struct swift_params *p,
			     __u32 mss, struct law_out *out)
{
	__u64 lo = law_min64(law_max64(p->min_cwnd_bytes, 1), mss);
	__u64 rtt = s->delay_us ? (__u64)s->delay_us * LAW_NSEC_PER_USEC :
		    law_clamp64(p->base_rtt_ns, 1000, LAW_RTT_MAX_NS);

	s->cwnd = law_out_cwnd(out, s->cwnd, lo,
			       law_max64(p->max_cwnd_bytes, mss), mss);
	/* Fractional window: one segment at most every rtt * mss / cwnd. */
	if (LAW_UNLIKELY(s->cwnd < mss))
		out->pacing_rate = law_rate_Bps(s->cwnd, rtt);
	else if (p->pace_always)
		out->pacing_rate = law_min64(
			law_rate_Bps(s->cwnd, law_clamp64(p->base_rtt_ns, 1000,
							  LAW_RTT_MAX_NS)),
			law_mbps_to_Bps(law_clamp64(p->host_bw_mbps, 1,
						    LAW_RATE_MAX_MBPS)));
	else
		out->pacing_rate = LAW_PACING_NONE;
	out->signal_ppm = s->target_ns ?
		law_min64((__u64)s->delay_us * LAW_NSEC_PER_USEC * LAW_PPM /
			  s->target_ns, LAW_SIGNAL_MAX_PPM) : 0;
}

LAW_INLINE void swift_init(struct swift_state *s, const struct swift_params *p,
			   __u32 snd_nxt, __u32 mss, struct law_out *out)
{
	__builtin_memset(s, 0, sizeof(*s));
	if (!mss || mss > LAW_MSS_MAX)
		mss = LAW_MSS_DEFAULT;
	s->cwnd = p->init_cwnd_bytes ? p->init_cwnd_bytes :
		  powertcp_host_bdp(p->host_bw_mbps, p->base_rtt_ns);
	s->last_rtt_seq = snd_nxt;
	/* 1e9 / isqrt(x), isqrt(x) >= 1: both fit 32 bits */
	s->fbs_hi_ppm = (__u32)swift_fbs_hi_ppm(p);
	s->fbs_lo_ppm = (__u32)swift_fbs_lo_ppm(p);
	out->trace = LAW_TR_INIT;
	swift_output(s, p, mss, out);
	s->wref = s->cwnd;
}

/*
 * The flow's path has hops switches (0: unknown), once after init: the
 * glue's table of paths (kmod/bpf/cc_law.h, LAW_PATH_HOPS).
 */
LAW_INLINE void swift_set_path_hops(struct swift_state *s, __u32 hops)
{
	s->path_hops = hops <= INT_MAX_HOPS * 3 ? (__u8)hops : 0;
}

/*
 * Additive increase of one ACK: ai * acked / cwnd bytes (below one
 * segment ai * acked / mss), ai bytes per RTT. The remainder of the
 * division is carried to the next ACK: in whole bytes alone an ACK adds
 * nothing once ai * acked < cwnd (above 2 MB with ai and acked one
 * segment), and a window that large would never grow.
 */
LAW_INLINE __u64 swift_ai_add(struct swift_state *s, __u64 ai, __u64 acked,
			      __u32 mss)
{
	/* cwnd <= 2^30 (law_out_cwnd), so the remainder fits 32 bits */
	__u64 div = law_min64(s->cwnd >= mss ? s->cwnd : mss, LAW_CWND_CAP_MAX);
	__u64 n;

	div += !div;
	/* A remainder of a larger window (before a decrease) is dropped: it
	 * would add up to old_cwnd / cwnd bytes at once. */
	if (s->ai_rem >= div)
		s->ai_rem = 0;
	/* ai, acked <= 2^30: the product and the remainder fit */
	n = law_min64(ai, LAW_CWND_CAP_MAX) * law_min64(acked, LAW_CWND_CAP_MAX) +
	    s->ai_rem;
	s->ai_rem = (__u32)(n % div);
	return n / div;
}

/* What one ACK's window change depends on, besides the state. */
struct swift_sample {
	__u64 delay;		/* ns, > 0 */
	__u64 target;		/* ns */
	__u64 now_ns;		/* law_ack's */
	__u32 acked;		/* law_ack.acked_bytes */
	__u32 mss;		/* law_mss() */
	int congested;		/* delay >= target */
	int rtt_end;		/* snd_una passed last_rtt_seq */
};

/* swift_vai_step() says: the window is a new SF reference window. */
#define SWIFT_COMMIT	0x80000000U

/*
 * The window change of one ACK with Variable AI or Sampling Frequency on
 * (off by default, so kept off the plain path; its input in a struct of
 * its own, so that the caller's law_ack and law_out need no memory).
 * Returns trace flags, and SWIFT_COMMIT.
 */
LAW_COLD __u32 swift_vai_step(struct swift_state *s,
			      const struct swift_params *p,
			      const struct swift_sample *x)
{
	__u64 ai, add, mdf, acked = x->acked;
	__u32 trace = 0;
	int commit = 0;
	/* SF's decrease point (counts this ACK), before the tokens: the
	 * reference window is adjusted, and tokens spent (Algorithm 2), every
	 * decrease period while decreasing and once per RTT while increasing
	 * (section IV-A), as HPCC spends them (update_wc). */
	int sf = p->vai.sf_acks ? vai_sf_point(&s->vai, &p->vai) : 0;
	int adjust = p->vai.sf_acks && x->congested ? sf : x->rtt_end;

	if (p->vai.enable) {
		vai_observe(&s->vai, x->delay, x->congested);
		if (x->rtt_end)
			vai_rtt_end(&s->vai, &p->vai, p->vai.token_thresh ?
				    p->vai.token_thresh :
				    x->target + law_min64(p->base_rtt_ns,
							  LAW_RTT_MAX_NS));
	}
	ai = law_min64(p->ai_bytes, 1U << 24) *
	     law_min64(vai_tokens(&s->vai, &p->vai, adjust),
		       VAI_BANK_CAP_MAX);
	if (ai > p->ai_bytes)
		trace |= LAW_TR_VAI;
	/* Only where the window grows: below target, or always with VAI. */
	add = 0;
	if (!x->congested || p->vai.enable)
		add = swift_ai_add(s, ai, acked, x->mss);
	if (p->vai.sf_acks) {
		/*
		 * Sampling Frequency (section V-B): every ACK's window comes
		 * from a reference window, committed every sf_acks ACKs while
		 * decreasing and once per RTT while increasing.
		 */
		if (x->congested) {
			mdf = swift_mdf_ppm(x->delay, x->target, p->beta_ppm,
					    p->max_mdf_ppm);
			s->cwnd = law_min64(s->wref, LAW_CWND_CAP_MAX) * mdf /
				  LAW_PPM;
			if (p->vai.enable)	/* VAI always adds */
				s->cwnd += add;
			if (sf) {
				commit = 1;
				trace |= LAW_TR_SF;
			}
		} else {
			s->cwnd = law_min64(s->cwnd + add, LAW_CWND_CAP_MAX);
			commit = x->rtt_end;
		}
	} else {
		/* VAI always adds (section V-B), then decreases as plain
		 * Swift does. */
		s->cwnd = law_min64(s->cwnd + add, LAW_CWND_CAP_MAX);
		if (x->congested &&
		    (!s->decreased || x->now_ns < s->t_last_decrease ||
		     x->now_ns - s->t_last_decrease >= x->delay)) {
			mdf = swift_mdf_ppm(x->delay, x->target, p->beta_ppm,
					    p->max_mdf_ppm);
			s->cwnd = law_min64(s->cwnd, LAW_CWND_CAP_MAX) * mdf /
				  LAW_PPM;
		}
	}
	return commit ? trace | SWIFT_COMMIT : trace;
}

/* The multiplicative decrease of plain Swift (at most once per RTT). */
LAW_COLD __u64 swift_cut(__u64 cwnd, __u64 delay, __u64 target,
			 const struct swift_params *p)
{
	__u64 mdf = swift_mdf_ppm(delay, target, p->beta_ppm, p->max_mdf_ppm);

	return law_min64(cwnd, LAW_CWND_CAP_MAX) * mdf / LAW_PPM;
}

LAW_INLINE void swift_on_ack(struct swift_state *s, const struct swift_params *p,
			     const struct law_ack *ack, struct law_out *out)
{
	__u32 mss = law_mss(ack);
	__u64 delay = law_min64((__u64)ack->rtt_us * LAW_NSEC_PER_USEC,
				SWIFT_DELAY_MAX_NS);
	__u64 old = s->cwnd, target, acked = ack->acked_bytes;
	__u32 vai = 0;
	int rtt_end, congested;

	out->trace = 0;
	if (LAW_UNLIKELY(!delay)) {
		out->trace |= LAW_TR_NO_RTT | LAW_TR_HOLD;
		swift_output(s, p, mss, out);
		return;
	}
	target = swift_target_ns(s, p, ack, mss);
	s->delay_us = (__u32)(delay / LAW_NSEC_PER_USEC);	/* <= 1e7 */
	/* base <= 1e9, 15 hops * 6.25e7, FBS <= 1e9: below 2^32 */
	s->target_ns = (__u32)target;
	congested = delay >= target;
	rtt_end = law_seq_after(ack->snd_una, s->last_rtt_seq);
	if (rtt_end) {
		s->last_rtt_seq = ack->snd_nxt;
		out->trace |= LAW_TR_RTT_UPDATE;
	}
	if (LAW_UNLIKELY(p->vai.enable || p->vai.sf_acks)) {
		struct swift_sample x = {
			.delay = delay, .target = target, .now_ns = ack->now_ns,
			.acked = ack->acked_bytes, .mss = mss,
			.congested = congested, .rtt_end = rtt_end,
		};

		vai = swift_vai_step(s, p, &x);
		out->trace |= vai & ~SWIFT_COMMIT;
	} else if (!congested) {
		s->cwnd = law_min64(s->cwnd +
				    swift_ai_add(s, law_min64(p->ai_bytes,
							      1U << 24),
						 acked, mss),
				    LAW_CWND_CAP_MAX);
	} else if (!s->decreased || ack->now_ns < s->t_last_decrease ||
		   ack->now_ns - s->t_last_decrease >= delay) {
		/* Decrease at most once per RTT (since the last decrease). */
		s->cwnd = swift_cut(s->cwnd, delay, target, p);
	}
	swift_output(s, p, mss, out);
	if (LAW_UNLIKELY(vai & SWIFT_COMMIT)) {
		s->wref = s->cwnd;
		s->vai.acks_since_dec = 0;
	}
	if (s->cwnd < old) {
		s->t_last_decrease = ack->now_ns;
		s->decreased = 1;
		out->trace |= LAW_TR_DECREASE;
	} else if (s->cwnd > old) {
		out->trace |= LAW_TR_INCREASE;
	}
}

#endif /* CCLAB_LAW_SWIFT_H */
