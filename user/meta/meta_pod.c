// SPDX-License-Identifier: Apache-2.0
/*
 * Pod policy annotations (meta.h struct pod_policy_ann): Koordinator's QoS
 * class and scheduler-made allocation (the Koordinator proposal "API" section:
 * koordinator.sh/qosClass, scheduling.koordinator.sh/resource-status and
 * resource-spec, whose values are JSON serialised into a string) and
 * cpusetd's own opt-in for isolated CPUs.
 *
 * A malformed value is recorded, not returned: the bundle stays readable
 * (identity, limits, termination path are still needed to report the
 * error on the right pod), and the policy refuses the container naming
 * the annotation.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "meta_internal.h"

static void bad(struct pod_policy_ann *a, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void bad(struct pod_policy_ann *a, const char *fmt, ...)
{
	va_list ap;

	if (a->error[0])
		return;		/* the first problem is the one reported */
	va_start(ap, fmt);
	vsnprintf(a->error, sizeof(a->error), fmt, ap);
	va_end(ap);
}

/* A plain string annotation into dst, unless already set. */
static void plain(struct json_object *ann, const char *key, char *dst, size_t size,
		  struct pod_policy_ann *a)
{
	char tmp[64];
	int r;

	if (dst[0])
		return;
	r = meta_get_string(ann, key, tmp, size < sizeof(tmp) ? size : sizeof(tmp));
	if (r < 0)
		bad(a, "%s: not a string of at most %zu bytes", key, size - 1);
	else if (r > 0)
		memcpy(dst, tmp, strlen(tmp) + 1);
}

/* The JSON object serialised in the string annotation key: 1 and *ret
 * (caller puts it), 0 absent, -1 malformed (recorded), -ENOMEM. */
static int inner_object(struct json_object *ann, const char *key, struct json_object **ret,
			struct pod_policy_ann *a)
{
	struct json_object *v, *o = NULL;
	int r = meta_member(ann, key, json_type_string, &v);
	char why[160] = "it is not a string";

	if (r == 0)
		return 0;
	if (r > 0)
		r = meta_parse_json(json_object_get_string(v),
				    (size_t)json_object_get_string_len(v), &o, why, sizeof(why));
	if (r == -ENOMEM)
		return r;
	if (r < 0 || !json_object_is_type(o, json_type_object)) {
		json_object_put(o);
		bad(a, "%s: not a JSON object in a string: %s", key,
		    r < 0 ? why : "another JSON type inside");
		return -1;
	}
	*ret = o;
	return 1;
}

/* The resource names that make a numaNodeResources entry a CPU one
 * (koordlet rule.go getContainerCPUSet: Resources.Cpu() not zero, or
 * util.GetBatchMilliCPUFromResourceList > 0). */
#define NUMA_CPU	"cpu"
#define NUMA_BATCH_CPU	"kubernetes.io/batch-cpu"

/*
 * A Kubernetes quantity ("2", "500m", "1.5", "2k", "1e3", "-1"), as JSON
 * text or a JSON number: 1 when its value is not zero (positive when
 * positive_only), 0 when it is (or is negative and positive_only), -1
 * when it is not a quantity. Only the sign and the mantissa's digits
 * decide; the suffix is checked for shape, not scaled (a suffix never
 * turns zero into non-zero nor the reverse).
 */
static int quantity_nonzero(struct json_object *v, bool positive_only)
{
	const char *s, *p;
	bool neg = false, digit = false, nonzero = false;

	if (json_object_is_type(v, json_type_int) || json_object_is_type(v, json_type_double)) {
		double d = json_object_get_double(v);

		return positive_only ? d > 0 : d != 0;
	}
	if (!json_object_is_type(v, json_type_string))
		return -1;
	p = s = json_object_get_string(v);
	if (*p == '+' || *p == '-')
		neg = *p++ == '-';
	for (bool dot = false; (*p >= '0' && *p <= '9') || (*p == '.' && !dot); p++) {
		if (*p == '.') {
			dot = true;
			continue;
		}
		digit = true;
		nonzero |= *p != '0';
	}
	if (!digit)
		return -1;
	/* suffix: none, m k M G T P E, Ki Mi Gi Ti Pi Ei, or e/E[+-]digits */
	if (*p == 'e' || *p == 'E') {
		p++;
		if (*p == '+' || *p == '-')
			p++;
		if (!(*p >= '0' && *p <= '9'))
			return -1;
		while (*p >= '0' && *p <= '9')
			p++;
	} else if (*p == 'K' && p[1] == 'i') {
		p += 2;
	} else if (*p && strchr("mkMGTPE", *p)) {
		p++;
		if (*p == 'i' && p[-1] != 'm' && p[-1] != 'k')
			p++;
	}
	if (*p || p - s > 64)
		return -1;
	return nonzero && !(positive_only && neg);
}

/* Whether the entry's "resources" (absent, null or an object) hold CPU:
 * 1 yes, 0 no, -1 a CPU value that is not a quantity. */
static int entry_has_cpu(struct json_object *res)
{
	struct json_object *v;
	int r = 0, b = 0;

	if (!res)
		return 0;
	if (json_object_object_get_ex(res, NUMA_CPU, &v) && !json_object_is_type(v, json_type_null))
		r = quantity_nonzero(v, false);
	if (json_object_object_get_ex(res, NUMA_BATCH_CPU, &v) &&
	    !json_object_is_type(v, json_type_null))
		b = quantity_nonzero(v, true);
	if (r < 0 || b < 0)
		return -1;
	return r || b;
}

/*
 * resource-status "numaNodeResources" (Koordinator apis/extension
 * NUMANodeResource: {"node": int32, "resources": ResourceList}) into
 * a->status_numa. Absent, null or [] = not given. Anything else that is
 * not an array of at most META_MAX_NUMA_ENTRIES objects, each with an
 * integer "node" in 0..META_MAX_NUMA_NODE and "resources" absent, null
 * or an object whose "cpu" and "kubernetes.io/batch-cpu" are quantities,
 * is recorded as malformed, naming the entry.
 *
 * As koordlet (rule.go getContainerCPUSet, Koordinator a7a1b76): the pod
 * is NUMA-bound only when some entry holds CPU ("cpu" not zero, or
 * batch-cpu above zero); then every entry's node counts. Entries of
 * memory or hugepages alone ("no cpu numa allocation") bind nothing:
 * the pod gets its whole pool, a SYSTEM pod its set.
 */
static void numa_nodes(struct json_object *o, struct pod_policy_ann *a)
{
	static const char key[] = "numaNodeResources";
	struct json_object *arr = NULL, *e, *v;
	struct cpumask nodes = { 0 };
	int r = meta_member(o, key, json_type_array, &arr);
	bool cpu = false;
	size_t n;
	int64_t node;

	if (r < 0) {
		bad(a, "%s: \"%s\" is not an array", META_RESOURCE_STATUS_ANNOTATION, key);
		return;
	}
	if (r == 0)
		return;
	n = json_object_array_length(arr);
	if (n > META_MAX_NUMA_ENTRIES) {
		bad(a, "%s: \"%s\" has %zu entries, more than %u", META_RESOURCE_STATUS_ANNOTATION,
		    key, n, META_MAX_NUMA_ENTRIES);
		return;
	}
	for (size_t i = 0; i < n; i++) {
		e = json_object_array_get_idx(arr, i);
		if (!json_object_is_type(e, json_type_object)) {
			bad(a, "%s: \"%s\"[%zu] is not an object", META_RESOURCE_STATUS_ANNOTATION,
			    key, i);
			return;
		}
		/* json-c reads a fraction or an exponent as a double: only
		 * a plain integer is a node id. */
		if (meta_member(e, "node", json_type_int, &v) <= 0 ||
		    (node = json_object_get_int64(v)) < 0 || node > META_MAX_NUMA_NODE) {
			bad(a, "%s: \"%s\"[%zu].node is not an integer 0-%u",
			    META_RESOURCE_STATUS_ANNOTATION, key, i, META_MAX_NUMA_NODE);
			return;
		}
		r = meta_member(e, "resources", json_type_object, &v);
		if (r < 0) {
			bad(a, "%s: \"%s\"[%zu].resources is not an object",
			    META_RESOURCE_STATUS_ANNOTATION, key, i);
			return;
		}
		r = entry_has_cpu(r > 0 ? v : NULL);
		if (r < 0) {
			bad(a, "%s: \"%s\"[%zu].resources: %s or %s is not a quantity",
			    META_RESOURCE_STATUS_ANNOTATION, key, i, NUMA_CPU, NUMA_BATCH_CPU);
			return;
		}
		cpu |= r > 0;
		cpumask_set(&nodes, (unsigned)node);
	}
	if (!cpu)
		return;		/* no CPU on any node: not NUMA-bound */
	a->status_numa = nodes;
	a->has_status_numa = true;
}

static int resource_status(struct json_object *ann, struct pod_policy_ann *a)
{
	struct json_object *o;
	int r;

	if (a->has_status_cpuset || a->has_status_numa)
		return 0;	/* the first source wins (meta.h) */
	r = inner_object(ann, META_RESOURCE_STATUS_ANNOTATION, &o, a);
	if (r <= 0)
		return r == -ENOMEM ? r : 0;
	numa_nodes(o, a);
	r = meta_dup_string(o, "cpuset", META_MAX_CPULIST_BYTES, &a->status_cpuset);
	json_object_put(o);
	if (r == -ENOMEM)
		return r;
	if (r < 0)
		bad(a, "%s: \"cpuset\" is not a string of at most %u bytes",
		    META_RESOURCE_STATUS_ANNOTATION, META_MAX_CPULIST_BYTES);
	/* An empty cpuset means the scheduler made no CPU allocation. */
	a->has_status_cpuset = r > 0 && a->status_cpuset[0];
	if (!a->has_status_cpuset) {
		free(a->status_cpuset);
		a->status_cpuset = NULL;
	}
	return 0;
}

static int resource_spec(struct json_object *ann, struct pod_policy_ann *a)
{
	struct json_object *o;
	int r;

	r = inner_object(ann, META_RESOURCE_SPEC_ANNOTATION, &o, a);
	if (r <= 0)
		return r == -ENOMEM ? r : 0;
	plain(o, "preferredCPUBindPolicy", a->bind_policy, sizeof(a->bind_policy), a);
	plain(o, "preferredCPUExclusivePolicy", a->exclusive_policy,
	      sizeof(a->exclusive_policy), a);
	json_object_put(o);
	return 0;
}

int meta_parse_pod_policy(struct json_object *ann, struct pod_policy_ann *ret)
{
	int r;

	plain(ann, META_QOS_CLASS_ANNOTATION, ret->qos_class, sizeof(ret->qos_class), ret);
	if (ret->qos_class[0])
		ret->qos_from = META_QOS_FROM_ANNOTATION;
	plain(ann, META_PREFER_ISOLATED_ANNOTATION, ret->prefer_isolated,
	      sizeof(ret->prefer_isolated), ret);
	r = resource_status(ann, ret);
	if (r < 0)
		return r;
	return resource_spec(ann, ret);
}

void meta_pod_labels(const struct meta_annotation *l, size_t n, struct pod_policy_ann *a)
{
	static const char key[] = META_QOS_CLASS_ANNOTATION;
	const struct meta_annotation *q = NULL;

	for (size_t i = 0; i < n; i++)	/* the last of equal keys wins */
		if (l[i].key_len == sizeof(key) - 1 && memcmp(l[i].key, key, sizeof(key) - 1) == 0)
			q = &l[i];
	if (!q)
		return;
	if (q->value_len >= sizeof(a->qos_class) ||
	    (q->value_len && memchr(q->value, '\0', q->value_len))) {
		bad(a, "%s label: not a string of at most %zu bytes", key,
		    sizeof(a->qos_class) - 1);
		return;
	}
	if (a->qos_from == META_QOS_FROM_ANNOTATION &&
	    (strlen(a->qos_class) != q->value_len ||
	     memcmp(a->qos_class, q->value, q->value_len) != 0))
		memcpy(a->qos_annotation_ignored, a->qos_class, sizeof(a->qos_class));
	if (q->value_len)
		memcpy(a->qos_class, q->value, q->value_len);
	a->qos_class[q->value_len] = '\0';
	a->qos_from = META_QOS_FROM_LABEL;
}
