/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The cclab INT option: in-band network telemetry in a TCP option.
 * The wire format is specified in tcopt/README.md; this header is its C
 * encoding and the Go codec in tcopt/ is its twin.
 *
 * Plain C with no includes, so that it compiles into BPF objects, kernel
 * modules and user-space tests alike: the includer provides __u8, __u16,
 * __u32 and __u64 (linux/types.h, or vmlinux.h in BPF).
 */
#ifndef CCLAB_INT_OPTION_H
#define CCLAB_INT_OPTION_H

/* RFC 6994 experimental option: kind, length, 16-bit ExID. */
#define INT_OPT_KIND		253
#define INT_OPT_EXID		0xCC1A
#define INT_OPT_BASE_LEN	5	/* kind, len, ExID (2), header */
#define INT_REC_LEN		7	/* one hop record, 56 bits */
#define INT_MAX_HOPS		5	/* 5 + 5 * 7 = 40 bytes: all TCP option space */
#define INT_OPT_MAX_LEN		(INT_OPT_BASE_LEN + INT_MAX_HOPS * INT_REC_LEN)

/*
 * Header byte, two versions (tcopt/README.md, "Header byte"):
 *  v0: VV E O HHHH   (version, echo, overflow, hop count)
 *  v1: VV E O U HHH  (U: a port on the path was in TCD's undetermined
 *                     state and did not CE-mark the packet; hops <= 5)
 * Readers take both (int_hdr_hops, int_hdr_ue) and ignore any other.
 */
#define INT_HDR_VERSION_SHIFT	6
#define INT_HDR_VERSION		0	/* v0, what hosts write */
#define INT_HDR_V1		1	/* v1, what switches write with TCD on */
#define INT_HDR_ECHO		0x20	/* set on an ACK's echo of forward records */
#define INT_HDR_OVERFLOW	0x10	/* a switch found no free record slot */
#define INT_HDR_HOPS_MASK	0x0f	/* v0 */
#define INT_HDR_UE		0x08	/* v1: U */
#define INT_HDR_HOPS_MASK_V1	0x07	/* v1 */

/* The hop count of a header byte, or -1 for an unknown version. */
static inline int int_hdr_hops(__u8 hdr)
{
	switch (hdr >> INT_HDR_VERSION_SHIFT) {
	case INT_HDR_VERSION:
		return hdr & INT_HDR_HOPS_MASK;
	case INT_HDR_V1:
		return hdr & INT_HDR_HOPS_MASK_V1;
	}
	return -1;
}

/* Whether a header byte carries U (v1 only: in v0 that bit is a hop bit). */
static inline int int_hdr_ue(__u8 hdr)
{
	return (hdr >> INT_HDR_VERSION_SHIFT) == INT_HDR_V1 &&
	       (hdr & INT_HDR_UE);
}

/*
 * A header byte with hops records, as version v1 or v0: ue is kept only
 * in v1 (v0 has no U). The caller passes hops <= INT_MAX_HOPS.
 */
static inline __u8 int_hdr_make(int v1, int echo, int overflow, int ue,
				__u32 hops)
{
	__u8 h = (echo ? INT_HDR_ECHO : 0) | (overflow ? INT_HDR_OVERFLOW : 0);

	if (v1)
		return INT_HDR_V1 << INT_HDR_VERSION_SHIFT | h |
		       (ue ? INT_HDR_UE : 0) | (hops & INT_HDR_HOPS_MASK_V1);
	return INT_HDR_VERSION << INT_HDR_VERSION_SHIFT | h |
	       (hops & INT_HDR_HOPS_MASK);
}

/* Record fields, most significant first: rate 5, qlen 15, tx 18, ts 18. */
#define INT_RATE_BITS		5
#define INT_QLEN_BITS		15
#define INT_TX_BITS		18
#define INT_TS_BITS		18

#define INT_QLEN_UNIT		128ULL	/* bytes; saturates at INT_QLEN_MAX */
#define INT_TX_UNIT		128ULL	/* bytes; wraps */
#define INT_TS_UNIT		256ULL	/* nanoseconds; wraps */

#define INT_QLEN_MAX		((1ULL << INT_QLEN_BITS) - 1)
#define INT_TX_MASK		((1ULL << INT_TX_BITS) - 1)
#define INT_TS_MASK		((1ULL << INT_TS_BITS) - 1)
/* Wrap periods of the decoded values: 32 MiB and ~67 ms. */
#define INT_TX_WRAP		((INT_TX_MASK + 1) * INT_TX_UNIT)
#define INT_TS_WRAP		((INT_TS_MASK + 1) * INT_TS_UNIT)

/*
 * Rate codes (5 bits). Code 0 means "unknown": a reader ignores the
 * record. Codes above INT_RATE_CODE_MAX are invalid and likewise ignored.
 * Values in Mbit/s.
 */
#define INT_RATE_CODE_MAX	20
/*
 * Sized for every 5-bit code (21..31 read as 0): the BPF verifier then sees
 * any code's entry inside the table, whatever bound it tracked for it.
 */
static const __u32 int_rate_mbps[1 << INT_RATE_BITS] = {
	0, 10, 20, 50, 100, 200, 250, 500, 1000, 2000, 2500,
	5000, 10000, 20000, 25000, 40000, 50000, 100000, 200000, 400000, 800000,
};

/* One switch egress port's state, decoded into plain units. */
struct int_hop {
	__u32 qlen;	/* bytes queued at the port, multiple of INT_QLEN_UNIT */
	__u32 tx_bytes;	/* bytes transmitted by the port, mod INT_TX_WRAP */
	__u32 ts;	/* CLOCK_MONOTONIC ns: the port's transmit clock, mod INT_TS_WRAP */
	__u32 rate_mbps;/* port rate, Mbit/s (from int_rate_mbps) */
};

/* Rate code of a rate in Mbit/s, or 0 when it has none. */
static inline __u8 int_rate_code(__u32 mbps)
{
	__u8 c;

	for (c = 1; c <= INT_RATE_CODE_MAX; c++)
		if (int_rate_mbps[c] == mbps)
			return c;
	return 0;
}

/* A record's 56 bits, most significant first, from and into 7 bytes. */
static inline __u64 int_rec_get56(const __u8 *p)
{
	return (__u64)p[0] << 48 | (__u64)p[1] << 40 | (__u64)p[2] << 32 |
	       (__u64)p[3] << 24 | (__u64)p[4] << 16 | (__u64)p[5] << 8 |
	       (__u64)p[6];
}

static inline void int_rec_put56(__u8 *p, __u64 v)
{
	p[0] = v >> 48;
	p[1] = v >> 40;
	p[2] = v >> 32;
	p[3] = v >> 24;
	p[4] = v >> 16;
	p[5] = v >> 8;
	p[6] = v;
}

/*
 * Encode one record into 7 bytes at p from raw port counters: qlen and
 * tx_bytes in bytes, ts_ns the record's time (the port's transmit clock,
 * tcopt/README.md).
 */
static inline void int_rec_encode(__u8 *p, __u8 rate_code, __u64 qlen,
				  __u64 tx_bytes, __u64 ts_ns)
{
	__u64 q = qlen / INT_QLEN_UNIT;
	__u64 v;

	if (q > INT_QLEN_MAX)
		q = INT_QLEN_MAX;
	v = (__u64)(rate_code & 0x1f) << 51;
	v |= q << 36;
	v |= ((tx_bytes / INT_TX_UNIT) & INT_TX_MASK) << 18;
	v |= (ts_ns / INT_TS_UNIT) & INT_TS_MASK;
	int_rec_put56(p, v);
}

/* Decode one record; returns 0, or -1 for a record a reader must ignore. */
static inline int int_rec_decode(const __u8 *p, struct int_hop *h)
{
	__u64 v = int_rec_get56(p);
	__u8 code = v >> 51;

	if (code == 0 || code > INT_RATE_CODE_MAX)
		return -1;
	h->rate_mbps = int_rate_mbps[code];
	h->qlen = ((v >> 36) & INT_QLEN_MAX) * INT_QLEN_UNIT;
	h->tx_bytes = ((v >> 18) & INT_TX_MASK) * INT_TX_UNIT;
	h->ts = (v & INT_TS_MASK) * INT_TS_UNIT;
	return 0;
}

/*
 * A QCN feedback record (tcopt/README.md, "QCN feedback"): rate code
 * INT_REC_QCN, which every INT reader ignores, then fb 6 | cp 12 | seq 16 |
 * qlen 15 | 2 zero bits. A congestion point's negative feedback for a
 * sampled packet's flow, written by a switch into the free slot of that
 * flow's next ACK echo.
 */
#define INT_REC_QCN		31
#define INT_QCN_FB_MAX		63
#define INT_QCN_CP_MASK		0xfff
#define INT_QCN_SEQ_MASK	0xffff

struct int_qcn {
	__u32 qlen;	/* the CP's queue when it sampled, bytes (128-byte units) */
	__u16 cp;	/* the congestion point (switch port slot, 12 bits) */
	__u16 seq;	/* the CP's sample number, wraps */
	__u8 fb;	/* |Fb| quantised, 1..INT_QCN_FB_MAX */
};

static inline void int_qcn_encode(__u8 *p, __u8 fb, __u16 cp, __u16 seq,
				  __u64 qlen)
{
	__u64 q = qlen / INT_QLEN_UNIT;
	__u64 v;

	if (q > INT_QLEN_MAX)
		q = INT_QLEN_MAX;
	v = (__u64)INT_REC_QCN << 51;
	v |= (__u64)(fb & INT_QCN_FB_MAX) << 45;
	v |= (__u64)(cp & INT_QCN_CP_MASK) << 33;
	v |= (__u64)(seq & INT_QCN_SEQ_MASK) << 17;
	v |= q << 2;
	int_rec_put56(p, v);
}

/*
 * Decode a QCN feedback record: 0, or -1 when the record is not one (or
 * carries fb 0, which a CP never sends).
 */
static inline int int_qcn_decode(const __u8 *p, struct int_qcn *q)
{
	__u64 v = int_rec_get56(p);

	if ((v >> 51) != INT_REC_QCN || !((v >> 45) & INT_QCN_FB_MAX))
		return -1;
	q->fb = (v >> 45) & INT_QCN_FB_MAX;
	q->cp = (v >> 33) & INT_QCN_CP_MASK;
	q->seq = (v >> 17) & INT_QCN_SEQ_MASK;
	q->qlen = ((v >> 2) & INT_QLEN_MAX) * INT_QLEN_UNIT;
	return 0;
}

/* Forward difference of two wrapping tx_bytes values (bytes). */
static inline __u32 int_tx_delta(__u32 later, __u32 earlier)
{
	return (later - earlier) & (__u32)(INT_TX_WRAP - 1);
}

/* Forward difference of two wrapping timestamps (ns). */
static inline __u32 int_ts_delta(__u32 later, __u32 earlier)
{
	return (later - earlier) & (__u32)(INT_TS_WRAP - 1);
}

/*
 * Number of record slots an option of length len provides, or -1 when len
 * cannot be an INT option.
 */
static inline int int_opt_slots(__u8 len)
{
	if (len < INT_OPT_BASE_LEN || len > INT_OPT_MAX_LEN)
		return -1;
	/* Unsigned: BPF before v4 (clang < 18) has no signed division. */
	if (((__u32)len - INT_OPT_BASE_LEN) % INT_REC_LEN)
		return -1;
	return ((__u32)len - INT_OPT_BASE_LEN) / INT_REC_LEN;
}

#endif /* CCLAB_INT_OPTION_H */
