/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The policy's book-keeping, shared by policy*.c (not for other modules).
 */
#ifndef CPUSETD_POLICY_INTERNAL_H
#define CPUSETD_POLICY_INTERNAL_H

#ifdef __bpf__
#error "user-space header: BPF programs share only maps/cpusetd.h"
#endif

#include "user/alloc/alloc_topo.h"
#include "policy.h"
#include "user/base/strmap.h"

struct policy {
	const struct topology *topo;
	struct alloc_topo *at;			/* allocation view of topo->online */
	struct policy_config cfg;
	struct strmap *by_cid;			/* byCID: id -> entry */
	struct strmap *pods;			/* pod scope: pod UID -> struct pod_affinity */
	uint16_t annot_ref[CPUSETD_MAX_CPUS];	/* annotRef */
	struct policy_entry *int_owner[CPUSETD_MAX_CPUS];	/* intOwner */
	struct cpumask annotated;		/* annot_ref > 0 */
	struct cpumask exclusive;		/* int_owner != NULL (LSE and LSR) */
	struct cpumask lsr;			/* exclusive CPUs BE may use */
	struct cpumask pod_rooms;		/* pod scope: CPUs held for pods' later
						 * containers (policy_pods.c) */
	struct koord_cpu_usage usage[CPUSETD_MAX_CPUS];	/* scratch for policy_place */
	uint64_t pools_gen;			/* bumped when annotated, exclusive, lsr
						 * or the online set change: the pools'
						 * inputs (policy_pools_gen) */
};

/* What a container is, before any CPU is chosen. */
enum klass { K_ANNOTATED, K_SCHEDULED, K_INTEGER, K_SHARED, K_BE };

struct klass_info {
	enum klass k;
	unsigned n;			/* K_INTEGER: CPUs wanted */
	enum policy_qos qos;		/* effective QoS class */
	enum policy_rule rule;
	bool prefer_isolated;
};

/*
 * Classifies req (policy_classify.c). Returns 0 and *ret, or an admission
 * error (negative errno) with d->err and d->reason set for a malformed
 * or contradictory pod annotation.
 */
int policy_classify(const struct policy *p, const struct policy_request *req,
		    struct klass_info *ret, struct policy_decision *d);

/* Places a classified container: d->kind, d->cpus, d->mems
 * (policy_place.c). Returns 0 or an admission error as policy_admit. */
int policy_place(struct policy *p, const struct policy_request *req,
		 const struct klass_info *ki, struct policy_decision *d);

/* --- book-keeping (policy_book.c): calls no other policy file --- */

/* Records an admission error on d (reason raw, cut at its size: see
 * struct policy_decision); returns its negative errno. */
int policy_fail(struct policy_decision *d, enum policy_error err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Refuses (policy_fail) when taking cpus would leave the shared pool below
 * min_shared_cpus. Returns 0 or the error. */
int policy_check_pool(const struct policy *p, const struct cpumask *cpus,
		      struct policy_decision *d);

/* cpulist of m into buf, or "(N CPUs)" when it does not fit. */
void policy_fmt_mask(const struct cpumask *m, char *buf, size_t len);

/* Marks e's CPUs as annotated or exclusive (its kind) in the book-keeping. */
void policy_own_cpus(struct policy *p, struct policy_entry *e);
/* The reverse: unmarks the CPUs only e held. Returns true when the
 * reserved set changed. */
bool policy_disown_cpus(struct policy *p, struct policy_entry *e);

/* The CPUs an integer container of class ki may take: online − annotated
 * − exclusive − reserved_cpus − system_qos_cpus, isolated ones only on
 * opt-in (never mixed). */
void policy_free_for(const struct policy *p, const struct klass_info *ki, struct cpumask *ret);
/*
 * Takes out of free_cpus (CPU ids) one physical core of every pool part
 * in use (a pod Koordinator bound to NUMA nodes) whose CPUs are all in
 * it: the part's lowest core, so the answer stays stable. For a second
 * choice when the first would have emptied a part (place_integer): the
 * allocator then looks elsewhere instead of the pod being refused.
 * Returns true when it took anything out. Cannot fail.
 */
bool policy_hold_parts(const struct policy *p, struct cpumask *free_cpus);
/* The same with rooms in place of every pod's room (p->pod_rooms): for
 * choosing rooms again before they move (policy_pods.c). */
void policy_free_beside(const struct policy *p, const struct klass_info *ki,
			const struct cpumask *rooms, struct cpumask *ret);

/* The admission error of a policy_alloc_choose() errno. */
enum policy_error policy_alloc_error(int r);

/* The decision recorded for e (pooled kinds get their pool now). */
void policy_decision_of(const struct policy *p, const struct policy_entry *e,
			struct policy_decision *d);

/* Admits req as ki, or keeps `keep` for an integer container (recovery). */
int policy_admit_as(struct policy *p, const struct policy_request *req,
		    const struct klass_info *ki, const struct cpumask *keep,
		    struct policy_decision *d);

/*
 * The CPUs an integer container found running may keep (policy_keep.c):
 * req->kubelet_cpus (kubelet checkpoint) when valid, else current when
 * valid, else NULL. Valid = exactly ki->n online CPUs, none annotated,
 * exclusive or in reserved_cpus, isolated only if it opted in, and the
 * shared pool keeps its minimum. For req->running, also the online part
 * of current (1..n-1 CPUs, the rest offline), copied into *buf.
 */
const struct cpumask *policy_keepable(const struct policy *p, const struct klass_info *ki,
				      const struct policy_request *req,
				      const struct cpumask *current, struct cpumask *buf);

/* Pod scope (policy_pods.c). Fills ar->has_affinity/affinity (and adds
 * the pod's room to ar->free) or ar->pod_n. */
void policy_pod_affinity(const struct policy *p, const struct policy_request *req,
			 struct policy_alloc_req *ar);
/* Remembers the NUMA mask the pod of req was aligned to (first container). */
void policy_pod_affinity_note(struct policy *p, const struct policy_request *req,
			      const struct cpumask *nodes);
/* Counts e (its n_cpus) in its pod's affinity, creating it from e->mems
 * when missing; pod_cpus = the pod's integer CPUs (0 unknown) sizes the
 * room held for the rest. Returns true when counted; false outside pod
 * scope or for non-integer. */
bool policy_pod_affinity_hold(struct policy *p, const struct policy_entry *e, unsigned pod_cpus);
/* A counted container of pod_uid went from old_n to new_n CPUs. */
void policy_pod_affinity_resized(struct policy *p, const char *pod_uid, unsigned old_n,
				 unsigned new_n);
/* Chooses every pod's room again (the online set changed: a room must
 * not hold offline CPUs). */
void policy_pod_rooms_refresh(struct policy *p);
/*
 * A fixed set (annotated or scheduled) of cpus is about to be taken.
 * policy_pod_room_holder: the pod ("namespace/pod") whose room holds a CPU
 * of cpus, with that CPU in *ret_cpu; NULL when none does.
 * policy_pod_rooms_block: the same, but only for a room that could not be
 * chosen again in full inside its pod's NUMA mask without cpus (replaying
 * policy_pod_rooms_yield); NULL when every overlapped room can move.
 */
const char *policy_pod_room_holder(const struct policy *p, const struct cpumask *cpus,
				   int *ret_cpu);
const char *policy_pod_rooms_block(const struct policy *p, const struct cpumask *cpus,
				   int *ret_cpu);
/* Chooses again every room that holds a CPU of cpus (a fixed set just
 * recorded: its CPUs are annotated or exclusive now). A room that cannot
 * be whole again holds what is left in its mask (running sets, recovery). */
void policy_pod_rooms_yield(struct policy *p, const struct cpumask *cpus);
/* Uncounts one container of pod_uid (n_cpus); forgets the mask at zero. */
void policy_pod_affinity_drop(struct policy *p, const char *pod_uid, unsigned n_cpus);

#endif
