/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Helpers shared by the test_policy_*.c unit tests (split from
 * test_policy.c): topologies built here as nodes × cores × threads, SMT
 * siblings consecutive (cpu = (node*cores + core)*threads + thread), and
 * policy_request builders. Include after <cmocka.h>.
 */
#ifndef CPUSETD_TEST_POLICY_H
#define CPUSETD_TEST_POLICY_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "testlib.h"
#include "user/policy/policy.h"

static inline struct topology *mk_topo(unsigned nodes, unsigned cores, unsigned threads)
{
	struct topology *t = calloc(1, sizeof(*t));
	unsigned cpu = 0;

	for (unsigned n = 0; n < nodes; n++)
		for (unsigned c = 0; c < cores; c++)
			for (unsigned th = 0; th < threads; th++, cpu++) {
				unsigned first = cpu - th;

				cpumask_set(&t->present, cpu);
				cpumask_set(&t->online, cpu);
				cpumask_set(&t->node_cpus[n], cpu);
				cpumask_set(&t->core_cpus[first], cpu);
				t->cpu[cpu] = (struct topo_cpu){ .core = (int)first, .package = 0,
								 .node = (int)n };
			}
	for (unsigned n = 0; n < nodes; n++)
		cpumask_set(&t->nodes, n);
	t->n_cores = nodes * cores;
	t->n_packages = 1;
	t->threads_per_core = threads;
	return t;
}

struct fixture {
	struct topology *topo;
	struct policy *p;
};

static inline struct fixture fx(unsigned nodes, unsigned cores, unsigned threads,
			 enum policy_on_error on_error)
{
	struct policy_config cfg = { .min_shared_cpus = 1, .on_error = on_error,
				     .cores_ids_namespaces = "*",
				     .resource_status_namespaces = "*" };
	struct fixture f = { .topo = mk_topo(nodes, cores, threads) };

	assert_int_equal(policy_new(f.topo, &cfg, &f.p), 0);
	return f;
}

static inline void fx_free(struct fixture *f)
{
	policy_free(f->p);
	topo_free(f->topo);
}

static inline struct policy_request integer(const char *id, int ncpu)
{
	return (struct policy_request){ .container_id = id, .pod_uid = id, .name = id,
					.qos = POD_QOS_GUARANTEED,
					.quota_us = ncpu * 100000, .period_us = 100000 };
}

static inline struct policy_request annotated(const char *id, const char *cores)
{
	return (struct policy_request){ .container_id = id, .pod_uid = id, .name = id,
					.qos = POD_QOS_BURSTABLE, .cores_ids = cores,
					.quota_us = -1, .period_us = 100000 };
}

static inline struct policy_request shared(const char *id)
{
	return (struct policy_request){ .container_id = id, .pod_uid = id, .name = id,
					.qos = POD_QOS_BURSTABLE, .quota_us = 50000,
					.period_us = 100000 };
}

static inline void assert_pool(const struct policy *p, const char *want)
{
	struct cpumask pool;

	policy_shared_pool(p, &pool);
	tl_assert_mask(&pool, want);
}

static inline struct policy_request in_ns(struct policy_request r, const char *ns)
{
	r.namespace_ = ns;
	return r;
}

static inline struct policy_request scheduled(const char *id, const struct pod_policy_ann *a)
{
	return (struct policy_request){ .container_id = id, .pod_uid = id, .name = id,
					.qos = POD_QOS_BURSTABLE, .pod = a,
					.quota_us = -1, .period_us = 100000 };
}

static inline struct policy_request running(struct policy_request r)
{
	r.running = true;
	return r;
}


#endif
