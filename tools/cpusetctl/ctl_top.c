// SPDX-License-Identifier: Apache-2.0
/*
 * cpusetctl top: a live per-CPU view of run-queue wait, foreign time and
 * switches, as rates between two snapshots of the pinned telemetry maps
 * (user/telemetry/telemetry_rates.h), worst CPUs first. --json prints one JSON
 * document per refresh, one per line, for scripts and tests.
 */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "user/telemetry/telemetry_rates.h"
#include "ctl.h"
#include "ctl_telemetry.h"

struct top_opts {
	double interval_s;
	unsigned long count;		/* refreshes; 0 = until interrupted */
	enum telemetry_rate_sort sort;
	bool sort_given;		/* --sort; else rq_wait, foreign at basic */
	bool json;
	unsigned long lines_ul;		/* rows shown (human); 0 = all */
};

struct top_state {
	json_object *root;		/* status.json, for CPUs and owners */
	struct cpumask online;
	unsigned n_cpus;
	json_object *owner[CPUSETD_MAX_CPUS];	/* container owning the CPU, or NULL */
	struct telemetry_rate rate[CPUSETD_MAX_CPUS];
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void sleep_s(double s)
{
	struct timespec ts = { .tv_sec = (time_t)s, .tv_nsec = (long)((s - (double)(time_t)s) * 1e9) };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/* The containers with exclusive CPUs, by CPU, from status.json. */
static void owners_fill(struct top_state *st)
{
	json_object *arr = ctl_jget(st->root, "containers", json_type_array);

	for (size_t i = 0; arr && i < json_object_array_length(arr); i++) {
		json_object *c = json_object_array_get_idx(arr, i);
		const char *kind = ctl_jstr(c, "kind", "");
		struct cpumask m;
		int id;

		if (ctl_jget(c, "error", json_type_object) ||
		    (strcmp(kind, "integer") && strcmp(kind, "annotated")) ||
		    cpulist_parse(ctl_jstr(c, "cpus", ""), &m) < 0)
			continue;
		cpumask_for_each(id, &m)
			if (!st->owner[id])
				st->owner[id] = c;
	}
}

static void print_owner(json_object *c)
{
	char buf[48];
	char name[320];

	if (!c) {
		printf("%-24s", "pool");
		return;
	}
	snprintf(name, sizeof(name), "%s/%s", ctl_jstr(c, "pod", "?"), ctl_jstr(c, "container", "?"));
	printf("%-24s", ctl_clean(name, buf, 25));
}

static void print_human(const struct top_opts *t, struct top_state *st, unsigned n, double dt)
{
	unsigned shown = t->lines_ul && t->lines_ul < n ? (unsigned)t->lines_ul : n;
	bool basic = ctl_telemetry_basic(st->root);

	if (isatty(STDOUT_FILENO))
		printf("\033[H\033[2J");	/* redraw in place on a terminal */
	printf("cpusetctl top: %u CPUs, every %.3g s, worst %s first\n", n, t->interval_s,
	       telemetry_rate_sort_name(t->sort));
	printf("%-4s %-24s %10s %9s %9s %9s %9s %9s %10s %6s\n", "CPU", "OWNER", "RQWAIT_s/s",
	       "MEAN_µs", "WAITS/s", "SWITCH/s", "PREEMPT/s", "CROSS/s", "FOREIGN_s/s", "BUSY%");
	for (unsigned i = 0; i < shown; i++) {
		const struct telemetry_rate *r = &st->rate[i];

		printf("%-4u ", r->cpu);
		print_owner(st->owner[r->cpu]);
		if (basic)
			printf(" %10s %9s %9s", "-", "-", "-");
		else
			printf(" %10.4f %9.1f %9.1f", r->rq_wait_s_per_s, r->rq_wait_mean_us,
			       r->rq_waits / dt);
		printf(" %9.1f %9.1f %9.1f %10.4f %6.1f\n", r->switches_per_s,
		       r->preemptions_per_s, r->cross_switches_per_s, r->foreign_s_per_s,
		       100 * r->busy_s_per_s);
	}
	if (basic)
		printf("(run-queue wait -: not collected at telemetry = basic; set telemetry = full)\n");
	putchar('\n');
}

static int print_json(const struct top_opts *t, struct top_state *st, unsigned n, double dt)
{
	json_object *o = telemetry_rates_json(st->rate, n, dt, t->sort);

	if (!o)
		return -ENOMEM;
	if (ctl_telemetry_basic(st->root))
		ctl_telemetry_json_basic(o);
	printf("%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
	json_object_put(o);
	return 0;
}

/* Reads a snapshot; on failure prints why (one line) and returns -errno. */
static int snap(const struct ctl_opts *o, struct top_state *st, struct telemetry_snapshot *ret)
{
	char why[512];
	int r = ctl_telemetry_read(o, st->n_cpus, ret);

	if (r < 0)
		fprintf(stderr, "%s: top: %s\n", prog, ctl_telemetry_why(o, r, why, sizeof(why)));
	return r;
}

/* The refresh loop: snapshot, wait, snapshot, print rates; 0 or -errno. */
static int top_loop(const struct ctl_opts *o, const struct top_opts *t, struct top_state *st)
{
	struct telemetry_snapshot prev, cur;
	double t0, t1;
	int r, n;

	r = snap(o, st, &prev);
	t0 = now_s();
	for (unsigned long i = 0; r == 0 && (t->count == 0 || i < t->count); i++) {
		sleep_s(t->interval_s);
		r = snap(o, st, &cur);
		t1 = now_s();
		if (r < 0) {
			telemetry_snapshot_free(&cur);
			break;
		}
		n = telemetry_rates(&prev, &cur, t1 - t0, &st->online, st->rate);
		telemetry_rates_sort(st->rate, (unsigned)n, t->sort);
		if (t->json)
			r = print_json(t, st, (unsigned)n, t1 - t0);
		else
			print_human(t, st, (unsigned)n, t1 - t0);
		fflush(stdout);
		telemetry_snapshot_free(&prev);
		prev = cur;
		t0 = t1;
	}
	telemetry_snapshot_free(&prev);
	return r;
}

static int top_run(struct ctl_opts *o, const struct top_opts *opts)
{
	struct top_opts tt = *opts, *t = &tt;
	struct top_state *st = calloc(1, sizeof(*st));
	bool alive;
	int r;

	if (!st)
		return EXIT_RUNTIME;
	if (ctl_status_load(o->state_dir, &st->root) < 0) {
		free(st);
		return EXIT_RUNTIME;
	}
	if (cpulist_parse(ctl_jstr(ctl_jget(st->root, "topology", json_type_object), "online", ""),
			  &st->online) < 0 || cpumask_empty(&st->online))
		for (unsigned id = 0; id < CPUSETD_MAX_CPUS; id++)
			cpumask_set(&st->online, id);	/* unknown: every CPU the maps hold */
	st->n_cpus = ctl_n_cpus(st->root);
	/* telemetry = basic collects no run-queue wait to sort by */
	if (!t->sort_given && ctl_telemetry_basic(st->root))
		t->sort = TELEMETRY_SORT_FOREIGN;
	owners_fill(st);
	/* First: with the daemon gone the owners are old and the rates may
	 * stop (its programs detach, the pinned maps stay). */
	alive = ctl_daemon_alive(st->root);
	r = top_loop(o, t, st);
	json_object_put(st->root);
	free(st);
	return r < 0 ? EXIT_RUNTIME : alive ? 0 : EXIT_NOT_RUNNING;
}

static void top_usage(FILE *f)
{
	fprintf(f,
		"Usage: %s top [--interval S] [--count N] [--sort KEY] [--lines N] [--json]\n"
		"             [--state-dir DIR] [--pin-dir DIR]\n"
		"Per-CPU run-queue wait, foreign time on exclusive CPUs and context switches,\n"
		"as rates over each interval from the pinned telemetry maps, worst CPUs first.\n"
		"  -i, --interval S      seconds between refreshes (default 1; 0.01 to 3600)\n"
		"  -n, --count N         stop after N refreshes (default 0: until interrupted)\n"
		"  -o, --sort KEY        rq_wait (run-queue wait s/s, default), foreign (the default\n"
		"                        at telemetry = basic, which has no wait), switches\n"
		"  -l, --lines N         show the N worst CPUs only (default all)\n"
		"  -j, --json            one JSON document per refresh, one per line:\n"
		"                        {interval_s, sort, cpus: [{cpu, switches_per_s, ...}], totals}\n"
		"  -s, --state-dir DIR   where cpusetd writes status.json (default %s)\n"
		"  -p, --pin-dir DIR     cpusetd's --pin-dir (default %s)\n"
		"  -h, --help            this text\n"
		"Examples:\n"
		"  %s top\n"
		"  %s top --sort foreign --lines 10\n"
		"  %s top --json --count 2 --interval 0.5 | jq '.totals.switches_per_s'\n",
		prog, CTL_DEFAULT_STATE_DIR, CTL_DEFAULT_PIN_DIR, prog, prog, prog);
}

/* A whole number >= 0 into *ret; -EINVAL otherwise. */
static int parse_count(const char *s, unsigned long *ret)
{
	char *end;

	errno = 0;
	if (s[0] < '0' || s[0] > '9')
		return -EINVAL;
	*ret = strtoul(s, &end, 10);
	return *end || errno ? -EINVAL : 0;
}

/* Parses the options into *t; 0, -1 after --help, or EXIT_USAGE after
 * the one error line. */
static int top_parse(struct ctl_opts *o, int argc, char **argv, struct top_opts *t)
{
	static const struct option longopts[] = {
		{ "interval", required_argument, NULL, 'i' },
		{ "count", required_argument, NULL, 'n' },
		{ "sort", required_argument, NULL, 'o' },
		{ "lines", required_argument, NULL, 'l' },
		{ "json", no_argument, NULL, 'j' },
		{ "state-dir", required_argument, NULL, 's' },
		{ "pin-dir", required_argument, NULL, 'p' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	char *end;
	int c;

	optind = 0;
	while ((c = getopt_long(argc, argv, "+:i:n:o:l:js:p:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'i':
			t->interval_s = strtod(optarg, &end);
			if (*end || !(t->interval_s >= 0.01 && t->interval_s <= 3600)) {
				usage_error("top: --interval must be seconds from 0.01 to 3600, not '%s'", optarg);
				return EXIT_USAGE;
			}
			break;
		case 'n':
		case 'l':
			if (parse_count(optarg, c == 'n' ? &t->count : &t->lines_ul) < 0) {
				usage_error("top: --%s must be a whole number, not '%s'",
					    c == 'n' ? "count" : "lines", optarg);
				return EXIT_USAGE;
			}
			break;
		case 'o':
			if (telemetry_rate_sort_parse(optarg, &t->sort) < 0) {
				usage_error("top: --sort must be rq_wait, foreign or switches, not '%s'", optarg);
				return EXIT_USAGE;
			}
			t->sort_given = true;
			break;
		case 'j': t->json = true; break;
		case 's': o->state_dir = optarg; break;
		case 'p': o->pin_dir = optarg; break;
		case 'h': top_usage(stdout); return -1;
		default: bad_option(c, argv, "top: "); return EXIT_USAGE;
		}
	}
	if (optind < argc) {
		usage_error("top: unexpected argument '%s'", argv[optind]);
		return EXIT_USAGE;
	}
	return 0;
}

int cmd_top(struct ctl_opts *o, int argc, char **argv)
{
	struct top_opts t = { .interval_s = 1.0 };
	int r = top_parse(o, argc, argv, &t);

	if (r)
		return r < 0 ? 0 : r;
	return top_run(o, &t);
}
