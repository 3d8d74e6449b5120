// SPDX-License-Identifier: GPL-2.0
/*
 * The delay line's thread (line.h). One loop serves every port:
 *
 *   1. read what the sinks received (non-blocking), each packet into the
 *      FIFO of its (port, class) with due = kernel timestamp + delay;
 *   2. send every packet that is due, oldest due first;
 *   3. sleep until margin before the next due time (or until a sink has a
 *      packet), then spin the rest of the way.
 *
 * A FIFO is a byte ring of records (struct rec + the virtio-net header and
 * frame), so a class holds exactly the bytes in flight. Sends never block:
 * a send the port's queue refuses is a queue drop, as on a real link.
 * Between two iterations (and during a spin) the thread takes an update
 * of its classes if one is pending (update.c).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>

#include "line_priv.h"

#define WRAP_MARK	0xffffffffu
/* Adaptive margin: a stochastic p95 of how late a timed wakeup comes. */
#define MARGIN_MIN_NS	10000ull
#define MARGIN_MAX_NS	300000ull
#define MARGIN_STEP_NS	500ull
/* Bounds of the sleep between two reads of the sinks (line_poll_ns). */
#define POLL_MIN_NS	20000ull
#define POLL_MAX_NS	1000000ull

static uint64_t thread_cpu_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return (uint64_t)t.tv_sec * NSEC + (uint64_t)t.tv_nsec;
}

static void hist_add(uint64_t *h, uint64_t ns)
{
	uint64_t us = ns / 1000;

	ST_ADD(h[us < DL_HIST_BUCKETS - 1 ? us : DL_HIST_BUCKETS - 1], 1);
}

static uint64_t rec_size(uint32_t len)
{
	return (sizeof(struct rec) + len + REC_ALIGN - 1) & ~(uint64_t)(REC_ALIGN - 1);
}

/* fifo_reserve returns where a record of len bytes goes, or NULL when the
 * FIFO cannot hold it. */
static struct rec *fifo_reserve(struct fifo *f, uint32_t len)
{
	uint64_t need = rec_size(len);

	if (f->tail >= f->head || f->count == 0) {
		if (f->count == 0)
			f->head = f->tail = f->used = 0;
		if (f->cap - f->tail >= need)
			return (struct rec *)(f->buf + f->tail);
		/* Wrap: the space at the start must hold it, before head. */
		if (f->head <= need)
			return NULL;
		if (f->cap - f->tail >= sizeof(struct rec))
			((struct rec *)(f->buf + f->tail))->len = WRAP_MARK;
		f->used += f->cap - f->tail;
		f->tail = 0;
		return (struct rec *)f->buf;
	}
	if (f->head - f->tail > need)
		return (struct rec *)(f->buf + f->tail);
	return NULL;
}

static void fifo_commit(struct fifo *f, struct rec *r)
{
	uint64_t sz = rec_size(r->len);

	f->tail += sz;
	f->used += sz;
	f->count++;
	f->pushed++;
	if (r->due > f->max_due)
		f->max_due = r->due;
}

static struct rec *fifo_head(struct fifo *f)
{
	struct rec *r;

	if (f->count == 0)
		return NULL;
	if (f->cap - f->head < sizeof(struct rec)) {
		f->used -= f->cap - f->head;
		f->head = 0;
	}
	r = (struct rec *)(f->buf + f->head);
	if (r->len == WRAP_MARK) {
		f->used -= f->cap - f->head;
		f->head = 0;
		r = (struct rec *)f->buf;
	}
	return r;
}

static void fifo_pop(struct fifo *f, struct rec *r)
{
	uint64_t sz = rec_size(r->len);

	f->head += sz;
	f->used -= sz;
	f->count--;
	f->popped++;
}

/* rec_tag and rec_stats: a record counts for the class that took it, or
 * for the port's earlier classes once an update replaced them. */
static uint32_t rec_tag(const struct port *p, int cls)
{
	return (p->gen & 0xffffff) << 8 | (uint32_t)cls;
}

static struct dl_class_stats *rec_stats(struct dl_line *l, uint32_t pi, const struct rec *r)
{
	if (r->tag >> 8 == (l->ports[pi].gen & 0xffffff))
		return &l->st.cls[pi][r->tag & 0xff];
	return &l->st.earlier[pi];
}

/* send_frame sends a frame back into its port; cs counts it (NULL: a
 * frame of no class). */
static void send_frame(struct port *p, struct dl_class_stats *cs, const void *buf, uint32_t len)
{
	if (send(p->tx_fd, buf, len, MSG_DONTWAIT) >= 0) {
		if (cs)
			ST_ADD(cs->sent, 1);
		return;
	}
	if (!cs)
		return;
	if (errno == ENOBUFS)
		ST_ADD(cs->qdisc_drops, 1);
	else
		ST_ADD(cs->tx_errors, 1);
}

/* frame_src returns the IPv4 source of a frame (after its vnet header),
 * or 0 when it is not a whole IPv4 header. */
static uint32_t frame_src(const uint8_t *b, uint32_t len)
{
	uint32_t a;

	if (len < VNET_HLEN + ETH_HLEN + 20)
		return 0;
	b += VNET_HLEN;
	if (b[12] != 0x08 || b[13] != 0x00 || (b[ETH_HLEN] >> 4) != 4)
		return 0;
	memcpy(&a, b + ETH_HLEN + 12, 4);
	return a;
}

/* frame_stamp returns the kernel's receive stamp of a message, 0 if none. */
static uint64_t frame_stamp(struct msghdr *m)
{
	for (struct cmsghdr *c = CMSG_FIRSTHDR(m); c; c = CMSG_NXTHDR(m, c)) {
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SO_TIMESTAMPNS) {
			struct timespec ts;

			memcpy(&ts, CMSG_DATA(c), sizeof(ts));
			return (uint64_t)ts.tv_sec * NSEC + (uint64_t)ts.tv_nsec;
		}
	}
	return 0;
}

/*
 * hold_in picks the FIFO a packet of source s goes into and its due, given
 * want = stamp + its class's delay. Its class's FIFO, unless s's previous
 * packet still waits in a carry that took a due at or after want: then it
 * follows that packet there, due no earlier than it + 1 ns and than
 * anything ahead of it. Otherwise want is later than everything the
 * carry holds, which therefore leaves first (release takes the earliest
 * due head).
 */
static struct fifo *hold_in(struct port *p, int cls, const struct src_state *s,
			    uint64_t want, uint64_t *due)
{
	struct fifo *f = s->f;

	*due = want;
	if (!f || f == p->fifo[cls] || f->popped >= s->seq || want > f->max_due)
		return p->fifo[cls];
	*due = s->last_due + 1 > f->max_due ? s->last_due + 1 : f->max_due;
	return f;
}

/* read_port takes every packet a port's sink holds. */
static void read_port(struct dl_line *l, struct port *p)
{
	uint8_t peek[VNET_HLEN + ETH_HLEN + 20];
	char cbuf[CMSG_SPACE(sizeof(struct timespec))];
	uint32_t pi = p - l->ports;

	for (;;) {
		struct sockaddr_ll from;
		struct iovec iov = { peek, sizeof(peek) };
		struct msghdr m = {
			.msg_name = &from, .msg_namelen = sizeof(from),
			.msg_iov = &iov, .msg_iovlen = 1,
			.msg_control = cbuf, .msg_controllen = sizeof(cbuf),
		};
		ssize_t n = recvmsg(p->rx_fd, &m, MSG_DONTWAIT | MSG_PEEK | MSG_TRUNC);
		struct dl_class_stats *cs;
		struct src_state *s;
		struct fifo *cf, *f;
		uint64_t now, stamp, want, due;
		uint32_t len, src;
		int slot, cls;
		struct rec *r;

		if (n < 0)
			return;
		if (from.sll_pkttype != PACKET_OUTGOING || (size_t)n > FRAME_MAX + VNET_HLEN) {
			/* Only what the port sent into the sink is ours. */
			recv(p->rx_fd, peek, sizeof(peek), MSG_DONTWAIT);
			if (from.sll_pkttype == PACKET_OUTGOING)
				ST_ADD(l->st.bad_frames, 1);
			continue;
		}
		len = (uint32_t)n;
		src = frame_src(peek, (size_t)n < sizeof(peek) ? len : sizeof(peek));
		slot = src ? src_slot(p, src) : -1;
		if (slot < 0) {
			/* Not ours to delay (the tc program passes those): hand
			 * it on at once. */
			ssize_t k = recv(p->rx_fd, l->scratch, FRAME_MAX + VNET_HLEN, MSG_DONTWAIT);

			if (k > 0)
				send_frame(p, NULL, l->scratch, (uint32_t)k);
			if (src)
				ST_ADD(l->st.unknown_src, 1);
			else
				ST_ADD(l->st.bad_frames, 1);
			continue;
		}
		/* The stamp comes with the peek: it decides the FIFO. */
		now = now_real();
		stamp = frame_stamp(&m);
		if (stamp == 0 || stamp > now) {
			ST_ADD(l->st.no_stamp, 1);
			stamp = now;
		}
		cls = p->hash_class[slot];
		cs = &l->st.cls[pi][cls];
		s = &p->hash_state[slot];
		cf = p->fifo[cls];
		want = stamp + cf->delay;
		f = hold_in(p, cls, s, want, &due);
		r = fifo_reserve(f, len);
		if (!r) {
			recv(p->rx_fd, peek, sizeof(peek), MSG_DONTWAIT);
			ST_ADD(cs->buf_drops, 1);
			continue;
		}
		iov.iov_base = (uint8_t *)(r + 1);
		iov.iov_len = len;
		m.msg_name = NULL;
		m.msg_namelen = 0;
		m.msg_control = NULL;
		m.msg_controllen = 0;
		n = recvmsg(p->rx_fd, &m, MSG_DONTWAIT);
		if (n <= 0)
			return;
		if (stamp < cf->last_stamp)
			ST_ADD(cs->inversions, 1);
		cf->last_stamp = stamp;
		hist_add(l->st.hist_lag, now - stamp);
		if (now - stamp > l->st.max_lag_ns)
			ST_SET(l->st.max_lag_ns, now - stamp);
		r->len = (uint32_t)n;
		r->tag = rec_tag(p, cls);
		r->due = due;
		fifo_commit(f, r);
		s->last_due = due;
		s->f = f;
		s->seq = f->pushed;
		ST_ADD(cs->pkts, 1);
		ST_ADD(cs->bytes, (uint64_t)n - VNET_HLEN);
		if (due > want)
			ST_ADD(cs->held_for_order, 1);
		if (f->used > cs->max_bytes)
			ST_SET(cs->max_bytes, f->used);
	}
}

/* release sends every due packet, oldest due first, and returns the next
 * due time (UINT64_MAX: nothing held). */
static uint64_t release(struct dl_line *l)
{
	for (;;) {
		struct fifo *best = NULL;
		struct rec *br = NULL;
		uint32_t bi = 0;
		uint64_t now;

		for (uint32_t i = 0; i < l->nports; i++) {
			const struct port *p = &l->ports[i];

			for (uint32_t k = 0; k < port_fifos(p); k++) {
				struct fifo *f = port_fifo(p, k);
				struct rec *r = fifo_head(f);

				if (r && (!br || r->due < br->due)) {
					best = f;
					br = r;
					bi = i;
				}
			}
		}
		if (!br)
			return UINT64_MAX;
		now = now_real();
		if (br->due > now)
			return br->due;
		hist_add(l->st.hist_late, now - br->due);
		if (now - br->due > l->st.max_late_ns)
			ST_SET(l->st.max_late_ns, now - br->due);
		send_frame(&l->ports[bi], rec_stats(l, bi, br), br + 1, br->len);
		fifo_pop(best, br);
	}
}

/*
 * read_ready sleeps on the control fds (stop, update) for at most the
 * timeout, then reads every sink that holds packets. The sinks' sockets are
 * never slept on: a packet's arrival does not wake the thread, which would
 * cost the packet CPU a cross-CPU wakeup per packet (docs/performance.md,
 * "Where the packet CPU goes"). Each packet carries its kernel stamp, so
 * reading it up to poll_ns later changes nothing of its due time.
 */
static void read_ready(struct dl_line *l, int timeout_ms, const struct timespec *ts)
{
	struct epoll_event ev[64];
	uint64_t v;
	int n;

	if (ts)
		n = (int)syscall(SYS_epoll_pwait2, l->epfd, ev, 64, ts, NULL, 0);
	else
		n = epoll_wait(l->epfd, ev, 64, timeout_ms);
	for (int i = 0; i < n; i++) {
		if (ev[i].data.u32 == TAG_UPDATE) {
			/* It woke us; the loop applies what is pending. */
			if (read(l->updfd, &v, sizeof(v)) < 0) {
				/* Already read: nothing to do. */
			}
		}
	}
	n = epoll_wait(l->datafd, ev, 64, 0);
	for (int i = 0; i < n; i++)
		read_port(l, &l->ports[ev[i].data.u32]);
}

/*
 * line_poll_ns is how long the thread may sleep without reading the sinks:
 * a quarter of the shortest delay it holds (a packet read that much after
 * its arrival is still far from due), within [POLL_MIN_NS, POLL_MAX_NS].
 */
static uint64_t line_poll_ns(const struct dl_line *l)
{
	uint64_t d = POLL_MAX_NS * 4;

	for (uint32_t i = 0; i < l->nports; i++) {
		const struct port *p = &l->ports[i];

		for (uint32_t k = 0; k < p->nclasses; k++)
			if (p->fifo[k] && p->fifo[k]->delay < d)
				d = p->fifo[k]->delay;
	}
	d /= 4;
	return d < POLL_MIN_NS ? POLL_MIN_NS : d > POLL_MAX_NS ? POLL_MAX_NS : d;
}

/* sleep_for is a timespec of ns. */
static struct timespec sleep_for(uint64_t ns)
{
	struct timespec to = { .tv_sec = (time_t)(ns / NSEC), .tv_nsec = (long)(ns % NSEC) };

	return to;
}

static int stopping(struct dl_line *l)
{
	return __atomic_load_n(&l->running, __ATOMIC_ACQUIRE) == 0;
}

static void *loop(void *arg)
{
	struct dl_line *l = arg;
	uint64_t cpu0 = thread_cpu_ns();

	prctl(PR_SET_TIMERSLACK, 1UL);
	if (l->rt_prio > 0) {
		struct sched_param sp = { .sched_priority = l->rt_prio };

		if (pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp) != 0)
			l->rt_prio = 0;
	}
	l->st.rt_prio = l->rt_prio;
	while (!stopping(l)) {
		uint64_t next, now, spin, tol;

		dl_apply_pending(l);
		if (l->poll_gen != l->st.updates || !l->poll_ns) {
			l->poll_ns = line_poll_ns(l);
			l->poll_gen = l->st.updates;
		}
		read_ready(l, 0, NULL);
		next = release(l);
		now = now_real();
		ST_SET(l->st.cpu_ns, thread_cpu_ns() - cpu0);
		ST_SET(l->st.running_ns, now - l->start_ns);
		if (next == UINT64_MAX) {
			struct timespec to = sleep_for(l->poll_ns);

			read_ready(l, 0, &to);
			ST_ADD(l->st.wakeups, 1);
			continue;
		}
		tol = __atomic_load_n(&l->tolerance, __ATOMIC_RELAXED);
		spin = l->margin > tol ? l->margin - tol : 0;
		if (next > now + spin) {
			uint64_t want = next - spin, woke;
			/* Wake for the release, or sooner to read the sinks. */
			int timed = want - now <= l->poll_ns;
			struct timespec to = sleep_for(timed ? want - now : l->poll_ns);

			read_ready(l, 0, &to);
			woke = now_real();
			ST_ADD(l->st.wakeups, 1);
			if (timed && woke >= want) {
				/* A timed wakeup: adapt the margin to a p95 of
				 * its lateness (up 19 steps when late beyond it,
				 * down one otherwise). */
				ST_ADD(l->st.timer_wakeups, 1);
				if (woke - want > l->margin)
					l->margin += 19 * MARGIN_STEP_NS;
				else
					l->margin -= MARGIN_STEP_NS;
				if (l->margin < MARGIN_MIN_NS)
					l->margin = MARGIN_MIN_NS;
				if (l->margin > MARGIN_MAX_NS)
					l->margin = MARGIN_MAX_NS;
				ST_SET(l->st.margin_ns, l->margin);
			}
			continue;
		}
		/* Spin on the clock alone (no system calls): packets arriving
		 * meanwhile wait in their sockets with their kernel stamps,
		 * and are read right after this release. An update cuts the
		 * spin short: it is applied right after. */
		{
			uint64_t t0 = now;

			while (now < next && !stopping(l) && !update_pending(l))
				now = now_real();
			ST_ADD(l->st.spin_ns, now - t0);
		}
		release(l);
	}
	ST_SET(l->st.cpu_ns, thread_cpu_ns() - cpu0);
	ST_SET(l->st.running_ns, now_real() - l->start_ns);
	return NULL;
}

/* watch adds an fd to one of the thread's epoll sets under a tag. */
static int watch(int epfd, int fd, uint32_t tag)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.u32 = tag };

	return epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev);
}

static void close_fds(struct dl_line *l)
{
	int *fds[] = { &l->epfd, &l->datafd, &l->stopfd, &l->updfd, &l->ackfd };

	for (size_t i = 0; i < sizeof(fds) / sizeof(fds[0]); i++) {
		if (*fds[i] >= 0)
			close(*fds[i]);
		*fds[i] = -1;
	}
}

int dl_start(const struct dl_cfg *cfg, struct dl_line **out, char *err, int errlen)
{
	struct dl_line *l;
	int ret;

	if (cfg->nports == 0 || cfg->nports > DL_MAX_PORTS)
		return fail(err, errlen, EINVAL, "%s: 1 to 1024 ports", "delay line");
	l = calloc(1, sizeof(*l));
	if (!l)
		return fail(err, errlen, ENOMEM, "%s: out of memory", "delay line");
	l->epfd = l->datafd = l->stopfd = l->updfd = l->ackfd = -1;
	pthread_mutex_init(&l->ctl, NULL);
	l->nports = cfg->nports;
	l->scratch = malloc(FRAME_MAX + VNET_HLEN);
	if (!l->scratch) {
		ret = fail(err, errlen, ENOMEM, "%s: out of memory", "delay line");
		goto out;
	}
	ret = dl_build_ports(cfg->ports, cfg->nports, NULL, NULL, &l->ports, err, errlen);
	if (ret)
		goto out;
	for (uint32_t i = 0; i < cfg->nports; i++)
		dl_publish_classes(l, i, &l->ports[i]);
	l->st.nports = cfg->nports;
	l->epfd = epoll_create1(EPOLL_CLOEXEC);
	l->datafd = epoll_create1(EPOLL_CLOEXEC);
	l->stopfd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	l->updfd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	l->ackfd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (l->epfd < 0 || l->datafd < 0 || l->stopfd < 0 || l->updfd < 0 || l->ackfd < 0 ||
	    watch(l->epfd, l->stopfd, TAG_STOP) < 0 || watch(l->epfd, l->updfd, TAG_UPDATE) < 0) {
		ret = fail(err, errlen, errno, "%s: epoll/eventfd failed", "delay line");
		goto out;
	}
	for (uint32_t i = 0; i < cfg->nports; i++) {
		if (watch(l->datafd, l->ports[i].rx_fd, i) < 0) {
			ret = fail(err, errlen, errno, "%s: epoll_ctl on a sink socket failed", "delay line");
			goto out;
		}
	}
	l->cpu = cfg->cpu;
	l->rt_prio = cfg->rt_prio;
	l->margin = cfg->margin_ns ? cfg->margin_ns : 60000;
	l->tolerance = cfg->tolerance_ns;
	l->st.cpu = cfg->cpu;
	l->st.margin_ns = l->margin;
	l->start_ns = now_real();
	l->running = 1;
	{
		pthread_attr_t a;

		pthread_attr_init(&a);
		if (cfg->cpu >= 0) {
			cpu_set_t set;

			CPU_ZERO(&set);
			CPU_SET(cfg->cpu, &set);
			pthread_attr_setaffinity_np(&a, sizeof(set), &set);
		}
		ret = pthread_create(&l->thread, &a, loop, l);
		pthread_attr_destroy(&a);
		if (ret) {
			l->running = 0;
			ret = fail(err, errlen, ret, "%s: cannot start its thread", "delay line");
			goto out;
		}
	}
	*out = l;
	return 0;
out:
	close_fds(l);
	dl_free_ports(l->ports, l->nports, 1);
	pthread_mutex_destroy(&l->ctl);
	free(l->scratch);
	free(l);
	return ret;
}

void dl_stats(struct dl_line *l, struct dl_stats *out)
{
	/* Field by field with relaxed loads would be exact; a plain copy of
	 * counters the thread only increments is close enough while it runs,
	 * and exact after dl_stop. */
	memcpy(out, &l->st, sizeof(*out));
}

void dl_stop(struct dl_line *l)
{
	uint64_t one = 1;

	pthread_mutex_lock(&l->ctl);
	if (__atomic_exchange_n(&l->running, 0, __ATOMIC_ACQ_REL)) {
		if (write(l->stopfd, &one, sizeof(one)) < 0) {
			/* The eventfd cannot be full; the loop polls every
			 * 100 ms anyway. */
		}
		pthread_join(l->thread, NULL);
	}
	dl_free_ports(l->ports, l->nports, 1);
	l->ports = NULL;
	close_fds(l);
	pthread_mutex_unlock(&l->ctl);
}

void dl_free(struct dl_line *l)
{
	dl_stop(l);
	pthread_mutex_destroy(&l->ctl);
	free(l->scratch);
	free(l);
}
