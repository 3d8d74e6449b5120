/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Maps shared by the INT switch's programs (switch.bpf.c) and its Go
 * loader (tcopt/switch), which reads the generated twins of these structs.
 *
 * A switch egress port is identified by the network namespace cookie and
 * ifindex of the veth end it transmits on. Its queue is the root qdisc's
 * own backlog, read when a packet enters (tc egress) and when the qdisc
 * hands one to the driver (net_dev_start_xmit tracepoint); counters of
 * what entered, left and was dropped (kfree_skb) account for it too. The record is written
 * at tc ingress on the veth peer, in the next namespace: the first place
 * after dequeue where a packet can be rewritten. The hooks find the port's
 * slot (an index into the arrays) through hashes keyed by the (namespace
 * cookie, ifindex) of the device they see: egress_ports for the port
 * itself, dequeue_ports for the peer interface fed by that port.
 */
#ifndef CCLAB_SWITCH_MAPS_H
#define CCLAB_SWITCH_MAPS_H

#define SWITCH_MAX_PORTS	4096

struct port_key {
	__u64 netns_cookie;
	__u32 ifindex;
	__u32 pad;
};

/*
 * Written by the loader, before any traffic and whenever the marking
 * profile changes (a whole entry at a time); read-only to the programs.
 *
 * ECN marking at dequeue, with q the bytes queued behind the packet:
 *  - step (DCTCP), ecn_kmax == 0: CE when q > ecn_k; ecn_k == 0: off.
 *  - RED (DCQCN), ecn_kmax != 0: q <= ecn_k (Kmin): no mark;
 *    Kmin < q <= Kmax: CE with probability
 *    ecn_pmax_ppm / 10^6 * (q - Kmin) / (Kmax - Kmin); q > Kmax: CE.
 */
struct port_cfg {
	__u64 ecn_k;		/* step: K, 0 = off; RED: Kmin */
	__u32 rate_mbps;	/* port rate; stamped as int_rate_code(rate_mbps) */
	__u32 ecn_pmax_ppm;	/* RED: probability at Kmax, ppm (<= 10^6) */
	__u64 ecn_kmax;		/* RED: Kmax (> Kmin); 0 = step marking */
};

#define ECN_PPM		1000000U

/*
 * One port's state, in the qdisc's units (qdisc_pkt_len: skb->len plus the
 * replicated headers of a GSO skb, as `tc -s qdisc` counts). The queue is
 * the root qdisc's own backlog, read at each event; the counters account
 * for it independently (enq - deq - drop), and agree once it drains unless
 * a tracepoint event was lost.
 */
struct port_state {
	__u64 backlog;		/* root qdisc backlog at the port's last event */
	__u64 enq_bytes;	/* seen at tc egress, before the qdisc */
	__u64 enq_pkts;
	__u64 deq_bytes;	/* handed to the veth by the qdisc: transmitted */
	__u64 deq_pkts;
	__u64 drop_bytes;	/* dropped by the qdisc (kfree_skb, qdisc reasons) */
	__u64 drop_pkts;
	__u64 stamped;		/* INT records written */
	__u64 overflowed;	/* INT options found full: overflow flag set */
	__u64 ce_marked;	/* packets CE-marked */
	__u64 late;		/* reached the peer without a dequeue snapshot */
};

/*
 * The port's state when the driver took a packet from the qdisc, kept until
 * the packet reaches the peer's ingress hook, which writes it into the
 * packet. Keyed by the skb's address.
 */
struct deq_snap {
	__u64 qlen;		/* bytes left queued behind the packet */
	__u64 tx_bytes;		/* deq_bytes, this packet included */
	__u64 ts;		/* bpf_ktime_get_ns() then */
	__u32 port;		/* index of the port */
	__u32 len;		/* skb->len then, to recognise the same packet */
};

#define SWITCH_MAX_INFLIGHT	65536

#endif /* CCLAB_SWITCH_MAPS_H */
