// SPDX-License-Identifier: Apache-2.0
/*
 * meta: OCI bundle config.json -> struct pod_meta.
 * Fixtures (tests/unit/fixtures/meta/) are shaped like what containerd and
 * CRI-O write; the inline cases probe one rule each. Run from the repo root.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>
#include "user/meta/meta.h"

#define FIXTURES	"tests/unit/fixtures/meta/"
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

/* What a parse should give; NULL strings mean "", cores NULL means none. */
struct want {
	bool sandbox;
	const char *ns, *pod, *ctr, *uid, *sandbox_id, *cores;
	int64_t quota;
	uint64_t period, shares;
	bool limit;
	const char *cgroups_path, *term;
	bool term_ro;
};

#define S(x)	((x) ? (x) : "")

static void check_meta(const struct pod_meta *m, const struct want *w)
{
	assert_true(m->from_bundle);
	assert_int_equal(m->sandbox, w->sandbox);
	assert_string_equal(m->namespace_, S(w->ns));
	assert_string_equal(m->pod_name, S(w->pod));
	assert_string_equal(m->container_name, S(w->ctr));
	assert_string_equal(m->pod_uid, S(w->uid));
	assert_string_equal(m->sandbox_id, S(w->sandbox_id));
	assert_int_equal(m->invalid, META_VALID);
	assert_string_equal(m->error, "");
	assert_int_equal(m->cores_ids != NULL, w->cores != NULL);
	if (w->cores)
		assert_string_equal(m->cores_ids, w->cores);
	assert_int_equal(m->quota_us, w->quota);
	assert_int_equal(m->period_us, w->period);
	assert_int_equal(m->cpu_shares, w->shares);
	assert_int_equal(m->has_cpu_limit, w->limit);
	assert_string_equal(m->cgroups_path, S(w->cgroups_path));
	assert_string_equal(m->termination_log ? m->termination_log : "", S(w->term));
	assert_int_equal(m->termination_ro, w->term_ro);
}

#define CTRD_SB		"8d1f0c5a2b7e4e19a3c6f0d2b9e8a7c6d5e4f3a2b1c0d9e8f7a6b5c4d3e2f1a0"
#define CTRD_UID	"3f6c2a1e-8b4d-4c7a-9e2f-1a5b6c7d8e9f"
#define CRIO_SB		"5b2e9d1c7a4f4b3e8c6d0a1f2e3d4c5b6a7f8e9d0c1b2a3f4e5d6c7b8a9f0e1d"
#define CRIO_UID	"9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d"

static const struct {
	const char *file;
	struct want w;
} fixture_cases[] = {
	{ "containerd-sandbox.json", {
		.sandbox = true, .ns = "storage", .pod = "db-0", .uid = CTRD_UID,
		.sandbox_id = CTRD_SB, .cores = "2-3,10", .quota = -1, .shares = 2,
		.cgroups_path = "kubepods-pod3f6c2a1e_8b4d_4c7a_9e2f_1a5b6c7d8e9f.slice:cri-containerd:" CTRD_SB,
	} },
	{ "containerd-container.json", {
		.ns = "storage", .pod = "db-0", .ctr = "postgres", .uid = CTRD_UID,
		.sandbox_id = CTRD_SB, .quota = 400000, .period = 100000, .shares = 4096,
		.limit = true,
		.cgroups_path = "kubepods-pod3f6c2a1e_8b4d_4c7a_9e2f_1a5b6c7d8e9f.slice:cri-containerd:"
				"c0ffee00112233445566778899aabbccddeeff00112233445566778899aabbcc",
		.term = "/var/lib/kubelet/pods/" CTRD_UID "/containers/postgres/6e1b9f0c",
	} },
	{ "crio-sandbox.json", {
		.sandbox = true, .ns = "shop", .pod = "web-7d9f8b6c5-x2x9q", .ctr = "POD",
		.uid = CRIO_UID, .sandbox_id = CRIO_SB, .cores = "4-7", .quota = -1, .shares = 2,
		.cgroups_path = "kubepods-burstable-pod9a8b7c6d_5e4f_4a3b_8c2d_1e0f9a8b7c6d.slice:crio:" CRIO_SB,
	} },
	{ "crio-container.json", {
		.ns = "shop", .pod = "web-7d9f8b6c5-x2x9q", .ctr = "nginx", .uid = CRIO_UID,
		.sandbox_id = CRIO_SB, .quota = -1, .period = 100000, .shares = 256,
		.cgroups_path = "kubepods-burstable-pod9a8b7c6d_5e4f_4a3b_8c2d_1e0f9a8b7c6d.slice:crio:"
				"7e6d5c4b3a2f1e0d9c8b7a6f5e4d3c2b1a0f9e8d7c6b5a4f3e2d1c0b9a8f7e6d",
		/* custom terminationMessagePath */
		.term = "/var/lib/kubelet/pods/" CRIO_UID "/containers/nginx/a1b2c3d4",
	} },
};

static void test_fixtures(void **state)
{
	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(fixture_cases); i++) {
		struct pod_meta m;
		char path[256];

		snprintf(path, sizeof(path), FIXTURES "%s", fixture_cases[i].file);
		print_message("fixture %s\n", path);
		assert_int_equal(meta_parse_file(path, &m), 0);
		check_meta(&m, &fixture_cases[i].w);
	}
}

/* Inline texts that parse. */
static const struct {
	const char *name, *json;
	struct want w;
} good_cases[] = {
	{ "empty object", "{}", { .quota = -1 } },
	{ "nulls are absent",
	  "{\"annotations\":null,\"linux\":{\"cgroupsPath\":null,\"resources\":{\"cpu\":"
	  "{\"quota\":null,\"period\":null}}},\"mounts\":null}", { .quota = -1 } },
	{ "quota -1", "{\"linux\":{\"resources\":{\"cpu\":{\"quota\":-1,\"period\":100000}}}}",
	  { .quota = -1, .period = 100000 } },
	{ "quota missing", "{\"linux\":{\"resources\":{\"cpu\":{\"period\":100000,\"shares\":1024}}}}",
	  { .quota = -1, .period = 100000, .shares = 1024 } },
	{ "quota without period", "{\"linux\":{\"resources\":{\"cpu\":{\"quota\":50000}}}}",
	  { .quota = 50000 } },
	{ "fractional limit",
	  "{\"linux\":{\"resources\":{\"cpu\":{\"quota\":150000,\"period\":100000}}}}",
	  { .quota = 150000, .period = 100000, .limit = true } },
	{ "crio: cores-ids only inside io.kubernetes.cri-o.Annotations",
	  "{\"annotations\":{\"io.kubernetes.cri-o.ContainerType\":\"sandbox\","
	  "\"io.kubernetes.cri-o.Annotations\":\"{\\\"weka.io/cores-ids\\\":\\\"0,2-3,8\\\"}\"}}",
	  { .sandbox = true, .cores = "0,2-3,8", .quota = -1 } },
	{ "direct cores-ids wins over the CRI-O copy",
	  "{\"annotations\":{\"weka.io/cores-ids\":\"1\","
	  "\"io.kubernetes.cri-o.Annotations\":\"{\\\"weka.io/cores-ids\\\":\\\"9\\\"}\"}}",
	  { .cores = "1", .quota = -1 } },
	{ "crio annotations without cores-ids",
	  "{\"annotations\":{\"io.kubernetes.cri-o.Annotations\":\"{\\\"a\\\":\\\"b\\\"}\"}}",
	  { .quota = -1 } },
	{ "empty cores-ids is kept for the policy to judge",
	  "{\"annotations\":{\"weka.io/cores-ids\":\"\"}}", { .cores = "", .quota = -1 } },
	{ "containerd key wins over the CRI-O one",
	  "{\"annotations\":{\"io.kubernetes.cri.sandbox-name\":\"a\",\"io.kubernetes.pod.name\":\"b\"}}",
	  { .pod = "a", .quota = -1 } },
	{ "container type other than sandbox",
	  "{\"annotations\":{\"io.kubernetes.cri.container-type\":\"container\"}}", { .quota = -1 } },
	{ "termination path set but not mounted",
	  "{\"annotations\":{\"io.kubernetes.container.terminationMessagePath\":\"/x\"},"
	  "\"mounts\":[{\"destination\":\"/dev/termination-log\",\"source\":\"/h/t\"}]}",
	  { .quota = -1 } },
	{ "custom path, annotation dropped by containerd: kubelet-shaped source found",
	  "{\"annotations\":{\"io.kubernetes.cri.sandbox-uid\":\"u1\","
	  "\"io.kubernetes.cri.container-name\":\"app\"},\"mounts\":["
	  "{\"destination\":\"/etc/hosts\",\"source\":\"/var/lib/kubelet/pods/u1/etc-hosts\"},"
	  "{\"destination\":\"/log/why\",\"source\":\"/var/lib/kubelet/pods/u1/containers/app/ff01\"}]}",
	  { .uid = "u1", .ctr = "app", .quota = -1,
	    .term = "/var/lib/kubelet/pods/u1/containers/app/ff01" } },
	{ "kubelet-shaped source of another container is not taken",
	  "{\"annotations\":{\"io.kubernetes.cri.sandbox-uid\":\"u1\","
	  "\"io.kubernetes.cri.container-name\":\"app\"},\"mounts\":["
	  "{\"destination\":\"/log/why\",\"source\":\"/var/lib/kubelet/pods/u1/containers/side/ff01\"}]}",
	  { .uid = "u1", .ctr = "app", .quota = -1 } },
	{ "mount without source",
	  "{\"mounts\":[{\"destination\":\"/dev/termination-log\",\"type\":\"tmpfs\"}]}",
	  { .quota = -1 } },
	/* issue 22 H1: the pod's own volume at the path (a subPath, read-only
	 * in the pod) comes first, kubelet's file last: the last one is taken */
	{ "the last mount at the termination path: kubelet's after a subPath volume",
	  "{\"mounts\":["
	  "{\"destination\":\"/dev/termination-log\",\"type\":\"bind\","
	  "\"source\":\"/var/lib/kubelet/pods/u1/volume-subpaths/v/app/0\",\"options\":[\"rbind\",\"ro\"]},"
	  "{\"destination\":\"/etc/hosts\",\"source\":\"/var/lib/kubelet/pods/u1/etc-hosts\"},"
	  "{\"destination\":\"/dev/termination-log\",\"type\":\"bind\","
	  "\"source\":\"/var/lib/kubelet/pods/u1/containers/app/ff01\",\"options\":[\"rbind\",\"rw\"]}]}",
	  { .quota = -1, .term = "/var/lib/kubelet/pods/u1/containers/app/ff01" } },
	{ "the last mount is read-only: said so",
	  "{\"mounts\":[{\"destination\":\"/dev/termination-log\",\"source\":\"/k/f\"},"
	  "{\"destination\":\"/dev/termination-log\",\"source\":\"/x/f\",\"options\":[\"rbind\",\"ro\"]}]}",
	  { .quota = -1, .term = "/x/f", .term_ro = true } },
	{ "rw after ro is read-write (the last option wins)",
	  "{\"mounts\":[{\"destination\":\"/dev/termination-log\",\"source\":\"/k/f\","
	  "\"options\":[\"ro\",\"rw\"]}]}", { .quota = -1, .term = "/k/f" } },
	{ "rro is read-only",
	  "{\"mounts\":[{\"destination\":\"/dev/termination-log\",\"source\":\"/k/f\","
	  "\"options\":[\"rw\",\"rro\"]}]}", { .quota = -1, .term = "/k/f", .term_ro = true } },
	{ "a later mount without source shadows an earlier file",
	  "{\"mounts\":[{\"destination\":\"/dev/termination-log\",\"source\":\"/k/f\"},"
	  "{\"destination\":\"/dev/termination-log\",\"type\":\"tmpfs\",\"options\":null}]}",
	  { .quota = -1 } },
	{ "the read-only flag is the last mount's, not an earlier one's",
	  "{\"mounts\":[{\"destination\":\"/dev/termination-log\",\"source\":\"/x/f\",\"options\":[\"ro\"]},"
	  "{\"destination\":\"/dev/termination-log\",\"source\":\"/k/f\",\"options\":[]}]}",
	  { .quota = -1, .term = "/k/f" } },
	{ "kubelet-shaped guesses: the last one, with its options",
	  "{\"annotations\":{\"io.kubernetes.cri.sandbox-uid\":\"u1\","
	  "\"io.kubernetes.cri.container-name\":\"app\"},\"mounts\":["
	  "{\"destination\":\"/a\",\"source\":\"/var/lib/kubelet/pods/u1/containers/app/aa\"},"
	  "{\"destination\":\"/b\",\"source\":\"/var/lib/kubelet/pods/u1/containers/app/bb\","
	  "\"options\":[\"ro\"]}]}",
	  { .uid = "u1", .ctr = "app", .quota = -1,
	    .term = "/var/lib/kubelet/pods/u1/containers/app/bb", .term_ro = true } },
	{ "unknown keys of any type are ignored",
	  "{\"annotations\":{\"x\":5,\"y\":[1]},\"process\":7,\"linux\":{\"sysctl\":1}}",
	  { .quota = -1 } },
	{ "trailing whitespace", "{}\n\t ", { .quota = -1 } },
};

static void test_good_texts(void **state)
{
	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(good_cases); i++) {
		struct pod_meta m;

		print_message("case: %s\n", good_cases[i].name);
		assert_int_equal(meta_parse_text(good_cases[i].json, &m), 0);
		check_meta(&m, &good_cases[i].w);
	}
}

/* Inline texts that must fail, and how. */
/* Texts that are refused: the whole bundle (nothing else kept), or one
 * known annotation (named; the rest still read). Never a silent fallback. */
static const struct {
	const char *name, *json;
	enum meta_invalid kind;
	const char *why;	/* a substring of the error */
} bad_cases[] = {
	{ "empty text", "", META_INVALID_BUNDLE, "not JSON" },
	{ "garbage", "this is not json", META_INVALID_BUNDLE, "not JSON" },
	{ "truncated", "{\"annotations\":{", META_INVALID_BUNDLE, "unexpected end" },
	{ "trailing garbage", "{} x", META_INVALID_BUNDLE, "not JSON" },
	{ "two documents", "{}{}", META_INVALID_BUNDLE, "not JSON" },
	{ "trailing comma", "{\"a\":1,}", META_INVALID_BUNDLE, "not JSON" },
	{ "array root", "[]", META_INVALID_BUNDLE, "root is not a JSON object" },
	{ "string root", "\"x\"", META_INVALID_BUNDLE, "root is not a JSON object" },
	{ "invalid UTF-8", "{\"annotations\":{\"io.kubernetes.pod.name\":\"\xff\xfe\"}}", META_INVALID_BUNDLE, "utf-8" },
	{ "nested 65 deep", NULL, META_INVALID_BUNDLE, "nested deeper than 64" },
	{ "annotations is an array", "{\"annotations\":[]}", META_INVALID_BUNDLE, "\"annotations\" is an array" },
	{ "container name is a number",
	  "{\"annotations\":{\"io.kubernetes.cri.container-name\":5}}", META_INVALID_ANNOTATION,
	  "\"io.kubernetes.cri.container-name\" is an int, expected a string" },
	{ "container type is a bool",
	  "{\"annotations\":{\"io.kubernetes.cri-o.ContainerType\":true}}", META_INVALID_ANNOTATION,
	  "\"io.kubernetes.cri-o.ContainerType\" is a boolean" },
	{ "cores-ids is a number", "{\"annotations\":{\"weka.io/cores-ids\":5}}", META_INVALID_ANNOTATION,
	  "\"weka.io/cores-ids\" is an int, expected a string" },
	{ "cores-ids is an array", "{\"annotations\":{\"weka.io/cores-ids\":[1,2]}}", META_INVALID_ANNOTATION,
	  "\"weka.io/cores-ids\" is an array" },
	{ "second key malformed behind a good first",
	  "{\"annotations\":{\"io.kubernetes.cri.sandbox-name\":\"a\",\"io.kubernetes.pod.name\":{}}}",
	  META_INVALID_ANNOTATION, "\"io.kubernetes.pod.name\" is an object" },
	{ "NUL inside a string",
	  "{\"annotations\":{\"weka.io/cores-ids\":\"1\\u00002\"}}", META_INVALID_ANNOTATION, "contains a NUL" },
	{ "crio annotations not JSON",
	  "{\"annotations\":{\"io.kubernetes.cri-o.Annotations\":\"{nope\"}}", META_INVALID_ANNOTATION,
	  "\"io.kubernetes.cri-o.Annotations\" is not a JSON object" },
	{ "crio annotations a JSON array",
	  "{\"annotations\":{\"io.kubernetes.cri-o.Annotations\":\"[]\"}}", META_INVALID_ANNOTATION,
	  "\"io.kubernetes.cri-o.Annotations\" is not a JSON object" },
	{ "crio annotations a number",
	  "{\"annotations\":{\"io.kubernetes.cri-o.Annotations\":7}}", META_INVALID_ANNOTATION,
	  "\"io.kubernetes.cri-o.Annotations\" is an int" },
	{ "crio inner cores-ids a number",
	  "{\"annotations\":{\"io.kubernetes.cri-o.Annotations\":\"{\\\"weka.io/cores-ids\\\":4}\"}}",
	  META_INVALID_ANNOTATION, "\"weka.io/cores-ids\" is an int" },
	{ "linux is a string", "{\"linux\":\"x\"}", META_INVALID_BUNDLE, "\"linux\" is a string, expected an object" },
	{ "resources is an array", "{\"linux\":{\"resources\":[]}}", META_INVALID_BUNDLE, "\"resources\" is an array" },
	{ "cpu is a number", "{\"linux\":{\"resources\":{\"cpu\":1}}}", META_INVALID_BUNDLE, "\"cpu\" is an int" },
	{ "quota is a string", "{\"linux\":{\"resources\":{\"cpu\":{\"quota\":\"100000\"}}}}", META_INVALID_BUNDLE,
	  "\"quota\" is a string, expected an int" },
	{ "quota is a float", "{\"linux\":{\"resources\":{\"cpu\":{\"quota\":1.5}}}}", META_INVALID_BUNDLE,
	  "\"quota\" is a double" },
	{ "quota above int64",
	  "{\"linux\":{\"resources\":{\"cpu\":{\"quota\":9223372036854775808}}}}", META_INVALID_BUNDLE,
	  "\"quota\" is out of range" },
	{ "negative period", "{\"linux\":{\"resources\":{\"cpu\":{\"period\":-1}}}}", META_INVALID_BUNDLE,
	  "\"period\" is out of range" },
	{ "shares is a string", "{\"linux\":{\"resources\":{\"cpu\":{\"shares\":\"2\"}}}}", META_INVALID_BUNDLE,
	  "\"shares\" is a string" },
	{ "cgroupsPath is a number", "{\"linux\":{\"cgroupsPath\":1}}", META_INVALID_BUNDLE, "\"cgroupsPath\" is an int" },
	{ "mounts is an object", "{\"mounts\":{}}", META_INVALID_BUNDLE, "\"mounts\" is an object" },
	{ "mount is a string", "{\"mounts\":[\"/a\"]}", META_INVALID_BUNDLE, "mounts[0] is not an object" },
	{ "mount destination is a number", "{\"mounts\":[{\"destination\":1,\"source\":\"/a\"}]}", META_INVALID_BUNDLE,
	  "\"destination\" is an int" },
	{ "mount source is an array", "{\"mounts\":[{\"destination\":\"/a\",\"source\":[]}]}", META_INVALID_BUNDLE,
	  "\"source\" is an array" },
	{ "mount options is a string",
	  "{\"mounts\":[{\"destination\":\"/a\",\"source\":\"/b\",\"options\":\"ro\"}]}",
	  META_INVALID_BUNDLE, "\"options\" is a string, expected an array" },
	{ "a mount option is a number",
	  "{\"mounts\":[{\"destination\":\"/a\"},{\"destination\":\"/b\",\"options\":[\"ro\",1]}]}",
	  META_INVALID_BUNDLE, "mounts[1].options[1] is not a string" },
	{ "termination path is a number",
	  "{\"annotations\":{\"io.kubernetes.container.terminationMessagePath\":0}}", META_INVALID_ANNOTATION,
	  "\"io.kubernetes.container.terminationMessagePath\" is an int" },
};

/* "[[[...]]]" depth levels deep, caller frees. */
static char *nested(size_t depth)
{
	char *s = malloc(2 * depth + 1);

	assert_non_null(s);
	memset(s, '[', depth);
	memset(s + depth, ']', depth);
	s[2 * depth] = '\0';
	return s;
}

static void test_bad_texts(void **state)
{
	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(bad_cases); i++) {
		char *deep = bad_cases[i].json ? NULL : nested(META_MAX_JSON_DEPTH + 1);
		struct pod_meta m;

		print_message("case: %s\n", bad_cases[i].name);
		assert_int_equal(meta_parse_text(deep ? deep : bad_cases[i].json, &m), 0);
		assert_int_equal(m.invalid, bad_cases[i].kind);
		if (!strstr(m.error, bad_cases[i].why))
			fail_msg("error \"%s\" lacks \"%s\"", m.error, bad_cases[i].why);
		assert_null(strchr(m.error, '\n'));
		if (m.invalid == META_INVALID_BUNDLE) {
			/* nothing of an unusable bundle is used */
			assert_false(m.from_bundle);
			assert_null(m.cores_ids);
			assert_string_equal(m.pod_name, "");
		}
		meta_release(&m);
		free(deep);
	}
}

/* 100,000 levels: an error in bounded time and stack, not a crash. */
static void test_deep_nesting(void **state)
{
	char *deep = nested(100000);
	struct pod_meta m;

	(void)state;
	assert_int_equal(meta_parse_text(deep, &m), 0);
	assert_int_equal(m.invalid, META_INVALID_BUNDLE);
	assert_non_null(strstr(m.error, "nested deeper than 64"));
	free(deep);
	/* 64 deep inside an annotation object is still fine JSON */
	deep = nested(META_MAX_JSON_DEPTH - 2);
	char *json = malloc(strlen(deep) + 64);
	sprintf(json, "{\"annotations\":{\"x\":%s}}", deep);
	assert_int_equal(meta_parse_text(json, &m), 0);
	assert_int_equal(m.invalid, META_VALID);
	free(json);
	free(deep);
}

/* The identity of the pod survives a bad annotation, so the error lands
 * on the right pod; a bundle fault outranks an annotation one. */
static void test_annotation_error_keeps_identity(void **state)
{
	struct pod_meta m;

	(void)state;
	assert_int_equal(meta_parse_text("{\"annotations\":{"
		"\"io.kubernetes.cri.sandbox-namespace\":\"shop\","
		"\"io.kubernetes.cri.sandbox-name\":\"web-1\","
		"\"io.kubernetes.cri.container-name\":\"app\","
		"\"weka.io/cores-ids\":5}}", &m), 0);
	assert_int_equal(m.invalid, META_INVALID_ANNOTATION);
	assert_string_equal(m.namespace_, "shop");
	assert_string_equal(m.pod_name, "web-1");
	assert_string_equal(m.container_name, "app");
	assert_null(m.cores_ids);
	meta_release(&m);

	assert_int_equal(meta_parse_text("{\"annotations\":{\"weka.io/cores-ids\":5},"
		"\"linux\":{\"cgroupsPath\":7}}", &m), 0);
	assert_int_equal(m.invalid, META_INVALID_BUNDLE);
	assert_non_null(strstr(m.error, "cgroupsPath"));
	meta_release(&m);
}

/* A cpulist annotation of every id of 8192 CPUs (39,849 bytes) is kept
 * whole; one byte over META_MAX_CPULIST_BYTES is refused, never cut. */
static void test_cpulist_sizes(void **state)
{
	static const char *const keys[] = {
		"\"weka.io/cores-ids\":\"%s\"",
		"\"scheduling.koordinator.sh/resource-status\":\"{\\\"cpuset\\\":\\\"%s\\\"}\"",
	};
	char *list = malloc(META_MAX_CPULIST_BYTES + 2), *json = malloc(META_MAX_CPULIST_BYTES + 256);
	size_t len = 0;
	struct pod_meta m;

	(void)state;
	assert_non_null(list);
	assert_non_null(json);
	for (unsigned id = 0; id < 8192; id++)
		len += (size_t)sprintf(list + len, id ? ",%u" : "%u", id);
	assert_int_equal(len, 39849);
	for (size_t k = 0; k < ARRAY_SIZE(keys); k++) {
		char fmt[160];

		snprintf(fmt, sizeof(fmt), "{\"annotations\":{%s}}", keys[k]);
		sprintf(json, fmt, list);
		assert_int_equal(meta_parse_text(json, &m), 0);
		assert_int_equal(m.invalid, META_VALID);
		assert_string_equal(k ? m.pod.status_cpuset : m.cores_ids, list);
		assert_string_equal(m.pod.error, "");
		meta_release(&m);
	}
	/* one byte over the limit */
	memset(list, '1', META_MAX_CPULIST_BYTES + 1);
	list[META_MAX_CPULIST_BYTES + 1] = '\0';
	sprintf(json, "{\"annotations\":{\"weka.io/cores-ids\":\"%s\"}}", list);
	assert_int_equal(meta_parse_text(json, &m), 0);
	assert_int_equal(m.invalid, META_INVALID_ANNOTATION);
	assert_non_null(strstr(m.error, "weka.io/cores-ids\" is 65537 bytes, limit 65536"));
	assert_null(m.cores_ids);
	meta_release(&m);
	free(list);
	free(json);
}

/* meta_copy and meta_inherit_pod own their strings: freeing the source
 * leaves the copy intact (run under ASan by the fuzz build). */
static void test_copy_inherit(void **state)
{
	struct pod_meta sb, ct, cp;

	(void)state;
	assert_int_equal(meta_parse_text("{\"annotations\":{\"io.kubernetes.cri.container-type\":"
		"\"sandbox\",\"weka.io/cores-ids\":\"2-3\",\"koordinator.sh/qosClass\":\"LSR\","
		"\"scheduling.koordinator.sh/resource-status\":\"{\\\"cpuset\\\":\\\"4\\\"}\"}}",
		&sb), 0);
	assert_int_equal(meta_parse_text("{\"annotations\":{\"io.kubernetes.cri.container-type\":"
		"\"container\"}}", &ct), 0);
	assert_int_equal(meta_copy(&cp, &sb), 0);
	assert_int_equal(meta_inherit_pod(&ct, &sb), 0);
	meta_release(&sb);
	assert_string_equal(ct.cores_ids, "2-3");
	assert_string_equal(ct.pod.status_cpuset, "4");
	assert_string_equal(ct.pod.qos_class, "LSR");
	assert_string_equal(cp.cores_ids, "2-3");
	assert_string_equal(cp.pod.status_cpuset, "4");
	meta_release(&ct);
	meta_release(&cp);
}

/*
 * Each string field at its limit (buffer - 1 bytes: accepted) and one past
 * it (refused, never truncated). JSON text: pre + value + post.
 */
static const struct {
	const char *pre, *post;
	size_t size;
	size_t off;
	enum meta_invalid over;	/* what one byte over the limit is */
} size_cases[] = {
#define A(key) "{\"annotations\":{\"" key "\":\""
#define AE "\"}}"
#define F(f) sizeof(((struct pod_meta *)0)->f), offsetof(struct pod_meta, f)
	{ A("io.kubernetes.cri.sandbox-name"), AE, F(pod_name), META_INVALID_ANNOTATION },
	{ A("io.kubernetes.pod.namespace"), AE, F(namespace_), META_INVALID_ANNOTATION },
	{ A("io.kubernetes.cri.sandbox-uid"), AE, F(pod_uid), META_INVALID_ANNOTATION },
	{ A("io.kubernetes.container.name"), AE, F(container_name), META_INVALID_ANNOTATION },
	{ A("io.kubernetes.cri-o.SandboxID"), AE, F(sandbox_id), META_INVALID_ANNOTATION },
	{ "{\"linux\":{\"cgroupsPath\":\"", "\"}}", F(cgroups_path), META_INVALID_BUNDLE },
#undef A
#undef AE
#undef F
};

static void test_string_limits(void **state)
{
	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(size_cases); i++) {
		size_t pre = strlen(size_cases[i].pre), size = size_cases[i].size;
		char *json = malloc(pre + size + 64);
		struct pod_meta m;

		assert_non_null(json);
		for (size_t len = size - 1; len <= size; len++) {
			/* the termination source starts with a '/' already in pre */
			size_t fill = len - (size_cases[i].pre[pre - 1] == '/');

			memcpy(json, size_cases[i].pre, pre);
			memset(json + pre, 'a', fill);
			strcpy(json + pre + fill, size_cases[i].post);
			print_message("case: %s... (%zu bytes)\n", size_cases[i].pre, len);
			assert_int_equal(meta_parse_text(json, &m), 0);
			if (len < size) {
				assert_int_equal(m.invalid, META_VALID);
				assert_int_equal(strlen((char *)&m + size_cases[i].off), len);
			} else {
				/* refused, never truncated into another value */
				assert_int_equal(m.invalid, size_cases[i].over);
				assert_int_equal(strlen((char *)&m + size_cases[i].off), 0);
			}
		}
		free(json);
	}
}

/* The termination mount's source, kept as an owned string: up to
 * META_MOUNT_SOURCE_MAX - 1 bytes whole, longer refused (the bundle), never
 * cut; meta_copy gives the copy its own string. */
static void test_termination_source_limit(void **state)
{
	const char *pre = "{\"mounts\":[{\"destination\":\"/dev/termination-log\",\"source\":\"";
	size_t pre_len = strlen(pre);
	char *json = malloc(pre_len + META_MOUNT_SOURCE_MAX + 16);
	struct pod_meta m, copy;

	(void)state;
	assert_non_null(json);
	for (size_t len = META_MOUNT_SOURCE_MAX - 1; len <= META_MOUNT_SOURCE_MAX; len++) {
		memcpy(json, pre, pre_len);
		json[pre_len] = '/';
		memset(json + pre_len + 1, 'a', len - 1);
		strcpy(json + pre_len + len, "\"}]}");
		assert_int_equal(meta_parse_text(json, &m), 0);
		if (len < META_MOUNT_SOURCE_MAX) {
			assert_int_equal(m.invalid, META_VALID);
			assert_non_null(m.termination_log);
			assert_int_equal(strlen(m.termination_log), len);
			assert_int_equal(meta_copy(&copy, &m), 0);
			assert_ptr_not_equal(copy.termination_log, m.termination_log);
			assert_string_equal(copy.termination_log, m.termination_log);
			meta_release(&copy);
		} else {
			assert_int_equal(m.invalid, META_INVALID_BUNDLE);
			assert_null(m.termination_log);
		}
		meta_release(&m);
	}
	free(json);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fixtures),
		cmocka_unit_test(test_good_texts),
		cmocka_unit_test(test_bad_texts),
		cmocka_unit_test(test_string_limits),
		cmocka_unit_test(test_termination_source_limit),
		cmocka_unit_test(test_deep_nesting),
		cmocka_unit_test(test_annotation_error_keeps_identity),
		cmocka_unit_test(test_cpulist_sizes),
		cmocka_unit_test(test_copy_inherit),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
