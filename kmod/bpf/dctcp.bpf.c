// SPDX-License-Identifier: GPL-2.0
//go:build ignore

/*
 * DCTCP as a struct_ops tcp_congestion_ops: glue around the law core.
 * The sender feeds the law the bytes acknowledged and whether the ACK
 * carried ECE; the law's alpha sets ssthresh. The receiver side echoes CE
 * exactly, one ACK per change of CE state.
 */
#include "cc_glue.h"
#include "placeholder_dctcp.h"

const volatile struct dctcp_params cclab_params;

extern void tcp_reno_cong_avoid(struct sock *sk, __u32 ack, __u32 acked) __ksym;

struct dctcp_ca {
	struct dctcp_state law;
	__u32 prior_snd_una;
	__u32 ce_state;		/* receiver: last segment was CE */
	__u32 loss_cwnd;
};

_Static_assert(sizeof(struct dctcp_ca) <= sizeof(((struct inet_connection_sock *)0)->icsk_ca_priv),
	       "DCTCP state must fit icsk_ca_priv");

static __always_inline struct dctcp_ca *ca_of(struct sock *sk)
{
	return (struct dctcp_ca *)cclab_icsk(sk)->icsk_ca_priv;
}

SEC("syscall")
int cclab_params_default(struct dctcp_params *ctx)
{
	*ctx = dctcp_params_default();
	return 0;
}

SEC("syscall")
int cclab_params_check(struct dctcp_params *ctx)
{
	struct dctcp_params p = *ctx;

	return dctcp_params_check(&p);
}

SEC("struct_ops")
void BPF_PROG(cclab_dctcp_init, struct sock *sk)
{
	struct tcp_sock *tp = cclab_tcp_sk(sk);
	struct dctcp_ca *ca = ca_of(sk);
	struct dctcp_state st = {};

	dctcp_init((const struct dctcp_params *)&cclab_params, &st, tp->snd_nxt);
	ca->law = st;
	ca->prior_snd_una = tp->snd_una;
	ca->ce_state = 0;
	ca->loss_cwnd = 0;
}

SEC("struct_ops")
__u32 BPF_PROG(cclab_dctcp_ssthresh, struct sock *sk)
{
	struct tcp_sock *tp = cclab_tcp_sk(sk);
	struct dctcp_ca *ca = ca_of(sk);
	struct dctcp_state st = ca->law;

	ca->loss_cwnd = tp->snd_cwnd;
	return dctcp_ssthresh(&st, tp->snd_cwnd);
}

SEC("struct_ops")
void BPF_PROG(cclab_dctcp_in_ack_event, struct sock *sk, __u32 flags)
{
	struct tcp_sock *tp = cclab_tcp_sk(sk);
	struct dctcp_ca *ca = ca_of(sk);
	struct dctcp_state st = ca->law;
	__u32 acked = tp->snd_una - ca->prior_snd_una;

	ca->prior_snd_una = tp->snd_una;
	dctcp_on_ack((const struct dctcp_params *)&cclab_params, &st, acked,
		     !!(flags & CA_ACK_ECE), tp->snd_una, tp->snd_nxt);
	ca->law = st;
	cclab_trace(sk, CCLAB_LAW_DCTCP, st.alpha, CCLAB_NOTE_NONE);
}

SEC("struct_ops")
void BPF_PROG(cclab_dctcp_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
	tcp_reno_cong_avoid(sk, ack, acked);
}

/*
 * Receiver: when the CE state of arriving segments changes, acknowledge
 * what came before with the old ECE state at once, then echo the new state
 * on every ACK (TCP_ECN_DEMAND_CWR drives ECE in tcp_ecn_send()).
 */
static __always_inline void ce_state_change(struct sock *sk, __u32 ce)
{
	struct tcp_sock *tp = cclab_tcp_sk(sk);
	struct inet_connection_sock *icsk = cclab_icsk(sk);
	struct dctcp_ca *ca = ca_of(sk);

	if (ca->ce_state == ce)
		return;
	if (icsk->icsk_ack.pending & CCLAB_ICSK_ACK_TIMER)
		icsk->icsk_ack.pending |= CCLAB_ICSK_ACK_NOW;
	ca->ce_state = ce;
	if (ce)
		tp->ecn_flags |= CCLAB_TCP_ECN_DEMAND_CWR;
	else
		tp->ecn_flags &= ~CCLAB_TCP_ECN_DEMAND_CWR;
}

SEC("struct_ops")
void BPF_PROG(cclab_dctcp_cwnd_event, struct sock *sk, enum tcp_ca_event ev)
{
	if (ev == CA_EVENT_ECN_IS_CE)
		ce_state_change(sk, 1);
	else if (ev == CA_EVENT_ECN_NO_CE)
		ce_state_change(sk, 0);
}

SEC("struct_ops")
__u32 BPF_PROG(cclab_dctcp_undo_cwnd, struct sock *sk)
{
	struct tcp_sock *tp = cclab_tcp_sk(sk);
	struct dctcp_ca *ca = ca_of(sk);

	return ca->loss_cwnd > tp->snd_cwnd ? ca->loss_cwnd : tp->snd_cwnd;
}

SEC(".struct_ops.link")
struct tcp_congestion_ops cclab_ops = {
	.init = (void *)cclab_dctcp_init,
	.ssthresh = (void *)cclab_dctcp_ssthresh,
	.in_ack_event = (void *)cclab_dctcp_in_ack_event,
	.cong_avoid = (void *)cclab_dctcp_cong_avoid,
	.cwnd_event = (void *)cclab_dctcp_cwnd_event,
	.undo_cwnd = (void *)cclab_dctcp_undo_cwnd,
	.flags = CCLAB_TCP_CONG_NEEDS_ECN,
	.name = "dctcp",
};
