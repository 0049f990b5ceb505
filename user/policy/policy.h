/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The allocation rules (pure: data in, data out, no I/O).
 *
 * Source: the PRD (user/README.md "Sources") §2, §3.1, §3.3, §3.4 and §6,
 * restated in user/README.md "The rules":
 *   annotated  pod sandbox carries weka.io/cores-ids: exactly those CPUs,
 *              overlap between annotated pods allowed (annot_ref[cpu]).
 *   integer    Guaranteed QoS and quota % period == 0: N = quota/period
 *              exclusive CPUs per container from online − reserved
 *              (int_owner[cpu]).
 *   shared     everything else and every sandbox: the shared pool,
 *              online − reserved.
 * Reserved = annotated ∪ integer CPUs. mems of annotated and integer
 * containers = union of the NUMA nodes of their CPUs; shared mems are
 * left alone. An admission that would leave fewer than min_shared_cpus
 * CPUs in the shared pool is refused.
 *
 * Beyond the PRD (user/README.md "Beyond the rule book"):
 *   Koordinator QoS (koordinator.sh/qosClass, the Koordinator proposal):
 *              LSE exclusive, never shared; LSR exclusive but usable by BE;
 *              LS shared pool; BE the BE pool = online − isolated −
 *              annotated − LSE CPUs; SYSTEM shared pool. Integer pods
 *              without a class are LSE, or LSR when configured.
 *   scheduled  resource-status {"cpuset"}: exactly those CPUs, exclusive.
 *   isolated   kernel isolated CPUs are never in a pool; an integer
 *              container gets them only when it opts in.
 *   reserved_cpus (kubelet reservedSystemCPUs) stay in the shared pool and
 *              are never exclusive, nor in an annotated or scheduled set
 *              (cpu_reserved).
 * Who may ask for a fixed set (issue 22, H2): a pod's annotations are
 * untrusted, so weka.io/cores-ids and resource-status are honoured only in
 * the namespaces the node's config names (cores_ids_namespaces,
 * resource_status_namespaces); elsewhere annotation_not_allowed.
 * Pod-scope rooms (policy_pods.c) are held against fixed sets too: a
 * scheduled set may not take one, an annotated set only when the room can
 * be chosen again in full elsewhere in its pod's NUMA mask.
 * How integer CPUs are chosen (Koordinator or kubelet-compatible, NUMA
 * alignment) is policy_alloc.h.
 */
#ifndef CPUSETD_POLICY_H
#define CPUSETD_POLICY_H

#ifdef __bpf__
#error "user-space header: BPF programs share only maps/cpusetd.h"
#endif

#include <stdbool.h>
#include <stdint.h>
#include "user/base/qos.h"
#include "user/base/cpumask.h"
#include "user/meta/meta.h"
#include "policy_alloc.h"
#include "user/topo/topology.h"

/* Admission errors; policy_error_name() gives the metric/status label. */
enum policy_error {
	POLICY_OK = 0,
	POLICY_ERR_INVALID_ANNOTATION,	/* cores-ids is not a cpulist */
	POLICY_ERR_INVALID_BUNDLE,	/* config.json unusable (meta.h) */
	POLICY_ERR_CPU_OFFLINE,		/* annotated CPU not online */
	POLICY_ERR_CPU_EXCLUSIVE,	/* annotated CPU owned by an integer container */
	POLICY_ERR_INSUFFICIENT_CPUS,	/* integer: fewer free CPUs than N */
	POLICY_ERR_SHARED_POOL_EMPTY,	/* pool would drop below min_shared_cpus */
	POLICY_ERR_NUMA_UNRESOLVED,	/* a CPU's NUMA node is unknown */
	POLICY_ERR_TOPOLOGY_AFFINITY,	/* NUMA alignment policy refused it */
	POLICY_ERR_SMT_ALIGNMENT,	/* not whole physical cores (FullPCPUsOnly) */
	POLICY_ERR_RESIZE_BELOW_BASELINE,	/* shrink below the admitted CPUs */
	POLICY_ERR_ANNOTATION_NOT_ALLOWED,	/* cores-ids / resource-status outside
						 * the namespaces the config allows */
	POLICY_ERR_CPU_RESERVED,	/* a fixed set names a reserved_cpus CPU */
	POLICY_ERR__COUNT,
};

/* Room for a namespace pattern list, and the most patterns in one
 * (like isolate_host_skip: config.h CONFIG_MAX_ISOLATE_SKIP). */
#define POLICY_NS_LIST_MAX	1024
#define POLICY_NS_MAX_PATTERNS	16

enum policy_on_error {
	POLICY_ON_ERROR_REJECT = 0,	/* kill the container, write the reason */
	POLICY_ON_ERROR_SHARED,		/* keep it on the shared pool */
};

/* Which rule classified a container (first match wins, policy_classify.c);
 * policy_rule_name() gives the status.json label. */
enum policy_rule {
	POLICY_RULE_DEFAULT_SHARED = 0,	/* PRD: everything else is shared */
	POLICY_RULE_SANDBOX,		/* pause containers are always shared */
	POLICY_RULE_INVALID_ANNOTATION,	/* a pod annotation could not be used */
	POLICY_RULE_INVALID_BUNDLE,	/* the bundle config.json could not be used */
	POLICY_RULE_CORES_IDS,		/* PRD annotated: weka.io/cores-ids */
	POLICY_RULE_RESOURCE_STATUS,	/* Koordinator scheduler-made cpuset */
	POLICY_RULE_QOS_CLASS,		/* koordinator.sh/qosClass BE/LS/SYSTEM */
	POLICY_RULE_INTEGER,		/* PRD integer: Guaranteed, whole CPUs */
	POLICY_RULE_BESTEFFORT_POOL,	/* besteffort_pool = be */
	POLICY_RULE__COUNT,
};

/* Koordinator QoS class (koordinator.sh/qosClass); NONE = not given. */
enum policy_qos {
	POLICY_QOS_NONE = 0,
	POLICY_QOS_LSE,
	POLICY_QOS_LSR,
	POLICY_QOS_LS,
	POLICY_QOS_BE,
	POLICY_QOS_SYSTEM,
};

struct policy_config {
	unsigned min_shared_cpus;	/* >= 1 */
	enum policy_on_error on_error;
	bool besteffort_be_pool;	/* BestEffort pods without a class: BE pool */
	/* A BE pod whose resource-status names NUMA nodes runs on the BE
	 * pool's part on those nodes (koordlet's BECPUManager); false: the
	 * whole BE pool. Shared pods always follow their nodes. */
	bool be_numa_aware;
	enum policy_qos integer_qos;	/* LSE (default) or LSR */
	bool prefer_isolated;		/* every integer container opts in */
	struct cpumask reserved_cpus;	/* kubelet reservedSystemCPUs */
	/* Koordinator SYSTEM QoS pods' own CPUs (the node's
	 * system-qos-resource): out of the shared pool, never exclusive,
	 * never in a fixed set; empty: SYSTEM pods use the shared pool. */
	struct cpumask system_qos_cpus;
	struct policy_alloc_config alloc;
	/* Namespaces whose pods may use weka.io/cores-ids and resource-status:
	 * comma-separated fnmatch(3) patterns ("*" every namespace, "" none;
	 * policy_namespace_allowed). */
	char cores_ids_namespaces[POLICY_NS_LIST_MAX];
	char resource_status_namespaces[POLICY_NS_LIST_MAX];
};

/* What the policy needs to know about one container. */
struct policy_request {
	const char *container_id;	/* key of byCID; non-empty */
	const char *pod_uid;		/* may be "" */
	const char *name;		/* "namespace/pod/container" for messages */
	const char *namespace_;		/* the pod's namespace (NULL = ""), for
					 * cores_ids_namespaces and
					 * resource_status_namespaces */
	bool sandbox;			/* pause container: always shared */
	enum pod_qos qos;
	const char *cores_ids;		/* weka.io/cores-ids value, or NULL */
	/* The bundle or a known annotation is malformed (meta.h): refused
	 * as invalid_bundle / invalid_annotation with invalid_why. */
	enum meta_invalid invalid;
	const char *invalid_why;
	int64_t quota_us;		/* CFS quota, -1 = unlimited */
	uint64_t period_us;		/* CFS period, 0 = unknown */
	const struct pod_policy_ann *pod;	/* Koordinator/cpusetd annotations, or NULL */
	unsigned pod_cpus;		/* whole pod's integer CPUs (pod scope), 0 unknown */
	const struct cpumask *kubelet_cpus;	/* kubelet checkpoint's CPUs, or NULL */
	/* Found running (recovery): CPUs offline are hotplug, not an
	 * admission error. A fixed set with some CPUs online is kept (with
	 * the cpu_offline error), an integer set whose online part is
	 * 1..N CPUs is kept and refilled (policy_hotplug.h). */
	bool running;
};

struct policy_decision {
	enum cpusetd_kind kind;		/* what it is placed as */
	struct cpumask cpus;		/* shared: the pool now; only online CPUs */
	struct cpumask mems;		/* empty for shared: leave as is; a pool
					 * part: its NUMA nodes */
	/* Shared or BE on a part of its pool: the NUMA node ids Koordinator's
	 * resource-status numaNodeResources named (cpus = the pool on those
	 * nodes); empty = the whole pool. */
	struct cpumask pool_nodes;
	/* A Koordinator SYSTEM pod with system_qos_cpus set: kind shared,
	 * cpus = system_qos_cpus (online), mems left as they are. */
	bool system_pool;
	uint8_t exclusive_policy;	/* integer: enum koord_excl_policy given */
	enum policy_error err;
	bool reject;			/* err, on_error=reject, not a sandbox */
	bool err_hotplug;		/* err came from CPU hotplug, after
					 * admission: the placement stands */
	char reason[256];		/* set when err; raw text that may quote pod
					 * values: escape it where it is written
					 * (log_escape) */
	/* policy_admit / policy_resize: this call changed the shared or BE
	 * pool, so every pooled container must follow. */
	bool pools_changed;
};

/* One byCID record. Owned by the policy; valid until released. */
struct policy_entry {
	char container_id[72];
	char pod_uid[64];
	char name[320];
	enum cpusetd_kind kind;
	struct cpumask cpus;		/* exclusive/annotated CPUs; empty for shared */
	struct cpumask mems;		/* exclusive: their nodes; a pool part:
					 * pool_nodes */
	struct cpumask pool_nodes;	/* pooled: its part's NUMA nodes, or empty
					 * for the whole pool (policy_decision) */
	bool system_pool;		/* on system_qos_cpus (policy_decision) */
	struct cpumask baseline;	/* integer: the CPUs it was admitted (or
					 * adopted) with; a resize keeps them */
	unsigned n_cpus;		/* integer: N requested; 0 for scheduled */
	enum policy_qos qos;		/* effective class (LSE/LSR for exclusive) */
	enum policy_rule rule;		/* what classified it */
	uint8_t exclusive_policy;	/* enum koord_excl_policy it was given */
	bool pod_affinity;		/* counted in its pod's NUMA affinity */
	bool sandbox;
	enum policy_error err;
	char reason[256];
	/* CPU hotplug (policy_hotplug.h): integer, the CPUs it lost while
	 * short of N (taken back first); fixed sets, listed CPUs offline. */
	struct cpumask offline;
	bool err_hotplug;		/* err set by hotplug: never a rejection */
};

struct policy;

/*
 * Creates an empty book-keeping for topo (borrowed; must outlive the
 * policy). Returns 0 and *ret, -EINVAL for min_shared_cpus == 0, -ENOMEM.
 */
int policy_new(const struct topology *topo, const struct policy_config *cfg,
	       struct policy **ret);
void policy_free(struct policy *p);

/* cores_ids_namespaces and resource_status_namespaces of cfg for the
 * admissions from now on (a SIGHUP reload). Running containers keep their
 * decision until they are admitted again (the resync after the reload).
 * Cannot fail. */
void policy_set_namespaces(struct policy *p, const struct policy_config *cfg);

/*
 * Whether namespace ns ("" or NULL: none given) matches one of the
 * comma-separated fnmatch(3) patterns of list (flags 0; "" matches
 * nothing). Pure. Cannot fail.
 */
bool policy_namespace_allowed(const char *list, const char *ns);

/* Whether list allows every namespace: one of its patterns is only '*'s. */
bool policy_namespace_all(const char *list);

/* on_error for the admissions from now on (a SIGHUP reload,
 * controller_reconfigure); containers already decided keep their
 * decision. Cannot fail. */
void policy_set_on_error(struct policy *p, enum policy_on_error on_error);

/*
 * Classifies req and allocates its CPUs, recording it in byCID.
 * A container ID already present returns its recorded decision unchanged.
 * On an admission error the container is recorded as shared with the error
 * (visible in status) and the decision says whether to reject it.
 * Returns 0 placed; on an admission error the negative errno that matches
 * (-EINVAL syntax, -ENXIO offline/NUMA, -EBUSY exclusive conflict or a
 * reserved_cpus CPU, -ENOSPC insufficient or pool empty, -EDOM not whole
 * cores, -EXDEV NUMA alignment refused, -EACCES an annotation the pod's
 * namespace may not use) with *ret filled; -ENOMEM (nothing recorded).
 */
int policy_admit(struct policy *p, const struct policy_request *req,
		 struct policy_decision *ret);

/*
 * Like policy_admit, for a container found running at recovery: an integer
 * container keeps the CPUs kubelet's checkpoint gave it (req->kubelet_cpus,
 * takeover) or else its current set, when that set has exactly N online
 * CPUs, none reserved by anyone else nor in reserved_cpus. Anything else
 * is admitted afresh.
 */
int policy_adopt(struct policy *p, const struct policy_request *req,
		 const struct cpumask *current, struct policy_decision *ret);

/*
 * Rebuilds the book-keeping from a live state (PRD §3.4): n running
 * containers with their current cpuset.cpus, in any order. Integer
 * containers that can keep their set go first, then annotated and
 * scheduled ones (fixed sets), then integer ones that need CPUs (oldest
 * first, by the order key), then pooled ones, so the result does not
 * depend on the order of reqs. order[i] is a creation-order key (the cgroup id).
 * Fills ret[i] for reqs[i]. Returns 0, or -ENOMEM.
 */
int policy_recover(struct policy *p, const struct policy_request *reqs,
		   const struct cpumask *current, const uint64_t *order, size_t n,
		   struct policy_decision *ret);

/*
 * In-place resize (kubelet InPlacePodVerticalScaling, KEP-1287; exclusive
 * CPUs: kubelet's takeByTopology*ForResize): req is a running container's
 * request with its new CPU limit (quota_us/period_us).
 *  - integer N -> integer M: keeps its CPUs when growing and its baseline
 *    when shrinking, and grows around them (policy_alloc_choose with
 *    allocated/baseline), inside its pod's NUMA mask in pod scope;
 *  - integer -> not integer: back to its pool; pooled -> integer: admitted
 *    as a new integer container (a refusal leaves it on its pool);
 *  - annotated, scheduled, sandbox or errored containers, and anything
 *    whose class and N did not change: unchanged.
 * Returns 1 and *ret when the placement changed, 0 and *ret (the recorded
 * decision) when not; on a refusal the book-keeping is unchanged and the
 * admission error's negative errno is returned (as policy_admit, plus
 * -ERANGE below the baseline) with ret->err and ret->reason set and
 * ret->reject false: a resize never rejects a running container.
 * -ENOENT for an unknown container; -ENOMEM.
 */
int policy_resize(struct policy *p, const struct policy_request *req,
		  struct policy_decision *ret);

/*
 * Drops container_id from the book-keeping, returning its CPUs to the
 * free set. Returns true when the reserved set (hence the shared pool)
 * changed, false otherwise (also when unknown).
 */
bool policy_release(struct policy *p, const char *container_id);

/*
 * A number that changes whenever an input of the shared and BE pools
 * changes (annotated, exclusive or LSR CPUs, the online set), so a caller
 * can tell whether a call moved the pools without computing them twice.
 * Cannot fail.
 */
uint64_t policy_pools_gen(const struct policy *p);

/* Forgets everything (before a full resync). */
void policy_reset(struct policy *p);

/* The decision recorded for container_id (pooled kinds get their pool
 * now) into *ret. Returns 0, or -ENOENT (ret untouched). */
int policy_decision_get(const struct policy *p, const char *container_id,
			struct policy_decision *ret);

/* The recorded entry for container_id, or NULL. */
const struct policy_entry *policy_lookup(const struct policy *p, const char *container_id);

/* Shared pool = online − isolated − reserved − system_qos_cpus. */
void policy_shared_pool(const struct policy *p, struct cpumask *ret);
/* BE pool = online − isolated − annotated − LSE CPUs (LSR CPUs included). */
void policy_be_pool(const struct policy *p, struct cpumask *ret);
/* The pool a container of kind lives on (shared or BE) into *ret; false
 * (ret untouched) for kinds with their own CPUs. */
bool policy_pool_of(const struct policy *p, enum cpusetd_kind kind, struct cpumask *ret);
/*
 * The CPUs a pooled decision runs on now: its pool (d->kind) on the NUMA
 * nodes d->pool_nodes (node ids; empty = the whole pool), into *ret (CPU
 * ids; empty when no CPU of the pool is left on those nodes). false (ret
 * untouched) for kinds with their own CPUs. Koordinator's koordlet gives
 * such a pod the union of the node.koordinator.sh/cpu-shared-pools
 * entries of its nodes (runtimehooks/hooks/cpuset/rule.go).
 */
bool policy_pool_for(const struct policy *p, const struct policy_decision *d,
		     struct cpumask *ret);
/* Reserved = annotated ∪ integer CPUs. */
void policy_reserved(const struct policy *p, struct cpumask *ret);

/* annotRef[cpu] and intOwner[cpu] (container ID or NULL), for status. */
unsigned policy_annot_ref(const struct policy *p, unsigned cpu);
const char *policy_int_owner(const struct policy *p, unsigned cpu);

/* Iterates byCID: `size_t it = 0; const struct policy_entry *e;
 * while ((e = policy_next(p, &it)))`. No changes during iteration. */
const struct policy_entry *policy_next(const struct policy *p, size_t *it);

/* Stable label of an error ("insufficient_cpus", ...); "" for POLICY_OK. */
const char *policy_error_name(enum policy_error err);
const char *policy_kind_name(enum cpusetd_kind kind);
/* "default_shared", "sandbox", "invalid_annotation", "cores_ids",
 * "resource_status", "qos_class", "integer", "besteffort_pool". */
const char *policy_rule_name(enum policy_rule rule);
/* "LSE", "LSR", "LS", "BE", "SYSTEM"; "" for NONE. */
const char *policy_qos_name(enum policy_qos qos);
/* The inverse (exact spelling); -EINVAL for anything else. */
int policy_qos_parse(const char *s, enum policy_qos *ret);

#endif
