/*
 * Logging to stderr. Under systemd (JOURNAL_STREAM set) each line carries
 * a "<N>" syslog priority prefix, which journald turns into the entry's
 * priority; on a terminal it is plain text.
 */
#ifndef CPUSETD_LOG_H
#define CPUSETD_LOG_H

#ifdef __bpf__
#error "user-space header: BPF programs share only maps/cpusetd.h"
#endif

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
 * message, a reason): newline becomes "\n", tab "\t", carriage return
 * "\r", any other byte below 0x20 and 0x7f "\xNN"; the rest (UTF-8,
 * backslashes) is copied, so escaping escaped text changes nothing and a
 * reason escaped at its source reads the same in every sink. Writes at most size bytes including the NUL (size > 0),
 * cutting only between escapes. Returns the length the whole escape
 * needs (without the NUL), like snprintf, so >= size means cut.
 */
size_t log_escape(const char *s, char *dst, size_t size);

/*
 * Replaces control characters (< 0x20, 0x7f) in s by '?', in place, so
 * that a value from a pod or another process (names, a writer's comm, a
 * written cpulist) cannot forge a log line or break a one-line message.
 * Cannot fail.
 */
void log_sanitize(char *s);

#define log_error(...)	log_msg(LOG_ERR, __VA_ARGS__)
#define log_warn(...)	log_msg(LOG_WARNING, __VA_ARGS__)
#define log_notice(...)	log_msg(LOG_NOTICE, __VA_ARGS__)
#define log_info(...)	log_msg(LOG_INFO, __VA_ARGS__)
#define log_debug(...)	log_msg(LOG_DEBUG, __VA_ARGS__)

#endif
