// SPDX-License-Identifier: Apache-2.0
/*
 * bench-resize, the daemon under test: its start, its status.json, waiting
 * for it to converge or be idle, its RSS.
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

void start_daemon(struct bench *b)
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
json_object *status(const struct bench *b)
{
	char p[256];

	snprintf(p, sizeof(p), "%s/state/status.json", b->work);
	return json_object_from_file(p);
}

int64_t jget(json_object *o, const char *a, const char *k)
{
	json_object *x, *y;

	if (!o || !json_object_object_get_ex(o, a, &x) || !json_object_object_get_ex(x, k, &y))
		return -1;
	return json_object_get_int64(y);
}

/* Waits until status.json says convergence.count >= want and the daemon
 * knows n_containers. Returns the status object (caller puts it). */
json_object *wait_status(const struct bench *b, int64_t want_conv, int n_containers)
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
void wait_idle(const struct bench *b)
{
	static bool blind;
	uint64_t deadline = now_ns() + 1000000000ULL;
	char p[64], w[64], kids[96], c[64];

	snprintf(p, sizeof(p), "/proc/%d/wchan", (int)b->daemon);
	snprintf(kids, sizeof(kids), "/proc/%d/task/%d/children", (int)b->daemon, (int)b->daemon);
	while (!blind) {
		get(p, w, sizeof(w));
		/* idle: in epoll_wait, and no export child writing (a daemon
		 * that forks its exports, user/export/export_writer.h) */
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

long rss_kib(pid_t pid)
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
