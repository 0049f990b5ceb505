// SPDX-License-Identifier: Apache-2.0
/*
 * The kubelet cgroup path classifier (cgroupfs/cgfs_path.c
 * cgfs_parse_path), which names every cgroup a mkdir event reports.
 *
 * Input: "<root>\0<path>"; without a NUL the whole input is the path below
 * root "/kubepods" (first byte even) or "/kubepods.slice" (odd).
 *
 * Invariants (cgfs.h): returns 0 or -EINVAL (only for overlong text);
 * every field in range and a C string inside its array; LEVEL_NONE leaves
 * every other field zero; a pod or container has a well-formed UID, a
 * container a 12-64 digit lowercase hex id that its last path component
 * holds; a trailing slash and doubled slashes change nothing.
 */
#include <errno.h>
#include "fuzz.h"
#include "cgroupfs/cgfs.h"

static void check_uid(const char *uid)
{
	size_t n = strlen(uid);

	FUZZ_CHECK(n > 0 && n < 64 && uid[0] != '-' && uid[n - 1] != '-');
	for (size_t i = 0; i < n; i++)
		FUZZ_CHECK((uid[i] >= '0' && uid[i] <= '9') || (uid[i] >= 'a' && uid[i] <= 'z') ||
			   uid[i] == '-');
}

/* Field by field: struct padding is not part of the answer. */
static bool same_info(const struct cgfs_path_info *a, const struct cgfs_path_info *b)
{
	return a->level == b->level && a->qos == b->qos && a->runtime == b->runtime &&
	       a->systemd == b->systemd && !strcmp(a->pod_uid, b->pod_uid) &&
	       !strcmp(a->container_id, b->container_id);
}

static void check_info(const char *path, const struct cgfs_path_info *in)
{
	static const struct cgfs_path_info none = { .level = CGFS_LEVEL_NONE };
	const char *last;
	size_t n;

	FUZZ_CHECK(in->level >= CGFS_LEVEL_NONE && in->level <= CGFS_LEVEL_CONTAINER);
	FUZZ_CHECK(in->qos >= POD_QOS_UNKNOWN && in->qos <= POD_QOS_BESTEFFORT);
	FUZZ_CHECK(in->runtime >= CGFS_RT_PLAIN && in->runtime <= CGFS_RT_DOCKER);
	FUZZ_CHECK_STR(in->pod_uid);
	FUZZ_CHECK_STR(in->container_id);
	if (in->level == CGFS_LEVEL_NONE) {
		FUZZ_CHECK(same_info(in, &none));
		return;
	}
	if (in->level >= CGFS_LEVEL_QOS)
		FUZZ_CHECK(in->qos != POD_QOS_UNKNOWN);
	if (in->level < CGFS_LEVEL_POD) {
		FUZZ_CHECK(!in->pod_uid[0] && !in->container_id[0]);
		return;
	}
	check_uid(in->pod_uid);
	if (in->level == CGFS_LEVEL_POD) {
		FUZZ_CHECK(!in->container_id[0]);
		return;
	}
	n = strlen(in->container_id);
	FUZZ_CHECK(n >= 12 && n <= 64 && strspn(in->container_id, "0123456789abcdef") == n);
	last = path + strlen(path);
	while (last > path && last[-1] == '/')
		last--;
	while (last > path && last[-1] != '/')
		last--;
	FUZZ_CHECK(strstr(last, in->container_id) != NULL);
}

/* path with a slash doubled after the first one and one added at the end. */
static char *slashier(const char *path)
{
	size_t n = strlen(path);
	char *s = fuzz_malloc(n + 3), *p = s;

	for (const char *q = path; *q; q++) {
		*p++ = *q;
		if (q == path && *q == '/')
			*p++ = '/';
	}
	*p++ = '/';
	*p = '\0';
	return s;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cgfs_path_info info, again;
	char *parts[2], *root, *path, *alt;
	int r;

	if (fuzz_split(data, size, '\0', parts, NULL, 2) == 2) {
		root = parts[0];
		path = parts[1];
	} else {
		root = size && (data[0] & 1) ? "/kubepods.slice" : "/kubepods";
		path = parts[0];
	}
	fuzz_canary(&info, sizeof(info));	/* a field left unset shows */
	r = cgfs_parse_path(root, path, &info);
	if (strlen(root) >= CGFS_PATH_MAX || strlen(path) >= CGFS_PATH_MAX) {
		FUZZ_CHECK(r == -EINVAL);
		goto out;
	}
	FUZZ_CHECK(r == 0);
	check_info(path, &info);

	if (path[0] != '/')	/* "" and "/" differ: relative vs the top */
		goto out;
	alt = slashier(path);
	if (strlen(alt) < CGFS_PATH_MAX) {
		FUZZ_CHECK(cgfs_parse_path(root, alt, &again) == 0);
		FUZZ_CHECK(same_info(&info, &again));
	}
	free(alt);
out:
	fuzz_free_parts(parts, 2);
	return 0;
}
