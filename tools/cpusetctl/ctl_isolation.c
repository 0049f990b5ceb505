// SPDX-License-Identifier: Apache-2.0
/*
 * cpusetctl isolation: for each exclusive CPU, its owner, whether host
 * isolation keeps the host off it (isolate_host, user/daemon/README.md "Host
 * isolation"), and the foreign and kernel-thread time it saw over one
 * interval of the pinned telemetry maps; above it, what the daemon's last
 * isolation pass narrowed (host cgroups, root-cgroup tasks, IRQs, the
 * default IRQ affinity and the workqueue mask) and why some things were
 * left. --json prints one document.
 */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "user/base/cpumask.h"
#include "user/telemetry/telemetry_rates.h"
#include "ctl.h"
#include "ctl_telemetry.h"

struct iso_opts {
	double interval_s;
	bool json;
};

struct iso_cpu {
	unsigned cpu;
	char owner[320];		/* "pod/container" */
	bool isolated;
	bool have_rate;
	struct telemetry_rate rate;
};

/* Owners of exclusive CPUs (integer, annotated) from status.json, in CPU
 * order, into cpus; returns how many. */
static unsigned owners(json_object *root, struct iso_cpu *cpus)
{
	json_object *arr = ctl_jget(root, "containers", json_type_array);
	unsigned n = 0;
	struct cpumask seen;

	cpumask_zero(&seen);
	for (size_t i = 0; arr && i < json_object_array_length(arr); i++) {
		json_object *c = json_object_array_get_idx(arr, i);
		const char *kind = ctl_jstr(c, "kind", "");
		struct cpumask m;
		int id;

		if (ctl_jget(c, "error", json_type_object) ||
		    (strcmp(kind, "integer") && strcmp(kind, "annotated")) ||
		    cpulist_parse(ctl_jstr(c, "cpus", ""), &m) < 0)
			continue;
		cpumask_for_each(id, &m) {
			if (cpumask_test(&seen, (unsigned)id) || n >= CPUSETD_MAX_CPUS)
				continue;
			cpumask_set(&seen, (unsigned)id);
			cpus[n].cpu = (unsigned)id;
			snprintf(cpus[n].owner, sizeof(cpus[n].owner), "%s/%s", ctl_jstr(c, "pod", "?"),
				 ctl_jstr(c, "container", "?"));
			n++;
		}
	}
	for (unsigned i = 1; i < n; i++)	/* CPU order: insertion sort, n is small */
		for (unsigned j = i; j > 0 && cpus[j - 1].cpu > cpus[j].cpu; j--) {
			struct iso_cpu t = cpus[j];

			cpus[j] = cpus[j - 1];
			cpus[j - 1] = t;
		}
	return n;
}

static void sleep_s(double s)
{
	struct timespec ts = { .tv_sec = (time_t)s, .tv_nsec = (long)((s - (double)(time_t)s) * 1e9) };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Foreign and kthread rates over one interval; false (with the reason
 * said once on stderr) when the maps cannot be read. */
static bool rates(const struct ctl_opts *o, json_object *root, double interval,
		  struct iso_cpu *cpus, unsigned n)
{
	static struct telemetry_rate r[CPUSETD_MAX_CPUS];
	struct telemetry_snapshot a, b;
	unsigned n_cpus = ctl_n_cpus(root);
	char why[512];
	double t0, t1;
	int k, e;

	e = ctl_telemetry_read(o, n_cpus, &a);
	if (e < 0) {
		fprintf(stderr, "%s: isolation: no foreign time: %s\n", prog,
			ctl_telemetry_why(o, e, why, sizeof(why)));
		return false;
	}
	t0 = now_s();
	sleep_s(interval);
	e = ctl_telemetry_read(o, n_cpus, &b);
	t1 = now_s();
	if (e < 0) {
		telemetry_snapshot_free(&a);
		return false;
	}
	k = telemetry_rates(&a, &b, t1 - t0, NULL, r);
	for (int i = 0; i < k; i++)
		for (unsigned j = 0; j < n; j++)
			if (cpus[j].cpu == r[i].cpu) {
				cpus[j].rate = r[i];
				cpus[j].have_rate = true;
			}
	telemetry_snapshot_free(&a);
	telemetry_snapshot_free(&b);
	return true;
}

static const char *const counts[] = {
	"host_cgroups_narrowed", "host_cgroups_left", "tasks_narrowed", "tasks_left",
	"kthreads_pinned", "irqs_moved", "irqs_refused",
};

static void print_json(json_object *iso, const struct iso_cpu *cpus, unsigned n, double interval)
{
	json_object *o = json_object_new_object(), *arr = json_object_new_array();

	json_object_object_add(o, "isolate_host", json_object_new_boolean(iso != NULL));
	json_object_object_add(o, "active", json_object_new_boolean(ctl_jbool(iso, "active")));
	json_object_object_add(o, "host", json_object_new_string(ctl_jstr(iso, "host", "")));
	for (size_t i = 0; i < sizeof(counts) / sizeof(counts[0]); i++)
		json_object_object_add(o, counts[i], json_object_new_int64(ctl_jint(iso, counts[i], 0)));
	json_object_object_add(o, "irq_default_narrowed",
			       json_object_new_boolean(ctl_jbool(iso, "irq_default_narrowed")));
	json_object_object_add(o, "workqueue_narrowed",
			       json_object_new_boolean(ctl_jbool(iso, "workqueue_narrowed")));
	json_object_object_add(o, "reasons", json_object_get(ctl_jget(iso, "reasons", json_type_array)));
	json_object_object_add(o, "interval_s", json_object_new_double(interval));
	for (unsigned i = 0; i < n; i++) {
		json_object *c = json_object_new_object();

		json_object_object_add(c, "cpu", json_object_new_int((int)cpus[i].cpu));
		json_object_object_add(c, "owner", json_object_new_string(cpus[i].owner));
		json_object_object_add(c, "isolated", json_object_new_boolean(cpus[i].isolated));
		json_object_object_add(c, "foreign_s_per_s", cpus[i].have_rate ?
				       json_object_new_double(cpus[i].rate.foreign_s_per_s) : NULL);
		json_object_object_add(c, "kthread_s_per_s", cpus[i].have_rate ?
				       json_object_new_double(cpus[i].rate.kthread_s_per_s) : NULL);
		json_object_array_add(arr, c);
	}
	json_object_object_add(o, "cpus", arr);
	printf("%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
	json_object_put(o);
}

static void print_human(json_object *iso, const struct iso_cpu *cpus, unsigned n, double interval)
{
	json_object *reasons = ctl_jget(iso, "reasons", json_type_array);
	char buf[64];

	if (!iso)
		printf("host isolation: off (isolate_host = false): the host may run on exclusive CPUs\n");
	else
		printf("host isolation: %s, host on %s: %lld host cgroups, %lld tasks, %lld IRQs "
		       "narrowed (%lld refused), default IRQ affinity %s, workqueue %s\n",
		       ctl_jbool(iso, "active") ? "active" : "idle (no exclusive CPU)",
		       ctl_jstr(iso, "host", "?"), (long long)ctl_jint(iso, "host_cgroups_narrowed", 0),
		       (long long)ctl_jint(iso, "tasks_narrowed", 0),
		       (long long)ctl_jint(iso, "irqs_moved", 0),
		       (long long)ctl_jint(iso, "irqs_refused", 0),
		       ctl_jbool(iso, "irq_default_narrowed") ? "narrowed" : "its own",
		       ctl_jbool(iso, "workqueue_narrowed") ? "narrowed" : "its own");
	for (size_t i = 0; reasons && i < json_object_array_length(reasons); i++) {
		printf("  left: ");
		ctl_put_clean(json_object_get_string(json_object_array_get_idx(reasons, i)));
		putchar('\n');
	}
	printf("%-4s %-32s %-12s %12s %12s   (over %.3g s)\n", "CPU", "OWNER", "ISOLATION",
	       "FOREIGN_s/s", "KTHREAD_s/s", interval);
	for (unsigned i = 0; i < n; i++) {
		printf("%-4u %-32s %-12s ", cpus[i].cpu, ctl_clean(cpus[i].owner, buf, 33),
		       cpus[i].isolated ? "isolated" : "not isolated");
		if (cpus[i].have_rate)
			printf("%12.4f %12.4f\n", cpus[i].rate.foreign_s_per_s,
			       cpus[i].rate.kthread_s_per_s);
		else
			printf("%12s %12s\n", "-", "-");
	}
	if (!n)
		printf("(no exclusive CPU)\n");
}

static void iso_usage(FILE *f)
{
	fprintf(f,
		"Usage: %s isolation [--interval S] [--json] [--state-dir DIR] [--pin-dir DIR]\n"
		"Each exclusive CPU: its owner, whether host isolation (isolate_host) keeps the\n"
		"host off it, and its foreign and kernel-thread time over one interval; above,\n"
		"what the last isolation pass narrowed and what it left, and why.\n"
		"  -i, --interval S      seconds of telemetry to rate (default 1; 0.01 to 3600)\n"
		"  -j, --json            one JSON document: {isolate_host, active, host, ...,\n"
		"                        reasons, cpus: [{cpu, owner, isolated, foreign_s_per_s}]}\n"
		"  -s, --state-dir DIR   where cpusetd writes status.json (default %s)\n"
		"  -p, --pin-dir DIR     cpusetd's --pin-dir (default %s)\n"
		"  -h, --help            this text\n"
		"Example:\n"
		"  %s isolation --interval 2\n",
		prog, CTL_DEFAULT_STATE_DIR, CTL_DEFAULT_PIN_DIR, prog);
}

static int iso_parse(struct ctl_opts *o, int argc, char **argv, struct iso_opts *t)
{
	static const struct option longopts[] = {
		{ "interval", required_argument, NULL, 'i' },
		{ "json", no_argument, NULL, 'j' },
		{ "state-dir", required_argument, NULL, 's' },
		{ "pin-dir", required_argument, NULL, 'p' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	char *end;
	int c;

	optind = 0;
	while ((c = getopt_long(argc, argv, "+:i:js:p:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'i':
			t->interval_s = strtod(optarg, &end);
			if (*end || !(t->interval_s >= 0.01 && t->interval_s <= 3600)) {
				usage_error("isolation: --interval must be seconds from 0.01 to 3600, "
					    "not '%s'", optarg);
				return EXIT_USAGE;
			}
			break;
		case 'j': t->json = true; break;
		case 's': o->state_dir = optarg; break;
		case 'p': o->pin_dir = optarg; break;
		case 'h': iso_usage(stdout); return -1;
		default: bad_option(c, argv, "isolation: "); return EXIT_USAGE;
		}
	}
	if (optind < argc) {
		usage_error("isolation: unexpected argument '%s'", argv[optind]);
		return EXIT_USAGE;
	}
	return 0;
}

int cmd_isolation(struct ctl_opts *o, int argc, char **argv)
{
	struct iso_opts t = { .interval_s = 1.0 };
	static struct iso_cpu cpus[CPUSETD_MAX_CPUS];
	json_object *root, *iso;
	struct cpumask excl;
	unsigned n;
	bool alive;
	int r = iso_parse(o, argc, argv, &t);

	if (r)
		return r < 0 ? 0 : r;
	if (ctl_status_load(o->state_dir, &root) < 0)
		return EXIT_RUNTIME;
	iso = ctl_jget(root, "isolation", json_type_object);
	alive = ctl_daemon_alive(root);
	n = owners(root, cpus);
	if (!iso || !ctl_jbool(iso, "active") || ctl_json_cpulist(iso, "exclusive", &excl) < 0)
		cpumask_zero(&excl);
	for (unsigned i = 0; i < n; i++)
		cpus[i].isolated = cpumask_test(&excl, cpus[i].cpu);
	if (n)
		rates(o, root, t.interval_s, cpus, n);
	if (t.json)
		print_json(iso, cpus, n, t.interval_s);
	else
		print_human(iso, cpus, n, t.interval_s);
	json_object_put(root);
	return alive ? 0 : EXIT_NOT_RUNNING;
}
