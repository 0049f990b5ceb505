/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The CFS quota of a container and of its pod, as the live cgroups say,
 * for `cpusetctl explain`: whether cpusetd lifted it
 * (exclusive_cpu_quota = unset, user/controller/controller_quota.c) and the
 * limit it keeps for later (cgroupfs/cgfs.h CGFS_QUOTA_XATTR).
 */
#ifndef CPUSETD_CTL_QUOTA_H
#define CPUSETD_CTL_QUOTA_H

#include <json-c/json.h>

/*
 * cgroup: the container's path under the hierarchy root, as status.json
 * gives it ("/kubepods/pod<uid>/<id>"). Returns a new JSON object (the
 * caller puts it): {"container": LEVEL, "pod": LEVEL} with LEVEL =
 * {"cgroup", "quota_us" (-1 = none), "period_us", "lifted_by_cpusetd",
 * and when lifted "saved_quota_us", "saved_period_us"}, or {"error":
 * "..."} when the cgroups cannot be read here (another node's status,
 * not root, the cgroup gone). NULL only on ENOMEM.
 */
json_object *ctl_quota_obj(const char *cgroup);

/* The two lines explain prints for o (ctl_quota_obj's): "CFS quota" and
 * "pod quota". Cannot fail. */
void ctl_quota_print(json_object *o);

#endif
