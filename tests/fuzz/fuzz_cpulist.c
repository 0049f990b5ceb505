// SPDX-License-Identifier: Apache-2.0
/*
 * cpulist_parse / cpulist_format (user/base/cpumask.c), and cpumask_parse_hex
 * on the same bytes. cpulists arrive from pod annotations, so the parser
 * sees hostile text first.
 *
 * Invariants: a parsed mask formats (CPULIST_MAX always suffices) to a
 * canonical text that parses back to the same mask and formats to the
 * same text; format needs exactly strlen + 1 bytes (one less: -ENOSPC and
 * ""); the output parameter is untouched on error; a hex mask formats and
 * parses back too.
 */
#include <errno.h>
#include "fuzz.h"
#include "user/base/cpumask.h"

static void check_format_size(const struct cpumask *m, const char *text, size_t len)
{
	char small[CPULIST_MAX];

	FUZZ_CHECK(cpulist_format(m, small, len + 1) == (int)len);
	FUZZ_CHECK(strcmp(small, text) == 0);
	if (len == 0)
		return;
	memset(small, 'x', sizeof(small));
	FUZZ_CHECK(cpulist_format(m, small, len) == -ENOSPC);
	FUZZ_CHECK(small[0] == '\0');
}

/* m formats, and the text round-trips to m and to itself. */
static void check_round_trip(const struct cpumask *m)
{
	char text[CPULIST_MAX], again[CPULIST_MAX];
	struct cpumask back;
	unsigned n = 0;
	int len, id;

	len = cpulist_format(m, text, sizeof(text));
	FUZZ_CHECK(len >= 0 && (size_t)len == strlen(text));
	FUZZ_CHECK(cpulist_parse(text, &back) == 0);
	FUZZ_CHECK(cpumask_equal(m, &back));
	FUZZ_CHECK(cpulist_format(&back, again, sizeof(again)) == len);
	FUZZ_CHECK(strcmp(text, again) == 0);
	check_format_size(m, text, (size_t)len);
	cpumask_for_each(id, m)
		n++;
	FUZZ_CHECK(n == cpumask_weight(m));
	FUZZ_CHECK(cpumask_empty(m) == (len == 0));
}

/* One of the two parsers (same contract) on s. */
static void check_parser(int (*parse)(const char *, struct cpumask *), const char *s)
{
	struct cpumask m;
	int r;

	fuzz_canary(&m, sizeof(m));
	r = parse(s, &m);
	FUZZ_CHECK(r == 0 || r == -EINVAL || r == -ERANGE);
	if (r == 0)
		check_round_trip(&m);
	else
		FUZZ_CHECK(fuzz_untouched(&m, sizeof(m)));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = fuzz_strdup(data, size);

	check_parser(cpulist_parse, s);
	check_parser(cpumask_parse_hex, s);
	free(s);
	return 0;
}
