// SPDX-License-Identifier: GPL-2.0
//go:build ignore

/* powertcp as a struct_ops tcp_congestion_ops: kmod/law/powertcp.h through cc_law.h. */
#define LAW_NAME powertcp
#define LAW_USES_INT
#include "cc_law.h"
