// SPDX-License-Identifier: Apache-2.0
/*
 * The pod policy annotations (user/meta/meta_pod.c) through meta_parse_text:
 * the fuzz input becomes the *values* of koordinator.sh/qosClass,
 * scheduling.koordinator.sh/resource-status, .../resource-spec and
 * cpusetd.io/prefer-isolated-cpus, JSON-escaped into a fixed, valid
 * config.json, so the fuzzer spends its time in the value parsers (the
 * JSON serialised inside resource-status/-spec) rather than on outer
 * JSON syntax, which fuzz_meta.c covers.
 *
 * Input: a flags byte, then up to four values separated by 0xff (a byte
 * that is never valid UTF-8, so no useful value needs it). Flags bit 0:
 * the values go into CRI-O's io.kubernetes.cri-o.Annotations string (a
 * JSON object in a string: escaped twice) instead of the bundle's own
 * annotations.
 *
 * Invariants: a malformed policy annotation never spoils the bundle
 * (meta.h: it is kept in pod.error), so the bundle stays valid unless a
 * value is not UTF-8 (the whole document is then not JSON); a qos value
 * that fits is taken as is, one that does not is an error; the usual
 * pod_meta invariants (fuzz_meta.h).
 */
#include <errno.h>
#include "fuzz.h"
#include "fuzz_meta.h"

#define N_VALUES	4

static const char *const keys[N_VALUES] = {
	META_QOS_CLASS_ANNOTATION,
	META_RESOURCE_STATUS_ANNOTATION,
	META_RESOURCE_SPEC_ANNOTATION,
	META_PREFER_ISOLATED_ANNOTATION,
};

struct buf {
	char *p;
	size_t len, cap;
};

static void put(struct buf *b, const char *s, size_t n)
{
	if (b->len + n + 1 > b->cap) {
		b->cap = (b->len + n + 1) * 2;
		b->p = fuzz_realloc(b->p, b->cap);
	}
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = '\0';
}

static void puts_(struct buf *b, const char *s)
{
	put(b, s, strlen(s));
}

/* s[0..n) as the inside of a JSON string: quotes, backslashes and control
 * bytes escaped; bytes >= 0x80 passed raw (real bundles are UTF-8). */
static void put_escaped(struct buf *b, const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		char esc[8];

		if (c == '"' || c == '\\') {
			esc[0] = '\\';
			esc[1] = (char)c;
			put(b, esc, 2);
		} else if (c < 0x20) {
			snprintf(esc, sizeof(esc), "\\u%04x", c);
			put(b, esc, 6);
		} else
			put(b, (const char *)&c, 1);
	}
}

/* {"key":"value",...} for the values given. */
static void put_object(struct buf *b, char *const *vals, const size_t *lens)
{
	bool first = true;

	puts_(b, "{");
	for (int i = 0; i < N_VALUES; i++) {
		if (!vals[i])
			continue;
		if (!first)
			puts_(b, ",");
		first = false;
		puts_(b, "\"");
		puts_(b, keys[i]);
		puts_(b, "\":\"");
		put_escaped(b, vals[i], lens[i]);
		puts_(b, "\"");
	}
	puts_(b, "}");
}

static void build(struct buf *doc, bool crio, char *const *vals, const size_t *lens)
{
	puts_(doc, "{\"ociVersion\":\"1.0.2\",\"annotations\":{"
		   "\"io.kubernetes.cri.container-type\":\"container\","
		   "\"io.kubernetes.cri.sandbox-name\":\"fuzz\","
		   "\"io.kubernetes.cri.sandbox-namespace\":\"default\","
		   "\"io.kubernetes.cri.sandbox-uid\":\"0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0\","
		   "\"io.kubernetes.cri.container-name\":\"app\"");
	if (crio) {
		struct buf inner = { 0 };

		put_object(&inner, vals, lens);
		puts_(doc, ",\"io.kubernetes.cri-o.Annotations\":\"");
		put_escaped(doc, inner.p, inner.len);
		puts_(doc, "\"}");
		free(inner.p);
	} else {
		struct buf obj = { 0 };

		put_object(&obj, vals, lens);
		/* The annotations object is already open: drop obj's '{'. */
		if (obj.len > 2)
			puts_(doc, ",");
		put(doc, obj.p + 1, obj.len - 1);
		free(obj.p);
	}
	puts_(doc, ",\"linux\":{\"resources\":{\"cpu\":{\"quota\":200000,\"period\":100000}}}}");
}

/* Whether some value has a byte >= 0x80 (maybe not UTF-8). */
static bool has_high_byte(char *const *vals, const size_t *lens)
{
	for (int i = 0; i < N_VALUES; i++)
		for (size_t k = 0; vals[i] && k < lens[i]; k++)
			if ((unsigned char)vals[i][k] >= 0x80)
				return true;
	return false;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *vals[N_VALUES] = { 0 };
	size_t lens[N_VALUES] = { 0 };
	struct buf doc = { 0 };
	struct pod_meta m;
	bool crio;
	int r;

	if (size < 1)
		return 0;
	crio = data[0] & 1;
	/* Values may hold NULs: the JSON escape keeps them (\u0000). */
	fuzz_split(data + 1, size - 1, 0xff, vals, lens, N_VALUES);
	build(&doc, crio, vals, lens);

	r = meta_parse_text(doc.p, &m);
	FUZZ_CHECK(r == 0 || r == -ENOMEM);
	if (r == 0 && !has_high_byte(vals, lens))
		FUZZ_CHECK(m.invalid == META_VALID);
	if (r == 0 && m.invalid != META_INVALID_BUNDLE) {
		const char *qos = vals[0];

		FUZZ_CHECK(m.has_cpu_limit && m.quota_us == 200000);
		FUZZ_CHECK(strcmp(m.container_name, "app") == 0);
		if (qos && lens[0] == strlen(qos) && lens[0] < sizeof(m.pod.qos_class))
			FUZZ_CHECK(strcmp(m.pod.qos_class, qos) == 0);
		else if (qos)
			FUZZ_CHECK(m.pod.error[0] && !m.pod.qos_class[0]);
		else
			FUZZ_CHECK(!m.pod.qos_class[0]);
	}
	fuzz_check_pod_meta(r, &m);
	free(doc.p);
	fuzz_free_parts(vals, N_VALUES);
	return 0;
}
