// SPDX-License-Identifier: Apache-2.0
/*
 * config: the key groups of the allocation policy, the namespaces that
 * may use fixed-set annotations, the exports and the daemon's own
 * scheduling, each from the INI file and the command line, good and bad
 * values (fixture: test_config.h).
 */
#include "test_config.h"

/* The allocation-policy keys: every value each takes, from the file and
 * the command line, and one clear line for a bad one. */
static void test_policy_keys(void **state)
{
	const char *args[] = { "--config", ini, "--numa-topology-alignment-policy",
			       "single-numa-node", NULL };
	static const struct bad_line bad[] = {
		{ "cpu_bind_policy = fullpcpus", "expected FullPCPUs|SpreadByPCPUs|FullPCPUsOnly" },
		{ "cpu_exclusive_policy = Core", "expected None|PCPULevel|NUMANodeLevel" },
		{ "numa_allocate_strategy = Random", "expected MostAllocated" },
		{ "numa_topology_alignment_policy = strict", "expected None|BestEffort" },
		{ "topology_manager_scope = node", "expected container|pod" },
		{ "kubelet_compat = maybe", "expected true|false" },
		{ "kubelet_cpu_manager_policy_options = full-pcpus-only", "NAME=true|false" },
		{ "kubelet_cpu_manager_policy_options = full-pcpus-only=yes", "expected true or false" },
		{ "kubelet_cpu_manager_policy_options = strict-cpu-reservation=true", "known NAME" },
		{ "besteffort_pool = BE", "expected shared|be" },
		{ "integer_qos = LS", "expected LSE|LSR" },
		{ "reserved_cpus = 0-", "expected a cpulist" },
		{ "kubelet_state_file = relative/path", "absolute path" },
	};
	struct cpusetd_config c;

	(void)state;
	write_ini("cpu_bind_policy = SpreadByPCPUs\n"
		  "cpu-exclusive-policy = NUMANodeLevel\n"
		  "numa_allocate_strategy = DistributeEvenly\n"
		  "numa_topology_alignment_policy = Restricted\n"
		  "topology_manager_scope = pod\n"
		  "kubelet_compat = true\n"
		  "kubelet_cpu_manager_policy_options = full-pcpus-only=true,"
		  "distribute-cpus-across-numa=true,align-by-socket=false\n"
		  "besteffort_pool = be\n"
		  "integer_qos = LSR\n"
		  "reserved_cpus = 0,2\n"
		  "prefer_isolated_cpus = yes\n"
		  "kubelet_state_file =\n");
	assert_int_equal(load(&c, args), 0);
	assert_int_equal(c.policy.alloc.bind, KOORD_BIND_SPREAD_BY_PCPUS);
	assert_int_equal(c.policy.alloc.exclusive, KOORD_EXCL_NUMA);
	assert_int_equal(c.policy.alloc.numa, KOORD_NUMA_DISTRIBUTE_EVENLY);
	assert_int_equal(c.policy.alloc.align, NUMA_POLICY_SINGLE_NUMA_NODE);	/* CLI wins */
	assert_true(c.policy.alloc.pod_scope);
	assert_true(c.policy.alloc.kubelet_compat);
	assert_true(c.policy.alloc.kubelet.full_pcpus_only);
	assert_true(c.policy.alloc.kubelet.distribute_across_numa);
	assert_false(c.policy.alloc.kubelet.align_by_socket);
	assert_false(c.policy.alloc.kubelet.distribute_across_cores);
	assert_true(c.policy.besteffort_be_pool);
	assert_int_equal(c.policy.integer_qos, POLICY_QOS_LSR);
	assert_true(cpumask_test(&c.policy.reserved_cpus, 0));
	assert_true(cpumask_test(&c.policy.reserved_cpus, 2));
	assert_int_equal(cpumask_weight(&c.policy.reserved_cpus), 2);
	assert_true(c.policy.prefer_isolated);
	assert_string_equal(c.kubelet_state_file, "");

	assert_bad_lines(bad, ARRAY_SIZE(bad));
}

/* Who may use the fixed-set annotations: comma-separated namespace
 * patterns like isolate_host_skip's, "" = none, checked strictly (a
 * pattern that can never match a namespace is refused, not ignored). */
static void test_namespace_keys(void **state)
{
	static const struct {
		const char *ini, *argv, *cores, *status;
	} good[] = {
		{ "", NULL, "*", "*" },
		{ "cores_ids_namespaces = weka-system,storage-*\n", NULL, "weka-system,storage-*", "*" },
		{ "resource-status-namespaces = koord-[ab]?\n", NULL, "*", "koord-[ab]?" },
		{ "cores_ids_namespaces =\nresource_status_namespaces =\n", NULL, "", "" },
		{ "cores_ids_namespaces = a\n", "b,c", "b,c", "*" },	/* the command line wins */
		{ "cores_ids_namespaces = a\n", "", "", "*" },
		{ "cores_ids_namespaces = a,b,c,d,e,f,g,h,i,j,k,l,m,n,o,p\n", NULL,
		  "a,b,c,d,e,f,g,h,i,j,k,l,m,n,o,p", "*" },
	};
	static const struct bad_line bad[] = {
		{ "cores_ids_namespaces = Kube-System", "got 'Kube-System'" },
		{ "cores_ids_namespaces = a, b", "got ' b'" },
		{ "cores_ids_namespaces = a,,b", "got ''" },
		{ "cores_ids_namespaces = a,", "may not end in ','" },
		{ "cores_ids_namespaces = ,a", "got ''" },
		{ "resource_status_namespaces = ns/x", "expected comma-separated namespace patterns" },
		{ "resource_status_namespaces = a,b,c,d,e,f,g,h,i,j,k,l,m,n,o,p,q", "at most 16" },
	};
	const char *plain[] = { "--config", ini, NULL };
	struct cpusetd_config c;

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(good); i++) {
		const char *cli[] = { "--config", ini, "--cores-ids-namespaces", good[i].argv, NULL };

		write_ini(good[i].ini);
		print_message("good %zu\n", i);
		assert_int_equal(load(&c, good[i].argv ? cli : plain), 0);
		assert_string_equal(c.policy.cores_ids_namespaces, good[i].cores);
		assert_string_equal(c.policy.resource_status_namespaces, good[i].status);
	}
	assert_bad_lines(bad, ARRAY_SIZE(bad));
}

/* The Prometheus export: textfile ("" = off) and export_interval. */
static void test_export_keys(void **state)
{
	const char *args[] = { "--config", ini, "--export-interval", "60", NULL };
	const char *plain[] = { "--config", ini, NULL };
	static const struct bad_line bad[] = {
		{ "textfile = cpusetd.prom", "textfile: expected an absolute path" },
		{ "export_interval = 0", "expected seconds 1..86400, got '0'" },
		{ "export_interval = 86401", "got '86401'" },
		{ "export-interval = 1.5", "got '1.5'" },
	};
	struct cpusetd_config c;

	(void)state;
	write_ini("textfile = /tmp/prom/x.prom\nexport_interval = 5\n");
	assert_int_equal(load(&c, args), 0);
	assert_string_equal(c.textfile, "/tmp/prom/x.prom");
	assert_int_equal(c.export_interval_s, 60);	/* CLI wins */
	write_ini("textfile =\n");
	assert_int_equal(load(&c, plain), 0);
	assert_string_equal(c.textfile, "");
	assert_bad_lines(bad, ARRAY_SIZE(bad));
	write_ini("");
	const char *cli[] = { "--config", ini, "--textfile", "", NULL };
	assert_int_equal(load(&c, cli), 0);
	assert_string_equal(c.textfile, "");
}

/* The daemon's own scheduling: policy, priority (fifo, rr), nice (other),
 * run_on_reserved_cpus; every bad value and every pair the chosen policy
 * would ignore is one line and -EINVAL. */
static void test_sched_keys(void **state)
{
	static const struct {
		const char *text, *err;
	} bad[] = {
		{ "sched_policy = batch\n", ":1: sched_policy: expected other|fifo|rr, got 'batch'" },
		{ "sched_policy = FIFO\n", "expected other|fifo|rr, got 'FIFO'" },
		{ "sched_priority = 0\n", ":1: sched_priority: expected a priority 1..99, got '0'" },
		{ "sched_priority = 100\n", "expected a priority 1..99, got '100'" },
		{ "sched_priority = -1\n", "got '-1'" },
		{ "sched_priority = high\n", "got 'high'" },
		{ "sched_policy = other\nnice = -21\n", ":2: nice: expected a nice value -20..19, got '-21'" },
		{ "nice = 20\n", "expected a nice value -20..19, got '20'" },
		{ "nice = +1\n", "got '+1'" },
		{ "nice = --1\n", "got '--1'" },
		{ "nice = -\n", "got '-'" },
		{ "nice = 1.5\n", "got '1.5'" },
		{ "run_on_reserved_cpus = maybe\n", "expected true|false|yes|no|1|0, got 'maybe'" },
		/* fine alone, ignored by the policy chosen: refused */
		{ "sched_policy = other\nsched_priority = 10\n",
		  "cpusetd: sched_priority 10 needs sched_policy fifo or rr" },
		{ "nice = -5\n", "cpusetd: nice -5 needs sched_policy other" },
		{ "sched_policy = rr\nnice = 3\n", "cpusetd: nice 3 needs sched_policy other" },
	};
	const char *plain[] = { "--config", ini, NULL };
	const char *cli[] = { "--config", ini, "--sched-policy", "rr", "--sched-priority", "50",
			      "--run-on-reserved-cpus", "false", NULL };
	const char *cli_other[] = { "--config", ini, "--sched-policy", "other", "--nice", "-20", NULL };
	const char *cli_bad[] = { "--config", ini, "--sched-priority", "5", "--sched-policy",
				  "other", NULL };
	struct cpusetd_config c;

	(void)state;
	write_ini("sched_policy = rr\n");
	assert_int_equal(load(&c, plain), 0);
	assert_int_equal(c.sched_policy, SCHED_RR);
	assert_int_equal(c.sched_priority, CONFIG_DEFAULT_SCHED_PRIORITY);
	write_ini("sched_policy = other\nnice = -7\nrun-on-reserved-cpus = no\n");
	assert_int_equal(load(&c, plain), 0);
	assert_int_equal(c.sched_policy, SCHED_OTHER);
	assert_int_equal(c.sched_priority, 0);
	assert_int_equal(c.nice, -7);
	assert_false(c.run_on_reserved_cpus);
	write_ini("sched_priority = 99\nnice = 0\n");
	assert_int_equal(load(&c, plain), 0);
	assert_int_equal(c.sched_policy, SCHED_FIFO);
	assert_int_equal(c.sched_priority, 99);
	/* the command line over the file */
	write_ini("sched_policy = other\nnice = 19\n");
	assert_int_equal(load(&c, cli_other), 0);
	assert_int_equal(c.nice, -20);
	write_ini("sched_priority = 1\nrun_on_reserved_cpus = yes\n");
	assert_int_equal(load(&c, cli), 0);
	assert_int_equal(c.sched_policy, SCHED_RR);
	assert_int_equal(c.sched_priority, 50);
	assert_false(c.run_on_reserved_cpus);
	/* from the file: one line, the file's line when a value is bad */
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		write_ini(bad[i].text);
		assert_int_equal(load(&c, plain), -EINVAL);
		if (!strstr(err, bad[i].err) || strcmp(strchr(err, '\n'), "\n") != 0)
			fail_msg("%s: error \"%s\" lacks \"%s\" or is not one line", bad[i].text,
				 err, bad[i].err);
	}
	/* from the command line */
	write_ini("");
	assert_int_equal(load(&c, cli_bad), -EINVAL);
	assert_string_equal(err, "cpusetd: sched_priority 5 needs sched_policy fifo or rr "
			    "(other has no priority; use nice)\n");
	cli_bad[2] = "--nice";
	cli_bad[3] = "x";
	assert_int_equal(load(&c, cli_bad), -EINVAL);
	assert_string_equal(err, "cpusetd: --nice: expected a nice value -20..19, got 'x'\n");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_policy_keys),
		cmocka_unit_test(test_namespace_keys),
		cmocka_unit_test(test_export_keys),
		cmocka_unit_test(test_sched_keys),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
