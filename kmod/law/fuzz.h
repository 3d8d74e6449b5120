/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Fuzz driver for the law core (user space): parameters and ACKs straight
 * from raw bytes, so every field takes every value. Returns 0, or the
 * number of the invariant an output broke. Built with UBSan by
 * kmod/law/lawfuzz, where undefined behaviour aborts the process.
 */
#ifndef CCLAB_LAW_FUZZ_H
#define CCLAB_LAW_FUZZ_H

#include "userspace.h"

/* Bytes one fuzzed ACK consumes: the ack, a presence byte, an echo. */
#define LAW_FUZZ_REC	(sizeof(struct law_ack) + 1 + sizeof(struct int_echo))

enum law_fuzz_bad {
	LAW_FUZZ_OK = 0,
	LAW_FUZZ_PARAMS_REJECTED,	/* not a failure: params_check said no */
	LAW_FUZZ_SEGS_ZERO,
	LAW_FUZZ_ABOVE_CAP,
	LAW_FUZZ_BELOW_MIN,
	LAW_FUZZ_SEGS_MISMATCH,
};

static inline int law_fuzz_check_out(int law, const union law_any_params *p,
				     const struct law_out *o, __u32 mss)
{
	__u64 cap = law_any_max_cwnd(law, p);

	if (!mss || mss > LAW_MSS_MAX)
		mss = LAW_MSS_DEFAULT;
	if (cap < mss)
		cap = mss;
	if (o->cwnd_segs < 1)
		return LAW_FUZZ_SEGS_ZERO;
	if (o->cwnd_bytes > cap)
		return LAW_FUZZ_ABOVE_CAP;
	/* Only Swift keeps a window below one segment (its min_cwnd_bytes). */
	if (law != LAW_ID_SWIFT && o->cwnd_bytes < mss)
		return LAW_FUZZ_BELOW_MIN;
	if (law == LAW_ID_SWIFT && o->cwnd_bytes < 1)
		return LAW_FUZZ_BELOW_MIN;
	if ((__u64)o->cwnd_segs != (o->cwnd_bytes + mss - 1) / mss &&
	    !(o->cwnd_segs == 1 && o->cwnd_bytes < mss))
		return LAW_FUZZ_SEGS_MISMATCH;
	return LAW_FUZZ_OK;
}

/*
 * law: 1..LAW_ID_COUNT (law_table.h). pbytes overlay the default parameters (so short
 * inputs stay mostly valid); abytes are LAW_FUZZ_REC-sized ACK records.
 */
static inline int law_fuzz_run(int law, const __u8 *pbytes, size_t np,
			       const __u8 *abytes, size_t na)
{
	union law_any_params p;
	union law_any_state s;
	struct law_out o;
	struct law_ack ack;
	struct int_echo echo;
	size_t off;
	int bad;

	if (law < 1 || law > LAW_ID_COUNT)
		return LAW_FUZZ_OK;
	law_any_default(law, &p);
	if (np > sizeof(p))
		np = sizeof(p);
	if (np)
		memcpy(&p, pbytes, np);
	if (law_any_check(law, &p) != LAW_OK)
		return LAW_FUZZ_PARAMS_REJECTED;
	law_any_init(law, &s, &p, 0, 1448, &o);
	bad = law_fuzz_check_out(law, &p, &o, 1448);
	if (bad)
		return bad;
	for (off = 0; off + LAW_FUZZ_REC <= na; off += LAW_FUZZ_REC) {
		const __u8 *r = abytes + off;

		memcpy(&ack, r, sizeof(ack));
		memcpy(&echo, r + sizeof(ack) + 1, sizeof(echo));
		law_any_on_ack(law, &s, &p, &ack,
			       (r[sizeof(ack)] & 1) ? &echo : NULL, &o);
		bad = law_fuzz_check_out(law, &p, &o, ack.mss);
		if (bad)
			return bad;
	}
	return LAW_FUZZ_OK;
}

#endif /* CCLAB_LAW_FUZZ_H */
