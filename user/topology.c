/*
 * Topology discovery from sysfs under a root. Only what the allocation
 * rules need today: online CPUs, SMT sibling groups, packages, NUMA nodes.
 * Missing files are expected on old or odd machines and fall back to the
 * next best source rather than failing.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "topology.h"

/* Reads a small sysfs file into buf (NUL-terminated). Returns 0 or -errno. */
static int read_file(const char *root, const char *rel, char *buf, size_t len)
{
	char path[PATH_MAX];
	FILE *f;
	size_t n;

	if (snprintf(path, sizeof(path), "%s/%s", root, rel) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	f = fopen(path, "re");
	if (!f)
		return -errno;
	n = fread(buf, 1, len - 1, f);
	buf[n] = '\0';
	fclose(f);
	return 0;
}

/* A cpulist file, or the hex cpumap twin when the list is missing. */
static int read_mask(const char *root, const char *list_rel, const char *map_rel,
		     struct cpumask *ret)
{
	char buf[CPULIST_MAX];
	int r = read_file(root, list_rel, buf, sizeof(buf));

	if (r == 0)
		return cpulist_parse(buf, ret);
	if (r != -ENOENT || !map_rel)
		return r;
	r = read_file(root, map_rel, buf, sizeof(buf));
	return r < 0 ? r : cpumask_parse_hex(buf, ret);
}

static int read_int(const char *root, const char *rel, long *ret)
{
	char buf[64], *end;
	long v;
	int r = read_file(root, rel, buf, sizeof(buf));

	if (r < 0)
		return r;
	errno = 0;
	v = strtol(buf, &end, 10);
	if (errno || end == buf)
		return -EINVAL;
	*ret = v;
	return 0;
}

/* Present CPUs = the cpuN directories. */
static int scan_present(const char *cpu_dir, struct cpumask *ret)
{
	DIR *d = opendir(cpu_dir);
	struct dirent *de;

	if (!d)
		return -errno;
	cpumask_zero(ret);
	while ((de = readdir(d))) {
		char *end;
		unsigned long id;

		if (strncmp(de->d_name, "cpu", 3) != 0 || de->d_name[3] < '0' || de->d_name[3] > '9')
			continue;
		id = strtoul(de->d_name + 3, &end, 10);
		if (*end == '\0' && id < CPUSETD_MAX_CPUS)
			cpumask_set(ret, (unsigned)id);
	}
	closedir(d);
	return 0;
}

/* online file, else every present CPU whose cpuN/online is not 0. */
static void read_online(const char *root, struct topology *t)
{
	char rel[64];
	int id;

	if (read_mask(root, "devices/system/cpu/online", NULL, &t->online) == 0) {
		cpumask_and(&t->online, &t->online, &t->present);
		return;
	}
	t->online = t->present;
	cpumask_for_each(id, &t->present) {
		long v;

		snprintf(rel, sizeof(rel), "devices/system/cpu/cpu%d/online", id);
		if (read_int(root, rel, &v) == 0 && v == 0)
			cpumask_clear(&t->online, (unsigned)id);
	}
}

static void read_cpu(const char *root, struct topology *t, int id)
{
	char list[96], map[96], rel[96];
	struct cpumask sib;
	long pkg;

	t->cpu[id] = (struct topo_cpu){ .core = id, .package = -1, .node = -1 };
	snprintf(list, sizeof(list), "devices/system/cpu/cpu%d/topology/core_cpus_list", id);
	snprintf(map, sizeof(map), "devices/system/cpu/cpu%d/topology/thread_siblings", id);
	if (read_mask(root, list, NULL, &sib) < 0) {
		snprintf(list, sizeof(list), "devices/system/cpu/cpu%d/topology/thread_siblings_list", id);
		if (read_mask(root, list, map, &sib) < 0)
			cpumask_zero(&sib);
	}
	if (cpumask_test(&sib, (unsigned)id))
		t->cpu[id].core = cpumask_next(&sib, 0);
	snprintf(rel, sizeof(rel), "devices/system/cpu/cpu%d/topology/physical_package_id", id);
	if (read_int(root, rel, &pkg) == 0 && pkg >= 0 && pkg <= INT_MAX)
		t->cpu[id].package = (int)pkg;
}

/* nodeN/cpulist (or cpumap); without a node directory: node 0 = all. */
static int read_nodes(const char *root, struct topology *t)
{
	char list[64], map[64];
	int found = 0;

	for (int n = 0; n < TOPO_MAX_NODES; n++) {
		struct cpumask cpus;
		int id;

		snprintf(list, sizeof(list), "devices/system/node/node%d/cpulist", n);
		snprintf(map, sizeof(map), "devices/system/node/node%d/cpumap", n);
		if (read_mask(root, list, map, &cpus) < 0)
			continue;
		found++;
		cpumask_and(&cpus, &cpus, &t->present);
		if (cpumask_empty(&cpus))
			continue;	/* memory-only node */
		t->node_cpus[n] = cpus;
		cpumask_set(&t->nodes, (unsigned)n);
		cpumask_for_each(id, &cpus)
			t->cpu[id].node = n;
	}
	if (!found) {
		int id;

		t->node_cpus[0] = t->present;
		cpumask_set(&t->nodes, 0);
		cpumask_for_each(id, &t->present)
			t->cpu[id].node = 0;
	}
	return 0;
}

/* Cores, packages and the most common sibling count, over online CPUs. */
static void count(struct topology *t)
{
	unsigned per_core[CPUSETD_MAX_CPUS] = { 0 }, hist[65] = { 0 };
	struct cpumask pkgs;
	int id;

	cpumask_zero(&pkgs);
	cpumask_for_each(id, &t->online) {
		per_core[t->cpu[id].core]++;
		if (t->cpu[id].package >= 0)
			cpumask_set(&pkgs, (unsigned)t->cpu[id].package);
	}
	for (int c = 0; c < CPUSETD_MAX_CPUS; c++) {
		if (!per_core[c])
			continue;
		t->n_cores++;
		hist[per_core[c] > 64 ? 64 : per_core[c]]++;
	}
	t->n_packages = cpumask_weight(&pkgs);
	if (!t->n_packages && !cpumask_empty(&t->online))
		t->n_packages = 1;
	for (unsigned k = 1; k <= 64; k++)
		if (hist[k] > hist[t->threads_per_core])
			t->threads_per_core = k;
}

int topo_read(const char *sysfs_root, struct topology **ret)
{
	char cpu_dir[PATH_MAX];
	struct topology *t;
	int r, id;

	snprintf(cpu_dir, sizeof(cpu_dir), "%s/devices/system/cpu", sysfs_root);
	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	r = scan_present(cpu_dir, &t->present);
	if (r < 0) {
		free(t);
		return r;
	}
	read_online(sysfs_root, t);
	cpumask_for_each(id, &t->present)
		read_cpu(sysfs_root, t, id);
	cpumask_for_each(id, &t->present)
		cpumask_set(&t->core_cpus[t->cpu[id].core], (unsigned)id);
	read_nodes(sysfs_root, t);
	count(t);
	*ret = t;
	return 0;
}

void topo_free(struct topology *t)
{
	free(t);
}

int topo_nodes_of(const struct topology *t, const struct cpumask *cpus, struct cpumask *ret)
{
	struct cpumask nodes;
	int id;

	cpumask_zero(&nodes);
	cpumask_for_each(id, cpus) {
		if (t->cpu[id].node < 0 || !cpumask_test(&t->present, (unsigned)id))
			return -ENXIO;
		cpumask_set(&nodes, (unsigned)t->cpu[id].node);
	}
	*ret = nodes;
	return 0;
}

const struct cpumask *topo_core_cpus(const struct topology *t, unsigned cpu)
{
	static const struct cpumask none;

	if (cpu >= CPUSETD_MAX_CPUS || !cpumask_test(&t->present, cpu))
		return &none;
	return &t->core_cpus[t->cpu[cpu].core];
}
