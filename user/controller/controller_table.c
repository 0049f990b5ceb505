// SPDX-License-Identifier: Apache-2.0
/*
 * The container table (by cgroup path) and what each container is: its
 * bundle or cgroup metadata, the policy request it makes, its name in
 * logs and in the per-pod error table. Calls no other controller file.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "controller_internal.h"

void container_free(struct container *ct)
{
	if (!ct)
		return;
	if (ct->cpus_fd >= 0)
		close(ct->cpus_fd);
	meta_release(&ct->meta);
	free(ct);
}

void controller_free_table(struct strmap *m)
{
	size_t it = 0;
	const char *k;
	void *v;

	while (strmap_next(m, &it, &k, &v))
		container_free(v);
	strmap_free(m);
}

/* ------------------------------------------------------------ the table */

/* The cgroup-id index's key: the id in hex. */
static void cgroup_key(uint64_t id, char buf[17])
{
	snprintf(buf, 17, "%" PRIx64, id);
}

/*
 * The pod index: meta.pod_uid -> how many entries of by_path have it,
 * the count kept as the pointer value (absent = 0), so "is a container
 * cgroup of this pod left?" costs one lookup, not a walk of the table.
 */
static size_t pod_count(const struct strmap *by_pod, const char *pod_uid)
{
	return (size_t)(uintptr_t)strmap_get(by_pod, pod_uid);
}

/* One more of pod_uid. 0 or -ENOMEM (the index unchanged). */
static int pod_inc(struct strmap *by_pod, const char *pod_uid)
{
	return strmap_put(by_pod, pod_uid, (void *)(uintptr_t)(pod_count(by_pod, pod_uid) + 1));
}

/* One fewer of pod_uid; its key goes at 0. Cannot fail: a put on a key
 * that is there replaces the value in place (strmap.h). */
static void pod_dec(struct strmap *by_pod, const char *pod_uid)
{
	size_t n = pod_count(by_pod, pod_uid);

	if (n <= 1)
		strmap_del(by_pod, pod_uid);
	else
		(void)strmap_put(by_pod, pod_uid, (void *)(uintptr_t)(n - 1));
}

int controller_table_init(struct controller *c)
{
	c->by_path = strmap_new();
	c->by_id = strmap_new();
	c->by_cgroup = strmap_new();
	c->by_pod = strmap_new();
	if (c->by_path && c->by_id && c->by_cgroup && c->by_pod)
		return 0;
	controller_table_free(c);
	return -ENOMEM;
}

void controller_table_free(struct controller *c)
{
	if (c->by_path)
		controller_free_table(c->by_path);
	strmap_free(c->by_id);
	strmap_free(c->by_cgroup);
	strmap_free(c->by_pod);
	c->by_path = c->by_id = c->by_cgroup = c->by_pod = NULL;
}

/* Into the three indexes (not by_path). 0 or -ENOMEM (none changed). */
static int index_put(struct strmap *by_id, struct strmap *by_cgroup, struct strmap *by_pod,
		     struct container *ct)
{
	char key[17];

	if (pod_inc(by_pod, ct->meta.pod_uid) < 0)
		return -ENOMEM;
	if (strmap_put(by_id, ct->info.container_id, ct) < 0)
		goto undo_pod;
	if (!ct->cgroup_id)
		return 0;
	cgroup_key(ct->cgroup_id, key);
	if (strmap_put(by_cgroup, key, ct) == 0)
		return 0;
	strmap_del(by_id, ct->info.container_id);
undo_pod:
	pod_dec(by_pod, ct->meta.pod_uid);
	return -ENOMEM;
}

int controller_table_put(struct controller *c, struct container *ct)
{
	struct container *old = strmap_get(c->by_path, ct->path);

	if (old == ct)
		return 0;	/* in already: counted once */
	if (strmap_put(c->by_path, ct->path, ct) < 0)
		return -ENOMEM;
	if (index_put(c->by_id, c->by_cgroup, c->by_pod, ct) == 0) {
		/* Callers look the path up first; should one not, the
		 * replaced entry's pod counts one fewer, as by_path does. */
		if (old)
			pod_dec(c->by_pod, old->meta.pod_uid);
		return 0;
	}
	if (old)	/* back in place: no allocation */
		(void)strmap_put(c->by_path, ct->path, old);
	else
		strmap_del(c->by_path, ct->path);
	return -ENOMEM;
}

void controller_table_del(struct controller *c, struct container *ct)
{
	char key[17];

	/* The pod count follows by_path: only ct's own entry counted it. */
	if (strmap_get(c->by_path, ct->path) == ct) {
		strmap_del(c->by_path, ct->path);
		pod_dec(c->by_pod, ct->meta.pod_uid);
	}
	/* Another entry of the same id (a stale path) keeps its own. */
	if (strmap_get(c->by_id, ct->info.container_id) == ct)
		strmap_del(c->by_id, ct->info.container_id);
	if (!ct->cgroup_id)
		return;
	cgroup_key(ct->cgroup_id, key);
	if (strmap_get(c->by_cgroup, key) == ct)
		strmap_del(c->by_cgroup, key);
}

int controller_table_swap(struct controller *c, struct strmap *by_path)
{
	struct strmap *by_id = strmap_new(), *by_cgroup = strmap_new(), *by_pod = strmap_new();
	size_t it = 0;
	const char *k;
	void *v;
	int r = by_id && by_cgroup && by_pod ? 0 : -ENOMEM;

	while (r == 0 && strmap_next(by_path, &it, &k, &v))
		r = index_put(by_id, by_cgroup, by_pod, v);
	if (r < 0) {
		strmap_free(by_id);
		strmap_free(by_cgroup);
		strmap_free(by_pod);
		return -ENOMEM;
	}
	controller_free_table(c->by_path);
	strmap_free(c->by_id);
	strmap_free(c->by_cgroup);
	strmap_free(c->by_pod);
	c->by_path = by_path;
	c->by_id = by_id;
	c->by_cgroup = by_cgroup;
	c->by_pod = by_pod;
	return 0;
}

size_t controller_pod_cgroups(const struct controller *c, const char *pod_uid)
{
	return c->by_pod ? pod_count(c->by_pod, pod_uid) : 0;
}

struct container *controller_find_id(const struct controller *c, uint64_t cgroup_id)
{
	char key[17];

	cgroup_key(cgroup_id, key);
	return cgroup_id ? strmap_get(c->by_cgroup, key) : NULL;
}

struct container *controller_find_container(const struct controller *c, const char *container_id)
{
	return strmap_get(c->by_id, container_id);
}

const struct container *controller_find_sandbox(const struct controller *c, const char *sandbox_id)
{
	const struct container *ct = controller_find_container(c, sandbox_id);

	return ct && ct->meta.sandbox ? ct : NULL;
}

/* Pod annotations live on the sandbox; a runtime that does not copy them
 * to each container (no pod_annotations) still gets them from there. */
void container_inherit_pod(struct container *ct, const struct container *sb)
{
	if (sb && meta_inherit_pod(&ct->meta, &sb->meta) < 0)
		log_warn("%s: out of memory copying the sandbox's pod annotations", ct->name);
}

/* Bundle first; without one, what the cgroup itself tells. A bundle that
 * is there but unusable is not "without one": it stays an error (the
 * policy refuses META_INVALID_BUNDLE), but the CPU limit still comes from
 * the cgroup so the container is named and counted right. */
static void load_meta(struct controller *c, struct container *ct, const struct pod_meta *given)
{
	const char *tmpl[CONFIG_MAX_BUNDLE_PATHS];
	int r;

	/* NRI described it: nothing is read from the runtime's files. */
	if (given && meta_copy(&ct->meta, given) == 0) {
		if (!ct->meta.pod_uid[0])
			snprintf(ct->meta.pod_uid, sizeof(ct->meta.pod_uid), "%s", ct->info.pod_uid);
		meta_name(&ct->meta, ct->info.container_id, ct->name, sizeof(ct->name));
		return;
	}
	for (unsigned i = 0; i < c->cfg->n_bundle_paths; i++)
		tmpl[i] = c->cfg->bundle_paths[i];
	r = meta_load(tmpl, c->cfg->n_bundle_paths, ct->info.container_id, &ct->meta);
	if (r < 0) {
		if (r != -ENOENT)
			log_warn("container %s: bundle config.json: %s; using cgroup files",
				 ct->info.container_id, strerror(-r));
		ct->meta = (struct pod_meta){ .quota_us = -1 };
	}
	if (r < 0 || ct->meta.invalid == META_INVALID_BUNDLE) {
		if (cgfs_read_cpu_quota(c->cg, ct->path, &ct->meta.quota_us, &ct->meta.period_us) == 0)
			ct->meta.has_cpu_limit = true;
	}
	if (!ct->meta.pod_uid[0])
		snprintf(ct->meta.pod_uid, sizeof(ct->meta.pod_uid), "%s", ct->info.pod_uid);
	meta_name(&ct->meta, ct->info.container_id, ct->name, sizeof(ct->name));
}

/* cgroup_id: from the event, or 0 to stat the cgroup. */
struct container *container_new(struct controller *c, const char *path,
				const struct cgfs_path_info *info, uint64_t cgroup_id,
				const struct pod_meta *given)
{
	struct container *ct = calloc(1, sizeof(*ct));

	if (!ct)
		return NULL;
	ct->cpus_fd = -1;
	snprintf(ct->path, sizeof(ct->path), "%s", path);
	ct->info = *info;
	ct->cgroup_id = cgroup_id;
	if (!cgroup_id && cgfs_cgroup_id(c->cg, path, &ct->cgroup_id) < 0)
		ct->cgroup_id = 0;
	load_meta(c, ct, given);
	/* Without a bundle nothing says: expects_runtime_write decides. */
	ct->runtime_write_pending = !ct->meta.from_bundle || ct->meta.runtime_sets_cpus;
	return ct;
}

/* Best effort, only a speed-up for later resizes (see cgfs.h); once per
 * container, not again at every resync. */
void controller_skip_sched_rebuild(struct controller *c, struct container *ct)
{
	if (c->cfg->dry_run || ct->rebuild_skipped)
		return;
	cgfs_skip_sched_rebuild(c->cg, ct->path);
	ct->rebuild_skipped = true;
}

/* The pod's integer CPUs from the pod cgroup's limit (kubelet sets it to
 * the sum of its containers'), for Topology Manager pod scope; 0 when
 * unknown or not integer. A pod whose quota we lifted (exclusive_cpu_quota
 * = unset: "no limit" in the cgroup) keeps kubelet's limit in its saved
 * attribute (cgfs_quota_saved_read), which counts instead. */
static unsigned pod_cpus(const struct controller *c, const struct container *ct)
{
	char pod[sizeof(ct->path)], *slash;
	int64_t quota;
	uint64_t period;

	if (!c->cfg->policy.alloc.pod_scope || ct->info.qos != POD_QOS_GUARANTEED)
		return 0;
	snprintf(pod, sizeof(pod), "%s", ct->path);
	slash = strrchr(pod, '/');
	if (!slash)
		return 0;
	*slash = '\0';
	if (cgfs_quota_saved_read(c->cg, pod, &quota, &period) < 0 &&
	    cgfs_read_cpu_quota(c->cg, pod, &quota, &period) < 0)
		return 0;
	if (quota <= 0 || !period || (uint64_t)quota % period)
		return 0;
	return (unsigned)((uint64_t)quota / period);
}

void controller_request_of(const struct controller *c, const struct container *ct,
			   struct policy_request *req)
{
	*req = (struct policy_request){
		.pod = &ct->meta.pod,
		.pod_cpus = pod_cpus(c, ct),
		.container_id = ct->info.container_id,
		.pod_uid = ct->meta.pod_uid,
		.name = ct->name,
		.namespace_ = ct->meta.namespace_,
		.sandbox = ct->meta.sandbox,
		.qos = ct->info.qos,
		.cores_ids = ct->meta.cores_ids,
		.invalid = ct->meta.invalid,
		.invalid_why = ct->meta.error,
		.quota_us = ct->meta.has_cpu_limit ? ct->meta.quota_us : -1,
		.period_us = ct->meta.has_cpu_limit ? ct->meta.period_us : 0,
	};
}

void container_log_decision(const struct container *ct)
{
	char cpus[CPULIST_MAX], mems[CPULIST_MAX];

	cpulist_format(&ct->d.cpus, cpus, sizeof(cpus));
	cpulist_format(&ct->d.mems, mems, sizeof(mems));
	ct_log(LOG_INFO, ct, "placed", "%s (%.12s): %s%s, cpus %s%s%s", ct->name, ct->info.container_id,
		 policy_kind_name(ct->d.kind), ct->meta.sandbox ? " sandbox" : "", cpus,
		 cpumask_empty(&ct->d.mems) ? "" : ", mems ", mems);
}

/* The container's name in the per-pod error table: "POD" for a sandbox,
 * as meta_name says it; "?" when no bundle said (an invalid one). */
const char *container_error_name(const struct container *ct)
{
	if (ct->meta.sandbox)
		return "POD";
	return ct->meta.container_name[0] ? ct->meta.container_name : "?";
}

/* The pod's key there: its name, or, when no bundle said (an invalid
 * one), its UID from the cgroup path, so two such pods stay apart. */
const char *container_error_pod(const struct container *ct)
{
	return ct->meta.pod_name[0] ? ct->meta.pod_name : ct->meta.pod_uid;
}

/* Into the per-pod error table (pod_errors.h): kubelet's next attempt of
 * the same container adds to the same entry. ENOMEM: the error is still
 * logged and counted, only not listed. */
void controller_note_pod_error(struct controller *c, const struct container *ct, const char *reason,
			       const char *message, const char *action)
{
	struct pod_error e = { 0 };

	snprintf(e.namespace_, sizeof(e.namespace_), "%s", ct->meta.namespace_);
	snprintf(e.pod, sizeof(e.pod), "%s", container_error_pod(ct));
	snprintf(e.container, sizeof(e.container), "%s", container_error_name(ct));
	snprintf(e.pod_uid, sizeof(e.pod_uid), "%s", ct->meta.pod_uid);
	snprintf(e.container_id, sizeof(e.container_id), "%s", ct->info.container_id);
	snprintf(e.reason, sizeof(e.reason), "%s", reason);
	snprintf(e.message, sizeof(e.message), "%s", message);
	snprintf(e.action, sizeof(e.action), "%s", action);
	if (pod_errors_note(c->errors, &e, clock_unix_s()) < 0)
		log_warn("%s: error table full (out of memory); %s not listed", ct->name, reason);
	c->dirty = true;
}
