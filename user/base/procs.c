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

int procs_any_started(const int *pids, int n, uint64_t runtime_mntns)
{
	for (int i = 0; i < n; i++) {
		char comm[32];
		uint64_t ns;
		int r = procs_mntns(pids[i], &ns);

		if (r == 0)
			r = procs_comm(pids[i], comm, sizeof(comm));
		if (r == -ENOENT || r == -ESRCH)
			continue;
		if (r < 0)
			return r;
		if (ns != runtime_mntns && strncmp(comm, "runc:[", 6) != 0)
			return 1;
	}
	return 0;
}
