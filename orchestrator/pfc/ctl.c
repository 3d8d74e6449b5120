// SPDX-License-Identifier: GPL-2.0
/*
 * The PFC controller's timing thread (ctl.h). One loop:
 *
 *   1. read every crossing the switch posted (the mapped ring buffer, no
 *      syscall) and file it due at its time + its link's delay;
 *   2. apply what is due (less the running median of the changes' own
 *      durations): the upstream's TBF change, on a resume the kick, then
 *      the switch port's pause state;
 *   3. sleep in ppoll on the stop eventfd until the next due time (less a
 *      short spin) or the next look at the ring, whichever is first.
 *
 * The ring buffer's own wakeup (an irq_work) came milliseconds late on
 * this kernel, so the thread looks at the ring every poll_ns instead.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <linux/netlink.h>

#include "ctl.h"

/* The ring buffer's record header (uapi bpf.h). */
#define RB_BUSY (1U << 31)
#define RB_DISCARD (1U << 30)
#define RB_HDR 8

/* struct pfc_event (tcopt/bpf/switch_maps.h): ns, occupancy, threshold,
 * port slot, kind. */
#define EV_SIZE 32

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static int item_less(const struct pfc_ctl_item *a, const struct pfc_ctl_item *b)
{
	return a->due < b->due || (a->due == b->due && a->seq < b->seq);
}

static void heap_push(struct pfc_ctl *c, struct pfc_ctl_item it)
{
	uint32_t i;

	if (c->heap_n == c->heap_cap) {
		c->full++;
		return;
	}
	i = c->heap_n++;
	while (i > 0) {
		uint32_t p = (i - 1) / 2;

		if (!item_less(&it, &c->heap[p]))
			break;
		c->heap[i] = c->heap[p];
		i = p;
	}
	c->heap[i] = it;
}

static struct pfc_ctl_item heap_pop(struct pfc_ctl *c)
{
	struct pfc_ctl_item top = c->heap[0], last = c->heap[--c->heap_n];
	uint32_t i = 0;

	for (;;) {
		uint32_t l = 2 * i + 1, m = i;
		const struct pfc_ctl_item *best = &last;

		if (l < c->heap_n && item_less(&c->heap[l], best)) {
			m = l;
			best = &c->heap[l];
		}
		if (l + 1 < c->heap_n && item_less(&c->heap[l + 1], best))
			m = l + 1;
		if (m == i)
			break;
		c->heap[i] = c->heap[m];
		i = m;
	}
	if (c->heap_n > 0)
		c->heap[i] = last;
	return top;
}

/* paused_hops: the most hops of node's own egress ports paused now. */
static uint32_t paused_hops(const struct pfc_ctl *c, uint32_t node)
{
	uint32_t most = 0;

	for (uint32_t i = 0; i < c->nports; i++) {
		const struct pfc_ctl_port *p = &c->ports[i];

		if (!p->host && p->peer_node == node && p->is_paused && p->hop > most)
			most = p->hop;
	}
	return most;
}

static void file_event(struct pfc_ctl *c, const uint8_t *ev)
{
	uint64_t ns;
	uint32_t slot, kind;
	int32_t up;
	struct pfc_ctl_item it;

	memcpy(&ns, ev, 8);
	memcpy(&slot, ev + 24, 4);
	memcpy(&kind, ev + 28, 4);
	c->events++;
	if (slot >= c->nslots || c->slot_up[slot] < 0 || (kind != 1 && kind != 2)) {
		c->unknown++;
		return;
	}
	up = c->slot_up[slot];
	it.crossing = ns;
	it.due = ns + c->ports[up].delay_ns;
	it.seq = c->seq++;
	it.up = (uint32_t)up;
	it.kind = kind;
	it.hop = kind == 1 ? 1 + paused_hops(c, c->ports[up].node) : 0;
	heap_push(c, it);
}

/* drain files every record the ring holds, advancing the consumer. */
static void drain(struct pfc_ctl *c)
{
	uint64_t cons = __atomic_load_n(c->cons, __ATOMIC_RELAXED);
	uint64_t prod = __atomic_load_n(c->prod, __ATOMIC_ACQUIRE);

	while (cons < prod) {
		const uint8_t *hdr = c->data + (cons & c->mask);
		uint32_t len = __atomic_load_n((const uint32_t *)hdr, __ATOMIC_ACQUIRE);
		uint32_t size;

		if (len & RB_BUSY)
			break;
		size = len & ~(RB_BUSY | RB_DISCARD);
		if (!(len & RB_DISCARD) && size >= EV_SIZE)
			file_event(c, hdr + RB_HDR);
		cons += (size + RB_HDR + 7) & ~7ULL;
		__atomic_store_n(c->cons, cons, __ATOMIC_RELEASE);
	}
}

/* netlink_change sends msg and reads its acknowledgement: 0 or -errno. */
static int netlink_change(int fd, const uint8_t *msg, uint32_t len)
{
	uint8_t buf[1024];
	ssize_t n;

	if (send(fd, msg, len, 0) < 0)
		return -errno;
	do
		n = recv(fd, buf, sizeof(buf), 0);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	if ((size_t)n < NLMSG_HDRLEN + sizeof(int32_t))
		return -EPROTO;
	if (((const struct nlmsghdr *)buf)->nlmsg_type != NLMSG_ERROR)
		return -EPROTO;
	return ((const struct nlmsgerr *)NLMSG_DATA(buf))->error;
}

static void note_duration(struct pfc_ctl *c, uint64_t d)
{
	uint64_t s[PFC_CTL_EARLY_RING];
	uint32_t n;

	c->durations[c->ndur % PFC_CTL_EARLY_RING] = d;
	c->ndur++;
	n = c->ndur < PFC_CTL_EARLY_RING ? c->ndur : PFC_CTL_EARLY_RING;
	memcpy(s, c->durations, n * sizeof(s[0]));
	for (uint32_t i = 1; i < n; i++)
		for (uint32_t j = i; j > 0 && s[j - 1] > s[j]; j--) {
			uint64_t t = s[j];

			s[j] = s[j - 1];
			s[j - 1] = t;
		}
	c->early_ns = s[n / 2] < c->max_early_ns ? s[n / 2] : c->max_early_ns;
}

static void apply(struct pfc_ctl *c, struct pfc_ctl_item it)
{
	struct pfc_ctl_port *p = &c->ports[it.up];
	int pause = it.kind == 1;
	struct pfc_ctl_rec *r;
	uint64_t start, done;
	int err;

	if (pause == p->is_paused)
		return;	/* the other crossing was lost: nothing to change */
	start = mono_ns();
	if (pause)
		err = netlink_change(p->nl_fd, p->pause_msg, p->pause_len);
	else
		err = netlink_change(p->nl_fd, p->resume_msg, p->resume_len);
	if (!err && !pause &&
	    sendto(p->kick_fd, p->kick_frame, PFC_CTL_KICK_LEN, 0,
		   (const struct sockaddr *)&p->kick_sa, sizeof(p->kick_sa)) < 0)
		err = -errno;
	done = mono_ns();
	if (err && !c->err)
		c->err = err;
	if (!err) {
		note_duration(c, done - start);
		p->is_paused = pause;
		p->hop = pause ? it.hop : 0;
		if (p->paused) {
			/* As intswitch.SetPaused: paused first when pausing, the
			 * last Xon first when resuming, so that TCD never sees a
			 * resumed port with an old Xon. */
			if (pause) {
				__atomic_store_n(p->paused, 1, __ATOMIC_RELEASE);
			} else {
				__atomic_store_n(p->last_xon, done, __ATOMIC_RELEASE);
				__atomic_store_n(p->paused, 0, __ATOMIC_RELEASE);
			}
		}
	}
	if (c->log_n == c->log_cap) {
		c->log_dropped++;
		return;
	}
	r = &c->log[c->log_n++];
	r->crossing = it.crossing;
	r->due = it.due;
	r->start = start;
	r->done = done;
	r->up = it.up;
	r->kind = it.kind;
	r->hop = it.hop;
	r->err = err;
}

static void place(struct pfc_ctl *c)
{
	struct sched_param sp = { .sched_priority = c->prio };

	prctl(PR_SET_TIMERSLACK, 1UL);
	if (c->cpu >= 0) {
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET(c->cpu, &set);
		sched_setaffinity(0, sizeof(set), &set); /* else: where it is */
	}
	c->realtime = sched_setscheduler(0, SCHED_FIFO, &sp) == 0;
}

static void sleep_until(struct pfc_ctl *c, uint64_t wake)
{
	struct pollfd fd = { .fd = c->stop_fd, .events = POLLIN };
	uint64_t now = mono_ns();
	struct timespec ts;

	if (wake <= now)
		return;
	ts.tv_sec = (time_t)((wake - now) / 1000000000ULL);
	ts.tv_nsec = (long)((wake - now) % 1000000000ULL);
	ppoll(&fd, 1, &ts, NULL);
}

void pfc_ctl_run(struct pfc_ctl *c)
{
	place(c);
	while (__atomic_load_n(&c->running, __ATOMIC_ACQUIRE)) {
		uint64_t now, issue, wake;

		drain(c);
		now = mono_ns();
		if (c->heap_n > 0) {
			issue = c->heap[0].due > c->early_ns ? c->heap[0].due - c->early_ns : 0;
			if (now >= issue) {
				apply(c, heap_pop(c));
				continue;
			}
			if (issue - now <= c->spin_ns) {
				while (mono_ns() < issue)
					;
				continue;
			}
			wake = now + c->poll_ns;
			if (issue - c->spin_ns < wake)
				wake = issue - c->spin_ns;
		} else {
			wake = now + c->poll_ns;
		}
		sleep_until(c, wake);
	}
}

void pfc_ctl_stop(struct pfc_ctl *c)
{
	uint64_t one = 1;

	__atomic_store_n(&c->running, 0, __ATOMIC_RELEASE);
	if (write(c->stop_fd, &one, sizeof(one)) < 0) {
		/* The counter is set already: the thread wakes anyway. */
	}
}
