// SPDX-License-Identifier: Apache-2.0
/*
 * Daemon settings: defaults, then the INI file, then the command line
 * (see config.h).
 *
 * One table (config_long_opts) names every setting; INI keys are the same names
 * with '_' or '-', so the file and the command line cannot drift apart.
 * Both go through config_apply(), which validates a value and says what is wrong
 * in one line; the caller prefixes where it came from ("--state-dir" or
 * "file:line: state_dir"). Everything is built in a private copy and
 * handed out only when all of it is valid.
 *
 * The INI text is fed to inih through our own line reader so that we know
 * the line number of every key (inih reports only the first error's line)
 * and can refuse over-long lines, which inih would otherwise split into a
 * truncated value plus a bogus next line.
 *
 * This file: the defaults, the command line and the order of the passes
 * (config_parse). Its parts, sharing struct loader through
 * config_internal.h: config_options.c (the option table and --help),
 * config_values.c (one setting's value checked and stored),
 * config_ini.c (the INI file) and config_check.c (the checks across
 * settings and against the node).
 */
#include <errno.h>
#include <getopt.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "config.h"
#include "config_internal.h"
#include "user/base/log.h"
#include "user/nri/nri.h"	/* NRI_DEFAULT_*: one set of defaults */

#define VERSION			CPUSETD_VERSION

static const char *const default_bundle_paths[] = {
	"/run/containerd/io.containerd.runtime.v2.task/k8s.io/{id}/config.json",
	"/run/containers/storage/overlay-containers/{id}/userdata/config.json",
};

static void set_defaults(struct cpusetd_config *c)
{
	memset(c, 0, sizeof(*c));
	strcpy(c->config_file, CONFIG_DEFAULT_FILE);
	for (unsigned i = 0; i < sizeof(default_bundle_paths) / sizeof(default_bundle_paths[0]); i++)
		strcpy(c->bundle_paths[c->n_bundle_paths++], default_bundle_paths[i]);
	strcpy(c->state_dir, "/run/cpusetd");
	strcpy(c->pin_dir, "/sys/fs/bpf/cpusetd");
	strcpy(c->kubelet_pods_dir, "/var/lib/kubelet/pods");
	c->policy.min_shared_cpus = 1;
	c->policy.on_error = POLICY_ON_ERROR_REJECT;
	config_policy_defaults(&c->policy);
	strcpy(c->kubelet_state_file, KUBELET_STATE_DEFAULT_PATH);
	strcpy(c->textfile, CONFIG_DEFAULT_TEXTFILE);
	c->export_interval_s = 15;
	c->log_level = LOG_INFO;
	c->dry_run = false;
	c->resize_check_ms = 1000;
	c->sched_policy = SCHED_FIFO;
	c->sched_priority = 0;	/* resolved by config_resolve_sched() */
	c->nice = 0;
	c->run_on_reserved_cpus = true;
	c->isolate_host = false;
	c->isolate_host_rescan_ms = 1000;
	c->export_containers = CONFIG_EXPORT_EXCLUSIVE;
	c->nri = true;
	strcpy(c->nri_socket, NRI_DEFAULT_SOCKET);
	strcpy(c->nri_plugin_name, NRI_DEFAULT_NAME);
	strcpy(c->nri_plugin_index, NRI_DEFAULT_INDEX);
	/* powers of 4 from 4 µs to ~1 s: 13 series per CPU instead of 29
	 * (tools/monitoring/README.md "Metrics"); "all" gives back every slot */
	c->n_rq_buckets = 0;
	for (uint32_t us = 4; us <= 1048576; us *= 4)
		c->rq_buckets_us[c->n_rq_buckets++] = us;
}

/*
 * First pass over argv: --help, --version and --config, which decide what
 * happens before anything else. Other options (and their errors) are left
 * to the second pass. Returns 1 when help or version was printed,
 * 0 with *named, or -EINVAL.
 */
static int scan_early(int argc, char **argv, struct loader *l, bool *named)
{
	int c;

	optind = 0;	/* glibc: full re-initialisation, for repeated calls */
	while ((c = getopt_long(argc, argv, ":h", config_long_opts, NULL)) != -1) {
		if (c == OPT_HELP) {
			config_usage();
			return 1;
		}
		if (c == OPT_VERSION) {
			printf("cpusetd %s (revision %s)\n", VERSION, cpusetd_revision);
			return 1;
		}
		if (c != OPT_CONFIG)
			continue;
		if (strlen(optarg) >= sizeof(l->cfg.config_file) || !optarg[0]) {
			say(l, "--config: expected a file name shorter than %d characters",
				PATH_MAX);
			return -EINVAL;
		}
		strcpy(l->cfg.config_file, optarg);
		*named = true;
	}
	return 0;
}

/*
 * The option as the user typed it, for error messages: the argument for a
 * long option (glibc leaves optopt 0 or the option's val there), else the
 * short option letter.
 */
static const char *bad_option(char **argv)
{
	static char shortopt[3];
	const char *arg = argv[optind - 1];

	if (strncmp(arg, "--", 2) == 0 || !optopt || optopt > 127)
		return arg;
	snprintf(shortopt, sizeof(shortopt), "-%c", optopt);
	return shortopt;
}

/* Second pass: every option, in order, over what the INI file gave. */
static int apply_argv(int argc, char **argv, struct loader *l)
{
	char why[PATH_MAX + 64];
	int c, idx;

	optind = 0;
	while ((c = getopt_long(argc, argv, ":h", config_long_opts, &idx)) != -1) {
		if (c == '?') {
			say(l, "unknown option '%s' (see --help)", bad_option(argv));
			return -EINVAL;
		}
		if (c == ':') {
			say(l, "option '%s' needs a value", bad_option(argv));
			return -EINVAL;
		}
		if (c == OPT_CONFIG || c == OPT_HELP || c == OPT_VERSION)
			continue;
		if (c == OPT_CHECK_CONFIG) {	/* a mode, not a setting */
			l->cfg.check_config = true;
			continue;
		}
		if (c == OPT_RELEASE) {		/* a mode too */
			l->cfg.release = true;
			continue;
		}
		if (config_apply(l, c, config_long_opts[idx].name, optarg, why, sizeof(why)) < 0) {
			say(l, "--%s: %s", config_long_opts[idx].name, why);
			return -EINVAL;
		}
	}
	if (optind < argc) {
		say(l, "unexpected argument '%s' (see --help)", argv[optind]);
		return -EINVAL;
	}
	return 0;
}

int config_parse(int argc, char **argv, struct cpusetd_config *ret, char *err, size_t len)
{
	int saved_opterr = opterr, r;
	bool named = false;
	struct loader *l;

	if (len)
		err[0] = '\0';
	/* Large (a dozen PATH_MAX buffers): keep it off the stack. */
	l = calloc(1, sizeof(*l));
	if (!l) {
		snprintf(err, len, "out of memory");
		return -ENOMEM;
	}
	l->msg = err;
	l->msg_len = len;
	set_defaults(&l->cfg);
	opterr = 0;	/* we print our own one-line errors */
	r = scan_early(argc, argv, l, &named);
	if (r == 0)
		r = config_load_ini(l, named);
	if (r == 0)
		r = apply_argv(argc, argv, l);
	if (r == 0)
		r = config_validate(l);
	if (r == 0)
		r = config_resolve_sched(l);
	opterr = saved_opterr;
	optind = 0;
	if (r == 0)
		*ret = l->cfg;
	free(l);
	return r;
}

int config_load(int argc, char **argv, struct cpusetd_config *ret)
{
	char err[CONFIG_ERR_MAX];
	int r = config_parse(argc, argv, ret, err, sizeof(err));

	if (r < 0)
		fprintf(stderr, "cpusetd: %s\n", err[0] ? err : strerror(-r));
	return r;
}
