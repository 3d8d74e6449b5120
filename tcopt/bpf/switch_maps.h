/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Maps shared by the INT switch's tc programs (switch.bpf.c) and its Go
 * loader (tcopt/switch), which reads the generated twins of these structs.
 *
 * A switch egress port is identified by the network namespace cookie and
 * ifindex of the veth end it transmits on. Its queue is measured between
 * two hooks in different namespaces: tc egress on the port (before the
 * qdisc) and tc ingress on the veth peer (after dequeue). Both hooks find
 * the port's slot (an index into the arrays) through a hash keyed by their
 * own (cookie, ifindex): egress_ports for the port itself, dequeue_ports for
 * the peer interface fed by that port.
 */
#ifndef CCLAB_SWITCH_MAPS_H
#define CCLAB_SWITCH_MAPS_H

#define SWITCH_MAX_PORTS	4096

struct port_key {
	__u64 netns_cookie;
	__u32 ifindex;
	__u32 pad;
};

/* Written by the loader before any traffic; read-only to the programs. */
struct port_cfg {
	__u64 ecn_k;		/* CE-mark above this many queued bytes; 0 = off */
	__u32 rate_mbps;	/* port rate; stamped as int_rate_code(rate_mbps) */
	__u32 pad;
};

/*
 * Cumulative counters of one port, in the qdisc's units (qdisc_pkt_len:
 * skb->len plus the replicated headers of a GSO skb). The queue is
 * enq - deq - drop - lost.
 */
struct port_state {
	__u64 enq_bytes;	/* seen at tc egress, before the qdisc */
	__u64 enq_pkts;
	__u64 deq_bytes;	/* seen at the peer's tc ingress: transmitted */
	__u64 deq_pkts;
	__u64 drop_bytes;	/* dropped by the qdisc (kfree_skb, qdisc reasons) */
	__u64 drop_pkts;
	__u64 lost_bytes;	/* dequeued but dropped before the peer's ingress */
	__u64 lost_pkts;
	__u64 stamped;		/* INT records written */
	__u64 overflowed;	/* INT options found full: overflow flag set */
	__u64 ce_marked;	/* packets CE-marked */
	__u64 len_mismatch;	/* our length differed from qdisc_pkt_len (a bug) */
};

#endif /* CCLAB_SWITCH_MAPS_H */
