// SPDX-License-Identifier: Apache-2.0
/*
 * The daemon's own scheduling (systemd/README.md "Scheduling"): SCHED_FIFO (or a
 * nice value) on every thread, and the reserved CPUs when there are any,
 * so a busy node does not delay placements behind its own load.
 */
#include <dirent.h>
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include "self_sched.h"
#include "user/base/log.h"

static const char *sched_name(int policy)
{
	return policy == SCHED_FIFO ? "SCHED_FIFO" : policy == SCHED_RR ? "SCHED_RR" : "SCHED_OTHER";
}

/* Calls fn(tid, arg) for every thread of ours (/proc/self/task; only
 * this one when /proc is not there). Returns 0 or fn's first -errno,
 * after trying every thread. */
static int each_thread(int (*fn)(pid_t tid, const void *arg), const void *arg)
{
	DIR *dir = opendir("/proc/self/task");
	struct dirent *de;
	int r = 0, e;

	if (!dir)
		return fn(0, arg);
	while ((de = readdir(dir))) {
		if (de->d_name[0] == '.')
			continue;
		e = fn((pid_t)atoi(de->d_name), arg);
		if (e < 0 && !r)
			r = e;
	}
	closedir(dir);
	return r;
}

/* Sets the config's policy and priority (or nice) on thread tid, unless
 * it has them already (set by the service manager, which may also have
 * forbidden the call: RestrictRealtime=). Returns 0 or -errno. */
static int set_thread_sched(pid_t tid, const void *arg)
{
	const struct cpusetd_config *c = arg;
	struct sched_param sp = { .sched_priority = (int)c->sched_priority };
	struct sched_param cur = { 0 };
	int policy = sched_getscheduler(tid);

	if (policy < 0 || sched_getparam(tid, &cur) < 0)
		return -errno;
	if ((policy & ~SCHED_RESET_ON_FORK) != c->sched_policy || cur.sched_priority != sp.sched_priority)
		if (sched_setscheduler(tid, c->sched_policy, &sp) < 0)
			return -errno;
	if (c->sched_policy != SCHED_OTHER)
		return 0;
	errno = 0;
	if (getpriority(PRIO_PROCESS, (id_t)tid) == c->nice && !errno)
		return 0;
	return setpriority(PRIO_PROCESS, (id_t)tid, c->nice) < 0 ? -errno : 0;
}

static int set_thread_cpus(pid_t tid, const void *arg)
{
	return sched_setaffinity(tid, sizeof(cpu_set_t), arg) < 0 ? -errno : 0;
}

/* "SCHED_FIFO priority 10" or "SCHED_OTHER nice 0", into buf. */
static const char *sched_text(int policy, int prio, int nice, char *buf, size_t len)
{
	if (policy == SCHED_OTHER)
		snprintf(buf, len, "%s nice %d", sched_name(policy), nice);
	else
		snprintf(buf, len, "%s priority %d", sched_name(policy), prio);
	return buf;
}

/*
 * Every thread on the reserved CPUs that are online (kubelet's
 * reservedSystemCPUs, where system daemons belong), when there are any
 * and run_on_reserved_cpus is set. where[len] says which CPUs, or why
 * not. Returns 0 (set), 1 (left on every CPU), or -errno.
 */
static int set_cpus(const struct cpusetd_config *c, const struct cpumask *online, char *where,
		    size_t len)
{
	const struct cpumask *reserved = &c->policy.reserved_cpus;
	char list[CPULIST_MAX];
	struct cpumask m;
	cpu_set_t set;
	int cpu;

	if (!c->run_on_reserved_cpus || cpumask_empty(reserved)) {
		snprintf(where, len, "every CPU (%s)", c->run_on_reserved_cpus ?
			 "no reserved_cpus" : "run_on_reserved_cpus = false");
		return 1;
	}
	cpumask_and(&m, reserved, online);
	if (cpumask_empty(&m)) {
		cpulist_format(reserved, list, sizeof(list));
		snprintf(where, len, "every CPU (no reserved CPU of %s is online)", list);
		return 1;
	}
	CPU_ZERO(&set);
	cpumask_for_each(cpu, &m)
		if (cpu < CPU_SETSIZE)
			CPU_SET(cpu, &set);
	cpulist_format(&m, list, sizeof(list));
	snprintf(where, len, "the reserved CPUs %s", list);
	return each_thread(set_thread_cpus, &set);
}

void self_sched_apply(const struct cpusetd_config *c, const struct cpumask *online)
{
	char want[48], now[48], what[160], where[CPULIST_MAX + 64], on[CPULIST_MAX + 128];
	struct sched_param sp = { 0 };
	int rs = each_thread(set_thread_sched, c), rc = set_cpus(c, online, where, sizeof(where));
	int policy = sched_getscheduler(0) & ~SCHED_RESET_ON_FORK;

	sched_getparam(0, &sp);
	sched_text(c->sched_policy, (int)c->sched_priority, c->nice, want, sizeof(want));
	sched_text(policy, sp.sched_priority, getpriority(PRIO_PROCESS, 0), now, sizeof(now));
	if (rs < 0)
		snprintf(what, sizeof(what), "cannot set %s (%s), running %s", want, strerror(-rs),
			 now);
	else
		snprintf(what, sizeof(what), "%s", want);
	if (rc < 0)
		snprintf(on, sizeof(on), "cannot run on %s (%s)", where, strerror(-rc));
	else
		snprintf(on, sizeof(on), "on %s", where);
	if (rs < 0 || rc < 0)
		log_warn("scheduling: %s, %s%s", what, on,
			 rs < 0 ? "; a busy node delays placements (README \"Scheduling\")" : "");
	else
		log_info("scheduling: %s, %s", what, on);
}

void self_sched_follow_cpus(const struct cpusetd_config *c, const struct cpumask *online)
{
	char where[CPULIST_MAX + 64];
	int r = set_cpus(c, online, where, sizeof(where));

	if (r < 0)
		log_warn("scheduling: cannot run on %s: %s", where, strerror(-r));
}
