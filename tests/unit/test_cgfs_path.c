// SPDX-License-Identifier: Apache-2.0
/*
 * cgroupfs naming and detection: cgfs_parse_path over every kubelet driver
 * and runtime naming (table-driven), cgfs_detect on fixture mountinfo and
 * /proc/cgroups texts (v1, hybrid, v2), and the file helpers (walk, quota,
 * kubepods root, v2 widening order) on a throwaway directory tree. The real
 * kernel rules are exercised by the integration tests.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>
#include "cgroupfs/cgfs.h"

#define CID	"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
#define CID12	"0123456789ab"
#define UID	"1b4e28ba-2fa1-11d2-883f-0016d3cca427"
#define UID_	"1b4e28ba_2fa1_11d2_883f_0016d3cca427"
#define STATIC_UID "6a8e8b5b2f0e4c6a9d1e0f2a3b4c5d6e"	/* static pods: md5 hex */

#define NONE	CGFS_LEVEL_NONE
#define ROOT	CGFS_LEVEL_ROOT
#define QOS	CGFS_LEVEL_QOS
#define POD	CGFS_LEVEL_POD
#define CTR	CGFS_LEVEL_CONTAINER
#define GU	POD_QOS_GUARANTEED
#define BU	POD_QOS_BURSTABLE
#define BE	POD_QOS_BESTEFFORT
#define UNK	POD_QOS_UNKNOWN

struct path_case {
	const char *root, *path;
	enum cgfs_level level;
	enum pod_qos qos;
	enum cgfs_runtime rt;
	bool systemd;
	const char *uid, *cid;
};

#define SD	"/kubepods.slice"
#define SDB	SD "/kubepods-burstable.slice"
#define SDE	SD "/kubepods-besteffort.slice"

static const struct path_case path_cases[] = {
	/* cgroupfs driver */
	{ "/kubepods", "/kubepods", ROOT, UNK, 0, false, "", "" },
	{ "/kubepods", "/kubepods/", ROOT, UNK, 0, false, "", "" },
	{ "/kubepods/", "/kubepods", ROOT, UNK, 0, false, "", "" },
	{ "/kubepods", "/kubepods/burstable", QOS, BU, 0, false, "", "" },
	{ "/kubepods", "/kubepods/besteffort/", QOS, BE, 0, false, "", "" },
	{ "/kubepods", "/kubepods/pod" UID, POD, GU, 0, false, UID, "" },
	{ "/kubepods", "/kubepods/pod" UID "/" CID, CTR, GU, CGFS_RT_PLAIN, false, UID, CID },
	{ "/kubepods", "/kubepods/burstable/pod" UID, POD, BU, 0, false, UID, "" },
	{ "/kubepods", "/kubepods/burstable/pod" UID "/" CID, CTR, BU, CGFS_RT_PLAIN, false, UID, CID },
	{ "/kubepods", "/kubepods/besteffort/pod" UID "/" CID "/", CTR, BE, CGFS_RT_PLAIN, false, UID, CID },
	{ "/kubepods", "/kubepods/besteffort/pod" STATIC_UID "/" CID12, CTR, BE, CGFS_RT_PLAIN, false, STATIC_UID, CID12 },
	{ "/kubepods", "/kubepods/burstable/pod" UID "/crio-" CID, CTR, BU, CGFS_RT_CRIO, false, UID, CID },
	{ "/kubepods", "/kubepods/burstable/pod" UID "/crio-conmon-" CID, NONE, UNK, 0, false, "", "" },
	{ "/kubepods", "/kubepods/burstable/pod" UID "/cri-containerd-" CID, NONE, UNK, 0, false, "", "" },
	{ "/kubepods", "/kubepods/burstable/pod" UID "/" CID ".scope", NONE, UNK, 0, false, "", "" },
	{ "/kubepods", "/kubepods/burstable/pod" UID "/" CID "/x", NONE, UNK, 0, false, "", "" },
	{ "/kubepods", "/kubepods/guaranteed/pod" UID, NONE, UNK, 0, false, "", "" },
	{ "/kubepods", "/kubepods/pod", NONE, UNK, 0, false, "", "" },
	{ "/kubepods", "/kubepods/pod" UID_, NONE, UNK, 0, false, "", "" },
	{ "/kubepods", "/kubepods/podABC", NONE, UNK, 0, false, "", "" },
	{ "/kubepods", "/kubepods/pod-" UID, NONE, UNK, 0, false, "", "" },
	{ "/kubepods", "/kubepods/burstable/burstable", NONE, UNK, 0, false, "", "" },
	{ "/kubepods", "/kubepods//burstable//pod" UID, POD, BU, 0, false, UID, "" },
	/* custom roots: only the components below the root matter */
	{ "/cpusetd-test-1/kubepods", "/cpusetd-test-1/kubepods/burstable/pod" UID "/" CID,
	  CTR, BU, CGFS_RT_PLAIN, false, UID, CID },
	{ "/cpusetd-test-1/kubepods", "/cpusetd-test-1/kubepods", ROOT, UNK, 0, false, "", "" },
	{ "/cpusetd-test-1/kubepods", "/kubepods/burstable/pod" UID, NONE, UNK, 0, false, "", "" },
	{ "/", "/burstable/pod" UID "/" CID, CTR, BU, CGFS_RT_PLAIN, false, UID, CID },
	{ "/", "/", ROOT, UNK, 0, false, "", "" },
	/* outside the root */
	{ "/kubepods", "/", NONE, UNK, 0, false, "", "" },
	{ "/kubepods", "/system.slice/docker-" CID ".scope", NONE, UNK, 0, false, "", "" },
	{ "/kubepods", "/kubepodsX", NONE, UNK, 0, false, "", "" },
	{ "/kubepods", "/kubepodsX/pod" UID, NONE, UNK, 0, false, "", "" },
	{ "/kubepods", "/kubepods.slice", NONE, UNK, 0, false, "", "" },
	{ "/kubepods/burstable", "/kubepods", NONE, UNK, 0, false, "", "" },
	{ "/kubepods", "kubepods/pod" UID, NONE, UNK, 0, false, "", "" },
	{ "kubepods", "/kubepods/pod" UID, NONE, UNK, 0, false, "", "" },
	{ "/kubepods", "/kubepods/../kubepods/pod" UID, NONE, UNK, 0, false, "", "" },
	{ "/kubepods", "/kubepods/burstable/pod" UID "/..", NONE, UNK, 0, false, "", "" },
	{ "/kubepods", "/kubepods/./pod" UID, NONE, UNK, 0, false, "", "" },
	/* container ids */
	{ "/kubepods", "/kubepods/pod" UID "/0123456789a", NONE, UNK, 0, false, "", "" },
	{ "/kubepods", "/kubepods/pod" UID "/" CID "0", NONE, UNK, 0, false, "", "" },
	{ "/kubepods", "/kubepods/pod" UID "/0123456789aB", NONE, UNK, 0, false, "", "" },
	{ "/kubepods", "/kubepods/pod" UID "/0123456789ag", NONE, UNK, 0, false, "", "" },
	{ "/kubepods", "/kubepods/pod" UID "/crio-", NONE, UNK, 0, false, "", "" },
	/* systemd driver */
	{ SD, SD, ROOT, UNK, 0, true, "", "" },
	{ SD, SD "/", ROOT, UNK, 0, true, "", "" },
	{ SD, SDB, QOS, BU, 0, true, "", "" },
	{ SD, SDE, QOS, BE, 0, true, "", "" },
	{ SD, SD "/kubepods-pod" UID_ ".slice", POD, GU, 0, true, UID, "" },
	{ SD, SD "/kubepods-pod" UID_ ".slice/cri-containerd-" CID ".scope",
	  CTR, GU, CGFS_RT_CONTAINERD, true, UID, CID },
	{ SD, SDB "/kubepods-burstable-pod" UID_ ".slice", POD, BU, 0, true, UID, "" },
	{ SD, SDB "/kubepods-burstable-pod" UID_ ".slice/crio-" CID ".scope",
	  CTR, BU, CGFS_RT_CRIO, true, UID, CID },
	{ SD, SDB "/kubepods-burstable-pod" UID_ ".slice/docker-" CID ".scope/",
	  CTR, BU, CGFS_RT_DOCKER, true, UID, CID },
	{ SD, SDE "/kubepods-besteffort-pod" UID_ ".slice/cri-containerd-" CID12 ".scope",
	  CTR, BE, CGFS_RT_CONTAINERD, true, UID, CID12 },
	{ SD, SDE "/kubepods-besteffort-pod" STATIC_UID ".slice", POD, BE, 0, true, STATIC_UID, "" },
	{ SD, SDB "/kubepods-burstable-pod" UID_ ".slice/crio-conmon-" CID ".scope",
	  NONE, UNK, 0, false, "", "" },
	{ SD, SDB "/kubepods-burstable-pod" UID_ ".slice/crio-" CID, NONE, UNK, 0, false, "", "" },
	{ SD, SDB "/kubepods-burstable-pod" UID_ ".slice/" CID, NONE, UNK, 0, false, "", "" },
	{ SD, SDB "/kubepods-burstable-pod" UID_ ".slice/runc-" CID ".scope", NONE, UNK, 0, false, "", "" },
	{ SD, SDB "/kubepods-burstable-pod" UID_ ".slice/crio-" CID ".scope/container",
	  NONE, UNK, 0, false, "", "" },
	/* a pod slice must sit under the QoS slice its name says */
	{ SD, SDB "/kubepods-besteffort-pod" UID_ ".slice", NONE, UNK, 0, false, "", "" },
	{ SD, SD "/kubepods-burstable-pod" UID_ ".slice", NONE, UNK, 0, false, "", "" },
	{ SD, SDB "/kubepods-pod" UID_ ".slice", NONE, UNK, 0, false, "", "" },
	{ SD, SD "/kubepods-pod" UID ".slice", NONE, UNK, 0, false, "", "" },
	{ SD, SD "/kubepods-pod.slice", NONE, UNK, 0, false, "", "" },
	{ SD, SD "/-pod" UID_ ".slice", NONE, UNK, 0, false, "", "" },
	{ SD, SD "/.slice", NONE, UNK, 0, false, "", "" },
	{ SD, SD "/kubepods-pod" UID_ ".slice/cri-containerd-" CID ".scope/x",
	  NONE, UNK, 0, false, "", "" },
	{ SD, "/kubepods.sliceX/kubepods-pod" UID_ ".slice", NONE, UNK, 0, false, "", "" },
	/* systemd naming under a root of any name (--cgroup-root=/foo) */
	{ "/foo.slice/foo-kubepods.slice", "/foo.slice/foo-kubepods.slice/foo-kubepods-burstable.slice"
	  "/foo-kubepods-burstable-pod" UID_ ".slice/cri-containerd-" CID ".scope",
	  CTR, BU, CGFS_RT_CONTAINERD, true, UID, CID },
	{ "/cpusetd-test-12/kubepods", "/cpusetd-test-12/kubepods/kubepods-pod" UID_ ".slice",
	  POD, GU, 0, true, UID, "" },
	{ "/cpusetd-test-12/kubepods", "/cpusetd-test-12/kubepods", ROOT, UNK, 0, false, "", "" },
};

static bool path_case_ok(const struct path_case *c, const struct cgfs_path_info *info)
{
	return info->level == c->level && info->qos == c->qos && info->runtime == c->rt &&
	       info->systemd == c->systemd && !strcmp(info->pod_uid, c->uid) &&
	       !strcmp(info->container_id, c->cid);
}

static void test_parse_path_table(void **state)
{
	int failed = 0;

	(void)state;
	for (size_t i = 0; i < sizeof(path_cases) / sizeof(path_cases[0]); i++) {
		const struct path_case *c = &path_cases[i];
		struct cgfs_path_info info;

		memset(&info, 0xa5, sizeof(info));
		assert_int_equal(cgfs_parse_path(c->root, c->path, &info), 0);
		if (path_case_ok(c, &info))
			continue;
		print_error("case %zu: root %s path %s\n"
			    "  got  level %d qos %d rt %d systemd %d uid \"%s\" id \"%s\"\n"
			    "  want level %d qos %d rt %d systemd %d uid \"%s\" id \"%s\"\n",
			    i, c->root, c->path, info.level, info.qos, info.runtime, info.systemd,
			    info.pod_uid, info.container_id, c->level, c->qos, c->rt, c->systemd,
			    c->uid, c->cid);
		failed++;
	}
	assert_int_equal(failed, 0);
}

static void test_parse_path_errors(void **state)
{
	struct cgfs_path_info info = { .level = CGFS_LEVEL_POD };
	char longpath[CGFS_PATH_MAX + 8];

	(void)state;
	assert_int_equal(cgfs_parse_path(NULL, "/kubepods", &info), -EINVAL);
	assert_int_equal(cgfs_parse_path("/kubepods", NULL, &info), -EINVAL);
	assert_int_equal(cgfs_parse_path("/kubepods", "/kubepods", NULL), -EINVAL);
	memset(longpath, 'a', sizeof(longpath) - 1);
	longpath[0] = '/';
	longpath[sizeof(longpath) - 1] = '\0';
	assert_int_equal(cgfs_parse_path("/kubepods", longpath, &info), -EINVAL);
	assert_int_equal(cgfs_parse_path(longpath, "/kubepods", &info), -EINVAL);
	assert_int_equal(info.level, CGFS_LEVEL_POD);	/* untouched */
}

static void test_qos_name(void **state)
{
	(void)state;
	assert_string_equal(pod_qos_name(POD_QOS_GUARANTEED), "Guaranteed");
	assert_string_equal(pod_qos_name(POD_QOS_BURSTABLE), "Burstable");
	assert_string_equal(pod_qos_name(POD_QOS_BESTEFFORT), "BestEffort");
	assert_string_equal(pod_qos_name(POD_QOS_UNKNOWN), "Unknown");
}

/* ------------------------------------------------------------ detection */

static char tmpdir[64];

static void write_file(const char *dir, const char *name, const char *text)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
}

static int setup_tmpdir(void **state)
{
	(void)state;
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/test_cgfs.XXXXXX");
	return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown_tmpdir(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}

/* This host: v1 controllers, name=systemd, cgroup2 at .../unified without cpuset. */
static const char hybrid_cgroups[] =
	"#subsys_name\thierarchy\tnum_cgroups\tenabled\n"
	"cpuset\t3\t1\t1\ncpu\t1\t1\t1\ncpuacct\t2\t1\t1\nblkio\t7\t1\t1\n"
	"memory\t4\t26\t1\ndevices\t5\t1\t1\nfreezer\t6\t1\t1\nnet_cls\t0\t1\t1\n"
	"perf_event\t0\t1\t1\nnet_prio\t0\t1\t1\nhugetlb\t0\t1\t1\npids\t8\t1\t1\n";

static const char *hybrid_mountinfo_fmt =
	"22 1 0:21 / /proc rw,nosuid,nodev,noexec,relatime shared:12 - proc proc rw\n"
	"31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n"
	"32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu\n"
	"33 31 0:30 / /sys/fs/cgroup/cpuacct rw,relatime - cgroup cgroup rw,cpuacct\n"
	"40 31 0:37 / /sys/fs/cgroup/systemd rw,relatime shared:9 - cgroup cgroup rw,xattr,name=systemd\n"
	"34 31 0:31 / /sys/fs/cgroup/cpu\\040set rw,relatime - cgroup cgroup rw,cpuset\n"
	"35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n"
	"41 31 0:38 / %s rw,relatime - cgroup2 cgroup2 rw\n";

static void detect_with(const char *mountinfo, const char *cgroups, const char *controllers,
			int expect, struct cgfs_mounts *ret)
{
	char mi[128], cgs[128];

	write_file(tmpdir, "mountinfo", mountinfo);
	write_file(tmpdir, "cgroups", cgroups);
	write_file(tmpdir, "cgroup.controllers", controllers);
	snprintf(mi, sizeof(mi), "%s/mountinfo", tmpdir);
	snprintf(cgs, sizeof(cgs), "%s/cgroups", tmpdir);
	memset(ret, 0, sizeof(*ret));
	assert_int_equal(cgfs_detect(mi, cgs, ret), expect);
}

static void test_detect_hybrid(void **state)
{
	struct cgfs_mounts m;
	char mi[1024];

	(void)state;
	snprintf(mi, sizeof(mi), hybrid_mountinfo_fmt, tmpdir);
	detect_with(mi, hybrid_cgroups, "hugetlb\n", 0, &m);
	assert_int_equal(m.mode, CGFS_MODE_HYBRID);
	assert_false(m.cpuset_on_v2);
	assert_int_equal(m.cpuset_hierarchy_id, 3);
	assert_string_equal(m.cpuset_mnt, "/sys/fs/cgroup/cpu set");
	assert_string_equal(m.cpu_mnt, "/sys/fs/cgroup/cpu");

	/* cpuset on no v1 hierarchy, and the v2 root's cgroup.controllers unreadable */
	detect_with("32 31 0:29 / /sys/fs/cgroup/cpu rw - cgroup cgroup rw,cpu,cpuacct\n"
		    "40 31 0:37 / /sys/fs/cgroup/systemd rw - cgroup cgroup rw,name=systemd\n"
		    "41 31 0:38 / /tmp/x rw - cgroup2 cgroup2 rw\n",
		    "cpuset\t0\t1\t1\ncpu\t1\t1\t1\ncpuacct\t1\t1\t1\n", "cpuset\n", -ENOENT, &m);
	/* cpuset bound to no v1 hierarchy but enabled on the unified one */
	snprintf(mi, sizeof(mi), "32 31 0:29 / /sys/fs/cgroup/cpu,cpuacct rw - cgroup cgroup rw,cpu,cpuacct\n"
		 "41 31 0:38 / %s rw - cgroup2 cgroup2 rw\n", tmpdir);
	detect_with(mi, "cpuset\t0\t1\t1\ncpu\t1\t1\t1\ncpuacct\t1\t1\t1\n", "cpuset hugetlb\n", 0, &m);
	assert_int_equal(m.mode, CGFS_MODE_HYBRID);
	assert_true(m.cpuset_on_v2);
	assert_int_equal(m.cpuset_hierarchy_id, 0);
	assert_string_equal(m.cpuset_mnt, tmpdir);
	assert_string_equal(m.cpu_mnt, "/sys/fs/cgroup/cpu,cpuacct");
}

static void test_detect_v1(void **state)
{
	struct cgfs_mounts m;

	(void)state;
	detect_with("25 20 0:22 / /sys/fs/cgroup/systemd rw - cgroup cgroup rw,xattr,name=systemd\n"
		    "26 20 0:23 / /sys/fs/cgroup/cpu,cpuacct rw shared:7 - cgroup cgroup rw,cpu,cpuacct\n"
		    "27 20 0:24 / /sys/fs/cgroup/cpuset rw shared:8 - cgroup cgroup rw,cpuset,clone_children\n",
		    "#subsys_name\thierarchy\tnum_cgroups\tenabled\n"
		    "cpuset\t5\t4\t1\ncpu\t2\t60\t1\ncpuacct\t2\t60\t1\n", "", 0, &m);
	assert_int_equal(m.mode, CGFS_MODE_V1);
	assert_false(m.cpuset_on_v2);
	assert_int_equal(m.cpuset_hierarchy_id, 5);
	assert_string_equal(m.cpuset_mnt, "/sys/fs/cgroup/cpuset");
	assert_string_equal(m.cpu_mnt, "/sys/fs/cgroup/cpu,cpuacct");
	assert_string_equal(m.freezer_mnt, "");

	/* the freezer hierarchy (cgfs_kill), and a freezer line that
	 * /proc/cgroups puts on v2 (hierarchy 0): not taken */
	detect_with("27 20 0:24 / /sys/fs/cgroup/cpuset rw shared:8 - cgroup cgroup rw,cpuset\n"
		    "28 20 0:25 / /sys/fs/cgroup/freezer rw shared:9 - cgroup cgroup rw,freezer\n",
		    "cpuset\t5\t4\t1\nfreezer\t6\t4\t1\n", "", 0, &m);
	assert_string_equal(m.freezer_mnt, "/sys/fs/cgroup/freezer");
	detect_with("27 20 0:24 / /sys/fs/cgroup/cpuset rw shared:8 - cgroup cgroup rw,cpuset\n"
		    "28 20 0:25 / /sys/fs/cgroup/freezer rw shared:9 - cgroup cgroup rw,freezer\n",
		    "cpuset\t5\t4\t1\nfreezer\t0\t4\t1\n", "", 0, &m);
	assert_string_equal(m.freezer_mnt, "");

	/* only the named systemd hierarchy: no controller anywhere */
	detect_with("25 20 0:22 / /sys/fs/cgroup/systemd rw - cgroup cgroup rw,name=systemd\n",
		    "cpuset\t0\t1\t1\n", "", -ENOENT, &m);
	/* cgroup_disable=cpuset */
	detect_with("27 20 0:24 / /sys/fs/cgroup/cpuset rw - cgroup cgroup rw,cpuset\n",
		    "cpuset\t5\t1\t0\n", "", -ENOENT, &m);
}

static void test_detect_v2(void **state)
{
	const char *cgroups = "#subsys_name\thierarchy\tnum_cgroups\tenabled\n"
			      "cpuset\t0\t80\t1\ncpu\t0\t80\t1\nmemory\t0\t80\t1\n";
	struct cgfs_mounts m;
	char mi[512];

	(void)state;
	snprintf(mi, sizeof(mi),
		 "29 23 0:26 / /sys/fs/bpf rw - bpf bpf rw,mode=700\n"
		 "30 23 0:27 / %s rw,nosuid - cgroup2 cgroup2 rw,nsdelegate,memory_recursiveprot\n",
		 tmpdir);
	detect_with(mi, cgroups, "cpuset cpu io memory hugetlb pids rdma misc\n", 0, &m);
	assert_int_equal(m.mode, CGFS_MODE_V2);
	assert_true(m.cpuset_on_v2);
	assert_int_equal(m.cpuset_hierarchy_id, 0);
	assert_string_equal(m.cpuset_mnt, tmpdir);
	assert_string_equal(m.cpu_mnt, tmpdir);

	detect_with(mi, cgroups, "cpu io memory pids\n", -ENOENT, &m);
	detect_with("29 23 0:26 / /sys/fs/bpf rw - bpf bpf rw\n", cgroups, "", -ENOENT, &m);
}

static void test_detect_missing_files(void **state)
{
	struct cgfs_mounts m = { 0 };

	(void)state;
	assert_int_equal(cgfs_detect("/nonexistent/mountinfo", "/proc/cgroups", &m), -ENOENT);
	assert_int_equal(cgfs_detect("/proc/self/mountinfo", "/nonexistent/cgroups", &m), -ENOENT);
}

/* cgfs_detect_text: the same parsing from texts, and the inputs the fuzzer
 * (tests/fuzz/fuzz_cgfs_detect.c) found or that guard its invariants. */
static void test_detect_text(void **state)
{
	const char *v2_line = "30 23 0:27 / /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw\n";
	char mi[512];
	struct cgfs_mounts m;

	(void)state;
	assert_int_equal(cgfs_detect_text(v2_line, "cpuset\t0\t1\t1\n", "cpuset cpu\n", &m), 0);
	assert_int_equal(m.mode, CGFS_MODE_V2);
	assert_true(m.cpuset_on_v2);
	assert_string_equal(m.cpuset_mnt, "/sys/fs/cgroup/unified");
	assert_string_equal(m.cpu_mnt, "/sys/fs/cgroup/unified");

	/* A v1 cpuset mount that /proc/cgroups puts on hierarchy 0 is not
	 * taken: it used to give mode V2 with a v1 cpuset mount. */
	snprintf(mi, sizeof(mi), "27 20 0:24 / /sys/fs/cgroup/cpuset rw - cgroup cgroup rw,cpuset,cpu\n%s",
		 v2_line);
	memset(&m, 0, sizeof(m));
	assert_int_equal(cgfs_detect_text(mi, "cpuset\t0\t1\t1\ncpu\t0\t1\t1\n", "cpuset cpu\n", &m), 0);
	assert_int_equal(m.mode, CGFS_MODE_V2);
	assert_true(m.cpuset_on_v2);
	assert_string_equal(m.cpuset_mnt, "/sys/fs/cgroup/unified");
	assert_string_equal(m.cpu_mnt, "/sys/fs/cgroup/unified");

	/* "\000" in a mount point (no kernel writes it) would cut the path
	 * short; a relative mount point is no kernel line either. */
	assert_int_equal(cgfs_detect_text("30 23 0:27 / /a\\000b rw - cgroup2 cgroup2 rw\n",
					  "cpuset\t0\t1\t1\n", "cpuset\n", &m), -ENOENT);
	assert_int_equal(cgfs_detect_text("30 23 0:27 / a rw - cgroup2 cgroup2 rw\n",
					  "cpuset\t0\t1\t1\n", "cpuset\n", &m), -ENOENT);
	assert_int_equal(cgfs_detect_text("", "", "", &m), -ENOENT);
	assert_int_equal(cgfs_detect_text(NULL, "", "", &m), -EINVAL);
}

/* ------------------------------------- file helpers on a directory tree */

static void mkdir_in(const char *rel)
{
	char path[256];

	snprintf(path, sizeof(path), "%s/%s", tmpdir, rel);
	assert_int_equal(mkdir(path, 0755), 0);
}

static struct cgfs *open_tree(enum cgfs_mode mode)
{
	struct cgfs_mounts m = { .mode = mode, .cpuset_on_v2 = mode == CGFS_MODE_V2 };
	struct cgfs *cg = NULL;

	snprintf(m.cpuset_mnt, sizeof(m.cpuset_mnt), "%s", tmpdir);
	snprintf(m.cpu_mnt, sizeof(m.cpu_mnt), "%s", tmpdir);
	assert_int_equal(cgfs_open(&m, &cg), 0);
	return cg;
}

struct seen {
	char paths[16][128];
	int n;
	int stop_at;
	const char *prune;	/* this one's children are skipped */
};

static int record(const char *path, void *arg)
{
	struct seen *s = arg;

	snprintf(s->paths[s->n++], sizeof(s->paths[0]), "%s", path);
	if (s->prune && !strcmp(path, s->prune))
		return CGFS_WALK_PRUNE;
	return s->n == s->stop_at ? -ECANCELED : 0;
}

static int index_of(const struct seen *s, const char *path)
{
	for (int i = 0; i < s->n; i++)
		if (!strcmp(s->paths[i], path))
			return i;
	return -1;
}

static void test_walk_and_files(void **state)
{
	char root[16], link[128];
	struct seen s = { .n = 0 };
	struct cgfs *cg;
	int64_t quota;
	uint64_t period, id;

	(void)state;
	mkdir_in("kubepods");
	mkdir_in("kubepods/burstable");
	mkdir_in("kubepods/burstable/podA");
	mkdir_in("kubepods/burstable/podA/c1");
	mkdir_in("kubepods/podB");
	write_file(tmpdir, "kubepods/cpu.max", "max 100000\n");
	write_file(tmpdir, "kubepods/podB/cpu.max", "200000 100000\n");
	write_file(tmpdir, "kubepods/burstable/cpu.max", "garbage\n");
	write_file(tmpdir, "kubepods/burstable/podA/cpuset.cpus", "0-1,4\n");
	snprintf(link, sizeof(link), "%s/kubepods/link", tmpdir);
	assert_int_equal(symlink("/etc", link), 0);

	cg = open_tree(CGFS_MODE_V2);
	assert_int_equal(cgfs_find_kubepods_root(cg, root, sizeof(root)), 0);
	assert_string_equal(root, "/kubepods");
	assert_int_equal(cgfs_find_kubepods_root(cg, root, 5), -ENAMETOOLONG);

	assert_int_equal(cgfs_walk(cg, "/kubepods/", record, &s), 0);
	assert_int_equal(s.n, 5);
	assert_int_equal(index_of(&s, "/kubepods"), 0);
	assert_true(index_of(&s, "/kubepods/burstable") < index_of(&s, "/kubepods/burstable/podA"));
	assert_true(index_of(&s, "/kubepods/burstable/podA") < index_of(&s, "/kubepods/burstable/podA/c1"));
	assert_true(index_of(&s, "/kubepods/podB") > 0);
	assert_int_equal(index_of(&s, "/kubepods/link"), -1);
	/* Pruned: podA visited, its container not (nor opened). */
	s = (struct seen){ .prune = "/kubepods/burstable/podA" };
	assert_int_equal(cgfs_walk(cg, "/kubepods", record, &s), 0);
	assert_int_equal(s.n, 4);
	assert_true(index_of(&s, "/kubepods/burstable/podA") > 0);
	assert_int_equal(index_of(&s, "/kubepods/burstable/podA/c1"), -1);
	assert_true(index_of(&s, "/kubepods/podB") > 0);
	s = (struct seen){ .stop_at = 2 };
	assert_int_equal(cgfs_walk(cg, "/kubepods", record, &s), -ECANCELED);
	assert_int_equal(s.n, 2);
	assert_int_equal(cgfs_walk(cg, "/nope", record, &s), -ENOENT);

	assert_int_equal(cgfs_read_cpu_quota(cg, "/kubepods", &quota, &period), 0);
	assert_int_equal(quota, -1);
	assert_int_equal(period, 100000);
	assert_int_equal(cgfs_read_cpu_quota(cg, "/kubepods/podB", &quota, &period), 0);
	assert_int_equal(quota, 200000);
	assert_int_equal(cgfs_read_cpu_quota(cg, "/kubepods/burstable", &quota, &period), -EINVAL);
	assert_int_equal(cgfs_read_cpu_quota(cg, "/kubepods/gone", &quota, &period), -ENOENT);

	{
		struct cpumask m, want;

		assert_int_equal(cgfs_read_cpuset(cg, "/kubepods/burstable/podA", CGFS_CPUS, &m), 0);
		assert_int_equal(cpulist_parse("0-1,4", &want), 0);
		assert_true(cpumask_equal(&m, &want));
		assert_int_equal(cgfs_read_cpuset(cg, "/kubepods/../../etc", CGFS_CPUS, &m), -EXDEV);
		assert_int_equal(cgfs_read_cpuset(cg, "/kubepods/link/x", CGFS_CPUS, &m), -ELOOP);
		assert_int_equal(cgfs_write_cpuset(cg, "/kubepods", "/kubepods/podB",
						   CGFS_EFFECTIVE_CPUS, &want), -EPERM);
	}
	assert_int_equal(cgfs_cgroup_id(cg, "/kubepods/podB", &id), 0);
	assert_true(id > 0);
	assert_int_equal(cgfs_cgroup_id(cg, "/kubepods/gone", &id), -ENOENT);
	cgfs_free(cg);
	cgfs_free(NULL);
}

/*
 * v2 widening order on a plain directory tree. Regular files are not
 * truncated by the single O_WRONLY write, so every value written here is at
 * least as long as the one it replaces (as widening always is).
 */
static void test_v2_widen_tree(void **state)
{
	struct cpumask m, got, want;
	struct cgfs *cg;
	char text[16];

	(void)state;
	mkdir_in("kubepods");
	mkdir_in("kubepods/burstable");
	mkdir_in("kubepods/burstable/podA");
	mkdir_in("kubepods/burstable/podA/c1");
	write_file(tmpdir, "kubepods/cpuset.cpus", "\n");		/* inherits */
	write_file(tmpdir, "kubepods/burstable/cpuset.cpus", "0\n");	/* lacks 1 */
	write_file(tmpdir, "kubepods/burstable/podA/cpuset.cpus", "\n");
	write_file(tmpdir, "kubepods/burstable/podA/c1/cpuset.cpus", "0\n");

	cg = open_tree(CGFS_MODE_V2);
	assert_int_equal(cpulist_parse("1", &m), 0);
	assert_int_equal(cgfs_write_cpuset(cg, "/kubepods", "/kubepods/burstable/podA/c1", CGFS_CPUS, &m), 0);
	assert_int_equal(cgfs_read_cpuset(cg, "/kubepods/burstable/podA/c1", CGFS_CPUS, &got), 0);
	assert_true(cpumask_equal(&got, &m));
	assert_int_equal(cgfs_read_cpuset(cg, "/kubepods/burstable", CGFS_CPUS, &got), 0);
	assert_int_equal(cpulist_parse("0-1", &want), 0);
	assert_true(cpumask_equal(&got, &want));
	for (const char *const *p = (const char *const[]){ "/kubepods", "/kubepods/burstable/podA", NULL }; *p; p++) {
		assert_int_equal(cgfs_read_cpuset(cg, *p, CGFS_CPUS, &got), 0);
		assert_true(cpumask_empty(&got));	/* empty own sets stay inherited */
	}
	assert_int_equal(cgfs_write_cpuset(cg, "/kubepods", "/kubepods/gone", CGFS_CPUS, &m), -ENOENT);
	cgfs_free(cg);

	/* v1: an empty set is refused before any I/O */
	cg = open_tree(CGFS_MODE_V1);
	cpumask_zero(&m);
	assert_int_equal(cgfs_write_cpuset(cg, "/kubepods", "/kubepods/burstable/podA/c1", CGFS_CPUS, &m), -EINVAL);
	assert_int_equal(cgfs_read_cpuset(cg, "/kubepods/burstable/podA/c1", CGFS_CPUS, &got), 0);
	assert_int_equal(cpulist_format(&got, text, sizeof(text)), 1);
	assert_string_equal(text, "1");
	cgfs_free(cg);
}

/*
 * Where a container runs, as recovery must read it. On v2 with
 * hierarchical writes an integer container inherits its set from its pod:
 * its own cpuset.cpus is "" (or every CPU), the effective set is its
 * CPUs. Reading the own set here made a restart move such a container
 * (tests/vm/test_restart.sh, "g2 moved: 4-7 -> 8-11").
 */
static void test_running_cpus(void **state)
{
	struct cpumask got, want;
	struct cgfs *cg;

	(void)state;
	mkdir_in("kubepods");
	mkdir_in("kubepods/podG");
	mkdir_in("kubepods/podG/c1");
	mkdir_in("kubepods/podG/c2");
	write_file(tmpdir, "kubepods/podG/cpuset.cpus", "4-7\n");
	write_file(tmpdir, "kubepods/podG/c1/cpuset.cpus", "\n");	/* inherits */
	write_file(tmpdir, "kubepods/podG/c1/cpuset.cpus.effective", "4-7\n");
	write_file(tmpdir, "kubepods/podG/c2/cpuset.cpus", "0-15\n");	/* inherits, ENOSPC kind */
	write_file(tmpdir, "kubepods/podG/c2/cpuset.cpus.effective", "4-7\n");
	write_file(tmpdir, "kubepods/podG/c2/cpuset.effective_cpus", "8-9\n");

	cg = open_tree(CGFS_MODE_V2);
	assert_int_equal(cpulist_parse("4-7", &want), 0);
	assert_int_equal(cgfs_read_running_cpus(cg, "/kubepods/podG/c1", &got), 0);
	assert_true(cpumask_equal(&got, &want));
	assert_int_equal(cgfs_read_running_cpus(cg, "/kubepods/podG/c2", &got), 0);
	assert_true(cpumask_equal(&got, &want));
	assert_int_equal(cgfs_read_running_cpus(cg, "/kubepods/podG/gone", &got), -ENOENT);
	assert_int_equal(cgfs_read_running_cpus(NULL, "/kubepods/podG/c1", &got), -EINVAL);
	cgfs_free(cg);

	/* v1: a child is within its parent, its own set is where it runs */
	cg = open_tree(CGFS_MODE_V1);
	assert_int_equal(cpulist_parse("0-15", &want), 0);
	assert_int_equal(cgfs_read_running_cpus(cg, "/kubepods/podG/c2", &got), 0);
	assert_true(cpumask_equal(&got, &want));
	cgfs_free(cg);
}

/* A child that waits to be killed (or for us to die: a failed assert
 * leaves none behind). */
static pid_t sleeper(void)
{
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		for (;;)
			pause();
	}
	return pid;
}

/*
 * cgfs_kill without a freezer (none in this tree) signals a pid read from
 * cgroup.procs only once /proc/<pid>/cgroup puts that task in the cgroup:
 * a pid read there may have been reused by another task since. The tree
 * is a plain directory, so cgroup.procs never empties (-EBUSY, after a
 * bounded wait). Where the child really is: the first line of its
 * /proc/<pid>/cgroup, "<hierarchy id>:<controllers>:<path>", which a
 * fake mount of that hierarchy id and a directory at that path stand for.
 */
static void test_kill_checks_the_task(void **state)
{
	struct cgfs_mounts m = { .mode = CGFS_MODE_V1 };
	char line[512] = "", dir[600], procs[64], cmd[700], *path;
	pid_t outside = sleeper(), inside = sleeper();
	struct cgfs *cg = NULL;
	FILE *f;
	int status;

	(void)state;
	f = fopen("/proc/self/cgroup", "re");
	assert_non_null(f);
	assert_non_null(fgets(line, sizeof(line), f));
	fclose(f);
	line[strcspn(line, "\n")] = '\0';
	m.cpuset_hierarchy_id = atoi(line);
	path = strchr(strchr(line, ':') + 1, ':') + 1;
	snprintf(m.cpuset_mnt, sizeof(m.cpuset_mnt), "%s", tmpdir);
	assert_int_equal(cgfs_open(&m, &cg), 0);

	/* in another cgroup by /proc, pid 1, ourselves: nobody is hit */
	mkdir_in("pod");
	mkdir_in("pod/c1");
	snprintf(procs, sizeof(procs), "1\n%d\n%d\n", (int)getpid(), (int)outside);
	snprintf(dir, sizeof(dir), "%s/pod/c1", tmpdir);
	write_file(dir, "cgroup.procs", procs);
	assert_int_equal(cgfs_kill(cg, "/pod/c1"), -EBUSY);
	assert_int_equal(waitpid(outside, &status, WNOHANG), 0);

	/* in the cgroup by /proc: it goes */
	snprintf(cmd, sizeof(cmd), "mkdir -p '%s%s'", tmpdir, path);
	assert_int_equal(system(cmd), 0);
	snprintf(dir, sizeof(dir), "%s%s", tmpdir, path);
	snprintf(procs, sizeof(procs), "%d\n", (int)inside);
	write_file(dir, "cgroup.procs", procs);
	assert_int_equal(cgfs_kill(cg, path), -EBUSY);
	assert_int_equal(waitpid(inside, &status, 0), inside);
	assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);

	kill(outside, SIGKILL);
	waitpid(outside, NULL, 0);
	cgfs_free(cg);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_path_table),
		cmocka_unit_test(test_parse_path_errors),
		cmocka_unit_test(test_qos_name),
		cmocka_unit_test_setup_teardown(test_detect_hybrid, setup_tmpdir, teardown_tmpdir),
		cmocka_unit_test_setup_teardown(test_detect_v1, setup_tmpdir, teardown_tmpdir),
		cmocka_unit_test_setup_teardown(test_detect_v2, setup_tmpdir, teardown_tmpdir),
		cmocka_unit_test(test_detect_missing_files),
		cmocka_unit_test(test_detect_text),
		cmocka_unit_test_setup_teardown(test_walk_and_files, setup_tmpdir, teardown_tmpdir),
		cmocka_unit_test_setup_teardown(test_v2_widen_tree, setup_tmpdir, teardown_tmpdir),
		cmocka_unit_test_setup_teardown(test_running_cpus, setup_tmpdir, teardown_tmpdir),
		cmocka_unit_test_setup_teardown(test_kill_checks_the_task, setup_tmpdir, teardown_tmpdir),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
