// SPDX-License-Identifier: Apache-2.0
/*
 * bench-floor-idle: what makes the same cpuset.cpus write dearer, without
 * the daemon (BENCHMARKS.md "Where a write's time goes").
 *
 * Builds a private v1 tree as kubelet does (root/kubepods/burstable/
 * pod<i>/<id>, cpus and mems copied down, sched_load_balance 0 on the
 * containers as cpusetd sets it), T sleeping processes in each of the N
 * containers, each container's cpuset.cpus held open. Then times rounds
 * of N writes (all online CPUs, then without the lowest: a real grow and
 * shrink each round) under one difference at a time from the tight loop:
 * the order, user-space work per write, caches swept before the round, an
 * integer container made or removed just before, and an idle or busy gap
 * before the round. Prints each variant's median µs per write, REPS times
 * round-robin so that drift shows.
 *
 *   bench-floor-idle [-n N] [-T TASKS] [-r ROUNDS] [-R REPS]
 * Needs root and the v1 cpuset hierarchy; cleans up after itself.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "spawn.h"

#define CPUSET "/sys/fs/cgroup/cpuset"
#define RECORD 5120		/* bytes touched per write: about a struct container */
#define SWEEP (16u << 20)	/* bytes swept before a round: 4x this VM's L2 */

enum before { NONE, SHUFFLED, TOUCH, INTEGER, SWEPT, IDLE, SPIN };

struct variant {
	const char *name;
	enum before what;
	unsigned us;		/* IDLE, SPIN: the gap */
};

static const struct variant variants[] = {
	{ "back to back, creation order", NONE, 0 },
	{ "back to back, shuffled order", SHUFFLED, 0 },
	{ "a 5 KB record touched per write", TOUCH, 0 },
	{ "after an integer ctr mkdir/rmdir", INTEGER, 0 },
	{ "after 16 MB swept", SWEPT, 0 },
	{ "after 0.5 ms idle", IDLE, 500 },
	{ "after 2 ms idle", IDLE, 2000 },
	{ "after 5 ms idle", IDLE, 5000 },
	{ "after 10 ms idle", IDLE, 10000 },
	{ "after 20 ms idle", IDLE, 20000 },
	{ "after 50 ms idle", IDLE, 50000 },
	{ "after 20 ms spinning in user space", SPIN, 20000 },
};

static struct {
	int n, tasks;
	char root[128], integer[600];
	int *fds, *order;
	pid_t *kids;
	char *mem;		/* n records, then the sweep */
} s;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static void die(const char *what)
{
	fprintf(stderr, "bench-floor-idle: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void put(const char *path, const char *val)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);

	if (fd < 0 || write(fd, val, strlen(val)) < 0)
		die(path);
	close(fd);
}

/* A cgroup below the mount with the given cpus and mems 0. */
static void mkcg(const char *rel, const char *cpus)
{
	char p[512], f[600];

	snprintf(p, sizeof(p), CPUSET "%s", rel);
	if (mkdir(p, 0755) < 0 && errno != EEXIST)
		die(p);
	snprintf(f, sizeof(f), "%s/cpuset.cpus", p);
	put(f, cpus);
	snprintf(f, sizeof(f), "%s/cpuset.mems", p);
	put(f, "0");
}

/* At exit, also after die(): the processes and the tree go. */
static void cleanup(void)
{
	char cmd[400];

	for (int i = 0; s.kids && i < s.n * s.tasks; i++)
		if (s.kids[i] > 0)
			kill(s.kids[i], SIGKILL);
	while (wait(NULL) > 0 || errno == EINTR)
		;
	if (!s.root[0])
		return;
	snprintf(cmd, sizeof(cmd), "find " CPUSET "%s -depth -type d -exec rmdir {} + 2>/dev/null",
		 s.root);
	if (system(cmd) != 0)
		fprintf(stderr, "bench-floor-idle: cleanup of %s incomplete\n", s.root);
}

static void setup(const char *all)
{
	char rel[512], p[700];

	snprintf(s.root, sizeof(s.root), "/cpusetd-floor-%d", getpid());
	mkcg(s.root, all);
	snprintf(rel, sizeof(rel), "%s/kubepods", s.root);
	mkcg(rel, all);
	snprintf(rel, sizeof(rel), "%s/kubepods/burstable", s.root);
	mkcg(rel, all);
	snprintf(rel, sizeof(rel), "%s/kubepods/podint", s.root);
	mkcg(rel, all);
	snprintf(s.integer, sizeof(s.integer), CPUSET "%s/c", rel);
	s.fds = calloc((size_t)s.n, sizeof(*s.fds));
	s.order = calloc((size_t)s.n, sizeof(*s.order));
	s.kids = calloc((size_t)s.n * (size_t)(s.tasks ? s.tasks : 1), sizeof(*s.kids));
	s.mem = calloc(1, (size_t)s.n * RECORD + SWEEP);
	if (!s.fds || !s.order || !s.kids || !s.mem)
		die("calloc");
	for (int i = 0; i < s.n; i++) {
		snprintf(rel, sizeof(rel), "%s/kubepods/burstable/pod%d", s.root, i);
		mkcg(rel, all);
		snprintf(rel, sizeof(rel), "%s/kubepods/burstable/pod%d/%064x", s.root, i, i + 1);
		mkcg(rel, all);
		snprintf(p, sizeof(p), CPUSET "%s/cpuset.sched_load_balance", rel);
		put(p, "0");
		snprintf(p, sizeof(p), CPUSET "%s/cgroup.procs", rel);
		for (int k = 0; k < s.tasks; k++) {
			pid_t kid = spawn_paused(p);

			if (kid < 0) {
				errno = (int)-kid;
				die(p);
			}
			s.kids[i * s.tasks + k] = kid;
		}
		snprintf(p, sizeof(p), CPUSET "%s/cpuset.cpus", rel);
		s.fds[i] = open(p, O_WRONLY | O_CLOEXEC);
		if (s.fds[i] < 0)
			die(p);
		s.order[i] = i;
	}
	srand(1);
	for (int i = s.n - 1; i > 0; i--) {
		int j = rand() % (i + 1), t = s.order[i];

		s.order[i] = s.order[j];
		s.order[j] = t;
	}
}

/* What variant v does before round r's timed writes. */
static void before_round(const struct variant *v, int r)
{
	uint64_t end;

	switch (v->what) {
	case INTEGER:	/* made on even rounds, removed on odd ones */
		if (r % 2 == 0 ? mkdir(s.integer, 0755) : rmdir(s.integer))
			die(s.integer);
		break;
	case SWEPT:
		memset(s.mem + (size_t)s.n * RECORD, r, SWEEP);
		break;
	case IDLE:
		usleep(v->us);
		break;
	case SPIN:
		end = now_ns() + v->us * 1000ULL;
		while (now_ns() < end)
			;
		break;
	default:
		break;
	}
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Median ns per write of rounds rounds of variant v. */
static double run(const struct variant *v, int rounds, const char *all, const char *less)
{
	uint64_t *t = calloc((size_t)rounds, sizeof(*t));
	double med;

	if (!t)
		die("calloc");
	for (int r = 0; r < rounds; r++) {
		const char *val = r % 2 ? all : less;
		size_t len = strlen(val);
		uint64_t t0;

		before_round(v, r);
		t0 = now_ns();
		for (int k = 0; k < s.n; k++) {
			int i = v->what == SHUFFLED ? s.order[k] : k;

			if (v->what == TOUCH)
				for (size_t b = 0; b < RECORD; b += 64)
					s.mem[(size_t)i * RECORD + b]++;
			if (write(s.fds[i], val, len) < 0)
				die("write");
		}
		t[r] = now_ns() - t0;
	}
	if (v->what == INTEGER && rounds % 2 && rmdir(s.integer) < 0)
		die(s.integer);
	qsort(t, (size_t)rounds, sizeof(*t), cmp_u64);
	med = (double)t[rounds / 2] / s.n;
	free(t);
	return med;
}

int main(int argc, char **argv)
{
	int rounds = 12, reps = 3, c;
	char all[64], less[64];
	FILE *f;

	s.n = 500;
	s.tasks = 1;
	while ((c = getopt(argc, argv, "n:T:r:R:h")) != -1) {
		switch (c) {
		case 'n': s.n = atoi(optarg); break;
		case 'T': s.tasks = atoi(optarg); break;
		case 'r': rounds = atoi(optarg); break;
		case 'R': reps = atoi(optarg); break;
		default:
			fprintf(stderr, "usage: bench-floor-idle [-n N] [-T TASKS] [-r ROUNDS] "
					"[-R REPS]\n");
			return c == 'h' ? 0 : 2;
		}
	}
	if (s.n < 1 || s.tasks < 0 || rounds < 2 || reps < 1) {
		fprintf(stderr, "bench-floor-idle: -n >= 1, -T >= 0, -r >= 2, -R >= 1\n");
		return 2;
	}
	/* the two values: CPUs 0-1 style "lo-hi" of the online CPUs, and
	 * without the lowest (2 CPUs here: "0-1" and "1") */
	f = fopen("/sys/devices/system/cpu/online", "re");
	if (!f || !fgets(all, sizeof(all), f))
		die("/sys/devices/system/cpu/online");
	fclose(f);
	all[strcspn(all, "\n")] = '\0';
	{
		unsigned lo, hi;

		if (sscanf(all, "%u-%u", &lo, &hi) != 2 || hi <= lo || strchr(all, ',')) {
			fprintf(stderr, "bench-floor-idle: needs one range of online CPUs, have %s\n",
				all);
			return 1;
		}
		snprintf(less, sizeof(less), lo + 1 == hi ? "%u" : "%u-%u", lo + 1, hi);
	}
	atexit(cleanup);
	setup(all);
	for (int rep = 0; rep < reps; rep++)
		for (size_t v = 0; v < sizeof(variants) / sizeof(*variants); v++)
			printf("N=%d T=%d %-36s %.2f us a write\n", s.n, s.tasks, variants[v].name,
			       run(&variants[v], rounds, all, less) / 1e3);
	return 0;
}
