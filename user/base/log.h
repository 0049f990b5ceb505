/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Logging. Two sinks, chosen per message:
 *  - the journal, when stderr is connected to it: JOURNAL_STREAM holds
 *    "DEV:INO" of the stream journald gave us, and it is stderr's
 *    (sd_journal_stream_fd(3), systemd.exec(5) "$JOURNAL_STREAM"; a
 *    JOURNAL_STREAM inherited by a process whose stderr was redirected
 *    does not count). Each message is one entry sent with
 *    sd_journal_sendv: MESSAGE, PRIORITY, SYSLOG_IDENTIFIER=cpusetd and,
 *    for a message about a container (log_pod), POD=namespace/name,
 *    POD_UID, CONTAINER, CONTAINER_ID and REASON, so that
 *    `journalctl -u cpusetd POD=ns/name` finds a pod's story. When the
 *    journal socket is not there or the send fails, the line goes to
 *    stderr with a "<N>" priority prefix, which journald reads the same way.
 *  - otherwise stderr, one line per message:
 *    "2025-01-31T12:00:00.123456+01:00 cpusetd: info: TEXT" (RFC 3339
 *    local time with microseconds).
 * MESSAGE is always the escaped text (log_escape): one line, whatever a
 * pod put in its names. The structured fields carry the values as they
 * are (the journal's native protocol is binary-safe), cut at
 * LOG_FIELD_MAX bytes.
 */
#ifndef CPUSETD_LOG_H
#define CPUSETD_LOG_H

#ifdef __bpf__
#error "user-space header: BPF programs share only maps/cpusetd.h"
#endif

#include <stddef.h>
#include <sys/uio.h>
#include <syslog.h>

/* Messages above this syslog level (LOG_ERR..LOG_DEBUG) are dropped. */
extern int log_max_level;

/* Parses "error|warning|notice|info|debug" into *ret. Returns 0 or -EINVAL. */
int log_parse_level(const char *s, int *ret);

/*
 * printf-style; appends a newline. The formatted text is escaped with
 * log_escape, so one call is always exactly one line whatever the
 * arguments carry (pod names, annotation values, a writer's comm), and
 * cut at LOG_LINE_MAX bytes (ending in "..."). Never fails, never changes
 * errno.
 */
void log_msg(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define LOG_LINE_MAX	4096

/*
 * Escapes untrusted text for a one-line sink (a log line, a termination
 * message, status.json's messages): backslash becomes "\\", newline
 * "\n", tab "\t", carriage return "\r", any other byte below 0x20 and
 * 0x7f "\xNN"; the rest (UTF-8) is copied. So the escape can be read
 * back: a value holding a backslash and an "n" reads "\\n", never the
 * "\n" of a newline. Escaping is therefore done once, by the sink that
 * writes the text (log_msg, reject_write_message, status.json); text
 * kept for several sinks (a policy reason) is kept raw.
 * Writes at most size bytes including the NUL (size > 0), cutting only
 * between escapes. Returns the length the whole escape needs (without
 * the NUL), like snprintf, so >= size means cut.
 */
size_t log_escape(const char *s, char *dst, size_t size);

/*
 * Replaces control characters (< 0x20, 0x7f) in s by '?', in place, so
 * that a value from a pod or another process (names, a writer's comm, a
 * written cpulist) cannot forge a log line or break a one-line message.
 * Cannot fail.
 */
void log_sanitize(char *s);

/*
 * Who a message is about: any field may be NULL or "" (unknown, then its
 * journal field is left out). POD is sent as "namespace/pod" when the pod
 * name is known ("pod" alone without a namespace). reason is a short,
 * stable word an SRE can match on: an admission error's name
 * (policy_error_name: "insufficient_cpus"), or what happened ("placed",
 * "released", "foreign_write", "write_conflict", "cgroup_write_failed").
 * For the controller's containers: ct_log (controller_internal.h).
 */
struct log_pod {
	const char *namespace_;
	const char *pod;
	const char *pod_uid;
	const char *container;
	const char *container_id;
	const char *reason;
};

#define LOG_FIELD_MAX	512

/*
 * log_msg for a message about a pod or container: the same line on
 * stderr, and the fields of p beside MESSAGE in the journal. p may be
 * NULL (then it is log_msg). Never fails, never changes errno.
 */
void log_pod(int level, const struct log_pod *p, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/*
 * The journal entry of one message, for log_pod and its tests: fills
 * iov[0..n) with "FIELD=value" items (MESSAGE=message, PRIORITY=level,
 * SYSLOG_IDENTIFIER=cpusetd, then p's fields that are set), pointing into
 * buf[len] (8 * LOG_FIELD_MAX + LOG_LINE_MAX bytes suffice) and message.
 * message must already be escaped. Returns the number of items (<= 8),
 * never more than n.
 */
int log_journal_fields(int level, const char *message, const struct log_pod *p,
		       struct iovec *iov, size_t n, char *buf, size_t len);

/*
 * Whether stderr is the journal stream (JOURNAL_STREAM names stderr's
 * device and inode). Read anew at each call: cheap (one fstat).
 */
int log_to_journal(void);

/*
 * The RFC 3339 time of ts (CLOCK_REALTIME) in local time with
 * microseconds, "2025-01-31T12:00:00.123456+01:00", into buf[len]
 * (len >= 33). Returns buf.
 */
struct timespec;
const char *log_rfc3339(const struct timespec *ts, char *buf, size_t len);

#define log_error(...)	log_msg(LOG_ERR, __VA_ARGS__)
#define log_warn(...)	log_msg(LOG_WARNING, __VA_ARGS__)
#define log_notice(...)	log_msg(LOG_NOTICE, __VA_ARGS__)
#define log_info(...)	log_msg(LOG_INFO, __VA_ARGS__)
#define log_debug(...)	log_msg(LOG_DEBUG, __VA_ARGS__)

#endif
