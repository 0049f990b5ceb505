/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The benchmarks' stand-in for a container's process: shared by
 * bench-resize (scene.c) and bench-floor-idle, which both put sleeping
 * processes in containers because a cpuset.cpus write moves each task.
 */
#ifndef CPUSETD_BENCH_SPAWN_H
#define CPUSETD_BENCH_SPAWN_H

#include <sys/types.h>

/*
 * Forks a child that sleeps in pause() until killed, and moves it into a
 * cgroup by writing its pid to procs (the full path of a cgroup.procs
 * file, v1 or v2).
 *
 * Returns the child's pid (> 0); the caller kills and reaps it. On
 * failure returns a negative errno: -errno of fork(), or of the open or
 * write of procs (then the child is already killed and reaped).
 */
pid_t spawn_paused(const char *procs);

#endif
