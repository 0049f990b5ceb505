/* Logging: one line per message on stderr, journald-aware. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "log.h"

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

void log_msg(int level, const char *fmt, ...)
{
	static int journal = -1;
	char raw[LOG_LINE_MAX], line[LOG_LINE_MAX];
	int saved = errno;
	va_list ap;

	if (level > log_max_level)
		return;
	if (journal < 0)
		journal = getenv("JOURNAL_STREAM") != NULL;
	if (journal)
		fprintf(stderr, "<%d>", level);
	else
		fprintf(stderr, "cpusetd: %s: ", level_names[level] ? level_names[level] : "log");
	va_start(ap, fmt);
	vsnprintf(raw, sizeof(raw), fmt, ap);
	va_end(ap);
	if (log_escape(raw, line, sizeof(line)) >= sizeof(line)) {
		size_t cut = strlen(line);

		memcpy(line + (cut > sizeof(line) - 4 ? sizeof(line) - 4 : cut), "...", 4);
	}
	fputs(line, stderr);
	fputc('\n', stderr);
	errno = saved;
}

size_t log_escape(const char *s, char *dst, size_t size)
{
	size_t len = 0;

	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		char esc[5] = { (char)*p, 0 };
		size_t n;

		if (*p == '\n' || *p == '\t' || *p == '\r')
			snprintf(esc, sizeof(esc), "\\%c",
				 *p == '\n' ? 'n' : *p == '\t' ? 't' : 'r');
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
