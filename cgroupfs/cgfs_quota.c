// SPDX-License-Identifier: Apache-2.0
/*
 * CFS bandwidth writes and the mark that remembers a limit we lifted.
 *
 * The quota lives in the cpu controller's hierarchy: cpu.max on v2
 * ("<quota|max> <period>", cgroup-v2.rst "CPU Interface Files"),
 * cpu.cfs_quota_us / cpu.cfs_period_us on v1 (-1 = no limit,
 * scheduler/sched-bwc.rst). The mark is an extended attribute of the
 * same cgroup directory: kernfs keeps trusted.* attributes in memory for
 * as long as the cgroup lives (systemd keeps trusted.invocation_id there
 * the same way), so it survives a crash of the daemon and goes away with
 * the cgroup, and only CAP_SYS_ADMIN can set it.
 *
 * The quota a pod gets back (cgfs_quota_pod_restore_us) is here too,
 * pure: the daemon (controller_quota.c) and cpusetd --release
 * (user/release) put limits back by the same rule.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/xattr.h>
#include <unistd.h>
#include "cgfs_internal.h"

/* kernel/sched/core.c: 1 ms <= period <= 1 s (both v1 and v2). */
#define PERIOD_MIN_US	1000
#define PERIOD_MAX_US	1000000

int cgfs_quota_format(int64_t quota_us, uint64_t period_us, char *buf, size_t len)
{
	int n;

	if (!buf || quota_us <= 0 || period_us < PERIOD_MIN_US || period_us > PERIOD_MAX_US)
		return -EINVAL;
	n = snprintf(buf, len, "%" PRId64 " %" PRIu64, quota_us, period_us);
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

int cgfs_quota_parse(const char *text, size_t len, int64_t *quota_us, uint64_t *period_us)
{
	char buf[64], *end;
	long long q;
	unsigned long long p;

	if (!text || !quota_us || !period_us || len == 0 || len >= sizeof(buf))
		return -EINVAL;
	memcpy(buf, text, len);
	buf[len] = '\0';
	/* Digits only: strtoll would take signs, spaces and hex prefixes. */
	if (strspn(buf, "0123456789 ") != len || buf[0] == ' ')
		return -EINVAL;
	errno = 0;
	q = strtoll(buf, &end, 10);
	if (errno || *end != ' ' || end[1] == ' ' || end[1] == '\0')
		return -EINVAL;
	p = strtoull(end + 1, &end, 10);
	if (errno || *end || q <= 0 || p < PERIOD_MIN_US || p > PERIOD_MAX_US)
		return -EINVAL;
	*quota_us = q;
	*period_us = p;
	return 0;
}

int cgfs_write_cpu_quota(struct cgfs *cg, const char *path, int64_t quota_us, uint64_t period_us)
{
	char buf[64];
	int64_t cur_q;
	uint64_t cur_p;
	int r;

	if (!cg || !path || (quota_us != -1 && quota_us <= 0) ||
	    period_us < PERIOD_MIN_US || period_us > PERIOD_MAX_US)
		return -EINVAL;
	if (cg->cpu_fd < 0)
		return -EOPNOTSUPP;
	if (cg->cpu_on_v2) {
		if (quota_us < 0)
			snprintf(buf, sizeof(buf), "max %" PRIu64, period_us);
		else
			snprintf(buf, sizeof(buf), "%" PRId64 " %" PRIu64, quota_us, period_us);
		return cgfs__write_text(cg->cpu_fd, path, "cpu.max", buf);
	}
	/* v1: the period first when it changes, so the quota lands on it;
	 * lifting a limit leaves the period alone. */
	if (quota_us > 0) {
		r = cgfs_read_cpu_quota(cg, path, &cur_q, &cur_p);
		if (r < 0)
			return r;
		if (cur_p != period_us) {
			snprintf(buf, sizeof(buf), "%" PRIu64, period_us);
			r = cgfs__write_text(cg->cpu_fd, path, "cpu.cfs_period_us", buf);
			if (r < 0)
				return r;
		}
	}
	snprintf(buf, sizeof(buf), "%" PRId64, quota_us);
	return cgfs__write_text(cg->cpu_fd, path, "cpu.cfs_quota_us", buf);
}

/* The cgroup directory in the cpu hierarchy, for its attributes. */
static int open_dir(struct cgfs *cg, const char *path)
{
	if (!cg || !path)
		return -EINVAL;
	if (cg->cpu_fd < 0)
		return -EOPNOTSUPP;
	return cgfs__open(cg->cpu_fd, path, NULL, O_RDONLY | O_DIRECTORY);
}

int cgfs_quota_saved_read(struct cgfs *cg, const char *path, int64_t *quota_us,
			  uint64_t *period_us)
{
	char buf[64];
	ssize_t n;
	int fd = open_dir(cg, path), r;

	if (fd < 0)
		return fd;
	n = fgetxattr(fd, CGFS_QUOTA_XATTR, buf, sizeof(buf));
	r = n < 0 ? -errno : 0;
	close(fd);
	if (r == -ERANGE)
		return -EINVAL;		/* longer than any mark we write */
	if (r < 0)
		return r == -ENODEV ? -ENOENT : r;
	return cgfs_quota_parse(buf, (size_t)n, quota_us, period_us);
}

int cgfs_quota_saved_write(struct cgfs *cg, const char *path, int64_t quota_us,
			   uint64_t period_us)
{
	char buf[64];
	int fd, r = cgfs_quota_format(quota_us, period_us, buf, sizeof(buf));

	if (r < 0)
		return r;
	fd = open_dir(cg, path);
	if (fd < 0)
		return fd;
	r = fsetxattr(fd, CGFS_QUOTA_XATTR, buf, strlen(buf), 0) < 0 ? -errno : 0;
	close(fd);
	return r == -ENODEV ? -ENOENT : r;
}

int cgfs_quota_saved_clear(struct cgfs *cg, const char *path)
{
	int fd = open_dir(cg, path), r;

	if (fd < 0)
		return fd;
	r = fremovexattr(fd, CGFS_QUOTA_XATTR) < 0 ? -errno : 0;
	close(fd);
	if (r == -ENODATA)
		return 0;
	return r == -ENODEV ? -ENOENT : r;
}

/* q / p µs per period, in pod_p periods, rounded up (a pod never below). */
static int64_t scale_us(int64_t q, uint64_t p, uint64_t pod_p)
{
	return (int64_t)(((uint64_t)q * pod_p + p - 1) / p);
}

int64_t cgfs_quota_pod_restore_us(int64_t saved_us, uint64_t saved_period_us,
				  uint64_t pod_period_us, const int64_t *quota_us,
				  const uint64_t *period_us, size_t n)
{
	int64_t best = 0, sum = 0;

	if (!pod_period_us)
		return -EINVAL;
	if (saved_us > 0 && saved_period_us)
		best = scale_us(saved_us, saved_period_us, pod_period_us);
	for (size_t i = 0; i < n; i++) {
		if (quota_us[i] <= 0 || !period_us[i]) {
			sum = 0;	/* one without a limit: kubelet sets none */
			break;
		}
		sum += scale_us(quota_us[i], period_us[i], pod_period_us);
	}
	if (sum > best)
		best = sum;
	return best > 0 ? best : -EINVAL;
}
