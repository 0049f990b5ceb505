/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The fixture of the test_policy_topo*.c unit tests: the hwloc snapshot
 * 64amd64-4s2n4ca2co (4 packages, 8 NUMA nodes of 8 CPUs, cores of 2 SMT
 * siblings n,n+1; node k = CPUs 8k..8k+7), read from tests/fixtures/sysfs
 * through topo_read by the group setup, and the policy, request and
 * resize helpers the tests share.
 */
#ifndef CPUSETD_TEST_POLICY_TOPO_H
#define CPUSETD_TEST_POLICY_TOPO_H

#ifdef __bpf__
#error "user-space header: BPF programs share only maps/cpusetd.h"
#endif

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "testlib.h"
#include "user/config/config.h"
#include "user/policy/policy.h"
#include "user/policy/policy_alloc.h"

static char fixtures[512];
static char tmpdir[] = "/tmp/test_policy_topo.XXXXXX";
static struct topology *topo;

struct fx {
	struct policy_config cfg;
	struct policy *p;
};

static inline struct policy_config base_cfg(void)
{
	struct policy_config c = { .min_shared_cpus = 1, .on_error = POLICY_ON_ERROR_REJECT };

	config_policy_defaults(&c);
	return c;
}

static inline struct policy *mk(const struct policy_config *c)
{
	struct policy *p;

	assert_int_equal(policy_new(topo, c, &p), 0);
	return p;
}

/* A Guaranteed container of n CPUs; pod annotations optional. */
static inline struct policy_request integer(const char *id, const char *pod, unsigned n,
				     const struct pod_policy_ann *ann)
{
	return (struct policy_request){ .container_id = id, .pod_uid = pod, .name = id,
					.qos = POD_QOS_GUARANTEED, .quota_us = n * 100000,
					.period_us = 100000, .pod = ann };
}

static inline struct policy_decision admit(struct policy *p, struct policy_request req, int rc)
{
	struct policy_decision d;
	int r = policy_admit(p, &req, &d);

	if (r != rc)
		fail_msg("%s: rc %d (%s), want %d", req.container_id, r, d.reason, rc);
	return d;
}

static inline unsigned nodes_of(const struct cpumask *cpus)
{
	struct cpumask n;

	assert_int_equal(topo_nodes_of(topo, cpus, &n), 0);
	return cpumask_weight(&n);
}

/* Physical cores touched by cpus, and how many of them are whole. */
static inline void cores_of(const struct cpumask *cpus, unsigned *ret_cores, unsigned *ret_whole)
{
	struct cpumask seen;
	int id;

	cpumask_zero(&seen);
	*ret_cores = *ret_whole = 0;
	cpumask_for_each(id, cpus) {
		unsigned core = (unsigned)topo->cpu[id].core;

		if (cpumask_test(&seen, core))
			continue;
		cpumask_set(&seen, core);
		(*ret_cores)++;
		if (cpumask_subset(topo_core_cpus(topo, core), cpus))
			(*ret_whole)++;
	}
}

/* policy_resize of req to milli CPUs (its quota, period 100 ms). */
static inline int resize(struct policy *p, struct policy_request req, unsigned milli,
		  struct policy_decision *ret)
{
	req.quota_us = milli * 100;
	return policy_resize(p, &req, ret);
}

static inline int setup(void **state)
{
	char root[1024];

	(void)state;
	snprintf(fixtures, sizeof(fixtures), "%s", tl_fixtures());
	if (!mkdtemp(tmpdir))
		return -1;
	if (tl_extract_snapshot("64amd64-4s2n4ca2co", tmpdir) < 0)
		return -1;
	snprintf(root, sizeof(root), "%s/64amd64-4s2n4ca2co/sys", tmpdir);
	return topo_read(root, &topo) == 0 ? 0 : -1;
}

static inline int teardown(void **state)
{
	char cmd[256];

	(void)state;
	topo_free(topo);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	return system(cmd);
}

#endif
