/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The QCN congestion point of a switch port (802.1Qau; tcopt/README.md,
 * "QCN feedback"; struct port_cfg in switch_maps.h): about every
 * qcn_sample bytes entering the port (randomised by +-15 %), with Q the
 * bytes queued then and Qold at the last sample,
 * fb = -((Q - Qeq) + w (Q - Qold)), w = 2; when negative, |fb| capped at
 * Fb_max = (2w + 1) Qeq and quantised to 6 bits (1..63) is the feedback
 * for the sampled packet's flow; one that quantises to 0 is none.
 *
 * The sampling is a byte credit: each arriving packet takes its bytes
 * from it, the one that takes it from >= 0 to below 0 is sampled and adds
 * the next interval (the overshoot carries over, so samples stay one per
 * interval on average; a packet longer than an interval is sampled once
 * and the credit restarts after it). The credit's atomics and the random
 * draw are the caller's; the arithmetic is here. Tested in qcn_test.go.
 */
#ifndef CCLAB_QCN_CP_H
#define CCLAB_QCN_CP_H

#include "unit.h"
#include "../int_option.h"

#define QCN_W		2	/* the feedback weight w */
#define QCN_JITTER_PCT	15	/* intervals of qcn_sample * (85..115) / 100 */

/* Whether a packet of len bytes finding credit before crosses a sampling
 * point. */
SW_INLINE int qcn_cp_crossed(__s64 before, __u32 len)
{
	return before >= 0 && before - (__s64)len < 0;
}

/* The next interval, bytes, from a uniform 32-bit draw rnd. */
SW_INLINE __s64 qcn_cp_interval(__u64 every, __u32 rnd)
{
	return every * (100 - QCN_JITTER_PCT +
			rnd % (2 * QCN_JITTER_PCT + 1)) / 100;
}

/* What the sampled packet adds to the credit it left at after < 0: the
 * next interval, and the overshoot too when it exceeds that interval. */
SW_INLINE __s64 qcn_cp_refill(__s64 after, __s64 next)
{
	return after + next < 0 ? next - after : next;
}

/*
 * The quantised feedback (1..INT_QCN_FB_MAX) of a sample finding q bytes
 * queued, qold at the last sample, with the equilibrium qeq (> 0); 0 when
 * there is none (fb >= 0, or |fb| below one step of Fb_max / 63). Queue
 * lengths are 32-bit backlogs: |terms| < 2^34, and mag * 63 < 2^43.
 */
SW_INLINE __u8 qcn_cp_feedback(__u64 q, __u64 qold, __u64 qeq)
{
	__u64 fbmax, mag;
	__s64 fb;

	fb = -(((__s64)q - (__s64)qeq) + QCN_W * ((__s64)q - (__s64)qold));
	if (fb >= 0 || !qeq)
		return 0;
	fbmax = (2 * QCN_W + 1) * qeq;
	mag = (__u64)(-fb);
	if (mag > fbmax)
		mag = fbmax;
	return mag * INT_QCN_FB_MAX / fbmax;	/* fbmax >= 5 */
}

#endif /* CCLAB_QCN_CP_H */
