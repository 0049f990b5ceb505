// SPDX-License-Identifier: Apache-2.0
/*
 * reject: the termination message write must land only on kubelet's own
 * file for the container (termination_rel_path's shape), a regular file
 * under pods_dir, never through a symlink or a mount point, and never
 * create anything. Each test gets a fresh tree:
 *   <tmp>/pods/uid1/containers/app/term     regular file, "old content..."
 *   <tmp>/outside/containers/app/target     must never change
 * termination_rel_path, the pure choice, is tested from a table.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>
#include "user/reject/reject.h"
#include "user/meta/termination.h"

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#define OLD		"old content that is longer than the message\n"
#define TARGET		"precious\n"

/* reject_write_message for pod uid1, container app. */
#define WRITE(dir, path, msg)	reject_write_message(dir, "uid1", "app", path, msg)

static char tmp[64], pods[128], term[256], outside[128], target[256];

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	assert_true(fputs(text, f) >= 0);
	assert_int_equal(fclose(f), 0);
}

static void assert_content(const char *path, const char *want)
{
	char buf[8192] = "";
	FILE *f = fopen(path, "r");
	size_t n;

	assert_non_null(f);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	assert_string_equal(buf, want);
}

static void run(const char *fmt, ...)
{
	char cmd[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	assert_int_equal(system(cmd), 0);
}

static int setup(void **state)
{
	(void)state;
	strcpy(tmp, "/tmp/test_reject.XXXXXX");
	if (!mkdtemp(tmp))
		return -1;
	snprintf(pods, sizeof(pods), "%s/pods", tmp);
	snprintf(term, sizeof(term), "%s/uid1/containers/app/term", pods);
	snprintf(outside, sizeof(outside), "%s/outside", tmp);
	snprintf(target, sizeof(target), "%s/containers/app/target", outside);
	run("mkdir -p '%s/uid1/containers/app' '%s/containers/app'", pods, outside);
	write_file(term, OLD);
	write_file(target, TARGET);
	return 0;
}

static int teardown(void **state)
{
	char cmd[300];

	(void)state;
	/* test_mount_points' mounts, should it have failed half way */
	umount2(term, MNT_DETACH);
	snprintf(cmd, sizeof(cmd), "%s/uid1/containers", pods);
	umount2(cmd, MNT_DETACH);
	umount2(pods, MNT_DETACH);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp);
	return system(cmd) == 0 ? 0 : -1;
}

/* --- the shape (termination_rel_path), pure --- */

#define P	"/var/lib/kubelet/pods"
#define U	"3f6c2a1e-8b4d-4c7a-9e2f-1a5b6c7d8e9f"

static const struct {
	const char *name, *dir, *uid, *ctr, *path;
	int r;
	const char *rel;	/* with r == 0 */
} shape_cases[] = {
	{ "kubelet's file", P, U, "app", P "/" U "/containers/app/6e1b9f0c", 0,
	  U "/containers/app/6e1b9f0c" },
	{ "pods_dir with trailing slashes", P "//", U, "app", P "/" U "/containers/app/f", 0,
	  U "/containers/app/f" },
	{ "pods_dir is /", "/", U, "app", "/" U "/containers/app/f", 0, U "/containers/app/f" },
	{ "a file name with dots", P, U, "app", P "/" U "/containers/app/...", 0,
	  U "/containers/app/..." },
	{ "the subPath attack: a volume's subpath", P, U, "app",
	  P "/" U "/volume-subpaths/data/app/0", -EPERM, NULL },
	{ "a volume", P, U, "app", P "/" U "/volumes/kubernetes.io~empty-dir/x/f", -EPERM, NULL },
	{ "another pod's file", P, U, "app", P "/other-uid/containers/app/f", -EPERM, NULL },
	{ "another container's file", P, U, "app", P "/" U "/containers/side/f", -EPERM, NULL },
	{ "a container whose name extends ours", P, U, "app", P "/" U "/containers/app2/f", -EPERM, NULL },
	{ "a pod UID that extends ours", P, "3f6c", "app", P "/" U "/containers/app/f", -EPERM, NULL },
	{ "outside pods_dir", P, U, "app", "/etc/shadow", -EPERM, NULL },
	{ "a prefix trick", P, U, "app", P "-evil/" U "/containers/app/f", -EPERM, NULL },
	{ "relative", P, U, "app", "var/lib/kubelet/pods/" U "/containers/app/f", -EPERM, NULL },
	{ "the container dir itself", P, U, "app", P "/" U "/containers/app", -EPERM, NULL },
	{ "the container dir with a slash", P, U, "app", P "/" U "/containers/app/", -EPERM, NULL },
	{ "a deeper file", P, U, "app", P "/" U "/containers/app/d/f", -EPERM, NULL },
	{ "a trailing slash", P, U, "app", P "/" U "/containers/app/f/", -EPERM, NULL },
	{ "file ..", P, U, "app", P "/" U "/containers/app/..", -EPERM, NULL },
	{ "file .", P, U, "app", P "/" U "/containers/app/.", -EPERM, NULL },
	{ "a .. that comes back", P, U, "app", P "/" U "/containers/../containers/app/f", -EPERM, NULL },
	{ "doubled slashes", P, U, "app", P "//" U "/containers/app/f", -EPERM, NULL },
	{ "doubled slash before the file", P, U, "app", P "/" U "/containers/app//f", -EPERM, NULL },
	{ "a dot component", P, U, "app", P "/./" U "/containers/app/f", -EPERM, NULL },
	{ "empty", P, U, "app", "", -EPERM, NULL },
	{ "relative pods_dir", "pods", U, "app", "pods/" U "/containers/app/f", -EINVAL, NULL },
	{ "empty pods_dir", "", U, "app", "/" U "/containers/app/f", -EINVAL, NULL },
	{ "empty UID", P, "", "app", P "//containers/app/f", -EINVAL, NULL },
	{ "empty container name", P, U, "", P "/" U "/containers//f", -EINVAL, NULL },
	{ "a UID with a slash", P, "a/b", "app", P "/a/b/containers/app/f", -EINVAL, NULL },
	{ "a container name with a slash", P, U, "a/../x", P "/" U "/containers/a/../x/f", -EINVAL, NULL },
	{ "UID ..", P, "..", "app", P "/../containers/app/f", -EINVAL, NULL },
	{ "container name ..", P, U, "..", P "/" U "/containers/../f", -EINVAL, NULL },
	{ "container name .", P, U, ".", P "/" U "/containers/./f", -EINVAL, NULL },
};

static void test_shape(void **state)
{
	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(shape_cases); i++) {
		const char *rel = "untouched";
		int r;

		print_message("case: %s\n", shape_cases[i].name);
		r = termination_rel_path(shape_cases[i].dir, shape_cases[i].uid, shape_cases[i].ctr,
					 shape_cases[i].path, &rel);
		assert_int_equal(r, shape_cases[i].r);
		if (r == 0)
			assert_string_equal(rel, shape_cases[i].rel);
		else
			assert_string_equal(rel, "untouched");
	}
}

/* Names up to TERMINATION_NAME_MAX bytes, not one more. */
static void test_shape_bounds(void **state)
{
	char name[TERMINATION_NAME_MAX + 2], path[1024];
	const char *rel;

	(void)state;
	memset(name, 'a', sizeof(name));
	name[TERMINATION_NAME_MAX] = '\0';
	snprintf(path, sizeof(path), P "/%s/containers/%s/%s", name, name, name);
	assert_int_equal(termination_rel_path(P, name, name, path, &rel), 0);
	name[TERMINATION_NAME_MAX] = 'a';
	name[TERMINATION_NAME_MAX + 1] = '\0';
	snprintf(path, sizeof(path), P "/%s/containers/app/f", name);
	assert_int_equal(termination_rel_path(P, name, "app", path, &rel), -EINVAL);
	snprintf(path, sizeof(path), P "/u/containers/%s/f", name);
	assert_int_equal(termination_rel_path(P, "u", name, path, &rel), -EINVAL);
	snprintf(path, sizeof(path), P "/u/containers/app/%s", name);
	assert_int_equal(termination_rel_path(P, "u", "app", path, &rel), -EPERM);
}

/* --- the write --- */

static void test_writes(void **state)
{
	char dir_slash[160], doubled[300];

	(void)state;
	assert_int_equal(WRITE(pods, term, "no free CPUs"), 0);
	assert_content(term, "no free CPUs\n");

	/* a trailing slash on pods_dir */
	snprintf(dir_slash, sizeof(dir_slash), "%s/", pods);
	assert_int_equal(WRITE(dir_slash, term, "again"), 0);
	assert_content(term, "again\n");
	assert_int_equal(WRITE(pods, term, ""), 0);
	assert_content(term, "\n");
	/* escaped once: one line, and a backslash stays readable (log_escape) */
	assert_int_equal(WRITE(pods, term, "a\nb\\nc"), 0);
	assert_content(term, "a\\nb\\\\nc\n");
	/* doubled slashes are not kubelet's spelling: refused, untouched */
	snprintf(doubled, sizeof(doubled), "%s//uid1/containers//app/term", pods);
	assert_int_equal(WRITE(pods, doubled, "x"), -EPERM);
	assert_content(term, "a\\nb\\\\nc\n");
}

/* A long message goes out whole. */
static void test_long_message(void **state)
{
	char msg[4000 + 2];

	(void)state;
	memset(msg, 'x', 4000);
	msg[4000] = '\0';
	assert_int_equal(WRITE(pods, term, msg), 0);
	strcat(msg, "\n");
	assert_content(term, msg);
}

static void test_outside(void **state)
{
	char p[7][300];

	(void)state;
	snprintf(p[0], sizeof(p[0]), "%s", target);			/* elsewhere */
	snprintf(p[1], sizeof(p[1]), "%s-evil/uid1/containers/app/term", pods);	/* prefix trick */
	snprintf(p[2], sizeof(p[2]), "%s", pods);			/* the dir itself */
	snprintf(p[3], sizeof(p[3]), "%s/", pods);
	snprintf(p[4], sizeof(p[4]), "uid1/containers/app/term");	/* relative */
	snprintf(p[5], sizeof(p[5]), "%s/uid1/../../outside/containers/app/target", pods);
	/* the subPath attack's shape: under the pod's dir, not kubelet's file */
	snprintf(p[6], sizeof(p[6]), "%s/uid1/volume-subpaths/v/app/0", pods);
	for (size_t i = 0; i < ARRAY_SIZE(p); i++) {
		print_message("path %s\n", p[i]);
		assert_int_equal(WRITE(pods, p[i], "x"), -EPERM);
	}
	/* ".." that would stay inside is refused too: no climbing at all */
	snprintf(p[0], sizeof(p[0]), "%s/uid1/containers/../containers/app/term", pods);
	assert_int_equal(WRITE(pods, p[0], "x"), -EPERM);
	snprintf(p[0], sizeof(p[0]), "%s/..", pods);
	assert_int_equal(WRITE(pods, p[0], "x"), -EPERM);
	/* kubelet-shaped, but another pod's or container's file */
	assert_int_equal(reject_write_message(pods, "uid2", "app", term, "x"), -EPERM);
	assert_int_equal(reject_write_message(pods, "uid1", "side", term, "x"), -EPERM);
	/* a relative pods_dir, or names that are not one component */
	assert_int_equal(WRITE("pods", "pods/uid1/containers/app/term", "x"), -EINVAL);
	assert_int_equal(reject_write_message(pods, "", "app", term, "x"), -EINVAL);
	assert_int_equal(reject_write_message(pods, "uid1", "..", term, "x"), -EINVAL);
	assert_content(target, TARGET);
	assert_content(term, OLD);
}

static void test_symlinks(void **state)
{
	char path[300], link[300];

	(void)state;
	/* symlink as the final component */
	snprintf(link, sizeof(link), "%s/uid1/containers/app/link", pods);
	assert_int_equal(symlink(target, link), 0);
	assert_int_equal(WRITE(pods, link, "x"), -ELOOP);

	/* symlink in the middle of the path: the pod's dir */
	snprintf(link, sizeof(link), "%s/uid2", pods);
	assert_int_equal(symlink(outside, link), 0);
	snprintf(path, sizeof(path), "%s/uid2/containers/app/target", pods);
	assert_int_equal(reject_write_message(pods, "uid2", "app", path, "x"), -ELOOP);
	/* ... and its containers dir */
	snprintf(path, sizeof(path), "%s/uid3", pods);
	assert_int_equal(mkdir(path, 0755), 0);
	snprintf(link, sizeof(link), "%s/uid3/containers", pods);
	snprintf(path, sizeof(path), "%s/containers", outside);
	assert_int_equal(symlink(path, link), 0);
	snprintf(path, sizeof(path), "%s/uid3/containers/app/target", pods);
	assert_int_equal(reject_write_message(pods, "uid3", "app", path, "x"), -ELOOP);

	/* a relative symlink that stays inside pods_dir is refused as well */
	snprintf(link, sizeof(link), "%s/uid1/containers/app/rel", pods);
	assert_int_equal(symlink("term", link), 0);
	assert_int_equal(WRITE(pods, link, "x"), -ELOOP);

	assert_content(target, TARGET);
	assert_content(term, OLD);
}

/*
 * A mount point on the way is refused (RESOLVE_NO_XDEV): a file bound
 * over kubelet's, and a directory bound over the pod's containers dir.
 * The mounts are made in a private mount namespace of this process, so
 * they vanish with it whatever happens. Needs CAP_SYS_ADMIN: skipped
 * without it (a failure under CI=true, as every root-only test).
 */
static void test_mount_points(void **state)
{
	char path[300], dir[300];
	const char *ci = getenv("CI");

	(void)state;
	if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0) {
		if (ci && strcmp(ci, "true") == 0)
			fail_msg("a private mount namespace needs root: %s", strerror(errno));
		skip();
	}
	/* a file over kubelet's file: target would be written */
	assert_int_equal(mount(target, term, NULL, MS_BIND, NULL), 0);
	assert_int_equal(WRITE(pods, term, "x"), -EXDEV);
	assert_int_equal(umount2(term, MNT_DETACH), 0);
	assert_content(target, TARGET);
	assert_content(term, OLD);
	/* a directory over the pod's containers dir */
	snprintf(dir, sizeof(dir), "%s/uid1/containers", pods);
	snprintf(path, sizeof(path), "%s/containers", outside);
	assert_int_equal(mount(path, dir, NULL, MS_BIND, NULL), 0);
	snprintf(path, sizeof(path), "%s/uid1/containers/app/target", pods);
	assert_int_equal(WRITE(pods, path, "x"), -EXDEV);
	assert_int_equal(umount2(dir, MNT_DETACH), 0);
	assert_content(target, TARGET);
	/* pods_dir itself a mount point is fine: the walk starts there */
	assert_int_equal(mount(pods, pods, NULL, MS_BIND, NULL), 0);
	assert_int_equal(WRITE(pods, term, "y"), 0);
	assert_content(term, "y\n");
	assert_int_equal(umount2(pods, MNT_DETACH), 0);
}

/* pods_dir itself a symlink: refused (O_NOFOLLOW), see reject.c. */
static void test_pods_dir_symlink(void **state)
{
	char link[128], path[300];

	(void)state;
	snprintf(link, sizeof(link), "%s/podslink", tmp);
	assert_int_equal(symlink(pods, link), 0);
	snprintf(path, sizeof(path), "%s/uid1/containers/app/term", link);
	assert_true(WRITE(link, path, "x") < 0);
	assert_content(term, OLD);
}

static void test_not_regular(void **state)
{
	char path[300], c;
	int r, rfd;

	(void)state;
	/* a directory */
	snprintf(path, sizeof(path), "%s/uid1/containers/app/dir", pods);
	assert_int_equal(mkdir(path, 0755), 0);
	r = WRITE(pods, path, "x");
	assert_true(r == -EISDIR || r == -EINVAL);

	/* a FIFO: refused without blocking, whether or not a reader exists */
	snprintf(path, sizeof(path), "%s/uid1/containers/app/fifo", pods);
	assert_int_equal(mkfifo(path, 0600), 0);
	r = WRITE(pods, path, "x");
	assert_true(r == -ENXIO || r == -EINVAL);
	rfd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	assert_true(rfd >= 0);
	assert_int_equal(WRITE(pods, path, "x"), -EINVAL);
	assert_int_equal(read(rfd, &c, 1), 0);	/* nothing was written */
	close(rfd);

	/* a hard link to a file outside: same inode, refused, untouched */
	snprintf(path, sizeof(path), "%s/uid1/containers/app/hard", pods);
	assert_int_equal(link(target, path), 0);
	assert_int_equal(WRITE(pods, path, "x"), -EINVAL);
	assert_content(target, TARGET);
}

static void test_missing(void **state)
{
	char path[300], dir[128];

	(void)state;
	snprintf(path, sizeof(path), "%s/uid1/containers/app/nope", pods);
	assert_int_equal(WRITE(pods, path, "x"), -ENOENT);
	assert_int_equal(access(path, F_OK), -1);
	snprintf(path, sizeof(path), "%s/uid9/containers/app/term", pods);
	assert_int_equal(reject_write_message(pods, "uid9", "app", path, "x"), -ENOENT);
	/* pods_dir missing */
	snprintf(dir, sizeof(dir), "%s/nodir", tmp);
	snprintf(path, sizeof(path), "%s/uid1/containers/app/term", dir);
	assert_int_equal(WRITE(dir, path, "x"), -ENOENT);
}

static void test_too_long(void **state)
{
	char *path = calloc(1, 2 * PATH_MAX);
	size_t n;

	(void)state;
	assert_non_null(path);
	n = (size_t)snprintf(path, 2 * PATH_MAX, "%s/", pods);
	memset(path + n, 'a', PATH_MAX);
	assert_int_equal(WRITE(pods, path, "x"), -ENAMETOOLONG);
	free(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_shape),
		cmocka_unit_test(test_shape_bounds),
		cmocka_unit_test_setup_teardown(test_writes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_long_message, setup, teardown),
		cmocka_unit_test_setup_teardown(test_outside, setup, teardown),
		cmocka_unit_test_setup_teardown(test_symlinks, setup, teardown),
		cmocka_unit_test_setup_teardown(test_mount_points, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pods_dir_symlink, setup, teardown),
		cmocka_unit_test_setup_teardown(test_not_regular, setup, teardown),
		cmocka_unit_test_setup_teardown(test_missing, setup, teardown),
		cmocka_unit_test_setup_teardown(test_too_long, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
