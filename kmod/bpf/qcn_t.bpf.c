// SPDX-License-Identifier: GPL-2.0
//go:build ignore

/* qcn_t as a struct_ops tcp_congestion_ops: kmod/law/qcn.h through cc_law.h. */
#define LAW_NAME qcn_t
#define LAW_USES_INT
#define LAW_IN_PRIV
#include "cc_law.h"
