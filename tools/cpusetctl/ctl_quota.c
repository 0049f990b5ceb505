// SPDX-License-Identifier: Apache-2.0
/*
 * explain's CFS quota lines, read from the live cgroups (the kernel is the
 * truth; status.json carries the runtime's limit, not what is in force).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cgroupfs/cgfs.h"
#include "ctl.h"
#include "ctl_quota.h"

/* One cgroup's quota and mark as a JSON object, or NULL when unreadable
 * (*err says why). */
static json_object *level_obj(struct cgfs *cg, const char *path, int *err)
{
	json_object *o;
	int64_t q, sq;
	uint64_t p, sp;
	int r = cgfs_read_cpu_quota(cg, path, &q, &p);

	if (r < 0) {
		*err = r;
		return NULL;
	}
	r = cgfs_quota_saved_read(cg, path, &sq, &sp);
	o = json_object_new_object();
	if (!o)
		return NULL;
	json_object_object_add(o, "cgroup", json_object_new_string(path));
	json_object_object_add(o, "quota_us", json_object_new_int64(q));
	json_object_object_add(o, "period_us", json_object_new_int64((int64_t)p));
	/* A mark beside a positive quota is stale (the runtime wrote after
	 * us): the daemon removes it at its next look. */
	json_object_object_add(o, "lifted_by_cpusetd", json_object_new_boolean(r == 0 && q < 0));
	if (r == 0 && q < 0) {
		json_object_object_add(o, "saved_quota_us", json_object_new_int64(sq));
		json_object_object_add(o, "saved_period_us", json_object_new_int64((int64_t)sp));
	}
	return o;
}

static json_object *error_obj(const char *what, int r)
{
	json_object *o = json_object_new_object();
	char buf[256];

	snprintf(buf, sizeof(buf), "%s: %s", what, strerror(-r));
	if (o)
		json_object_object_add(o, "error", json_object_new_string(buf));
	return o;
}

json_object *ctl_quota_obj(const char *cgroup)
{
	struct cgfs_mounts m;
	struct cgfs *cg = NULL;
	json_object *o, *ct, *pod = NULL;
	char parent[CGFS_PATH_MAX];
	const char *slash = cgroup ? strrchr(cgroup, '/') : NULL;
	int r, err = 0;

	if (!slash || slash == cgroup || (size_t)(slash - cgroup) >= sizeof(parent))
		return error_obj("no cgroup path in status.json", -EINVAL);
	r = cgfs_detect(NULL, NULL, &m);
	if (r == 0)
		r = cgfs_open(&m, &cg);
	if (r < 0)
		return error_obj("cgroup hierarchies", r);
	ct = level_obj(cg, cgroup, &err);
	if (ct) {
		memcpy(parent, cgroup, (size_t)(slash - cgroup));
		parent[slash - cgroup] = '\0';
		pod = level_obj(cg, parent, &err);
	}
	cgfs_free(cg);
	if (!ct || !pod) {
		json_object_put(ct);
		return error_obj(err == -ENOENT ? "cgroup not on this node" : "cpu quota", err);
	}
	o = json_object_new_object();
	if (!o) {
		json_object_put(ct);
		json_object_put(pod);
		return NULL;
	}
	json_object_object_add(o, "container", ct);
	json_object_object_add(o, "pod", pod);
	return o;
}

/* "100000/100000 µs (1 CPUs)" for q/p. */
static void limit_text(int64_t q, int64_t p, char *buf, size_t len)
{
	snprintf(buf, len, "%lld/%lld µs (%.3g CPUs)", (long long)q, (long long)p,
		 p > 0 ? (double)q / (double)p : 0.0);
}

static void print_level(const char *label, json_object *l, const char *when)
{
	char lim[96], buf[512];

	if (ctl_jbool(l, "lifted_by_cpusetd")) {
		limit_text(ctl_jint(l, "saved_quota_us", 0), ctl_jint(l, "saved_period_us", 0),
			   lim, sizeof(lim));
		snprintf(buf, sizeof(buf), "none: lifted by cpusetd, exclusive CPUs "
			 "(exclusive_cpu_quota = unset); its limit %s comes back %s", lim, when);
	} else if (ctl_jint(l, "quota_us", -1) > 0) {
		limit_text(ctl_jint(l, "quota_us", 0), ctl_jint(l, "period_us", 0), lim, sizeof(lim));
		snprintf(buf, sizeof(buf), "%s in force", lim);
	} else {
		snprintf(buf, sizeof(buf), "none (none was set)");
	}
	printf("  %-12s ", label);
	ctl_put_clean(buf);
	putchar('\n');
}

void ctl_quota_print(json_object *o)
{
	const char *err = ctl_jstr(o, "error", NULL);

	if (err) {
		printf("  %-12s unknown: ", "CFS quota");
		ctl_put_clean(err);
		putchar('\n');
		return;
	}
	print_level("CFS quota", ctl_jget(o, "container", json_type_object),
		    "when it leaves exclusivity");
	print_level("pod quota", ctl_jget(o, "pod", json_type_object),
		    "when no container of the pod holds exclusive CPUs");
}
