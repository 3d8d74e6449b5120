/* SPDX-License-Identifier: GPL-2.0 */
/*
 * QCN-T: its core lives with QCN's in qcn.h (the reaction point they
 * share, QCN_RP_LAW); this header gives it the <name>.h every law of the
 * table has. Included by law.h (law_headers.h).
 */
#ifndef CCLAB_LAW_QCN_T_H
#define CCLAB_LAW_QCN_T_H

#include "qcn.h"

#endif /* CCLAB_LAW_QCN_T_H */
