/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The glue that turns one law of kmod/law/ into a TCP congestion-control
 * module. It is not a second implementation: every decision is the law's
 * <law>_init()/<law>_on_ack(); this file only feeds them the socket's state
 * and the INT echo, and applies their window and pacing rate.
 *
 * A module defines CCLAB_LAW, the law's prefix (powertcp -> struct
 * powertcp_params ..., the congestion-control name "powertcp", its id in
 * kmod/law/law_table.h), includes this file once and declares the
 * parameters of the law's table row: <NAME>_PARAMS(CCLAB_TABLE_PARAM).
 * A law that reads ECN marks (DCQCN) also defines CCLAB_LAW_USES_ECN: the
 * sender then hands it ECN-Echo, and the receiver echoes CE exactly.
 */
#ifndef CCLAB_CC_H
#define CCLAB_CC_H

#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/version.h>
#include <linux/inet_diag.h>
#include <linux/timekeeping.h>
#include <net/tcp.h>

#include "law/law.h"
#include "cclab_int.h"
#include "trace_cclab.h"

#define LAW(x) __PASTE(CCLAB_LAW, x)
#define CCLAB_LAW_ID	__PASTE(law_id_of_, CCLAB_LAW)	/* law_table.h */
#define CCLAB_LAW_NAME	__stringify(CCLAB_LAW)

/* What the socket's icsk_ca_priv holds: the rest is allocated. */
struct cclab_cc_priv {
	struct cclab_int_sock *is;
};

/* Per-socket state behind the pointer (cclab_int_sock.priv). */
struct cclab_cc_sk {
	struct LAW(_state) st;
	struct glue_loss loss;	/* the loss envelope (kmod/law/glue.h) */
	u64 bytes_acked;	/* tp->bytes_acked at the previous ACK */
	u64 pacing_rate;	/* the law's last outputs, for get_info */
	u64 signal_ppm;
	u32 rtt_us;
	u8 nhops;
	u8 ece;			/* sender: this ACK carried ECE */
	u8 ce_state;		/* receiver: the last segment carried CE */
	u32 prior_rcv_nxt;	/* receiver: rcv_nxt before the last segment */
};

/* The parameters in force; checked as a whole on every change. */
static struct LAW(_params) cclab_params;
static bool cclab_params_ready;
static DEFINE_MUTEX(cclab_params_mutex);

static atomic64_t cclab_alloc_failed = ATOMIC64_INIT(0);

/* Parameters are parsed before module_init: defaults come first. */
static void cclab_params_prepare(void)
{
	if (!cclab_params_ready) {
		LAW(_params_default)(&cclab_params);
		cclab_params_ready = true;
	}
}

/* A module parameter: a u32 or u64 field of the law's parameters. */
struct cclab_param_desc {
	size_t off;
	size_t size;
};

/*
 * Write a parameter: the whole parameter set with the new value must pass
 * the law's own <law>_params_check(), or the write is refused (-EINVAL)
 * and nothing changes.
 */
static int cclab_param_set(const char *val, const struct kernel_param *kp)
{
	const struct cclab_param_desc *d = kp->arg;
	struct LAW(_params) p;
	u64 v;
	int err;

	err = kstrtou64(val, 0, &v);
	if (err)
		return err;
	if (d->size == sizeof(u32) && v > U32_MAX)
		return -ERANGE;
	mutex_lock(&cclab_params_mutex);
	cclab_params_prepare();
	p = cclab_params;
	if (d->size == sizeof(u32))
		*(u32 *)((u8 *)&p + d->off) = v;
	else
		*(u64 *)((u8 *)&p + d->off) = v;
	err = LAW(_params_check)(&p);
	if (err) {
		pr_warn("%s: %s=%llu refused: %s\n", CCLAB_LAW_NAME,
			kp->name, v, law_strerror(err));
	} else {
		/* Sockets read fields one at a time; each write keeps the set valid. */
		if (d->size == sizeof(u32))
			WRITE_ONCE(*(u32 *)((u8 *)&cclab_params + d->off), (u32)v);
		else
			WRITE_ONCE(*(u64 *)((u8 *)&cclab_params + d->off), v);
	}
	mutex_unlock(&cclab_params_mutex);
	return err ? -EINVAL : 0;
}

static int cclab_param_get(char *buf, const struct kernel_param *kp)
{
	const struct cclab_param_desc *d = kp->arg;
	u64 v;

	mutex_lock(&cclab_params_mutex);
	cclab_params_prepare();
	if (d->size == sizeof(u32))
		v = *(u32 *)((u8 *)&cclab_params + d->off);
	else
		v = *(u64 *)((u8 *)&cclab_params + d->off);
	mutex_unlock(&cclab_params_mutex);
	return sysfs_emit(buf, "%llu\n", v);
}

static const struct kernel_param_ops cclab_param_ops = {
	.set = cclab_param_set,
	.get = cclab_param_get,
};

#define CCLAB_PARAM(name, field, desc)						\
	static struct cclab_param_desc cclab_pd_##name = {			\
		.off = offsetof(struct LAW(_params), field),			\
		.size = sizeof_field(struct LAW(_params), field),		\
	};									\
	static_assert(sizeof_field(struct LAW(_params), field) == 4 ||		\
		      sizeof_field(struct LAW(_params), field) == 8);		\
	module_param_cb(name, &cclab_param_ops, &cclab_pd_##name, 0644);	\
	MODULE_PARM_DESC(name, desc)

/* A parameter from its row of kmod/law/law_table.h, help text included. */
#define CCLAB_TABLE_PARAM(NAME, member, name, unit, def, lo, hi, rel, desc)	\
	CCLAB_PARAM(name, member, desc "; " unit " [" #lo ", " #hi "] (" #def ")");

/*
 * For readers without the socket lock (get_info runs under RCU only): the
 * state is freed after an RCU grace period, so a pointer read here stays
 * valid until the reader's rcu_read_unlock().
 */
static struct cclab_cc_sk *cclab_cc_sk(struct sock *sk)
{
	struct cclab_cc_priv *p = inet_csk_ca(sk);
	struct cclab_int_sock *is = READ_ONCE(p->is);

	return is ? (struct cclab_cc_sk *)is->priv : NULL;
}

/*
 * Apply the law's decision to the socket, through the policy of
 * kmod/law/glue.h (window floor, loss envelope), as the eBPF build does.
 */
static void cclab_cc_apply(struct sock *sk, struct cclab_cc_sk *c,
			   const struct law_out *out, u32 acked_segs)
{
	struct tcp_sock *tp = tcp_sk(sk);
	u64 segs = glue_loss_envelope(&c->loss, out->cwnd_segs, acked_segs,
				      inet_csk(sk)->icsk_ca_state);
	u64 rate;

	tcp_snd_cwnd_set(tp, glue_clamp_cwnd(segs, tp->snd_cwnd_clamp));
	if (out->pacing_rate != LAW_PACING_NONE) {
		cmpxchg(&sk->sk_pacing_status, SK_PACING_NONE, SK_PACING_NEEDED);
		rate = out->pacing_rate;
	} else {
		/* Unpaced (Swift above one segment): the kernel's own
		 * estimate for TSQ and TSO sizing (kmod/law/glue.h). */
		cmpxchg(&sk->sk_pacing_status, SK_PACING_NEEDED, SK_PACING_NONE);
		rate = glue_unpaced_rate(tp->mss_cache, tcp_snd_cwnd(tp), tp->packets_out,
					 tp->snd_ssthresh, tp->srtt_us);
	}
	WRITE_ONCE(sk->sk_pacing_rate, min_t(u64, rate, READ_ONCE(sk->sk_max_pacing_rate)));
	c->pacing_rate = out->pacing_rate;
	c->signal_ppm = out->signal_ppm;
}

static void cclab_cc_init(struct sock *sk)
{
	struct cclab_cc_priv *p = inet_csk_ca(sk);
	struct tcp_sock *tp = tcp_sk(sk);
	struct law_out out = {};
	struct cclab_cc_sk *c;

	BUILD_BUG_ON(sizeof(struct cclab_cc_priv) > ICSK_CA_PRIV_SIZE);
	/* init can run in softirq (passive open): no sleeping allocation. */
	p->is = cclab_int_attach(sk, sizeof(*c), GFP_ATOMIC);
	if (!p->is) {
		atomic64_inc(&cclab_alloc_failed);
		pr_warn_ratelimited("%s: no memory for a socket's state: window left to the kernel\n",
				    CCLAB_LAW_NAME);
		return;
	}
	c = (struct cclab_cc_sk *)p->is->priv;
	LAW(_init)(&c->st, &cclab_params, tp->snd_nxt, tp->mss_cache, &out);
	c->bytes_acked = tp->bytes_acked;
	c->prior_rcv_nxt = tp->rcv_nxt;
	/* TCP paces at the law's rate when no fq qdisc does it. */
	cclab_cc_apply(sk, c, &out, 0);
}

static void cclab_cc_release(struct sock *sk)
{
	struct cclab_cc_priv *p = inet_csk_ca(sk);
	struct cclab_int_sock *is = p->is;

	WRITE_ONCE(p->is, NULL);
	cclab_int_detach(is);
}

/* One ACK: feed the law, apply its output, trace. */
static void cclab_cc_ack(struct sock *sk, const struct rate_sample *rs)
{
	struct cclab_cc_priv *p = inet_csk_ca(sk);
	struct tcp_sock *tp = tcp_sk(sk);
	struct inet_sock *inet = inet_sk(sk);
	struct law_out out = {};
	struct int_echo echo;
	struct law_ack ack;
	struct cclab_cc_sk *c;
	u64 t0, cost;

	if (!p->is)
		return;
	c = (struct cclab_cc_sk *)p->is->priv;
	t0 = ktime_get_ns();
	ack = (struct law_ack){};
	glue_ack_input(&ack, t0, tp->bytes_acked - c->bytes_acked, tp->snd_una,
		       tp->snd_nxt, tcp_snd_cwnd(tp), tp->mss_cache, rs->rtt_us,
		       tcp_is_cwnd_limited(sk), &c->ece);
	if (cclab_int_read(p->is, &echo))
		ack.echo = &echo;
	glue_echo_ue(&ack, ack.echo);	/* TCD: read by the laws with a tcd setting */
	c->bytes_acked = tp->bytes_acked;
	LAW(_on_ack)(&c->st, &cclab_params, &ack, &out);
	cclab_cc_apply(sk, c, &out, rs->acked_sacked);
	cost = ktime_get_ns() - t0;
	if (ack.rtt_us)
		c->rtt_us = ack.rtt_us;
	c->nhops = ack.echo ? ack.echo->nhops : 0;
	if (trace_cclab_cc_ack_enabled()) {
		struct cclab_cc_trace t = {
			.sport = ntohs(inet->inet_sport),
			.dport = ntohs(inet->inet_dport),
			.qlen0 = c->nhops ? echo.hop[0].qlen : 0,
			.echo_count = ack.echo ? echo.count : 0,
			.cost_ns = (u32)min_t(u64, cost, U32_MAX),
		};

		glue_trace_fill(&t.g, CCLAB_LAW_ID, &ack, &out, tcp_snd_cwnd(tp));
		trace_cclab_cc_ack(&t);
	}
}

/* The callback's signature gained ack and flag in Linux 6.10. */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 10, 0)
static void cclab_cc_cong_control(struct sock *sk, u32 ack, int flag,
				  const struct rate_sample *rs)
{
	cclab_cc_ack(sk, rs);
}
#else
static void cclab_cc_cong_control(struct sock *sk, const struct rate_sample *rs)
{
	cclab_cc_ack(sk, rs);
}
#endif

#ifdef CCLAB_LAW_USES_ECN
/* __tcp_send_ack() gained a flags argument (AccECN) in Linux 6.18. */
static void cclab_send_ack(struct sock *sk, u32 rcv_nxt)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 18, 0)
	__tcp_send_ack(sk, rcv_nxt, 0);
#else
	__tcp_send_ack(sk, rcv_nxt);
#endif
}

/*
 * Sender: remember that the ACK being processed carried ECN-Echo. An ACK
 * with nothing in flight never reaches cong_control (tcp_ack's no_queue
 * path): its ECE is not kept for the next one.
 */
static void cclab_cc_in_ack_event(struct sock *sk, u32 flags)
{
	struct cclab_cc_priv *p = inet_csk_ca(sk);

	if (p->is && (flags & CA_ACK_ECE) && tcp_sk(sk)->packets_out)
		((struct cclab_cc_sk *)p->is->priv)->ece = 1;
}

/* TCP_ECN_DEMAND_CWR is what makes tcp_ecn_send() set ECE. */
static void cclab_cc_echo_ce(struct tcp_sock *tp, u8 ce)
{
	if (ce)
		tp->ecn_flags |= TCP_ECN_DEMAND_CWR;
	else
		tp->ecn_flags &= ~TCP_ECN_DEMAND_CWR;
}

/* Receiver: the exact CE echo of kmod/law/glue.h (glue_ce_event). */
static void cclab_cc_ce_event(struct sock *sk, u8 ce)
{
	struct cclab_cc_priv *p = inet_csk_ca(sk);
	struct tcp_sock *tp = tcp_sk(sk);
	struct glue_ce_step step;
	struct cclab_cc_sk *c;

	if (!p->is)
		return;
	c = (struct cclab_cc_sk *)p->is->priv;
	glue_ce_event(&c->ce_state, &c->prior_rcv_nxt, ce,
		      inet_csk(sk)->icsk_ack.pending & ICSK_ACK_TIMER,
		      tp->rcv_nxt, &step);
	if (step.flush) {
		cclab_cc_echo_ce(tp, step.flush_ce);
		cclab_send_ack(sk, step.flush_rcv_nxt);
	}
	if (step.ack_now)
		inet_csk(sk)->icsk_ack.pending |= ICSK_ACK_NOW;
	cclab_cc_echo_ce(tp, ce);
}

static void cclab_cc_cwnd_event(struct sock *sk, enum tcp_ca_event ev)
{
	if (ev == CA_EVENT_ECN_IS_CE)
		cclab_cc_ce_event(sk, 1);
	else if (ev == CA_EVENT_ECN_NO_CE)
		cclab_cc_ce_event(sk, 0);
}
#define CCLAB_CC_ECN_OPS			\
	.in_ack_event = cclab_cc_in_ack_event,	\
	.cwnd_event = cclab_cc_cwnd_event,	\
	.flags = TCP_CONG_NEEDS_ECN,
#else
#define CCLAB_CC_ECN_OPS
#endif

/* Loss and undo: the policy of kmod/law/glue.h, as the eBPF build. */
static u32 cclab_cc_ssthresh(struct sock *sk)
{
	return glue_ssthresh(tcp_snd_cwnd(tcp_sk(sk)));
}

static void cclab_cc_set_state(struct sock *sk, u8 new_state)
{
	struct cclab_cc_priv *p = inet_csk_ca(sk);
	struct tcp_sock *tp = tcp_sk(sk);

	/* Called before the kernel changes icsk_ca_state. */
	if (p->is)
		glue_loss_start(&((struct cclab_cc_sk *)p->is->priv)->loss,
				inet_csk(sk)->icsk_ca_state, new_state,
				tcp_snd_cwnd(tp), tp->snd_ssthresh);
}

static u32 cclab_cc_undo_cwnd(struct sock *sk)
{
	struct cclab_cc_priv *p = inet_csk_ca(sk);
	struct tcp_sock *tp = tcp_sk(sk);

	if (p->is)
		glue_loss_undo(&((struct cclab_cc_sk *)p->is->priv)->loss);
	return glue_undo_cwnd(tcp_snd_cwnd(tp), tp->prior_cwnd);
}

/*
 * ss -ti shows the law's state in the BBR info block, the one ss prints
 * with a rate and two gains (kmod/README.md): bw = the law's pacing rate,
 * mrtt = the last RTT sample, pacing_gain = the law's signal (1.0 = 10^6
 * ppm), cwnd_gain = hops in the last INT echo.
 */
static size_t cclab_cc_get_info(struct sock *sk, u32 ext, int *attr,
				union tcp_cc_info *info)
{
	struct cclab_cc_sk *c = cclab_cc_sk(sk);

	if (!(ext & (1 << (INET_DIAG_BBRINFO - 1))) &&
	    !(ext & (1 << (INET_DIAG_VEGASINFO - 1))))
		return 0;
	memset(&info->bbr, 0, sizeof(info->bbr));
	if (c) {
		info->bbr.bbr_bw_lo = (u32)c->pacing_rate;
		info->bbr.bbr_bw_hi = (u32)(c->pacing_rate >> 32);
		info->bbr.bbr_min_rtt = c->rtt_us;
		info->bbr.bbr_pacing_gain = (u32)min_t(u64, c->signal_ppm * 256 / LAW_PPM, U32_MAX);
		info->bbr.bbr_cwnd_gain = (u32)c->nhops << 8;
	}
	*attr = INET_DIAG_BBRINFO;
	return sizeof(info->bbr);
}

static struct tcp_congestion_ops cclab_cc_ops __read_mostly = {
	.init = cclab_cc_init,
	.release = cclab_cc_release,
	.cong_control = cclab_cc_cong_control,
	.ssthresh = cclab_cc_ssthresh,
	.set_state = cclab_cc_set_state,
	.undo_cwnd = cclab_cc_undo_cwnd,
	.get_info = cclab_cc_get_info,
	CCLAB_CC_ECN_OPS
	.owner = THIS_MODULE,
	.name = CCLAB_LAW_NAME,
};

static int cclab_stat_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%lld\n", atomic64_read((atomic64_t *)kp->arg));
}

static const struct kernel_param_ops cclab_stat_ops = {
	.get = cclab_stat_get,
};
module_param_cb(alloc_failed, &cclab_stat_ops, &cclab_alloc_failed, 0444);
MODULE_PARM_DESC(alloc_failed, "sockets left to the kernel's window for lack of memory (read only)");

static int __init cclab_cc_module_init(void)
{
	int err;

	mutex_lock(&cclab_params_mutex);
	cclab_params_prepare();
	err = LAW(_params_check)(&cclab_params);
	mutex_unlock(&cclab_params_mutex);
	if (err) {
		pr_err("%s: parameters refused: %s\n", CCLAB_LAW_NAME, law_strerror(err));
		return -EINVAL;
	}
	return tcp_register_congestion_control(&cclab_cc_ops);
}

static void __exit cclab_cc_module_exit(void)
{
	tcp_unregister_congestion_control(&cclab_cc_ops);
}

module_init(cclab_cc_module_init);
module_exit(cclab_cc_module_exit);
MODULE_LICENSE("GPL");
MODULE_SOFTDEP("pre: cclab_int");

#endif /* CCLAB_CC_H */
