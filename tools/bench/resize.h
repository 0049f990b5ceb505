/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bench-resize's parts (tools/bench/resize.c says what it measures): one
 * file per job, sharing the run's settings (struct bench) and these calls.
 * Each function's comment is at its definition.
 */
#ifndef CPUSETD_BENCH_RESIZE_H
#define CPUSETD_BENCH_RESIZE_H

#ifdef __bpf__
#error "user-space header"
#endif

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define CPUSET_V1 "/sys/fs/cgroup/cpuset"
#define CPUSET_V2 "/sys/fs/cgroup"
#define CPU_V1 "/sys/fs/cgroup/cpu"	/* the kubelet scene's cpu.cfs_quota_us */
#define MAX_OPTS 16
#define N_PHASES 4	/* wakeup, plan, writes, finish: report.c */

/* The hierarchy holding cpuset (v1's mount or the v2 root) and which. */
extern const char *CPUSET;
extern bool on_v2;

struct bench {
	int n, rounds;
	int tasks;		/* -T: live processes per shared container (default 1) */
	const char *build;
	const char *strategy;	/* --v2-writes */
	bool kubelet;		/* -S kubelet */
	bool load;		/* -L: stress-ng on every CPU */
	bool verbose;		/* -v: every sample of the kubelet scene */
	int burst, gap_us;	/* -b, -g: a burst of shared containers at the end */
	const char *opts[MAX_OPTS];	/* -o: daemon config lines */
	int n_opts;
	char root[128];		/* relative cgroup path of the kubepods root */
	char work[128];		/* temp dir: bundles, state */
	char pin[128];		/* private BPF pin dir */
	pid_t daemon;
	pid_t stress;		/* stress-ng, leader of its own process group */
	pid_t *kids;
	int *fds;		/* kubelet scene: each shared container's cpuset.cpus, read-only */
	int *left;		/* kubelet scene: the poller's containers still to change */
	uint64_t *old_at;	/* kubelet scene: start of the last sweep that read the old value */
	char pool_all[CPULIST_MAX], pool_less[CPULIST_MAX];
};

struct kubelet_figures {
	uint64_t *conv, *ext, *low;	/* 2*rounds each: start, stop, start, ... */
	uint64_t *flo_quiet, *flo_fd_quiet, *flo_after;
	uint64_t *flo_cold, *flo_fd_cold;	/* quiet, each round after the daemon's idle gap */
	uint64_t *flo_after_cold;	/* as flo_after (-L: loaded), after the idle gap */
	uint64_t *at;			/* 2*rounds: each mkdir/rmdir, CLOCK_MONOTONIC ns */
	uint64_t gap_us;		/* idle_gap_us() of the run */
	uint64_t *ph[N_PHASES];		/* the daemon's phases; NULL: not reported */
	double writes_per_resize;
	long rss;
};

/* What teardown() cleans at exit (main sets it). */
extern struct bench *to_clean;

/* scene.c */
uint64_t now_ns(void);
void die(const char *what);
void put(const char *path, const char *val);
void get(const char *path, char *buf, size_t len);
void get_opt(const char *path, char *buf, size_t len);
void mkcg(const char *rel);
void mkcg_inner(const char *rel);
void shared_path(const struct bench *b, int i, char *buf, size_t len);
pid_t spawn_in(const char *rel);
void spawn_shared(struct bench *b, int i, const char *rel);
void write_conf(const struct bench *b, const char *path);
void start_stress(struct bench *b);
void stop_stress(struct bench *b);
void write_bundle(const struct bench *b, const char *id);
void setup(struct bench *b);
void teardown(void);

/* daemon.c */
void start_daemon(struct bench *b);
json_object *status(const struct bench *b);
int64_t jget(json_object *o, const char *a, const char *k);
json_object *wait_status(const struct bench *b, int64_t want_conv, int n_containers);
void wait_idle(const struct bench *b);
long rss_kib(pid_t pid);

/* measure.c */
void floor_run(const struct bench *b, uint64_t *out, int rounds, uint64_t idle_us);
void floor_fd_run(const struct bench *b, uint64_t *out, int rounds, uint64_t idle_us);
uint64_t idle_gap_us(const uint64_t *at, const uint64_t *conv, size_t n);
void run_burst(const struct bench *b);
void run(struct bench *b);

/* report.c */
void read_samples(json_object *s, uint64_t *out, size_t n);
bool read_phases(json_object *s, uint64_t *ret_ph[N_PHASES], size_t n);
void report_phases(const char *what, uint64_t *ph[N_PHASES], size_t n, size_t from,
			  size_t step);
void free_phases(uint64_t *ph[N_PHASES]);
void report(const struct bench *b, uint64_t *conv, uint64_t *flo, uint64_t *flo_fd,
		   size_t n, double writes_per_resize, long rss);
void report_cold(const struct bench *b, uint64_t *cold, uint64_t *cold_fd, size_t n,
		 uint64_t gap_us);
void report_kubelet(const struct bench *b, struct kubelet_figures *f);

/* kubelet.c */
void scene_kubelet(struct bench *b);

#endif
