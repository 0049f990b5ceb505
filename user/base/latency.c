// SPDX-License-Identifier: Apache-2.0
#include "latency.h"

/* 1-2-5 steps: 200 µs (issue 23's CreateContainer target) and 2 s (the
 * runtime's NRI request timeout) are bounds. */
const uint64_t latency_le_ns[LATENCY_BUCKETS] = {
	25000, 50000, 100000, 200000, 500000,			/* 25 µs .. */
	1000000, 2000000, 5000000, 10000000, 20000000, 50000000,
	100000000, 200000000, 500000000, 1000000000, 2000000000,	/* .. 2 s */
};

void latency_add(struct latency_hist *h, uint64_t ns)
{
	unsigned i = 0;

	while (i < LATENCY_BUCKETS && ns > latency_le_ns[i])
		i++;
	h->bucket[i]++;
	h->sum_ns += ns;
}
