/* SPDX-License-Identifier: GPL-2.0 */
/*
 * DCTCP (Alizadeh et al., SIGCOMM 2010; RFC 8257), the datacenter baseline,
 * as a complete window law:
 *	per window of data: F = marked bytes / acked bytes,
 *	  alpha = (1 - g) * alpha + g * F, g = 2^-g_shift (1/16);
 *	on the first ECN-Echo of a window: cwnd = cwnd * (1 - alpha / 2),
 *	  then no further cut until that window (snd_nxt at the cut) is acked;
 *	otherwise Reno growth: slow start below ssthresh, then one segment
 *	  per window, only while the window limits sending
 *	  (LAW_ACK_NOT_CWND_LIMITED clear), as the kernel's Reno.
 * Losses are the glue's (the kernel's ssthresh path). No pacing.
 * Included by law.h.
 */
#ifndef CCLAB_LAW_DCTCP_H
#define CCLAB_LAW_DCTCP_H

struct dctcp_params {
	__u32 g_shift;		/* g = 2^-g_shift (4: 1/16) */
	__u32 alpha_init_ppm;	/* alpha before the first window (1.0) */
	__u32 init_cwnd_segs;	/* initial window, segments (10) */
	__u32 max_cwnd_bytes;	/* window cap */
};

struct dctcp_state {
	__u64 cwnd;		/* bytes */
	__u64 ssthresh;		/* bytes */
	__u64 alpha_ppm;	/* alpha */
	__u64 win_acked;	/* bytes acked in this observation window */
	__u64 win_marked;	/* of those, bytes acked with ECE */
	__u64 ca_acc;		/* congestion avoidance byte accumulator */
	__u32 win_end;		/* snd_nxt when the observation window began */
	__u32 cwr_end;		/* no new cut until snd_una passes this */
	__u32 in_cwr;
	__u32 pad;
};

/* The window cap in force: the replay's and the tests' bound. */
LAW_INLINE __u64 dctcp_max_cwnd(const struct dctcp_params *p)
{
	return p->max_cwnd_bytes;
}

LAW_INLINE int dctcp_params_check(const struct dctcp_params *p)
{
	DCTCP_PARAMS(LAW_X_RANGE)
	if ((__u64)p->init_cwnd_segs * LAW_MSS_MAX > p->max_cwnd_bytes)
		return LAW_E_INIT_CWND;
	return LAW_OK;
}

LAW_INLINE void dctcp_output(struct dctcp_state *s, const struct dctcp_params *p,
			     __u32 mss, struct law_out *out)
{
	s->cwnd = law_out_cwnd(out, s->cwnd, mss,
			       law_max64(p->max_cwnd_bytes, mss), mss);
	out->pacing_rate = LAW_PACING_NONE;
	out->signal_ppm = s->alpha_ppm;
}

LAW_INLINE void dctcp_init(struct dctcp_state *s, const struct dctcp_params *p,
			   __u32 snd_nxt, __u32 mss, struct law_out *out)
{
	__builtin_memset(s, 0, sizeof(*s));
	if (!mss || mss > LAW_MSS_MAX)
		mss = LAW_MSS_DEFAULT;
	s->cwnd = (__u64)law_max64(p->init_cwnd_segs, 1) * mss;
	s->ssthresh = LAW_CWND_CAP_MAX;
	s->alpha_ppm = law_min64(p->alpha_init_ppm, LAW_PPM);
	s->win_end = snd_nxt;
	out->trace = LAW_TR_INIT;
	dctcp_output(s, p, mss, out);
}

/* alpha = (1 - g) * alpha + g * F, F = marked / acked (ppm). */
LAW_INLINE __u64 dctcp_alpha(__u64 alpha_ppm, __u64 acked, __u64 marked,
			     __u32 g_shift)
{
	__u64 f = acked ? law_min64(marked, acked) * LAW_PPM / acked : 0;
	__u32 g = g_shift > 16 ? 16 : g_shift;

	alpha_ppm = law_min64(alpha_ppm, LAW_PPM);
	return alpha_ppm - (alpha_ppm >> g) + (f >> g);
}

LAW_INLINE void dctcp_on_ack(struct dctcp_state *s, const struct dctcp_params *p,
			     const struct law_ack *ack, struct law_out *out)
{
	__u32 mss = law_mss(ack);
	__u64 acked = ack->acked_bytes;
	__u64 marked = law_min64(ack->ece_bytes, acked);
	__u64 old = s->cwnd;
	int ece = marked > 0 || (ack->flags & LAW_ACK_ECE);

	out->trace = 0;
	if (ece)
		out->trace |= LAW_TR_ECE;
	s->win_acked = law_min64(s->win_acked + acked, LAW_CWND_CAP_MAX << 4);
	s->win_marked = law_min64(s->win_marked + marked, s->win_acked);
	/* A window of data acknowledged: update alpha. */
	if (!law_seq_after(s->win_end, ack->snd_una)) {
		s->alpha_ppm = dctcp_alpha(s->alpha_ppm, s->win_acked,
					   s->win_marked, p->g_shift);
		s->win_acked = 0;
		s->win_marked = 0;
		s->win_end = ack->snd_nxt;
		out->trace |= LAW_TR_RTT_UPDATE;
	}
	if (s->in_cwr && !law_seq_after(s->cwr_end, ack->snd_una))
		s->in_cwr = 0;
	if (ece && !s->in_cwr) {
		/* cwnd = cwnd * (1 - alpha / 2), once per window. */
		s->cwnd = law_min64(s->cwnd, LAW_CWND_CAP_MAX) *
			  (2 * LAW_PPM - s->alpha_ppm) / (2 * LAW_PPM);
		s->cwnd = law_max64(s->cwnd, mss);
		s->ssthresh = s->cwnd;
		s->cwr_end = ack->snd_nxt;
		s->in_cwr = 1;
		s->ca_acc = 0;
	} else if (ack->flags & LAW_ACK_NOT_CWND_LIMITED) {
		out->trace |= LAW_TR_HOLD;
	} else if (!s->in_cwr && acked) {
		s->cwnd = law_reno_grow(s->cwnd, s->ssthresh, &s->ca_acc, acked, mss);
	}
	dctcp_output(s, p, mss, out);
	out->trace |= law_tr_change(old, s->cwnd);
}

#endif /* CCLAB_LAW_DCTCP_H */
