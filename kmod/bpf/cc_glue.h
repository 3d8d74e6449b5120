/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What every struct_ops build of a law shares: the per-ACK trace ring
 * buffer and its switch, access to the TCP socket, and pacing. The laws
 * themselves are in kmod/law/; a <law>.bpf.c file only translates between
 * the kernel's callbacks and the law's input and output structs.
 */
#ifndef CCLAB_CC_GLUE_H
#define CCLAB_CC_GLUE_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_endian.h>
#include "law.h"	/* after vmlinux.h: its __u types */

char _license[] SEC("license") = "GPL";

/* From include/net/tcp.h: macros are not in vmlinux.h. */
#define CCLAB_TCP_CONG_NON_RESTRICTED	0x1
#define CCLAB_TCP_CONG_NEEDS_ECN	0x2
#define CCLAB_TCP_INFINITE_SSTHRESH	0x7fffffff
#define CCLAB_TCP_ECN_OK		1
#define CCLAB_TCP_ECN_DEMAND_CWR	4
#define CCLAB_ICSK_ACK_TIMER		2
#define CCLAB_ICSK_ACK_NOW		8

/*
 * The per-ACK trace, shared by every law loaded from the same pin
 * directory (pinned by name), read by Go (kmod/lawload/trace.go). One
 * record per ACK while cclab_cc_ctl[0].trace is non-zero.
 */
struct cclab_trace_rec {
	__u64 time_ns;		/* CLOCK_MONOTONIC */
	struct glue_trace g;	/* what both builds trace (kmod/law/glue.h) */
	__u32 saddr;		/* IPv4, network order; 0 for IPv6 */
	__u32 daddr;
	__u16 sport;		/* host order */
	__u16 dport;
	__u32 mss;		/* mss_cache: cwnd_segs * mss is the window in bytes */
};

struct cclab_cc_ctl {
	__u32 trace;		/* non-zero: emit trace records */
	__u32 pad;
	__u64 dropped;		/* records lost to a full ring buffer */
};

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4 << 20);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} cclab_cc_trace SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, __u32);
	__type(value, struct cclab_cc_ctl);
	__uint(max_entries, 1);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} cclab_cc_ctl SEC(".maps");

static __always_inline struct tcp_sock *cclab_tcp_sk(struct sock *sk)
{
	/* struct_ops promotes the sock argument to a tcp_sock. */
	return (struct tcp_sock *)sk;
}

static __always_inline struct inet_connection_sock *cclab_icsk(struct sock *sk)
{
	return (struct inet_connection_sock *)sk;
}

/*
 * Pacing: with no fq qdisc, TCP paces by itself only when sk_pacing_status
 * is SK_PACING_NEEDED (tcp_needs_internal_pacing()). Both fields are
 * writable from tcp_congestion_ops programs since Linux 6.0.
 */
static __always_inline void cclab_pacing_enable(struct sock *sk)
{
	if (sk->sk_pacing_status == SK_PACING_NONE)
		sk->sk_pacing_status = SK_PACING_NEEDED;
}

/*
 * The kernel's tcp_is_cwnd_limited(): the window limited sending in the
 * last window of data, or, in slow start, it is below twice the most that
 * was in flight. is_cwnd_limited is a bitfield: CO-RE finds its bit.
 */
static __always_inline int cclab_cwnd_limited(struct tcp_sock *tp)
{
	if (BPF_CORE_READ_BITFIELD(tp, is_cwnd_limited))
		return 1;
	if (tp->snd_cwnd < tp->snd_ssthresh)
		return tp->snd_cwnd < 2 * tp->max_packets_out;
	return 0;
}

/* Back to the kernel's choice when the law stops pacing (not fq's). */
static __always_inline void cclab_pacing_disable(struct sock *sk)
{
	if (sk->sk_pacing_status == SK_PACING_NEEDED)
		sk->sk_pacing_status = SK_PACING_NONE;
}

static __always_inline void cclab_set_pacing_rate(struct sock *sk, __u64 bytes_per_sec)
{
	if (bytes_per_sec > sk->sk_max_pacing_rate)
		bytes_per_sec = sk->sk_max_pacing_rate;
	sk->sk_pacing_rate = bytes_per_sec;
}

static __always_inline void cclab_trace(struct sock *sk, __u8 law, const struct law_ack *ack,
					const struct law_out *out)
{
	struct tcp_sock *tp = cclab_tcp_sk(sk);
	struct cclab_trace_rec *r;
	struct cclab_cc_ctl *ctl;
	__u32 zero = 0;

	ctl = bpf_map_lookup_elem(&cclab_cc_ctl, &zero);
	if (!ctl || !ctl->trace)
		return;
	r = bpf_ringbuf_reserve(&cclab_cc_trace, sizeof(*r), 0);
	if (!r) {
		__sync_fetch_and_add(&ctl->dropped, 1);
		return;
	}
	r->time_ns = bpf_ktime_get_ns();
	glue_trace_fill(&r->g, law, ack, out, tp->snd_cwnd);
	r->saddr = sk->__sk_common.skc_rcv_saddr;
	r->daddr = sk->__sk_common.skc_daddr;
	r->sport = sk->__sk_common.skc_num;
	r->dport = bpf_ntohs(sk->__sk_common.skc_dport);
	r->mss = tp->mss_cache;
	bpf_ringbuf_submit(r, 0);
}

#endif /* CCLAB_CC_GLUE_H */
