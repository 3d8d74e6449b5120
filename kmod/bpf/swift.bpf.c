// SPDX-License-Identifier: GPL-2.0
//go:build ignore

/* swift as a struct_ops tcp_congestion_ops: kmod/law/swift.h through cc_law.h. */
#define LAW_NAME swift
#define LAW_IN_PRIV
#define LAW_PATH_HOPS
#include "cc_law.h"
