/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What meta_parse_text must hand back (meta.h), shared by the bundle and
 * the annotation harnesses, and the calls every parsed pod_meta must
 * survive (copy, inherit, name, release).
 */
#ifndef CPUSETD_FUZZ_META_H
#define CPUSETD_FUZZ_META_H

#include <stdbool.h>
#include "fuzz.h"
#include "user/meta/meta.h"

static inline void fuzz_check_cpulist_text(const char *s)
{
	FUZZ_CHECK(!s || strlen(s) <= META_MAX_CPULIST_BYTES);
}

static inline void fuzz_check_pod_policy(const struct pod_policy_ann *a)
{
	FUZZ_CHECK_STR(a->qos_class);
	FUZZ_CHECK_STR(a->qos_annotation_ignored);
	/* The class has a source; an overridden annotation only under a label. */
	FUZZ_CHECK(a->qos_from <= META_QOS_FROM_LABEL);
	FUZZ_CHECK(!a->qos_class[0] || a->qos_from != META_QOS_FROM_NONE);
	FUZZ_CHECK(!a->qos_annotation_ignored[0] || a->qos_from == META_QOS_FROM_LABEL);
	FUZZ_CHECK(!a->qos_annotation_ignored[0] ||
		   strcmp(a->qos_annotation_ignored, a->qos_class) != 0);
	FUZZ_CHECK_STR(a->bind_policy);
	FUZZ_CHECK_STR(a->exclusive_policy);
	FUZZ_CHECK_STR(a->prefer_isolated);
	FUZZ_CHECK_STR(a->error);
	/* An empty cpuset is "no allocation", never a wish for no CPUs. */
	FUZZ_CHECK(a->has_status_cpuset == (a->status_cpuset != NULL));
	FUZZ_CHECK(!a->status_cpuset || a->status_cpuset[0]);
	fuzz_check_cpulist_text(a->status_cpuset);
	/* numaNodeResources: node ids only when given, none past the limit */
	FUZZ_CHECK(a->has_status_numa == !cpumask_empty(&a->status_numa));
	FUZZ_CHECK(cpumask_next(&a->status_numa, META_MAX_NUMA_NODE + 1) < 0);
}

static inline bool fuzz_same_text(const char *a, const char *b)
{
	return a == b || (a && b && strcmp(a, b) == 0);
}

/* meta_copy is deep, meta_inherit_pod gives a container the pod's
 * annotations, meta_name is one clean line, meta_release zeroes. */
static inline void fuzz_exercise_pod_meta(struct pod_meta *m)
{
	struct pod_meta copy, ct = { .quota_us = -1 };
	char name[600];

	if (meta_copy(&copy, m) == 0) {
		FUZZ_CHECK(fuzz_same_text(copy.cores_ids, m->cores_ids));
		FUZZ_CHECK(!copy.cores_ids || copy.cores_ids != m->cores_ids);
		FUZZ_CHECK(fuzz_same_text(copy.pod.status_cpuset, m->pod.status_cpuset));
		FUZZ_CHECK(copy.pod.has_status_numa == m->pod.has_status_numa &&
			   cpumask_equal(&copy.pod.status_numa, &m->pod.status_numa));
		FUZZ_CHECK(strcmp(copy.error, m->error) == 0 && copy.invalid == m->invalid);
		meta_release(&copy);
	}
	if (meta_inherit_pod(&ct, m) == 0 && !m->sandbox) {
		FUZZ_CHECK(fuzz_same_text(ct.cores_ids, m->cores_ids));
		fuzz_check_pod_policy(&ct.pod);
	}
	meta_release(&ct);
	meta_name(m, "0123456789abcdef", name, sizeof(name));
	for (const char *p = name; *p; p++)
		FUZZ_CHECK((unsigned char)*p >= 0x20 && *p != 0x7f);
	meta_release(m);
	FUZZ_CHECK(!m->cores_ids && !m->pod.status_cpuset && m->quota_us == -1 &&
		   m->invalid == META_VALID && !m->from_bundle);
}

/* r and *m from meta_parse_text; releases *m. */
static inline void fuzz_check_pod_meta(int r, struct pod_meta *m)
{
	FUZZ_CHECK(r == 0 || r == -ENOMEM);
	if (r < 0)
		return;
	FUZZ_CHECK(m->invalid == META_VALID || m->invalid == META_INVALID_BUNDLE ||
		   m->invalid == META_INVALID_ANNOTATION);
	FUZZ_CHECK_STR(m->error);
	FUZZ_CHECK((m->invalid == META_VALID) == !m->error[0]);
	if (m->invalid == META_INVALID_BUNDLE) {
		/* Nothing from an unusable bundle may be used. */
		FUZZ_CHECK(!m->from_bundle && !m->cores_ids && !m->pod.status_cpuset &&
			   !m->pod.has_status_numa);
		FUZZ_CHECK(!m->namespace_[0] && !m->pod_name[0] && !m->container_name[0] &&
			   !m->pod_uid[0] && !m->termination_log && !m->pod.qos_class[0]);
		FUZZ_CHECK(!m->has_cpu_limit && m->quota_us == -1);
	} else
		FUZZ_CHECK(m->from_bundle);
	FUZZ_CHECK_STR(m->namespace_);
	FUZZ_CHECK_STR(m->pod_name);
	FUZZ_CHECK_STR(m->container_name);
	FUZZ_CHECK_STR(m->pod_uid);
	FUZZ_CHECK_STR(m->sandbox_id);
	FUZZ_CHECK_STR(m->runtime_cpus);
	FUZZ_CHECK_STR(m->cgroups_path);
	if (m->termination_log)
		FUZZ_CHECK(strnlen(m->termination_log, META_MOUNT_SOURCE_MAX) < META_MOUNT_SOURCE_MAX);
	fuzz_check_cpulist_text(m->cores_ids);
	FUZZ_CHECK(!m->runtime_cpus[0] || m->runtime_sets_cpus);
	FUZZ_CHECK(m->quota_us == -1 || m->quota_us > 0);
	FUZZ_CHECK(m->has_cpu_limit == (m->quota_us > 0 && m->period_us > 0));
	fuzz_check_pod_policy(&m->pod);
	fuzz_exercise_pod_meta(m);
}

#endif
