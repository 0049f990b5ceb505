/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The controller's insides, shared by its files (controller.c lists
 * them) and by nothing else: the daemon, the exporters and the tests use
 * controller.h.
 */
#ifndef CPUSETD_CONTROLLER_INTERNAL_H
#define CPUSETD_CONTROLLER_INTERNAL_H

#ifdef __bpf__
#error "user-space header: BPF programs share only maps/cpusetd.h"
#endif

#include <stdbool.h>
#include <stdint.h>
#include "cgroupfs/cgfs.h"
#include "user/base/clock.h"
#include "user/base/latency.h"
#include "user/base/log.h"
#include "user/base/procs.h"
#include "user/base/strmap.h"
#include "user/bpf/bpf_events.h"
#include "user/bpf/bpf_telemetry.h"
#include "user/config/config.h"
#include "user/enforce/enforce.h"
#include "user/export/counters.h"
#include "user/export/status.h"
#include "user/meta/meta.h"
#include "user/policy/pod_errors.h"
#include "user/policy/policy.h"
#include "user/topo/topology.h"
#include "controller.h"
#include "user/reject/reject_writer.h"

/*
 * Whether a container holds a placement. The live kernel decides: a
 * container cgroup with no task holds nothing (its CPUs go back to the
 * pools), whether it never had one when a resync found it (the runtime
 * between its mkdir and its first task, or a stopped container whose
 * cgroup remains) or lost its last (BPF cgroup_notify_populated). It is
 * admitted when a task appears.
 */
enum container_state {
	CT_LIVE = 0,	/* admitted: its decision is in force */
	CT_WAITING,	/* found empty at a resync: admitted at its first task */
	CT_EXITED,	/* every task exited: released */
	CT_PENDING,	/* admitted at NRI CreateContainer, its cgroup not made yet:
			 * not in the table (controller_nri.c keeps it) */
};

/* One container cgroup under the kubepods root. */
struct container {
	char path[CGFS_PATH_MAX];
	uint64_t cgroup_id;
	struct cgfs_path_info info;
	struct pod_meta meta;
	char name[320];			/* namespace/pod/container */
	struct policy_decision d;	/* latest decision */
	struct cpumask cpus_applied;	/* its own cpuset.cpus as we last wrote or read
					 * it (v2 planned: often "", inherited) */
	struct cpumask mems_applied;
	bool cpus_known, mems_known;
	struct cpumask cpus_running;	/* resync: where its tasks ran at the scan
					 * (cgfs_read_running_cpus); recovery keeps
					 * an exclusive container there. Not its own
					 * set: on v2 that is "" when it inherits */
	int cpus_fd;			/* cpuset.cpus kept open for resizes; -1 */
	int plan_node;			/* its leaf in the v2 plan tree ... */
	uint64_t plan_gen;		/* ... while this is the tree's generation */
	bool exec_pending;		/* placement map armed, no exec seen yet */
	unsigned exec_checks;		/* exec events handled */
	bool runtime_write_pending;	/* its runtime may still write its own
					 * cpuset.cpus (controller_exec.c) */
	struct cpumask map_cpus;	/* placement map's cpus as we last wrote them */
	int map_err;			/* -errno of its failed placement map
					 * write; 0: the entry is as decided */
	bool error_logged;
	bool killed;
	bool rebuild_skipped;		/* cgfs_skip_sched_rebuild done */
	int64_t resize_refused_quota;	/* in-place resize refused for this
					 * limit (logged once); 0 = none */
	enum container_state state;
	bool reject_armed;		/* placement map says reject: BPF kills its
					 * own exec (termination message written) */
	/* A rejection's moment (controller_reject.c, controller_message.c);
	 * kept across a resync as a whole (controller_resync.c). */
	struct {
		bool message_written;	/* termination message handled (written,
					 * queued, skipped or dropped): once only */
		bool message_queued;	/* with the writer thread: the rejection is
					 * armed when it is done ... */
		uint64_t message_deadline_us;	/* ... or at this CLOCK_MONOTONIC time */
		bool start_unsure;	/* resync saw what may be a runtime's init
					 * stage (procs_start_state) */
		uint64_t reject_deadline_us;	/* CLOCK_MONOTONIC: killed then if
						 * still alive; 0 = none */
	} rejection;
	/* Foreign writes of its cpuset files (controller_defend.c); kept
	 * across a resync as a whole. */
	struct {
		unsigned restores;	/* restores in the current fight */
		uint64_t last_restore_ns;	/* CLOCK_MONOTONIC of the latest */
		bool conflict;		/* gave up: a writer kept fighting */
		char writer_logged[17];	/* comm of the writer logged last */
	} defence;
	/* CFS quota (controller_quota.c). The runtime's limit while we hold
	 * it lifted; the durable copy is the cgroup's CGFS_QUOTA_XATTR. */
	bool quota_unset;		/* we wrote "no limit"; quota_saved_* is the
					 * runtime's limit before that */
	bool quota_hold;		/* exclusive with whole CPUs: it and its pod
					 * run without a quota (unset mode) */
	bool quota_err_logged;		/* a failed quota write was logged */
	int64_t quota_saved_us;		/* > 0 while quota_unset */
	uint64_t quota_saved_period_us;
	/* NRI (controller_nri.c): placed at CreateContainer and confirmed at
	 * its mkdir; cleared once its first exec check ran */
	bool nri_placed;
	uint64_t nri_decided_ns;	/* CLOCK_MONOTONIC of that decision */
};

/*
 * log_pod about ct (log.h): the same line as log_msg on stderr; in the
 * journal also POD=namespace/pod, POD_UID, CONTAINER, CONTAINER_ID and
 * REASON (a short stable word: an admission error's name, "placed",
 * "released", ...), for `journalctl -u cpusetd POD=ns/name`.
 */
#define ct_log(level, ct, why, ...)						\
	log_pod(level, &(const struct log_pod){					\
		.namespace_ = (ct)->meta.namespace_, .pod = (ct)->meta.pod_name,	\
		.pod_uid = (ct)->meta.pod_uid[0] ? (ct)->meta.pod_uid : (ct)->info.pod_uid, \
		.container = (ct)->meta.container_name,				\
		.container_id = (ct)->info.container_id, .reason = (why) }, __VA_ARGS__)

/* A container's decision is in force (it is not waiting or exited). */
static inline bool container_live(const struct container *ct)
{
	return ct->state == CT_LIVE;
}

/* An event's enforce targets and plan (controller_apply.c), kept across
 * events so that a resize allocates nothing. */
struct controller_targets {
	struct enforce_target *t;
	struct container **ct;		/* per target: its container */
	size_t n, cap;
	struct enforce_plan plan;
	int *res;			/* per operation: its result */
	size_t res_cap;
};

/* Foreign writes by one writer's comm (controller.writers). */
struct writer_count {
	char comm[17];
	uint64_t writes;
};

struct controller {
	const struct cpusetd_config *cfg;
	struct cgfs *cg;
	const struct topology *topo;
	struct policy *policy;
	struct bpf_events *bpf;		/* NULL when running without BPF */
	struct bpf_telemetry *tel;	/* NULL when running without telemetry */
	char root[CGFS_PATH_MAX];	/* kubepods root; "" until it exists */
	struct strmap *by_path;		/* path -> struct container: the table */
	struct strmap *by_id;		/* its indexes (controller_table.c): container */
	struct strmap *by_cgroup;	/* id, cgroup id in hex -> the same container */
	struct strmap *by_pod;		/* meta.pod_uid -> its count in by_path */
	struct cpusetd_counters n;	/* counters.h */
	struct cpusetd_counters n_shown;	/* n as last exported (controller_dirty) */
	uint64_t admission_errors[POLICY_ERR__COUNT];	/* by reason, once per container */
	struct latency_hist conv_hist;
	uint64_t conv_ns[STATUS_RECENT];	/* convergence samples, ring */
	uint64_t conv_count;
	/* the phases of each sample (export/snapshot.h enum conv_phase) */
	uint64_t conv_phase_ns[CONV_PHASE__COUNT][STATUS_RECENT];
	struct latency_hist conv_phase_hist[CONV_PHASE__COUNT];
	uint64_t handle_ns;		/* CLOCK_MONOTONIC: the event at hand reached us */
	uint64_t pools_start_ns, pools_end_ns;	/* the last pool writes' span */
	bool dirty;			/* a placement, a listed error or other state
					 * status.json shows changed: an export is due
					 * (controller_exported). A counter alone needs
					 * no mark: controller_dirty compares them */
	uint64_t tel_pruned_at;		/* n.resyncs when telemetry was last pruned */
	int resync_failed;		/* -errno of the last resync, 0 = it worked */
	struct controller_plan *plan;	/* v2 hierarchical writes; NULL: every container */
	uint64_t resync_started_ns;	/* CLOCK_MONOTONIC: older events are stale */
	uint64_t runtime_mntns;		/* the runtime's mount namespace, for cgroups
					 * made while we were down (controller.c) */
	struct procs_file_id runtimes[8];	/* runtime binaries (procs.h) */
	int n_runtimes;
	uint64_t reject_due_us;		/* earliest reject_deadline_us; 0 = none */
	bool lifecycle_checked;		/* a resync checked the pinned lifecycle
					 * entries left from before our start */
	struct pod_errors *errors;	/* admission errors by namespace/pod/container */
	struct strmap *writers;		/* comm -> struct writer_count */
	int map_err_logged;		/* -errno of a placement map failure logged
					 * since the last prune (once per cause) */
	struct controller_isolate *iso;	/* host isolation (controller_isolate.c); NULL: off */
	struct reject_writer *messages;	/* termination message writer (controller_message.c) */
	uint64_t message_due_us;	/* earliest message_deadline_us of a queued
					 * message; 0 = none */
	struct controller_nri *nri;	/* NRI's records (controller_nri.c); NULL: off */
	struct controller_targets enf;	/* the event at hand's writes (controller_apply.c) */
};

/* On a pool (shared or BE), with a task: its set follows the pool. */
static inline bool pooled(const struct container *ct)
{
	return container_live(ct) &&
	       (ct->d.kind == CPUSETD_KIND_SHARED || ct->d.kind == CPUSETD_KIND_BE);
}

/* Pooled on a part of its pool (the NUMA nodes Koordinator named): its
 * set follows the pool there, and its mems are those nodes. */
static inline bool pool_part(const struct container *ct)
{
	return pooled(ct) && !cpumask_empty(&ct->d.pool_nodes);
}


/* --- controller_write.c (also the plan's writes) --- */

/* Counts one cgroup write of file `what` for ct with result r (0 or
 * -errno; -ENOENT = vanished, not an error) and logs any other failure. */
void controller_note_write(struct controller *c, struct container *ct, const char *what, int r);

/* ct's placement entry as an enforce target's (t->map_have: &ct->map_cpus,
 * cgroup_id, entry: its kind, exec check and rejection armed); map_have
 * is NULL without BPF, without a cgroup id, or with the benchmarks'
 * CPUSETD_PLACEMENT_MAP_OFF. Cannot fail. */
void controller_entry_of(const struct controller *c, const struct container *ct,
			 struct enforce_target *t);

/* What op's result r (enforce_exec: 0, ENFORCE_SKIPPED, -errno) means
 * for ct: a written file becomes its applied value (c dirty), a failed
 * one is counted and logged (controller_note_write); a written entry
 * becomes ct->map_cpus (a listed map error goes), a failed one is
 * counted, logged once per cause and listed for the pod. Cannot fail. */
void controller_write_result(struct controller *c, struct container *ct,
			     const struct enforce_op *op, int r);

/* Mirrors the decision into the BPF placement map. The exec check stays
 * armed until the container's first exec after it was placed. Returns 0
 * (also without BPF), or the map's -errno: then ct->map_err is set, and
 * the failure counted, logged and listed (controller_write.c). */
int controller_sync_map(struct controller *c, struct container *ct);

/* Deletes the placement map entry of every cgroup id not in the table
 * (containers that went away unseen: the map is pinned); after a resync,
 * and at start without a kubepods root. Counted (placement_map_pruned)
 * and logged with the number; a failure is logged and left for the next
 * resync. No-op without BPF. */
void controller_prune_map(struct controller *c);

/* Deletes ct's placement map entry (its cgroup went: controller_forget's
 * placement step). No-op without BPF or a cgroup id. Cannot fail: a key
 * left behind is pruned at the next resync. */
void controller_unmap(struct controller *c, struct container *ct);

/* --- controller_table.c --- */

/* The container's name in the per-pod error table: "POD" for a sandbox,
 * as meta_name says it; "?" when no bundle said (an invalid one). */
const char *container_error_name(const struct container *ct);

/* The pod's key there: its name, or, when no bundle said (an invalid
 * one), its UID from the cgroup path, so two such pods stay apart. */
const char *container_error_pod(const struct container *ct);

/* Frees ct (its kept fd, its metadata). Accepts NULL. */
void container_free(struct container *ct);

/* Pod annotations live on the sandbox; a runtime that does not copy them
 * to each container (no pod_annotations) still gets them from there. */
void container_inherit_pod(struct container *ct, const struct container *sb);

/* One info line: ct's kind, CPUs and NUMA nodes. Cannot fail. */
void container_log_decision(const struct container *ct);

/* A new table entry for the container cgroup at path (info parsed from
 * it), its metadata loaded: given (NRI's, copied) when not NULL, else
 * the bundle, else the cgroup's CPU limit. cgroup_id: from the event, or
 * 0 to stat the cgroup. NULL on ENOMEM. Not yet in c's table: the
 * caller puts it. */
struct container *container_new(struct controller *c, const char *path,
				const struct cgfs_path_info *info, uint64_t cgroup_id,
				const struct pod_meta *given);

/*
 * The table: every container by cgroup path (c->by_path, which callers
 * iterate), indexed by container id and by cgroup id, so an event or an
 * NRI request finds its container in O(1), and counted by pod UID, so the
 * error prune asks whether a pod has a cgroup left in O(1). Entries
 * change only through these functions, which keep the four maps in step.
 */

/* Empty maps. 0 or -ENOMEM (nothing allocated). */
int controller_table_init(struct controller *c);
/* Frees the maps and every container in the table. Accepts a zeroed c. */
void controller_table_free(struct controller *c);
/* Puts ct (ct->path, ->info.container_id, ->cgroup_id and ->meta.pod_uid
 * set, and not to change while it is in). ct in already: 0, nothing
 * changes. 0, or -ENOMEM (the table unchanged). */
int controller_table_put(struct controller *c, struct container *ct);
/* Takes ct out (not freed). An index entry that is another container's
 * (two paths with one id) stays. */
void controller_table_del(struct controller *c, struct container *ct);
/* Replaces the table with by_path (path -> container, from a resync),
 * indexed anew; the old containers are freed. 0, or -ENOMEM: nothing
 * changed, by_path is still the caller's. */
int controller_table_swap(struct controller *c, struct strmap *by_path);
/*
 * How many container cgroups in the table have meta.pod_uid == pod_uid
 * (exact bytes; "" counts those whose bundle and path gave no UID, as
 * controller_note_pod_error keys their errors). meta.pod_uid, not the
 * path's info.pod_uid: it is the key the pod error table holds
 * (load_meta falls back to the path's when the bundle has none).
 * pod_uid: not NULL. O(1); 0 for an unknown pod or a table not made.
 * Cannot fail.
 */
size_t controller_pod_cgroups(const struct controller *c, const char *pod_uid);
/* The container with that cgroup id (0: none), or NULL. */
struct container *controller_find_id(const struct controller *c, uint64_t cgroup_id);
/* The container whose cgroup is container_id's (64 hex, the runtime's
 * id, also NRI's), or NULL. */
struct container *controller_find_container(const struct controller *c, const char *container_id);
/* The pod's sandbox container (sandbox_id: its container id), or NULL. */
const struct container *controller_find_sandbox(const struct controller *c, const char *sandbox_id);

/* Frees a path -> container map and every container in it. */
void controller_free_table(struct strmap *m);

/* Into the per-pod error table (pod_errors.h): kubelet's next attempt of
 * the same container adds to the same entry. ENOMEM: the error is still
 * logged and counted, only not listed. */
void controller_note_pod_error(struct controller *c, const struct container *ct, const char *reason,
			       const char *message, const char *action);

/* What the policy needs to know of ct, borrowing ct's strings. */
void controller_request_of(const struct controller *c, const struct container *ct,
			   struct policy_request *req);

/* Best effort, only a speed-up for later resizes (see cgfs.h); once per
 * container, not again at every resync. */
void controller_skip_sched_rebuild(struct controller *c, struct container *ct);

/* --- controller_forget.c --- */

/*
 * Removes every trace of ct and frees it, in one fixed order (the table,
 * the v2 plan, the placement map entry, telemetry, the policy's book with
 * the pools converging and the quota given back, NRI's pointer to a
 * pending container, the pod's errors, the record; why: controller_forget.c).
 * ct: in the table (a removed cgroup) or not (NRI's pending or refused
 * container). event_ns: the event's CLOCK_MONOTONIC stamp for the
 * convergence figure (0: not timed). Every step runs; returns 0 or
 * -ENOMEM (a pool resize ran short: the next resync corrects it).
 * A record that never joined any table is freed with container_free;
 * a resync rebuilds every table at once and frees the old records so.
 */
int controller_forget(struct controller *c, struct container *ct, uint64_t event_ns);

/* Errors live as long as their pod: until no container cgroup of it is
 * left (the sandbox's goes last). O(errors) with an O(1) lookup per pod
 * (controller_pod_cgroups), only at rmdir of a container and when there
 * are errors at all. */
void controller_prune_errors(struct controller *c);

/* --- controller_telemetry.c --- */

/* Deletes ct's telemetry stats (cgroup_stats); after its placement map
 * entry is gone. No-op without telemetry or a cgroup id. Cannot fail: a
 * key left behind is pruned after the next resync. */
void controller_telemetry_forget(struct controller *c, const struct container *ct);

/* --- controller_apply.c --- */

/* Brings one container to its decision (its placement entry widened
 * first when its set grows; the exact entry is controller_sync_map's).
 * Shared: the current pool, mems untouched; an empty pool is never
 * written (tasks could not run). Planned (v2): cpuset.cpus is the plan's
 * (apply_one), only mems here. A failure is counted and logged
 * (controller_write_result), never returned. */
void controller_apply(struct controller *c, struct container *ct);

/* ct to its decision with its exact placement entry; pools: the pools
 * moved, so every pooled container and the host's share follow, in
 * enforce_plan's order on v1 (whoever gives CPUs up first), the tree's
 * on v2, and the event's convergence sample (event_ns, CLOCK_MONOTONIC
 * ns; 0: not timed) ends after the writes. Returns 0 or -ENOMEM. */
int controller_converge(struct controller *c, struct container *ct, bool pools,
			uint64_t event_ns);

/* Frees c->enf's buffers. Cannot fail. */
void controller_targets_free(struct controller *c);

/* One container to its decision; planned, the whole tree (a new
 * container can change what its pod or slice must hold). 0 or -ENOMEM. */
int controller_apply_one(struct controller *c, struct container *ct);

/* Whether ct's cpuset file f as last written or read (cpus_applied,
 * mems_applied) is off its decision: controller_apply (or, for planned
 * cpus, the v2 plan) would write it now. Unreadable counts as off; a file
 * the decision leaves alone (a pooled container's mems, an empty set)
 * never is. Writes nothing. Cannot fail. */
bool controller_off_decision(struct controller *c, struct container *ct, enum cgfs_cpuset_file f);

/* Admits ct (again: any earlier entry is released first) and converges:
 * pooled containers first when the pools moved, then ct; the placement
 * map follows; an admission error goes to controller_handle_error.
 * event_ns: the BPF event's CLOCK_MONOTONIC stamp, for the convergence
 * figure (0: not timed). Returns 0 or -ENOMEM. */
int controller_place(struct controller *c, struct container *ct, uint64_t event_ns);

/* Gives back what ct holds and converges the pools (event_ns as in
 * controller_place). Returns 0 or -ENOMEM. */
int controller_release(struct controller *c, struct container *ct, uint64_t event_ns);

/* Every pooled container to its current pool, and the host's share: one
 * plan on v2, every pooled container otherwise (enforce_plan's order).
 * Counted in resizes. Returns 0 or -ENOMEM. */
int controller_resize_pools(struct controller *c);

/* The placement map's view of shared containers after a resize; called
 * once converged, so it is not on the convergence clock. */
void controller_sync_pooled_maps(struct controller *c);

/* --- controller_reject.c --- */

/* Whether the container's own program has run: BPF counted an exec from
 * outside the runtime's mount namespace. A cgroup BPF did not see being
 * made (we were down) gets its lifecycle entry here, from its tasks;
 * tasks that may be a runtime's init stage, or that we cannot read, count
 * as not started and set ct->rejection.start_unsure (controller_reject.c).
 * Cannot fail. */
bool controller_container_started(struct controller *c, struct container *ct);

/* Admission error: logged once per container, listed per pod;
 * on_error=reject arms the kill at the container's own first exec. */
void controller_handle_error(struct controller *c, struct container *ct);

/* Kills a rejected container whose own program ran (BPF killed the exec
 * already, or it ran before the rejection was armed); every task goes.
 * when: for the log line ("at its first exec"). Counted and logged once;
 * a failed kill is logged, not returned. */
void controller_kill_rejected(struct controller *c, struct container *ct, const char *when);

/* --- controller_message.c --- */

/* The termination message writer (reject_writer.h) of a new controller,
 * and its end (waits REJECT_WRITER_STOP_MS at most). 0 or -errno. */
int controller_messages_init(struct controller *c);
void controller_messages_free(struct controller *c);

/*
 * Hands the termination message of rejected ct (its decision's error and
 * reason) to the writer thread, when ct has kubelet's own read-write file
 * for it (the last mount at its termination path, of kubelet's shape for
 * its pod UID and container name; anything else is logged once and not
 * written). Returns true when queued: ct->rejection.message_queued, and
 * controller_message_take hands ct back once the write is done or
 * REJECT_MESSAGE_WAIT_MS passed. false: nothing queued (no such file,
 * or dropped: logged and counted, termination_messages_dropped).
 */
bool controller_message_queue(struct controller *c, struct container *ct);

/*
 * The next container whose queued message is written (its result logged
 * once, with the pod fields) or overdue at now_us (CLOCK_MONOTONIC µs;
 * logged), its message_queued cleared; NULL when none. Call until NULL:
 * that also clears the writer's eventfd. O(1) per finished write; a
 * passed deadline costs one walk of the table. Cannot fail.
 */
struct container *controller_message_take(struct controller *c, uint64_t now_us);


/* --- controller_exec.c --- */

/* The runtime's write has landed: the own set just read is the bundle's
 * cpus; without a usable value, anything but what we knew before (prev). */
bool container_runtime_write_seen(const struct container *ct, const struct cpumask *prev,
				  bool prev_known);

/* An exec in a placed container (the check was armed): the runtime may
 * have written its own cpuset after our mkdir-time write (runc copies the
 * parent's set on v1, or applies linux.resources.cpu.cpus). Re-read and
 * re-apply. Returns 0 or -ENOMEM. */
int controller_on_exec(struct controller *c, const struct cpusetd_event *ev);

/* --- controller_quota.c --- */

/*
 * The CFS quota of exclusive containers (exclusive_cpu_quota = unset,
 * kubelet's DisableCPUQuotaWithExclusiveCPUs): a container that holds
 * whole CPUs of its own runs without a quota, and so does its pod
 * cgroup; the limit comes back when it leaves exclusivity or is gone,
 * and for every one at a resync with exclusive_cpu_quota = keep.
 * The container's own limit stays in ct->meta (the policy's input) and in
 * the cgroup's CGFS_QUOTA_XATTR, so a resync after a crash reads it
 * there, not the -1 we wrote.
 */

/* Whether a container of kind with ncpus CPUs of its own and the CPU
 * limit quota_us / period_us (quota_us <= 0: none) holds whole CPUs: a
 * whole number of CPUs that covers every CPU of its set, so the quota
 * could only throttle it, never hold it below what it owns. Integer and
 * annotated kinds only. Pure. */
bool quota_holds_whole_cpus(enum cpusetd_kind kind, unsigned ncpus, int64_t quota_us,
			    uint64_t period_us);

/* After ct's decision changed or an event about it (placed, released,
 * its exec, gone from the table): lifts or puts back its quota and its
 * pod's, in the order the kernel accepts. A runtime's new positive quota
 * on a container we had lifted is its new limit (an in-place resize,
 * which controller_check_resizes has seen first): saved, and lifted
 * again while the container still holds whole CPUs. Logged once per
 * change with the reason, counted (cpu_quota_*); failures are logged
 * and counted, never returned. No-op in dry_run and without a cpu
 * hierarchy. */
void controller_quota_sync(struct controller *c, struct container *ct);

/* The resize poll's part: controller_quota_sync for ct when it may need
 * it (placement changed, it is exclusive, or we hold its quota lifted);
 * nothing, without I/O, for the rest. */
void controller_quota_poll(struct controller *c, struct container *ct, bool changed);

/* At a resync, for a container just read from its cgroup (before the
 * policy sees it): a cgroup reading "no limit" with our saved limit is
 * ours, and the saved limit becomes its CPU limit again (meta); a
 * positive reading beside a mark is the runtime's newer limit, and the
 * stale mark goes. Cannot fail. */
void controller_quota_adopt(struct controller *c, struct container *ct);

/* After a resync placed everything: every container's quota as its
 * decision says (keep mode: every lifted one is put back), then pods
 * whose saved limit no container needs any more get it back. */
void controller_quota_resync(struct controller *c);

/* --- controller_isolate.c --- */

/*
 * Host isolation (isolate_host, user/host/host.h): host cgroups, the root
 * cgroup's tasks, movable IRQs and the unbound workqueue cpumask kept off
 * the exclusive CPUs (policy_reserved: integer and annotated CPUs), each
 * given back its own set when they are freed. Failures are logged once
 * and counted (isolation_*), never returned but -ENOMEM.
 */

/* At controller start: a handle when isolate_host is on or a state file
 * of an earlier run is there (with the option off it is restored at once
 * and the handle dropped). Returns 0 or -ENOMEM. */
int controller_isolate_init(struct controller *c);

/* Frees the handle; changes nothing on the node. Accepts c->iso NULL. */
void controller_isolate_free(struct controller *c);

/* The next controller_isolate_sync passes whatever the sets (resync:
 * anyone may have changed anything since). Cannot fail. */
void controller_isolate_stale(struct controller *c);

/* Where the pools change (controller_resize_pools, once per event): a
 * pass when the exclusive or online set differs from the last pass's,
 * or force. No-op with isolation off. */
void controller_isolate_sync(struct controller *c, bool force);

/* --- controller_resize.c --- */

/*
 * Re-decides ct for a new CPU limit quota_us / period_us (quota_us <= 0:
 * none) as an in-place resize does (policy_resize) and, when the
 * placement changed, converges: whoever gives CPUs up writes first. A
 * refusal keeps the placement and is logged once per limit. Only
 * Guaranteed, non-sandbox, non-annotated containers without an error are
 * re-decided, and never on an unlimited reading. Returns 1 when the
 * placement changed, 0 when not, -ENOMEM.
 */
int controller_resize_to(struct controller *c, struct container *ct, int64_t quota_us,
			 uint64_t period_us);

/* --- controller_nri_book.c (NRI's records by container id; controller_nri.c
 * answers the requests) --- */

/* One container the runtime knows through NRI. */
struct nri_rec {
	char id[72];
	bool has_meta;
	struct pod_meta meta;		/* as NRI last described it (owned) */
	bool told;			/* told_cpus is the runtime's record */
	bool told_mems;			/* told_mems too */
	struct cpumask told_cpus, told_mems_set;
	struct container *pending;	/* CT_PENDING: admitted, no cgroup yet */
};

struct controller_nri {
	struct strmap *recs;		/* container id -> struct nri_rec */
	struct strmap *logged_pods;	/* pod UID -> (void *)1 */
	bool up;			/* registered: requests come through NRI */
	bool seen;			/* it was up once: its runtime speaks NRI */
	char runtime_name[64], runtime_version[64];
	uint64_t told_gen;		/* policy_pools_gen when the runtime's records
					 * were last brought up to date */
	bool outbox_due;		/* a record may be behind (whatever the gen) */
};

/* Shared and BE containers follow their pool. */
static inline bool nri_pool_kind(enum cpusetd_kind k)
{
	return k == CPUSETD_KIND_SHARED || k == CPUSETD_KIND_BE;
}

/* The record of id, or NULL (also with NRI off). */
struct nri_rec *nri_rec_get(const struct controller *c, const char *id);

/* The record of id, made (empty) when missing. NULL on ENOMEM. */
struct nri_rec *nri_rec_want(struct controller *c, const char *id);

/* NRI's description of the container replaces the record's (deep copy).
 * 0 or -ENOMEM (the record unchanged). */
int nri_rec_set_meta(struct nri_rec *r, const struct pod_meta *m);

/* Frees a record (its pending container too), and a map of them. NULL is
 * fine. */
void nri_rec_free(struct nri_rec *r);
void nri_recs_free(struct strmap *m);

/* Frees NRI's records (pending containers too). Accepts c->nri NULL. */
void controller_nri_free(struct controller *c);

/*
 * A container cgroup's mkdir (after same_cgroup): when NRI placed the
 * container at CreateContainer, it is confirmed here, not decided again:
 * it joins the table under path with its cgroup id, the live sets are
 * read, and only a cgroup made before our answer (the runtime went on
 * without it) is written now (nri_not_applied); otherwise the runtime
 * writes the adjustment itself, and the exec check stays armed for the
 * case it did not. Returns 1 when handled so, 0 when it is not NRI's
 * (the BPF path places it), -ENOMEM.
 */
int controller_nri_on_mkdir(struct controller *c, const char *path,
			    const struct cgfs_path_info *info, uint64_t cgroup_id, uint64_t event_ns);

/* Whether ct, new in the table by the BPF path, was made without a
 * CreateContainer while the runtime has been seen over NRI (and is not a
 * sandbox). Call before ct is put in the table. */
bool controller_nri_unseen(const struct controller *c, const struct container *ct);

/* Counts (created_without_nri) and logs, once per pod, a container the
 * BPF path placed because NRI never asked; the runtime learns its set by
 * the next update. Cannot fail. */
void controller_nri_note_unseen(struct controller *c, const struct container *ct);

/* The metadata NRI gave for container_id (resync builds its table entry
 * from it instead of a bundle), or NULL. */
const struct pod_meta *controller_nri_meta(const struct controller *c, const char *container_id);

/* The runtime's record of ct is not known to match ours any more (it did
 * not apply our answer, or ct was admitted again): it is told again by
 * the next reply or the outbox. No-op without a record. */
void controller_nri_retell(struct controller *c, const struct container *ct);

/* Containers admitted at CreateContainer whose cgroup is not made yet:
 * their number, and the list (n of them) into out, each with
 * cpus_running = its decided CPUs, so a resync re-admits them where the
 * runtime was told. */
size_t controller_nri_n_pending(const struct controller *c);
void controller_nri_list_pending(struct controller *c, struct container **out);

/* --- controller_defend.c --- */

/*
 * Another process wrote a managed container's cpuset.cpus or .mems
 * (BPF: after the write went through). The file as it is now replaces
 * what we believed, and the decision is written again where they differ,
 * by the same rules as every write. Logged once per container and writer.
 * Returns 0 or -ENOMEM.
 */
int controller_on_cpuset_write(struct controller *c, const struct cpusetd_event *ev);

#endif
