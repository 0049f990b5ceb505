#include "counters.h"

const uint64_t convergence_le_ns[CONVERGENCE_BUCKETS] = {
	25000, 50000, 100000, 250000, 500000,			/* 25 µs .. */
	1000000, 2500000, 5000000, 10000000, 25000000, 50000000,
	100000000, 250000000, 500000000, 1000000000, 2500000000,	/* .. 2.5 s */
};

void convergence_add(struct convergence_hist *h, uint64_t ns)
{
	unsigned i = 0;

	while (i < CONVERGENCE_BUCKETS && ns > convergence_le_ns[i])
		i++;
	h->bucket[i]++;
	h->sum_ns += ns;
}

const struct counter_info counter_info[COUNTERS_N] = {
#define COUNTER_ROW(name, metric, help) \
	{ #name, metric, help, offsetof(struct cpusetd_counters, name) },
	CPUSETD_COUNTERS(COUNTER_ROW)
#undef COUNTER_ROW
};
