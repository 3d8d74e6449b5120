/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The line's own structures, shared by its thread (line.c), the tables it
 * serves (ports.c) and their replacement while it runs (update.c).
 *
 * A generation is what one dl_start or dl_update configured: per port its
 * class FIFOs and its source table. An update builds the next generation
 * in the caller's thread; the line's thread swaps it in between two
 * packets. FIFOs of the old generation that still hold packets become the
 * new generation's carries: they keep their packets and due times and
 * take only packets that must follow their source's packets held there.
 */
#ifndef CCLAB_DELAY_LINE_PRIV_H
#define CCLAB_DELAY_LINE_PRIV_H

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>
#include <linux/virtio_net.h>

#include "line.h"

#define NSEC		1000000000ull
#define VNET_HLEN	((uint32_t)sizeof(struct virtio_net_hdr))
/* The largest frame a sink can hand us: a 64 KB GSO packet and its
 * Ethernet header (gso_max_size is 64 KB on the run's interfaces). */
#define FRAME_MAX	(65536 + 256)
#define REC_ALIGN	8
#define NO_CLASS	0xff
/* epoll tags of the eventfds; ports are tagged with their index. */
#define TAG_STOP	UINT32_MAX
#define TAG_UPDATE	(UINT32_MAX - 1)

struct rec {
	uint32_t len;		/* vnet header + frame; WRAP_MARK: skip to 0 */
	uint32_t tag;		/* port generation << 8 | class: whose stats */
	uint64_t due;
};

struct fifo {
	uint8_t *buf;
	uint64_t cap;
	uint64_t head;		/* offset of the oldest record */
	uint64_t tail;		/* offset where the next record goes */
	uint64_t used;		/* bytes between head and tail, marks included */
	uint64_t count;
	uint64_t pushed;	/* records ever committed */
	uint64_t popped;	/* records ever released */
	uint64_t max_due;	/* the latest due it ever took */
	uint64_t delay;
	uint64_t last_stamp;
};

/* What the line remembers of a source, across packets and updates. */
struct src_state {
	uint64_t last_due;	/* due of its last packet */
	struct fifo *f;		/* the FIFO that took it; NULL: long gone */
	uint64_t seq;		/* f->pushed right after it: held while
				 * f->popped < seq */
};

struct port {
	int rx_fd, tx_fd;
	uint32_t gen;		/* changes of its classes; low 24 bits tag
				 * its records */
	uint32_t nclasses;
	struct fifo *fifo[DL_MAX_CLASSES];
	uint32_t ncarry;
	struct fifo **carry;	/* FIFOs of earlier generations, not empty
				 * when their generation ended */
	uint32_t hash_mask;	/* source table: open addressing */
	uint32_t *hash_addr;
	uint8_t *hash_class;	/* NO_CLASS: empty */
	struct src_state *hash_state;
};

/* An update handed to the thread. */
struct update {
	struct port *ports;	/* the new generation; the old after the swap */
	uint8_t *keep;		/* per port: unchanged, its tables stay */
	struct fifo **retired;	/* old FIFOs that were empty: to free */
	uint32_t nretired;
	int done;		/* set (release) by the thread once applied */
};

struct dl_line {
	uint32_t nports;
	struct port *ports;
	int epfd, stopfd;	/* epfd: the control fds the thread sleeps on */
	int datafd;		/* the sinks' sockets, polled, never slept on */
	uint64_t poll_ns;	/* longest sleep: a quarter of the shortest delay */
	uint64_t poll_gen;	/* st.updates when poll_ns was derived */
	int updfd;		/* an update is pending: wakes the thread */
	int ackfd;		/* the thread applied it: wakes the caller */
	int cpu, rt_prio;
	uint64_t margin;	/* a p95 of how late a timed wakeup comes */
	uint64_t tolerance;	/* atomic: dl_set_tolerance may change it */
	pthread_t thread;
	int running;
	uint64_t start_ns;
	uint8_t *scratch;	/* frames of no class, sent at once */
	struct update *pending;	/* atomic: handed over, not yet taken */
	pthread_mutex_t ctl;	/* serialises dl_update and dl_stop */
	struct dl_stats st;
};

/* Statistics are written by the line's thread only; dl_stats may read them
 * from another thread while it runs, hence relaxed atomics. */
#define ST_ADD(f, v)	__atomic_add_fetch(&(f), (v), __ATOMIC_RELAXED)
#define ST_SET(f, v)	__atomic_store_n(&(f), (v), __ATOMIC_RELAXED)

static inline int fail(char *err, int errlen, int e, const char *fmt, const char *what)
{
	snprintf(err, (size_t)errlen, fmt, what);
	return -e;
}

/* Time is CLOCK_REALTIME, the clock of the kernel's packet stamps. */
static inline uint64_t now_real(void)
{
	struct timespec t;

	clock_gettime(CLOCK_REALTIME, &t);
	return (uint64_t)t.tv_sec * NSEC + (uint64_t)t.tv_nsec;
}

static inline uint32_t hash32(uint32_t x)
{
	x ^= x >> 16;
	x *= 0x7feb352d;
	x ^= x >> 15;
	x *= 0x846ca68b;
	x ^= x >> 16;
	return x;
}

/* src_slot returns the table slot of a source address, or -1. */
static inline int src_slot(const struct port *p, uint32_t addr)
{
	uint32_t i = hash32(addr) & p->hash_mask;

	for (;;) {
		if (p->hash_class[i] == NO_CLASS)
			return -1;
		if (p->hash_addr[i] == addr)
			return (int)i;
		i = (i + 1) & p->hash_mask;
	}
}

/* A port's FIFOs: its classes', then its carries. */
static inline uint32_t port_fifos(const struct port *p)
{
	return p->nclasses + p->ncarry;
}

static inline struct fifo *port_fifo(const struct port *p, uint32_t k)
{
	return k < p->nclasses ? p->fifo[k] : p->carry[k - p->nclasses];
}

/*
 * dl_build_ports checks n port configurations and allocates a generation:
 * FIFOs, source tables, and room for carry_room[i] carries at port i
 * (carry_room NULL: none); a port with keep[i] set is left empty (keep
 * NULL: none). On error nothing stays allocated.
 */
int dl_build_ports(const struct dl_port_cfg *cfg, uint32_t n, const uint32_t *carry_room,
		   const uint8_t *keep, struct port **out, char *err, int errlen);
void dl_free_fifo(struct fifo *f);
/* dl_free_ports frees a generation's tables, and its FIFOs (carries
 * included) when with_fifos. */
void dl_free_ports(struct port *ports, uint32_t n, int with_fifos);
/* dl_apply_pending swaps in an update handed to the thread, if any. */
void dl_apply_pending(struct dl_line *l);
void dl_publish_classes(struct dl_line *l, uint32_t pi, const struct port *p);

static inline int update_pending(struct dl_line *l)
{
	return __atomic_load_n(&l->pending, __ATOMIC_RELAXED) != NULL;
}

#endif /* CCLAB_DELAY_LINE_PRIV_H */
