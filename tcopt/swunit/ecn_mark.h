/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ECN marking at a switch port's dequeue: whether a packet leaving with
 * qlen bytes queued behind it is CE-marked (the profile is struct
 * port_cfg's, switch_maps.h):
 *  - step (DCTCP), kmax == 0: CE when qlen > K (kmin); K == 0: off.
 *  - RED (DCQCN), kmax != 0: qlen <= Kmin: never; Kmin < qlen <= Kmax:
 *    with probability pmax_ppm / 10^6 * (qlen - Kmin) / (Kmax - Kmin);
 *    qlen > Kmax: always (also when Kmax <= Kmin: a step at Kmin).
 *
 * The core gives the probability in units of 2^-32 (ECN_P32_ONE is
 * certain, 0 never); the caller draws a uniform 32-bit number only when
 * it lies between, and marks when the number is below it
 * (ecn_mark_draw). Tested against the curve in ecn_test.go.
 */
#ifndef CCLAB_ECN_MARK_H
#define CCLAB_ECN_MARK_H

#include "unit.h"

#define ECN_PPM		1000000U
#define ECN_MASK	0x03	/* the ECN field of the IPv4 TOS byte */
#define ECN_CE		0x03
#define ECN_P32_ONE	(1ULL << 32)
/* RED's fraction of the way from Kmin to Kmax, in units of 2^-20; a
 * distance past Kmin beyond 2^40 bytes is treated as past Kmax. */
#define RED_FRAC_BITS	20
#define RED_MAX_DELTA	(1ULL << 40)

/*
 * The marking probability, in units of 2^-32, of a packet leaving with
 * qlen bytes behind it under the profile (kmin, kmax, pmax_ppm).
 *
 * RED in integers: frac = 2^20 (q - Kmin) / (Kmax - Kmin) is in [0, 2^20]
 * (Kmin < q <= Kmax there, so the divisor is not 0), and
 * p32 = frac * ppm * 2^12 / 10^6 (frac * ppm <= 2^20 * 10^6 < 2^40: no
 * overflow). frac is rounded down: p32 is at most 2^-20 of certainty
 * below the exact curve, plus one unit.
 */
SW_INLINE __u64 ecn_mark_p32(__u64 kmin, __u64 kmax, __u64 ppm, __u64 qlen)
{
	__u64 delta, frac;

	if (!kmax)			/* step at K (DCTCP); K 0: off */
		return kmin && qlen > kmin ? ECN_P32_ONE : 0;
	if (qlen <= kmin)
		return 0;
	if (qlen > kmax)		/* also when Kmax <= Kmin: a step */
		return ECN_P32_ONE;
	if (ppm > ECN_PPM)
		ppm = ECN_PPM;
	delta = qlen - kmin;		/* <= kmax - kmin, which is > 0 */
	if (delta > RED_MAX_DELTA)	/* qlen is a 32-bit backlog: never */
		return ECN_P32_ONE;
	frac = (delta << RED_FRAC_BITS) / (kmax - kmin);
	return ((frac * ppm) << (32 - RED_FRAC_BITS)) / ECN_PPM;
}

/* Whether a draw rnd (uniform over 32 bits) marks at probability p32. */
SW_INLINE int ecn_mark_draw(__u64 p32, __u32 rnd)
{
	return (__u64)rnd < p32;
}

/* Whether a packet of this TOS byte can be marked: ECN-capable (ECT(0)
 * or ECT(1)) and not marked already. */
SW_INLINE int ecn_markable(__u8 tos)
{
	return (tos & ECN_MASK) != 0 && (tos & ECN_MASK) != ECN_CE;
}

#endif /* CCLAB_ECN_MARK_H */
