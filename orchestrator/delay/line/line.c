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
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <linux/virtio_net.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>

#include "line.h"

#define NSEC		1000000000ull
#define VNET_HLEN	((uint32_t)sizeof(struct virtio_net_hdr))
/* The largest frame a sink can hand us: a 64 KB GSO packet and its
 * Ethernet header (gso_max_size is 64 KB on the run's interfaces). */
#define FRAME_MAX	(65536 + 256)
#define REC_ALIGN	8
#define WRAP_MARK	0xffffffffu
/* Adaptive margin: a stochastic p95 of how late a timed wakeup comes. */
#define MARGIN_MIN_NS	10000ull
#define MARGIN_MAX_NS	300000ull
#define MARGIN_STEP_NS	500ull

struct rec {
	uint32_t len;		/* vnet header + frame; WRAP_MARK: skip to 0 */
	uint32_t pad;
	uint64_t due;
};

struct fifo {
	uint8_t *buf;
	uint64_t cap;
	uint64_t head;		/* offset of the oldest record */
	uint64_t tail;		/* offset where the next record goes */
	uint64_t used;		/* bytes between head and tail, marks included */
	uint64_t count;
	uint64_t delay;
	uint64_t last_stamp;
};

struct port {
	int rx_fd, tx_fd;
	uint32_t nclasses;
	struct fifo fifo[DL_MAX_CLASSES];
	uint32_t hash_mask;	/* source table: open addressing */
	uint32_t *hash_addr;
	uint8_t *hash_class;	/* 0xff: empty */
};

struct dl_line {
	uint32_t nports;
	struct port *ports;
	int epfd, stopfd;
	int cpu, rt_prio;
	uint64_t margin;	/* a p95 of how late a timed wakeup comes */
	uint64_t tolerance;
	pthread_t thread;
	int running;
	uint64_t start_ns;
	uint8_t *scratch;	/* frames of no class, sent at once */
	struct dl_stats st;
};

static uint64_t now_real(void)
{
	struct timespec t;

	clock_gettime(CLOCK_REALTIME, &t);
	return (uint64_t)t.tv_sec * NSEC + (uint64_t)t.tv_nsec;
}

static uint64_t thread_cpu_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return (uint64_t)t.tv_sec * NSEC + (uint64_t)t.tv_nsec;
}

/* Statistics are written by the line's thread only; dl_stats may read them
 * from another thread while it runs, hence relaxed atomics. */
#define ST_ADD(f, v)	__atomic_add_fetch(&(f), (v), __ATOMIC_RELAXED)
#define ST_SET(f, v)	__atomic_store_n(&(f), (v), __ATOMIC_RELAXED)

static void hist_add(uint64_t *h, uint64_t ns)
{
	uint64_t us = ns / 1000;

	ST_ADD(h[us < DL_HIST_BUCKETS - 1 ? us : DL_HIST_BUCKETS - 1], 1);
}

static uint32_t hash32(uint32_t x)
{
	x ^= x >> 16;
	x *= 0x7feb352d;
	x ^= x >> 15;
	x *= 0x846ca68b;
	x ^= x >> 16;
	return x;
}

static int class_of(const struct port *p, uint32_t addr)
{
	uint32_t i = hash32(addr) & p->hash_mask;

	for (;;) {
		if (p->hash_class[i] == 0xff)
			return -1;
		if (p->hash_addr[i] == addr)
			return p->hash_class[i];
		i = (i + 1) & p->hash_mask;
	}
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
}

static void send_frame(struct dl_line *l, struct port *p, int cls, const void *buf, uint32_t len)
{
	struct dl_class_stats *cs = cls >= 0 ? &l->st.cls[p - l->ports][cls] : NULL;

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
		};
		ssize_t n = recvmsg(p->rx_fd, &m, MSG_DONTWAIT | MSG_PEEK | MSG_TRUNC);
		uint32_t len, src;
		int cls;
		struct rec *r;
		struct fifo *f;
		uint64_t now, stamp = 0;

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
		cls = src ? class_of(p, src) : -1;
		if (cls < 0) {
			/* Not ours to delay (the tc program passes those): hand
			 * it on at once. */
			ssize_t k = recv(p->rx_fd, l->scratch, FRAME_MAX + VNET_HLEN, MSG_DONTWAIT);

			if (k > 0)
				send_frame(l, p, -1, l->scratch, (uint32_t)k);
			if (src)
				ST_ADD(l->st.unknown_src, 1);
			else
				ST_ADD(l->st.bad_frames, 1);
			continue;
		}
		f = &p->fifo[cls];
		r = fifo_reserve(f, len);
		if (!r) {
			recv(p->rx_fd, peek, sizeof(peek), MSG_DONTWAIT);
			ST_ADD(l->st.cls[pi][cls].buf_drops, 1);
			continue;
		}
		iov.iov_base = (uint8_t *)(r + 1);
		iov.iov_len = len;
		m.msg_control = cbuf;
		m.msg_controllen = sizeof(cbuf);
		m.msg_name = NULL;
		m.msg_namelen = 0;
		n = recvmsg(p->rx_fd, &m, MSG_DONTWAIT);
		if (n <= 0)
			return;
		now = now_real();
		for (struct cmsghdr *c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c)) {
			if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SO_TIMESTAMPNS) {
				struct timespec ts;

				memcpy(&ts, CMSG_DATA(c), sizeof(ts));
				stamp = (uint64_t)ts.tv_sec * NSEC + (uint64_t)ts.tv_nsec;
			}
		}
		if (stamp == 0 || stamp > now) {
			ST_ADD(l->st.no_stamp, 1);
			stamp = now;
		}
		if (stamp < f->last_stamp)
			ST_ADD(l->st.cls[pi][cls].inversions, 1);
		f->last_stamp = stamp;
		hist_add(l->st.hist_lag, now - stamp);
		if (now - stamp > l->st.max_lag_ns)
			ST_SET(l->st.max_lag_ns, now - stamp);
		r->len = (uint32_t)n;
		r->due = stamp + f->delay;
		fifo_commit(f, r);
		ST_ADD(l->st.cls[pi][cls].pkts, 1);
		ST_ADD(l->st.cls[pi][cls].bytes, (uint64_t)n - VNET_HLEN);
		if (f->used > l->st.cls[pi][cls].max_bytes)
			ST_SET(l->st.cls[pi][cls].max_bytes, f->used);
	}
}

/* release sends every due packet, oldest due first, and returns the next
 * due time (UINT64_MAX: nothing held). */
static uint64_t release(struct dl_line *l)
{
	for (;;) {
		struct fifo *best = NULL;
		struct port *bp = NULL;
		struct rec *br = NULL;
		uint64_t now;
		int bc = 0;

		for (uint32_t i = 0; i < l->nports; i++) {
			struct port *p = &l->ports[i];

			for (uint32_t c = 0; c < p->nclasses; c++) {
				struct rec *r = fifo_head(&p->fifo[c]);

				if (r && (!br || r->due < br->due)) {
					best = &p->fifo[c];
					br = r;
					bp = p;
					bc = (int)c;
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
		send_frame(l, bp, bc, br + 1, br->len);
		fifo_pop(best, br);
	}
}

static void read_ready(struct dl_line *l, int timeout_ms, const struct timespec *ts)
{
	struct epoll_event ev[64];
	int n;

	if (ts)
		n = (int)syscall(SYS_epoll_pwait2, l->epfd, ev, 64, ts, NULL, 0);
	else
		n = epoll_wait(l->epfd, ev, 64, timeout_ms);
	for (int i = 0; i < n; i++) {
		if (ev[i].data.u32 == UINT32_MAX)
			continue;
		read_port(l, &l->ports[ev[i].data.u32]);
	}
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
		uint64_t next, now, spin;

		read_ready(l, 0, NULL);
		next = release(l);
		now = now_real();
		ST_SET(l->st.cpu_ns, thread_cpu_ns() - cpu0);
		ST_SET(l->st.running_ns, now - l->start_ns);
		if (next == UINT64_MAX) {
			read_ready(l, 100, NULL);
			ST_ADD(l->st.wakeups, 1);
			continue;
		}
		spin = l->margin > l->tolerance ? l->margin - l->tolerance : 0;
		if (next > now + spin) {
			uint64_t want = next - spin, woke;
			struct timespec to = {
				.tv_sec = (time_t)((want - now) / NSEC),
				.tv_nsec = (long)((want - now) % NSEC),
			};

			read_ready(l, 0, &to);
			woke = now_real();
			ST_ADD(l->st.wakeups, 1);
			if (woke >= want) {
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
		 * and are read right after this release. */
		{
			uint64_t t0 = now;

			while (now < next && !stopping(l))
				now = now_real();
			ST_ADD(l->st.spin_ns, now - t0);
		}
		release(l);
	}
	ST_SET(l->st.cpu_ns, thread_cpu_ns() - cpu0);
	ST_SET(l->st.running_ns, now_real() - l->start_ns);
	return NULL;
}

static int fail(char *err, int errlen, int e, const char *fmt, const char *what)
{
	snprintf(err, (size_t)errlen, fmt, what);
	return -e;
}

static int build_port(struct port *p, const struct dl_port_cfg *c, char *err, int errlen)
{
	uint32_t size = 16;

	p->rx_fd = c->rx_fd;
	p->tx_fd = c->tx_fd;
	p->nclasses = c->nclasses;
	if (c->nclasses == 0 || c->nclasses > DL_MAX_CLASSES)
		return fail(err, errlen, EINVAL, "%s: 1 to 16 delay classes per port", "delay line");
	for (uint32_t k = 0; k < c->nclasses; k++) {
		struct fifo *f = &p->fifo[k];

		if (c->buf_bytes[k] < 2 * (FRAME_MAX + VNET_HLEN + sizeof(struct rec)))
			return fail(err, errlen, EINVAL, "%s: a class buffer must hold two 64 KB packets", "delay line");
		f->cap = c->buf_bytes[k] & ~(uint64_t)(REC_ALIGN - 1);
		f->delay = c->delay_ns[k];
		f->buf = malloc(f->cap);
		if (!f->buf)
			return fail(err, errlen, ENOMEM, "%s: out of memory for a class buffer", "delay line");
	}
	while (size < 2 * c->nsrcs)
		size <<= 1;
	p->hash_mask = size - 1;
	p->hash_addr = calloc(size, sizeof(uint32_t));
	p->hash_class = malloc(size);
	if (!p->hash_addr || !p->hash_class)
		return fail(err, errlen, ENOMEM, "%s: out of memory for the source table", "delay line");
	memset(p->hash_class, 0xff, size);
	for (uint32_t k = 0; k < c->nsrcs; k++) {
		uint32_t a = c->srcs[k].addr, i = hash32(a) & p->hash_mask;

		if (c->srcs[k].class_idx >= c->nclasses)
			return fail(err, errlen, EINVAL, "%s: a source names a class the port lacks", "delay line");
		while (p->hash_class[i] != 0xff && p->hash_addr[i] != a)
			i = (i + 1) & p->hash_mask;
		p->hash_addr[i] = a;
		p->hash_class[i] = (uint8_t)c->srcs[k].class_idx;
	}
	return 0;
}

static void free_ports(struct dl_line *l)
{
	if (!l->ports)
		return;
	for (uint32_t i = 0; i < l->nports; i++) {
		for (uint32_t k = 0; k < DL_MAX_CLASSES; k++)
			free(l->ports[i].fifo[k].buf);
		free(l->ports[i].hash_addr);
		free(l->ports[i].hash_class);
	}
	free(l->ports);
	l->ports = NULL;
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
	l->epfd = l->stopfd = -1;
	l->nports = cfg->nports;
	l->ports = calloc(cfg->nports, sizeof(struct port));
	l->scratch = malloc(FRAME_MAX + VNET_HLEN);
	if (!l->ports || !l->scratch) {
		ret = fail(err, errlen, ENOMEM, "%s: out of memory", "delay line");
		goto out;
	}
	for (uint32_t i = 0; i < cfg->nports; i++) {
		ret = build_port(&l->ports[i], &cfg->ports[i], err, errlen);
		if (ret)
			goto out;
		l->st.nclasses[i] = cfg->ports[i].nclasses;
	}
	l->st.nports = cfg->nports;
	l->epfd = epoll_create1(EPOLL_CLOEXEC);
	l->stopfd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (l->epfd < 0 || l->stopfd < 0) {
		ret = fail(err, errlen, errno, "%s: epoll/eventfd failed", "delay line");
		goto out;
	}
	{
		struct epoll_event ev = { .events = EPOLLIN, .data.u32 = UINT32_MAX };

		epoll_ctl(l->epfd, EPOLL_CTL_ADD, l->stopfd, &ev);
	}
	for (uint32_t i = 0; i < cfg->nports; i++) {
		struct epoll_event ev = { .events = EPOLLIN, .data.u32 = i };

		if (epoll_ctl(l->epfd, EPOLL_CTL_ADD, l->ports[i].rx_fd, &ev) < 0) {
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
	if (l->epfd >= 0)
		close(l->epfd);
	if (l->stopfd >= 0)
		close(l->stopfd);
	free_ports(l);
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

	if (__atomic_exchange_n(&l->running, 0, __ATOMIC_ACQ_REL)) {
		if (write(l->stopfd, &one, sizeof(one)) < 0) {
			/* The eventfd cannot be full; the loop polls every
			 * 100 ms anyway. */
		}
		pthread_join(l->thread, NULL);
	}
	free_ports(l);
	if (l->epfd >= 0)
		close(l->epfd);
	if (l->stopfd >= 0)
		close(l->stopfd);
	l->epfd = l->stopfd = -1;
}

void dl_free(struct dl_line *l)
{
	dl_stop(l);
	free(l->scratch);
	free(l);
}
