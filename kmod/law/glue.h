/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The policy that wraps a law in a TCP congestion control, the same in
 * both builds (the struct_ops glue kmod/bpf/cc_law.h and the module glue
 * kmod/cclab_cc.h), written once here: the window floor, the reaction to
 * loss and timeout, the undo of a spurious one, the law's per-ACK input
 * and the receiver's ECN echo. The law itself sees ACKs only; this is
 * what the glue does around it. Plain integers, no
 * kernel types: the glue passes the socket's values in, and user space
 * tests it (kmod/law/glue_test.go). Included by law.h.
 *
 * Window floor: 2 segments, the kernel's own (tcp_cwnd_min()): with one
 * segment in flight a delayed-ACK receiver waits 40 ms per ACK and a
 * delay-based law reads that as congestion, collapsing for good. A law's
 * smaller window still limits the rate through its pacing rate.
 *
 * Loss: an envelope over the law's window, Reno's response as the
 * kernel's DCTCP has it. Fast recovery halves the window in force; a
 * timeout restarts from the kernel's window (packets in flight + 1) and
 * slow-starts up to the kernel's ssthresh (half the window before it).
 * Above ssthresh the envelope grows one segment per window of
 * acknowledged segments, as Reno counts, and it ends once the law's own
 * window is below it. A spurious loss undone by the kernel restores the
 * envelope as it was. Without an envelope a law that keeps its window
 * through drops (DCTCP on a drop-tail queue, any law with a stale signal)
 * would never yield to a competing flow.
 *
 * ECN: the laws that read marks (DCTCP, DCQCN) get them in law_ack; CWR is the
 * kernel's. TCD's UE likewise (glue_echo_ue), from the INT echo. Pacing: the law's rate when it paces (law_out.pacing_rate),
 * bounded by the socket's maximum. A law that does not pace (DCTCP, Swift
 * above one segment) leaves the socket unpaced, but its sk_pacing_rate is
 * still the kernel's estimate, glue_unpaced_rate(): both builds replace
 * cong_avoid with cong_control, which makes the kernel skip
 * tcp_update_pacing_rate(), and the rate would stay at its initial ~0
 * (unlimited). TCP small queues and TSO autosizing read it: unlimited, one
 * socket may hold tcp_limit_output_bytes (1-4 MB) in its host's NIC queue
 * (1 MB: 80 ms at 100 Mbit/s), where no switch marks or stamps it, and
 * every skb is 64 KB.
 *
 * Trace: per ACK both builds record struct glue_trace, the same fields
 * with the same meaning (the eBPF build in its ring-buffer record, the
 * module in its tracepoint), filled by glue_trace_fill().
 */
#ifndef CCLAB_LAW_GLUE_H
#define CCLAB_LAW_GLUE_H

#define GLUE_CWND_MIN		2	/* segments */
#define GLUE_SEGS_MAX		0xffffU	/* the envelope counts in 16 bits */

/* The kernel's enum tcp_ca_state values the policy tells apart. */
#define GLUE_CA_RECOVERY	3	/* TCP_CA_Recovery: fast recovery */
#define GLUE_CA_LOSS		4	/* TCP_CA_Loss: after a timeout */

/*
 * The loss envelope, in segments (16-bit, saturating: a cap of 65535
 * segments, ~95 MB, constrains no window here). 10 bytes.
 */
struct glue_loss {
	__u16 cap;		/* 0 = no envelope */
	__u16 ssthresh;		/* the envelope slow-starts up to it */
	__u16 acked;		/* segments acknowledged toward its next step */
	__u16 undo_cap;		/* the envelope before the loss (undo) */
	__u16 undo_ssthresh;
};

LAW_INLINE __u16 glue_segs16(__u32 segs)
{
	return segs < GLUE_SEGS_MAX ? segs : GLUE_SEGS_MAX;
}

/* The window the socket gets: segs within [GLUE_CWND_MIN, clamp]. */
LAW_INLINE __u32 glue_clamp_cwnd(__u64 segs, __u32 clamp)
{
	if (segs < GLUE_CWND_MIN)
		segs = GLUE_CWND_MIN;
	if (segs > clamp)
		segs = clamp;
	return (__u32)segs;
}

/*
 * The kernel enters ca_state new_state (called before it changes
 * cur_state). snd_cwnd and snd_ssthresh are the kernel's at that moment:
 * on a timeout it has just set them to in flight + 1 and half the window.
 */
LAW_INLINE void glue_loss_start(struct glue_loss *g, __u8 cur_state,
				__u8 new_state, __u32 snd_cwnd,
				__u32 snd_ssthresh)
{
	__u32 cap, ssthresh;

	if (new_state != GLUE_CA_RECOVERY && new_state != GLUE_CA_LOSS)
		return;
	if (cur_state < GLUE_CA_RECOVERY) {
		g->undo_cap = g->cap;
		g->undo_ssthresh = g->ssthresh;
	}
	if (new_state == GLUE_CA_RECOVERY) {
		/* Half the window in force (after an ECN cut in progress, as
		 * the kernel's DCTCP does on a loss in CWR). */
		cap = snd_cwnd >> 1;
		ssthresh = cap;
	} else {
		cap = snd_cwnd;
		ssthresh = snd_ssthresh;
	}
	cap = cap > GLUE_CWND_MIN ? cap : GLUE_CWND_MIN;
	g->cap = glue_segs16(cap);
	g->ssthresh = glue_segs16(ssthresh > cap ? ssthresh : cap);
	g->acked = 0;
}

/*
 * One ACK: the law's window law_segs and acked_segs newly acknowledged,
 * the socket in ca_state. Returns the window to apply (before
 * glue_clamp_cwnd): the law's, or the envelope's when that is smaller.
 */
LAW_INLINE __u64 glue_loss_envelope(struct glue_loss *g, __u64 law_segs,
				    __u32 acked_segs, __u8 ca_state)
{
	__u32 cap = g->cap, counted;

	if (!cap)
		return law_segs;
	if (cap < g->ssthresh) {
		/* Slow start (after a timeout), also in the Loss state. */
		if (ca_state != GLUE_CA_RECOVERY) {
			cap += acked_segs < g->ssthresh ? acked_segs : g->ssthresh;
			if (cap > g->ssthresh)
				cap = g->ssthresh;
		}
	} else if (ca_state < GLUE_CA_RECOVERY) {
		/*
		 * Counted in acknowledged segments, not in rounds of snd_una
		 * passing snd_nxt: with TSO the sender holds back up to a 64 KB
		 * skb, snd_nxt trails the window, and rounds came short (1.46
		 * segments per RTT measured).
		 */
		counted = g->acked;
		counted += acked_segs < cap ? acked_segs : cap;
		if (counted >= cap) {
			counted -= cap;
			cap++;
		}
		g->acked = glue_segs16(counted);
	}
	if (law_segs <= cap) {
		g->cap = 0;
		return law_segs;
	}
	g->cap = glue_segs16(cap);
	return cap;
}

/* A loss found spurious (DSACK, F-RTO): the envelope as before it. */
LAW_INLINE void glue_loss_undo(struct glue_loss *g)
{
	g->cap = g->undo_cap;
	g->ssthresh = g->undo_ssthresh;
	g->acked = 0;
}

/* ssthresh callback: the kernel's halving, at least GLUE_CWND_MIN. */
LAW_INLINE __u32 glue_ssthresh(__u32 snd_cwnd)
{
	__u32 half = snd_cwnd >> 1;

	return half > GLUE_CWND_MIN ? half : GLUE_CWND_MIN;
}

/*
 * The pacing rate the kernel keeps for an unpaced socket (what
 * tcp_update_pacing_rate() computes), in bytes/s: the window over the
 * smoothed RTT, doubled in slow start (cwnd below half of ssthresh), 1.2x
 * after. srtt8 is tcp_sock.srtt_us (microseconds << 3); 0 = no sample yet:
 * unlimited, as the kernel's rate before its first sample.
 */
#define GLUE_RATE_SS_PCT	200
#define GLUE_RATE_CA_PCT	120

LAW_INLINE __u64 glue_unpaced_rate(__u32 mss, __u32 snd_cwnd, __u32 packets_out,
				   __u32 snd_ssthresh, __u32 srtt8)
{
	__u64 segs = snd_cwnd > packets_out ? snd_cwnd : packets_out;
	__u64 pct = snd_cwnd < snd_ssthresh / 2 ? GLUE_RATE_SS_PCT : GLUE_RATE_CA_PCT;

	if (!srtt8)
		return ~0ULL;
	if (segs > GLUE_SEGS_MAX)	/* mss * segs * 8e6 stays below 2^64 */
		segs = GLUE_SEGS_MAX;
	/* bytes over srtt8 (us << 3): bytes/s at 100 %, then the factor */
	return (__u64)mss * segs * (8 * 1000000) / srtt8 * pct / 100;
}

/* undo_cwnd callback: as Reno, the window before the loss. */
LAW_INLINE __u32 glue_undo_cwnd(__u32 snd_cwnd, __u32 prior_cwnd)
{
	return snd_cwnd > prior_cwnd ? snd_cwnd : prior_cwnd;
}

/*
 * The law's input for one ACK from the socket's values (both builds'
 * cong_control): acked_bytes newly acknowledged (saturating at 32 bits),
 * the RTT sample (rs->rtt_us: negative = none; saturating), whether the
 * socket was limited by its window, and ece, the flag the sender's
 * in_ack_event set when this ACK carried ECN-Echo: consumed here, so
 * that its bytes count once. a's echo is the caller's; a starts zeroed.
 */
LAW_INLINE void glue_ack_input(struct law_ack *a, __u64 now_ns,
			       __u64 acked_bytes, __u32 snd_una, __u32 snd_nxt,
			       __u32 cwnd_segs, __u32 mss, __s64 rtt_us,
			       int cwnd_limited, __u8 *ece)
{
	a->now_ns = now_ns;
	a->acked_bytes = acked_bytes < 0xffffffffULL ? acked_bytes : 0xffffffffU;
	a->snd_una = snd_una;
	a->snd_nxt = snd_nxt;
	a->cwnd_segs = cwnd_segs;
	a->mss = mss;
	a->rtt_us = rtt_us <= 0 ? 0 :
		    rtt_us < 0xffffffffLL ? (__u32)rtt_us : 0xffffffffU;
	if (*ece) {
		a->ece_bytes = a->acked_bytes;
		a->flags |= LAW_ACK_ECE;
		*ece = 0;
	}
	if (!cwnd_limited)
		a->flags |= LAW_ACK_NOT_CWND_LIMITED;
}

/*
 * TCD's UE (law.h LAW_ACK_UE) from the newest INT echo: U, OR-ed by the
 * receiver's agent over the segments since its previous echo. Every pure
 * ACK carries an echo, so the newest is this ACK's (or an identical one
 * the kernel coalesced with it). e NULL or never written: none.
 */
LAW_INLINE void glue_echo_ue(struct law_ack *a, const struct int_echo *e)
{
	if (e && e->count && (e->flags & INT_ECHO_UE))
		a->flags |= LAW_ACK_UE;
}

/*
 * The receiver's ECN echo (RFC 8257 3.2), for the laws that read marks:
 * every ACK echoes the CE state of the segments it acknowledges. Called
 * per arriving data segment (an in-order one after rcv_nxt has taken it
 * in) with its CE bit. When the state changes while a delayed ACK is
 * pending for earlier segments, those are acknowledged at once with the
 * old state (up to the rcv_nxt before this segment); the segment that
 * changed the state is acknowledged at once too. Without the first ACK,
 * the ACK of a segment pair whose state changed mid-pair echoed the newer
 * state only: half the CE marks of a queue-marking switch never reached
 * the sender (IpExtInCEPkts 7413 at the receiver against TCPDeliveredCE
 * 3797 at the sender in the two-flow test). Whatever the step, the glue
 * then echoes ce on every segment (TCP_ECN_DEMAND_CWR, which makes
 * tcp_ecn_send() set ECE): a CWR from the sender clears it
 * (tcp_ecn_accept_cwr()).
 *
 * The glue keeps ce_state and prior_rcv_nxt per socket and does what
 * step says, in its order: flush (echo flush_ce, send an ACK of
 * flush_rcv_nxt), then ack_now (ICSK_ACK_NOW), then echo ce.
 */
struct glue_ce_step {
	__u32 flush_rcv_nxt;	/* the ACK of the earlier segments acknowledges up to here */
	__u8 flush;		/* send that ACK first */
	__u8 flush_ce;		/* ... echoing this (the old state) */
	__u8 ack_now;		/* acknowledge this segment at once */
};

LAW_INLINE void glue_ce_event(__u8 *ce_state, __u32 *prior_rcv_nxt, __u8 ce,
			      int delack_pending, __u32 rcv_nxt,
			      struct glue_ce_step *step)
{
	step->flush = 0;
	step->flush_ce = *ce_state;
	step->flush_rcv_nxt = *prior_rcv_nxt;
	step->ack_now = 0;
	if (*ce_state != ce) {
		step->flush = delack_pending != 0;
		step->ack_now = 1;
		*ce_state = ce;
	}
	*prior_rcv_nxt = rcv_nxt;
}

/* What both builds trace per ACK (and at init). 40 bytes. */
struct glue_trace {
	__u64 law_cwnd_bytes;	/* law_out.cwnd_bytes: the law's own window */
	__u64 pacing_rate;	/* law_out.pacing_rate, bytes/s; 0 = the law does not pace */
	__u64 signal_ppm;	/* law_out.signal_ppm (kmod/law/README.md) */
	__u32 cwnd_segs;	/* the window applied (snd_cwnd), after this policy */
	__u32 trace;		/* law_out.trace: LAW_TR_* */
	__u32 rtt_us;		/* the ACK's RTT sample, 0 = none */
	__u8 law;		/* enum law_id (law_table.h) */
	__u8 nhops;		/* hops of the INT echo the law saw, 0 = none */
	__u16 pad;
};

/* ack NULL: the record of init. */
LAW_INLINE void glue_trace_fill(struct glue_trace *t, __u8 law,
				const struct law_ack *ack,
				const struct law_out *out, __u32 cwnd_segs)
{
	t->law_cwnd_bytes = out->cwnd_bytes;
	t->pacing_rate = out->pacing_rate;
	t->signal_ppm = out->signal_ppm;
	t->cwnd_segs = cwnd_segs;
	t->trace = out->trace;
	t->rtt_us = ack ? ack->rtt_us : 0;
	t->law = law;
	t->nhops = ack && ack->echo ? ack->echo->nhops : 0;
	t->pad = 0;
}

#endif /* CCLAB_LAW_GLUE_H */
