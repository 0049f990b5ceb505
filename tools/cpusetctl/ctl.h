/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What cpusetctl's command files share: global options, exit codes, the
 * one-line usage errors, reading status.json (and whether its daemon still
 * runs) and the JSON accessors. Each
 * command is `int cmd_X(struct ctl_opts *, int argc, char **argv)`
 * (argv[0] = the command name) returning the exit code.
 *
 * Names of pods and containers in status.json come from pods: they are
 * untrusted, so everything printed for a person goes through
 * ctl_put_clean/ctl_clean (control characters shown as '?').
 */
#ifndef CPUSETD_CTL_H
#define CPUSETD_CTL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <json-c/json.h>

/* 3 as systemctl's "not running": the output is the last known state. */
enum { EXIT_RUNTIME = 1, EXIT_USAGE = 2, EXIT_NOT_RUNNING = 3 };

#define CTL_DEFAULT_STATE_DIR	"/run/cpusetd"
#define CTL_DEFAULT_PIN_DIR	"/sys/fs/bpf/cpusetd"
#define CTL_SHORT_ID		12

struct ctl_opts {
	const char *state_dir;
	const char *pin_dir;	/* bpffs dir of the pinned maps (layout dir below it) */
};

struct cpumask;

/* The program name every message starts with (defined in ctl_util.c). */
extern const char *prog;

/* "cpusetctl: <what> (see 'cpusetctl --help')" on stderr. */
void usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Reports getopt_long's ':' or '?' result c, prefixed by ctx ("topology: "). */
void bad_option(int c, char **argv, const char *ctx);

/* Prints s with control characters shown as '?'. Cannot fail. */
void ctl_put_clean(const char *s);

/* Copies s into buf (size len), control characters as '?', truncated;
 * returns buf. Cannot fail. */
const char *ctl_clean(const char *s, char *buf, size_t len);

/* Member key of obj: string (dflt when absent or another type), integer
 * (dflt likewise), true boolean (false otherwise), or any member of type
 * t (NULL otherwise; obj may be NULL). */
const char *ctl_jstr(json_object *obj, const char *key, const char *dflt);
int64_t ctl_jint(json_object *obj, const char *key, int64_t dflt);
bool ctl_jbool(json_object *obj, const char *key);
json_object *ctl_jget(json_object *obj, const char *key, json_type t);

/* Parses the cpulist string at key of obj (may be NULL) into *ret.
 * Returns 0, or -EINVAL when missing, not a string or not a cpulist
 * (*ret is then undefined). */
int ctl_json_cpulist(json_object *obj, const char *key, struct cpumask *ret);

/*
 * Loads <state_dir>/status.json into *ret (a JSON object; the caller puts
 * it). Prints the one specific error itself ("no status at ...: is
 * cpusetd running?", "cannot parse ..."). Returns 0 or -errno.
 */
int ctl_status_load(const char *state_dir, json_object **ret);

/*
 * Whether the daemon that wrote root (a loaded status.json) still runs:
 * its "stopped" mark, its pid in /proc (gone, or another program's comm)
 * and its heartbeat's age (tools/cpusetctl/ctl_live.h). When it does not, prints
 * one line on stderr saying why and how old the status is ("cpusetctl:
 * status is 42 s old (heartbeat every 10 s): daemon not running? pid 1234
 * is gone"); the caller still shows the state and exits
 * EXIT_NOT_RUNNING. Returns true when nothing says it stopped. Cannot fail.
 */
bool ctl_daemon_alive(json_object *root);

/* Prints o pretty-printed with a newline. Cannot fail. */
void ctl_print_json(json_object *o);

/* cpusetctl status [--json]: placements, pools, errors, contention. */
int cmd_status(struct ctl_opts *o, int argc, char **argv);

/* cpusetctl topology [--sysfs DIR] [--json]: the machine as sysfs says. */
int cmd_topology(struct ctl_opts *o, int argc, char **argv);

/* cpusetctl allocate --cases FILE [--topologies DIR]: fixture cases. */
int cmd_allocate(struct ctl_opts *o, int argc, char **argv);

/* cpusetctl map [--color WHEN] [--json]: who owns each logical CPU. */
int cmd_map(struct ctl_opts *o, int argc, char **argv);

/* cpusetctl explain <id prefix | ns/pod/container> [--json]. */
int cmd_explain(struct ctl_opts *o, int argc, char **argv);

/* cpusetctl top [--interval S] [--count N] [--json]: live contention. */
int cmd_top(struct ctl_opts *o, int argc, char **argv);

/* cpusetctl isolation [--interval S] [--json]: each exclusive CPU's owner,
 * host isolation state and foreign time (ctl_isolation.c). */
int cmd_isolation(struct ctl_opts *o, int argc, char **argv);

#endif
