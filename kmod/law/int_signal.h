/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The INT side shared by the telemetry laws (PowerTCP, HPCC): the previous
 * echo a law keeps, and the checks that decide whether a new echo can be
 * paired with it. A law holds its window whenever this says no.
 * Included by law.h.
 */
#ifndef CCLAB_LAW_INT_SIGNAL_H
#define CCLAB_LAW_INT_SIGNAL_H

/* The hop records of the last echo a law used (prevInt / L in the papers). */
struct int_prev {
	struct int_hop hop[INT_MAX_HOPS];
	__u64 arrived_ns;	/* echo arrival time, our clock */
	__u32 count;		/* echo count on the socket */
	__u8 nhops;
	__u8 valid;		/* 0 until the first usable echo */
	__u16 pad;
};

LAW_INLINE int int_hop_rate_ok(__u32 mbps)
{
	return mbps >= 1 && mbps <= LAW_RATE_MAX_MBPS;
}

/*
 * A port cannot send faster than its rate: a txBytes delta above twice
 * rate * dt (room for the 128-byte / 256-ns quantisation) is a counter
 * reset or a foreign record, not a measurement. That is
 *	dtx <= 2 * floor(rate * dt / 8000) + 2 * INT_TX_UNIT,
 * computed without a division (one per hop and ACK in BPF, where clang
 * keeps divisions by constants): for k >= 0, k <= floor(a / b) exactly
 * when k * b <= a, with k = ceil((dtx - 2 * INT_TX_UNIT) / 2).
 */
LAW_INLINE int int_tx_plausible(__u64 dtx, __u64 dt_ns, __u32 rate_mbps)
{
	/* dtx < 2^25 (a masked delta): k * 8000 < 2^38; rate * dt < 2^46 */
	if (dtx <= 2 * INT_TX_UNIT)
		return 1;
	return ((dtx - 2 * INT_TX_UNIT + 1) >> 1) * 8000 <= (__u64)rate_mbps * dt_ns;
}

/*
 * Can echo e be paired with prev? 0 if so, else the LAW_TR_* reason.
 * Missing, stale, repeated, malformed or path-changed echoes are refused.
 */
LAW_SUBPROG __u32 int_sig_check(const struct int_prev *prev,
				const struct int_echo *e, __u64 now_ns,
				__u64 max_age_ns)
{
	__u64 gap;
	int i;

	if (!prev)
		return LAW_TR_INT_BAD;
	if (!e || e->nhops == 0)
		return LAW_TR_NO_INT;
	if (e->nhops > INT_MAX_HOPS)
		return LAW_TR_INT_BAD;
	if (now_ns > e->arrived_ns && now_ns - e->arrived_ns > max_age_ns)
		return LAW_TR_INT_STALE;
	for (i = 0; i < INT_MAX_HOPS && i < e->nhops; i++)
		if (!int_hop_rate_ok(e->hop[i].rate_mbps))
			return LAW_TR_INT_BAD;
	if (!prev->valid)
		return LAW_TR_INT_PATH;
	if (prev->count == e->count)
		return LAW_TR_INT_SAME;
	if (prev->nhops != e->nhops)
		return LAW_TR_INT_PATH;
	for (i = 0; i < INT_MAX_HOPS && i < e->nhops; i++)
		if (prev->hop[i].rate_mbps != e->hop[i].rate_mbps)
			return LAW_TR_INT_PATH;
	/*
	 * Beyond half a wrap period the deltas are ambiguous (tcopt/README.md):
	 * ts wraps every 67 ms, txBytes every 32 MiB, i.e. sooner on fast
	 * ports (2.7 ms at 100 Gbit/s). Measured by our own clock.
	 */
	if (e->arrived_ns < prev->arrived_ns)
		return LAW_TR_INT_BAD;
	gap = e->arrived_ns - prev->arrived_ns;
	if (gap > INT_TS_WRAP / 2)
		return LAW_TR_INT_BAD;
	/*
	 * gap > half the time the port takes to wrap txBytes, i.e.
	 * floor(INT_TX_WRAP * 8000 / rate / 2) ns, without the division: gap > floor(a / r) exactly when gap * r > a
	 * (rates checked >= 1 above; gap <= 2^25, rate < 2^20).
	 */
	for (i = 0; i < INT_MAX_HOPS && i < e->nhops; i++)
		if (gap * e->hop[i].rate_mbps > INT_TX_WRAP * 4000ULL)
			return LAW_TR_INT_BAD;
	return 0;
}

/* Remember e as the new prev (a no-op for an echo int_sig_check refuses whole). */
LAW_SUBPROG int int_prev_store(struct int_prev *prev, const struct int_echo *e)
{
	int i;

	if (!prev || !e || e->nhops == 0 || e->nhops > INT_MAX_HOPS)
		return 0;
	for (i = 0; i < INT_MAX_HOPS; i++) {
		if (i < e->nhops) {
			prev->hop[i] = e->hop[i];
		} else {
			prev->hop[i].qlen = 0;
			prev->hop[i].tx_bytes = 0;
			prev->hop[i].ts = 0;
			prev->hop[i].rate_mbps = 0;
		}
	}
	prev->arrived_ns = e->arrived_ns;
	prev->count = e->count;
	prev->nhops = e->nhops;
	prev->valid = 1;
	return 0;
}

/* Is this trace reason one after which the new echo should become prev? */
LAW_INLINE int int_sig_restart(__u32 reason)
{
	return reason == LAW_TR_INT_PATH || reason == LAW_TR_INT_BAD;
}

#endif /* CCLAB_LAW_INT_SIGNAL_H */
