/*
 * Is the daemon that wrote a status.json still running? Decided from what
 * the file says (daemon.state, daemon.heartbeat, daemon.export_interval_s,
 * daemon.pid, daemon.comm) and what /proc says of that pid, so that the
 * file a dead daemon left behind is never taken for the live state.
 *
 * Pure: ctl_util.c gathers the facts, the unit test writes them by hand.
 * Header-only because cpusetctl and tests/unit/test_ctl_live.c both
 * compile it and share no library of cpusetctl's own.
 */
#ifndef CPUSETD_CTL_LIVE_H
#define CPUSETD_CTL_LIVE_H

#include <stdio.h>
#include <string.h>

/* A heartbeat is stale after CTL_LIVE_MISSED periods plus the slack: the
 * daemon writes one every period, and a long resync of a big node or a
 * slow disk may hold one or two back. */
#define CTL_LIVE_MISSED		3
#define CTL_LIVE_SLACK_S	5

enum ctl_live {
	CTL_LIVE_RUNNING,	/* nothing says otherwise */
	CTL_LIVE_STOPPED,	/* it wrote "stopped" at a clean stop (SIGTERM) */
	CTL_LIVE_GONE,		/* no process has its pid */
	CTL_LIVE_OTHER,		/* its pid belongs to another program now */
	CTL_LIVE_STALE,		/* its heartbeat is late: hung, or dead unseen */
};

enum ctl_pid_seen {
	CTL_PID_UNCHECKED,	/* no pid, or another PID namespace: PIDs mean nothing */
	CTL_PID_GONE,
	CTL_PID_ALIVE,
};

/* What status.json and /proc say. Strings must be printable (cleaned). */
struct ctl_live_facts {
	const char *state;	/* daemon.state; NULL = absent (older daemon) */
	double beat;		/* daemon.heartbeat, else "updated": unix s; 0 = neither */
	unsigned interval_s;	/* daemon.export_interval_s, s; 0 = absent: age not judged */
	long long pid;		/* daemon.pid; 0 = absent */
	const char *want_comm;	/* daemon.comm ("" = absent: not compared) */
	enum ctl_pid_seen seen;
	const char *comm;	/* /proc/<pid>/comm when seen ALIVE; NULL = unreadable */
	double now;		/* unix s */
};

/* The age in seconds past which a heartbeat every interval_s seconds is
 * stale. Cannot fail. */
static inline double ctl_live_stale_after_s(unsigned interval_s)
{
	return (double)CTL_LIVE_MISSED * interval_s + CTL_LIVE_SLACK_S;
}

/* The verdict on f, strongest evidence first. Cannot fail. */
static inline enum ctl_live ctl_live_decide(const struct ctl_live_facts *f)
{
	if (f->state && strcmp(f->state, "stopped") == 0)
		return CTL_LIVE_STOPPED;
	if (f->seen == CTL_PID_GONE)
		return CTL_LIVE_GONE;
	if (f->seen == CTL_PID_ALIVE && f->comm && f->want_comm && f->want_comm[0] &&
	    strcmp(f->comm, f->want_comm) != 0)
		return CTL_LIVE_OTHER;
	/* a heartbeat ahead of now (clock stepped back) is not late */
	if (f->interval_s && f->beat > 0 && f->now - f->beat > ctl_live_stale_after_s(f->interval_s))
		return CTL_LIVE_STALE;
	return CTL_LIVE_RUNNING;
}

/* Seconds s as "42 s", "17 min", "5 h", "3 d" (rounded down) into buf[len];
 * returns buf. Cannot fail. */
static inline const char *ctl_live_age(double s, char *buf, size_t len)
{
	long long n = s > 0 ? (long long)s : 0;

	if (n < 120)
		snprintf(buf, len, "%lld s", n);
	else if (n < 7200)
		snprintf(buf, len, "%lld min", n / 60);
	else if (n < 172800)
		snprintf(buf, len, "%lld h", n / 3600);
	else
		snprintf(buf, len, "%lld d", n / 86400);
	return buf;
}

/*
 * The one line that says why verdict v is not RUNNING, into buf[len]
 * (truncated to fit), e.g. "status is 42 s old (heartbeat every 10 s):
 * daemon not running? pid 1234 is gone". "" for CTL_LIVE_RUNNING.
 * Returns buf. Cannot fail.
 */
static inline const char *ctl_live_message(const struct ctl_live_facts *f, enum ctl_live v,
					   char *buf, size_t len)
{
	char age[32], every[48] = "", why[160];

	if (v == CTL_LIVE_RUNNING) {
		snprintf(buf, len, "%s", "");
		return buf;
	}
	if (f->interval_s && v != CTL_LIVE_STOPPED)
		snprintf(every, sizeof(every), " (heartbeat every %u s)", f->interval_s);
	if (v == CTL_LIVE_STOPPED)
		snprintf(why, sizeof(why), "daemon not running: pid %lld stopped cleanly", f->pid);
	else if (v == CTL_LIVE_GONE)
		snprintf(why, sizeof(why), "daemon not running? pid %lld is gone", f->pid);
	else if (v == CTL_LIVE_OTHER)
		snprintf(why, sizeof(why), "daemon not running? pid %lld is now '%.16s', not '%.16s'",
			 f->pid, f->comm, f->want_comm);
	else if (f->seen == CTL_PID_ALIVE)
		snprintf(why, sizeof(why), "daemon not running or hung? pid %lld is still there",
			 f->pid);
	else if (f->pid > 0)
		snprintf(why, sizeof(why), "daemon not running? (pid %lld cannot be checked "
			 "from this PID namespace)", f->pid);
	else
		snprintf(why, sizeof(why), "daemon not running?");
	if (f->beat > 0)
		snprintf(buf, len, "status is %s old%s: %s",
			 ctl_live_age(f->now - f->beat, age, sizeof(age)), every, why);
	else
		snprintf(buf, len, "status has no time: %s", why);
	return buf;
}

#endif
