/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The INT switch's packet access (switch.bpf.c): where a packet's headers
 * are, its flow, and the writes the units decide: the CE mark with the IP
 * checksum, an INT record or the overflow flag with the TCP checksum.
 * BPF helpers on a tc program's __sk_buff; what to write is the units'
 * (tcopt/swunit).
 */
#ifndef CCLAB_SWITCH_PKT_H
#define CCLAB_SWITCH_PKT_H

#include "../swunit/int_stamp.h"
#include "../swunit/ecn_mark.h"
#include "switch_maps.h"

#define ETH_HLEN	14
#define ETH_P_IP	0x0800
#define IP_MF		0x2000
#define IP_OFFSET	0x1fff
#define TCP_CSUM_OFF	16
#define IP_CSUM_OFF	10

/* Where the headers of a packet are; zero offsets mean "absent". */
struct pkt {
	__u32 ip4_off;		/* IPv4 header, or 0 */
	__u32 tcp_off;		/* TCP header of an unfragmented IPv4 packet, or 0 */
	__u32 tcp_hlen;
};

static __always_inline void parse(struct __sk_buff *skb, struct pkt *p)
{
	__u8 b[TCP_MIN_HLEN];
	__u16 proto;
	__u32 l4, ihl;

	__builtin_memset(p, 0, sizeof(*p));
	if (bpf_skb_load_bytes(skb, 12, &proto, sizeof(proto)))
		return;
	if (proto != bpf_htons(ETH_P_IP))
		return;
	if (bpf_skb_load_bytes(skb, ETH_HLEN, b, 20))
		return;
	ihl = (b[0] & 0x0f) * 4;
	if ((b[0] >> 4) != 4 || ihl < 20)
		return;
	p->ip4_off = ETH_HLEN;
	l4 = ETH_HLEN + ihl;
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
}

/* Mark CE on an ECN-capable IPv4 packet, fixing the header checksum;
 * whether it did. */
static __always_inline bool mark_ce(struct __sk_buff *skb, struct pkt *p)
{
	__u8 hdr[2];
	__u16 from, to;

	if (bpf_skb_load_bytes(skb, p->ip4_off, hdr, 2))
		return false;
	if (!ecn_markable(hdr[1]))
		return false;
	__builtin_memcpy(&from, hdr, 2);
	hdr[1] |= ECN_CE;
	__builtin_memcpy(&to, hdr, 2);
	if (bpf_l3_csum_replace(skb, p->ip4_off + IP_CSUM_OFF, from, to, 2))
		return false;
	return !bpf_skb_store_bytes(skb, p->ip4_off + 1, &hdr[1], 1, 0);
}

/*
 * The packet's TCP options into opts. The length is derived and checked
 * here, right before the call, in a value nothing else keeps: older
 * verifiers (Debian 6.1's) lose a check's bounds on a copy the compiler
 * spilled to the stack, and then refuse the load as possibly zero-sized.
 */
static __always_inline long load_opts(struct __sk_buff *skb, __u32 base,
				      __u8 *opts, const struct pkt *p)
{
	__u32 n = p->tcp_hlen - TCP_MIN_HLEN;

	/* Opaque to the compiler: n is not merged with the caller's copy. */
	asm volatile("" : "+r"(n));
	if (n < INT_OPT_BASE_LEN || n > TCP_MAX_OPTS)
		return -1;
	return bpf_skb_load_bytes(skb, base, opts, n);
}

/*
 * Write a 7-byte record into the packet's INT option, if it carries a
 * valid forward option (an echo, if echo) with a free slot; when it is
 * full, set the overflow flag if flag_full; tcd: the header version and U
 * (int_stamp_write decides). The TCP checksum is patched word by word for
 * what changed.
 */
static __always_inline enum int_stamp_result write_record(struct __sk_buff *skb,
							  struct pkt *p,
							  const __u8 *rec,
							  bool flag_full,
							  bool echo, int tcd)
{
	__u8 opts[TCP_MAX_OPTS] = {};
	__u8 next[TCP_MAX_OPTS];
	__u32 optlen = p->tcp_hlen - TCP_MIN_HLEN;
	__u32 base, i, w_old, w_new;
	enum int_stamp_result res;
	__s64 diff = 0;

	if (optlen < INT_OPT_BASE_LEN || optlen > TCP_MAX_OPTS)
		return INT_STAMP_NONE;
	base = p->tcp_off + TCP_MIN_HLEN;
	if (load_opts(skb, base, opts, p))
		return INT_STAMP_NONE;
	res = int_stamp_write(opts, next, optlen, rec, flag_full, echo, tcd);
	if (res == INT_STAMP_NONE || (res == INT_STAMP_FULL && !flag_full))
		return res;

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
			return INT_STAMP_NONE;
		if (bpf_skb_store_bytes(skb, base + i * 4, &w_new, 4, 0))
			return INT_STAMP_NONE;
	}
	bpf_l4_csum_replace(skb, p->tcp_off + TCP_CSUM_OFF, 0, (__u32)diff, 0);
	return res;
}

/* A TCP packet's flow as on the wire (addresses and ports, network order). */
static __always_inline int flow_of(struct __sk_buff *skb, struct pkt *p,
				   struct qcn_flow *f)
{
	__u32 addrs[2];
	__u16 ports[2];

	__builtin_memset(f, 0, sizeof(*f));
	if (!p->tcp_off ||
	    bpf_skb_load_bytes(skb, p->ip4_off + 12, addrs, sizeof(addrs)) ||
	    bpf_skb_load_bytes(skb, p->tcp_off, ports, sizeof(ports)))
		return -1;
	f->saddr = addrs[0];
	f->daddr = addrs[1];
	f->sport = ports[0];
	f->dport = ports[1];
	return 0;
}

/* Whether a TCP packet carries payload (IPv4 total length past the headers). */
static __always_inline bool tcp_payload(struct __sk_buff *skb, struct pkt *p)
{
	__u16 tot;

	if (bpf_skb_load_bytes(skb, p->ip4_off + 2, &tot, sizeof(tot)))
		return false;
	/* GSO skbs count the first segment's length or 0: either is data. */
	return bpf_ntohs(tot) == 0 ||
	       bpf_ntohs(tot) > p->tcp_off - p->ip4_off + p->tcp_hlen;
}

#endif /* CCLAB_SWITCH_PKT_H */
