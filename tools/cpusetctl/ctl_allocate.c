// SPDX-License-Identifier: Apache-2.0
/*
 * cpusetctl allocate --cases FILE.jsonl [--topologies DIR] [--id ID]:
 * runs allocation cases transcribed from kubelet's and Koordinator's unit
 * tests (fixtures/SOURCE.md) through our allocation code and reports the
 * ones whose answer differs. Kubelet cases name a topology file in DIR;
 * Koordinator cases carry topology_params and are generated.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ctl.h"
#include "ctl_alloc.h"

static int json_int(json_object *obj, const char *key, int *ret)
{
	json_object *v;

	if (!json_object_object_get_ex(obj, key, &v) || !json_object_is_type(v, json_type_int))
		return -EINVAL;
	*ret = json_object_get_int(v);
	return 0;
}

/* One entry of a kubelet topology file: {"cpu","core","socket","numa"[,"uncore"]}. */
static int kube_cpu_desc(json_object *e, struct alloc_cpu_desc *ret)
{
	int cpu, core, socket, numa, uncore = -1;
	json_object *u;

	if (json_int(e, "cpu", &cpu) || json_int(e, "core", &core) ||
	    json_int(e, "socket", &socket) || json_int(e, "numa", &numa) || cpu < 0)
		return -EINVAL;
	if (json_object_object_get_ex(e, "uncore", &u) && json_int(e, "uncore", &uncore))
		return -EINVAL;
	*ret = (struct alloc_cpu_desc){ .cpu = (unsigned)cpu, .core = core, .socket = socket,
					.node = numa, .uncore = uncore };
	return 0;
}

static int load_kube_topology(const char *dir, const char *name, struct alloc_topo *ret)
{
	struct alloc_cpu_desc *d = NULL;
	char path[PATH_MAX];
	json_object *root;
	size_t n;
	int r = -EINVAL;

	if (strchr(name, '/') || snprintf(path, sizeof(path), "%s/%s.json", dir, name) >=
				       (int)sizeof(path))
		return -EINVAL;
	root = json_object_from_file(path);
	if (!root)
		return -ENOENT;
	if (!json_object_is_type(root, json_type_array))
		goto out;
	n = json_object_array_length(root);
	d = calloc(n ? n : 1, sizeof(*d));
	if (!d) {
		r = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < n; i++)
		if (kube_cpu_desc(json_object_array_get_idx(root, i), &d[i]) < 0)
			goto out;
	r = alloc_topo_build(d, n, ret);
out:
	free(d);
	json_object_put(root);
	return r;
}

static int load_koord_topology(json_object *params, struct alloc_topo *ret)
{
	int s, n, c, t;

	if (json_int(params, "sockets", &s) || json_int(params, "nodes_per_socket", &n) ||
	    json_int(params, "cores_per_node", &c) || json_int(params, "cpus_per_core", &t) ||
	    s <= 0 || n <= 0 || c <= 0 || t <= 0)
		return -EINVAL;
	return alloc_topo_generate(s, n, c, t, ret);
}

struct run {
	const char *topo_dir;
	const char *only_id;
	unsigned passed, failed;
};

/* Runs the case on one line; counts it and prints it when it fails. */
static void run_line(struct run *run, const char *line, unsigned lineno,
		     struct alloc_topo *topo)
{
	json_object *c = json_tokener_parse(line), *v;
	const char *id = "?", *name;
	char why[512] = "";
	int r;

	if (!c || !json_object_is_type(c, json_type_object)) {
		snprintf(why, sizeof(why), "line %u is not a JSON object", lineno);
		r = -EINVAL;
		goto done;
	}
	if (json_object_object_get_ex(c, "id", &v))
		id = json_object_get_string(v);
	if (run->only_id && strcmp(run->only_id, id) != 0) {
		json_object_put(c);
		return;
	}
	if (json_object_object_get_ex(c, "topology_params", &v)) {
		r = load_koord_topology(v, topo);
	} else if (json_object_object_get_ex(c, "topology", &v) && run->topo_dir) {
		name = json_object_get_string(v);
		r = load_kube_topology(run->topo_dir, name, topo);
	} else {
		r = -EINVAL;
	}
	if (r < 0) {
		snprintf(why, sizeof(why), "cannot build its topology: %s", strerror(-r));
		goto done;
	}
	if (json_object_object_get_ex(c, "kind", &v))
		r = ctl_case_koord(c, topo, why, sizeof(why));
	else
		r = ctl_case_kube(c, topo, why, sizeof(why));
done:
	if (r == 0) {
		run->passed++;
	} else {
		run->failed++;
		printf("FAIL %s: %s%s\n", id, r < 0 ? "bad case: " : "", why);
	}
	json_object_put(c);
}

static int run_file(struct run *run, const char *path)
{
	struct alloc_topo *topo = malloc(sizeof(*topo));
	FILE *f = fopen(path, "re");
	char *line = NULL;
	size_t cap = 0;
	unsigned lineno = 0;

	if (!f || !topo) {
		fprintf(stderr, "%s: %s: %s\n", prog, path, strerror(errno));
		free(topo);
		if (f)
			fclose(f);
		return EXIT_RUNTIME;
	}
	while (getline(&line, &cap, f) > 0) {
		lineno++;
		if (line[strspn(line, " \t\r\n")] != '\0')
			run_line(run, line, lineno, topo);
	}
	free(line);
	free(topo);
	fclose(f);
	return 0;
}

static void allocate_usage(FILE *f)
{
	fprintf(f,
		"Usage: %s allocate --cases FILE.jsonl [--topologies DIR] [--id ID]\n"
		"Runs kubelet / Koordinator allocation cases (fixtures/SOURCE.md schema)\n"
		"and prints one line per failing case, then 'N passed, M failed'.\n"
		"  --cases FILE       cases, one JSON object per line (repeatable)\n"
		"  --topologies DIR   where the kubelet topology files (NAME.json) are\n"
		"  --id ID            run only the case with this id\n"
		"Exit status: 0 all passed, 1 some failed, 2 bad usage.\n", prog);
}

int cmd_allocate(struct ctl_opts *o, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "cases", required_argument, NULL, 'c' },
		{ "topologies", required_argument, NULL, 't' },
		{ "id", required_argument, NULL, 'i' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	const char *files[16];
	unsigned n_files = 0;
	struct run run = { 0 };
	int c;

	(void)o;
	optind = 1;
	while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
		switch (c) {
		case 'c':
			if (n_files == 16) {
				usage_error("allocate: at most 16 --cases files");
				return EXIT_USAGE;
			}
			files[n_files++] = optarg;
			break;
		case 't': run.topo_dir = optarg; break;
		case 'i': run.only_id = optarg; break;
		case 'h': allocate_usage(stdout); return 0;
		default: bad_option(c, argv, "allocate: "); return EXIT_USAGE;
		}
	}
	if (optind < argc || n_files == 0) {
		usage_error(optind < argc ? "allocate: unexpected argument" :
					    "allocate: --cases FILE is required");
		return EXIT_USAGE;
	}
	for (unsigned i = 0; i < n_files; i++)
		if (run_file(&run, files[i]))
			return EXIT_RUNTIME;
	printf("%u passed, %u failed\n", run.passed, run.failed);
	return run.failed || run.passed == 0 ? EXIT_RUNTIME : 0;
}
