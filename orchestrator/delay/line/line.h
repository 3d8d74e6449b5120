/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The delay line: one user-space thread that holds packets for a fixed
 * time, then hands them back to the kernel, in order.
 *
 * A port is the place where a host-facing switch port's traffic is delayed
 * (orchestrator/delay/README.md): its tc program redirects every packet
 * headed for the port's queue to a sink device, where rx_fd (an AF_PACKET
 * socket with virtio-net headers and kernel timestamps) receives it; after
 * the delay of the packet's class (chosen by its IPv4 source address) the
 * line sends it back into the port with tx_fd, marked so that the tc
 * program lets it into the queue.
 *
 * Time is CLOCK_REALTIME in nanoseconds, the clock of the kernel's packet
 * timestamps. A packet is due at its kernel timestamp + its class delay.
 * Each (port, class) is a FIFO: packets of one source leave in the order
 * they came. The thread sleeps until shortly before the next due time,
 * then spins (the margin adapts to how late this machine wakes it).
 *
 * dl_update changes the classes and sources of a running line: the thread
 * takes the new tables between two packets. What the FIFOs already hold
 * keeps its due time (in FIFOs of the earlier classes, "carries", until
 * they drain), and a source's packet never leaves before its previous one:
 * its due is at least that one's + 1 ns.
 */
#ifndef CCLAB_DELAY_LINE_H
#define CCLAB_DELAY_LINE_H

#include <stdint.h>

#define DL_MAX_PORTS	1024
#define DL_MAX_CLASSES	16
/* Histograms of lateness and read lag: 1 us buckets up to 20 ms, then one
 * overflow bucket. */
#define DL_HIST_BUCKETS	20001

/* One source address and the class whose delay its packets get. */
struct dl_src {
	uint32_t addr;		/* IPv4, network byte order */
	uint32_t class_idx;
};

struct dl_port_cfg {
	int rx_fd;		/* AF_PACKET on the sink: receives what to delay */
	int tx_fd;		/* AF_PACKET on the port: sends it back, marked */
	uint32_t nclasses;
	uint64_t delay_ns[DL_MAX_CLASSES];
	uint64_t buf_bytes[DL_MAX_CLASSES];	/* FIFO capacity of each class */
	uint32_t nsrcs;
	const struct dl_src *srcs;
};

struct dl_cfg {
	uint32_t nports;
	const struct dl_port_cfg *ports;
	int cpu;		/* CPU to pin the thread to, -1: none */
	int rt_prio;		/* SCHED_FIFO priority, 0: normal scheduling */
	uint64_t margin_ns;	/* initial spin margin before a due time */
	/* Lateness the line may accept to spin less: it wakes at most
	 * tolerance_ns later than the adapted margin would have it, and
	 * spins only the rest. */
	uint64_t tolerance_ns;
};

struct dl_class_stats {
	uint64_t pkts;		/* received into the FIFO */
	uint64_t bytes;
	uint64_t sent;		/* sent back into the port */
	uint64_t buf_drops;	/* FIFO full: the line's own loss */
	uint64_t qdisc_drops;	/* the port's queue refused it (ENOBUFS) */
	uint64_t tx_errors;	/* any other send error */
	uint64_t inversions;	/* kernel timestamp below the previous one */
	uint64_t max_bytes;	/* high-water mark of the FIFOs it went into */
	uint64_t held_for_order;	/* due later than stamp + delay: behind
					 * its source's packets of an earlier,
					 * longer delay */
};

struct dl_stats {
	uint64_t hist_late[DL_HIST_BUCKETS];	/* send time - due, us */
	uint64_t hist_lag[DL_HIST_BUCKETS];	/* read time - kernel stamp, us */
	uint64_t max_late_ns;
	uint64_t max_lag_ns;
	uint64_t unknown_src;	/* packets of no class: sent at once */
	uint64_t bad_frames;	/* not IPv4 or truncated: sent at once */
	uint64_t no_stamp;	/* no kernel timestamp: read time used */
	uint64_t wakeups;	/* returns from sleeping */
	uint64_t timer_wakeups;
	uint64_t spin_ns;	/* time spent spinning before due times */
	uint64_t margin_ns;	/* the spin margin now */
	uint64_t cpu_ns;	/* the thread's CPU time */
	uint64_t running_ns;	/* wall time since the thread started */
	int cpu;		/* the CPU it is pinned to, -1 none */
	int rt_prio;		/* its SCHED_FIFO priority, 0 if not granted */
	uint64_t updates;	/* dl_update calls applied */
	uint64_t update_ns;	/* when the last was applied (CLOCK_REALTIME):
				 * packets read since have its delays */
	uint32_t nports;
	/* The classes of each port now; what classes before the last update
	 * counted (their packets included, even when sent after it) is in
	 * earlier. */
	uint32_t nclasses[DL_MAX_PORTS];
	uint64_t delay_ns[DL_MAX_PORTS][DL_MAX_CLASSES];
	struct dl_class_stats cls[DL_MAX_PORTS][DL_MAX_CLASSES];
	struct dl_class_stats earlier[DL_MAX_PORTS];
};

struct dl_line;

/*
 * dl_start checks cfg, allocates the FIFOs and starts the thread. It
 * returns 0 and the line in *out, or a negative errno and a message in
 * err (errlen bytes). The fds stay the caller's: close them after
 * dl_stop.
 */
int dl_start(const struct dl_cfg *cfg, struct dl_line **out, char *err, int errlen);
/*
 * dl_update gives the running line new classes and sources: ports[i] for
 * the i-th port of dl_start (its fds are ignored: the sockets stay). It
 * checks and allocates everything first, hands it to the thread, and
 * returns 0 once the thread has applied it; an error (negative errno, a
 * message in err) changes nothing: -ETIMEDOUT when the thread did not
 * take it within timeout_ms. Calls are serialised.
 */
int dl_update(struct dl_line *l, const struct dl_port_cfg *ports, uint32_t nports,
	      int timeout_ms, char *err, int errlen);
/* dl_set_tolerance changes cfg->tolerance_ns of a running line. */
void dl_set_tolerance(struct dl_line *l, uint64_t tolerance_ns);
/* dl_stats copies the statistics (exact after dl_stop, close otherwise). */
void dl_stats(struct dl_line *l, struct dl_stats *out);
/* dl_stop stops the thread (packets still held are dropped) and frees the
 * FIFOs; dl_stats may still be called until dl_free. */
void dl_stop(struct dl_line *l);
void dl_free(struct dl_line *l);

#endif /* CCLAB_DELAY_LINE_H */
