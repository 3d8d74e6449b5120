/* SPDX-License-Identifier: GPL-2.0 */
/*
 * cclab_int.ko: the echoed INT records of the sockets whose congestion
 * control is a cclab law module, read off incoming ACKs by a netfilter
 * hook (NF_INET_LOCAL_IN, IPv4), before TCP processes them.
 *
 * A law module attaches each of its sockets in its init callback and
 * detaches it in release; between the two the hook keeps the newest echo
 * of the socket, and the law copies it on each ACK. The record format is
 * tcopt/README.md's; decoding follows the host agent's (valid records kept
 * in path order, invalid ones dropped).
 */
#ifndef CCLAB_INT_H
#define CCLAB_INT_H

#include <linux/types.h>
#include <linux/spinlock.h>
#include <linux/rcupdate.h>
#include <linux/list.h>
#include <net/sock.h>

#include "../tcopt/int_echo.h"
#include "law/law.h"	/* struct glue_trace */

struct cclab_int_sock {
	struct hlist_node node;		/* in the hook's table, keyed by sk */
	struct rcu_head rcu;
	const struct sock *sk;
	spinlock_t lock;		/* echo: the hook writes, the law reads */
	struct int_echo echo;
	u64 priv[] __aligned(8);	/* the law's per-socket state */
};

/* One ACK as the tracepoint cclab:cclab_cc_ack records it (trace_cclab.h). */
struct cclab_cc_trace {
	struct glue_trace g;	/* what both builds trace (kmod/law/glue.h) */
	u16 sport, dport;
	u32 qlen0;		/* first hop's queue, bytes */
	u32 echo_count;		/* echoes the socket has had */
	u32 cost_ns;		/* time in the law and the echo copy */
};

/*
 * Allocate a socket's echo slot plus priv_size bytes of law state (zeroed)
 * and make the hook look for its echoes. NULL when out of memory.
 */
struct cclab_int_sock *cclab_int_attach(const struct sock *sk, size_t priv_size, gfp_t gfp);

/* Stop collecting for the socket; the memory is freed after an RCU period. */
void cclab_int_detach(struct cclab_int_sock *is);

/* Copy the newest echo to out; false when the socket has had none. */
bool cclab_int_read(struct cclab_int_sock *is, struct int_echo *out);

#endif /* CCLAB_INT_H */
