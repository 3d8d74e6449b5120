// SPDX-License-Identifier: GPL-2.0
/*
 * cclab INT host agent: a cgroup sock_ops program (tcopt/README.md).
 *
 * Sender: reserves an empty INT option on every data skb, and when the
 * kernel sizes the MSS, so that segments never exceed the MTU; decodes the
 * receiver's echoes into cclab_int_echo for the laws.
 * Receiver: keeps the newest forward option per socket and echoes it on its
 * pure ACKs. A connection is both at once; a segment carries one option, so
 * a data segment carries the forward option and a pure ACK the echo.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "../int_echo.h"
#include "agent_stats.h"

#define TCPHDR_SYN	0x02
#define ENOMSG		42

char LICENSE[] SEC("license") = "GPL";

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, INT_CNT_MAX);
	__type(key, __u32);
	__type(value, __u64);
} cclab_int_stats SEC(".maps");

/* Shared with the laws: pinned by name under INT_ECHO_PIN_DIR. */
struct {
	__uint(type, BPF_MAP_TYPE_SK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct int_echo_sock);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} INT_ECHO_MAP_NAME SEC(".maps");

/*
 * The receiver's newest forward option, verbatim, for its next echo, and
 * TCD's U OR-ed over the forward options since the last echo written: a
 * delayed ACK echoes only the newest option, and U must not be lost with
 * the older ones (tcopt/README.md, "Header byte").
 */
struct int_fwd {
	__u8 len;
	__u8 opt[INT_OPT_MAX_LEN];
	__u8 ue;
};

/*
 * Set by the loader for a run with QCN congestion points: every echo
 * leaves one empty record slot after its records (while there is room),
 * for a switch on the way back to write a CP's feedback into
 * (tcopt/README.md, "QCN feedback").
 */
volatile const __u8 qcn_echo_slot;

struct {
	__uint(type, BPF_MAP_TYPE_SK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct int_fwd);
} cclab_int_fwd SEC(".maps");

static __always_inline void count(__u32 idx, __u64 n)
{
	__u64 *v = bpf_map_lookup_elem(&cclab_int_stats, &idx);

	/*
	 * Atomic: sock_ops runs in process context with only migration
	 * disabled, and softirq on the same CPU may count meanwhile.
	 */
	if (v)
		__sync_fetch_and_add(v, n);
}

/*
 * The forward option takes as many slots as fit the option space left, at
 * most INT_MAX_HOPS: 5 without TCP timestamps, 3 with them, fewer when SACK
 * blocks take space. The helpers do not tell the space left, so both the
 * reservation and the write try the largest length first; the write finds
 * the reserved length again because the kernel pads it only to 4 bytes.
 */
static __always_inline long reserve_fwd(struct bpf_sock_ops *skops)
{
	int slots;

	for (slots = INT_MAX_HOPS; slots >= 1; slots--)
		if (!bpf_reserve_hdr_opt(skops, INT_OPT_BASE_LEN +
					 slots * INT_REC_LEN, 0))
			return 0;
	return -1;
}

static __always_inline long store_fwd(struct bpf_sock_ops *skops, __u8 *buf)
{
	int slots;

	for (slots = INT_MAX_HOPS; slots >= 1; slots--) {
		buf[1] = INT_OPT_BASE_LEN + slots * INT_REC_LEN;
		if (!bpf_store_hdr_opt(skops, buf, INT_OPT_BASE_LEN +
				       slots * INT_REC_LEN, 0))
			return 0;
	}
	return -1;
}

static __always_inline int set_flags(struct bpf_sock_ops *skops)
{
	return bpf_sock_ops_cb_flags_set(skops, skops->bpf_sock_ops_cb_flags |
					 BPF_SOCK_OPS_WRITE_HDR_OPT_CB_FLAG |
					 BPF_SOCK_OPS_PARSE_ALL_HDR_OPT_CB_FLAG);
}

static __always_inline struct int_fwd *stored_fwd(struct bpf_sock_ops *skops)
{
	struct bpf_sock *sk = skops->sk;

	if (!sk)
		return NULL;
	return bpf_sk_storage_get(&cclab_int_fwd, sk, 0, 0);
}

/*
 * An echo carries the forward records without the empty slots: 5 + 7 *
 * hops bytes. When SACK blocks leave too little room, the last records are
 * dropped and O set, so the sender still learns the first hops.
 */
static __always_inline __u32 fwd_hops(const struct int_fwd *fwd)
{
	int hops = int_hdr_hops(fwd->opt[4]);

	if (hops < 0)	/* never stored: parse_hdr_opt checks the version */
		return 0;
	return hops > INT_MAX_HOPS ? INT_MAX_HOPS : hops;
}

/*
 * Slots an echo of hops records takes: one more, empty, for QCN, which
 * takes the place of the last record on a path of INT_MAX_HOPS stamping
 * switches (a QCN law reads no hop records).
 */
static __always_inline __u32 echo_slots(__u32 hops)
{
	if (!qcn_echo_slot)
		return hops;
	return hops < INT_MAX_HOPS ? hops + 1 : INT_MAX_HOPS;
}

static __always_inline long reserve_echo(struct bpf_sock_ops *skops,
					 const struct int_fwd *fwd)
{
	__u32 want = echo_slots(fwd_hops(fwd));
	int k;

	for (k = INT_MAX_HOPS; k >= 0; k--) {
		if ((__u32)k > want)
			continue;
		if (!bpf_reserve_hdr_opt(skops, INT_OPT_BASE_LEN +
					 k * INT_REC_LEN, 0))
			return 0;
	}
	return -1;
}

/*
 * Write the echo in the largest length that fits, k slots: the records,
 * then (qcn_echo_slot) the empty QCN slot, which stays while any slot
 * does; short of room the last records go (O set). The header keeps the
 * forward option's version and O; with ue (U seen since the last echo)
 * it is v1 with U. Returns the records dropped (0: all echoed), or -1
 * when nothing fits.
 */
static __always_inline long store_echo(struct bpf_sock_ops *skops, __u8 *buf,
				       int ue)
{
	int h = int_hdr_hops(buf[4]), k;
	int v1 = ue || buf[4] >> INT_HDR_VERSION_SHIFT == INT_HDR_V1;
	int ovfl = buf[4] & INT_HDR_OVERFLOW;
	__u32 hops, want, recs, spare, i;

	hops = h < 0 ? 0 : h;
	if (hops > INT_MAX_HOPS)
		hops = INT_MAX_HOPS;
	want = echo_slots(hops);
	for (k = INT_MAX_HOPS; k >= 0; k--) {
		if ((__u32)k > want)
			continue;
		spare = qcn_echo_slot && k > 0 ? 1 : 0;
		recs = (__u32)k - spare < hops ? (__u32)k - spare : hops;
		/* The empty slot, zeroed, right after the records. */
		for (i = 0; i < INT_REC_LEN; i++) {
			__u32 j = INT_OPT_BASE_LEN + recs * INT_REC_LEN + i;

			if (spare && j < INT_OPT_MAX_LEN)
				buf[j] = 0;
		}
		buf[1] = INT_OPT_BASE_LEN + k * INT_REC_LEN;
		buf[4] = int_hdr_make(v1, 1, ovfl || recs < hops, ue, recs);
		if (!bpf_store_hdr_opt(skops, buf, INT_OPT_BASE_LEN +
				       k * INT_REC_LEN, 0))
			return hops - recs;
	}
	return -1;
}

static __always_inline void hdr_opt_len(struct bpf_sock_ops *skops)
{
	struct int_fwd *fwd;

	if (skops->skb_tcp_flags & TCPHDR_SYN)
		return;
	/*
	 * No skb: the kernel is sizing the MSS. Reserve what a data segment
	 * would, or full-sized segments would exceed the MTU.
	 */
	if (skops->args[0] == BPF_WRITE_HDR_TCP_CURRENT_MSS) {
		reserve_fwd(skops);
		return;
	}
	/* Before the TCP header is pushed, skb_len is the payload. */
	if (skops->skb_len > 0) {
		if (reserve_fwd(skops))
			count(INT_CNT_RESERVE_FAILED, 1);
		return;
	}
	fwd = stored_fwd(skops);
	if (fwd && fwd->len && reserve_echo(skops, fwd))
		count(INT_CNT_RESERVE_FAILED, 1);
}

/* Payload bytes of the skb being written (its TCP header is pushed). */
static __always_inline long payload_len(struct bpf_sock_ops *skops)
{
	__u8 *data = (__u8 *)(long)skops->skb_data;
	__u8 *end = (__u8 *)(long)skops->skb_data_end;

	if (data + 20 > end)
		return -1;
	return (long)skops->skb_len - (long)((data[12] >> 4) * 4);
}

static __always_inline void write_hdr_opt(struct bpf_sock_ops *skops)
{
	__u8 buf[INT_OPT_MAX_LEN] = {};
	struct int_fwd *fwd;
	long payload, ret;

	if (skops->skb_tcp_flags & TCPHDR_SYN)
		return;
	payload = payload_len(skops);
	if (payload < 0)
		return;
	if (payload > 0) {
		buf[0] = INT_OPT_KIND;
		buf[2] = INT_OPT_EXID >> 8;
		buf[3] = INT_OPT_EXID & 0xff;
		buf[4] = INT_HDR_VERSION << INT_HDR_VERSION_SHIFT;
		if (!store_fwd(skops, buf))
			count(INT_CNT_FWD_WRITTEN, 1);
		return;
	}
	fwd = stored_fwd(skops);
	if (!fwd || !fwd->len)
		return;
	__builtin_memcpy(buf, fwd->opt, sizeof(buf));
	ret = store_echo(skops, buf, fwd->ue);
	if (ret >= 0) {
		fwd->ue = 0;	/* echoed: U starts again from the next segment */
		count(INT_CNT_ECHO_WRITTEN, 1);
	}
	if (ret > 0)
		count(INT_CNT_ECHO_TRUNCATED, 1);
}

static __always_inline void parse_echo(struct bpf_sock_ops *skops,
				       struct bpf_sock *sk, const __u8 *buf,
				       __u32 hops)
{
	struct int_echo_sock *es;
	struct int_echo *e;
	__u32 i, n = 0, qcn = 0;
	struct int_qcn q;
	const __u8 *rec;

	es = bpf_sk_storage_get(&INT_ECHO_MAP_NAME, sk, 0,
				BPF_SK_STORAGE_GET_F_CREATE);
	if (!es)
		return;
	e = &es->echo;	/* es->cc is the congestion control's */
	for (i = 0; i < INT_MAX_HOPS; i++) {
		if (i >= hops)
			break;
		rec = buf + INT_OPT_BASE_LEN + i * INT_REC_LEN;
		/* n <= i < INT_MAX_HOPS: valid records are kept in path order. */
		if (n < INT_MAX_HOPS && int_rec_decode(rec, &e->hop[n]) == 0) {
			n++;
		} else if (int_qcn_decode(rec, &q) == 0) {
			int_echo_take_qcn(e, &q);
			qcn++;
		}
	}
	if (hops > n + qcn)
		count(INT_CNT_BAD_RECORD, hops - n - qcn);
	/* Records that are all invalid tell nothing: keep the last echo. */
	if (hops && !n)
		return;
	e->nhops = n;
	e->flags = int_echo_flags(buf[4]);
	e->arrived_ns = bpf_ktime_get_ns();
	e->count++;
	count(INT_CNT_ECHO_PARSED, 1);
}

static __always_inline void parse_hdr_opt(struct bpf_sock_ops *skops)
{
	__u8 buf[INT_OPT_MAX_LEN] = {
		INT_OPT_KIND, 4, INT_OPT_EXID >> 8, INT_OPT_EXID & 0xff,
	};
	struct bpf_sock *sk = skops->sk;
	struct int_fwd *fwd;
	long ret;
	int slots, hops;

	if (!sk)
		return;
	ret = bpf_load_hdr_opt(skops, buf, sizeof(buf), 0);
	if (ret == -ENOMSG)
		return;	/* none of ours (another experiment's, or none) */
	/* A broken options area (-EFAULT), or a length that is not ours. */
	if (ret < 0 || ret != buf[1]) {
		count(INT_CNT_MALFORMED, 1);
		return;
	}
	slots = int_opt_slots(buf[1]);
	hops = int_hdr_hops(buf[4]);	/* v0 or v1, -1 for another version */
	if (slots < 0 || hops < 0 || hops > slots) {
		count(INT_CNT_MALFORMED, 1);
		return;
	}
	if (buf[4] & INT_HDR_ECHO) {
		parse_echo(skops, sk, buf, hops);
		return;
	}
	fwd = bpf_sk_storage_get(&cclab_int_fwd, sk, 0,
				 BPF_SK_STORAGE_GET_F_CREATE);
	if (!fwd)
		return;
	__builtin_memcpy(fwd->opt, buf, sizeof(buf));
	fwd->len = buf[1];
	if (int_hdr_ue(buf[4]))
		fwd->ue = 1;
	count(INT_CNT_FWD_PARSED, 1);
}

SEC("sockops")
int cclab_int_agent(struct bpf_sock_ops *skops)
{
	switch (skops->op) {
	case BPF_SOCK_OPS_ACTIVE_ESTABLISHED_CB:
	case BPF_SOCK_OPS_PASSIVE_ESTABLISHED_CB:
		set_flags(skops);
		break;
	case BPF_SOCK_OPS_HDR_OPT_LEN_CB:
		hdr_opt_len(skops);
		break;
	case BPF_SOCK_OPS_WRITE_HDR_OPT_CB:
		write_hdr_opt(skops);
		break;
	case BPF_SOCK_OPS_PARSE_HDR_OPT_CB:
		parse_hdr_opt(skops);
		break;
	}
	return 1;
}
