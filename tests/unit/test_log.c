// SPDX-License-Identifier: Apache-2.0
/*
 * log: untrusted text never forges a line. log_escape's rules, and
 * log_msg writing exactly one line whatever its arguments carry, with an
 * RFC 3339 timestamp; the journal entry's fields (log_journal_fields),
 * and the choice of sink by JOURNAL_STREAM. The entries journald really
 * stores are checked by tests/integration/test_ops.sh.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <regex.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>
#include "user/base/log.h"

/* The escape read back (the inverse of log_escape), into dst. */
static void unescape(const char *s, char *dst)
{
	while (*s) {
		if (*s != '\\') {
			*dst++ = *s++;
			continue;
		}
		s++;
		switch (*s) {
		case 'n': *dst++ = '\n'; s++; break;
		case 't': *dst++ = '\t'; s++; break;
		case 'r': *dst++ = '\r'; s++; break;
		case '\\': *dst++ = '\\'; s++; break;
		case 'x': {
			char hex[3] = { s[1], s[2], 0 };

			assert_true(hex[0] && hex[1]);
			*dst++ = (char)strtol(hex, NULL, 16);
			s += 3;
			break;
		}
		default:
			fail_msg("'\\%c' is not an escape log_escape makes", *s);
		}
	}
	*dst = '\0';
}

static void test_escape(void **state)
{
	static const struct {
		const char *in, *out;
	} cases[] = {
		{ "plain", "plain" },
		{ "a\nb", "a\\nb" },
		{ "forged\ncpusetd: info: placed evil", "forged\\ncpusetd: info: placed evil" },
		{ "\r\t", "\\r\\t" },
		{ "\x1b[2J", "\\x1b[2J" },
		{ "\x7f", "\\x7f" },
		{ "back\\slash", "back\\\\slash" },
		/* a backslash and an n in a value is not a newline (issue 22 L7) */
		{ "a\\nb", "a\\\\nb" },
		{ "\\x41\\", "\\\\x41\\\\" },
		{ "caf\xc3\xa9", "caf\xc3\xa9" },
		{ "", "" },
	};
	char buf[64], back[64];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		assert_int_equal(log_escape(cases[i].in, buf, sizeof(buf)), strlen(cases[i].out));
		assert_string_equal(buf, cases[i].out);
		/* one line, and it reads back to the value: no two values
		 * escape alike */
		assert_null(strpbrk(buf, "\n\r"));
		unescape(buf, back);
		assert_string_equal(back, cases[i].in);
	}
	/* a newline and a backslash-n differ once escaped */
	char nl[16], bs[16];
	log_escape("x\ny", nl, sizeof(nl));
	log_escape("x\\ny", bs, sizeof(bs));
	assert_string_not_equal(nl, bs);
}

/* Cut between escapes, never inside one; the return says the full length. */
static void test_escape_cut(void **state)
{
	char buf[6];

	(void)state;
	assert_int_equal(log_escape("abcd\n", buf, sizeof(buf)), 6);
	assert_string_equal(buf, "abcd");
	assert_int_equal(log_escape("ab\x01", buf, sizeof(buf)), 6);
	assert_string_equal(buf, "ab");
	assert_int_equal(log_escape("abcde", buf, sizeof(buf)), 5);
	assert_string_equal(buf, "abcde");
	assert_int_equal(log_escape("abcd\\", buf, sizeof(buf)), 6);
	assert_string_equal(buf, "abcd");
}

/* stderr of fn() as text (caller frees). */
static char *capture(void (*fn)(void))
{
	char *text = NULL;
	size_t len = 0;
	FILE *mem = open_memstream(&text, &len);
	FILE *tmp = tmpfile();
	int saved = dup(STDERR_FILENO);
	char chunk[4096];
	size_t n;

	assert_non_null(mem);
	assert_non_null(tmp);
	fflush(stderr);
	dup2(fileno(tmp), STDERR_FILENO);
	fn();
	fflush(stderr);
	dup2(saved, STDERR_FILENO);
	close(saved);
	rewind(tmp);
	while ((n = fread(chunk, 1, sizeof(chunk), tmp)) > 0)
		fwrite(chunk, 1, n, mem);
	fclose(tmp);
	fclose(mem);
	return text;
}

static void log_forgery(void)
{
	log_warn("%s: bad value %s", "ns/pod/ctr", "x\ncpusetd: info: demo/evil/app placed on 0-1");
}

/* A value that looks escaped: it must not read as a newline. */
static void log_backslash(void)
{
	log_warn("%s: bad value %s", "ns/pod/ctr", "x\\ncpusetd");
}

static void log_huge(void)
{
	char *big = malloc(3 * LOG_LINE_MAX);

	memset(big, '\n', 3 * LOG_LINE_MAX - 1);
	big[3 * LOG_LINE_MAX - 1] = '\0';
	log_warn("%s", big);
	free(big);
}

/* RFC 3339 local time with microseconds, then a space (log.h). */
#define STAMP_RE	"^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\\.[0-9]{6}[+-][0-9]{2}:[0-9]{2} "

/* The line after its timestamp, which must be there. */
static const char *after_stamp(const char *line)
{
	regex_t re;

	assert_int_equal(regcomp(&re, STAMP_RE, REG_EXTENDED | REG_NOSUB), 0);
	if (regexec(&re, line, 0, NULL, 0) != 0)
		fail_msg("no RFC 3339 timestamp: '%s'", line);
	regfree(&re);
	return strchr(line, ' ') + 1;
}

static void test_one_line(void **state)
{
	char *out;

	(void)state;
	unsetenv("JOURNAL_STREAM");
	out = capture(log_forgery);
	assert_string_equal(after_stamp(out), "cpusetd: warning: ns/pod/ctr: bad value "
			    "x\\ncpusetd: info: demo/evil/app placed on 0-1\n");
	free(out);
	out = capture(log_backslash);
	assert_string_equal(after_stamp(out), "cpusetd: warning: ns/pod/ctr: bad value x\\\\ncpusetd\n");
	free(out);
	out = capture(log_huge);
	assert_ptr_equal(strchr(out, '\n'), out + strlen(out) - 1);
	assert_true(strlen(out) < LOG_LINE_MAX + 64);	/* + timestamp and level */
	assert_non_null(strstr(out, "\\n...\n"));
	free(out);
}

static void test_rfc3339(void **state)
{
	struct timespec ts = { .tv_sec = 1700000000, .tv_nsec = 123456789 };
	char buf[48];

	(void)state;
	setenv("TZ", "UTC0", 1);
	tzset();
	assert_string_equal(log_rfc3339(&ts, buf, sizeof(buf)), "2023-11-14T22:13:20.123456+00:00");
	/* POSIX TZ: 1:30 west of UTC's sign convention = +01:30 */
	setenv("TZ", "ABC-1:30", 1);
	tzset();
	assert_string_equal(log_rfc3339(&ts, buf, sizeof(buf)), "2023-11-14T23:43:20.123456+01:30");
	setenv("TZ", "ABC5", 1);
	tzset();
	assert_string_equal(log_rfc3339(&ts, buf, sizeof(buf)), "2023-11-14T17:13:20.123456-05:00");
	unsetenv("TZ");
	tzset();
}

/* iov item i as a string. */
static const char *item(const struct iovec *iov, int i, char *buf, size_t len)
{
	snprintf(buf, len, "%.*s", (int)iov[i].iov_len, (const char *)iov[i].iov_base);
	return buf;
}

static void test_journal_fields(void **state)
{
	static char buf[8 * LOG_FIELD_MAX + LOG_LINE_MAX];
	const struct log_pod p = { .namespace_ = "prod", .pod = "db-0", .pod_uid = "u-1",
				   .container = "pg", .container_id = "abc123",
				   .reason = "insufficient_cpus" };
	const struct log_pod evil = { .namespace_ = "ns", .pod = "a\nMESSAGE=forged",
				      .container = "" };
	struct iovec iov[8];
	char s[LOG_LINE_MAX + 16], *big;
	int n;

	(void)state;
	n = log_journal_fields(LOG_ERR, "prod/db-0/pg: admission error", &p, iov, 8, buf, sizeof(buf));
	assert_int_equal(n, 8);
	assert_string_equal(item(iov, 0, s, sizeof(s)), "PRIORITY=3");
	assert_string_equal(item(iov, 1, s, sizeof(s)), "SYSLOG_IDENTIFIER=cpusetd");
	assert_string_equal(item(iov, 2, s, sizeof(s)), "POD=prod/db-0");
	assert_string_equal(item(iov, 3, s, sizeof(s)), "POD_UID=u-1");
	assert_string_equal(item(iov, 4, s, sizeof(s)), "CONTAINER=pg");
	assert_string_equal(item(iov, 5, s, sizeof(s)), "CONTAINER_ID=abc123");
	assert_string_equal(item(iov, 6, s, sizeof(s)), "REASON=insufficient_cpus");
	assert_string_equal(item(iov, 7, s, sizeof(s)), "MESSAGE=prod/db-0/pg: admission error");
	/* no pod: the three fields every entry has */
	n = log_journal_fields(LOG_DEBUG, "x", NULL, iov, 8, buf, sizeof(buf));
	assert_int_equal(n, 3);
	assert_string_equal(item(iov, 0, s, sizeof(s)), "PRIORITY=7");
	assert_string_equal(item(iov, 2, s, sizeof(s)), "MESSAGE=x");
	/* unknown fields are left out; a newline stays inside its value
	 * (one iovec item: sd_journal_sendv sends it binary-safe), it never
	 * starts a field of its own */
	n = log_journal_fields(LOG_INFO, "m", &evil, iov, 8, buf, sizeof(buf));
	assert_int_equal(n, 4);
	assert_string_equal(item(iov, 2, s, sizeof(s)), "POD=ns/a\nMESSAGE=forged");
	assert_string_equal(item(iov, 3, s, sizeof(s)), "MESSAGE=m");
	/* room for n items only */
	assert_int_equal(log_journal_fields(LOG_INFO, "m", &p, iov, 2, buf, sizeof(buf)), 2);
	/* a value is cut at LOG_FIELD_MAX */
	big = malloc(3 * LOG_FIELD_MAX);
	memset(big, 'p', 3 * LOG_FIELD_MAX - 1);
	big[3 * LOG_FIELD_MAX - 1] = '\0';
	n = log_journal_fields(LOG_INFO, "m", &(struct log_pod){ .pod = big }, iov, 8, buf,
			       sizeof(buf));
	assert_int_equal(n, 4);
	assert_int_equal(iov[2].iov_len, strlen("POD=") + LOG_FIELD_MAX);
	free(big);
}

static void log_placed(void)
{
	const struct log_pod p = { .namespace_ = "ns", .pod = "p", .reason = "placed" };

	log_pod(LOG_WARNING, &p, "ns/p/c: placed");
}

/* The sink: the journal only when JOURNAL_STREAM names stderr itself. */
static void test_journal_stream(void **state)
{
	FILE *tmp = tmpfile();
	struct stat st;
	char env[64];
	char *out;

	(void)state;
	unsetenv("JOURNAL_STREAM");
	assert_int_equal(log_to_journal(), 0);
	/* another stream's (tmp, which capture's own file is not: both
	 * are open at once): a redirected stderr is not the journal */
	assert_int_equal(fstat(fileno(tmp), &st), 0);
	snprintf(env, sizeof(env), "%llu:%llu", (unsigned long long)st.st_dev,
		 (unsigned long long)st.st_ino);
	setenv("JOURNAL_STREAM", env, 1);
	out = capture(log_placed);
	assert_string_equal(after_stamp(out), "cpusetd: warning: ns/p/c: placed\n");
	free(out);
	setenv("JOURNAL_STREAM", "garbage", 1);
	assert_int_equal(log_to_journal(), 0);
	/* stderr's own: the journal. Here without a journald socket the
	 * line goes to the stream with its priority. */
	fflush(stderr);
	{
		int saved = dup(STDERR_FILENO);

		dup2(fileno(tmp), STDERR_FILENO);
		assert_int_equal(fstat(STDERR_FILENO, &st), 0);
		snprintf(env, sizeof(env), "%llu:%llu", (unsigned long long)st.st_dev,
			 (unsigned long long)st.st_ino);
		setenv("JOURNAL_STREAM", env, 1);
		assert_int_equal(log_to_journal(), 1);
		dup2(saved, STDERR_FILENO);
		close(saved);
	}
	out = capture(log_placed);	/* capture's own tmpfile: not the env's */
	assert_non_null(after_stamp(out));
	free(out);
	fclose(tmp);
	if (access("/run/systemd/journal/socket", F_OK) == 0) {
		unsetenv("JOURNAL_STREAM");
		return;	/* a real journald would take the entry */
	}
	{
		char line[256] = "";
		int saved;

		tmp = tmpfile();
		fflush(stderr);
		saved = dup(STDERR_FILENO);
		dup2(fileno(tmp), STDERR_FILENO);
		fstat(STDERR_FILENO, &st);
		snprintf(env, sizeof(env), "%llu:%llu", (unsigned long long)st.st_dev,
			 (unsigned long long)st.st_ino);
		setenv("JOURNAL_STREAM", env, 1);
		log_placed();
		fflush(stderr);
		dup2(saved, STDERR_FILENO);
		close(saved);
		rewind(tmp);
		assert_non_null(fgets(line, sizeof(line), tmp));
		assert_string_equal(line, "<4>ns/p/c: placed\n");
		fclose(tmp);
	}
	unsetenv("JOURNAL_STREAM");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rfc3339),
		cmocka_unit_test(test_journal_fields),
		cmocka_unit_test(test_journal_stream),
		cmocka_unit_test(test_escape),
		cmocka_unit_test(test_escape_cut),
		cmocka_unit_test(test_one_line),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
