// SPDX-License-Identifier: Apache-2.0
/*
 * Topology discovery from sysfs under a root. Only what the allocation
 * rules need today: online CPUs, SMT sibling groups, packages, NUMA nodes.
 * Missing files are expected on old or odd machines and fall back to the
 * next best source rather than failing.
 *
 * Every read goes through read_file() and scan_ids(), which take the files
 * from a directory (topo_read) or from an in-memory list (topo_read_mem,
 * for the fuzzer: building a real tree per input cost 1-2 ms), so both
 * run the same parsing.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "topology.h"

/* Where the files come from: root, or files[n] when root is NULL. */
struct sysfs {
	const char *root;
	const struct topo_file *files;
	size_t n;
};

/* The first in-memory file named rel into buf, cut to len - 1 bytes as a
 * read would be. Returns 0 or -ENOENT. */
static int mem_read(const struct sysfs *fs, const char *rel, char *buf, size_t len)
{
	for (size_t i = 0; i < fs->n; i++) {
		if (strcmp(fs->files[i].path, rel) == 0) {
			size_t n = strnlen(fs->files[i].text, len - 1);

			memcpy(buf, fs->files[i].text, n);
			buf[n] = '\0';
			return 0;
		}
	}
	return -ENOENT;
}

/* Reads a small sysfs file into buf (NUL-terminated). Returns 0 or -errno. */
static int read_file(const struct sysfs *fs, const char *rel, char *buf, size_t len)
{
	char path[PATH_MAX];
	FILE *f;
	size_t n;

	if (!fs->root)
		return mem_read(fs, rel, buf, len);
	if (snprintf(path, sizeof(path), "%s/%s", fs->root, rel) >= (int)sizeof(path))
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
static int read_mask(const struct sysfs *fs, const char *list_rel, const char *map_rel,
		     struct cpumask *ret)
{
	char buf[CPULIST_MAX];
	int r = read_file(fs, list_rel, buf, sizeof(buf));

	if (r == 0)
		return cpulist_parse(buf, ret);
	if (r != -ENOENT || !map_rel)
		return r;
	r = read_file(fs, map_rel, buf, sizeof(buf));
	return r < 0 ? r : cpumask_parse_hex(buf, ret);
}

static int read_int(const struct sysfs *fs, const char *rel, long *ret)
{
	char buf[64], *end;
	long v;
	int r = read_file(fs, rel, buf, sizeof(buf));

	if (r < 0)
		return r;
	errno = 0;
	v = strtol(buf, &end, 10);
	if (errno || end == buf)
		return -EINVAL;
	*ret = v;
	return 0;
}

/* The N of a "<prefix>N" directory entry (cpu12, node33), or -1 for any
 * other name or an N >= CPUSETD_MAX_CPUS. */
static int entry_id(const char *name, const char *prefix)
{
	size_t len = strlen(prefix);
	unsigned long id;
	char *end;

	if (strncmp(name, prefix, len) != 0 || name[len] < '0' || name[len] > '9')
		return -1;
	id = strtoul(name + len, &end, 10);
	return *end || id >= CPUSETD_MAX_CPUS ? -1 : (int)id;
}

static int scan_dir(const struct sysfs *fs, const char *dir, const char *prefix,
		    struct cpumask *ret)
{
	char path[PATH_MAX];
	struct dirent *de;
	DIR *d;

	snprintf(path, sizeof(path), "%s/%s", fs->root, dir);
	d = opendir(path);
	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		int id = entry_id(de->d_name, prefix);

		if (id >= 0)
			cpumask_set(ret, (unsigned)id);
	}
	closedir(d);
	return 0;
}

/* In memory, dir exists when a path lies below it ("dir/" alone makes
 * an empty one), and its entries are the next components of those paths. */
static int scan_mem(const struct sysfs *fs, const char *dir, const char *prefix,
		    struct cpumask *ret)
{
	size_t dl = strlen(dir);
	bool found = false;

	for (size_t i = 0; i < fs->n; i++) {
		const char *p = fs->files[i].path;
		char name[32];
		size_t len;
		int id;

		if (strncmp(p, dir, dl) != 0 || p[dl] != '/')
			continue;
		found = true;
		len = strcspn(p + dl + 1, "/");
		if (len >= sizeof(name))
			continue;
		memcpy(name, p + dl + 1, len);
		name[len] = '\0';
		id = entry_id(name, prefix);
		if (id >= 0)
			cpumask_set(ret, (unsigned)id);
	}
	return found ? 0 : -ENOENT;
}

/* The N of every "<prefix>N" entry of directory dir (relative to the
 * root), as a set: the same id twice ("node1", "node01") is one.
 * Returns 0, -ENOENT when dir is missing, -errno. */
static int scan_ids(const struct sysfs *fs, const char *dir, const char *prefix,
		    struct cpumask *ret)
{
	cpumask_zero(ret);
	return fs->root ? scan_dir(fs, dir, prefix, ret) : scan_mem(fs, dir, prefix, ret);
}

/* online file, else every present CPU whose cpuN/online is not 0. */
static void read_online(const struct sysfs *fs, struct topology *t)
{
	char rel[64];
	int id;

	if (read_mask(fs, "devices/system/cpu/online", NULL, &t->online) == 0) {
		cpumask_and(&t->online, &t->online, &t->present);
		return;
	}
	t->online = t->present;
	cpumask_for_each(id, &t->present) {
		long v;

		snprintf(rel, sizeof(rel), "devices/system/cpu/cpu%d/online", id);
		if (read_int(fs, rel, &v) == 0 && v == 0)
			cpumask_clear(&t->online, (unsigned)id);
	}
}

/* Lowest CPU of a cpulist file, or -1 when it is missing or empty. */
static int first_of(const struct sysfs *fs, const char *rel)
{
	struct cpumask m;

	if (read_mask(fs, rel, NULL, &m) < 0)
		return -1;
	return cpumask_next(&m, 0);
}

static void read_cpu(const struct sysfs *fs, struct topology *t, int id)
{
	char list[96], map[96], rel[96];
	struct cpumask sib;
	long v;

	t->cpu[id] = (struct topo_cpu){ .core = id, .package = -1, .die = -1, .node = -1, .l3 = -1 };
	snprintf(list, sizeof(list), "devices/system/cpu/cpu%d/topology/core_cpus_list", id);
	snprintf(map, sizeof(map), "devices/system/cpu/cpu%d/topology/thread_siblings", id);
	if (read_mask(fs, list, NULL, &sib) < 0) {
		snprintf(list, sizeof(list), "devices/system/cpu/cpu%d/topology/thread_siblings_list", id);
		if (read_mask(fs, list, map, &sib) < 0)
			cpumask_zero(&sib);
	}
	if (cpumask_test(&sib, (unsigned)id))
		t->cpu[id].core = cpumask_next(&sib, 0);
	snprintf(rel, sizeof(rel), "devices/system/cpu/cpu%d/topology/physical_package_id", id);
	if (read_int(fs, rel, &v) == 0)
		t->cpu[id].package = v;
	snprintf(rel, sizeof(rel), "devices/system/cpu/cpu%d/topology/die_id", id);
	if (read_int(fs, rel, &v) == 0 && v >= 0 && v <= INT_MAX)
		t->cpu[id].die = (int)v;
	snprintf(rel, sizeof(rel), "devices/system/cpu/cpu%d/cache/index3/shared_cpu_list", id);
	t->cpu[id].l3 = first_of(fs, rel);
}

/* nodeN/distance: one number per node, in node_ids order. */
static void read_distance(const struct sysfs *fs, struct topology *t, unsigned idx)
{
	char rel[64], buf[1024], *p = buf, *end;

	snprintf(rel, sizeof(rel), "devices/system/node/node%d/distance", t->node_ids[idx]);
	if (read_file(fs, rel, buf, sizeof(buf)) < 0)
		return;
	for (unsigned k = 0; k < t->n_nodes; k++, p = end) {
		unsigned long d = strtoul(p, &end, 10);

		if (end == p)
			break;
		t->distance[idx][k] = d > 255 ? 255 : (uint8_t)d;
	}
}

/* Node ids from the nodeN directories, ascending. Returns the count,
 * 0 without a node directory, -E2BIG. */
static int scan_nodes(const struct sysfs *fs, struct topology *t)
{
	struct cpumask ids;
	int n = 0, id;

	if (scan_ids(fs, "devices/system/node", "node", &ids) < 0)
		return 0;
	if (cpumask_weight(&ids) > TOPO_MAX_NODES)
		return -E2BIG;
	cpumask_for_each(id, &ids)
		t->node_ids[n++] = id;
	return n;
}

/* nodeN/cpulist (or cpumap) as listed, offline CPUs included; without a
 * node directory: node 0 = every present CPU. */
static int read_nodes(const struct sysfs *fs, struct topology *t)
{
	int n = scan_nodes(fs, t), id;

	if (n < 0)
		return n;
	t->n_nodes = (unsigned)n;
	for (unsigned i = 0; i < t->n_nodes; i++) {
		int node = t->node_ids[i];
		char list[64], map[64];
		struct cpumask cpus;

		snprintf(list, sizeof(list), "devices/system/node/node%d/cpulist", node);
		snprintf(map, sizeof(map), "devices/system/node/node%d/cpumap", node);
		if (read_mask(fs, list, map, &cpus) < 0)
			cpumask_zero(&cpus);
		read_distance(fs, t, i);
		if (cpumask_empty(&cpus)) {
			cpumask_set(&t->memory_nodes, (unsigned)node);
			continue;
		}
		t->node_cpus[node] = cpus;
		cpumask_set(&t->nodes, (unsigned)node);
		cpumask_for_each(id, &cpus)
			t->cpu[id].node = node;
	}
	if (t->n_nodes == 0) {
		t->n_nodes = 1;
		t->node_ids[0] = 0;
		t->distance[0][0] = 10;
		t->node_cpus[0] = t->present;
		cpumask_set(&t->nodes, 0);
		cpumask_for_each(id, &t->present)
			t->cpu[id].node = 0;
	}
	return 0;
}

static int cmp_long(const void *a, const void *b)
{
	long x = *(const long *)a, y = *(const long *)b;

	return x < y ? -1 : x > y;
}

/* Distinct package ids among online CPUs; -1 (unknown) counts as one. */
static unsigned count_packages(const struct topology *t)
{
	long ids[CPUSETD_MAX_CPUS];
	unsigned n = 0, distinct = 0;
	int id;

	cpumask_for_each(id, &t->online)
		ids[n++] = t->cpu[id].package;
	qsort(ids, n, sizeof(ids[0]), cmp_long);
	for (unsigned i = 0; i < n; i++)
		if (i == 0 || ids[i] != ids[i - 1])
			distinct++;
	return distinct;
}

/* Cores, packages and the most common sibling count, over online CPUs. */
static void count(struct topology *t)
{
	unsigned per_core[CPUSETD_MAX_CPUS] = { 0 }, hist[65] = { 0 };
	int id;

	cpumask_for_each(id, &t->online)
		per_core[t->cpu[id].core]++;
	for (int c = 0; c < CPUSETD_MAX_CPUS; c++) {
		if (!per_core[c])
			continue;
		t->n_cores++;
		hist[per_core[c] > 64 ? 64 : per_core[c]]++;
	}
	t->n_packages = count_packages(t);
	for (unsigned k = 1; k <= 64; k++)
		if (hist[k] > hist[t->threads_per_core])
			t->threads_per_core = k;
}

static int read_all(const struct sysfs *fs, struct topology **ret)
{
	struct topology *t;
	int r, id;

	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	/* Present CPUs = the cpuN directories. */
	r = scan_ids(fs, "devices/system/cpu", "cpu", &t->present);
	if (r < 0) {
		free(t);
		return r;
	}
	read_online(fs, t);
	if (read_mask(fs, "devices/system/cpu/offline", NULL, &t->offline) < 0)
		cpumask_andnot(&t->offline, &t->present, &t->online);
	if (read_mask(fs, "devices/system/cpu/isolated", NULL, &t->isolated) < 0)
		cpumask_zero(&t->isolated);
	cpumask_for_each(id, &t->present)
		read_cpu(fs, t, id);
	cpumask_for_each(id, &t->present)
		cpumask_set(&t->core_cpus[t->cpu[id].core], (unsigned)id);
	r = read_nodes(fs, t);
	if (r < 0) {
		free(t);
		return r;
	}
	count(t);
	*ret = t;
	return 0;
}

int topo_read(const char *sysfs_root, struct topology **ret)
{
	const struct sysfs fs = { .root = sysfs_root };

	return read_all(&fs, ret);
}

int topo_read_mem(const struct topo_file *files, size_t n, struct topology **ret)
{
	const struct sysfs fs = { .files = files, .n = n };

	return read_all(&fs, ret);
}

/* One CPU's facts from prev where fresh does not know them; returns the
 * sibling group fresh should put it in. */
static int inherit_cpu(struct topology *fresh, const struct topology *prev, int id)
{
	struct topo_cpu *f = &fresh->cpu[id];
	const struct topo_cpu *o = &prev->cpu[id];
	struct cpumask mine, theirs;

	/* A node whose CPUs are all offline reads as memory-only: it is not. */
	if (f->node < 0 && o->node >= 0 && (cpumask_test(&fresh->nodes, (unsigned)o->node) ||
					    cpumask_test(&fresh->memory_nodes, (unsigned)o->node))) {
		f->node = o->node;
		cpumask_set(&fresh->node_cpus[o->node], (unsigned)id);
		cpumask_set(&fresh->nodes, (unsigned)o->node);
		cpumask_clear(&fresh->memory_nodes, (unsigned)o->node);
	}
	if (f->package == -1)
		f->package = o->package;
	if (f->die < 0)
		f->die = o->die;
	if (f->l3 < 0)
		f->l3 = o->l3;
	/* The wider group wins: an offline sibling still belongs to the core. */
	cpumask_and(&mine, &fresh->core_cpus[f->core], &fresh->present);
	cpumask_and(&theirs, &prev->core_cpus[o->core], &fresh->present);
	return cpumask_weight(&theirs) > cpumask_weight(&mine) ? cpumask_next(&theirs, 0) : f->core;
}

void topo_inherit(struct topology *fresh, const struct topology *prev)
{
	int core[CPUSETD_MAX_CPUS], id;

	if (!prev)
		return;
	cpumask_for_each(id, &fresh->present)
		core[id] = cpumask_test(&prev->present, (unsigned)id) ?
			   inherit_cpu(fresh, prev, id) : fresh->cpu[id].core;
	cpumask_for_each(id, &fresh->present)
		cpumask_zero(&fresh->core_cpus[id]);
	cpumask_for_each(id, &fresh->present) {
		fresh->cpu[id].core = core[id];
		cpumask_set(&fresh->core_cpus[core[id]], (unsigned)id);
	}
	fresh->n_cores = fresh->n_packages = fresh->threads_per_core = 0;
	count(fresh);
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
