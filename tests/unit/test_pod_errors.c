// SPDX-License-Identifier: Apache-2.0
/*
 * pod_errors: admission errors kept per namespace/pod/container across
 * kubelet's attempts (new container IDs), until the pod is gone.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>
#include "user/policy/pod_errors.h"

static struct pod_error err(const char *ns, const char *pod, const char *ctr, const char *uid,
			    const char *id, const char *reason)
{
	struct pod_error e = { 0 };

	snprintf(e.namespace_, sizeof(e.namespace_), "%s", ns);
	snprintf(e.pod, sizeof(e.pod), "%s", pod);
	snprintf(e.container, sizeof(e.container), "%s", ctr);
	snprintf(e.pod_uid, sizeof(e.pod_uid), "%s", uid);
	snprintf(e.container_id, sizeof(e.container_id), "%s", id);
	snprintf(e.reason, sizeof(e.reason), "%s", reason);
	snprintf(e.action, sizeof(e.action), "rejected");
	return e;
}

static void test_attempts_by_container_id(void **state)
{
	struct pod_errors *t = pod_errors_new();
	struct pod_error a = err("ns", "web", "app", "u1", "id1", "insufficient_cpus");
	const struct pod_error *got;

	(void)state;
	assert_non_null(t);
	assert_int_equal(pod_errors_note(t, &a, 100.0), 1);
	/* The same container seen again (a resync): not a new attempt. */
	assert_int_equal(pod_errors_note(t, &a, 101.0), 0);
	/* kubelet's restart: a new container ID. */
	snprintf(a.container_id, sizeof(a.container_id), "id2");
	snprintf(a.reason, sizeof(a.reason), "shared_pool_empty");
	assert_int_equal(pod_errors_note(t, &a, 105.5), 1);
	got = pod_errors_get(t, "ns", "web", "app");
	assert_non_null(got);
	assert_int_equal(got->attempts, 2);
	assert_true(got->first == 100.0 && got->last == 105.5);
	assert_string_equal(got->container_id, "id2");
	assert_string_equal(got->reason, "shared_pool_empty");	/* the latest */
	assert_int_equal(pod_errors_count(t), 1);
	pod_errors_free(t);
}

static bool alive_u2(const char *pod_uid, void *ctx)
{
	(void)ctx;
	return strcmp(pod_uid, "u2") == 0;
}

static void test_prune_and_order(void **state)
{
	struct pod_errors *t = pod_errors_new();
	struct pod_error e[] = {
		err("b", "p", "c", "u1", "1", "r"), err("a", "z", "c", "u2", "2", "r"),
		err("a", "p", "d", "u1", "3", "r"), err("a", "p", "c", "u2", "4", "r"),
	};
	const char *want[] = { "a/p/c", "a/p/d", "a/z/c", "b/p/c" };
	const struct pod_error *x;
	size_t it = 0, i = 0;
	char name[700];

	(void)state;
	for (i = 0; i < 4; i++)
		assert_int_equal(pod_errors_note(t, &e[i], 1.0), 1);
	for (i = 0; (x = pod_errors_next(t, &it)); i++) {
		snprintf(name, sizeof(name), "%s/%s/%s", x->namespace_, x->pod, x->container);
		assert_string_equal(name, want[i]);
	}
	assert_int_equal(i, 4);
	assert_int_equal(pod_errors_prune(t, alive_u2, NULL), 2);
	assert_int_equal(pod_errors_count(t), 2);
	assert_null(pod_errors_get(t, "b", "p", "c"));
	assert_non_null(pod_errors_get(t, "a", "z", "c"));
	it = 0;
	assert_non_null(pod_errors_next(t, &it));
	assert_non_null(pod_errors_next(t, &it));
	assert_null(pod_errors_next(t, &it));
	pod_errors_free(t);
}

/* Names come from the pod's bundle: no separator games merge two pods. */
static void test_hostile_names_do_not_collide(void **state)
{
	struct pod_errors *t = pod_errors_new();
	struct pod_error a = err("a\nb", "c", "d", "u1", "1", "r");
	struct pod_error b = err("a", "b\nc", "d", "u2", "2", "r");
	struct pod_error c = err("a1:", "b", "c", "u3", "3", "r");
	struct pod_error d = err("a", "1:b", "c", "u4", "4", "r");

	(void)state;
	assert_int_equal(pod_errors_note(t, &a, 1.0), 1);
	assert_int_equal(pod_errors_note(t, &b, 1.0), 1);
	assert_int_equal(pod_errors_note(t, &c, 1.0), 1);
	assert_int_equal(pod_errors_note(t, &d, 1.0), 1);
	assert_int_equal(pod_errors_count(t), 4);
	assert_string_equal(pod_errors_get(t, "a", "b\nc", "d")->pod_uid, "u2");
	pod_errors_free(t);
}

static bool none_alive(const char *pod_uid, void *ctx)
{
	(void)pod_uid;
	(void)ctx;
	return false;
}

/* More entries than one prune round (64) are all dropped. */
static void test_prune_many(void **state)
{
	struct pod_errors *t = pod_errors_new();
	char pod[16];

	(void)state;
	for (int i = 0; i < 200; i++) {
		snprintf(pod, sizeof(pod), "p%d", i);
		struct pod_error e = err("ns", pod, "c", pod, "id", "r");

		assert_int_equal(pod_errors_note(t, &e, 1.0), 1);
	}
	assert_int_equal(pod_errors_prune(t, none_alive, NULL), 200);
	assert_int_equal(pod_errors_count(t), 0);
	pod_errors_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_attempts_by_container_id),
		cmocka_unit_test(test_prune_and_order),
		cmocka_unit_test(test_hostile_names_do_not_collide),
		cmocka_unit_test(test_prune_many),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
