/* SPDX-License-Identifier: GPL-2.0 */
/*
 * INT stamping at a switch port (tcopt/README.md): the record of the port
 * as its packet left it, and where in the packet's TCP options it goes.
 *
 *  - the record: the port's rate code, the bytes queued behind the packet
 *    (128-byte units, saturating), txBytes (128-byte units, wrapping at
 *    32 MiB) and the port's transmit clock (256 ns units, wrapping at
 *    ~67 ms), int_stamp_record;
 *  - the transmit clock: when the port's link, sending at its rate,
 *    finishes the packet: after the dequeue, and after what came before
 *    (int_stamp_ser_ns, int_stamp_tx_done);
 *  - the option: find the INT option in the option area, and write the
 *    record into its next free slot, or flag it full (int_stamp_write).
 *
 * Pure: the caller loads the option bytes, stores what changed, patches
 * the checksum and keeps the clock in its map. Tested in stamp_test.go.
 */
#ifndef CCLAB_INT_STAMP_H
#define CCLAB_INT_STAMP_H

#include "unit.h"
#include "../int_option.h"

#define TCP_MIN_HLEN	20
#define TCP_MAX_OPTS	40
#define TCPOPT_EOL	0
#define TCPOPT_NOP	1

/* A record of the port's state for one packet, into rec[INT_REC_LEN]. */
SW_INLINE void int_stamp_record(__u8 *rec, __u32 rate_mbps, __u64 qlen,
				__u64 tx_bytes, __u64 ts)
{
	int_rec_encode(rec, int_rate_code(rate_mbps), qlen, tx_bytes, ts);
}

/* Nanoseconds a link of rate_mbps takes for len bytes, rounded up; 0 for
 * a port without a rate: len * 8 / (rate / 1000) ns. */
SW_INLINE __u64 int_stamp_ser_ns(__u32 len, __u32 rate_mbps)
{
	if (!rate_mbps)
		return 0;
	return ((__u64)len * 8000 + rate_mbps - 1) / rate_mbps;
}

/* When the link, free at clock, finishes a packet dequeued at now that
 * takes ser ns. */
SW_INLINE __u64 int_stamp_tx_done(__u64 clock, __u64 now, __u64 ser)
{
	return (clock > now ? clock : now) + ser;
}

/*
 * The qdisc's bytes (qdisc_pkt_len) of a packet of len bytes that reached
 * the peer without the driver's snapshot: a GSO skb of gso_segs segments
 * counts each segment's headers (hdr_len bytes up to the TCP payload).
 */
SW_INLINE __u64 int_stamp_wire_len(__u32 len, __u32 gso_size, __u32 gso_segs,
				   __u32 hdr_len)
{
	if (gso_size && gso_segs > 1 && hdr_len)
		return len + (__u64)(gso_segs - 1) * hdr_len;
	return len;
}

/*
 * Offset of our option in the option area opts[0..optlen), or -1. Stops at
 * the first malformed option: what follows it cannot be trusted.
 */
SW_INLINE int int_stamp_find_option(const __u8 *opts, __u32 optlen)
{
	__u32 off = 0, i, len;
	__u8 kind;

	for (i = 0; i < TCP_MAX_OPTS; i++) {
		if (off >= optlen || off >= TCP_MAX_OPTS - 1)
			return -1;
		kind = opts[off];
		if (kind == TCPOPT_EOL)
			return -1;
		if (kind == TCPOPT_NOP) {
			off++;
			continue;
		}
		len = opts[off + 1];
		if (len < 2 || off + len > optlen)
			return -1;
		if (kind == INT_OPT_KIND && len >= 4 &&
		    off + 3 < TCP_MAX_OPTS &&
		    opts[off + 2] == (INT_OPT_EXID >> 8) &&
		    opts[off + 3] == (INT_OPT_EXID & 0xff))
			return off;
		off += len;
	}
	return -1;
}

/* What int_stamp_write did. */
enum int_stamp_result {
	INT_STAMP_WRITTEN,
	INT_STAMP_FULL,	/* every slot used (overflow flagged if asked) */
	INT_STAMP_NONE,	/* nothing to write: no forward INT option we can
			 * write (an echo, if echo), or one flagged full
			 * upstream */
};

/*
 * The header version a stamping port writes (tcopt/README.md, "Header
 * byte"): with TCD off the option keeps its version (v0 stays v0, so a
 * run without TCD is unchanged); with TCD on the header becomes v1, with
 * U set when the port is undetermined (U, once set upstream, stays).
 */
enum int_stamp_tcd {
	INT_STAMP_TCD_OFF = 0,
	INT_STAMP_TCD_ON = 1,	/* v1, U as it was */
	INT_STAMP_TCD_UE = 2,	/* v1 with U */
};

/*
 * The option area opts[0..optlen) (TCP_MAX_OPTS bytes, zero past optlen)
 * with a 7-byte record rec written into the INT option's next free slot,
 * into next[TCP_MAX_OPTS]: when the option is full, with its overflow flag
 * set if flag_full (and U if tcd says so: a full option still carries
 * it). The option must be a forward one, or an ACK's echo if echo; its
 * header v0 or v1. next is meaningful unless the result is
 * INT_STAMP_NONE, or INT_STAMP_FULL without flag_full.
 */
SW_INLINE enum int_stamp_result int_stamp_write(const __u8 *opts, __u8 *next,
						__u32 optlen, const __u8 *rec,
						int flag_full, int echo, int tcd)
{
	__u32 hdr_off, rec_off, i, ver, v1, ue, base;
	__u8 hdr, hops, full_hdr;
	int off, slots;

	if (optlen < INT_OPT_BASE_LEN || optlen > TCP_MAX_OPTS)
		return INT_STAMP_NONE;
	off = int_stamp_find_option(opts, optlen);
	if (off < 0 || off > TCP_MAX_OPTS - INT_OPT_BASE_LEN)
		return INT_STAMP_NONE;
	slots = int_opt_slots(opts[off + 1]);
	if (slots < 0)
		return INT_STAMP_NONE;
	hdr_off = off + 4;
	hdr = opts[hdr_off];
	ver = hdr >> INT_HDR_VERSION_SHIFT;
	if (ver > INT_HDR_V1 || !(hdr & INT_HDR_ECHO) != !echo)
		return INT_STAMP_NONE;
	/*
	 * The header's fields without branches (each one doubles the paths
	 * the BPF verifier walks through the option loop below): hops 4 bits
	 * in v0, 3 in v1; v1 when it was or TCD is on (tcd 1, 2); U when it
	 * was (v1 only) or the port is undetermined (tcd 2).
	 */
	hops = hdr & (INT_HDR_HOPS_MASK >> ver);
	if (hops > slots)
		return INT_STAMP_NONE;
	v1 = ver | (((__u32)tcd + 1) >> 1);
	ue = ((hdr >> 3) & ver & 1) | ((__u32)tcd >> 1);
	base = v1 << INT_HDR_VERSION_SHIFT | (hdr & (INT_HDR_ECHO | INT_HDR_OVERFLOW)) |
	       ue << 3;

	__builtin_memcpy(next, opts, TCP_MAX_OPTS);
	if (hops == slots) {
		if (!flag_full)
			return INT_STAMP_FULL;
		full_hdr = base | INT_HDR_OVERFLOW | hops;
		if (full_hdr == hdr)	/* flagged upstream: nothing to do */
			return INT_STAMP_NONE;
		next[hdr_off] = full_hdr;
		return INT_STAMP_FULL;
	}
	rec_off = hdr_off + 1 + hops * INT_REC_LEN;
	/* Inside the option, which lies inside opts: checked above. */
	if (rec_off > TCP_MAX_OPTS - INT_REC_LEN)
		return INT_STAMP_NONE;
	for (i = 0; i < INT_REC_LEN; i++) {
		__u32 j = rec_off + i;

		if (j < TCP_MAX_OPTS)
			next[j] = rec[i];
	}
	next[hdr_off] = base | (hops + 1);	/* hops + 1 <= INT_MAX_HOPS */
	return INT_STAMP_WRITTEN;
}

#endif /* CCLAB_INT_STAMP_H */
