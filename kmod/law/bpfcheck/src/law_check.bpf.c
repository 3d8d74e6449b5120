// SPDX-License-Identifier: GPL-2.0
/*
 * The law core built for BPF, one syscall program per law, for the test
 * that loads it into the kernel (the verifier must accept every law) and
 * checks it step by step against the user-space build (bpfcheck_test.go).
 * State, parameters, the ACK, the echo and the output live in one-entry
 * array maps, as a struct_ops law keeps them in socket storage.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
/* Branchy helpers become global subprograms, verified once each. */
#define LAW_SUBPROG __attribute__((noinline))
#include "../../law.h"

/* One step's input: init, or an ACK with an optional echo. */
struct check_in {
	__u64 now_ns;		/* struct law_ack's fields but the pointer */
	__u32 acked_bytes;
	__u32 ece_bytes;
	__u32 cwnd_segs;
	__u32 mss_ack;
	__u32 snd_nxt_ack;
	__u32 snd_una;
	__u32 rtt_us;
	__u32 flags;
	struct int_echo echo;
	__u32 has_echo;
	__u32 init;	/* 1: run <law>_init(snd_nxt, mss) instead */
	__u32 snd_nxt;
	__u32 mss;
};

#define ONE_ENTRY(name, vtype)				\
	struct {					\
		__uint(type, BPF_MAP_TYPE_ARRAY);	\
		__uint(max_entries, 1);			\
		__type(key, __u32);			\
		__type(value, vtype);			\
	} name SEC(".maps")

ONE_ENTRY(check_in_map, struct check_in);
ONE_ENTRY(check_out_map, struct law_out);
#define LAW_STEP(prog, law, pmap, smap)					\
SEC("syscall")								\
int prog(void *ctx)							\
{									\
	__u32 k = 0;							\
	struct check_in *in = bpf_map_lookup_elem(&check_in_map, &k);	\
	struct law_out *out = bpf_map_lookup_elem(&check_out_map, &k);	\
	struct law##_params *p = bpf_map_lookup_elem(&pmap, &k);	\
	struct law##_state *s = bpf_map_lookup_elem(&smap, &k);	\
	struct law_ack ack;						\
									\
	if (!in || !out || !p || !s)					\
		return 1;						\
	if (in->init) {							\
		law##_init(s, p, in->snd_nxt, in->mss, out);		\
		return 0;						\
	}								\
	ack.now_ns = in->now_ns;					\
	ack.acked_bytes = in->acked_bytes;				\
	ack.ece_bytes = in->ece_bytes;					\
	ack.cwnd_segs = in->cwnd_segs;					\
	ack.mss = in->mss_ack;						\
	ack.snd_nxt = in->snd_nxt_ack;					\
	ack.snd_una = in->snd_una;					\
	ack.rtt_us = in->rtt_us;					\
	ack.flags = in->flags;						\
	ack.echo = in->has_echo ? &in->echo : (void *)0;		\
	law##_on_ack(s, p, &ack, out);					\
	return 0;							\
}

/* Per law of the table: its parameter and state maps and its step program,
 * <name>_params_map, <name>_state_map and <name>_step (bpfcheck.go finds
 * them by these names). */
#define LAW_X_CHECK(id, name, NAME, signal, traits)			\
	ONE_ENTRY(name##_params_map, struct name##_params);		\
	ONE_ENTRY(name##_state_map, struct name##_state);		\
	LAW_STEP(name##_step, name, name##_params_map, name##_state_map)
LAW_TABLE(LAW_X_CHECK)

char LICENSE[] SEC("license") = "GPL";
