// SPDX-License-Identifier: GPL-2.0
//go:build ignore

/* timely as a struct_ops tcp_congestion_ops: kmod/law/timely.h through cc_law.h. */
#define LAW_NAME timely
#define LAW_IN_PRIV
#include "cc_law.h"
