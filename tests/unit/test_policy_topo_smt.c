// SPDX-License-Identifier: Apache-2.0
/*
 * kubelet's full-pcpus-only on SMT4 / SMT8 machines: synthetic ones
 * (some with an offline sibling, one hybrid) and the POWER7 snapshot
 * 256ppc-8n8s4t from tests/fixtures/sysfs; the helpers and the group
 * setup are test_policy_topo.h's.
 */
#include "test_policy_topo.h"

/* --- full-pcpus-only on SMT4 / SMT8 machines (issue 11, point 7) --- */

/*
 * A synthetic machine: `wide` cores of `width` SMT siblings, then `narrow`
 * cores of `narrow_width` (a hybrid part's cores without SMT); siblings
 * have consecutive ids, as on POWER; cores split evenly over `nodes` NUMA
 * nodes. The CPUs of `offline` are left out, as alloc_topo_from_topology
 * leaves out offline CPUs.
 */
struct smt_shape {
	unsigned wide, width, narrow, narrow_width, nodes;
	const char *offline;
};

static const struct smt_shape smt4 = { 16, 4, 0, 0, 2, "" },
	smt4_off = { 16, 4, 0, 0, 2, "3" },		/* one sibling offline */
	smt4_off_all = { 16, 4, 0, 0, 2,		/* ppc64_cpu --smt=3 */
			 "3,7,11,15,19,23,27,31,35,39,43,47,51,55,59,63" },
	smt8 = { 8, 8, 0, 0, 2, "" },
	smt8_off = { 8, 8, 0, 0, 2, "7" },
	smt2 = { 16, 2, 0, 0, 2, "" },
	hybrid = { 6, 2, 8, 1, 1, "" };			/* 6 P-cores x2 + 8 E-cores */

static struct alloc_topo *smt_topo(const struct smt_shape *s)
{
	struct alloc_cpu_desc d[CPUSETD_MAX_CPUS];
	struct alloc_topo *t = calloc(1, sizeof(*t));
	struct cpumask off = tl_mask(s->offline);
	unsigned n = 0, cpu = 0, cores = s->wide + s->narrow;

	assert_non_null(t);
	for (unsigned c = 0; c < cores; c++) {
		unsigned w = c < s->wide ? s->width : s->narrow_width;

		for (unsigned k = 0; k < w; k++, cpu++)
			if (!cpumask_test(&off, cpu))
				d[n++] = (struct alloc_cpu_desc){
					.cpu = cpu, .core = c, .socket = 0,
					.node = (int)(c * s->nodes / cores),
					.uncore = (long)(c * s->nodes / cores),
				};
	}
	assert_int_equal(alloc_topo_build(d, n, t), 0);
	return t;
}

/* cpus_per_core is the SMT width the machine runs, not CPUs / cores:
 * an offline sibling or a core without SMT does not lower it. */
static void test_smt_width(void **state)
{
	static const struct {
		const struct smt_shape *shape;
		unsigned cpus_per_core;
	} cases[] = {
		{ &smt2, 2 }, { &smt4, 4 }, { &smt8, 8 },
		{ &smt4_off, 4 },	/* 63 / 16 = 3 */
		{ &smt8_off, 8 },	/* 63 / 8 = 7 */
		{ &smt4_off_all, 3 },	/* every core runs 3 siblings */
		{ &hybrid, 2 },		/* 20 / 14 = 1 */
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct alloc_topo *t = smt_topo(cases[i].shape);

		if (t->cpus_per_core != cases[i].cpus_per_core)
			fail_msg("case %zu: cpus_per_core %u, want %u", i, t->cpus_per_core,
				 cases[i].cpus_per_core);
		free(t);
	}
}

enum smt_engine { E_KUBE, E_KUBE_NUMA, E_KOORD };

/* Whole cores only: every core m touches has all its siblings in m, and
 * as many as the SMT width. */
static bool whole_smt_cores(const struct alloc_topo *t, const struct cpumask *m)
{
	int cpu;

	cpumask_for_each(cpu, m) {
		const struct cpumask *core = &t->core_cpus[t->core_of[cpu]];

		if (!cpumask_subset(core, m) || cpumask_weight(core) != t->cpus_per_core)
			return false;
	}
	return true;
}

/* The first `n` CPUs of the machine's full-width cores, lowest ids. */
static struct cpumask first_whole_cores(const struct alloc_topo *t, unsigned n)
{
	struct cpumask m;

	cpumask_zero(&m);
	for (unsigned c = 0; c < t->n_cores && cpumask_weight(&m) < n; c++)
		if (cpumask_weight(&t->core_cpus[c]) == t->cpus_per_core)
			cpumask_or(&m, &m, &t->core_cpus[c]);
	return m;
}

/*
 * Every path that allocates under full-pcpus-only / FullPCPUsOnly
 * (admission by either engine, kubelet's distributed take, in-place
 * resize) refuses a request that is not a multiple of the SMT width with
 * kubelet's words, and hands out whole cores for one that is, also when
 * a sibling is offline (there CPUs / cores used to give 3 on SMT4).
 */
static void test_full_pcpus_smt(void **state)
{
	static const char kube15_4[] =
		"SMT Alignment Error: requested 15 cpus not multiple cpus per core = 4";
	static const struct {
		const struct smt_shape *shape;
		enum smt_engine engine;
		unsigned held;		/* resize: CPUs held (whole cores); 0 = admission */
		unsigned n;
		int rc;
		const char *reason;	/* exact, on error */
		const char *free;	/* cpulist; NULL = every CPU */
		const char *reserved;	/* cpulist; NULL = none */
	} cases[] = {
		{ &smt4, E_KUBE, 0, 15, -EDOM, kube15_4, NULL, NULL },
		{ &smt4, E_KUBE, 0, 16, 0, NULL, NULL, NULL },
		{ &smt4_off, E_KUBE, 0, 15, -EDOM, kube15_4, NULL, NULL },
		{ &smt4_off, E_KUBE, 0, 16, 0, NULL, NULL, NULL },
		{ &smt4_off, E_KUBE, 0, 20, 0, NULL, NULL, NULL },	/* more than node 0's 15 */
		{ &smt4_off, E_KUBE, 0, 60, 0, NULL, NULL, NULL },	/* every full-width core */
		{ &smt4_off, E_KUBE, 0, 61, -EDOM,
		  "SMT Alignment Error: requested 61 cpus not multiple cpus per core = 4",
		  NULL, NULL },
		/* a reserved sibling takes core 1, the narrow core 0 is no
		 * physical CPU either: 8 left, not 11 */
		{ &smt4_off, E_KUBE, 0, 12, -EDOM,
		  "SMT Alignment Error: not enough free physical CPUs: available physical "
		  "CPUs = 8, requested CPUs = 12, CPUs per core = 4", "0-2,5-15", "4" },
		{ &smt4_off, E_KUBE, 0, 8, 0, NULL, "0-2,5-15", "4" },
		{ &smt4_off, E_KUBE_NUMA, 0, 15, -EDOM, kube15_4, NULL, NULL },
		{ &smt4_off, E_KUBE_NUMA, 0, 16, 0, NULL, NULL, NULL },
		{ &smt4_off, E_KUBE_NUMA, 0, 40, 0, NULL, NULL, NULL },
		{ &smt4_off, E_KOORD, 0, 15, -EDOM,
		  "FullPCPUsOnly: 15 CPUs is not a multiple of the 4 CPUs of a core", NULL, NULL },
		{ &smt4_off, E_KOORD, 0, 16, 0, NULL, NULL, NULL },
		{ &smt4_off, E_KUBE, 8, 15, -EDOM, kube15_4, NULL, NULL },
		{ &smt4_off, E_KUBE, 8, 16, 0, NULL, NULL, NULL },
		{ &smt4_off, E_KUBE_NUMA, 8, 15, -EDOM, kube15_4, NULL, NULL },
		{ &smt4_off, E_KUBE_NUMA, 8, 24, 0, NULL, NULL, NULL },
		{ &smt4_off, E_KOORD, 8, 15, -EDOM, kube15_4, NULL, NULL },
		{ &smt4_off, E_KOORD, 8, 16, 0, NULL, NULL, NULL },
		{ &smt4_off_all, E_KUBE, 0, 15, 0, NULL, NULL, NULL },	/* 5 cores of 3 */
		{ &smt4_off_all, E_KUBE, 0, 16, -EDOM,
		  "SMT Alignment Error: requested 16 cpus not multiple cpus per core = 3",
		  NULL, NULL },
		{ &smt8, E_KUBE, 0, 15, -EDOM,
		  "SMT Alignment Error: requested 15 cpus not multiple cpus per core = 8",
		  NULL, NULL },
		{ &smt8_off, E_KUBE, 0, 15, -EDOM,
		  "SMT Alignment Error: requested 15 cpus not multiple cpus per core = 8",
		  NULL, NULL },
		{ &smt8_off, E_KUBE, 0, 12, -EDOM,
		  "SMT Alignment Error: requested 12 cpus not multiple cpus per core = 8",
		  NULL, NULL },
		{ &smt8_off, E_KUBE, 0, 16, 0, NULL, NULL, NULL },
		{ &smt8_off, E_KUBE, 0, 32, 0, NULL, NULL, NULL },	/* more than node 0's 31 */
		{ &smt8_off, E_KUBE_NUMA, 0, 48, 0, NULL, NULL, NULL },
		{ &smt8_off, E_KOORD, 0, 15, -EDOM,
		  "FullPCPUsOnly: 15 CPUs is not a multiple of the 8 CPUs of a core", NULL, NULL },
		{ &smt8_off, E_KOORD, 0, 16, 0, NULL, NULL, NULL },
		{ &smt8_off, E_KUBE, 8, 15, -EDOM,
		  "SMT Alignment Error: requested 15 cpus not multiple cpus per core = 8",
		  NULL, NULL },
		{ &smt8_off, E_KUBE, 8, 16, 0, NULL, NULL, NULL },
		{ &hybrid, E_KUBE, 0, 3, -EDOM,
		  "SMT Alignment Error: requested 3 cpus not multiple cpus per core = 2",
		  NULL, NULL },
		{ &hybrid, E_KUBE, 0, 12, 0, NULL, NULL, NULL },
		{ &hybrid, E_KOORD, 0, 12, 0, NULL, NULL, NULL },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct alloc_topo *t = smt_topo(cases[i].shape);
		struct policy_alloc_config c = {
			.bind = KOORD_BIND_FULL_PCPUS_ONLY,
			.kubelet_compat = cases[i].engine != E_KOORD,
			.kubelet = { .full_pcpus_only = true,
				     .distribute_across_numa = cases[i].engine == E_KUBE_NUMA },
		};
		struct policy_alloc_req req = { .n = cases[i].n, .free = t->cpus };
		struct policy_alloc_result res;
		struct cpumask held = first_whole_cores(t, cases[i].held), reserved;
		char why[256] = "";
		int r;

		if (cases[i].free)
			req.free = tl_mask(cases[i].free);
		if (cases[i].reserved) {
			reserved = tl_mask(cases[i].reserved);
			req.reserved = &reserved;
		}
		if (cases[i].held)
			req.allocated = req.baseline = &held;
		r = policy_alloc_choose(t, &c, &req, &res, why, sizeof(why));
		if (r != cases[i].rc)
			fail_msg("case %zu: rc %d (%s), want %d", i, r, why, cases[i].rc);
		if (r < 0) {
			if (strcmp(why, cases[i].reason) != 0)
				fail_msg("case %zu: reason \"%s\", want \"%s\"", i, why,
					 cases[i].reason);
		} else {
			assert_int_equal(cpumask_weight(&res.cpus), cases[i].n);
			if (!whole_smt_cores(t, &res.cpus))
				fail_msg("case %zu: split or narrow core in the answer", i);
			assert_true(cpumask_subset(&held, &res.cpus));
		}
		free(t);
	}
}

/*
 * The POWER7 snapshot 256ppc-8n8s4t (SMT4, 64 cores, 8 nodes) through the
 * whole policy, kubelet engine with full-pcpus-only: with CPU 3 offline a
 * 15-CPU container is refused as kubelet would refuse it, a 16-CPU one
 * gets 4 whole cores, and a resize to 19 leaves it where it is.
 */
static void test_full_pcpus_power(void **state)
{
	struct policy_config c = base_cfg();
	struct policy_request a = integer("a", "pa", 16, NULL);
	struct policy_decision d;
	struct topology *ppc;
	struct policy *p;
	char cmd[2048], root[1024];
	int cpu;

	(void)state;
	snprintf(cmd, sizeof(cmd), "tar -xjf '%s/sysfs/256ppc-8n8s4t.tar.bz2' -C '%s' "
		 "256ppc-8n8s4t/sys/devices/system", fixtures, tmpdir);
	assert_int_equal(system(cmd), 0);
	snprintf(root, sizeof(root), "%s/256ppc-8n8s4t/sys", tmpdir);
	assert_int_equal(topo_read(root, &ppc), 0);
	assert_int_equal(ppc->threads_per_core, 4);
	cpumask_clear(&ppc->online, 3);
	c.alloc.kubelet_compat = true;
	c.alloc.kubelet.full_pcpus_only = true;
	assert_int_equal(policy_new(ppc, &c, &p), 0);
	d = admit(p, integer("odd", "po", 15, NULL), -EDOM);
	assert_int_equal(d.err, POLICY_ERR_SMT_ALIGNMENT);
	assert_string_equal(d.reason, "SMT Alignment Error: requested 15 cpus not multiple "
			    "cpus per core = 4");
	d = admit(p, a, 0);
	assert_int_equal(cpumask_weight(&d.cpus), 16);
	assert_false(cpumask_test(&d.cpus, 0));		/* core 0 lost a sibling */
	cpumask_for_each(cpu, &d.cpus)		/* 4 whole cores */
		assert_true(cpumask_subset(topo_core_cpus(ppc, (unsigned)cpu), &d.cpus));
	assert_int_equal(resize(p, a, 19000, &d), -EDOM);
	assert_int_equal(d.err, POLICY_ERR_SMT_ALIGNMENT);
	assert_non_null(strstr(d.reason, "SMT Alignment Error: requested 19 cpus not multiple "
			       "cpus per core = 4"));
	assert_int_equal(cpumask_weight(&policy_lookup(p, "a")->cpus), 16);
	assert_int_equal(resize(p, a, 24000, &d), 1);
	assert_int_equal(cpumask_weight(&d.cpus), 24);
	policy_free(p);
	topo_free(ppc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_smt_width),
		cmocka_unit_test(test_full_pcpus_smt),
		cmocka_unit_test(test_full_pcpus_power),
	};

	return cmocka_run_group_tests_name("policy full-pcpus-only on SMT2/4/8 machines", tests,
					   setup, teardown);
}
