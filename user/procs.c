/* /proc look-ups for resync (procs.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "procs.h"

int procs_mntns(int pid, uint64_t *ret)
{
	char path[64];
	struct stat st;

	if (pid)
		snprintf(path, sizeof(path), "/proc/%d/ns/mnt", pid);
	else
		snprintf(path, sizeof(path), "/proc/self/ns/mnt");
	if (stat(path, &st) < 0)
		return -errno;
	*ret = (uint64_t)st.st_ino;
	return 0;
}

/* comm of pid into buf (16 bytes + NUL). Returns 0, -ENOENT, -errno. */
static int read_comm(int pid, char *buf, size_t len)
{
	char path[64];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/comm", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

int procs_any_started(const int *pids, int n, uint64_t runtime_mntns)
{
	for (int i = 0; i < n; i++) {
		char comm[32];
		uint64_t ns;
		int r = procs_mntns(pids[i], &ns);

		if (r == 0)
			r = read_comm(pids[i], comm, sizeof(comm));
		if (r == -ENOENT || r == -ESRCH)
			continue;
		if (r < 0)
			return r;
		if (ns != runtime_mntns && strncmp(comm, "runc:[", 6) != 0)
			return 1;
	}
	return 0;
}
