// SPDX-License-Identifier: GPL-2.0
/*
 * Changing a running line's classes and sources (dl_update, line.h).
 *
 * The caller checks and allocates the next generation (ports.c), hands it
 * over through l->pending and wakes the thread with l->updfd; the thread
 * swaps it in between two packets (dl_apply_pending: no lock, nothing
 * allocated or freed there) and acknowledges through l->ackfd; the caller
 * then frees what the old generation no longer needs.
 *
 * A port the update leaves as it is (same classes, same sources) keeps its
 * FIFOs, table and counts. Of the others, at the swap every old FIFO that
 * still holds packets becomes a carry of its port: its packets keep their due times, so a longer delay applies to
 * packets read after the swap. Each source keeps the due of its last
 * packet and the FIFO holding it: a packet whose new due would not be
 * later than everything that FIFO took follows it into that FIFO instead,
 * due no earlier than its predecessor + 1 ns (line.c read_port). The
 * thread releases the earliest due head of all FIFOs, so a source's
 * packets leave in the order they came, and a shorter delay takes over
 * once its earlier packets are out.
 */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "line_priv.h"

/* carry_fifos moves the old FIFOs of a port that hold packets into the new
 * generation's carries, and the empty ones to the retired list. */
static void carry_fifos(struct port *old, struct port *new, struct update *u)
{
	for (uint32_t k = 0; k < port_fifos(old); k++) {
		struct fifo *f = port_fifo(old, k);

		if (f->count)
			new->carry[new->ncarry++] = f;
		else
			u->retired[u->nretired++] = f;
	}
}

/* carry_sources gives each source of the new table what the old one knew
 * of it: the due of its last packet and the FIFO holding it (forgotten if
 * that FIFO is empty, hence retired). */
static void carry_sources(const struct port *old, struct port *new)
{
	for (uint32_t i = 0; i <= new->hash_mask; i++) {
		struct src_state *s = &new->hash_state[i];
		int j;

		if (new->hash_class[i] == NO_CLASS)
			continue;
		j = src_slot(old, new->hash_addr[i]);
		if (j < 0)
			continue;
		*s = old->hash_state[j];
		if (s->f && s->f->count == 0)
			s->f = NULL;
	}
}

/* dl_publish_classes makes port pi's statistics those of its classes p:
 * what the classes before counted goes to earlier. */
void dl_publish_classes(struct dl_line *l, uint32_t pi, const struct port *p)
{
	struct dl_class_stats *e = &l->st.earlier[pi];

	for (uint32_t k = 0; k < l->st.nclasses[pi]; k++) {
		struct dl_class_stats *c = &l->st.cls[pi][k];

		ST_ADD(e->pkts, c->pkts);
		ST_ADD(e->bytes, c->bytes);
		ST_ADD(e->sent, c->sent);
		ST_ADD(e->buf_drops, c->buf_drops);
		ST_ADD(e->qdisc_drops, c->qdisc_drops);
		ST_ADD(e->tx_errors, c->tx_errors);
		ST_ADD(e->inversions, c->inversions);
		ST_ADD(e->held_for_order, c->held_for_order);
		if (c->max_bytes > e->max_bytes)
			ST_SET(e->max_bytes, c->max_bytes);
		ST_SET(c->pkts, 0);
		ST_SET(c->bytes, 0);
		ST_SET(c->sent, 0);
		ST_SET(c->buf_drops, 0);
		ST_SET(c->qdisc_drops, 0);
		ST_SET(c->tx_errors, 0);
		ST_SET(c->inversions, 0);
		ST_SET(c->held_for_order, 0);
		ST_SET(c->max_bytes, 0);
	}
	for (uint32_t k = 0; k < p->nclasses; k++)
		ST_SET(l->st.delay_ns[pi][k], p->fifo[k]->delay);
	ST_SET(l->st.nclasses[pi], p->nclasses);
}

/* port_unchanged tells whether c configures port p as it is: the same
 * classes (delays, buffers) and the same class for the same sources. */
static int port_unchanged(const struct port *p, const struct dl_port_cfg *c)
{
	uint32_t n = 0;

	if (c->nclasses != p->nclasses)
		return 0;
	for (uint32_t k = 0; k < c->nclasses; k++) {
		if (p->fifo[k]->delay != c->delay_ns[k] ||
		    p->fifo[k]->cap != (c->buf_bytes[k] & ~(uint64_t)(REC_ALIGN - 1)))
			return 0;
	}
	for (uint32_t i = 0; i <= p->hash_mask; i++)
		n += p->hash_class[i] != NO_CLASS;
	if (n != c->nsrcs)
		return 0;
	for (uint32_t k = 0; k < c->nsrcs; k++) {
		int j = src_slot(p, c->srcs[k].addr);

		if (j < 0 || p->hash_class[j] != c->srcs[k].class_idx)
			return 0;
	}
	return 1;
}

void dl_apply_pending(struct dl_line *l)
{
	struct update *u;
	struct port *old;
	uint64_t one = 1;

	if (!update_pending(l))
		return;
	u = __atomic_exchange_n(&l->pending, NULL, __ATOMIC_ACQUIRE);
	if (!u)
		return;
	old = l->ports;
	for (uint32_t i = 0; i < l->nports; i++) {
		if (u->keep[i]) {
			/* Its FIFOs, table and counts go on as they are. */
			u->ports[i] = old[i];
			memset(&old[i], 0, sizeof(old[i]));
			continue;
		}
		/* Records pushed before now count for the earlier classes. */
		u->ports[i].gen = old[i].gen + 1;
		carry_fifos(&old[i], &u->ports[i], u);
		carry_sources(&old[i], &u->ports[i]);
		dl_publish_classes(l, i, &u->ports[i]);
	}
	l->ports = u->ports;
	u->ports = old;
	ST_ADD(l->st.updates, 1);
	ST_SET(l->st.update_ns, now_real());
	__atomic_store_n(&u->done, 1, __ATOMIC_RELEASE);
	if (write(l->ackfd, &one, sizeof(one)) < 0) {
		/* The eventfd cannot be full; the caller polls done. */
	}
}

static uint64_t now_mono(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * NSEC + (uint64_t)t.tv_nsec;
}

/* wait_done waits for the thread to apply u: 0, or -ETIMEDOUT after
 * timeout_ms (negative: no limit). */
static int wait_done(struct dl_line *l, struct update *u, int timeout_ms)
{
	uint64_t end = now_mono() + (uint64_t)(timeout_ms > 0 ? timeout_ms : 0) * 1000000;

	while (!__atomic_load_n(&u->done, __ATOMIC_ACQUIRE)) {
		struct pollfd pfd = { .fd = l->ackfd, .events = POLLIN };
		int left = -1;
		uint64_t v;

		if (timeout_ms >= 0) {
			uint64_t now = now_mono();

			if (now >= end)
				return -ETIMEDOUT;
			left = (int)((end - now + 999999) / 1000000);
		}
		if (poll(&pfd, 1, left) > 0 && read(l->ackfd, &v, sizeof(v)) < 0) {
			/* Raced with nobody: the counter is read here only. */
		}
	}
	return 0;
}

int dl_update(struct dl_line *l, const struct dl_port_cfg *ports, uint32_t nports,
	      int timeout_ms, char *err, int errlen)
{
	struct update *u = NULL;
	uint32_t *room = NULL, total = 0;
	uint64_t one = 1;
	int ret;

	pthread_mutex_lock(&l->ctl);
	if (!__atomic_load_n(&l->running, __ATOMIC_ACQUIRE)) {
		ret = fail(err, errlen, ESRCH, "%s: it has stopped", "delay line");
		goto out;
	}
	if (nports != l->nports) {
		ret = fail(err, errlen, EINVAL, "%s: an update gives every port of the line, in order", "delay line");
		goto out;
	}
	/* The thread changes l->ports only when it applies an update, and
	 * the last one was acknowledged (acquire) before this call. A port's
	 * carries after this update are at most all its FIFOs now. */
	room = calloc(nports, sizeof(*room));
	u = calloc(1, sizeof(*u));
	if (u)
		u->keep = calloc(nports, sizeof(*u->keep));
	if (!room || !u || !u->keep) {
		ret = fail(err, errlen, ENOMEM, "%s: out of memory", "delay line");
		goto out;
	}
	for (uint32_t i = 0; i < nports; i++) {
		u->keep[i] = (uint8_t)port_unchanged(&l->ports[i], &ports[i]);
		room[i] = port_fifos(&l->ports[i]);
		total += room[i];
	}
	u->retired = calloc(total, sizeof(*u->retired));
	if (!u->retired) {
		ret = fail(err, errlen, ENOMEM, "%s: out of memory", "delay line");
		goto out;
	}
	ret = dl_build_ports(ports, nports, room, u->keep, &u->ports, err, errlen);
	if (ret)
		goto out;
	for (uint32_t i = 0; i < nports; i++) {
		if (u->keep[i])
			continue;
		u->ports[i].rx_fd = l->ports[i].rx_fd;
		u->ports[i].tx_fd = l->ports[i].tx_fd;
	}
	__atomic_store_n(&l->pending, u, __ATOMIC_RELEASE);
	if (write(l->updfd, &one, sizeof(one)) < 0) {
		/* Cannot be full; the thread also checks between packets. */
	}
	ret = wait_done(l, u, timeout_ms);
	if (ret && __atomic_exchange_n(&l->pending, NULL, __ATOMIC_ACQ_REL) == u) {
		/* The thread never took it: nothing changed. */
		dl_free_ports(u->ports, nports, 1);
		ret = fail(err, errlen, ETIMEDOUT, "%s: its thread did not take the update in time", "delay line");
		goto out;
	}
	if (ret)
		wait_done(l, u, -1);	/* taken just now: being applied */
	/* u->ports is the old generation: its FIFOs are carries now or
	 * retired, and its kept ports were moved out. */
	for (uint32_t k = 0; k < u->nretired; k++)
		dl_free_fifo(u->retired[k]);
	dl_free_ports(u->ports, nports, 0);
	ret = 0;
out:
	if (u) {
		free(u->retired);
		free(u->keep);
	}
	free(u);
	free(room);
	pthread_mutex_unlock(&l->ctl);
	return ret;
}

void dl_set_tolerance(struct dl_line *l, uint64_t tolerance_ns)
{
	__atomic_store_n(&l->tolerance, tolerance_ns, __ATOMIC_RELAXED);
}
