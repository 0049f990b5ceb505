/*
 * cpusetctl: shows cpusetd's state to a person.
 *
 *   cpusetctl [--state-dir DIR] <command> [options]
 *
 * Commands live in one table (cmds[] below); each is a function that gets
 * the global options and its own argv (argv[0] = the command name) and
 * returns the exit code: 0 fine, 1 failed at run time, 2 bad usage.
 * Bad input prints the one specific error on stderr, never the whole help.
 *
 * Today the only source is <state-dir>/status.json (schema in
 * user/status.h), written atomically by the daemon, so reading it needs no
 * locking. The file is the daemon's output, but container and pod names in
 * it come from pods: they are untrusted, so control characters are not
 * passed through to the terminal.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <json-c/json.h>

#include "user/cpumask.h"
#include "user/status.h"
#include "ctl.h"

#define CTL_DEFAULT_STATE_DIR	"/run/cpusetd"
#define CTL_SHORT_ID		12
#define CTL_MAX_STATUS_BYTES	(64u << 20)	/* far above any real node */

struct ctl_cmd {
	const char *name;
	const char *summary;
	int (*run)(struct ctl_opts *o, int argc, char **argv);
};

const char *prog = "cpusetctl";

/* ---------- small helpers ---------------------------------------------- */

/* The one line for bad usage: "cpusetctl: <what> (see 'cpusetctl --help')". */
void usage_error(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, " (see '%s --help')\n", prog);
}

/* Reports getopt_long's ':' or '?' for ctx ("" or "status: "). */
void bad_option(int c, char **argv, const char *ctx)
{
	char opt[3] = { '-', (char)optopt, '\0' };
	const char *arg = argv[optind - 1];
	/* Short options may be clustered ("-jx"): name the one at fault. */
	const char *name = c == '?' && optopt && arg[1] != '-' ? opt : arg;

	usage_error(c == ':' ? "%soption '%s' needs an argument" : "%sunknown option '%s'",
		    ctx, name);
}

/* Prints s with control characters shown as '?'. Cannot fail. */
static void put_clean(const char *s)
{
	for (; *s; s++)
		putchar((unsigned char)*s < 0x20 || *s == 0x7f ? '?' : *s);
}

/* Copies s into buf (size len), control characters as '?', truncated. */
static const char *clean(const char *s, char *buf, size_t len)
{
	size_t i;

	for (i = 0; s[i] && i + 1 < len; i++)
		buf[i] = (unsigned char)s[i] < 0x20 || s[i] == 0x7f ? '?' : s[i];
	buf[i] = '\0';
	return buf;
}

/* The string member key of obj, or dflt when absent or not a string. */
static const char *jstr(json_object *obj, const char *key, const char *dflt)
{
	json_object *v;

	if (!json_object_object_get_ex(obj, key, &v) || !json_object_is_type(v, json_type_string))
		return dflt;
	return json_object_get_string(v);
}

/* The integer member key of obj, or dflt when absent or not a number. */
static int64_t jint(json_object *obj, const char *key, int64_t dflt)
{
	json_object *v;

	if (!json_object_object_get_ex(obj, key, &v))
		return dflt;
	if (!json_object_is_type(v, json_type_int) && !json_object_is_type(v, json_type_double))
		return dflt;
	return json_object_get_int64(v);
}

static bool jbool(json_object *obj, const char *key)
{
	json_object *v;

	return json_object_object_get_ex(obj, key, &v) &&
	       json_object_is_type(v, json_type_boolean) && json_object_get_boolean(v);
}

/* The member key of obj if it has type t, else NULL. */
static json_object *jget(json_object *obj, const char *key, json_type t)
{
	json_object *v;

	if (!obj || !json_object_object_get_ex(obj, key, &v) || !json_object_is_type(v, t))
		return NULL;
	return v;
}

/* ---------- loading status.json ---------------------------------------- */

/*
 * Reads the whole of path into a NUL-terminated malloc'd buffer (*ret,
 * the caller frees). Returns 0, -EFBIG, -ENOMEM or -errno.
 */
static int read_file(const char *path, char **ret)
{
	struct stat st;
	char *buf;
	ssize_t n;
	size_t got = 0;
	int fd, err = 0;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0) {
		err = -errno;
		goto out;
	}
	if ((uint64_t)st.st_size > CTL_MAX_STATUS_BYTES) {
		err = -EFBIG;
		goto out;
	}
	buf = malloc((size_t)st.st_size + 1);
	if (!buf) {
		err = -ENOMEM;
		goto out;
	}
	while (got < (size_t)st.st_size && (n = read(fd, buf + got, st.st_size - got)) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			err = -errno;
			free(buf);
			goto out;
		}
		got += n;
	}
	buf[got] = '\0';
	*ret = buf;
out:
	close(fd);
	return err;
}

/*
 * Parses text, which must be exactly one JSON object (trailing garbage is
 * refused). Returns the object (the caller puts it), or NULL with *why set
 * to a static description.
 */
static json_object *parse_whole(const char *text, const char **why)
{
	struct json_tokener *tok = json_tokener_new();
	size_t len = strlen(text);
	enum json_tokener_error jerr;
	json_object *obj;

	if (!tok) {
		*why = strerror(ENOMEM);
		return NULL;
	}
	obj = json_tokener_parse_ex(tok, text, (int)len);
	jerr = json_tokener_get_error(tok);
	*why = jerr == json_tokener_continue ? "unexpected end of data" :
						json_tokener_error_desc(jerr);
	if (obj && text[json_tokener_get_parse_end(tok) +
			strspn(text + json_tokener_get_parse_end(tok), " \t\r\n")] != '\0') {
		*why = "data after the JSON value";
		json_object_put(obj);
		obj = NULL;
	}
	if (obj && !json_object_is_type(obj, json_type_object)) {
		*why = "not a JSON object";
		json_object_put(obj);
		obj = NULL;
	}
	json_tokener_free(tok);
	return obj;
}

/*
 * Loads <state_dir>/status.json into *ret (a JSON object; the caller puts
 * it). Prints the one specific error itself. Returns 0 or -errno.
 */
static int status_load(const char *state_dir, json_object **ret)
{
	const char *why;
	char path[PATH_MAX];
	json_object *root;
	char *text = NULL;
	int err;

	if (snprintf(path, sizeof(path), "%s/%s", state_dir, STATUS_FILE) >= (int)sizeof(path)) {
		fprintf(stderr, "%s: state directory path too long: %s\n", prog, state_dir);
		return -ENAMETOOLONG;
	}
	err = read_file(path, &text);
	if (err == -ENOENT || err == -ENOTDIR) {
		fprintf(stderr, "%s: no status at %s: is cpusetd running?\n", prog, path);
		return err;
	}
	if (err < 0) {
		fprintf(stderr, "%s: cannot read %s: %s\n", prog, path, strerror(-err));
		return err;
	}
	root = parse_whole(text, &why);
	free(text);
	if (!root) {
		fprintf(stderr, "%s: cannot parse %s: %s\n", prog, path, why);
		return -EBADMSG;
	}
	if (jint(root, "version", 0) != 1)
		fprintf(stderr, "%s: warning: %s is not version 1 (has %s), showing what is known\n",
			prog, path, jget(root, "version", json_type_int) ?
			json_object_get_string(jget(root, "version", json_type_int)) : "none");
	*ret = root;
	return 0;
}

/* ---------- status: the human summary ---------------------------------- */

/* "0-3,8 (5 CPUs)"; a cpulist that does not parse is shown as it is. */
static void print_cpulist(const char *label, const char *list)
{
	struct cpumask m;
	unsigned n;

	printf("%-13s ", label);
	put_clean(*list ? list : "(none)");
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
	       jstr(a, "engine", "?"), jstr(a, "cpu_bind_policy", "?"),
	       jstr(a, "cpu_exclusive_policy", "?"), jstr(a, "numa_allocate_strategy", "?"),
	       jstr(a, "numa_topology_alignment_policy", "?"),
	       jstr(a, "topology_manager_scope", "?"));
}

static void print_daemon(json_object *root)
{
	json_object *d = jget(root, "daemon", json_type_object);
	time_t t = (time_t)jint(root, "updated", 0);
	char when[64] = "", ago[32];
	struct tm tm;

	if (t > 0 && localtime_r(&t, &tm))
		strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S %z", &tm);
	printf("cpusetd pid %lld, cgroup %s, kubepods root %s, BPF %s\n",
	       (long long)jint(d, "pid", 0), jstr(d, "cgroup_mode", "?"),
	       jstr(d, "kubepods_root", "?"), jstr(d, "bpf_attach", "?"));
	printf("on_error %s, min_shared_cpus %lld%s\n", jstr(d, "on_error", "?"),
	       (long long)jint(d, "min_shared_cpus", 0),
	       jbool(d, "dry_run") ? ", DRY RUN (nothing is written)" : "");
	print_allocation(jget(d, "allocation", json_type_object));
	if (*when)
		printf("updated %s (%s ago)\n\n", when, age(time(NULL) - t, ago, sizeof(ago)));
	else
		printf("updated: unknown\n\n");
}

static void print_topology(json_object *root)
{
	json_object *t = jget(root, "topology", json_type_object);
	json_object *nodes = jget(t, "numa_nodes", json_type_object);

	print_cpulist("Online CPUs:", jstr(t, "online", ""));
	printf("%-13s %lld CPUs, %lld cores, %lld packages, %lld threads per core\n", "Topology:",
	       (long long)jint(t, "online_count", 0), (long long)jint(t, "cores", 0),
	       (long long)jint(t, "packages", 0), (long long)jint(t, "threads_per_core", 0));
	if (nodes) {
		json_object_object_foreach(nodes, id, list) {
			char label[32];

			snprintf(label, sizeof(label), "NUMA node %s:", id);
			print_cpulist(label, json_object_is_type(list, json_type_string) ?
					     json_object_get_string(list) : "?");
		}
	}
	print_cpulist("Shared pool:", jstr(root, "shared_pool", ""));
	print_cpulist("BE pool:", jstr(root, "be_pool", ""));
	print_cpulist("Reserved:", jstr(root, "reserved", ""));
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
	r->ns = jstr(c, "namespace", "?");
	r->pod = jstr(c, "pod", "?");
	r->ctr = jbool(c, "sandbox") ? "POD" : jstr(c, "container", "?");
	r->kind = jstr(c, "kind", "?");
	r->qos = or_dash(jstr(c, "qos", ""));
	r->cpus = or_dash(jstr(c, "cpus", ""));
	r->mems = or_dash(jstr(c, "mems", ""));
	r->id = jstr(c, "container_id", "?");
	r->error = jget(c, "error", json_type_object) != NULL;
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

	put_clean(s);
	printf("%*s", (int)(w - n + 2), "");
}

static void row_print(const struct row *r, const struct widths *w)
{
	char id[CTL_SHORT_ID + 1];

	printf("  ");
	put_clean(r->ns);
	putchar('/');
	put_clean(r->pod);
	putchar('/');
	put_col(r->ctr, w->name - strlen(r->ns) - strlen(r->pod) - 2);
	put_col(r->kind, w->kind);
	put_col(r->qos, w->qos);
	put_col(r->cpus, w->cpus);
	put_col(r->mems, w->mems);
	clean(r->id, id, sizeof(id));
	if (r->error)
		put_col(id, CTL_SHORT_ID);
	else
		put_clean(id);
	printf("%s\n", r->error ? "!" : "");
}

/* Prints the table, sorted by namespace/pod/container; 0 or -ENOMEM. */
static int print_containers(json_object *root)
{
	json_object *arr = jget(root, "containers", json_type_array);
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

static void print_errors(json_object *root)
{
	json_object *arr = jget(root, "errors", json_type_array);
	size_t i, n = arr ? json_object_array_length(arr) : 0;

	printf("ERRORS (%zu)\n", n);
	if (n == 0)
		printf("  (none)\n");
	for (i = 0; i < n; i++) {
		json_object *e = json_object_array_get_idx(arr, i);

		printf("  ");
		put_clean(jstr(e, "namespace", "?"));
		putchar('/');
		put_clean(jstr(e, "pod", "?"));
		putchar('/');
		put_clean(jstr(e, "container", "?"));
		printf(": ");
		put_clean(jstr(e, "reason", "?"));
		printf(", ");
		put_clean(jstr(e, "action", "?"));
		printf("\n    ");
		put_clean(jstr(e, "message", ""));
		putchar('\n');
	}
	putchar('\n');
}

static void print_counters(json_object *root)
{
	json_object *cnt = jget(root, "counters", json_type_object);
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
	json_object *cv = jget(root, "convergence", json_type_object);
	json_object *rec = jget(cv, "recent_ns", json_type_array);
	size_t i, n = rec ? json_object_array_length(rec) : 0;
	int64_t *v;

	printf("CONVERGENCE (event to no shared container on a reserved CPU)\n");
	printf("  count %lld, last %.1f µs", (long long)jint(cv, "count", 0),
	       jint(cv, "last_ns", 0) / 1000.0);
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

static int status_print(json_object *root)
{
	print_daemon(root);
	print_topology(root);
	if (print_containers(root) < 0)
		return -ENOMEM;
	print_errors(root);
	print_counters(root);
	return print_convergence(root);
}

static void status_usage(FILE *f)
{
	fprintf(f,
		"Usage: %s [--state-dir DIR] status [--json] [--state-dir DIR]\n"
		"Shows topology, shared pool, reserved CPUs, every container's placement,\n"
		"admission errors, counters and convergence times from DIR/status.json.\n"
		"  -j, --json            print status.json itself, pretty-printed\n"
		"  -s, --state-dir DIR   where cpusetd writes its state (default %s)\n"
		"  -h, --help            this text\n",
		prog, CTL_DEFAULT_STATE_DIR);
}

static int cmd_status(struct ctl_opts *o, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "state-dir", required_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	json_object *root;
	bool json = false;
	int c, err;

	optind = 0;	/* glibc: restart parsing on the command's argv */
	while ((c = getopt_long(argc, argv, "+:js:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'j': json = true; break;
		case 's': o->state_dir = optarg; break;
		case 'h': status_usage(stdout); return 0;
		default: bad_option(c, argv, "status: "); return EXIT_USAGE;
		}
	}
	if (optind < argc) {
		usage_error("status: unexpected argument '%s'", argv[optind]);
		return EXIT_USAGE;
	}
	if (status_load(o->state_dir, &root) < 0)
		return EXIT_RUNTIME;
	if (json)
		printf("%s\n", json_object_to_json_string_ext(root,
			JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED |
			JSON_C_TO_STRING_NOSLASHESCAPE));
	err = json ? 0 : status_print(root);
	json_object_put(root);
	if (err < 0)
		fprintf(stderr, "%s: %s\n", prog, strerror(-err));
	return err < 0 ? EXIT_RUNTIME : 0;
}

/* ---------- the command table and main --------------------------------- */

static const struct ctl_cmd cmds[] = {
	{ "status", "placements, pools, errors and counters from status.json", cmd_status },
	{ "topology", "packages, NUMA nodes, cores and threads as sysfs says", cmd_topology },
	{ "allocate", "run kubelet/Koordinator allocation cases (fixtures)", cmd_allocate },
};

static void usage(FILE *f)
{
	size_t i;

	fprintf(f,
		"Usage: %s [--state-dir DIR] <command> [options]\n"
		"Shows what cpusetd decided: where every container runs and why.\n\n"
		"Commands:\n", prog);
	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		fprintf(f, "  %-10s %s\n", cmds[i].name, cmds[i].summary);
	fprintf(f,
		"\nOptions:\n"
		"  -s, --state-dir DIR   cpusetd's state directory (default %s)\n"
		"  -h, --help            this text; '<command> --help' for a command's own\n"
		"\nExamples:\n"
		"  %s status                     summary of the running daemon\n"
		"  %s status --json | jq .errors admission errors as JSON\n"
		"  %s --state-dir /tmp/st status read a copy of the state elsewhere\n"
		"  %s topology --json            this machine's topology as JSON\n"
		"  %s allocate --cases k8s-cases.jsonl --topologies k8s-topologies\n"
		"\nExit status: 0 ok, 1 failed (e.g. no status.json), 2 bad usage.\n",
		CTL_DEFAULT_STATE_DIR, prog, prog, prog, prog, prog);
}

static const struct ctl_cmd *cmd_find(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		if (strcmp(cmds[i].name, name) == 0)
			return &cmds[i];
	return NULL;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "state-dir", required_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	struct ctl_opts o = { .state_dir = CTL_DEFAULT_STATE_DIR };
	const struct ctl_cmd *cmd;
	int c;

	/* '+': stop at the command name, its options are its own. */
	while ((c = getopt_long(argc, argv, "+:s:h", longopts, NULL)) != -1) {
		switch (c) {
		case 's': o.state_dir = optarg; break;
		case 'h': usage(stdout); return 0;
		default: bad_option(c, argv, ""); return EXIT_USAGE;
		}
	}
	if (optind >= argc) {
		usage_error("no command given");
		return EXIT_USAGE;
	}
	cmd = cmd_find(argv[optind]);
	if (!cmd) {
		usage_error("unknown command '%s'", argv[optind]);
		return EXIT_USAGE;
	}
	c = cmd->run(&o, argc - optind, argv + optind);
	if (fflush(stdout) != 0 || ferror(stdout)) {
		fprintf(stderr, "%s: writing output: %s\n", prog, strerror(errno));
		return EXIT_RUNTIME;
	}
	return c;
}
