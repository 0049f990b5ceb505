// SPDX-License-Identifier: Apache-2.0
/*
 * Kubelet cgroup naming: turns a cgroup path below the kubepods root into
 * (level, QoS class, pod UID, runtime, container ID). Pure string work, no
 * I/O, so every driver/runtime combination is tested from tables.
 *
 * The driver is told by the first component below the root: a ".slice"
 * name means the systemd driver, anything else the cgroupfs driver. The
 * root's own name does not matter ("/kubepods", "/kubepods.slice",
 * "/cpusetd-test-1/kubepods"), and neither does the systemd slice prefix
 * (kubelet --cgroup-root=/foo gives "foo-kubepods-burstable.slice"): a QoS
 * slice is "<stem>-burstable.slice", a pod slice "<qos stem>-pod<uid>.slice".
 * Names come from the kernel but were chosen by whoever created the cgroup,
 * so everything is checked: ids are 12-64 lowercase hex digits, UIDs are
 * lowercase letters, digits and dashes; "." and ".." never match.
 */
#include <errno.h>
#include <string.h>
#include "cgfs.h"

#define MAX_DEPTH	32

/* A path split into components; each points into the caller's copy. */
struct comps {
	const char *c[MAX_DEPTH];
	int n;
};

/* Splits buf (modified) on '/', dropping empty components (so trailing and
 * doubled slashes are harmless). Returns 0, or -EINVAL for a relative path,
 * "." or "..", or more than MAX_DEPTH components. */
static int split(char *buf, struct comps *ret)
{
	char *save = NULL;

	if (buf[0] != '/')
		return -EINVAL;
	ret->n = 0;
	for (char *t = strtok_r(buf, "/", &save); t; t = strtok_r(NULL, "/", &save)) {
		if (!strcmp(t, ".") || !strcmp(t, "..") || ret->n == MAX_DEPTH)
			return -EINVAL;
		ret->c[ret->n++] = t;
	}
	return 0;
}

static bool ends_with(const char *s, size_t len, const char *suffix)
{
	size_t sl = strlen(suffix);

	return len >= sl && !memcmp(s + len - sl, suffix, sl);
}

static bool is_hex_id(const char *s, size_t len)
{
	if (len < 12 || len > 64)
		return false;
	for (size_t i = 0; i < len; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return true;
}

/* Copies a pod UID of len chars to ret, turning sep ('-' for cgroupfs,
 * '_' for systemd names) into '-'. Returns false when it is not a UID. */
static bool copy_uid(const char *s, size_t len, char sep, char ret[64])
{
	if (len == 0 || len >= 64 || s[0] == sep || s[len - 1] == sep)
		return false;
	for (size_t i = 0; i < len; i++) {
		char ch = s[i];

		if (ch == sep)
			ch = '-';
		else if (!((ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'z')))
			return false;
		ret[i] = ch;
	}
	ret[len] = '\0';
	return true;
}

/* Container component. systemd: "<prefix>-<id>.scope"; cgroupfs: "<id>" or
 * CRI-O's "crio-<id>". Fills runtime and container_id; false otherwise
 * (including "crio-conmon-<id>", whose only task is the monitor). */
static bool parse_container(const char *name, bool systemd, struct cgfs_path_info *info)
{
	static const struct {
		const char *prefix;
		enum cgfs_runtime rt;
		bool on_systemd, on_cgroupfs;
	} forms[] = {
		{ "cri-containerd-", CGFS_RT_CONTAINERD, true, false },
		{ "crio-",	     CGFS_RT_CRIO,	 true, true },
		{ "docker-",	     CGFS_RT_DOCKER,	 true, false },
		{ "",		     CGFS_RT_PLAIN,	 false, true },
	};
	size_t len = strlen(name);

	if (systemd) {
		if (!ends_with(name, len, ".scope"))
			return false;
		len -= strlen(".scope");
	}
	for (size_t i = 0; i < sizeof(forms) / sizeof(forms[0]); i++) {
		size_t pl = strlen(forms[i].prefix);

		if (!(systemd ? forms[i].on_systemd : forms[i].on_cgroupfs))
			continue;
		if (len < pl || strncmp(name, forms[i].prefix, pl))
			continue;
		if (!is_hex_id(name + pl, len - pl))
			return false;
		memcpy(info->container_id, name + pl, len - pl);
		info->container_id[len - pl] = '\0';
		info->runtime = forms[i].rt;
		return true;
	}
	return false;
}

/* cgroupfs driver: [burstable|besteffort/]pod<uid>[/<id>]. */
static enum cgfs_level parse_cgroupfs(const struct comps *r, struct cgfs_path_info *info)
{
	int i = 0;

	if (!strcmp(r->c[0], "burstable"))
		info->qos = POD_QOS_BURSTABLE;
	else if (!strcmp(r->c[0], "besteffort"))
		info->qos = POD_QOS_BESTEFFORT;
	else
		info->qos = POD_QOS_GUARANTEED;

	if (info->qos != POD_QOS_GUARANTEED) {
		if (r->n == 1)
			return CGFS_LEVEL_QOS;
		i = 1;
	}
	if (strncmp(r->c[i], "pod", 3) ||
	    !copy_uid(r->c[i] + 3, strlen(r->c[i] + 3), '-', info->pod_uid))
		return CGFS_LEVEL_NONE;
	if (r->n == i + 1)
		return CGFS_LEVEL_POD;
	if (r->n == i + 2 && parse_container(r->c[i + 1], false, info))
		return CGFS_LEVEL_CONTAINER;
	return CGFS_LEVEL_NONE;
}

/* A systemd QoS slice stem "<x>-burstable" / "<x>-besteffort" (x non-empty). */
static enum pod_qos slice_qos(const char *stem, size_t len)
{
	if (len > strlen("-burstable") && ends_with(stem, len, "-burstable"))
		return POD_QOS_BURSTABLE;
	if (len > strlen("-besteffort") && ends_with(stem, len, "-besteffort"))
		return POD_QOS_BESTEFFORT;
	return POD_QOS_UNKNOWN;
}

/* A systemd pod slice "<parent>-pod<uid_>.slice". With parent NULL (pod
 * directly under the root) any non-QoS prefix is accepted. */
static bool parse_pod_slice(const char *name, const char *parent, size_t parent_len,
			    struct cgfs_path_info *info)
{
	size_t len = strlen(name) - strlen(".slice");
	const char *pod = NULL;

	for (const char *p = name; (p = strstr(p, "-pod")) && p < name + len; p++)
		pod = p;	/* the last "-pod": UIDs hold no '-' here */
	if (!pod || pod == name)
		return false;
	if (parent) {
		if ((size_t)(pod - name) != parent_len || strncmp(name, parent, parent_len))
			return false;
	} else if (slice_qos(name, (size_t)(pod - name)) != POD_QOS_UNKNOWN)
		return false;
	pod += strlen("-pod");
	return copy_uid(pod, len - (size_t)(pod - name), '_', info->pod_uid);
}

/* systemd driver: [<x>-burstable.slice/]<x>[-burstable]-pod<uid_>.slice[/<rt>-<id>.scope]. */
static enum cgfs_level parse_systemd(const struct comps *r, struct cgfs_path_info *info)
{
	const char *qos_stem = NULL;
	size_t qos_len = 0;
	int i = 0;

	info->systemd = true;
	qos_len = strlen(r->c[0]) - strlen(".slice");
	info->qos = slice_qos(r->c[0], qos_len);
	if (info->qos != POD_QOS_UNKNOWN) {
		if (r->n == 1)
			return CGFS_LEVEL_QOS;
		qos_stem = r->c[0];
		i = 1;
	} else
		info->qos = POD_QOS_GUARANTEED;

	if (!ends_with(r->c[i], strlen(r->c[i]), ".slice") ||
	    !parse_pod_slice(r->c[i], qos_stem, qos_len, info))
		return CGFS_LEVEL_NONE;
	if (r->n == i + 1)
		return CGFS_LEVEL_POD;
	if (r->n == i + 2 && parse_container(r->c[i + 1], true, info))
		return CGFS_LEVEL_CONTAINER;
	return CGFS_LEVEL_NONE;
}

/* Copies s to buf (CGFS_PATH_MAX) and splits it. */
static int copy_split(const char *s, char *buf, struct comps *ret)
{
	size_t len = strlen(s);

	if (len >= CGFS_PATH_MAX)
		return -EINVAL;
	memcpy(buf, s, len + 1);
	return split(buf, ret);
}

static enum cgfs_level classify(const struct comps *root, const struct comps *path,
				struct cgfs_path_info *info)
{
	struct comps rest = { .n = path->n - root->n };

	if (path->n < root->n)
		return CGFS_LEVEL_NONE;
	for (int i = 0; i < root->n; i++)
		if (strcmp(root->c[i], path->c[i]))
			return CGFS_LEVEL_NONE;
	if (rest.n == 0) {
		info->systemd = root->n > 0 &&
			ends_with(root->c[root->n - 1], strlen(root->c[root->n - 1]), ".slice");
		return CGFS_LEVEL_ROOT;
	}
	memcpy(rest.c, path->c + root->n, sizeof(rest.c[0]) * (size_t)rest.n);
	if (rest.n > 3)
		return CGFS_LEVEL_NONE;
	if (ends_with(rest.c[0], strlen(rest.c[0]), ".slice") && strlen(rest.c[0]) > strlen(".slice"))
		return parse_systemd(&rest, info);
	return parse_cgroupfs(&rest, info);
}

int cgfs_parse_path(const char *root, const char *path, struct cgfs_path_info *ret)
{
	char rbuf[CGFS_PATH_MAX], pbuf[CGFS_PATH_MAX];
	struct cgfs_path_info info = { 0 };
	struct comps rc, pc;
	bool bad;

	if (!root || !path || !ret)
		return -EINVAL;
	if (strlen(root) >= CGFS_PATH_MAX || strlen(path) >= CGFS_PATH_MAX)
		return -EINVAL;

	bad = copy_split(root, rbuf, &rc) < 0 || copy_split(path, pbuf, &pc) < 0;
	if (!bad)
		info.level = classify(&rc, &pc, &info);
	if (info.level == CGFS_LEVEL_NONE)
		info = (struct cgfs_path_info){ .level = CGFS_LEVEL_NONE };
	*ret = info;
	return 0;
}
