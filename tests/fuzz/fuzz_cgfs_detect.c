// SPDX-License-Identifier: Apache-2.0
/*
 * The hierarchy detector (cgroupfs/cgfs_detect.c cgfs_detect_text): the
 * texts of /proc/self/mountinfo, /proc/cgroups and the v2 root's
 * cgroup.controllers, which decide where every cpuset write goes.
 *
 * Input: "<mountinfo>\0<cgroups>\0<cgroup.controllers>"; missing parts
 * are empty.
 *
 * Invariants (cgfs.h): 0 or -ENOENT (-ENOMEM aside); *ret untouched on
 * error; on success a known mode, mount points that are C strings inside
 * their arrays and absolute paths (a cpuset one always), cpuset on v2 only with a v2 mount and
 * then with hierarchy id 0.
 */
#include <errno.h>
#include "fuzz.h"
#include "cgroupfs/cgfs.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cgfs_mounts m;
	char *parts[3];
	int r;

	fuzz_split(data, size, '\0', parts, NULL, 3);
	fuzz_canary(&m, sizeof(m));
	r = cgfs_detect_text(parts[0], parts[1] ? parts[1] : "", parts[2] ? parts[2] : "", &m);
	FUZZ_CHECK(r == 0 || r == -ENOENT || r == -ENOMEM);
	if (r < 0) {
		FUZZ_CHECK(fuzz_untouched(&m, sizeof(m)));
		goto out;
	}
	FUZZ_CHECK(m.mode == CGFS_MODE_V1 || m.mode == CGFS_MODE_HYBRID || m.mode == CGFS_MODE_V2);
	FUZZ_CHECK_STR(m.cpuset_mnt);
	FUZZ_CHECK_STR(m.cpu_mnt);
	FUZZ_CHECK(m.cpuset_mnt[0] == '/');
	FUZZ_CHECK(!m.cpu_mnt[0] || m.cpu_mnt[0] == '/');
	FUZZ_CHECK_STR(m.freezer_mnt);
	FUZZ_CHECK(!m.freezer_mnt[0] || (m.freezer_mnt[0] == '/' && !m.cpuset_on_v2));
	if (m.cpuset_on_v2)
		FUZZ_CHECK(m.mode != CGFS_MODE_V1 && m.cpuset_hierarchy_id == 0);
	if (m.mode == CGFS_MODE_V2)
		FUZZ_CHECK(m.cpuset_on_v2);
out:
	fuzz_free_parts(parts, 3);
	return 0;
}
