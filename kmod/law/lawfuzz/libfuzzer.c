// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer entry point for the law core (clang: coverage-guided on the C
 * itself, with UBSan including unsigned overflow and implicit truncation).
 * Input: byte 0 picks the law, bytes 1-2 the length of the parameter
 * overlay that follows, the rest are ACK records (fuzz.h). Built and run
 * for a few seconds by TestLibFuzzer; by hand:
 *   clang-14 -g -O1 -fsanitize=fuzzer,undefined,integer \
 *     -fno-sanitize-recover=all -fsanitize-ignorelist=ignorelist.txt \
 *     libfuzzer.c -o lawfuzzer && ./lawfuzzer corpus/
 */
#include <stdlib.h>
#include "../fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t np;
	int rc;

	if (size < 3)
		return 0;
	np = (size_t)data[1] | (size_t)data[2] << 8;
	if (np > size - 3)
		np = size - 3;
	rc = law_fuzz_run(1 + data[0] % LAW_ID_COUNT, data + 3, np, data + 3 + np,
			  size - 3 - np);
	if (rc != LAW_FUZZ_OK && rc != LAW_FUZZ_PARAMS_REJECTED)
		abort();	/* an output invariant broke */
	return 0;
}
