/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The switch's behaviour units built in user space for their tests: the
 * kernel's type names (uapi), then the units as tcopt/bpf/switch.bpf.c
 * includes them. Not for BPF.
 */
#ifndef CCLAB_SWUNIT_USERSPACE_H
#define CCLAB_SWUNIT_USERSPACE_H

#include <linux/types.h>	/* __u8 .. __s64, as the kernel's uapi has them */

#include "int_stamp.h"
#include "ecn_mark.h"
#include "qcn_cp.h"
#include "tcd_state.h"
#include "pfc.h"

#endif /* CCLAB_SWUNIT_USERSPACE_H */
