/* SPDX-License-Identifier: GPL-2.0 */
/*
 * PFC detection at a switch (docs/lossless.md, "Counting an ingress queue
 * where the queue is at egress"; struct pfc_cfg in switch_maps.h).
 *
 * A switch's ingress queue i is the bytes that arrived on port i and still
 * sit in any of its egress queues. The queues are at egress, so the switch
 * counts, per (egress e, ingress i), the bytes that entered e from i and
 * have not left (ingress_bytes[e][i]); events get lost under load, so the
 * counts give only the split of the qdisc's own backlog:
 *   occupancy_i = sum over e of backlog_e * ingress_bytes[e][i] / total_e,
 * total_e = sum over j of ingress_bytes[e][j] (pfc_share is one term).
 *
 * Xoff: occupancy > Xoff, tested where it grows (enqueue); Xon: occupancy
 * <= Xon = Xoff - hysteresis (at least 0, so a drained queue resumes),
 * tested where it falls (dequeue). Xoff is static, or HPCC's dynamic one:
 * alpha of the free shared buffer, alpha * (B - used). Each crossing is
 * posted once: pfc_step gives the new state bit, which the caller
 * exchanges atomically. Headroom, the bytes still arriving after Xoff:
 * 2 x link delay x rate + 2 MTU. Tested in pfc_test.go.
 */
#ifndef CCLAB_PFC_H
#define CCLAB_PFC_H

#include "unit.h"

#define PFC_OFF		0	/* the port is not lossless */
#define PFC_STATIC	1	/* Xoff, Xon given in bytes */
#define PFC_DYNAMIC	2	/* Xoff = alpha * (B - used) */

#define PFC_NONE	0	/* no crossing */
#define PFC_XOFF	1	/* occupancy went above Xoff: pause upstream */
#define PFC_XON		2	/* occupancy fell to Xon: resume it */

#define PFC_PPM		1000000ULL
/* Backlogs are 32-bit; a count above this is scaled down with its total. */
#define PFC_PART_MAX	(1ULL << 32)

/*
 * Egress e's share of ingress i: backlog * part / total, with part the
 * bytes e counts from i and total from every ingress. 0 when e counts
 * nothing; the whole backlog when part >= total (a lost event left the
 * counts off). part < total < 2^32 after scaling, backlog < 2^32: the
 * product fits. No loop: the verifier walks this once per port.
 */
SW_INLINE __u64 pfc_share(__u64 backlog, __u64 part, __u64 total)
{
	if (!total || !part)
		return 0;
	if (part >= total)
		return backlog;
	/* Two steps of 16 bits take any 64-bit total below 2^32 (and leave
	 * it at least 2^16: the split keeps 5 digits). */
	if (total >= PFC_PART_MAX) {
		total >>= 16;
		part >>= 16;
	}
	if (total >= PFC_PART_MAX) {
		total >>= 16;
		part >>= 16;
	}
	if (backlog >= PFC_PART_MAX)
		backlog = PFC_PART_MAX - 1;
	return total ? backlog * part / total : 0;
}

/*
 * The Xoff threshold: static, or alpha_ppm / 10^6 of the free shared
 * buffer (0 when it is full: any occupancy pauses).
 */
SW_INLINE __u64 pfc_xoff(__u32 mode, __u64 xoff, __u32 alpha_ppm,
			 __u64 buffer, __u64 used)
{
	if (mode != PFC_DYNAMIC)
		return xoff;
	if (used >= buffer)
		return 0;
	if (alpha_ppm > PFC_PPM)
		alpha_ppm = PFC_PPM;
	/* buffer is a 32-bit limit here; a larger one is capped. */
	if (buffer - used >= PFC_PART_MAX)
		return (PFC_PART_MAX - 1) * alpha_ppm / PFC_PPM;
	return (buffer - used) * alpha_ppm / PFC_PPM;
}

/* Xon: Xoff minus the hysteresis, at least 0. */
SW_INLINE __u64 pfc_xon(__u64 xoff, __u64 hysteresis)
{
	return xoff > hysteresis ? xoff - hysteresis : 0;
}

/*
 * The crossing, if any, of an ingress queue in state paused (1: Xoff
 * posted) at occupancy occ: PFC_XOFF when not paused and occ > xoff,
 * PFC_XON when paused and occ <= xon, else PFC_NONE.
 */
SW_INLINE int pfc_step(__u32 paused, __u64 occ, __u64 xoff, __u64 xon)
{
	if (!paused && occ > xoff)
		return PFC_XOFF;
	if (paused && occ <= xon)
		return PFC_XON;
	return PFC_NONE;
}

/*
 * Headroom, bytes: what still arrives after Xoff, the pause's flight and
 * the data already on the wire (2 x delay x rate), plus the frame the
 * upstream is sending when the pause lands and the one being received
 * when Xoff is crossed (2 MTU).
 */
SW_INLINE __u64 pfc_headroom(__u64 delay_ns, __u32 rate_mbps, __u32 mtu)
{
	/* delay_ns * rate_mbps < 2^64 for delays under 584 s at 32 Tbit/s */
	return 2 * delay_ns * rate_mbps / 8000 + 2 * (__u64)mtu;
}

#endif /* CCLAB_PFC_H */
