// SPDX-License-Identifier: GPL-2.0
//go:build ignore

/* dcqcn as a struct_ops tcp_congestion_ops: kmod/law/dcqcn.h through cc_law.h. */
#define LAW_NAME dcqcn
#define LAW_USES_ECN
#define LAW_IN_PRIV
#include "cc_law.h"
