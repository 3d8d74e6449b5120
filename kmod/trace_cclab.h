/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Tracepoint cclab:cclab_cc_ack, one event per ACK a cclab law module
 * handles: what the law saw (RTT sample, INT echo) and what it set.
 * Defined in cclab_int.ko, used by every law module.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM cclab

#if !defined(CCLAB_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define CCLAB_TRACE_H

#include <linux/tracepoint.h>
#include "cclab_int.h"

/* Law ids in the event (a number: cheaper than a string per ACK). */
#include "law/law_table.h"
#define CCLAB_LAW_SYM(id, name, NAME, signal, traits)	, { id, #name }
#define CCLAB_LAW_NAMES	{ 0, "none" } LAW_TABLE(CCLAB_LAW_SYM)

TRACE_EVENT(cclab_cc_ack,
	TP_PROTO(const struct cclab_cc_trace *t),
	TP_ARGS(t),
	TP_STRUCT__entry(
		__field(__u8, law)
		__field(__u8, nhops)
		__field(__u16, sport)
		__field(__u16, dport)
		__field(__u32, cwnd_segs)
		__field(__u64, law_cwnd_bytes)
		__field(__u64, pacing_rate)
		__field(__u64, signal_ppm)
		__field(__u32, trace)
		__field(__u32, rtt_us)
		__field(__u32, qlen0)
		__field(__u32, echo_count)
		__field(__u32, cost_ns)
	),
	TP_fast_assign(
		__entry->law = t->g.law;
		__entry->nhops = t->g.nhops;
		__entry->sport = t->sport;
		__entry->dport = t->dport;
		__entry->cwnd_segs = t->g.cwnd_segs;
		__entry->law_cwnd_bytes = t->g.law_cwnd_bytes;
		__entry->pacing_rate = t->g.pacing_rate;
		__entry->signal_ppm = t->g.signal_ppm;
		__entry->trace = t->g.trace;
		__entry->rtt_us = t->g.rtt_us;
		__entry->qlen0 = t->qlen0;
		__entry->echo_count = t->echo_count;
		__entry->cost_ns = t->cost_ns;
	),
	TP_printk("law=%s sport=%u dport=%u cwnd=%u law_cwnd_bytes=%llu pacing=%llu signal_ppm=%llu trace=%u rtt_us=%u nhops=%u qlen0=%u echoes=%u cost_ns=%u",
		  __print_symbolic(__entry->law, CCLAB_LAW_NAMES),
		  __entry->sport, __entry->dport,
		  __entry->cwnd_segs, __entry->law_cwnd_bytes, __entry->pacing_rate,
		  __entry->signal_ppm, __entry->trace, __entry->rtt_us,
		  __entry->nhops, __entry->qlen0, __entry->echo_count,
		  __entry->cost_ns)
);

#endif /* CCLAB_TRACE_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE trace_cclab
#include <trace/define_trace.h>
