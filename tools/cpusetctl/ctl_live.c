// SPDX-License-Identifier: Apache-2.0
/* Is the daemon still running? (ctl_live.h) */
#include <stdio.h>
#include <string.h>
#include "ctl_live.h"

double ctl_live_stale_after_s(unsigned interval_s)
{
	return (double)CTL_LIVE_MISSED * interval_s + CTL_LIVE_SLACK_S;
}

enum ctl_live ctl_live_decide(const struct ctl_live_facts *f)
{
	if (f->state && strcmp(f->state, "stopped") == 0)
		return CTL_LIVE_STOPPED;
	if (f->seen == CTL_PID_GONE)
		return CTL_LIVE_GONE;
	if (f->seen == CTL_PID_ALIVE && f->comm && f->want_comm && f->want_comm[0] &&
	    strcmp(f->comm, f->want_comm) != 0)
		return CTL_LIVE_OTHER;
	/* a heartbeat ahead of now (clock stepped back) is not late */
	if (f->interval_s && f->beat > 0 &&
	    f->now - f->beat > ctl_live_stale_after_s(f->interval_s))
		return CTL_LIVE_STALE;
	return CTL_LIVE_RUNNING;
}

const char *ctl_live_age(double s, char *buf, size_t len)
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

const char *ctl_live_message(const struct ctl_live_facts *f, enum ctl_live v, char *buf,
			     size_t len)
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
