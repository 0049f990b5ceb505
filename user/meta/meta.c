// SPDX-License-Identifier: Apache-2.0
/*
 * Pod metadata from the OCI bundle config.json (see meta.h for the keys).
 *
 * The file is written by the container runtime, but most of what we read
 * from it (annotations, names, mounts) comes from the pod spec, so every
 * value is treated as hostile: known keys must have the JSON type the
 * runtime-spec gives them, strings must fit their buffer (never silently
 * truncated: a truncated cpulist or path would be a different, valid-looking
 * value) and must not hide a NUL. Unknown keys are ignored. JSON null counts
 * as absent, as it does for the Go decoders the runtimes use.
 *
 * Results are built in a local struct and copied out only on success.
 * The typed JSON access is meta_json.c's, the pod policy annotations
 * meta_pod.c's; this file holds the bundle's own fields and verdicts.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <json-c/json.h>
#include "user/base/files.h"
#include "user/base/log.h"
#include "meta.h"
#include "meta_internal.h"

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

/* Each list: containerd CRI key first, then the CRI-O / kubelet label key. */
static const char *const keys_type[] = {
	"io.kubernetes.cri.container-type", "io.kubernetes.cri-o.ContainerType",
};
static const char *const keys_sandbox_id[] = {
	"io.kubernetes.cri.sandbox-id", "io.kubernetes.cri-o.SandboxID",
};
static const char *const keys_pod_name[] = {
	"io.kubernetes.cri.sandbox-name", "io.kubernetes.pod.name",
};
static const char *const keys_namespace[] = {
	"io.kubernetes.cri.sandbox-namespace", "io.kubernetes.pod.namespace",
};
static const char *const keys_pod_uid[] = {
	"io.kubernetes.cri.sandbox-uid", "io.kubernetes.pod.uid",
};
static const char *const keys_container_name[] = {
	"io.kubernetes.cri.container-name", "io.kubernetes.container.name",
};
static const char *const keys_termination[] = {
	"io.kubernetes.container.terminationMessagePath",
};

#define CRIO_ANNOTATIONS	"io.kubernetes.cri-o.Annotations"

/* The bundle cannot be used: this fault replaces any lesser one. */
static void bad_bundle(struct pod_meta *m, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void bad_bundle(struct pod_meta *m, const char *fmt, ...)
{
	va_list ap;

	if (m->invalid == META_INVALID_BUNDLE)
		return;
	m->invalid = META_INVALID_BUNDLE;
	va_start(ap, fmt);
	vsnprintf(m->error, sizeof(m->error), fmt, ap);
	va_end(ap);
}

/* A field of the runtime-spec (not an annotation) that is malformed. */
static int bad_field(struct pod_meta *m, struct json_object *parent, const char *key,
		     enum json_type type, size_t limit)
{
	char why[160];

	meta_why(parent, key, type, limit, why, sizeof(why));
	bad_bundle(m, "config.json: %s", why);
	return -EBADMSG;
}

/* A known annotation that is malformed: the first one is reported, the
 * rest of the bundle is still read. */
static void bad_annotation(struct pod_meta *m, struct json_object *ann, const char *key,
			   size_t limit)
{
	if (m->invalid != META_VALID)
		return;
	m->invalid = META_INVALID_ANNOTATION;
	meta_why(ann, key, json_type_string, limit, m->error, sizeof(m->error));
}

/*
 * Copies the first present key of keys into dst. A malformed value is
 * recorded as the invalid annotation and skipped; the later keys are
 * still checked, so a malformed value cannot hide behind a good one.
 * Returns 1 copied, 0 none usable.
 */
static int get_first_string(struct pod_meta *m, struct json_object *ann,
			    const char *const *keys, size_t n, char *dst, size_t size)
{
	bool got = false;

	for (size_t i = 0; i < n; i++) {
		struct json_object *v;
		const char *s;
		int r = meta_member(ann, keys[i], json_type_string, &v);

		if (r == 0)
			continue;
		if (r < 0 || meta_string_fit(v, size, &s) < 0) {
			bad_annotation(m, ann, keys[i], size);
			continue;
		}
		if (!got)
			memcpy(dst, s, strlen(s) + 1);
		got = true;
	}
	return got;
}

/* The cpulist annotation key into *dst unless set. Returns 0 or -ENOMEM. */
static int get_cpulist(struct pod_meta *m, struct json_object *ann, const char *key, char **dst)
{
	int r;

	if (*dst)
		return 0;
	r = meta_dup_string(ann, key, META_MAX_CPULIST_BYTES, dst);
	if (r == -EBADMSG)
		bad_annotation(m, ann, key, META_MAX_CPULIST_BYTES + 1);
	return r == -ENOMEM ? r : 0;
}

/* An integer member that fits int64. Returns 1, 0 absent, -EBADMSG. */
static int get_int64(struct pod_meta *m, struct json_object *parent, const char *key,
		     int64_t *ret)
{
	struct json_object *v;
	int64_t x;
	int r;

	r = meta_member(parent, key, json_type_int, &v);
	if (r < 0)
		return bad_field(m, parent, key, json_type_int, 0);
	if (r == 0)
		return 0;
	x = json_object_get_int64(v);
	/* json-c saturates; a saturated value was out of range. */
	if (x == INT64_MAX && json_object_get_uint64(v) != (uint64_t)INT64_MAX)
		return bad_field(m, parent, key, json_type_int, 0);
	*ret = x;
	return 1;
}

/* A non-negative integer member. Returns 1, 0 absent, -EBADMSG. */
static int get_uint64(struct pod_meta *m, struct json_object *parent, const char *key,
		      uint64_t *ret)
{
	struct json_object *v;
	int r;

	r = meta_member(parent, key, json_type_int, &v);
	if (r < 0 || (r > 0 && json_object_get_int64(v) < 0))
		return bad_field(m, parent, key, json_type_int, 0);
	if (r > 0)
		*ret = json_object_get_uint64(v);
	return r;
}

/*
 * CRI-O's io.kubernetes.cri-o.Annotations, the pod's annotations as a JSON
 * object serialised into one string: the fallback source of
 * weka.io/cores-ids and of the pod policy annotations.
 */
static int parse_crio_annotations(struct json_object *ann, struct pod_meta *m)
{
	struct json_object *v, *inner = NULL;
	char why[160];
	int r;

	r = meta_member(ann, CRIO_ANNOTATIONS, json_type_string, &v);
	if (r < 0)
		bad_annotation(m, ann, CRIO_ANNOTATIONS, 0);
	if (r <= 0)
		return 0;
	r = meta_parse_json(json_object_get_string(v), (size_t)json_object_get_string_len(v),
			    &inner, why, sizeof(why));
	if (r == -ENOMEM)
		return r;
	if (r < 0 || !json_object_is_type(inner, json_type_object)) {
		if (m->invalid == META_VALID) {
			m->invalid = META_INVALID_ANNOTATION;
			snprintf(m->error, sizeof(m->error), "\"%s\" is not a JSON object: %s",
				 CRIO_ANNOTATIONS, r < 0 ? why : "another JSON type");
		}
		goto out;
	}
	r = get_cpulist(m, inner, META_CORES_IDS_ANNOTATION, &m->cores_ids);
	if (r == 0)
		r = meta_parse_pod_policy(inner, &m->pod);
out:
	json_object_put(inner);
	return r == -ENOMEM ? r : 0;
}

/* The annotation object ann; fills identity, type, cores-ids and *term
 * (the container's termination message path). Returns 0 or -ENOMEM. */
static int parse_annotation_object(struct json_object *ann, struct pod_meta *m, char *term,
				   size_t term_size)
{
	static const struct {
		const char *const *keys;
		size_t n, off, size;
	} fields[] = {
#define F(k, f) { k, ARRAY_SIZE(k), offsetof(struct pod_meta, f), sizeof(((struct pod_meta *)0)->f) }
		F(keys_sandbox_id, sandbox_id),
		F(keys_pod_name, pod_name),
		F(keys_namespace, namespace_),
		F(keys_pod_uid, pod_uid),
		F(keys_container_name, container_name),
#undef F
	};
	char type[32] = "";
	int r;

	for (size_t i = 0; i < ARRAY_SIZE(fields); i++)
		get_first_string(m, ann, fields[i].keys, fields[i].n,
				 (char *)m + fields[i].off, fields[i].size);
	get_first_string(m, ann, keys_type, ARRAY_SIZE(keys_type), type, sizeof(type));
	m->sandbox = strcmp(type, "sandbox") == 0;
	get_first_string(m, ann, keys_termination, ARRAY_SIZE(keys_termination), term, term_size);
	r = get_cpulist(m, ann, META_CORES_IDS_ANNOTATION, &m->cores_ids);
	if (r < 0)
		return r;
	r = meta_parse_pod_policy(ann, &m->pod);
	if (r < 0)
		return r;
	/* The direct annotations win; CRI-O's copy is only the fallback. */
	return parse_crio_annotations(ann, m);
}

/* The bundle's annotations. Returns 0, -EBADMSG (bundle fault), -ENOMEM. */
static int parse_annotations(struct json_object *root, struct pod_meta *m, char *term, size_t term_size)
{
	struct json_object *ann;
	int r;

	r = meta_member(root, "annotations", json_type_object, &ann);
	if (r < 0)
		return bad_field(m, root, "annotations", json_type_object, 0);
	if (r == 0)
		return 0;
	return parse_annotation_object(ann, m, term, term_size);
}

/* The pairs as a JSON object of strings, so that they pass through the
 * very checks a bundle's annotations do. A value keeps its length (an
 * embedded NUL is then refused by meta_string_fit); a key must be a C
 * string for json-c, so one with a NUL is left out: cut at the NUL it
 * could pose as a known key. Returns 0 or -ENOMEM. */
static int annotation_object(const struct meta_annotation *a, size_t n, struct json_object **ret)
{
	struct json_object *o = json_object_new_object();

	if (!o)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		struct json_object *v;
		char *key;

		/* An empty key or value may come as NULL (protobuf-c). */
		if (a[i].key_len && memchr(a[i].key, '\0', a[i].key_len))
			continue;
		/* json-c lengths are int: longer is over every limit anyway. */
		key = strndup(a[i].key_len ? a[i].key : "", a[i].key_len);
		v = json_object_new_string_len(a[i].value_len ? a[i].value : "",
					       a[i].value_len > INT32_MAX ? INT32_MAX :
					       (int)a[i].value_len);
		if (!key || !v || json_object_object_add(o, key, v) < 0) {
			free(key);
			json_object_put(v);
			json_object_put(o);
			return -ENOMEM;
		}
		free(key);
	}
	*ret = o;
	return 0;
}

int meta_parse_annotations(const struct meta_annotation *a, size_t n, struct pod_meta *ret)
{
	struct pod_meta m = { .quota_us = -1 };
	struct json_object *ann;
	char term[PATH_MAX] = "";
	int r;

	r = annotation_object(a, n, &ann);
	if (r < 0)
		return r;
	r = parse_annotation_object(ann, &m, term, sizeof(term));
	json_object_put(ann);
	if (r < 0) {
		meta_release(&m);
		return r;
	}
	*ret = m;
	return 0;
}

int meta_parse_pod(const struct meta_annotation *labels, size_t n_labels,
		   const struct meta_annotation *annotations, size_t n_annotations,
		   struct pod_meta *ret)
{
	int r = meta_parse_annotations(annotations, n_annotations, ret);

	if (r == 0)
		meta_pod_labels(labels, n_labels, &ret->pod);
	return r;
}

/* linux.resources.cpu and linux.cgroupsPath. Returns 0 or -EBADMSG. */
static int parse_linux(struct json_object *root, struct pod_meta *m)
{
	struct json_object *linux_, *res, *cpu;
	int64_t quota = -1;
	int r;

	r = meta_member(root, "linux", json_type_object, &linux_);
	if (r < 0)
		return bad_field(m, root, "linux", json_type_object, 0);
	if (r == 0)
		return 0;
	r = meta_get_string(linux_, "cgroupsPath", m->cgroups_path, sizeof(m->cgroups_path));
	if (r < 0)
		return bad_field(m, linux_, "cgroupsPath", json_type_string,
				 sizeof(m->cgroups_path));
	r = meta_member(linux_, "resources", json_type_object, &res);
	if (r < 0)
		return bad_field(m, linux_, "resources", json_type_object, 0);
	if (r == 0)
		return 0;
	r = meta_member(res, "cpu", json_type_object, &cpu);
	if (r < 0)
		return bad_field(m, res, "cpu", json_type_object, 0);
	if (r == 0)
		return 0;
	/* Only a hint for the exec check (controller_exec.c): an odd value must
	 * not cost the rest of the bundle. */
	r = meta_get_string(cpu, "cpus", m->runtime_cpus, sizeof(m->runtime_cpus));
	if (r < 0)
		m->runtime_cpus[0] = '\0';
	m->runtime_sets_cpus = r < 0 || (r > 0 && m->runtime_cpus[0]);
	if ((r = get_int64(m, cpu, "quota", &quota)) < 0 ||
	    (r = get_uint64(m, cpu, "period", &m->period_us)) < 0 ||
	    (r = get_uint64(m, cpu, "shares", &m->cpu_shares)) < 0)
		return r;
	/* The kernel and the runtimes read quota <= 0 as "no limit". */
	m->quota_us = quota > 0 ? quota : -1;
	m->has_cpu_limit = m->quota_us > 0 && m->period_us > 0;
	return 0;
}

/*
 * True when src looks like kubelet's host file for this container's
 * termination message: ".../pods/<uid>/containers/<name>/<file>". Used
 * when the path annotation is missing (containerd passes container
 * annotations only with `container_annotations`) and the container set a
 * custom terminationMessagePath, so the default destination is not found.
 */
static bool kubelet_termination_source(const struct pod_meta *m, const char *src)
{
	char tail[sizeof(m->pod_uid) + sizeof(m->container_name) + 32];
	const char *p, *file;

	if (!m->pod_uid[0] || !m->container_name[0] || src[0] != '/')
		return false;
	snprintf(tail, sizeof(tail), "/pods/%s/containers/%s/", m->pod_uid, m->container_name);
	file = strrchr(src, '/') + 1;
	if (!*file || strcmp(file, "..") == 0 || strcmp(file, ".") == 0)
		return false;
	p = file - strlen(tail);
	return p >= src && strncmp(p, tail, strlen(tail)) == 0;
}

/*
 * Whether mounts[i] (mnt) is read-only: the last of its "ro", "rro" and
 * "rw" options says (runc applies them in order). Returns 1, 0, or
 * -EBADMSG (recorded) when options is not an array of strings.
 */
static int mount_read_only(struct pod_meta *m, struct json_object *mnt, size_t i)
{
	struct json_object *opts;
	size_t n;
	int r, ro = 0;

	r = meta_member(mnt, "options", json_type_array, &opts);
	if (r < 0)
		return bad_field(m, mnt, "options", json_type_array, 0);
	n = r > 0 ? json_object_array_length(opts) : 0;
	for (size_t k = 0; k < n; k++) {
		struct json_object *o = json_object_array_get_idx(opts, k);
		const char *s;

		if (!json_object_is_type(o, json_type_string)) {
			bad_bundle(m, "config.json: mounts[%zu].options[%zu] is not a string", i, k);
			return -EBADMSG;
		}
		s = json_object_get_string(o);
		if (strcmp(s, "ro") == 0 || strcmp(s, "rro") == 0)
			ro = 1;
		else if (strcmp(s, "rw") == 0)
			ro = 0;
	}
	return ro;
}

/*
 * mounts[]: the host source of the mount at the termination message path,
 * and whether that mount is read-only. The LAST mount at that destination
 * is taken: runtimes mount in order, so it is the one the container sees,
 * and kubelet lists its own termination mount after the pod's volume
 * mounts, one of which may sit at the same path (a volume with a
 * subPath: its source is the pod's, under the pod's volume-subpaths).
 * Every entry is type-checked, matched or not.
 */
static int parse_mounts(struct json_object *root, struct pod_meta *m, const char *term, bool term_given)
{
	struct json_object *mounts;
	const char *guess = NULL, *found_src = NULL;
	bool found = false, guess_ro = false;
	size_t n;
	int r;

	r = meta_member(root, "mounts", json_type_array, &mounts);
	if (r < 0)
		return bad_field(m, root, "mounts", json_type_array, 0);
	if (r == 0)
		return 0;
	n = json_object_array_length(mounts);
	for (size_t i = 0; i < n; i++) {
		struct json_object *mnt = json_object_array_get_idx(mounts, i), *v;
		const char *dst = "", *src = "";
		int ro;

		if (!json_object_is_type(mnt, json_type_object)) {
			bad_bundle(m, "config.json: mounts[%zu] is not an object", i);
			return -EBADMSG;
		}
		if ((r = meta_member(mnt, "destination", json_type_string, &v)) < 0 ||
		    (r > 0 && meta_string_fit(v, PATH_MAX, &dst) < 0))
			return bad_field(m, mnt, "destination", json_type_string, PATH_MAX);
		if ((r = meta_member(mnt, "source", json_type_string, &v)) < 0 ||
		    (r > 0 && meta_string_fit(v, META_MOUNT_SOURCE_MAX, &src) < 0))
			return bad_field(m, mnt, "source", json_type_string,
					 META_MOUNT_SOURCE_MAX);
		ro = mount_read_only(m, mnt, i);
		if (ro < 0)
			return ro;
		if (strcmp(dst, term) == 0) {
			found = true;
			found_src = src;
			m->termination_ro = ro;
		} else if (!term_given && kubelet_termination_source(m, src)) {
			guess = src;
			guess_ro = ro;
		}
	}
	if (!found && guess) {
		found_src = guess;
		m->termination_ro = guess_ro;
	}
	if (found_src && !(m->termination_log = strdup(found_src)))
		return -ENOMEM;
	return 0;
}

/* Returns 0, -EBADMSG (recorded as the bundle fault), -ENOMEM. */
static int parse_root(struct json_object *root, struct pod_meta *m)
{
	char term[PATH_MAX] = "";
	int r;

	if (!json_object_is_type(root, json_type_object)) {
		bad_bundle(m, "config.json: the root is not a JSON object");
		return -EBADMSG;
	}
	r = parse_annotations(root, m, term, sizeof(term));
	if (r < 0)
		return r;
	r = parse_linux(root, m);
	if (r < 0)
		return r;
	return parse_mounts(root, m, term[0] ? term : META_DEFAULT_TERMINATION_PATH, term[0] != 0);
}

/* Only the verdict of an unusable bundle: nothing in it may be used. */
static void keep_only_fault(struct pod_meta *m)
{
	struct pod_meta fault = { .invalid = META_INVALID_BUNDLE, .quota_us = -1 };

	memcpy(fault.error, m->error, sizeof(fault.error));
	meta_release(m);
	*m = fault;
}

/* Parses len bytes into *ret (overwritten). Returns 0 or -ENOMEM. */
static int parse_buffer(const char *text, size_t len, struct pod_meta *ret)
{
	struct json_object *root;
	struct pod_meta m = { .quota_us = -1 };
	char why[160];
	int r;

	r = meta_parse_json(text, len, &root, why, sizeof(why));
	if (r == -ENOMEM)
		return r;
	if (r < 0) {
		bad_bundle(&m, "config.json: %s", why);
	} else {
		r = parse_root(root, &m);
		json_object_put(root);
		if (r == -ENOMEM) {
			meta_release(&m);
			return r;
		}
		m.from_bundle = m.invalid != META_INVALID_BUNDLE;
	}
	if (m.invalid == META_INVALID_BUNDLE)
		keep_only_fault(&m);
	*ret = m;
	return 0;
}

int meta_parse_text(const char *json, struct pod_meta *ret)
{
	return parse_buffer(json, strlen(json), ret);
}

int meta_parse_file(const char *config_json, struct pod_meta *ret)
{
	size_t len = 0;
	char *buf = NULL;
	int r;

	r = files_read(config_json, META_MAX_CONFIG_BYTES, &buf, &len);
	if (r == -ENOENT || r == -ENOTDIR || r == -ENOMEM)
		return r;
	if (r < 0) {
		*ret = (struct pod_meta){ .quota_us = -1 };
		bad_bundle(ret, "config.json: %s",
			   r == -EINVAL ? "not a regular file" :
			   r == -ELOOP ? "a symbolic link" :
			   r == -EFBIG ? "larger than " META_MAX_CONFIG_TEXT : strerror(-r));
		return 0;
	}
	r = parse_buffer(buf, len, ret);
	free(buf);
	return r;
}

static bool same_str(const char *a, const char *b)
{
	return a == b || (a && b && strcmp(a, b) == 0);
}

bool meta_policy_equal(const struct pod_meta *a, const struct pod_meta *b)
{
	const struct pod_policy_ann *p = &a->pod, *q = &b->pod;

	return a->invalid == b->invalid && strcmp(a->error, b->error) == 0 &&
	       a->sandbox == b->sandbox && strcmp(a->namespace_, b->namespace_) == 0 &&
	       strcmp(a->pod_name, b->pod_name) == 0 &&
	       strcmp(a->container_name, b->container_name) == 0 &&
	       strcmp(a->pod_uid, b->pod_uid) == 0 && same_str(a->cores_ids, b->cores_ids) &&
	       a->has_cpu_limit == b->has_cpu_limit &&
	       (!a->has_cpu_limit || (a->quota_us == b->quota_us && a->period_us == b->period_us)) &&
	       strcmp(p->qos_class, q->qos_class) == 0 && p->qos_from == q->qos_from &&
	       strcmp(p->qos_annotation_ignored, q->qos_annotation_ignored) == 0 &&
	       p->has_status_cpuset == q->has_status_cpuset &&
	       same_str(p->status_cpuset, q->status_cpuset) &&
	       p->has_status_numa == q->has_status_numa &&
	       cpumask_equal(&p->status_numa, &q->status_numa) &&
	       strcmp(p->bind_policy, q->bind_policy) == 0 &&
	       strcmp(p->exclusive_policy, q->exclusive_policy) == 0 &&
	       strcmp(p->prefer_isolated, q->prefer_isolated) == 0 &&
	       strcmp(p->error, q->error) == 0;
}

void meta_release(struct pod_meta *m)
{
	free(m->cores_ids);
	free(m->pod.status_cpuset);
	free(m->termination_log);
	*m = (struct pod_meta){ .quota_us = -1 };
}

/* *dst = strdup(src), NULL for NULL. Returns 0 or -ENOMEM. */
static int dup_or_null(char **dst, const char *src)
{
	*dst = src ? strdup(src) : NULL;
	return src && !*dst ? -ENOMEM : 0;
}

int meta_copy(struct pod_meta *dst, const struct pod_meta *src)
{
	char *cores, *status, *term;

	if (dup_or_null(&cores, src->cores_ids) < 0)
		goto nomem;
	if (dup_or_null(&status, src->pod.status_cpuset) < 0) {
		free(cores);
		goto nomem;
	}
	if (dup_or_null(&term, src->termination_log) < 0) {
		free(cores);
		free(status);
		goto nomem;
	}
	*dst = *src;
	dst->cores_ids = cores;
	dst->pod.status_cpuset = status;
	dst->termination_log = term;
	return 0;
nomem:
	*dst = (struct pod_meta){ .quota_us = -1 };
	return -ENOMEM;
}

int meta_inherit_pod(struct pod_meta *ct, const struct pod_meta *sb)
{
	static const struct pod_policy_ann none;
	struct pod_policy_ann pod = ct->pod;
	char *cores = NULL, *status = NULL;
	bool own_pod;

	if (ct->sandbox)
		return 0;
	/* Pod annotations: the container's own copy, if any, is complete. */
	own_pod = memcmp(&ct->pod, &none, sizeof(none)) != 0;
	if (!ct->cores_ids && dup_or_null(&cores, sb->cores_ids) < 0)
		return -ENOMEM;
	if (!own_pod && dup_or_null(&status, sb->pod.status_cpuset) < 0) {
		free(cores);
		return -ENOMEM;
	}
	if (!ct->cores_ids)
		ct->cores_ids = cores;
	if (!own_pod) {
		pod = sb->pod;
		pod.status_cpuset = status;
		ct->pod = pod;
	}
	return 0;
}

/*
 * tmpl with every "{id}" replaced by id, into buf.
 * Returns 0 or -ENAMETOOLONG.
 */
static int expand_template(const char *tmpl, const char *id, char *buf, size_t size)
{
	size_t idlen = strlen(id), len = 0;
	const char *p;

	while ((p = strstr(tmpl, "{id}"))) {
		size_t pre = (size_t)(p - tmpl);

		if (len + pre + idlen >= size)
			return -ENAMETOOLONG;
		memcpy(buf + len, tmpl, pre);
		memcpy(buf + len + pre, id, idlen);
		len += pre + idlen;
		tmpl = p + 4;
	}
	if (len + strlen(tmpl) >= size)
		return -ENAMETOOLONG;
	strcpy(buf + len, tmpl);
	return 0;
}

/* A container ID is one path component: it must not climb or descend. */
static bool valid_container_id(const char *id)
{
	return id[0] && !strchr(id, '/') && strcmp(id, ".") != 0 && strcmp(id, "..") != 0;
}

int meta_load(const char *const *templates, unsigned n_templates,
	      const char *container_id, struct pod_meta *ret)
{
	char path[PATH_MAX];
	int r = -ENOENT;

	if (!valid_container_id(container_id))
		return -EINVAL;
	for (unsigned i = 0; i < n_templates; i++) {
		r = expand_template(templates[i], container_id, path, sizeof(path));
		if (r < 0)
			return r;
		r = meta_parse_file(path, ret);
		/* ENOTDIR: a component of the path is a file; same as missing. */
		if (r != -ENOENT && r != -ENOTDIR)
			break;
		r = -ENOENT;
	}
	if (r < 0 || ret->invalid == META_INVALID_BUNDLE)
		return r;
	/* A sandbox is its own sandbox, whether or not the runtime says so. */
	if (ret->sandbox && !ret->sandbox_id[0] && strlen(container_id) < sizeof(ret->sandbox_id))
		strcpy(ret->sandbox_id, container_id);
	return 0;
}

void meta_name(const struct pod_meta *m, const char *container_id, char *buf, size_t len)
{
	char id[13] = "?";
	const char *ctr;

	if (len == 0)
		return;
	if (container_id && container_id[0])
		snprintf(id, sizeof(id), "%s", container_id);
	if (m->sandbox)
		ctr = "POD";	/* what kubelet and docker call the pause container */
	else
		ctr = m->container_name[0] ? m->container_name : id;
	snprintf(buf, len, "%s/%s/%s",
		 m->namespace_[0] ? m->namespace_ : "?",
		 m->pod_name[0] ? m->pod_name : "?", ctr);
	log_sanitize(buf);	/* pod-supplied: no forged log lines */
}
