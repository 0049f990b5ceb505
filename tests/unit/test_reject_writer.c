// SPDX-License-Identifier: Apache-2.0
/*
 * reject_writer: the termination message writer thread. A job that
 * blocks (a hung filesystem, here a read on an empty pipe) never blocks
 * the caller: submit returns at once, the slots bound what waits, a full
 * writer refuses at once, results come back in order through the
 * eventfd, and a stop does not wait for a stuck job longer than asked.
 * The real write (reject_write_message) is test_reject's; the daemon's
 * use of it, with a filesystem frozen for real, test_termination.sh's.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>
#include "user/base/clock.h"
#include "user/reject/reject_writer.h"

/* Jobs whose msg is "block" wait for a byte on gate[0]; every job
 * records that it ran, on which thread, with which signal mask. */
static int gate[2];
static pthread_mutex_t seen_lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned ran, returned;
static bool sigterm_blocked;
static char thread_name[17];
static pthread_t job_thread;

static int job(const struct reject_job *j)
{
	sigset_t mask;
	char c;
	int r = 0;

	pthread_mutex_lock(&seen_lock);
	ran++;
	job_thread = pthread_self();
	pthread_sigmask(SIG_SETMASK, NULL, &mask);
	sigterm_blocked = sigismember(&mask, SIGTERM) && sigismember(&mask, SIGHUP);
	prctl(PR_GET_NAME, thread_name, 0, 0, 0);
	pthread_mutex_unlock(&seen_lock);
	if (strcmp(j->msg, "block") == 0 && read(gate[0], &c, 1) != 1)
		r = -EIO;
	if (strcmp(j->msg, "fail") == 0)
		r = -EXDEV;
	pthread_mutex_lock(&seen_lock);
	returned++;
	pthread_mutex_unlock(&seen_lock);
	return r;
}

static unsigned count(unsigned *v)
{
	unsigned n;

	pthread_mutex_lock(&seen_lock);
	n = *v;
	pthread_mutex_unlock(&seen_lock);
	return n;
}

static int setup(void **state)
{
	(void)state;
	ran = returned = 0;
	return pipe(gate);
}

static int teardown(void **state)
{
	(void)state;
	close(gate[0]);
	close(gate[1]);
	return 0;
}

static void submit(struct reject_writer *w, uint64_t id, const char *msg, int want)
{
	struct reject_job j = { .cgroup_id = id };

	snprintf(j.msg, sizeof(j.msg), "%s", msg);
	assert_int_equal(reject_writer_submit(w, &j), want);
}

/* Whether fd is readable within ms. */
static bool readable(int fd, int ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	return poll(&p, 1, ms) == 1;
}

/* The next finished job, waiting for the eventfd up to 5 s. */
static void next(struct reject_writer *w, struct reject_job *ret)
{
	for (int i = 0; i < 500; i++) {
		if (reject_writer_next(w, ret) == 1)
			return;
		readable(reject_writer_fd(w), 10);
	}
	fail_msg("no finished job after 5 s");
}

static void test_order_and_results(void **state)
{
	struct reject_writer *w;
	struct reject_job j;

	(void)state;
	assert_int_equal(reject_writer_new(4, job, &w), 0);
	assert_false(readable(reject_writer_fd(w), 0));
	assert_int_equal(reject_writer_next(w, &j), 0);
	submit(w, 1, "ok", 0);
	submit(w, 2, "fail", 0);
	submit(w, 3, "ok", 0);
	next(w, &j);
	assert_int_equal(j.cgroup_id, 1);
	assert_int_equal(j.result, 0);
	next(w, &j);
	assert_int_equal(j.cgroup_id, 2);
	assert_int_equal(j.result, -EXDEV);
	next(w, &j);
	assert_int_equal(j.cgroup_id, 3);
	assert_int_equal(reject_writer_pending(w), 0);
	/* collected: the eventfd is clear again */
	assert_int_equal(reject_writer_next(w, &j), 0);
	assert_false(readable(reject_writer_fd(w), 0));
	/* the thread: not the caller's, every signal blocked, named */
	assert_false(pthread_equal(job_thread, pthread_self()));
	assert_true(sigterm_blocked);
	assert_string_equal(thread_name, "cpusetd-msg");
	assert_int_equal(reject_writer_free(w, 1000), 0);
}

/* A job stuck in the kernel: the caller never waits for it. */
static void test_blocking_job(void **state)
{
	struct reject_writer *w;
	struct reject_job j;
	uint64_t t0;

	(void)state;
	assert_int_equal(reject_writer_new(3, job, &w), 0);
	t0 = clock_ns(CLOCK_MONOTONIC);
	submit(w, 1, "block", 0);
	submit(w, 2, "ok", 0);
	submit(w, 3, "ok", 0);
	/* every slot taken (one stuck, two behind it): refused at once */
	submit(w, 4, "ok", -EAGAIN);
	/* here while job 1 hangs: submit never waits for the thread */
	assert_true(clock_ns(CLOCK_MONOTONIC) - t0 < 2000000000ULL);
	assert_int_equal(reject_writer_pending(w), 3);
	/* nothing finishes while the first job hangs */
	assert_false(readable(reject_writer_fd(w), 100));
	assert_int_equal(reject_writer_next(w, &j), 0);
	assert_int_equal(count(&ran), 1);
	/* the filesystem comes back: all done, in order */
	assert_int_equal(write(gate[1], "x", 1), 1);
	next(w, &j);
	assert_int_equal(j.cgroup_id, 1);
	assert_int_equal(j.result, 0);
	next(w, &j);
	assert_int_equal(j.cgroup_id, 2);
	/* a slot is free again */
	submit(w, 5, "ok", 0);
	next(w, &j);
	assert_int_equal(j.cgroup_id, 3);
	next(w, &j);
	assert_int_equal(j.cgroup_id, 5);
	assert_int_equal(reject_writer_free(w, 1000), 0);
}

/* A stop waits as long as asked for a stuck job, then leaves it; the
 * thread frees the writer when the job comes back. Queued jobs that
 * never started are dropped. */
static void test_stop_with_stuck_job(void **state)
{
	struct reject_writer *w;
	uint64_t t0, took;

	(void)state;
	assert_int_equal(reject_writer_new(2, job, &w), 0);
	submit(w, 1, "block", 0);
	submit(w, 2, "ok", 0);
	for (int i = 0; i < 500 && count(&ran) < 1; i++)
		usleep(10000);
	assert_int_equal(count(&ran), 1);
	t0 = clock_ns(CLOCK_MONOTONIC);
	assert_int_equal(reject_writer_free(w, 200), -EBUSY);
	took = clock_ns(CLOCK_MONOTONIC) - t0;
	assert_true(took >= 150000000ULL && took < 2000000000ULL);
	/* the job returns after all: the orphaned thread cleans up */
	assert_int_equal(write(gate[1], "x", 1), 1);
	for (int i = 0; i < 500 && count(&returned) < 1; i++)
		usleep(10000);
	assert_int_equal(count(&returned), 1);
	usleep(50000);
	assert_int_equal(count(&ran), 1);	/* job 2 was dropped */
}

/* A writer that never got a job has no thread; a stop is immediate. */
static void test_no_thread(void **state)
{
	struct reject_writer *w;

	(void)state;
	assert_int_equal(reject_writer_new(1, NULL, &w), 0);
	assert_int_equal(reject_writer_pending(w), 0);
	assert_int_equal(reject_writer_free(w, 1000), 0);
	assert_int_equal(reject_writer_free(NULL, 0), 0);
	assert_int_equal(reject_writer_new(0, NULL, &w), -EINVAL);
	assert_int_equal(reject_writer_new(REJECT_WRITER_MAX_SLOTS + 1, NULL, &w), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_order_and_results, setup, teardown),
		cmocka_unit_test_setup_teardown(test_blocking_job, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stop_with_stuck_job, setup, teardown),
		cmocka_unit_test(test_no_thread),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
