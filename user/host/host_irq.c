// SPDX-License-Identifier: Apache-2.0
/*
 * IRQ affinity and the unbound workqueue cpumask.
 *
 *   /proc/irq/N/smp_affinity_list   cpulist, per IRQ (core-api/irq/irq-affinity.rst);
 *                                   managed and per-CPU IRQs refuse a write (EIO)
 *   /proc/irq/default_smp_affinity  hex mask, for IRQs set up later
 *   /sys/devices/virtual/workqueue/cpumask
 *                                   hex mask of the CPUs unbound workqueues run on
 *                                   (core-api/workqueue.rst)
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "host_internal.h"

/* A small proc or sysfs file into buf (NUL-terminated); sysfs says 4096
 * for its size whatever it holds, so the size is not asked. 0 or -errno. */
static int read_small(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	if (n < 0)
		n = -errno;
	close(fd);
	if (n < 0)
		return (int)n;
	buf[n] = '\0';
	return 0;
}

/* One write(2) of text; the kernel's refusal as -errno. */
static int write_text(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_NOFOLLOW | O_CLOEXEC), r = 0;

	if (fd < 0)
		return -errno;
	if (write(fd, text, strlen(text)) < 0)
		r = -errno;
	close(fd);
	return r;
}

static void irq_path(const struct host *h, enum host_kind kind, const char *key, char *buf,
		     size_t len)
{
	if (kind == HOST_IRQ)
		snprintf(buf, len, "%s/irq/%s/smp_affinity_list", h->o.proc, key);
	else if (kind == HOST_IRQ_DEFAULT)
		snprintf(buf, len, "%s/irq/default_smp_affinity", h->o.proc);
	else
		snprintf(buf, len, "%s/devices/virtual/workqueue/cpumask", h->o.sys);
}

/* The live value of one thing. 0, -ENOENT (not on this kernel), -errno. */
static int read_thing(const struct host *h, enum host_kind kind, const char *key,
		      struct cpumask *ret)
{
	char path[300], text[CPULIST_MAX];
	int r;

	irq_path(h, kind, key, path, sizeof(path));
	r = read_small(path, text, sizeof(text));
	if (r < 0)
		return r;
	text[strcspn(text, "\n")] = '\0';
	return kind == HOST_IRQ ? cpulist_parse(text, ret) : cpumask_parse_hex(text, ret);
}

int host_irq_write(struct host *h, enum host_kind kind, const char *key, const struct cpumask *m)
{
	char path[300], text[CPULIST_MAX];

	irq_path(h, kind, key, path, sizeof(path));
	if (kind == HOST_IRQ)
		cpulist_format(m, text, sizeof(text));
	else if (cpumask_format_hex(m, text, sizeof(text)) < 0)
		return -ENOSPC;
	return write_text(path, text);
}

static int plan_thing(struct host *h, enum host_kind kind, const char *key,
		      const struct cpumask *online, const struct cpumask *host, bool active)
{
	struct cpumask cur;
	int r = read_thing(h, kind, key, &cur);

	if (r < 0)
		return 0;	/* gone, or not on this kernel */
	cpumask_and(&cur, &cur, online);
	if (cpumask_empty(&cur))
		return 0;
	r = host_plan_thing(h, kind, key, 0, 0, &cur, host, active, NULL, NULL);
	if (r == 1) {
		if (kind == HOST_IRQ)
			h->st.irqs_refused++;
		host_reason(h, "%s %s: its affinity is all exclusive; left as it is",
			    kind == HOST_IRQ ? "irq" : kind == HOST_IRQ_DEFAULT ?
			    "default IRQ affinity" : "workqueue cpumask", key);
	}
	return r < 0 ? r : 0;
}

int host_irq_plan(struct host *h, const struct cpumask *online, const struct cpumask *host,
		  bool active)
{
	char path[300];
	struct dirent *de;
	DIR *d;
	int r = 0;

	snprintf(path, sizeof(path), "%s/irq", h->o.proc);
	d = opendir(path);
	if (!d)
		return -errno;
	while (r == 0 && (de = readdir(d)))
		if (isdigit((unsigned char)de->d_name[0]) &&
		    strspn(de->d_name, "0123456789") == strlen(de->d_name))
			r = plan_thing(h, HOST_IRQ, de->d_name, online, host, active);
	closedir(d);
	if (r == 0)
		r = plan_thing(h, HOST_IRQ_DEFAULT, "", online, host, active);
	if (r == 0)
		r = plan_thing(h, HOST_WORKQUEUE, "", online, host, active);
	return r;
}
