// SPDX-License-Identifier: Apache-2.0
/*
 * cpusetctl allocate: the runner for Koordinator cases
 * (fixtures/koord-cases.jsonl, schema in fixtures/SOURCE.md), which
 * replays cpu_accumulator_test.go through koord_alloc():
 *   take          one request on a node where "allocated" CPUs are held
 *                 with "allocated_exclusive_policy";
 *   sequence      pods one after another, each result recorded as held
 *                 (max_ref_count lets CPUs be shared);
 *   spread_order  the order SpreadByPCPUs visits an idle node's CPUs.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ctl.h"
#include "ctl_alloc.h"
#include "user/alloc/koord_alloc.h"

static const char *opt_str(json_object *o, const char *key)
{
	json_object *v;

	if (!o || !json_object_object_get_ex(o, key, &v) ||
	    !json_object_is_type(v, json_type_string))
		return NULL;
	return json_object_get_string(v);
}

static int opt_int(json_object *o, const char *key, int def, int *ret)
{
	json_object *v;

	if (!o || !json_object_object_get_ex(o, key, &v) ||
	    json_object_is_type(v, json_type_null)) {
		*ret = def;
		return 0;
	}
	if (!json_object_is_type(v, json_type_int))
		return -EINVAL;
	*ret = json_object_get_int(v);
	return 0;
}

static int bad(char *why, size_t len, const char *field)
{
	snprintf(why, len, "cannot read %s", field);
	return -EINVAL;
}

/* A policy name; an absent one means Koordinator's default (index 0). */
static int opt_policy(json_object *o, const char *key, int (*parse)(const char *, void *),
		      void *ret, char *why, size_t len)
{
	const char *name = opt_str(o, key);

	if (!name)
		return 0;
	return parse(name, ret) < 0 ? bad(why, len, key) : 0;
}

static int parse_bind(const char *s, void *ret) { return koord_bind_policy_parse(s, ret); }
static int parse_excl(const char *s, void *ret) { return koord_excl_policy_parse(s, ret); }
static int parse_numa(const char *s, void *ret) { return koord_numa_strategy_parse(s, ret); }

/* The request fields shared by all kinds: options of the case. */
static int read_request(json_object *opts, struct koord_request *req, char *why, size_t len)
{
	int refs;

	*req = (struct koord_request){ .bind = KOORD_BIND_FULL_PCPUS };
	if (opt_policy(opts, "bind_policy", parse_bind, &req->bind, why, len) ||
	    opt_policy(opts, "exclusive_policy", parse_excl, &req->excl, why, len) ||
	    opt_policy(opts, "numa_allocate_strategy", parse_numa, &req->numa, why, len))
		return -EINVAL;
	if (opt_int(opts, "max_ref_count", 1, &refs) || refs < 1)
		return bad(why, len, "options.max_ref_count");
	req->max_ref_count = (unsigned)refs;
	return 0;
}

/* Compares a result (or error) with the expect string of obj. */
static int check(json_object *obj, int r, const struct cpumask *got, const char *err,
		 char *why, size_t len)
{
	const char *want = opt_str(obj, "expect");
	char gbuf[CPULIST_MAX];
	struct cpumask w;

	if (!want)
		return bad(why, len, "expect");
	if (strcmp(want, "error") == 0) {
		if (r < 0)
			return 0;
		cpulist_format(got, gbuf, sizeof(gbuf));
		snprintf(why, len, "got %s, want an error", gbuf);
		return 1;
	}
	if (cpulist_parse(want, &w) < 0)
		return bad(why, len, "expect");
	if (r < 0) {
		snprintf(why, len, "got error \"%s\" (%s), want %s", err, strerror(-r), want);
		return 1;
	}
	if (cpumask_equal(got, &w))
		return 0;
	cpulist_format(got, gbuf, sizeof(gbuf));
	snprintf(why, len, "got %s, want %s", gbuf, want);
	return 1;
}

static int run_take(json_object *c, const struct alloc_topo *t, char *why, size_t len)
{
	struct koord_cpu_usage usage[CPUSETD_MAX_CPUS];
	struct cpumask avail, held, pref, got;
	json_object *opts = NULL;
	enum koord_excl_policy held_excl = KOORD_EXCL_NONE;
	struct koord_request req;
	char err[256] = "";
	int n, r;

	json_object_object_get_ex(c, "options", &opts);
	if (read_request(opts, &req, why, len) ||
	    opt_policy(opts, "allocated_exclusive_policy", parse_excl, &held_excl, why, len))
		return -EINVAL;
	if (ctl_json_cpulist(c, "available", &avail) < 0)
		return bad(why, len, "available");
	if (opt_int(c, "request", -1, &n) || n < 0)
		return bad(why, len, "request");
	req.n = (unsigned)n;
	cpumask_zero(&held);
	if (opt_str(opts, "allocated") && ctl_json_cpulist(opts, "allocated", &held) < 0)
		return bad(why, len, "options.allocated");
	if (opt_str(opts, "preferred")) {
		if (ctl_json_cpulist(opts, "preferred", &pref) < 0)
			return bad(why, len, "options.preferred");
		req.preferred = &pref;
	}
	memset(usage, 0, sizeof(usage));
	koord_usage_add(usage, &held, held_excl);
	cpumask_zero(&got);
	r = koord_alloc(t, &avail, usage, &req, &got, err, sizeof(err));
	return check(c, r, &got, err, why, len);
}

/* One step of a sequence; records its CPUs as held with excl. */
static int run_step(json_object *step, unsigned i, const struct alloc_topo *t,
		    const struct cpumask *all, struct koord_cpu_usage *usage,
		    struct koord_request req, enum koord_excl_policy excl, char *why, size_t len)
{
	struct cpumask avail, got;
	char err[256] = "", sub[400];
	int n, r;

	if (opt_int(step, "request", -1, &n) || n < 0 ||
	    opt_policy(step, "bind_policy", parse_bind, &req.bind, why, len))
		return bad(why, len, "steps[].request/bind_policy");
	req.n = (unsigned)n;
	koord_usage_available(t, usage, req.max_ref_count, &avail);
	cpumask_and(&avail, &avail, all);
	cpumask_zero(&got);
	r = koord_alloc(t, &avail, usage, &req, &got, err, sizeof(err));
	r = check(step, r, &got, err, sub, sizeof(sub));
	if (r) {
		snprintf(why, len, "step %u: %s", i + 1, sub);
		return r;
	}
	koord_usage_add(usage, &got, excl);
	return 0;
}

static int run_sequence(json_object *c, const struct alloc_topo *t, char *why, size_t len)
{
	struct koord_cpu_usage usage[CPUSETD_MAX_CPUS];
	enum koord_excl_policy excl = KOORD_EXCL_NONE;
	json_object *opts = NULL, *steps;
	struct cpumask all, left, want;
	struct koord_request req;
	char gbuf[CPULIST_MAX];
	const char *final;
	int r;

	json_object_object_get_ex(c, "options", &opts);
	if (read_request(opts, &req, why, len) ||
	    opt_policy(opts, "record_each_result_with_exclusive_policy", parse_excl, &excl, why,
		       len))
		return -EINVAL;
	if (ctl_json_cpulist(c, "available", &all) < 0)
		return bad(why, len, "available");
	if (!json_object_object_get_ex(c, "steps", &steps) ||
	    !json_object_is_type(steps, json_type_array))
		return bad(why, len, "steps");
	memset(usage, 0, sizeof(usage));
	for (size_t i = 0; i < json_object_array_length(steps); i++) {
		r = run_step(json_object_array_get_idx(steps, i), (unsigned)i, t, &all, usage, req,
			     excl, why, len);
		if (r)
			return r;
	}
	final = opt_str(c, "final_available");
	if (!final)
		return 0;
	if (cpulist_parse(final, &want) < 0)
		return bad(why, len, "final_available");
	koord_usage_available(t, usage, req.max_ref_count, &left);
	cpumask_and(&left, &left, &all);
	if (cpumask_equal(&left, &want))
		return 0;
	cpulist_format(&left, gbuf, sizeof(gbuf));
	snprintf(why, len, "available at the end: got %s, want %s", gbuf, final);
	return 1;
}

/* expect_order: a JSON array of CPU ids, or the same as "0,2,4" text. */
static int read_order(json_object *c, unsigned *ret, size_t cap, size_t *n)
{
	json_object *v;
	const char *s;
	char *end;

	if (!json_object_object_get_ex(c, "expect_order", &v))
		return -EINVAL;
	*n = 0;
	if (json_object_is_type(v, json_type_array)) {
		for (size_t i = 0; i < json_object_array_length(v); i++) {
			json_object *e = json_object_array_get_idx(v, i);

			if (!json_object_is_type(e, json_type_int) || *n == cap ||
			    json_object_get_int(e) < 0)
				return -EINVAL;
			ret[(*n)++] = (unsigned)json_object_get_int(e);
		}
		return 0;
	}
	if (!json_object_is_type(v, json_type_string))
		return -EINVAL;
	for (s = json_object_get_string(v); *s; s = *end ? end + 1 : end) {
		unsigned long x = strtoul(s, &end, 10);

		if (end == s || (*end && *end != ',') || *n == cap)
			return -EINVAL;
		ret[(*n)++] = (unsigned)x;
	}
	return 0;
}

static void format_order(const unsigned *o, size_t n, char *buf, size_t len)
{
	size_t off = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < n && off < len; i++)
		off += (size_t)snprintf(buf + off, len - off, "%s%u", i ? "," : "", o[i]);
}

static int run_spread_order(json_object *c, const struct alloc_topo *t, char *why, size_t len)
{
	unsigned want[CPUSETD_MAX_CPUS], got[CPUSETD_MAX_CPUS];
	char gbuf[200], wbuf[200];
	json_object *opts = NULL;
	struct koord_request req;
	struct cpumask avail;
	size_t nwant;
	int n;

	json_object_object_get_ex(c, "options", &opts);
	if (read_request(opts, &req, why, len))
		return -EINVAL;
	avail = t->cpus;	/* "an idle node" unless the case says otherwise */
	if (json_object_object_get_ex(c, "available", NULL) &&
	    ctl_json_cpulist(c, "available", &avail) < 0)
		return bad(why, len, "available");
	if (read_order(c, want, CPUSETD_MAX_CPUS, &nwant) < 0)
		return bad(why, len, "expect_order");
	n = koord_spread_order(t, &avail, NULL, &req, got, CPUSETD_MAX_CPUS);
	if (n < 0) {
		snprintf(why, len, "error %s", strerror(-n));
		return 1;
	}
	if ((size_t)n == nwant && memcmp(got, want, nwant * sizeof(*want)) == 0)
		return 0;
	format_order(got, (size_t)n, gbuf, sizeof(gbuf));
	format_order(want, nwant, wbuf, sizeof(wbuf));
	snprintf(why, len, "order: got %s, want %s", gbuf, wbuf);
	return 1;
}

int ctl_case_koord(json_object *c, const struct alloc_topo *t, char *why, size_t len)
{
	const char *kind = opt_str(c, "kind");

	if (!kind)
		return bad(why, len, "kind");
	if (strcmp(kind, "take") == 0)
		return run_take(c, t, why, len);
	if (strcmp(kind, "sequence") == 0)
		return run_sequence(c, t, why, len);
	if (strcmp(kind, "spread_order") == 0)
		return run_spread_order(c, t, why, len);
	snprintf(why, len, "unknown kind \"%s\"", kind);
	return -EINVAL;
}
