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
 *   weka.io/cores-ids: the annotated-pod cpulist (kept as raw text; the
 *     policy validates it).
 *   io.kubernetes.container.terminationMessagePath (default
 *     /dev/termination-log): which mount's host source gets the reason when
 *     the container is rejected. Without the annotation and without a mount
 *     at the default path (containerd drops container annotations unless
 *     `container_annotations` lets them through), a mount whose source ends
 *     in kubelet's ".../pods/<uid>/containers/<name>/<file>" is taken.
 *   Pod policy annotations (Koordinator and cpusetd, see struct
 *     pod_policy_ann): koordinator.sh/qosClass,
 *     scheduling.koordinator.sh/resource-status,
 *     scheduling.koordinator.sh/resource-spec,
 *     cpusetd.io/prefer-isolated-cpus. A malformed value does not make the
 *     bundle unreadable: it is kept in pod_policy_ann.error and the policy
 *     refuses the container with that reason.
 * For each field the containerd key is read first, the CRI-O one second.
 * JSON null counts as absent.
 */
#ifndef CPUSETD_META_H
#define CPUSETD_META_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>

#define META_CORES_IDS_ANNOTATION	"weka.io/cores-ids"
#define META_DEFAULT_TERMINATION_PATH	"/dev/termination-log"
/* config.json larger than this is refused (-EFBIG): no pod needs more. */
#define META_MAX_CONFIG_BYTES		(8u << 20)

#define META_QOS_CLASS_ANNOTATION	"koordinator.sh/qosClass"
#define META_RESOURCE_STATUS_ANNOTATION	"scheduling.koordinator.sh/resource-status"
#define META_RESOURCE_SPEC_ANNOTATION	"scheduling.koordinator.sh/resource-spec"
#define META_PREFER_ISOLATED_ANNOTATION	"cpusetd.io/prefer-isolated-cpus"

/*
 * Pod-level placement wishes, as raw text: the policy validates the names
 * (every value is untrusted). "" = not given.
 */
struct pod_policy_ann {
	char qos_class[16];		/* LSE, LSR, LS, BE, SYSTEM */
	bool has_status_cpuset;
	char status_cpuset[512];	/* resource-status {"cpuset": "..."} */
	char bind_policy[32];		/* resource-spec preferredCPUBindPolicy */
	char exclusive_policy[32];	/* resource-spec preferredCPUExclusivePolicy */
	char prefer_isolated[8];	/* "true" / "false" */
	char error[192];		/* first malformed value, "" when none */
};

struct pod_meta {
	bool from_bundle;		/* false: only the cgroup path was known */
	bool sandbox;
	char namespace_[128];
	char pod_name[256];
	char container_name[256];
	char pod_uid[64];
	char sandbox_id[72];		/* a sandbox's own ID (meta_load fills it) */
	bool has_cores_ids;
	char cores_ids[512];		/* raw annotation value */
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
	char cgroups_path[384];		/* linux.cgroupsPath, may be "" */
	char termination_log[PATH_MAX];	/* host file behind the mount, or "" */
	struct pod_policy_ann pod;	/* Koordinator / cpusetd annotations */
};

/*
 * Parses one config.json file into *ret (zeroed first; untouched on error).
 * The file is opened with O_NOFOLLOW and must be a regular file.
 * Returns 0; -ENOENT when the file does not exist; -ELOOP for a symlink;
 * -EINVAL when not a regular file; -EFBIG above META_MAX_CONFIG_BYTES;
 * -EBADMSG when it is not a JSON object or a known key has the wrong type
 * (a too-long string value, or one with a NUL, is also -EBADMSG);
 * -ENOMEM; -errno on I/O error.
 */
int meta_parse_file(const char *config_json, struct pod_meta *ret);

/* Same, from a NUL-terminated JSON text (for tests and fuzzing). */
int meta_parse_text(const char *json, struct pod_meta *ret);

/*
 * Finds and parses the bundle of container_id: each template in turn,
 * with every "{id}" replaced by container_id (a template without "{id}" is
 * used verbatim), first existing file wins. For a sandbox without a
 * sandbox-id annotation, sandbox_id is set to container_id.
 * Returns 0, -EINVAL when container_id is empty, ".", ".." or has a '/',
 * -ENOENT when no template names an existing file, -ENAMETOOLONG, or
 * meta_parse_file's error for the file found.
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
