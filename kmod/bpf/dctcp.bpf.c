// SPDX-License-Identifier: GPL-2.0
//go:build ignore

/* dctcp as a struct_ops tcp_congestion_ops: kmod/law/dctcp.h through cc_law.h. */
#define LAW_NAME dctcp
#define LAW_USES_ECN
#define LAW_IN_PRIV
#include "cc_law.h"
