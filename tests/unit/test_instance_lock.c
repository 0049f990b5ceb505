// SPDX-License-Identifier: Apache-2.0
/*
 * The files cpusetd trusts in its state dir (issue 22, L5): the instance
 * lock file (user/process/instance_lock.c), which we write our PID into,
 * must be a regular file of ours with one link, never a symlink (nothing
 * is created or written through one); the state dir itself must be a
 * directory of ours that no group or other user may write
 * (files_check_private_dir). Each refusal leaves what was planted as it
 * was. Also: a lock held by another process is refused with its PID, and
 * --release's "no state dir" ("") takes no file lock at all.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>
#include "user/base/files.h"
#include "user/process/instance_lock.h"

#define TARGET	"precious\n"

static char dir[64], lock_path[128], target[128];

static void make_target(void)
{
	FILE *f = fopen(target, "w");

	assert_non_null(f);
	fputs(TARGET, f);
	fclose(f);
}

static int setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/test_instance_lock.XXXXXX");
	assert_non_null(mkdtemp(dir));
	snprintf(lock_path, sizeof(lock_path), "%s/%s", dir, INSTANCE_LOCK_FILE);
	snprintf(target, sizeof(target), "%s/target", dir);
	make_target();
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	unlink(lock_path);
	unlink(target);
	rmdir(dir);
	return 0;
}

static void assert_target_kept(void)
{
	char buf[64] = "";
	FILE *f = fopen(target, "r");

	assert_non_null(f);
	assert_non_null(fgets(buf, sizeof(buf), f));
	fclose(f);
	assert_string_equal(buf, TARGET);
}

/* instance_lock_take on dir alone must fail with err, naming dir. */
static void assert_lock_refused(int err)
{
	struct instance_lock l = { -1, -1 };
	const char *what = NULL;
	pid_t holder = -1;

	assert_int_equal(instance_lock_take(dir, "", &l, &holder, &what), err);
	assert_ptr_equal(what, dir);
	assert_int_equal(l.state_fd, -1);
	assert_non_null(instance_lock_why(err));
}

static void test_lock_ok(void **state)
{
	struct instance_lock l = { -1, -1 };
	const char *what;
	char buf[32] = "";
	pid_t holder;
	FILE *f;

	(void)state;
	assert_int_equal(instance_lock_take(dir, "", &l, &holder, &what), 0);
	assert_true(l.state_fd >= 0);
	assert_int_equal(l.pin_fd, -1);
	f = fopen(lock_path, "r");
	assert_non_null(f);
	assert_non_null(fgets(buf, sizeof(buf), f));
	fclose(f);
	assert_int_equal(atoi(buf), getpid());
	instance_lock_release(&l);
	assert_int_equal(l.state_fd, -1);
	/* "" takes no file lock (--release on a node without a state dir) */
	assert_int_equal(instance_lock_take("", "", &l, &holder, &what), 0);
	assert_int_equal(l.state_fd, -1);
	instance_lock_release(&l);
}

/* Another process holds it: refused, with that process's PID. */
static void test_lock_held(void **state)
{
	struct instance_lock l = { -1, -1 };
	const char *what;
	int ready[2], fd;
	pid_t child, holder = 0;
	char c;

	(void)state;
	assert_int_equal(pipe(ready), 0);
	child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		fd = open(lock_path, O_RDWR | O_CREAT, 0644);
		if (fd < 0 || flock(fd, LOCK_EX) < 0 || write(ready[1], "x", 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	assert_int_equal(read(ready[0], &c, 1), 1);
	assert_int_equal(instance_lock_take(dir, "", &l, &holder, &what), -EWOULDBLOCK);
	assert_int_equal(holder, child);
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	close(ready[0]);
	close(ready[1]);
}

static void test_lock_symlink(void **state)
{
	(void)state;
	/* to an existing file and to a missing one: neither is opened or made */
	assert_int_equal(symlink(target, lock_path), 0);
	assert_lock_refused(-ELOOP);
	assert_target_kept();
	unlink(lock_path);
	unlink(target);
	assert_int_equal(symlink(target, lock_path), 0);
	assert_lock_refused(-ELOOP);
	assert_int_equal(access(target, F_OK), -1);
}

static void test_lock_hardlink(void **state)
{
	(void)state;
	assert_int_equal(link(target, lock_path), 0);
	assert_lock_refused(-EMLINK);
	assert_target_kept();
}

static void test_lock_fifo(void **state)
{
	(void)state;
	assert_int_equal(mkfifo(lock_path, 0644), 0);
	assert_lock_refused(-EINVAL);	/* and it did not block in open */
}

static void test_lock_other_owner(void **state)
{
	(void)state;
	if (geteuid() != 0)
		skip();
	unlink(target);
	make_target();
	assert_int_equal(rename(target, lock_path), 0);
	assert_int_equal(chown(lock_path, 1, 1), 0);
	assert_lock_refused(-EPERM);
}

/* files_check_private_dir: the state dir is ours alone. */
static void test_private_dir(void **state)
{
	char link_path[160], why[96];
	struct stat st;

	(void)state;
	assert_int_equal(chmod(dir, 0755), 0);
	assert_int_equal(files_check_private_dir(dir, geteuid(), &st), 0);
	assert_int_equal(chmod(dir, 0775), 0);
	assert_int_equal(files_check_private_dir(dir, geteuid(), &st), -EACCES);
	assert_string_equal(files_refused_why(-EACCES, &st, geteuid(), why, sizeof(why)),
			    "mode 0775: group or others may write it");
	assert_int_equal(chmod(dir, 0757), 0);
	assert_int_equal(files_check_private_dir(dir, geteuid(), &st), -EACCES);
	assert_int_equal(chmod(dir, 0700), 0);
	assert_int_equal(files_check_private_dir(dir, geteuid() + 1, &st), -EPERM);
	assert_int_equal(files_check_private_dir(target, geteuid(), &st), -ENOTDIR);
	snprintf(link_path, sizeof(link_path), "%s/link", dir);
	assert_int_equal(symlink(dir, link_path), 0);
	assert_int_equal(files_check_private_dir(link_path, geteuid(), &st), -ELOOP);
	unlink(link_path);
	assert_int_equal(files_check_private_dir("/nonexistent-cpusetd", geteuid(), &st), -ENOENT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_lock_ok, setup, teardown),
		cmocka_unit_test_setup_teardown(test_lock_held, setup, teardown),
		cmocka_unit_test_setup_teardown(test_lock_symlink, setup, teardown),
		cmocka_unit_test_setup_teardown(test_lock_hardlink, setup, teardown),
		cmocka_unit_test_setup_teardown(test_lock_fifo, setup, teardown),
		cmocka_unit_test_setup_teardown(test_lock_other_owner, setup, teardown),
		cmocka_unit_test_setup_teardown(test_private_dir, setup, teardown),
	};

	return cmocka_run_group_tests_name("instance_lock", tests, NULL, NULL);
}
