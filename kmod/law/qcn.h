/* SPDX-License-Identifier: GPL-2.0 */
/*
 * QCN's reaction point (IEEE 802.1Qau, as section II of Shu et al.,
 * "Analysing Convergence of Quantized Congestion Notification in Data
 * Center Ethernet") and QCN-T,
 * its timer-only variant (section VI), rate-based through pacing. A
 * feedback is a QCN record a congestion point wrote into the INT option,
 * echoed back by the receiver: the echo's qcn_count differs from the one
 * the law last saw (kmod/law/README.md). Rates in bytes/s; Fb is the
 * quantised |Fb| (1..63), Gd = 2^-gd_shift (1/128: Gd * 63 ~ 0.5):
 *	on a feedback:	TR = CR;  CR = max(CR * (1 - Gd * Fb), min_rate);
 *			BC = T = 0, the byte counter and the timer restart
 *	each byte-counter cycle (BC += 1), each timer cycle (T += 1), an
 *	increase event:
 *		max(BC, T) <= F: fast recovery	CR = (CR + TR) / 2
 *		min(BC, T) > H:	hyper-active	TR += (min(BC, T) - H) * R_HAI;
 *						CR = (CR + TR) / 2
 *		otherwise:	active increase	TR += R_AI;  CR = (CR + TR) / 2
 *	TR within [min_rate, HostBw] after each event.
 * QCN:   a byte-counter cycle is byte_counter_bytes acked, a timer cycle
 *	  timer_ns, each half as long once its own counter has completed F
 *	  cycles ("cut by half" after fast recovery); H = F. Without a byte
 *	  counter (byte_counter_bytes 0) BC is T.
 * QCN-T: no byte counter (BC is T); every timer cycle timer_ns (never
 *	  halved); H = hai_cycles, 0 = 75 ms / timer_ns (15 ms x 5 cycles of
 *	  standard QCN), at least F.
 * The counters count the event being applied (1 at the first event after
 * a feedback). Before the first feedback the flow sends at line rate and
 * no counter runs; a flow started below it (init_rate_kbps) starts with
 * its rate limiter running, TR = CR, as if a feedback had just cut it. struct_ops has neither a transmit hook nor a timer
 * callback: the byte counter counts bytes acked (the bytes sent, an RTT
 * later), and the timer is evaluated on every ACK, each expiry since the
 * last ACK in order, timer's first (at most QCN_EVENTS_MAX increase events
 * per ACK; an expiry past the clock's end never comes: rate_law.h). QCN
 * has no window: the window is the cap only.
 * Included by law.h.
 */
#ifndef CCLAB_LAW_QCN_H
#define CCLAB_LAW_QCN_H

#define QCN_EVENTS_MAX		16		/* increase events applied per ACK */
#define QCN_STAGE_MAX		1000000		/* BC and T saturate here */
#define QCN_T_HAI_NS		75000000ULL	/* QCN-T's automatic H: 15 ms x 5 */

struct qcn_params {
	__u64 byte_counter_bytes;	/* a byte-counter cycle; 0 off */
	__u64 timer_ns;			/* a timer cycle */
	__u32 fast_recovery;		/* F */
	__u32 gd_shift;			/* Gd = 2^-gd_shift */
	__u32 rai_kbps;			/* R_AI; 0 = HostBw / 2000 */
	__u32 rhai_kbps;		/* R_HAI; 0 = 10 * R_AI */
	__u32 host_bw_mbps;		/* line rate */
	__u32 min_rate_kbps;		/* 0 = HostBw / 100 */
	__u32 max_cwnd_bytes;		/* the window: a cap only */
	__u32 init_rate_kbps;		/* CR = TR at the start; 0 = HostBw */
};

struct qcn_t_params {
	__u64 timer_ns;			/* t, the timer cycle */
	__u32 fast_recovery;		/* F */
	__u32 hai_cycles;		/* H; 0 = 75 ms / t */
	__u32 gd_shift;
	__u32 rai_kbps;
	__u32 rhai_kbps;
	__u32 host_bw_mbps;
	__u32 min_rate_kbps;
	__u32 max_cwnd_bytes;
	__u32 init_rate_kbps;
	__u32 pad;
};

/* What the reaction point of either law runs on (built per ACK). */
struct qcn_rp_cfg {
	__u64 byte_counter_bytes;	/* 0: no byte counter, BC is T */
	__u64 timer_ns;
	__u32 fast_recovery;		/* F */
	__u32 hai_cycles;		/* QCN-T's hai_cycles (timer_only) */
	__u32 timer_only;		/* QCN-T: H from hai_cycles, no halving */
	__u32 gd_shift;
	__u32 host_bw_mbps;
	__u32 min_rate_kbps;
	__u32 rai_kbps;
	__u32 rhai_kbps;
	__u32 init_rate_kbps;
	__u32 pad;
};

struct qcn_rp_state {
	__u64 cr_Bps;		/* CR, the current rate */
	__u64 tr_Bps;		/* TR, the target rate */
	__u64 timer_next_ns;	/* the timer's next expiry */
	__u64 bc_bytes;		/* bytes acked in the byte counter's cycle */
	__u32 t;		/* T: timer cycles since the last feedback */
	__u32 bc;		/* BC: byte-counter cycles since then */
	__u32 qcn_count;	/* the echo's qcn_count at the last look */
	__u8 started;		/* a feedback came: the counters run */
	__u8 fb;		/* the last feedback's |Fb| (the signal) */
	__u16 pad;
};

struct qcn_state {
	struct qcn_rp_state rp;
};

struct qcn_t_state {
	struct qcn_rp_state rp;
};

LAW_INLINE void qcn_cfg(struct qcn_rp_cfg *c, const struct qcn_params *p)
{
	*c = (struct qcn_rp_cfg){
		.byte_counter_bytes = p->byte_counter_bytes,
		.timer_ns = p->timer_ns,
		.fast_recovery = p->fast_recovery,
		.gd_shift = p->gd_shift,
		.host_bw_mbps = p->host_bw_mbps,
		.min_rate_kbps = p->min_rate_kbps,
		.rai_kbps = p->rai_kbps,
		.rhai_kbps = p->rhai_kbps,
		.init_rate_kbps = p->init_rate_kbps,
	};
}

LAW_INLINE void qcn_t_cfg(struct qcn_rp_cfg *c, const struct qcn_t_params *p)
{
	*c = (struct qcn_rp_cfg){
		.timer_ns = p->timer_ns,
		.fast_recovery = p->fast_recovery,
		.hai_cycles = p->hai_cycles,
		.timer_only = 1,
		.gd_shift = p->gd_shift,
		.host_bw_mbps = p->host_bw_mbps,
		.min_rate_kbps = p->min_rate_kbps,
		.rai_kbps = p->rai_kbps,
		.rhai_kbps = p->rhai_kbps,
		.init_rate_kbps = p->init_rate_kbps,
	};
}

LAW_INLINE __u64 qcn_line_Bps(const struct qcn_rp_cfg *c)
{
	return rate_law_line_Bps(c->host_bw_mbps);
}

LAW_INLINE __u64 qcn_min_Bps(const struct qcn_rp_cfg *c)
{
	return rate_law_floor_Bps(c->min_rate_kbps, c->host_bw_mbps);
}

/* R_AI: rai_kbps, or HostBw / 2000 (0.5 Mbit/s at 1 Gbit/s) */
LAW_INLINE __u64 qcn_rai_Bps(const struct qcn_rp_cfg *c)
{
	return rate_law_Bps(c->rai_kbps, c->host_bw_mbps, 2000);
}

/* R_HAI: rhai_kbps, or 10 R_AI */
LAW_INLINE __u64 qcn_rhai_Bps(const struct qcn_rp_cfg *c)
{
	return c->rhai_kbps ? (__u64)c->rhai_kbps * 125ULL : 10ULL * qcn_rai_Bps(c);
}

/* H: hyper-active increase once min(BC, T) exceeds it; at least F. */
LAW_INLINE __u32 qcn_hai(const struct qcn_rp_cfg *c)
{
	__u64 h;

	if (!c->timer_only)
		return c->fast_recovery;
	/* timer_ns >= 1000 (its range): H <= 75000 */
	h = c->hai_cycles ? c->hai_cycles : QCN_T_HAI_NS / law_max64(c->timer_ns, 1);
	return law_max64(h, c->fast_recovery);
}

/*
 * The length of a counter's next cycle (bytes or ns) after stage cycles:
 * len while stage < F, then half of it (QCN; QCN-T never halves).
 */
LAW_INLINE __u64 qcn_cycle(const struct qcn_rp_cfg *c, __u64 len, __u32 stage)
{
	if (!c->timer_only && stage >= c->fast_recovery)
		return law_max64(len / 2, 1);
	return len;
}

LAW_INLINE void qcn_rp_output(struct qcn_rp_state *s, __u32 max_cwnd_bytes,
			      __u32 mss, struct law_out *out)
{
	rate_law_output(out, s->cr_Bps, max_cwnd_bytes, mss);
	/* the last feedback's |Fb| as a fraction of the largest, 63 */
	out->signal_ppm = (__u64)s->fb * LAW_PPM / INT_QCN_FB_MAX;
}

LAW_INLINE void qcn_rp_init(struct qcn_rp_state *s, const struct qcn_rp_cfg *c,
			    __u32 max_cwnd_bytes, __u32 mss, struct law_out *out)
{
	__builtin_memset(s, 0, sizeof(*s));
	if (!mss || mss > LAW_MSS_MAX)
		mss = LAW_MSS_DEFAULT;
	s->cr_Bps = rate_law_init_Bps(c->init_rate_kbps, c->min_rate_kbps,
				      c->host_bw_mbps);
	s->tr_Bps = s->cr_Bps;
	/* below the line, the rate limiter runs from the start (its timer
	 * from the first ACK), as if a feedback had just left it there */
	s->started = s->cr_Bps < qcn_line_Bps(c);
	out->trace = LAW_TR_INIT;
	qcn_rp_output(s, max_cwnd_bytes, mss, out);
}

/*
 * One increase event, after T or BC moved (they count this event). A
 * subprogram in the BPF check build: inlined sixteen times into the
 * event loop, its branches multiplied the verifier's paths past its limit.
 */
LAW_SUBPROG int qcn_rp_increase(struct qcn_rp_state *s,
				const struct qcn_rp_cfg *c)
{
	__u32 bc, hi, lo, h;

	if (!s || !c)
		return 0;
	bc = c->byte_counter_bytes ? s->bc : s->t;
	hi = s->t > bc ? s->t : bc;
	lo = s->t < bc ? s->t : bc;
	h = qcn_hai(c);
	if (hi <= c->fast_recovery)	/* fast recovery: TR stays */
		;
	else if (lo > h)		/* hyper-active increase */
		s->tr_Bps += (__u64)(lo - h) * qcn_rhai_Bps(c);
	else				/* active increase */
		s->tr_Bps += qcn_rai_Bps(c);
	s->tr_Bps = law_clamp64(s->tr_Bps, qcn_min_Bps(c), qcn_line_Bps(c));
	s->cr_Bps = (s->cr_Bps + s->tr_Bps) / 2;
	return 0;
}

LAW_INLINE void qcn_rp_on_ack(struct qcn_rp_state *s,
			      const struct qcn_rp_cfg *c, __u32 max_cwnd_bytes,
			      const struct law_ack *ack, struct law_out *out)
{
	const struct int_echo *e = ack->echo;
	__u64 now = rate_law_now(ack), old = s->cr_Bps, len;
	__u64 bcb = c->byte_counter_bytes, T = law_max64(c->timer_ns, 1);
	__u32 mss = law_mss(ack), fb;
	int i;

	out->trace = 0;
	if (s->started && !s->timer_next_ns)	/* started below the line */
		s->timer_next_ns = rate_law_time_add(now, qcn_cycle(c, T, 0));
	if (s->started) {
		/* the timer's cycles, then the byte counter's, in turn */
		if (bcb)
			s->bc_bytes = law_min64(s->bc_bytes + ack->acked_bytes,
						LAW_CWND_CAP_MAX);
		for (i = 0; i < QCN_EVENTS_MAX; i++) {
			if (rate_law_due(now, s->timer_next_ns)) {
				s->t = law_min64(s->t + 1, QCN_STAGE_MAX);
				s->timer_next_ns = rate_law_time_add(s->timer_next_ns,
								     qcn_cycle(c, T, s->t));
			} else if (bcb && s->bc_bytes >= (len = qcn_cycle(c, bcb, s->bc))) {
				s->bc_bytes -= len;
				s->bc = law_min64(s->bc + 1, QCN_STAGE_MAX);
			} else {
				break;
			}
			qcn_rp_increase(s, c);
		}
		/* more events than the cap: the rest are dropped */
		if (rate_law_due(now, s->timer_next_ns))
			s->timer_next_ns = rate_law_time_add(now, qcn_cycle(c, T, s->t));
		if (bcb) {
			len = qcn_cycle(c, bcb, s->bc);
			if (s->bc_bytes >= len)
				s->bc_bytes %= len;
		}
	}
	if (e && e->qcn_count != s->qcn_count) {
		/* a new feedback record (several since the last ACK: the newest) */
		s->qcn_count = e->qcn_count;
		fb = e->qcn_fb < INT_QCN_FB_MAX ? e->qcn_fb : INT_QCN_FB_MAX;
		if (fb) {	/* a CP never sends 0 */
			out->trace |= LAW_TR_ECE | LAW_TR_RTT_UPDATE;
			s->fb = fb;
			s->tr_Bps = s->cr_Bps;
			/* cr <= 2^37, fb < 2^6; gd_shift >= 6: the cut is < cr */
			s->cr_Bps = law_max64(s->cr_Bps - ((s->cr_Bps * fb) >> c->gd_shift),
					      qcn_min_Bps(c));
			s->t = 0;
			s->bc = 0;
			s->bc_bytes = 0;
			s->timer_next_ns = rate_law_time_add(now, qcn_cycle(c, T, 0));
			s->started = 1;
		}
	}
	out->trace |= rate_law_trace(old, s->cr_Bps);
	qcn_rp_output(s, max_cwnd_bytes, mss, out);
}

/*
 * The interface of a law on this reaction point (kmod/law/README.md):
 * <name>_params_check, _max_cwnd, _init and _on_ack (law.h gives
 * _params_default from the table), the last two
 * through <name>_cfg, which builds the reaction point's configuration
 * from the law's parameters.
 */
#define QCN_RP_LAW(name, NAME)							\
LAW_INLINE int name##_params_check(const struct name##_params *p)	\
{									\
	NAME##_PARAMS(LAW_X_RANGE)					\
	return LAW_OK;							\
}									\
									\
LAW_INLINE __u64 name##_max_cwnd(const struct name##_params *p)	\
{									\
	return p->max_cwnd_bytes;					\
}									\
									\
LAW_INLINE void name##_init(struct name##_state *s,			\
			    const struct name##_params *p,		\
			    __u32 snd_nxt, __u32 mss, struct law_out *out) \
{									\
	struct qcn_rp_cfg c;						\
									\
	name##_cfg(&c, p);						\
	qcn_rp_init(&s->rp, &c, p->max_cwnd_bytes, mss, out);		\
}									\
									\
LAW_INLINE void name##_on_ack(struct name##_state *s,			\
			      const struct name##_params *p,		\
			      const struct law_ack *ack, struct law_out *out) \
{									\
	struct qcn_rp_cfg c;						\
									\
	name##_cfg(&c, p);						\
	qcn_rp_on_ack(&s->rp, &c, p->max_cwnd_bytes, ack, out);	\
}

/* qcn_params_check() ... qcn_on_ack(), qcn_t_params_check() ... */
QCN_RP_LAW(qcn, QCN)
QCN_RP_LAW(qcn_t, QCN_T)

#endif /* CCLAB_LAW_QCN_H */
