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
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	errno = saved;
}

void log_sanitize(char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			*s = '?';
}
