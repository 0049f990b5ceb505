// SPDX-License-Identifier: Apache-2.0
/*
 * cpumask set algebra and the cpulist / hex-cpumask text formats.
 * Parsing is strict because cpulists arrive from pod annotations.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "cpumask.h"

void cpumask_or(struct cpumask *dst, const struct cpumask *a, const struct cpumask *b)
{
	for (int i = 0; i < CPUSETD_MASK_WORDS; i++)
		dst->bits[i] = a->bits[i] | b->bits[i];
}

void cpumask_and(struct cpumask *dst, const struct cpumask *a, const struct cpumask *b)
{
	for (int i = 0; i < CPUSETD_MASK_WORDS; i++)
		dst->bits[i] = a->bits[i] & b->bits[i];
}

void cpumask_andnot(struct cpumask *dst, const struct cpumask *a, const struct cpumask *b)
{
	for (int i = 0; i < CPUSETD_MASK_WORDS; i++)
		dst->bits[i] = a->bits[i] & ~b->bits[i];
}

unsigned cpumask_weight(const struct cpumask *m)
{
	unsigned n = 0;

	for (int i = 0; i < CPUSETD_MASK_WORDS; i++)
		n += (unsigned)__builtin_popcountll(m->bits[i]);
	return n;
}

bool cpumask_empty(const struct cpumask *m)
{
	for (int i = 0; i < CPUSETD_MASK_WORDS; i++)
		if (m->bits[i])
			return false;
	return true;
}

bool cpumask_equal(const struct cpumask *a, const struct cpumask *b)
{
	return memcmp(a->bits, b->bits, sizeof(a->bits)) == 0;
}

bool cpumask_subset(const struct cpumask *a, const struct cpumask *b)
{
	for (int i = 0; i < CPUSETD_MASK_WORDS; i++)
		if (a->bits[i] & ~b->bits[i])
			return false;
	return true;
}

bool cpumask_intersects(const struct cpumask *a, const struct cpumask *b)
{
	for (int i = 0; i < CPUSETD_MASK_WORDS; i++)
		if (a->bits[i] & b->bits[i])
			return true;
	return false;
}

int cpumask_next(const struct cpumask *m, int from)
{
	if (from < 0)
		from = 0;
	for (int w = from / 64; w < CPUSETD_MASK_WORDS; w++) {
		uint64_t word = m->bits[w];

		if (w == from / 64)
			word &= ~0ULL << (from % 64);
		if (word)
			return w * 64 + __builtin_ctzll(word);
	}
	return -1;
}

/* Reads one decimal id at *p; digits only, no sign, no overflow. */
static int parse_id(const char **p, unsigned *ret)
{
	unsigned long v = 0;
	const char *s = *p;

	if (!isdigit((unsigned char)*s))
		return -EINVAL;
	while (isdigit((unsigned char)*s)) {
		v = v * 10 + (unsigned long)(*s - '0');
		if (v >= CPUSETD_MAX_CPUS)
			return -ERANGE;
		s++;
	}
	*p = s;
	*ret = (unsigned)v;
	return 0;
}

int cpulist_parse(const char *s, struct cpumask *ret)
{
	struct cpumask m;
	const char *end;

	cpumask_zero(&m);
	while (isspace((unsigned char)*s))
		s++;
	end = s + strlen(s);
	while (end > s && isspace((unsigned char)end[-1]))
		end--;

	while (s < end) {
		unsigned lo, hi;
		int r = parse_id(&s, &lo);

		if (r < 0)
			return r;
		hi = lo;
		if (*s == '-') {
			s++;
			r = parse_id(&s, &hi);
			if (r < 0)
				return r;
			if (hi < lo)
				return -EINVAL;
		}
		for (unsigned id = lo; id <= hi; id++)
			cpumask_set(&m, id);
		if (s == end)
			break;
		if (*s != ',' || s + 1 == end)
			return -EINVAL;
		s++;
	}
	*ret = m;
	return 0;
}

int cpulist_format(const struct cpumask *m, char *buf, size_t len)
{
	size_t off = 0;
	int id = cpumask_next(m, 0);

	if (len == 0)
		return -ENOSPC;
	buf[0] = '\0';
	while (id >= 0) {
		int last = id, n;

		while (cpumask_test(m, (unsigned)last + 1))
			last++;
		if (last == id)
			n = snprintf(buf + off, len - off, "%s%d", off ? "," : "", id);
		else
			n = snprintf(buf + off, len - off, "%s%d-%d", off ? "," : "", id, last);
		if (n < 0 || (size_t)n >= len - off) {
			buf[0] = '\0';
			return -ENOSPC;
		}
		off += (size_t)n;
		id = cpumask_next(m, last + 1);
	}
	return (int)off;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c = (char)tolower((unsigned char)c);
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

int cpumask_parse_hex(const char *s, struct cpumask *ret)
{
	struct cpumask m;
	const char *end = s + strlen(s);
	unsigned bit = 0;

	while (end > s && isspace((unsigned char)end[-1]))
		end--;
	if (end == s)
		return -EINVAL;
	cpumask_zero(&m);
	/* Walk from the least significant digit; commas separate words. */
	for (const char *p = end; p > s; p--) {
		int v;

		if (p[-1] == ',')
			continue;
		v = hexval(p[-1]);
		if (v < 0)
			return -EINVAL;
		for (int b = 0; b < 4; b++, bit++) {
			if (!(v & (1 << b)))
				continue;
			if (bit >= CPUSETD_MAX_CPUS)
				return -ERANGE;
			cpumask_set(&m, bit);
		}
	}
	*ret = m;
	return 0;
}

int cpumask_format_hex(const struct cpumask *m, char *buf, size_t len)
{
	int top = -1, c, n = 0;

	cpumask_for_each(c, m)
		top = c;
	if (len < 2)
		return -ENOSPC;
	if (top < 0) {
		snprintf(buf, len, "0");
		return 1;
	}
	for (int w = top / 32; w >= 0; w--) {
		uint32_t word = 0;
		int k;

		for (int b = 0; b < 32; b++)
			if (cpumask_test(m, (unsigned)(w * 32 + b)))
				word |= 1u << b;
		k = snprintf(buf + n, len - (size_t)n, w == top / 32 ? "%x%s" : "%08x%s", word,
			     w ? "," : "");
		if (k < 0 || (size_t)(n + k) >= len) {
			buf[0] = '\0';
			return -ENOSPC;
		}
		n += k;
	}
	return n;
}
