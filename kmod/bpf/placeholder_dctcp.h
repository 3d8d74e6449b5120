/* SPDX-License-Identifier: GPL-2.0 */
/*
 * TEMPORARY placeholder of the DCTCP law core, to prove the struct_ops glue
 * before kmod/law/ lands. Deleted when the glue switches to kmod/law/dctcp.h.
 */
#ifndef CCLAB_PLACEHOLDER_DCTCP_H
#define CCLAB_PLACEHOLDER_DCTCP_H

struct dctcp_params {
	__u32 g_shift;		/* g = 2^-g_shift */
	__u32 alpha_init;	/* scale 1024 */
};

struct dctcp_state {
	__u32 alpha;		/* scale 1024 */
	__u32 acked;
	__u32 marked;
	__u32 next_seq;
};

static inline struct dctcp_params dctcp_params_default(void)
{
	struct dctcp_params p = { .g_shift = 4, .alpha_init = 1024 };
	return p;
}

static inline int dctcp_params_check(const struct dctcp_params *p)
{
	if (p->g_shift < 1 || p->g_shift > 10)
		return -1;
	if (p->alpha_init > 1024)
		return -2;
	return 0;
}

static inline void dctcp_init(const struct dctcp_params *p, struct dctcp_state *s, __u32 snd_nxt)
{
	s->alpha = p->alpha_init;
	s->acked = 0;
	s->marked = 0;
	s->next_seq = snd_nxt;
}

static inline void dctcp_on_ack(const struct dctcp_params *p, struct dctcp_state *s,
				__u32 acked, int ece, __u32 snd_una, __u32 snd_nxt)
{
	s->acked += acked;
	if (ece)
		s->marked += acked;
	if ((__s32)(snd_una - s->next_seq) < 0)
		return;
	{
		__u32 frac = s->acked ? (__u64)s->marked * 1024 / s->acked : 0;
		__u32 a = s->alpha - (s->alpha >> p->g_shift) + (frac >> p->g_shift);

		s->alpha = a > 1024 ? 1024 : a;
	}
	s->acked = 0;
	s->marked = 0;
	s->next_seq = snd_nxt;
}

static inline __u32 dctcp_ssthresh(const struct dctcp_state *s, __u32 cwnd)
{
	__u32 t = cwnd - (__u32)(((__u64)cwnd * s->alpha) >> 11);

	return t < 2 ? 2 : t;
}

#endif
