// SPDX-License-Identifier: Apache-2.0
/*
 * Per-container "decision" in status.json: the rule and the inputs behind
 * a placement, so a person can be told why (cpusetctl explain) without
 * rerunning the policy.
 */
#include <string.h>
#include "snapshot.h"
#include "status_detail.h"
#include "user/topo/topology_json.h"

static void add(json_object *o, const char *k, json_object *v)
{
	json_object_object_add(o, k, v);
}

static void ann(json_object *o, const char *key, bool given, const char *val)
{
	if (given && val && val[0])
		add(o, key, json_object_new_string(val));
}

static json_object *annotations_obj(const struct pod_meta *m)
{
	json_object *o = json_object_new_object();
	const struct pod_policy_ann *a = &m->pod;

	ann(o, "weka.io/cores-ids", true, m->cores_ids);
	/* The class annotation as given: its value, or the one a label overrode. */
	ann(o, META_QOS_CLASS_ANNOTATION, a->qos_from == META_QOS_FROM_ANNOTATION, a->qos_class);
	ann(o, META_QOS_CLASS_ANNOTATION, a->qos_from == META_QOS_FROM_LABEL,
	    a->qos_annotation_ignored);
	ann(o, "resource-status.cpuset", a->has_status_cpuset, a->status_cpuset);
	if (a->has_status_numa)		/* the node ids, as a cpulist */
		add(o, "resource-status.numaNodeResources", cpumask_json(&a->status_numa));
	ann(o, "resource-spec.preferredCPUBindPolicy", true, a->bind_policy);
	ann(o, "resource-spec.preferredCPUExclusivePolicy", true, a->exclusive_policy);
	ann(o, META_PREFER_ISOLATED_ANNOTATION, true, a->prefer_isolated);
	return o;
}

static const char *const qos_from_names[] = {
	[META_QOS_FROM_NONE] = "",
	[META_QOS_FROM_ANNOTATION] = "annotation",
	[META_QOS_FROM_LABEL] = "label",
};

/* The pod labels the policy read (NRI only): the Koordinator class. */
static json_object *labels_obj(const struct pod_policy_ann *a)
{
	json_object *o = json_object_new_object();

	if (a->qos_from == META_QOS_FROM_LABEL)
		add(o, META_QOS_CLASS_ANNOTATION, json_object_new_string(a->qos_class));
	return o;
}

json_object *status_decision_obj(const struct snapshot *s, const struct snapshot_container *ct)
{
	const struct policy_entry *e = ct->entry;
	const struct pod_meta *m = ct->meta;
	bool excl = e && e->kind == CPUSETD_KIND_INTEGER && !ct->d->err;
	json_object *o = json_object_new_object();
	struct cpumask nodes;

	if (!o)
		return NULL;
	if (topo_nodes_of(s->topo, &ct->d->cpus, &nodes) < 0)
		cpumask_zero(&nodes);
	add(o, "rule", json_object_new_string(e ? policy_rule_name(e->rule) : ""));
	add(o, "cpu_quota_us", json_object_new_int64(m->has_cpu_limit ? m->quota_us : -1));
	add(o, "cpu_period_us", json_object_new_int64(m->has_cpu_limit ?
						      (int64_t)m->period_us : 0));
	add(o, "n_cpus", json_object_new_int(excl ? (int)e->n_cpus : 0));
	add(o, "exclusive_policy", json_object_new_string(
		excl ? koord_excl_policy_name(e->exclusive_policy) : ""));
	add(o, "pod_affinity", json_object_new_boolean(e && e->pod_affinity));
	add(o, "numa_nodes", cpumask_json(&nodes));
	/* On a pool part: the NUMA nodes Koordinator bound it to ("" = the
	 * whole pool). */
	add(o, "pool_nodes", cpumask_json(&ct->d->pool_nodes));
	add(o, "system_pool", json_object_new_boolean(ct->d->system_pool));
	add(o, "annotations", annotations_obj(m));
	add(o, "labels", labels_obj(&m->pod));
	/* Where the Koordinator class came from; the label wins over an
	 * annotation that says otherwise (kept in annotations). */
	add(o, "qos_class_from", json_object_new_string(
		m->pod.qos_from <= META_QOS_FROM_LABEL ? qos_from_names[m->pod.qos_from] : ""));
	return o;
}
