// SPDX-License-Identifier: Apache-2.0
/*
 * The export writer (export_writer.h): one forked child at a time, its
 * pidfd for the loop's poll set, its results in a page shared with it.
 */
#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "export_writer.h"
#include "user/base/clock.h"
#include "user/base/prefault.h"

struct export_writer {
	pid_t pid;			/* the running child; 0 = none */
	uint64_t fork_ns;		/* its fork()'s time in the parent */
	int pidfd;			/* its pidfd; -1 = none */
	struct export_result *shared;	/* MAP_SHARED: the child writes it */
	int watch_fd;			/* the loop's: stops the re-arming; -1 none */
};

int export_writer_new(struct export_writer **ret)
{
	struct export_writer *w = calloc(1, sizeof(*w));

	if (!w)
		return -ENOMEM;
	w->shared = mmap(NULL, sizeof(*w->shared), PROT_READ | PROT_WRITE,
			 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (w->shared == MAP_FAILED) {
		int r = -errno;

		free(w);
		return r;
	}
	w->pidfd = -1;
	w->watch_fd = -1;
	*ret = w;
	return 0;
}

bool export_writer_busy(const struct export_writer *w)
{
	return w && w->pid > 0;
}

int export_writer_fd(const struct export_writer *w)
{
	return w ? w->pidfd : -1;
}

/*
 * The child's scheduling: one real-time priority below the loop's, so the
 * loop preempts it the moment an event comes, while the node's normal
 * load does not stretch its life (every page the loop writes while a
 * child lives is copied: a child starved for hundreds of ms beside busy
 * workers made the loop pay that). SCHED_OTHER when the loop is not
 * real-time or has no priority below it.
 */
static void child_sched(void)
{
	int pol = sched_getscheduler(0);
	struct sched_param sp = { 0 };

	if ((pol == SCHED_FIFO || pol == SCHED_RR) && sched_getparam(0, &sp) == 0 &&
	    sp.sched_priority > 1) {
		sp.sched_priority--;
		sched_setscheduler(0, pol, &sp);
		return;
	}
	sp.sched_priority = 0;
	sched_setscheduler(0, SCHED_OTHER, &sp);
}

/* The child: its scheduling, the job, and out without atexit handlers or
 * stdio flushes of the parent's. */
static void child(struct export_writer *w, export_job_fn fn, void *ctx)
{
	uint64_t t0 = clock_ns(CLOCK_MONOTONIC);

	child_sched();
	fn(ctx, w->shared);
	w->shared->took_ns = clock_ns(CLOCK_MONOTONIC) - t0;
	w->shared->done = true;
	_exit(0);
}

int export_writer_start(struct export_writer *w, export_job_fn fn, void *ctx)
{
	pid_t pid;
	int fd, r;

	if (w->pid > 0)
		return -EBUSY;
	/* For benchmarks only: no child, the caller exports on the loop (the
	 * fork's copy-on-write faults against the export's own time). */
	if (getenv("CPUSETD_EXPORT_INLINE"))
		return -ENOTSUP;
	memset(w->shared, 0, sizeof(*w->shared));
	w->fork_ns = clock_ns(CLOCK_MONOTONIC);
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0)
		child(w, fn, ctx);
	w->fork_ns = clock_ns(CLOCK_MONOTONIC) - w->fork_ns;
	fd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (fd < 0) {
		/* a kernel without pidfds (< 5.3): wait for this one here */
		r = -errno;
		waitpid(pid, NULL, 0);
		return r;
	}
	w->pid = pid;
	w->pidfd = fd;
	return 0;
}

void export_writer_watch(struct export_writer *w, int fd)
{
	w->watch_fd = fd;
}

/* The child is gone: the pages it shared are the loop's alone again, but
 * still write-protected (prefault.h). Made writable now, while the loop
 * has nothing to do, rather than one fault at a time in the next resize.
 * CPUSETD_EXPORT_NO_REARM=1 leaves them (benchmarks only). */
static void rearm(struct export_writer *w, struct export_result *ret)
{
	uint64_t t0;

	if (getenv("CPUSETD_EXPORT_NO_REARM"))
		return;
	t0 = clock_ns(CLOCK_MONOTONIC);
	ret->rearm = prefault_writable(w->watch_fd, &ret->rearm_pages);
	ret->rearm_ns = clock_ns(CLOCK_MONOTONIC) - t0;
}

int export_writer_reap(struct export_writer *w, unsigned wait_ms, struct export_result *ret)
{
	struct pollfd pfd;
	int status;

	if (!w || w->pid <= 0)
		return 0;
	pfd = (struct pollfd){ .fd = w->pidfd, .events = POLLIN };
	if (poll(&pfd, 1, (int)wait_ms) <= 0)
		return 0;
	while (waitpid(w->pid, &status, 0) < 0 && errno == EINTR)
		;
	*ret = *w->shared;
	ret->fork_ns = w->fork_ns;
	close(w->pidfd);
	w->pidfd = -1;
	w->pid = 0;
	rearm(w, ret);
	return 1;
}

int export_writer_free(struct export_writer *w, unsigned wait_ms)
{
	struct export_result res;
	int r = 0;

	if (!w)
		return 0;
	if (w->pid > 0 && export_writer_reap(w, wait_ms, &res) == 0) {
		/* stuck (a frozen filesystem): killed and left to the kernel;
		 * not reaped, we are on our way out */
		syscall(SYS_pidfd_send_signal, w->pidfd, SIGKILL, NULL, 0);
		close(w->pidfd);
		r = -ETIMEDOUT;
	}
	munmap(w->shared, sizeof(*w->shared));
	free(w);
	return r;
}
