/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Maps shared by the INT switch's programs (switch.bpf.c) and its Go
 * loader (tcopt/intswitch), which reads the generated twins of these
 * structs; the map definitions themselves at the end.
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
 * ECN marking at dequeue (ecn_mark.h), with q the bytes queued behind the packet:
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
	/*
	 * QCN congestion point (802.1Qau, tcopt/README.md "QCN feedback";
	 * qcn_cp.h):
	 * about every qcn_sample bytes entering the port (randomised by
	 * +-15 %), with Q the bytes queued then and Qold at the last sample,
	 * fb = -((Q - Qeq) + 2 (Q - Qold)); when negative, |fb| capped at
	 * 5 Qeq and quantised to 6 bits becomes a QCN record kept for the
	 * sampled packet's flow (qcn_pending), which a switch writes into the
	 * free slot of the flow's next ACK echo (none when it quantises to 0).
	 */
	__u32 qcn_qeq;		/* Qeq, bytes; 0 = no congestion point */
	__u32 qcn_sample;	/* bytes between samples (150 KB) */
	/*
	 * TCD (tcd_state.h, docs/lossless.md): with q the bytes queued behind
	 * a packet, the port is non-congestion (q <= tcd_k), undetermined
	 * (q > tcd_k and paused, or ON for less than tcd_max_ton_ns: U in
	 * the INT header, no CE) or congestion (q > tcd_k otherwise: CE as
	 * the ECN profile above decides). With TCD on every option the port
	 * stamps is written as INT v1 (tcopt/README.md); off, nothing of
	 * this applies and marking is the profile's alone.
	 */
	__u64 tcd_max_ton_ns;	/* max(T_on); 0 = TCD off */
	__u64 tcd_k;		/* TCD's queue threshold K, bytes */
};

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
	/* QCN congestion point */
	__s64 qcn_credit;	/* bytes to go before the next sample */
	__u64 qcn_qold;		/* Q at the last sample */
	__u64 qcn_sampled;	/* samples taken */
	__u64 qcn_fb;		/* negative feedback generated */
	__u64 qcn_replaced;	/* ... replacing one still waiting for its ACK */
	__u64 qcn_no_data;	/* negative samples of packets without TCP data */
	__u64 qcn_carried;	/* feedback written into an ACK leaving here */
	/*
	 * The port's transmit clock: when its link, sending at rate_mbps,
	 * finishes the bytes dequeued so far (ns, bpf_ktime). A record's time
	 * is this clock after its packet: HTB hands packets out in bursts
	 * (its timer fires late, saved-up tokens go at once), a real port
	 * one serialisation apart (tcopt/README.md, ts).
	 */
	__u64 tx_clock;
	__u64 clock_ahead;	/* packets dequeued before the link was free */
	__u64 clock_lead_max;	/* the most tx_clock was ahead of a dequeue, ns */
	/*
	 * The port's PFC state, which TCD reads: written by the PFC pause
	 * controller (docs/lossless.md, "Controller"; not part of this
	 * switch), read-only here. paused: the port's egress is paused now;
	 * last_xon_ns: bpf_ktime of the last resume, 0 = never paused.
	 */
	__u32 paused;
	__u32 pad;
	__u64 last_xon_ns;
	__u64 ue_marked;	/* packets stamped with U (undetermined, TCD) */
};

/*
 * QCN feedback waiting for an ACK of its flow (tcopt/README.md, "QCN
 * feedback"): keyed by the sampled data packet's addresses and ports as
 * they are on the wire, so an ACK looks it up with its own swapped.
 */
struct qcn_flow {
	__u32 saddr;
	__u32 daddr;
	__u16 sport;
	__u16 dport;
	__u32 pad;
};

struct qcn_note {
	__u8 rec[8];		/* the QCN record (7 bytes) */
	__u64 ns;		/* when the CP generated it */
	struct qcn_flow flow;	/* its key, to tell a reused element */
};

#define QCN_MAX_PENDING		16384
/* A note no ACK took within this long is dropped (counted nowhere). */
#define QCN_NOTE_MAX_AGE_NS	(100 * 1000 * 1000ULL)

/* switch_globals: one entry, written by the loader. */
struct switch_global {
	__u32 qcn_on;		/* some port is a congestion point */
	__u32 pad;
};

/*
 * The port's state when the driver took a packet from the qdisc, kept until
 * the packet reaches the peer's ingress hook, which writes it into the
 * packet. Keyed by the skb's address.
 */
struct deq_snap {
	__u64 qlen;		/* bytes left queued behind the packet */
	__u64 tx_bytes;		/* deq_bytes, this packet included */
	__u64 ts;		/* on the port's transmit clock (port_state) */
	__u64 deq_ns;		/* bpf_ktime_get_ns() at the dequeue */
	__u32 port;		/* index of the port */
	__u32 len;		/* skb->len then, to recognise the same packet */
};

#define SWITCH_MAX_INFLIGHT	65536

/*
 * PFC detection (docs/lossless.md; the unit: tcopt/swunit/pfc.h; the
 * programs' part: switch_pfc.h). Off unless the loader configures it: a
 * port whose pfc_cfgs entry has mode PFC_OFF costs one array lookup at
 * enqueue and at transmit. A lossless switch's ports are numbered 0..n-1
 * in it ("local"); every switch interface is both an egress port and,
 * for the packets it receives, an ingress port.
 */
#define PFC_MAX_LOCAL		32	/* ports of one lossless switch */
#define PFC_EVENTS_BYTES	(256 * 1024)

/* Per port slot, written by the loader; read-only to the programs. */
struct pfc_cfg {
	__u32 mode;		/* PFC_OFF, PFC_STATIC, PFC_DYNAMIC (pfc.h) */
	__u32 sw;		/* the switch's index (sw_used, pfc_members) */
	__u32 local;		/* the port's index in its switch */
	__u32 alpha_ppm;	/* dynamic: Xoff = alpha * (B - used) */
	__u64 xoff;		/* static Xoff, bytes */
	__u64 xon;		/* static Xon, bytes (< xoff) */
	__u64 hysteresis;	/* dynamic: Xon = Xoff - hysteresis */
	__u64 headroom;		/* bytes above Xoff the port can take */
	struct port_key upstream; /* the port feeding this one: paused on Xoff */
};

/* Per port slot, in both roles. */
struct pfc_state {
	/* as egress */
	__u64 seen_backlog;	/* backlog last counted into sw_used */
	__u64 ingress_total;	/* sum of its ingress_bytes row */
	/* as ingress */
	__u32 paused;		/* Xoff posted, Xon not yet */
	__u32 pad;
	__u64 xoffs;		/* Xoff crossings posted */
	__u64 xons;		/* Xon crossings posted */
	__u64 lost_events;	/* crossings the ring buffer had no room for */
	__u64 max_over;		/* highest occupancy above xoff_at while paused */
	__u64 xoff_at;		/* the Xoff threshold the pause was posted at */
};

/* Per lossless switch. */
struct pfc_switch {
	__u64 used;		/* sum of its ports' backlogs */
	__u64 buffer;		/* the shared buffer B */
	__u32 nports;		/* its ports, local 0..nports-1 */
	__u32 pad;
};

/* The key of pfc_ifaces: an interface of a lossless switch. */
struct pfc_iface {
	__u32 sw;
	__u32 ifindex;
};

/* A crossing, posted once to pfc_events. */
struct pfc_event {
	__u64 ns;		/* bpf_ktime_get_ns() at the crossing */
	__u64 occupancy;	/* the ingress queue then, bytes */
	__u64 threshold;	/* the Xoff or Xon it crossed */
	__u32 port;		/* the ingress port's slot */
	__u32 kind;		/* PFC_XOFF or PFC_XON */
};

/* The maps themselves (BPF only: the Go loader has bpf2go's twins). */
#ifdef __bpf__
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, SWITCH_MAX_PORTS);
	__type(key, struct port_key);
	__type(value, __u32);
} egress_ports SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, SWITCH_MAX_PORTS);
	__type(key, struct port_key);
	__type(value, __u32);
} dequeue_ports SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, SWITCH_MAX_PORTS);
	__type(key, __u32);
	__type(value, struct port_cfg);
} port_cfgs SEC(".maps");

/* Memory-mapped: the queue sampler reads it every millisecond without a
 * system call (tcopt/intswitch readStates). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, SWITCH_MAX_PORTS);
	__type(key, __u32);
	__type(value, struct port_state);
} port_states SEC(".maps");

/* Each port's net_device, as the tracing programs saw it, to read the
 * backlog through: the classic build's enqueue counter, and a packet the
 * transmit tracepoint missed (0: not seen yet). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, SWITCH_MAX_PORTS);
	__type(key, __u32);
	__type(value, __u64);
} port_devs SEC(".maps");

/* Classic build: the stamper, which every port's int_switch_stamp_port
 * tail-calls. */
struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} stamper SEC(".maps");

/* QCN feedback waiting for an ACK of its flow (struct qcn_note); LRU so
 * that flows that ended make room. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, QCN_MAX_PENDING);
	__type(key, struct qcn_flow);
	__type(value, struct qcn_note);
} qcn_pending SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct switch_global);
} switch_globals SEC(".maps");

/* Packets between the driver and the peer's ingress; LRU so that one that
 * never arrives (dropped on the way) ages out. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, SWITCH_MAX_INFLIGHT);
	__type(key, __u64);
	__type(value, struct deq_snap);
} dequeued SEC(".maps");
/* PFC (struct pfc_cfg): per port slot. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, SWITCH_MAX_PORTS);
	__type(key, __u32);
	__type(value, struct pfc_cfg);
} pfc_cfgs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, SWITCH_MAX_PORTS);
	__type(key, __u32);
	__type(value, struct pfc_state);
} pfc_states SEC(".maps");

/* Bytes in egress slot e's queue that arrived on local port i of its
 * switch, at e * PFC_MAX_LOCAL + i (the loader sizes it). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, SWITCH_MAX_PORTS * PFC_MAX_LOCAL);
	__type(key, __u32);
	__type(value, __u64);
} ingress_bytes SEC(".maps");

/* The slot of local port l of switch s, at s * PFC_MAX_LOCAL + l. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, SWITCH_MAX_PORTS * PFC_MAX_LOCAL);
	__type(key, __u32);
	__type(value, __u32);
} pfc_members SEC(".maps");

/* A packet's ingress port: its switch and skb_iif to the slot. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, SWITCH_MAX_PORTS);
	__type(key, struct pfc_iface);
	__type(value, __u32);
} pfc_ifaces SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, SWITCH_MAX_PORTS);
	__type(key, __u32);
	__type(value, struct pfc_switch);
} sw_used SEC(".maps");

/* Xoff and Xon crossings (struct pfc_event), for the pause controller. */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, PFC_EVENTS_BYTES);
} pfc_events SEC(".maps");
#endif /* __bpf__ */

#endif /* CCLAB_SWITCH_MAPS_H */
