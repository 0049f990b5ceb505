// SPDX-License-Identifier: Apache-2.0
/* String-keyed hash map: FNV-1a, chaining, doubling. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "strmap.h"

struct node {
	struct node *next;
	void *value;
	char key[];
};

struct strmap {
	struct node **buckets;
	size_t nbuckets;	/* power of two */
	size_t count;
};

static uint64_t hash(const char *s)
{
	uint64_t h = 1469598103934665603ULL;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 1099511628211ULL;
	return h;
}

struct strmap *strmap_new(void)
{
	struct strmap *m = calloc(1, sizeof(*m));

	if (!m)
		return NULL;
	m->nbuckets = 64;
	m->buckets = calloc(m->nbuckets, sizeof(*m->buckets));
	if (!m->buckets) {
		free(m);
		return NULL;
	}
	return m;
}

void strmap_free(struct strmap *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->nbuckets; i++) {
		struct node *n = m->buckets[i];

		while (n) {
			struct node *next = n->next;

			free(n);
			n = next;
		}
	}
	free(m->buckets);
	free(m);
}

static struct node **slot(const struct strmap *m, const char *key)
{
	struct node **pp = &m->buckets[hash(key) & (m->nbuckets - 1)];

	while (*pp && strcmp((*pp)->key, key) != 0)
		pp = &(*pp)->next;
	return pp;
}

void *strmap_get(const struct strmap *m, const char *key)
{
	struct node *n = *slot(m, key);

	return n ? n->value : NULL;
}

/* Doubling is best effort: on ENOMEM the map keeps working, just slower. */
static void grow(struct strmap *m)
{
	size_t nb = m->nbuckets * 2;
	struct node **b = calloc(nb, sizeof(*b));

	if (!b)
		return;
	for (size_t i = 0; i < m->nbuckets; i++) {
		struct node *n = m->buckets[i];

		while (n) {
			struct node *next = n->next;
			size_t h = hash(n->key) & (nb - 1);

			n->next = b[h];
			b[h] = n;
			n = next;
		}
	}
	free(m->buckets);
	m->buckets = b;
	m->nbuckets = nb;
}

int strmap_put(struct strmap *m, const char *key, void *value)
{
	struct node **pp = slot(m, key);
	size_t len = strlen(key) + 1;

	if (*pp) {
		(*pp)->value = value;
		return 0;
	}
	*pp = malloc(sizeof(**pp) + len);
	if (!*pp)
		return -ENOMEM;
	memcpy((*pp)->key, key, len);
	(*pp)->value = value;
	(*pp)->next = NULL;
	if (++m->count > m->nbuckets)
		grow(m);
	return 0;
}

void *strmap_del(struct strmap *m, const char *key)
{
	struct node **pp = slot(m, key), *n = *pp;
	void *v;

	if (!n)
		return NULL;
	*pp = n->next;
	v = n->value;
	free(n);
	m->count--;
	return v;
}

size_t strmap_count(const struct strmap *m)
{
	return m->count;
}

/* *it encodes bucket index << 16 | position in its chain; chains stay far
 * shorter than 65536 because the table doubles at load factor 1. */
int strmap_next(const struct strmap *m, size_t *it, const char **ret_key, void **ret_value)
{
	size_t b = *it >> 16, pos = *it & 0xffff;

	for (; b < m->nbuckets; b++, pos = 0) {
		struct node *n = m->buckets[b];

		for (size_t i = 0; n && i < pos; i++)
			n = n->next;
		if (n) {
			*ret_key = n->key;
			*ret_value = n->value;
			*it = (b << 16) | (pos + 1);
			return 1;
		}
	}
	*it = b << 16;
	return 0;
}
