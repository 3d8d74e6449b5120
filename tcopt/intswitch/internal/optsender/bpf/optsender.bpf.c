// SPDX-License-Identifier: GPL-2.0
/*
 * Test-only sender for the switch tests: a sock_ops program that reserves
 * an empty forward INT option (tcopt/README.md) on every segment of the
 * sockets of one cgroup, as the real host agent does, so that the switch
 * has something to stamp. It does not echo or parse anything.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

#include "../../../../int_option.h"

char LICENSE[] SEC("license") = "GPL";

/* Record slots to reserve, set by the loader (0..INT_MAX_HOPS). */
const volatile __u8 slots = INT_MAX_HOPS;

SEC("sockops")
int reserve_int_option(struct bpf_sock_ops *skops)
{
	__u8 opt[INT_OPT_MAX_LEN] = {};
	__u32 len = INT_OPT_BASE_LEN + (__u32)slots * INT_REC_LEN;

	if (len > INT_OPT_MAX_LEN)
		return 1;
	switch (skops->op) {
	case BPF_SOCK_OPS_ACTIVE_ESTABLISHED_CB:
	case BPF_SOCK_OPS_PASSIVE_ESTABLISHED_CB:
		bpf_sock_ops_cb_flags_set(skops, skops->bpf_sock_ops_cb_flags |
				BPF_SOCK_OPS_WRITE_HDR_OPT_CB_FLAG);
		break;
	case BPF_SOCK_OPS_HDR_OPT_LEN_CB:
		bpf_reserve_hdr_opt(skops, len, 0);
		break;
	case BPF_SOCK_OPS_WRITE_HDR_OPT_CB:
		opt[0] = INT_OPT_KIND;
		opt[1] = len;
		opt[2] = INT_OPT_EXID >> 8;
		opt[3] = INT_OPT_EXID & 0xff;
		opt[4] = INT_HDR_VERSION << INT_HDR_VERSION_SHIFT;
		bpf_store_hdr_opt(skops, opt, len, 0);
		break;
	}
	return 1;
}
