/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Variable Additive Increase and Sampling Frequency (Fast Convergence to
 * Fairness, Algorithms 1-2 and section V): options of HPCC and Swift, off
 * unless enabled by parameter. Included by law.h.
 *
 * "Measured congestion" is the law's: HPCC the largest queue (bytes) seen
 * in an RTT, Swift the largest delay (ns). Tokens are made once per RTT;
 * the AI multiplier spends them when the law adjusts its reference window.
 */
#ifndef CCLAB_LAW_VAI_H
#define CCLAB_LAW_VAI_H

#define VAI_BANK_CAP_MAX	1000000U
#define VAI_DAMPENER_MAX	1000000U
#define VAI_SF_ACKS_MAX		100000U

struct vai_params {
	__u32 enable;		/* Variable AI: 0 off (default), 1 on */
	__u32 sf_acks;		/* Sampling Frequency: decrease every N ACKs, 0 off */
	__u64 token_thresh;	/* Token_Thresh (law units), 0 = law's auto value */
	__u64 ai_div;		/* AI_DIV: congestion per token (law units) */
	__u32 bank_cap;		/* Bank_Cap, tokens (1000) */
	__u32 ai_cap;		/* AI_Cap, tokens spent per adjustment at most (100) */
	__u32 dampener_const;	/* Dampener_Constant (8) */
	__u32 pad;
};

struct vai_state {
	__u64 cong_max;		/* measured congestion this RTT (law units) */
	__u32 bank;		/* AI_Bank, tokens */
	__u32 dampener;
	__u32 congested;	/* congestion (MD condition) seen this RTT */
	__u32 acks_since_dec;	/* SF: ACKs since the last decrease point */
};


/* The relation between VAI's parameters (ranges: law_table.h). */
LAW_INLINE int vai_params_check(const struct vai_params *v)
{
	return v->ai_cap > v->bank_cap ? LAW_E_VAI_AI_CAP : LAW_OK;
}

/* Per ACK: note the measured congestion and whether the law saw congestion. */
LAW_INLINE void vai_observe(struct vai_state *st, __u64 cong, int congested)
{
	if (cong > st->cong_max)
		st->cong_max = cong;
	if (congested)
		st->congested = 1;
}

/* Algorithm 1, at the end of an RTT; thresh > 0 (Token_Thresh). */
LAW_SUBPROG int vai_rtt_end(struct vai_state *st, const struct vai_params *v,
			     __u64 thresh)
{
	__u64 cong;

	if (!st || !v)
		return 0;
	cong = st->cong_max;
	if (!thresh)
		thresh = 1;
	if (cong > thresh) {
		__u64 bank = st->bank + cong / (v->ai_div ? v->ai_div : 1);

		st->bank = (__u32)law_min64(bank, v->bank_cap);
		st->dampener = (__u32)law_min64(st->dampener + cong / thresh,
						VAI_DAMPENER_MAX);
	} else if (st->bank == 0) {
		if (!st->congested)
			st->dampener = 0;
		else if (cong < thresh && st->dampener > 0)
			st->dampener--;
	}
	st->cong_max = 0;
	st->congested = 0;
	return 0;
}

/*
 * Algorithm 2: the number of base AI steps to add now (>= 1). spend: this
 * is a rate adjustment, so the tokens leave the bank.
 */
LAW_SUBPROG __u64 vai_tokens(struct vai_state *st, const struct vai_params *v,
			     int spend)
{
	__u64 tokens, c;

	if (!st || !v || !v->enable)
		return 1;
	c = v->dampener_const ? v->dampener_const : 1;
	tokens = law_min64(v->ai_cap, st->bank);
	if (spend)
		st->bank -= (__u32)tokens;
	/* tokens / (dampener / c + 1) == tokens * c / (dampener + c) */
	tokens = tokens * c / (st->dampener + c);
	return tokens ? tokens : 1;
}

/* SF: count an ACK; true when a sampling-period decrease point is reached. */
LAW_INLINE int vai_sf_point(struct vai_state *st, const struct vai_params *v)
{
	if (!v->sf_acks)
		return 0;
	if (st->acks_since_dec < VAI_SF_ACKS_MAX)
		st->acks_since_dec++;
	return st->acks_since_dec >= v->sf_acks;
}

#endif /* CCLAB_LAW_VAI_H */
