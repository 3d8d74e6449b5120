// SPDX-License-Identifier: GPL-2.0
/*
 * The cclab INT switch: tc programs that measure each switch egress port's
 * queue and stamp an INT record (tcopt/README.md) into TCP packets as they
 * leave it.
 *
 * int_switch_enqueue   tcx egress on a switch port: counts bytes entering
 *                      the port's qdisc.
 * int_switch_dequeue   tcx ingress on the port's veth peer: counts bytes
 *                      the qdisc transmitted, then stamps the record and
 *                      marks ECN, as a real switch's egress pipeline does.
 * int_switch_drop      kfree_skb tracepoint: bytes the qdisc dropped (and
 *                      bytes lost between dequeue and the peer), so the
 *                      measured queue drains to exactly zero.
 *
 * Nothing is ever written outside our own option and, for ECN, the IP
 * header's TOS and checksum.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>

#include "../int_option.h"
#include "switch_maps.h"

char LICENSE[] SEC("license") = "GPL";

#define ETH_HLEN	14
#define ETH_P_IP	0x0800
#define ETH_P_IPV6	0x86DD
#define IP_MF		0x2000
#define IP_OFFSET	0x1fff
#define TCP_MIN_HLEN	20
#define TCP_MAX_OPTS	40
#define TCP_CSUM_OFF	16
#define IP_CSUM_OFF	10
#define TCPOPT_EOL	0
#define TCPOPT_NOP	1
#define ECN_MASK	0x03
#define ECN_CE		0x03

/* Counters other CPUs update: read each exactly once. */
#define READ_ONCE(x)	(*(volatile typeof(x) *)&(x))

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

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, SWITCH_MAX_PORTS);
	__type(key, __u32);
	__type(value, struct port_state);
} port_states SEC(".maps");

/* Where the headers of a packet are; zero offsets mean "absent". */
struct pkt {
	__u32 ip4_off;		/* IPv4 header, or 0 */
	__u32 tcp_off;		/* TCP header of an unfragmented IPv4 packet, or 0 */
	__u32 tcp_hlen;
	__u32 gso_hdr_len;	/* headers a GSO skb replicates per segment */
};

static __always_inline void parse(struct __sk_buff *skb, struct pkt *p)
{
	__u16 proto;
	__u8 b[TCP_MIN_HLEN];
	__u32 l4, ihl;

	__builtin_memset(p, 0, sizeof(*p));
	if (bpf_skb_load_bytes(skb, 12, &proto, sizeof(proto)))
		return;
	if (proto == bpf_htons(ETH_P_IPV6)) {
		/* Only its GSO header length matters (queue accounting). */
		if (bpf_skb_load_bytes(skb, ETH_HLEN + 6, b, 1))
			return;
		l4 = ETH_HLEN + 40;
		p->gso_hdr_len = l4;
		if (b[0] == IPPROTO_TCP &&
		    !bpf_skb_load_bytes(skb, l4 + 12, b, 1))
			p->gso_hdr_len += (b[0] >> 4) * 4;
		else if (b[0] == IPPROTO_UDP)
			p->gso_hdr_len += 8;
		return;
	}
	if (proto != bpf_htons(ETH_P_IP))
		return;
	if (bpf_skb_load_bytes(skb, ETH_HLEN, b, 20))
		return;
	ihl = (b[0] & 0x0f) * 4;
	if ((b[0] >> 4) != 4 || ihl < 20)
		return;
	p->ip4_off = ETH_HLEN;
	l4 = ETH_HLEN + ihl;
	p->gso_hdr_len = l4;
	if (b[9] == IPPROTO_UDP)
		p->gso_hdr_len += 8;
	/* A fragment's transport header is not where it seems. */
	if (b[9] != IPPROTO_TCP ||
	    (((__u16)b[6] << 8 | b[7]) & (IP_MF | IP_OFFSET)))
		return;
	if (bpf_skb_load_bytes(skb, l4, b, TCP_MIN_HLEN))
		return;
	if ((b[12] >> 4) < 5)
		return;
	p->tcp_off = l4;
	p->tcp_hlen = (b[12] >> 4) * 4;
	p->gso_hdr_len += p->tcp_hlen;
}

/*
 * The bytes the qdisc accounts for this skb (qdisc_pkt_len_init): a GSO
 * skb counts its headers once per segment. Computed from the packet so
 * that both hooks, in different namespaces, count the same number.
 */
static __always_inline __u64 qdisc_len(struct __sk_buff *skb, struct pkt *p)
{
	__u32 segs = skb->gso_segs;

	if (skb->gso_size && segs > 1)
		return skb->len + (__u64)(segs - 1) * p->gso_hdr_len;
	return skb->len;
}

extern void *bpf_cast_to_kern_ctx(void *) __ksym;

/* The namespace of the device, which the loader's SO_NETNS_COOKIE names. */
static __always_inline __u32 *port_slot(void *map, struct __sk_buff *skb)
{
	struct sk_buff *kskb = bpf_cast_to_kern_ctx(skb);
	struct port_key key = {
		.netns_cookie = BPF_CORE_READ(kskb, dev, nd_net.net, net_cookie),
		.ifindex = skb->ifindex,
	};

	return bpf_map_lookup_elem(map, &key);
}

SEC("tcx/egress")
int int_switch_enqueue(struct __sk_buff *skb)
{
	struct port_state *st;
	struct sk_buff *kskb;
	struct pkt p;
	__u32 *idx, cb_len = 0;
	__u64 len;

	idx = port_slot(&egress_ports, skb);
	if (!idx)
		return TCX_NEXT;
	st = bpf_map_lookup_elem(&port_states, idx);
	if (!st)
		return TCX_NEXT;
	parse(skb, &p);
	len = qdisc_len(skb, &p);
	__sync_fetch_and_add(&st->enq_bytes, len);
	__sync_fetch_and_add(&st->enq_pkts, 1);

	/* The kernel has set qdisc_pkt_len already: check we agree. */
	kskb = bpf_cast_to_kern_ctx(skb);
	bpf_probe_read_kernel(&cb_len, sizeof(cb_len),
			      &((struct qdisc_skb_cb *)kskb->cb)->pkt_len);
	if (cb_len != len)
		__sync_fetch_and_add(&st->len_mismatch, 1);
	return TCX_NEXT;
}

/* Mark CE on an ECN-capable IPv4 packet, fixing the header checksum. */
static __always_inline void mark_ce(struct __sk_buff *skb, struct pkt *p,
				    struct port_state *st)
{
	__u8 hdr[2];
	__u16 from, to;

	if (bpf_skb_load_bytes(skb, p->ip4_off, hdr, 2))
		return;
	if ((hdr[1] & ECN_MASK) == 0 || (hdr[1] & ECN_MASK) == ECN_CE)
		return;
	__builtin_memcpy(&from, hdr, 2);
	hdr[1] |= ECN_CE;
	__builtin_memcpy(&to, hdr, 2);
	if (bpf_l3_csum_replace(skb, p->ip4_off + IP_CSUM_OFF, from, to, 2))
		return;
	if (bpf_skb_store_bytes(skb, p->ip4_off + 1, &hdr[1], 1, 0))
		return;
	__sync_fetch_and_add(&st->ce_marked, 1);
}

/*
 * Offset of our option in the option area opts[0..optlen), or -1. Stops at
 * the first malformed option: what follows it cannot be trusted.
 */
static __always_inline int find_int_option(const __u8 *opts, __u32 optlen)
{
	__u32 off = 0, i, len;
	__u8 kind;

	for (i = 0; i < TCP_MAX_OPTS; i++) {
		if (off >= optlen || off >= TCP_MAX_OPTS - 1)
			return -1;
		kind = opts[off];
		if (kind == TCPOPT_EOL)
			return -1;
		if (kind == TCPOPT_NOP) {
			off++;
			continue;
		}
		len = opts[off + 1];
		if (len < 2 || off + len > optlen)
			return -1;
		if (kind == INT_OPT_KIND && len >= 4 &&
		    off + 3 < TCP_MAX_OPTS &&
		    opts[off + 2] == (INT_OPT_EXID >> 8) &&
		    opts[off + 3] == (INT_OPT_EXID & 0xff))
			return off;
		off += len;
	}
	return -1;
}

/*
 * Write this port's record into the packet's INT option, if it carries a
 * valid forward option with a free slot; set the overflow flag if it is
 * full. The TCP checksum is patched word by word for what changed.
 */
static __always_inline void stamp(struct __sk_buff *skb, struct pkt *p,
				  struct port_state *st, __u8 rate_code,
				  __u64 qlen, __u64 tx_bytes, __u64 now)
{
	__u8 opts[TCP_MAX_OPTS] = {};
	__u8 next[TCP_MAX_OPTS];
	__u32 optlen = p->tcp_hlen - TCP_MIN_HLEN;
	__u32 hdr_off, rec_off, base, i, w_old, w_new;
	__s64 diff = 0;
	__u8 rec[INT_REC_LEN], hdr, hops;
	int off, slots;

	if (optlen < INT_OPT_BASE_LEN || optlen > TCP_MAX_OPTS)
		return;
	base = p->tcp_off + TCP_MIN_HLEN;
	if (bpf_skb_load_bytes(skb, base, opts, optlen))
		return;
	off = find_int_option(opts, optlen);
	if (off < 0 || off > TCP_MAX_OPTS - INT_OPT_BASE_LEN)
		return;
	slots = int_opt_slots(opts[off + 1]);
	if (slots < 0)
		return;
	hdr_off = off + 4;
	hdr = opts[hdr_off];
	hops = hdr & INT_HDR_HOPS_MASK;
	if ((hdr >> INT_HDR_VERSION_SHIFT) != INT_HDR_VERSION ||
	    (hdr & INT_HDR_ECHO) || hops > slots)
		return;

	__builtin_memcpy(next, opts, sizeof(next));
	if (hops == slots) {
		if (hdr & INT_HDR_OVERFLOW)
			return;
		next[hdr_off] = hdr | INT_HDR_OVERFLOW;
		__sync_fetch_and_add(&st->overflowed, 1);
	} else {
		rec_off = hdr_off + 1 + hops * INT_REC_LEN;
		/* Inside the option, which lies inside opts: checked above. */
		if (rec_off > TCP_MAX_OPTS - INT_REC_LEN)
			return;
		int_rec_encode(rec, rate_code, qlen, tx_bytes, now);
		for (i = 0; i < INT_REC_LEN; i++) {
			__u32 j = rec_off + i;

			if (j < TCP_MAX_OPTS)
				next[j] = rec[i];
		}
		next[hdr_off] = hdr + 1;
		__sync_fetch_and_add(&st->stamped, 1);
	}

	/* TCP checksum words are 16-bit from the TCP header, so 4-aligned here. */
	for (i = 0; i < TCP_MAX_OPTS / 4; i++) {
		if (i * 4 >= optlen)
			break;
		__builtin_memcpy(&w_old, &opts[i * 4], 4);
		__builtin_memcpy(&w_new, &next[i * 4], 4);
		if (w_old == w_new)
			continue;
		diff = bpf_csum_diff(&w_old, 4, &w_new, 4, (__wsum)diff);
		if (diff < 0)
			return;
		if (bpf_skb_store_bytes(skb, base + i * 4, &w_new, 4, 0))
			return;
	}
	bpf_l4_csum_replace(skb, p->tcp_off + TCP_CSUM_OFF, 0, (__u32)diff, 0);
}

SEC("tcx/ingress")
int int_switch_dequeue(struct __sk_buff *skb)
{
	struct port_state *st;
	struct port_cfg *cfg;
	struct pkt p;
	__u64 len, tx, drained, enq, now;
	__s64 qlen;
	__u32 *idx;

	idx = port_slot(&dequeue_ports, skb);
	if (!idx)
		return TCX_NEXT;
	st = bpf_map_lookup_elem(&port_states, idx);
	cfg = bpf_map_lookup_elem(&port_cfgs, idx);
	if (!st || !cfg)
		return TCX_NEXT;
	now = bpf_ktime_get_ns();
	parse(skb, &p);
	len = qdisc_len(skb, &p);
	tx = __sync_fetch_and_add(&st->deq_bytes, len) + len;
	__sync_fetch_and_add(&st->deq_pkts, 1);
	/* Read what left before what entered: never over-drain. */
	drained = tx + READ_ONCE(st->drop_bytes) + READ_ONCE(st->lost_bytes);
	enq = READ_ONCE(st->enq_bytes);
	qlen = (__s64)(enq - drained);
	if (qlen < 0)
		qlen = 0;

	if (p.ip4_off && cfg->ecn_k && (__u64)qlen > cfg->ecn_k)
		mark_ce(skb, &p, st);
	if (p.tcp_off)
		stamp(skb, &p, st, int_rate_code(cfg->rate_mbps), qlen, tx,
		      now);
	return TCX_NEXT;
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

SEC("tp_btf/kfree_skb")
int BPF_PROG(int_switch_drop, struct sk_buff *skb, void *location,
	     enum skb_drop_reason reason)
{
	struct port_key key = {};
	struct port_state *st;
	struct net_device *dev;
	__u32 *idx, pkt_len = 0;
	bool lost;

	if (qdisc_drop_reason(reason))
		lost = false;
	else if (reason == bpf_core_enum_value(enum skb_drop_reason,
					       SKB_DROP_REASON_CPU_BACKLOG))
		lost = true;	/* dequeued, then refused by the peer's backlog */
	else
		return 0;
	dev = BPF_CORE_READ(skb, dev);
	if (!dev)
		return 0;
	key.ifindex = BPF_CORE_READ(dev, ifindex);
	key.netns_cookie = BPF_CORE_READ(dev, nd_net.net, net_cookie);
	idx = bpf_map_lookup_elem(lost ? (void *)&dequeue_ports :
					 (void *)&egress_ports, &key);
	if (!idx)
		return 0;
	st = bpf_map_lookup_elem(&port_states, idx);
	if (!st)
		return 0;
	/* What the qdisc accounted (qdisc_pkt_len), still in skb->cb. */
	bpf_probe_read_kernel(&pkt_len, sizeof(pkt_len),
			      &((struct qdisc_skb_cb *)skb->cb)->pkt_len);
	if (lost) {
		__sync_fetch_and_add(&st->lost_bytes, pkt_len);
		__sync_fetch_and_add(&st->lost_pkts, 1);
	} else {
		__sync_fetch_and_add(&st->drop_bytes, pkt_len);
		__sync_fetch_and_add(&st->drop_pkts, 1);
	}
	return 0;
}
