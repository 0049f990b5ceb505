// SPDX-License-Identifier: Apache-2.0
/*
 * bench-alloc: how long one allocation decision takes on a big machine.
 *
 * Builds a 1024-CPU topology (2 sockets × 8 NUMA nodes × 32 cores × 2
 * threads: 16 nodes of 64 CPUs) and times, per call, with the machine
 * a third full (every third core of each node held by earlier pods):
 *   - the Koordinator accumulator (koord_alloc), FullPCPUs and
 *     SpreadByPCPUs, MostAllocated;
 *   - kubelet's NUMA-packed and NUMA-distributed takes (kube_take_*);
 *   - Topology Manager hints + merge + admission (numa_cpu_hints +
 *     numa_admit, best-effort);
 *   - the whole policy admission of an integer container (classify, align,
 *     allocate, record) and its release, Koordinator and kubelet engines.
 * Prints median and p99 in microseconds for each, over ROUNDS calls.
 *
 *   bench-alloc [-r ROUNDS]
 * Pure CPU work: no root, no cgroups.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "user/config/config.h"
#include "user/alloc/koord_alloc.h"
#include "user/alloc/kube_alloc.h"
#include "user/alloc/numa_align.h"
#include "user/policy/policy.h"

#define SOCKETS 2
#define NODES_PER_SOCKET 8
#define CORES_PER_NODE 32
#define THREADS 2
#define NCPU (SOCKETS * NODES_PER_SOCKET * CORES_PER_NODE * THREADS)

static struct alloc_topo at;
static struct cpumask avail;		/* two thirds of the cores free */
static struct koord_cpu_usage usage[CPUSETD_MAX_CPUS];

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

typedef int (*op_fn)(unsigned n);

/* Times rounds calls of fn(n); prints median and p99. Exits on error. */
static void run(const char *name, op_fn fn, unsigned n, int rounds)
{
	double *t = malloc(sizeof(*t) * rounds);

	for (int i = 0; i < rounds; i++) {
		double t0 = now_us();

		if (fn(n) < 0) {
			fprintf(stderr, "bench-alloc: %s n=%u failed\n", name, n);
			exit(1);
		}
		t[i] = now_us() - t0;
	}
	qsort(t, rounds, sizeof(*t), cmp_double);
	printf("%-34s n=%-4u median %8.1f us   p99 %8.1f us\n", name, n, t[rounds / 2],
	       t[rounds * 99 / 100]);
	free(t);
}

static int koord(unsigned n, enum koord_bind_policy bind)
{
	struct koord_request r = { .n = n, .bind = bind, .max_ref_count = 1 };
	struct cpumask out;

	return koord_alloc(&at, &avail, usage, &r, &out, NULL, 0);
}

static int koord_full(unsigned n) { return koord(n, KOORD_BIND_FULL_PCPUS); }
static int koord_spread(unsigned n) { return koord(n, KOORD_BIND_SPREAD_BY_PCPUS); }

static int kube_packed(unsigned n)
{
	struct kube_alloc_opts o = { .sorting = KUBE_SORT_PACKED };
	struct cpumask out;

	return kube_take_packed(&at, &avail, n, &o, &out, NULL, 0);
}

static int kube_distributed(unsigned n)
{
	struct kube_alloc_opts o = { .distribute_across_numa = true, .cpu_group_size = 2 };
	struct cpumask out;

	return kube_take_distributed(&at, &avail, n, &o, &out, NULL, 0);
}

static int numa_hint(unsigned n)
{
	struct numa_hints h;
	struct numa_hint best;
	int r = numa_cpu_hints(&at, &avail, NULL, n, &h);

	return r < 0 ? r : numa_admit(&at, NUMA_POLICY_BEST_EFFORT, NULL, &h, 1, &best, NULL, 0);
}

/* The daemon's own path: a policy over a struct topology of the same shape. */
static struct topology *topo;
static struct policy *pol_koord, *pol_kube;

static int admit_release(struct policy *p, unsigned n)
{
	struct policy_request req = { .container_id = "bench", .pod_uid = "pod", .name = "bench",
				      .qos = POD_QOS_GUARANTEED, .quota_us = n * 100000,
				      .period_us = 100000 };
	struct policy_decision d;
	int r = policy_admit(p, &req, &d);

	policy_release(p, "bench");
	return r;
}

static int policy_koord(unsigned n) { return admit_release(pol_koord, n); }
static int policy_kube(unsigned n) { return admit_release(pol_kube, n); }

static void build_topology(void)
{
	unsigned per_node = CORES_PER_NODE * THREADS;

	if (alloc_topo_generate(SOCKETS, NODES_PER_SOCKET, CORES_PER_NODE, THREADS, &at) < 0)
		exit(1);
	topo = calloc(1, sizeof(*topo));
	for (unsigned cpu = 0; cpu < NCPU; cpu++) {
		unsigned core = cpu - cpu % THREADS, node = cpu / per_node;

		cpumask_set(&topo->present, cpu);
		cpumask_set(&topo->online, cpu);
		cpumask_set(&topo->node_cpus[node], cpu);
		cpumask_set(&topo->nodes, node);
		cpumask_set(&topo->core_cpus[core], cpu);
		topo->cpu[cpu] = (struct topo_cpu){ .core = (int)core, .node = (int)node,
						    .package = node / NODES_PER_SOCKET, .l3 = (int)node };
	}
	/* A third of every node's cores already held (PCPULevel). */
	avail = at.cpus;
	for (unsigned cpu = 0; cpu < NCPU; cpu++)
		if ((cpu / THREADS) % 3 == 0) {
			cpumask_clear(&avail, cpu);
			usage[cpu] = (struct koord_cpu_usage){ .refs = 1, .excl = KOORD_EXCL_PCPU };
		}
}

/* Policies holding the same third of the machine, in 2-CPU containers. */
static struct policy *mk_policy(bool kubelet)
{
	struct policy_config c = { .min_shared_cpus = 1 };
	struct policy *p;
	char id[32];

	config_policy_defaults(&c);
	c.alloc.kubelet_compat = kubelet;
	c.alloc.align = NUMA_POLICY_BEST_EFFORT;
	if (policy_new(topo, &c, &p) < 0)
		exit(1);
	for (unsigned core = 0; core < NCPU / THREADS; core += 3) {
		char cores[16];
		struct policy_request r = { .container_id = id, .name = id, .pod_uid = id,
					    .cores_ids = cores, .qos = POD_QOS_BURSTABLE,
					    .quota_us = -1 };
		struct policy_decision d;

		snprintf(id, sizeof(id), "held%u", core);
		snprintf(cores, sizeof(cores), "%u-%u", core * THREADS, core * THREADS + 1);
		policy_admit(p, &r, &d);
	}
	return p;
}

int main(int argc, char **argv)
{
	static const unsigned sizes[] = { 4, 16, 64, 256 };
	int rounds = 2000, c;

	while ((c = getopt(argc, argv, "r:")) != -1) {
		if (c != 'r' || (rounds = atoi(optarg)) < 100) {
			fprintf(stderr, "usage: bench-alloc [-r ROUNDS >= 100]\n");
			return 2;
		}
	}
	build_topology();
	pol_koord = mk_policy(false);
	pol_kube = mk_policy(true);
	printf("bench-alloc: %u CPUs, %u NUMA nodes, %d rounds, a third of the cores held\n",
	       NCPU, at.n_nodes, rounds);
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		unsigned n = sizes[i];

		run("koord_alloc FullPCPUs", koord_full, n, rounds);
		run("koord_alloc SpreadByPCPUs", koord_spread, n, rounds);
		run("kube_take_packed", kube_packed, n, rounds);
		run("kube_take_distributed (group 2)", kube_distributed, n, rounds);
		run("numa hints+admit (best-effort)", numa_hint, n, rounds);
		run("policy admit+release (koordinator)", policy_koord, n, rounds);
		run("policy admit+release (kubelet)", policy_kube, n, rounds);
	}
	policy_free(pol_koord);
	policy_free(pol_kube);
	free(topo);
	return 0;
}
