// SPDX-License-Identifier: Apache-2.0
/*
 * The controller's life: set up over the daemon's config, cgroup
 * mounts and topology, torn down at exit. What it does is split by job:
 *   controller_events.c    BPF events in (mkdir, rmdir, populated), dispatch
 *   controller_apply.c     admit/release and converge: which containers an
 *                          event writes (user/enforce orders and writes them)
 *   controller_write.c     what each write's result means for its record;
 *                          the placement map's deletes and prune
 *   controller_plan.c      cgroup v2 hierarchical writes
 *   controller_reject.c    admission errors and on_error=reject
 *   controller_message.c   a rejection's termination message: which file, and
 *                          its write on the writer thread (user/reject)
 *   controller_exec.c      the exec check (the runtime's own cpuset write)
 *   controller_defend.c    foreign writes of a managed cpuset
 *   controller_resize.c    in-place resizes (kubelet InPlacePodVerticalScaling)
 *   controller_resync.c    rebuild from the live cgroups
 *   controller_hotplug.c   CPU hotplug
 *   controller_telemetry.c the telemetry maps user space owns
 *   controller_isolate.c   host isolation: when to pass (user/host does it)
 *   controller_table.c     the container table and what each container is
 *   controller_forget.c    one release of a container that goes: every table
 *                          holding a trace of it, in one order
 *   controller_nri.c       NRI's requests: placement at CreateContainer
 *   controller_nri_book.c  NRI's records by container id, and the mkdir of a
 *                          container NRI placed (confirmed) or never saw
 *   controller_release.c   cpusetd --release's question: who is exclusive
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "controller_internal.h"
#include "user/base/procs.h"
#include "controller_plan.h"

static int init(struct controller *c, const struct cpusetd_config *cfg,
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
	c->errors = pod_errors_new();
	c->writers = strmap_new();
	if (controller_table_init(c) < 0 || !c->errors || !c->writers || controller_plan_init(c) < 0 ||
	    controller_messages_init(c) < 0) {
		controller_messages_free(c);
		controller_plan_free(c);
		controller_table_free(c);
		pod_errors_free(c->errors);
		strmap_free(c->writers);
		policy_free(c->policy);
		return -ENOMEM;
	}
	if (procs_mntns(0, &c->runtime_mntns) < 0)
		c->runtime_mntns = 0;	/* until controller_attach_bpf looks further */
	return 0;
}

/* The kernel's initial PID namespace (include/linux/proc_ns.h,
 * PROC_PID_INIT_INO): ours with hostPID, or on the host. */
#define PID_NS_INIT_INO	0xEFFFFFFCULL

/*
 * The runtime's mount namespace, for the cgroups BPF did not see being
 * made (controller_container_started; BPF records the creator's own at
 * mkdir). Ours is the runtime's only when we run beside it: the unit's
 * sandbox and a DaemonSet's container each give us a private one, and
 * taking it would make runc's own execs in such a cgroup look like the
 * container's (killing `runc init` of a rejected container mid-create).
 * So, first found wins, logged once with why:
 *   1. BPF: the namespace of our nearest ancestor outside ours (systemd,
 *      the runtime's shim), read where /proc needs ptrace access;
 *   2. pid 1's, when our PID namespace is the host's (hostPID) and
 *      /proc/1/ns/mnt is readable (a kernel before 5.10: no probe);
 *   3. ours.
 */
static void find_runtime_mntns(struct controller *c)
{
	struct bpf_mntns_probe p;
	uint64_t own = c->runtime_mntns, pidns = 0, one = 0;
	int r = c->bpf ? bpf_events_probe_runtime_mntns(c->bpf, &p) : -ENOTSUP, r1 = -ESRCH;

	if (r == 0) {
		c->runtime_mntns = p.mntns;
		if (p.pid)
			log_info("runtime mount namespace: mnt:[%llu], that of %s[%u], which started "
				 "us (ours is mnt:[%llu]): cgroups made while we were down are judged by it",
				 (unsigned long long)p.mntns, p.comm, p.pid,
				 (unsigned long long)p.own_mntns);
		else
			log_info("runtime mount namespace: ours, mnt:[%llu], which every ancestor shares",
				 (unsigned long long)p.mntns);
		return;
	}
	if (procs_pidns(0, &pidns) == 0 && pidns == PID_NS_INIT_INO)
		r1 = procs_mntns(1, &one);
	if (r1 == 0) {
		c->runtime_mntns = one;
		log_info("runtime mount namespace: pid 1's, mnt:[%llu] (ours is mnt:[%llu]; "
			 "BPF cannot tell: %s)", (unsigned long long)one, (unsigned long long)own,
			 strerror(-r));
		return;
	}
	log_warn("runtime mount namespace: ours, mnt:[%llu] (BPF cannot tell: %s; pid 1's: %s): "
		 "if the runtime runs in another, its own execs in a rejected container made while "
		 "we were down may be taken for the container's and killed",
		 (unsigned long long)own, strerror(-r),
		 r1 == -ESRCH ? "not the host's PID namespace (no hostPID)" : strerror(-r1));
}

static void fini(struct controller *c)
{
	size_t it = 0;
	const char *k;
	void *v;

	controller_messages_free(c);
	controller_nri_free(c);
	controller_table_free(c);
	while (c->writers && strmap_next(c->writers, &it, &k, &v))
		free(v);
	strmap_free(c->writers);
	pod_errors_free(c->errors);
	c->writers = NULL;
	c->errors = NULL;
	controller_plan_free(c);
	controller_targets_free(c);
	controller_isolate_free(c);
	policy_free(c->policy);
	c->policy = NULL;
}

int controller_new(const struct cpusetd_config *cfg, struct cgfs *cg,
		   const struct topology *topo, const char *root, struct controller **ret)
{
	struct controller *c = calloc(1, sizeof(*c));
	int r;

	*ret = NULL;
	if (!c)
		return -ENOMEM;
	r = init(c, cfg, cg, topo, root);
	if (r < 0) {
		free(c);
		return r;
	}
	r = controller_isolate_init(c);	/* after a crash or with the option off: restores */
	if (r < 0) {
		fini(c);
		free(c);
		return r;
	}
	*ret = c;
	return 0;
}

void controller_free(struct controller *c)
{
	if (!c)
		return;
	fini(c);
	free(c);
}

void controller_attach_bpf(struct controller *c, struct bpf_events *bpf,
			   struct bpf_telemetry *tel)
{
	c->bpf = bpf;
	c->tel = tel;
	find_runtime_mntns(c);
	/* Without a kubepods root no resync follows now, and no container
	 * is left: every entry of an earlier run is stale. */
	if (!c->root[0])
		controller_prune_map(c);
}

const char *controller_root(const struct controller *c)
{
	return c->root;
}

void controller_set_root(struct controller *c, const char *root)
{
	snprintf(c->root, sizeof(c->root), "%s", root);
	controller_plan_reset(c);	/* every cached node was the old root's */
}

void controller_count_lost(struct controller *c, uint64_t n)
{
	c->n.events_lost += n;
}

void controller_count_reload(struct controller *c, bool ok)
{
	if (ok)
		c->n.config_reloads++;
	else
		c->n.config_reload_failures++;
	c->dirty = true;
}

int controller_reconfigure(struct controller *c, const struct cpusetd_config *old)
{
	const struct cpusetd_config *cfg = c->cfg;
	int r;

	policy_set_on_error(c->policy, cfg->policy.on_error);
	policy_set_namespaces(c->policy, &cfg->policy);
	if (cfg->isolate_host == old->isolate_host &&
	    (!cfg->isolate_host || strcmp(cfg->isolate_host_skip, old->isolate_host_skip) == 0))
		return 0;
	/* Through the paths a stop and a start take: all back (and the
	 * state file gone), then, when on, a fresh handle narrows again. */
	if (c->iso) {
		r = controller_isolate_stop(c);
		controller_isolate_free(c);
		if (r < 0)
			return r;
	}
	r = controller_isolate_init(c);
	if (r < 0)
		return r;
	if (c->root[0])	/* else the resync at the root's mkdir passes */
		controller_isolate_sync(c, true);
	c->dirty = true;
	return 0;
}

int controller_resync_failed(const struct controller *c)
{
	return c->resync_failed;
}

/* A counter status.json shows moved since the last export. events is
 * left out: every cgroup event on the node moves it, most change nothing
 * cpusetd shows, and the next export carries it anyway. Counting paths
 * need not mark the state dirty themselves (an NRI Synchronize that
 * finds everything as it was changes only its counter). */
static bool counters_moved(const struct controller *c)
{
	for (unsigned i = 0; i < COUNTERS_N; i++)
		if (counter_info[i].offset != offsetof(struct cpusetd_counters, events) &&
		    counter_value(&c->n, i) != counter_value(&c->n_shown, i))
			return true;
	return false;
}

bool controller_dirty(const struct controller *c)
{
	return c->dirty || counters_moved(c);
}

void controller_exported(struct controller *c, bool dirty)
{
	c->dirty = dirty;
	c->n_shown = c->n;
}
