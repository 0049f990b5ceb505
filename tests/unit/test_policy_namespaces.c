// SPDX-License-Identifier: Apache-2.0
/*
 * Who may name CPUs (issue 22, H2): namespace patterns for annotations
 * and their reload.
 * Split from test_policy.c by job; helpers in test_policy.h.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "test_policy.h"

/* --- who may name CPUs (issue 22, H2) --- */

static const struct pod_policy_ann status_2 = { .has_status_cpuset = true,
						.status_cpuset = (char *)"2" };

static void test_namespace_patterns(void **state)
{
	static const struct {
		const char *list, *ns;
		bool allowed;
	} cases[] = {
		{ "*", "anything", true }, { "*", "", true }, { "*", NULL, true },
		{ "", "default", false }, { "", "", false }, { NULL, "x", false },
		{ "weka-system", "weka-system", true }, { "weka-system", "weka-system2", false },
		{ "weka-*,kube-system", "weka-a", true }, { "weka-*,kube-system", "kube-system", true },
		{ "weka-*,kube-system", "kube", false }, { "team-[ab]", "team-b", true },
		{ "team-[ab]", "team-c", false }, { "team-[!a]", "team-c", true },
		{ "team-?", "team-10", false }, { "a,b", "a,b", false },
	};
	static const struct {
		const char *list;
		bool all;
	} all[] = {
		{ "*", true }, { "**", true }, { "x,*", true }, { "", false }, { "*-a", false },
		{ "?*", false }, { NULL, false },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		if (policy_namespace_allowed(cases[i].list, cases[i].ns) != cases[i].allowed)
			fail_msg("'%s' in '%s': want %d", cases[i].ns ? cases[i].ns : "(null)",
				 cases[i].list ? cases[i].list : "(null)", cases[i].allowed);
	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
		if (policy_namespace_all(all[i].list) != all[i].all)
			fail_msg("'%s': all want %d", all[i].list ? all[i].list : "(null)", all[i].all);
}

struct ns_case {
	const char *name;
	const char *cores_ns, *status_ns;	/* the two config keys */
	struct policy_request req;
	int rc;
	enum policy_error err;
	const char *in_reason;			/* rc < 0 */
	enum cpusetd_kind kind;			/* shared when refused */
};

static void test_annotation_namespaces(void **state)
{
	const struct ns_case cases[] = {
		{ "cores-ids outside the list", "weka-*,kube-system", "*",
		  in_ns(annotated("a", "2"), "tenant"), -EACCES, POLICY_ERR_ANNOTATION_NOT_ALLOWED,
		  "weka.io/cores-ids is not allowed in namespace \"tenant\" (cores_ids_namespaces)", CPUSETD_KIND_SHARED },
		{ "cores-ids inside the list", "weka-*,kube-system", "*",
		  in_ns(annotated("a", "2"), "weka-a"), 0, 0, NULL, CPUSETD_KIND_ANNOTATED },
		{ "cores-ids, the default *", "*", "*", in_ns(annotated("a", "2"), "tenant"), 0, 0,
		  NULL, CPUSETD_KIND_ANNOTATED },
		{ "cores-ids, no namespace given", "*", "", annotated("a", "2"), 0, 0, NULL,
		  CPUSETD_KIND_ANNOTATED },
		{ "cores-ids, list empty: nobody", "", "*", in_ns(annotated("a", "2"), ""),
		  -EACCES, POLICY_ERR_ANNOTATION_NOT_ALLOWED, "namespace \"\"", CPUSETD_KIND_SHARED },
		/* the namespace is asked first: no syntax error for an outsider */
		{ "malformed cores-ids outside", "ok", "*", in_ns(annotated("a", "x"), "tenant"),
		  -EACCES, POLICY_ERR_ANNOTATION_NOT_ALLOWED, "cores-ids", CPUSETD_KIND_SHARED },
		{ "cores-ids of a Guaranteed integer pod outside", "ok", "*",
		  in_ns((struct policy_request){ .container_id = "a", .name = "a", .cores_ids = "2",
						 .qos = POD_QOS_GUARANTEED, .quota_us = 100000,
						 .period_us = 100000 }, "tenant"),
		  -EACCES, POLICY_ERR_ANNOTATION_NOT_ALLOWED, "cores_ids_namespaces", CPUSETD_KIND_SHARED },
		{ "resource-status outside", "*", "koord-*", in_ns(scheduled("s", &status_2), "tenant"),
		  -EACCES, POLICY_ERR_ANNOTATION_NOT_ALLOWED,
		  "scheduling.koordinator.sh/resource-status is not allowed in namespace \"tenant\" "
		  "(resource_status_namespaces)", CPUSETD_KIND_SHARED },
		{ "resource-status inside", "", "koord-*", in_ns(scheduled("s", &status_2), "koord-1"),
		  0, 0, NULL, CPUSETD_KIND_INTEGER },
		{ "resource-status: the keys are apart", "tenant", "",
		  in_ns(scheduled("s", &status_2), "tenant"), -EACCES,
		  POLICY_ERR_ANNOTATION_NOT_ALLOWED, "resource_status_namespaces", CPUSETD_KIND_SHARED },
		/* a container found running is admitted again: refused all the same */
		{ "running cores-ids outside", "weka-*", "*",
		  running(in_ns(annotated("a", "2"), "tenant")), -EACCES,
		  POLICY_ERR_ANNOTATION_NOT_ALLOWED, "tenant", CPUSETD_KIND_SHARED },
		{ "sandbox of an annotated pod outside", "weka-*", "",
		  in_ns((struct policy_request){ .container_id = "sb", .sandbox = true,
						 .cores_ids = "2", .qos = POD_QOS_BURSTABLE,
						 .pod = &status_2 }, "tenant"),
		  0, 0, NULL, CPUSETD_KIND_SHARED },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct ns_case *c = &cases[i];
		struct fixture f = fx(1, 4, 1, POLICY_ON_ERROR_REJECT);
		struct policy_config cfg = { 0 };
		struct cpumask before, after;
		struct policy_decision d;
		int r;

		snprintf(cfg.cores_ids_namespaces, sizeof(cfg.cores_ids_namespaces), "%s",
			 c->cores_ns);
		snprintf(cfg.resource_status_namespaces, sizeof(cfg.resource_status_namespaces),
			 "%s", c->status_ns);
		policy_set_namespaces(f.p, &cfg);
		policy_reserved(f.p, &before);
		r = policy_admit(f.p, &c->req, &d);
		if (r != c->rc || d.err != c->err)
			fail_msg("%s: rc %d err %d (%s), want rc %d err %d", c->name, r, d.err,
				 d.reason, c->rc, c->err);
		if (r < 0) {
			if (!strstr(d.reason, c->in_reason))
				fail_msg("%s: reason \"%s\" lacks \"%s\"", c->name, d.reason,
					 c->in_reason);
			assert_string_equal(policy_error_name(d.err), "annotation_not_allowed");
			assert_true(d.reject);
			assert_false(d.err_hotplug);
			policy_reserved(f.p, &after);
			assert_true(cpumask_equal(&before, &after));	/* took nothing */
		}
		if (d.kind != c->kind)
			fail_msg("%s: kind %d, want %d", c->name, d.kind, c->kind);
		fx_free(&f);
	}
}

/* A reload narrows the lists for admissions from then on; a container
 * already recorded keeps its decision until it is admitted again (the
 * resync after a reload does that: "running cores-ids outside" above). */
static void test_namespaces_reload(void **state)
{
	struct fixture f = fx(1, 4, 1, POLICY_ON_ERROR_REJECT);
	struct policy_config narrow = { .cores_ids_namespaces = "weka-*",
					.resource_status_namespaces = "*" };
	struct policy_request a = in_ns(annotated("a", "2"), "tenant"),
			      b = in_ns(annotated("b", "3"), "tenant");
	struct policy_decision d;

	(void)state;
	assert_int_equal(policy_admit(f.p, &a, &d), 0);
	policy_set_namespaces(f.p, &narrow);
	assert_int_equal(policy_admit(f.p, &a, &d), 0);	/* known: unchanged */
	assert_int_equal(d.kind, CPUSETD_KIND_ANNOTATED);
	assert_int_equal(policy_admit(f.p, &b, &d), -EACCES);
	assert_true(policy_release(f.p, "a"));
	assert_int_equal(policy_admit(f.p, &a, &d), -EACCES);	/* admitted again */
	assert_pool(f.p, "0-3");
	fx_free(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_namespace_patterns),
		cmocka_unit_test(test_annotation_namespaces),
		cmocka_unit_test(test_namespaces_reload),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
