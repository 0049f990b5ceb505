// SPDX-License-Identifier: Apache-2.0
/*
 * kubelet's termination message file of a container, by its shape
 * (termination.h). Byte comparisons only: what is accepted is one exact
 * path, so there is nothing to normalise and nothing to get wrong about
 * "." or "//"; the kernel then opens it beneath pods_dir (reject.c).
 */
#include <errno.h>
#include <stdbool.h>
#include <string.h>
#include "termination.h"

#define CONTAINERS	"/containers/"

/* One plain path component: not empty, ".", ".." or too long; no '/'. */
static bool plain_component(const char *s, size_t n)
{
	if (n == 0 || n > TERMINATION_NAME_MAX || memchr(s, '/', n))
		return false;
	return !(n == 1 && s[0] == '.') && !(n == 2 && s[0] == '.' && s[1] == '.');
}

/* *p starts with s[0..n): step over it. */
static bool eat(const char **p, const char *s, size_t n)
{
	if (strncmp(*p, s, n) != 0)
		return false;
	*p += n;
	return true;
}

int termination_rel_path(const char *pods_dir, const char *pod_uid, const char *container_name,
			 const char *host_path, const char **ret_rel)
{
	size_t plen = strlen(pods_dir), ulen = strlen(pod_uid), nlen = strlen(container_name);
	const char *p = host_path, *rel;

	if (pods_dir[0] != '/' || !plain_component(pod_uid, ulen) ||
	    !plain_component(container_name, nlen))
		return -EINVAL;
	while (plen > 0 && pods_dir[plen - 1] == '/')
		plen--;
	if (!eat(&p, pods_dir, plen) || !eat(&p, "/", 1))
		return -EPERM;
	rel = p;
	if (!eat(&p, pod_uid, ulen) || !eat(&p, CONTAINERS, strlen(CONTAINERS)) ||
	    !eat(&p, container_name, nlen) || !eat(&p, "/", 1) || !plain_component(p, strlen(p)))
		return -EPERM;
	*ret_rel = rel;
	return 0;
}
