// SPDX-License-Identifier: Apache-2.0
/*
 * export_prom: the Prometheus text renderer. Label escaping of hostile
 * names, exposition rules (HELP/TYPE once per family, families contiguous,
 * "_total" exactly on counters, one "cpusetd_" prefix), cumulative
 * histograms with le in seconds (and the run-queue slots summed into
 * configured bounds), the telemetry joins (per CPU, per container by
 * cgroup id), and cardinality: which containers get series
 * (export_containers; sandboxes never), no cpulist on a series that
 * carries a figure or on a pooled container, and label names that do not
 * clash with kube-prometheus' target labels. Pure: no files.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "user/export/export_prom.h"
#include "tests/unit/testlib.h"

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

static const uint64_t conv_le[3] = { 25000, 1000000, 2500000000ULL };
static const uint64_t conv_bucket[4] = { 1, 0, 2, 3 };
static const char *const reasons[] = { "invalid_annotation", "insufficient_cpus" };
static const uint64_t reason_counts[] = { 0, 4 };

/* Two CPUs: 0 shared, 1 owned by an integer container; [1] a shared
 * container with an admission error, [2] a plain shared container, [3]
 * a sandbox. */
static struct export_container cts[4];
static struct export_view view;

static int setup(void **state)
{
	(void)state;
	cts[0] = (struct export_container){
		.namespace_ = "prod", .pod = "db-0", .container = "pg",
		.container_id = "e1d2", .kind = "integer", .qos = "Guaranteed",
		.qos_class = "LSE", .cpus = tl_mask("1"), .mems = tl_mask("0"),
		.exclusive = true, .cgroup_id = 42,
	};
	cts[1] = (struct export_container){
		.namespace_ = "web", .pod = "nginx", .container = "front",
		.container_id = "9f2c", .kind = "shared", .qos = "Burstable", .qos_class = "",
		.cpus = tl_mask("0"), .cgroup_id = 7,
		.error = "insufficient_cpus", .error_action = "shared",
	};
	cts[2] = (struct export_container){
		.namespace_ = "web", .pod = "nginx", .container = "nginx",
		.container_id = "77aa", .kind = "shared", .qos = "Burstable", .qos_class = "LS",
		.cpus = tl_mask("0"), .cgroup_id = 8,
	};
	cts[3] = (struct export_container){
		.namespace_ = "prod", .pod = "db-0", .container = "POD",
		.container_id = "5b5b", .kind = "shared", .qos = "Guaranteed", .qos_class = "",
		.cpus = tl_mask("0"), .cgroup_id = 9, .sandbox = true,
	};
	view = (struct export_view){
		.version = "0.1.0", .revision = "v0.1.0-3-gabc1234", .cgroup_mode = "v1",
		.bpf_attach = "tp_btf",
		.online = tl_mask("0-1"), .shared_pool = tl_mask("0"), .be_pool = tl_mask("0"),
		.reserved = tl_mask("1"), .containers = cts, .n_containers = ARRAY_SIZE(cts),
		.error_reasons = reasons, .error_counts = reason_counts,
		.n_error_reasons = ARRAY_SIZE(reasons),
		.n = { .events = 41, .cgroup_writes = 9, .cgroup_write_errors = 1,
		       .resync_failures = 2, .inplace_resizes = 5, .inplace_resizes_refused = 6,
		       .hotplug_changes = 3, .hotplug_replacements = 7, .hotplug_shortfalls = 8 },
		.convergence = { .n = 3, .le_ns = conv_le, .bucket = conv_bucket,
				 .sum_ns = 1500000000ULL },
		.last_sync_s = 1700000000.25,
		.update_s = 1700000100.5,
	};
	return 0;
}

static char *render(void)
{
	char *text = NULL;
	size_t len = 0;

	assert_int_equal(export_prom_render(&view, &text, &len), 0);
	assert_non_null(text);
	assert_int_equal(strlen(text), len);
	return text;
}

static void assert_has(const char *text, const char *line)
{
	char want[1024];

	snprintf(want, sizeof(want), "\n%s\n", line);
	if (strncmp(text, line, strlen(line)) != 0 && !strstr(text, want))
		fail_msg("no line '%s' in:\n%s", line, text);
}

static void assert_lacks(const char *text, const char *part)
{
	if (strstr(text, part))
		fail_msg("'%s' should not be in the output", part);
}

/* --- escaping --- */

struct esc_case {
	const char *in, *out;
};

static const struct esc_case esc_cases[] = {
	{ "plain-name", "plain-name" },
	{ "a\"b", "a\\\"b" },
	{ "back\\slash", "back\\\\slash" },
	{ "two\nlines", "two\\nlines" },
	{ "\"} 1\ncpusetd_evil 1\n#", "\\\"} 1\\ncpusetd_evil 1\\n#" },
	{ "tab\tand\rcr\x1b[2J", "tab?and?cr?[2J" },	/* legal, but no use to anyone: a terminal would obey them */
	{ "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80" },
	{ "bad\xff", "bad\xef\xbf\xbd" },
	{ "cut\xe2\x82", "cut\xef\xbf\xbd\xef\xbf\xbd" },	/* truncated sequence */
	{ "over\xc0\xaf", "over\xef\xbf\xbd\xef\xbf\xbd" },	/* overlong '/' */
	{ "surr\xed\xa0\x80", "surr\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd" },
	{ "", "" },
};

static void test_escape_table(void **state)
{
	char buf[256];

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(esc_cases); i++) {
		int n = export_label_escape(esc_cases[i].in, buf, sizeof(buf));

		if (n < 0 || strcmp(buf, esc_cases[i].out) != 0)
			fail_msg("case %zu: got '%s' (%d), want '%s'", i, buf, n, esc_cases[i].out);
		assert_int_equal(n, strlen(esc_cases[i].out));
	}
	assert_int_equal(export_label_escape(NULL, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "");
}

static void test_escape_nospace(void **state)
{
	char buf[5];

	(void)state;
	assert_int_equal(export_label_escape("ab\"cd", buf, sizeof(buf)), -ENOSPC);
	assert_string_equal(buf, "ab\\\"");	/* never half an escape */
	assert_int_equal(export_label_escape("abcd", buf, sizeof(buf)), 4);
}

static void test_hostile_names_in_output(void **state)
{
	char *text;

	(void)state;
	cts[1].pod = "evil\"} 1\ncpusetd_events_total 999\n";
	cts[1].container = "c\\\xff";
	text = render();
	assert_has(text, "cpusetd_container_cpus{k8s_namespace_name=\"web\",k8s_pod_name=\"evil\\\"} 1\\ncpusetd_events_total 999\\n\","
			 "k8s_container_name=\"c\\\\\xef\xbf\xbd\",container_id=\"9f2c\"} 1");
	assert_lacks(text, "\ncpusetd_events_total 999\n");
	free(text);
}

/* --- exposition rules --- */

/* The family a sample line belongs to (name up to '{' or ' ', minus a
 * histogram suffix when the family is a histogram). */
static void sample_family(const char *line, const char *hist, char *ret, size_t len)
{
	size_t n = strcspn(line, "{ ");

	snprintf(ret, len, "%.*s", (int)n, line);
	if (hist[0] && strncmp(ret, hist, strlen(hist)) == 0)
		snprintf(ret, len, "%s", hist);
}

/* Every sample follows its own HELP and TYPE; a family never comes back
 * after another started; counters and only counters end in _total. */
static void check_exposition(char *text)
{
	char fam[256] = "", type[32] = "", hist[256] = "", seen[128][256];
	size_t n_seen = 0;

	for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
		char name[256];

		if (sscanf(line, "# TYPE %255s %31s", name, type) == 2) {
			for (size_t i = 0; i < n_seen; i++)
				if (strcmp(seen[i], name) == 0)
					fail_msg("family %s twice", name);
			assert_true(n_seen < ARRAY_SIZE(seen));
			snprintf(seen[n_seen++], sizeof(seen[0]), "%s", name);
			assert_int_equal(strncmp(name, "cpusetd_", 8), 0);
			assert_null(strstr(name + 8, "cpusetd_"));
			size_t len = strlen(name);
			bool total = len > 6 && strcmp(name + len - 6, "_total") == 0;

			if (total != (strcmp(type, "counter") == 0))
				fail_msg("%s: type %s and _total disagree", name, type);
			snprintf(fam, sizeof(fam), "%s", name);
			snprintf(hist, sizeof(hist), "%s", strcmp(type, "histogram") ? "" : name);
			continue;
		}
		if (sscanf(line, "# HELP %255s", name) == 1) {
			fam[0] = '\0';	/* TYPE must come next */
			continue;
		}
		sample_family(line, hist, name, sizeof(name));
		if (strcmp(name, fam) != 0)
			fail_msg("sample '%s' outside its family (in '%s')", line, fam);
	}
}

static void test_exposition_rules_with_telemetry(void **state)
{
	struct cpusetd_cpu_stats cpu[2] = { 0 };
	struct telemetry_cgroup cg[1] = { { .cgroup_id = 42 } };
	struct telemetry_snapshot t = { .n_cpus = 2, .cpu = cpu, .n_cgroups = 1, .cgroup = cg };
	char *text;

	(void)state;
	view.telemetry = &t;
	text = render();
	check_exposition(text);
	free(text);
}

static void test_exposition_rules_without_telemetry(void **state)
{
	char *text;

	(void)state;
	text = render();
	assert_has(text, "cpusetd_telemetry_available 0");
	assert_lacks(text, "cpusetd_cpu_context_switches_total");
	assert_lacks(text, "cpusetd_container_placement_violations_total");
	/* placement, pools and health are there all the same */
	assert_has(text, "cpusetd_pool_cpus{pool=\"shared\"} 1");
	assert_has(text, "cpusetd_cgroup_write_errors_total 1");
	check_exposition(text);
	free(text);
}

/* NRI's state and the connection's counters, only with nri = auto. */
static void test_nri(void **state)
{
	char *text;

	(void)state;
	text = render();
	assert_lacks(text, "cpusetd_nri_info");
	assert_lacks(text, "cpusetd_nri_connected");
	free(text);
	view.nri = (struct snapshot_nri){ .enabled = true, .state = "connected", .mode = "nri+bpf",
					  .runtime_name = "containerd", .runtime_version = "2.1.9\"",
					  .requests = 42, .update_failures = 1 };
	text = render();
	assert_has(text, "cpusetd_nri_info{state=\"connected\",mode=\"nri+bpf\","
		   "runtime=\"containerd\",runtime_version=\"2.1.9\\\"\"} 1");
	assert_has(text, "cpusetd_nri_connected 1");
	assert_has(text, "cpusetd_nri_requests_total 42");
	assert_has(text, "cpusetd_nri_update_failures_total 1");
	assert_lacks(text, "cpusetd_nri_request_seconds");	/* no method timed */
	check_exposition(text);
	free(text);

	/* The request times: one histogram per method, cumulative. */
	{
		static const char *const names[] = { "Synchronize", "CreateContainer" };
		struct latency_hist h[2] = { 0 };

		latency_add(&h[1], 20000);		/* 20 µs */
		latency_add(&h[1], 180000);		/* 180 µs: le 200 µs */
		latency_add(&h[1], 3000000000ULL);	/* 3 s: +Inf */
		view.nri.served = h;
		view.nri.served_methods = names;
		view.nri.n_served = 2;
		text = render();
		assert_has(text, "# TYPE cpusetd_nri_request_seconds histogram");
		assert_has(text, "cpusetd_nri_request_seconds_bucket{method=\"CreateContainer\",le=\"0.000025\"} 1");
		assert_has(text, "cpusetd_nri_request_seconds_bucket{method=\"CreateContainer\",le=\"0.0001\"} 1");
		assert_has(text, "cpusetd_nri_request_seconds_bucket{method=\"CreateContainer\",le=\"0.0002\"} 2");
		assert_has(text, "cpusetd_nri_request_seconds_bucket{method=\"CreateContainer\",le=\"2\"} 2");
		assert_has(text, "cpusetd_nri_request_seconds_bucket{method=\"CreateContainer\",le=\"+Inf\"} 3");
		assert_has(text, "cpusetd_nri_request_seconds_count{method=\"CreateContainer\"} 3");
		assert_has(text, "cpusetd_nri_request_seconds_sum{method=\"CreateContainer\"} 3.0002");
		assert_has(text, "cpusetd_nri_request_seconds_count{method=\"Synchronize\"} 0");
		check_exposition(text);
		free(text);
	}
	view.nri = (struct snapshot_nri){ 0 };
}

/* --- content --- */

static void test_placement_pools_errors(void **state)
{
	char *text;

	(void)state;
	text = render();
	assert_has(text, "cpusetd_build_info{version=\"0.1.0\",revision=\"v0.1.0-3-gabc1234\","
		   "cgroup_mode=\"v1\",bpf_attach=\"tp_btf\"} 1");
	assert_has(text, "cpusetd_container_info{k8s_namespace_name=\"prod\",k8s_pod_name=\"db-0\","
			 "k8s_container_name=\"pg\",container_id=\"e1d2\",kind=\"integer\","
			 "qos=\"Guaranteed\",qos_class=\"LSE\"} 1");
	assert_has(text, "cpusetd_container_cpus{k8s_namespace_name=\"prod\",k8s_pod_name=\"db-0\","
			 "k8s_container_name=\"pg\",container_id=\"e1d2\"} 1");
	assert_has(text, "cpusetd_container_cpuset_info{k8s_namespace_name=\"prod\",k8s_pod_name=\"db-0\","
			 "k8s_container_name=\"pg\",container_id=\"e1d2\",cpus=\"1\",mems=\"0\"} 1");
	assert_has(text, "cpusetd_pool_info{pool=\"shared\",cpus=\"0\"} 1");
	assert_has(text, "cpusetd_pool_info{pool=\"be\",cpus=\"0\"} 1");
	assert_has(text, "cpusetd_cpu_owner_info{cpu=\"1\",owner=\"integer\",k8s_namespace_name=\"prod\","
			 "k8s_pod_name=\"db-0\",k8s_container_name=\"pg\",container_id=\"e1d2\"} 1");
	assert_has(text, "cpusetd_cpu_owner_info{cpu=\"0\",owner=\"shared\",k8s_namespace_name=\"\","
			 "k8s_pod_name=\"\",k8s_container_name=\"\",container_id=\"\"} 1");
	assert_has(text, "cpusetd_admission_errors_total{reason=\"insufficient_cpus\"} 4");
	assert_has(text, "cpusetd_admission_errors_total{reason=\"invalid_annotation\"} 0");
	assert_has(text, "cpusetd_container_admission_error_info{k8s_namespace_name=\"web\","
			 "k8s_pod_name=\"nginx\",k8s_container_name=\"front\",container_id=\"9f2c\","
			 "reason=\"insufficient_cpus\",action=\"shared\"} 1");
	/* exclusive (the default): a container with an error is there, a
	 * plain shared one and the sandbox are not; a pooled container's
	 * CPUs are its pool's, never its own cpuset_info */
	assert_has(text, "cpusetd_container_info{k8s_namespace_name=\"web\",k8s_pod_name=\"nginx\","
			 "k8s_container_name=\"front\",container_id=\"9f2c\",kind=\"shared\","
			 "qos=\"Burstable\",qos_class=\"\"} 1");
	assert_lacks(text, "cpusetd_container_cpuset_info{k8s_namespace_name=\"web\"");
	assert_lacks(text, "77aa");
	assert_lacks(text, "5b5b");
	assert_has(text, "cpusetd_events_total 41");
	assert_has(text, "cpusetd_resync_failures_total 2");
	assert_has(text, "cpusetd_inplace_resizes_total 5");
	assert_has(text, "cpusetd_inplace_resizes_refused_total 6");
	assert_has(text, "cpusetd_hotplug_changes_total 3");
	assert_has(text, "cpusetd_hotplug_replacements_total 7");
	assert_has(text, "cpusetd_hotplug_shortfalls_total 8");
	assert_has(text, "cpusetd_last_sync_timestamp_seconds 1700000000.250");
	assert_has(text, "# TYPE cpusetd_last_update_timestamp_seconds gauge\n"
			 "cpusetd_last_update_timestamp_seconds 1700000100.500");
	assert_has(text, "# TYPE cpusetd_cgroup_writes_total counter");
	free(text);
}

/* --- cardinality --- */

static struct pod_error pod_err = {
	.namespace_ = "web", .pod = "nginx", .container = "front",
	.reason = "insufficient_cpus", .action = "shared", .attempts = 3, .last = 1700000050.0,
};
static const struct pod_error *const pod_errs[] = { &pod_err };

static void test_export_containers_all(void **state)
{
	struct telemetry_cgroup cg[3] = {
		{ .cgroup_id = 7, .s = { .cpu_ns = 1000 } },
		{ .cgroup_id = 8, .s = { .cpu_ns = 2000 } },
		{ .cgroup_id = 9, .s = { .cpu_ns = 3000 } },	/* the sandbox */
	};
	struct telemetry_snapshot t = { .n_cgroups = 3, .cgroup = cg };
	char *text;

	(void)state;
	view.containers_scope = EXPORT_CONTAINERS_ALL;
	view.telemetry = &t;
	text = render();
	assert_has(text, "cpusetd_container_info{k8s_namespace_name=\"web\",k8s_pod_name=\"nginx\","
			 "k8s_container_name=\"nginx\",container_id=\"77aa\",kind=\"shared\","
			 "qos=\"Burstable\",qos_class=\"LS\"} 1");
	assert_has(text, "cpusetd_container_cpus{k8s_namespace_name=\"web\",k8s_pod_name=\"nginx\","
			 "k8s_container_name=\"nginx\",container_id=\"77aa\"} 1");
	assert_has(text, "cpusetd_container_cpu_seconds_total{k8s_namespace_name=\"web\","
			 "k8s_pod_name=\"nginx\",k8s_container_name=\"nginx\",container_id=\"77aa\"} 0.000002");
	/* all, but never a sandbox, and never a pooled container's cpulist */
	assert_lacks(text, "5b5b");
	assert_lacks(text, "0.000003");
	assert_lacks(text, "cpusetd_container_cpuset_info{k8s_namespace_name=\"web\"");
	free(text);
}

static void test_export_containers_none(void **state)
{
	struct telemetry_cgroup cg[1] = { { .cgroup_id = 42, .s = { .cpu_ns = 1000 } } };
	struct telemetry_snapshot t = { .n_cgroups = 1, .cgroup = cg };
	char *text;

	(void)state;
	view.containers_scope = EXPORT_CONTAINERS_NONE;
	view.telemetry = &t;
	view.pod_errors = pod_errs;
	view.n_pod_errors = 1;
	text = render();
	assert_lacks(text, "cpusetd_container_info{");
	assert_lacks(text, "cpusetd_container_cpus{");
	assert_lacks(text, "cpusetd_container_cpuset_info{");
	assert_lacks(text, "cpusetd_container_admission_error_info{");
	assert_lacks(text, "cpusetd_container_cpu_seconds_total{");
	/* per CPU and per pod error: still there (bounded by CPUs and errors) */
	assert_has(text, "cpusetd_cpu_owner_info{cpu=\"1\",owner=\"integer\",k8s_namespace_name=\"prod\","
			 "k8s_pod_name=\"db-0\",k8s_container_name=\"pg\",container_id=\"e1d2\"} 1");
	assert_has(text, "cpusetd_pod_admission_error_attempts{k8s_namespace_name=\"web\","
			 "k8s_pod_name=\"nginx\",k8s_container_name=\"front\",reason=\"insufficient_cpus\","
			 "action=\"shared\"} 3");
	assert_has(text, "cpusetd_pod_admission_error_last_timestamp_seconds{k8s_namespace_name=\"web\","
			 "k8s_pod_name=\"nginx\",k8s_container_name=\"front\"} 1700000050.000");
	check_exposition(text);
	free(text);
}

/* Labels kube-prometheus puts on every series it scrapes from
 * node_exporter's pod: ours under these names would become exported_*. */
static const char *const target_labels[] = {
	"namespace", "pod", "container", "service", "endpoint", "job", "instance",
};

/*
 * Every sample of a full render (every container, telemetry, pod errors):
 * no label named like a target label; a cpulist label (cpus, mems) only
 * on an _info series of value 1, never beside a figure.
 */
static void test_labels_no_clash_no_cpulist_on_figures(void **state)
{
	struct cpusetd_cpu_stats cpu[2] = { 0 };
	struct telemetry_cgroup cg[2] = { { .cgroup_id = 8 }, { .cgroup_id = 42 } };
	struct telemetry_snapshot t = { .n_cpus = 2, .cpu = cpu, .n_cgroups = 2, .cgroup = cg };
	char *text, *save = NULL;
	unsigned samples = 0, cpulists = 0;

	(void)state;
	view.containers_scope = EXPORT_CONTAINERS_ALL;
	view.telemetry = &t;
	view.pod_errors = pod_errs;
	view.n_pod_errors = 1;
	text = render();
	for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *open = strchr(line, '{'), *close = open ? strrchr(line, '}') : NULL;
		size_t name_len = strcspn(line, "{ ");

		if (line[0] == '#' || !open || !close)
			continue;
		samples++;
		for (char *p = open; p && p < close; p = strstr(p + 1, "\",")) {
			char label[64];

			if (sscanf(p + (*p == '{' ? 1 : 2), "%63[a-z_]=", label) != 1)
				fail_msg("cannot read a label in '%s'", line);
			for (size_t i = 0; i < ARRAY_SIZE(target_labels); i++)
				if (strcmp(label, target_labels[i]) == 0)
					fail_msg("label %s clashes with a target label: %s", label, line);
			if (strcmp(label, "cpus") && strcmp(label, "mems"))
				continue;
			cpulists++;
			if (name_len < 5 || strncmp(line + name_len - 5, "_info", 5) ||
			    strcmp(close, "} 1"))
				fail_msg("a cpulist on a series with a figure: %s", line);
		}
	}
	assert_true(samples > 50);
	assert_true(cpulists >= 4);	/* pools and pg: not a test that cannot fail */
	free(text);
}

static void test_rq_buckets_configured(void **state)
{
	static const uint32_t bounds[] = { 4, 64, 1048576 };
	struct cpusetd_cpu_stats cpu[2] = { 0 };
	struct telemetry_snapshot t = { .n_cpus = 2, .cpu = cpu };
	char *text;
	const char *p;
	unsigned lines = 0;

	(void)state;
	cpu[1].rq_wait_hist[0] = 5;	/* < 2 µs -> le 4 µs */
	cpu[1].rq_wait_hist[1] = 1;	/* [2, 4) µs -> le 4 µs */
	cpu[1].rq_wait_hist[3] = 2;	/* [8, 16) µs -> le 64 µs */
	cpu[1].rq_wait_hist[5] = 3;	/* [32, 64) µs -> le 64 µs */
	cpu[1].rq_wait_hist[6] = 4;	/* [64, 128) µs -> le 1.048576 s */
	cpu[1].rq_wait_hist[19] = 6;	/* [2^19, 2^20) µs -> le 1.048576 s */
	cpu[1].rq_wait_hist[20] = 7;	/* [2^20, 2^21) µs -> +Inf */
	cpu[1].rq_wait_hist[CPUSETD_HIST_SLOTS - 1] = 1;
	view.telemetry = &t;
	view.rq_bounds_us = bounds;
	view.n_rq_bounds = ARRAY_SIZE(bounds);
	text = render();
	assert_has(text, "cpusetd_cpu_runqueue_wait_seconds_bucket{cpu=\"1\",le=\"0.000004\"} 6");
	assert_has(text, "cpusetd_cpu_runqueue_wait_seconds_bucket{cpu=\"1\",le=\"0.000064\"} 11");
	assert_has(text, "cpusetd_cpu_runqueue_wait_seconds_bucket{cpu=\"1\",le=\"1.048576\"} 21");
	assert_has(text, "cpusetd_cpu_runqueue_wait_seconds_bucket{cpu=\"1\",le=\"+Inf\"} 29");
	assert_has(text, "cpusetd_cpu_runqueue_wait_seconds_count{cpu=\"1\"} 29");
	for (p = text; (p = strstr(p, "cpusetd_cpu_runqueue_wait_seconds_bucket{cpu=\"0\"")); p++)
		lines++;
	assert_int_equal(lines, ARRAY_SIZE(bounds) + 1);
	check_exposition(text);
	free(text);
}

static void test_convergence_histogram_cumulative(void **state)
{
	char *text;

	(void)state;
	text = render();
	assert_has(text, "# TYPE cpusetd_resize_convergence_seconds histogram");
	assert_has(text, "cpusetd_resize_convergence_seconds_bucket{le=\"0.000025\"} 1");
	assert_has(text, "cpusetd_resize_convergence_seconds_bucket{le=\"0.001\"} 1");
	assert_has(text, "cpusetd_resize_convergence_seconds_bucket{le=\"2.5\"} 3");
	assert_has(text, "cpusetd_resize_convergence_seconds_bucket{le=\"+Inf\"} 6");
	assert_has(text, "cpusetd_resize_convergence_seconds_sum 1.5");
	assert_has(text, "cpusetd_resize_convergence_seconds_count 6");
	free(text);
}

/* The phases of convergence: one series per phase, its label, the daemon's
 * latency bounds; none without them. */
static void test_convergence_phases(void **state)
{
	struct latency_hist h[CONV_PHASE__COUNT] = { 0 };
	char *text;

	(void)state;
	text = render();
	assert_lacks(text, "cpusetd_resize_phase_seconds");
	free(text);
	latency_add(&h[CONV_PHASE_WAKEUP], 20000);	/* 20 µs */
	latency_add(&h[CONV_PHASE_WRITES], 900000);	/* 0.9 ms */
	latency_add(&h[CONV_PHASE_WRITES], 3000000);	/* 3 ms */
	view.conv_phases = h;
	text = render();
	assert_has(text, "# TYPE cpusetd_resize_phase_seconds histogram");
	assert_has(text, "cpusetd_resize_phase_seconds_bucket{phase=\"wakeup\",le=\"0.000025\"} 1");
	assert_has(text, "cpusetd_resize_phase_seconds_bucket{phase=\"writes\",le=\"0.001\"} 1");
	assert_has(text, "cpusetd_resize_phase_seconds_bucket{phase=\"writes\",le=\"+Inf\"} 2");
	assert_has(text, "cpusetd_resize_phase_seconds_count{phase=\"writes\"} 2");
	assert_has(text, "cpusetd_resize_phase_seconds_sum{phase=\"writes\"} 0.0039");
	assert_has(text, "cpusetd_resize_phase_seconds_count{phase=\"plan\"} 0");
	assert_has(text, "cpusetd_resize_phase_seconds_count{phase=\"finish\"} 0");
	check_exposition(text);
	free(text);
}

static void test_cpu_runqueue_histogram(void **state)
{
	struct cpusetd_cpu_stats cpu[2] = { 0 };
	struct telemetry_snapshot t = { .n_cpus = 2, .cpu = cpu };
	uint64_t prev = 0;
	char *text, *p, want[128];

	(void)state;
	cpu[1].rq_wait_hist[0] = 5;			/* < 2 µs */
	cpu[1].rq_wait_hist[3] = 2;			/* [8, 16) µs */
	cpu[1].rq_wait_hist[CPUSETD_HIST_SLOTS - 1] = 1;	/* >= 2^26 µs */
	cpu[1].rq_wait_ns = 70000123456ULL;
	view.telemetry = &t;
	text = render();
	assert_has(text, "cpusetd_cpu_runqueue_wait_seconds_bucket{cpu=\"1\",le=\"0.000002\"} 5");
	assert_has(text, "cpusetd_cpu_runqueue_wait_seconds_bucket{cpu=\"1\",le=\"0.000008\"} 5");
	assert_has(text, "cpusetd_cpu_runqueue_wait_seconds_bucket{cpu=\"1\",le=\"0.000016\"} 7");
	assert_has(text, "cpusetd_cpu_runqueue_wait_seconds_bucket{cpu=\"1\",le=\"67.108864\"} 7");
	assert_has(text, "cpusetd_cpu_runqueue_wait_seconds_bucket{cpu=\"1\",le=\"+Inf\"} 8");
	assert_has(text, "cpusetd_cpu_runqueue_wait_seconds_sum{cpu=\"1\"} 70.000123456");
	assert_has(text, "cpusetd_cpu_runqueue_wait_seconds_count{cpu=\"1\"} 8");
	assert_has(text, "cpusetd_cpu_runqueue_wait_seconds_count{cpu=\"0\"} 0");
	/* non-decreasing through CPU 1's buckets, one per finite slot + Inf */
	p = strstr(text, "cpusetd_cpu_runqueue_wait_seconds_bucket{cpu=\"1\"");
	for (int k = 0; k < CPUSETD_HIST_SLOTS; k++) {
		unsigned long long v;

		assert_non_null(p);
		assert_int_equal(sscanf(strchr(p, '}') + 1, " %llu", &v), 1);
		assert_true(v >= prev);
		prev = v;
		p = strchr(p, '\n') + 1;
	}
	snprintf(want, sizeof(want), "cpusetd_cpu_runqueue_wait_seconds_sum{cpu=\"1\"}");
	assert_int_equal(strncmp(p, want, strlen(want)), 0);
	free(text);
}

static void test_cpu_counters(void **state)
{
	struct cpusetd_cpu_stats cpu[3] = { 0 };
	struct telemetry_snapshot t = { .n_cpus = 3, .cpu = cpu };
	char *text;

	(void)state;
	cpu[1] = (struct cpusetd_cpu_stats){ .switches = 100, .preemptions = 7,
		.cross_switches = 3, .busy_ns = 1500000000ULL, .foreign_ns = 250000000ULL,
		.kthread_ns = 1000 };
	cpu[2].switches = 9;	/* offline: not reported */
	view.telemetry = &t;
	text = render();
	assert_has(text, "cpusetd_telemetry_available 1");
	assert_has(text, "cpusetd_cpu_context_switches_total{cpu=\"1\"} 100");
	assert_has(text, "cpusetd_cpu_preemptions_total{cpu=\"1\"} 7");
	assert_has(text, "cpusetd_cpu_cross_container_switches_total{cpu=\"1\"} 3");
	assert_has(text, "cpusetd_cpu_busy_seconds_total{cpu=\"1\"} 1.5");
	assert_has(text, "cpusetd_cpu_foreign_seconds_total{cpu=\"1\"} 0.25");
	assert_has(text, "cpusetd_cpu_kthread_seconds_total{cpu=\"1\"} 0.000001");
	assert_has(text, "cpusetd_cpu_foreign_seconds_total{cpu=\"0\"} 0");
	assert_lacks(text, "cpu=\"2\"");
	free(text);
}

static void test_container_telemetry_by_cgroup_id(void **state)
{
	struct telemetry_cgroup cg[2] = {
		{ .cgroup_id = 5, .s = { .violations = 99 } },	/* not a container */
		{ .cgroup_id = 42, .s = { .cpu_ns = 2000000000ULL, .preempted = 3,
					  .violations = 2, .numa_migrations = 1,
					  .rq_wait_ns = 5000, .rq_wait_count = 4 } },
	};
	struct telemetry_snapshot t = { .n_cgroups = 2, .cgroup = cg };
	const char *pg = "{k8s_namespace_name=\"prod\",k8s_pod_name=\"db-0\",k8s_container_name=\"pg\","
			 "container_id=\"e1d2\"}";
	char line[256], *text;

	(void)state;
	view.telemetry = &t;	/* no per-CPU part: the per-container one alone */
	text = render();
	snprintf(line, sizeof(line), "cpusetd_container_placement_violations_total%s 2", pg);
	assert_has(text, line);
	snprintf(line, sizeof(line), "cpusetd_container_cpu_seconds_total%s 2", pg);
	assert_has(text, line);
	snprintf(line, sizeof(line), "cpusetd_container_preemptions_total%s 3", pg);
	assert_has(text, line);
	snprintf(line, sizeof(line), "cpusetd_container_numa_migrations_total%s 1", pg);
	assert_has(text, line);
	snprintf(line, sizeof(line), "cpusetd_container_runqueue_wait_seconds_total%s 0.000005", pg);
	assert_has(text, line);
	assert_lacks(text, " 99\n");
	assert_lacks(text, "cpusetd_container_placement_violations_total{k8s_namespace_name=\"web\"");
	assert_lacks(text, "cpusetd_cpu_context_switches_total");
	free(text);
}

/* telemetry = basic: the per-CPU counters its program keeps are written,
 * the run-queue histogram and the per-container series it does not keep
 * are absent (not 0), and build_info names the level. */
static void test_basic_level_leaves_out(void **state)
{
	struct cpusetd_cpu_stats cpu[2] = { 0 };
	struct telemetry_cgroup cg[1] = { { .cgroup_id = 42, .s = { .cpu_ns = 7 } } };
	struct telemetry_snapshot t = { .n_cpus = 2, .cpu = cpu, .n_cgroups = 1, .cgroup = cg };
	char *text;

	(void)state;
	cpu[1] = (struct cpusetd_cpu_stats){ .switches = 100, .foreign_ns = 250000000ULL,
					     .kthread_ns = 1000, .rq_wait_count = 3 };
	view.telemetry = &t;
	view.telemetry_level = "basic";
	text = render();
	assert_has(text, "cpusetd_telemetry_available 1");
	assert_non_null(strstr(text, ",telemetry=\"basic\"} 1\n"));
	assert_has(text, "cpusetd_cpu_context_switches_total{cpu=\"1\"} 100");
	assert_has(text, "cpusetd_cpu_foreign_seconds_total{cpu=\"1\"} 0.25");
	assert_has(text, "cpusetd_cpu_kthread_seconds_total{cpu=\"1\"} 0.000001");
	assert_lacks(text, "cpusetd_cpu_runqueue_wait_seconds");
	assert_lacks(text, "cpusetd_container_cpu_seconds_total");
	assert_lacks(text, "cpusetd_container_runqueue_wait");
	assert_lacks(text, "cpusetd_container_placement_violations_total");
	check_exposition(text);
	free(text);
	/* the same snapshot at full: both there */
	view.telemetry_level = "full";
	text = render();
	assert_non_null(strstr(text, ",telemetry=\"full\"} 1\n"));
	assert_has(text, "cpusetd_cpu_runqueue_wait_seconds_count{cpu=\"1\"} 0");
	assert_non_null(strstr(text, "\ncpusetd_container_cpu_seconds_total{"));
	free(text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_escape_table),
		cmocka_unit_test(test_escape_nospace),
		cmocka_unit_test_setup(test_hostile_names_in_output, setup),
		cmocka_unit_test_setup(test_exposition_rules_with_telemetry, setup),
		cmocka_unit_test_setup(test_exposition_rules_without_telemetry, setup),
		cmocka_unit_test_setup(test_nri, setup),
		cmocka_unit_test_setup(test_placement_pools_errors, setup),
		cmocka_unit_test_setup(test_export_containers_all, setup),
		cmocka_unit_test_setup(test_export_containers_none, setup),
		cmocka_unit_test_setup(test_labels_no_clash_no_cpulist_on_figures, setup),
		cmocka_unit_test_setup(test_rq_buckets_configured, setup),
		cmocka_unit_test_setup(test_convergence_histogram_cumulative, setup),
		cmocka_unit_test_setup(test_convergence_phases, setup),
		cmocka_unit_test_setup(test_cpu_runqueue_histogram, setup),
		cmocka_unit_test_setup(test_cpu_counters, setup),
		cmocka_unit_test_setup(test_container_telemetry_by_cgroup_id, setup),
		cmocka_unit_test_setup(test_basic_level_leaves_out, setup),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
