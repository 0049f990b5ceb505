// SPDX-License-Identifier: Apache-2.0
/*
 * bench-resize: how fast the shared pool follows an integer pod.
 *
 * Starts the real daemon on a private kubepods root, N shared containers
 * (real cgroups, each with a live process), then starts and stops an
 * integer container R times. For every start and stop the daemon records
 * the time from the BPF cgroup event to convergence (no shared container
 * overlapping a reserved CPU; status.json "convergence"). In the same run
 * it measures the floor: writing those N cpuset.cpus files in a tight loop
 * the way the daemon does (open, one write, close), and the daemon's RSS.
 * The cold floor is the same loop with each round after the daemon's
 * median idle gap between events: the daemon's writes always meet kernel
 * data that has not been touched for that long, and on this VM that
 * costs 2-3x a write made an instant after the previous round (BENCHMARKS.md
 * "Resize at the cost of its writes"). -T sets the processes per shared
 * container (the kernel moves each one on every write). A daemon leaves a
 * container without tasks alone, so -T 0 times the floors only.
 *
 * -S kubelet builds the scene the way kubelet and runc do on cgroup v1
 * (scene_kubelet()): the N shared containers are running (a process in
 * each) before the daemon starts; every start is a fresh pod cgroup with
 * cpus/mems copied from its parent, whose container gets its bundle and
 * cpu.cfs_quota_us before its cpuset mkdir; and this process busy-polls
 * every shared container's cpuset.cpus meanwhile, which gives the
 * external figure: from the mkdir (rmdir) syscall to the moment the last
 * shared container's cpuset.cpus reads the new pool. Starts and stops are
 * reported apart, the daemon's own figure beside the external one, with
 * the floor measured before the daemon starts (quiet) and after it stops.
 * -L runs `stress-ng --cpu 0` (a busy worker on every CPU) from before the
 * daemon starts until the last floor is measured. -o KEY=VALUE adds a line
 * to the daemon's config file (repeatable), e.g. -o sched_policy=other.
 * -b K (with -g GAP_US between containers) ends the run with a burst: K
 * more shared containers made back to back, and how many files the
 * daemon's exports wrote for it (renames into the state and work
 * directories, seen with inotify) until it is idle again.
 *
 *   bench-resize [-n N] [-r ROUNDS] [-T TASKS] [-d BUILD_DIR] [-s hierarchical|per-container]
 *                [-S plain|kubelet] [-L] [-o KEY=VALUE]... [-v] [-b K [-g GAP_US]]
 * Needs root and the v1 cpuset hierarchy, or pure v2 with cpuset enabled
 * (the VM lane; plain scene only); -s is the daemon's --v2-writes there
 * (v1 ignores it: it always writes every container).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <json-c/json.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "user/base/cpumask.h"
#include "resize.h"

int main(int argc, char **argv)
{
	struct bench b = { .n = 100, .rounds = 50, .tasks = 1, .build = "build",
			   .strategy = "hierarchical" };
	const char *scene = "plain";
	int c;

	while ((c = getopt(argc, argv, "n:r:T:d:s:S:Lo:vb:g:h")) != -1) {
		switch (c) {
		case 'n': b.n = atoi(optarg); break;
		case 'r': b.rounds = atoi(optarg); break;
		case 'T': b.tasks = atoi(optarg); break;
		case 'd': b.build = optarg; break;
		case 's': b.strategy = optarg; break;
		case 'S': scene = optarg; break;
		case 'L': b.load = true; break;
		case 'v': b.verbose = true; break;
		case 'b': b.burst = atoi(optarg); break;
		case 'g': b.gap_us = atoi(optarg); break;
		case 'o':
			if (b.n_opts == MAX_OPTS) {
				fprintf(stderr, "bench-resize: -o: at most %d\n", MAX_OPTS);
				return 2;
			}
			b.opts[b.n_opts++] = optarg;
			break;
		default:
			fprintf(stderr, "usage: bench-resize [-n SHARED_CONTAINERS] [-r ROUNDS] [-T TASKS]\n"
					"                    [-d BUILD_DIR]\n"
					"                    [-s hierarchical|per-container] [-S plain|kubelet] [-L]\n"
					"                    [-o KEY=VALUE]... [-v] [-b K [-g GAP_US]]\n"
					"  -S kubelet  the scene as kubelet and runc build it, with the external\n"
					"              figure (cgroup v1)\n"
					"  -L          stress-ng --cpu 0 (every CPU busy) during the run\n"
					"  -T TASKS    live processes per shared container (default 1)\n"
					"  -o K=V      a line of the daemon's config file (repeatable)\n"
					"  -v          kubelet scene: print every sample too\n"
					"  -b K        end with a burst of K shared containers, and count\n"
					"              the files the daemon's exports wrote for it\n"
					"  -g GAP_US   microseconds between the burst's containers\n"
					"  e.g. sudo build/bench-resize -n 100 -r 50\n"
					"       sudo build/bench-resize -n 100 -r 100 -S kubelet -L\n"
					"       sudo build/bench-resize -n 500 -s per-container   # v2\n");
			return c == 'h' ? 0 : 2;
		}
	}
	if (strcmp(scene, "plain") && strcmp(scene, "kubelet")) {
		fprintf(stderr, "bench-resize: -S: expected plain|kubelet, got '%s'\n", scene);
		return 2;
	}
	b.kubelet = scene[0] == 'k';
	if (strcmp(b.strategy, "hierarchical") && strcmp(b.strategy, "per-container")) {
		fprintf(stderr, "bench-resize: -s: expected hierarchical|per-container, got '%s'\n",
			b.strategy);
		return 2;
	}
	if (access(CPUSET_V1, F_OK) < 0) {
		CPUSET = CPUSET_V2;
		on_v2 = true;
	}
	if (b.n < 1 || b.rounds < 1 || b.burst < 0 || b.gap_us < 0 || b.tasks < 0) {
		fprintf(stderr, "bench-resize: -n and -r must be positive integers, -b, -g and -T "
				"not negative\n");
		return 2;
	}
	if (b.kubelet && (on_v2 || access(CPU_V1 "/cpu.cfs_quota_us", F_OK) < 0)) {
		fprintf(stderr, "bench-resize: -S kubelet needs cgroup v1 cpuset and cpu hierarchies "
				"(%s, %s)\n", CPUSET_V1, CPU_V1);
		return 2;
	}
	to_clean = &b;
	atexit(teardown);
	setup(&b);
	if (b.kubelet)
		scene_kubelet(&b);
	else
		run(&b);
	return 0;
}
