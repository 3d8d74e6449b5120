// SPDX-License-Identifier: GPL-2.0
//go:build ignore

/* hpcc as a struct_ops tcp_congestion_ops: kmod/law/hpcc.h through cc_law.h. */
#define LAW_NAME hpcc
#define LAW_USES_INT
#include "cc_law.h"
