// SPDX-License-Identifier: GPL-2.0
/*
 * Runs int_option.h in user space for the Go codec's cross-check test.
 * Reads commands on stdin, one a line, and prints one result line each:
 *   E rate_code qlen tx_bytes now_ns  -> 14 hex digits of int_rec_encode
 *   D hex14                           -> rc qlen tx_bytes ts rate_mbps
 *   S len                             -> int_opt_slots(len)
 *   R mbps                            -> int_rate_code(mbps)
 *   T later earlier                   -> int_tx_delta int_ts_delta
 *   Q fb cp seq qlen                  -> 14 hex digits of int_qcn_encode
 *   F hex14                           -> rc fb cp seq qlen of int_qcn_decode
 */
#include <stdio.h>
#include <linux/types.h>
#include "../int_option.h"

int main(void)
{
	char cmd;

	while (scanf(" %c", &cmd) == 1) {
		unsigned long long a, b, c, d;
		__u8 p[7];
		struct int_hop h = { 0 };
		struct int_qcn q = { 0 };
		int i, rc;

		switch (cmd) {
		case 'E':
			if (scanf("%llu %llu %llu %llu", &a, &b, &c, &d) != 4)
				return 2;
			int_rec_encode(p, (__u8)a, b, c, d);
			for (i = 0; i < 7; i++)
				printf("%02x", p[i]);
			printf("\n");
			break;
		case 'D':
			if (scanf("%14llx", &a) != 1)
				return 2;
			for (i = 0; i < 7; i++)
				p[i] = a >> (48 - 8 * i);
			rc = int_rec_decode(p, &h);
			printf("%d %u %u %u %u\n", rc, h.qlen, h.tx_bytes, h.ts,
			       h.rate_mbps);
			break;
		case 'H':	/* a header byte: hops (-1: unknown version), U */
			if (scanf("%llu", &a) != 1)
				return 1;
			printf("%d %d\n", int_hdr_hops((__u8)a), int_hdr_ue((__u8)a) ? 1 : 0);
			break;
		case 'S':
			if (scanf("%llu", &a) != 1)
				return 2;
			printf("%d\n", int_opt_slots((__u8)a));
			break;
		case 'R':
			if (scanf("%llu", &a) != 1)
				return 2;
			printf("%u\n", int_rate_code((__u32)a));
			break;
		case 'T':
			if (scanf("%llu %llu", &a, &b) != 2)
				return 2;
			printf("%u %u\n", int_tx_delta(a, b), int_ts_delta(a, b));
			break;
		case 'Q':
			if (scanf("%llu %llu %llu %llu", &a, &b, &c, &d) != 4)
				return 2;
			int_qcn_encode(p, (__u8)a, (__u16)b, (__u16)c, d);
			for (i = 0; i < 7; i++)
				printf("%02x", p[i]);
			printf("\n");
			break;
		case 'F':
			if (scanf("%14llx", &a) != 1)
				return 2;
			for (i = 0; i < 7; i++)
				p[i] = a >> (48 - 8 * i);
			rc = int_qcn_decode(p, &q);
			printf("%d %u %u %u %u\n", rc, q.fb, q.cp, q.seq, q.qlen);
			break;
		default:
			return 2;
		}
	}
	return 0;
}
