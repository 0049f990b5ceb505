/*
 * log: untrusted text never forges a line. log_escape's rules, and
 * log_msg writing exactly one line whatever its arguments carry.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include "user/base/log.h"

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
		{ "back\\slash", "back\\slash" },
		{ "caf\xc3\xa9", "caf\xc3\xa9" },
		{ "", "" },
	};
	char buf[64];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		assert_int_equal(log_escape(cases[i].in, buf, sizeof(buf)), strlen(cases[i].out));
		assert_string_equal(buf, cases[i].out);
		/* escaping escaped text changes nothing */
		char again[64];
		log_escape(buf, again, sizeof(again));
		assert_string_equal(again, buf);
	}
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

static void log_huge(void)
{
	char *big = malloc(3 * LOG_LINE_MAX);

	memset(big, '\n', 3 * LOG_LINE_MAX - 1);
	big[3 * LOG_LINE_MAX - 1] = '\0';
	log_warn("%s", big);
	free(big);
}

static void test_one_line(void **state)
{
	char *out;

	(void)state;
	unsetenv("JOURNAL_STREAM");
	out = capture(log_forgery);
	assert_string_equal(out, "cpusetd: warning: ns/pod/ctr: bad value "
			    "x\\ncpusetd: info: demo/evil/app placed on 0-1\n");
	free(out);
	out = capture(log_huge);
	assert_ptr_equal(strchr(out, '\n'), out + strlen(out) - 1);
	assert_true(strlen(out) < LOG_LINE_MAX + 32);
	assert_non_null(strstr(out, "\\n...\n"));
	free(out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_escape),
		cmocka_unit_test(test_escape_cut),
		cmocka_unit_test(test_one_line),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
