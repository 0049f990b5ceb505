// SPDX-License-Identifier: Apache-2.0
/*
 * The CFS quota of exclusive containers: the pure rules of
 * user/controller/controller_quota.c (which containers hold whole CPUs, what a
 * pod gets back), the saved-limit mark's text, and cgroupfs/cgfs_quota.c's
 * writes and marks on a throwaway directory tree (regular files stand for
 * cpu.cfs_quota_us / cpu.max; the mark is a trusted.* xattr, which needs
 * root and a filesystem with xattrs: skipped otherwise). The kernel's own
 * rules (v1 refusing a child above its parent, throttling) are exercised
 * by tests/integration/test_cpu_quota.sh and tests/vm/test_cpu_quota.sh.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>
#include <cmocka.h>
#include "cgroupfs/cgfs.h"
#include "user/controller/controller_internal.h"

/* ---- which containers run without a quota ---------------------------------- */

static void test_holds_whole_cpus(void **state)
{
	(void)state;
	/* integer: N CPUs with a limit of N */
	assert_true(quota_holds_whole_cpus(CPUSETD_KIND_INTEGER, 1, 100000, 100000));
	assert_true(quota_holds_whole_cpus(CPUSETD_KIND_INTEGER, 4, 40000, 10000));
	/* short of CPUs after a hotplug: the limit still covers them */
	assert_true(quota_holds_whole_cpus(CPUSETD_KIND_INTEGER, 3, 400000, 100000));
	/* a scheduled set larger than its limit: the quota is a real cap */
	assert_false(quota_holds_whole_cpus(CPUSETD_KIND_INTEGER, 4, 200000, 100000));
	/* annotated: whole CPUs covering its list */
	assert_true(quota_holds_whole_cpus(CPUSETD_KIND_ANNOTATED, 2, 200000, 100000));
	assert_false(quota_holds_whole_cpus(CPUSETD_KIND_ANNOTATED, 2, 150000, 100000));
	assert_false(quota_holds_whole_cpus(CPUSETD_KIND_ANNOTATED, 1, 50000, 100000));
	/* pools never; no limit, no period, no CPUs: no */
	assert_false(quota_holds_whole_cpus(CPUSETD_KIND_SHARED, 1, 100000, 100000));
	assert_false(quota_holds_whole_cpus(CPUSETD_KIND_BE, 1, 100000, 100000));
	assert_false(quota_holds_whole_cpus(CPUSETD_KIND_INTEGER, 1, -1, 100000));
	assert_false(quota_holds_whole_cpus(CPUSETD_KIND_INTEGER, 1, 100000, 0));
	assert_false(quota_holds_whole_cpus(CPUSETD_KIND_INTEGER, 0, 100000, 100000));
}

static void test_pod_restore(void **state)
{
	int64_t q[3] = { 100000, 50000, 20000 };
	uint64_t p[3] = { 100000, 100000, 10000 };

	(void)state;
	/* kubelet's own value when nothing changed (it may include overhead) */
	assert_int_equal(cgfs_quota_pod_restore_us(170000, 100000, 100000, q, p, 2), 170000);
	/* raised to the containers' sum after a resize grew them */
	assert_int_equal(cgfs_quota_pod_restore_us(100000, 100000, 100000, q, p, 2), 150000);
	/* periods differ: everything in the pod's period, rounded up */
	assert_int_equal(cgfs_quota_pod_restore_us(0, 0, 100000, q, p, 3), 350000);
	assert_int_equal(cgfs_quota_pod_restore_us(10000, 10000, 100000, q, p, 1), 100000);
	/* one container without a limit: kubelet sets none, the saved one stands */
	q[1] = -1;
	assert_int_equal(cgfs_quota_pod_restore_us(120000, 100000, 100000, q, p, 2), 120000);
	assert_int_equal(cgfs_quota_pod_restore_us(0, 0, 100000, q, p, 2), -EINVAL);
	/* nothing known, or no period */
	assert_int_equal(cgfs_quota_pod_restore_us(0, 0, 100000, q, p, 0), -EINVAL);
	assert_int_equal(cgfs_quota_pod_restore_us(100000, 100000, 0, q, p, 1), -EINVAL);
}

/* ---- the mark's text ------------------------------------------------------------ */

static void test_mark_text(void **state)
{
	static const char *const bad[] = {
		"", " 100000 100000", "100000  100000", "100000 100000 ", "-1 100000",
		"0 100000", "100000 999", "100000 1000001", "0x10 100000", "+5 100000",
		"100000", "100000 100000\n", "1 2 3", "99999999999999999999 100000",
	};
	char buf[64];
	int64_t q = 7;
	uint64_t p = 7;

	(void)state;
	assert_int_equal(cgfs_quota_format(200000, 100000, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "200000 100000");
	assert_int_equal(cgfs_quota_parse(buf, strlen(buf), &q, &p), 0);
	assert_int_equal(q, 200000);
	assert_int_equal(p, 100000);
	assert_int_equal(cgfs_quota_parse("1000 1000", 9, &q, &p), 0);
	/* no NUL needed: only len bytes count */
	assert_int_equal(cgfs_quota_parse("5000 10000garbage", 10, &q, &p), 0);
	assert_int_equal(q, 5000);
	assert_int_equal(p, 10000);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		q = p = 7;
		if (cgfs_quota_parse(bad[i], strlen(bad[i]), &q, &p) != -EINVAL)
			fail_msg("\"%s\" parsed", bad[i]);
		assert_int_equal(q, 7);
		assert_int_equal(p, 7);
	}
	assert_int_equal(cgfs_quota_format(-1, 100000, buf, sizeof(buf)), -EINVAL);
	assert_int_equal(cgfs_quota_format(100000, 999, buf, sizeof(buf)), -EINVAL);
	assert_int_equal(cgfs_quota_format(100000, 100000, buf, 5), -ENAMETOOLONG);
}

/* ---- writes and marks on a directory tree --------------------------------------- */

struct tree {
	char dir[64];
	struct cgfs *cg;
	bool v2;
};

static void put(const struct tree *t, const char *cgroup, const char *file, const char *text)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s%s/%s", t->dir, t->v2 ? "unified" : "cpu", cgroup, file);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void get(const struct tree *t, const char *cgroup, const char *file, const char *want)
{
	char path[256], buf[64] = "";
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "%s/%s%s/%s", t->dir, t->v2 ? "unified" : "cpu", cgroup, file);
	f = fopen(path, "r");
	assert_non_null(f);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	assert_string_equal(buf, want);
}

static void mk(const struct tree *t, const char *sub)
{
	char path[256];

	snprintf(path, sizeof(path), "%s/%s", t->dir, sub);
	assert_int_equal(mkdir(path, 0755), 0);
}

/* <dir>/cpuset and <dir>/cpu (v1) or <dir>/unified (v2), with /pod/ct. */
static void tree_make(struct tree *t, bool v2)
{
	struct cgfs_mounts m = { .mode = v2 ? CGFS_MODE_V2 : CGFS_MODE_V1, .cpuset_on_v2 = v2 };

	*t = (struct tree){ .v2 = v2 };
	snprintf(t->dir, sizeof(t->dir), "/tmp/test_cpu_quota.XXXXXX");
	assert_non_null(mkdtemp(t->dir));
	if (v2) {
		mk(t, "unified");
		mk(t, "unified/pod");
		mk(t, "unified/pod/ct");
		snprintf(m.cpuset_mnt, sizeof(m.cpuset_mnt), "%s/unified", t->dir);
		snprintf(m.cpu_mnt, sizeof(m.cpu_mnt), "%s/unified", t->dir);
		put(t, "/pod", "cpu.max", "200000 100000\n");
		put(t, "/pod/ct", "cpu.max", "200000 100000\n");
	} else {
		mk(t, "cpuset");
		mk(t, "cpu");
		mk(t, "cpu/pod");
		mk(t, "cpu/pod/ct");
		snprintf(m.cpuset_mnt, sizeof(m.cpuset_mnt), "%s/cpuset", t->dir);
		snprintf(m.cpu_mnt, sizeof(m.cpu_mnt), "%s/cpu", t->dir);
		put(t, "/pod/ct", "cpu.cfs_quota_us", "200000\n");
		put(t, "/pod/ct", "cpu.cfs_period_us", "100000\n");
	}
	assert_int_equal(cgfs_open(&m, &t->cg), 0);
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static void tree_free(struct tree *t)
{
	cgfs_free(t->cg);
	nftw(t->dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

static struct tree t_v2;	/* test_pod_scope_saved_limit's, freed on skip too */

static void test_write_v1(void **state)
{
	struct tree t;
	int64_t q;
	uint64_t p;

	(void)state;
	tree_make(&t, false);
	/* lifting leaves the period; a shorter value replaces a longer one */
	assert_int_equal(cgfs_write_cpu_quota(t.cg, "/pod/ct", -1, 100000), 0);
	get(&t, "/pod/ct", "cpu.cfs_quota_us", "-1");
	get(&t, "/pod/ct", "cpu.cfs_period_us", "100000\n");
	assert_int_equal(cgfs_read_cpu_quota(t.cg, "/pod/ct", &q, &p), 0);
	assert_int_equal(q, -1);
	/* back with another period: the period first, then the quota */
	assert_int_equal(cgfs_write_cpu_quota(t.cg, "/pod/ct", 20000, 10000), 0);
	get(&t, "/pod/ct", "cpu.cfs_period_us", "10000");
	get(&t, "/pod/ct", "cpu.cfs_quota_us", "20000");
	/* refused before any write */
	assert_int_equal(cgfs_write_cpu_quota(t.cg, "/pod/ct", 0, 100000), -EINVAL);
	assert_int_equal(cgfs_write_cpu_quota(t.cg, "/pod/ct", 1000, 100), -EINVAL);
	assert_int_equal(cgfs_write_cpu_quota(t.cg, "/pod/gone", -1, 100000), -ENOENT);
	get(&t, "/pod/ct", "cpu.cfs_quota_us", "20000");
	tree_free(&t);
}

static void test_write_v2(void **state)
{
	struct tree t;

	(void)state;
	tree_make(&t, true);
	assert_int_equal(cgfs_write_cpu_quota(t.cg, "/pod", -1, 100000), 0);
	get(&t, "/pod", "cpu.max", "max 100000");
	assert_int_equal(cgfs_write_cpu_quota(t.cg, "/pod/ct", 150000, 50000), 0);
	get(&t, "/pod/ct", "cpu.max", "150000 50000");
	tree_free(&t);
}

static void test_mark(void **state)
{
	struct tree t;
	char path[256];
	int64_t q = 7;
	uint64_t p = 7;
	int r;

	(void)state;
	tree_make(&t, false);
	r = cgfs_quota_saved_write(t.cg, "/pod/ct", 200000, 100000);
	if (r == -EPERM || r == -EOPNOTSUPP) {
		tree_free(&t);
		skip();		/* not root, or no xattrs on /tmp */
	}
	assert_int_equal(r, 0);
	assert_int_equal(cgfs_quota_saved_read(t.cg, "/pod/ct", &q, &p), 0);
	assert_int_equal(q, 200000);
	assert_int_equal(p, 100000);
	/* one per cgroup: the pod has none */
	assert_int_equal(cgfs_quota_saved_read(t.cg, "/pod", &q, &p), -ENODATA);
	/* replaced, then cleared (twice: no error) */
	assert_int_equal(cgfs_quota_saved_write(t.cg, "/pod/ct", 10000, 10000), 0);
	assert_int_equal(cgfs_quota_saved_read(t.cg, "/pod/ct", &q, &p), 0);
	assert_int_equal(q, 10000);
	assert_int_equal(cgfs_quota_saved_clear(t.cg, "/pod/ct"), 0);
	assert_int_equal(cgfs_quota_saved_clear(t.cg, "/pod/ct"), 0);
	assert_int_equal(cgfs_quota_saved_read(t.cg, "/pod/ct", &q, &p), -ENODATA);
	/* something else under our name is not a limit */
	snprintf(path, sizeof(path), "%s/cpu/pod", t.dir);
	assert_int_equal(setxattr(path, CGFS_QUOTA_XATTR, "max", 3, 0), 0);
	assert_int_equal(cgfs_quota_saved_read(t.cg, "/pod", &q, &p), -EINVAL);
	/* a value must be > 0 to be saved; a vanished cgroup says so */
	assert_int_equal(cgfs_quota_saved_write(t.cg, "/pod/ct", -1, 100000), -EINVAL);
	assert_int_equal(cgfs_quota_saved_write(t.cg, "/pod/gone", 1000, 1000), -ENOENT);
	assert_int_equal(cgfs_quota_saved_read(t.cg, "/pod/gone", &q, &p), -ENOENT);
	tree_free(&t);
}

/* Topology Manager pod scope sizes a Guaranteed pod by its pod cgroup's
 * limit. Once we lifted that limit ("max"), the saved one counts. */
static void test_pod_scope_saved_limit(void **state)
{
	struct cpusetd_config cfg = { 0 };
	struct controller c = { .cfg = &cfg };
	struct container ct = { 0 };
	struct policy_request req;
	int r;

	(void)state;
	tree_make(&t_v2, true);
	c.cg = t_v2.cg;
	cfg.policy.alloc.pod_scope = true;
	snprintf(ct.path, sizeof(ct.path), "/pod/ct");
	ct.info.qos = POD_QOS_GUARANTEED;
	controller_request_of(&c, &ct, &req);
	assert_int_equal(req.pod_cpus, 2);	/* cpu.max 200000 100000 */
	put(&t_v2, "/pod", "cpu.max", "max 100000\n");
	r = cgfs_quota_saved_write(t_v2.cg, "/pod", 300000, 100000);
	if (r == -EPERM || r == -EOPNOTSUPP) {
		tree_free(&t_v2);
		skip();		/* not root, or no xattrs on /tmp */
	}
	assert_int_equal(r, 0);
	controller_request_of(&c, &ct, &req);
	assert_int_equal(req.pod_cpus, 3);	/* the saved limit, not "max" */
	assert_int_equal(cgfs_quota_saved_clear(t_v2.cg, "/pod"), 0);
	controller_request_of(&c, &ct, &req);
	assert_int_equal(req.pod_cpus, 0);	/* no limit at all: not sized */
	/* container scope, or a pod that is not Guaranteed: never */
	assert_int_equal(cgfs_quota_saved_write(t_v2.cg, "/pod", 300000, 100000), 0);
	cfg.policy.alloc.pod_scope = false;
	controller_request_of(&c, &ct, &req);
	assert_int_equal(req.pod_cpus, 0);
	cfg.policy.alloc.pod_scope = true;
	ct.info.qos = POD_QOS_BURSTABLE;
	controller_request_of(&c, &ct, &req);
	assert_int_equal(req.pod_cpus, 0);
	tree_free(&t_v2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_holds_whole_cpus),
		cmocka_unit_test(test_pod_restore),
		cmocka_unit_test(test_mark_text),
		cmocka_unit_test(test_write_v1),
		cmocka_unit_test(test_write_v2),
		cmocka_unit_test(test_mark),
		cmocka_unit_test(test_pod_scope_saved_limit),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
