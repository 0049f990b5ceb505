// SPDX-License-Identifier: Apache-2.0
/*
 * bench-resize, the -S kubelet scene (v1): pods and containers made as
 * kubelet and runc make them, the external poller, its rounds.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <json-c/json.h>
#include <sched.h>
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

/* --- -S kubelet --- */

/* A cgroup in the cpu hierarchy (v1), for cpu.cfs_quota_us. */
static void mkcg_cpu(const char *rel)
{
	char p[700];

	snprintf(p, sizeof(p), "%s%s", CPU_V1, rel);
	if (mkdir(p, 0755) < 0 && errno != EEXIST)
		die(p);
}

static void rmcg(const char *mnt, const char *rel)
{
	char p[700];

	snprintf(p, sizeof(p), "%s%s", mnt, rel);
	if (rmdir(p) < 0)
		die(p);
}

/* The shared containers' cpuset.cpus, open for the poller. */
static void open_shared(struct bench *b)
{
	char p[600], rel[512];

	b->fds = calloc((size_t)b->n, sizeof(*b->fds));
	b->left = calloc((size_t)b->n, sizeof(*b->left));
	b->old_at = calloc((size_t)b->n, sizeof(*b->old_at));
	if (!b->fds || !b->left || !b->old_at)
		die("calloc");
	for (int i = 0; i < b->n; i++) {
		shared_path(b, i, rel, sizeof(rel));
		snprintf(p, sizeof(p), "%s%s/cpuset.cpus", CPUSET, rel);
		b->fds[i] = open(p, O_RDONLY | O_CLOEXEC);
		if (b->fds[i] < 0)
			die(p);
	}
}

/*
 * The poller: re-reads every shared container's cpuset.cpus that does not
 * say want yet, without a pause, until all do. Returns the CLOCK_MONOTONIC
 * ns at which the last one was first seen with it; *ret_low gets a lower
 * bound of when the last one changed: the latest sweep, over all of them,
 * that still read the old value. The true time is between the two; they
 * are far apart only when the poller itself was off its CPU.
 */
static uint64_t poll_shared(const struct bench *b, const char *want, uint64_t *ret_low)
{
	uint64_t last = 0, low = 0, sweep, deadline = now_ns() + 10ULL * 1000000000ULL;
	size_t wl = strlen(want);
	int left = b->n;
	char buf[CPULIST_MAX];

	for (int i = 0; i < b->n; i++)
		b->left[i] = i;
	while (left > 0) {
		sweep = now_ns();
		for (int k = 0; k < left;) {
			int i = b->left[k];
			ssize_t r = pread(b->fds[i], buf, sizeof(buf), 0);

			if (r == (ssize_t)wl + 1 && memcmp(buf, want, wl) == 0) {
				last = now_ns();
				low = b->old_at[i] > low ? b->old_at[i] : low;
				b->left[k] = b->left[--left];
				continue;
			}
			b->old_at[i] = sweep;
			k++;
		}
		if (left && now_ns() > deadline) {
			fprintf(stderr, "bench-resize: %d shared containers never read '%s'\n", left,
				want);
			exit(1);
		}
	}
	*ret_low = low;
	return last;
}

/* What the daemon does to the containers it manages before its first write
 * (cgfs_skip_sched_rebuild): v1 rebuilds the scheduler domains after
 * every cpuset.cpus write to a load-balanced cpuset. Done here before the
 * first floor so that it times the same writes the daemon makes. */
static void no_rebuild(const struct bench *b)
{
	char p[600], rel[512];

	for (int i = 0; i < b->n; i++) {
		shared_path(b, i, rel, sizeof(rel));
		snprintf(p, sizeof(p), "%s%s/cpuset.sched_load_balance", CPUSET, rel);
		put(p, "0");
	}
}

/* Round r's integer pod: a fresh pod cgroup (rel) and container ID. */
static void kubelet_pod(const struct bench *b, int r, char *pod, size_t len, char *id)
{
	snprintf(id, 65, "%064x", 0xbe7c4 + r);
	snprintf(pod, len, "%s/pod%08x-0000-4000-8000-%012d", b->root, 0xbe7c4, r);
}

/*
 * One start and stop of an integer container as kubelet and runc make it;
 * ext[0] and ext[1] get the external start and stop times (ns), low[0]
 * and low[1] their lower bounds (poll_shared), at[0] and at[1] the
 * CLOCK_MONOTONIC ns of the mkdir and the rmdir.
 */
static void kubelet_round(const struct bench *b, int r, int64_t conv0, uint64_t *ext,
			  uint64_t *low, uint64_t *at)
{
	char pod[512], ct[600], id[65], quota[700], p[700];
	uint64_t t0, l;

	kubelet_pod(b, r, pod, sizeof(pod), id);
	snprintf(ct, sizeof(ct), "%s/%s", pod, id);
	write_bundle(b, id);			/* containerd: the bundle first */
	mkcg_inner(pod);			/* kubelet: the pod, cpus/mems copied */
	mkcg_cpu(pod);				/* runc: cpu before cpuset */
	mkcg_cpu(ct);
	snprintf(quota, sizeof(quota), "%s%s/cpu.cfs_quota_us", CPU_V1, ct);
	put(quota, "100000");
	snprintf(p, sizeof(p), "%s%s", CPUSET, ct);
	at[0] = t0 = now_ns();
	if (mkdir(p, 0755) < 0)
		die(p);
	ext[0] = poll_shared(b, b->pool_less, &l) - t0;
	low[0] = l > t0 ? l - t0 : 0;
	json_object_put(wait_status(b, conv0 + 2 * r + 1, b->n + 1));
	wait_idle(b);
	at[1] = t0 = now_ns();
	if (rmdir(p) < 0)
		die(p);
	ext[1] = poll_shared(b, b->pool_all, &l) - t0;
	low[1] = l > t0 ? l - t0 : 0;
	json_object_put(wait_status(b, conv0 + 2 * r + 2, b->n));
	/* kubelet removes the pod cgroup later: not part of this step */
	rmcg(CPU_V1, ct);
	rmcg(CPU_V1, pod);
	rmcg(CPUSET, pod);
	wait_idle(b);
}

/*
 * -S kubelet (v1): the shared containers run before the daemon starts;
 * the floors come first (nothing running but them) and last; in
 * between, -L's load and the daemon. The cold floors come at the very
 * end, quiet, each round after the daemon's median idle gap.
 */
/* The cold floor under -L's load, at the daemon's default scheduling
 * (SCHED_FIFO 10, systemd/cpusetd.conf): a SCHED_OTHER loop of 500 writes
 * outlasts its slice beside stress-ng and measured the CPU share (twice
 * the quiet floor), not the kernel's work the daemon meets. */
static void floor_after_cold_fifo(const struct bench *b, uint64_t *out, int rounds,
				  uint64_t idle_us)
{
	struct sched_param fifo = { .sched_priority = 10 }, was = { 0 };
	int policy = sched_getscheduler(0);
	bool set = policy >= 0 && sched_getparam(0, &was) == 0 &&
		   sched_setscheduler(0, SCHED_FIFO, &fifo) == 0;

	floor_run(b, out, rounds, idle_us);
	if (set)
		sched_setscheduler(0, policy, &was);
}

void scene_kubelet(struct bench *b)
{
	size_t n = 2 * (size_t)b->rounds;
	struct kubelet_figures f = {
		.conv = calloc(n, sizeof(uint64_t)), .ext = calloc(n, sizeof(uint64_t)),
		.low = calloc(n, sizeof(uint64_t)),
		.flo_quiet = calloc(n, sizeof(uint64_t)), .flo_fd_quiet = calloc(n, sizeof(uint64_t)),
		.flo_after = calloc(n, sizeof(uint64_t)), .flo_cold = calloc(n, sizeof(uint64_t)),
		.flo_fd_cold = calloc(n, sizeof(uint64_t)), .at = calloc(n, sizeof(uint64_t)),
		.flo_after_cold = calloc(n, sizeof(uint64_t)),
	};
	int64_t conv0, writes0, resizes0;
	char rel[512];
	json_object *s;

	snprintf(rel, sizeof(rel), "%.*s", (int)(strrchr(b->root, '/') - b->root), b->root);
	mkcg_cpu(rel);
	mkcg_cpu(b->root);
	for (int i = 0; i < b->n; i++) {
		shared_path(b, i, rel, sizeof(rel));
		mkcg(rel);
		spawn_shared(b, i, rel);
	}
	no_rebuild(b);
	floor_run(b, f.flo_quiet, (int)n, 0);
	floor_fd_run(b, f.flo_fd_quiet, (int)n, 0);
	if (b->load)
		start_stress(b);
	start_daemon(b);
	s = wait_status(b, 0, b->n);
	conv0 = jget(s, "convergence", "count");
	writes0 = jget(s, "counters", "cgroup_writes");
	resizes0 = jget(s, "counters", "resizes");
	json_object_put(s);
	open_shared(b);
	for (int r = 0; r < b->rounds; r++)
		kubelet_round(b, r, conv0, &f.ext[2 * r], &f.low[2 * r], &f.at[2 * r]);
	s = wait_status(b, conv0 + (int64_t)n, b->n);
	if (jget(s, "convergence", "count") != conv0 + (int64_t)n)
		fprintf(stderr, "bench-resize: %lld convergence samples for %zu resizes\n",
			(long long)(jget(s, "convergence", "count") - conv0), n);
	f.writes_per_resize = (double)(jget(s, "counters", "cgroup_writes") - writes0) /
			      (double)(jget(s, "counters", "resizes") - resizes0);
	read_samples(s, f.conv, n);
	f.gap_us = idle_gap_us(f.at, f.conv, n);
	if (!read_phases(s, f.ph, n))
		memset(f.ph, 0, sizeof(f.ph));
	json_object_put(s);
	f.rss = rss_kib(b->daemon);
	if (b->burst)
		run_burst(b);
	kill(b->daemon, SIGTERM);
	waitpid(b->daemon, NULL, 0);
	b->daemon = 0;
	floor_run(b, f.flo_after, (int)n, 0);
	floor_after_cold_fifo(b, f.flo_after_cold, (int)n, f.gap_us);
	stop_stress(b);
	/* quiet again, each round after the daemon's idle gap (the cold floor) */
	floor_run(b, f.flo_cold, (int)n, f.gap_us);
	floor_fd_run(b, f.flo_fd_cold, (int)n, f.gap_us);
	report_kubelet(b, &f);
	free(f.conv);
	free(f.ext);
	free(f.low);
	free(f.flo_quiet);
	free(f.flo_fd_quiet);
	free(f.flo_after);
	free(f.flo_cold);
	free(f.flo_fd_cold);
	free(f.flo_after_cold);
	free(f.at);
	free_phases(f.ph);
}
