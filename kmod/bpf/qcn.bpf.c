// SPDX-License-Identifier: GPL-2.0
//go:build ignore

/* qcn as a struct_ops tcp_congestion_ops: kmod/law/qcn.h through cc_law.h. */
#define LAW_NAME qcn
#define LAW_USES_INT
#define LAW_IN_PRIV
#include "cc_law.h"
