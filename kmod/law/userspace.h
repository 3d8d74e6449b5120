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

enum law_id {
	LAW_ID_POWERTCP = 0,
	LAW_ID_THETA_POWERTCP,
	LAW_ID_HPCC,
	LAW_ID_SWIFT,
	LAW_ID_DCTCP,
	LAW_ID_COUNT
};

union law_any_params {
	struct powertcp_params powertcp;
	struct theta_powertcp_params theta;
	struct hpcc_params hpcc;
	struct swift_params swift;
	struct dctcp_params dctcp;
};

union law_any_state {
	struct powertcp_state powertcp;
	struct theta_powertcp_state theta;
	struct hpcc_state hpcc;
	struct swift_state swift;
	struct dctcp_state dctcp;
};

static inline int law_any_default(int law, union law_any_params *p)
{
	memset(p, 0, sizeof(*p));
	switch (law) {
	case LAW_ID_POWERTCP: powertcp_params_default(&p->powertcp); return 0;
	case LAW_ID_THETA_POWERTCP: theta_powertcp_params_default(&p->theta); return 0;
	case LAW_ID_HPCC: hpcc_params_default(&p->hpcc); return 0;
	case LAW_ID_SWIFT: swift_params_default(&p->swift); return 0;
	case LAW_ID_DCTCP: dctcp_params_default(&p->dctcp); return 0;
	}
	return -1;
}

static inline int law_any_check(int law, const union law_any_params *p)
{
	switch (law) {
	case LAW_ID_POWERTCP: return powertcp_params_check(&p->powertcp);
	case LAW_ID_THETA_POWERTCP: return theta_powertcp_params_check(&p->theta);
	case LAW_ID_HPCC: return hpcc_params_check(&p->hpcc);
	case LAW_ID_SWIFT: return swift_params_check(&p->swift);
	case LAW_ID_DCTCP: return dctcp_params_check(&p->dctcp);
	}
	return LAW_E_COUNT;
}

static inline void law_any_init(int law, union law_any_state *s,
				const union law_any_params *p, __u32 snd_nxt,
				__u32 mss, struct law_out *out)
{
	memset(out, 0, sizeof(*out));
	switch (law) {
	case LAW_ID_POWERTCP: powertcp_init(&s->powertcp, &p->powertcp, snd_nxt, mss, out); break;
	case LAW_ID_THETA_POWERTCP: theta_powertcp_init(&s->theta, &p->theta, snd_nxt, mss, out); break;
	case LAW_ID_HPCC: hpcc_init(&s->hpcc, &p->hpcc, snd_nxt, mss, out); break;
	case LAW_ID_SWIFT: swift_init(&s->swift, &p->swift, snd_nxt, mss, out); break;
	case LAW_ID_DCTCP: dctcp_init(&s->dctcp, &p->dctcp, snd_nxt, mss, out); break;
	}
}

/* The ACK is copied and its echo pointer set to echo (which may be NULL). */
static inline void law_any_on_ack(int law, union law_any_state *s,
				  const union law_any_params *p,
				  const struct law_ack *ack_in,
				  const struct int_echo *echo,
				  struct law_out *out)
{
	struct law_ack ack = *ack_in;

	ack.echo = echo;
	memset(out, 0, sizeof(*out));
	switch (law) {
	case LAW_ID_POWERTCP: powertcp_on_ack(&s->powertcp, &p->powertcp, &ack, out); break;
	case LAW_ID_THETA_POWERTCP: theta_powertcp_on_ack(&s->theta, &p->theta, &ack, out); break;
	case LAW_ID_HPCC: hpcc_on_ack(&s->hpcc, &p->hpcc, &ack, out); break;
	case LAW_ID_SWIFT: swift_on_ack(&s->swift, &p->swift, &ack, out); break;
	case LAW_ID_DCTCP: dctcp_on_ack(&s->dctcp, &p->dctcp, &ack, out); break;
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
	switch (law) {
	case LAW_ID_POWERTCP:
		return law_cwnd_cap(p->powertcp.max_cwnd_bytes, p->powertcp.host_bw_mbps,
				    law_clamp64(p->powertcp.base_rtt_ns, 1000, LAW_RTT_MAX_NS));
	case LAW_ID_THETA_POWERTCP:
		return law_cwnd_cap(p->theta.max_cwnd_bytes, p->theta.host_bw_mbps,
				    law_clamp64(p->theta.base_rtt_ns, 1000, LAW_RTT_MAX_NS));
	case LAW_ID_HPCC:
		return law_cwnd_cap(p->hpcc.max_cwnd_bytes, p->hpcc.host_bw_mbps,
				    law_clamp64(p->hpcc.base_rtt_ns, 1000, LAW_RTT_MAX_NS));
	case LAW_ID_SWIFT: return p->swift.max_cwnd_bytes;
	case LAW_ID_DCTCP: return p->dctcp.max_cwnd_bytes;
	}
	return 0;
}

/* Parameter names: the C field names, VAI fields prefixed "vai_". */
struct law_param_desc {
	__u8 law;
	__u8 size;	/* 4 or 8 bytes */
	__u16 offset;	/* in the law's params struct */
	const char *name;
};

#define LAW_PD(id, type, field) \
	{ id, sizeof(((struct type *)0)->field), offsetof(struct type, field), #field }
#define LAW_PDV(id, type, field) \
	{ id, sizeof(((struct type *)0)->vai.field), offsetof(struct type, vai.field), "vai_" #field }

static const struct law_param_desc law_param_table[] = {
	LAW_PD(LAW_ID_POWERTCP, powertcp_params, base_rtt_ns),
	LAW_PD(LAW_ID_POWERTCP, powertcp_params, host_bw_mbps),
	LAW_PD(LAW_ID_POWERTCP, powertcp_params, gamma_ppm),
	LAW_PD(LAW_ID_POWERTCP, powertcp_params, beta_bytes),
	LAW_PD(LAW_ID_POWERTCP, powertcp_params, expected_flows),
	LAW_PD(LAW_ID_POWERTCP, powertcp_params, init_cwnd_bytes),
	LAW_PD(LAW_ID_POWERTCP, powertcp_params, max_cwnd_bytes),
	LAW_PD(LAW_ID_POWERTCP, powertcp_params, int_max_age_ns),

	LAW_PD(LAW_ID_THETA_POWERTCP, theta_powertcp_params, base_rtt_ns),
	LAW_PD(LAW_ID_THETA_POWERTCP, theta_powertcp_params, host_bw_mbps),
	LAW_PD(LAW_ID_THETA_POWERTCP, theta_powertcp_params, gamma_ppm),
	LAW_PD(LAW_ID_THETA_POWERTCP, theta_powertcp_params, beta_bytes),
	LAW_PD(LAW_ID_THETA_POWERTCP, theta_powertcp_params, expected_flows),
	LAW_PD(LAW_ID_THETA_POWERTCP, theta_powertcp_params, init_cwnd_bytes),
	LAW_PD(LAW_ID_THETA_POWERTCP, theta_powertcp_params, max_cwnd_bytes),

	LAW_PD(LAW_ID_HPCC, hpcc_params, base_rtt_ns),
	LAW_PD(LAW_ID_HPCC, hpcc_params, host_bw_mbps),
	LAW_PD(LAW_ID_HPCC, hpcc_params, eta_ppm),
	LAW_PD(LAW_ID_HPCC, hpcc_params, max_stage),
	LAW_PD(LAW_ID_HPCC, hpcc_params, wai_bytes),
	LAW_PD(LAW_ID_HPCC, hpcc_params, expected_flows),
	LAW_PD(LAW_ID_HPCC, hpcc_params, init_cwnd_bytes),
	LAW_PD(LAW_ID_HPCC, hpcc_params, max_cwnd_bytes),
	LAW_PD(LAW_ID_HPCC, hpcc_params, int_max_age_ns),
	LAW_PDV(LAW_ID_HPCC, hpcc_params, enable),
	LAW_PDV(LAW_ID_HPCC, hpcc_params, sf_acks),
	LAW_PDV(LAW_ID_HPCC, hpcc_params, token_thresh),
	LAW_PDV(LAW_ID_HPCC, hpcc_params, ai_div),
	LAW_PDV(LAW_ID_HPCC, hpcc_params, bank_cap),
	LAW_PDV(LAW_ID_HPCC, hpcc_params, ai_cap),
	LAW_PDV(LAW_ID_HPCC, hpcc_params, dampener_const),

	LAW_PD(LAW_ID_SWIFT, swift_params, base_rtt_ns),
	LAW_PD(LAW_ID_SWIFT, swift_params, host_bw_mbps),
	LAW_PD(LAW_ID_SWIFT, swift_params, base_target_ns),
	LAW_PD(LAW_ID_SWIFT, swift_params, per_hop_ns),
	LAW_PD(LAW_ID_SWIFT, swift_params, hops),
	LAW_PD(LAW_ID_SWIFT, swift_params, fs_range_ns),
	LAW_PD(LAW_ID_SWIFT, swift_params, fs_min_cwnd_mppm),
	LAW_PD(LAW_ID_SWIFT, swift_params, fs_max_cwnd_segs),
	LAW_PD(LAW_ID_SWIFT, swift_params, ai_bytes),
	LAW_PD(LAW_ID_SWIFT, swift_params, beta_ppm),
	LAW_PD(LAW_ID_SWIFT, swift_params, max_mdf_ppm),
	LAW_PD(LAW_ID_SWIFT, swift_params, min_cwnd_bytes),
	LAW_PD(LAW_ID_SWIFT, swift_params, init_cwnd_bytes),
	LAW_PD(LAW_ID_SWIFT, swift_params, max_cwnd_bytes),
	LAW_PDV(LAW_ID_SWIFT, swift_params, enable),
	LAW_PDV(LAW_ID_SWIFT, swift_params, sf_acks),
	LAW_PDV(LAW_ID_SWIFT, swift_params, token_thresh),
	LAW_PDV(LAW_ID_SWIFT, swift_params, ai_div),
	LAW_PDV(LAW_ID_SWIFT, swift_params, bank_cap),
	LAW_PDV(LAW_ID_SWIFT, swift_params, ai_cap),
	LAW_PDV(LAW_ID_SWIFT, swift_params, dampener_const),

	LAW_PD(LAW_ID_DCTCP, dctcp_params, g_shift),
	LAW_PD(LAW_ID_DCTCP, dctcp_params, alpha_init_ppm),
	LAW_PD(LAW_ID_DCTCP, dctcp_params, init_cwnd_segs),
	LAW_PD(LAW_ID_DCTCP, dctcp_params, max_cwnd_bytes),
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
