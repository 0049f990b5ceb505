// SPDX-License-Identifier: Apache-2.0
/*
 * Foreign cpuset writes through fanotify (fanotify_hook.h says why).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/fanotify.h>
#include <sys/stat.h>
#include "fanotify_hook.h"
#include "user/base/log.h"

/* include/linux/exportfs.h: the handle kernfs encodes, its node id. */
#define FILEID_KERNFS 0xfe

struct fanotify_hook {
	int fd;
	int mnt_fd;		/* for open_by_handle_at when a handle is not kernfs' */
	bool dfid;		/* FAN_REPORT_DFID_NAME, else classic (fd per event) */
	pid_t self;
	uint64_t overflows;
};

/* One fanotify group in the given report mode with the filesystem mark.
 * Returns the fd or -errno. */
static int init_marked(const char *mnt, unsigned int report)
{
	int fd = fanotify_init(FAN_CLASS_NOTIF | FAN_CLOEXEC | FAN_NONBLOCK | report,
			       O_RDONLY | O_CLOEXEC | O_LARGEFILE);
	int err;

	if (fd < 0)
		return -errno;
	if (fanotify_mark(fd, FAN_MARK_ADD | FAN_MARK_FILESYSTEM, FAN_MODIFY, AT_FDCWD, mnt) < 0) {
		err = -errno;
		close(fd);
		return err;
	}
	return fd;
}

int fanotify_hook_open(const char *mnt, struct fanotify_hook **ret)
{
	struct fanotify_hook *h;
	int fd;

	if (!mnt || !ret)
		return -EINVAL;
	h = calloc(1, sizeof(*h));
	if (!h)
		return -ENOMEM;
	h->mnt_fd = -1;
	h->self = getpid();
	/* Names and directory handles first: no fd is opened per event. Older
	 * kernels refuse that mode where the filesystem has no fsid. */
	fd = init_marked(mnt, FAN_REPORT_DFID_NAME);
	h->dfid = fd >= 0;
	if (fd < 0) {
		log_debug("fanotify: DFID_NAME mark on %s refused (%s); classic mode", mnt,
			  strerror(-fd));
		fd = init_marked(mnt, 0);
	}
	if (fd < 0) {
		log_debug("fanotify: mark on %s refused: %s", mnt, strerror(-fd));
		free(h);
		return fd;
	}
	h->fd = fd;
	log_debug("fanotify: FAN_MODIFY mark on the filesystem of %s (%s mode)", mnt,
		  h->dfid ? "dfid" : "fd");
	if (h->dfid)
		h->mnt_fd = open(mnt, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	*ret = h;
	return 0;
}

void fanotify_hook_free(struct fanotify_hook *h)
{
	if (!h)
		return;
	close(h->fd);	/* the group and its mark go with it */
	if (h->mnt_fd >= 0)
		close(h->mnt_fd);
	free(h);
}

int fanotify_hook_fd(const struct fanotify_hook *h)
{
	return h->fd;
}

uint64_t fanotify_hook_overflows(const struct fanotify_hook *h)
{
	return h->overflows;
}

const char *fanotify_hook_mode(const struct fanotify_hook *h)
{
	return h->dfid ? "dfid" : "fd";
}

/* CPUSETD_FILE_CPUS/MEMS for a cpuset file name (v1 "noprefix" mounts
 * drop the "cpuset." prefix), else CPUSETD_FILE_OTHER. */
static uint32_t file_kind(const char *name)
{
	if (strncmp(name, "cpuset.", 7) == 0)
		name += 7;
	if (strcmp(name, "cpus") == 0)
		return CPUSETD_FILE_CPUS;
	if (strcmp(name, "mems") == 0)
		return CPUSETD_FILE_MEMS;
	return CPUSETD_FILE_OTHER;
}

/* The writer's comm, or "(exited)" when it is gone already. */
static void read_comm(pid_t pid, char *buf, size_t len)
{
	char path[32];
	ssize_t n = -1;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		n = read(fd, buf, len - 1);
		close(fd);
	}
	if (n <= 0) {
		snprintf(buf, len, "(exited)");
		return;
	}
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
}

/* The cgroup id behind a directory handle: kernfs' handle is the node id
 * itself; any other shape is opened and stat'ed. Returns 0 or -errno. */
static int handle_id(const struct fanotify_hook *h, struct file_handle *fh, uint64_t *ret)
{
	struct stat st;
	int fd;

	if (fh->handle_type == FILEID_KERNFS && fh->handle_bytes == sizeof(*ret)) {
		memcpy(ret, fh->f_handle, sizeof(*ret));
		return 0;
	}
	fd = open_by_handle_at(h->mnt_fd, fh, O_PATH | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0) {
		close(fd);
		return -errno;
	}
	close(fd);
	*ret = st.st_ino;
	return 0;
}

/* DFID_NAME mode: the directory's id and the file's name from the info
 * record. Returns 0, or -ENOENT when the event carries none. */
static int from_dfid(const struct fanotify_hook *h, const struct fanotify_event_metadata *m,
		     uint64_t *ret_id, uint32_t *ret_kind)
{
	const char *p = (const char *)m + m->metadata_len;
	const char *end = (const char *)m + m->event_len;

	while (p + sizeof(struct fanotify_event_info_header) <= end) {
		const struct fanotify_event_info_header *hdr = (const void *)p;
		struct fanotify_event_info_fid *fid = (void *)p;
		struct file_handle *fh = (void *)fid->handle;

		if (hdr->len < sizeof(*fid) + sizeof(*fh) || p + hdr->len > end)
			return -ENOENT;
		if (hdr->info_type == FAN_EVENT_INFO_TYPE_DFID_NAME &&
		    sizeof(*fid) + sizeof(*fh) + fh->handle_bytes < hdr->len) {
			*ret_kind = file_kind((const char *)fh->f_handle + fh->handle_bytes);
			if (*ret_kind == CPUSETD_FILE_OTHER)
				return 0;
			return handle_id(h, fh, ret_id);
		}
		p += hdr->len;
	}
	return -ENOENT;
}

/* Classic mode: the event's fd names the file; its directory's st_ino is
 * the cgroup id. Returns 0 or -errno. */
static int from_fd(int fd, uint64_t *ret_id, uint32_t *ret_kind)
{
	char link[32], path[PATH_MAX];
	struct stat st;
	char *slash;
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, path, sizeof(path) - 1);
	if (n <= 0)
		return -errno;
	path[n] = '\0';
	slash = strrchr(path, '/');
	if (!slash)
		return -ENOENT;
	*ret_kind = file_kind(slash + 1);
	if (*ret_kind == CPUSETD_FILE_OTHER)
		return 0;
	*slash = '\0';
	if (stat(path, &st) < 0)
		return -errno;
	*ret_id = st.st_ino;
	return 0;
}

/* Turns one event into a handler call. Returns 1 when handed over, 0 when
 * not a cpuset write of another process, or the handler's negative. */
static int one_event(struct fanotify_hook *h, const struct fanotify_event_metadata *m,
		     int (*handler)(const struct cpusetd_event *ev, void *ctx), void *ctx)
{
	struct cpusetd_event ev = { .type = CPUSETD_EV_CPUSET_WRITE };
	struct timespec ts;
	uint64_t id = 0;
	uint32_t kind = CPUSETD_FILE_OTHER;
	int r;

	if (m->mask & FAN_Q_OVERFLOW) {
		h->overflows++;
		return 0;
	}
	if (m->pid == h->self || !(m->mask & FAN_MODIFY)) {
		if (m->fd >= 0)
			close(m->fd);
		return 0;
	}
	if (h->dfid) {
		r = from_dfid(h, m, &id, &kind);
	} else {
		r = from_fd(m->fd, &id, &kind);
		close(m->fd);
	}
	if (r < 0) {
		/* The cgroup went away before we looked: nothing to defend. */
		log_debug("fanotify: event of pid %d not resolved: %s", (int)m->pid, strerror(-r));
		return 0;
	}
	if (kind == CPUSETD_FILE_OTHER)
		return 0;
	ev.cgroup_id = id;
	ev.arg = kind;
	ev.pid = (uint32_t)m->pid;
	read_comm(m->pid, ev.comm, sizeof(ev.comm));
	clock_gettime(CLOCK_MONOTONIC, &ts);
	ev.ts_ns = (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
	r = handler(&ev, ctx);
	return r < 0 ? r : 1;
}

int fanotify_hook_poll(struct fanotify_hook *h,
		       int (*handler)(const struct cpusetd_event *ev, void *ctx), void *ctx)
{
	char buf[8192] __attribute__((aligned(__alignof__(struct fanotify_event_metadata))));
	const struct fanotify_event_metadata *m;
	int handled = 0, r = 0;
	ssize_t len;

	for (;;) {
		len = read(h->fd, buf, sizeof(buf));
		if (len < 0)
			return errno == EAGAIN ? handled : -errno;
		if (len == 0)
			return handled;
		/* Every event is walked even after a handler error, so each
		 * classic-mode fd is closed. */
		for (m = (const void *)buf; FAN_EVENT_OK(m, len); m = FAN_EVENT_NEXT(m, len)) {
			int one = r < 0 ? 0 : one_event(h, m, handler, ctx);

			if (r < 0 && !h->dfid && m->fd >= 0)
				close(m->fd);
			if (one < 0)
				r = one;
			else
				handled += one;
		}
		if (r < 0)
			return r;
	}
}
