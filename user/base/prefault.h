/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Re-arming the pages a fork write-protected, while the caller is idle.
 *
 * fork(2) marks every private writable page of the parent read-only, in
 * the parent too, so that the first write to each after the fork takes a
 * page fault, also once the child has exited (the fault then only makes
 * the page writable again: it is no longer shared). The daemon forks its
 * export writer after each burst of events, so the next resize paid one
 * fault for every page it wrote: ~2 µs per container record on this
 * development VM, as much as the cpuset write itself (BENCHMARKS.md
 * "The suspects, measured").
 *
 * prefault_writable takes those faults ahead of time, inside the kernel
 * (MADV_POPULATE_WRITE, Linux 5.14; madvise(2)), which costs a fraction of
 * a fault from user space, and only for pages that are resident
 * (mincore(2)): a page never touched is not allocated by it. It works in
 * slices and stops as soon as stop_fd is readable, so an event that comes
 * meanwhile waits one slice at most; pages left over fault as before.
 */
#ifndef CPUSETD_PREFAULT_H
#define CPUSETD_PREFAULT_H

#ifdef __bpf__
#error "user-space header: BPF programs share only maps/cpusetd.h"
#endif

#include <stddef.h>

/*
 * For every private writable anonymous mapping of the caller
 * (/proc/self/maps "rw-p" without a file name, and the heap; not the
 * main thread's [stack]), makes its resident pages writable in slices of
 * PREFAULT_SLICE_PAGES, polling stop_fd (-1: never stop) between slices. Call it only when no child forked from the caller
 * still lives (a page shared with a live child would be copied).
 * *ret_pages (may be NULL): pages handed to the kernel. Returns 0 (done),
 * 1 (stopped: stop_fd was readable), -ENOSYS/-EINVAL (the kernel has no
 * MADV_POPULATE_WRITE), -errno of /proc/self/maps. Other threads may map
 * and unmap meanwhile: a range that went away is skipped.
 */
int prefault_writable(int stop_fd, size_t *ret_pages);

#define PREFAULT_SLICE_PAGES 64	/* 256 KiB: ~20-40 µs of kernel work here */

#endif
