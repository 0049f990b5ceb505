/*
 * reject: the termination message write must land only on a regular file
 * under pods_dir, never through a symlink, and never create anything.
 * Each test gets a fresh tree:
 *   <tmp>/pods/uid1/containers/app/term     regular file, "old content..."
 *   <tmp>/outside/target                    must never change
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
#include "user/daemon/reject.h"

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#define OLD		"old content that is longer than the message\n"
#define TARGET		"precious\n"

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
	snprintf(target, sizeof(target), "%s/target", outside);
	run("mkdir -p '%s/uid1/containers/app' '%s'", pods, outside);
	write_file(term, OLD);
	write_file(target, TARGET);
	return 0;
}

static int teardown(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp);
	return system(cmd) == 0 ? 0 : -1;
}

static void test_writes(void **state)
{
	char dir_slash[160];

	(void)state;
	assert_int_equal(reject_write_message(pods, term, "no free CPUs"), 0);
	assert_content(term, "no free CPUs\n");

	/* a trailing slash on pods_dir, doubled slashes in host_path */
	snprintf(dir_slash, sizeof(dir_slash), "%s/", pods);
	assert_int_equal(reject_write_message(dir_slash, term, "again"), 0);
	assert_content(term, "again\n");
	char doubled[300];
	snprintf(doubled, sizeof(doubled), "%s//uid1/containers//app/term", pods);
	assert_int_equal(reject_write_message(pods, doubled, ""), 0);
	assert_content(term, "\n");
}

/* A long message goes out whole. */
static void test_long_message(void **state)
{
	char msg[4000 + 2];

	(void)state;
	memset(msg, 'x', 4000);
	msg[4000] = '\0';
	assert_int_equal(reject_write_message(pods, term, msg), 0);
	strcat(msg, "\n");
	assert_content(term, msg);
}

static void test_outside(void **state)
{
	char p[6][300];

	(void)state;
	snprintf(p[0], sizeof(p[0]), "%s", target);			/* elsewhere */
	snprintf(p[1], sizeof(p[1]), "%s-evil/uid1/term", pods);	/* prefix trick */
	snprintf(p[2], sizeof(p[2]), "%s", pods);			/* the dir itself */
	snprintf(p[3], sizeof(p[3]), "%s/", pods);
	snprintf(p[4], sizeof(p[4]), "uid1/containers/app/term");	/* relative */
	snprintf(p[5], sizeof(p[5]), "%s/uid1/../../outside/target", pods);
	for (size_t i = 0; i < ARRAY_SIZE(p); i++) {
		print_message("path %s\n", p[i]);
		assert_int_equal(reject_write_message(pods, p[i], "x"), -EPERM);
	}
	/* ".." that would stay inside is refused too: no climbing at all */
	snprintf(p[0], sizeof(p[0]), "%s/uid1/containers/../containers/app/term", pods);
	assert_int_equal(reject_write_message(pods, p[0], "x"), -EPERM);
	snprintf(p[0], sizeof(p[0]), "%s/..", pods);
	assert_int_equal(reject_write_message(pods, p[0], "x"), -EPERM);
	/* a relative pods_dir is refused */
	assert_int_equal(reject_write_message("pods", "pods/uid1/containers/app/term", "x"), -EPERM);
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
	assert_int_equal(reject_write_message(pods, link, "x"), -ELOOP);

	/* symlink in the middle of the path */
	snprintf(link, sizeof(link), "%s/uid2", pods);
	assert_int_equal(symlink(outside, link), 0);
	snprintf(path, sizeof(path), "%s/uid2/target", pods);
	assert_int_equal(reject_write_message(pods, path, "x"), -ELOOP);

	/* a relative symlink that stays inside pods_dir is refused as well */
	snprintf(link, sizeof(link), "%s/uid1/containers/app/rel", pods);
	assert_int_equal(symlink("term", link), 0);
	assert_int_equal(reject_write_message(pods, link, "x"), -ELOOP);

	assert_content(target, TARGET);
	assert_content(term, OLD);
}

/* pods_dir itself a symlink: refused (O_NOFOLLOW), see reject.c. */
static void test_pods_dir_symlink(void **state)
{
	char link[128], path[300];

	(void)state;
	snprintf(link, sizeof(link), "%s/podslink", tmp);
	assert_int_equal(symlink(pods, link), 0);
	snprintf(path, sizeof(path), "%s/uid1/containers/app/term", link);
	assert_true(reject_write_message(link, path, "x") < 0);
	assert_content(term, OLD);
}

static void test_not_regular(void **state)
{
	char path[300];
	int r;

	(void)state;
	/* a directory */
	snprintf(path, sizeof(path), "%s/uid1/containers/app", pods);
	r = reject_write_message(pods, path, "x");
	assert_true(r == -EISDIR || r == -EINVAL);

	/* a FIFO: refused without blocking, whether or not a reader exists */
	snprintf(path, sizeof(path), "%s/uid1/containers/app/fifo", pods);
	assert_int_equal(mkfifo(path, 0600), 0);
	r = reject_write_message(pods, path, "x");
	assert_true(r == -ENXIO || r == -EINVAL);
	int rfd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	assert_true(rfd >= 0);
	assert_int_equal(reject_write_message(pods, path, "x"), -EINVAL);
	char c;
	assert_int_equal(read(rfd, &c, 1), 0);	/* nothing was written */
	close(rfd);

	/* a hard link to a file outside: same inode, refused, untouched */
	snprintf(path, sizeof(path), "%s/uid1/containers/app/hard", pods);
	assert_int_equal(link(target, path), 0);
	assert_int_equal(reject_write_message(pods, path, "x"), -EINVAL);
	assert_content(target, TARGET);
}

static void test_missing(void **state)
{
	char path[300];

	(void)state;
	snprintf(path, sizeof(path), "%s/uid1/containers/app/nope", pods);
	assert_int_equal(reject_write_message(pods, path, "x"), -ENOENT);
	assert_int_equal(access(path, F_OK), -1);
	snprintf(path, sizeof(path), "%s/uid9/containers/app/term", pods);
	assert_int_equal(reject_write_message(pods, path, "x"), -ENOENT);
	/* pods_dir missing */
	char dir[128], file[300];
	snprintf(dir, sizeof(dir), "%s/nodir", tmp);
	snprintf(file, sizeof(file), "%s/uid1/term", dir);
	assert_int_equal(reject_write_message(dir, file, "x"), -ENOENT);
}

static void test_too_long(void **state)
{
	char *path = calloc(1, 2 * PATH_MAX);
	size_t n;

	(void)state;
	assert_non_null(path);
	n = (size_t)snprintf(path, 2 * PATH_MAX, "%s/", pods);
	memset(path + n, 'a', PATH_MAX);
	assert_int_equal(reject_write_message(pods, path, "x"), -ENAMETOOLONG);
	free(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_writes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_long_message, setup, teardown),
		cmocka_unit_test_setup_teardown(test_outside, setup, teardown),
		cmocka_unit_test_setup_teardown(test_symlinks, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pods_dir_symlink, setup, teardown),
		cmocka_unit_test_setup_teardown(test_not_regular, setup, teardown),
		cmocka_unit_test_setup_teardown(test_missing, setup, teardown),
		cmocka_unit_test_setup_teardown(test_too_long, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
