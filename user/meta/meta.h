/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Pod metadata from the OCI bundle config.json the runtime writes before it
 * creates the container's cgroup (runtime-spec config.md, config-linux.md).
 *
 * Annotation keys read (every value is untrusted input):
 *   containerd CRI: io.kubernetes.cri.container-type ("sandbox"|"container"),
 *     io.kubernetes.cri.sandbox-id, -name, -namespace, -uid,
 *     io.kubernetes.cri.container-name; pod annotations appear here when
 *     containerd's `pod_annotations` lets them through.
 *   CRI-O: io.kubernetes.cri-o.ContainerType, io.kubernetes.cri-o.SandboxID,
 *     io.kubernetes.pod.name, .namespace, .uid, io.kubernetes.container.name,
 *     and io.kubernetes.cri-o.Annotations (a JSON object of the pod's
 *     annotations) as a fallback source of weka.io/cores-ids.
 *   weka.io/cores-ids: the annotated-pod cpulist (kept as raw text, up to
 *     META_MAX_CPULIST_BYTES; the policy validates it).
 *   io.kubernetes.container.terminationMessagePath (default
 *     /dev/termination-log): which mount's host source gets the reason when
 *     the container is rejected: the LAST mount at that path (the one the
 *     container sees, and kubelet's own, which comes after the pod's
 *     volume mounts), with whether it is read-only (options "ro"/"rro",
 *     the last of those and "rw" wins). Without the annotation and without
 *     a mount at the default path (containerd drops container annotations
 *     unless `container_annotations` lets them through), the last mount
 *     whose source ends in kubelet's ".../pods/<uid>/containers/<name>/<file>"
 *     is taken. Only a guess of which file is meant: the daemon writes it
 *     only when it is kubelet's own (user/meta/termination.h).
 *   Pod policy annotations (Koordinator and cpusetd, see struct
 *     pod_policy_ann): koordinator.sh/qosClass,
 *     scheduling.koordinator.sh/resource-status,
 *     scheduling.koordinator.sh/resource-spec,
 *     cpusetd.io/prefer-isolated-cpus. A malformed value does not make the
 *     bundle unreadable: it is kept in pod_policy_ann.error and the policy
 *     refuses the container with that reason.
 * For each field the containerd key is read first, the CRI-O one second.
 * JSON null counts as absent; unknown keys (other runtimes' too) are
 * ignored.
 *
 * Nothing falls back silently. A bundle that exists but cannot be used
 * (not a regular file, over META_MAX_CONFIG_BYTES, not JSON, nested deeper
 * than META_MAX_JSON_DEPTH, a runtime-spec field of the wrong type) makes
 * the container META_INVALID_BUNDLE; a known annotation of the wrong type,
 * with a NUL, or longer than its limit makes it META_INVALID_ANNOTATION
 * naming the key (the rest of the bundle is still read, so the error is
 * reported on the right pod). The policy refuses either (policy.h).
 */
#ifndef CPUSETD_META_H
#define CPUSETD_META_H

#ifdef __bpf__
#error "user-space header: BPF programs share only maps/cpusetd.h"
#endif

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include "user/base/cpumask.h"

#define META_CORES_IDS_ANNOTATION	"weka.io/cores-ids"
#define META_DEFAULT_TERMINATION_PATH	"/dev/termination-log"
/* Longest mount source (with its NUL) a bundle may give. */
#define META_MOUNT_SOURCE_MAX		PATH_MAX
/* config.json larger than this is an invalid bundle: no pod needs more. */
#define META_MAX_CONFIG_BYTES		(16u << 20)
#define META_MAX_CONFIG_TEXT		"16 MiB"
/* JSON nesting deeper than this is an invalid bundle (json-c's tokener
 * recursion is bounded by it; real bundles nest about 6 deep). */
#define META_MAX_JSON_DEPTH		64
/* A cpulist annotation value (cores-ids, resource-status cpuset) may be
 * this long: every id of 8192 CPUs listed one by one is 39,849 bytes. */
#define META_MAX_CPULIST_BYTES		(64u << 10)

#define META_QOS_CLASS_ANNOTATION	"koordinator.sh/qosClass"
#define META_RESOURCE_STATUS_ANNOTATION	"scheduling.koordinator.sh/resource-status"
#define META_RESOURCE_SPEC_ANNOTATION	"scheduling.koordinator.sh/resource-spec"
#define META_PREFER_ISOLATED_ANNOTATION	"cpusetd.io/prefer-isolated-cpus"
/* resource-status numaNodeResources: NUMA node ids are below the kernel's
 * MAX_NUMNODES (1 << CONFIG_NODES_SHIFT, at most 1024), and a pod names at
 * most this many entries (a node has at most a few dozen nodes; more is
 * not a scheduler's answer). */
#define META_MAX_NUMA_NODE		1023
#define META_MAX_NUMA_ENTRIES		64

/*
 * Pod-level placement wishes, as raw text: the policy validates the names
 * (every value is untrusted). "" = not given.
 */
/* Where pod_policy_ann.qos_class came from. */
enum meta_qos_source {
	META_QOS_FROM_NONE,
	META_QOS_FROM_ANNOTATION,	/* koordinator.sh/qosClass annotation */
	META_QOS_FROM_LABEL,		/* the pod's label (NRI only) */
};

struct pod_policy_ann {
	char qos_class[16];		/* LSE, LSR, LS, BE, SYSTEM */
	enum meta_qos_source qos_from;
	/* The annotation's class when the label named another one (the
	 * label wins, as Koordinator reads only the label: apis/extension
	 * GetQoSClassByAttrs); "" when they agree or one is absent. */
	char qos_annotation_ignored[16];
	bool has_status_cpuset;
	char *status_cpuset;		/* resource-status {"cpuset": "..."},
					 * owned (meta_release), NULL = absent */
	/* resource-status {"numaNodeResources": [{"node": N, "resources":
	 * {...}}, ...]}: the NUMA nodes the scheduler placed the pod on (bit
	 * n = node n; Koordinator apis/extension NUMANodeResource). As
	 * koordlet's cpuset rule reads it: set only when some entry holds
	 * CPU ("cpu" not zero or "kubernetes.io/batch-cpu" above zero), and
	 * then every listed node counts; other resources are checked for
	 * shape only. Empty = not given. */
	bool has_status_numa;
	struct cpumask status_numa;
	char bind_policy[32];		/* resource-spec preferredCPUBindPolicy */
	char exclusive_policy[32];	/* resource-spec preferredCPUExclusivePolicy */
	char prefer_isolated[8];	/* "true" / "false" */
	char error[192];		/* first malformed value, "" when none */
};

enum meta_invalid {
	META_VALID,
	META_INVALID_BUNDLE,		/* config.json unusable; nothing else set */
	META_INVALID_ANNOTATION,	/* a known annotation key is malformed */
};

/* Owns the two cpulist strings: free with meta_release, copy with
 * meta_copy (a plain struct copy would share them). */
struct pod_meta {
	bool from_bundle;		/* false: only the cgroup path was known */
	enum meta_invalid invalid;
	char error[256];		/* why invalid: one line naming the key or
					 * the fault, never quoting a value */
	bool sandbox;
	char namespace_[128];
	char pod_name[256];
	char container_name[256];
	char pod_uid[64];
	char sandbox_id[72];		/* a sandbox's own ID (meta_load fills it) */
	char *cores_ids;		/* raw annotation value, owned; NULL = absent */
	bool has_cpu_limit;		/* quota > 0 and period > 0 */
	int64_t quota_us;		/* -1 when unlimited (missing or <= 0) */
	uint64_t period_us;		/* 0 when absent */
	uint64_t cpu_shares;		/* 0 when absent */
	/* linux.resources.cpu.cpus: the runtime writes it to the container's
	 * own cpuset.cpus after the cgroup exists, before the container's
	 * program execs. runtime_cpus is "" when absent or unusable (too
	 * long, not a string: runtime_sets_cpus is still true then). */
	bool runtime_sets_cpus;
	char runtime_cpus[1024];
	/* linux.resources.cpu.mems from NRI (a bundle leaves it ""): what the
	 * runtime's record says; "" when absent, unusable or too long. */
	char runtime_mems[256];
	char cgroups_path[384];		/* linux.cgroupsPath, may be "" */
	/* host file behind the mount, owned; NULL = none. A pointer, not a
	 * PATH_MAX array: the daemon keeps one pod_meta per container, and
	 * 4 KB each was a third of its memory at 1,000 containers. */
	char *termination_log;
	bool termination_ro;		/* that mount is read-only ("ro"): not
					 * kubelet's, which is read-write */
	struct pod_policy_ann pod;	/* Koordinator / cpusetd annotations */
};

/*
 * Parses one config.json file into *ret (overwritten; release it with
 * meta_release). The file is read with files_read (files.h: no symlink,
 * no FIFO, regular files only, at most META_MAX_CONFIG_BYTES).
 * Returns 0 with ret->invalid telling whether it can be used (a symlink,
 * FIFO, oversize, non-JSON or wrongly typed bundle is 0 with
 * META_INVALID_BUNDLE and ret->error); -ENOENT or -ENOTDIR when there is
 * no file; -ENOMEM (*ret untouched).
 */
int meta_parse_file(const char *config_json, struct pod_meta *ret);

/* Same, from a NUL-terminated JSON text (for tests and fuzzing). */
int meta_parse_text(const char *json, struct pod_meta *ret);

/* One annotation as a runtime lists it (NRI's map<string, string>): key
 * and value with their lengths, not NUL-terminated, either may hold a NUL. */
struct meta_annotation {
	const char *key;
	size_t key_len;
	const char *value;
	size_t value_len;
};

/*
 * Reads the annotations alone from a list of n pairs instead of a bundle
 * (NRI sends them so), into *ret (overwritten; from_bundle false, quota_us
 * -1, no resources). The same keys, limits and verdicts as the annotations
 * of meta_parse_file: one code path reads both. A value with a NUL or
 * longer than its limit makes ret->invalid META_INVALID_ANNOTATION naming
 * the key; a key with a NUL is no known key and is skipped. A later pair
 * with an equal key replaces an earlier one (a map's last entry wins).
 * The termination-path key is read and ignored (no mounts here).
 * Returns 0, or -ENOMEM (*ret untouched).
 */
int meta_parse_annotations(const struct meta_annotation *a, size_t n, struct pod_meta *ret);

/*
 * meta_parse_annotations, then the pod's labels (NRI's PodSandbox.labels;
 * a bundle has none): the label koordinator.sh/qosClass (Koordinator's
 * LabelPodQoS, where its scheduler and koordlet read the class) sets
 * ret->pod.qos_class over the annotation of that name, with qos_from
 * META_QOS_FROM_LABEL; an annotation that said otherwise is kept in
 * qos_annotation_ignored. Other labels are not read. A label value with a
 * NUL or over 15 bytes is recorded in ret->pod.error (the policy refuses
 * the pod naming it), as a bad annotation is. A later pair with an equal
 * key replaces an earlier one. Returns 0, or -ENOMEM (*ret untouched).
 */
int meta_parse_pod(const struct meta_annotation *labels, size_t n_labels,
		   const struct meta_annotation *annotations, size_t n_annotations,
		   struct pod_meta *ret);

/*
 * Whether a and b make the same policy request: validity and its reason,
 * sandbox, names and pod UID, cores-ids, CPU limit and period, and every
 * pod annotation the policy reads. Not cpu_shares, runtime_cpus/mems or
 * the paths (the runtime's record and where files are, not the
 * decision's inputs). Cannot fail.
 */
bool meta_policy_equal(const struct pod_meta *a, const struct pod_meta *b);

/* Frees what m owns and zeroes it (quota_us = -1). Accepts a zeroed m. */
void meta_release(struct pod_meta *m);

/* *dst = a deep copy of *src (dst is overwritten, not released).
 * Returns 0 or -ENOMEM (dst then zeroed). */
int meta_copy(struct pod_meta *dst, const struct pod_meta *src);

/* Copies the pod-level annotations (cores-ids, pod policy) of sb into ct
 * where ct has none of its own: runtimes without pod_annotations put them
 * on the sandbox only. Returns 0 or -ENOMEM (ct unchanged). */
int meta_inherit_pod(struct pod_meta *ct, const struct pod_meta *sb);

/*
 * Finds and parses the bundle of container_id: each template in turn,
 * with every "{id}" replaced by container_id (a template without "{id}" is
 * used verbatim), first existing file wins. For a sandbox without a
 * sandbox-id annotation, sandbox_id is set to container_id.
 * Returns 0 (ret->invalid may be set, see meta_parse_file), -EINVAL when
 * container_id is empty, ".", ".." or has a '/', -ENOENT when no template
 * names an existing file, -ENAMETOOLONG, or -ENOMEM.
 */
int meta_load(const char *const *templates, unsigned n_templates,
	      const char *container_id, struct pod_meta *ret);

/*
 * "namespace/pod/container" into buf (truncated to len), for messages.
 * Unknown parts are "?"; the container part of a sandbox is "POD" (as
 * kubelet names the pause container), and of a container without a name
 * the first 12 characters of container_id (NULL or "": "?").
 * Control characters are replaced by '?'. Cannot fail.
 */
void meta_name(const struct pod_meta *m, const char *container_id, char *buf, size_t len);

#endif
