// SPDX-License-Identifier: Apache-2.0
/*
 * cpusetctl map: the machine drawn the way a person thinks of it,
 * packages > NUMA nodes > physical cores > threads, each logical CPU
 * marked with who owns it: a container with exclusive CPUs (a letter,
 * named in the legend), the shared pool (S), the BE pool (B), an isolated
 * CPU nobody uses (I), an offline CPU (X), or nobody (-).
 *
 * The topology comes from status.json ("topology"."cpus", written since
 * the daemon has per-CPU topology), else from the live sysfs (--sysfs).
 * Colour marks the owners on a terminal; the letters and the legend carry
 * the same facts without it (NO_COLOR, --color=never, pipes).
 *
 * Annotated pods may share a CPU: the map shows the first owner found;
 * `status` and `explain` show every one.
 */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "user/base/cpumask.h"
#include "user/topo/topology.h"
#include "ctl.h"

enum { OWN_SHARED, OWN_BE, OWN_ISOLATED, OWN_OFFLINE, OWN_NONE, OWN__SPECIAL };

struct map_cpu {
	bool present, online, isolated;
	int core, node;
	long package;
	int owner;		/* index into map.owner */
};

struct map_owner {
	char sym;
	const char *what;	/* "shared pool", or the container's kind */
	json_object *c;		/* the container (borrowed), or NULL */
	struct cpumask cpus;
};

struct map {
	struct map_cpu cpu[CPUSETD_MAX_CPUS];
	struct map_owner owner[OWN__SPECIAL + CPUSETD_MAX_CPUS];
	unsigned n_owners;
	bool color;
};

static const char cont_syms[] = "abcdefghijklmnopqrstuvwxyz0123456789";
/* ANSI colours: containers cycle through these; specials fixed below. */
static const char *const cont_colors[] = { "1;30;43", "1;37;45", "1;30;46", "1;37;41",
					   "1;37;44", "1;30;47" };

static const char *color_of(int owner)
{
	switch (owner) {
	case OWN_SHARED: return "30;42";
	case OWN_BE: return "30;104";
	case OWN_ISOLATED: return "37;100";
	case OWN_OFFLINE: return "2";
	case OWN_NONE: return "0";
	}
	return cont_colors[(owner - OWN__SPECIAL) % (sizeof(cont_colors) / sizeof(cont_colors[0]))];
}

/* ---- topology: status.json or sysfs --------------------------------- */

static int topo_from_json(struct map *m, json_object *root)
{
	json_object *t = ctl_jget(root, "topology", json_type_object);
	json_object *cpus = ctl_jget(t, "cpus", json_type_array);
	struct cpumask iso;

	if (!cpus)
		return -ENOENT;
	if (cpulist_parse(ctl_jstr(t, "isolated", ""), &iso) < 0)
		cpumask_zero(&iso);
	for (size_t i = 0; i < json_object_array_length(cpus); i++) {
		json_object *c = json_object_array_get_idx(cpus, i);
		int64_t id = ctl_jint(c, "id", -1);

		if (id < 0 || id >= CPUSETD_MAX_CPUS)
			continue;
		m->cpu[id] = (struct map_cpu){ .present = true, .online = ctl_jbool(c, "online"),
			.isolated = cpumask_test(&iso, (unsigned)id),
			.core = (int)ctl_jint(c, "core", id), .node = (int)ctl_jint(c, "node", -1),
			.package = (long)ctl_jint(c, "package", -1) };
	}
	return 0;
}

static int topo_from_sysfs(struct map *m, const char *sysfs)
{
	struct topology *t;
	int r = topo_read(sysfs, &t), id;

	if (r < 0)
		return r;
	cpumask_for_each(id, &t->present)
		m->cpu[id] = (struct map_cpu){ .present = true,
			.online = cpumask_test(&t->online, (unsigned)id),
			.isolated = cpumask_test(&t->isolated, (unsigned)id),
			.core = t->cpu[id].core, .node = t->cpu[id].node,
			.package = t->cpu[id].package };
	topo_free(t);
	return 0;
}

/* ---- owners ----------------------------------------------------------- */

static bool owns_cpus(json_object *c)
{
	const char *kind = ctl_jstr(c, "kind", "");

	return !ctl_jget(c, "error", json_type_object) &&
	       (strcmp(kind, "integer") == 0 || strcmp(kind, "annotated") == 0);
}

static void add_special(struct map *m, int idx, char sym, const char *what)
{
	m->owner[idx] = (struct map_owner){ .sym = sym, .what = what };
}

static void add_container(struct map *m, json_object *c)
{
	struct map_owner *o = &m->owner[m->n_owners];
	unsigned k = m->n_owners - OWN__SPECIAL;
	int id;

	if (cpulist_parse(ctl_jstr(c, "cpus", ""), &o->cpus) < 0 || cpumask_empty(&o->cpus))
		return;
	o->sym = k < sizeof(cont_syms) - 1 ? cont_syms[k] : '+';
	o->what = ctl_jstr(c, "kind", "?");
	o->c = c;
	cpumask_for_each(id, &o->cpus)
		if (m->cpu[id].owner == OWN_NONE)
			m->cpu[id].owner = (int)m->n_owners;
	m->n_owners++;
}

/* Owners of every CPU: containers first, then the pools. */
static void owners_fill(struct map *m, json_object *root)
{
	json_object *arr = ctl_jget(root, "containers", json_type_array);
	struct cpumask shared, be;
	int id;

	add_special(m, OWN_SHARED, 'S', "shared pool");
	add_special(m, OWN_BE, 'B', "BE pool");
	add_special(m, OWN_ISOLATED, 'I', "isolated, unused");
	add_special(m, OWN_OFFLINE, 'X', "offline");
	add_special(m, OWN_NONE, '-', "no owner");
	m->n_owners = OWN__SPECIAL;
	for (id = 0; id < CPUSETD_MAX_CPUS; id++)
		m->cpu[id].owner = OWN_NONE;
	for (size_t i = 0; arr && i < json_object_array_length(arr); i++) {
		json_object *c = json_object_array_get_idx(arr, i);

		if (owns_cpus(c))
			add_container(m, c);
	}
	if (cpulist_parse(ctl_jstr(root, "shared_pool", ""), &shared) < 0)
		cpumask_zero(&shared);
	if (cpulist_parse(ctl_jstr(root, "be_pool", ""), &be) < 0)
		cpumask_zero(&be);
	for (id = 0; id < CPUSETD_MAX_CPUS; id++) {
		struct map_cpu *c = &m->cpu[id];

		if (!c->present || c->owner != OWN_NONE)
			continue;
		c->owner = !c->online ? OWN_OFFLINE : cpumask_test(&shared, id) ? OWN_SHARED :
			   cpumask_test(&be, id) ? OWN_BE : c->isolated ? OWN_ISOLATED : OWN_NONE;
	}
}

/* ---- drawing ------------------------------------------------------------ */

static void put_sym(const struct map *m, int owner)
{
	if (m->color)
		printf("\033[%sm%c\033[0m", color_of(owner), m->owner[owner].sym);
	else
		putchar(m->owner[owner].sym);
}

/* Lowest present CPU id with package pkg (and node, unless node_any)
 * whose value of field (0 package, 1 node, 2 core) is > after. */
static bool next_value(const struct map *m, int field, long pkg, int node, long after,
		       long *ret)
{
	bool found = false;

	for (int id = 0; id < CPUSETD_MAX_CPUS; id++) {
		const struct map_cpu *c = &m->cpu[id];
		long v = field == 0 ? c->package : field == 1 ? c->node : c->core;

		if (!c->present || (field > 0 && c->package != pkg) ||
		    (field > 1 && c->node != node) || v <= after || (found && v >= *ret))
			continue;
		*ret = v;
		found = true;
	}
	return found;
}

/* "core 4   4 a  5 S" : the threads of one physical core. */
static void draw_core(const struct map *m, long pkg, int node, int core)
{
	printf("      core %-5d", core);
	for (int id = 0; id < CPUSETD_MAX_CPUS; id++) {
		const struct map_cpu *c = &m->cpu[id];

		if (!c->present || c->package != pkg || c->node != node || c->core != core)
			continue;
		printf(" %4d ", id);
		put_sym(m, c->owner);
	}
	putchar('\n');
}

static void draw_tree(const struct map *m)
{
	long pkg = -2, node, core;

	while (next_value(m, 0, 0, 0, pkg, &pkg)) {
		printf("package %ld\n", pkg);
		for (node = -2; next_value(m, 1, pkg, 0, node, &node);) {
			printf("  NUMA node %ld\n", node);
			for (core = -2; next_value(m, 2, pkg, (int)node, core, &core);)
				draw_core(m, pkg, (int)node, (int)core);
		}
	}
}

static void draw_legend(const struct map *m)
{
	char buf[CPULIST_MAX];

	printf("\nLegend:\n");
	for (unsigned i = 0; i < m->n_owners; i++) {
		const struct map_owner *o = &m->owner[i];

		printf("  ");
		put_sym(m, (int)i);
		if (!o->c) {
			printf("  %s\n", o->what);
			continue;
		}
		printf("  ");
		ctl_put_clean(ctl_jstr(o->c, "namespace", "?"));
		putchar('/');
		ctl_put_clean(ctl_jstr(o->c, "pod", "?"));
		putchar('/');
		ctl_put_clean(ctl_jstr(o->c, "container", "?"));
		cpulist_format(&o->cpus, buf, sizeof(buf));
		printf("  %s  CPUs %s\n", o->what, buf);
	}
}

/* ---- --json ------------------------------------------------------------- */

static json_object *owner_json(const struct map *m, int owner)
{
	static const char *const types[] = { "shared", "be", "isolated", "offline", "none" };
	const struct map_owner *o = &m->owner[owner];
	json_object *j = json_object_new_object();

	json_object_object_add(j, "type", json_object_new_string(
		owner < OWN__SPECIAL ? types[owner] : "container"));
	if (o->c) {
		static const char *const keys[] = { "namespace", "pod", "container",
						    "container_id", "kind" };

		for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++)
			json_object_object_add(j, keys[k],
					       json_object_new_string(ctl_jstr(o->c, keys[k], "")));
	}
	return j;
}

static void print_json(const struct map *m)
{
	json_object *a = json_object_new_array();

	for (int id = 0; id < CPUSETD_MAX_CPUS; id++) {
		const struct map_cpu *c = &m->cpu[id];
		json_object *j;

		if (!c->present)
			continue;
		j = json_object_new_object();
		json_object_object_add(j, "cpu", json_object_new_int(id));
		json_object_object_add(j, "package", json_object_new_int64(c->package));
		json_object_object_add(j, "node", json_object_new_int(c->node));
		json_object_object_add(j, "core", json_object_new_int(c->core));
		json_object_object_add(j, "online", json_object_new_boolean(c->online));
		json_object_object_add(j, "isolated", json_object_new_boolean(c->isolated));
		json_object_object_add(j, "owner", owner_json(m, c->owner));
		json_object_array_add(a, j);
	}
	ctl_print_json(a);
	json_object_put(a);
}

/* ---- the command -------------------------------------------------------- */

static void map_usage(FILE *f)
{
	fprintf(f,
		"Usage: %s map [--color auto|always|never] [--json] [--sysfs DIR] [--state-dir DIR]\n"
		"Draws packages > NUMA nodes > physical cores > threads; each logical CPU is\n"
		"marked with its owner: a letter for a container with exclusive CPUs (named in\n"
		"the legend), S shared pool, B BE pool, I isolated and unused, X offline, - none.\n"
		"  -c, --color WHEN      colour the owners: auto (on a terminal, unless NO_COLOR\n"
		"                        is set; the default), always, never\n"
		"  -j, --json            [{cpu, package, node, core, online, isolated, owner:\n"
		"                        {type, namespace, pod, container, container_id, kind}}]\n"
		"  -S, --sysfs DIR       topology from DIR (the /sys to read) when status.json\n"
		"                        has no per-CPU topology (default /sys)\n"
		"  -s, --state-dir DIR   where cpusetd writes status.json (default %s)\n"
		"  -h, --help            this text\n"
		"Examples:\n"
		"  %s map\n"
		"  %s map --color=never | less\n"
		"  %s map --json | jq '.[] | select(.owner.type == \"container\") | .cpu'\n",
		prog, CTL_DEFAULT_STATE_DIR, prog, prog, prog);
}

/* --color WHEN into *ret; -EINVAL for anything else. */
static int parse_color(const char *when, bool *ret)
{
	const char *nc = getenv("NO_COLOR");

	if (strcmp(when, "always") == 0)
		*ret = true;
	else if (strcmp(when, "never") == 0)
		*ret = false;
	else if (strcmp(when, "auto") == 0)
		*ret = isatty(STDOUT_FILENO) && !(nc && *nc);
	else
		return -EINVAL;
	return 0;
}

static int map_run(struct ctl_opts *o, const char *sysfs, bool color, bool json)
{
	struct map *m = calloc(1, sizeof(*m));
	json_object *root;
	bool alive = true;
	int r;

	if (!m)
		return EXIT_RUNTIME;
	if (ctl_status_load(o->state_dir, &root) < 0) {
		free(m);
		return EXIT_RUNTIME;
	}
	r = topo_from_json(m, root);
	if (r == -ENOENT && (r = topo_from_sysfs(m, sysfs)) < 0)
		fprintf(stderr, "%s: map: status.json has no per-CPU topology and %s has none: %s\n",
			prog, sysfs, strerror(-r));
	if (r == 0) {
		m->color = color;
		owners_fill(m, root);
		if (json) {
			print_json(m);
		} else {
			draw_tree(m);
			draw_legend(m);
		}
		fflush(stdout);
		alive = ctl_daemon_alive(root);
	}
	json_object_put(root);
	free(m);
	return r < 0 ? EXIT_RUNTIME : alive ? 0 : EXIT_NOT_RUNNING;
}

int cmd_map(struct ctl_opts *o, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "color", required_argument, NULL, 'c' },
		{ "json", no_argument, NULL, 'j' },
		{ "sysfs", required_argument, NULL, 'S' },
		{ "state-dir", required_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	const char *sysfs = "/sys", *when = "auto";
	bool json = false, color;
	int c;

	optind = 0;
	while ((c = getopt_long(argc, argv, "+:c:jS:s:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'c': when = optarg; break;
		case 'j': json = true; break;
		case 'S': sysfs = optarg; break;
		case 's': o->state_dir = optarg; break;
		case 'h': map_usage(stdout); return 0;
		default: bad_option(c, argv, "map: "); return EXIT_USAGE;
		}
	}
	if (optind < argc) {
		usage_error("map: unexpected argument '%s'", argv[optind]);
		return EXIT_USAGE;
	}
	if (parse_color(when, &color) < 0) {
		usage_error("map: --color must be auto, always or never, not '%s'", when);
		return EXIT_USAGE;
	}
	return map_run(o, sysfs, color, json);
}
