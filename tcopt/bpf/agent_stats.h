/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Indexes of the host agent's counters (per-CPU array cclab_int_stats);
 * tcopt/agent/stats.go reads them in this order.
 */
#ifndef CCLAB_INT_AGENT_STATS_H
#define CCLAB_INT_AGENT_STATS_H

enum int_agent_counter {
	INT_CNT_FWD_WRITTEN,	/* empty forward options written on data skbs */
	INT_CNT_ECHO_WRITTEN,	/* echoes written on ACKs */
	INT_CNT_FWD_PARSED,	/* forward options received and kept */
	INT_CNT_ECHO_PARSED,	/* echoes received into cclab_int_echo */
	INT_CNT_MALFORMED,	/* options of ours ignored whole */
	INT_CNT_BAD_RECORD,	/* records dropped from echoes (bad rate code) */
	INT_CNT_RESERVE_FAILED,	/* no option space left (e.g. SACK blocks) */
	INT_CNT_ECHO_TRUNCATED,	/* echoes that lost their last records to SACK */
	INT_CNT_MAX,
};

#endif /* CCLAB_INT_AGENT_STATS_H */
