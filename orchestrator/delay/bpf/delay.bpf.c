// SPDX-License-Identifier: GPL-2.0
/*
 * The tc programs that put propagation delay on a port
 * (orchestrator/delay/README.md). Loaded once per port, with the port's
 * devices as constants:
 *
 * delay_take    path placement: tc egress of a host-facing switch port,
 *               before the INT switch's enqueue counter; link placement:
 *               tc ingress of a link's receiving interface, after the INT
 *               switch's stamp. An IPv4 packet from a source with a delay
 *               class goes to the port's sink device. A packet carrying
 *               DELAY_MARK has served its delay: the mark is cleared and
 *               the packet goes on (into the queue, or up the stack).
 * delay_return  tc ingress of the sink's peer (netem engine, path
 *               placement): what netem released is marked and sent back
 *               into the port.
 * delay_drop    tc ingress of the sink's peer (line engine): the user-space
 *               line read its copy on the sink; the kernel's is dropped.
 * delay_inject  tc ingress of the sink (line engine, link placement): the
 *               line sends a packet that served its delay on the sink's
 *               peer; it is marked and received by the port, so that it
 *               arrives there as from the wire (skb_iif = the port).
 *
 * Nothing in a packet is read beyond what is bounds-checked, and nothing
 * is written to it.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

#include "delay.h"

char LICENSE[] SEC("license") = "GPL";

#define ETH_HLEN	14
#define ETH_P_IP	0x0800
#define TC_ACT_SHOT	2
/* TC_ACT_UNSPEC, which tcx calls TCX_NEXT: let the next program decide
 * (the INT switch's enqueue counter, then the qdisc). */
#define DELAY_NEXT	(-1)

/* The port's devices: the sink packets are delayed through, and the port
 * itself (the sink's way back, netem engine). */
volatile const __u32 sink_ifindex;
volatile const __u32 port_ifindex;
/* The engine: DELAY_ENGINE_LINE or DELAY_ENGINE_NETEM. */
volatile const __u32 engine;
/* netem engine: the handle major of the sink's prio qdisc. */
volatile const __u32 prio_major;

/* Source address (network order) -> the delay class of its packets. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, DELAY_MAX_SOURCES);
	__type(key, __u32);
	__type(value, __u32);
} sources SEC(".maps");

SEC("tc")
int delay_take(struct __sk_buff *skb)
{
	void *data = (void *)(long)skb->data;
	void *end = (void *)(long)skb->data_end;
	struct ethhdr *eth = data;
	struct iphdr *ip = data + ETH_HLEN;
	__u32 src, *cls;

	if (skb->mark == DELAY_MARK) {
		skb->mark = 0;
		return DELAY_NEXT;
	}
	if ((void *)(ip + 1) > end || eth->h_proto != bpf_htons(ETH_P_IP) || ip->version != 4)
		return DELAY_NEXT;
	src = ip->saddr;
	cls = bpf_map_lookup_elem(&sources, &src);
	if (!cls)
		return DELAY_NEXT;
	if (engine == DELAY_ENGINE_NETEM)
		/* prio picks band minor - 1 when the major is its own. */
		skb->priority = (prio_major << 16) | (*cls + 1);
	return bpf_redirect(sink_ifindex, 0);
}

SEC("tc")
int delay_return(struct __sk_buff *skb)
{
	skb->mark = DELAY_MARK;
	return bpf_redirect(port_ifindex, 0);
}

SEC("tc")
int delay_drop(struct __sk_buff *skb)
{
	return TC_ACT_SHOT;
}

SEC("tc")
int delay_inject(struct __sk_buff *skb)
{
	skb->mark = DELAY_MARK;
	return bpf_redirect(port_ifindex, BPF_F_INGRESS);
}
