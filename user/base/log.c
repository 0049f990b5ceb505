// SPDX-License-Identifier: Apache-2.0
/*
 * Logging: the journal's native protocol when stderr is the journal
 * stream, else one timestamped line per message on stderr (log.h).
 */
#define SD_JOURNAL_SUPPRESS_LOCATION	/* CODE_FILE=log.c would say nothing */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <systemd/sd-journal.h>
#include <time.h>
#include <unistd.h>
#include "log.h"

/* Where sd_journal_sendv sends (systemd's journal-send.c); a service
 * with LogNamespace= sees its namespace's socket at the same path. */
#define JOURNAL_SOCKET	"/run/systemd/journal/socket"

int log_max_level = LOG_INFO;

static const char *const level_names[] = {
	[LOG_ERR] = "error", [LOG_WARNING] = "warning", [LOG_NOTICE] = "notice",
	[LOG_INFO] = "info", [LOG_DEBUG] = "debug",
};

int log_parse_level(const char *s, int *ret)
{
	for (int i = LOG_ERR; i <= LOG_DEBUG; i++) {
		if (level_names[i] && strcmp(s, level_names[i]) == 0) {
			*ret = i;
			return 0;
		}
	}
	return -EINVAL;
}

int log_to_journal(void)
{
	const char *env = getenv("JOURNAL_STREAM");
	unsigned long long dev, ino;
	struct stat st;
	char end;

	if (!env || sscanf(env, "%llu:%llu%c", &dev, &ino, &end) != 2)
		return 0;
	if (fstat(STDERR_FILENO, &st) < 0)
		return 0;
	return (unsigned long long)st.st_dev == dev && (unsigned long long)st.st_ino == ino;
}

const char *log_rfc3339(const struct timespec *ts, char *buf, size_t len)
{
	char date[32], zone[8];
	struct tm tm;

	if (!localtime_r(&ts->tv_sec, &tm) ||
	    !strftime(date, sizeof(date), "%Y-%m-%dT%H:%M:%S", &tm) ||
	    strftime(zone, sizeof(zone), "%z", &tm) != 5) {
		snprintf(buf, len, "%lld.%06ld", (long long)ts->tv_sec, ts->tv_nsec / 1000);
		return buf;
	}
	/* %z is "+0100"; RFC 3339 wants "+01:00". */
	snprintf(buf, len, "%s.%06ld%.3s:%.2s", date, ts->tv_nsec / 1000, zone, zone + 3);
	return buf;
}

/* Item i = "NAME=v1sepv2" at *at in buf, each value cut at LOG_FIELD_MAX.
 * Returns the next item's index; i itself when it does not fit (left out). */
static int add_field(struct iovec *iov, size_t n, int i, char *buf, size_t len, size_t *at,
		     const char *name, const char *v1, const char *sep, const char *v2)
{
	int w;

	if ((size_t)i >= n || *at >= len)
		return i;
	w = snprintf(buf + *at, len - *at, "%s=%.*s%s%.*s", name, LOG_FIELD_MAX, v1,
		     sep, LOG_FIELD_MAX, v2);
	if (w < 0 || (size_t)w >= len - *at)
		return i;
	iov[i] = (struct iovec){ .iov_base = buf + *at, .iov_len = (size_t)w };
	*at += (size_t)w + 1;
	return i + 1;
}

static int set(const char *s)
{
	return s && s[0];
}

int log_journal_fields(int level, const char *message, const struct log_pod *p,
		       struct iovec *iov, size_t n, char *buf, size_t len)
{
	char pri[2] = { (char)('0' + (level >= 0 && level <= LOG_DEBUG ? level : LOG_INFO)), 0 };
	size_t at = 0;
	int i = 0;

	i = add_field(iov, n, i, buf, len, &at, "PRIORITY", pri, "", "");
	i = add_field(iov, n, i, buf, len, &at, "SYSLOG_IDENTIFIER", "cpusetd", "", "");
	if (p && set(p->pod))
		i = add_field(iov, n, i, buf, len, &at, "POD", set(p->namespace_) ? p->namespace_ : "",
			      set(p->namespace_) ? "/" : "", p->pod);
	if (p && set(p->pod_uid))
		i = add_field(iov, n, i, buf, len, &at, "POD_UID", p->pod_uid, "", "");
	if (p && set(p->container))
		i = add_field(iov, n, i, buf, len, &at, "CONTAINER", p->container, "", "");
	if (p && set(p->container_id))
		i = add_field(iov, n, i, buf, len, &at, "CONTAINER_ID", p->container_id, "", "");
	if (p && set(p->reason))
		i = add_field(iov, n, i, buf, len, &at, "REASON", p->reason, "", "");
	/* Last, whole (up to LOG_LINE_MAX): it is already one escaped line. */
	if ((size_t)i < n && at < len) {
		int w = snprintf(buf + at, len - at, "MESSAGE=%s", message);

		if (w > 0 && (size_t)w < len - at)
			iov[i++] = (struct iovec){ .iov_base = buf + at, .iov_len = (size_t)w };
	}
	return i;
}

/* The escaped, cut line of fmt/ap into line[LOG_LINE_MAX]. */
static void format_line(char *line, const char *fmt, va_list ap)
{
	char raw[LOG_LINE_MAX];

	vsnprintf(raw, sizeof(raw), fmt, ap);
	if (log_escape(raw, line, LOG_LINE_MAX) >= LOG_LINE_MAX) {
		size_t cut = strlen(line);

		memcpy(line + (cut > LOG_LINE_MAX - 4 ? LOG_LINE_MAX - 4 : cut), "...", 4);
	}
}

/* The line to the journal or stderr (log.h). Not reentrant: the daemon
 * logs from one thread. */
static void emit(int level, const struct log_pod *p, const char *line)
{
	static char buf[8 * LOG_FIELD_MAX + LOG_LINE_MAX + 64];
	const char *name = level >= 0 && level <= LOG_DEBUG && level_names[level] ?
			   level_names[level] : "log";
	struct iovec iov[8];
	struct timespec ts;
	char when[48];
	int n;

	if (log_to_journal()) {
		/* sd_journal_sendv drops an entry silently when the socket is
		 * not there (a mount namespace without it): then the stream,
		 * which journald reads with the priority prefix. */
		n = log_journal_fields(level, line, p, iov, 8, buf, sizeof(buf));
		if (access(JOURNAL_SOCKET, W_OK) == 0 && sd_journal_sendv(iov, n) >= 0)
			return;
		fprintf(stderr, "<%d>%s\n", level, line);
		return;
	}
	clock_gettime(CLOCK_REALTIME, &ts);
	fprintf(stderr, "%s cpusetd: %s: %s\n", log_rfc3339(&ts, when, sizeof(when)), name, line);
}

/* One message of log_msg or log_pod (p NULL: no pod fields); errno is
 * left as the caller had it. */
static void vlog(int level, const struct log_pod *p, const char *fmt, va_list ap)
{
	char line[LOG_LINE_MAX];
	int saved = errno;

	format_line(line, fmt, ap);
	emit(level, p, line);
	errno = saved;
}

void log_msg(int level, const char *fmt, ...)
{
	va_list ap;

	if (level > log_max_level)
		return;
	va_start(ap, fmt);
	vlog(level, NULL, fmt, ap);
	va_end(ap);
}

void log_pod(int level, const struct log_pod *p, const char *fmt, ...)
{
	va_list ap;

	if (level > log_max_level)
		return;
	va_start(ap, fmt);
	vlog(level, p, fmt, ap);
	va_end(ap);
}

size_t log_escape(const char *s, char *dst, size_t size)
{
	size_t len = 0;

	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		char esc[5] = { (char)*p, 0 };
		size_t n;

		if (*p == '\n' || *p == '\t' || *p == '\r' || *p == '\\')
			snprintf(esc, sizeof(esc), "\\%c",
				 *p == '\n' ? 'n' : *p == '\t' ? 't' : *p == '\r' ? 'r' : '\\');
		else if (*p < 0x20 || *p == 0x7f)
			snprintf(esc, sizeof(esc), "\\x%02x", *p);
		n = strlen(esc);
		if (len + n < size)
			memcpy(dst + len, esc, n);
		else if (len < size)
			size = len + 1;	/* cut here: no half escape after */
		len += n;
	}
	dst[len < size ? len : size - 1] = '\0';
	return len;
}

void log_sanitize(char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			*s = '?';
}
