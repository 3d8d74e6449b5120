/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the rate-based laws (TIMELY, DCQCN, QCN, QCN-T) share: their rate
 * is the pacing rate, their window is only a cap (the papers' NICs have
 * none), and their rate steps and floor are given in kbit/s or, left 0,
 * as a fraction of the line rate (LAW_RATE_LAW_PARAMS in law_table.h).
 * Included by law.h.
 */
#ifndef CCLAB_LAW_RATE_LAW_H
#define CCLAB_LAW_RATE_LAW_H

/* The line rate in bytes/s, at least 1. */
LAW_INLINE __u64 rate_law_line_Bps(__u32 host_bw_mbps)
{
	return law_max64(law_mbps_to_Bps(host_bw_mbps), 1);
}

/* kbps in bytes/s (kbit/s = 125 bytes/s), or line / div when kbps is 0; at least 1. */
LAW_INLINE __u64 rate_law_Bps(__u32 kbps, __u32 host_bw_mbps, __u64 div)
{
	__u64 r = kbps ? (__u64)kbps * 125ULL :
		  rate_law_line_Bps(host_bw_mbps) / (div ? div : 1);

	return r ? r : 1;
}

/* The rate floor: min_rate_kbps, or 1 % of the line; at most the line. */
LAW_INLINE __u64 rate_law_floor_Bps(__u32 min_rate_kbps, __u32 host_bw_mbps)
{
	return law_min64(rate_law_Bps(min_rate_kbps, host_bw_mbps, 100),
			 rate_law_line_Bps(host_bw_mbps));
}

/* The starting rate: init_rate_kbps within [floor, line], or the line. */
LAW_INLINE __u64 rate_law_init_Bps(__u32 init_rate_kbps, __u32 min_rate_kbps,
				   __u32 host_bw_mbps)
{
	__u64 line = rate_law_line_Bps(host_bw_mbps);

	if (!init_rate_kbps)
		return line;
	return law_clamp64((__u64)init_rate_kbps * 125ULL,
			   rate_law_floor_Bps(min_rate_kbps, host_bw_mbps), line);
}

/* The trace of a rate change: dec, inc, or hold when it did not move. */
LAW_INLINE __u32 rate_law_trace(__u64 old_Bps, __u64 new_Bps)
{
	if (new_Bps < old_Bps)
		return LAW_TR_DECREASE;
	return new_Bps > old_Bps ? LAW_TR_INCREASE : LAW_TR_HOLD;
}

/* The output of a rate law: the cap as the window, the rate as pacing. */
LAW_INLINE void rate_law_output(struct law_out *out, __u64 rate_Bps,
				__u32 max_cwnd_bytes, __u32 mss)
{
	law_out_cwnd(out, max_cwnd_bytes, mss, law_max64(max_cwnd_bytes, mss), mss);
	out->pacing_rate = rate_Bps;
}

#endif /* CCLAB_LAW_RATE_LAW_H */
