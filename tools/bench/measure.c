// SPDX-License-Identifier: Apache-2.0
/*
 * bench-resize, the plain scene's measurement: the floors
 * (open+write+close and through open fds), the rounds, the export burst.
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

/*
 * Before a timed floor round: idle_us of sleep (0: none, back to back).
 * Why: on this VM the same write costs 2-3x more when the kernel's cpuset
 * data (the cpusets, css_sets, tasks, run queues a write walks) was last
 * touched 10-20 ms before than when the previous round touched it an
 * instant before (BENCHMARKS.md "Resize at the cost of its writes"); the
 * daemon's writes always come after such a gap, so a floor that is to do
 * the same kernel work in the same state must too.
 */
static void idle_before(uint64_t idle_us)
{
	if (idle_us)
		usleep((useconds_t)idle_us);
}

/* The floor: N cpuset.cpus writes, alternating values so each is real;
 * each round after idle_us (idle_before). */
void floor_run(const struct bench *b, uint64_t *out, int rounds, uint64_t idle_us)
{
	char p[600], rel[512];

	for (int r = 0; r < rounds; r++) {
		const char *v = r % 2 ? b->pool_all : b->pool_less;
		uint64_t t0;

		idle_before(idle_us);
		t0 = now_ns();

		for (int i = 0; i < b->n; i++) {
			int fd;

			shared_path(b, i, rel, sizeof(rel));
			snprintf(p, sizeof(p), "%s%s/cpuset.cpus", CPUSET, rel);
			fd = open(p, O_WRONLY | O_CLOEXEC);
			if (fd < 0 || write(fd, v, strlen(v)) < 0)
				die(p);
			close(fd);
		}
		out[r] = now_ns() - t0;
	}
}

/* The floor with the files already open: one write(2) per container,
 * which is what the daemon does after a container's first write; each
 * round after idle_us (idle_before). */
void floor_fd_run(const struct bench *b, uint64_t *out, int rounds, uint64_t idle_us)
{
	int *fds = calloc((size_t)b->n, sizeof(*fds));
	char p[600], rel[512];

	for (int i = 0; i < b->n; i++) {
		shared_path(b, i, rel, sizeof(rel));
		snprintf(p, sizeof(p), "%s%s/cpuset.cpus", CPUSET, rel);
		fds[i] = open(p, O_WRONLY | O_CLOEXEC);
		if (fds[i] < 0)
			die(p);
	}
	for (int r = 0; r < rounds; r++) {
		const char *v = r % 2 ? b->pool_all : b->pool_less;
		uint64_t t0;

		idle_before(idle_us);
		t0 = now_ns();
		for (int i = 0; i < b->n; i++)
			if (write(fds[i], v, strlen(v)) < 0)
				die("write");
		out[r] = now_ns() - t0;
	}
	for (int i = 0; i < b->n; i++)
		close(fds[i]);
	free(fds);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * The daemon's idle time before its resizes, in µs: the median over
 * events k >= 1 of (event k's mkdir/rmdir - event k-1's - the daemon's
 * convergence time of event k-1), i.e. from the end of its last resize
 * to the next event. at: the n events' CLOCK_MONOTONIC ns; conv: the
 * daemon's convergence ns of each, in the same order. 0 when n < 2.
 */
uint64_t idle_gap_us(const uint64_t *at, const uint64_t *conv, size_t n)
{
	uint64_t *g = calloc(n ? n : 1, sizeof(*g)), med;
	size_t m = 0;

	if (!g)
		die("calloc");
	for (size_t k = 1; k < n; k++) {
		uint64_t d = at[k] > at[k - 1] ? at[k] - at[k - 1] : 0;

		g[m++] = d > conv[k - 1] ? d - conv[k - 1] : 0;
	}
	qsort(g, m, sizeof(*g), cmp_u64);
	med = m ? g[(m - 1) / 2] : 0;
	free(g);
	return med / 1000;
}

/* Counts the files renamed into a watched directory, by name. */
struct renames {
	int status, prom, topology, other;
};

static void count_renames(int fd, struct renames *n)
{
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
	ssize_t len;

	while ((len = read(fd, buf, sizeof(buf))) > 0) {
		for (char *p = buf; p < buf + len;) {
			const struct inotify_event *e = (const struct inotify_event *)p;
			const char *name = e->len ? e->name : "";

			if (strcmp(name, "status.json") == 0)
				n->status++;
			else if (strcmp(name, "cpusetd.prom") == 0)
				n->prom++;
			else if (strcmp(name, "topology.json") == 0)
				n->topology++;
			else
				n->other++;
			p += sizeof(*e) + e->len;
		}
	}
}

/*
 * -b: b->burst shared containers (a pod and its container each) made back
 * to back, b->gap_us apart, while the daemon runs; then, once it has placed
 * them all and is idle, how many export files it wrote meanwhile.
 */
void run_burst(const struct bench *b)
{
	char dir[256], rel[512];
	struct renames n = { 0 };
	uint64_t t0, t1;
	int fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);

	snprintf(dir, sizeof(dir), "%s/state", b->work);
	if (fd < 0 || inotify_add_watch(fd, dir, IN_MOVED_TO) < 0 ||
	    inotify_add_watch(fd, b->work, IN_MOVED_TO) < 0)
		die("inotify");
	t0 = now_ns();
	for (int i = b->n; i < b->n + b->burst; i++) {
		shared_path(b, i, rel, sizeof(rel));
		*strrchr(rel, '/') = '\0';
		mkcg_inner(rel);
		shared_path(b, i, rel, sizeof(rel));
		mkcg(rel);
		if (b->gap_us)
			usleep((useconds_t)b->gap_us);
	}
	t1 = now_ns();
	json_object_put(wait_status(b, 0, b->n + b->burst));
	usleep(50000);		/* past the daemon's settling of exports */
	wait_idle(b);
	count_renames(fd, &n);
	close(fd);
	printf("  burst: %d shared containers (%d cgroup mkdirs) in %.1f ms, %d us apart: the "
	       "exports wrote status.json %d, cpusetd.prom %d, topology.json %d times\n",
	       b->burst, 2 * b->burst, (t1 - t0) / 1e6, b->gap_us, n.status, n.prom, n.topology);
}

void run(struct bench *b)
{
	size_t n = 2 * (size_t)b->rounds;
	uint64_t *conv = calloc(n, sizeof(*conv)), *flo = calloc(n, sizeof(*flo));
	uint64_t *flo_fd = calloc(n, sizeof(*flo_fd)), *at = calloc(n, sizeof(*at));
	uint64_t *cold = calloc(n, sizeof(*cold)), *cold_fd = calloc(n, sizeof(*cold_fd)), gap;
	char rel[512], pod[512], p[600], id[65];
	int64_t conv0, writes0, resizes0, writes1, resizes1;
	uint64_t *ph[N_PHASES] = { 0 };
	bool have_ph;
	json_object *s;
	long rss;

	if (b->load)
		start_stress(b);
	start_daemon(b);
	for (int i = 0; i < b->n; i++) {
		shared_path(b, i, rel, sizeof(rel));
		mkcg(rel);
		spawn_shared(b, i, rel);
	}
	s = wait_status(b, 0, b->n);
	conv0 = jget(s, "convergence", "count");
	writes0 = jget(s, "counters", "cgroup_writes");
	resizes0 = jget(s, "counters", "resizes");
	json_object_put(s);

	snprintf(id, sizeof(id), "%064x", 0xbe7c4);
	write_bundle(b, id);
	snprintf(pod, sizeof(pod), "%s/pod%08x-0000-4000-8000-000000000000", b->root, 0xbe7c4);
	mkcg_inner(pod);
	snprintf(p, sizeof(p), "%s%s/%s", CPUSET, pod, id);
	for (int r = 0; r < b->rounds; r++) {
		at[2 * r] = now_ns();
		if (mkdir(p, 0755) < 0)
			die(p);
		json_object_put(wait_status(b, conv0 + 2 * r + 1, b->n + 1));
		wait_idle(b);
		at[2 * r + 1] = now_ns();
		if (rmdir(p) < 0)
			die(p);
		json_object_put(wait_status(b, conv0 + 2 * r + 2, b->n));
		wait_idle(b);
	}
	s = wait_status(b, conv0 + (int64_t)n, b->n);
	writes1 = jget(s, "counters", "cgroup_writes");
	resizes1 = jget(s, "counters", "resizes");
	read_samples(s, conv, n);
	have_ph = read_phases(s, ph, n);
	json_object_put(s);
	rss = rss_kib(b->daemon);
	if (b->burst)
		run_burst(b);
	kill(b->daemon, SIGTERM);
	waitpid(b->daemon, NULL, 0);
	b->daemon = 0;

	gap = idle_gap_us(at, conv, n);		/* before report() sorts conv */
	floor_run(b, flo, (int)n, 0);
	floor_fd_run(b, flo_fd, (int)n, 0);
	floor_run(b, cold, (int)n, gap);
	floor_fd_run(b, cold_fd, (int)n, gap);
	stop_stress(b);
	report(b, conv, flo, flo_fd, n, (double)(writes1 - writes0) /
	       (double)(resizes1 > resizes0 ? resizes1 - resizes0 : 1), rss);
	report_cold(b, cold, cold_fd, n, gap);
	if (have_ph) {
		report_phases("all", ph, n, 0, 1);
		free_phases(ph);
	}
	free(conv);
	free(flo);
	free(flo_fd);
	free(at);
	free(cold);
	free(cold_fd);
}
