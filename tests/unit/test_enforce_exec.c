// SPDX-License-Identifier: Apache-2.0
/*
 * The enforce stage's executor (user/enforce/enforce_exec.c) on a v1
 * cpuset tree of regular files with the kernel's rules
 * (test_controller_kern.h): the writes land in the plan's order with the
 * host's share between the phases, each result is the write's (a
 * vanished cgroup -ENOENT, a set outside the parent's widened as v1
 * needs), a dry run writes nothing, and entries without a placement map
 * are skipped.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>
#include "user/enforce/enforce.h"
#include "testlib.h"
#include "test_controller_kern.h"

struct fx {
	char dir[PATH_MAX];
	struct cgfs *cg;
	unsigned host_at;	/* kern.n when the host op ran; ~0: never */
	int fd[3];
};

static void put_file(const char *dir, const char *cg, const char *file, const char *v)
{
	char p[PATH_MAX * 2];
	FILE *f;

	snprintf(p, sizeof(p), "%s%s/%s", dir, cg, file);
	f = fopen(p, "w");
	assert_non_null(f);
	fputs(v, f);
	fclose(f);
}

static void mk(const char *dir, const char *cg, const char *cpus)
{
	char p[PATH_MAX * 2];

	snprintf(p, sizeof(p), "%s%s", dir, cg);
	assert_int_equal(mkdir(p, 0755), 0);
	put_file(dir, cg, "cpuset.cpus", cpus);
	put_file(dir, cg, "cpuset.mems", "0\n");
}

static int setup(void **state)
{
	struct cgfs_mounts m = { .mode = CGFS_MODE_V1 };
	char tmpl[] = "/tmp/test_enforce_exec.XXXXXX";
	struct fx *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	assert_non_null(mkdtemp(tmpl));
	assert_non_null(realpath(tmpl, f->dir));
	put_file(f->dir, "", "cpuset.cpus", "0-7\n");
	put_file(f->dir, "", "cpuset.mems", "0\n");
	mk(f->dir, "/kubepods", "0-7\n");
	mk(f->dir, "/kubepods/a", "0-7\n");
	mk(f->dir, "/kubepods/b", "2-3\n");
	assert_true(strlen(f->dir) < sizeof(m.cpuset_mnt));
	memcpy(m.cpuset_mnt, f->dir, strlen(f->dir) + 1);
	memcpy(m.cpu_mnt, f->dir, strlen(f->dir) + 1);
	assert_int_equal(cgfs_open(&m, &f->cg), 0);
	snprintf(kern.root, sizeof(kern.root), "%s", f->dir);
	kern.len = strlen(kern.root);
	log_reset();
	f->fd[0] = f->fd[1] = f->fd[2] = -1;
	f->host_at = ~0u;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;

	for (int i = 0; i < 3; i++)
		if (f->fd[i] >= 0)
			close(f->fd[i]);
	cgfs_free(f->cg);
	kern.len = 0;
	tl_rm_tree(f->dir);
	free(f);
	return 0;
}

static void host_hook(void *ctx)
{
	struct fx *f = ctx;

	f->host_at = kern.n;
}

/* The sets the targets point at. */
static struct cpumask m0_7, m2_7, m0_1, n0, none;

/* a gives 0-1 up, b takes them (and mems), gone vanished; entries of a
 * and b exact at the end. */
static void targets(struct fx *f, struct enforce_target *t)
{
	m0_7 = tl_mask("0-7");
	m2_7 = tl_mask("2-7");
	m0_1 = tl_mask("0-1");
	n0 = tl_mask("0");
	cpumask_zero(&none);
	t[0] = (struct enforce_target){ .path = "/kubepods/a", .cpus_fd = &f->fd[0],
					.cpus = &m2_7, .cpus_have = &m0_7, .map_have = &m0_7,
					.map_want = &m2_7, .cgroup_id = 11 };
	t[1] = (struct enforce_target){ .path = "/kubepods/b", .cpus_fd = &f->fd[1],
					.cpus = &m0_1, .mems = &n0, .map_have = &none,
					.map_want = &m0_1, .cgroup_id = 12 };
	t[2] = (struct enforce_target){ .path = "/kubepods/gone", .cpus_fd = &f->fd[2],
					.cpus = &m2_7 };
}

static int find(const char *file)
{
	for (unsigned i = 0; i < kern.n; i++)
		if (!strcmp(kern.log[i].file, file))
			return (int)i;
	return -1;
}

static void test_order_and_results(void **state)
{
	struct fx *f = *state;
	struct enforce_target t[3];
	struct enforce_plan p = { 0 };
	struct enforce_io io = { .cg = f->cg, .root = "/kubepods", .host = host_hook, .ctx = f };
	int res[32];
	struct cpumask got;

	targets(f, t);
	assert_int_equal(enforce_plan(t, 3, ENFORCE_WITH_HOST, &p), 0);
	assert_true(p.n <= 32);
	enforce_exec(&io, t, &p, 0, p.n, res);
	for (size_t k = 0; k < p.n; k++) {
		const struct enforce_op *op = &p.ops[k];

		if (op->kind == ENFORCE_MAP || op->kind == ENFORCE_MAP_WIDEN)
			assert_int_equal(res[k], ENFORCE_SKIPPED);	/* no BPF here */
		else if (op->kind == ENFORCE_CPUS && op->target == 2)
			assert_int_equal(res[k], -ENOENT);
		else
			assert_int_equal(res[k], 0);
	}
	/* a's narrowing, then the host, then b's cpus and mems */
	assert_int_equal(find("/kubepods/a/cpuset.cpus"), 0);
	assert_int_equal(f->host_at, 1);
	assert_true(find("/kubepods/b/cpuset.cpus") > find("/kubepods/a/cpuset.cpus"));
	assert_true(find("/kubepods/b/cpuset.mems") > find("/kubepods/b/cpuset.cpus"));
	assert_int_equal(read_mask(f->dir, "/kubepods/a", "cpuset.cpus", &got), 0);
	tl_assert_mask(&got, "2-7");
	assert_int_equal(read_mask(f->dir, "/kubepods/b", "cpuset.cpus", &got), 0);
	tl_assert_mask(&got, "0-1");
	assert_true(f->fd[0] >= 0 && f->fd[1] >= 0);	/* kept open for the next resize */

	/* the same plan again through the kept fds: a resize back */
	log_reset();
	t[0].cpus = &m0_7;
	t[0].cpus_have = &m2_7;
	t[1].cpus = t[1].mems = NULL;
	t[2].cpus = NULL;
	assert_int_equal(enforce_plan(t, 3, 0, &p), 0);
	enforce_exec(&io, t, &p, 0, p.writes_end, res);
	assert_int_equal(kern.n, 1);
	assert_int_equal(read_mask(f->dir, "/kubepods/a", "cpuset.cpus", &got), 0);
	tl_assert_mask(&got, "0-7");
	enforce_plan_free(&p);
}

/* v1: a set outside the parent's is refused (EACCES); the write widens
 * the ancestors below the root and retries (cgfs_write_cpuset_fd). */
static void test_widens_parent(void **state)
{
	struct fx *f = *state;
	struct cpumask all = tl_mask("0-7");
	struct enforce_target t = { .path = "/kubepods/b", .cpus_fd = &f->fd[1], .cpus = &all };
	struct enforce_plan p = { 0 };
	struct enforce_io io = { .cg = f->cg, .root = "/kubepods" };
	struct cpumask got;
	int res[4];

	put_file(f->dir, "/kubepods", "cpuset.cpus", "0-3\n");
	put_file(f->dir, "/kubepods/b", "cpuset.cpus", "2-3\n");
	assert_int_equal(enforce_plan(&t, 1, 0, &p), 0);
	enforce_exec(&io, &t, &p, 0, p.n, res);
	assert_int_equal(res[0], 0);
	assert_int_equal(read_mask(f->dir, "/kubepods", "cpuset.cpus", &got), 0);
	tl_assert_mask(&got, "0-7");
	assert_int_equal(read_mask(f->dir, "/kubepods/b", "cpuset.cpus", &got), 0);
	tl_assert_mask(&got, "0-7");
	enforce_plan_free(&p);
}

static void test_dry_run_writes_nothing(void **state)
{
	struct fx *f = *state;
	struct enforce_target t[3];
	struct enforce_plan p = { 0 };
	struct enforce_io io = { .cg = f->cg, .root = "/kubepods", .dry_run = true,
				 .host = host_hook, .ctx = f };
	int res[32];

	targets(f, t);
	assert_int_equal(enforce_plan(t, 3, ENFORCE_WITH_HOST, &p), 0);
	enforce_exec(&io, t, &p, 0, p.n, res);
	assert_int_equal(kern.n, 0);
	for (size_t k = 0; k < p.n; k++)
		if (p.ops[k].kind != ENFORCE_HOST)
			assert_int_equal(res[k], ENFORCE_SKIPPED);
	assert_int_equal(f->host_at, 0);	/* the host's own dry run is its own */
	enforce_plan_free(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_order_and_results, setup, teardown),
		cmocka_unit_test_setup_teardown(test_widens_parent, setup, teardown),
		cmocka_unit_test_setup_teardown(test_dry_run_writes_nothing, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
