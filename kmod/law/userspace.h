/* SPDX-License-Identifier: GPL-2.0 */
/*
 * User-space build of the law core (replay harness, tests, fuzzing): the
 * kernel type names, one entry point per operation dispatching on a law
 * number, and the parameter name table. Not for BPF or modules.
 */
#ifndef CCLAB_LAW_USERSPACE_H
#define CCLAB_LAW_USERSPACE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

typedef uint8_t __u8;
typedef uint16_t __u16;
typedef uint32_t __u32;
typedef uint64_t __u64;
typedef int32_t __s32;
typedef int64_t __s64;

#include "law.h"

/* One parameter and one state type per law, by the table's NAME. */
#define LAW_X_TYPEDEF(id, name, NAME, signal, traits)			\
	typedef struct name##_params law_params_##NAME;		\
	typedef struct name##_state law_state_##NAME;
LAW_TABLE(LAW_X_TYPEDEF)

#define LAW_X_UNION_P(id, name, NAME, signal, traits)	struct name##_params name;
#define LAW_X_UNION_S(id, name, NAME, signal, traits)	struct name##_state name;

union law_any_params {
	LAW_TABLE(LAW_X_UNION_P)
};

union law_any_state {
	LAW_TABLE(LAW_X_UNION_S)
};

/* The law's name and signal by id, NULL for none. */
static inline const char *law_name(int law)
{
#define LAW_X_NAME(id, name, NAME, signal, traits)	case id: return #name;
	switch (law) {
	LAW_TABLE(LAW_X_NAME)
	}
	return NULL;
}

static inline const char *law_signal(int law)
{
#define LAW_X_SIGNAL(id, name, NAME, signal, traits)	case id: return signal;
	switch (law) {
	LAW_TABLE(LAW_X_SIGNAL)
	}
	return NULL;
}

/* The law's traits (LAW_T_*) and the size of its state, -1 for none. */
static inline int law_traits(int law)
{
#define LAW_X_TRAITS(id, name, NAME, signal, traits)	case id: return (traits);
	switch (law) {
	LAW_TABLE(LAW_X_TRAITS)
	}
	return -1;
}

static inline int law_state_bytes(int law)
{
#define LAW_X_STATE_BYTES(id, name, NAME, signal, traits)	\
	case id: return (int)sizeof(struct name##_state);
	switch (law) {
	LAW_TABLE(LAW_X_STATE_BYTES)
	}
	return -1;
}

static inline int law_any_default(int law, union law_any_params *p)
{
#define LAW_X_DEFAULT_CASE(id, name, NAME, signal, traits)			\
	case id: name##_params_default(&p->name); return 0;
	memset(p, 0, sizeof(*p));
	switch (law) {
	LAW_TABLE(LAW_X_DEFAULT_CASE)
	}
	return -1;
}

static inline int law_any_check(int law, const union law_any_params *p)
{
#define LAW_X_CHECK_CASE(id, name, NAME, signal, traits)			\
	case id: return name##_params_check(&p->name);
	switch (law) {
	LAW_TABLE(LAW_X_CHECK_CASE)
	}
	return LAW_E_COUNT;
}

static inline void law_any_init(int law, union law_any_state *s,
				const union law_any_params *p, __u32 snd_nxt,
				__u32 mss, struct law_out *out)
{
#define LAW_X_INIT_CASE(id, name, NAME, signal, traits)				\
	case id: name##_init(&s->name, &p->name, snd_nxt, mss, out); break;
	memset(out, 0, sizeof(*out));
	switch (law) {
	LAW_TABLE(LAW_X_INIT_CASE)
	}
}

/* The path's hop count, for the laws that take it (Swift). */
static inline void law_any_set_path_hops(int law, union law_any_state *s, __u32 hops)
{
	if (law == LAW_ID_SWIFT)
		swift_set_path_hops(&s->swift, hops);
}

/* The ACK is copied and its echo pointer set to echo (which may be NULL). */
static inline void law_any_on_ack(int law, union law_any_state *s,
				  const union law_any_params *p,
				  const struct law_ack *ack_in,
				  const struct int_echo *echo,
				  struct law_out *out)
{
#define LAW_X_ACK_CASE(id, name, NAME, signal, traits)				\
	case id: name##_on_ack(&s->name, &p->name, &ack, out); break;
	struct law_ack ack = *ack_in;

	ack.echo = echo;
	memset(out, 0, sizeof(*out));
	switch (law) {
	LAW_TABLE(LAW_X_ACK_CASE)
	}
}

/*
 * Run on_ack over n ACKs (echo[i] used when has_echo[i]) without returning
 * to the caller in between: what the law costs without the cgo call.
 */
static inline void law_any_on_acks(int law, union law_any_state *s,
				   const union law_any_params *p,
				   const struct law_ack *acks,
				   const struct int_echo *echoes,
				   const __u8 *has_echo, size_t n,
				   struct law_out *out)
{
	size_t i;

	for (i = 0; i < n; i++)
		law_any_on_ack(law, s, p, &acks[i],
			       has_echo[i] ? &echoes[i] : NULL, out);
}

/* The configured window cap of a law's parameters (bytes). */
static inline __u64 law_any_max_cwnd(int law, const union law_any_params *p)
{
#define LAW_X_MAX_CWND(id, name, NAME, signal, traits)	\
	case id: return name##_max_cwnd(&p->name);
	switch (law) {
	LAW_TABLE(LAW_X_MAX_CWND)
	}
	return 0;
}

/* The parameter table of law_table.h, with each field's place. */
struct law_param_desc {
	__u8 law;
	__u8 size;	/* 4 or 8 bytes */
	__u16 offset;	/* in the law's params struct */
	__u8 rel;	/* another parameter narrows [lo, hi] */
	const char *name;
	const char *unit;
	const char *desc;
	__u64 def, lo, hi;
};

#define LAW_X_PD(NAME, member, name, unit, def, lo, hi, rel, desc)		\
	{ LAW_ID_##NAME, sizeof(((law_params_##NAME *)0)->member),		\
	  offsetof(law_params_##NAME, member), rel, #name, unit, desc,		\
	  def, lo, hi },
#define LAW_X_PARAMS(id, name, NAME, signal, traits)	NAME##_PARAMS(LAW_X_PD)

static const struct law_param_desc law_param_table[] = {
	LAW_TABLE(LAW_X_PARAMS)
};

static inline int law_param_count(void)
{
	return sizeof(law_param_table) / sizeof(law_param_table[0]);
}

static inline const struct law_param_desc *law_param_at(int i)
{
	if (i < 0 || i >= law_param_count())
		return NULL;
	return &law_param_table[i];
}

#endif /* CCLAB_LAW_USERSPACE_H */
