/* SPDX-License-Identifier: Apache-2.0 */
/*
 * NRI's protobuf messages (protobuf-c, from user/nri/nri.proto) to and
 * from the plain C of nri.h; for the files of user/nri and their tests.
 * No I/O, no state: every function is a conversion.
 */
#ifndef CPUSETD_NRI_MSG_H
#define CPUSETD_NRI_MSG_H

#ifdef __bpf__
#error "user-space header: BPF programs share only maps/cpusetd.h"
#endif

#include <stdbool.h>
#include "user/nri/nri.pb-c.h"
#include "nri.h"

/* Short names for the generated types (package nri.pkg.api.v1alpha1). */
typedef Nri__Pkg__Api__V1alpha1__PodSandbox		PbPod;
typedef Nri__Pkg__Api__V1alpha1__Container		PbContainer;
typedef Nri__Pkg__Api__V1alpha1__LinuxResources		PbResources;
typedef Nri__Pkg__Api__V1alpha1__LinuxCPU		PbCpu;
typedef Nri__Pkg__Api__V1alpha1__ContainerUpdate	PbUpdate;
typedef Nri__Pkg__Api__V1alpha1__LinuxContainerUpdate	PbLinuxUpdate;
typedef Nri__Pkg__Api__V1alpha1__ContainerAdjustment	PbAdjust;
typedef Nri__Pkg__Api__V1alpha1__LinuxContainerAdjustment PbLinuxAdjust;
typedef Nri__Pkg__Api__V1alpha1__StrEntry		PbStrEntry;
typedef Nri__Pkg__Api__V1alpha1__SynchronizeRequest	PbSyncReq;

/* api.proto enum Event: the ones we subscribe to. */
#define NRI_EVENT_REMOVE_POD_SANDBOX	3
#define NRI_EVENT_CREATE_CONTAINER	4
#define NRI_EVENT_UPDATE_CONTAINER	8
#define NRI_EVENT_STOP_CONTAINER	10
#define NRI_EVENT_REMOVE_CONTAINER	11
/* ConfigureResponse.events: bit (event - 1) per event (api/event.go). */
#define NRI_EVENT_BIT(e)		(1 << ((e) - 1))

/* The annotations of one PodSandbox and Container together may hold this
 * many entries; more is refused (META_INVALID_ANNOTATION). Kubernetes
 * limits a pod's annotations to 256 KiB in total. */
#define NRI_MAX_ANNOTATIONS		4096

/*
 * One container and its pod (pod may be NULL: unknown) into *ret, as
 * nri.h struct nri_container describes. res, when not NULL, replaces the
 * container's own resources (UpdateContainerRequest.linux_resources).
 * A pod or container string that does not fit its field or holds a NUL
 * makes ret->meta.invalid META_INVALID_ANNOTATION naming the field (the
 * first fault wins, as for a bundle). Release *ret with
 * nri_container_release.
 * Returns 0; -EBADMSG when the container id is missing, too long, or has
 * a NUL or '/' (nothing can be said about such a container); -ENOMEM.
 */
int nri_msg_container(const PbPod *pod, const PbContainer *ct, const PbResources *res,
		      struct nri_container *ret);
void nri_container_release(struct nri_container *c);

/* The wire form of updates: built from nri_update, pointing into them
 * (keep them alive while this is used). */
struct nri_msg_updates {
	PbUpdate **ptrs;	/* n pointers, for the repeated field */
	size_t n;
	void *blocks;		/* owned */
};

/* Builds u[0..n) with ignore_failure as given. Returns 0 or -ENOMEM. */
int nri_msg_updates(const struct nri_update *u, size_t n, bool ignore_failure,
		    struct nri_msg_updates *ret);
void nri_msg_updates_release(struct nri_msg_updates *m);

/* A ContainerAdjustment that sets cpus (and mems when r->mems is not "")
 * and nothing else; points into r. Cannot fail. */
struct nri_msg_adjust {
	PbAdjust adj;
	PbLinuxAdjust linux_;
	PbResources res;
	PbCpu cpu;
};
void nri_msg_adjust(const struct nri_reply *r, struct nri_msg_adjust *ret);

/* Frees the updates a handler appended and zeroes r. */
void nri_reply_release(struct nri_reply *r);

/* A bytes field the peer sent, as a C string in dst[size]. Returns 0, or
 * -EBADMSG when it holds a NUL or does not fit (dst is then ""). */
int nri_msg_str(const ProtobufCBinaryData *b, char *dst, size_t size);

#endif
