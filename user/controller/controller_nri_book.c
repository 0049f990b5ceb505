// SPDX-License-Identifier: Apache-2.0
/*
 * NRI's records, by container id (controller_nri.c answers the requests
 * with them): the metadata NRI gave, what the runtime's own record of
 * the container's cpus and mems says, and a container admitted at
 * CreateContainer until its cgroup is made (CT_PENDING). Also the mkdir
 * of such a container (confirmed, not decided again) and of one the
 * runtime made without asking (created_without_nri), which the event
 * path calls: this file calls no event, resync or request code.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "controller_internal.h"
#include "controller_plan.h"

/* created_without_nri is logged once per pod; the set of pods logged is
 * forgotten when it grows past this (then a pod may be logged again). */
#define LOGGED_PODS_MAX	4096

void nri_rec_free(struct nri_rec *r)
{
	if (!r)
		return;
	if (r->pending)
		container_free(r->pending);
	meta_release(&r->meta);
	free(r);
}

void nri_recs_free(struct strmap *m)
{
	size_t it = 0;
	const char *k;
	void *v;

	while (m && strmap_next(m, &it, &k, &v))
		nri_rec_free(v);
	strmap_free(m);
}

int controller_nri_enable(struct controller *c)
{
	struct controller_nri *n;

	if (c->nri)
		return 0;
	n = calloc(1, sizeof(*n));
	if (!n)
		return -ENOMEM;
	n->recs = strmap_new();
	n->logged_pods = strmap_new();
	if (!n->recs || !n->logged_pods) {
		strmap_free(n->recs);
		strmap_free(n->logged_pods);
		free(n);
		return -ENOMEM;
	}
	c->nri = n;
	return 0;
}

void controller_nri_free(struct controller *c)
{
	if (!c->nri)
		return;
	nri_recs_free(c->nri->recs);
	strmap_free(c->nri->logged_pods);
	free(c->nri);
	c->nri = NULL;
}

struct nri_rec *nri_rec_get(const struct controller *c, const char *id)
{
	return c->nri ? strmap_get(c->nri->recs, id) : NULL;
}

/* The record of id, made when missing. NULL on ENOMEM. */
struct nri_rec *nri_rec_want(struct controller *c, const char *id)
{
	struct nri_rec *r = nri_rec_get(c, id);

	if (r)
		return r;
	r = calloc(1, sizeof(*r));
	if (!r)
		return NULL;
	snprintf(r->id, sizeof(r->id), "%s", id);
	r->meta.quota_us = -1;
	if (strmap_put(c->nri->recs, r->id, r) < 0) {
		free(r);
		return NULL;
	}
	return r;
}

/* NRI's description of the container replaces the record's. 0 or -ENOMEM. */
int nri_rec_set_meta(struct nri_rec *r, const struct pod_meta *m)
{
	struct pod_meta copy;

	if (meta_copy(&copy, m) < 0)
		return -ENOMEM;
	meta_release(&r->meta);
	r->meta = copy;
	r->has_meta = true;
	return 0;
}

const struct pod_meta *controller_nri_meta(const struct controller *c, const char *container_id)
{
	const struct nri_rec *r = nri_rec_get(c, container_id);

	return r && r->has_meta ? &r->meta : NULL;
}

int controller_nri_on_mkdir(struct controller *c, const char *path,
			    const struct cgfs_path_info *info, uint64_t cgroup_id, uint64_t event_ns)
{
	struct nri_rec *r = nri_rec_get(c, info->container_id);
	struct container *ct;
	char cpus[CPULIST_MAX];
	int ret = 0;

	if (!r || !r->pending)
		return 0;
	ct = r->pending;
	r->pending = NULL;
	snprintf(ct->path, sizeof(ct->path), "%s", path);
	ct->info = *info;
	ct->cgroup_id = cgroup_id;
	ct->state = CT_LIVE;
	if (controller_table_put(c, ct) < 0) {
		r->pending = ct;
		return -ENOMEM;
	}
	controller_plan_add(c, ct);
	/* The kernel as it is now replaces the guess; writes follow from it. */
	ct->cpus_known = cgfs_read_cpuset(c->cg, path, CGFS_CPUS, &ct->cpus_applied) == 0;
	ct->mems_known = cgfs_read_cpuset(c->cg, path, CGFS_MEMS, &ct->mems_applied) == 0;
	ct->exec_pending = true;
	if (event_ns && event_ns < ct->nri_decided_ns) {
		/* Made before we answered: the runtime did not wait for us. */
		ct->nri_placed = false;
		c->n.nri_not_applied++;
		controller_nri_retell(c, ct);
		ct_log(LOG_NOTICE, ct, "nri_not_applied",
		       "%s (%.12s): cgroup made before our CreateContainer answer (the runtime "
		       "went on without it); placing it now", ct->name, ct->info.container_id);
		ret = controller_apply_one(c, ct);
	} else {
		/* The runtime writes the adjustment after its mkdir; the exec
		 * check sees whether it did (controller_exec.c). v2's plan may
		 * still need the pod's set: it writes only what differs. */
		c->n.nri_confirmed_at_mkdir++;
		if (r->told)
			cpulist_format(&r->told_cpus, cpus, sizeof(cpus));
		else
			cpus[0] = '\0';
		snprintf(ct->meta.runtime_cpus, sizeof(ct->meta.runtime_cpus), "%s", cpus);
		ct->meta.runtime_sets_cpus = true;
		ct->runtime_write_pending = true;
		if (controller_planned(c))
			ret = controller_plan_apply(c);
		ct_log(LOG_DEBUG, ct, "confirmed", "%s (%.12s): cgroup made; placed at "
		       "CreateContainer, confirmed", ct->name, ct->info.container_id);
	}
	controller_sync_map(c, ct);
	controller_quota_sync(c, ct);
	controller_skip_sched_rebuild(c, ct);
	c->dirty = true;
	return ret == -ENOMEM ? ret : 1;
}

/* Whether another container cgroup of pod_uid is in the table (the
 * sandbox's is made first). */
static bool pod_in_table(const struct controller *c, const char *pod_uid)
{
	size_t it = 0;
	const char *k;
	void *v;

	while (strmap_next(c->by_path, &it, &k, &v))
		if (strcmp(((struct container *)v)->info.pod_uid, pod_uid) == 0)
			return true;
	return false;
}

/*
 * A sandbox, by its bundle when there is one; without one (NRI mode reads
 * none), the first container cgroup of its pod: kubelet makes the sandbox
 * before any container of it. Known limit: a sandbox re-created for a
 * running pod (its pause container died) is then taken for a container.
 */
static bool is_sandbox(const struct controller *c, const struct container *ct)
{
	if (ct->meta.from_bundle)
		return ct->meta.sandbox;
	return !pod_in_table(c, ct->info.pod_uid);
}

bool controller_nri_unseen(const struct controller *c, const struct container *ct)
{
	return c->nri && c->nri->seen && !nri_rec_get(c, ct->info.container_id) && !is_sandbox(c, ct);
}

void controller_nri_note_unseen(struct controller *c, const struct container *ct)
{
	struct nri_rec *r;

	c->n.created_without_nri++;
	/* The runtime knows it: its record follows ours from now on. */
	r = nri_rec_want(c, ct->info.container_id);
	if (r)
		c->nri->outbox_due = true;
	if (strmap_get(c->nri->logged_pods, ct->info.pod_uid))
		return;
	if (strmap_count(c->nri->logged_pods) >= LOGGED_PODS_MAX) {
		strmap_free(c->nri->logged_pods);
		c->nri->logged_pods = strmap_new();
		if (!c->nri->logged_pods)
			return;	/* ENOMEM: logged again later, nothing else */
	}
	strmap_put(c->nri->logged_pods, ct->info.pod_uid, (void *)1);
	ct_log(LOG_NOTICE, ct, "created_without_nri",
	       "%s (%.12s): created without an NRI CreateContainer (%s); placed by its cgroup "
	       "(BPF), once per pod", ct->name, ct->info.container_id,
	       c->nri->up ? "the runtime did not ask or wait for us" : "NRI not connected");
}

size_t controller_nri_n_pending(const struct controller *c)
{
	size_t it = 0, n = 0;
	const char *k;
	void *v;

	while (c->nri && strmap_next(c->nri->recs, &it, &k, &v))
		n += ((struct nri_rec *)v)->pending != NULL;
	return n;
}

void controller_nri_list_pending(struct controller *c, struct container **out)
{
	size_t it = 0, i = 0;
	const char *k;
	void *v;

	while (c->nri && strmap_next(c->nri->recs, &it, &k, &v)) {
		struct container *ct = ((struct nri_rec *)v)->pending;

		if (!ct)
			continue;
		/* Recovery keeps a fixed set where it is: where the runtime
		 * was told. A pooled one gets the pool. */
		if (nri_pool_kind(ct->d.kind))
			cpumask_zero(&ct->cpus_running);
		else
			ct->cpus_running = ct->d.cpus;
		out[i++] = ct;
	}
}

void controller_nri_state(const struct controller *c, struct snapshot_nri *ret)
{
	*ret = (struct snapshot_nri){ .state = "off", .mode = "bpf" };
	if (!c->nri)
		return;
	ret->enabled = true;
	ret->state = c->nri->up ? "connected" : "connecting";
	ret->mode = c->nri->up ? "nri+bpf" : "bpf";
	ret->runtime_name = c->nri->runtime_name;
	ret->runtime_version = c->nri->runtime_version;
	ret->pending = controller_nri_n_pending(c);
}

void controller_nri_retell(struct controller *c, const struct container *ct)
{
	struct nri_rec *r = nri_rec_get(c, ct->info.container_id);

	if (!r)
		return;
	r->told = false;
	r->told_mems = false;
	c->nri->outbox_due = true;
}
