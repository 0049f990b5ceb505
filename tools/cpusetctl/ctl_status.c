// SPDX-License-Identifier: Apache-2.0
/*
 * cpusetctl status: the human summary of status.json (daemon, topology,
 * pools, every container, admission errors, counters, convergence) and,
 * when the telemetry maps are pinned, contention per CPU
 * (ctl_contention.c). --json prints status.json itself.
 */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "user/base/cpumask.h"
#include "ctl.h"
#include "ctl_telemetry.h"


/* "0-3,8 (5 CPUs)"; a cpulist that does not parse is shown as it is. */
static void print_cpulist(const char *label, const char *list)
{
	struct cpumask m;
	unsigned n;

	printf("%-13s ", label);
	ctl_put_clean(*list ? list : "(none)");
	if (*list && cpulist_parse(list, &m) == 0) {
		n = cpumask_weight(&m);
		printf(" (%u CPU%s)", n, n == 1 ? "" : "s");
	}
	putchar('\n');
}

/* "42s", "5m3s", "2h7m", "3d4h" into buf. */
static const char *age(long long s, char *buf, size_t len)
{
	if (s < 0)
		s = 0;
	if (s < 60)
		snprintf(buf, len, "%llds", s);
	else if (s < 3600)
		snprintf(buf, len, "%lldm%llds", s / 60, s % 60);
	else if (s < 86400)
		snprintf(buf, len, "%lldh%lldm", s / 3600, s % 3600 / 60);
	else
		snprintf(buf, len, "%lldd%lldh", s / 86400, s % 86400 / 3600);
	return buf;
}

/* The allocation settings in force, one line. */
static void print_allocation(json_object *a)
{
	if (!a)
		return;
	printf("allocation %s: %s, %s, %s, NUMA alignment %s (%s scope)\n",
	       ctl_jstr(a, "engine", "?"), ctl_jstr(a, "cpu_bind_policy", "?"),
	       ctl_jstr(a, "cpu_exclusive_policy", "?"), ctl_jstr(a, "numa_allocate_strategy", "?"),
	       ctl_jstr(a, "numa_topology_alignment_policy", "?"),
	       ctl_jstr(a, "topology_manager_scope", "?"));
}

/* "daemon running, heartbeat 3s ago (every 15 s)" or "daemon STOPPED at
 * ... (42s ago)";
 * nothing from a daemon before heartbeats. */
static void print_liveness(json_object *d)
{
	time_t t = (time_t)ctl_jint(d, "heartbeat", 0);
	const char *state = ctl_jstr(d, "state", "");
	char when[64] = "?", ago[32];
	struct tm tm;

	if (t <= 0)
		return;
	age(time(NULL) - t, ago, sizeof(ago));
	if (strcmp(state, "stopped") != 0) {
		printf("daemon %s, heartbeat %s ago (every %lld s)\n", *state ? state : "?", ago,
		       (long long)ctl_jint(d, "export_interval_s", 0));
		return;
	}
	if (localtime_r(&t, &tm))
		strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S %z", &tm);
	printf("daemon STOPPED at %s (%s ago)\n", when, ago);
}

/* "mode nri+bpf: NRI connected to containerd 2.1.9" / "mode bpf: NRI
 * connecting" / "mode bpf (NRI off)"; nothing from a daemon before NRI. */
static void print_mode(json_object *d)
{
	json_object *n = ctl_jget(d, "nri", json_type_object);
	const char *state = ctl_jstr(n, "state", "off");

	if (!n)
		return;
	if (strcmp(state, "off") == 0) {
		printf("mode %s (NRI off)\n", ctl_jstr(d, "mode", "bpf"));
		return;
	}
	printf("mode %s: NRI %s", ctl_jstr(d, "mode", "?"), state);
	if (strcmp(state, "connected") == 0)
		printf(" to %s %s", ctl_jstr(n, "runtime", "?"), ctl_jstr(n, "runtime_version", ""));
	printf(" (%lld requests, %lld connects, %lld placed at create pending their cgroup)\n",
	       (long long)ctl_jint(n, "requests", 0), (long long)ctl_jint(n, "connects", 0),
	       (long long)ctl_jint(n, "pending", 0));
}

static void print_daemon(json_object *root)
{
	json_object *d = ctl_jget(root, "daemon", json_type_object);
	time_t t = (time_t)ctl_jint(root, "updated", 0);
	char when[64] = "", ago[32];
	struct tm tm;

	if (t > 0 && localtime_r(&t, &tm))
		strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S %z", &tm);
	printf("cpusetd pid %lld, cgroup %s, kubepods root %s, BPF %s, telemetry %s\n",
	       (long long)ctl_jint(d, "pid", 0), ctl_jstr(d, "cgroup_mode", "?"),
	       ctl_jstr(d, "kubepods_root", "?"), ctl_jstr(d, "bpf_attach", "?"),
	       ctl_jstr(d, "telemetry", "?"));
	print_mode(d);
	printf("on_error %s, min_shared_cpus %lld%s\n", ctl_jstr(d, "on_error", "?"),
	       (long long)ctl_jint(d, "min_shared_cpus", 0),
	       ctl_jbool(d, "dry_run") ? ", DRY RUN (nothing is written)" : "");
	print_allocation(ctl_jget(d, "allocation", json_type_object));
	if (*when)
		printf("updated %s (%s ago)\n", when, age(time(NULL) - t, ago, sizeof(ago)));
	else
		printf("updated: unknown\n");
	print_liveness(d);
	putchar('\n');
}

static void print_topology(json_object *root)
{
	json_object *t = ctl_jget(root, "topology", json_type_object);
	json_object *nodes = ctl_jget(t, "numa_nodes", json_type_object);

	print_cpulist("Online CPUs:", ctl_jstr(t, "online", ""));
	printf("%-13s %lld CPUs, %lld cores, %lld packages, %lld threads per core\n", "Topology:",
	       (long long)ctl_jint(t, "online_count", 0), (long long)ctl_jint(t, "cores", 0),
	       (long long)ctl_jint(t, "packages", 0), (long long)ctl_jint(t, "threads_per_core", 0));
	if (nodes) {
		json_object_object_foreach(nodes, id, list) {
			char label[32];

			snprintf(label, sizeof(label), "NUMA node %s:", id);
			print_cpulist(label, json_object_is_type(list, json_type_string) ?
					     json_object_get_string(list) : "?");
		}
	}
	print_cpulist("Shared pool:", ctl_jstr(root, "shared_pool", ""));
	print_cpulist("BE pool:", ctl_jstr(root, "be_pool", ""));
	print_cpulist("Reserved:", ctl_jstr(root, "reserved", ""));
	putchar('\n');
}

/* One container table row; strings borrowed from the JSON tree. */
struct row {
	const char *ns, *pod, *ctr, *kind, *qos, *cpus, *mems, *id;
	bool error;
};

static int row_cmp(const void *a, const void *b)
{
	const struct row *x = a, *y = b;
	int r;

	if ((r = strcmp(x->ns, y->ns)) || (r = strcmp(x->pod, y->pod)))
		return r;
	return strcmp(x->ctr, y->ctr);
}

static const char *or_dash(const char *s)
{
	return *s ? s : "-";
}

static void row_fill(struct row *r, json_object *c)
{
	r->ns = ctl_jstr(c, "namespace", "?");
	r->pod = ctl_jstr(c, "pod", "?");
	r->ctr = ctl_jbool(c, "sandbox") ? "POD" : ctl_jstr(c, "container", "?");
	r->kind = ctl_jstr(c, "kind", "?");
	r->qos = or_dash(ctl_jstr(c, "qos", ""));
	r->cpus = or_dash(ctl_jstr(c, "cpus", ""));
	r->mems = or_dash(ctl_jstr(c, "mems", ""));
	r->id = ctl_jstr(c, "container_id", "?");
	r->error = ctl_jget(c, "error", json_type_object) != NULL;
}

/* Column widths of the table, at least the header's. */
struct widths {
	size_t name, kind, qos, cpus, mems;
};

static size_t max_sz(size_t a, size_t b)
{
	return a > b ? a : b;
}

static void widths_add(struct widths *w, const struct row *r)
{
	w->name = max_sz(w->name, strlen(r->ns) + strlen(r->pod) + strlen(r->ctr) + 2);
	w->kind = max_sz(w->kind, strlen(r->kind));
	w->qos = max_sz(w->qos, strlen(r->qos));
	w->cpus = max_sz(w->cpus, strlen(r->cpus));
	w->mems = max_sz(w->mems, strlen(r->mems));
}

/* Prints s cleaned (same length) padded to w columns plus a 2-space gap. */
static void put_col(const char *s, size_t w)
{
	size_t n = strlen(s);

	ctl_put_clean(s);
	printf("%*s", (int)(w - n + 2), "");
}

static void row_print(const struct row *r, const struct widths *w)
{
	char id[CTL_SHORT_ID + 1];

	printf("  ");
	ctl_put_clean(r->ns);
	putchar('/');
	ctl_put_clean(r->pod);
	putchar('/');
	put_col(r->ctr, w->name - strlen(r->ns) - strlen(r->pod) - 2);
	put_col(r->kind, w->kind);
	put_col(r->qos, w->qos);
	put_col(r->cpus, w->cpus);
	put_col(r->mems, w->mems);
	ctl_clean(r->id, id, sizeof(id));
	if (r->error)
		put_col(id, CTL_SHORT_ID);
	else
		ctl_put_clean(id);
	printf("%s\n", r->error ? "!" : "");
}

/* Prints the table, sorted by namespace/pod/container; 0 or -ENOMEM. */
static int print_containers(json_object *root)
{
	json_object *arr = ctl_jget(root, "containers", json_type_array);
	size_t i, n = arr ? json_object_array_length(arr) : 0;
	struct widths w = { 23, 4, 3, 4, 4 };
	struct row *rows;

	printf("CONTAINERS (%zu)\n", n);
	if (n == 0) {
		printf("  (none)\n\n");
		return 0;
	}
	rows = calloc(n, sizeof(*rows));
	if (!rows)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		row_fill(&rows[i], json_object_array_get_idx(arr, i));
		widths_add(&w, &rows[i]);
	}
	qsort(rows, n, sizeof(*rows), row_cmp);
	printf("  %-*s  %-*s  %-*s  %-*s  %-*s  %-*s  %s\n", (int)w.name,
	       "NAMESPACE/POD/CONTAINER", (int)w.kind, "KIND", (int)w.qos, "QOS",
	       (int)w.cpus, "CPUS", (int)w.mems, "MEMS", CTL_SHORT_ID, "ID", "ERR");
	for (i = 0; i < n; i++)
		row_print(&rows[i], &w);
	free(rows);
	printf("  (ERR ! = admission error, see ERRORS; POD = the pod's sandbox)\n\n");
	return 0;
}

/* ", 3 attempts since 12:00:01, last 12:03:10" (local time), from the
 * per-pod error table's attempts/first/last. */
static void print_attempts(json_object *e)
{
	json_object *a = ctl_jget(e, "attempts", json_type_int);
	json_object *first = ctl_jget(e, "first", json_type_double);
	json_object *last = ctl_jget(e, "last", json_type_double);
	char f[32] = "?", l[32] = "?";
	time_t t;

	if (!a)
		return;
	if (first && (t = (time_t)json_object_get_double(first)))
		strftime(f, sizeof(f), "%F %T", localtime(&t));
	if (last && (t = (time_t)json_object_get_double(last)))
		strftime(l, sizeof(l), "%T", localtime(&t));
	printf(", %lld attempt%s since %s, last %s", (long long)json_object_get_int64(a),
	       json_object_get_int64(a) == 1 ? "" : "s", f, l);
}

static void print_errors(json_object *root)
{
	json_object *arr = ctl_jget(root, "errors", json_type_array);
	size_t i, n = arr ? json_object_array_length(arr) : 0;

	printf("ERRORS (%zu)\n", n);
	if (n == 0)
		printf("  (none)\n");
	for (i = 0; i < n; i++) {
		json_object *e = json_object_array_get_idx(arr, i);

		printf("  ");
		ctl_put_clean(ctl_jstr(e, "namespace", "?"));
		putchar('/');
		ctl_put_clean(ctl_jstr(e, "pod", "?"));
		putchar('/');
		ctl_put_clean(ctl_jstr(e, "container", "?"));
		printf(": ");
		ctl_put_clean(ctl_jstr(e, "reason", "?"));
		printf(", ");
		ctl_put_clean(ctl_jstr(e, "action", "?"));
		print_attempts(e);
		printf("\n    ");
		ctl_put_clean(ctl_jstr(e, "message", ""));
		putchar('\n');
	}
	putchar('\n');
}

static void print_counters(json_object *root)
{
	json_object *cnt = ctl_jget(root, "counters", json_type_object);
	const char *sep = "";

	printf("COUNTERS\n  ");
	if (cnt) {
		json_object_object_foreach(cnt, key, val) {
			printf("%s%s %lld", sep, key, (long long)json_object_get_int64(val));
			sep = ", ";
		}
	}
	printf("%s\n\n", *sep ? "" : "(none)");
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

/* Nearest-rank percentile p (0-100] of the n sorted samples v. */
static int64_t percentile(const int64_t *v, size_t n, unsigned p)
{
	size_t rank = (n * p + 99) / 100;

	return v[rank ? rank - 1 : 0];
}

/* Prints the convergence summary; returns 0 or -ENOMEM. */
static int print_convergence(json_object *root)
{
	json_object *cv = ctl_jget(root, "convergence", json_type_object);
	json_object *rec = ctl_jget(cv, "recent_ns", json_type_array);
	size_t i, n = rec ? json_object_array_length(rec) : 0;
	int64_t *v;

	printf("CONVERGENCE (event to no shared container on a reserved CPU)\n");
	printf("  count %lld, last %.1f µs", (long long)ctl_jint(cv, "count", 0),
	       ctl_jint(cv, "last_ns", 0) / 1000.0);
	if (n == 0) {
		printf("\n");
		return 0;
	}
	v = malloc(n * sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (i = 0; i < n; i++)
		v[i] = json_object_get_int64(json_object_array_get_idx(rec, i));
	qsort(v, n, sizeof(*v), cmp_i64);
	printf(", p50 %.1f µs, p99 %.1f µs (of %zu recent)\n",
	       percentile(v, n, 50) / 1000.0, percentile(v, n, 99) / 1000.0, n);
	free(v);
	return 0;
}

/* One CPU's cumulative contention line. */
static void print_cpu_contention(unsigned id, const struct cpusetd_cpu_stats *s,
				 const struct cpusetd_cpu_owner *own, bool basic)
{
	char wait[32] = "-";	/* basic: not collected */

	if (!basic)
		snprintf(wait, sizeof(wait), "%.1f",
			 s->rq_wait_count ? s->rq_wait_ns / 1e3 / s->rq_wait_count : 0.0);
	printf("  %-4u %12llu %12llu %12s %12.3f  %s\n", id, (unsigned long long)s->switches,
	       (unsigned long long)s->preemptions, wait,
	       s->foreign_ns / 1e9, own && own->cgroup_id ? "exclusive" : "pool");
}

/* Contention per online CPU since the maps were created, or why none. */
static void print_contention(const struct ctl_opts *o, json_object *root)
{
	struct telemetry_snapshot snap;
	struct cpumask online;
	char why[512];
	int err, id;

	printf("\nCONTENTION per CPU (since the maps were created; live rates: %s top)\n", prog);
	err = ctl_telemetry_read(o, ctl_n_cpus(root), &snap);
	if (err < 0) {
		printf("  not available: %s\n", ctl_telemetry_why(o, err, why, sizeof(why)));
		telemetry_snapshot_free(&snap);
		return;
	}
	if (cpulist_parse(ctl_jstr(ctl_jget(root, "topology", json_type_object), "online", ""),
			  &online) < 0)
		cpumask_zero(&online);
	printf("  %-4s %12s %12s %12s %12s  %s\n", "CPU", "SWITCHES", "PREEMPTIONS",
	       "RQWAIT_µs", "FOREIGN_s", "OWNER");
	cpumask_for_each(id, &online)
		if ((unsigned)id < snap.n_cpus && snap.cpu)
			print_cpu_contention((unsigned)id, &snap.cpu[id],
					     snap.owner ? &snap.owner[id] : NULL,
					     ctl_telemetry_basic(root));
	printf("  (RQWAIT_µs = mean run-queue wait; FOREIGN_s = time other containers ran on\n"
	       "   an exclusive CPU)\n");
	if (ctl_telemetry_basic(root))
		printf("  (RQWAIT_µs -: not collected at telemetry = basic; set telemetry = full)\n");
	telemetry_snapshot_free(&snap);
}

static int status_print(const struct ctl_opts *o, json_object *root)
{
	int err;

	print_daemon(root);
	print_topology(root);
	if (print_containers(root) < 0)
		return -ENOMEM;
	print_errors(root);
	print_counters(root);
	err = print_convergence(root);
	if (!err)
		print_contention(o, root);
	return err;
}

static void status_usage(FILE *f)
{
	fprintf(f,
		"Usage: %s [--state-dir DIR] status [--json] [--state-dir DIR] [--pin-dir DIR]\n"
		"Shows topology, shared pool, reserved CPUs, every container's placement,\n"
		"admission errors, counters and convergence times from DIR/status.json, and\n"
		"contention per CPU (switches, preemptions, mean run-queue wait, foreign\n"
		"seconds) from the telemetry maps pinned under the pin dir, when they are there.\n"
		"  -j, --json            print status.json itself, pretty-printed\n"
		"  -s, --state-dir DIR   where cpusetd writes its state (default %s)\n"
		"  -p, --pin-dir DIR     cpusetd's --pin-dir (default %s)\n"
		"  -h, --help            this text\n"
		"Examples:\n"
		"  %s status\n"
		"  %s status --json | jq '.containers[] | select(.kind == \"integer\")'\n",
		prog, CTL_DEFAULT_STATE_DIR, CTL_DEFAULT_PIN_DIR, prog, prog);
}

int cmd_status(struct ctl_opts *o, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "state-dir", required_argument, NULL, 's' },
		{ "pin-dir", required_argument, NULL, 'p' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	json_object *root;
	bool json = false, alive;
	int c, err;

	optind = 0;	/* glibc: restart parsing on the command's argv */
	while ((c = getopt_long(argc, argv, "+:js:p:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'j': json = true; break;
		case 's': o->state_dir = optarg; break;
		case 'p': o->pin_dir = optarg; break;
		case 'h': status_usage(stdout); return 0;
		default: bad_option(c, argv, "status: "); return EXIT_USAGE;
		}
	}
	if (optind < argc) {
		usage_error("status: unexpected argument '%s'", argv[optind]);
		return EXIT_USAGE;
	}
	if (ctl_status_load(o->state_dir, &root) < 0)
		return EXIT_RUNTIME;
	if (json)
		ctl_print_json(root);
	err = json ? 0 : status_print(o, root);
	fflush(stdout);		/* the warning comes last, where a person looks */
	alive = ctl_daemon_alive(root);
	json_object_put(root);
	if (err < 0)
		fprintf(stderr, "%s: %s\n", prog, strerror(-err));
	return err < 0 ? EXIT_RUNTIME : alive ? 0 : EXIT_NOT_RUNNING;
}

