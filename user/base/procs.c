// SPDX-License-Identifier: Apache-2.0
/* /proc look-ups for resync and for cpusetctl's liveness check (procs.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "procs.h"

/* The inode of namespace ns ("mnt", "pid") of pid (0 = self). */
static int ns_inode(int pid, const char *ns, uint64_t *ret)
{
	char path[64];
	struct stat st;

	if (pid)
		snprintf(path, sizeof(path), "/proc/%d/ns/%s", pid, ns);
	else
		snprintf(path, sizeof(path), "/proc/self/ns/%s", ns);
	if (stat(path, &st) < 0)
		return -errno;
	*ret = (uint64_t)st.st_ino;
	return 0;
}

int procs_mntns(int pid, uint64_t *ret)
{
	return ns_inode(pid, "mnt", ret);
}

int procs_pidns(int pid, uint64_t *ret)
{
	return ns_inode(pid, "pid", ret);
}

int procs_comm(int pid, char *buf, size_t len)
{
	char path[64], comm[32];
	ssize_t n;
	int fd;

	if (!len)
		return -EINVAL;
	if (pid)
		snprintf(path, sizeof(path), "/proc/%d/comm", pid);
	else
		snprintf(path, sizeof(path), "/proc/self/comm");
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, comm, sizeof(comm) - 1);
	close(fd);
	if (n < 0)
		return -errno;
	comm[n] = '\0';
	comm[strcspn(comm, "\n")] = '\0';
	snprintf(buf, len, "%s", comm);
	return 0;
}

static const char *const runtime_paths[] = {
	"/usr/sbin/runc", "/usr/bin/runc", "/usr/local/sbin/runc", "/usr/local/bin/runc",
	"/usr/bin/crun", "/usr/local/bin/crun",
};

int procs_runtime_binaries(struct procs_file_id *ret, int max)
{
	int n = 0;

	for (size_t i = 0; i < sizeof(runtime_paths) / sizeof(runtime_paths[0]) && n < max; i++) {
		struct stat st;

		if (stat(runtime_paths[i], &st) == 0 && S_ISREG(st.st_mode))
			ret[n++] = (struct procs_file_id){ (uint64_t)st.st_dev, (uint64_t)st.st_ino };
	}
	return n;
}

/* One task's part of procs_start_state. */
static int task_start_state(int pid, uint64_t runtime_mntns, const struct procs_file_id *rt,
			    int n_rt)
{
	char path[64], exe[64];
	struct stat st;
	uint64_t ns;
	ssize_t len;
	int r = procs_mntns(pid, &ns);

	if (r == -ENOENT || r == -ESRCH)
		return PROCS_NOT_STARTED;	/* gone (a zombie has no namespaces either) */
	if (r < 0)
		return PROCS_INIT_STAGE;	/* unreadable: could be anything */
	if (ns == runtime_mntns)
		return PROCS_NOT_STARTED;
	snprintf(path, sizeof(path), "/proc/%d/exe", pid);
	len = readlink(path, exe, sizeof(exe) - 1);
	if (len < 0)
		return errno == ENOENT || errno == ESRCH ? PROCS_NOT_STARTED : PROCS_INIT_STAGE;
	exe[len] = '\0';
	if (strncmp(exe, "/memfd:", 7) == 0)
		return PROCS_INIT_STAGE;
	if (stat(path, &st) < 0)
		return errno == ENOENT || errno == ESRCH ? PROCS_NOT_STARTED : PROCS_INIT_STAGE;
	for (int i = 0; i < n_rt; i++)
		if (rt[i].dev == (uint64_t)st.st_dev && rt[i].ino == (uint64_t)st.st_ino)
			return PROCS_INIT_STAGE;
	return PROCS_STARTED;
}

int procs_start_state(const int *pids, int n, uint64_t runtime_mntns,
		      const struct procs_file_id *rt, int n_rt)
{
	int state = PROCS_NOT_STARTED;

	for (int i = 0; i < n; i++) {
		int s = task_start_state(pids[i], runtime_mntns, rt, n_rt);

		if (s == PROCS_STARTED)
			return s;
		if (s == PROCS_INIT_STAGE)
			state = s;
	}
	return state;
}
