/* SPDX-License-Identifier: GPL-2.0 */
/*
 * PFC detection in the INT switch (docs/lossless.md, "Counting an ingress
 * queue where the queue is at egress"): the switch.bpf.c programs call
 * pfc_enqueue when a packet enters a port's qdisc and pfc_dequeue when one
 * leaves it (transmitted or dropped), with the packet's ingress ifindex
 * (skb_iif, which forwarding keeps) and the qdisc's backlog after the
 * event. The arithmetic is the unit tcopt/swunit/pfc.h; the maps are
 * switch_maps.h's (pfc_cfgs, pfc_states, ingress_bytes, pfc_members,
 * pfc_ifaces, sw_used, pfc_events).
 *
 * The counts give the split, the qdisc's backlog the total
 * (pfc_occupancy); a row is zeroed whenever its port's backlog reads 0,
 * so counts that lost an event do not skew the split for long. Xoff is
 * tested at enqueue, Xon at dequeue; an atomic compare-and-swap of the
 * ingress port's state bit posts each crossing once to pfc_events.
 */
#ifndef CCLAB_SWITCH_PFC_H
#define CCLAB_SWITCH_PFC_H

#include "switch_maps.h"
#include "../swunit/pfc.h"

/* *v -= d, not below 0 (a count that lost its enqueue event). */
static __always_inline void pfc_sub(__u64 *v, __u64 d)
{
	__u64 old, new;
	int i;

	for (i = 0; i < 4; i++) {
		old = *(volatile __u64 *)v;
		new = old > d ? old - d : 0;
		if (__sync_val_compare_and_swap(v, old, new) == old)
			return;
	}
}

/* Count the port's new backlog into its switch's used buffer: the deltas
 * of an exchange add up to the sum of the last backlogs, whatever the
 * order CPUs see them in. */
static __always_inline void pfc_note_backlog(struct pfc_switch *sw,
					     struct pfc_state *est,
					     __u64 backlog)
{
	__u64 old = __sync_lock_test_and_set(&est->seen_backlog, backlog);

	__sync_fetch_and_add(&sw->used, backlog - old);
}

/* The count of egress slot e from local ingress port l. */
static __always_inline __u64 *pfc_count(__u32 e, __u32 l)
{
	__u32 key = e * PFC_MAX_LOCAL + l;

	return bpf_map_lookup_elem(&ingress_bytes, &key);
}

/* Ingress local port il's occupancy: its share of every egress queue of
 * switch swi (nports ports). */
static __always_inline __u64 pfc_occupancy(__u32 swi, __u32 nports, __u32 il)
{
	struct pfc_state *st;
	__u32 l, key, *slot;
	__u64 occ = 0, *part;

	for (l = 0; l < PFC_MAX_LOCAL; l++) {
		if (l >= nports)
			break;
		key = swi * PFC_MAX_LOCAL + l;
		slot = bpf_map_lookup_elem(&pfc_members, &key);
		if (!slot)
			break;
		st = bpf_map_lookup_elem(&pfc_states, slot);
		part = pfc_count(*slot, il);
		if (!st || !part)
			continue;
		occ += pfc_share(*(volatile __u64 *)&st->seen_backlog,
				 *(volatile __u64 *)part,
				 *(volatile __u64 *)&st->ingress_total);
	}
	return occ;
}

/* Post a crossing of ingress slot i (state ist) once: the one CPU whose
 * compare-and-swap flips the state bit posts it. */
static __always_inline void pfc_post(__u32 i, struct pfc_state *ist, int kind,
				     __u64 occ, __u64 threshold)
{
	struct pfc_event *ev;
	__u32 from = kind == PFC_XOFF ? 0 : 1;

	/* Before the flip, so that a CPU that sees the pause sees its
	 * threshold (the CAS orders the store; the readers' two plain loads
	 * are ordered on x86, not on weakly ordered CPUs). A racing crossing
	 * writes nearly the same threshold. */
	if (kind == PFC_XOFF)
		*(volatile __u64 *)&ist->xoff_at = threshold;
	if (__sync_val_compare_and_swap(&ist->paused, from, !from) != from)
		return;
	__sync_fetch_and_add(kind == PFC_XOFF ? &ist->xoffs : &ist->xons, 1);
	ev = bpf_ringbuf_reserve(&pfc_events, sizeof(*ev), 0);
	if (!ev) {
		__sync_fetch_and_add(&ist->lost_events, 1);
		return;
	}
	ev->ns = bpf_ktime_get_ns();
	ev->occupancy = occ;
	ev->threshold = threshold;
	ev->port = i;
	ev->kind = kind;
	bpf_ringbuf_submit(ev, 0);
}

/* The ingress port (slot, config, state) of a packet that came in on
 * ifindex iif of switch swi; 0 when it did not come from one of its ports
 * (sent by the switch itself). */
static __always_inline int pfc_ingress(__u32 swi, __u32 iif, __u32 *slot,
				       struct pfc_cfg **cfg,
				       struct pfc_state **st)
{
	struct pfc_iface k = { .sw = swi, .ifindex = iif };
	__u32 *s;

	if (!iif)
		return 0;
	s = bpf_map_lookup_elem(&pfc_ifaces, &k);
	if (!s)
		return 0;
	*slot = *s;
	*cfg = bpf_map_lookup_elem(&pfc_cfgs, s);
	*st = bpf_map_lookup_elem(&pfc_states, s);
	return *cfg && *st && (*cfg)->local < PFC_MAX_LOCAL;
}

/* Xoff, Xon of ingress port icfg on its switch now (pfc.h). */
static __always_inline __u64 pfc_thresholds(struct pfc_cfg *icfg,
					    struct pfc_switch *sw, __u64 *xon)
{
	__u64 xoff = pfc_xoff(icfg->mode, icfg->xoff, icfg->alpha_ppm,
			      sw->buffer, *(volatile __u64 *)&sw->used);

	*xon = icfg->mode == PFC_DYNAMIC ? pfc_xon(xoff, icfg->hysteresis)
					 : icfg->xon;
	return xoff;
}

#ifdef SWITCH_CLASSIC
/*
 * The classic build (kernels without tcx) has no PFC and no TCD: Debian
 * 6.1's verifier refused its programs (E2BIG) once they were in, and the
 * loader refuses both in that mode (Config.validate).
 */
static __always_inline void pfc_account(__u32 e, __u32 iif, __u32 len,
					__u64 backlog, int enq)
{
}

static __always_inline void pfc_dequeue_unseen(__u32 e, __u64 backlog)
{
}
#else
/*
 * Local ingress port l of switch swi, whose counts at a drained egress
 * were just zeroed: post its Xon if it is paused and its occupancy is at
 * or below Xon now. A global function, so that the verifier checks it
 * once, not in every caller's state (its loop in the drain's loop).
 */
__noinline int pfc_xon_drained(__u32 swi, __u32 l)
{
	struct pfc_switch *sw;
	struct pfc_cfg *icfg;
	struct pfc_state *ist;
	__u32 key, *slot;
	__u64 occ, xoff, xon;

	if (l >= PFC_MAX_LOCAL)
		return 0;
	sw = bpf_map_lookup_elem(&sw_used, &swi);
	key = swi * PFC_MAX_LOCAL + l;
	slot = bpf_map_lookup_elem(&pfc_members, &key);
	if (!sw || !slot)
		return 0;
	icfg = bpf_map_lookup_elem(&pfc_cfgs, slot);
	ist = bpf_map_lookup_elem(&pfc_states, slot);
	if (!icfg || !ist || !*(volatile __u32 *)&ist->paused)
		return 0;
	occ = pfc_occupancy(swi, sw->nports, l);
	xoff = pfc_thresholds(icfg, sw, &xon);
	if (pfc_step(1, occ, xoff, xon) == PFC_XON)
		pfc_post(*slot, ist, PFC_XON, occ, xon);
	return 0;
}

/*
 * Egress slot e of switch swi (nports ports) drained: what its counts
 * still hold was lost events (a dequeue the transmit tracepoint missed).
 * The ingress ports whose bytes are dropped here would wait for an Xon
 * that only their own next dequeue can post: a paused one gets none (its
 * upstream sends nothing), so each is checked now.
 */
static __always_inline void pfc_drain(__u32 e, __u32 swi, __u32 nports,
				      struct pfc_state *est)
{
	__u64 *part;
	__u32 l;

	for (l = 0; l < PFC_MAX_LOCAL; l++) {
		if (l >= nports)
			break;
		part = pfc_count(e, l);
		if (part && *part) {
			*part = 0;
			pfc_xon_drained(swi, l);
		}
	}
	est->ingress_total = 0;
}

/* Egress slot e of a lossless switch: its config, state and switch; 0
 * when PFC is off there. */
static __always_inline int pfc_egress(__u32 e, struct pfc_cfg **cfg,
				      struct pfc_state **est,
				      struct pfc_switch **sw)
{
	*cfg = bpf_map_lookup_elem(&pfc_cfgs, &e);
	if (!*cfg || (*cfg)->mode == PFC_OFF)
		return 0;
	*est = bpf_map_lookup_elem(&pfc_states, &e);
	*sw = bpf_map_lookup_elem(&sw_used, &(*cfg)->sw);
	return *est && *sw;
}

/*
 * A packet left egress slot e unseen by the transmit tracepoint (counted
 * late at the peer, its ingress port unknown), and its qdisc holds
 * backlog bytes now: note the backlog, and a drain. Several packets in a
 * row can be missed, the last of a queue among them; without this the
 * port's last seen backlog stays up and its occupancies with it.
 */
static __always_inline void pfc_dequeue_unseen(__u32 e, __u64 backlog)
{
	struct pfc_cfg *cfg;
	struct pfc_state *est;
	struct pfc_switch *sw;

	if (!pfc_egress(e, &cfg, &est, &sw))
		return;
	pfc_note_backlog(sw, est, backlog);
	if (!backlog)
		pfc_drain(e, cfg->sw, sw->nports, est);
}

/*
 * A packet of len bytes from ingress ifindex iif, or leaving (transmitted
 * or dropped: enter 0), egress slot e, whose qdisc holds backlog bytes
 * after the event.
 */
static __always_inline void pfc_account(__u32 e, __u32 iif, __u32 len,
					__u64 backlog, int enter)
{
	struct pfc_cfg *cfg, *icfg;
	struct pfc_state *est, *ist;
	struct pfc_switch *sw;
	__u64 occ, xoff, xon, *part;
	__u32 i;
	int step;

	if (!pfc_egress(e, &cfg, &est, &sw))
		return;
	pfc_note_backlog(sw, est, backlog);
	if (!enter && !backlog)
		pfc_drain(e, cfg->sw, sw->nports, est);
	if (!pfc_ingress(cfg->sw, iif, &i, &icfg, &ist))
		return;
	part = pfc_count(e, icfg->local);
	if (!part)
		return;
	if (enter) {
		__sync_fetch_and_add(part, len);
		__sync_fetch_and_add(&est->ingress_total, len);
	} else if (backlog) {
		pfc_sub(part, len);
		pfc_sub(&est->ingress_total, len);
	}
	occ = pfc_occupancy(cfg->sw, sw->nports, icfg->local);
	xoff = pfc_thresholds(icfg, sw, &xon);
	/* What arrived after the Xoff, against the threshold it was posted
	 * at: a dynamic threshold falling as the buffer fills is no byte in
	 * flight. */
	if (enter && ist->paused) {
		__u64 at = *(volatile __u64 *)&ist->xoff_at;

		if (occ > at && occ - at > *(volatile __u64 *)&ist->max_over)
			*(volatile __u64 *)&ist->max_over = occ - at;
	}
	step = pfc_step(ist->paused, occ, xoff, xon);
	if (enter && step == PFC_XOFF)
		pfc_post(i, ist, PFC_XOFF, occ, xoff);
	else if (!enter && step == PFC_XON)
		pfc_post(i, ist, PFC_XON, occ, xon);
}

#endif /* SWITCH_CLASSIC */

#endif /* CCLAB_SWITCH_PFC_H */
