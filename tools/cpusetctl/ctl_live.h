/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Is the daemon that wrote a status.json still running? Decided from what
 * the file says (daemon.state, daemon.heartbeat, daemon.export_interval_s,
 * daemon.pid, daemon.comm) and what /proc says of that pid, so that the
 * file a dead daemon left behind is never taken for the live state.
 *
 * Pure (ctl_live.c): ctl_util.c gathers the facts, the unit test writes
 * them by hand.
 */
#ifndef CPUSETD_CTL_LIVE_H
#define CPUSETD_CTL_LIVE_H

#include <stddef.h>

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
double ctl_live_stale_after_s(unsigned interval_s);

/* The verdict on f, strongest evidence first. Cannot fail. */
enum ctl_live ctl_live_decide(const struct ctl_live_facts *f);

/* Seconds s as "42 s", "17 min", "5 h", "3 d" (rounded down) into buf[len];
 * returns buf. Cannot fail. */
const char *ctl_live_age(double s, char *buf, size_t len);

/*
 * The one line that says why verdict v is not RUNNING, into buf[len]
 * (truncated to fit), e.g. "status is 42 s old (heartbeat every 10 s):
 * daemon not running? pid 1234 is gone". "" for CTL_LIVE_RUNNING.
 * Returns buf. Cannot fail.
 */
const char *ctl_live_message(const struct ctl_live_facts *f, enum ctl_live v, char *buf,
			     size_t len);

#endif
