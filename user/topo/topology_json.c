// SPDX-License-Identifier: Apache-2.0
/* Topology -> JSON; key meanings in topology_json.h. */
#include <stdio.h>
#include "topology_json.h"

json_object *cpumask_json(const struct cpumask *m)
{
	char buf[CPULIST_MAX];

	if (cpulist_format(m, buf, sizeof(buf)) < 0)
		buf[0] = '\0';
	return json_object_new_string(buf);
}

static json_object *nodes_obj(const struct topology *t)
{
	json_object *o = json_object_new_object();
	char key[16];
	int n;

	cpumask_for_each(n, &t->nodes) {
		snprintf(key, sizeof(key), "%d", n);
		json_object_object_add(o, key, cpumask_json(&t->node_cpus[n]));
	}
	return o;
}

static json_object *distances_obj(const struct topology *t)
{
	json_object *o = json_object_new_object();
	char key[16];

	for (unsigned i = 0; i < t->n_nodes; i++) {
		json_object *row = json_object_new_array();

		for (unsigned k = 0; k < t->n_nodes; k++)
			json_object_array_add(row, json_object_new_int(t->distance[i][k]));
		snprintf(key, sizeof(key), "%d", t->node_ids[i]);
		json_object_object_add(o, key, row);
	}
	return o;
}

static json_object *cpu_obj(const struct topology *t, int id)
{
	json_object *o = json_object_new_object();
	const struct topo_cpu *c = &t->cpu[id];

	json_object_object_add(o, "id", json_object_new_int(id));
	json_object_object_add(o, "online", json_object_new_boolean(cpumask_test(&t->online, (unsigned)id)));
	json_object_object_add(o, "core", json_object_new_int(c->core));
	json_object_object_add(o, "package", json_object_new_int64(c->package));
	json_object_object_add(o, "die", json_object_new_int(c->die));
	json_object_object_add(o, "node", json_object_new_int(c->node));
	json_object_object_add(o, "l3", json_object_new_int(c->l3));
	return o;
}

json_object *topo_json(const struct topology *t, bool per_cpu)
{
	json_object *o = json_object_new_object();
	int id;

	if (!o)
		return NULL;
	json_object_object_add(o, "online", cpumask_json(&t->online));
	json_object_object_add(o, "offline", cpumask_json(&t->offline));
	json_object_object_add(o, "isolated", cpumask_json(&t->isolated));
	json_object_object_add(o, "online_count", json_object_new_int((int)cpumask_weight(&t->online)));
	json_object_object_add(o, "packages", json_object_new_int((int)t->n_packages));
	json_object_object_add(o, "cores", json_object_new_int((int)t->n_cores));
	json_object_object_add(o, "threads_per_core", json_object_new_int((int)t->threads_per_core));
	json_object_object_add(o, "numa_nodes", nodes_obj(t));
	json_object_object_add(o, "memory_nodes", cpumask_json(&t->memory_nodes));
	if (!per_cpu)
		return o;
	json_object_object_add(o, "distances", distances_obj(t));
	{
		json_object *cpus = json_object_new_array();

		cpumask_for_each(id, &t->present)
			json_object_array_add(cpus, cpu_obj(t, id));
		json_object_object_add(o, "cpus", cpus);
	}
	return o;
}
