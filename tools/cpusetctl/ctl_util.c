// SPDX-License-Identifier: Apache-2.0
/*
 * cpusetctl's shared helpers: the program name, usage errors, clean
 * output of untrusted strings, JSON accessors, loading status.json
 * (written atomically by the daemon, so reading it needs no locking) and
 * telling whether the daemon that wrote it still runs (ctl_live.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "user/base/cpumask.h"
#include "user/base/procs.h"
#include "user/export/status.h"
#include "ctl.h"
#include "ctl_live.h"

#define CTL_MAX_STATUS_BYTES	(64u << 20)	/* far above any real node */

/* Here, not in main's file, so every command file depends only
 * downwards (cpusetctl.c -> ctl_<command>.c -> ctl_util.c). */
const char *prog = "cpusetctl";

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

void ctl_put_clean(const char *s)
{
	for (; *s; s++)
		putchar((unsigned char)*s < 0x20 || *s == 0x7f ? '?' : *s);
}

const char *ctl_clean(const char *s, char *buf, size_t len)
{
	size_t i;

	for (i = 0; s[i] && i + 1 < len; i++)
		buf[i] = (unsigned char)s[i] < 0x20 || s[i] == 0x7f ? '?' : s[i];
	buf[i] = '\0';
	return buf;
}

/* The string member key of obj, or dflt when absent or not a string. */
const char *ctl_jstr(json_object *obj, const char *key, const char *dflt)
{
	json_object *v;

	if (!json_object_object_get_ex(obj, key, &v) || !json_object_is_type(v, json_type_string))
		return dflt;
	return json_object_get_string(v);
}

/* The integer member key of obj, or dflt when absent or not a number. */
int64_t ctl_jint(json_object *obj, const char *key, int64_t dflt)
{
	json_object *v;

	if (!json_object_object_get_ex(obj, key, &v))
		return dflt;
	if (!json_object_is_type(v, json_type_int) && !json_object_is_type(v, json_type_double))
		return dflt;
	return json_object_get_int64(v);
}

bool ctl_jbool(json_object *obj, const char *key)
{
	json_object *v;

	return json_object_object_get_ex(obj, key, &v) &&
	       json_object_is_type(v, json_type_boolean) && json_object_get_boolean(v);
}

/* The member key of obj if it has type t, else NULL. */
json_object *ctl_jget(json_object *obj, const char *key, json_type t)
{
	json_object *v;

	if (!obj || !json_object_object_get_ex(obj, key, &v) || !json_object_is_type(v, t))
		return NULL;
	return v;
}

int ctl_json_cpulist(json_object *obj, const char *key, struct cpumask *ret)
{
	json_object *v = ctl_jget(obj, key, json_type_string);

	if (!v || cpulist_parse(json_object_get_string(v), ret) < 0)
		return -EINVAL;
	return 0;
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
int ctl_status_load(const char *state_dir, json_object **ret)
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
	if (ctl_jint(root, "version", 0) != 1)
		fprintf(stderr, "%s: warning: %s is not version 1 (has %s), showing what is known\n",
			prog, path, ctl_jget(root, "version", json_type_int) ?
			json_object_get_string(ctl_jget(root, "version", json_type_int)) : "none");
	*ret = root;
	return 0;
}

/* ---------- is the daemon still there? -------------------------------- */

/* A number member of obj as a double, or 0 when absent or not a number. */
static double jdouble(json_object *obj, const char *key)
{
	json_object *v;

	if (!json_object_object_get_ex(obj, key, &v) ||
	    (!json_object_is_type(v, json_type_double) && !json_object_is_type(v, json_type_int)))
		return 0;
	return json_object_get_double(v);
}

/* What /proc says of the daemon's pid; its comm (cleaned) into comm[len]
 * when readable, else comm[0] = '\0'. */
static enum ctl_pid_seen look_up(long long pid, uint64_t its_pidns, char *comm, size_t len)
{
	uint64_t my_pidns;
	char raw[32];

	comm[0] = '\0';
	if (pid <= 0 || pid > INT_MAX)
		return CTL_PID_UNCHECKED;
	/* From a pod without hostPID its PID is someone else's, or nobody's. */
	if (its_pidns && (procs_pidns(0, &my_pidns) < 0 || my_pidns != its_pidns))
		return CTL_PID_UNCHECKED;
	/* kill, not /proc: hidepid= hides other users' /proc/<pid> */
	if (kill((pid_t)pid, 0) < 0 && errno == ESRCH)
		return CTL_PID_GONE;
	if (procs_comm((int)pid, raw, sizeof(raw)) == 0)
		ctl_clean(raw, comm, len);
	return CTL_PID_ALIVE;
}

bool ctl_daemon_alive(json_object *root)
{
	json_object *d = ctl_jget(root, "daemon", json_type_object);
	char comm[32], want[32], msg[512];
	struct ctl_live_facts f = { 0 };
	struct timespec ts;
	enum ctl_live v;
	int64_t iv;

	clock_gettime(CLOCK_REALTIME, &ts);
	f.now = (double)ts.tv_sec + ts.tv_nsec / 1e9;
	f.state = ctl_jstr(d, "state", NULL);
	f.beat = jdouble(d, "heartbeat");
	if (f.beat <= 0)
		f.beat = jdouble(root, "updated");	/* a daemon before heartbeats */
	iv = ctl_jint(d, "export_interval_s", 0);
	f.interval_s = iv > 0 && iv < 1000000 ? (unsigned)iv : 0;
	f.pid = (long long)ctl_jint(d, "pid", 0);
	/* "" = the daemon could not read its own: nothing to compare */
	f.want_comm = ctl_clean(ctl_jstr(d, "comm", "cpusetd"), want, sizeof(want));
	f.seen = look_up(f.pid, (uint64_t)ctl_jint(d, "pid_ns", 0), comm, sizeof(comm));
	f.comm = comm[0] ? comm : NULL;
	v = ctl_live_decide(&f);
	if (v == CTL_LIVE_RUNNING)
		return true;
	fprintf(stderr, "%s: %s\n", prog, ctl_live_message(&f, v, msg, sizeof(msg)));
	return false;
}

void ctl_print_json(json_object *o)
{
	printf("%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY |
			JSON_C_TO_STRING_SPACED | JSON_C_TO_STRING_NOSLASHESCAPE));
}
