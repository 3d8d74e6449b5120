/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The struct_ops glue of one law, shared by every kmod/bpf/<law>.bpf.c.
 * The includer defines LAW_NAME (the law's C prefix and its congestion
 * control name: law_table.h gives its id) and LAW_USES_INT (reads the
 * INT echo), LAW_PATH_HOPS (takes its path's hop count at init from the
 * table cclab_path_hops: <law>_set_path_hops()), LAW_USES_ECN (DCTCP, DCQCN), LAW_IN_PRIV (its state fits the
 * socket's private area, see CCLAB_IN_PRIV) and LAW_READS_UE (TCD's UE
 * flag of the INT echo, when the law's tcd parameter is 1) as needed. All the control
 * is the law core's (kmod/law/); this file only moves data between the
 * kernel's callbacks and law_ack / law_out:
 *
 *	init		<law>_init(), then apply its window and pacing rate
 *	cong_control	every ACK: build law_ack, <law>_on_ack(), apply
 *	in_ack_event	(ECN) remember whether the ACK carried ECE
 *	cwnd_event	(ECN, receiver) echo CE exactly (RFC 8257 3.2)
 *	ssthresh	loss: the kernel's halving (the envelope's slow-start
 *			target after a timeout)
 *	set_state	loss: start the loss envelope
 *	undo_cwnd	spurious loss: restore the envelope
 *
 * The window floor, loss and undo policy is kmod/law/glue.h's, shared
 * with the module build.
 *
 * cong_control, unlike cong_avoid, leaves sk_pacing_rate alone (the kernel
 * skips tcp_update_pacing_rate()), so the law's rate stays in force; for
 * a law that does not pace the glue sets the kernel's estimate itself
 * (glue_unpaced_rate(), kmod/law/glue.h).
 */
#ifndef CCLAB_CC_LAW_H
#define CCLAB_CC_LAW_H

#include "cc_glue.h"	/* and law.h */

#define CCLAB_CAT_(a, b)	a##b
#define CCLAB_CAT(a, b)		CCLAB_CAT_(a, b)
#define CCLAB_STR_(a)		#a
#define CCLAB_STR(a)		CCLAB_STR_(a)
#define LAW(x)			CCLAB_CAT(LAW_NAME, x)	/* LAW(_on_ack) */
#define LAW_ID			CCLAB_CAT(law_id_of_, LAW_NAME)	/* law_table.h */
#define GLUE(x)			CCLAB_CAT(cc_, x)
/* BPF_PROG pastes its name unexpanded: expand GLUE() first. */
#define CCLAB_PROG(name, args...)	BPF_PROG(name, ##args)

/* The parameters in force, set by the loader (kmod/lawload) before load. */
const volatile struct LAW(_params) cclab_params;

/*
 * The law reads the parameters in place. The empty asm hides where the
 * pointer comes from: through a plain pointer to the zero-initialised
 * object the compiler would fold zeros into the code. The verifier still
 * sees frozen .rodata, so the loads are of known constants.
 */
#define CCLAB_PARAMS(p)							\
	const struct LAW(_params) *p = (const void *)&cclab_params;	\
	asm volatile("" : "+r"(p))

/*
 * What the glue keeps per socket, besides the law's state: 16 bytes (20
 * with ECN), so that Swift's 88-byte state still fits icsk_ca_priv.
 */
struct cclab_sock {
	struct LAW(_state) law;
	__u32 prior_snd_una;	/* acked_bytes = snd_una - prior_snd_una */
	struct glue_loss loss;	/* the loss envelope (kmod/law/glue.h) */
	__u8 ece;		/* this ACK carried ECE (in_ack_event) */
	__u8 ce_state;		/* receiver: the last segment carried CE */
#ifdef LAW_USES_ECN
	__u32 prior_rcv_nxt;	/* receiver: rcv_nxt before the last segment */
#endif
};

/* Socket storage, for the laws whose cclab_sock exceeds icsk_ca_priv. */
struct {
	__uint(type, BPF_MAP_TYPE_SK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct cclab_sock);
} cclab_state SEC(".maps");

#ifdef LAW_PATH_HOPS
/*
 * The switches on the path from saddr to daddr (network order), filled by
 * the runner from the topology (kmod/lawload SetPathHops): what the Swift
 * paper reads off the TTL. Shared by every law that reads it, through the
 * pin. A flow whose pair is not in it keeps the law's hops parameter.
 */
struct cclab_path_key {
	__u32 saddr;
	__u32 daddr;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, struct cclab_path_key);
	__type(value, __u32);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} cclab_path_hops SEC(".maps");
#endif

#if defined(LAW_USES_INT) || defined(LAW_READS_UE)
#include "int_echo.h"
/*
 * Written by the INT host agent (tcopt/), shared through the pin. A
 * LAW_READS_UE law (TCD: TIMELY, DCQCN) looks only at its UE flag, and
 * only with its tcd parameter on.
 */
struct {
	__uint(type, BPF_MAP_TYPE_SK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct int_echo_sock);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} cclab_int_echo SEC(".maps");
#endif

/*
 * Where a law's per-socket data lives. In the socket's congestion-control
 * private area (icsk_ca_priv, 104 bytes, zeroed by TCP before init) when
 * it fits: theta-PowerTCP, Swift, DCTCP, TIMELY, DCQCN, QCN, QCN-T; it
 * costs nothing to find (QCN and QCN-T still look the echo up). The
 * INT laws (PowerTCP, HPCC) keep the last echo's hop records and do not
 * fit: their data lives in the cc area of the INT echo's own socket
 * storage (tcopt/int_echo.h), so that the one lookup they need for the
 * echo finds it too. A socket-storage lookup, a helper call per ACK, was
 * a third of Swift's per-ACK cost (docs/performance.md). Any other law
 * would fall back on a socket storage of its own (cclab_state).
 */
#define CCLAB_IN_PRIV \
	(sizeof(struct cclab_sock) <= sizeof(((struct inet_connection_sock *)0)->icsk_ca_priv))

#ifdef LAW_IN_PRIV	/* the includer counts on it: keep it so */
_Static_assert(CCLAB_IN_PRIV, "the law's state no longer fits icsk_ca_priv");
#endif

#ifdef LAW_USES_INT
#define CCLAB_IN_ECHO	(!CCLAB_IN_PRIV)
_Static_assert(sizeof(struct cclab_sock) <= sizeof(((struct int_echo_sock *)0)->cc),
	       "the law's state no longer fits the INT echo storage's cc area");
#else
#define CCLAB_IN_ECHO	0
#endif

/*
 * The law's data, and (INT laws) the echo; create: at init, where the
 * storage may not exist yet (no echo so far: the agent finds it created,
 * its echo fields zero, which the laws read as no echo).
 */
static __always_inline struct cclab_sock *cclab_sock_echo(struct sock *sk, int create,
							   const struct int_echo **echo)
{
#ifdef LAW_USES_INT
	struct int_echo_sock *es;

	if (CCLAB_IN_ECHO) {
		es = bpf_sk_storage_get(&cclab_int_echo, sk, 0,
					create ? BPF_SK_STORAGE_GET_F_CREATE : 0);
		if (!es)
			return NULL;
		if (echo)
			*echo = &es->echo;
		return (struct cclab_sock *)es->cc;
	}
	if (echo)
		*echo = bpf_sk_storage_get(&cclab_int_echo, sk, 0, 0);
#endif
	if (CCLAB_IN_PRIV)
		return (struct cclab_sock *)cclab_icsk(sk)->icsk_ca_priv;
	return bpf_sk_storage_get(&cclab_state, sk, 0,
				  create ? BPF_SK_STORAGE_GET_F_CREATE : 0);
}

static __always_inline struct cclab_sock *cclab_sock_of(struct sock *sk, int create)
{
	return cclab_sock_echo(sk, create, NULL);
}

/* ---- Parameters: run by the loader (BPF_PROG_TEST_RUN), never on ACKs ---- */

struct cclab_params_ctx {
	struct LAW(_params) p;
	char msg[96];		/* law_strerror() of a failed check */
};

SEC("syscall")
int cclab_params_default(struct cclab_params_ctx *ctx)
{
	LAW(_params_default)(&ctx->p);
	return 0;
}

SEC("syscall")
int cclab_params_check(struct cclab_params_ctx *ctx)
{
	struct LAW(_params) p = ctx->p;
	int err = LAW(_params_check)(&p);
	char msg[sizeof(ctx->msg)] = {};

	if (err) {
		/* The helper writes to the stack only, not to ctx. */
		bpf_probe_read_kernel_str(msg, sizeof(msg), law_strerror(err));
		__builtin_memcpy(ctx->msg, msg, sizeof(msg));
	}
	return err;
}

/* ---- The congestion control ---- */

/* The laws do not see losses: the policy of kmod/law/glue.h acts on them. */
static __always_inline void cclab_apply(struct sock *sk, struct cclab_sock *cs,
					const struct law_out *out, __u32 acked_segs)
{
	struct tcp_sock *tp = cclab_tcp_sk(sk);

	tp->snd_cwnd = glue_clamp_cwnd(glue_loss_envelope(&cs->loss, out->cwnd_segs, acked_segs,
							  cclab_icsk(sk)->icsk_ca_state),
				       tp->snd_cwnd_clamp);
	if (out->pacing_rate != LAW_PACING_NONE) {
		cclab_pacing_enable(sk);
		cclab_set_pacing_rate(sk, out->pacing_rate);
	} else {
		/* Unpaced (DCTCP; Swift above one segment): the kernel's own
		 * estimate for TSQ and TSO sizing (kmod/law/glue.h). */
		cclab_pacing_disable(sk);
		cclab_set_pacing_rate(sk, glue_unpaced_rate(tp->mss_cache, tp->snd_cwnd,
							    tp->packets_out, tp->snd_ssthresh,
							    tp->srtt_us));
	}
}

SEC("struct_ops")
void CCLAB_PROG(GLUE(init), struct sock *sk)
{
	struct tcp_sock *tp = cclab_tcp_sk(sk);
	struct law_out out = {};
	struct cclab_sock *cs;
	CCLAB_PARAMS(p);

	cs = cclab_sock_of(sk, 1);
	if (!cs)
		return;
	LAW(_init)(&cs->law, p, tp->snd_nxt, tp->mss_cache, &out);
#ifdef LAW_PATH_HOPS
	{
		struct cclab_path_key k = {
			.saddr = sk->__sk_common.skc_rcv_saddr,
			.daddr = sk->__sk_common.skc_daddr,
		};
		__u32 *hops = bpf_map_lookup_elem(&cclab_path_hops, &k);

		if (hops)
			LAW(_set_path_hops)(&cs->law, *hops);
	}
#endif
	cs->prior_snd_una = tp->snd_una;
	cs->ece = 0;
	cs->ce_state = 0;
#ifdef LAW_USES_ECN
	cs->prior_rcv_nxt = tp->rcv_nxt;
#endif
	__builtin_memset(&cs->loss, 0, sizeof(cs->loss));
	cclab_apply(sk, cs, &out, 0);
	cclab_trace(sk, LAW_ID, NULL, &out);
}

SEC("struct_ops")
void CCLAB_PROG(GLUE(cong_control), struct sock *sk, __u32 ack, int flag,
	      const struct rate_sample *rs)
{
	struct tcp_sock *tp = cclab_tcp_sk(sk);
	struct law_out out = {};
	struct law_ack a = {};
	struct cclab_sock *cs;
	CCLAB_PARAMS(p);

#ifdef LAW_USES_INT
	cs = cclab_sock_echo(sk, 0, &a.echo);
#else
	cs = cclab_sock_of(sk, 0);
#endif
	if (!cs)
		return;
	/* CLOCK_MONOTONIC ns, refreshed by TCP for this ACK: no helper call. */
	glue_ack_input(&a, tp->tcp_clock_cache, tp->snd_una - cs->prior_snd_una,
		       tp->snd_una, tp->snd_nxt, tp->snd_cwnd, tp->mss_cache,
		       rs->rtt_us, cclab_cwnd_limited(tp), &cs->ece);
	cs->prior_snd_una = a.snd_una;
#ifdef LAW_USES_INT
	glue_echo_ue(&a, a.echo);
#elif defined(LAW_READS_UE)
	/* p->tcd is frozen .rodata: without TCD the lookup is dead code. */
	if (p->tcd) {
		struct int_echo_sock *es = bpf_sk_storage_get(&cclab_int_echo, sk, 0, 0);

		glue_echo_ue(&a, es ? &es->echo : NULL);
	}
#endif
	LAW(_on_ack)(&cs->law, p, &a, &out);
	cclab_apply(sk, cs, &out, rs->acked_sacked);
	cclab_trace(sk, LAW_ID, &a, &out);
}

SEC("struct_ops")
__u32 CCLAB_PROG(GLUE(ssthresh), struct sock *sk)
{
	return glue_ssthresh(cclab_tcp_sk(sk)->snd_cwnd);
}

SEC("struct_ops")
void CCLAB_PROG(GLUE(set_state), struct sock *sk, __u8 new_state)
{
	struct tcp_sock *tp = cclab_tcp_sk(sk);
	struct cclab_sock *cs;

	if (new_state != TCP_CA_Recovery && new_state != TCP_CA_Loss)
		return;
	cs = cclab_sock_of(sk, 0);
	if (cs)	/* the kernel calls this before it changes icsk_ca_state */
		glue_loss_start(&cs->loss, cclab_icsk(sk)->icsk_ca_state, new_state,
				tp->snd_cwnd, tp->snd_ssthresh);
}

/* A loss found spurious (DSACK, F-RTO): as Reno, back to before it. */
SEC("struct_ops")
__u32 CCLAB_PROG(GLUE(undo_cwnd), struct sock *sk)
{
	struct tcp_sock *tp = cclab_tcp_sk(sk);
	struct cclab_sock *cs;

	cs = cclab_sock_of(sk, 0);
	if (cs)
		glue_loss_undo(&cs->loss);
	return glue_undo_cwnd(tp->snd_cwnd, tp->prior_cwnd);
}

SEC("struct_ops")
void CCLAB_PROG(GLUE(release), struct sock *sk)
{
	/* The echo storage is the agent's: it goes with the socket. */
	if (!CCLAB_IN_PRIV && !CCLAB_IN_ECHO)
		bpf_sk_storage_delete(&cclab_state, sk);
}

#ifdef LAW_USES_ECN
SEC("struct_ops")
void CCLAB_PROG(GLUE(in_ack_event), struct sock *sk, __u32 flags)
{
	struct cclab_sock *cs = cclab_sock_of(sk, 0);

	/* nothing in flight: the ACK never reaches cong_control */
	if (cs && (flags & CA_ACK_ECE) && cclab_tcp_sk(sk)->packets_out)
		cs->ece = 1;
}

static __always_inline void cclab_echo_ce(struct tcp_sock *tp, __u32 ce)
{
	/* TCP_ECN_DEMAND_CWR is what makes tcp_ecn_send() set ECE. */
	if (ce)
		tp->ecn_flags |= CCLAB_TCP_ECN_DEMAND_CWR;
	else
		tp->ecn_flags &= ~CCLAB_TCP_ECN_DEMAND_CWR;
}

/* Receiver: the exact CE echo of kmod/law/glue.h (glue_ce_event). */
static __always_inline void cclab_ce_event(struct sock *sk, __u8 ce)
{
	struct inet_connection_sock *icsk = cclab_icsk(sk);
	struct tcp_sock *tp = cclab_tcp_sk(sk);
	struct glue_ce_step step;
	struct cclab_sock *cs;

	cs = cclab_sock_of(sk, 0);
	if (!cs)
		return;
	glue_ce_event(&cs->ce_state, &cs->prior_rcv_nxt, ce,
		      icsk->icsk_ack.pending & CCLAB_ICSK_ACK_TIMER,
		      tp->rcv_nxt, &step);
	if (step.flush) {
		cclab_echo_ce(tp, step.flush_ce);
		bpf_tcp_send_ack(tp, step.flush_rcv_nxt);
	}
	if (step.ack_now)
		icsk->icsk_ack.pending |= CCLAB_ICSK_ACK_NOW;
	cclab_echo_ce(tp, ce);
}

SEC("struct_ops")
void CCLAB_PROG(GLUE(cwnd_event), struct sock *sk, enum tcp_ca_event ev)
{
	if (ev == CA_EVENT_ECN_IS_CE)
		cclab_ce_event(sk, 1);
	else if (ev == CA_EVENT_ECN_NO_CE)
		cclab_ce_event(sk, 0);
}
#define CCLAB_ECN_OPS \
	.in_ack_event = (void *)GLUE(in_ack_event), \
	.cwnd_event = (void *)GLUE(cwnd_event),
#define CCLAB_CONG_FLAGS (CCLAB_TCP_CONG_NON_RESTRICTED | CCLAB_TCP_CONG_NEEDS_ECN)
#else
#define CCLAB_ECN_OPS
#define CCLAB_CONG_FLAGS CCLAB_TCP_CONG_NON_RESTRICTED
#endif

SEC(".struct_ops.link")
struct tcp_congestion_ops cclab_ops = {
	.init = (void *)GLUE(init),
	.cong_control = (void *)GLUE(cong_control),
	.ssthresh = (void *)GLUE(ssthresh),
	.set_state = (void *)GLUE(set_state),
	.undo_cwnd = (void *)GLUE(undo_cwnd),
	.release = (void *)GLUE(release),
	CCLAB_ECN_OPS
	/*
	 * Non-restricted: a network namespace other than the initial one may
	 * make the law its default (net.ipv4.tcp_congestion_control, as
	 * `cclab topo up --cc` does in every host), and any user may pick it.
	 */
	.flags = CCLAB_CONG_FLAGS,
	.name = CCLAB_STR(LAW_NAME),
};

#endif /* CCLAB_CC_LAW_H */
