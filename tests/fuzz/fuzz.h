/*
 * Helpers shared by the libFuzzer harnesses in tests/fuzz, one per parser
 * (`make fuzz` builds and runs them through tests/fuzz/run.sh; figures in
 * BENCHMARKS.md "Fuzzing").
 *
 * A broken invariant calls abort(), which libFuzzer reports as a crash with
 * the input saved, exactly like a sanitizer finding: the message names the
 * harness line, so the reproducer and the reason come together.
 */
#ifndef CPUSETD_FUZZ_H
#define CPUSETD_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "user/base/log.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

#define FUZZ_CHECK(cond)							\
	do {									\
		if (!(cond)) {							\
			fprintf(stderr, "%s:%d: invariant broken: %s\n",	\
				__FILE__, __LINE__, #cond);			\
			abort();						\
		}								\
	} while (0)

/* A char array field is a C string that fits it (NUL inside the array). */
#define FUZZ_CHECK_STR(arr)	FUZZ_CHECK(memchr((arr), '\0', sizeof(arr)) != NULL)

/* The parsers' debug logs cost time and say nothing a crash report needs. */
static inline void fuzz_quiet(void)
{
	log_max_level = -1;
}

/* The start-up of a harness that needs nothing but quiet; one that needs
 * more defines FUZZ_OWN_INITIALIZE before including this file and writes
 * its own (calling fuzz_quiet). Each harness is its own program, so this
 * definition is linked once. */
#ifndef FUZZ_OWN_INITIALIZE
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fuzz_quiet();
	return 0;
}
#endif

/* data as a NUL-terminated heap string (an inner NUL ends it early, as it
 * would for the parser's C callers). Caller frees; aborts on ENOMEM. */
static inline char *fuzz_strdup(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);

	if (!s)
		abort();
	memcpy(s, data, size);
	s[size] = '\0';
	return s;
}

/*
 * Splits data on sep into at most max parts (the last one takes the rest,
 * seps included), each a NUL-terminated heap string in ret[] (unused ones
 * NULL) of ret_len[] bytes (ret_len may be NULL; a part may hold NULs).
 * Returns the number of parts; caller frees with fuzz_free_parts.
 */
static inline int fuzz_split(const uint8_t *data, size_t size, uint8_t sep, char **ret,
			     size_t *ret_len, int max)
{
	int n = 0;

	for (int i = 0; i < max; i++)
		ret[i] = NULL;
	while (n < max) {
		const uint8_t *end = n == max - 1 ? NULL : memchr(data, sep, size);
		size_t len = end ? (size_t)(end - data) : size;

		if (ret_len)
			ret_len[n] = len;
		ret[n++] = fuzz_strdup(data, len);
		if (!end)
			break;
		data += len + 1;
		size -= len + 1;
	}
	return n;
}

static inline void fuzz_free_parts(char **parts, int max)
{
	for (int i = 0; i < max; i++)
		free(parts[i]);
}

#endif
