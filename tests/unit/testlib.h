/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Helpers shared by the cmocka unit tests; include after <cmocka.h>.
 * Each fails the running test on bad input rather than returning an error.
 */
#ifndef CPUSETD_TESTLIB_H
#define CPUSETD_TESTLIB_H

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "user/alloc/alloc_topo.h"
#include "user/base/cpumask.h"
#include "user/base/log.h"

/* A heap alloc_topo_generate() topology (free() it). */
static inline struct alloc_topo *tl_generate(unsigned sockets, unsigned nodes_per_socket,
					     unsigned cores_per_node, unsigned cpus_per_core)
{
	struct alloc_topo *t = calloc(1, sizeof(*t));

	assert_non_null(t);
	assert_int_equal(alloc_topo_generate(sockets, nodes_per_socket, cores_per_node,
					     cpus_per_core, t), 0);
	return t;
}

/* The set a cpulist names. */
static inline struct cpumask tl_mask(const char *list)
{
	struct cpumask m;

	assert_int_equal(cpulist_parse(list, &m), 0);
	return m;
}

/* Fails unless m formats as want (canonical cpulist). */
static inline void tl_assert_mask(const struct cpumask *m, const char *want)
{
	char buf[CPULIST_MAX];

	assert_true(cpulist_format(m, buf, sizeof(buf)) >= 0);
	if (strcmp(buf, want) != 0)
		fail_msg("cpus \"%s\", want \"%s\"", buf, want);
}

/*
 * The fixture root: $CPUSETD_FIXTURES, else tests/fixtures (the tests run
 * from the repository root; tests/fixtures/SOURCE.md says where each file
 * comes from).
 */
static inline const char *tl_fixtures(void)
{
	const char *env = getenv("CPUSETD_FIXTURES");

	return env && *env ? env : "tests/fixtures";
}

/*
 * Extracts the hwloc sysfs snapshot NAME (tests/fixtures/sysfs/NAME.tar.bz2)
 * into the existing directory dir; its root is then dir/<top>/sys, <top>
 * being the tarball's top-level directory (NAME.expect names it).
 * Returns 0, or -1 when tar failed (missing fixture, full disk).
 */
static inline int tl_extract_snapshot(const char *name, const char *dir)
{
	char cmd[4096];

	if (snprintf(cmd, sizeof(cmd), "tar -xjf '%s/sysfs/%s.tar.bz2' -C '%s'",
		     tl_fixtures(), name, dir) >= (int)sizeof(cmd))
		return -1;
	return system(cmd) == 0 ? 0 : -1;
}

static inline int tl_rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

/* Removes path and everything below it, children first, never following
 * a symlink. Best effort (a test's own temporary tree): what cannot be
 * removed stays. */
static inline void tl_rm_tree(const char *path)
{
	nftw(path, tl_rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

/*
 * A cmocka group setup over the sysfs snapshot NAME, whose tarball's top
 * directory is NAME too: logs quiet (LOG_CRIT) unless $CPUSETD_TEST_LOG
 * names a level (log_parse_level), since the refusals tested are logged
 * errors; dir_template ("/tmp/...XXXXXX", rewritten by mkdtemp) then
 * holds the snapshot, and ret_sysfs (len bytes) its /sys. Returns 0, or
 * -1 (the directory removed again) so that cmocka fails the group.
 */
static inline int tl_snapshot_group_setup(const char *name, char *dir_template,
					  char *ret_sysfs, size_t len)
{
	const char *lvl = getenv("CPUSETD_TEST_LOG");

	if (!lvl || log_parse_level(lvl, &log_max_level) < 0)
		log_max_level = LOG_CRIT;
	if (!mkdtemp(dir_template))
		return -1;
	if (tl_extract_snapshot(name, dir_template) < 0) {
		tl_rm_tree(dir_template);
		return -1;
	}
	snprintf(ret_sysfs, len, "%s/%s/sys", dir_template, name);
	return 0;
}

/* names[0..n) joined by single spaces into buf (len bytes, cut to fit);
 * returns buf ("" for n = 0). */
static inline const char *tl_join(const char *const *names, size_t n, char *buf, size_t len)
{
	buf[0] = '\0';
	for (size_t i = 0; i < n; i++) {
		if (i)
			strncat(buf, " ", len - strlen(buf) - 1);
		strncat(buf, names[i], len - strlen(buf) - 1);
	}
	return buf;
}

#endif
