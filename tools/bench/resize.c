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
 *   bench-resize [-n N] [-r ROUNDS] [-d BUILD_DIR] [-s hierarchical|per-container]
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

#define CPUSET_V1 "/sys/fs/cgroup/cpuset"
#define CPUSET_V2 "/sys/fs/cgroup"
#define CPU_V1 "/sys/fs/cgroup/cpu"	/* the kubelet scene's cpu.cfs_quota_us */
#define MAX_OPTS 16

/* The hierarchy holding cpuset: v1's own mount, else the v2 root. */
static const char *CPUSET = CPUSET_V1;
static bool on_v2;

struct bench {
	int n, rounds;
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

/* As get, "" when path cannot be read. */
static void get_opt(const char *path, char *buf, size_t len)
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

/* The daemon's config file: the -o lines, else empty (the defaults). */
static void write_conf(const struct bench *b, const char *path)
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
static void start_stress(struct bench *b)
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

static void stop_stress(struct bench *b)
{
	if (b->stress <= 0)
		return;
	kill(-b->stress, SIGTERM);
	waitpid(b->stress, NULL, 0);
	b->stress = 0;
}

static void start_daemon(struct bench *b)
{
	char exe[256], tmpl[256], state[256], conf[256], prom[256];

	snprintf(exe, sizeof(exe), "%s/cpusetd", b->build);
	snprintf(tmpl, sizeof(tmpl), "%s/bundles/{id}/config.json", b->work);
	snprintf(state, sizeof(state), "%s/state", b->work);
	snprintf(conf, sizeof(conf), "%s/cpusetd.conf", b->work);
	/* The export goes to our work dir, not the node's textfile directory. */
	snprintf(prom, sizeof(prom), "%s/cpusetd.prom", b->work);
	write_conf(b, conf);
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

/*
 * Waits until the daemon sleeps in epoll_wait again (/proc/PID/wchan), so
 * that the next step meets an idle daemon: status.json is not the last
 * file an export writes (topology.json follows), and a step that started
 * on it would time the tail of that export too. Without kernel symbols
 * (wchan "0") it gives up after a second, once, and steps on status.json.
 */
static void wait_idle(const struct bench *b)
{
	static bool blind;
	uint64_t deadline = now_ns() + 1000000000ULL;
	char p[64], w[64], kids[96], c[64];

	snprintf(p, sizeof(p), "/proc/%d/wchan", (int)b->daemon);
	snprintf(kids, sizeof(kids), "/proc/%d/task/%d/children", (int)b->daemon, (int)b->daemon);
	while (!blind) {
		get(p, w, sizeof(w));
		/* idle: in epoll_wait, and no export child writing (a daemon
		 * that forks its exports, user/daemon/export_writer.h) */
		if (strcmp(w, "do_epoll_wait") == 0 && (get_opt(kids, c, sizeof(c)), !c[0]))
			return;
		if (now_ns() > deadline) {
			fprintf(stderr, "bench-resize: cannot see the daemon idle (%s: '%s'); "
				"stepping on status.json alone\n", p, w);
			blind = true;
		}
		usleep(100);
	}
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
	if (b->stress > 0)
		kill(-b->stress, SIGTERM);

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
	if (!b->kubelet)
		return;
	snprintf(cmd, sizeof(cmd), "find %s%.*s -depth -type d -exec rmdir {} + 2>/dev/null", CPU_V1,
		 (int)(strrchr(b->root, '/') - b->root), b->root);
	if (system(cmd) != 0)
		fprintf(stderr, "bench-resize: cleanup of %s incomplete\n", CPU_V1);
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
static void run_burst(const struct bench *b)
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

/* The daemon's convergence phases (status.json convergence.phases, in
 * its order: wakeup, plan, writes, finish) of the same n samples. */
#define N_PHASES 4
static const char *const phase_names[N_PHASES] = { "wakeup", "plan", "writes", "finish" };

/* *ret_ph[p] (n each, malloc'd) from s; false when the daemon does not
 * report phases (an older build: the line is left out). */
static bool read_phases(json_object *s, uint64_t *ret_ph[N_PHASES], size_t n)
{
	json_object *conv, *ph, *a;
	char key[32];

	if (!json_object_object_get_ex(s, "convergence", &conv) ||
	    !json_object_object_get_ex(conv, "phases", &ph))
		return false;
	for (int p = 0; p < N_PHASES; p++) {
		size_t len;

		snprintf(key, sizeof(key), "%s_ns", phase_names[p]);
		ret_ph[p] = calloc(n ? n : 1, sizeof(uint64_t));
		if (!ret_ph[p])
			die("calloc");
		if (!json_object_object_get_ex(ph, key, &a))
			continue;
		len = json_object_array_length(a);
		for (size_t i = 0; i < n && len >= n; i++)
			ret_ph[p][i] = (uint64_t)json_object_get_int64(
				json_object_array_get_idx(a, len - n + i));
	}
	return true;
}

/* One line: each phase's p50 and p99 over the samples i = from, from +
 * step, ... below n (start/stop split: step 2), and its share of the
 * summed p50s. */
static void report_phases(const char *what, uint64_t *ph[N_PHASES], size_t n, size_t from,
			  size_t step)
{
	uint64_t *v = calloc(n ? n : 1, sizeof(*v));
	size_t m;

	if (!v)
		die("calloc");
	printf("  %-5s phases:", what);
	for (int p = 0; p < N_PHASES; p++) {
		m = 0;
		for (size_t i = from; i < n; i += step)
			v[m++] = ph[p][i];
		printf(" %s p50 %.1f p99 %.1f us%s", phase_names[p], pct(v, m, 50) / 1e3,
		       pct(v, m, 99) / 1e3, p + 1 < N_PHASES ? " |" : "\n");
	}
	free(v);
}

static void free_phases(uint64_t *ph[N_PHASES])
{
	for (int p = 0; p < N_PHASES; p++)
		free(ph[p]);
}

static void report(const struct bench *b, uint64_t *conv, uint64_t *flo, uint64_t *flo_fd,
		   size_t n, double writes_per_resize, long rss)
{
	uint64_t c50 = pct(conv, n, 50), c99 = pct(conv, n, 99);
	uint64_t f50 = pct(flo, n, 50), g50 = pct(flo_fd, n, 50);

	printf("%s N=%d rounds=%d%s: convergence p50 %.1f us p99 %.1f us | "
	       "floor (open+write+close) p50 %.1f us, ratio p50 %.2f p99 %.2f | "
	       "floor (open fds) p50 %.1f us, ratio p50 %.2f p99 %.2f | "
	       "writes/resize %.1f | daemon RSS %ld KiB\n",
	       on_v2 ? (strcmp(b->strategy, "hierarchical") ? "v2 per-container" : "v2 hierarchical") :
	       "v1", b->n, b->rounds, b->load ? " load=stress-ng" : "", c50 / 1e3, c99 / 1e3,
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
		wait_idle(b);
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

	floor_run(b, flo, (int)n);
	floor_fd_run(b, flo_fd, (int)n);
	stop_stress(b);
	report(b, conv, flo, flo_fd, n, (double)(writes1 - writes0) /
	       (double)(resizes1 > resizes0 ? resizes1 - resizes0 : 1), rss);
	if (have_ph) {
		report_phases("all", ph, n, 0, 1);
		free_phases(ph);
	}
	free(conv);
	free(flo);
	free(flo_fd);
}

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
 * and low[1] their lower bounds (poll_shared).
 */
static void kubelet_round(const struct bench *b, int r, int64_t conv0, uint64_t *ext,
			  uint64_t *low)
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
	t0 = now_ns();
	if (mkdir(p, 0755) < 0)
		die(p);
	ext[0] = poll_shared(b, b->pool_less, &l) - t0;
	low[0] = l > t0 ? l - t0 : 0;
	json_object_put(wait_status(b, conv0 + 2 * r + 1, b->n + 1));
	wait_idle(b);
	t0 = now_ns();
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

/* Every other sample from v[0..n): the starts (from 0) or stops (from 1). */
static void split(const uint64_t *v, size_t n, size_t from, uint64_t *out)
{
	for (size_t i = from, j = 0; i < n; i += 2, j++)
		out[j] = v[i];
}

struct kubelet_figures {
	uint64_t *conv, *ext, *low;	/* 2*rounds each: start, stop, start, ... */
	uint64_t *flo_quiet, *flo_fd_quiet, *flo_after;
	uint64_t *ph[N_PHASES];		/* the daemon's phases; NULL: not reported */
	double writes_per_resize;
	long rss;
};

static void report_line(const char *what, uint64_t *own, uint64_t *ext, uint64_t *low,
			size_t n, uint64_t f_q, uint64_t f_a)
{
	uint64_t o50 = pct(own, n, 50), o99 = pct(own, n, 99);
	uint64_t e50 = pct(ext, n, 50), e99 = pct(ext, n, 99);
	uint64_t l50 = pct(low, n, 50), l99 = pct(low, n, 99);

	printf("  %-5s daemon p50 %7.1f us p99 %7.1f us | external p50 %7.1f us p99 %7.1f us "
	       "(lower bound p50 %.1f p99 %.1f) | daemon p99/floor %.2f | "
	       "external/floor p50 %.2f p99 %.2f (after-run floor: %.2f %.2f)\n",
	       what, o50 / 1e3, o99 / 1e3, e50 / 1e3, e99 / 1e3, l50 / 1e3, l99 / 1e3,
	       (double)o99 / (double)f_q,
	       (double)e50 / (double)f_q, (double)e99 / (double)f_q,
	       (double)e50 / (double)f_a, (double)e99 / (double)f_a);
}

static void report_kubelet(const struct bench *b, struct kubelet_figures *f)
{
	size_t n = (size_t)b->rounds, all = 2 * n;
	uint64_t *own = calloc(n, sizeof(*own)), *ext = calloc(n, sizeof(*ext));
	uint64_t *low = calloc(n, sizeof(*low));
	uint64_t f_q = pct(f->flo_quiet, all, 50), f_a = pct(f->flo_after, all, 50);
	uint64_t g_q = pct(f->flo_fd_quiet, all, 50);

	printf("v1 kubelet N=%d rounds=%d load=%s daemon config:", b->n, b->rounds,
	       b->load ? "stress-ng --cpu 0" : "none");
	for (int i = 0; i < b->n_opts; i++)
		printf(" %s", b->opts[i]);
	printf("%s\n", b->n_opts ? "" : " (defaults)");
	for (size_t i = 0; b->verbose && i < all; i++)
		printf("  # %s %zu: daemon %.1f us, external %.1f us (lower bound %.1f us)\n",
		       i % 2 ? "stop" : "start", i / 2, f->conv[i] / 1e3, f->ext[i] / 1e3,
		       f->low[i] / 1e3);
	split(f->conv, all, 0, own);
	split(f->ext, all, 0, ext);
	split(f->low, all, 0, low);
	report_line("start", own, ext, low, n, f_q, f_a);
	if (f->ph[0])
		report_phases("start", f->ph, all, 0, 2);
	split(f->conv, all, 1, own);
	split(f->ext, all, 1, ext);
	split(f->low, all, 1, low);
	report_line("stop", own, ext, low, n, f_q, f_a);
	if (f->ph[0])
		report_phases("stop", f->ph, all, 1, 2);
	/* the targets, both kinds together (issue 24 item 2) */
	{
		/* pct sorts: last use of these arrays */
		uint64_t *e_all = f->ext, *c_all = f->conv;

		printf("  ratios N=%d: daemon p99/floor %.2f (target <= 1.0) | external p50/floor %.2f "
		       "(<= 2) | external p99/floor %.2f (<= 2.5)\n", b->n,
		       (double)pct(c_all, all, 99) / (double)f_q,
		       (double)pct(e_all, all, 50) / (double)f_q,
		       (double)pct(e_all, all, 99) / (double)f_q);
	}
	printf("  floor open+write+close of the %d cpuset.cpus: p50 %.1f us before the daemon "
	       "(quiet), %.1f us after it stopped%s | open fds p50 %.1f us (quiet) | "
	       "writes/resize %.1f | daemon RSS %ld KiB\n",
	       b->n, f_q / 1e3, f_a / 1e3, b->load ? " (loaded)" : "", g_q / 1e3,
	       f->writes_per_resize, f->rss);
	free(own);
	free(ext);
	free(low);
}

/*
 * -S kubelet (v1): the shared containers run before the daemon starts;
 * the floors come first (nothing running but them) and last; in
 * between, -L's load and the daemon.
 */
static void scene_kubelet(struct bench *b)
{
	size_t n = 2 * (size_t)b->rounds;
	struct kubelet_figures f = {
		.conv = calloc(n, sizeof(uint64_t)), .ext = calloc(n, sizeof(uint64_t)),
		.low = calloc(n, sizeof(uint64_t)),
		.flo_quiet = calloc(n, sizeof(uint64_t)), .flo_fd_quiet = calloc(n, sizeof(uint64_t)),
		.flo_after = calloc(n, sizeof(uint64_t)),
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
		b->kids[i] = spawn_in(rel);
	}
	no_rebuild(b);
	floor_run(b, f.flo_quiet, (int)n);
	floor_fd_run(b, f.flo_fd_quiet, (int)n);
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
		kubelet_round(b, r, conv0, &f.ext[2 * r], &f.low[2 * r]);
	s = wait_status(b, conv0 + (int64_t)n, b->n);
	if (jget(s, "convergence", "count") != conv0 + (int64_t)n)
		fprintf(stderr, "bench-resize: %lld convergence samples for %zu resizes\n",
			(long long)(jget(s, "convergence", "count") - conv0), n);
	f.writes_per_resize = (double)(jget(s, "counters", "cgroup_writes") - writes0) /
			      (double)(jget(s, "counters", "resizes") - resizes0);
	read_samples(s, f.conv, n);
	if (!read_phases(s, f.ph, n))
		memset(f.ph, 0, sizeof(f.ph));
	json_object_put(s);
	f.rss = rss_kib(b->daemon);
	if (b->burst)
		run_burst(b);
	kill(b->daemon, SIGTERM);
	waitpid(b->daemon, NULL, 0);
	b->daemon = 0;
	floor_run(b, f.flo_after, (int)n);
	stop_stress(b);
	report_kubelet(b, &f);
	free(f.conv);
	free(f.ext);
	free(f.low);
	free(f.flo_quiet);
	free(f.flo_fd_quiet);
	free(f.flo_after);
	free_phases(f.ph);
}

int main(int argc, char **argv)
{
	struct bench b = { .n = 100, .rounds = 50, .build = "build", .strategy = "hierarchical" };
	const char *scene = "plain";
	int c;

	while ((c = getopt(argc, argv, "n:r:d:s:S:Lo:vb:g:h")) != -1) {
		switch (c) {
		case 'n': b.n = atoi(optarg); break;
		case 'r': b.rounds = atoi(optarg); break;
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
			fprintf(stderr, "usage: bench-resize [-n SHARED_CONTAINERS] [-r ROUNDS] [-d BUILD_DIR]\n"
					"                    [-s hierarchical|per-container] [-S plain|kubelet] [-L]\n"
					"                    [-o KEY=VALUE]... [-v] [-b K [-g GAP_US]]\n"
					"  -S kubelet  the scene as kubelet and runc build it, with the external\n"
					"              figure (cgroup v1)\n"
					"  -L          stress-ng --cpu 0 (every CPU busy) during the run\n"
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
	if (b.n < 1 || b.rounds < 1 || b.burst < 0 || b.gap_us < 0) {
		fprintf(stderr, "bench-resize: -n and -r must be positive integers, -b and -g not "
				"negative\n");
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
