/*
 * The controller: detection events in, cpuset writes out.
 *
 * Ordering: when a pod takes CPUs, shared containers are shrunk first and
 * the exclusive container is written after, so the window in which both
 * run on a CPU is as short as the writes themselves; when a pod leaves,
 * its CPUs go back to the shared pool. Writes are skipped when the value
 * we last wrote or read is already there.
 *
 * On cgroup v2 (unless v2_writes = per-container) cpuset.cpus is not
 * written container by container: controller_plan.c writes each set at the
 * highest level where a whole subtree shares it and the containers inherit
 * (cgroupfs/cgfs_plan.h); only mems stay per container. v1 needs every
 * level written, child within parent, so it keeps the per-container path.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "controller.h"
#include "controller_plan.h"
#include "user/base/log.h"
#include "user/policy/policy_hotplug.h"
#include "user/base/procs.h"
#include "reject.h"
#include "user/base/strmap.h"

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);	/* same clock as bpf_ktime_get_ns */
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

int controller_init(struct controller *c, const struct cpusetd_config *cfg,
		    struct cgfs *cg, const struct topology *topo, const char *root)
{
	int r;

	*c = (struct controller){ .cfg = cfg, .cg = cg, .topo = topo };
	snprintf(c->root, sizeof(c->root), "%s", root);
	if (!cpumask_subset(&cfg->policy.reserved_cpus, &topo->online)) {
		char buf[CPULIST_MAX];

		cpulist_format(&cfg->policy.reserved_cpus, buf, sizeof(buf));
		log_error("reserved_cpus %s: not all of them are online", buf);
		return -EINVAL;
	}
	r = policy_new(topo, &cfg->policy, &c->policy);
	if (r < 0)
		return r;
	c->by_path = strmap_new();
	c->errors = pod_errors_new();
	c->writers = strmap_new();
	if (!c->by_path || !c->errors || !c->writers || controller_plan_init(c) < 0) {
		strmap_free(c->by_path);
		pod_errors_free(c->errors);
		strmap_free(c->writers);
		policy_free(c->policy);
		return -ENOMEM;
	}
	if (procs_mntns(0, &c->self_mntns) < 0)
		c->self_mntns = 0;
	return 0;
}

static void container_free(struct container *ct)
{
	if (!ct)
		return;
	if (ct->cpus_fd >= 0)
		close(ct->cpus_fd);
	meta_release(&ct->meta);
	free(ct);
}

static void free_table(struct strmap *m)
{
	size_t it = 0;
	const char *k;
	void *v;

	while (strmap_next(m, &it, &k, &v))
		container_free(v);
	strmap_free(m);
}

void controller_fini(struct controller *c)
{
	size_t it = 0;
	const char *k;
	void *v;

	if (c->by_path)
		free_table(c->by_path);
	while (c->writers && strmap_next(c->writers, &it, &k, &v))
		free(v);
	strmap_free(c->writers);
	pod_errors_free(c->errors);
	c->writers = NULL;
	c->errors = NULL;
	controller_plan_free(c);
	policy_free(c->policy);
	c->by_path = NULL;
	c->policy = NULL;
}

struct container *controller_find_id(const struct controller *c, uint64_t cgroup_id)
{
	size_t it = 0;
	const char *k;
	void *v;

	while (strmap_next(c->by_path, &it, &k, &v))
		if (((struct container *)v)->cgroup_id == cgroup_id)
			return v;
	return NULL;
}

/* --- metadata --- */

/* The pod's sandbox container in the table, or NULL. O(N), once per
 * container start. */
static const struct container *find_sandbox(const struct controller *c, const char *sandbox_id)
{
	size_t it = 0;
	const char *k;
	void *v;

	while (strmap_next(c->by_path, &it, &k, &v)) {
		const struct container *ct = v;

		if (ct->meta.sandbox && strcmp(ct->info.container_id, sandbox_id) == 0)
			return ct;
	}
	return NULL;
}

/* Pod annotations live on the sandbox; a runtime that does not copy them
 * to each container (no pod_annotations) still gets them from there. */
static void inherit_pod_annotations(struct container *ct, const struct container *sb)
{
	if (sb && meta_inherit_pod(&ct->meta, &sb->meta) < 0)
		log_warn("%s: out of memory copying the sandbox's pod annotations", ct->name);
}

/* Bundle first; without one, what the cgroup itself tells. A bundle that
 * is there but unusable is not "without one": it stays an error (the
 * policy refuses META_INVALID_BUNDLE), but the CPU limit still comes from
 * the cgroup so the container is named and counted right. */
static void load_meta(struct controller *c, struct container *ct)
{
	const char *tmpl[CONFIG_MAX_BUNDLE_PATHS];
	int r;

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
static struct container *new_container(struct controller *c, const char *path,
				       const struct cgfs_path_info *info, uint64_t cgroup_id)
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
	load_meta(c, ct);
	/* Without a bundle nothing says: expects_runtime_write decides. */
	ct->runtime_write_pending = !ct->meta.from_bundle || ct->meta.runtime_sets_cpus;
	return ct;
}

/* Best effort, only a speed-up for later resizes (see cgfs.h); once per
 * container, not again at every resync. */
static void skip_sched_rebuild(struct controller *c, struct container *ct)
{
	if (c->cfg->dry_run || ct->rebuild_skipped)
		return;
	cgfs_skip_sched_rebuild(c->cg, ct->path);
	ct->rebuild_skipped = true;
}

/* The pod's integer CPUs from the pod cgroup's limit (kubelet sets it to
 * the sum of its containers'), for Topology Manager pod scope; 0 when
 * unknown or not integer. */
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
	if (cgfs_read_cpu_quota(c->cg, pod, &quota, &period) < 0 || quota <= 0 || !period ||
	    (uint64_t)quota % period)
		return 0;
	return (unsigned)((uint64_t)quota / period);
}

static void request_of(const struct controller *c, const struct container *ct,
		       struct policy_request *req)
{
	*req = (struct policy_request){
		.pod = &ct->meta.pod,
		.pod_cpus = pod_cpus(c, ct),
		.container_id = ct->info.container_id,
		.pod_uid = ct->meta.pod_uid,
		.name = ct->name,
		.sandbox = ct->meta.sandbox,
		.qos = ct->info.qos,
		.cores_ids = ct->meta.cores_ids,
		.invalid = ct->meta.invalid,
		.invalid_why = ct->meta.error,
		.quota_us = ct->meta.has_cpu_limit ? ct->meta.quota_us : -1,
		.period_us = ct->meta.has_cpu_limit ? ct->meta.period_us : 0,
	};
}

/* --- writes --- */

void controller_note_write(struct controller *c, struct container *ct, const char *what, int r)
{
	c->n.cgroup_writes++;
	if (r == 0 || r == -ENOENT)	/* vanished: it will be gone from the table soon */
		return;
	c->n.cgroup_write_errors++;
	log_warn("%s (%s): writing %s failed: %s", ct->name, ct->path, what, strerror(-r));
}

/*
 * Before cpuset.cpus grows to m, the placement map must already allow m,
 * or telemetry counts the container's first runs on the new CPUs as
 * placement violations. So: widen the map (old ∪ m) before the write;
 * the exact m follows after the write (sync_placement_map), which is also
 * the order for a shrink. No map write when m is within the map already.
 */
void controller_widen_map(struct controller *c, struct container *ct, const struct cpumask *m)
{
	struct cpusetd_placement pl = { .kind = ct->d.kind, .verify_pending = ct->exec_pending,
					.reject = ct->reject_armed };
	struct cpumask wide;

	if (!c->bpf || !ct->cgroup_id || cpumask_subset(m, &ct->map_cpus))
		return;
	cpumask_or(&wide, &ct->map_cpus, m);
	memcpy(pl.cpus, wide.bits, sizeof(pl.cpus));
	if (bpf_events_set_placement(c->bpf, ct->cgroup_id, &pl) == 0)
		ct->map_cpus = wide;
}

/* Writes f = m unless *known says it is there already. */
static void write_set(struct controller *c, struct container *ct, enum cgfs_cpuset_file f,
		      const struct cpumask *m, struct cpumask *applied, bool *known)
{
	char buf[CPULIST_MAX];
	int r;

	if (*known && cpumask_equal(applied, m))
		return;
	if (c->cfg->dry_run) {
		cpulist_format(m, buf, sizeof(buf));
		log_info("dry-run: %s: would set %s to %s", ct->name,
			 f == CGFS_CPUS ? "cpuset.cpus" : "cpuset.mems", buf);
		return;
	}
	if (f == CGFS_CPUS)
		controller_widen_map(c, ct, m);
	/* cpuset.cpus changes on every resize: keep it open. */
	r = -EMFILE;
	if (f == CGFS_CPUS)
		r = cgfs_write_cpuset_fd(c->cg, c->root, ct->path, f, m, &ct->cpus_fd);
	if (r == -EMFILE || r == -ENFILE)	/* out of fds: the slow way */
		r = cgfs_write_cpuset(c->cg, c->root, ct->path, f, m);
	controller_note_write(c, ct, f == CGFS_CPUS ? "cpuset.cpus" : "cpuset.mems", r);
	if (r == 0) {
		*applied = *m;
		*known = true;
		c->dirty = true;
	}
}

/* Mirrors the decision into the BPF placement map. The exec check stays
 * armed until the container's first exec after it was placed. */
static void sync_placement_map(struct controller *c, struct container *ct)
{
	struct cpusetd_placement pl = { .kind = ct->d.kind, .verify_pending = ct->exec_pending,
					.reject = ct->reject_armed };

	if (!c->bpf || !ct->cgroup_id)
		return;
	memcpy(pl.cpus, ct->d.cpus.bits, sizeof(pl.cpus));
	if (bpf_events_set_placement(c->bpf, ct->cgroup_id, &pl) < 0)
		log_debug("%s: placement map update failed", ct->name);
	else
		ct->map_cpus = ct->d.cpus;
}

static bool pooled(const struct container *ct)
{
	return container_live(ct) &&
	       (ct->d.kind == CPUSETD_KIND_SHARED || ct->d.kind == CPUSETD_KIND_BE);
}

/* Brings one container to its decision. Shared: the current pool, mems
 * untouched; an empty pool is never written (tasks could not run).
 * Planned (v2): cpuset.cpus is the plan's (apply_one), only mems here. */
static void apply(struct controller *c, struct container *ct)
{
	if (!container_live(ct))
		return;		/* holds nothing: no task to place */
	if (controller_planned(c)) {
		if (policy_pool_of(c->policy, ct->d.kind, &ct->d.cpus))
			return;
		write_set(c, ct, CGFS_MEMS, &ct->d.mems, &ct->mems_applied, &ct->mems_known);
		return;
	}
	if (policy_pool_of(c->policy, ct->d.kind, &ct->d.cpus)) {
		if (!cpumask_empty(&ct->d.cpus))
			write_set(c, ct, CGFS_CPUS, &ct->d.cpus, &ct->cpus_applied, &ct->cpus_known);
		return;
	}
	/* Every CPU of a fixed set offline: nothing of its own to run on;
	 * its cgroup keeps what the kernel left (logged by the hotplug). */
	if (cpumask_empty(&ct->d.cpus))
		return;
	/* cpus before mems: if the mems write fails the container still
	 * runs on its own CPUs, only its memory is not yet node-local. */
	write_set(c, ct, CGFS_CPUS, &ct->d.cpus, &ct->cpus_applied, &ct->cpus_known);
	write_set(c, ct, CGFS_MEMS, &ct->d.mems, &ct->mems_applied, &ct->mems_known);
}

/* One container to its decision; planned, the whole tree (a new
 * container can change what its pod or slice must hold). 0 or -ENOMEM. */
static int apply_one(struct controller *c, struct container *ct)
{
	int r = controller_plan_apply(c);

	apply(c, ct);
	return r;
}

/* fn on every container that lives on a pool (shared or BE). */
static void for_each_shared(struct controller *c,
			    void (*fn)(struct controller *c, struct container *ct))
{
	size_t it = 0;
	const char *k;
	void *v;

	while (strmap_next(c->by_path, &it, &k, &v))
		if (pooled(v))
			fn(c, v);
}

/* Both pools, to tell whether an admission or release moved them. */
struct pools {
	struct cpumask shared, be;
};

static void get_pools(const struct controller *c, struct pools *ret)
{
	policy_shared_pool(c->policy, &ret->shared);
	policy_be_pool(c->policy, &ret->be);
}

static bool pools_equal(const struct pools *a, const struct pools *b)
{
	return cpumask_equal(&a->shared, &b->shared) && cpumask_equal(&a->be, &b->be);
}

/* Every pooled container to its current pool: one plan on v2, every
 * container otherwise. Returns 0 or -ENOMEM. */
static int resize_shared(struct controller *c)
{
	c->n.resizes++;
	if (controller_planned(c))
		return controller_plan_apply(c);
	for_each_shared(c, apply);
	return 0;
}

/* The placement map's view of shared containers after a resize; called
 * once converged, so it is not on the convergence clock. */
static void sync_shared_maps(struct controller *c)
{
	if (c->bpf)
		for_each_shared(c, sync_placement_map);
}

const uint64_t controller_conv_le_ns[CONTROLLER_CONV_BUCKETS] = {
	25000, 50000, 100000, 250000, 500000,			/* 25 µs .. */
	1000000, 2500000, 5000000, 10000000, 25000000, 50000000,
	100000000, 250000000, 500000000, 1000000000, 2500000000,	/* .. 2.5 s */
};

/* One convergence sample into the histogram counters (not the ring). */
static void conv_hist_add(struct controller_counters *n, uint64_t ns)
{
	unsigned i = 0;

	while (i < CONTROLLER_CONV_BUCKETS && ns > controller_conv_le_ns[i])
		i++;
	n->conv_hist[i]++;
	n->conv_sum_ns += ns;
}

static void record_convergence(struct controller *c, uint64_t event_ns)
{
	uint64_t now = now_ns();

	if (!event_ns || now < event_ns)
		return;
	c->conv_ns[c->conv_count % STATUS_RECENT] = now - event_ns;
	c->conv_count++;
	conv_hist_add(&c->n, now - event_ns);
}

/* --- decisions --- */

static void log_decision(const struct container *ct)
{
	char cpus[CPULIST_MAX], mems[CPULIST_MAX];

	cpulist_format(&ct->d.cpus, cpus, sizeof(cpus));
	cpulist_format(&ct->d.mems, mems, sizeof(mems));
	log_info("%s (%.12s): %s%s, cpus %s%s%s", ct->name, ct->info.container_id,
		 policy_kind_name(ct->d.kind), ct->meta.sandbox ? " sandbox" : "", cpus,
		 cpumask_empty(&ct->d.mems) ? "" : ", mems ", mems);
}

static double unix_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The container's name in the per-pod error table: "POD" for a sandbox,
 * as meta_name says it; "?" when no bundle said (an invalid one). */
static const char *error_container(const struct container *ct)
{
	if (ct->meta.sandbox)
		return "POD";
	return ct->meta.container_name[0] ? ct->meta.container_name : "?";
}

/* The pod's key there: its name, or, when no bundle said (an invalid
 * one), its UID from the cgroup path, so two such pods stay apart. */
static const char *error_pod(const struct container *ct)
{
	return ct->meta.pod_name[0] ? ct->meta.pod_name : ct->meta.pod_uid;
}

/* Into the per-pod error table (pod_errors.h): kubelet's next attempt of
 * the same container adds to the same entry. ENOMEM: the error is still
 * logged and counted, only not listed. */
static void note_pod_error(struct controller *c, const struct container *ct, const char *reason,
			   const char *message, const char *action)
{
	struct pod_error e = { 0 };

	snprintf(e.namespace_, sizeof(e.namespace_), "%s", ct->meta.namespace_);
	snprintf(e.pod, sizeof(e.pod), "%s", error_pod(ct));
	snprintf(e.container, sizeof(e.container), "%s", error_container(ct));
	snprintf(e.pod_uid, sizeof(e.pod_uid), "%s", ct->meta.pod_uid);
	snprintf(e.container_id, sizeof(e.container_id), "%s", ct->info.container_id);
	snprintf(e.reason, sizeof(e.reason), "%s", reason);
	snprintf(e.message, sizeof(e.message), "%s", message);
	snprintf(e.action, sizeof(e.action), "%s", action);
	if (pod_errors_note(c->errors, &e, unix_now()) < 0)
		log_warn("%s: error table full (out of memory); %s not listed", ct->name, reason);
	c->dirty = true;
}

/* Whether the container's own program has run: BPF counted an exec from
 * outside the runtime's mount namespace. A cgroup BPF did not see being
 * made (we were down) gets its lifecycle entry here, from its tasks. */
static bool container_started(struct controller *c, struct container *ct)
{
	struct cpusetd_lifecycle lc = { .runtime_mntns = c->self_mntns };
	int pids[64], n;

	if (c->bpf && ct->cgroup_id && bpf_events_get_lifecycle(c->bpf, ct->cgroup_id, &lc) == 0)
		return lc.own_execs > 0;
	n = cgfs_read_pids(c->cg, ct->path, pids, 64);
	if (n > 0 && procs_any_started(pids, n, c->self_mntns) > 0)
		lc.own_execs = 1;
	if (c->bpf && ct->cgroup_id)
		bpf_events_add_lifecycle(c->bpf, ct->cgroup_id, &lc);
	return lc.own_execs > 0;
}

/* Kills a rejected container whose own program ran (BPF killed the exec
 * already, or it ran before the rejection was armed); every task goes. */
static void kill_rejected(struct controller *c, struct container *ct, const char *when)
{
	int r = cgfs_kill(c->cg, ct->path);

	if (r < 0)
		log_warn("%s: killing rejected container failed: %s", ct->name, strerror(-r));
	if (ct->killed)
		return;
	ct->killed = true;
	c->n.rejected++;
	c->dirty = true;
	log_notice("%s (%.12s): rejected: killed %s (%s)", ct->name, ct->info.container_id, when,
		   policy_error_name(ct->d.err));
}

/*
 * on_error=reject, deterministically: the reason goes to the termination
 * message now, then the placement map is armed, and BPF SIGKILLs the
 * container at its own first exec: never while the runtime's init is
 * still creating it (killing runc's init made `runc create` fail and hid
 * our reason behind the runtime's). If its program already ran (we were
 * late or down), it is killed here instead. Arming before looking pairs
 * with the BPF side counting before it reads the map: an exec is either
 * killed there or counted here.
 */
static void arm_rejection(struct controller *c, struct container *ct)
{
	char msg[512];
	int r;

	if (!ct->message_written && ct->meta.termination_log[0]) {
		snprintf(msg, sizeof(msg), "cpusetd: %s: %s", policy_error_name(ct->d.err),
			 ct->d.reason);
		r = reject_write_message(c->cfg->kubelet_pods_dir, ct->meta.termination_log, msg);
		if (r < 0)
			log_warn("%s: cannot write termination message %s: %s", ct->name,
				 ct->meta.termination_log, strerror(-r));
		ct->message_written = true;
	}
	if (!ct->reject_armed) {
		ct->reject_armed = true;
		sync_placement_map(c, ct);
	}
	if (!ct->killed && container_started(c, ct))
		kill_rejected(c, ct, "at once: its program was already running");
}

/* Admission error: logged once per container, listed per pod;
 * on_error=reject arms the kill at the container's own first exec. */
static void handle_error(struct controller *c, struct container *ct)
{
	if (ct->d.err_hotplug) {
		/* Not an admission error: logged where the hotplug was seen
		 * (controller_set_topology); recovery only says it once. */
		if (!ct->error_logged)
			log_warn("%s (%.12s): %s: %s; keeps running", ct->name,
				 ct->info.container_id, policy_error_name(ct->d.err), ct->d.reason);
		ct->error_logged = true;
		note_pod_error(c, ct, policy_error_name(ct->d.err), ct->d.reason, "kept");
		return;
	}
	if (!ct->error_logged) {
		bool armed = ct->d.reject && !c->cfg->dry_run;

		log_error("%s (%.12s): admission error %s: %s; %s", ct->name,
			  ct->info.container_id, policy_error_name(ct->d.err), ct->d.reason,
			  armed ? "rejecting it at its first exec" :
			  ct->d.reject ? "dry run: would reject it" : "keeping it on the shared pool");
		ct->error_logged = true;
		c->n.admission_errors[ct->d.err]++;
		c->dirty = true;
	}
	note_pod_error(c, ct, policy_error_name(ct->d.err), ct->d.reason,
		       ct->d.reject ? "rejected" : "shared");
	if (!ct->d.reject || c->cfg->dry_run)
		return;
	arm_rejection(c, ct);
}

/* Admits a container seen by a mkdir event and converges. */
static int place(struct controller *c, struct container *ct, uint64_t event_ns)
{
	struct pools before, after;
	struct policy_request req;
	int r;

	ct->state = CT_LIVE;
	get_pools(c, &before);
	policy_release(c->policy, ct->info.container_id);	/* admitted again */
	request_of(c, ct, &req);
	r = policy_admit(c->policy, &req, &ct->d);
	if (r == -ENOMEM)
		return r;
	get_pools(c, &after);
	ct->exec_pending = true;
	if (!pools_equal(&before, &after)) {
		r = resize_shared(c);		/* shared leave the new CPUs first */
		apply(c, ct);
		record_convergence(c, event_ns);
		sync_shared_maps(c);
	} else {
		r = apply_one(c, ct);
	}
	if (r == -ENOMEM)
		return r;
	if (!ct->d.reject)
		log_decision(ct);	/* a rejection is not a placement */
	sync_placement_map(c, ct);
	if (ct->d.err)
		handle_error(c, ct);
	c->dirty = true;
	return 0;
}

/* Whether path is, right now, the cgroup the event was about (same
 * kernfs id): a cgroup removed and made again under the same name is
 * another one. */
static bool same_cgroup(struct controller *c, const char *path, uint64_t cgroup_id)
{
	uint64_t id;

	return cgfs_cgroup_id(c->cg, path, &id) == 0 && id == cgroup_id;
}

static int on_mkdir(struct controller *c, const struct cpusetd_event *ev)
{
	struct cgfs_path_info info;
	struct container *ct;
	int r;

	if (cgfs_parse_path(c->root, ev->path, &info) < 0 || info.level != CGFS_LEVEL_CONTAINER)
		return 0;
	if (strmap_get(c->by_path, ev->path))
		return 0;	/* already known from a resync */
	if (!same_cgroup(c, ev->path, ev->cgroup_id)) {
		c->n.events_stale++;	/* gone already: its rmdir follows */
		return 0;
	}
	ct = new_container(c, ev->path, &info, ev->cgroup_id);
	if (!ct || strmap_put(c->by_path, ct->path, ct) < 0) {
		container_free(ct);
		return -ENOMEM;
	}
	if (ct->meta.sandbox_id[0])
		inherit_pod_annotations(ct, find_sandbox(c, ct->meta.sandbox_id));
	/* Admitted before its first task: the window between the runtime's
	 * mkdir and its init joining is when the set must land. */
	r = place(c, ct, ev->ts_ns);
	skip_sched_rebuild(c, ct);	/* after convergence: not on its clock */
	return r;
}

/* Gives back what ct holds and converges the pools. 0 or -ENOMEM. */
static int release(struct controller *c, struct container *ct, uint64_t event_ns)
{
	struct pools before, after;
	int r = 0;

	get_pools(c, &before);
	policy_release(c->policy, ct->info.container_id);
	get_pools(c, &after);
	if (!pools_equal(&before, &after)) {
		r = resize_shared(c);
		record_convergence(c, event_ns);
		sync_shared_maps(c);
	}
	c->dirty = true;
	return r == -ENOMEM ? r : 0;
}

static bool pod_has_cgroup(const char *pod_uid, void *ctx)
{
	const struct controller *c = ctx;
	size_t it = 0;
	const char *k;
	void *v;

	while (strmap_next(c->by_path, &it, &k, &v))
		if (strcmp(((struct container *)v)->meta.pod_uid, pod_uid) == 0)
			return true;
	return false;
}

/* Errors live as long as their pod: until no container cgroup of it is
 * left (the sandbox's goes last). O(errors x containers), only at rmdir
 * of a container and when there are errors at all. */
static void prune_errors(struct controller *c)
{
	if (pod_errors_count(c->errors) && pod_errors_prune(c->errors, pod_has_cgroup, c))
		c->dirty = true;
}

static int on_rmdir(struct controller *c, const struct cpusetd_event *ev)
{
	struct container *ct = strmap_get(c->by_path, ev->path);
	int r;

	if (!ct) {
		controller_plan_forget(c, ev->path);	/* a pod or QoS slice */
		return 0;
	}
	if (ct->cgroup_id != ev->cgroup_id || same_cgroup(c, ev->path, ct->cgroup_id)) {
		c->n.events_stale++;	/* an older cgroup of that name */
		return 0;
	}
	strmap_del(c->by_path, ev->path);
	if (c->bpf && ct->cgroup_id)
		bpf_events_del_placement(c->bpf, ct->cgroup_id);
	if (c->tel && ct->cgroup_id)	/* after the placement: BPF would re-create it */
		bpf_telemetry_forget_cgroup(c->tel, ct->cgroup_id);
	log_info("%s (%.12s): gone", ct->name, ct->info.container_id);
	r = release(c, ct, ev->ts_ns);
	container_free(ct);
	prune_errors(c);
	return r;
}

/*
 * A container's first task appeared or its last exited (v1 and v2: the
 * kernel's populated notification). The live cgroup decides, not the
 * event: a container with no task holds nothing, one that gets a task
 * again is admitted afresh. The container stays in the table (and its
 * error listed) until its rmdir. 0 or -ENOMEM.
 */
static int on_populated(struct controller *c, const struct cpusetd_event *ev)
{
	struct container *ct = strmap_get(c->by_path, ev->path);
	char cpus[CPULIST_MAX];
	bool held;
	int live;

	if (!ct || ct->cgroup_id != ev->cgroup_id)
		return 0;	/* a pod or QoS level, or an older cgroup */
	live = cgfs_populated(c->cg, ct->path);
	if (live < 0)
		return 0;	/* vanished: its rmdir follows */
	if (live && !container_live(ct)) {
		log_info("%s (%.12s): has a task again; admitting it", ct->name,
			 ct->info.container_id);
		return place(c, ct, ev->ts_ns);
	}
	if (live || !container_live(ct) || ev->arg)
		return 0;
	held = !pooled(ct) && !ct->d.reject;
	cpulist_format(&ct->d.cpus, cpus, sizeof(cpus));
	ct->state = CT_EXITED;
	ct->exec_pending = false;
	sync_placement_map(c, ct);	/* kept: foreign writes still show */
	if (!held) {
		/* Holds nothing: its policy entry stays, for explain. */
		log_info("%s (%.12s): every task exited", ct->name, ct->info.container_id);
		c->dirty = true;
		return 0;
	}
	c->n.exited_released++;
	log_notice("%s (%.12s): every task exited; %s cpus %s released", ct->name,
		   ct->info.container_id, policy_kind_name(ct->d.kind), cpus);
	return release(c, ct, ev->ts_ns);
}

/*
 * Without a bundle the CPU limit comes from the cgroup, and at mkdir time
 * the runtime may not have written it yet (it creates every controller's
 * directory before setting any limit). At the first exec it has: if the
 * limit now makes the container integer, admit it again. Returns 0 or
 * -ENOMEM.
 */
static int reclassify_from_cgroup(struct controller *c, struct container *ct, uint64_t event_ns)
{
	int64_t quota = -1;
	uint64_t period = 0;

	if (ct->meta.from_bundle || !pooled(ct) || ct->d.err ||
	    cgfs_read_cpu_quota(c->cg, ct->path, &quota, &period) < 0 ||
	    (quota == ct->meta.quota_us && period == ct->meta.period_us))
		return 0;
	ct->meta.quota_us = quota;
	ct->meta.period_us = period;
	ct->meta.has_cpu_limit = true;
	log_info("%s: CPU limit set after its cgroup was created; placing it again", ct->name);
	return place(c, ct, event_ns);
}

/*
 * The exec check and the runtime's own write of cpuset.cpus.
 *
 * A runtime writes linux.resources.cpu.cpus to the container's own set
 * after the cgroup exists and before the container's program execs (runc:
 * Set at procReady, then the exec once `start` opens the exec fifo);
 * before that write it may already have exec'd in the cgroup (runc >= 1.2
 * creates its init there with CLONE_INTO_CGROUP; runc 1.1 re-execs its
 * memfd copy). On v2 with hierarchical writes that write pins the
 * container to the runtime's set, away from the pool its pod inherits.
 *
 * So, while the bundle says such a write is coming and it has not been
 * seen, each exec re-arms the check *before* reading the own set: a write
 * that lands after the read is followed by another exec, which reports.
 * Re-arming after the read (as before) left a window in which the write
 * and the program's exec both passed unseen, which a timer re-read then
 * papered over. Bounded: a runtime that never writes what its bundle said
 * stops costing events after EXEC_CHECKS_MAX. Without a bundle nothing
 * says whether a write comes; v2 re-arms once, for an init created in the
 * cgroup; on v1 the init joins the cgroup after its exec.
 * Known limit: linux.resources.cpu.mems is not tracked this way.
 *
 * Two things now stand in front of this, which remains the second line:
 * the write hook catches the runtime's write as it lands (on_cpuset_write),
 * and BPF reports only the container's own execs when it saw the cgroup
 * made (lifecycle map), so the runtime's own execs no longer spend checks.
 * The re-arming serves cgroups made while the daemon was down.
 */
#define EXEC_CHECKS_MAX	4

static bool expects_runtime_write(const struct controller *c, const struct container *ct)
{
	if (!ct->runtime_write_pending || ct->exec_checks >= EXEC_CHECKS_MAX)
		return false;
	return ct->meta.from_bundle || (cgfs_mounts(c->cg)->cpuset_on_v2 && ct->exec_checks < 2);
}

/* The runtime's write has landed: the own set just read is the bundle's
 * cpus; without a usable value, anything but what we knew before (prev). */
static bool runtime_write_seen(const struct container *ct, const struct cpumask *prev,
			       bool prev_known)
{
	struct cpumask want;

	if (!ct->cpus_known)
		return false;
	if (ct->meta.runtime_cpus[0] && cpulist_parse(ct->meta.runtime_cpus, &want) == 0)
		return cpumask_equal(&ct->cpus_applied, &want);
	return prev_known ? !cpumask_equal(&ct->cpus_applied, prev) : !cpumask_empty(&ct->cpus_applied);
}

/* An exec in a placed container (the check was armed): the runtime may
 * have written its own cpuset after our mkdir-time write (runc copies the
 * parent's set on v1, or applies linux.resources.cpu.cpus). Re-read and
 * re-apply. */
static int on_exec(struct controller *c, const struct cpusetd_event *ev)
{
	struct container *ct = controller_find_id(c, ev->cgroup_id);
	struct cpumask cpus, prev;
	uint64_t writes;
	bool prev_known;

	if (!ct || !container_live(ct))
		return 0;
	if (ev->arg & CPUSETD_EXEC_KILLED) {
		kill_rejected(c, ct, "at its first exec");	/* the rest of its tasks */
		return 0;
	}
	ct->exec_pending = false;	/* BPF cleared verify_pending */
	if (reclassify_from_cgroup(c, ct, ev->ts_ns) == -ENOMEM)
		return -ENOMEM;
	if (ct->d.err)
		handle_error(c, ct);
	if (ct->d.reject)
		return 0;
	ct->exec_checks++;
	if (expects_runtime_write(c, ct)) {	/* before the read: see above */
		ct->exec_pending = true;
		sync_placement_map(c, ct);
	}
	/* What the kernel holds replaces what we believe we wrote; apply()
	 * then writes exactly what differs, by the same rules as always. */
	prev = ct->cpus_applied;
	prev_known = ct->cpus_known;
	ct->cpus_known = cgfs_read_cpuset(c->cg, ct->path, CGFS_CPUS, &ct->cpus_applied) == 0;
	ct->mems_known = cgfs_read_cpuset(c->cg, ct->path, CGFS_MEMS, &ct->mems_applied) == 0;
	if (ct->runtime_write_pending && runtime_write_seen(ct, &prev, prev_known)) {
		ct->runtime_write_pending = false;
		if (ct->exec_pending) {		/* nothing more to catch */
			ct->exec_pending = false;
			sync_placement_map(c, ct);
		}
	}
	cpus = ct->cpus_applied;
	writes = c->n.cgroup_writes;
	if (apply_one(c, ct) == -ENOMEM)
		return -ENOMEM;
	if (c->n.cgroup_writes != writes) {
		char have[CPULIST_MAX];

		cpulist_format(&cpus, have, sizeof(have));
		log_notice("%s: runtime left cpus %s at exec; re-applied", ct->name, have);
		c->n.exec_reapplied++;
	}
	return 0;
}

/* --- foreign writes --- */

/*
 * A writer that keeps undoing our set is a conflict, not a loop: after
 * RESTORES_MAX restores, each within RESTORES_WINDOW_NS of the one
 * before, the container is given up (write_conflict). A writer that
 * comes back after a quiet window starts a new count.
 */
#define RESTORES_MAX		5
#define RESTORES_WINDOW_NS	(60ULL * 1000000000ULL)

/* The comm as a printable string (the writer names itself). */
static void writer_comm(const struct cpusetd_event *ev, char *buf, size_t len)
{
	size_t n = strnlen(ev->comm, sizeof(ev->comm));

	n = n < len - 1 ? n : len - 1;
	memcpy(buf, ev->comm, n);
	buf[n] = '\0';
	log_sanitize(buf);
}

/* One more foreign write by comm, for status.json and the .prom export. */
static void count_writer(struct controller *c, const char *comm)
{
	struct writer_count *w = strmap_get(c->writers, comm);

	if (!w) {
		w = calloc(1, sizeof(*w));
		if (!w || strmap_put(c->writers, comm, w) < 0) {
			free(w);
			return;		/* ENOMEM: the total still counts */
		}
		snprintf(w->comm, sizeof(w->comm), "%s", comm);
	}
	w->writes++;
}

/* The fight is lost: say so once, list it, and stop restoring. */
static void give_up(struct controller *c, struct container *ct, const char *comm,
		    const struct cpusetd_event *ev, const char *file)
{
	char msg[256];

	ct->conflict = true;
	c->n.write_conflicts++;
	snprintf(msg, sizeof(msg), "%s[%u] keeps writing %s (%u restores, each within %llu s); "
		 "cpusetd no longer restores it", comm, ev->pid, file, ct->restores,
		 RESTORES_WINDOW_NS / 1000000000ULL);
	log_error("%s (%.12s): write conflict: %s", ct->name, ct->info.container_id, msg);
	note_pod_error(c, ct, "write_conflict", msg, "conflict");
}

/*
 * Another process wrote a managed container's cpuset.cpus or .mems
 * (BPF: after the write went through). The file as it is now replaces
 * what we believed, and the decision is written again where they differ,
 * by the same rules as every write. Logged once per container and writer.
 */
static int on_cpuset_write(struct controller *c, const struct cpusetd_event *ev)
{
	struct container *ct = controller_find_id(c, ev->cgroup_id);
	bool cpus = ev->arg == CPUSETD_FILE_CPUS;
	const char *file = cpus ? "cpuset.cpus" : "cpuset.mems";
	char comm[sizeof(ev->comm) + 1], wrote[80], now[CPULIST_MAX];
	uint64_t writes, t = now_ns();

	if (!ct || !container_live(ct) || ct->killed)
		return 0;
	writer_comm(ev, comm, sizeof(comm));
	c->n.foreign_writes++;
	count_writer(c, comm);
	c->dirty = true;
	if (ct->conflict || c->cfg->dry_run)
		return 0;
	if (cpus)
		ct->cpus_known = cgfs_read_cpuset(c->cg, ct->path, CGFS_CPUS, &ct->cpus_applied) == 0;
	else
		ct->mems_known = cgfs_read_cpuset(c->cg, ct->path, CGFS_MEMS, &ct->mems_applied) == 0;
	writes = c->n.cgroup_writes;
	if (apply_one(c, ct) == -ENOMEM)
		return -ENOMEM;
	if (c->n.cgroup_writes == writes)
		return 0;	/* it wrote what we want: nothing to undo */
	c->n.foreign_restores++;
	ct->restores = t - ct->last_restore_ns < RESTORES_WINDOW_NS ? ct->restores + 1 : 1;
	ct->last_restore_ns = t;
	snprintf(wrote, sizeof(wrote), "%.64s", ev->path);
	wrote[strcspn(wrote, "\n")] = '\0';	/* echo's newline */
	log_sanitize(wrote);
	cpulist_format(cpus ? &ct->cpus_applied : &ct->mems_applied, now, sizeof(now));
	if (strcmp(ct->writer_logged, comm) != 0) {
		log_warn("%s (%.12s): %s[%u] wrote %s %s; restored %s", ct->name,
			 ct->info.container_id, comm, ev->pid, file, wrote, now);
		snprintf(ct->writer_logged, sizeof(ct->writer_logged), "%s", comm);
	}
	if (ct->restores >= RESTORES_MAX)
		give_up(c, ct, comm, ev, file);
	return 0;
}

int controller_handle(struct controller *c, const struct cpusetd_event *ev)
{
	c->n.events++;
	if (!c->root[0])
		return 0;
	/* Queued before the latest resync began: it already read the live
	 * tree, which this event can only describe less well. */
	if (ev->ts_ns < c->resync_started_ns) {
		c->n.events_stale++;
		return 0;
	}
	switch (ev->type) {
	case CPUSETD_EV_MKDIR:
		return on_mkdir(c, ev);
	case CPUSETD_EV_RMDIR:
		return on_rmdir(c, ev);
	case CPUSETD_EV_EXEC:
		return on_exec(c, ev);
	case CPUSETD_EV_POPULATED:
		return on_populated(c, ev);
	case CPUSETD_EV_CPUSET_WRITE:
		return on_cpuset_write(c, ev);
	default:
		return 0;
	}
}

/* --- in-place resize --- */

static void log_resize_refused(struct controller *c, struct container *ct,
			       const struct policy_decision *d, int64_t quota, uint64_t period)
{
	char cpus[CPULIST_MAX];

	c->n.inplace_resizes_refused++;
	if (ct->resize_refused_quota == quota)
		return;
	ct->resize_refused_quota = quota;
	c->dirty = true;	/* the counter shows in status.json */
	cpulist_format(&ct->d.cpus, cpus, sizeof(cpus));
	log_warn("%s (%.12s): in-place resize to %.2f CPUs refused (%s: %s); keeps cpus %s",
		 ct->name, ct->info.container_id, (double)quota / (double)period,
		 policy_error_name(d->err), d->reason, cpus);
}

/* Brings ct and the pools to a resized decision: whoever gives CPUs up
 * writes first, so no CPU is ever in two exclusive sets. */
static void apply_resize(struct controller *c, struct container *ct,
			 const struct policy_decision *old, const struct pools *before)
{
	struct pools after;
	bool shrinks = old->kind == CPUSETD_KIND_INTEGER && ct->d.kind == CPUSETD_KIND_INTEGER &&
		       cpumask_subset(&ct->d.cpus, &old->cpus);

	get_pools(c, &after);
	if (controller_planned(c)) {
		/* The plan orders it: the pools narrow, then exclusive sets
		 * land, then the pools widen (cgfs_plan.h). */
		if (!pools_equal(before, &after))
			c->n.resizes++;
		apply_one(c, ct);
		sync_shared_maps(c);
		sync_placement_map(c, ct);
		return;
	}
	if (shrinks)
		apply(c, ct);
	if (!pools_equal(before, &after))
		resize_shared(c);
	if (!shrinks)
		apply(c, ct);
	sync_shared_maps(c);
	sync_placement_map(c, ct);
}

/* One container: 1 when its placement changed, 0 when not, -ENOMEM. */
static int check_resize(struct controller *c, struct container *ct)
{
	struct policy_decision old = ct->d, d;
	struct policy_request req;
	struct pools before;
	int64_t quota, was_quota = ct->meta.quota_us;
	uint64_t period, was_period = ct->meta.period_us;
	bool was_limited = ct->meta.has_cpu_limit;
	int r;

	if (ct->meta.sandbox || ct->info.qos != POD_QOS_GUARANTEED || ct->killed ||
	    !container_live(ct) ||
	    ct->d.err || ct->d.kind == CPUSETD_KIND_ANNOTATED ||
	    cgfs_read_cpu_quota(c->cg, ct->path, &quota, &period) < 0 || quota <= 0 || !period)
		return 0;
	if (was_limited && quota == was_quota && period == was_period) {
		ct->resize_refused_quota = 0;	/* a refused resize was taken back */
		return 0;
	}
	ct->meta.quota_us = quota;
	ct->meta.period_us = period;
	ct->meta.has_cpu_limit = true;
	request_of(c, ct, &req);
	get_pools(c, &before);
	r = policy_resize(c->policy, &req, &d);
	if (r == -ENOMEM)
		return r;
	if (r < 0) {
		/* Not applied, not an admission error: the placement stands.
		 * Keep the old limit so the next check tries again. */
		ct->meta.quota_us = was_quota;
		ct->meta.period_us = was_period;
		ct->meta.has_cpu_limit = was_limited;
		log_resize_refused(c, ct, &d, quota, period);
		return 0;
	}
	ct->resize_refused_quota = 0;
	if (r == 0)
		return 0;	/* a limit change within the same class and N */
	ct->d = d;
	apply_resize(c, ct, &old, &before);
	log_info("%s (%.12s): in-place resize to %.2f CPUs", ct->name, ct->info.container_id,
		 (double)quota / (double)period);
	log_decision(ct);
	c->n.inplace_resizes++;
	c->dirty = true;
	return 1;
}

int controller_check_resizes(struct controller *c)
{
	size_t it = 0;
	const char *k;
	void *v;
	int n = 0, r;

	if (!c->root[0])
		return 0;
	while (strmap_next(c->by_path, &it, &k, &v)) {
		r = check_resize(c, v);
		if (r < 0)
			return r;
		n += r;
	}
	return n;
}

/* --- resync --- */

struct scan {
	struct controller *c;
	struct container **list;
	size_t n, cap;
};

static int scan_one(const char *path, void *arg)
{
	struct scan *s = arg;
	struct cgfs_path_info info;
	struct container *ct;

	if (cgfs_parse_path(s->c->root, path, &info) < 0 || info.level != CGFS_LEVEL_CONTAINER)
		return 0;
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 64;
		struct container **l = realloc(s->list, cap * sizeof(*l));

		if (!l)
			return -ENOMEM;
		s->list = l;
		s->cap = cap;
	}
	ct = new_container(s->c, path, &info, 0);
	if (!ct)
		return -ENOMEM;
	/* What the kernel holds now: the own sets, which the plan and the
	 * writes start from, and where the tasks run, which recovery starts
	 * from. On v2 the two differ when the container inherits its set
	 * from its pod (hierarchical writes): its own set is then "" or
	 * every CPU, and taking that for its placement moved running
	 * exclusive containers at a restart. Unreadable: empty, as if new. */
	ct->cpus_known = cgfs_read_cpuset(s->c->cg, path, CGFS_CPUS, &ct->cpus_applied) == 0;
	ct->mems_known = cgfs_read_cpuset(s->c->cg, path, CGFS_MEMS, &ct->mems_applied) == 0;
	if (cgfs_read_running_cpus(s->c->cg, path, &ct->cpus_running) < 0)
		cpumask_zero(&ct->cpus_running);
	/* Recovery never admits a cgroup with no task: a stopped container
	 * whose cgroup remains, or one whose runtime has not put its init
	 * there yet; either is admitted at its first task (on_populated). */
	if (cgfs_populated(s->c->cg, path) == 0)
		ct->state = CT_WAITING;
	container_started(s->c, ct);	/* BPF's lifecycle entry, made if missing */
	/* The runtime's write already there: recovery plans over it. */
	if (ct->runtime_write_pending && ct->meta.runtime_cpus[0] &&
	    runtime_write_seen(ct, &ct->cpus_applied, ct->cpus_known))
		ct->runtime_write_pending = false;
	s->list[s->n++] = ct;
	return 0;
}

static int inherit_all(struct container **list, size_t n)
{
	struct strmap *sandboxes = strmap_new();

	if (!sandboxes)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		if (list[i]->meta.sandbox && strmap_put(sandboxes, list[i]->info.container_id, list[i]) < 0) {
			strmap_free(sandboxes);
			return -ENOMEM;
		}
	for (size_t i = 0; i < n; i++)
		if (list[i]->meta.sandbox_id[0])
			inherit_pod_annotations(list[i], strmap_get(sandboxes, list[i]->meta.sandbox_id));
	strmap_free(sandboxes);
	return 0;
}

/*
 * kubelet's checkpoint, when taking over a node from its static policy
 * (DESIGN.md "kubelet takeover"). A malformed file is logged once per
 * resync and changes nothing; a missing one is the normal case.
 */
static void read_kubelet_state(const struct controller *c, struct kubelet_state *ret)
{
	int r;

	*ret = (struct kubelet_state){ 0 };
	if (!c->cfg->kubelet_state_file[0])
		return;
	r = kubelet_state_read(c->cfg->kubelet_state_file, ret);
	if (r == -ENOENT)
		return;
	if (r < 0) {
		log_error("kubelet state %s: %s; not taking over its assignments",
			  c->cfg->kubelet_state_file, r == -EBADMSG ? "malformed" : strerror(-r));
		*ret = (struct kubelet_state){ 0 };
	} else if (ret->n) {
		log_info("kubelet state %s: %zu assignments of kubelet's static policy kept "
			 "where still valid", c->cfg->kubelet_state_file, ret->n);
	}
}

static int recover(struct controller *c, struct container **list, size_t n)
{
	struct kubelet_state ks = { 0 };
	struct policy_request *reqs = calloc(n + 1, sizeof(*reqs));
	struct cpumask *cur = calloc(n + 1, sizeof(*cur));
	uint64_t *order = calloc(n + 1, sizeof(*order));
	struct policy_decision *d = calloc(n + 1, sizeof(*d));
	int r = -ENOMEM;

	if (!reqs || !cur || !order || !d)
		goto out;
	read_kubelet_state(c, &ks);
	for (size_t i = 0; i < n; i++) {
		request_of(c, list[i], &reqs[i]);
		reqs[i].kubelet_cpus = kubelet_state_find(&ks, list[i]->meta.pod_uid,
							  list[i]->meta.container_name,
							  list[i]->info.container_id);
		reqs[i].running = true;	/* a CPU offline is hotplug, not refusal */
		cur[i] = list[i]->cpus_running;
		order[i] = list[i]->cgroup_id;
	}
	policy_reset(c->policy);
	r = policy_recover(c->policy, reqs, cur, order, n, d);
	for (size_t i = 0; r == 0 && i < n; i++)
		list[i]->d = d[i];
out:
	kubelet_state_free(&ks);
	free(reqs);
	free(cur);
	free(order);
	free(d);
	return r;
}

/* recover() over the containers that have a task; the others hold
 * nothing until they get one. 0 or -ENOMEM. */
static int recover_live(struct controller *c, struct container **list, size_t n)
{
	struct container **live = calloc(n + 1, sizeof(*live));
	size_t k = 0;
	int r;

	if (!live)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		if (container_live(list[i]))
			live[k++] = list[i];
	r = recover(c, live, k);
	free(live);
	return r;
}

/* Swaps in the scanned table, keeping per-container memory (errors
 * already logged) of containers that survived. */
static int install_table(struct controller *c, struct container **list, size_t n)
{
	struct strmap *m = strmap_new();

	if (!m)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		const struct container *old = strmap_get(c->by_path, list[i]->path);

		if (old && old->cgroup_id == list[i]->cgroup_id) {
			list[i]->error_logged = old->error_logged && old->d.err == list[i]->d.err;
			list[i]->killed = old->killed;
			list[i]->message_written = old->message_written;
			list[i]->restores = old->restores;
			list[i]->last_restore_ns = old->last_restore_ns;
			list[i]->conflict = old->conflict;
			memcpy(list[i]->writer_logged, old->writer_logged,
			       sizeof(list[i]->writer_logged));
			list[i]->rebuild_skipped = old->rebuild_skipped;
			/* A refused resize is not news after a resync either. */
			list[i]->resize_refused_quota = old->resize_refused_quota;
		}
		if (strmap_put(m, list[i]->path, list[i]) < 0) {
			strmap_free(m);
			return -ENOMEM;
		}
	}
	free_table(c->by_path);
	c->by_path = m;
	return 0;
}

/* The old table still describes the placements in force: keep it, say
 * so once per cause, and let the main loop retry. */
static void resync_failed(struct controller *c, int r)
{
	c->n.resync_failures++;
	if (c->resync_failed != r)
		log_error("resync under %s failed: %s; placements stay as they are, retrying",
			  c->root, strerror(-r));
	c->resync_failed = r;
	c->dirty = true;
}

int controller_retry_resync(struct controller *c)
{
	return c->resync_failed ? controller_resync(c) : 0;
}

/* One line per container whose CPUs the resync changed: where its tasks
 * ran at the scan, and where they may run now. */
static void log_corrected(struct controller *c, const struct container *ct)
{
	char was[CPULIST_MAX], now[CPULIST_MAX];
	struct cpumask m;

	if (!container_live(ct) || cgfs_read_running_cpus(c->cg, ct->path, &m) < 0 ||
	    cpumask_equal(&m, &ct->cpus_running) || cpumask_empty(&ct->cpus_running))
		return;
	cpulist_format(&ct->cpus_running, was, sizeof(was));
	cpulist_format(&m, now, sizeof(now));
	log_notice("%s (%.12s): resync corrected cpus %s -> %s (%s)", ct->name,
		   ct->info.container_id, was, now, policy_kind_name(ct->d.kind));
}

int controller_resync(struct controller *c)
{
	struct scan s = { .c = c };
	uint64_t started = now_ns();
	int r;

	if (!c->root[0])
		return -ENOENT;
	r = cgfs_walk(c->cg, c->root, scan_one, &s);
	if (r == 0)
		r = inherit_all(s.list, s.n);
	if (r == 0)
		r = recover_live(c, s.list, s.n);
	if (r == 0)
		r = install_table(c, s.list, s.n);
	if (r < 0) {
		for (size_t i = 0; i < s.n; i++)
			container_free(s.list[i]);
		free(s.list);
		resync_failed(c, r);
		return r;
	}
	c->resync_failed = 0;
	c->resync_started_ns = started;
	/* Shared first: they leave reserved CPUs before exclusive ones land.
	 * Slices and pods are re-read: anyone may have written them. */
	controller_plan_reset(c);
	resize_shared(c);
	for (size_t i = 0; i < s.n; i++) {
		struct container *ct = s.list[i];

		if (!pooled(ct))
			apply(c, ct);
		if (ct->d.err)
			handle_error(c, ct);
		skip_sched_rebuild(c, ct);
		/* Armed: a container caught between its mkdir and its first
		 * exec may still get a set from its runtime. */
		ct->exec_pending = container_live(ct);
		sync_placement_map(c, ct);
	}
	for (size_t i = 0; i < s.n; i++)
		log_corrected(c, s.list[i]);
	free(s.list);
	prune_errors(c);
	c->n.resyncs++;
	c->dirty = true;
	log_info("resync: %zu containers under %s", s.n, c->root);
	return 0;
}

/* --- telemetry maps --- */

/* cpu_owner from the table: integer containers own their CPUs. */
static void sync_cpu_owner(struct controller *c)
{
	static struct cpusetd_cpu_owner owners[CPUSETD_MAX_CPUS];
	size_t it = 0;
	const char *k;
	void *v;
	int cpu, r;

	memset(owners, 0, sizeof(owners));
	while (strmap_next(c->by_path, &it, &k, &v)) {
		const struct container *ct = v;

		if (ct->d.kind != CPUSETD_KIND_INTEGER || ct->d.err || !ct->cgroup_id ||
		    !container_live(ct))
			continue;
		cpumask_for_each(cpu, &ct->d.cpus)
			owners[cpu] = (struct cpusetd_cpu_owner){ .cgroup_id = ct->cgroup_id,
								  .kind = ct->d.kind };
	}
	r = bpf_telemetry_set_owners(c->tel, owners, CPUSETD_MAX_CPUS);
	if (r < 0)
		log_debug("telemetry: cpu_owner update failed: %s", strerror(-r));
}

static bool known_cgroup(uint64_t cgroup_id, void *ctx)
{
	return controller_find_id(ctx, cgroup_id) != NULL;
}

void controller_sync_telemetry(struct controller *c)
{
	int r;

	if (!c->tel)
		return;
	sync_cpu_owner(c);
	if (c->tel_pruned_at == c->n.resyncs)
		return;
	/* O(entries × containers), only after a resync. */
	c->tel_pruned_at = c->n.resyncs;
	r = bpf_telemetry_prune(c->tel, known_cgroup, c);
	if (r < 0)
		log_debug("telemetry: pruning cgroup_stats failed: %s", strerror(-r));
	else if (r > 0)
		log_debug("telemetry: dropped the stats of %d containers that are gone", r);
}

/* --- CPU hotplug --- */

/* One container's hotplug change, logged once here, where it is decided. */
static void log_hotplug(struct controller *c, const struct policy_hotplug_change *ch)
{
	const struct policy_entry *e = policy_lookup(c->policy, ch->container_id);
	char lost[CPULIST_MAX], added[CPULIST_MAX], cpus[CPULIST_MAX];

	if (!e)
		return;
	cpulist_format(&ch->lost, lost, sizeof(lost));
	cpulist_format(&ch->added, added, sizeof(added));
	cpulist_format(&e->cpus, cpus, sizeof(cpus));
	switch (ch->what) {
	case POLICY_HP_REPLACED:
		log_notice("%s (%.12s): CPU %s offline, replaced by %s; cpus %s", e->name,
			   e->container_id, lost, added, cpus);
		break;
	case POLICY_HP_REFILLED:
		log_notice("%s (%.12s): shortfall filled with CPU %s; cpus %s", e->name,
			   e->container_id, added, cpus);
		break;
	case POLICY_HP_SHORT:
		c->n.hotplug_shortfalls++;
		log_error("%s (%.12s): %s: %s", e->name, e->container_id,
			  policy_error_name(e->err), e->reason);
		break;
	case POLICY_HP_OFFLINE:
		log_error("%s (%.12s): %s: %s", e->name, e->container_id,
			  policy_error_name(e->err), e->reason);
		break;
	case POLICY_HP_RESTORED:
		log_notice("%s (%.12s): CPU %s online again; cpus %s, error cleared", e->name,
			   e->container_id, added, cpus);
		break;
	}
}

/* The kernel's cpuset.cpus, not what we last wrote: v1 removed offline
 * CPUs behind our back. New decisions from the policy. */
static void refresh_container(struct controller *c, struct container *ct)
{
	struct policy_decision d;

	ct->cpus_known = cgfs_read_cpuset(c->cg, ct->path, CGFS_CPUS, &ct->cpus_applied) == 0;
	if (ct->killed || policy_decision_get(c->policy, ct->info.container_id, &d) < 0)
		return;
	ct->error_logged = ct->error_logged && d.err == ct->d.err;
	if (ct->d.err_hotplug && !d.err)	/* its CPUs are back: listed no more */
		pod_errors_forget(c->errors, ct->meta.namespace_, error_pod(ct),
				  error_container(ct));
	ct->d = d;
	if (d.err_hotplug) {
		ct->error_logged = true;	/* log_hotplug said it */
		note_pod_error(c, ct, policy_error_name(d.err), d.reason, "kept");
	}
}

/* Pooled first: integer containers' replacements come out of the pool. */
static void converge_hotplug(struct controller *c)
{
	size_t it = 0;
	const char *k;
	void *v;

	it = 0;
	while (strmap_next(c->by_path, &it, &k, &v))
		refresh_container(c, v);
	resize_shared(c);
	it = 0;
	while (strmap_next(c->by_path, &it, &k, &v)) {
		struct container *ct = v;

		if (!pooled(ct) && !ct->killed)
			apply(c, ct);
		sync_placement_map(c, ct);
	}
}

int controller_set_topology(struct controller *c, const struct topology *topo)
{
	char off[CPULIST_MAX], on[CPULIST_MAX], online[CPULIST_MAX];
	struct policy_hotplug hp;
	int r = policy_set_online(c->policy, topo, &hp);

	if (r < 0)
		return r;
	c->topo = topo;
	cpulist_format(&hp.went_offline, off, sizeof(off));
	cpulist_format(&hp.came_online, on, sizeof(on));
	cpulist_format(&topo->online, online, sizeof(online));
	log_notice("CPU hotplug: offline now %s, online again %s; online CPUs %s",
		   off[0] ? off : "-", on[0] ? on : "-", online);
	for (size_t i = 0; i < hp.n; i++)
		log_hotplug(c, &hp.changes[i]);
	c->n.hotplug_changes++;
	c->n.hotplug_replacements += hp.replaced;
	policy_hotplug_free(&hp);
	if (c->root[0])
		converge_hotplug(c);
	c->dirty = true;
	return 0;
}
