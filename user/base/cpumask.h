/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Fixed-size CPU and NUMA node sets, and the Linux cpulist text format
 * ("0,2-3,8", cpuset(7) "List format").
 *
 * A struct cpumask is a plain value (128 bytes): copy it, compare it, keep
 * it in arrays. Bit n stands for logical CPU n (or NUMA node n when used for
 * mems). Ids at or above CPUSETD_MAX_CPUS are out of range.
 */
#ifndef CPUSETD_CPUMASK_H
#define CPUSETD_CPUMASK_H

#ifdef __bpf__
#error "user-space header: BPF programs share only maps/cpusetd.h"
#endif

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/types.h>
#include "maps/cpusetd.h"

struct cpumask {
	uint64_t bits[CPUSETD_MASK_WORDS];
};

/* Longest text cpumask_format() can produce, including the NUL:
 * worst case "0,2,4,...,1022" = 512 ids of up to 4 digits + commas. */
#define CPULIST_MAX	2600

static inline void cpumask_zero(struct cpumask *m)
{
	*m = (struct cpumask){ { 0 } };
}

/* Adds/removes/tests id; ids >= CPUSETD_MAX_CPUS are ignored / false. */
static inline void cpumask_set(struct cpumask *m, unsigned id)
{
	if (id < CPUSETD_MAX_CPUS)
		m->bits[id / 64] |= 1ULL << (id % 64);
}

static inline void cpumask_clear(struct cpumask *m, unsigned id)
{
	if (id < CPUSETD_MAX_CPUS)
		m->bits[id / 64] &= ~(1ULL << (id % 64));
}

static inline bool cpumask_test(const struct cpumask *m, unsigned id)
{
	return id < CPUSETD_MAX_CPUS && (m->bits[id / 64] >> (id % 64)) & 1;
}

/* Set algebra; dst may alias either operand. */
void cpumask_or(struct cpumask *dst, const struct cpumask *a, const struct cpumask *b);
void cpumask_and(struct cpumask *dst, const struct cpumask *a, const struct cpumask *b);
void cpumask_andnot(struct cpumask *dst, const struct cpumask *a, const struct cpumask *b);

/* Number of ids in m. */
unsigned cpumask_weight(const struct cpumask *m);
bool cpumask_empty(const struct cpumask *m);
bool cpumask_equal(const struct cpumask *a, const struct cpumask *b);
/* True when every id of a is in b. */
bool cpumask_subset(const struct cpumask *a, const struct cpumask *b);
bool cpumask_intersects(const struct cpumask *a, const struct cpumask *b);

/* Lowest id >= from that is set, or -1 when none. */
int cpumask_next(const struct cpumask *m, int from);

#define cpumask_for_each(id, m) \
	for ((id) = cpumask_next((m), 0); (id) >= 0; (id) = cpumask_next((m), (id) + 1))

/*
 * Parses a cpulist ("0-3,8,10-11", surrounding whitespace and one trailing
 * newline allowed, "" = empty set) into *ret. The "0-7:2" stride form is
 * refused: cpuset files never emit it and annotations must not need it.
 * Returns 0, or -EINVAL for bad syntax or a reversed range, -ERANGE for an
 * id >= CPUSETD_MAX_CPUS. *ret is untouched on error.
 */
int cpulist_parse(const char *s, struct cpumask *ret);

/*
 * Formats m as the canonical cpulist (ascending, ranges collapsed, no
 * spaces; "" when empty) into buf of size len.
 * Returns the string length, or -ENOSPC when len is too small (buf then
 * holds "" if len > 0). CPULIST_MAX always suffices.
 */
int cpulist_format(const struct cpumask *m, char *buf, size_t len);

/*
 * Parses a kernel hex cpumask ("ff,00000001", comma-separated 32-bit words,
 * most significant first, as in sysfs cpumap files) into *ret.
 * Returns 0, -EINVAL on bad syntax, -ERANGE when a set bit is out of range.
 */
int cpumask_parse_hex(const char *s, struct cpumask *ret);

/*
 * Formats m as a kernel hex cpumask ("3", "1,00000000": 32-bit words,
 * most significant first, as /proc/irq/default_smp_affinity and the
 * workqueue cpumask read and write; cpumask_parse_hex reads it back) into
 * buf[len]. An empty m is "0". Returns the length, or -ENOSPC (buf "").
 */
int cpumask_format_hex(const struct cpumask *m, char *buf, size_t len);

#endif
