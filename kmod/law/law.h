/* SPDX-License-Identifier: GPL-2.0 */
/*
 * cclab control laws: the common per-ACK input and output, the fixed-point
 * helpers, and every law (included at the end).
 *
 * Plain C, header-only, integer only, no includes but the INT headers: the
 * includer provides __u8, __u16, __u32, __u64, __s32 and __s64 (linux/types.h
 * in a module, vmlinux.h in BPF, a typedef block in user space), so the same
 * file compiles into a kernel module, a BPF object and a user-space test.
 * Units and scales are written once, in kmod/law/README.md.
 *
 * BPF rules kept throughout: loops bounded by INT_MAX_HOPS, no recursion,
 * only unsigned 64-bit division and never by a value that can be zero, no
 * 128-bit math, no function pointers, everything static inline.
 */
#ifndef CCLAB_LAW_H
#define CCLAB_LAW_H

#include "../../tcopt/int_echo.h"
#include "law_table.h"

#ifndef LAW_INLINE
#define LAW_INLINE static inline __attribute__((always_inline))
#endif

/*
 * Functions with many branches that a BPF build may turn into global
 * subprograms, which the verifier checks once each instead of once per
 * path of the caller: #define LAW_SUBPROG __attribute__((noinline)) before
 * including law.h (BPF only: the functions are then not static). They take
 * scalars and pointers they check for NULL, and return a scalar.
 */
#ifndef LAW_SUBPROG
#define LAW_SUBPROG LAW_INLINE
#endif

/*
 * Rarely taken code kept out of a law's per-ACK path, so that the path
 * stays short and straight (it runs with cold caches and branch
 * predictors: the code it touches is most of its cost). In BPF a static
 * subprogram, JITed apart from the caller (without "cold", which would
 * move it out of .text, where loaders take it for a program).
 */
#ifndef LAW_COLD
#ifdef __bpf__
#define LAW_COLD static __attribute__((__noinline__, __unused__))
#else
#define LAW_COLD static __attribute__((__noinline__, __cold__, __unused__))
#endif
#endif
#define LAW_LIKELY(c)	__builtin_expect(!!(c), 1)
#define LAW_UNLIKELY(c)	__builtin_expect(!!(c), 0)

/* Hide a value from the optimiser (keeps branch-free code branch-free). */
#ifndef LAW_OPAQUE
#define LAW_OPAQUE(v) __asm__ volatile("" : "+r"(v))
#endif

/* A fraction x is stored as the integer x * LAW_PPM ("_ppm" names). */
#define LAW_PPM			1000000ULL
#define LAW_NSEC_PER_SEC	1000000000ULL
#define LAW_NSEC_PER_USEC	1000ULL

/* Bounds every law enforces on its inputs and outputs. */
#define LAW_MSS_DEFAULT		1448U		/* used when ack->mss is 0 */
#define LAW_MSS_MAX		65535U
#define LAW_CWND_CAP_MAX	(1ULL << 30)	/* largest allowed max_cwnd_bytes */
#define LAW_RTT_MAX_NS		1000000000ULL	/* 1 s: largest base RTT/target */
#define LAW_SIGNAL_MIN_PPM	10000ULL	/* 0.01: divisor floor (x100 at most) */
#define LAW_SIGNAL_MAX_PPM	1000000000ULL	/* 1000: signals saturate here */
#define LAW_RATE_MAX_MBPS	800000U		/* fastest INT rate code */

/* struct law_ack.flags */
#define LAW_ACK_ECE		0x1	/* the ACK carried ECN-Echo */
/*
 * The window did not limit sending (the kernel's tcp_is_cwnd_limited() is
 * false: the application or TCP small queues did). Window laws with
 * Reno's growth (DCTCP) hold it then, as the kernel's Reno does (RFC 7661):
 * a window that grows while unused says nothing about the path.
 */
#define LAW_ACK_NOT_CWND_LIMITED	0x2
/*
 * TCD's UE (docs/lossless.md): the newest INT echo carried U, so a port
 * on the flow's path was in the undetermined state (paused, or ON for
 * less than max(T_on)) and did not CE-mark. Set by the glue from the
 * echo (glue_echo_ue) for the laws that read it (LAW_T_UE).
 */
#define LAW_ACK_UE		0x4

/*
 * One ACK, as the glue (struct_ops, module, replay) hands it to a law.
 * Sequence numbers are the connection's, modulo 2^32, after this ACK.
 */
struct law_ack {
	__u64 now_ns;		/* CLOCK_MONOTONIC ns at ACK processing */
	__u32 acked_bytes;	/* bytes newly acknowledged by this ACK */
	__u32 ece_bytes;	/* of those, bytes acked by ACKs with ECE set */
	__u32 cwnd_segs;	/* the connection's cwnd (tp->snd_cwnd), segments */
	__u32 mss;		/* bytes per segment; 0 means LAW_MSS_DEFAULT */
	__u32 snd_nxt;		/* next sequence number to send */
	__u32 snd_una;		/* oldest unacknowledged sequence number */
	__u32 rtt_us;		/* RTT sample of this ACK in us, 0 = none */
	__u32 flags;		/* LAW_ACK_* */
	const struct int_echo *echo;	/* newest INT echo, NULL = none */
};

/* struct law_out.trace: why the law did what it did. */
#define LAW_TR_INIT		0x0001	/* first ACK: state initialised */
#define LAW_TR_RTT_UPDATE	0x0002	/* per-RTT point (reference window taken); TIMELY: an update */
#define LAW_TR_DECREASE		0x0004	/* window decreased */
#define LAW_TR_INCREASE		0x0008	/* window increased */
#define LAW_TR_HOLD		0x0010	/* window held: no usable signal */
#define LAW_TR_NO_INT		0x0020	/* no echo / nhops 0 */
#define LAW_TR_INT_STALE	0x0040	/* echo older than int_max_age_ns */
#define LAW_TR_INT_SAME		0x0080	/* no new echo since the last ACK */
#define LAW_TR_INT_PATH		0x0100	/* hops changed: path change, restarted */
#define LAW_TR_INT_BAD		0x0200	/* records unusable (dt 0, too old) */
#define LAW_TR_NO_RTT		0x0400	/* no RTT sample */
#define LAW_TR_CLAMP_MIN	0x0800	/* window clamped up to the minimum */
#define LAW_TR_CLAMP_MAX	0x1000	/* window clamped down to the maximum */
#define LAW_TR_MI		0x2000	/* HPCC: multiplicative step */
#define LAW_TR_AI		0x4000	/* HPCC: additive step */
#define LAW_TR_VAI		0x8000	/* VAI: more than one AI token spent */
#define LAW_TR_SF		0x10000	/* SF: sampling-period decrease point */
#define LAW_TR_ECE		0x20000	/* DCTCP: marks seen; DCQCN: a CNP; QCN: a feedback */

/* Pacing rate value meaning "this law does not pace". */
#define LAW_PACING_NONE		0ULL

/* What a law returns for one ACK. */
struct law_out {
	__u64 cwnd_bytes;	/* the law's window, bytes */
	__u64 pacing_rate;	/* bytes/s, LAW_PACING_NONE = leave unpaced */
	__u64 signal_ppm;	/* the law's congestion signal (README per law) */
	__u32 cwnd_segs;	/* ceil(cwnd_bytes / mss), at least 1: set this */
	__u32 trace;		/* LAW_TR_* */
};

/*
 * Parameter check results (<law>_params_check): the relations between
 * parameters, then one per parameter out of its range (law_table.h).
 */
enum law_err {
	LAW_OK = 0,
	LAW_E_CWND_CAP,		/* max_cwnd_bytes neither 0 nor >= 65535 */
	LAW_E_INIT_CWND,	/* initial window above the cap */
	LAW_E_FBS,		/* fs_min_cwnd_mppm not below fs_max_cwnd_segs */
	LAW_E_VAI_AI_CAP,	/* vai_ai_cap above vai_bank_cap */
	LAW_E_TIMELY_T,		/* t_low_ns not below t_high_ns */
	LAW_TABLE(LAW_X_ERR)
	LAW_E_COUNT
};

LAW_INLINE const char *law_strerror(int err)
{
	switch (err) {
	case LAW_OK:		return "ok";
	case LAW_E_CWND_CAP:	return "max_cwnd_bytes must be 0 or in [65535, 1073741824]";
	case LAW_E_INIT_CWND:	return "the initial window is above the window cap";
	case LAW_E_FBS:		return "fs_min_cwnd_mppm must be below fs_max_cwnd_segs * 1e6";
	case LAW_E_VAI_AI_CAP:	return "vai_ai_cap must be at most vai_bank_cap";
	case LAW_E_TIMELY_T:	return "t_low_ns must be below t_high_ns";
	LAW_TABLE(LAW_X_MSG)
	}
	return "unknown error";
}

/* lo <= v <= hi (a function: no "unsigned >= 0" warnings from the table). */
LAW_INLINE int law_in_range(__u64 v, __u64 lo, __u64 hi)
{
	return v >= lo && v <= hi;
}

/* ---- Fixed-point helpers (no division by zero by construction) ---- */

LAW_INLINE __u64 law_min64(__u64 a, __u64 b) { return a < b ? a : b; }
LAW_INLINE __u64 law_max64(__u64 a, __u64 b) { return a > b ? a : b; }

LAW_INLINE __u64 law_clamp64(__u64 v, __u64 lo, __u64 hi)
{
	return v < lo ? lo : (v > hi ? hi : v);
}

/* Sequence a is after b (mod 2^32). */
LAW_INLINE int law_seq_after(__u32 a, __u32 b)
{
	return (__s32)(a - b) > 0;
}

/*
 * Reno's growth of a window by acked bytes (DCTCP's, and a window law's
 * that has no increase of its own): slow start up to ssthresh, then one
 * mss per window of acked bytes, ca_acc carrying the remainder.
 */
LAW_INLINE __u64 law_reno_grow(__u64 cwnd, __u64 ssthresh, __u64 *ca_acc,
			       __u64 acked, __u32 mss)
{
	if (cwnd < ssthresh)
		return law_min64(cwnd + acked, ssthresh);
	*ca_acc += law_min64(acked, LAW_CWND_CAP_MAX) * mss;
	if (cwnd && *ca_acc >= cwnd) {
		cwnd += *ca_acc / cwnd;
		*ca_acc %= cwnd;
	}
	return cwnd;
}

/* The trace flag of a window change from old to now. */
LAW_INLINE __u32 law_tr_change(__u64 old, __u64 now)
{
	if (now < old)
		return LAW_TR_DECREASE;
	return now > old ? LAW_TR_INCREASE : 0;
}

/* Sequence arithmetic, modulo 2^32: the wrap is the intent. */
LAW_INLINE __u32 law_seq_add(__u32 a, __u32 b)
{
	return a + b;
}

LAW_INLINE __u32 law_seq_sub(__u32 a, __u32 b)
{
	return a - b;
}

/* Bytes per second of a rate in Mbit/s. */
LAW_INLINE __u64 law_mbps_to_Bps(__u64 mbps)
{
	return mbps * 125000ULL;
}

/* Bytes in flight at rate mbps over ns nanoseconds (BDP). */
LAW_INLINE __u64 law_bdp_bytes(__u64 mbps, __u64 ns)
{
	/* mbps <= 2^20, ns <= 2^30: the product fits. */
	return mbps * ns / 8000ULL;
}

/*
 * floor(sqrt(x)), x clamped below 2^62: 31 branch-free steps, so the BPF
 * verifier walks one path through it instead of 2^31.
 */
LAW_SUBPROG __u64 law_isqrt(__u64 x)
{
	__u64 r = 0, bit = 1ULL << 60, t, lt;
	__s64 d;
	int i;

	if (x >= (1ULL << 62))
		x = (1ULL << 62) - 1;
	for (i = 0; i < 31; i++) {
		t = r + bit;
		/* lt = all ones when x < t: the sign of x - t (both < 2^62) */
		d = (__s64)x - (__s64)t;
		LAW_OPAQUE(d);	/* or clang turns this back into a branch */
		lt = (__u64)(d >> 63);
		x -= t & ~lt;
		r = (r >> 1) + (bit & ~lt);
		bit >>= 2;
	}
	return r;
}

LAW_INLINE __u32 law_mss(const struct law_ack *ack)
{
	if (!ack->mss || ack->mss > LAW_MSS_MAX)
		return LAW_MSS_DEFAULT;
	return ack->mss;
}

/*
 * Fill the window part of out: cwnd_bytes clamped to [lo, hi] (trace says
 * when), cwnd_segs = ceil(cwnd / mss) >= 1. Returns the clamped window.
 */
LAW_INLINE __u64 law_out_cwnd(struct law_out *out, __u64 cwnd, __u64 lo,
			      __u64 hi, __u32 mss)
{
	__u64 segs;

	if (cwnd < lo) {
		cwnd = lo;
		out->trace |= LAW_TR_CLAMP_MIN;
	}
	if (cwnd > hi) {
		cwnd = hi;
		out->trace |= LAW_TR_CLAMP_MAX;
	}
	out->cwnd_bytes = cwnd;
	segs = (cwnd + mss - 1) / mss;	/* mss >= 1 from law_mss() */
	out->cwnd_segs = segs ? (__u32)law_min64(segs, 0xffffffffULL) : 1;
	return cwnd;
}

/* bytes / ns as bytes/s (pacing), at least 1. */
LAW_INLINE __u64 law_rate_Bps(__u64 bytes, __u64 ns)
{
	/* bytes < 2^33, 1e9 < 2^30: the product fits */
	__u64 r = law_min64(bytes, 1ULL << 33) * LAW_NSEC_PER_SEC / (ns ? ns : 1);

	return r ? r : 1;
}

#include "int_signal.h"
#include "vai.h"
#include "power_window.h"
#include "rate_law.h"
#include "law_headers.h"	/* every law's <name>.h, from the table (lawgen) */

/*
 * <law>_params_default(p) for every law of the table: every field its
 * default, after zeroing the struct (padding included).
 */
#define LAW_X_PARAMS_DEFAULT_FN(id, name, NAME, signal, traits)		\
LAW_INLINE void name##_params_default(struct name##_params *p)		\
{									\
	__builtin_memset(p, 0, sizeof(*p));				\
	NAME##_PARAMS(LAW_X_DEFAULT)					\
}
LAW_TABLE(LAW_X_PARAMS_DEFAULT_FN)
#include "glue.h"

#endif /* CCLAB_LAW_H */
