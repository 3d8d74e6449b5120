/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The PFC controller's timing thread (ctl.c): it reads the switch's
 * crossings from the mapped ring buffer and applies each to its upstream
 * port one link delay after the crossing, with prebuilt netlink requests
 * and kick frames, and writes a switch port's pause state for TCD. It is
 * C for the reason the delay line is: a Go thread is preempted every
 * 10 ms of a long sleep and then waits behind the run's goroutines
 * (controller.go). Go prepares everything and reads the log after.
 */
#ifndef CCLAB_PFC_CTL_H
#define CCLAB_PFC_CTL_H

#include <stdint.h>
#include <linux/if_packet.h>

#define PFC_CTL_KICK_LEN 60
#define PFC_CTL_EARLY_RING 31

/* One upstream egress: what pauses and resumes it. */
struct pfc_ctl_port {
	int nl_fd;			/* NETLINK_ROUTE socket in its namespace */
	const uint8_t *pause_msg;	/* RTM_NEWQDISC: the TBF paused */
	uint32_t pause_len;
	const uint8_t *resume_msg;	/* ... at the link rate */
	uint32_t resume_len;
	int kick_fd;			/* AF_PACKET socket: one frame after a resume */
	struct sockaddr_ll kick_sa;
	uint8_t kick_frame[PFC_CTL_KICK_LEN];
	uint64_t delay_ns;		/* the link's: the pause frame's flight */
	uint32_t *paused;		/* the switch port's state, NULL for a NIC */
	uint64_t *last_xon;
	uint32_t node;			/* the switch whose ingress this is */
	uint32_t peer_node;		/* the node owning this egress */
	int host;			/* a host's NIC */
	/* the thread's own */
	int is_paused;
	uint32_t hop;
};

/* One applied change (kind 1 Xoff, 2 Xon), CLOCK_MONOTONIC ns. */
struct pfc_ctl_rec {
	uint64_t crossing;		/* the switch's event time */
	uint64_t due;
	uint64_t start;
	uint64_t done;
	uint32_t up;
	uint32_t kind;
	uint32_t hop;
	int32_t err;			/* 0, or the negative errno of the change */
};

/* A filed crossing. */
struct pfc_ctl_item {
	uint64_t crossing;
	uint64_t due;
	uint64_t seq;
	uint32_t up;
	uint32_t kind;
	uint32_t hop;
};

struct pfc_ctl {
	/* the ring buffer, mapped: consumer page, producer page, data twice */
	uint64_t *cons;
	const uint64_t *prod;
	const uint8_t *data;
	uint64_t mask;
	/* switch port slot -> upstream index, -1: not controlled */
	const int32_t *slot_up;
	uint32_t nslots;
	struct pfc_ctl_port *ports;
	uint32_t nports;
	/* filed crossings, a min-heap by (due, seq) */
	struct pfc_ctl_item *heap;
	uint32_t heap_cap, heap_n;
	uint64_t seq;
	/* applied changes, read by Go after the thread ends */
	struct pfc_ctl_rec *log;
	uint32_t log_cap, log_n;
	uint64_t log_dropped;
	/* placement and pace */
	int cpu;			/* -1: anywhere */
	int prio;			/* SCHED_FIFO priority */
	uint64_t poll_ns;		/* how often to look at the ring */
	uint64_t spin_ns;		/* spin this much before a due time */
	uint64_t max_early_ns;		/* cap of the early issue */
	int stop_fd;			/* eventfd: written to stop */
	int running;			/* cleared to stop */
	/* what happened */
	uint64_t events, unknown, full;
	int realtime;
	int32_t err;			/* the first negative errno */
	uint64_t durations[PFC_CTL_EARLY_RING];
	uint32_t ndur;
	uint64_t early_ns;
};

/* pfc_ctl_run runs the thread's loop until pfc_ctl_stop. */
void pfc_ctl_run(struct pfc_ctl *c);
/* pfc_ctl_stop asks it to end (any thread). */
void pfc_ctl_stop(struct pfc_ctl *c);

#endif
