// SPDX-License-Identifier: GPL-2.0
//go:build ignore

/* theta_powertcp as a struct_ops tcp_congestion_ops: kmod/law/theta_powertcp.h through cc_law.h. */
#define LAW_NAME theta_powertcp
#define LAW_IN_PRIV
#include "cc_law.h"
