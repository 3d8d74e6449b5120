/* SPDX-License-Identifier: GPL-2.0 */
/* Constants the delay's tc programs share with their loader (Go reads
 * them through bpf2go's generated constants or mirrors them in
 * orchestrator/delay/consts.go). */
#ifndef CCLAB_DELAY_H
#define CCLAB_DELAY_H

/* skb->mark of a packet that has served its delay. Marks are cleared when
 * a packet crosses into another namespace, so it never leaves the
 * switch. */
#define DELAY_MARK		0xcc1ade1a

#define DELAY_ENGINE_LINE	1
#define DELAY_ENGINE_NETEM	2

/* Hosts one port can tell apart (one entry per source host). */
#define DELAY_MAX_SOURCES	4096

#endif /* CCLAB_DELAY_H */
