// SPDX-License-Identifier: Apache-2.0
/* cpumask algebra and the cpulist / hex cpumask formats, good and bad. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <cmocka.h>
#include "user/base/cpumask.h"

struct parse_case {
	const char *in;
	int rc;
	const char *canon;	/* cpulist_format of the result when rc == 0 */
};

static const struct parse_case parse_cases[] = {
	{ "", 0, "" },
	{ "\n", 0, "" },
	{ "0", 0, "0" },
	{ "0-3", 0, "0-3" },
	{ "0,2-3,8", 0, "0,2-3,8" },
	{ "3,2,1,0", 0, "0-3" },
	{ "0-1,1-2", 0, "0-2" },
	{ "  5 \n", 0, "5" },
	{ "1023", 0, "1023" },
	{ "0-1023", 0, "0-1023" },
	{ "1024", -ERANGE, NULL },
	{ "99999999999999999999", -ERANGE, NULL },
	{ "3-1", -EINVAL, NULL },
	{ "abc", -EINVAL, NULL },
	{ "1,", -EINVAL, NULL },
	{ ",1", -EINVAL, NULL },
	{ "1,,2", -EINVAL, NULL },
	{ "1-", -EINVAL, NULL },
	{ "-1", -EINVAL, NULL },
	{ "1 2", -EINVAL, NULL },
	{ "0-7:2", -EINVAL, NULL },
	{ "0x3", -EINVAL, NULL },
	{ "+1", -EINVAL, NULL },
	{ "1-2-3", -EINVAL, NULL },
};

static void test_parse_table(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(parse_cases) / sizeof(parse_cases[0]); i++) {
		const struct parse_case *c = &parse_cases[i];
		struct cpumask m;
		char buf[CPULIST_MAX];
		int r;

		memset(&m, 0xab, sizeof(m));
		r = cpulist_parse(c->in, &m);
		if (r != c->rc)
			fail_msg("cpulist_parse(\"%s\") = %d, want %d", c->in, r, c->rc);
		if (r < 0) {
			/* Untouched on error. */
			assert_int_equal(m.bits[0], 0xababababababababULL);
			continue;
		}
		assert_true(cpulist_format(&m, buf, sizeof(buf)) >= 0);
		assert_string_equal(buf, c->canon);
	}
}

static void test_format_worst_case(void **state)
{
	struct cpumask m, back;
	char buf[CPULIST_MAX];
	int n;

	(void)state;
	cpumask_zero(&m);
	for (unsigned i = 0; i < CPUSETD_MAX_CPUS; i += 2)
		cpumask_set(&m, i);
	n = cpulist_format(&m, buf, sizeof(buf));
	assert_true(n > 0 && (size_t)n < sizeof(buf));
	assert_int_equal(cpulist_parse(buf, &back), 0);
	assert_true(cpumask_equal(&m, &back));
	assert_int_equal(cpulist_format(&m, buf, 10), -ENOSPC);
	assert_string_equal(buf, "");
}

static void test_algebra(void **state)
{
	struct cpumask a, b, c;

	(void)state;
	assert_int_equal(cpulist_parse("0-7,100", &a), 0);
	assert_int_equal(cpulist_parse("4-11", &b), 0);
	cpumask_and(&c, &a, &b);
	assert_int_equal(cpumask_weight(&c), 4);
	cpumask_andnot(&c, &a, &b);
	assert_int_equal(cpumask_weight(&c), 5);
	assert_true(cpumask_test(&c, 100));
	cpumask_or(&c, &a, &b);
	assert_int_equal(cpumask_weight(&c), 13);
	assert_true(cpumask_intersects(&a, &b));
	assert_false(cpumask_subset(&a, &b));
	assert_true(cpumask_subset(&b, &c));
	assert_int_equal(cpumask_next(&a, 8), 100);
	assert_int_equal(cpumask_next(&a, 101), -1);
	cpumask_set(&a, 5000);	/* out of range: ignored */
	assert_false(cpumask_test(&a, 5000));
}

static void test_hex(void **state)
{
	struct cpumask m;
	char buf[CPULIST_MAX];

	(void)state;
	assert_int_equal(cpumask_parse_hex("ff\n", &m), 0);
	cpulist_format(&m, buf, sizeof(buf));
	assert_string_equal(buf, "0-7");
	assert_int_equal(cpumask_parse_hex("00000001,00000000,80000000", &m), 0);
	cpulist_format(&m, buf, sizeof(buf));
	assert_string_equal(buf, "31,64");
	assert_int_equal(cpumask_parse_hex("xyz", &m), -EINVAL);
	assert_int_equal(cpumask_parse_hex("", &m), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_table),
		cmocka_unit_test(test_format_worst_case),
		cmocka_unit_test(test_algebra),
		cmocka_unit_test(test_hex),
	};

	return cmocka_run_group_tests_name("cpumask", tests, NULL, NULL);
}
