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

/*
 * Timers on the ACK clock (DCQCN, QCN, QCN-T). An expiry is a time in ns;
 * one that would fall at or past the clock's end (2^64 - 1 ns) saturates
 * there, at RATE_LAW_NEVER, and never comes: the timers read the time of
 * an ACK through rate_law_now(), which is at most RATE_LAW_NEVER - 1.
 * (Before 2026-11-28 an ACK at the clock's last nanosecond found a timer
 * saturated there expired on every turn of the event loop, up to the
 * per-ACK cap of increase events.)
 */
#define RATE_LAW_NEVER	(~0ULL)

/* t + d, saturated at RATE_LAW_NEVER. */
LAW_INLINE __u64 rate_law_time_add(__u64 t, __u64 d)
{
	return t > RATE_LAW_NEVER - d ? RATE_LAW_NEVER : t + d;
}

/*
 * A timer with its next expiry at next has expired by now, now being a
 * rate_law_now(): one comparison (a second one, per turn of an event
 * loop, multiplied the paths the BPF verifier walks).
 */
LAW_INLINE int rate_law_due(__u64 now, __u64 next)
{
	return now >= next;
}

/*
 * The ACK's time as the timers read it: the clock's last nanosecond,
 * RATE_LAW_NEVER, reads as the one before, so that a timer saturated
 * there is never due.
 */
LAW_INLINE __u64 rate_law_now(const struct law_ack *ack)
{
	__u64 x = ~ack->now_ns;	/* 0 only at the clock's last nanosecond */
	__u64 nz;

	/*
	 * Branch-free, so that the verifier walks one path: nz = (x != 0),
	 * from sums that cannot overflow.
	 */
	LAW_OPAQUE(x);
	nz = ((x >> 1) + (x & 1) + (RATE_LAW_NEVER >> 1)) >> 63;
	return ack->now_ns - (1 - nz);
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
