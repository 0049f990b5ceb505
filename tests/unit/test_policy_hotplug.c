// SPDX-License-Identifier: Apache-2.0
/*
 * CPU hotplug in the policy (policy_hotplug.h) on the real snapshot
 * 64amd64-4s2n4ca2co (8 NUMA nodes of 8 CPUs, node k = CPUs 8k..8k+7,
 * physical cores of SMT siblings n,n+1). A hotplug is simulated on a
 * copy of the snapshot the way x86 shows it in sysfs: cpu/online shrinks,
 * the offline CPU loses its topology/ directory and leaves its node's
 * cpulist, and its sibling lists only itself (compare the real snapshot
 * 16em64t-4s2c2t-offlines). The topology is then read again and inherits
 * from the previous one, as the daemon does.
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
#include "testlib.h"
#include "user/config/config.h"
#include "user/policy/policy.h"
#include "user/policy/policy_hotplug.h"

#define SNAP	"64amd64-4s2n4ca2co"

static char tmpdir[] = "/tmp/test_policy_hotplug.XXXXXX";
static char work[1024], pristine[1024];
static struct topology *orig;

/* --- simulated hotplug --- */

static void put(const char *rel, const char *text)
{
	char path[2048];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", work, rel);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void put_mask(const char *rel, const struct cpumask *m)
{
	char buf[CPULIST_MAX];

	assert_true(cpulist_format(m, buf, sizeof(buf)) >= 0);
	put(rel, buf);
}

static void run(const char *fmt, ...)
{
	char cmd[4096];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	assert_int_equal(system(cmd), 0);
}

/* One CPU as sysfs shows it with the given online set. */
static void sim_cpu(int id, const struct cpumask *online)
{
	struct cpumask sib;
	char rel[256];

	if (!cpumask_test(online, (unsigned)id)) {
		run("rm -rf '%s/devices/system/cpu/cpu%d/topology'", work, id);
		snprintf(rel, sizeof(rel), "devices/system/cpu/cpu%d/online", id);
		put(rel, "0\n");
		return;
	}
	run("cp -r '%s/devices/system/cpu/cpu%d/topology' '%s/devices/system/cpu/cpu%d/' "
	    "2>/dev/null || true", pristine, id, work, id);
	snprintf(rel, sizeof(rel), "devices/system/cpu/cpu%d/topology/thread_siblings_list", id);
	cpumask_and(&sib, &orig->core_cpus[orig->cpu[id].core], online);
	put_mask(rel, &sib);
	snprintf(rel, sizeof(rel), "devices/system/cpu/cpu%d/online", id);
	put(rel, "1\n");
}

/* Rewrites the work tree for `online` and reads it again, inheriting from
 * prev (freed by the caller after the policy moved). */
static struct topology *hotplug(const struct topology *prev, const char *online_list)
{
	struct cpumask online = tl_mask(online_list), node;
	struct topology *t;
	char rel[256];
	int id;

	put_mask("devices/system/cpu/online", &online);
	cpumask_for_each(id, &orig->present)
		sim_cpu(id, &online);
	cpumask_for_each(id, &orig->nodes) {
		cpumask_and(&node, &orig->node_cpus[id], &online);
		snprintf(rel, sizeof(rel), "devices/system/node/node%d/cpulist", id);
		put_mask(rel, &node);
	}
	assert_int_equal(topo_read(work, &t), 0);
	topo_inherit(t, prev);
	return t;
}

/* --- policy helpers --- */

struct fx {
	struct policy *p;
	struct topology *topo;		/* what p is on now */
};

static struct fx mk(unsigned min_shared)
{
	struct policy_config c = { .min_shared_cpus = min_shared,
				   .on_error = POLICY_ON_ERROR_REJECT };
	struct fx f;

	config_policy_defaults(&c);
	f.topo = hotplug(NULL, "0-63");
	assert_int_equal(policy_new(f.topo, &c, &f.p), 0);
	return f;
}

static void done(struct fx *f)
{
	policy_free(f->p);
	topo_free(f->topo);
}

/* Moves f's policy to `online`; *ret gets the result (free it). */
static void set_online(struct fx *f, const char *online, struct policy_hotplug *ret)
{
	struct topology *t = hotplug(f->topo, online);

	assert_int_equal(policy_set_online(f->p, t, ret), 0);
	topo_free(f->topo);
	f->topo = t;
}

static struct policy_decision admit(struct policy *p, struct policy_request req)
{
	struct policy_decision d;
	int r = policy_admit(p, &req, &d);

	if (r != 0)
		fail_msg("%s: rc %d (%s)", req.container_id, r, d.reason);
	return d;
}

static struct policy_request integer(const char *id, unsigned n)
{
	return (struct policy_request){ .container_id = id, .pod_uid = id, .name = id,
					.qos = POD_QOS_GUARANTEED, .quota_us = n * 100000,
					.period_us = 100000 };
}

static struct policy_request annotated(const char *id, const char *cores)
{
	return (struct policy_request){ .container_id = id, .pod_uid = id, .name = id,
					.qos = POD_QOS_BURSTABLE, .cores_ids = cores,
					.quota_us = -1 };
}

/* The recorded decision of a known container. */
static struct policy_decision now(struct policy *p, const char *id)
{
	struct policy_request req = { .container_id = id, .quota_us = -1 };

	assert_non_null(policy_lookup(p, id));
	return admit(p, req);
}

static void assert_pool(const struct policy *p, const char *want)
{
	struct cpumask pool;

	policy_shared_pool(p, &pool);
	tl_assert_mask(&pool, want);
}

/* --- topology --- */

static void test_inherit(void **state)
{
	struct topology *t0 = hotplug(NULL, "0-63"), *t1, *t2;

	(void)state;
	t1 = hotplug(t0, "0-4,6-55");
	tl_assert_mask(&t1->online, "0-4,6-55");
	assert_int_equal(t1->cpu[5].node, 0);		/* from t0 */
	assert_int_equal(t1->cpu[5].core, 4);
	tl_assert_mask(&t1->core_cpus[4], "4-5");
	assert_int_equal(t1->cpu[4].core, 4);
	assert_int_equal(t1->cpu[60].node, 7);		/* a node with no CPU online */
	assert_true(cpumask_test(&t1->nodes, 7));
	assert_false(cpumask_test(&t1->memory_nodes, 7));
	assert_int_equal(t1->cpu[60].package, t0->cpu[60].package);
	/* A second step inherits what the first inherited. */
	t2 = hotplug(t1, "0-3,6-55");
	assert_int_equal(t2->cpu[5].node, 0);
	tl_assert_mask(&t2->core_cpus[4], "4-5");
	/* Without a previous topology: what sysfs says. */
	topo_free(t2);
	t2 = hotplug(NULL, "0-4,6-63");
	assert_int_equal(t2->cpu[5].node, -1);
	topo_free(t0);
	topo_free(t1);
	topo_free(t2);
}

/* --- shared pool --- */

static void test_shared_pool_follows(void **state)
{
	struct fx f = mk(1);
	struct policy_hotplug hp;

	(void)state;
	set_online(&f, "0-4,6-63", &hp);
	assert_int_equal(hp.n, 0);
	tl_assert_mask(&hp.went_offline, "5");
	assert_pool(f.p, "0-4,6-63");
	policy_hotplug_free(&hp);
	set_online(&f, "0-63", &hp);
	tl_assert_mask(&hp.came_online, "5");
	assert_pool(f.p, "0-63");
	policy_hotplug_free(&hp);
	done(&f);
}

/* --- integer --- */

static void test_integer_sibling(void **state)
{
	struct fx f = mk(1);
	struct policy_hotplug hp;
	struct policy_decision d = admit(f.p, integer("a", 1)), d2;
	int lost = cpumask_next(&d.cpus, 0);
	int sib = lost ^ 1;
	char want[16];

	(void)state;
	snprintf(want, sizeof(want), "%d", sib);
	set_online(&f, lost == 0 ? "1-63" : "0-63", &hp);
	assert_int_equal(lost, 0);	/* bin-packing starts at CPU 0 */
	assert_int_equal(hp.n, 1);
	assert_int_equal(hp.changes[0].what, POLICY_HP_REPLACED);
	tl_assert_mask(&hp.changes[0].lost, "0");
	tl_assert_mask(&hp.changes[0].added, want);
	assert_int_equal(hp.replaced, 1);
	d2 = now(f.p, "a");
	tl_assert_mask(&d2.cpus, want);
	assert_int_equal(d2.err, POLICY_OK);
	assert_pool(f.p, "2-63");
	policy_hotplug_free(&hp);
	/* Back online: to the shared pool; the replacement stays. */
	set_online(&f, "0-63", &hp);
	assert_int_equal(hp.n, 0);
	d2 = now(f.p, "a");
	tl_assert_mask(&d2.cpus, want);
	assert_pool(f.p, "0,2-63");
	policy_hotplug_free(&hp);
	done(&f);
}

/* A whole core held: the replacement comes from the same NUMA node. */
static void test_integer_same_node(void **state)
{
	struct fx f = mk(1);
	struct policy_hotplug hp;
	struct policy_decision d;
	struct cpumask nodes;

	(void)state;
	d = admit(f.p, integer("a", 2));
	tl_assert_mask(&d.cpus, "0-1");
	set_online(&f, "0,2-63", &hp);
	assert_int_equal(hp.n, 1);
	assert_int_equal(hp.changes[0].what, POLICY_HP_REPLACED);
	d = now(f.p, "a");
	assert_int_equal(cpumask_weight(&d.cpus), 2);
	assert_true(cpumask_test(&d.cpus, 0));
	assert_false(cpumask_test(&d.cpus, 1));
	assert_int_equal(topo_nodes_of(f.topo, &d.cpus, &nodes), 0);
	tl_assert_mask(&nodes, "0");
	tl_assert_mask(&d.mems, "0");
	policy_hotplug_free(&hp);
	/* The whole core goes: both replaced on node 0. */
	set_online(&f, "4-63", &hp);
	d = now(f.p, "a");
	assert_int_equal(cpumask_weight(&d.cpus), 2);
	assert_int_equal(topo_nodes_of(f.topo, &d.cpus, &nodes), 0);
	tl_assert_mask(&nodes, "0");
	assert_int_equal(d.err, POLICY_OK);
	policy_hotplug_free(&hp);
	done(&f);
}

/* No free CPU: keeps the rest, error, no rejection; refilled later with
 * its own CPU. */
static void test_integer_shortfall(void **state)
{
	struct fx f = mk(2);
	struct policy_hotplug hp;
	struct policy_decision d;
	char id[8][4];

	(void)state;
	for (int i = 0; i < 7; i++) {
		snprintf(id[i], sizeof(id[i]), "n%d", i);
		admit(f.p, integer(id[i], 8));
	}
	d = admit(f.p, integer("last", 6));
	assert_pool(f.p, "62-63");
	tl_assert_mask(&d.cpus, "56-61");
	set_online(&f, "0-59,61-63", &hp);
	assert_int_equal(hp.n, 1);
	assert_int_equal(hp.changes[0].what, POLICY_HP_SHORT);
	assert_int_equal(hp.changes[0].missing, 1);
	assert_int_equal(hp.replaced, 0);
	d = now(f.p, "last");
	tl_assert_mask(&d.cpus, "56-59,61");
	assert_int_equal(d.err, POLICY_ERR_INSUFFICIENT_CPUS);
	assert_false(d.reject);
	assert_int_equal(d.kind, CPUSETD_KIND_INTEGER);
	assert_non_null(strstr(d.reason, "went offline"));
	assert_pool(f.p, "62-63");
	policy_hotplug_free(&hp);
	/* The same online set again: nothing changes. */
	set_online(&f, "0-59,61-63", &hp);
	assert_int_equal(hp.n, 0);
	policy_hotplug_free(&hp);
	/* Back: it takes its own CPU again, the error clears. */
	set_online(&f, "0-63", &hp);
	assert_int_equal(hp.n, 1);
	assert_int_equal(hp.changes[0].what, POLICY_HP_REFILLED);
	d = now(f.p, "last");
	tl_assert_mask(&d.cpus, "56-61");
	assert_int_equal(d.err, POLICY_OK);
	assert_pool(f.p, "62-63");
	policy_hotplug_free(&hp);
	done(&f);
}

/* --- annotated --- */

static void test_annotated(void **state)
{
	struct fx f = mk(1);
	struct policy_hotplug hp;
	struct policy_decision d;
	struct cpumask reserved;

	(void)state;
	admit(f.p, annotated("ann", "10-11"));
	set_online(&f, "0-10,12-63", &hp);
	assert_int_equal(hp.n, 1);
	assert_int_equal(hp.changes[0].what, POLICY_HP_OFFLINE);
	tl_assert_mask(&hp.changes[0].lost, "11");
	d = now(f.p, "ann");
	assert_int_equal(d.kind, CPUSETD_KIND_ANNOTATED);
	tl_assert_mask(&d.cpus, "10");
	assert_int_equal(d.err, POLICY_ERR_CPU_OFFLINE);
	assert_false(d.reject);
	assert_string_equal(policy_error_name(d.err), "cpu_offline");
	policy_reserved(f.p, &reserved);
	tl_assert_mask(&reserved, "10-11");		/* still its CPU */
	assert_pool(f.p, "0-9,12-63");
	policy_hotplug_free(&hp);
	set_online(&f, "0-63", &hp);
	assert_int_equal(hp.n, 1);
	assert_int_equal(hp.changes[0].what, POLICY_HP_RESTORED);
	tl_assert_mask(&hp.changes[0].added, "11");
	d = now(f.p, "ann");
	tl_assert_mask(&d.cpus, "10-11");
	assert_int_equal(d.err, POLICY_OK);
	assert_pool(f.p, "0-9,12-63");			/* never the pool's */
	policy_hotplug_free(&hp);
	done(&f);
}

/* A missed event: two steps seen as one end in the same state. */
static void test_converges(void **state)
{
	struct fx a = mk(1), b = mk(1);
	struct policy_hotplug hp;
	struct policy_decision da, db;

	(void)state;
	admit(a.p, integer("x", 2));
	admit(b.p, integer("x", 2));
	admit(a.p, annotated("ann", "20-21"));
	admit(b.p, annotated("ann", "20-21"));
	set_online(&a, "0,2-63", &hp);
	policy_hotplug_free(&hp);
	set_online(&a, "0,2-20,22-63", &hp);
	policy_hotplug_free(&hp);
	set_online(&b, "0,2-20,22-63", &hp);
	assert_int_equal(hp.n, 2);
	policy_hotplug_free(&hp);
	da = now(a.p, "x");
	db = now(b.p, "x");
	assert_true(cpumask_equal(&da.cpus, &db.cpus));
	da = now(a.p, "ann");
	db = now(b.p, "ann");
	assert_true(cpumask_equal(&da.cpus, &db.cpus));
	assert_int_equal(da.err, db.err);
	done(&a);
	done(&b);
}

/* A restart (or SIGHUP resync) while CPUs are offline: running containers
 * are not rejected, a short integer set is kept and refilled. */
static void test_recover_running(void **state)
{
	struct fx f = mk(1);
	struct policy_hotplug hp;
	struct policy_request reqs[2] = { annotated("ann", "10-11"), integer("x", 2) };
	struct cpumask cur[2] = { tl_mask("10-11"), tl_mask("0-1") };
	uint64_t order[2] = { 1, 2 };
	struct policy_decision d[2], late;

	(void)state;
	set_online(&f, "0,2-10,12-63", &hp);
	policy_hotplug_free(&hp);
	reqs[0].running = reqs[1].running = true;
	assert_int_equal(policy_recover(f.p, reqs, cur, order, 2, d), 0);
	assert_int_equal(d[0].kind, CPUSETD_KIND_ANNOTATED);
	tl_assert_mask(&d[0].cpus, "10");
	assert_int_equal(d[0].err, POLICY_ERR_CPU_OFFLINE);
	assert_true(d[0].err_hotplug);
	assert_false(d[0].reject);
	assert_int_equal(d[1].kind, CPUSETD_KIND_INTEGER);
	assert_int_equal(cpumask_weight(&d[1].cpus), 2);
	assert_true(cpumask_test(&d[1].cpus, 0));	/* not moved */
	assert_int_equal(d[1].err, POLICY_OK);
	/* A new pod listing an offline CPU is still an admission error. */
	assert_int_equal(policy_admit(f.p, &(struct policy_request){ .container_id = "new",
			 .name = "new", .cores_ids = "11-12", .qos = POD_QOS_BURSTABLE,
			 .quota_us = -1 }, &late), -ENXIO);
	assert_int_equal(late.err, POLICY_ERR_CPU_OFFLINE);
	assert_true(late.reject);
	done(&f);
}

static int setup(void **state)
{
	char root[1200], dir[1200];

	(void)state;
	if (!mkdtemp(tmpdir))
		return -1;
	run("mkdir -p '%s/work' '%s/pristine'", tmpdir, tmpdir);
	snprintf(dir, sizeof(dir), "%s/work", tmpdir);
	if (tl_extract_snapshot(SNAP, dir) < 0)
		return -1;
	snprintf(dir, sizeof(dir), "%s/pristine", tmpdir);
	if (tl_extract_snapshot(SNAP, dir) < 0)
		return -1;
	snprintf(work, sizeof(work), "%s/work/" SNAP "/sys", tmpdir);
	snprintf(pristine, sizeof(pristine), "%s/pristine/" SNAP "/sys", tmpdir);
	snprintf(root, sizeof(root), "%s", pristine);
	return topo_read(root, &orig) == 0 ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	topo_free(orig);
	run("rm -rf '%s'", tmpdir);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_inherit),
		cmocka_unit_test(test_shared_pool_follows),
		cmocka_unit_test(test_integer_sibling),
		cmocka_unit_test(test_integer_same_node),
		cmocka_unit_test(test_integer_shortfall),
		cmocka_unit_test(test_annotated),
		cmocka_unit_test(test_converges),
		cmocka_unit_test(test_recover_running),
	};

	return cmocka_run_group_tests_name("policy hotplug on " SNAP, tests, setup, teardown);
}
