// SPDX-License-Identifier: Apache-2.0
/*
 * NRI messages <-> nri.h's C types. Every string from the runtime is
 * untrusted and arrives as bytes (nri.proto): checked for length and NUL,
 * never cut. The annotations go through meta_parse_annotations, the code
 * that reads a bundle's, so NRI mode and bundle mode accept and refuse the
 * same pods for the same reasons.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "nri_msg.h"

int nri_msg_str(const ProtobufCBinaryData *b, char *dst, size_t size)
{
	dst[0] = '\0';
	if (b->len >= size || (b->len && memchr(b->data, '\0', b->len)))
		return -EBADMSG;
	if (b->len)
		memcpy(dst, b->data, b->len);
	dst[b->len] = '\0';
	return 0;
}

/* A pod or container field into dst; a bad one is the container's fault
 * (first wins), the field stays "". */
static void field(struct pod_meta *m, const char *name, const ProtobufCBinaryData *b,
		  char *dst, size_t size)
{
	if (nri_msg_str(b, dst, size) == 0 || m->invalid != META_VALID)
		return;
	m->invalid = META_INVALID_ANNOTATION;
	snprintf(m->error, sizeof(m->error), "%s is longer than %zu bytes or holds a NUL",
		 name, size - 1);
}

/* Identity from the pod, where given, over what the annotations said. */
static void pod_identity(struct pod_meta *m, const PbPod *pod, struct nri_container *ret)
{
	char buf[sizeof(m->pod_name)];

#define OVER(fld, name, f) do {							\
		field(m, name, &pod->fld, buf, sizeof(m->f));			\
		if (buf[0])							\
			memcpy(m->f, buf, strlen(buf) + 1);			\
	} while (0)
	OVER(id, "PodSandbox.id", sandbox_id);
	OVER(name, "PodSandbox.name", pod_name);
	OVER(namespace_, "PodSandbox.namespace", namespace_);
	OVER(uid, "PodSandbox.uid", pod_uid);
#undef OVER
	if (pod->linux_)
		field(m, "PodSandbox.linux.cgroup_parent", &pod->linux_->cgroup_parent,
		      ret->pod_cgroup_parent, sizeof(ret->pod_cgroup_parent));
}

/* LinuxCPU into m as parse_linux (meta.c) reads a bundle's. */
static void cpu_resources(struct pod_meta *m, const PbCpu *cpu)
{
	int64_t quota = cpu->quota ? cpu->quota->value : -1;
	int r;

	m->period_us = cpu->period ? cpu->period->value : 0;
	m->cpu_shares = cpu->shares ? cpu->shares->value : 0;
	m->quota_us = quota > 0 ? quota : -1;
	m->has_cpu_limit = m->quota_us > 0 && m->period_us > 0;
	/* Only a hint, as in a bundle: too long is "set, value unknown". */
	r = nri_msg_str(&cpu->cpus, m->runtime_cpus, sizeof(m->runtime_cpus));
	m->runtime_sets_cpus = r < 0 || m->runtime_cpus[0];
	if (nri_msg_str(&cpu->mems, m->runtime_mems, sizeof(m->runtime_mems)) < 0)
		m->runtime_mems[0] = '\0';
}

/* Pod annotations, then the container's over them; the pod's labels
 * (meta_parse_pod: the Koordinator class label over the annotation). */
static int annotations(const PbPod *pod, const PbContainer *ct, struct pod_meta *ret)
{
	size_t np = pod ? pod->n_annotations : 0, n = np + ct->n_annotations;
	size_t nl = pod ? pod->n_labels : 0;
	struct meta_annotation *a;
	int r;

	if (n > NRI_MAX_ANNOTATIONS || nl > NRI_MAX_ANNOTATIONS) {
		*ret = (struct pod_meta){ .quota_us = -1, .invalid = META_INVALID_ANNOTATION };
		snprintf(ret->error, sizeof(ret->error), "more than %d %s", NRI_MAX_ANNOTATIONS,
			 nl > NRI_MAX_ANNOTATIONS ? "pod labels" : "annotations");
		return 0;
	}
	a = calloc(n + nl ? n + nl : 1, sizeof(*a));
	if (!a)
		return -ENOMEM;
	for (size_t i = 0; i < n + nl; i++) {
		const PbStrEntry *e = i < np ? pod->annotations[i] :
				      i < n ? ct->annotations[i - np] : pod->labels[i - n];

		a[i] = (struct meta_annotation){ (const char *)e->key.data, e->key.len,
						 (const char *)e->value.data, e->value.len };
	}
	r = meta_parse_pod(a + n, nl, a, n, ret);
	free(a);
	return r;
}

int nri_msg_container(const PbPod *pod, const PbContainer *ct, const PbResources *res,
		      struct nri_container *ret)
{
	struct nri_container c = { .state = NRI_CONTAINER_UNKNOWN };
	struct pod_meta *m = &c.meta;
	int r;

	if (!ct || nri_msg_str(&ct->id, c.id, sizeof(c.id)) < 0 || !c.id[0] ||
	    strchr(c.id, '/'))
		return -EBADMSG;
	r = annotations(pod, ct, m);
	if (r < 0)
		return r;
	if (pod)
		pod_identity(m, pod, &c);
	if (!m->sandbox_id[0])
		field(m, "Container.pod_sandbox_id", &ct->pod_sandbox_id, m->sandbox_id,
		      sizeof(m->sandbox_id));
	{
		char name[sizeof(m->container_name)];

		field(m, "Container.name", &ct->name, name, sizeof(name));
		if (name[0])
			memcpy(m->container_name, name, strlen(name) + 1);
	}
	m->sandbox = false;	/* NRI never sends the pause container */
	free(m->termination_log);	/* none: NRI never writes as root */
	m->termination_log = NULL;
	if (ct->state >= NRI_CONTAINER_CREATED && ct->state <= NRI_CONTAINER_STOPPED)
		c.state = (enum nri_container_state)ct->state;
	c.pid = ct->pid;
	if (ct->linux_)
		field(m, "Container.linux.cgroups_path", &ct->linux_->cgroups_path,
		      m->cgroups_path, sizeof(m->cgroups_path));
	if (!res && ct->linux_)
		res = ct->linux_->resources;
	if (res && res->cpu)
		cpu_resources(m, res->cpu);
	*ret = c;
	return 0;
}

void nri_container_release(struct nri_container *c)
{
	meta_release(&c->meta);
}

int nri_reply_add_update(struct nri_reply *r, const char *container_id,
			 const char *cpus, const char *mems)
{
	struct nri_update *u;

	if (r->n_updates == r->cap_updates) {
		size_t cap = r->cap_updates ? 2 * r->cap_updates : 16;

		u = reallocarray(r->updates, cap, sizeof(*u));
		if (!u)
			return -ENOMEM;
		r->updates = u;
		r->cap_updates = cap;
	}
	u = &r->updates[r->n_updates++];
	snprintf(u->container_id, sizeof(u->container_id), "%s", container_id);
	snprintf(u->cpus, sizeof(u->cpus), "%s", cpus ? cpus : "");
	snprintf(u->mems, sizeof(u->mems), "%s", mems ? mems : "");
	return 0;
}

void nri_reply_release(struct nri_reply *r)
{
	free(r->updates);
	memset(r, 0, sizeof(*r));
}

static ProtobufCBinaryData bytes_of(const char *s)
{
	return (ProtobufCBinaryData){ strlen(s), (uint8_t *)s };
}

/* cpus and mems into a LinuxCPU; an empty one is left unset. */
static void cpu_set(PbCpu *cpu, const char *cpus, const char *mems)
{
	nri__pkg__api__v1alpha1__linux_cpu__init(cpu);
	cpu->cpus = bytes_of(cpus);
	cpu->mems = bytes_of(mems);
}

struct update_block {
	PbUpdate u;
	PbLinuxUpdate lu;
	PbResources res;
	PbCpu cpu;
};

int nri_msg_updates(const struct nri_update *u, size_t n, bool ignore_failure,
		    struct nri_msg_updates *ret)
{
	struct update_block *b = calloc(n ? n : 1, sizeof(*b));
	PbUpdate **ptrs = calloc(n ? n : 1, sizeof(*ptrs));

	if (!b || !ptrs) {
		free(b);
		free(ptrs);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		nri__pkg__api__v1alpha1__container_update__init(&b[i].u);
		nri__pkg__api__v1alpha1__linux_container_update__init(&b[i].lu);
		nri__pkg__api__v1alpha1__linux_resources__init(&b[i].res);
		cpu_set(&b[i].cpu, u[i].cpus, u[i].mems);
		b[i].res.cpu = &b[i].cpu;
		b[i].lu.resources = &b[i].res;
		b[i].u.container_id = bytes_of(u[i].container_id);
		b[i].u.linux_ = &b[i].lu;
		b[i].u.ignore_failure = ignore_failure;
		ptrs[i] = &b[i].u;
	}
	*ret = (struct nri_msg_updates){ .ptrs = ptrs, .n = n, .blocks = b };
	return 0;
}

void nri_msg_updates_release(struct nri_msg_updates *m)
{
	free(m->ptrs);
	free(m->blocks);
	*m = (struct nri_msg_updates){ 0 };
}

void nri_msg_adjust(const struct nri_reply *r, struct nri_msg_adjust *ret)
{
	nri__pkg__api__v1alpha1__container_adjustment__init(&ret->adj);
	nri__pkg__api__v1alpha1__linux_container_adjustment__init(&ret->linux_);
	nri__pkg__api__v1alpha1__linux_resources__init(&ret->res);
	cpu_set(&ret->cpu, r->cpus, r->mems);
	ret->res.cpu = &ret->cpu;
	ret->linux_.resources = &ret->res;
	ret->adj.linux_ = &ret->linux_;
}
