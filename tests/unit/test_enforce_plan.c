// SPDX-License-Identifier: Apache-2.0
/*
 * The enforce stage's planner (user/enforce/enforce_plan.c) from the
 * fixture tests/fixtures/enforce/order-cases.txt: each case's targets
 * (what is decided, what the files and entries hold) and the exact
 * ordered operations its rules give. Then what the fixture cannot say:
 * bad arguments, a reused plan, and a property over generated events:
 * replayed in order, no CPU is ever in two exclusive sets and every set
 * lands only where its placement entry allows it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "user/enforce/enforce.h"
#include "testlib.h"

#define MAXT	16

struct enf_case {
	char name[1024];
	int line;
	bool host, tree;
	char names[MAXT][32];
	bool hole[MAXT];
	struct enforce_target t[MAXT];
	/* what the targets point at: cpus, mems, cpus_have, mems_have,
	 * map_have, map_want */
	struct cpumask sets[MAXT][6];
	size_t n;
	struct cgfs_plan_write w[MAXT];
	size_t nw;
	char expect[2048];
};

/* "-" the empty set, "?" unknown (*known false), else a cpulist. */
static struct cpumask list_of(const char *s, bool *known)
{
	if (known)
		*known = strcmp(s, "?") != 0;
	if (!strcmp(s, "?") || !strcmp(s, "-"))
		return (struct cpumask){ 0 };
	return tl_mask(s);
}

static int name_index(const struct enf_case *c, const char *name)
{
	for (size_t i = 0; i < c->n; i++)
		if (!strcmp(c->names[i], name))
			return (int)i;
	fail_msg("line %d: no target \"%s\"", c->line, name);
	return -1;
}

/* HAVE>WANT into *have (NULL when unknown) and *want, stored in hs, ws. */
static void have_want(const struct enf_case *c, char *v, const struct cpumask **have,
		      struct cpumask *hs, const struct cpumask **want, struct cpumask *ws)
{
	char *gt = strchr(v, '>');
	bool known;

	if (!gt)
		fail_msg("line %d: \"%s\" is not HAVE>WANT", c->line, v);
	*gt = '\0';
	*hs = list_of(v, &known);
	*have = known ? hs : NULL;
	*ws = list_of(gt + 1, NULL);
	*want = ws;
}

static void parse_target(struct enf_case *c, char *rest)
{
	struct enforce_target *t = &c->t[c->n];
	struct cpumask *m = c->sets[c->n];
	char *save = NULL, *tok = strtok_r(rest, " ", &save);
	bool sync = false;

	assert_true(c->n < MAXT);
	assert_non_null(tok);
	snprintf(c->names[c->n], sizeof(c->names[0]), "%s", tok);
	*t = (struct enforce_target){ .path = c->names[c->n] };
	while ((tok = strtok_r(NULL, " ", &save))) {
		if (!strcmp(tok, "hole")) {
			c->hole[c->n] = true;
		} else if (!strncmp(tok, "cpus=", 5)) {
			have_want(c, tok + 5, &t->cpus_have, &m[2], &t->cpus, &m[0]);
		} else if (!strncmp(tok, "mems=", 5)) {
			have_want(c, tok + 5, &t->mems_have, &m[3], &t->mems, &m[1]);
		} else if (!strncmp(tok, "map=", 4)) {
			m[4] = list_of(tok + 4, NULL);
			t->map_have = &m[4];
		} else if (!strcmp(tok, "sync")) {
			sync = true;
		} else if (!strncmp(tok, "sync=", 5)) {
			m[5] = list_of(tok + 5, NULL);
			t->map_want = &m[5];
		} else {
			fail_msg("line %d: unknown \"%s\"", c->line, tok);
		}
	}
	if (sync)
		t->map_want = t->cpus ? t->cpus : &m[5];
	c->n++;
}

static void parse_writes(struct enf_case *c, char *rest)
{
	char *save = NULL;

	for (char *tok = strtok_r(rest, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
		char *eq = strchr(tok, '=');

		assert_non_null(eq);
		*eq = '\0';
		assert_true(c->nw < MAXT);
		c->w[c->nw].node = name_index(c, tok);
		c->w[c->nw++].cpus = list_of(eq + 1, NULL);
	}
}

/* p's operations as the fixture writes them. */
static void ops_text(const struct enf_case *c, const struct enforce_plan *p, char *buf,
		     size_t len)
{
	static const char *const kind[] = { [ENFORCE_MAP_WIDEN] = "widen",
		[ENFORCE_CPUS] = "cpus", [ENFORCE_MEMS] = "mems", [ENFORCE_HOST] = "host",
		[ENFORCE_MAP] = "map" };
	size_t off = 0;

	buf[0] = '\0';
	for (size_t k = 0; k < p->n; k++) {
		const struct enforce_op *op = &p->ops[k];
		char set[CPULIST_MAX];

		assert_true(cpulist_format(&op->set, set, sizeof(set)) >= 0);
		if (op->kind == ENFORCE_HOST)
			off += (size_t)snprintf(buf + off, len - off, "%shost", off ? " " : "");
		else
			off += (size_t)snprintf(buf + off, len - off, "%s%s:%s=%s", off ? " " : "",
						kind[op->kind], c->names[op->target],
						set[0] ? set : "-");
		assert_true(off < len);
	}
	if (!p->n)
		snprintf(buf, len, "none");
}

static void run_case(struct enf_case *c, int *ran)
{
	struct enforce_plan p = { 0 };
	char got[2048];
	int node_target[MAXT], r;

	if (!c->name[0])
		return;
	if (!c->expect[0])
		fail_msg("line %d: case \"%s\" has no expect line", c->line, c->name);
	if (c->tree) {
		for (size_t i = 0; i < c->n; i++)
			node_target[i] = c->hole[i] ? -1 : (int)i;
		r = enforce_plan_tree(c->t, c->n, c->w, c->nw, node_target, &p);
	} else {
		r = enforce_plan(c->t, c->n, c->host ? ENFORCE_WITH_HOST : 0, &p);
	}
	assert_int_equal(r, 0);
	ops_text(c, &p, got, sizeof(got));
	if (strcmp(got, c->expect) != 0)
		fail_msg("case \"%s\":\n  got    %s\n  expect %s", c->name, got, c->expect);
	/* the exact entries are the tail, from writes_end */
	for (size_t k = 0; k < p.n; k++)
		assert_int_equal(p.ops[k].kind == ENFORCE_MAP, k >= p.writes_end);
	enforce_plan_free(&p);
	(*ran)++;
}

static void test_fixture_cases(void **state)
{
	char path[512], line[1024];
	struct enf_case *c = calloc(1, sizeof(*c));
	int ran = 0, no = 0;
	FILE *f;

	(void)state;
	assert_non_null(c);
	snprintf(path, sizeof(path), "%s/enforce/order-cases.txt", tl_fixtures());
	f = fopen(path, "r");
	if (!f)
		fail_msg("cannot open %s", path);
	while (fgets(line, sizeof(line), f)) {
		char *nl = strchr(line, '\n');

		no++;
		if (nl)
			*nl = '\0';
		if (!line[0] || line[0] == '#')
			continue;
		if (!strncmp(line, "case ", 5)) {
			run_case(c, &ran);
			memset(c, 0, sizeof(*c));
			snprintf(c->name, sizeof(c->name), "%s", line + 5);
		} else if (!strcmp(line, "host")) {
			c->host = true;
		} else if (!strcmp(line, "tree")) {
			c->tree = true;
		} else if (!strncmp(line, "target ", 7)) {
			c->line = no;
			parse_target(c, line + 7);
		} else if (!strncmp(line, "w ", 2)) {
			c->line = no;
			parse_writes(c, line + 2);
		} else if (!strncmp(line, "expect ", 7)) {
			snprintf(c->expect, sizeof(c->expect), "%s", line + 7);
		} else {
			fail_msg("%s:%d: unknown line \"%s\"", path, no, line);
		}
	}
	run_case(c, &ran);
	fclose(f);
	free(c);
	assert_true(ran >= 12);		/* every case of the file ran */
}

static void test_bad_arguments(void **state)
{
	struct enforce_target t = { 0 };
	struct enforce_plan p = { 0 };
	struct cgfs_plan_write w = { 0 };

	(void)state;
	assert_int_equal(enforce_plan(NULL, 1, 0, &p), -EINVAL);
	assert_int_equal(enforce_plan(&t, 1, 0, NULL), -EINVAL);
	assert_int_equal(enforce_plan_tree(&t, 1, &w, 1, NULL, &p), -EINVAL);
	assert_int_equal(enforce_plan(NULL, 0, 0, &p), 0);	/* no target: nothing */
	assert_int_equal(p.n, 0);
	assert_int_equal(enforce_plan(NULL, 0, ENFORCE_WITH_HOST, &p), 0);
	assert_int_equal(p.n, 1);	/* the host still follows the pools */
	assert_int_equal(p.ops[0].kind, ENFORCE_HOST);
	enforce_plan_free(&p);
	enforce_plan_free(NULL);
}

/* A plan made into a used list replaces it (no operation of the last). */
static void test_plan_reused(void **state)
{
	struct cpumask m = tl_mask("0-3");
	struct enforce_target t = { .cpus = &m };
	struct enforce_plan p = { 0 };

	(void)state;
	for (int i = 0; i < 200; i++)
		assert_int_equal(enforce_plan(&t, 1, ENFORCE_WITH_HOST, &p), 0);
	assert_int_equal(p.n, 2);
	t.cpus_have = &m;
	assert_int_equal(enforce_plan(&t, 1, 0, &p), 0);
	assert_int_equal(p.n, 0);
	enforce_plan_free(&p);
}

/* A CPU of 0-15 in no set of taken, from *seed; adds it to taken. */
static unsigned free_cpu(struct cpumask *taken, unsigned *seed)
{
	unsigned cpu = (unsigned)rand_r(seed) % 16;

	while (cpumask_test(taken, cpu))
		cpu = (cpu + 1) % 16;
	cpumask_set(taken, cpu);
	return cpu;
}

/*
 * Generated events on 16 CPUs, as the policy makes them: four exclusive
 * slots (admitted on free CPUs, released, grown by free CPUs, shrunk to
 * a part) and three shared containers on the rest; each event planned
 * from the state the last one left. Replaying each plan in order: after
 * every write no exclusive set shares a CPU with any other container's
 * set, every cpuset.cpus write lands inside its placement entry, and at
 * the end every file and entry is as decided.
 */
static void test_generated_events(void **state)
{
	enum { NX = 4, NS = 3, NT = NX + NS };
	struct enforce_target t[NT];
	struct enforce_plan p = { 0 };
	struct cpumask cur[NT] = { 0 }, map[NT] = { 0 }, want[NX] = { 0 }, pool;
	struct cpumask have[NT], entry[NT];
	unsigned seed = 1;

	(void)state;
	for (int i = NX; i < NT; i++)
		cur[i] = map[i] = tl_mask("0-15");
	for (int ev = 0; ev < 3000; ev++) {
		struct cpumask excl = { 0 };
		int i = (int)((unsigned)rand_r(&seed) % NX), how = rand_r(&seed) % 3;
		bool admitted = cpumask_empty(&want[i]);

		for (int x = 0; x < NX; x++)
			cpumask_or(&excl, &excl, &want[x]);
		if (admitted || how == 0) {		/* admit (1-3 CPUs) or grow by 1 */
			for (int k = admitted ? 1 + rand_r(&seed) % 3 : 1; k > 0; k--)
				if (cpumask_weight(&excl) < 13)
					cpumask_set(&want[i], free_cpu(&excl, &seed));
		} else if (how == 1) {			/* release */
			cpumask_andnot(&excl, &excl, &want[i]);
			cpumask_zero(&want[i]);
			cur[i] = map[i] = want[i];	/* its cgroup is gone */
		} else if (cpumask_weight(&want[i]) > 1) {	/* shrink by one */
			unsigned cpu = 0;

			while (!cpumask_test(&want[i], cpu))
				cpu++;
			cpumask_clear(&want[i], cpu);
		}
		excl = (struct cpumask){ 0 };
		for (int x = 0; x < NX; x++)
			cpumask_or(&excl, &excl, &want[x]);
		pool = tl_mask("0-15");
		cpumask_andnot(&pool, &pool, &excl);
		for (int x = 0; x < NT; x++) {
			const struct cpumask *w = x < NX ? &want[x] : &pool;
			bool placed = !cpumask_empty(w);

			have[x] = cur[x];
			entry[x] = map[x];
			t[x] = (struct enforce_target){
				.cpus = placed ? w : NULL,
				.cpus_have = x == i && admitted ? NULL : &have[x],
				.map_have = placed ? &entry[x] : NULL, .map_want = w };
		}
		assert_int_equal(enforce_plan(t, NT, ENFORCE_WITH_HOST, &p), 0);
		for (size_t k = 0; k < p.n; k++) {
			const struct enforce_op *op = &p.ops[k];

			if (op->kind == ENFORCE_MAP_WIDEN || op->kind == ENFORCE_MAP) {
				map[op->target] = op->set;
				continue;
			}
			if (op->kind != ENFORCE_CPUS)
				continue;
			assert_true(cpumask_subset(&op->set, &map[op->target]));
			cur[op->target] = op->set;
			for (int a = 0; a < NX; a++)
				for (int b = 0; b < NT; b++) {
					struct cpumask both;

					cpumask_and(&both, &cur[a], &cur[b]);
					if (a != b && !cpumask_empty(&both))
						fail_msg("event %d, op %zu: exclusive %d and %d share "
							 "CPUs", ev, k, a, b);
				}
		}
		for (int x = 0; x < NT; x++) {
			const struct cpumask *w = x < NX ? &want[x] : &pool;

			assert_true(cpumask_equal(&cur[x], w));
			if (t[x].map_have)
				assert_true(cpumask_equal(&map[x], w));
		}
	}
	enforce_plan_free(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fixture_cases),
		cmocka_unit_test(test_bad_arguments),
		cmocka_unit_test(test_plan_reused),
		cmocka_unit_test(test_generated_events),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
