/* SPDX-License-Identifier: GPL-2.0 */
/*
 * TCD's ternary port state (docs/lossless.md, "TCD: what is built"):
 * an egress port, judged for each packet as it leaves with q bytes
 * queued behind it, is
 *
 *	non-congestion	q <= K
 *	undetermined	q > K, and the port is paused, or its current ON
 *			period is shorter than max(T_on):
 *			now - last_xon_ns < max_ton_ns
 *	congestion	q > K otherwise (no pause for max(T_on))
 *
 * So the undetermined state is entered at once with a pause and left
 * only after max(T_on) of continuous ON, as the TCD fragment describes:
 * an ON period T_on much shorter than max(T_on) keeps the port
 * undetermined through the whole ON-OFF pattern ("limited late detection
 * on the leave from the undetermined state (no more than max(T_on)
 * time)"); one much longer lets it become congested between pauses ("may
 * switch between the undetermined state and non-congestion/congestion
 * state at a low frequency"). The rule itself is cclab's reading: the
 * fragment does not hold the paper's detection algorithm.
 *
 * paused and last_xon_ns are the port's PFC state (struct port_state),
 * written by the pause controller; last_xon_ns 0 is a port never paused
 * (no ON period to time). A last_xon_ns ahead of now (written
 * by another CPU after this packet read the clock) is an ON period that
 * has just begun: undetermined. Pure; tested in tcd_test.go.
 */
#ifndef CCLAB_TCD_STATE_H
#define CCLAB_TCD_STATE_H

#include "unit.h"

enum tcd_state {
	TCD_NON_CONGESTION = 0,
	TCD_UNDETERMINED = 1,	/* the packet gets U, not CE */
	TCD_CONGESTION = 2,	/* the packet may get CE (the ECN profile) */
};

SW_INLINE enum tcd_state tcd_port_state(__u64 qlen, __u64 k, __u32 paused,
					__u64 last_xon_ns, __u64 now,
					__u64 max_ton_ns)
{
	if (qlen <= k)
		return TCD_NON_CONGESTION;
	if (paused)
		return TCD_UNDETERMINED;
	if (last_xon_ns && (now < last_xon_ns || now - last_xon_ns < max_ton_ns))
		return TCD_UNDETERMINED;
	return TCD_CONGESTION;
}

#endif /* CCLAB_TCD_STATE_H */
