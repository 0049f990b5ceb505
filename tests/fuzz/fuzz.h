/* SPDX-License-Identifier: Apache-2.0 */
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

#include <stdbool.h>
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

/*
 * Every harness's start-up: quiet logs, then, when the harness defines
 * FUZZ_SETUP as the name of a `static void f(void)` before including
 * this file, that function (for scratch files and the like). Each
 * harness is its own program, so this definition is linked once.
 */
#ifdef FUZZ_SETUP
static void FUZZ_SETUP(void);
#endif

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fuzz_quiet();
#ifdef FUZZ_SETUP
	FUZZ_SETUP();
#endif
	return 0;
}

/* realloc that never fails: out of memory is the harness's end, not a
 * finding to chase (libFuzzer's -rss_limit_mb reports real blow-ups).
 * n = 0 still gives a unique pointer. */
static inline void *fuzz_realloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (!p)
		abort();
	return p;
}

static inline void *fuzz_malloc(size_t n)
{
	return fuzz_realloc(NULL, n);
}

/* data in a heap block of exactly size bytes, so that a read past the
 * end is an ASan report. Caller frees. */
static inline void *fuzz_memdup(const uint8_t *data, size_t size)
{
	void *p = fuzz_malloc(size);

	memcpy(p, data, size);
	return p;
}

/*
 * Output parameters that must stay untouched on error: fill them with
 * the canary byte before the call, check them after. 0xa5 is neither 0
 * nor a character, so a partial write of either shows.
 */
#define FUZZ_CANARY	0xa5

static inline void fuzz_canary(void *p, size_t n)
{
	memset(p, FUZZ_CANARY, n);
}

/* Whether p[0..n) still holds only the canary byte. */
static inline bool fuzz_untouched(const void *p, size_t n)
{
	const unsigned char *b = p;

	for (size_t i = 0; i < n; i++)
		if (b[i] != FUZZ_CANARY)
			return false;
	return true;
}

/* data as a NUL-terminated heap string (an inner NUL ends it early, as it
 * would for the parser's C callers). Caller frees; aborts on ENOMEM. */
static inline char *fuzz_strdup(const uint8_t *data, size_t size)
{
	char *s = fuzz_malloc(size + 1);

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
