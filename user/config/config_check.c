// SPDX-License-Identifier: Apache-2.0
/*
 * The checks of the settings as a whole: pairs that are each fine alone
 * but wrong together, the scheduling settings' defaults, and, with the
 * topology, the checks against the CPUs online (config_check_cpus,
 * config_check_node).
 */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include "config.h"
#include "config_internal.h"

/*
 * What each option is fine alone but wrong with the others: one line,
 * -EINVAL. min_shared_cpus against the CPUs online needs the topology:
 * config_check_cpus().
 */
int config_validate(struct loader *l)
{
	const struct cpusetd_config *c = &l->cfg;
	const struct policy_kubelet_options *k = &c->policy.alloc.kubelet;

	for (unsigned i = 0; i < c->n_bundle_paths; i++) {
		/* Without {id} every container would read one file: one pod's
		 * annotations (or /etc/passwd) for all of them. */
		if (!strstr(c->bundle_paths[i], "{id}")) {
			say(l, "bundle_path '%s' has no {id}: every container "
				"would read the same file", c->bundle_paths[i]);
			return -EINVAL;
		}
	}
	/* kubelet refuses these pairs (pkg/kubelet/cm/cpumanager/policy_options.go). */
	if (k->full_pcpus_only && k->distribute_across_cores) {
		say(l, "kubelet_cpu_manager_policy_options: full-pcpus-only and "
			"distribute-cpus-across-cores cannot be used together");
		return -EINVAL;
	}
	if (k->distribute_across_numa && k->distribute_across_cores) {
		say(l, "kubelet_cpu_manager_policy_options: "
			"distribute-cpus-across-numa and distribute-cpus-across-cores cannot be "
			"used together");
		return -EINVAL;
	}
	if (k->align_by_socket && c->policy.alloc.align == NUMA_POLICY_SINGLE_NUMA_NODE) {
		say(l, "align-by-socket cannot be used with "
			"numa_topology_alignment_policy single-numa-node");
		return -EINVAL;
	}
	if (c->check_config && c->release) {
		say(l, "--check-config and --release: one at a time");
		return -EINVAL;
	}
	/* One directory, two owners: a stray status.json could land in bpffs
	 * or the pins in a plain directory. */
	if (c->pin_dir[0] && strcmp(c->pin_dir, c->state_dir) == 0) {
		say(l, "pin_dir and state_dir are both '%s'", c->pin_dir);
		return -EINVAL;
	}
	return 0;
}

/*
 * A priority belongs to fifo and rr, a nice value to other: a setting the
 * chosen policy would ignore is a mistake, said in one line (-EINVAL).
 * Otherwise fifo and rr get the default priority when none was given.
 */
int config_resolve_sched(struct loader *l)
{
	struct cpusetd_config *c = &l->cfg;
	bool rt = c->sched_policy != SCHED_OTHER;

	if (!rt && c->sched_priority) {
		say(l, "sched_priority %u needs sched_policy fifo or rr "
			"(other has no priority; use nice)", c->sched_priority);
		return -EINVAL;
	}
	if (rt && c->nice) {
		say(l, "nice %d needs sched_policy other (fifo and rr "
			"ignore it; use sched_priority)", c->nice);
		return -EINVAL;
	}
	if (rt && !c->sched_priority)
		c->sched_priority = CONFIG_DEFAULT_SCHED_PRIORITY;
	return 0;
}

/* min_shared_cpus against the CPUs online, into err[len]. */
static int check_min_shared(const struct cpusetd_config *c, unsigned online, char *err, size_t len)
{
	unsigned sys = cpumask_weight(&c->policy.system_qos_cpus);

	if (sys && c->policy.min_shared_cpus + sys >= online) {
		snprintf(err, len, "system_qos_cpus takes %u of the %u CPUs online: fewer than "
			 "min_shared_cpus %u + 1 left for the shared pool and exclusive CPUs",
			 sys, online, c->policy.min_shared_cpus);
		return -EINVAL;
	}
	if (c->policy.min_shared_cpus < online)
		return 0;
	snprintf(err, len, "min_shared_cpus %u is not below the %u CPU%s online: "
		 "no CPU could ever be exclusive", c->policy.min_shared_cpus, online,
		 online == 1 ? "" : "s");
	return -EINVAL;
}

int config_check_cpus(const struct cpusetd_config *c, unsigned online)
{
	char err[160];
	int r = check_min_shared(c, online, err, sizeof(err));

	if (r < 0)
		fprintf(stderr, "cpusetd: %s\n", err);
	return r;
}

int config_check_node(const struct cpusetd_config *c, const struct cpumask *online, char *err,
		      size_t len)
{
	char list[CPULIST_MAX];

	if (check_min_shared(c, cpumask_weight(online), err, len) < 0)
		return -EINVAL;
	/* controller_new refuses these too: a start would fail. */
	if (!cpumask_subset(&c->policy.system_qos_cpus, online)) {
		cpulist_format(&c->policy.system_qos_cpus, list, sizeof(list));
		snprintf(err, len, "system_qos_cpus %s: not all of them are online", list);
		return -EINVAL;
	}
	if (cpumask_intersects(&c->policy.system_qos_cpus, &c->policy.reserved_cpus)) {
		snprintf(err, len, "system_qos_cpus and reserved_cpus overlap: reserved_cpus stay "
			 "in the shared pool, system_qos_cpus leave it");
		return -EINVAL;
	}
	if (!cpumask_subset(&c->policy.reserved_cpus, online)) {
		cpulist_format(&c->policy.reserved_cpus, list, sizeof(list));
		snprintf(err, len, "reserved_cpus %s: not all of them are online", list);
		return -EINVAL;
	}
	return 0;
}
