// SPDX-License-Identifier: Apache-2.0
/* One daemon per node state (instance_lock.h). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include "instance_lock.h"

pid_t instance_lock_holder(int fd)
{
	char line[256];
	struct stat st;
	FILE *f;
	pid_t pid = 0;

	if (fstat(fd, &st) < 0)
		return -errno;
	f = fopen("/proc/locks", "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		unsigned maj, min;
		unsigned long long ino;
		int p;

		/* "1: FLOCK  ADVISORY  WRITE 1234 00:2a:5678 0 EOF"; a waiter
		 * line starts "1: -> FLOCK" and is skipped by the format. */
		if (sscanf(line, "%*d: FLOCK %*s %*s %d %x:%x:%llu", &p, &maj, &min, &ino) != 4)
			continue;
		if (ino == (unsigned long long)st.st_ino && maj == major(st.st_dev) &&
		    min == minor(st.st_dev) && p > 0) {
			pid = p;
			break;
		}
	}
	fclose(f);
	return pid;
}

/* flock fd, or say who holds it. */
static int lock_fd(int fd, pid_t *holder)
{
	if (flock(fd, LOCK_EX | LOCK_NB) == 0)
		return 0;
	if (errno != EWOULDBLOCK)
		return -errno;
	*holder = instance_lock_holder(fd);
	if (*holder < 0)
		*holder = 0;
	return -EWOULDBLOCK;
}

static int lock_state(const char *state_dir, int *ret, pid_t *holder)
{
	char path[PATH_MAX], pid[32];
	struct stat st;
	int fd, r;

	if (snprintf(path, sizeof(path), "%s/%s", state_dir, INSTANCE_LOCK_FILE) >=
	    (int)sizeof(path))
		return -ENAMETOOLONG;
	/* No O_TRUNC: the holder's PID stays until we own the lock.
	 * O_NOFOLLOW: a symlink planted at the name is refused (ELOOP), so
	 * O_CREAT never makes or opens a file elsewhere. */
	fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	/* We write our PID into it: only a file that is ours. A FIFO or
	 * device planted at the name is not a lock file, nor a hard link to
	 * another file (it would get our PID), nor another user's file. */
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
		r = -EINVAL;
	else if (st.st_nlink != 1)
		r = -EMLINK;
	else if (st.st_uid != geteuid())
		r = -EPERM;
	else
		r = lock_fd(fd, holder);
	if (r == 0) {
		int n = snprintf(pid, sizeof(pid), "%d\n", (int)getpid());

		if (ftruncate(fd, 0) < 0 || pwrite(fd, pid, (size_t)n, 0) != n)
			r = -errno;
	}
	if (r < 0) {
		close(fd);
		return r;
	}
	*ret = fd;
	return 0;
}

static int lock_pin_dir(const char *pin_dir, int *ret, pid_t *holder)
{
	int fd, r;

	if (mkdir(pin_dir, 0700) < 0 && errno != EEXIST)
		return -errno;
	fd = open(pin_dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	r = lock_fd(fd, holder);
	if (r < 0) {
		close(fd);
		return r;
	}
	*ret = fd;
	return 0;
}

int instance_lock_take(const char *state_dir, const char *pin_dir, struct instance_lock *ret,
		       pid_t *holder, const char **what)
{
	struct instance_lock l = { .state_fd = -1, .pin_fd = -1 };
	int r;

	*holder = 0;
	*what = state_dir;
	r = state_dir[0] ? lock_state(state_dir, &l.state_fd, holder) : 0;
	if (r == 0 && pin_dir[0]) {
		*what = pin_dir;
		r = lock_pin_dir(pin_dir, &l.pin_fd, holder);
	}
	if (r < 0) {
		instance_lock_release(&l);
		return r;
	}
	*ret = l;
	return 0;
}

void instance_lock_release(struct instance_lock *l)
{
	if (l->state_fd >= 0)
		close(l->state_fd);
	if (l->pin_fd >= 0)
		close(l->pin_fd);
	l->state_fd = l->pin_fd = -1;
}

const char *instance_lock_why(int err)
{
	switch (err) {
	case -ELOOP:
		return INSTANCE_LOCK_FILE " is a symbolic link";
	case -EINVAL:
		return INSTANCE_LOCK_FILE " is not a regular file";
	case -EMLINK:
		return INSTANCE_LOCK_FILE " has more than one link (a hard link to another file)";
	case -EPERM:
		return INSTANCE_LOCK_FILE " is not owned by cpusetd's user";
	default:
		return strerror(-err);
	}
}
