// SPDX-License-Identifier: Apache-2.0
/*
 * Topology discovery against real machines: every hwloc sysfs snapshot in
 * tests/fixtures/sysfs (NAME.tar.bz2) is extracted and read, and the
 * result compared with the facts in NAME.expect (online and offline CPUs,
 * packages, cores by SMT sibling lists, threads per core, NUMA nodes and
 * their cpulists), and the same through topo_read_mem. Fixture root: $CPUSETD_FIXTURES or
 * tests/fixtures (tests run from the repository root; see testlib.h).
 */
#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "testlib.h"
#include "user/topo/topology.h"

static char fixtures[512];
static char tmpdir[] = "/tmp/test_topology.XXXXXX";

struct expect {
	char top[256];
	char online[CPULIST_MAX], offline[CPULIST_MAX];
	unsigned packages, cores, threads, n_nodes;
	char node_cpus[TOPO_MAX_NODES][CPULIST_MAX];
	int node_ids[TOPO_MAX_NODES];
	unsigned n_node_lists;
};

/* Value of "key: value   # comment", trimmed, "(none)" -> "". */
static void value_of(const char *line, char *out, size_t len)
{
	const char *v = strchr(line, ':') + 1;
	size_t n;

	while (*v == ' ')
		v++;
	n = strcspn(v, "#\n");
	while (n && v[n - 1] == ' ')
		n--;
	snprintf(out, len, "%.*s", (int)n, v);
	if (strstr(out, " (from cpumap)"))
		*strstr(out, " (from cpumap)") = '\0';
	if (!strcmp(out, "(none)") || !strcmp(out, "(empty)"))
		out[0] = '\0';
}

/* "2" or "mixed: 8 cores x 1 threads, 6 cores x 2 threads": the most
 * common threads-per-core value (ties: the smaller). */
static unsigned threads_of(const char *v)
{
	unsigned best = 0, best_cores = 0, cores, threads;
	const char *p = strstr(v, "mixed:");

	if (!p)
		return (unsigned)atoi(v);
	for (p += 6; sscanf(p, " %u cores x %u threads", &cores, &threads) == 2;) {
		if (cores > best_cores || (cores == best_cores && threads < best)) {
			best = threads;
			best_cores = cores;
		}
		p = strchr(p, ',');
		if (!p)
			break;
		p++;
	}
	return best;
}

static void parse_expect(const char *path, struct expect *e)
{
	char line[4096], v[CPULIST_MAX];
	FILE *f = fopen(path, "r");
	int node;

	assert_non_null(f);
	memset(e, 0, sizeof(*e));
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "# Tarball top-level directory: %255[^/]/", e->top) == 1)
			continue;
		if (!strchr(line, ':') || line[0] == '#')
			continue;
		value_of(line, v, sizeof(v));
		if (!strncmp(line, "online_cpus:", 12))
			strcpy(e->online, v);
		else if (!strncmp(line, "offline_cpus:", 13))
			strcpy(e->offline, v);
		else if (!strncmp(line, "packages:", 9))
			e->packages = (unsigned)atoi(v);
		else if (!strncmp(line, "cores_by_thread_siblings:", 25))
			e->cores = (unsigned)atoi(v);
		else if (!strncmp(line, "threads_per_core_by_thread_siblings:", 36))
			e->threads = threads_of(v);
		else if (!strncmp(line, "numa_nodes_with_cpus:", 21))
			e->n_nodes = (unsigned)atoi(v);
		else if (sscanf(line, "node%d_cpulist:", &node) == 1 && e->n_node_lists < TOPO_MAX_NODES) {
			e->node_ids[e->n_node_lists] = node;
			strcpy(e->node_cpus[e->n_node_lists++], v);
		}
	}
	fclose(f);
}

static void assert_list(const char *name, const char *what, const struct cpumask *m,
			const char *want)
{
	struct cpumask w;

	if (cpulist_parse(want, &w) < 0)
		fail_msg("%s: bad expected %s \"%s\"", name, what, want);
	if (!cpumask_equal(m, &w)) {
		char have[CPULIST_MAX];

		cpulist_format(m, have, sizeof(have));
		fail_msg("%s: %s is \"%s\", want \"%s\"", name, what, have, want);
	}
}

/* The snapshot under root as topo_read_mem's in-memory list: every file
 * and directory below devices/system. */
static struct {
	struct topo_file *files;
	size_t n, cap;
	size_t root_len;
} mem;

static int add_entry(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	struct topo_file *f;
	FILE *in;
	char *text;
	size_t n;

	(void)st;
	(void)ftw;
	if (type != FTW_F && type != FTW_D)
		return 0;
	if (mem.n == mem.cap) {
		mem.cap = mem.cap ? mem.cap * 2 : 256;
		mem.files = realloc(mem.files, mem.cap * sizeof(*mem.files));
		assert_non_null(mem.files);
	}
	f = &mem.files[mem.n++];
	text = calloc(1, CPULIST_MAX + 1);
	assert_non_null(text);
	if (type == FTW_F && (in = fopen(path, "r"))) {
		n = fread(text, 1, CPULIST_MAX, in);
		text[n] = '\0';
		fclose(in);
	}
	f->text = text;
	assert_true(asprintf((char **)&f->path, "%s%s", path + mem.root_len + 1,
			     type == FTW_D ? "/" : "") > 0);
	return 0;
}

static void free_mem(void)
{
	for (size_t i = 0; i < mem.n; i++) {
		free((char *)mem.files[i].path);
		free((char *)mem.files[i].text);
	}
	free(mem.files);
	memset(&mem, 0, sizeof(mem));
}

/* topo_read_mem on the same snapshot reads what topo_read read. */
static void check_mem_twin(const char *name, const char *root, const struct topology *t)
{
	char dir[1200];
	struct topology *m;
	int id;

	snprintf(dir, sizeof(dir), "%s/devices/system", root);
	mem.root_len = strlen(root);
	assert_int_equal(nftw(dir, add_entry, 16, FTW_PHYS), 0);
	if (topo_read_mem(mem.files, mem.n, &m) != 0)
		fail_msg("%s: topo_read_mem failed", name);
	assert_true(cpumask_equal(&m->present, &t->present));
	assert_true(cpumask_equal(&m->online, &t->online));
	assert_true(cpumask_equal(&m->offline, &t->offline));
	assert_true(cpumask_equal(&m->isolated, &t->isolated));
	assert_true(cpumask_equal(&m->nodes, &t->nodes));
	assert_true(cpumask_equal(&m->memory_nodes, &t->memory_nodes));
	assert_memory_equal(m->node_cpus, t->node_cpus, sizeof(t->node_cpus));
	assert_memory_equal(m->core_cpus, t->core_cpus, sizeof(t->core_cpus));
	cpumask_for_each(id, &t->present) {
		assert_int_equal(m->cpu[id].core, t->cpu[id].core);
		assert_int_equal(m->cpu[id].package, t->cpu[id].package);
		assert_int_equal(m->cpu[id].die, t->cpu[id].die);
		assert_int_equal(m->cpu[id].node, t->cpu[id].node);
		assert_int_equal(m->cpu[id].l3, t->cpu[id].l3);
	}
	assert_int_equal(m->n_nodes, t->n_nodes);
	assert_memory_equal(m->node_ids, t->node_ids, sizeof(t->node_ids));
	assert_memory_equal(m->distance, t->distance, sizeof(t->distance));
	assert_int_equal(m->n_cores, t->n_cores);
	assert_int_equal(m->n_packages, t->n_packages);
	assert_int_equal(m->threads_per_core, t->threads_per_core);
	topo_free(m);
	free_mem();
}

static void check_one(const char *name)
{
	char path[1024], cmd[2048], root[1024];
	struct topology *t;
	struct expect e;

	snprintf(path, sizeof(path), "%s/sysfs/%s.expect", fixtures, name);
	parse_expect(path, &e);
	if (tl_extract_snapshot(name, tmpdir) < 0)
		fail_msg("%s: cannot extract (is bzip2 installed?)", name);
	snprintf(root, sizeof(root), "%s/%s/sys", tmpdir, e.top);
	if (topo_read(root, &t) != 0)
		fail_msg("%s: topo_read failed", name);
	check_mem_twin(name, root, t);
	assert_list(name, "online", &t->online, e.online);
	assert_list(name, "offline", &t->offline, e.offline);
	if (t->n_packages != e.packages || t->n_cores != e.cores || t->threads_per_core != e.threads)
		fail_msg("%s: packages/cores/threads %u/%u/%u, want %u/%u/%u", name, t->n_packages,
			 t->n_cores, t->threads_per_core, e.packages, e.cores, e.threads);
	if (e.n_nodes == 0) {
		/* No node directory: one node 0 holding every CPU. */
		assert_int_equal(cpumask_weight(&t->nodes), 1);
		assert_true(cpumask_equal(&t->node_cpus[0], &t->present));
	} else {
		assert_int_equal(cpumask_weight(&t->nodes), e.n_nodes);
		for (unsigned i = 0; i < e.n_node_lists; i++) {
			snprintf(path, sizeof(path), "node%d cpulist", e.node_ids[i]);
			assert_list(name, path, &t->node_cpus[e.node_ids[i]], e.node_cpus[i]);
		}
	}
	topo_free(t);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s/%s'", tmpdir, e.top);
	assert_int_equal(system(cmd), 0);
}

static void test_every_fixture(void **state)
{
	char dir[600];
	struct dirent **names;
	int n, checked = 0;

	(void)state;
	snprintf(dir, sizeof(dir), "%s/sysfs", fixtures);
	n = scandir(dir, &names, NULL, alphasort);
	if (n < 0)
		fail_msg("no fixtures at %s", dir);
	for (int i = 0; i < n; i++) {
		char *dot = strstr(names[i]->d_name, ".expect");

		if (dot && !dot[7]) {
			*dot = '\0';
			check_one(names[i]->d_name);
			checked++;
		}
		free(names[i]);
	}
	free(names);
	assert_true(checked >= 14);
}

/* Odd machines: sparse node ids, packages with huge or negative ids, L3
 * groups and dies, from specific snapshots. */
static struct topology *read_fixture(const char *tarball, const char *top)
{
	char root[1024];
	struct topology *t;

	assert_int_equal(tl_extract_snapshot(tarball, tmpdir), 0);
	snprintf(root, sizeof(root), "%s/%s/sys", tmpdir, top);
	assert_int_equal(topo_read(root, &t), 0);
	return t;
}

static void test_details(void **state)
{
	struct topology *t;
	char cmd[256];

	(void)state;
	t = read_fixture("48amd64-4pa2n6c-sparse", "48amd64-4d2n6c-sparse");
	assert_int_equal(t->cpu[18].node, 33);		/* sparse node ids */
	assert_int_equal(t->cpu[0].l3, 0);		/* L3 shared by 0-5 */
	assert_int_equal(t->cpu[5].l3, 0);
	assert_int_equal(t->cpu[6].l3, 6);
	assert_int_equal(t->n_nodes, 8);
	assert_int_equal(t->node_ids[3], 33);
	assert_int_equal(t->distance[3][0], 22);	/* node33 -> node0 */
	topo_free(t);
	t = read_fixture("128arm-2pa2n8cluster4co", "128arm-2pa2n8cluster4co");
	assert_int_equal(t->cpu[100].package, 8442);	/* ACPI PPTT ids */
	topo_free(t);
	t = read_fixture("fakememinitiators-1np2c+1npp+gi", "fakememinitiators-1np2c+1npp+gi");
	assert_false(cpumask_empty(&t->memory_nodes));	/* CPU-less nodes */
	assert_true(t->n_nodes > 8);
	topo_free(t);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'/*", tmpdir);	/* this run's only */
	assert_int_equal(system(cmd), 0);
}

static int setup(void **state)
{
	(void)state;
	snprintf(fixtures, sizeof(fixtures), "%s", tl_fixtures());
	return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[256];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	return system(cmd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_fixture),
		cmocka_unit_test(test_details),
	};

	return cmocka_run_group_tests_name("topology", tests, setup, teardown);
}
