// SPDX-License-Identifier: Apache-2.0
/*
 * The daemon's INI settings file (user/config/config.c config_load, through
 * inih and config_policy.c). config_load only takes a path, so each input
 * is written to one private file (on /dev/shm when there is one) and
 * passed as --config; files_read refuses symlinks, which rules out
 * /proc/self/fd/N of a memfd.
 *
 * Invariants (config.h): 0 or -EINVAL (a named file exists, so never
 * ENOENT; never 1: no --help); *ret untouched on error; on success every
 * path a C string inside its array and absolute (kubepods_root and the
 * two "" = none ones may be empty), at most CONFIG_MAX_BUNDLE_PATHS
 * bundle paths, numbers in their documented ranges, namespace pattern
 * lists (cores_ids_namespaces, resource_status_namespaces) of at most
 * POLICY_NS_MAX_PATTERNS non-empty patterns of a-z 0-9 - * ? [ ] !.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <syslog.h>
#include <unistd.h>
/* setup() below names the scratch file. */
#define FUZZ_SETUP setup
#include "fuzz.h"
#include "user/config/config.h"

static char ini[64];
static FILE *devnull;

static void check_path(const char *p, bool may_be_empty)
{
	FUZZ_CHECK(p[0] == '/' || (may_be_empty && !p[0]));
}

static void check_namespaces(const char *list)
{
	unsigned n = 0;

	FUZZ_CHECK(memchr(list, '\0', POLICY_NS_LIST_MAX) != NULL);
	FUZZ_CHECK(strspn(list, "abcdefghijklmnopqrstuvwxyz0123456789-*?[]!,") == strlen(list));
	for (const char *p = list; *p; n++) {
		size_t len = strcspn(p, ",");

		FUZZ_CHECK(len > 0);
		p += len;
		if (*p == ',') {
			p++;
			FUZZ_CHECK(*p);
		}
	}
	FUZZ_CHECK(n <= POLICY_NS_MAX_PATTERNS);
}

static void check_config(const struct cpusetd_config *c)
{
	FUZZ_CHECK_STR(c->config_file);
	FUZZ_CHECK_STR(c->kubepods_root);
	FUZZ_CHECK_STR(c->state_dir);
	FUZZ_CHECK_STR(c->pin_dir);
	FUZZ_CHECK_STR(c->kubelet_pods_dir);
	FUZZ_CHECK_STR(c->kubelet_state_file);
	FUZZ_CHECK_STR(c->textfile);
	FUZZ_CHECK(strcmp(c->config_file, ini) == 0);
	check_path(c->kubepods_root, true);
	check_path(c->state_dir, false);
	check_path(c->pin_dir, false);
	check_path(c->kubelet_pods_dir, false);
	check_path(c->kubelet_state_file, true);
	check_path(c->textfile, true);
	FUZZ_CHECK(c->n_bundle_paths >= 1 && c->n_bundle_paths <= CONFIG_MAX_BUNDLE_PATHS);
	for (unsigned i = 0; i < c->n_bundle_paths; i++) {
		FUZZ_CHECK_STR(c->bundle_paths[i]);
		check_path(c->bundle_paths[i], false);
	}
	FUZZ_CHECK(c->export_interval_s >= 1 && c->export_interval_s <= CONFIG_MAX_EXPORT_INTERVAL);
	FUZZ_CHECK(c->policy.min_shared_cpus >= 1 && c->policy.min_shared_cpus < CPUSETD_MAX_CPUS);
	FUZZ_CHECK(c->resize_check_ms <= 3600000);
	FUZZ_CHECK(c->log_level >= LOG_ERR && c->log_level <= LOG_DEBUG);
	check_namespaces(c->policy.cores_ids_namespaces);
	check_namespaces(c->policy.resource_status_namespaces);
	/* A loaded scheduling setting is one the kernel takes as given
	 * (config.c refuses a priority with other, a nice with fifo/rr). */
	if (c->sched_policy == SCHED_OTHER)
		FUZZ_CHECK(c->sched_priority == 0 && c->nice >= -20 && c->nice <= 19);
	else
		FUZZ_CHECK((c->sched_policy == SCHED_FIFO || c->sched_policy == SCHED_RR) &&
			   c->sched_priority >= 1 && c->sched_priority <= 99 && c->nice == 0);
}

static void setup(void)
{
	const char *dir = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";

	snprintf(ini, sizeof(ini), "%s/fuzz_config.%d.conf", dir, (int)getpid());
	devnull = fopen("/dev/null", "w");
	if (!devnull)
		abort();
}

static void write_ini(const uint8_t *data, size_t size)
{
	int fd = open(ini, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

	if (fd < 0 || write(fd, data, size) != (ssize_t)size || close(fd) < 0)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *argv[] = { "cpusetd", "--config", ini, NULL };
	struct cpusetd_config *c = fuzz_malloc(sizeof(*c));
	FILE *saved = stderr;
	int r;

	write_ini(data, size);
	fuzz_canary(c, sizeof(*c));
	/* config_load prints its one error line; sanitizer and libFuzzer
	 * reports write to fd 2 themselves, so only stdio's stderr goes. */
	stderr = devnull;
	r = config_load(3, argv, c);
	stderr = saved;
	unlink(ini);
	FUZZ_CHECK(r == 0 || r == -EINVAL || r == -ENOMEM);
	if (r == 0)
		check_config(c);
	else
		FUZZ_CHECK(fuzz_untouched(c, sizeof(*c)));
	free(c);
	return 0;
}
