// SPDX-License-Identifier: Apache-2.0
/*
 * prefault: after a fork whose child has exited, the parent's pages fault
 * once each when written (counted by getrusage's minor faults); after
 * prefault_writable they do not. Pages never touched stay unallocated
 * (mincore), and a readable stop fd stops it before its first slice.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>
#include "user/base/prefault.h"

#define PAGES 512	/* 2 MiB: well above any noise in the fault count */

static size_t page;

static long minflt(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_minflt;
}

/* An anonymous mapping whose first half is written (resident), the
 * second half never touched. */
static unsigned char *mapping(void)
{
	unsigned char *m = mmap(NULL, PAGES * page, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	assert_true(m != MAP_FAILED);
	for (size_t i = 0; i < PAGES / 2; i++)
		m[i * page] = 1;
	return m;
}

/* A child that exits at once: afterwards every private page of ours is
 * write-protected. */
static void fork_and_reap(void)
{
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0)
		_exit(0);
	assert_int_equal(waitpid(pid, NULL, 0), pid);
}

/* Faults taken by writing one byte to each resident page. */
static long write_faults(unsigned char *m)
{
	long before = minflt();

	for (size_t i = 0; i < PAGES / 2; i++)
		m[i * page]++;
	return minflt() - before;
}

static size_t resident(unsigned char *m, size_t from, size_t n)
{
	unsigned char vec[PAGES];
	size_t r = 0;

	assert_int_equal(mincore(m + from * page, n * page, vec), 0);
	for (size_t i = 0; i < n; i++)
		r += vec[i] & 1;
	return r;
}

/* The cost it removes is real: without it, each written page faults. */
static void test_fork_leaves_faults(void **state)
{
	unsigned char *m = mapping();

	(void)state;
	fork_and_reap();
	assert_true(write_faults(m) >= PAGES / 2 - 8);
	munmap(m, PAGES * page);
}

static void test_prefault_takes_them(void **state)
{
	unsigned char *m = mapping();
	size_t pages = 0;
	int r;

	(void)state;
	fork_and_reap();
	r = prefault_writable(-1, &pages);
	if (r == -EINVAL)
		skip();	/* a kernel before 5.14: no MADV_POPULATE_WRITE */
	assert_int_equal(r, 0);
	assert_true(pages >= PAGES / 2);
	assert_true(write_faults(m) < 8);
	/* the untouched half was not allocated */
	assert_int_equal(resident(m, PAGES / 2, PAGES / 2), 0);
	munmap(m, PAGES * page);
}

static void test_stop_fd(void **state)
{
	unsigned char *m = mapping();
	size_t pages = 99;
	int p[2];

	(void)state;
	assert_int_equal(pipe(p), 0);
	assert_int_equal(write(p[1], "x", 1), 1);
	fork_and_reap();
	assert_int_equal(prefault_writable(p[0], &pages), 1);
	assert_int_equal(pages, 0);
	assert_true(write_faults(m) >= PAGES / 2 - 8);
	close(p[0]);
	close(p[1]);
	munmap(m, PAGES * page);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fork_leaves_faults),
		cmocka_unit_test(test_prefault_takes_them),
		cmocka_unit_test(test_stop_fd),
	};

	page = (size_t)sysconf(_SC_PAGESIZE);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
