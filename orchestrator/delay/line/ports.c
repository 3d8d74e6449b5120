// SPDX-License-Identifier: GPL-2.0
/*
 * A generation of the line's tables (line_priv.h): per port, a FIFO per
 * class and the source table. Built in the caller's thread (dl_start,
 * dl_update), so that the line's thread never allocates.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "line_priv.h"

void dl_free_fifo(struct fifo *f)
{
	if (!f)
		return;
	free(f->buf);
	free(f);
}

static int build_port(struct port *p, const struct dl_port_cfg *c, uint32_t carry_room,
		      char *err, int errlen)
{
	uint32_t size = 16;

	p->rx_fd = c->rx_fd;
	p->tx_fd = c->tx_fd;
	if (c->nclasses == 0 || c->nclasses > DL_MAX_CLASSES)
		return fail(err, errlen, EINVAL, "%s: 1 to 16 delay classes per port", "delay line");
	for (uint32_t k = 0; k < c->nclasses; k++) {
		struct fifo *f;

		if (c->buf_bytes[k] < 2 * (FRAME_MAX + VNET_HLEN + sizeof(struct rec)))
			return fail(err, errlen, EINVAL, "%s: a class buffer must hold two 64 KB packets", "delay line");
		if ((int64_t)c->delay_ns[k] < 0)
			return fail(err, errlen, EINVAL, "%s: a class has a negative delay", "delay line");
		f = calloc(1, sizeof(*f));
		if (!f)
			return fail(err, errlen, ENOMEM, "%s: out of memory for a class", "delay line");
		p->fifo[p->nclasses++] = f;
		f->cap = c->buf_bytes[k] & ~(uint64_t)(REC_ALIGN - 1);
		f->delay = c->delay_ns[k];
		f->buf = malloc(f->cap);
		if (!f->buf)
			return fail(err, errlen, ENOMEM, "%s: out of memory for a class buffer", "delay line");
	}
	if (carry_room) {
		p->carry = calloc(carry_room, sizeof(*p->carry));
		if (!p->carry)
			return fail(err, errlen, ENOMEM, "%s: out of memory for the carries", "delay line");
	}
	while (size < 2 * c->nsrcs)
		size <<= 1;
	p->hash_mask = size - 1;
	p->hash_addr = calloc(size, sizeof(uint32_t));
	p->hash_class = malloc(size);
	p->hash_state = calloc(size, sizeof(struct src_state));
	if (!p->hash_addr || !p->hash_class || !p->hash_state)
		return fail(err, errlen, ENOMEM, "%s: out of memory for the source table", "delay line");
	memset(p->hash_class, NO_CLASS, size);
	for (uint32_t k = 0; k < c->nsrcs; k++) {
		uint32_t a = c->srcs[k].addr, i = hash32(a) & p->hash_mask;

		if (c->srcs[k].class_idx >= c->nclasses)
			return fail(err, errlen, EINVAL, "%s: a source names a class the port lacks", "delay line");
		while (p->hash_class[i] != NO_CLASS && p->hash_addr[i] != a)
			i = (i + 1) & p->hash_mask;
		p->hash_addr[i] = a;
		p->hash_class[i] = (uint8_t)c->srcs[k].class_idx;
	}
	return 0;
}

int dl_build_ports(const struct dl_port_cfg *cfg, uint32_t n, const uint32_t *carry_room,
		   const uint8_t *keep, struct port **out, char *err, int errlen)
{
	struct port *ports = calloc(n, sizeof(*ports));
	int ret;

	if (!ports)
		return fail(err, errlen, ENOMEM, "%s: out of memory", "delay line");
	for (uint32_t i = 0; i < n; i++) {
		if (keep && keep[i])
			continue;
		ret = build_port(&ports[i], &cfg[i], carry_room ? carry_room[i] : 0, err, errlen);
		if (ret) {
			dl_free_ports(ports, n, 1);
			return ret;
		}
	}
	*out = ports;
	return 0;
}

void dl_free_ports(struct port *ports, uint32_t n, int with_fifos)
{
	if (!ports)
		return;
	for (uint32_t i = 0; i < n; i++) {
		struct port *p = &ports[i];

		if (with_fifos) {
			for (uint32_t k = 0; k < port_fifos(p); k++)
				dl_free_fifo(port_fifo(p, k));
		}
		free(p->carry);
		free(p->hash_addr);
		free(p->hash_class);
		free(p->hash_state);
	}
	free(ports);
}
