/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Helpers shared by the cmocka unit tests; include after <cmocka.h>.
 * Each fails the running test on bad input rather than returning an error.
 */
#ifndef CPUSETD_TESTLIB_H
#define CPUSETD_TESTLIB_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "user/alloc/alloc_topo.h"
#include "user/base/cpumask.h"

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

#endif
