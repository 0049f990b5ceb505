// SPDX-License-Identifier: Apache-2.0
/*
 * Host isolation, the controller's side: when to pass (user/host/host.h
 * does the rest). A pass runs where the pools change (once per event, from
 * controller_resize_pools, before an exclusive container's own write), at
 * every resync, on the rescan timer, and at stop (everything back).
 *
 * The exclusive set is policy_reserved(): integer and annotated CPUs, the
 * CPUs no shared container may use; the host gets online − that, which
 * holds the shared pool and the reserved system CPUs (reserved_cpus).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "controller_internal.h"
#include "user/host/host.h"

struct controller_isolate {
	struct host *h;
	bool enabled;			/* isolate_host on (else only restoring) */
	bool passed;			/* a pass ran for excl/online */
	struct cpumask excl, online;
	char skip[sizeof(((struct cpusetd_config *)0)->isolate_host_skip)];
	struct snapshot_isolation view;
	struct host_status st;		/* view.reasons points here */
};

/* The skip patterns, split in place in iso->skip. */
static void split_skip(struct controller_isolate *iso, const char *list, struct host_opts *o)
{
	char *save = NULL;

	snprintf(iso->skip, sizeof(iso->skip), "%s", list);
	for (char *t = strtok_r(iso->skip, ",", &save); t && o->n_skip < HOST_MAX_SKIP;
	     t = strtok_r(NULL, ",", &save))
		o->skip[o->n_skip++] = t;
}

static void fill_view(struct controller_isolate *iso)
{
	const struct host_status *s = &iso->st;

	host_get_status(iso->h, &iso->st);
	iso->view = (struct snapshot_isolation){
		.active = s->active, .exclusive = s->exclusive, .host = s->host,
		.cgroups_narrowed = s->cgroups_narrowed, .cgroups_left = s->cgroups_left,
		.tasks_narrowed = s->tasks_narrowed, .tasks_left = s->tasks_left,
		.kthreads_pinned = s->kthreads_pinned, .irqs_moved = s->irqs_moved,
		.irqs_refused = s->irqs_refused, .irq_default_narrowed = s->irq_default_narrowed,
		.workqueue_narrowed = s->workqueue_narrowed, .pass_ns = s->pass_ns,
		.reasons = s->reasons, .n_reasons = s->n_reasons,
	};
}

/* Counts a pass and says what it changed, in one line. */
static void note_pass(struct controller *c, const struct host_pass *p, const char *why)
{
	const struct host_status *s = &c->iso->st;
	char ex[CPULIST_MAX], host[CPULIST_MAX];

	c->n.isolation_passes++;
	c->n.isolation_narrowed += p->narrowed;
	c->n.isolation_restored += p->restored;
	c->n.isolation_refused += p->refused;
	if (!p->narrowed && !p->restored && !p->refused)
		return;
	c->dirty = true;
	cpulist_format(&s->exclusive, ex, sizeof(ex));
	cpulist_format(&s->host, host, sizeof(host));
	log_notice("isolation (%s): exclusive CPUs %s, host on %s: %u narrowed, %u given back, "
		   "%u refused; now %u host cgroups, %u tasks, %u IRQs narrowed, default IRQ "
		   "affinity %s, workqueue %s", why, ex[0] ? ex : "none", host, p->narrowed,
		   p->restored, p->refused, s->cgroups_narrowed, s->tasks_narrowed, s->irqs_moved,
		   s->irq_default_narrowed ? "narrowed" : "its own",
		   s->workqueue_narrowed ? "narrowed" : "its own");
}

/* One pass over the sets now (exclusive empty: everything back). */
static int pass(struct controller *c, const struct cpumask *excl, const char *why)
{
	struct controller_isolate *iso = c->iso;
	struct host_pass p;
	int r;

	r = host_sync(iso->h, c->root, &c->topo->online, excl, &p);
	if (r == -ENOMEM)
		return r;
	iso->passed = r == 0;	/* a failed save is tried again next time */
	iso->excl = *excl;
	iso->online = c->topo->online;
	fill_view(iso);
	note_pass(c, &p, why);
	return 0;
}

int controller_isolate_init(struct controller *c)
{
	const struct cpusetd_config *cfg = c->cfg;
	struct host_opts o = { .cg = c->cg, .state_dir = cfg->state_dir, .proc = "/proc",
			       .sys = "/sys", .dry_run = cfg->dry_run };
	char path[PATH_MAX + 32];
	struct stat sb;
	struct cpumask none;
	int r;

	if (cfg->release)
		return 0;	/* --release gives it back itself (release.c) */
	snprintf(path, sizeof(path), "%s/%s", cfg->state_dir, HOST_STATE_FILE);
	if (!cfg->isolate_host && stat(path, &sb) < 0)
		return 0;	/* off, and nothing of an earlier run to give back */
	c->iso = calloc(1, sizeof(*c->iso));
	if (!c->iso)
		return -ENOMEM;
	c->iso->enabled = cfg->isolate_host;
	split_skip(c->iso, cfg->isolate_host_skip, &o);
	r = host_new(&o, &c->iso->h);
	if (r < 0) {
		free(c->iso);
		c->iso = NULL;
		if (r == -EPERM)	/* the state file was refused (logged by host_new) */
			log_error("isolation: off for this run: %s/%s must go first (after its "
				  "originals are given back by hand)", cfg->state_dir,
				  HOST_STATE_FILE);
		return r == -ENOMEM ? r : 0;
	}
	if (cfg->isolate_host)
		return 0;
	/* Turned off since a run that narrowed things: all back, now. */
	cpumask_zero(&none);
	r = pass(c, &none, "isolate_host is off; what an earlier run narrowed");
	controller_isolate_free(c);
	return r;
}

void controller_isolate_free(struct controller *c)
{
	if (!c->iso)
		return;
	host_free(c->iso->h);
	free(c->iso);
	c->iso = NULL;
}

void controller_isolate_stale(struct controller *c)
{
	if (c->iso)
		c->iso->passed = false;
}

void controller_isolate_sync(struct controller *c, bool force)
{
	struct cpumask excl;

	if (!c->iso || !c->iso->enabled)
		return;
	policy_reserved(c->policy, &excl);
	cpumask_and(&excl, &excl, &c->topo->online);
	if (!force && c->iso->passed && cpumask_equal(&excl, &c->iso->excl) &&
	    cpumask_equal(&c->topo->online, &c->iso->online))
		return;
	if (pass(c, &excl, force ? "rescan" : "exclusive CPUs changed") == -ENOMEM)
		log_error("isolation: out of memory; the host stays as the last pass left it");
}

int controller_isolate_rescan(struct controller *c)
{
	struct cpumask excl;

	if (!c->iso || !c->iso->enabled)
		return 0;
	policy_reserved(c->policy, &excl);
	cpumask_and(&excl, &excl, &c->topo->online);
	return pass(c, &excl, "rescan");
}

int controller_isolate_stop(struct controller *c)
{
	struct cpumask none;
	int r;

	if (!c->iso)
		return 0;
	cpumask_zero(&none);
	r = pass(c, &none, "stopping");
	return r;
}

const struct snapshot_isolation *controller_isolation(const struct controller *c)
{
	return c->iso && c->iso->enabled ? &c->iso->view : NULL;
}
