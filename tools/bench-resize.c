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
 *
 *   bench-resize [-n N] [-r ROUNDS] [-d BUILD_DIR] [-s hierarchical|per-container]
 * Needs root and the v1 cpuset hierarchy, or pure v2 with cpuset enabled
 * (the VM lane); -s is the daemon's --v2-writes there (v1 ignores it:
 * it always writes every container).
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
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "user/base/cpumask.h"

#define CPUSET_V1 "/sys/fs/cgroup/cpuset"
#define CPUSET_V2 "/sys/fs/cgroup"

/* The hierarchy holding cpuset: v1's own mount, else the v2 root. */
static const char *CPUSET = CPUSET_V1;
static bool on_v2;

struct bench {
	int n, rounds;
	const char *build;
	const char *strategy;	/* --v2-writes */
	char root[128];		/* relative cgroup path of the kubepods root */
	char work[128];		/* temp dir: bundles, state */
	char pin[128];		/* private BPF pin dir */
	pid_t daemon;
	pid_t *kids;
	char pool_all[CPULIST_MAX], pool_less[CPULIST_MAX];
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static void die(const char *what)
{
	fprintf(stderr, "bench-resize: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void put(const char *path, const char *val)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

	if (fd < 0 || write(fd, val, strlen(val)) < 0)
		die(path);
	close(fd);
}

static void get(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0 || (n = read(fd, buf, len - 1)) < 0)
		die(path);
	close(fd);
	buf[n] = '\0';
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
static void mkcg(const char *rel)
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
static void mkcg_inner(const char *rel)
{
	char p[512];

	mkcg(rel);
	if (on_v2) {
		snprintf(p, sizeof(p), "%s%s", CPUSET, rel);
		enable_children(p);
	}
}

static void shared_path(const struct bench *b, int i, char *buf, size_t len)
{
	snprintf(buf, len, "%s/burstable/pod%08x-0000-4000-8000-%012d/%064x", b->root, i, i, i + 1);
}

/* One live process per shared container cgroup. */
static pid_t spawn_in(const char *rel)
{
	char procs[600], pid[32];
	pid_t kid = fork();

	if (kid < 0)
		die("fork");
	if (kid == 0) {
		pause();
		_exit(0);
	}
	snprintf(procs, sizeof(procs), "%s%s/cgroup.procs", CPUSET, rel);
	snprintf(pid, sizeof(pid), "%d", kid);
	put(procs, pid);
	return kid;
}

static void start_daemon(struct bench *b)
{
	char exe[256], tmpl[256], state[256], conf[256], prom[256];

	snprintf(exe, sizeof(exe), "%s/cpusetd", b->build);
	snprintf(tmpl, sizeof(tmpl), "%s/bundles/{id}/config.json", b->work);
	snprintf(state, sizeof(state), "%s/state", b->work);
	snprintf(conf, sizeof(conf), "%s/empty.conf", b->work);
	/* The export goes to our work dir, not the node's textfile directory. */
	snprintf(prom, sizeof(prom), "%s/cpusetd.prom", b->work);
	put(conf, "\n");
	b->daemon = fork();
	if (b->daemon < 0)
		die("fork");
	if (b->daemon == 0) {
		int fd = open("/dev/null", O_WRONLY);

		dup2(fd, 2);
		execl(exe, exe, "--config", conf, "--kubepods-root", b->root, "--bundle-path", tmpl,
		      "--state-dir", state, "--pin-dir", b->pin, "--textfile", prom,
		      "--log-level", "warning",
		      "--v2-writes", b->strategy, (char *)NULL);
		_exit(127);
	}
}

/* status.json, parsed; NULL while it does not exist yet. */
static json_object *status(const struct bench *b)
{
	char p[256];

	snprintf(p, sizeof(p), "%s/state/status.json", b->work);
	return json_object_from_file(p);
}

static int64_t jget(json_object *o, const char *a, const char *k)
{
	json_object *x, *y;

	if (!o || !json_object_object_get_ex(o, a, &x) || !json_object_object_get_ex(x, k, &y))
		return -1;
	return json_object_get_int64(y);
}

/* Waits until status.json says convergence.count >= want and the daemon
 * knows n_containers. Returns the status object (caller puts it). */
static json_object *wait_status(const struct bench *b, int64_t want_conv, int n_containers)
{
	uint64_t deadline = now_ns() + 30ULL * 1000000000ULL;

	ino_t seen = 0;

	for (;;) {
		json_object *s, *list;
		struct stat st;
		char p[256];

		/* Parse only a new file (the daemon renames a fresh one in), so
		 * polling costs the daemon next to no CPU. */
		snprintf(p, sizeof(p), "%s/state/status.json", b->work);
		if (stat(p, &st) < 0 || st.st_ino == seen) {
			if (now_ns() > deadline)
				break;
			usleep(200);
			continue;
		}
		seen = st.st_ino;
		s = status(b);
		if (s && jget(s, "convergence", "count") >= want_conv &&
		    json_object_object_get_ex(s, "containers", &list) &&
		    (int)json_object_array_length(list) == n_containers)
			return s;
		json_object_put(s);
	}
	fprintf(stderr, "bench-resize: timed out waiting for the daemon\n");
	exit(1);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static uint64_t pct(uint64_t *v, size_t n, int p)
{
	qsort(v, n, sizeof(*v), cmp_u64);
	return v[(n - 1) * (size_t)p / 100];
}

static void write_bundle(const struct bench *b, const char *id)
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

/* The floor: N cpuset.cpus writes, alternating values so each is real. */
static void floor_run(const struct bench *b, uint64_t *out, int rounds)
{
	char p[600], rel[512];

	for (int r = 0; r < rounds; r++) {
		const char *v = r % 2 ? b->pool_all : b->pool_less;
		uint64_t t0 = now_ns();

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
 * which is what the daemon does after a container's first write. */
static void floor_fd_run(const struct bench *b, uint64_t *out, int rounds)
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
		uint64_t t0 = now_ns();

		for (int i = 0; i < b->n; i++)
			if (write(fds[i], v, strlen(v)) < 0)
				die("write");
		out[r] = now_ns() - t0;
	}
	for (int i = 0; i < b->n; i++)
		close(fds[i]);
	free(fds);
}

static long rss_kib(pid_t pid)
{
	char p[64], line[256];
	long kib = -1;
	FILE *f;

	snprintf(p, sizeof(p), "/proc/%d/status", pid);
	f = fopen(p, "re");
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "VmRSS: %ld", &kib) == 1)
			break;
	if (f)
		fclose(f);
	return kib;
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

static void setup(struct bench *b)
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
	b->kids = calloc((size_t)b->n, sizeof(*b->kids));
	for (int i = 0; i < b->n; i++) {
		shared_path(b, i, rel, sizeof(rel));
		*strrchr(rel, '/') = '\0';
		mkcg_inner(rel);
	}
}

/* Runs at exit, also after die(): no process or cgroup is left behind. */
static struct bench *to_clean;

static void teardown(void)
{
	struct bench *b = to_clean;
	char cmd[768];

	if (!b)
		return;
	to_clean = NULL;
	if (b->daemon > 0)
		kill(b->daemon, SIGTERM);

	for (int i = 0; b->kids && i < b->n; i++)
		if (b->kids[i] > 0)
			kill(b->kids[i], SIGKILL);
	while (wait(NULL) > 0 || errno == EINTR)
		;
	snprintf(cmd, sizeof(cmd), "find %s%.*s -depth -type d -exec rmdir {} + 2>/dev/null;"
		 " rm -rf %s %s", CPUSET, (int)(strrchr(b->root, '/') - b->root), b->root, b->work,
		 b->pin);
	if (system(cmd) != 0)
		fprintf(stderr, "bench-resize: cleanup incomplete\n");
}

/* Convergence samples of the last 2*rounds events from status.json. */
static void read_samples(json_object *s, uint64_t *out, size_t n)
{
	json_object *conv, *rec;
	size_t len;

	json_object_object_get_ex(s, "convergence", &conv);
	json_object_object_get_ex(conv, "recent_ns", &rec);
	len = json_object_array_length(rec);
	for (size_t i = 0; i < n; i++)
		out[i] = (uint64_t)json_object_get_int64(json_object_array_get_idx(rec, len - n + i));
}

static void report(const struct bench *b, uint64_t *conv, uint64_t *flo, uint64_t *flo_fd,
		   size_t n, double writes_per_resize, long rss)
{
	uint64_t c50 = pct(conv, n, 50), c99 = pct(conv, n, 99);
	uint64_t f50 = pct(flo, n, 50), g50 = pct(flo_fd, n, 50);

	printf("%s N=%d rounds=%d: convergence p50 %.1f us p99 %.1f us | "
	       "floor (open+write+close) p50 %.1f us, ratio p50 %.2f p99 %.2f | "
	       "floor (open fds) p50 %.1f us, ratio p50 %.2f p99 %.2f | "
	       "writes/resize %.1f | daemon RSS %ld KiB\n",
	       on_v2 ? (strcmp(b->strategy, "hierarchical") ? "v2 per-container" : "v2 hierarchical") :
	       "v1", b->n, b->rounds, c50 / 1e3, c99 / 1e3,
	       f50 / 1e3, (double)c50 / (double)f50, (double)c99 / (double)f50,
	       g50 / 1e3, (double)c50 / (double)g50, (double)c99 / (double)g50,
	       writes_per_resize, rss);
}

static void run(struct bench *b)
{
	size_t n = 2 * (size_t)b->rounds;
	uint64_t *conv = calloc(n, sizeof(*conv)), *flo = calloc(n, sizeof(*flo));
	uint64_t *flo_fd = calloc(n, sizeof(*flo_fd));
	char rel[512], pod[512], p[600], id[65];
	int64_t conv0, writes0, resizes0, writes1, resizes1;
	json_object *s;
	long rss;

	start_daemon(b);
	for (int i = 0; i < b->n; i++) {
		shared_path(b, i, rel, sizeof(rel));
		mkcg(rel);
		b->kids[i] = spawn_in(rel);
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
		if (mkdir(p, 0755) < 0)
			die(p);
		json_object_put(wait_status(b, conv0 + 2 * r + 1, b->n + 1));
		if (rmdir(p) < 0)
			die(p);
		json_object_put(wait_status(b, conv0 + 2 * r + 2, b->n));
	}
	s = wait_status(b, conv0 + (int64_t)n, b->n);
	writes1 = jget(s, "counters", "cgroup_writes");
	resizes1 = jget(s, "counters", "resizes");
	read_samples(s, conv, n);
	json_object_put(s);
	rss = rss_kib(b->daemon);
	kill(b->daemon, SIGTERM);
	waitpid(b->daemon, NULL, 0);
	b->daemon = 0;

	floor_run(b, flo, (int)n);
	floor_fd_run(b, flo_fd, (int)n);
	report(b, conv, flo, flo_fd, n, (double)(writes1 - writes0) /
	       (double)(resizes1 > resizes0 ? resizes1 - resizes0 : 1), rss);
	free(conv);
	free(flo);
	free(flo_fd);
}

int main(int argc, char **argv)
{
	struct bench b = { .n = 100, .rounds = 50, .build = "build", .strategy = "hierarchical" };
	int c;

	while ((c = getopt(argc, argv, "n:r:d:s:h")) != -1) {
		switch (c) {
		case 'n': b.n = atoi(optarg); break;
		case 'r': b.rounds = atoi(optarg); break;
		case 'd': b.build = optarg; break;
		case 's': b.strategy = optarg; break;
		default:
			fprintf(stderr, "usage: bench-resize [-n SHARED_CONTAINERS] [-r ROUNDS] [-d BUILD_DIR]\n"
					"                    [-s hierarchical|per-container]\n"
					"  e.g. sudo build/bench-resize -n 100 -r 50\n"
					"       sudo build/bench-resize -n 500 -s per-container   # v2\n");
			return c == 'h' ? 0 : 2;
		}
	}
	if (strcmp(b.strategy, "hierarchical") && strcmp(b.strategy, "per-container")) {
		fprintf(stderr, "bench-resize: -s: expected hierarchical|per-container, got '%s'\n",
			b.strategy);
		return 2;
	}
	if (access(CPUSET_V1, F_OK) < 0) {
		CPUSET = CPUSET_V2;
		on_v2 = true;
	}
	if (b.n < 1 || b.rounds < 1) {
		fprintf(stderr, "bench-resize: -n and -r must be positive integers\n");
		return 2;
	}
	to_clean = &b;
	atexit(teardown);
	setup(&b);
	run(&b);
	return 0;
}
