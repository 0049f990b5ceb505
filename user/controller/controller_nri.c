// SPDX-License-Identifier: Apache-2.0
/*
 * NRI's requests (user/nri/nri.h, struct nri_handlers) in the controller:
 * the same policy, book and writer as the BPF path, asked earlier. The
 * runtime asks at CreateContainer, before the container's cgroup exists;
 * the answer (cpus, and mems for exclusive and annotated containers) is
 * written by the runtime itself, so the container's first instruction
 * already runs where it belongs. BPF stays the safety net: NRI is
 * fail-open, and whatever the runtime made without asking (or without
 * waiting for our answer) is placed at its mkdir as before.
 *
 * Records (controller_nri_book.c), by NRI's container id (the cgroup's
 * container id, for containerd and CRI-O alike):
 *   - the metadata NRI gave (a resync builds the table entry from it
 *     instead of a bundle: nothing is read from the runtime's files);
 *   - what the runtime was last told (or said) the container's cpus and
 *     mems are, so a change made anywhere (an NRI request, a BPF event,
 *     hotplug, a resync) is sent exactly once: in-band in the reply of
 *     the request that caused it, else from the main loop
 *     (controller_nri_outbox, nri_conn_update_containers);
 *   - a container admitted at CreateContainer whose cgroup is not made
 *     yet (CT_PENDING): it holds its CPUs in the policy, and moves into
 *     the table (by cgroup path) at its mkdir.
 * Who comes first, the NRI request or the mkdir, is not fixed (a plugin
 * stopped with SIGSTOP reads the request after the runtime gave up on it
 * and made the cgroup): the kernel's stamp of the mkdir against the time
 * of our answer decides, and a request for a container already in the
 * table is answered with its placement, never decided twice.
 *
 * Known limits: a container admitted at CreateContainer whose creation
 * the runtime abandons without StopContainer or RemoveContainer holds
 * its CPUs until the next Synchronize (a reconnect) drops it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "controller_internal.h"
#include "controller_plan.h"
#include "user/nri/nri.h"

/* ----------------------------------------------- the container's cgroup */

/*
 * systemd's path of a slice unit: "a-b-c.slice" is
 * "/a.slice/a-b.slice/a-b-c.slice" (systemd.slice(5)). Returns 0, or
 * -EINVAL (not a slice name, or too long).
 */
static int slice_path(const char *slice, char *buf, size_t len)
{
	size_t n = strlen(slice), at = 0, stem;

	if (n <= strlen(".slice") || strcmp(slice + n - strlen(".slice"), ".slice") ||
	    strchr(slice, '/'))
		return -EINVAL;
	stem = n - strlen(".slice");
	for (size_t i = 0; i <= stem; i++) {
		int w;

		if (i < stem && slice[i] != '-')
			continue;
		if (i == 0 || slice[i - 1] == '-')
			return -EINVAL;	/* "-x" or "a--b": not a kubelet name */
		w = snprintf(buf + at, len - at, "/%.*s.slice", (int)i, slice);
		if (w < 0 || (size_t)w >= len - at)
			return -EINVAL;
		at += (size_t)w;
	}
	return 0;
}

/*
 * The cgroup path (below the hierarchy's root) the runtime will make for
 * the container, from Container.linux.cgroups_path as kubelet's driver
 * spells it (runc's libcontainer/cgroups: an absolute path for the
 * cgroupfs driver, "slice:prefix:name" for the systemd driver, the unit
 * being "<prefix>-<name>.scope"), or from the pod's cgroup parent and the
 * id when it is empty (cgroupfs). Returns 0 or -EINVAL.
 */
static int nri_cgroup_path(const struct nri_container *nc, char *buf, size_t len)
{
	const char *cp = nc->meta.cgroups_path, *c1, *c2;
	char slice[256];
	size_t at;
	int w;

	if (!cp[0]) {
		if (nc->pod_cgroup_parent[0] != '/')
			return -EINVAL;
		w = snprintf(buf, len, "%s/%s", nc->pod_cgroup_parent, nc->id);
		return w < 0 || (size_t)w >= len ? -EINVAL : 0;
	}
	if (cp[0] == '/') {
		w = snprintf(buf, len, "%s", cp);
		return w < 0 || (size_t)w >= len ? -EINVAL : 0;
	}
	c1 = strchr(cp, ':');
	c2 = c1 ? strchr(c1 + 1, ':') : NULL;
	if (!c2 || strchr(c2 + 1, ':') || (size_t)(c1 - cp) >= sizeof(slice))
		return -EINVAL;
	snprintf(slice, sizeof(slice), "%.*s", (int)(c1 - cp), cp);
	if (slice_path(slice, buf, len) < 0)
		return -EINVAL;
	at = strlen(buf);
	w = snprintf(buf + at, len - at, "/%.*s-%s.scope", (int)(c2 - c1 - 1), c1 + 1, c2 + 1);
	return w < 0 || (size_t)w >= len - at ? -EINVAL : 0;
}

/* Whether nc's cgroup is a container's under the kubepods root (ours):
 * its path (CGFS_PATH_MAX bytes) and what the path says into path and
 * *info. */
static bool nri_ours(const struct controller *c, const struct nri_container *nc, char *path,
		     struct cgfs_path_info *info)
{
	return nri_cgroup_path(nc, path, CGFS_PATH_MAX) == 0 &&
	       cgfs_parse_path(c->root, path, info) == 0 && info->level == CGFS_LEVEL_CONTAINER &&
	       strcmp(info->container_id, nc->id) == 0;
}

/* A container record for nc, not in the table: its future cgroup path
 * and what that path says (QoS, pod UID), NRI's metadata. NULL with *err:
 * -EINVAL (not a container cgroup under the kubepods root: not ours),
 * -ENOMEM. */
static struct container *container_of_nri(struct controller *c, const struct nri_container *nc,
					   int *err)
{
	struct cgfs_path_info info;
	char path[CGFS_PATH_MAX];
	struct container *ct;

	*err = -EINVAL;
	if (!nri_ours(c, nc, path, &info))
		return NULL;
	*err = -ENOMEM;
	ct = calloc(1, sizeof(*ct));
	if (!ct)
		return NULL;
	ct->cpus_fd = -1;
	snprintf(ct->path, sizeof(ct->path), "%s", path);
	ct->info = info;
	if (meta_copy(&ct->meta, &nc->meta) < 0) {
		free(ct);
		return NULL;
	}
	if (!ct->meta.pod_uid[0])
		snprintf(ct->meta.pod_uid, sizeof(ct->meta.pod_uid), "%s", info.pod_uid);
	meta_name(&ct->meta, info.container_id, ct->name, sizeof(ct->name));
	ct->state = CT_PENDING;
	return ct;
}

/* ---------------------------------------------------- what the runtime hears */

/* What the runtime's own record says (linux.resources.cpu.cpus and
 * .mems), as far as NRI told us: unknown when it gave none. */
static void rec_told_from_meta(struct nri_rec *r)
{
	r->told = r->meta.runtime_cpus[0] && cpulist_parse(r->meta.runtime_cpus, &r->told_cpus) == 0;
	r->told_mems = r->meta.runtime_mems[0] &&
		       cpulist_parse(r->meta.runtime_mems, &r->told_mems_set) == 0;
}


/* The pools as they are now, computed once per pass (1024-bit sets). */
struct pools {
	const struct policy *policy;	/* for pool parts */
	struct cpumask shared, be;
};

static void pools_now(const struct controller *c, struct pools *ret)
{
	ret->policy = c->policy;
	policy_shared_pool(c->policy, &ret->shared);
	policy_be_pool(c->policy, &ret->be);
}

/* The cpus (and, for a set of its own, mems) ct's record at the runtime
 * should say now, with the pools pl. false when there is nothing to say
 * (an empty set: a fixed set whose CPUs are all offline). */
static bool want_of(const struct pools *pl, const struct container *ct, struct cpumask *cpus,
		    struct cpumask *mems, bool *has_mems)
{
	*has_mems = false;
	if (nri_pool_kind(ct->d.kind) &&
	    (!cpumask_empty(&ct->d.pool_nodes) || ct->d.system_pool)) {
		/* A pool part: the pool on its nodes, mems those nodes;
		 * the SYSTEM set: mems left alone. */
		policy_pool_for(pl->policy, &ct->d, cpus);
		*mems = ct->d.mems;
		*has_mems = !cpumask_empty(mems);
	} else if (nri_pool_kind(ct->d.kind)) {
		*cpus = ct->d.kind == CPUSETD_KIND_SHARED ? pl->shared : pl->be;
	} else {
		*cpus = ct->d.cpus;
		*mems = ct->d.mems;
		*has_mems = !cpumask_empty(mems);
	}
	return !cpumask_empty(cpus);
}

/* Where the updates of one pass go: a reply (in-band) or the outbox. */
struct sink {
	struct pools pl;
	struct nri_reply *reply;
	struct nri_update *u;		/* outbox */
	size_t n, cap;
};

static int sink_add(struct sink *s, const char *id, const char *cpus, const char *mems)
{
	struct nri_update *u;

	if (s->reply)
		return nri_reply_add_update(s->reply, id, cpus, mems);
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 16;

		u = realloc(s->u, cap * sizeof(*u));
		if (!u)
			return -ENOMEM;
		s->u = u;
		s->cap = cap;
	}
	u = &s->u[s->n++];
	snprintf(u->container_id, sizeof(u->container_id), "%s", id);
	snprintf(u->cpus, sizeof(u->cpus), "%s", cpus);
	snprintf(u->mems, sizeof(u->mems), "%s", mems);
	return 0;
}

/* One container's update when its record at the runtime is behind. */
static int tell(struct nri_rec *r, const struct container *ct, struct sink *s)
{
	struct cpumask cpus, mems;
	char cl[CPULIST_MAX], ml[CPULIST_MAX] = "";
	bool has_mems;

	if (!want_of(&s->pl, ct, &cpus, &mems, &has_mems))
		return 0;
	if (r->told && cpumask_equal(&r->told_cpus, &cpus) &&
	    (!has_mems || (r->told_mems && cpumask_equal(&r->told_mems_set, &mems))))
		return 0;
	cpulist_format(&cpus, cl, sizeof(cl));
	if (has_mems)
		cpulist_format(&mems, ml, sizeof(ml));
	log_debug("NRI: %s (%.12s): the runtime's record is behind (%s); cpus %s%s%s %s", ct->name,
		  r->id, r->told ? "other cpus or mems" : "no cpus known", cl, has_mems ? ", mems " : "",
		  ml, s->reply ? "in the reply" : "in UpdateContainers");
	if (sink_add(s, r->id, cl, ml) < 0)
		return -ENOMEM;
	r->told = true;
	r->told_cpus = cpus;
	if (has_mems) {
		r->told_mems = true;
		r->told_mems_set = mems;
	}
	return 0;
}

/*
 * Every container the runtime knows (a record) whose record there is
 * behind ours: live ones in the table and pending ones. Not a container
 * that holds nothing (stopped, waiting): its set is nobody's business
 * until it runs again. Returns 0 or -ENOMEM (what was added stays).
 */
static int collect(struct controller *c, struct sink *s)
{
	size_t it = 0;
	const char *k;
	void *v;
	int r = 0;

	if (c->cfg->dry_run)
		return 0;	/* the runtime's records are writes too */
	pools_now(c, &s->pl);
	while (r == 0 && strmap_next(c->by_path, &it, &k, &v)) {
		struct container *ct = v;
		struct nri_rec *rec;

		if (container_live(ct) && !ct->meta.sandbox &&
		    (rec = nri_rec_get(c, ct->info.container_id)))
			r = tell(rec, ct, s);
	}
	for (it = 0; r == 0 && strmap_next(c->nri->recs, &it, &k, &v);)
		if (((struct nri_rec *)v)->pending)
			r = tell(v, ((struct nri_rec *)v)->pending, s);
	if (r == 0) {
		c->nri->told_gen = policy_pools_gen(c->policy);
		c->nri->outbox_due = false;
	}
	return r;
}

int controller_nri_outbox(struct controller *c, struct nri_update **ret, size_t *n)
{
	struct sink s = { 0 };
	int r;

	*ret = NULL;
	*n = 0;
	if (!c->nri || !c->nri->up ||
	    (!c->nri->outbox_due && c->nri->told_gen == policy_pools_gen(c->policy)))
		return 0;
	r = collect(c, &s);
	if (r < 0) {
		free(s.u);
		return r;
	}
	*ret = s.u;
	*n = s.n;
	c->n.nri_updates_sent += s.n;
	return 0;
}

void controller_nri_untell(struct controller *c, const struct nri_update *u, size_t n)
{
	for (size_t i = 0; c->nri && i < n; i++) {
		struct nri_rec *r = nri_rec_get(c, u[i].container_id);

		if (r)
			r->told = r->told_mems = false;
	}
	if (c->nri && n) {
		c->nri->outbox_due = true;
		c->n.nri_updates_sent -= n;	/* counted when they go */
	}
}

/* The in-band updates of a reply: every other container whose record at
 * the runtime is behind. Nothing to look at when the pools did not move
 * and no record was marked behind since the last pass: a shared
 * container's create costs no pass over the table. */
static int reply_updates(struct controller *c, struct nri_reply *reply)
{
	struct sink s = { .reply = reply };
	size_t before = reply->n_updates;
	int r;

	if (!c->nri->outbox_due && c->nri->told_gen == policy_pools_gen(c->policy))
		return 0;
	r = collect(c, &s);

	c->n.nri_updates_sent += reply->n_updates - before;
	return r;
}

/* ------------------------------------------------------------ requests */

/* Drops a pending container: it gives back what it holds (the pools
 * widen now; the runtime hears it in the reply or from the outbox). */
static int drop_pending(struct controller *c, struct nri_rec *r, const char *why)
{
	struct container *ct = r->pending;

	r->pending = NULL;	/* r may be out of the records already (forget) */
	ct_log(LOG_INFO, ct, "released", "%s (%.12s): %s before its cgroup was made; released",
	       ct->name, ct->info.container_id, why);
	return controller_forget(c, ct, 0);
}

/* The same text as a termination message of today's rejection
 * (controller_message.c), one printable line. */
static void refusal_text(const struct container *ct, char *buf, size_t len)
{
	char reason[sizeof(ct->d.reason) * 2];

	int w;

	log_escape(ct->d.reason, reason, sizeof(reason));
	w = snprintf(buf, len, "cpusetd: %s: ", policy_error_name(ct->d.err));
	if (w >= 0 && (size_t)w < len)	/* cut at the reply's room */
		snprintf(buf + w, len - (size_t)w, "%.*s", (int)(len - (size_t)w - 1), reason);
}

/* An admission error with on_error=reject: CreateContainer fails with the
 * reason; nothing is held, no process of the container ever runs. */
static void refuse(struct controller *c, struct container *ct, struct nri_reply *reply)
{
	refusal_text(ct, reply->error, sizeof(reply->error));
	ct_log(LOG_ERR, ct, policy_error_name(ct->d.err),
	       "%s (%.12s): admission error %s: %s; CreateContainer refused", ct->name,
	       ct->info.container_id, policy_error_name(ct->d.err), ct->d.reason);
	c->admission_errors[ct->d.err]++;
	c->n.nri_refused_at_create++;
	controller_note_pod_error(c, ct, policy_error_name(ct->d.err), ct->d.reason, "rejected");
	c->dirty = true;
}

/* The ContainerAdjustment for ct: its set now, mems for a set of its own. */
static void adjust(struct controller *c, struct nri_rec *r, const struct container *ct,
		   struct nri_reply *reply)
{
	struct cpumask cpus, mems;
	struct pools pl;
	bool has_mems;

	pools_now(c, &pl);
	if (c->cfg->dry_run || !want_of(&pl, ct, &cpus, &mems, &has_mems))
		return;
	reply->adjust = true;
	cpulist_format(&cpus, reply->cpus, sizeof(reply->cpus));
	if (has_mems)
		cpulist_format(&mems, reply->mems, sizeof(reply->mems));
	r->told = true;
	r->told_cpus = cpus;
	r->told_mems = has_mems;
	r->told_mems_set = mems;
}

/*
 * Admits ct (CT_PENDING, not in the table) as policy_admit decides and
 * converges the pools now: running shared containers leave new exclusive
 * CPUs within milliseconds, as with a mkdir. ct is then r's pending
 * container. reply: the refusal goes there (NULL: none is possible, a
 * synchronize's container the runtime has created already: it stays
 * shared with its error). Returns 0 (refused: ct freed, *refused) or
 * -ENOMEM (ct freed).
 */
static int admit_pending(struct controller *c, struct nri_rec *r, struct container *ct,
			 struct nri_reply *reply, bool *refused)
{
	struct policy_request req;
	int ret;

	*refused = false;
	controller_request_of(c, ct, &req);
	ret = policy_admit(c->policy, &req, &ct->d);
	if (ret == -ENOMEM) {
		container_free(ct);
		return ret;
	}
	if (ct->d.err && ct->d.reject && reply && !c->cfg->dry_run) {
		refuse(c, ct, reply);
		*refused = true;
		/* Recorded as shared: the book lets it go, no pool moves. */
		return controller_forget(c, ct, 0);
	}
	ct->nri_placed = true;
	ct->nri_decided_ns = clock_ns(CLOCK_MONOTONIC);
	r->pending = ct;
	if (ct->d.pools_changed) {
		ret = controller_resize_pools(c);	/* shared leave the new CPUs now */
		controller_sync_pooled_maps(c);
		if (ret == -ENOMEM)
			return ret;
	}
	if (ct->d.err)
		controller_handle_error(c, ct);	/* on_error=shared, or dry run */
	else
		container_log_decision(ct);
	c->dirty = true;
	return 0;
}

static int on_create(void *ctx, const struct nri_container *nc, struct nri_reply *reply)
{
	struct controller *c = ctx;
	struct container *ct;
	struct nri_rec *r;
	bool refused;
	int err;

	if (!c->root[0] || !nc->id[0])
		return 0;	/* no kubepods root yet: the BPF path, at its mkdir */
	ct = controller_find_container(c, nc->id);
	r = nri_rec_want(c, nc->id);
	if (!r || nri_rec_set_meta(r, &nc->meta) < 0)
		return -ENOMEM;
	if (ct || r->pending) {
		/* Its cgroup came first (a late request: the runtime went on
		 * without us), or asked again: the placement in force. */
		ct = ct ? ct : r->pending;
		if (!ct->d.reject)
			adjust(c, r, ct, reply);
		return 0;
	}
	ct = container_of_nri(c, nc, &err);
	if (!ct) {
		if (err == -EINVAL)
			log_debug("NRI container %.12s: cgroup \"%s\" is not a container's under %s; "
				  "left alone", nc->id, nc->meta.cgroups_path, c->root);
		return err == -EINVAL ? 0 : err;
	}
	err = admit_pending(c, r, ct, reply, &refused);
	if (err < 0 || refused) {
		if (refused)
			nri_rec_free(strmap_del(c->nri->recs, nc->id));
		return err;
	}
	c->n.nri_placed_at_create++;
	adjust(c, r, ct, reply);
	return reply_updates(c, reply);
}

/* --------------------------------------------------- update, stop, remove */

static int on_update(void *ctx, const struct nri_container *nc, struct nri_reply *reply)
{
	struct controller *c = ctx;
	struct nri_rec *r = nri_rec_get(c, nc->id);
	struct container *ct = controller_find_container(c, nc->id);
	int ret;

	if (!ct && r)
		ct = r->pending;
	if (!ct || (!container_live(ct) && ct->state != CT_PENDING))
		return 0;	/* not ours, or holds nothing */
	if (!r && !(r = nri_rec_want(c, nc->id)))
		return -ENOMEM;
	if (nri_rec_set_meta(r, &nc->meta) < 0)
		return -ENOMEM;
	ret = controller_resize_to(c, ct, nc->meta.has_cpu_limit ? nc->meta.quota_us : -1,
				   nc->meta.period_us);
	if (ret < 0)
		return ret;
	/* Its own set in the answer, changed or not: the runtime then writes
	 * ours, not the resources kubelet sent (kubernetes #120230). */
	r->told = false;
	r->told_mems = false;
	c->nri->outbox_due = true;
	return reply_updates(c, reply);
}

static int on_stop(void *ctx, const struct nri_container *nc, struct nri_reply *reply)
{
	struct controller *c = ctx;
	struct nri_rec *r = nri_rec_get(c, nc->id);
	struct container *ct;
	int ret = 0;

	if (r && r->pending) {
		ret = drop_pending(c, r, "stopped");
	} else if ((ct = controller_find_container(c, nc->id)) && container_live(ct)) {
		/* Its tasks are gone or going: it holds nothing from now on,
		 * as when its last task exits (on_populated). */
		ct->state = CT_EXITED;
		ct->exec_pending = false;
		controller_sync_map(c, ct);
		ct_log(LOG_INFO, ct, "released", "%s (%.12s): stopped (NRI); %s released", ct->name,
		       ct->info.container_id, policy_kind_name(ct->d.kind));
		ret = controller_release(c, ct, 0);
	} else {
		return 0;	/* refused at its create, unknown, or stopped already */
	}
	if (ret < 0)
		return ret;
	return reply_updates(c, reply);
}

/* Forgets r (a pending container in it gives back its CPUs). */
static void forget(struct controller *c, struct nri_rec *r, const char *why)
{
	strmap_del(c->nri->recs, r->id);
	if (r->pending && drop_pending(c, r, why) < 0)
		log_warn("out of memory resizing the pools after %s; the next resync corrects it",
			 why);
	nri_rec_free(r);
	c->nri->outbox_due = true;	/* the pools may have widened */
}

static void on_remove(void *ctx, const char *container_id, const char *sandbox_id)
{
	struct controller *c = ctx;
	struct nri_rec *r, *doomed[64];
	size_t it, n;
	const char *k;
	void *v;

	if (container_id && container_id[0]) {
		if ((r = nri_rec_get(c, container_id)))
			forget(c, r, "removed");
		return;
	}
	if (!sandbox_id || !sandbox_id[0])
		return;
	/* Its pod's records, a batch at a time: no deletion while iterating. */
	do {
		for (it = 0, n = 0; n < 64 && strmap_next(c->nri->recs, &it, &k, &v);)
			if (((struct nri_rec *)v)->has_meta &&
			    strcmp(((struct nri_rec *)v)->meta.sandbox_id, sandbox_id) == 0)
				doomed[n++] = v;
		for (size_t i = 0; i < n; i++)
			forget(c, doomed[i], "its pod removed");
	} while (n == 64);
}

/* ------------------------------------------------------------ synchronize */

/* A container the runtime has created but not started, with no cgroup
 * yet: admitted now, as at its create (it cannot be refused any more:
 * an error leaves it shared, listed). -ENOMEM. */
static int adopt_created(struct controller *c, const struct nri_container *nc, struct nri_rec *r)
{
	struct container *ct;
	bool refused;
	int err;

	if (r->pending || nc->state != NRI_CONTAINER_CREATED || controller_find_container(c, nc->id))
		return 0;
	ct = container_of_nri(c, nc, &err);
	if (!ct)
		return err == -EINVAL ? 0 : err;
	return admit_pending(c, r, ct, NULL, &refused);
}

/*
 * Whether the table stands as the runtime describes it: the last resync
 * worked, and every container the runtime says runs (or is paused) under
 * our root is in the table with the same policy inputs (meta_policy_equal:
 * a bundle that says what NRI says, or NRI's own metadata from before).
 * The table is the live cgroups as the events left it since that resync,
 * so walking the tree again would find what is there: 1,000 containers
 * cost that walk 50 ms of syscalls, the whole budget of a Synchronize.
 * Anything else (a container the table lacks, metadata that differs, a
 * failed resync) rebuilds from the cgroups.
 */
static bool table_agrees(const struct controller *c, const struct nri_container *cts, size_t n)
{
	if (c->resync_failed || !c->n.resyncs)
		return false;
	for (size_t i = 0; i < n; i++) {
		const struct nri_container *nc = &cts[i];
		const struct container *ct;
		struct cgfs_path_info info;
		char path[CGFS_PATH_MAX];

		if (nc->state != NRI_CONTAINER_RUNNING && nc->state != NRI_CONTAINER_PAUSED)
			continue;
		ct = controller_find_container(c, nc->id);
		/* Not in the table: fine only when it is not ours at all. */
		if (ct ? !meta_policy_equal(&ct->meta, &nc->meta) : nri_ours(c, nc, path, &info))
			return false;
	}
	return true;
}

static int on_synchronize(void *ctx, const struct nri_container *cts, size_t n,
			  struct nri_reply *reply)
{
	struct controller *c = ctx;
	struct strmap *old = c->nri->recs, *recs = strmap_new();
	bool rescan = false;
	size_t it = 0;
	const char *k;
	void *v;
	int ret = 0;

	if (!recs)
		return -ENOMEM;
	/* The runtime's list is the whole truth about what it knows. */
	c->nri->recs = recs;
	for (size_t i = 0; i < n && ret == 0; i++) {
		struct nri_rec *r = nri_rec_want(c, cts[i].id), *was = strmap_get(old, cts[i].id);

		if (!r || nri_rec_set_meta(r, &cts[i].meta) < 0) {
			ret = -ENOMEM;
			break;
		}
		rec_told_from_meta(r);
		c->nri->outbox_due = true;	/* every record as the runtime says it */
		if (was && was->pending) {
			r->pending = was->pending;	/* created, still to start */
			was->pending = NULL;
		}
	}
	/* Pending ones the runtime does not list any more were aborted. */
	while (strmap_next(old, &it, &k, &v))
		if (((struct nri_rec *)v)->pending && drop_pending(c, v, "not listed by the runtime") < 0)
			ret = -ENOMEM;
	nri_recs_free(old);
	if (ret < 0)
		return ret;
	/* The table and the book from the live cgroups, built with NRI's
	 * metadata, unless they stand as they are; a failed resync is
	 * retried by the main loop. */
	if (c->root[0]) {
		rescan = !table_agrees(c, cts, n);
		ret = rescan ? controller_resync(c) : 0;
		if (ret == -ENOMEM)
			return ret;
		for (size_t i = 0; i < n; i++) {
			struct nri_rec *r = nri_rec_get(c, cts[i].id);

			if (r && adopt_created(c, &cts[i], r) < 0)
				return -ENOMEM;
		}
	}
	c->n.nri_synchronizes++;
	log_info("NRI synchronize: %zu containers from the runtime, %zu in the table (%s)", n,
		 strmap_count(c->by_path),
		 rescan ? "rebuilt from the cgroups" : "as the runtime describes it: kept");
	return reply_updates(c, reply);
}

/* ------------------------------------------------------------ connection */

static void on_connected(void *ctx, bool up, const char *name, const char *version)
{
	struct controller *c = ctx;

	c->nri->up = up;
	c->dirty = true;
	if (!up) {
		log_notice("NRI: disconnected from %s %s; placing by cgroup events (BPF) until it "
			   "is back", c->nri->runtime_name, c->nri->runtime_version);
		return;
	}
	c->nri->seen = true;
	snprintf(c->nri->runtime_name, sizeof(c->nri->runtime_name), "%s", name ? name : "");
	snprintf(c->nri->runtime_version, sizeof(c->nri->runtime_version), "%s",
		 version ? version : "");
	log_notice("NRI: connected to %s %s: placing at CreateContainer, cgroup events (BPF) "
		   "confirm", c->nri->runtime_name, c->nri->runtime_version);
}

void controller_nri_handlers(struct nri_handlers *ret)
{
	*ret = (struct nri_handlers){
		.connected = on_connected,
		.synchronize = on_synchronize,
		.create_container = on_create,
		.update_container = on_update,
		.stop_container = on_stop,
		.remove = on_remove,
	};
}
