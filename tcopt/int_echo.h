/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the sender's host agent keeps per socket from the newest INT echo,
 * and what the laws read: the contract between tcopt/ and kmod/.
 *
 * In the eBPF build it is the value of the socket-storage map
 * INT_ECHO_MAP_NAME, pinned by name under INT_ECHO_PIN_DIR so that the
 * sock_ops agent and the struct_ops laws share one map. Plain C, no includes
 * (see int_option.h).
 */
#ifndef CCLAB_INT_ECHO_H
#define CCLAB_INT_ECHO_H

#include "int_option.h"

#define INT_ECHO_MAP_NAME	cclab_int_echo
#define INT_ECHO_PIN_DIR	"/sys/fs/bpf/cclab-cc"

struct int_echo {
	__u64 arrived_ns;	/* CLOCK_MONOTONIC ns when the echo was parsed */
	__u32 count;		/* echoes parsed on this socket so far */
	__u8 nhops;		/* valid records in hop[], 0..INT_MAX_HOPS */
	__u8 flags;		/* INT_ECHO_OVERFLOW, INT_ECHO_UE */
	__u16 pad;
	struct int_hop hop[INT_MAX_HOPS];	/* hop[0] is the sender's first switch */
	/* QCN feedback (tcopt/README.md): the newest record from a CP. */
	__u32 qcn_count;	/* distinct feedback records taken so far */
	__u32 qcn_key;		/* cp << 16 | seq of the newest, to tell repeats */
	__u8 qcn_fb;		/* its |Fb|, 1..INT_QCN_FB_MAX */
	__u8 qcn_pad[7];
};

/* struct int_echo.flags */
#define INT_ECHO_OVERFLOW	INT_HDR_OVERFLOW	/* the path had more hops */
/*
 * TCD's UE: the echo's header had U (v1), so a port on the path was in
 * the undetermined state for a segment the receiver got since its
 * previous echo (the receiver's agent ORs U over them).
 */
#define INT_ECHO_UE		0x08

/* The flags of an echo from its (known-version) header byte. */
static inline __u8 int_echo_flags(__u8 hdr)
{
	return (hdr & INT_HDR_OVERFLOW) | (int_hdr_ue(hdr) ? INT_ECHO_UE : 0);
}

/*
 * Take a QCN feedback record into the echo: a new one (another CP or sample
 * than the last taken) counts for the law; a copy (two ACKs that took the
 * same note on different CPUs at once) does not.
 */
static inline void int_echo_take_qcn(struct int_echo *e,
				     const struct int_qcn *q)
{
	__u32 key = (__u32)q->cp << 16 | q->seq;

	if (e->qcn_count && e->qcn_key == key)
		return;
	e->qcn_key = key;
	e->qcn_fb = q->fb;
	e->qcn_count++;
}

/*
 * The map's value: the echo, then an area the congestion control of the
 * socket keeps its own per-socket data in (kmod/bpf/cc_law.h: the INT
 * laws, whose data exceeds icsk_ca_priv), so that one storage lookup per
 * ACK finds both. The agent writes the echo fields only, never cc.
 */
#define INT_ECHO_CC_BYTES	192

struct int_echo_sock {
	struct int_echo echo;
	__u64 cc[INT_ECHO_CC_BYTES / 8];
};

#endif /* CCLAB_INT_ECHO_H */
