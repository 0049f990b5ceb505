// SPDX-License-Identifier: Apache-2.0
/*
 * The config at run time: SIGHUP's reload (systemd/README.md "Reload")
 * and --check-config. Both parse and check the way a start does; a
 * reload applies the keys that can change live and names those that
 * need a restart.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "user/base/log.h"
#include "user/process/self_sched.h"
#include "daemon_internal.h"

/* A periodic timer again after its period changed: *fd closed (which
 * takes it out of the epoll set) and made anew for ms (0 = none). */
static void rearm_timer(struct daemon *d, int *fd, unsigned ms, const char *what)
{
	if (*fd >= 0)
		close(*fd);
	*fd = daemon_add_timer(d, ms);
	if (*fd < -1) {
		log_error("reload: cannot set the %s timer: %s; it stays off until a restart",
			  what, strerror(-*fd));
		*fd = -1;
	}
}

/* The textfile or its interval changed: a new exporter; a file at the old
 * path is removed, or node_exporter would serve both (duplicate series). */
static void reopen_export(struct daemon *d, const struct cpusetd_config *old)
{
	export_textfile_free(d->prom);
	d->prom = NULL;
	if (daemon_open_export(d) < 0)
		d->prom = NULL;	/* logged: running without the export */
	if (old->textfile[0] && strcmp(old->textfile, d->cfg.textfile) != 0 &&
	    unlink(old->textfile) < 0 && errno != ENOENT)
		log_warn("reload: cannot remove the old textfile %s: %s", old->textfile,
			 strerror(errno));
}

#define CHANGED(f)	(memcmp(&old->f, &d->cfg.f, sizeof(old->f)) != 0)

/* Side effects of the live keys that changed from old to d->cfg (the
 * rest is read where it is used). Returns 0 or -ENOMEM. */
static int apply_live(struct daemon *d, const struct cpusetd_config *old)
{
	log_max_level = d->cfg.log_level;
	if (CHANGED(resize_check_ms))
		rearm_timer(d, &d->resize_tfd, d->cfg.resize_check_ms, "resize check");
	if (CHANGED(isolate_host) || CHANGED(isolate_host_rescan_ms))
		rearm_timer(d, &d->isolate_tfd,
			    d->cfg.isolate_host ? d->cfg.isolate_host_rescan_ms : 0, "isolation rescan");
	if (CHANGED(textfile) || CHANGED(export_interval_s))
		reopen_export(d, old);
	if (CHANGED(sched_policy) || CHANGED(sched_priority) || CHANGED(nice) ||
	    CHANGED(run_on_reserved_cpus))
		self_sched_apply(&d->cfg, &d->topo->online);
	daemon_log_open_annotations(CHANGED(policy.cores_ids_namespaces) &&
			     policy_namespace_all(d->cfg.policy.cores_ids_namespaces),
			     CHANGED(policy.resource_status_namespaces) &&
			     policy_namespace_all(d->cfg.policy.resource_status_namespaces));
	return controller_reconfigure(d->ctl, old) == -ENOMEM ? -ENOMEM : 0;
}

#undef CHANGED

/* Appends name to list[len] ("a, b"); a list cut short ends in "...". */
static void list_add(char *list, size_t len, const char *name)
{
	size_t at = strlen(list);

	if (at + strlen(name) + 6 >= len) {
		if (at + 4 < len && !strstr(list, "..."))
			strcat(list, "...");
		return;
	}
	snprintf(list + at, len - at, "%s%s", at ? ", " : "", name);
}

/*
 * The config file (and the command line, which keeps precedence) parsed
 * and checked whole, as at start; refused as a whole with one error line
 * naming the key and why. Then the live keys that changed are applied and
 * the ones that need a restart named, once per reload. Returns 0 (also
 * when refused: the daemon runs on), or -ENOMEM.
 */
int daemon_reload(struct daemon *d)
{
	char err[CONFIG_ERR_MAX], live[512] = "", restart[sizeof(d->restart_keys)] = "";
	static char a[CONFIG_MAX_BUNDLE_PATHS * PATH_MAX], b[sizeof(a)];
	struct cpusetd_config *next = malloc(sizeof(*next)), *old = malloc(sizeof(*old));
	int r;

	if (!next || !old) {
		free(next);
		free(old);
		return -ENOMEM;
	}
	r = config_parse(d->argc, d->argv, next, err, sizeof(err));
	if (r == 0)
		r = config_check_node(next, &d->topo->online, err, sizeof(err));
	if (r < 0) {
		log_error("reload refused: %s; still running on the old config",
			  err[0] ? err : strerror(-r));
		controller_count_reload(d->ctl, false);
		free(next);
		free(old);
		return r == -ENOMEM ? r : 0;
	}
	for (unsigned i = 0; i < config_n_keys(); i++) {
		config_key_value(&d->cfg, i, a, sizeof(a));
		config_key_value(next, i, b, sizeof(b));
		if (strcmp(a, b) == 0)
			continue;
		if (config_key_reload(i) == CONFIG_RELOAD_LIVE)
			list_add(live, sizeof(live), config_key_name(i));
		else
			list_add(restart, sizeof(restart), config_key_name(i));
	}
	*old = d->cfg;
	config_merge_live(&d->cfg, next);
	r = apply_live(d, old);
	log_notice("reload of %s: %s%s", d->cfg.config_file, live[0] ? "applied " : "no live change",
		   live);
	if (restart[0])
		log_warn("reload of %s: %s changed: takes effect at a restart "
			 "(systemctl restart cpusetd); the old value%s stay%s until then",
			 d->cfg.config_file, restart, strchr(restart, ',') ? "s" : "",
			 strchr(restart, ',') ? "" : "s");
	snprintf(d->restart_keys, sizeof(d->restart_keys), "%s", restart);
	controller_count_reload(d->ctl, true);
	free(next);
	free(old);
	return r;
}

/*
 * --check-config (like nginx -t): the checks a start makes before it
 * changes anything (config_load's, and config_check_node's against the
 * CPUs online in sysfs), then the effective settings on stdout and one
 * verdict line on stderr. Loads no BPF, writes no cgroup, takes no lock,
 * creates no directory. Returns the exit code: 0 valid, 1 not.
 */
int daemon_check_config(const struct cpusetd_config *c)
{
	char err[CONFIG_ERR_MAX];
	struct topology *t;
	int r = topo_read("/sys", &t);

	if (r < 0) {
		fprintf(stderr, "cpusetd: cannot read the CPU topology from /sys: %s\n", strerror(-r));
		return EXIT_FAILURE;
	}
	r = config_check_node(c, &t->online, err, sizeof(err));
	topo_free(t);
	if (r < 0) {
		fprintf(stderr, "cpusetd: %s\n", err);
		return EXIT_FAILURE;
	}
	config_print(c, stdout);
	if (fflush(stdout) != 0) {
		fprintf(stderr, "cpusetd: writing the settings: %s\n", strerror(errno));
		return EXIT_FAILURE;
	}
	fprintf(stderr, "cpusetd: configuration %s is valid\n", c->config_file);
	return EXIT_SUCCESS;
}
