// SPDX-License-Identifier: Apache-2.0
/*
 * cpusetctl topology [--sysfs DIR] [--json]
 *
 * Reads the topology the way the daemon does (user/topo/topology.c) from DIR,
 * the directory that would be mounted at /sys (default: the live /sys),
 * and prints it: packages, then NUMA nodes, then physical cores with their
 * threads and L3 group. --json prints user/topo/topology_json.h's object.
 */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include "ctl.h"
#include "user/topo/topology.h"
#include "user/topo/topology_json.h"

static void topology_usage(FILE *f)
{
	fprintf(f,
		"Usage: %s topology [--sysfs DIR] [--json]\n"
		"Shows packages, NUMA nodes, physical cores (SMT sibling groups) and threads.\n"
		"  -S, --sysfs DIR   the directory mounted at /sys (default /sys), e.g. a\n"
		"                    snapshot holding devices/system/cpu\n"
		"  -j, --json        JSON: online, offline, packages, cores, threads_per_core,\n"
		"                    numa_nodes, cpus [{id, core, package, die, node, l3}]\n"
		"  -h, --help        this text\n"
		"Example: %s topology --sysfs /tmp/snapshot/sys --json | jq .numa_nodes\n",
		prog, prog);
}

static int cmp_long(const void *a, const void *b)
{
	long x = *(const long *)a, y = *(const long *)b;

	return x < y ? -1 : x > y;
}

static void print_list(const char *label, const struct cpumask *m)
{
	char buf[CPULIST_MAX];

	cpulist_format(m, buf, sizeof(buf));
	printf("%-14s %s (%u)\n", label, buf[0] ? buf : "-", cpumask_weight(m));
}

/* The cores of one (package, node), each as "core C: threads  L3 g". */
static void print_cores(const struct topology *t, long pkg, int node)
{
	int id;

	cpumask_for_each(id, &t->present) {
		const struct topo_cpu *c = &t->cpu[id];
		char buf[CPULIST_MAX];

		if (c->core != id || c->package != pkg || c->node != node)
			continue;
		cpulist_format(&t->core_cpus[id], buf, sizeof(buf));
		printf("      core %-4d threads %-12s", id, buf);
		if (c->l3 >= 0)
			printf(" L3 %d", c->l3);
		if (c->die >= 0)
			printf(" die %d", c->die);
		if (!cpumask_test(&t->online, (unsigned)id))
			printf(" (offline)");
		printf("\n");
	}
}

static void print_package(const struct topology *t, long pkg)
{
	struct cpumask cpus;
	int id, node;

	cpumask_zero(&cpus);
	cpumask_for_each(id, &t->present)
		if (t->cpu[id].package == pkg)
			cpumask_set(&cpus, (unsigned)id);
	printf("package %ld\n", pkg);
	cpumask_for_each(node, &t->nodes) {
		struct cpumask in;

		cpumask_and(&in, &t->node_cpus[node], &cpus);
		if (cpumask_empty(&in))
			continue;
		printf("  NUMA node %d\n", node);
		print_cores(t, pkg, node);
	}
}

static void print_human(const struct topology *t)
{
	long pkgs[CPUSETD_MAX_CPUS];
	unsigned n = 0;
	int id;

	print_list("Online CPUs:", &t->online);
	print_list("Offline CPUs:", &t->offline);
	print_list("Isolated CPUs:", &t->isolated);
	printf("%-14s %u package(s), %u cores, %u threads per core, %u NUMA nodes with CPUs\n",
	       "Shape:", t->n_packages, t->n_cores, t->threads_per_core, cpumask_weight(&t->nodes));
	if (!cpumask_empty(&t->memory_nodes))
		print_list("Memory nodes:", &t->memory_nodes);
	printf("\n");
	cpumask_for_each(id, &t->present)
		pkgs[n++] = t->cpu[id].package;
	qsort(pkgs, n, sizeof(pkgs[0]), cmp_long);
	for (unsigned i = 0; i < n; i++)
		if (i == 0 || pkgs[i] != pkgs[i - 1])
			print_package(t, pkgs[i]);
}

int cmd_topology(struct ctl_opts *o, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "sysfs", required_argument, NULL, 'S' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	const char *sysfs = "/sys";
	struct topology *t;
	bool json = false;
	int c, r;

	(void)o;
	optind = 0;
	while ((c = getopt_long(argc, argv, "+:S:jh", longopts, NULL)) != -1) {
		switch (c) {
		case 'S': sysfs = optarg; break;
		case 'j': json = true; break;
		case 'h': topology_usage(stdout); return 0;
		default: bad_option(c, argv, "topology: "); return EXIT_USAGE;
		}
	}
	if (optind < argc) {
		usage_error("topology: unexpected argument '%s'", argv[optind]);
		return EXIT_USAGE;
	}
	r = topo_read(sysfs, &t);
	if (r < 0) {
		fprintf(stderr, "%s: cannot read a topology under %s: %s\n", prog, sysfs, strerror(-r));
		return EXIT_RUNTIME;
	}
	if (json) {
		json_object *j = topo_json(t, true);

		printf("%s\n", json_object_to_json_string_ext(j, JSON_C_TO_STRING_PRETTY |
							     JSON_C_TO_STRING_SPACED));
		json_object_put(j);
	} else {
		print_human(t);
	}
	topo_free(t);
	return 0;
}
