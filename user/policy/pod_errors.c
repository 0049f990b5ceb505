// SPDX-License-Identifier: Apache-2.0
/*
 * The per-pod error table (pod_errors.h): a strmap from a key built of
 * the three names, each prefixed with its length (the names come from
 * the bundle, which pods control: with a plain separator a hostile name
 * could make its entry collide with another pod's), to malloc'ed entries,
 * plus a sorted view rebuilt lazily for iteration.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "pod_errors.h"
#include "user/base/strmap.h"

/* Three names and their length prefixes. */
#define POD_ERRORS_KEY_MAX	(128 + 256 + 256 + 3 * 21)

struct pod_errors {
	struct strmap *by_key;
	const struct pod_error **sorted;	/* NULL: stale */
	size_t n_sorted;
};

static void key_of(const char *ns, const char *pod, const char *container, char *buf,
		   size_t len)
{
	snprintf(buf, len, "%zu:%s%zu:%s%zu:%s", strlen(ns), ns, strlen(pod), pod,
		 strlen(container), container);
}

struct pod_errors *pod_errors_new(void)
{
	struct pod_errors *t = calloc(1, sizeof(*t));

	if (t && !(t->by_key = strmap_new())) {
		free(t);
		return NULL;
	}
	return t;
}

void pod_errors_free(struct pod_errors *t)
{
	size_t it = 0;
	const char *k;
	void *v;

	if (!t)
		return;
	while (strmap_next(t->by_key, &it, &k, &v))
		free(v);
	strmap_free(t->by_key);
	free(t->sorted);
	free(t);
}

static void stale(struct pod_errors *t)
{
	free(t->sorted);
	t->sorted = NULL;
}

int pod_errors_note(struct pod_errors *t, const struct pod_error *e, double now)
{
	char key[POD_ERRORS_KEY_MAX];
	struct pod_error *old;

	key_of(e->namespace_, e->pod, e->container, key, sizeof(key));
	old = strmap_get(t->by_key, key);
	if (!old) {
		struct pod_error *n = malloc(sizeof(*n));

		if (!n)
			return -ENOMEM;
		*n = *e;
		n->attempts = 1;
		n->first = n->last = now;
		if (strmap_put(t->by_key, key, n) < 0) {
			free(n);
			return -ENOMEM;
		}
		stale(t);
		return 1;
	}
	bool again = strcmp(old->container_id, e->container_id) != 0;
	uint64_t attempts = old->attempts + (again ? 1 : 0);
	double first = old->first;

	*old = *e;
	old->attempts = attempts;
	old->first = first;
	old->last = now;
	return again ? 1 : 0;
}

const struct pod_error *pod_errors_get(const struct pod_errors *t, const char *namespace_,
				       const char *pod, const char *container)
{
	char key[POD_ERRORS_KEY_MAX];

	key_of(namespace_, pod, container, key, sizeof(key));
	return strmap_get(t->by_key, key);
}

bool pod_errors_forget(struct pod_errors *t, const char *namespace_, const char *pod,
		       const char *container)
{
	char key[POD_ERRORS_KEY_MAX];
	struct pod_error *e;

	key_of(namespace_, pod, container, key, sizeof(key));
	e = strmap_del(t->by_key, key);
	if (!e)
		return false;
	free(e);
	stale(t);
	return true;
}

size_t pod_errors_prune(struct pod_errors *t, bool (*alive)(const char *pod_uid, void *ctx),
			void *ctx)
{
	char *gone[64];
	size_t dropped = 0, n;

	/* The map must not change while iterating: collect, then delete,
	 * in rounds of at most 64 keys. */
	do {
		size_t it = 0;
		const char *k;
		void *v;

		n = 0;
		while (n < 64 && strmap_next(t->by_key, &it, &k, &v)) {
			if (alive(((struct pod_error *)v)->pod_uid, ctx))
				continue;
			gone[n] = strdup(k);
			if (!gone[n])
				break;	/* ENOMEM: the rest waits for the next prune */
			n++;
		}
		for (size_t i = 0; i < n; i++) {
			free(strmap_del(t->by_key, gone[i]));
			free(gone[i]);
		}
		dropped += n;
	} while (n == 64);
	if (dropped)
		stale(t);
	return dropped;
}

size_t pod_errors_count(const struct pod_errors *t)
{
	return strmap_count(t->by_key);
}

static int by_name(const void *a, const void *b)
{
	const struct pod_error *x = *(const struct pod_error *const *)a;
	const struct pod_error *y = *(const struct pod_error *const *)b;
	int r = strcmp(x->namespace_, y->namespace_);

	if (!r)
		r = strcmp(x->pod, y->pod);
	return r ? r : strcmp(x->container, y->container);
}

const struct pod_error *pod_errors_next(const struct pod_errors *t, size_t *it)
{
	struct pod_errors *m = (struct pod_errors *)t;	/* the view is a cache */

	if (!m->sorted) {
		size_t i = 0, j = 0;
		const char *k;
		void *v;

		m->n_sorted = strmap_count(m->by_key);
		m->sorted = calloc(m->n_sorted + 1, sizeof(*m->sorted));
		if (!m->sorted)
			return NULL;	/* ENOMEM: iterate nothing this time */
		while (strmap_next(m->by_key, &j, &k, &v))
			m->sorted[i++] = v;
		qsort(m->sorted, m->n_sorted, sizeof(*m->sorted), by_name);
	}
	return *it < m->n_sorted ? m->sorted[(*it)++] : NULL;
}
