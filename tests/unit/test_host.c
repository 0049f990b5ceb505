// SPDX-License-Identifier: Apache-2.0
/*
 * Host isolation's pure parts (user/host): the hex mask format the kernel
 * reads, skip patterns, the rule that picks a thing's original and wanted
 * set, and the state file's round trip (a restarted daemon's memory).
 * The writes themselves run on the real kernel in
 * tests/integration/test_isolate_host.sh.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>
#include "user/base/files.h"
#include "user/host/host_internal.h"

static struct cpumask mask(const char *list)
{
	struct cpumask m;

	assert_int_equal(cpulist_parse(list, &m), 0);
	return m;
}

static void assert_mask(const struct cpumask *m, const char *list)
{
	char buf[CPULIST_MAX];

	cpulist_format(m, buf, sizeof(buf));
	assert_string_equal(buf, list);
}

static void test_hex(void **state)
{
	static const struct { const char *list, *hex; } cases[] = {
		{ "", "0" }, { "0", "1" }, { "0-1", "3" }, { "1", "2" }, { "0-31", "ffffffff" },
		{ "32", "1,00000000" }, { "4,35", "8,00000010" }, { "0,64", "1,00000000,00000001" },
	};
	char buf[64];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct cpumask m = mask(cases[i].list), back;

		assert_true(cpumask_format_hex(&m, buf, sizeof(buf)) > 0);
		assert_string_equal(buf, cases[i].hex);
		assert_int_equal(cpumask_parse_hex(buf, &back), 0);	/* what the kernel reads back */
		assert_true(cpumask_equal(&m, &back));
	}
	assert_int_equal(cpumask_format_hex(&(struct cpumask){ { 1, 1 } }, buf, 4), -ENOSPC);
}

static void test_skip(void **state)
{
	struct host_opts o = { .skip = { "/cpusetd-*", "/a/b" }, .n_skip = 2 };

	(void)state;
	assert_true(host_skipped(&o, "/cpusetd-main-1"));
	assert_true(host_skipped(&o, "/cpusetd-main-1/kubepods/pod1"));	/* the subtree */
	assert_true(host_skipped(&o, "/a/b"));
	assert_true(host_skipped(&o, "/a/b/c"));
	assert_false(host_skipped(&o, "/a"));
	assert_false(host_skipped(&o, "/a/bc"));
	assert_false(host_skipped(&o, "/system.slice"));
	assert_false(host_skipped(&o, "/x/cpusetd-y"));	/* FNM_PATHNAME: '*' stops at '/' */
}

struct fx {
	char dir[64];
	struct host *h;
	struct host_opts o;
};

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));

	snprintf(f->dir, sizeof(f->dir), "/tmp/test_host.XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	/* the planning and the state file never touch the cgroup handle */
	f->o = (struct host_opts){ .cg = (struct cgfs *)f, .state_dir = f->dir, .proc = "/proc",
				   .sys = "/sys" };
	assert_int_equal(host_new(&f->o, &f->h), 0);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;
	char path[128];

	host_free(f->h);
	snprintf(path, sizeof(path), "%s/%s", f->dir, HOST_STATE_FILE);
	unlink(path);
	rmdir(f->dir);
	free(f);
	return 0;
}

static void test_rule(void **state)
{
	struct fx *f = *state;
	struct cpumask cur = mask("0-3"), host = mask("0,2-3"), orig;

	/* narrowed: want own ∩ host, the original recorded ahead */
	assert_int_equal(host_plan_thing(f->h, HOST_CGROUP, "/a", 0, 1, &cur, &host, true, NULL,
					 &orig), 0);
	assert_int_equal(f->h->n_plans, 1);
	assert_mask(&f->h->plans[0].want, "0,2-3");
	assert_false(f->h->plans[0].restore);
	assert_mask(&host_rec_get(f->h, HOST_CGROUP, "/a")->orig, "0-3");

	/* still what we wrote: the record's original; freed: back to it */
	f->h->n_plans = 0;
	cur = mask("0,2-3");
	host = mask("0-3");
	assert_int_equal(host_plan_thing(f->h, HOST_CGROUP, "/a", 0, 1, &cur, &host, false, NULL,
					 &orig), 0);
	assert_mask(&orig, "0-3");
	assert_mask(&f->h->plans[0].want, "0-3");
	assert_true(f->h->plans[0].restore);

	/* changed by someone since: the live value is its own now */
	f->h->n_plans = 0;
	cur = mask("0-1");
	host = mask("0,2-3");
	assert_int_equal(host_plan_thing(f->h, HOST_CGROUP, "/a", 0, 1, &cur, &host, true, NULL,
					 &orig), 0);
	assert_mask(&orig, "0-1");
	assert_mask(&f->h->plans[0].want, "0");

	/* an admin's set inside the host's: nothing to write, nothing kept */
	f->h->n_plans = 0;
	cur = mask("2");
	assert_int_equal(host_plan_thing(f->h, HOST_CGROUP, "/narrow", 0, 1, &cur, &host, true,
					 NULL, NULL), 0);
	assert_int_equal(f->h->n_plans, 0);
	assert_null(host_rec_get(f->h, HOST_CGROUP, "/narrow"));

	/* all exclusive: left as it is, said so */
	cur = mask("1");
	assert_int_equal(host_plan_thing(f->h, HOST_CGROUP, "/only1", 0, 1, &cur, &host, true,
					 NULL, NULL), 1);
	assert_int_equal(f->h->n_plans, 0);

	/* a v2 cgroup that inherits: the host's set, "" back after */
	cpumask_zero(&cur);
	assert_int_equal(host_plan_thing(f->h, HOST_CGROUP, "/v2", 0, 1, &cur, &host, true, NULL,
					 NULL), 0);
	assert_mask(&f->h->plans[0].want, "0,2-3");

	/* a fork of a narrowed task: its creator's original */
	f->h->n_plans = 0;
	cur = mask("0,2-3");
	orig = mask("0-3");
	assert_int_equal(host_plan_thing(f->h, HOST_TASK, "77", 123, 0, &cur, &host, true, &orig,
					 NULL), 0);
	assert_int_equal(f->h->n_plans, 0);	/* already right */
	assert_mask(&host_rec_get(f->h, HOST_TASK, "77")->orig, "0-3");
	/* a reused tid (another start time) is another task */
	cur = mask("0-3");
	assert_int_equal(host_plan_thing(f->h, HOST_TASK, "77", 999, 0, &cur, &host, true, NULL,
					 &orig), 0);
	assert_mask(&orig, "0-3");
	assert_int_equal(host_rec_get(f->h, HOST_TASK, "77")->start, 999);
}

static void test_state_file(void **state)
{
	struct fx *f = *state;
	struct cpumask o1 = mask("0-3"), a1 = mask("0,2-3"), none;
	struct host *h2;
	const struct host_rec *r;
	char path[128];
	static const char bad[] = "# comment\nbogus line\ncgroup 0-1\ntask x 1 0 0\n"
				  "irq 24 0-1 0\nworkqueue 0-1 0\n";

	cpumask_zero(&none);
	assert_int_equal(host_rec_put(f->h, HOST_CGROUP, "/a b%c", 0, &o1, &a1), 0);
	assert_int_equal(host_rec_put(f->h, HOST_CGROUP, "/v2", 0, &none, &a1), 0);
	assert_int_equal(host_rec_put(f->h, HOST_TASK, "42", 4242, &o1, &a1), 0);
	assert_int_equal(host_rec_put(f->h, HOST_IRQ, "24", 0, &o1, &a1), 0);
	assert_int_equal(host_rec_put(f->h, HOST_IRQ_DEFAULT, "", 0, &o1, &a1), 0);
	assert_int_equal(host_rec_put(f->h, HOST_WORKQUEUE, "", 0, &o1, &a1), 0);
	assert_int_equal(host_state_save(f->h), 0);

	assert_int_equal(host_new(&f->o, &h2), 0);
	assert_int_equal(strmap_count(h2->recs), 6);
	r = host_rec_get(h2, HOST_CGROUP, "/a b%c");	/* escaped and back */
	assert_non_null(r);
	assert_mask(&r->orig, "0-3");
	assert_mask(&r->applied, "0,2-3");
	assert_true(cpumask_empty(&host_rec_get(h2, HOST_CGROUP, "/v2")->orig));
	assert_int_equal(host_rec_get(h2, HOST_TASK, "42")->start, 4242);
	assert_non_null(host_rec_get(h2, HOST_IRQ, "24"));
	assert_non_null(host_rec_get(h2, HOST_WORKQUEUE, ""));
	host_free(h2);

	/* malformed lines are skipped, the good ones kept */
	assert_int_equal(files_write_atomic(f->dir, HOST_STATE_FILE, bad, sizeof(bad) - 1, 0600), 0);
	assert_int_equal(host_new(&f->o, &h2), 0);
	assert_int_equal(strmap_count(h2->recs), 2);
	host_free(h2);

	/* nothing recorded: the file goes */
	host_free(f->h);
	assert_int_equal(host_new(&f->o, &f->h), 0);
	host_rec_del(f->h, HOST_IRQ, "24");
	host_rec_del(f->h, HOST_WORKQUEUE, "");
	assert_int_equal(host_state_save(f->h), 0);
	snprintf(path, sizeof(path), "%s/%s", f->dir, HOST_STATE_FILE);
	assert_int_equal(access(path, F_OK), -1);
}

/* Writes a state file that, believed, would give "/x" back CPU 0. */
static void plant(const char *path, mode_t mode)
{
	static const char text[] = "cgroup 0 0-1 /x\n";
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	assert_int_equal(fputs(text, f) >= 0, 1);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(chmod(path, mode), 0);
}

/* The file is refused: no handle, and it stays as it was. */
static void assert_refused(struct fx *f, const char *path)
{
	struct host *h2 = (struct host *)1;
	struct stat before, after;

	assert_int_equal(lstat(path, &before), 0);
	assert_int_equal(host_new(&f->o, &h2), -EPERM);
	assert_null(h2);
	assert_int_equal(lstat(path, &after), 0);
	assert_int_equal(before.st_ino, after.st_ino);
	assert_int_equal(before.st_mode, after.st_mode);
	assert_int_equal(before.st_size, after.st_size);
}

/*
 * L5: isolation.state drives root writes, so only a file cpusetd wrote
 * is believed: a symlink, a FIFO, a group- or other-writable file, a
 * file with a second link and another user's file are each refused
 * (-EPERM, logged), nothing is loaded, and the file is left as it is.
 * The file the daemon writes itself (0600, ours) is read.
 */
static void test_state_file_refused(void **state)
{
	struct fx *f = *state;
	char path[128], other[128];
	struct host *h2;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", f->dir, HOST_STATE_FILE);
	snprintf(other, sizeof(other), "%s/other", f->dir);

	plant(path, 0600);	/* the good case first: it is read */
	assert_int_equal(host_new(&f->o, &h2), 0);
	assert_non_null(host_rec_get(h2, HOST_CGROUP, "/x"));
	host_free(h2);

	plant(path, 0620);	/* group-writable */
	assert_refused(f, path);
	plant(path, 0602);	/* other-writable */
	assert_refused(f, path);

	plant(other, 0600);	/* a symlink to a good-looking file */
	unlink(path);
	assert_int_equal(symlink(other, path), 0);
	assert_refused(f, path);
	unlink(path);

	assert_int_equal(link(other, path), 0);	/* a second link */
	assert_refused(f, path);
	unlink(path);
	unlink(other);

	assert_int_equal(mkfifo(path, 0600), 0);	/* not a regular file; never blocks */
	assert_refused(f, path);
	unlink(path);

	if (geteuid() == 0) {	/* another user's file */
		plant(path, 0600);
		fd = open(path, O_RDONLY);
		assert_true(fd >= 0);
		assert_int_equal(fchown(fd, 1, 1), 0);
		close(fd);
		assert_refused(f, path);
	}
	unlink(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hex),
		cmocka_unit_test(test_skip),
		cmocka_unit_test_setup_teardown(test_rule, setup, teardown),
		cmocka_unit_test_setup_teardown(test_state_file, setup, teardown),
		cmocka_unit_test_setup_teardown(test_state_file_refused, setup, teardown),
	};

	return cmocka_run_group_tests_name("host", tests, NULL, NULL);
}
