/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The config loader's insides, shared by config.c and its parts
 * (config_options.c, config_values.c, config_ini.c, config_check.c) and
 * by nothing else: the daemon, cpusetctl and the tests use config.h.
 */
#ifndef CPUSETD_CONFIG_INTERNAL_H
#define CPUSETD_CONFIG_INTERNAL_H

#ifdef __bpf__
#error "user-space header: BPF programs share only maps/cpusetd.h"
#endif

#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include "config.h"

/* min_shared_cpus' upper bound: one CPU must be left to be exclusive. */
#define MIN_SHARED_MAX		(CPUSETD_MAX_CPUS - 1)

/* Each setting's id: its getopt_long val, config_apply's case. */
enum {
	OPT_HELP = 'h',
	OPT_CONFIG = 256,
	OPT_KUBEPODS_ROOT,
	OPT_BUNDLE_PATH,
	OPT_STATE_DIR,
	OPT_PIN_DIR,
	OPT_KUBELET_PODS_DIR,
	OPT_ON_ERROR,
	OPT_MIN_SHARED_CPUS,
	OPT_LOG_LEVEL,
	OPT_DRY_RUN,
	OPT_VERSION,
	OPT_KUBELET_STATE_FILE,
	OPT_TEXTFILE,
	OPT_EXPORT_INTERVAL,
	OPT_POLICY,		/* the allocation-policy settings: config_policy.c */
	OPT_RESIZE_CHECK_MS,
	OPT_V2_WRITES,
	OPT_SCHED_POLICY,
	OPT_SCHED_PRIORITY,
	OPT_NICE,
	OPT_RUN_ON_RESERVED_CPUS,
	OPT_ISOLATE_HOST,
	OPT_ISOLATE_HOST_SKIP,
	OPT_ISOLATE_HOST_RESCAN_MS,
	OPT_EXCLUSIVE_CPU_QUOTA,
	OPT_CHECK_CONFIG,
	OPT_RELEASE,
	OPT_EXPORT_CONTAINERS,
	OPT_RUNQUEUE_WAIT_BUCKETS_US,
	OPT_TELEMETRY,
	OPT_NRI,
	OPT_NRI_SOCKET,
	OPT_NRI_PLUGIN_NAME,
	OPT_NRI_PLUGIN_INDEX,
};

/* The option table, ended by a zeroed entry (getopt_long's shape). */
extern const struct option config_long_opts[];

/* Our line-by-line feed to inih (ini_parse_stream). */
struct ini_src {
	const char *buf;
	size_t len, pos;
	int lineno;		/* line last handed to inih */
	int long_line;		/* first line too long for inih, or 0 */
	int max_len;		/* longest line inih takes whole */
};

/* A config being built: the private copy and where its first error goes. */
struct loader {
	struct cpusetd_config cfg;
	bool bundle_from_ini;	/* the INI file has replaced the defaults */
	bool bundle_from_cli;	/* the command line has replaced the list */
	bool in_ini;
	struct ini_src src;
	int err_line;		/* line of the first INI error, 0 = none */
	char err[PATH_MAX + 128];
	char *msg;		/* the one error line for the caller */
	size_t msg_len;
};

/* Keeps the first error line (no "cpusetd: ", no newline) for the
 * caller: config_load prints it, a reload logs it. */
static inline void __attribute__((format(printf, 2, 3)))
say(struct loader *l, const char *fmt, ...)
{
	va_list ap;

	if (!l->msg_len || l->msg[0])
		return;
	va_start(ap, fmt);
	vsnprintf(l->msg, l->msg_len, fmt, ap);
	va_end(ap);
}

/* config_options.c: prints --help to stdout. Cannot fail. */
void config_usage(void);

/*
 * config_values.c: applies one setting to l->cfg. id: an OPT_* value
 * from config_long_opts; name: its long name (a policy key is told by
 * it); v: the value, NULL for a flag given on the command line without
 * one (untrusted text). Returns 0, or -EINVAL with the one-line reason
 * in err[errlen].
 */
int config_apply(struct loader *l, int id, const char *name, const char *v, char *err,
		 size_t errlen);

/*
 * config_ini.c: loads the INI file l->cfg.config_file over l->cfg. named:
 * given with --config, so it must exist (a missing default file is
 * fine). Returns 0, -EINVAL (a bad key, value or line, said with its
 * line number through say()), -ENOMEM or the -errno of reading it.
 */
int config_load_ini(struct loader *l, bool named);

/* config_check.c: the settings that are each fine alone but wrong
 * together. Returns 0 or -EINVAL, said in one line. */
int config_validate(struct loader *l);

/* config_check.c: a priority only with fifo or rr, a nice value only
 * with other; fifo and rr get the default priority when none was given.
 * Returns 0 or -EINVAL, said in one line. */
int config_resolve_sched(struct loader *l);

#endif
