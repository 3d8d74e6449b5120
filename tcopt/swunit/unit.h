/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the switch's behaviour units (int_stamp.h, ecn_mark.h, qcn_cp.h,
 * tcd_state.h)
 * share. Each unit is a pure core: its inputs in, its decision out, no
 * BPF helper, no map and no kernel type inside, so that the same header
 * compiles into tcopt/bpf/switch.bpf.c and into this package's user-space
 * tests (cgo, userspace.h). They live beside their Go tests because the
 * go command rebuilds a cgo package only for headers in its own folder. The includer provides __u8, __u16, __u32, __u64,
 * __s32 and __s64 (vmlinux.h in BPF, stdint.h typedefs in user space).
 * Everything is inlined: a unit adds no BPF subprogram and no call.
 */
#ifndef CCLAB_SWITCH_UNIT_H
#define CCLAB_SWITCH_UNIT_H

#ifndef SW_INLINE
#define SW_INLINE static inline __attribute__((always_inline))
#endif

#endif /* CCLAB_SWITCH_UNIT_H */
