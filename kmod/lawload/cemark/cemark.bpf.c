// SPDX-License-Identifier: GPL-2.0
//go:build ignore

/*
 * Test-only stand-in for a marking switch: at a tc hook, set CE on a chosen
 * fraction of ECN-capable IPv4 packets, at random.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

char _license[] SEC("license") = "GPL";

#define TC_ACT_OK	0
#define ETH_P_IP	0x0800
#define ECN_MASK	3
#define ECN_CE		3

/* Mark when bpf_get_prandom_u32() < threshold: fraction * 2^32. */
const volatile __u32 threshold;

SEC("tc")
int cemark(struct __sk_buff *skb)
{
	void *data = (void *)(long)skb->data;
	void *end = (void *)(long)skb->data_end;
	struct ethhdr *eth = data;
	struct iphdr *ip = data + sizeof(*eth);
	__u8 old, new;

	if ((void *)(ip + 1) > end || eth->h_proto != bpf_htons(ETH_P_IP))
		return TC_ACT_OK;
	old = ip->tos;
	if (!(old & ECN_MASK) || (old & ECN_MASK) == ECN_CE)
		return TC_ACT_OK;
	if (bpf_get_prandom_u32() >= threshold)
		return TC_ACT_OK;
	new = old | ECN_CE;
	/* The checksum covers tos as the low byte of a 16-bit word. */
	bpf_l3_csum_replace(skb, sizeof(*eth) + offsetof(struct iphdr, check),
			    bpf_htons(old), bpf_htons(new), 2);
	bpf_skb_store_bytes(skb, sizeof(*eth) + offsetof(struct iphdr, tos), &new, 1, 0);
	return TC_ACT_OK;
}
