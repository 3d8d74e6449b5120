/* SPDX-License-Identifier: GPL-2.0 */
/*
 * reno_int: the template of a new law (docs/architecture.md, "How to add
 * a law"; kmod/law/newlaw adds it to a copy of the tree and runs it).
 * Reno's window, halved once per window when the INT echo reports a
 * queue above qlen_thresh_bytes at any hop; without a fresh echo it is
 * plain Reno. Its signal is the largest queue of the echo, in bytes.
 */
#ifndef CCLAB_LAW_RENO_INT_H
#define CCLAB_LAW_RENO_INT_H

struct reno_int_params {
	__u32 qlen_thresh_bytes;	/* a hop queue above this halves the window */
	__u32 init_cwnd_segs;		/* initial window, segments */
	__u32 max_cwnd_bytes;		/* window cap */
	__u32 pad;
	__u64 int_max_age_ns;		/* an older echo is stale: ignored */
};

struct reno_int_state {
	__u64 cwnd;		/* bytes */
	__u64 ssthresh;		/* bytes */
	__u64 ca_acc;		/* congestion avoidance byte accumulator */
	__u64 qlen;		/* the last fresh echo's largest queue, bytes */
	__u32 cwr_end;		/* no new cut until snd_una passes this */
	__u32 in_cwr;
};

LAW_INLINE __u64 reno_int_max_cwnd(const struct reno_int_params *p)
{
	return p->max_cwnd_bytes;
}

LAW_INLINE int reno_int_params_check(const struct reno_int_params *p)
{
	RENO_INT_PARAMS(LAW_X_RANGE)
	if ((__u64)p->init_cwnd_segs * LAW_MSS_MAX > p->max_cwnd_bytes)
		return LAW_E_INIT_CWND;
	return LAW_OK;
}

LAW_INLINE void reno_int_output(struct reno_int_state *s, const struct reno_int_params *p,
				__u32 mss, struct law_out *out)
{
	s->cwnd = law_out_cwnd(out, s->cwnd, mss, law_max64(p->max_cwnd_bytes, mss), mss);
	out->pacing_rate = LAW_PACING_NONE;
	out->signal_ppm = s->qlen;
}

LAW_INLINE void reno_int_init(struct reno_int_state *s, const struct reno_int_params *p,
			      __u32 snd_nxt, __u32 mss, struct law_out *out)
{
	__builtin_memset(s, 0, sizeof(*s));
	if (!mss || mss > LAW_MSS_MAX)
		mss = LAW_MSS_DEFAULT;
	s->cwnd = (__u64)law_max64(p->init_cwnd_segs, 1) * mss;
	s->ssthresh = LAW_CWND_CAP_MAX;
	out->trace = LAW_TR_INIT;
	reno_int_output(s, p, mss, out);
}

/* The largest queue of a fresh echo, or -1 without one. */
LAW_INLINE __s64 reno_int_qlen(const struct reno_int_params *p, const struct law_ack *ack)
{
	const struct int_echo *e = ack->echo;
	__u64 q = 0;
	int i;

	if (!e || !e->nhops || ack->now_ns < e->arrived_ns ||
	    ack->now_ns - e->arrived_ns > p->int_max_age_ns)
		return -1;
	for (i = 0; i < INT_MAX_HOPS; i++) {
		if (i >= e->nhops)
			break;
		q = law_max64(q, e->hop[i].qlen);
	}
	return (__s64)q;
}

LAW_INLINE void reno_int_on_ack(struct reno_int_state *s, const struct reno_int_params *p,
				const struct law_ack *ack, struct law_out *out)
{
	__u32 mss = law_mss(ack);
	__u64 acked = ack->acked_bytes;
	__u64 old = s->cwnd;
	__s64 q = reno_int_qlen(p, ack);

	out->trace = q < 0 ? LAW_TR_NO_INT : 0;
	if (q >= 0)
		s->qlen = (__u64)q;
	if (s->in_cwr && !law_seq_after(s->cwr_end, ack->snd_una))
		s->in_cwr = 0;
	if (q > (__s64)p->qlen_thresh_bytes && !s->in_cwr) {
		s->cwnd = law_max64(law_min64(s->cwnd, LAW_CWND_CAP_MAX) / 2, mss);
		s->ssthresh = s->cwnd;
		s->cwr_end = ack->snd_nxt;
		s->in_cwr = 1;
		s->ca_acc = 0;
	} else if (ack->flags & LAW_ACK_NOT_CWND_LIMITED) {
		out->trace |= LAW_TR_HOLD;
	} else if (!s->in_cwr && acked) {
		s->cwnd = law_reno_grow(s->cwnd, s->ssthresh, &s->ca_acc, acked, mss);
	}
	reno_int_output(s, p, mss, out);
	out->trace |= law_tr_change(old, s->cwnd);
}

#endif /* CCLAB_LAW_RENO_INT_H */
