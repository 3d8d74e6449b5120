/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the INT switch (switch.bpf.c) reads from the kernel's sk_buff and
 * net_device, with CO-RE: the bytes the qdisc accounts for a packet, the
 * port a device is, the qdisc's backlog, the key of a packet's dequeue
 * snapshot, and whether a drop is the qdisc's. Both builds (tcx, classic:
 * SWITCH_CLASSIC) read alike but for the snapshot key.
 *
 * The pointers here are the kernel's own, typed by BTF (a tracing
 * program's arguments, bpf_cast_to_kern_ctx's skb): they are read with
 * plain loads, which the verifier guards, not with bpf_probe_read_kernel,
 * whose helper call cost a quarter of the switch's CPU time
 * (docs/performance.md, "Where the packet CPU goes").
 */
#ifndef CCLAB_SWITCH_KERN_H
#define CCLAB_SWITCH_KERN_H

#include "switch_maps.h"

/*
 * KREAD reads a field of the kernel's own typed pointers: a plain load in
 * the tcx build; in the classic build, for the older kernels it serves
 * (Debian 6.1's verifier refused the plain loads), bpf_probe_read_kernel.
 */
#ifdef SWITCH_CLASSIC
#define KREAD(p, field)	BPF_CORE_READ(p, field)
#else
#define KREAD(p, field)	((p)->field)
#endif

/*
 * The bytes the qdisc accounts for an skb (qdisc_pkt_len), which the
 * kernel sets before tc egress and keeps in skb->cb while the qdisc holds
 * the skb.
 */
static __always_inline __u32 qdisc_len(struct sk_buff *skb)
{
#ifdef SWITCH_CLASSIC
	__u32 len = 0;

	bpf_probe_read_kernel(&len, sizeof(len),
			      &((struct qdisc_skb_cb *)skb->cb)->pkt_len);
	return len;
#else
	return ((struct qdisc_skb_cb *)skb->cb)->pkt_len;
#endif
}


/*
 * The qdisc's bytes for an skb reaching the driver. A GSO skb still counts
 * its replicated headers (qdisc_pkt_len). The segments of one the stack
 * cut after the qdisc carry a copy of its cb: each counts its own length,
 * and together they make the whole skb's qdisc_pkt_len.
 */
static __always_inline __u32 xmit_len(struct sk_buff *skb)
{
	struct skb_shared_info *sh = (void *)(KREAD(skb, head) + KREAD(skb, end));
	unsigned short gso_size = 0;

	/* The shared info is reached by arithmetic, not a typed pointer: one
	 * probe read (bpf_rdonly_cast would need a 6.2 kernel). */
	bpf_probe_read_kernel(&gso_size, sizeof(gso_size), &sh->gso_size);
	if (gso_size)
		return qdisc_len(skb);
	return KREAD(skb, len);
}

/* The slot of the port a device is, keyed by the device's namespace
 * cookie (which the loader reads with SO_NETNS_COOKIE) and ifindex. */
static __always_inline __u32 *dev_slot(void *map, struct net_device *dev)
{
	struct port_key key = {};

	if (!dev)
		return NULL;
#ifdef SWITCH_CLASSIC
	key.ifindex = BPF_CORE_READ(dev, ifindex);
	key.netns_cookie = BPF_CORE_READ(dev, nd_net.net, net_cookie);
#else
	key.ifindex = dev->ifindex;
	key.netns_cookie = dev->nd_net.net->net_cookie;
#endif
	return bpf_map_lookup_elem(map, &key);
}

/*
 * Bytes queued in the device's root qdisc (an HTB root keeps one shared
 * qstats; qdiscs with per-CPU stats are not supported). Read without the
 * qdisc lock: a 32-bit value, current as of the last enqueue or dequeue.
 */
static __always_inline __u64 qdisc_backlog(struct net_device *dev)
{
#ifdef SWITCH_CLASSIC
	return BPF_CORE_READ(dev, qdisc, qstats.backlog);
#else
	return dev->qdisc->qstats.backlog;
#endif
}

/* The same, of a device kept as a number (port_devs). */
static __always_inline __u64 qdisc_backlog_of(__u64 dev)
{
	return BPF_CORE_READ((struct net_device *)dev, qdisc, qstats.backlog);
}

/*
 * The key of a packet's snapshot, as the tracing programs see the packet.
 * tcx: the skb's address. Classic: the address of the frame's first byte,
 * skb->data when the driver takes it, which is where the peer's tc ingress
 * sees the frame start (the same skb, its buffer untouched by the veth).
 */
static __always_inline __u64 snap_key(struct sk_buff *skb)
{
#ifdef SWITCH_CLASSIC
	return (__u64)BPF_CORE_READ(skb, data);
#else
	return (__u64)skb;
#endif
}

/* Drop reasons of a qdisc refusing a packet. */
static __always_inline bool qdisc_drop_reason(enum skb_drop_reason r)
{
	if (r == bpf_core_enum_value(enum skb_drop_reason,
				     SKB_DROP_REASON_QDISC_DROP))
		return true;
	if (bpf_core_enum_value_exists(enum skb_drop_reason,
				       SKB_DROP_REASON_QDISC_OVERLIMIT) &&
	    r == bpf_core_enum_value(enum skb_drop_reason,
				     SKB_DROP_REASON_QDISC_OVERLIMIT))
		return true;
	if (bpf_core_enum_value_exists(enum skb_drop_reason,
				       SKB_DROP_REASON_QDISC_CONGESTED) &&
	    r == bpf_core_enum_value(enum skb_drop_reason,
				     SKB_DROP_REASON_QDISC_CONGESTED))
		return true;
	return false;
}

#endif /* CCLAB_SWITCH_KERN_H */
