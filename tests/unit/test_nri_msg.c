// SPDX-License-Identifier: Apache-2.0
/*
 * nri_msg.c: NRI messages <-> struct nri_container and the reply's wire
 * form; annotations through meta_parse_annotations, checked against the
 * bundle reader (the same annotations must give the same verdict); and
 * real requests captured from containerd 1.7.24 and 2.1.9
 * (tests/unit/fixtures/nri/README.md). Run from the repo root.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "user/nri/nri_msg.h"

#define FIXTURES	"tests/unit/fixtures/nri/"

static ProtobufCBinaryData B(const char *s)
{
	return (ProtobufCBinaryData){ strlen(s), (uint8_t *)s };
}

/* Builders for a pod and a container with up to 8 annotations each. */
struct pb {
	PbPod pod;
	Nri__Pkg__Api__V1alpha1__LinuxPodSandbox pod_linux;
	PbStrEntry pod_ann[8], *pod_annp[8];
	PbContainer ct;
	Nri__Pkg__Api__V1alpha1__LinuxContainer ct_linux;
	PbResources res;
	PbCpu cpu;
	Nri__Pkg__Api__V1alpha1__OptionalInt64 quota;
	Nri__Pkg__Api__V1alpha1__OptionalUInt64 period, shares;
	PbStrEntry ct_ann[8], *ct_annp[8];
	PbStrEntry pod_lab[8], *pod_labp[8];
};

static void pb_init(struct pb *p)
{
	memset(p, 0, sizeof(*p));
	nri__pkg__api__v1alpha1__pod_sandbox__init(&p->pod);
	nri__pkg__api__v1alpha1__linux_pod_sandbox__init(&p->pod_linux);
	nri__pkg__api__v1alpha1__container__init(&p->ct);
	nri__pkg__api__v1alpha1__linux_container__init(&p->ct_linux);
	nri__pkg__api__v1alpha1__linux_resources__init(&p->res);
	nri__pkg__api__v1alpha1__linux_cpu__init(&p->cpu);
	nri__pkg__api__v1alpha1__optional_int64__init(&p->quota);
	nri__pkg__api__v1alpha1__optional_uint64__init(&p->period);
	nri__pkg__api__v1alpha1__optional_uint64__init(&p->shares);
	p->pod.id = B("sb1");
	p->pod.name = B("web");
	p->pod.namespace_ = B("prod");
	p->pod.uid = B("0000-1111");
	p->pod.linux_ = &p->pod_linux;
	p->pod_linux.cgroup_parent = B("/kubepods/burstable/pod0000-1111");
	p->pod.annotations = p->pod_annp;
	p->pod.labels = p->pod_labp;
	p->ct.id = B("c0ffee");
	p->ct.pod_sandbox_id = B("sb1");
	p->ct.name = B("app");
	p->ct.state = NRI_CONTAINER_RUNNING;
	p->ct.pid = 42;
	p->ct.linux_ = &p->ct_linux;
	p->ct_linux.cgroups_path = B("/kubepods/burstable/pod0000-1111/c0ffee");
	p->ct_linux.resources = &p->res;
	p->res.cpu = &p->cpu;
	p->ct.annotations = p->ct_annp;
}

static void pod_ann(struct pb *p, const char *k, const char *v, size_t vlen)
{
	size_t i = p->pod.n_annotations++;

	nri__pkg__api__v1alpha1__str_entry__init(&p->pod_ann[i]);
	p->pod_ann[i].key = B(k);
	p->pod_ann[i].value = (ProtobufCBinaryData){ vlen, (uint8_t *)v };
	p->pod_annp[i] = &p->pod_ann[i];
}

static void pod_label(struct pb *p, const char *k, const char *v, size_t vlen)
{
	size_t i = p->pod.n_labels++;

	nri__pkg__api__v1alpha1__str_entry__init(&p->pod_lab[i]);
	p->pod_lab[i].key = B(k);
	p->pod_lab[i].value = (ProtobufCBinaryData){ vlen, (uint8_t *)v };
	p->pod_labp[i] = &p->pod_lab[i];
}

static void ct_ann(struct pb *p, const char *k, const char *v)
{
	size_t i = p->ct.n_annotations++;

	nri__pkg__api__v1alpha1__str_entry__init(&p->ct_ann[i]);
	p->ct_ann[i].key = B(k);
	p->ct_ann[i].value = B(v);
	p->ct_annp[i] = &p->ct_ann[i];
}

static void test_identity_and_resources(void **state)
{
	struct nri_container c;
	struct pb p;

	(void)state;
	pb_init(&p);
	p.cpu.quota = &p.quota;
	p.quota.value = 150000;
	p.cpu.period = &p.period;
	p.period.value = 100000;
	p.cpu.shares = &p.shares;
	p.shares.value = 1536;
	p.cpu.cpus = B("2-3");
	pod_ann(&p, "weka.io/cores-ids", "4-5", 3);
	pod_ann(&p, "koordinator.sh/qosClass", "LSR", 3);
	assert_int_equal(nri_msg_container(&p.pod, &p.ct, NULL, &c), 0);
	assert_string_equal(c.id, "c0ffee");
	assert_int_equal(c.state, NRI_CONTAINER_RUNNING);
	assert_int_equal(c.pid, 42);
	assert_string_equal(c.pod_cgroup_parent, "/kubepods/burstable/pod0000-1111");
	assert_int_equal(c.meta.invalid, META_VALID);
	assert_false(c.meta.from_bundle);
	assert_false(c.meta.sandbox);
	assert_string_equal(c.meta.namespace_, "prod");
	assert_string_equal(c.meta.pod_name, "web");
	assert_string_equal(c.meta.pod_uid, "0000-1111");
	assert_string_equal(c.meta.sandbox_id, "sb1");
	assert_string_equal(c.meta.container_name, "app");
	assert_string_equal(c.meta.cgroups_path, "/kubepods/burstable/pod0000-1111/c0ffee");
	assert_string_equal(c.meta.cores_ids, "4-5");
	assert_string_equal(c.meta.pod.qos_class, "LSR");
	assert_int_equal(c.meta.quota_us, 150000);
	assert_int_equal(c.meta.period_us, 100000);
	assert_int_equal(c.meta.cpu_shares, 1536);
	assert_true(c.meta.has_cpu_limit);
	assert_true(c.meta.runtime_sets_cpus);
	assert_string_equal(c.meta.runtime_cpus, "2-3");
	assert_null(c.meta.termination_log);
	nri_container_release(&c);

	/* UpdateContainer: its linux_resources replace the container's. */
	{
		PbResources res = NRI__PKG__API__V1ALPHA1__LINUX_RESOURCES__INIT;
		PbCpu cpu = NRI__PKG__API__V1ALPHA1__LINUX_CPU__INIT;
		Nri__Pkg__Api__V1alpha1__OptionalInt64 q = NRI__PKG__API__V1ALPHA1__OPTIONAL_INT64__INIT;

		q.value = -1;
		cpu.quota = &q;
		res.cpu = &cpu;
		assert_int_equal(nri_msg_container(&p.pod, &p.ct, &res, &c), 0);
		assert_int_equal(c.meta.quota_us, -1);
		assert_int_equal(c.meta.period_us, 0);
		assert_false(c.meta.has_cpu_limit);
		assert_false(c.meta.runtime_sets_cpus);
		nri_container_release(&c);
	}
	/* No pod (a Synchronize container whose pod is not listed). */
	assert_int_equal(nri_msg_container(NULL, &p.ct, NULL, &c), 0);
	assert_string_equal(c.meta.sandbox_id, "sb1");
	assert_string_equal(c.meta.pod_name, "");
	nri_container_release(&c);
}

/* The container's annotations win over the pod's; the pod's identity
 * fields win over annotation keys. */
static void test_annotation_order(void **state)
{
	struct nri_container c;
	struct pb p;

	(void)state;
	pb_init(&p);
	pod_ann(&p, "weka.io/cores-ids", "1", 1);
	ct_ann(&p, "weka.io/cores-ids", "7");
	ct_ann(&p, "io.kubernetes.cri.sandbox-name", "not-the-pod");
	ct_ann(&p, "io.kubernetes.cri.container-type", "sandbox");
	assert_int_equal(nri_msg_container(&p.pod, &p.ct, NULL, &c), 0);
	assert_string_equal(c.meta.cores_ids, "7");
	assert_string_equal(c.meta.pod_name, "web");
	assert_false(c.meta.sandbox);
	nri_container_release(&c);
}

/* The pod label koordinator.sh/qosClass (Koordinator's LabelPodQoS) is
 * the class, over the annotation of that name; the label travels in
 * PodSandbox field 5 (containerd/nri api.proto), checked by a pack and
 * unpack. */
static void test_labels(void **state)
{
	static const char nul[] = "B\0E";
	struct nri_container c;
	struct pb p;

	(void)state;
	/* a label alone */
	pb_init(&p);
	pod_label(&p, "app", "web", 3);
	pod_label(&p, "koordinator.sh/qosClass", "BE", 2);
	{
		size_t len = nri__pkg__api__v1alpha1__pod_sandbox__get_packed_size(&p.pod);
		uint8_t *buf = malloc(len);
		PbPod *back;

		assert_non_null(buf);
		nri__pkg__api__v1alpha1__pod_sandbox__pack(&p.pod, buf);
		back = nri__pkg__api__v1alpha1__pod_sandbox__unpack(NULL, len, buf);
		assert_non_null(back);
		assert_int_equal(nri_msg_container(back, &p.ct, NULL, &c), 0);
		nri__pkg__api__v1alpha1__pod_sandbox__free_unpacked(back, NULL);
		free(buf);
	}
	assert_int_equal(c.meta.invalid, META_VALID);
	assert_string_equal(c.meta.pod.qos_class, "BE");
	assert_int_equal(c.meta.pod.qos_from, META_QOS_FROM_LABEL);
	assert_string_equal(c.meta.pod.qos_annotation_ignored, "");
	nri_container_release(&c);

	/* the annotation alone, as before */
	pb_init(&p);
	pod_ann(&p, "koordinator.sh/qosClass", "LS", 2);
	assert_int_equal(nri_msg_container(&p.pod, &p.ct, NULL, &c), 0);
	assert_string_equal(c.meta.pod.qos_class, "LS");
	assert_int_equal(c.meta.pod.qos_from, META_QOS_FROM_ANNOTATION);
	nri_container_release(&c);

	/* both, disagreeing: the label wins, the annotation is recorded */
	pod_label(&p, "koordinator.sh/qosClass", "SYSTEM", 6);
	assert_int_equal(nri_msg_container(&p.pod, &p.ct, NULL, &c), 0);
	assert_string_equal(c.meta.pod.qos_class, "SYSTEM");
	assert_int_equal(c.meta.pod.qos_from, META_QOS_FROM_LABEL);
	assert_string_equal(c.meta.pod.qos_annotation_ignored, "LS");
	assert_string_equal(c.meta.pod.error, "");
	nri_container_release(&c);

	/* both, agreeing: nothing to record */
	pb_init(&p);
	pod_ann(&p, "koordinator.sh/qosClass", "LS", 2);
	pod_label(&p, "koordinator.sh/qosClass", "LS", 2);
	assert_int_equal(nri_msg_container(&p.pod, &p.ct, NULL, &c), 0);
	assert_int_equal(c.meta.pod.qos_from, META_QOS_FROM_LABEL);
	assert_string_equal(c.meta.pod.qos_annotation_ignored, "");
	nri_container_release(&c);

	/* untrusted values: a NUL, too long; a container has no labels */
	pb_init(&p);
	pod_label(&p, "koordinator.sh/qosClass", nul, 3);
	assert_int_equal(nri_msg_container(&p.pod, &p.ct, NULL, &c), 0);
	assert_non_null(strstr(c.meta.pod.error, "koordinator.sh/qosClass label"));
	nri_container_release(&c);
	pb_init(&p);
	pod_label(&p, "koordinator.sh/qosClass", "SYSTEMSYSTEMSYSTEM", 18);
	assert_int_equal(nri_msg_container(&p.pod, &p.ct, NULL, &c), 0);
	assert_non_null(strstr(c.meta.pod.error, "at most 15 bytes"));
	nri_container_release(&c);
	/* a label key that only starts like ours is another label */
	pb_init(&p);
	pod_label(&p, "koordinator.sh/qosClassX", "BE", 2);
	assert_int_equal(nri_msg_container(&p.pod, &p.ct, NULL, &c), 0);
	assert_string_equal(c.meta.pod.qos_class, "");
	assert_int_equal(c.meta.pod.qos_from, META_QOS_FROM_NONE);
	nri_container_release(&c);
}

/* Malformed values: the same verdict as in a bundle, naming the key. */
static void test_malformed_annotations(void **state)
{
	static char big[(64 << 10) + 2];
	struct nri_container c;
	struct pb p;

	(void)state;
	/* A NUL inside a value, which C would silently cut at. */
	pb_init(&p);
	pod_ann(&p, "weka.io/cores-ids", "1\0-3", 4);
	assert_int_equal(nri_msg_container(&p.pod, &p.ct, NULL, &c), 0);
	assert_int_equal(c.meta.invalid, META_INVALID_ANNOTATION);
	assert_non_null(strstr(c.meta.error, "weka.io/cores-ids"));
	nri_container_release(&c);
	/* Longer than META_MAX_CPULIST_BYTES. */
	pb_init(&p);
	memset(big, '1', sizeof(big) - 1);
	pod_ann(&p, "weka.io/cores-ids", big, sizeof(big) - 1);
	assert_int_equal(nri_msg_container(&p.pod, &p.ct, NULL, &c), 0);
	assert_int_equal(c.meta.invalid, META_INVALID_ANNOTATION);
	assert_non_null(strstr(c.meta.error, "weka.io/cores-ids"));
	nri_container_release(&c);
	/* A pod policy annotation that is not JSON: kept for the policy. */
	pb_init(&p);
	pod_ann(&p, "scheduling.koordinator.sh/resource-status", "{\"cpuset\":", 10);
	assert_int_equal(nri_msg_container(&p.pod, &p.ct, NULL, &c), 0);
	assert_int_equal(c.meta.invalid, META_VALID);
	assert_non_null(strstr(c.meta.pod.error, "resource-status"));
	nri_container_release(&c);
	/* A key with a NUL is no known key, even if it starts like one. */
	pb_init(&p);
	{
		static const char key[] = "weka.io/cores-ids\0x";

		pod_ann(&p, "k", "1", 1);
		p.pod_ann[0].key = (ProtobufCBinaryData){ sizeof(key) - 1, (uint8_t *)key };
	}
	assert_int_equal(nri_msg_container(&p.pod, &p.ct, NULL, &c), 0);
	assert_null(c.meta.cores_ids);
	assert_int_equal(c.meta.invalid, META_VALID);
	nri_container_release(&c);
	/* Empty keys and values come from protobuf-c as NULL with length 0
	 * (fuzz_nri's first find: memchr(NULL) in meta_parse_annotations). */
	pb_init(&p);
	pod_ann(&p, "k", "v", 1);
	p.pod_ann[0].key = (ProtobufCBinaryData){ 0, NULL };
	ct_ann(&p, "weka.io/cores-ids", "");
	p.ct_ann[0].value = (ProtobufCBinaryData){ 0, NULL };
	assert_int_equal(nri_msg_container(&p.pod, &p.ct, NULL, &c), 0);
	assert_int_equal(c.meta.invalid, META_VALID);
	assert_string_equal(c.meta.cores_ids, "");
	nri_container_release(&c);
	/* An identity field that does not fit. */
	pb_init(&p);
	memset(big, 'n', 300);
	big[300] = '\0';
	p.pod.name = B(big);
	assert_int_equal(nri_msg_container(&p.pod, &p.ct, NULL, &c), 0);
	assert_int_equal(c.meta.invalid, META_INVALID_ANNOTATION);
	assert_non_null(strstr(c.meta.error, "PodSandbox.name"));
	nri_container_release(&c);
}

/* An unusable container id is the request's fault. */
static void test_bad_id(void **state)
{
	struct nri_container c;
	struct pb p;

	(void)state;
	pb_init(&p);
	p.ct.id = B("");
	assert_int_equal(nri_msg_container(&p.pod, &p.ct, NULL, &c), -EBADMSG);
	p.ct.id = B("../x");
	assert_int_equal(nri_msg_container(&p.pod, &p.ct, NULL, &c), -EBADMSG);
	p.ct.id = (ProtobufCBinaryData){ 3, (uint8_t *)"a\0b" };
	assert_int_equal(nri_msg_container(&p.pod, &p.ct, NULL, &c), -EBADMSG);
	assert_int_equal(nri_msg_container(&p.pod, NULL, NULL, &c), -EBADMSG);
}

/* The same annotations in a bundle and as NRI pairs: the same fields. */
static void test_parity_with_bundle(void **state)
{
	static const char *const kv[][2] = {
		{ "io.kubernetes.cri.sandbox-name", "web" },
		{ "io.kubernetes.cri.sandbox-namespace", "prod" },
		{ "io.kubernetes.cri.container-name", "app" },
		{ "weka.io/cores-ids", "0-3,8" },
		{ "koordinator.sh/qosClass", "LSE" },
		{ "scheduling.koordinator.sh/resource-spec", "{\"preferredCPUBindPolicy\":\"FullPCPUs\"}" },
		{ "cpusetd.io/prefer-isolated-cpus", "true-but-too-long-for-its-field" },
	};
	struct meta_annotation a[7];
	struct pod_meta fromb, fromn;
	char json[1024];
	size_t off;

	(void)state;
	off = (size_t)snprintf(json, sizeof(json), "{\"annotations\": {");
	for (size_t i = 0; i < 7; i++) {
		a[i] = (struct meta_annotation){ kv[i][0], strlen(kv[i][0]), kv[i][1], strlen(kv[i][1]) };
		off += (size_t)snprintf(json + off, sizeof(json) - off, "%s\"%s\": %s", i ? ", " : "",
					kv[i][0], i == 5 ?
					"\"{\\\"preferredCPUBindPolicy\\\":\\\"FullPCPUs\\\"}\"" : "");
		if (i != 5)
			off += (size_t)snprintf(json + off, sizeof(json) - off, "\"%s\"", kv[i][1]);
	}
	snprintf(json + off, sizeof(json) - off, "}}");
	assert_int_equal(meta_parse_text(json, &fromb), 0);
	assert_int_equal(meta_parse_annotations(a, 7, &fromn), 0);
	assert_string_equal(fromn.pod_name, fromb.pod_name);
	assert_string_equal(fromn.namespace_, fromb.namespace_);
	assert_string_equal(fromn.container_name, fromb.container_name);
	assert_string_equal(fromn.cores_ids, fromb.cores_ids);
	assert_string_equal(fromn.pod.qos_class, fromb.pod.qos_class);
	assert_string_equal(fromn.pod.bind_policy, "FullPCPUs");
	assert_string_equal(fromn.pod.bind_policy, fromb.pod.bind_policy);
	assert_string_equal(fromn.pod.error, fromb.pod.error);
	assert_non_null(strstr(fromn.pod.error, "prefer-isolated"));
	assert_int_equal(fromn.invalid, fromb.invalid);
	meta_release(&fromb);
	meta_release(&fromn);
}

static void test_updates_and_adjust(void **state)
{
	struct nri_reply r = { 0 };
	struct nri_msg_updates mu;
	struct nri_msg_adjust adj;
	uint8_t *wire;
	size_t len;
	Nri__Pkg__Api__V1alpha1__CreateContainerResponse resp =
		NRI__PKG__API__V1ALPHA1__CREATE_CONTAINER_RESPONSE__INIT, *back;

	(void)state;
	r.adjust = true;
	strcpy(r.cpus, "2-3");
	strcpy(r.mems, "0");
	assert_int_equal(nri_reply_add_update(&r, "shared1", "0-1,4-7", ""), 0);
	assert_int_equal(nri_reply_add_update(&r, "shared2", "0-1,4-7", "0-1"), 0);
	for (int i = 0; i < 40; i++)	/* grows past its first capacity */
		assert_int_equal(nri_reply_add_update(&r, "more", "0", NULL), 0);
	assert_int_equal(r.n_updates, 42);
	assert_int_equal(nri_msg_updates(r.updates, r.n_updates, true, &mu), 0);
	nri_msg_adjust(&r, &adj);
	resp.adjust = &adj.adj;
	resp.n_update = mu.n;
	resp.update = mu.ptrs;
	len = protobuf_c_message_get_packed_size(&resp.base);
	wire = malloc(len);
	assert_non_null(wire);
	protobuf_c_message_pack(&resp.base, wire);
	back = nri__pkg__api__v1alpha1__create_container_response__unpack(NULL, len, wire);
	assert_non_null(back);
	assert_memory_equal(back->adjust->linux_->resources->cpu->cpus.data, "2-3", 3);
	assert_int_equal(back->adjust->linux_->resources->cpu->mems.len, 1);
	assert_null(back->adjust->linux_->resources->cpu->quota);
	assert_int_equal(back->n_update, 42);
	assert_memory_equal(back->update[0]->container_id.data, "shared1", 7);
	assert_true(back->update[0]->ignore_failure);
	assert_int_equal(back->update[0]->linux_->resources->cpu->mems.len, 0);
	assert_memory_equal(back->update[1]->linux_->resources->cpu->mems.data, "0-1", 3);
	nri__pkg__api__v1alpha1__create_container_response__free_unpacked(back, NULL);
	free(wire);
	nri_msg_updates_release(&mu);
	nri_reply_release(&r);
	assert_null(r.updates);
}

/* --- real requests --- */

static uint8_t *load(const char *ver, const char *name, size_t *len)
{
	char path[256];
	FILE *f;
	uint8_t *buf = malloc(1 << 20);

	snprintf(path, sizeof(path), FIXTURES "%s/%s", ver, name);
	f = fopen(path, "rb");
	if (!f)
		fail_msg("%s: missing (run from the repo root)", path);
	*len = fread(buf, 1, 1 << 20, f);
	fclose(f);
	return buf;
}

/* One captured Create/Stop request converted. */
static void convert(const char *ver, const char *name, struct nri_container *c)
{
	Nri__Pkg__Api__V1alpha1__CreateContainerRequest *req;
	size_t len;
	uint8_t *buf = load(ver, name, &len);

	req = nri__pkg__api__v1alpha1__create_container_request__unpack(NULL, len, buf);
	assert_non_null(req);
	/* kubelet labels every pod (io.kubernetes.pod.name, ...): real bytes
	 * show PodSandbox field 5 is labels */
	assert_true(req->pod && req->pod->n_labels > 0);
	assert_int_equal(nri_msg_container(req->pod, req->container, NULL, c), 0);
	nri__pkg__api__v1alpha1__create_container_request__free_unpacked(req, NULL);
	free(buf);
}

static void fixtures_of(const char *ver, const char *version)
{
	Nri__Pkg__Api__V1alpha1__ConfigureRequest *cfg;
	Nri__Pkg__Api__V1alpha1__StateChangeEvent *ev;
	PbSyncReq *sync;
	struct nri_container c;
	uint8_t *buf;
	size_t len;
	int seen = 0;

	buf = load(ver, "000-Configure.bin", &len);
	cfg = nri__pkg__api__v1alpha1__configure_request__unpack(NULL, len, buf);
	assert_non_null(cfg);
	assert_memory_equal(cfg->runtime_name.data, "containerd", 10);
	assert_memory_equal(cfg->runtime_version.data, version, strlen(version));
	nri__pkg__api__v1alpha1__configure_request__free_unpacked(cfg, NULL);
	free(buf);

	/* p1/c1: burstable, 500m limit, 250m request, pod annotations. */
	convert(ver, "002-CreateContainer.bin", &c);
	assert_int_equal(c.meta.invalid, META_VALID);
	/* kubelet's own pod labels arrive as PodSandbox.labels (field 5):
	 * none is the class label, so the class is the annotation's. */
	assert_int_equal(c.meta.pod.qos_from, META_QOS_FROM_ANNOTATION);
	assert_string_equal(c.meta.namespace_, "demo");
	assert_string_equal(c.meta.pod_name, "p1");
	assert_string_equal(c.meta.container_name, "c1");
	assert_int_equal(strlen(c.meta.pod_uid), 36);
	assert_int_equal(strlen(c.meta.sandbox_id), 64);
	assert_int_equal(strlen(c.id), 64);
	assert_string_equal(c.meta.cores_ids, "1");
	assert_string_equal(c.meta.pod.qos_class, "LS");
	assert_int_equal(c.meta.quota_us, 50000);
	assert_int_equal(c.meta.period_us, 100000);
	assert_int_equal(c.meta.cpu_shares, 256);
	assert_true(c.meta.has_cpu_limit);
	assert_false(c.meta.runtime_sets_cpus);
	assert_non_null(strstr(c.meta.cgroups_path, "/kubepods/burstable/pod"));
	assert_non_null(strstr(c.pod_cgroup_parent, "/kubepods/burstable/pod"));
	nri_container_release(&c);
	/* p2/c2: Guaranteed, one CPU. */
	convert(ver, "003-CreateContainer.bin", &c);
	assert_string_equal(c.meta.container_name, "c2");
	assert_null(c.meta.cores_ids);
	assert_int_equal(c.meta.quota_us, 100000);
	assert_int_equal(c.meta.cpu_shares, 1024);
	nri_container_release(&c);
	/* p3/c4: BestEffort, a malformed cpulist kept raw for the policy. */
	convert(ver, "004-CreateContainer.bin", &c);
	assert_string_equal(c.meta.cores_ids, "0-x");
	assert_int_equal(c.meta.quota_us, -1);
	assert_false(c.meta.has_cpu_limit);
	assert_int_equal(c.meta.cpu_shares, 2);
	nri_container_release(&c);
	/* StopContainer of c1: running, with the cpus our answer gave it. */
	convert(ver, "005-StopContainer.bin", &c);
	assert_string_equal(c.meta.container_name, "c1");
	assert_int_equal(c.state, NRI_CONTAINER_RUNNING);
	assert_true(c.meta.runtime_sets_cpus);
	assert_string_equal(c.meta.runtime_cpus, "1");
	nri_container_release(&c);
	/* RemoveContainer and RemovePodSandbox as StateChange. */
	buf = load(ver, "006-StateChange.bin", &len);
	ev = nri__pkg__api__v1alpha1__state_change_event__unpack(NULL, len, buf);
	assert_non_null(ev);
	assert_int_equal(ev->event, NRI_EVENT_REMOVE_CONTAINER);
	assert_non_null(ev->container);
	nri__pkg__api__v1alpha1__state_change_event__free_unpacked(ev, NULL);
	free(buf);
	buf = load(ver, "007-StateChange.bin", &len);
	ev = nri__pkg__api__v1alpha1__state_change_event__unpack(NULL, len, buf);
	assert_non_null(ev);
	assert_int_equal(ev->event, NRI_EVENT_REMOVE_POD_SANDBOX);
	assert_null(ev->container);
	assert_memory_equal(ev->pod->name.data, "p1", 2);
	nri__pkg__api__v1alpha1__state_change_event__free_unpacked(ev, NULL);
	free(buf);
	/* A Synchronize after a restart: three containers, each with its pod. */
	buf = load(ver, "008-Synchronize-3-containers.bin", &len);
	sync = nri__pkg__api__v1alpha1__synchronize_request__unpack(NULL, len, buf);
	assert_non_null(sync);
	assert_int_equal(sync->n_containers, 3);
	assert_false(sync->more);
	for (size_t i = 0; i < sync->n_containers; i++) {
		const PbPod *pod = NULL;

		for (size_t j = 0; j < sync->n_pods; j++)
			if (sync->pods[j]->id.len == sync->containers[i]->pod_sandbox_id.len &&
			    !memcmp(sync->pods[j]->id.data, sync->containers[i]->pod_sandbox_id.data,
				    sync->pods[j]->id.len))
				pod = sync->pods[j];
		assert_non_null(pod);
		assert_int_equal(nri_msg_container(pod, sync->containers[i], NULL, &c), 0);
		assert_int_equal(c.state, NRI_CONTAINER_RUNNING);
		assert_true(c.pid > 0);
		if (strcmp(c.meta.container_name, "c4") == 0) {
			assert_string_equal(c.meta.pod_name, "p3");
			assert_string_equal(c.meta.cores_ids, "0-x");
			seen |= 1;
		} else if (strcmp(c.meta.container_name, "c2") == 0) {
			assert_int_equal(c.meta.quota_us, 100000);
			seen |= 2;
		} else if (strcmp(c.meta.container_name, "c3") == 0) {
			seen |= 4;
		}
		nri_container_release(&c);
	}
	assert_int_equal(seen, 7);
	nri__pkg__api__v1alpha1__synchronize_request__free_unpacked(sync, NULL);
	free(buf);
}

static void test_fixtures_containerd_17(void **state)
{
	(void)state;
	fixtures_of("containerd-1.7", "1.7.24");
}

static void test_fixtures_containerd_21(void **state)
{
	(void)state;
	fixtures_of("containerd-2.1", "2.1.9");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_identity_and_resources),
		cmocka_unit_test(test_annotation_order),
		cmocka_unit_test(test_labels),
		cmocka_unit_test(test_malformed_annotations),
		cmocka_unit_test(test_bad_id),
		cmocka_unit_test(test_parity_with_bundle),
		cmocka_unit_test(test_updates_and_adjust),
		cmocka_unit_test(test_fixtures_containerd_17),
		cmocka_unit_test(test_fixtures_containerd_21),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
