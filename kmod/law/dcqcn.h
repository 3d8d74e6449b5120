/* SPDX-License-Identifier: GPL-2.0 */
/*
 * DCQCN (Zhu et al., "Congestion Control for Large-Scale RDMA
 * Deployments", SIGCOMM 2015, section 3): its notification point (NP) and
 * reaction point (RP), rate-based through pacing.
 *
 * NP. A CNP is sent at once when a marked packet arrives and none was
 * sent in the last N; then "at most one CNP packet every N microseconds
 * for the flow, if any packet that arrives within that time window was
 * marked". cclab runs the NP at the sender, on the ECN-Echo ACKs (the
 * receiver echoes CE exactly, RFC 8257: an ACK with ECE is "a marked
 * packet arrived"), on the ACK clock (kmod/law/README.md says why there):
 *	a mark, no CNP yet or the last one N or more ago:  a CNP now
 *	a mark less than N after the last CNP:  pending; a CNP at the end of
 *		that window, last + N, taken by the first ACK at or after it
 *		(the RP's timers restart from last + N, not from that ACK)
 * Rates in bytes/s; the RP:
 *	on a CNP:	RT = RC;  RC = RC * (1 - alpha / 2);
 *			alpha = (1 - g) * alpha + g;
 *			T = BC = 0, byte counter and both timers restart
 *	every alpha_ns without a CNP:	alpha = (1 - g) * alpha
 *	every timer_ns (T += 1), every byte_counter_bytes acked (BC += 1),
 *	an increase event:
 *		max(T, BC) <= F: fast recovery	RC = (RT + RC) / 2
 *		min(T, BC) > F:	hyper increase	RT += (min(T, BC) - F) * R_HAI;
 *						RC = (RT + RC) / 2
 *		otherwise:	additive	RT += R_AI;  RC = (RT + RC) / 2
 *	RT within [min_rate, HostBw] after each event; a cut floors RC at
 *	min_rate. The counters count the event being applied (T and BC are
 *	1 at the first event after a CNP); without a byte counter BC is T.
 * Before the first CNP the flow sends at line rate, alpha = 1 and no
 * timer runs (the rate limiter starts with the first CNP); a flow started
 * below it (init_rate_kbps) starts with its limiter running, RT = RC. struct_ops has
 * no timer callback: the timers are evaluated on every ACK, each expiry
 * since the last ACK in order, before a CNP of the same time (at most
 * DCQCN_EVENTS_MAX increase events before a window-end CNP and as many
 * after it; an expiry past the clock's end never comes: rate_law.h).
 * DCQCN has no window: the window is the cap only.
 *
 * DCQCN+TCD (tcd = 1; docs/lossless.md). The TCD fragment's only words on
 * it: "Decreasing the rate of congested flows aggressively and adjusting
 * the rate of undetermined flows gently". cclab's reading: a congested
 * flow (CE, so a CNP) is cut as DCQCN cuts, unchanged (DCQCN's own
 * reaction is the aggressive one; the fragment gives DCQCN no new
 * factor). An undetermined flow (an ACK with LAW_ACK_UE and no ECE, no
 * CNP pending) is adjusted, gently: at most once per N (cnp_ns, timed
 * apart from the CNPs, so that U never delays a CNP),
 *	RT = RC;  RC = RC * (1 - alpha / 4)	(half a CNP's cut)
 *	alpha unchanged (U says the queue is not this flow's congestion:
 *	alpha, the extent of congestion, is not raised; its timer runs on)
 *	T = BC = 0, byte counter and rate timer restart (fast recovery
 *	back toward RT, as after a CNP)
 * A cut, not nothing: the fragment says "adjusting", and the pause that
 * makes a port undetermined does slow the flow's path. tcd 0 is DCQCN as
 * above, whatever the ACK carries.
 * Included by law.h.
 */
#ifndef CCLAB_LAW_DCQCN_H
#define CCLAB_LAW_DCQCN_H

#define DCQCN_EVENTS_MAX	16	/* increase events applied per ACK */

struct dcqcn_params {
	__u64 alpha_ns;		/* K: alpha decays after this without a CNP */
	__u64 cnp_ns;		/* N: CNPs at most one per this */
	__u64 timer_ns;		/* T: the rate-increase timer */
	__u64 byte_counter_bytes;	/* B: an increase event per B bytes; 0 off */
	__u32 host_bw_mbps;	/* line rate */
	__u32 g_shift;		/* g = 2^-g_shift (1/256) */
	__u32 fast_recovery;	/* F: events of fast recovery */
	__u32 rai_kbps;		/* R_AI; 0 = HostBw / 1000 */
	__u32 rhai_kbps;	/* R_HAI; 0 = 10 * R_AI */
	__u32 min_rate_kbps;	/* 0 = HostBw / 100 */
	__u32 max_cwnd_bytes;	/* the window: a cap only */
	__u32 init_rate_kbps;	/* RC = RT at the start; 0 = HostBw */
	__u32 tcd;		/* DCQCN+TCD: gentle cut on UE without CE */
};

struct dcqcn_state {
	__u64 rc_Bps;		/* RC, the current rate */
	__u64 rt_Bps;		/* RT, the target rate */
	__u64 alpha_ppm;
	__u64 alpha_next_ns;	/* the alpha timer's next expiry */
	__u64 timer_next_ns;	/* the rate-increase timer's next expiry */
	__u64 last_cnp_ns;	/* the last CNP's time (once cnp_seen) */
	__u64 bc_bytes;		/* bytes acked towards the byte counter */
	__u32 t;		/* T: timer expiries since the last CNP */
	__u32 bc;		/* BC: byte-counter expiries since the last CNP */
	__u8 started;		/* a CNP came: the rate limiter runs */
	__u8 cnp_seen;		/* a CNP was sent (at any time, 0 included) */
	__u8 cnp_pending;	/* a mark came within N of the last CNP: one
				 * more at last_cnp_ns + N */
	__u8 ue_seen;		/* TCD: a UE cut happened (last_ue_ns valid) */
	__u8 pad[4];
	__u64 last_ue_ns;	/* TCD: the last UE cut's time */
};

/* The window cap in force: the replay's and the tests' bound. */
LAW_INLINE __u64 dcqcn_max_cwnd(const struct dcqcn_params *p)
{
	return p->max_cwnd_bytes;
}

LAW_INLINE int dcqcn_params_check(const struct dcqcn_params *p)
{
	DCQCN_PARAMS(LAW_X_RANGE)
	return LAW_OK;
}

LAW_INLINE __u64 dcqcn_line_Bps(const struct dcqcn_params *p)
{
	return rate_law_line_Bps(p->host_bw_mbps);
}

/* R_AI: rai_kbps, or HostBw / 1000 */
LAW_INLINE __u64 dcqcn_rai_Bps(const struct dcqcn_params *p)
{
	return rate_law_Bps(p->rai_kbps, p->host_bw_mbps, 1000);
}

/* R_HAI: rhai_kbps, or 10 R_AI */
LAW_INLINE __u64 dcqcn_rhai_Bps(const struct dcqcn_params *p)
{
	return p->rhai_kbps ? (__u64)p->rhai_kbps * 125ULL :
	       10ULL * dcqcn_rai_Bps(p);
}

LAW_INLINE __u64 dcqcn_min_Bps(const struct dcqcn_params *p)
{
	return rate_law_floor_Bps(p->min_rate_kbps, p->host_bw_mbps);
}

/* alpha * (1 - g)^n, n up to 2^20 (square and multiply, 20 steps). */
LAW_INLINE __u64 dcqcn_decay(__u64 alpha_ppm, __u64 n, __u32 g_shift)
{
	/* (1 - g) in units of 2^-30 */
	__u64 f = (1ULL << 30) - ((1ULL << 30) >> g_shift), acc = 1ULL << 30;
	int i;

	if (n >= (1ULL << 20))
		return 0;
	for (i = 0; i < 20; i++) {
		if (n & (1ULL << i))
			acc = (acc * f) >> 30;
		f = (f * f) >> 30;
	}
	return (alpha_ppm * acc) >> 30;
}

LAW_INLINE void dcqcn_output(struct dcqcn_state *s,
			     const struct dcqcn_params *p, __u32 mss,
			     struct law_out *out)
{
	rate_law_output(out, s->rc_Bps, p->max_cwnd_bytes, mss);
	out->signal_ppm = s->alpha_ppm;
}

LAW_INLINE void dcqcn_init(struct dcqcn_state *s,
			   const struct dcqcn_params *p, __u32 snd_nxt,
			   __u32 mss, struct law_out *out)
{
	__builtin_memset(s, 0, sizeof(*s));
	if (!mss || mss > LAW_MSS_MAX)
		mss = LAW_MSS_DEFAULT;
	s->rc_Bps = rate_law_init_Bps(p->init_rate_kbps, p->min_rate_kbps,
				      p->host_bw_mbps);
	s->rt_Bps = s->rc_Bps;
	s->alpha_ppm = LAW_PPM;
	/* below the line, the rate limiter runs from the start (its timers
	 * from the first ACK), as if a CNP had just left it there */
	s->started = s->rc_Bps < dcqcn_line_Bps(p);
	out->trace = LAW_TR_INIT;
	dcqcn_output(s, p, mss, out);
}

/*
 * One increase event, after T or BC moved (the counters count the event
 * that is being applied: events 1..F are fast recovery). Without a byte
 * counter, T alone decides (both counters are T).
 */
LAW_INLINE void dcqcn_increase(struct dcqcn_state *s,
			       const struct dcqcn_params *p)
{
	__u32 bc = p->byte_counter_bytes ? s->bc : s->t;
	__u32 hi = s->t > bc ? s->t : bc;
	__u32 lo = s->t < bc ? s->t : bc;

	if (lo > p->fast_recovery)	/* hyper increase */
		s->rt_Bps += (__u64)(lo - p->fast_recovery) * dcqcn_rhai_Bps(p);
	else if (hi > p->fast_recovery)	/* additive increase */
		s->rt_Bps += dcqcn_rai_Bps(p);
	s->rt_Bps = law_clamp64(s->rt_Bps, dcqcn_min_Bps(p), dcqcn_line_Bps(p));
	s->rc_Bps = (s->rt_Bps + s->rc_Bps) / 2;
}

/* alpha's timer up to until: each expiry without a CNP decays alpha */
LAW_INLINE void dcqcn_alpha_to(struct dcqcn_state *s,
			       const struct dcqcn_params *p, __u64 until)
{
	__u64 K = law_max64(p->alpha_ns, 1), n;

	if (!rate_law_due(until, s->alpha_next_ns))
		return;
	n = (until - s->alpha_next_ns) / K + 1;
	s->alpha_ppm = dcqcn_decay(s->alpha_ppm, n, p->g_shift);
	/* n * K saturated: n <= 2^64 / K by construction */
	s->alpha_next_ns = n > (RATE_LAW_NEVER - s->alpha_next_ns) / K ?
			   RATE_LAW_NEVER : s->alpha_next_ns + n * K;
}

/* A CNP at time at: cut, then restart the counters and timers from at. */
LAW_INLINE void dcqcn_cnp(struct dcqcn_state *s, const struct dcqcn_params *p,
			  __u64 at)
{
	s->rt_Bps = s->rc_Bps;
	s->rc_Bps = law_max64(s->rc_Bps * (2 * LAW_PPM - s->alpha_ppm) /
			      (2 * LAW_PPM), dcqcn_min_Bps(p));
	s->alpha_ppm = s->alpha_ppm - (s->alpha_ppm >> p->g_shift) +
		       (LAW_PPM >> p->g_shift);
	s->t = 0;
	s->bc = 0;
	s->bc_bytes = 0;
	s->timer_next_ns = rate_law_time_add(at, law_max64(p->timer_ns, 1));
	s->alpha_next_ns = rate_law_time_add(at, law_max64(p->alpha_ns, 1));
	s->last_cnp_ns = at;
	s->cnp_seen = 1;
	s->cnp_pending = 0;
	s->started = 1;
}

/*
 * TCD's gentle cut of an undetermined flow at time at (the header's
 * DCQCN+TCD): half a CNP's cut, alpha kept, counters and the rate timer
 * restarted.
 */
LAW_INLINE void dcqcn_ue_cut(struct dcqcn_state *s, const struct dcqcn_params *p,
			     __u64 at)
{
	s->rt_Bps = s->rc_Bps;
	s->rc_Bps = law_max64(s->rc_Bps * (4 * LAW_PPM - s->alpha_ppm) /
			      (4 * LAW_PPM), dcqcn_min_Bps(p));
	s->t = 0;
	s->bc = 0;
	s->bc_bytes = 0;
	s->timer_next_ns = rate_law_time_add(at, law_max64(p->timer_ns, 1));
	if (!s->started)	/* the limiter starts, alpha's timer with it */
		s->alpha_next_ns = rate_law_time_add(at, law_max64(p->alpha_ns, 1));
	s->last_ue_ns = at;
	s->ue_seen = 1;
	s->started = 1;
}

/* Time from the last CNP to now (0 when the clock went back). */
LAW_INLINE __u64 dcqcn_since_cnp(const struct dcqcn_state *s, __u64 now)
{
	return now > s->last_cnp_ns ? now - s->last_cnp_ns : 0;
}

/*
 * The RP's clocks up to until: alpha's decays, then the increase events
 * of the rate-increase timer and of the byte counter (acked bytes counted
 * first), in turn, at most DCQCN_EVENTS_MAX of them; the rest are dropped
 * (the timer restarts at until, the byte counter keeps its remainder).
 * timer_only (a constant at each call): the byte counter has nothing due
 * (before a window-end CNP, the ACK's bytes not counted yet: its count
 * stays below B between ACKs), and its branch is left out of the loop,
 * which halves the paths the BPF verifier walks.
 */
LAW_INLINE void dcqcn_advance(struct dcqcn_state *s,
			      const struct dcqcn_params *p, __u64 until,
			      __u32 acked_bytes, int timer_only)
{
	__u64 bcb = timer_only ? 0 : p->byte_counter_bytes;
	__u64 T = law_max64(p->timer_ns, 1);
	int i;

	dcqcn_alpha_to(s, p, until);
	if (bcb)
		s->bc_bytes = law_min64(s->bc_bytes + acked_bytes,
					LAW_CWND_CAP_MAX);
	for (i = 0; i < DCQCN_EVENTS_MAX; i++) {
		if (rate_law_due(until, s->timer_next_ns)) {
			s->timer_next_ns = rate_law_time_add(s->timer_next_ns, T);
			s->t = law_min64(s->t + 1, 1000000);
		} else if (bcb && s->bc_bytes >= bcb) {
			s->bc_bytes -= bcb;
			s->bc = law_min64(s->bc + 1, 1000000);
		} else {
			break;
		}
		dcqcn_increase(s, p);
	}
	/* more events than the cap: the rest are dropped */
	if (rate_law_due(until, s->timer_next_ns))
		s->timer_next_ns = rate_law_time_add(until, T);
	if (bcb && s->bc_bytes >= bcb)
		s->bc_bytes %= bcb;
}

LAW_INLINE void dcqcn_on_ack(struct dcqcn_state *s,
			     const struct dcqcn_params *p,
			     const struct law_ack *ack, struct law_out *out)
{
	__u64 now = rate_law_now(ack), old = s->rc_Bps;
	__u32 mss = law_mss(ack);

	out->trace = 0;
	if (s->started && !s->timer_next_ns) {	/* started below the line */
		s->timer_next_ns = rate_law_time_add(now, law_max64(p->timer_ns, 1));
		s->alpha_next_ns = rate_law_time_add(now, law_max64(p->alpha_ns, 1));
	}
	/* NP: a window with a mark ended by now, its CNP at its end */
	if (s->cnp_pending && dcqcn_since_cnp(s, now) >= p->cnp_ns) {
		__u64 at = s->last_cnp_ns + p->cnp_ns;	/* <= now */

		dcqcn_advance(s, p, at, 0, 1);
		dcqcn_cnp(s, p, at);
		out->trace |= LAW_TR_ECE | LAW_TR_RTT_UPDATE;
	}
	if (s->started)
		dcqcn_advance(s, p, now, ack->acked_bytes, 0);
	/* NP: this ACK's mark */
	if (ack->ece_bytes || (ack->flags & LAW_ACK_ECE)) {
		if (!s->cnp_seen || dcqcn_since_cnp(s, now) >= p->cnp_ns) {
			dcqcn_cnp(s, p, now);
			out->trace |= LAW_TR_ECE | LAW_TR_RTT_UPDATE;
		} else {
			s->cnp_pending = 1;
		}
	} else if (p->tcd && (ack->flags & LAW_ACK_UE) && !s->cnp_pending &&
		   (!s->ue_seen || now < s->last_ue_ns ||
		    now - s->last_ue_ns >= p->cnp_ns)) {
		dcqcn_ue_cut(s, p, now);
		out->trace |= LAW_TR_RTT_UPDATE;
	}
	out->trace |= rate_law_trace(old, s->rc_Bps);
	dcqcn_output(s, p, mss, out);
}

#endif /* CCLAB_LAW_DCQCN_H */
