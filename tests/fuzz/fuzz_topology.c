// SPDX-License-Identifier: Apache-2.0
/*
 * sysfs topology discovery (user/topo/topology.c through topo_read_mem, which
 * runs the same parsing as topo_read on an in-memory file list; a real
 * tree per input ran at ~1000 execs/s), then topo_inherit.
 *
 * Input: records separated by NUL bytes, each "<path>\n<content>" with
 * path relative to devices/system ("cpu/cpu3/topology/core_cpus_list",
 * "node/node1/cpulist"); a path ending in '/' is a directory with nothing
 * in it. devices/system/cpu always exists.
 *
 * Invariants (topology.h): 0, -E2BIG or -ENOMEM (never -ENOENT); on
 * success online CPUs are present, every present CPU is in the sibling
 * group of its core (the group's lowest CPU) and in the cpulist of its
 * node, node ids are ascending, counts agree with the online set;
 * topo_nodes_of stays within the nodes holding CPUs; the same holds after
 * topo_inherit from itself.
 */
#include <errno.h>
#include "fuzz.h"
#include "user/topo/topology.h"

#define MAX_FILES	512
#define PREFIX		"devices/system/"

static void check_topology(const struct topology *t)
{
	struct cpumask nodes_of;
	unsigned online = cpumask_weight(&t->online);
	int id, r;

	FUZZ_CHECK(cpumask_subset(&t->online, &t->present));
	FUZZ_CHECK(t->n_nodes >= 1 && t->n_nodes <= TOPO_MAX_NODES);
	for (unsigned i = 0; i < t->n_nodes; i++) {
		FUZZ_CHECK(t->node_ids[i] >= 0 && t->node_ids[i] < CPUSETD_MAX_CPUS);
		FUZZ_CHECK(i == 0 || t->node_ids[i - 1] < t->node_ids[i]);
	}
	cpumask_for_each(id, &t->present) {
		const struct topo_cpu *c = &t->cpu[id];

		FUZZ_CHECK(c->core >= 0 && c->core <= id);
		FUZZ_CHECK(cpumask_test(&t->core_cpus[c->core], (unsigned)id));
		FUZZ_CHECK(cpumask_test(topo_core_cpus(t, (unsigned)id), (unsigned)id));
		FUZZ_CHECK(c->die >= -1 && c->l3 >= -1 && c->l3 < CPUSETD_MAX_CPUS);
		FUZZ_CHECK(c->node >= -1 && c->node < CPUSETD_MAX_CPUS);
		if (c->node >= 0) {
			FUZZ_CHECK(cpumask_test(&t->nodes, (unsigned)c->node));
			FUZZ_CHECK(cpumask_test(&t->node_cpus[c->node], (unsigned)id));
		}
	}
	FUZZ_CHECK(!cpumask_intersects(&t->nodes, &t->memory_nodes));
	FUZZ_CHECK(t->n_cores <= online && t->n_packages <= online);
	FUZZ_CHECK(t->threads_per_core <= 64);
	if (online)
		FUZZ_CHECK(t->n_cores >= 1 && t->n_packages >= 1 && t->threads_per_core >= 1);
	r = topo_nodes_of(t, &t->present, &nodes_of);
	FUZZ_CHECK(r == 0 || r == -ENXIO);
	if (r == 0)
		FUZZ_CHECK(cpumask_subset(&nodes_of, &t->nodes));
}

/* The records of data as files[] (strings in *store, caller frees).
 * Returns how many. */
static size_t split_records(const uint8_t *data, size_t size, struct topo_file *files,
			    char **store)
{
	const char *p, *end;
	char *out;
	size_t n = 0;

	/* The input, then each path again behind PREFIX, with its NUL. */
	out = *store = fuzz_malloc(2 * size + 1 + MAX_FILES * sizeof(PREFIX));
	memcpy(out, data, size);
	out[size] = '\0';
	p = out;
	end = out + size;
	out = out + size + 1;
	for (; p < end && n < MAX_FILES; p += strlen(p) + 1) {
		const char *nl = strchr(p, '\n');
		size_t rel = nl ? (size_t)(nl - p) : strlen(p);

		if (rel == 0)
			continue;
		files[n].path = out;
		out += sprintf(out, PREFIX "%.*s", (int)rel, p) + 1;
		files[n++].text = nl ? nl + 1 : "";
	}
	files[n++] = (struct topo_file){ PREFIX "cpu/", "" };
	return n;
}

/* topo_inherit's target: static, because a fresh 300 KB block per input
 * costs ASan an mmap and page faults. */
static struct topology copy;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct topo_file files[MAX_FILES + 1];
	struct topology *t = NULL;
	char *store;
	size_t n;
	int r;

	n = split_records(data, size, files, &store);
	r = topo_read_mem(files, n, &t);
	free(store);
	FUZZ_CHECK(r == 0 || r == -E2BIG || r == -ENOMEM);
	if (r < 0)
		return 0;
	check_topology(t);
	copy = *t;
	topo_inherit(&copy, t);
	check_topology(&copy);
	topo_free(t);
	return 0;
}
