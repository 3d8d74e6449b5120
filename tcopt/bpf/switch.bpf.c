// SPDX-License-Identifier: GPL-2.0
/*
 * The cclab INT switch: programs that measure each switch egress port's
 * queue and stamp an INT record (tcopt/README.md) into TCP packets as they
 * leave it. Maps and the port model: switch_maps.h.
 *
 * int_switch_enqueue   tc egress on a switch port: bytes entering the
 *                      port's qdisc; the QCN congestion point, which
 *                      samples arrivals, and its feedback, written into
 *                      the next ACK of the sampled flow.
 * int_switch_drop      kfree_skb tracepoint: bytes the qdisc dropped.
 * int_switch_xmit      net_dev_start_xmit tracepoint, where the qdisc hands
 *                      a packet to the port's driver: bytes transmitted,
 *                      and a snapshot of the port for that packet: the
 *                      qdisc's backlog (the bytes queued behind it),
 *                      txBytes and the time.
 * int_switch_stamp     tc ingress on the port's veth peer, the first place
 *                      after dequeue where a packet can be rewritten:
 *                      writes the snapshot as the INT record and marks ECN,
 *                      as a real switch's egress pipeline does at dequeue.
 *
 * Two builds of this file (tcopt/intswitch/gen.go):
 *  - tcx (Linux >= 6.6): the tc programs reach the kernel's sk_buff with
 *    the kfunc bpf_cast_to_kern_ctx (>= 6.3): the port from its device,
 *    the snapshot keyed by the skb's address.
 *  - classic, SWITCH_CLASSIC (e.g. Linux 6.1): no kfunc and no tcx. The
 *    tc programs are cls_bpf filters (direct action) loaded once per port
 *    with the port's slot as a constant, since a tc program of 6.1 cannot
 *    tell which namespace its device is in. The stamper, which is costly
 *    to verify, is loaded once: each port's small int_switch_stamp_port
 *    puts the slot in skb->cb[0] and tail-calls it. The snapshot is keyed by the
 *    address of the frame's first byte (skb->data at the driver and, with
 *    the MAC header pushed back, at the peer's tc ingress); the enqueue
 *    counter reads qdisc_pkt_len as skb->wire_len, and the backlog through
 *    the port's device, whose address the tracing programs note.
 * Both builds count, snapshot and stamp alike: same maps, same records.
 *
 * Nothing is ever written outside our own option and, for ECN, the IP
 * header's TOS and checksum.
 *
 * The behaviours are units, each a pure core in its own header in
 * tcopt/swunit with user-space tests there: int_stamp.h (the record, the
 * transmit clock, the option slot, the header version), ecn_mark.h (step
 * and RED marking), qcn_cp.h (the congestion point's sampling and
 * feedback), tcd_state.h (TCD's ternary port state: CE or U), pfc.h (PFC's
 * ingress occupancies and thresholds, composed in switch_pfc.h). This file is
 * their composition: each program reads the port (switch_kern.h) and the
 * packet (switch_pkt.h), keeps the counters and maps (switch_maps.h),
 * calls the units and has switch_pkt.h write what they decide.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>

#include "../int_option.h"
#include "switch_maps.h"
#include "switch_kern.h"
#include "switch_pkt.h"
#include "switch_pfc.h"
#include "../swunit/int_stamp.h"
#include "../swunit/ecn_mark.h"
#include "../swunit/qcn_cp.h"
#include "../swunit/tcd_state.h"
#include "../../orchestrator/delay/bpf/delay.h"

char LICENSE[] SEC("license") = "GPL";

/* Counters other CPUs update: read each exactly once. */
#define READ_ONCE(x)	(*(volatile typeof(x) *)&(x))
#define WRITE_ONCE(x, v)	(*(volatile typeof(x) *)&(x) = (v))

#ifdef SWITCH_CLASSIC
/* A classic filter's verdict that lets the next filter run. */
#define TC_ACT_UNSPEC	(-1)

/* The port this instance of the tc programs serves (set by the loader). */
volatile const __u32 port_slot;

#else
extern void *bpf_cast_to_kern_ctx(void *) __ksym;
#endif

/* Count a packet of len bytes entering a port's qdisc. */
static __always_inline void count_enqueue(struct port_state *st, __u32 len)
{
	__sync_fetch_and_add(&st->enq_bytes, len);
	__sync_fetch_and_add(&st->enq_pkts, 1);
}

/* Note the device of port idx: for the classic build's enqueue counter,
 * and for a packet the transmit tracepoint missed (stamp_arrival). */
static __always_inline void note_dev(__u32 idx, struct net_device *dev)
{
	__u64 *d = bpf_map_lookup_elem(&port_devs, &idx);

	if (d)
		*d = (__u64)dev;
}


/*
 * When the port's link finishes sending len bytes dequeued at now, at the
 * port's rate: after now, and after it finished what came before. Stamped
 * as the record's time, so that between any two records txBytes grows by
 * no more than the rate allows (tcopt/README.md, ts). The qdisc hands a
 * device's packets out on one CPU at a time, but a packet the transmit
 * tracepoint missed advances the clock from the peer's CPU: a
 * compare-and-swap keeps the clock from ever going back.
 */
static __always_inline __u64 tx_clock_done(struct port_state *st,
					   struct port_cfg *cfg, __u32 len,
					   __u64 now)
{
	__u64 clock, done = now, ser;
	int i;

	if (!cfg || !cfg->rate_mbps)
		return now;
	ser = int_stamp_ser_ns(len, cfg->rate_mbps);
	for (i = 0; i < 4; i++) {
		clock = READ_ONCE(st->tx_clock);
		done = int_stamp_tx_done(clock, now, ser);
		if (__sync_val_compare_and_swap(&st->tx_clock, clock, done) != clock)
			continue;
		if (clock > now) {
			__sync_fetch_and_add(&st->clock_ahead, 1);
			if (clock - now > READ_ONCE(st->clock_lead_max))
				WRITE_ONCE(st->clock_lead_max, clock - now);
		}
		break;
	}
	return done;
}

SEC("tp_btf/net_dev_start_xmit")
int BPF_PROG(int_switch_xmit, struct sk_buff *skb, struct net_device *dev)
{
	struct port_state *st;
	struct deq_snap snap;
	__u32 *idx, len;
	__u64 key, tx;

	idx = dev_slot(&egress_ports, dev);
	if (!idx)
		return 0;
	st = bpf_map_lookup_elem(&port_states, idx);
	if (!st)
		return 0;
	note_dev(*idx, dev);
	len = xmit_len(skb);
	tx = __sync_fetch_and_add(&st->deq_bytes, len) + len;
	__sync_fetch_and_add(&st->deq_pkts, 1);
	/* The qdisc has let go of the packet: what is left is behind it. */
	snap.qlen = qdisc_backlog(dev);
	st->backlog = snap.qlen;
	pfc_account(*idx, BPF_CORE_READ(skb, skb_iif), len, snap.qlen, 0);
	snap.tx_bytes = tx;
	snap.deq_ns = bpf_ktime_get_ns();
	snap.ts = tx_clock_done(st, bpf_map_lookup_elem(&port_cfgs, idx), len,
				snap.deq_ns);
	snap.port = *idx;
	snap.len = KREAD(skb, len);
	key = snap_key(skb);
	bpf_map_update_elem(&dequeued, &key, &snap, BPF_ANY);
	return 0;
}

/*
 * Whether a packet leaving port cfg with qlen bytes queued behind it is to
 * be CE-marked (ecn_mark.h). The loader may rewrite the entry while we
 * read it: each field is read once, and a packet judged meanwhile may see
 * a mix of the two profiles, no worse than either. A random number is
 * drawn only for a probability strictly between 0 and 1.
 */
static __always_inline bool ecn_should_mark(struct port_cfg *cfg, __u64 qlen)
{
	__u64 p32 = ecn_mark_p32(READ_ONCE(cfg->ecn_k), READ_ONCE(cfg->ecn_kmax),
				 READ_ONCE(cfg->ecn_pmax_ppm), qlen);

	if (p32 >= ECN_P32_ONE)
		return true;
	return p32 && ecn_mark_draw(p32, bpf_get_prandom_u32());
}

/*
 * Stamp this port's INT record (a full option gets its overflow flag);
 * tcd: the header's version and U (int_stamp.h), counted in ue_marked
 * when U went out.
 */
static __always_inline void stamp(struct __sk_buff *skb, struct pkt *p,
				  struct port_state *st, __u32 rate_mbps,
				  __u64 qlen, __u64 tx_bytes, __u64 ts, int tcd)
{
	enum int_stamp_result res;
	__u8 rec[INT_REC_LEN];

	int_stamp_record(rec, rate_mbps, qlen, tx_bytes, ts);
	/*
	 * tcd >> 1 is 1 for INT_STAMP_TCD_UE only. Never a branch on tcd: the
	 * verifier would then track its three values apart through the
	 * option loop of write_record, past its instruction limit.
	 */
	res = write_record(skb, p, rec, true, false, tcd);
	switch (res) {
	case INT_STAMP_WRITTEN:
		__sync_fetch_and_add(&st->stamped, 1);
		__sync_fetch_and_add(&st->ue_marked, (__u32)tcd >> 1);
		break;
	case INT_STAMP_FULL:
		__sync_fetch_and_add(&st->overflowed, 1);
		__sync_fetch_and_add(&st->ue_marked, (__u32)tcd >> 1);
		break;
	default:
		break;
	}
}

/*
 * TCD at the port (tcd_state.h), for a packet leaving with qlen bytes
 * behind it at now: the header mode to stamp with, and whether CE is
 * allowed (only in the congestion state, and then as the ECN profile
 * decides). TCD off: the profile alone, the option's version kept.
 */
static __always_inline int tcd_judge(struct port_state *st,
				     struct port_cfg *cfg, __u64 qlen,
				     __u64 now, bool *ce_allowed)
{
	__u64 max_ton = READ_ONCE(cfg->tcd_max_ton_ns);

	*ce_allowed = true;
#ifdef SWITCH_CLASSIC
	/* No TCD in the classic build (as no PFC, switch_pfc.h). */
	max_ton = 0;
#endif
	if (!max_ton)
		return INT_STAMP_TCD_OFF;
	switch (tcd_port_state(qlen, READ_ONCE(cfg->tcd_k),
			       READ_ONCE(st->paused), READ_ONCE(st->last_xon_ns),
			       now, max_ton)) {
	case TCD_UNDETERMINED:
		*ce_allowed = false;
		return INT_STAMP_TCD_UE;
	case TCD_CONGESTION:
		return INT_STAMP_TCD_ON;
	default:
		*ce_allowed = false;
		return INT_STAMP_TCD_ON;
	}
}

/*
 * The QCN congestion point of port idx, for a packet of len bytes
 * arriving with q bytes queued ahead of it (qcn_cp.h). Exactly one
 * packet crosses each sampling point, whichever CPU enqueues it: each
 * takes its bytes from the credit atomically, and the one that crosses
 * samples and adds the refill.
 *
 * Negative feedback goes to the sampled packet's source at once, as
 * 802.1Qau's notification does, not through the queue with the packet:
 * it waits in qcn_pending for the next ACK of the flow that leaves any
 * port of the switch (qcn_carry), the newest replacing one not yet taken.
 */
static __always_inline void qcn_arrival(struct __sk_buff *skb,
					struct port_state *st,
					struct port_cfg *cfg, __u32 idx,
					__u64 q, __u32 len)
{
	__u64 qeq = READ_ONCE(cfg->qcn_qeq), every = READ_ONCE(cfg->qcn_sample);
	__s64 before, after, next;
	__u64 qold, seq;
	__u8 fb;
	struct qcn_note note = {};
	struct qcn_flow f;
	struct pkt p;

	if (!qeq || !every)
		return;
	before = __sync_fetch_and_add(&st->qcn_credit, -(__s64)len);
	if (!qcn_cp_crossed(before, len))
		return;
	after = before - (__s64)len;
	next = qcn_cp_interval(every, bpf_get_prandom_u32());
	__sync_fetch_and_add(&st->qcn_credit, qcn_cp_refill(after, next));
	seq = __sync_fetch_and_add(&st->qcn_sampled, 1) + 1;
	qold = __sync_lock_test_and_set(&st->qcn_qold, q);
	fb = qcn_cp_feedback(q, qold, qeq);
	if (!fb)
		return;
	parse(skb, &p);
	if (flow_of(skb, &p, &f) || !tcp_payload(skb, &p)) {
		/* No data: no ACK of this flow will answer it. */
		__sync_fetch_and_add(&st->qcn_no_data, 1);
		return;
	}
	int_qcn_encode(note.rec, fb, idx & INT_QCN_CP_MASK, seq, q);
	note.ns = bpf_ktime_get_ns();
	note.flow = f;
	__sync_fetch_and_add(&st->qcn_fb, 1);
	if (bpf_map_update_elem(&qcn_pending, &f, &note, BPF_NOEXIST)) {
		bpf_map_update_elem(&qcn_pending, &f, &note, BPF_ANY);
		__sync_fetch_and_add(&st->qcn_replaced, 1);
	}
}

/*
 * A packet entering port st: when it is an ACK whose echo has a free slot
 * (the receivers' agents leave one when a run has congestion points) and
 * feedback waits for its flow, write the feedback into the echo.
 */
static __always_inline void qcn_carry(struct __sk_buff *skb,
				      struct port_state *st)
{
	__u32 zero = 0;
	struct switch_global *g = bpf_map_lookup_elem(&switch_globals, &zero);
	struct qcn_note note, *pending;
	struct qcn_flow f, data;
	struct pkt p;

	if (!g || !READ_ONCE(g->qcn_on))
		return;
	parse(skb, &p);
	if (flow_of(skb, &p, &f))
		return;
	/* The data flow this ACK answers. */
	data.saddr = f.daddr;
	data.daddr = f.saddr;
	data.sport = f.dport;
	data.dport = f.sport;
	data.pad = 0;
	/*
	 * Copied, then checked: an LRU element is reused as soon as another
	 * CPU deletes or replaces it, so a copy that names another flow is
	 * not this flow's. (Between the lookup and the delete a newer note
	 * of the same flow can arrive and go with it: the CP samples a flow
	 * every few hundred microseconds at most, an ACK takes a note in
	 * about one.)
	 */
	pending = bpf_map_lookup_elem(&qcn_pending, &data);
	if (!pending)
		return;
	__builtin_memcpy(&note, pending, sizeof(note));
	if (note.flow.saddr != data.saddr || note.flow.daddr != data.daddr ||
	    note.flow.sport != data.sport || note.flow.dport != data.dport)
		return;
	if (bpf_ktime_get_ns() - note.ns > QCN_NOTE_MAX_AGE_NS) {
		bpf_map_delete_elem(&qcn_pending, &data);
		return;
	}
	if (write_record(skb, &p, note.rec, false, true, INT_STAMP_TCD_OFF) != INT_STAMP_WRITTEN)
		return;
	bpf_map_delete_elem(&qcn_pending, &data);
	__sync_fetch_and_add(&st->qcn_carried, 1);
}

#ifdef SWITCH_CLASSIC
SEC("tc")
int int_switch_enqueue(struct __sk_buff *skb)
{
	__u32 idx = port_slot, len = skb->wire_len;	/* qdisc_pkt_len */
	struct port_state *st;
	struct port_cfg *cfg;
	__u64 *d, q;

	st = bpf_map_lookup_elem(&port_states, &idx);
	d = bpf_map_lookup_elem(&port_devs, &idx);
	if (!st || !d)
		return TC_ACT_UNSPEC;
	count_enqueue(st, len);
	/* The packet is about to join the queue (a drop corrects it). Until a
	 * packet has left, the port (attached idle) holds what entered. */
	if (*d)
		q = qdisc_backlog_of(*d);
	else
		q = READ_ONCE(st->backlog);
	st->backlog = q + len;
	pfc_account(idx, skb->ingress_ifindex, len, q + len, 1);
	cfg = bpf_map_lookup_elem(&port_cfgs, &idx);
	if (cfg)
		qcn_arrival(skb, st, cfg, idx, q, len);
	qcn_carry(skb, st);
	return TC_ACT_UNSPEC;
}
#else
SEC("tcx/egress")
int int_switch_enqueue(struct __sk_buff *skb)
{
	struct sk_buff *kskb = bpf_cast_to_kern_ctx(skb);
	struct net_device *dev = kskb->dev;
	struct port_state *st;
	struct port_cfg *cfg;
	__u32 *idx, len;
	__u64 q;

	idx = dev_slot(&egress_ports, dev);
	if (!idx)
		return TCX_NEXT;
	st = bpf_map_lookup_elem(&port_states, idx);
	if (!st)
		return TCX_NEXT;
	len = qdisc_len(kskb);
	count_enqueue(st, len);
	/* The packet is about to join the queue (a drop corrects it). */
	q = qdisc_backlog(dev);
	st->backlog = q + len;
	pfc_account(*idx, skb->ingress_ifindex, len, q + len, 1);
	cfg = bpf_map_lookup_elem(&port_cfgs, idx);
	if (cfg)
		qcn_arrival(skb, st, cfg, *idx, q, len);
	qcn_carry(skb, st);
	return TCX_NEXT;
}
#endif

/*
 * The backlog of port idx's qdisc now, read through the device the
 * tracing programs noted (port_devs), for a packet whose dequeue they
 * missed; 1 (not drained) when no device is noted yet.
 */
static __always_inline __u64 unseen_backlog(__u32 idx)
{
	__u64 *d = bpf_map_lookup_elem(&port_devs, &idx);

	if (!d || !*d)
		return 1;
	return qdisc_backlog_of(*d);
}

/* A snapshot older than this belongs to another packet. */
#define SNAP_MAX_AGE_NS	(1000 * 1000 * 1000ULL)

/*
 * A packet of port idx arriving at the peer: take its dequeue snapshot
 * (key as snap_key) and write it. The key is a pointer in the classic
 * build; it is only ever used as a map key, before the packet changes.
 */
static __always_inline void stamp_arrival(struct __sk_buff *skb, __u32 idx,
					  __u64 key)
{
	__u64 now, qlen, tx, ts, len;
	bool ce_allowed;
	int tcd;
	struct deq_snap *snap;
	struct port_state *st;
	struct port_cfg *cfg;
	struct pkt p;

	/* Re-received after its link's delay (link placement,
	 * orchestrator/delay): it was stamped when it first arrived. */
	if (skb->mark == DELAY_MARK)
		return;
	st = bpf_map_lookup_elem(&port_states, &idx);
	cfg = bpf_map_lookup_elem(&port_cfgs, &idx);
	if (!st || !cfg)
		return;
	now = bpf_ktime_get_ns();
	parse(skb, &p);
	snap = bpf_map_lookup_elem(&dequeued, &key);
	if (snap && snap->port == idx && snap->len == skb->len &&
	    now - snap->deq_ns < SNAP_MAX_AGE_NS) {
		qlen = snap->qlen;
		tx = snap->tx_bytes;
		ts = snap->ts;
		bpf_map_delete_elem(&dequeued, &key);
	} else {
		/*
		 * The transmit tracepoint did not see this packet (a few in a
		 * thousand reach the veth some other way): count it now, so
		 * that the counts stay exact, and stamp the state now.
		 */
		len = int_stamp_wire_len(skb->len, skb->gso_size, skb->gso_segs,
					 p.tcp_off ? p.tcp_off + p.tcp_hlen : 0);
		tx = __sync_fetch_and_add(&st->deq_bytes, len) + len;
		__sync_fetch_and_add(&st->deq_pkts, 1);
		qlen = READ_ONCE(st->backlog);
		ts = tx_clock_done(st, cfg, len, now);
		__sync_fetch_and_add(&st->late, 1);
		/*
		 * Nor did PFC count it. Its ingress port is unknown here, so
		 * that port's count stays up until the queue drains; if this
		 * was the last packet (the port's last known backlog is just
		 * this packet), that is now, and no later dequeue would tell:
		 * a paused ingress whose upstream sends nothing would wait
		 * for its Xon for ever (pfc_drain).
		 */
		pfc_dequeue_unseen(idx, unseen_backlog(idx));
	}

	tcd = tcd_judge(st, cfg, qlen, now, &ce_allowed);
	if (p.ip4_off && ce_allowed && ecn_should_mark(cfg, qlen) &&
	    mark_ce(skb, &p))
		__sync_fetch_and_add(&st->ce_marked, 1);
	if (p.tcp_off)
		stamp(skb, &p, st, cfg->rate_mbps, qlen, tx, ts, tcd);
}

#ifdef SWITCH_CLASSIC
/* One per port: hand the port's slot to the stamper in the skb's tc
 * scratch space. */
SEC("tc")
int int_switch_stamp_port(struct __sk_buff *skb)
{
	skb->cb[0] = port_slot;
	bpf_tail_call(skb, &stamper, 0);
	return TC_ACT_UNSPEC;	/* no stamper: pass */
}

SEC("tc")
int int_switch_stamp(struct __sk_buff *skb)
{
	/* cls_bpf pushed the MAC header back: data is the frame's start. */
	__u64 key = skb->data;

	stamp_arrival(skb, skb->cb[0], key);
	return TC_ACT_UNSPEC;
}
#else
SEC("tcx/ingress")
int int_switch_stamp(struct __sk_buff *skb)
{
	struct sk_buff *kskb = bpf_cast_to_kern_ctx(skb);
	__u32 *idx;

	idx = dev_slot(&dequeue_ports, kskb->dev);
	if (idx)
		stamp_arrival(skb, *idx, (__u64)kskb);
	return TCX_NEXT;
}
#endif

SEC("tp_btf/kfree_skb")
int BPF_PROG(int_switch_drop, struct sk_buff *skb, void *location,
	     enum skb_drop_reason reason)
{
	struct net_device *dev;
	struct port_state *st;
	__u32 *idx, len;
	__u64 key;

	if (!qdisc_drop_reason(reason)) {
		/* Transmitted but dropped before the peer: forget it, so its
		 * address cannot lend a stale snapshot to a later skb. */
		key = snap_key(skb);
		bpf_map_delete_elem(&dequeued, &key);
		return 0;
	}
	dev = KREAD(skb, dev);
	idx = dev_slot(&egress_ports, dev);
	if (!idx)
		return 0;
	st = bpf_map_lookup_elem(&port_states, idx);
	if (!st)
		return 0;
	note_dev(*idx, dev);
	len = qdisc_len(skb);
	__sync_fetch_and_add(&st->drop_bytes, len);
	__sync_fetch_and_add(&st->drop_pkts, 1);
	st->backlog = qdisc_backlog(dev);
	pfc_account(*idx, BPF_CORE_READ(skb, skb_iif), len, st->backlog, 0);
	return 0;
}
