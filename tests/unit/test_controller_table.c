// SPDX-License-Identifier: Apache-2.0
/*
 * The controller's table (user/controller/controller_table.c) on its own: its
 * pod index (controller_pod_cgroups, what the error prune asks at every
 * rmdir) counts the table's entries of each pod UID through put, del,
 * swap (a resync) and a failed put or swap, which leave every map as it
 * was. Records are bare (no cgroup behind them): the table only keys
 * them. That a pod's errors stay while a cgroup of it is left, and go
 * with its last, runs on a real tree in test_controller_forget.c.
 *
 * A failed allocation is made, not waited for: malloc below fails the
 * n-th call from the moment a test arms it. Only the table's own code
 * runs while it is armed (strmap allocates its entries with malloc).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "user/controller/controller_internal.h"

/* glibc's allocator under the name that stays its own (exported since 2.2.5). */
extern void *__libc_malloc(size_t n);

static unsigned fail_in;	/* the fail_in-th malloc from now fails; 0: none */

void *malloc(size_t n)
{
	if (fail_in && --fail_in == 0)
		return NULL;
	return __libc_malloc(n);
}

/* Whether the table's calls reach the malloc above (valgrind or a
 * sanitizer puts its own in front of it: then no failure can be made,
 * and the tests that need one skip). */
static bool can_fail_malloc(void)
{
	void *(*volatile m)(size_t) = malloc;	/* a real call, not folded */
	void *p;

	fail_in = 1;
	p = m(16);
	fail_in = 0;
	free(p);
	return p == NULL;
}

#define UID_A "4f0c6f1e-0000-4000-8000-00000000000a"
#define UID_B "4f0c6f1e-0000-4000-8000-00000000000b"
#define UID_C "4f0c6f1e-0000-4000-8000-00000000000c"

/* A record of pod pod_uid; serial names its path, container id and
 * cgroup id (0: none, as a cgroup we could not stat). */
static struct container *rec(unsigned serial, const char *pod_uid, uint64_t cgroup_id)
{
	struct container *ct = calloc(1, sizeof(*ct));

	assert_non_null(ct);
	ct->cpus_fd = -1;
	snprintf(ct->info.container_id, sizeof(ct->info.container_id), "%064x", serial);
	snprintf(ct->path, sizeof(ct->path), "/kubepods/pod%s/%s", pod_uid,
		 ct->info.container_id);
	snprintf(ct->info.pod_uid, sizeof(ct->info.pod_uid), "%s", pod_uid);
	snprintf(ct->meta.pod_uid, sizeof(ct->meta.pod_uid), "%s", pod_uid);
	ct->cgroup_id = cgroup_id;
	return ct;
}

static struct controller *table_new(void)
{
	struct controller *c = calloc(1, sizeof(*c));

	assert_non_null(c);
	assert_int_equal(controller_table_init(c), 0);
	return c;
}

static void table_free(struct controller *c)
{
	controller_table_free(c);
	free(c);
}

/* Every map's size and the counts of the test's pods, to compare. */
struct shape {
	size_t paths, ids, cgroups, pods;
	size_t a, b, c, none;
};

static struct shape shape_of(const struct controller *c)
{
	return (struct shape){
		.paths = strmap_count(c->by_path), .ids = strmap_count(c->by_id),
		.cgroups = strmap_count(c->by_cgroup), .pods = strmap_count(c->by_pod),
		.a = controller_pod_cgroups(c, UID_A), .b = controller_pod_cgroups(c, UID_B),
		.c = controller_pod_cgroups(c, UID_C), .none = controller_pod_cgroups(c, ""),
	};
}

static void assert_shape(const struct shape *got, const struct shape *want)
{
	if (memcmp(got, want, sizeof(*got)) != 0)
		fail_msg("maps %zu/%zu/%zu/%zu, pods a=%zu b=%zu c=%zu \"\"=%zu; want "
			 "%zu/%zu/%zu/%zu, a=%zu b=%zu c=%zu \"\"=%zu",
			 got->paths, got->ids, got->cgroups, got->pods, got->a, got->b, got->c,
			 got->none, want->paths, want->ids, want->cgroups, want->pods, want->a,
			 want->b, want->c, want->none);
}

static void assert_counts(const struct controller *c, size_t a, size_t b, size_t cc, size_t none)
{
	assert_int_equal(controller_pod_cgroups(c, UID_A), a);
	assert_int_equal(controller_pod_cgroups(c, UID_B), b);
	assert_int_equal(controller_pod_cgroups(c, UID_C), cc);
	assert_int_equal(controller_pod_cgroups(c, ""), none);
	/* A pod with none left has no key: the index does not grow with
	 * every pod the node ever ran. */
	assert_int_equal(strmap_count(c->by_pod), (a > 0) + (b > 0) + (cc > 0) + (none > 0));
}

/* put counts each record once per pod; del takes its own count back,
 * once, and not another record's. */
static void test_put_del(void **state)
{
	struct controller *c = table_new();
	struct container *a1 = rec(1, UID_A, 101), *a2 = rec(2, UID_A, 102);
	struct container *b1 = rec(3, UID_B, 0), *n1 = rec(4, "", 104);

	(void)state;
	assert_counts(c, 0, 0, 0, 0);
	assert_int_equal(controller_table_put(c, a1), 0);
	assert_counts(c, 1, 0, 0, 0);
	assert_int_equal(controller_table_put(c, a2), 0);
	assert_int_equal(controller_table_put(c, b1), 0);
	/* a bundle and a path that gave no UID: counted under "" as the
	 * error table keys it */
	assert_int_equal(controller_table_put(c, n1), 0);
	assert_counts(c, 2, 1, 0, 1);
	/* in already: not counted again */
	assert_int_equal(controller_table_put(c, a2), 0);
	assert_counts(c, 2, 1, 0, 1);

	controller_table_del(c, a1);
	assert_counts(c, 1, 1, 0, 1);
	controller_table_del(c, a1);	/* not in: nothing changes */
	assert_counts(c, 1, 1, 0, 1);
	controller_table_del(c, b1);
	assert_counts(c, 1, 0, 0, 1);
	controller_table_del(c, a2);
	controller_table_del(c, n1);
	assert_counts(c, 0, 0, 0, 0);
	assert_int_equal(strmap_count(c->by_path), 0);

	container_free(a1);
	container_free(a2);
	container_free(b1);
	container_free(n1);
	table_free(c);
}

/* A record of another path with the same container id (a stale path)
 * is its own entry: its del does not take the other's count. */
static void test_del_stale_path(void **state)
{
	struct controller *c = table_new();
	struct container *cur = rec(1, UID_A, 101), *stale = rec(1, UID_A, 99);

	(void)state;
	snprintf(stale->path, sizeof(stale->path), "/kubepods/burstable/pod%s/%s", UID_A,
		 stale->info.container_id);
	assert_int_equal(controller_table_put(c, stale), 0);
	assert_int_equal(controller_table_put(c, cur), 0);
	assert_counts(c, 2, 0, 0, 0);
	controller_table_del(c, stale);
	assert_counts(c, 1, 0, 0, 0);
	assert_ptr_equal(controller_find_container(c, cur->info.container_id), cur);
	container_free(stale);
	table_free(c);
}

/* A put over a path that is in (callers look it up first, but the maps
 * must still agree): the replaced record no longer counts. */
static void test_put_replaces_path(void **state)
{
	struct controller *c = table_new();
	struct container *old = rec(1, UID_A, 101), *new = rec(2, UID_B, 102);

	(void)state;
	snprintf(new->path, sizeof(new->path), "%s", old->path);
	assert_int_equal(controller_table_put(c, old), 0);
	assert_int_equal(controller_table_put(c, new), 0);
	assert_counts(c, 0, 1, 0, 0);
	assert_ptr_equal(strmap_get(c->by_path, old->path), new);
	controller_table_del(c, old);	/* not its entry any more */
	assert_counts(c, 0, 1, 0, 0);
	container_free(old);
	table_free(c);
}

/* A resync's new table: counted anew, the old records' counts gone. */
static void test_swap(void **state)
{
	struct controller *c = table_new();
	struct container *n[] = { rec(11, UID_A, 111), rec(12, UID_C, 112), rec(13, UID_C, 113) };
	struct strmap *m = strmap_new();

	(void)state;
	assert_int_equal(controller_table_put(c, rec(1, UID_A, 101)), 0);
	assert_int_equal(controller_table_put(c, rec(2, UID_A, 102)), 0);
	assert_int_equal(controller_table_put(c, rec(3, UID_B, 103)), 0);
	assert_counts(c, 2, 1, 0, 0);
	assert_non_null(m);
	for (size_t i = 0; i < 3; i++)
		assert_int_equal(strmap_put(m, n[i]->path, n[i]), 0);
	assert_int_equal(controller_table_swap(c, m), 0);
	assert_counts(c, 1, 0, 2, 0);
	assert_ptr_equal(c->by_path, m);
	controller_table_del(c, n[1]);
	assert_counts(c, 1, 0, 1, 0);
	container_free(n[1]);
	table_free(c);
}

/* Runs put(c, ct) with its k-th malloc failing, for k = 1, 2, ... until
 * it succeeds; each failure must be -ENOMEM with every map as before.
 * Returns how many failed (0 would mean nothing was tried). */
static unsigned put_failing(struct controller *c, struct container *ct)
{
	struct shape before = shape_of(c), after;
	struct container *was = strmap_get(c->by_path, ct->path);
	unsigned k;
	int r;

	for (k = 1;; k++) {
		fail_in = k;
		r = controller_table_put(c, ct);
		fail_in = 0;
		if (r == 0)
			break;
		assert_int_equal(r, -ENOMEM);
		after = shape_of(c);
		assert_shape(&after, &before);
		assert_ptr_equal(strmap_get(c->by_path, ct->path), was);
		assert_null(controller_find_container(c, ct->info.container_id));
		assert_null(controller_find_id(c, ct->cgroup_id));
	}
	return k - 1;
}

/* Whichever allocation fails (a new pod's key, a second container of a
 * pod, a path that was in), the table is as it was; the next put works. */
static void test_failed_put(void **state)
{
	struct controller *c;
	struct container *a1, *a2, *b1, *b2;

	(void)state;
	if (!can_fail_malloc())
		skip();
	c = table_new();
	a1 = rec(1, UID_A, 101);
	a2 = rec(2, UID_A, 102);
	b1 = rec(3, UID_B, 103);
	b2 = rec(4, UID_B, 104);
	/* new pod: the path, the pod's key, the id, the cgroup id */
	assert_int_equal(put_failing(c, a1), 4);
	assert_counts(c, 1, 0, 0, 0);
	/* its second container: the pod's key is there already */
	assert_int_equal(put_failing(c, a2), 3);
	assert_counts(c, 2, 0, 0, 0);
	assert_int_equal(controller_table_put(c, b1), 0);
	/* over b1's path: b1 stays in on every failure */
	snprintf(b2->path, sizeof(b2->path), "%s", b1->path);
	assert_int_equal(put_failing(c, b2), 2);	/* the id, the cgroup id */
	assert_counts(c, 2, 1, 0, 0);
	assert_ptr_equal(strmap_get(c->by_path, b1->path), b2);
	container_free(b1);
	table_free(c);
}

/* A resync whose indexing runs short keeps the old table, counts and
 * all, and by_path stays the caller's. */
static void test_failed_swap(void **state)
{
	struct shape before, after;
	struct controller *c;
	struct container *n[2];
	struct strmap *m;
	unsigned k;
	int r;

	(void)state;
	if (!can_fail_malloc())
		skip();
	c = table_new();
	n[0] = rec(11, UID_B, 111);
	n[1] = rec(12, UID_C, 112);
	m = strmap_new();
	assert_int_equal(controller_table_put(c, rec(1, UID_A, 101)), 0);
	assert_non_null(m);
	for (size_t i = 0; i < 2; i++)
		assert_int_equal(strmap_put(m, n[i]->path, n[i]), 0);
	before = shape_of(c);
	for (k = 1;; k++) {
		fail_in = k;
		r = controller_table_swap(c, m);
		fail_in = 0;
		if (r == 0)
			break;
		assert_int_equal(r, -ENOMEM);
		after = shape_of(c);
		assert_shape(&after, &before);
		assert_int_equal(strmap_count(m), 2);
	}
	assert_int_equal(k - 1, 6);	/* pod, id, cgroup id for each of two */
	assert_counts(c, 0, 1, 1, 0);
	table_free(c);
}

/* A zeroed controller (no table made) counts nothing, and frees. */
static void test_no_table(void **state)
{
	struct controller c = { 0 };

	(void)state;
	assert_int_equal(controller_pod_cgroups(&c, UID_A), 0);
	controller_table_free(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_put_del),
		cmocka_unit_test(test_del_stale_path),
		cmocka_unit_test(test_put_replaces_path),
		cmocka_unit_test(test_swap),
		cmocka_unit_test(test_failed_put),
		cmocka_unit_test(test_failed_swap),
		cmocka_unit_test(test_no_table),
	};

	return cmocka_run_group_tests_name("controller table: the pod index", tests, NULL, NULL);
}
