// SPDX-License-Identifier: Apache-2.0
/*
 * Re-arming pages after a fork (prefault.h says why).
 */
#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "prefault.h"

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23	/* include/uapi/asm-generic/mman-common.h, 5.14 */
#endif

/* Whether fd has something to read now (-1: never). */
static bool readable(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	return fd >= 0 && poll(&p, 1, 0) > 0;
}

/* Populates the resident runs of [start, end) slice by slice. Returns 0,
 * 1 (stopped), or -errno of madvise when the advice itself is unknown. */
static int one_mapping(uintptr_t start, uintptr_t end, size_t page, int stop_fd,
		       size_t *pages)
{
	unsigned char vec[PREFAULT_SLICE_PAGES];

	for (uintptr_t at = start; at < end;) {
		size_t n = (end - at) / page;

		if (n > PREFAULT_SLICE_PAGES)
			n = PREFAULT_SLICE_PAGES;
		if (readable(stop_fd))
			return 1;
		/* unmapped meanwhile (another thread): the rest is gone too */
		if (mincore((void *)at, n * page, vec) < 0)
			return 0;
		for (size_t i = 0; i < n;) {
			size_t j = i;

			while (j < n && (vec[j] & 1))
				j++;
			if (j > i) {
				if (madvise((void *)(at + i * page), (j - i) * page,
					    MADV_POPULATE_WRITE) < 0 && errno == EINVAL)
					return -EINVAL;	/* no such advice: older kernel */
				*pages += j - i;
			}
			i = j + 1;
		}
		at += n * page;
	}
	return 0;
}

int prefault_writable(int stop_fd, size_t *ret_pages)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE), pages = 0;
	char line[512];
	FILE *f = fopen("/proc/self/maps", "re");
	int r = 0;

	if (!f)
		return -errno;
	while (r == 0 && fgets(line, sizeof(line), f)) {
		unsigned long start, end;
		char perms[5];

		char name[32] = "";

		/* anonymous ones and the heap: a private file mapping's page
		 * that was never written would get a copy of its own */
		if (sscanf(line, "%lx-%lx %4s %*s %*s %*s %31s", &start, &end, perms, name) < 3 ||
		    strcmp(perms, "rw-p") != 0 || (name[0] && strcmp(name, "[heap]") != 0))
			continue;
		r = one_mapping(start, end, page, stop_fd, &pages);
	}
	fclose(f);
	if (ret_pages)
		*ret_pages = pages;
	return r;
}
