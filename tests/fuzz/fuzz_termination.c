// SPDX-License-Identifier: Apache-2.0
/*
 * The termination message file's choice (user/meta/termination.c
 * termination_rel_path): the only host file a rejection may write, from
 * the bundle's untrusted mount source, pod UID and container name.
 *
 * Input: "<pods_dir>\0<pod_uid>\0<container_name>\0<host_path>"; with
 * fewer parts the rest is kubelet's default pods dir, a UID and "app"
 * around what is given (the last part given is the host path).
 *
 * Invariants (termination.h): returns 0, -EINVAL or -EPERM; -EINVAL
 * exactly when pods_dir is not absolute or a name is not one plain
 * component; on error *ret_rel is untouched; on success *ret_rel points
 * into host_path, host_path is the trimmed pods_dir, "/", then *ret_rel,
 * and *ret_rel is "<uid>/containers/<name>/<file>" with <file> one plain
 * component: no "..", no ".", no empty component, nothing after it. And
 * the other way: that exact path built from the inputs is accepted.
 */
#include <errno.h>
#include "fuzz.h"
#include "user/meta/termination.h"

static bool plain(const char *s)
{
	size_t n = strlen(s);

	return n > 0 && n <= TERMINATION_NAME_MAX && !strchr(s, '/') && strcmp(s, ".") != 0 &&
	       strcmp(s, "..") != 0;
}

/* rel's components: exactly uid, "containers", name, then one plain one. */
static void check_rel(const char *rel, const char *uid, const char *name)
{
	size_t ul = strlen(uid), nl = strlen(name);
	const char *file;

	FUZZ_CHECK(strncmp(rel, uid, ul) == 0);
	FUZZ_CHECK(strncmp(rel + ul, "/containers/", 12) == 0);
	FUZZ_CHECK(strncmp(rel + ul + 12, name, nl) == 0);
	FUZZ_CHECK(rel[ul + 12 + nl] == '/');
	file = rel + ul + 12 + nl + 1;
	FUZZ_CHECK(plain(file));
	/* so no component anywhere in rel is "..", "." or empty */
	FUZZ_CHECK(!strstr(rel, "//") && rel[0] != '/');
	for (const char *p = rel; *p;) {
		size_t n = strcspn(p, "/");

		FUZZ_CHECK(n > 0 && !(n == 1 && p[0] == '.') &&
			   !(n == 2 && p[0] == '.' && p[1] == '.'));
		p += n;
		p += *p == '/';
	}
}

static void check(const char *dir, const char *uid, const char *name, const char *path)
{
	const char *canary = "untouched", *rel = canary;
	size_t plen = strlen(dir);
	bool valid_in = dir[0] == '/' && plain(uid) && plain(name);
	int r = termination_rel_path(dir, uid, name, path, &rel);

	FUZZ_CHECK(r == 0 || r == -EINVAL || r == -EPERM);
	FUZZ_CHECK((r == -EINVAL) == !valid_in);
	if (r < 0) {
		FUZZ_CHECK(rel == canary);
		return;
	}
	while (plen > 0 && dir[plen - 1] == '/')
		plen--;
	FUZZ_CHECK(rel > path && rel <= path + strlen(path));
	FUZZ_CHECK(strncmp(path, dir, plen) == 0 && path[plen] == '/' && rel == path + plen + 1);
	check_rel(rel, uid, name);
}

/* The exact kubelet path from the inputs, with file: accepted iff the
 * inputs and file are valid. */
static void check_built(const char *dir, const char *uid, const char *name, const char *file)
{
	size_t n = strlen(dir) + strlen(uid) + strlen(name) + strlen(file) + 16;
	char *path = fuzz_malloc(n);
	size_t plen = strlen(dir);
	const char *rel;
	int r;

	while (plen > 0 && dir[plen - 1] == '/')
		plen--;
	snprintf(path, n, "%.*s/%s/containers/%s/%s", (int)plen, dir, uid, name, file);
	r = termination_rel_path(dir, uid, name, path, &rel);
	if (dir[0] == '/' && plain(uid) && plain(name))
		FUZZ_CHECK(r == (plain(file) ? 0 : -EPERM));
	else
		FUZZ_CHECK(r == -EINVAL);
	free(path);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *parts[4];
	int n = fuzz_split(data, size, '\0', parts, NULL, 4);
	const char *dir = "/var/lib/kubelet/pods", *uid = "3f6c2a1e-8b4d-4c7a-9e2f-1a5b6c7d8e9f";
	const char *name = "app", *path;

	switch (n) {
	case 4:
		dir = parts[0], uid = parts[1], name = parts[2], path = parts[3];
		break;
	case 3:
		uid = parts[0], name = parts[1], path = parts[2];
		break;
	case 2:
		name = parts[0], path = parts[1];
		break;
	default:
		path = parts[0];
	}
	check(dir, uid, name, path);
	/* the last part as the file name of kubelet's own path */
	check_built(dir, uid, name, path);
	fuzz_free_parts(parts, 4);
	return 0;
}
