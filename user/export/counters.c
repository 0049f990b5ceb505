// SPDX-License-Identifier: Apache-2.0
#include "counters.h"

const struct counter_info counter_info[COUNTERS_N] = {
#define COUNTER_ROW(name, metric, help) \
	{ #name, metric, help, offsetof(struct cpusetd_counters, name) },
	CPUSETD_COUNTERS(COUNTER_ROW)
#undef COUNTER_ROW
};
