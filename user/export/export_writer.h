/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The export writer: status.json, topology.json and the .prom textfile
 * are built and written in a forked child, off the event loop, so an
 * export (tens of ms of json-c at 1,000 containers, or a state directory
 * on a slow or frozen filesystem) never delays the next event's writes.
 *
 * Why a fork and not a thread: the exporters read a snapshot that
 * borrows the controller's records (export/snapshot.h), which the loop
 * goes on changing. A child gets a consistent copy of them for the cost
 * of its page tables, where a thread would need a deep copy of every
 * record (~8 KB each) on the loop. The price is copy-on-write faults for
 * the pages the loop writes while a child lives (redis's BGSAVE makes
 * the same trade), and, after it, one fault for each page the loop
 * writes first, unless re-armed: export_writer_reap does that while the
 * loop is idle (user/base/prefault.h; ~1.7 µs per resized container
 * saved at N = 500, BENCHMARKS.md "The suspects, measured").
 *
 * One child at a time. The loop starts one (export_writer_start) and
 * goes on; the child's pidfd becomes readable when it exits, and the
 * loop collects its results (export_writer_reap). An export that falls
 * due meanwhile waits for the child and is coalesced into the next one,
 * which carries the state as it is then: nothing is lost, at most
 * delayed by one export. The child runs one real-time priority below
 * the loop (SCHED_OTHER when the loop is not real-time), logs nothing (the loop logs its results), and leaves with
 * _exit. It holds copies of the daemon's other fds for its short life
 * (the job closes those that others wait on: the daemon's export_child).
 */
#ifndef CPUSETD_EXPORT_WRITER_H
#define CPUSETD_EXPORT_WRITER_H

#ifdef __bpf__
#error "user-space header: BPF programs share only maps/cpusetd.h"
#endif

#include <stdbool.h>
#include <stdint.h>

/* What a child reports back (in a shared page). */
struct export_result {
	int prom;		/* export_textfile_write's; 0 when not run */
	int status;		/* status_write_files's; 0 when not run */
	uint64_t took_ns;	/* the child's time from fork to done (CLOCK_MONOTONIC) */
	uint64_t fork_ns;	/* the loop's time in fork(): what the export costs it */
	bool done;		/* the child got to the end (else it died) */
	/* the loop's pages re-armed after the child (export_writer_reap):
	 * prefault_writable's return, its pages and its time */
	int rearm;
	size_t rearm_pages;
	uint64_t rearm_ns;
};

/* The child's work: fill ret from ctx. Runs in the child only. */
typedef void (*export_job_fn)(void *ctx, struct export_result *ret);

struct export_writer;

/* A writer with no child. Returns 0 and *ret, -ENOMEM, -errno of mmap. */
int export_writer_new(struct export_writer **ret);

/*
 * Waits up to wait_ms for a running child, then kills it (SIGKILL; one in
 * uninterruptible sleep is left to exit when the kernel lets it, never
 * waited for), and frees w. Returns 0, or -ETIMEDOUT when a child had to
 * be killed. Accepts NULL (0).
 */
int export_writer_free(struct export_writer *w, unsigned wait_ms);

/*
 * The loop's poll fd (its epoll fd): readable when an event waits. Once a
 * child is reaped, the loop's pages it write-protected are made writable
 * again (prefault.h) until this fd is readable; -1 (the default): to the
 * end. Cannot fail.
 */
void export_writer_watch(struct export_writer *w, int fd);

/* Whether a child is running (its results not yet reaped). Cannot fail. */
bool export_writer_busy(const struct export_writer *w);

/* The running child's pidfd (readable when it exited), or -1. */
int export_writer_fd(const struct export_writer *w);

/*
 * Forks a child that runs fn(ctx, ...) and exits. Only when not busy.
 * Returns 0 (the caller adds export_writer_fd to its poll set); -EBUSY;
 * -errno of fork or pidfd_open (no child then: the caller may run fn
 * itself).
 */
int export_writer_start(struct export_writer *w, export_job_fn fn, void *ctx);

/*
 * Collects the child when it has exited: *ret its results (done false
 * when it was killed or crashed), then re-arms the loop's pages
 * (export_writer_watch; ret->rearm*). Returns 1 when reaped (the pidfd is
 * closed: no longer busy), 0 when it still runs (or none runs).
 * wait_ms: how long to wait for it (0 = not at all). Cannot fail.
 */
int export_writer_reap(struct export_writer *w, unsigned wait_ms, struct export_result *ret);

#endif
