// SPDX-License-Identifier: Apache-2.0
/*
 * bench-resize, the scene: cgroup files, the shared containers and their
 * processes, the daemon's config and bundles, the stress load, set-up and
 * teardown.
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
#include "spawn.h"

/* The hierarchy holding cpuset: v1's own mount, else the v2 root;
 * set by main before anything else. */
const char *CPUSET = CPUSET_V1;
bool on_v2;

uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

void die(const char *what)
{
	fprintf(stderr, "bench-resize: %s: %s\n", what, strerror(errno));
	exit(1);
}

void put(const char *path, const char *val)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

	if (fd < 0 || write(fd, val, strlen(val)) < 0)
		die(path);
	close(fd);
}

void get(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0 || (n = read(fd, buf, len - 1)) < 0)
		die(path);
	close(fd);
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
}

/* As get, "" when path cannot be read. */
void get_opt(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n = fd < 0 ? -1 : read(fd, buf, len - 1);

	if (fd >= 0)
		close(fd);
	buf[n > 0 ? n : 0] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
}

/* mkdir in the cpuset hierarchy with cpus/mems copied from the parent
 * (v1 children start empty and cannot take tasks). */
static void copy_from_parent(const char *dir, const char *file)
{
	char src[600], dst[600], v[CPULIST_MAX];

	snprintf(dst, sizeof(dst), "%s/%s", dir, file);
	get(dst, v, sizeof(v));
	if (v[0])
		return;
	snprintf(src, sizeof(src), "%s/../%s", dir, file);
	get(src, v, sizeof(v));
	put(dst, v);
}

/* v2: children of dir get cpuset and cpu, as kubelet enables them down
 * the kubepods tree. No-op when already there. */
static void enable_children(const char *dir)
{
	char p[600], v[512];

	snprintf(p, sizeof(p), "%s/cgroup.subtree_control", dir);
	get(p, v, sizeof(v));
	if (!strstr(v, "cpuset"))
		put(p, "+cpuset +cpu");
}

/* A cgroup for the tree: v1 copies cpus/mems from its parent (v1
 * children start empty and cannot take tasks); v2 inherits, and an inner
 * node passes the controllers on. */
void mkcg(const char *rel)
{
	char p[512];

	snprintf(p, sizeof(p), "%s%s", CPUSET, rel);
	if (mkdir(p, 0755) < 0 && errno != EEXIST)
		die(p);
	if (!on_v2) {
		copy_from_parent(p, "cpuset.cpus");
		copy_from_parent(p, "cpuset.mems");
	}
}

/* An inner node (root, QoS slice, pod). */
void mkcg_inner(const char *rel)
{
	char p[512];

	mkcg(rel);
	if (on_v2) {
		snprintf(p, sizeof(p), "%s%s", CPUSET, rel);
		enable_children(p);
	}
}

void shared_path(const struct bench *b, int i, char *buf, size_t len)
{
	snprintf(buf, len, "%s/burstable/pod%08x-0000-4000-8000-%012d/%064x", b->root, i, i, i + 1);
}

/* One live process per shared container cgroup. */
pid_t spawn_in(const char *rel)
{
	char procs[600];
	pid_t kid;

	snprintf(procs, sizeof(procs), "%s%s/cgroup.procs", CPUSET, rel);
	kid = spawn_paused(procs);
	if (kid < 0) {
		errno = (int)-kid;
		die(procs);
	}
	return kid;
}

/* Shared container i's b->tasks processes, in its cgroup rel (a write of
 * cpuset.cpus moves each: the kernel's cost grows with them). */
void spawn_shared(struct bench *b, int i, const char *rel)
{
	for (int k = 0; k < b->tasks; k++)
		b->kids[(size_t)i * (size_t)b->tasks + (size_t)k] = spawn_in(rel);
}

/* The daemon's config file: the -o lines, else empty (the defaults). */
void write_conf(const struct bench *b, const char *path)
{
	char text[2048] = "";

	for (int i = 0; i < b->n_opts; i++) {
		if (strlen(text) + strlen(b->opts[i]) + 2 > sizeof(text)) {
			fprintf(stderr, "bench-resize: -o: too many settings\n");
			exit(2);
		}
		strcat(text, b->opts[i]);
		strcat(text, "\n");
	}
	put(path, text[0] ? text : "\n");
}

/* -L: `stress-ng --cpu 0`, a busy worker on every online CPU, in its own
 * process group so that stop_stress() ends the workers too. */
void start_stress(struct bench *b)
{
	b->stress = fork();
	if (b->stress < 0)
		die("fork");
	if (b->stress == 0) {
		int fd = open("/dev/null", O_WRONLY);

		setpgid(0, 0);
		dup2(fd, 1);
		dup2(fd, 2);
		execlp("stress-ng", "stress-ng", "--cpu", "0", "--quiet", (char *)NULL);
		_exit(127);
	}
	setpgid(b->stress, b->stress);
	usleep(300000);	/* the workers are up and busy */
	if (waitpid(b->stress, NULL, WNOHANG) == b->stress) {
		fprintf(stderr, "bench-resize: -L: stress-ng did not start (installed?)\n");
		b->stress = 0;
		exit(1);
	}
}

void stop_stress(struct bench *b)
{
	if (b->stress <= 0)
		return;
	kill(-b->stress, SIGTERM);
	waitpid(b->stress, NULL, 0);
	b->stress = 0;
}

void write_bundle(const struct bench *b, const char *id)
{
	char dir[512], path[600];

	snprintf(dir, sizeof(dir), "%s/bundles/%s", b->work, id);
	mkdir(dir, 0755);
	snprintf(path, sizeof(path), "%s/config.json", dir);
	put(path, "{\"ociVersion\":\"1.0.2\",\"annotations\":{"
		  "\"io.kubernetes.cri.container-type\":\"container\","
		  "\"io.kubernetes.cri.container-name\":\"bench\","
		  "\"io.kubernetes.cri.sandbox-name\":\"bench-integer\","
		  "\"io.kubernetes.cri.sandbox-namespace\":\"bench\"},"
		  "\"linux\":{\"resources\":{\"cpu\":{\"quota\":100000,\"period\":100000}}}}");
}

/* The two values the pool takes: all online CPUs, and without the lowest
 * one (where the daemon puts a 1-CPU integer container on an idle node). */
static void pools(struct bench *b, const char *online)
{
	struct cpumask m;

	if (cpulist_parse(online, &m) < 0 || cpumask_weight(&m) < 2) {
		fprintf(stderr, "bench-resize: needs at least 2 online CPUs, have \"%s\"\n", online);
		exit(1);
	}
	cpulist_format(&m, b->pool_all, sizeof(b->pool_all));
	cpumask_clear(&m, (unsigned)cpumask_next(&m, 0));
	cpulist_format(&m, b->pool_less, sizeof(b->pool_less));
}

void setup(struct bench *b)
{
	char rel[512], online[64];

	snprintf(b->work, sizeof(b->work), "/tmp/cpusetd-bench.XXXXXX");
	if (!mkdtemp(b->work))
		die("mkdtemp");
	snprintf(rel, sizeof(rel), "%s/bundles", b->work);
	mkdir(rel, 0755);
	snprintf(rel, sizeof(rel), "%s/state", b->work);
	mkdir(rel, 0755);
	snprintf(b->root, sizeof(b->root), "/cpusetd-bench-%d", getpid());
	snprintf(b->pin, sizeof(b->pin), "/sys/fs/bpf/cpusetd-bench-%d", getpid());
	if (on_v2)
		enable_children(CPUSET);
	mkcg_inner(b->root);
	strcat(b->root, "/kubepods");
	mkcg_inner(b->root);
	snprintf(rel, sizeof(rel), "%s/burstable", b->root);
	mkcg_inner(rel);
	get("/sys/devices/system/cpu/online", online, sizeof(online));
	pools(b, online);
	b->kids = calloc((size_t)b->n * (size_t)(b->tasks ? b->tasks : 1), sizeof(*b->kids));
	for (int i = 0; i < b->n; i++) {
		shared_path(b, i, rel, sizeof(rel));
		*strrchr(rel, '/') = '\0';
		mkcg_inner(rel);
	}
}

/* Runs at exit, also after die(): no process or cgroup is left behind. */
struct bench *to_clean;

void teardown(void)
{
	struct bench *b = to_clean;
	char cmd[768];

	if (!b)
		return;
	to_clean = NULL;
	if (b->daemon > 0)
		kill(b->daemon, SIGTERM);
	if (b->stress > 0)
		kill(-b->stress, SIGTERM);

	for (int i = 0; b->kids && i < b->n * b->tasks; i++)
		if (b->kids[i] > 0)
			kill(b->kids[i], SIGKILL);
	while (wait(NULL) > 0 || errno == EINTR)
		;
	snprintf(cmd, sizeof(cmd), "find %s%.*s -depth -type d -exec rmdir {} + 2>/dev/null;"
		 " rm -rf %s %s", CPUSET, (int)(strrchr(b->root, '/') - b->root), b->root, b->work,
		 b->pin);
	if (system(cmd) != 0)
		fprintf(stderr, "bench-resize: cleanup incomplete\n");
	if (!b->kubelet)
		return;
	snprintf(cmd, sizeof(cmd), "find %s%.*s -depth -type d -exec rmdir {} + 2>/dev/null", CPU_V1,
		 (int)(strrchr(b->root, '/') - b->root), b->root);
	if (system(cmd) != 0)
		fprintf(stderr, "bench-resize: cleanup of %s incomplete\n", CPU_V1);
}
