// SPDX-License-Identifier: Apache-2.0
/*
 * cpusetctl explain <container id prefix | namespace/pod/container>: why
 * that container has its CPUs, from status.json alone: its kind and the
 * rule that gave it (PRD or the Koordinator class), the policy and
 * strategy that chose exclusive CPUs (daemon.allocation and the
 * container's "decision"), its NUMA nodes, and any admission error;
 * and, from the live cgroups, its CFS quota and its pod's (ctl_quota.h).
 */
#include <errno.h>
#include <getopt.h>
#include <string.h>

#include "user/base/cpumask.h"
#include "ctl.h"
#include "ctl_quota.h"

/* What each status.json decision.rule means, for a person. */
static const struct {
	const char *rule, *text;
} rules[] = {
	{ "sandbox", "sandbox (pause) containers always run on the shared pool (PRD)" },
	{ "invalid_annotation", "a placement annotation of the pod is malformed, so the pod "
				"could not be classified (see the error)" },
	{ "invalid_bundle", "the container's OCI bundle config.json exists but cannot be used "
			    "(not a regular file, too large, not JSON, nested too deep, a "
			    "runtime-spec field of the wrong type), so nothing in it is trusted "
			    "(see the error)" },
	{ "cores_ids", "the pod carries weka.io/cores-ids: exactly the CPUs it lists "
		       "(PRD annotated pods; several pods may list one CPU)" },
	{ "resource_status", "Koordinator's scheduler chose the CPUs "
			     "(scheduling.koordinator.sh/resource-status), taken verbatim, exclusive" },
	{ "qos_class", "the pod's Koordinator class (koordinator.sh/qosClass): LS and SYSTEM "
		       "run on the shared pool, BE on the BE pool, LSE/LSR need integer CPUs" },
	{ "integer", "Guaranteed QoS with a whole-number CPU limit: N = limit exclusive CPUs "
		     "(PRD integer containers)" },
	{ "besteffort_pool", "a BestEffort pod without a Koordinator class, and "
			     "besteffort_pool = be: the BE pool" },
	{ "default_shared", "neither annotated nor integer: the shared pool = online - isolated "
			    "- reserved (PRD shared)" },
};

static const char *rule_text(const char *rule)
{
	for (size_t i = 0; i < sizeof(rules) / sizeof(rules[0]); i++)
		if (strcmp(rules[i].rule, rule) == 0)
			return rules[i].text;
	return "unknown rule (an older or newer cpusetd)";
}

/* ---- finding the container ---------------------------------------------- */

static bool name_is(json_object *c, const char *ns, const char *pod, const char *ctr)
{
	const char *have = ctl_jbool(c, "sandbox") ? "POD" : ctl_jstr(c, "container", "");

	return strcmp(ctl_jstr(c, "namespace", ""), ns) == 0 &&
	       strcmp(ctl_jstr(c, "pod", ""), pod) == 0 && strcmp(have, ctr) == 0;
}

/*
 * The one container that what names (namespace/pod/container, the
 * sandbox as POD; or a container ID prefix) into *ret. Returns 0,
 * -ENOENT none, -EEXIST more than one (*n_match says how many), -EINVAL
 * for a name that is neither.
 */
static int find(json_object *root, const char *what, json_object **ret, unsigned *n_match)
{
	json_object *arr = ctl_jget(root, "containers", json_type_array);
	char ns[256], pod[256], ctr[256];
	bool by_name = strchr(what, '/') != NULL;
	size_t len = strlen(what);

	*n_match = 0;
	if (by_name && sscanf(what, "%255[^/]/%255[^/]/%255[^/]", ns, pod, ctr) != 3)
		return -EINVAL;
	if (!by_name && strspn(what, "0123456789abcdef") != len)
		return -EINVAL;
	for (size_t i = 0; arr && i < json_object_array_length(arr); i++) {
		json_object *c = json_object_array_get_idx(arr, i);
		bool hit = by_name ? name_is(c, ns, pod, ctr) :
				     strncmp(ctl_jstr(c, "container_id", ""), what, len) == 0;

		if (hit && (*n_match)++ == 0)
			*ret = c;
	}
	return *n_match == 0 ? -ENOENT : *n_match > 1 ? -EEXIST : 0;
}

/* ---- the explanation ------------------------------------------------------ */

static bool exclusive(json_object *c)
{
	json_object *d = ctl_jget(c, "decision", json_type_object);

	return strcmp(ctl_jstr(c, "kind", ""), "integer") == 0 &&
	       strcmp(ctl_jstr(d, "rule", ""), "integer") == 0 &&
	       !ctl_jget(c, "error", json_type_object);
}

/* The policy that chose the CPUs, as a JSON object (exclusive only). */
static json_object *policy_obj(json_object *root, json_object *c)
{
	json_object *a = ctl_jget(ctl_jget(root, "daemon", json_type_object), "allocation",
				  json_type_object);
	json_object *d = ctl_jget(c, "decision", json_type_object);
	json_object *ann = ctl_jget(d, "annotations", json_type_object);
	json_object *o = json_object_new_object();
	const char *bind = ctl_jstr(ann, "resource-spec.preferredCPUBindPolicy", "");

	json_object_object_add(o, "engine", json_object_new_string(ctl_jstr(a, "engine", "?")));
	json_object_object_add(o, "cpu_bind_policy", json_object_new_string(
		*bind ? bind : ctl_jstr(a, "cpu_bind_policy", "?")));
	json_object_object_add(o, "cpu_bind_policy_from", json_object_new_string(
		*bind ? "pod resource-spec" : "node"));
	json_object_object_add(o, "exclusive_policy",
			       json_object_new_string(ctl_jstr(d, "exclusive_policy", "?")));
	json_object_object_add(o, "numa_allocate_strategy",
			       json_object_new_string(ctl_jstr(a, "numa_allocate_strategy", "?")));
	json_object_object_add(o, "numa_topology_alignment_policy", json_object_new_string(
		ctl_jstr(a, "numa_topology_alignment_policy", "?")));
	json_object_object_add(o, "topology_manager_scope",
			       json_object_new_string(ctl_jstr(a, "topology_manager_scope", "?")));
	json_object_object_add(o, "n_cpus", json_object_new_int64(ctl_jint(d, "n_cpus", 0)));
	json_object_object_add(o, "pod_affinity",
			       json_object_new_boolean(ctl_jbool(d, "pod_affinity")));
	return o;
}

static void copy(json_object *to, json_object *from, const char *key)
{
	json_object *v;

	if (json_object_object_get_ex(from, key, &v))
		json_object_object_add(to, key, json_object_get(v));
}

/* Which pool a pooled container runs on, and why that part of it. */
static const char *pool_text(json_object *c, json_object *d)
{
	static char buf[256];
	const char *kind = ctl_jstr(c, "kind", ""), *nodes = ctl_jstr(d, "pool_nodes", "");
	const char *pool;

	if (exclusive(c))
		return "";
	if (ctl_jbool(d, "system_pool"))
		return "SYSTEM QoS pods' own CPUs = system_qos_cpus (koordinator.sh/qosClass: "
		       "SYSTEM), out of the shared pool";
	if (strcmp(kind, "be") == 0)
		pool = "BE pool = online - isolated - annotated - LSE CPUs";
	else if (strcmp(kind, "shared") == 0)
		pool = "shared pool = online - isolated - reserved";
	else
		return "";
	if (!*nodes)
		return pool;
	snprintf(buf, sizeof(buf), "%s, its part on NUMA node(s) %s: Koordinator's scheduler "
		 "placed the pod there (resource-status numaNodeResources)", pool, nodes);
	return buf;
}

/* The whole explanation as one JSON object (what --json prints and what
 * the human form is printed from, so the two never disagree). */
static json_object *explain_obj(json_object *root, json_object *c)
{
	static const char *const keys[] = { "container_id", "namespace", "pod", "container",
		"pod_uid", "sandbox", "qos", "qos_class", "kind", "cpus", "mems", "error" };
	json_object *d = ctl_jget(c, "decision", json_type_object);
	json_object *o = json_object_new_object();
	const char *rule = ctl_jstr(d, "rule", "?");

	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		copy(o, c, keys[i]);
	json_object_object_add(o, "rule", json_object_new_string(rule));
	json_object_object_add(o, "rule_text", json_object_new_string(rule_text(rule)));
	copy(o, d, "numa_nodes");
	copy(o, d, "cpu_quota_us");
	copy(o, d, "cpu_period_us");
	json_object_object_add(o, "cfs_quota", ctl_quota_obj(ctl_jstr(c, "cgroup", "")));
	copy(o, d, "annotations");
	copy(o, d, "labels");
	copy(o, d, "qos_class_from");
	json_object_object_add(o, "policy", exclusive(c) ? policy_obj(root, c) : NULL);
	json_object_object_add(o, "pool", json_object_new_string(pool_text(c, d)));
	return o;
}

static void line(const char *label, const char *value)
{
	printf("  %-12s ", label);
	ctl_put_clean(value);
	putchar('\n');
}

static void print_limit(json_object *e)
{
	int64_t q = ctl_jint(e, "cpu_quota_us", -1), p = ctl_jint(e, "cpu_period_us", 0);
	char buf[128];

	if (q <= 0 || p <= 0)
		snprintf(buf, sizeof(buf), "none");
	else
		snprintf(buf, sizeof(buf), "quota %lld µs / period %lld µs = %.3g CPUs%s",
			 (long long)q, (long long)p, (double)q / (double)p,
			 q % p ? " (not a whole number)" : "");
	line("CPU limit", buf);
}

static void print_policy(json_object *p)
{
	char buf[512];

	snprintf(buf, sizeof(buf),
		 "%s engine: %s (%s), exclusive policy %s, NUMA strategy %s, NUMA alignment %s "
		 "(%s scope%s); N = %lld",
		 ctl_jstr(p, "engine", "?"), ctl_jstr(p, "cpu_bind_policy", "?"),
		 ctl_jstr(p, "cpu_bind_policy_from", "?"), ctl_jstr(p, "exclusive_policy", "?"),
		 ctl_jstr(p, "numa_allocate_strategy", "?"),
		 ctl_jstr(p, "numa_topology_alignment_policy", "?"),
		 ctl_jstr(p, "topology_manager_scope", "?"),
		 ctl_jbool(p, "pod_affinity") ? ", held with its pod's NUMA affinity" : "",
		 (long long)ctl_jint(p, "n_cpus", 0));
	line("chosen by", buf);
}

static void print_annotations(json_object *a)
{
	bool any = false;

	if (a) {
		json_object_object_foreach(a, k, v) {
			printf(any ? "  %-12s " : "  %-12s ", any ? "" : "annotations");
			ctl_put_clean(k);
			putchar('=');
			ctl_put_clean(json_object_get_string(v));
			putchar('\n');
			any = true;
		}
	}
	if (!any)
		line("annotations", "(none that place CPUs)");
}

static void print_cpus(const char *label, const char *list, const char *none)
{
	struct cpumask m;
	char buf[CPULIST_MAX + 32];

	if (!*list || cpulist_parse(list, &m) < 0)
		snprintf(buf, sizeof(buf), "%s", *list ? list : none);
	else
		snprintf(buf, sizeof(buf), "%s (%u)", list, cpumask_weight(&m));
	line(label, buf);
}

/* Where the Koordinator class came from, for the kind line: the pod's
 * label (NRI), over an annotation that said otherwise, or the annotation. */
static const char *class_from(json_object *e)
{
	static char buf[128];
	const char *from = ctl_jstr(e, "qos_class_from", "");
	const char *ann = ctl_jstr(ctl_jget(e, "annotations", json_type_object),
				   "koordinator.sh/qosClass", "");

	if (strcmp(from, "label") == 0 && *ann)
		snprintf(buf, sizeof(buf), " (pod label koordinator.sh/qosClass, over the "
			 "annotation's %.16s)", ann);
	else if (strcmp(from, "label") == 0)
		snprintf(buf, sizeof(buf), " (pod label koordinator.sh/qosClass)");
	else if (strcmp(from, "annotation") == 0)
		snprintf(buf, sizeof(buf), " (pod annotation koordinator.sh/qosClass)");
	else
		buf[0] = '\0';
	return buf;
}

static void print_human(json_object *e)
{
	json_object *err = ctl_jget(e, "error", json_type_object);
	char buf[1024];

	ctl_put_clean(ctl_jstr(e, "namespace", "?"));
	putchar('/');
	ctl_put_clean(ctl_jstr(e, "pod", "?"));
	putchar('/');
	ctl_put_clean(ctl_jbool(e, "sandbox") ? "POD" : ctl_jstr(e, "container", "?"));
	putchar('\n');
	line("container", ctl_jstr(e, "container_id", "?"));
	snprintf(buf, sizeof(buf), "%s, QoS %s, Koordinator class %s%s", ctl_jstr(e, "kind", "?"),
		 *ctl_jstr(e, "qos", "") ? ctl_jstr(e, "qos", "") : "?",
		 *ctl_jstr(e, "qos_class", "") ? ctl_jstr(e, "qos_class", "") : "none",
		 class_from(e));
	line("kind", buf);
	snprintf(buf, sizeof(buf), "%s: %s", ctl_jstr(e, "rule", "?"), ctl_jstr(e, "rule_text", ""));
	line("rule", buf);
	print_limit(e);
	ctl_quota_print(ctl_jget(e, "cfs_quota", json_type_object));
	if (ctl_jget(e, "policy", json_type_object))
		print_policy(ctl_jget(e, "policy", json_type_object));
	if (*ctl_jstr(e, "pool", ""))
		line("pool", ctl_jstr(e, "pool", ""));
	print_cpus("CPUs", ctl_jstr(e, "cpus", ""), "(none)");
	print_cpus("NUMA nodes", ctl_jstr(e, "numa_nodes", ""), "(unknown)");
	print_cpus("mems", ctl_jstr(e, "mems", ""), "left as it is");
	print_annotations(ctl_jget(e, "annotations", json_type_object));
	if (err)
		snprintf(buf, sizeof(buf), "%s (%s): %s", ctl_jstr(err, "reason", "?"),
			 ctl_jstr(err, "action", "?"), ctl_jstr(err, "message", ""));
	line("error", err ? buf : "none");
}

static void explain_usage(FILE *f)
{
	fprintf(f,
		"Usage: %s explain [--json] [--state-dir DIR] <container-id-prefix | namespace/pod/container>\n"
		"Says why a container has its CPUs: its kind and the rule that gave it, the\n"
		"policy and strategy that chose exclusive CPUs, its NUMA nodes, any\n"
		"admission error, and the CFS quota of it and its pod as the cgroups hold\n"
		"it now (lifted by cpusetd or in force). A pod's sandbox is namespace/pod/POD.\n"
		"  -j, --json            the same as one JSON object\n"
		"  -s, --state-dir DIR   where cpusetd writes status.json (default %s)\n"
		"  -h, --help            this text\n"
		"Examples:\n"
		"  %s explain prod/postgres-0/postgres\n"
		"  %s explain e1d2c3\n"
		"  %s explain --json e1d2c3 | jq .policy\n",
		prog, CTL_DEFAULT_STATE_DIR, prog, prog, prog);
}

/*
 * A container that has no cgroup (refused at NRI CreateContainer: it never
 * ran) is only in the per-pod error table: its entry (by name, or by an
 * ID prefix of its latest attempt), or NULL.
 */
static json_object *find_error(json_object *root, const char *what)
{
	json_object *arr = ctl_jget(root, "errors", json_type_array);
	char ns[256], pod[256], ctr[256];
	bool by_name = sscanf(what, "%255[^/]/%255[^/]/%255[^/]", ns, pod, ctr) == 3;

	for (size_t i = 0; arr && i < json_object_array_length(arr); i++) {
		json_object *e = json_object_array_get_idx(arr, i);

		if (by_name ? strcmp(ctl_jstr(e, "namespace", ""), ns) == 0 &&
			      strcmp(ctl_jstr(e, "pod", ""), pod) == 0 &&
			      strcmp(ctl_jstr(e, "container", ""), ctr) == 0 :
			      strncmp(ctl_jstr(e, "container_id", ""), what, strlen(what)) == 0)
			return e;
	}
	return NULL;
}

/* Says why a container without a cgroup has none: its listed error. */
static void print_refused(json_object *e, bool json)
{
	if (json) {
		ctl_print_json(e);
		return;
	}
	ctl_put_clean(ctl_jstr(e, "namespace", "?"));
	putchar('/');
	ctl_put_clean(ctl_jstr(e, "pod", "?"));
	putchar('/');
	ctl_put_clean(ctl_jstr(e, "container", "?"));
	printf(": no cgroup (never ran, or gone); its pod's error list says:\n");
	line("container", ctl_jstr(e, "container_id", "?"));
	printf("  %-12s %s (%s, %lld attempts): ", "error", ctl_jstr(e, "reason", "?"),
	       ctl_jstr(e, "action", "?"), (long long)ctl_jint(e, "attempts", 0));
	ctl_put_clean(ctl_jstr(e, "message", ""));
	putchar('\n');
}

/* Finds what and prints it; the exit code. */
static int explain_run(struct ctl_opts *o, const char *what, bool json)
{
	json_object *root, *c = NULL, *e;
	unsigned n;
	bool alive;
	int r;

	if (ctl_status_load(o->state_dir, &root) < 0)
		return EXIT_RUNTIME;
	r = find(root, what, &c, &n);
	if (r == -ENOENT && (e = find_error(root, what))) {
		print_refused(e, json);	/* refused at CreateContainer (NRI) */
		json_object_put(root);
		return EXIT_SUCCESS;
	}
	if (r == -ENOENT)
		fprintf(stderr, "%s: explain: no container %s '%s' in %s/status.json\n", prog,
			strchr(what, '/') ? "named" : "with an ID starting with", what, o->state_dir);
	else if (r == -EEXIST)
		fprintf(stderr, "%s: explain: '%s' matches %u containers; give more of the ID\n",
			prog, what, n);
	if (r < 0) {
		json_object_put(root);
		return EXIT_RUNTIME;
	}
	e = explain_obj(root, c);
	if (json)
		ctl_print_json(e);
	else
		print_human(e);
	json_object_put(e);
	fflush(stdout);
	alive = ctl_daemon_alive(root);
	json_object_put(root);
	return alive ? 0 : EXIT_NOT_RUNNING;
}

int cmd_explain(struct ctl_opts *o, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "state-dir", required_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	bool json = false;
	json_object *dummy = NULL;
	unsigned n;
	int c;

	optind = 0;
	while ((c = getopt_long(argc, argv, ":js:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'j': json = true; break;
		case 's': o->state_dir = optarg; break;
		case 'h': explain_usage(stdout); return 0;
		default: bad_option(c, argv, "explain: "); return EXIT_USAGE;
		}
	}
	if (optind >= argc) {
		usage_error("explain: name a container (ID prefix or namespace/pod/container)");
		return EXIT_USAGE;
	}
	if (optind < argc - 1) {
		usage_error("explain: one container at a time, got '%s' too", argv[optind + 1]);
		return EXIT_USAGE;
	}
	/* a name that can never match is bad usage, not a miss */
	if (find(dummy, argv[optind], &dummy, &n) == -EINVAL || !argv[optind][0]) {
		usage_error("explain: '%s' is neither a container ID prefix (hex) nor "
			    "namespace/pod/container", argv[optind]);
		return EXIT_USAGE;
	}
	return explain_run(o, argv[optind], json);
}
