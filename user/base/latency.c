#include "latency.h"

const uint64_t latency_le_ns[LATENCY_BUCKETS] = {
	25000, 50000, 100000, 250000, 500000,			/* 25 µs .. */
	1000000, 2500000, 5000000, 10000000, 25000000, 50000000,
	100000000, 250000000, 500000000, 1000000000, 2500000000,	/* .. 2.5 s */
};

void latency_add(struct latency_hist *h, uint64_t ns)
{
	unsigned i = 0;

	while (i < LATENCY_BUCKETS && ns > latency_le_ns[i])
		i++;
	h->bucket[i]++;
	h->sum_ns += ns;
}
