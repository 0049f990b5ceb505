// SPDX-License-Identifier: Apache-2.0
/*
 * The Plugin service (api.proto service Plugin), served on mux connection
 * 1: each request is decoded, turned into one handler call with nri.h's
 * C types, and answered before we return, so the runtime (which holds its
 * lock while it waits, 2 s at most) is never kept by us.
 *
 * API levels: v0.6.1 (containerd 1.7) and v0.8.0 (2.1) deliver
 * RemoveContainer and RemovePodSandbox as StateChange events; later ones
 * also have methods of those names taking {pod = 1, container = 2}, served
 * too. v0.8.0 may split Synchronize (more = true): the parts are answered
 * at once with more = true and gathered; the last one makes one handler
 * call and carries the updates.
 *
 * A request we cannot decode closes the connection (nri.h); a method we
 * do not know is answered Unimplemented; a handler's failure is the
 * request's error status, which the runtime reports.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "user/base/clock.h"
#include "user/base/log.h"
#include "user/nri/ttrpc.pb-c.h"
#include "nri_conn_internal.h"

#define PB(x)	nri__pkg__api__v1alpha1__##x

/* The events we subscribe to (ConfigureResponse.events). */
static const int events =
	NRI_EVENT_BIT(NRI_EVENT_CREATE_CONTAINER) | NRI_EVENT_BIT(NRI_EVENT_UPDATE_CONTAINER) |
	NRI_EVENT_BIT(NRI_EVENT_STOP_CONTAINER) | NRI_EVENT_BIT(NRI_EVENT_REMOVE_CONTAINER) |
	NRI_EVENT_BIT(NRI_EVENT_REMOVE_POD_SANDBOX);

/* Decodes len bytes as desc in the arena b (freed with it, by the
 * caller of the handler). NULL when undecodable. */
static ProtobufCMessage *decode(const ProtobufCMessageDescriptor *desc, const ProtobufCBinaryData *p,
				struct nri_pb_budget *b)
{
	return protobuf_c_message_unpack(desc, &b->alloc, p->len, p->data);
}

static int reply_ok(struct nri_conn *c, uint32_t stream, const ProtobufCMessage *body)
{
	return nri_ttrpc_put_response(&c->out, NRI_CONN_PLUGIN, stream, NRI_STATUS_OK, NULL, body,
				      NRI_OUT_MAX);
}

static int reply_error(struct nri_conn *c, uint32_t stream, int code, const char *msg)
{
	return nri_ttrpc_put_response(&c->out, NRI_CONN_PLUGIN, stream, code, msg, NULL,
				      NRI_OUT_MAX);
}

/* The handler's verdict as a status: its own failure (rc < 0) or a
 * refusal (reply->error). Returns 1 when answered with an error, 0 when
 * the caller sends the OK body, or put's error. */
static int verdict(struct nri_conn *c, uint32_t stream, int rc, struct nri_reply *reply)
{
	char msg[sizeof(reply->error)];
	int r;

	if (rc >= 0 && !reply->error[0])
		return 0;
	if (rc < 0)
		snprintf(msg, sizeof(msg), "cpusetd: %s", strerror(-rc));
	else
		snprintf(msg, sizeof(msg), "%s", reply->error);
	log_sanitize(msg);	/* one printable line, as nri.h promises */
	r = reply_error(c, stream, rc < 0 ? NRI_STATUS_INTERNAL : NRI_STATUS_UNKNOWN, msg);
	return r < 0 ? r : 1;
}

static int on_configure(struct nri_conn *c, uint32_t stream, const ProtobufCBinaryData *p,
			struct nri_pb_budget *b)
{
	Nri__Pkg__Api__V1alpha1__ConfigureResponse resp = NRI__PKG__API__V1ALPHA1__CONFIGURE_RESPONSE__INIT;
	Nri__Pkg__Api__V1alpha1__ConfigureRequest *req;
	int r;

	req = (void *)decode(&PB(configure_request__descriptor), p, b);
	if (!req)
		return -EBADMSG;
	/* Only for logs and status: a bad one is shown as "?". */
	if (nri_msg_str(&req->runtime_name, c->runtime_name, sizeof(c->runtime_name)) < 0)
		strcpy(c->runtime_name, "?");
	if (nri_msg_str(&req->runtime_version, c->runtime_version, sizeof(c->runtime_version)) < 0)
		strcpy(c->runtime_version, "?");
	log_sanitize(c->runtime_name);
	log_sanitize(c->runtime_version);
	resp.events = events;
	r = reply_ok(c, stream, &resp.base);
	if (r < 0)
		return r;
	c->configured = true;	/* nri_conn.c marks it up */
	return 0;
}

static int cmp_pod(const void *a, const void *b)
{
	const PbPod *x = *(PbPod *const *)a, *y = *(PbPod *const *)b;
	size_t n = x->id.len < y->id.len ? x->id.len : y->id.len;
	int r = n ? memcmp(x->id.data, y->id.data, n) : 0;

	return r ? r : (x->id.len > y->id.len) - (x->id.len < y->id.len);
}

static const PbPod *find_pod(PbPod **pods, size_t n, const ProtobufCBinaryData *id)
{
	PbPod key = { .id = *id }, *k = &key, **hit;

	hit = n ? bsearch(&k, pods, n, sizeof(*pods), cmp_pod) : NULL;
	return hit ? *hit : NULL;
}

/* Every gathered part as one list of nri_container; a container whose id
 * is unusable is left out (logged). Returns 0 with *ret and *n, or -ENOMEM. */
static int sync_containers(struct nri_conn *c, struct nri_container **ret, size_t *n)
{
	size_t np = 0, nc = 0, k = 0;
	PbPod **pods;
	struct nri_container *cts;
	int r = 0;

	for (size_t i = 0; i < c->n_sync_parts; i++) {
		np += c->sync_parts[i]->n_pods;
		nc += c->sync_parts[i]->n_containers;
	}
	pods = calloc(np ? np : 1, sizeof(*pods));
	cts = calloc(nc ? nc : 1, sizeof(*cts));
	if (!pods || !cts) {
		free(pods);
		free(cts);
		return -ENOMEM;
	}
	np = 0;
	for (size_t i = 0; i < c->n_sync_parts; i++)
		for (size_t j = 0; j < c->sync_parts[i]->n_pods; j++)
			pods[np++] = c->sync_parts[i]->pods[j];
	/* Sorted once: a lookup per container stays O(log n) at thousands. */
	qsort(pods, np, sizeof(*pods), cmp_pod);
	for (size_t i = 0; i < c->n_sync_parts && r == 0; i++) {
		for (size_t j = 0; j < c->sync_parts[i]->n_containers; j++) {
			const PbContainer *ct = c->sync_parts[i]->containers[j];

			r = nri_msg_container(find_pod(pods, np, &ct->pod_sandbox_id), ct, NULL, &cts[k]);
			if (r == -ENOMEM)
				break;
			if (r < 0) {
				log_debug("nri: Synchronize: a container without a usable id left out");
				r = 0;
				continue;
			}
			k++;
		}
	}
	free(pods);
	if (r < 0) {
		for (size_t i = 0; i < k; i++)
			nri_container_release(&cts[i]);
		free(cts);
		return r;
	}
	*ret = cts;
	*n = k;
	return 0;
}

void nri_serve_reset(struct nri_conn *c)
{
	free(c->sync_parts);
	c->sync_parts = NULL;
	c->n_sync_parts = 0;
	nri_pb_budget_release(&c->sync_budget);	/* every part at once */
}

const char *const nri_method_names[NRI_METHOD__COUNT] = {
	[NRI_METHOD_SYNCHRONIZE] = "Synchronize",
	[NRI_METHOD_CREATE_CONTAINER] = "CreateContainer",
	[NRI_METHOD_UPDATE_CONTAINER] = "UpdateContainer",
	[NRI_METHOD_STOP_CONTAINER] = "StopContainer",
};

/* t0: when this part's message was read whole (CLOCK_MONOTONIC ns). */
static int on_synchronize(struct nri_conn *c, uint32_t stream, const ProtobufCBinaryData *p,
			  uint64_t t0)
{
	Nri__Pkg__Api__V1alpha1__SynchronizeResponse resp = NRI__PKG__API__V1ALPHA1__SYNCHRONIZE_RESPONSE__INIT;
	struct nri_msg_updates mu = { 0 };
	struct nri_reply reply = { 0 };
	struct nri_container *cts = NULL;
	PbSyncReq *req, **parts;
	size_t n = 0;
	int r;

	if (c->n_sync_parts >= NRI_SYNC_MAX_PARTS) {
		snprintf(c->why, sizeof(c->why), "Synchronize split in more than %d parts",
			 NRI_SYNC_MAX_PARTS);
		return -EBADMSG;
	}
	req = (void *)decode(&PB(synchronize_request__descriptor), p, &c->sync_budget);
	if (!req)
		return -EBADMSG;
	parts = reallocarray(c->sync_parts, c->n_sync_parts + 1, sizeof(*parts));
	if (!parts)
		return -ENOMEM;		/* req goes with the arena */
	c->sync_parts = parts;
	if (c->n_sync_parts == 0)
		c->sync_t0_ns = t0;
	c->sync_parts[c->n_sync_parts++] = req;
	if (req->more) {
		resp.more = true;
		return reply_ok(c, stream, &resp.base);
	}
	r = sync_containers(c, &cts, &n);
	if (r == 0 && c->h.synchronize)
		r = verdict(c, stream, c->h.synchronize(c->ctx, cts, n, &reply), &reply);
	if (r == 0) {
		r = nri_msg_updates(reply.updates, reply.n_updates, true, &mu);
		if (r == 0) {
			resp.n_update = mu.n;
			resp.update = mu.ptrs;
			r = reply_ok(c, stream, &resp.base);
		}
	}
	nri_msg_updates_release(&mu);
	nri_reply_release(&reply);
	for (size_t i = 0; i < n; i++)
		nri_container_release(&cts[i]);
	free(cts);
	if (r >= 0)
		latency_add(&c->st.served[NRI_METHOD_SYNCHRONIZE],
			    clock_ns(CLOCK_MONOTONIC) - c->sync_t0_ns);
	nri_serve_reset(c);
	return r < 0 ? r : 0;
}

/* The {pod = 1, container = 2} requests: Create, Update, Stop (how). */

static int on_container(struct nri_conn *c, uint32_t stream, const ProtobufCBinaryData *p,
			struct nri_pb_budget *b, enum nri_method how)
{
	/* Create/Stop/Update requests share pod = 1, container = 2;
	 * Update adds linux_resources = 3, so its decoder reads all three. */
	Nri__Pkg__Api__V1alpha1__UpdateContainerRequest *req;
	Nri__Pkg__Api__V1alpha1__CreateContainerResponse cresp = NRI__PKG__API__V1ALPHA1__CREATE_CONTAINER_RESPONSE__INIT;
	Nri__Pkg__Api__V1alpha1__UpdateContainerResponse uresp = NRI__PKG__API__V1ALPHA1__UPDATE_CONTAINER_RESPONSE__INIT;
	Nri__Pkg__Api__V1alpha1__StopContainerResponse sresp = NRI__PKG__API__V1ALPHA1__STOP_CONTAINER_RESPONSE__INIT;
	struct nri_msg_updates mu = { 0 };
	struct nri_msg_adjust adj;
	struct nri_reply reply = { 0 };
	struct nri_container ct;
	int r, rc = 0;

	req = (void *)decode(&PB(update_container_request__descriptor), p, b);
	if (!req)
		return -EBADMSG;
	r = nri_msg_container(req->pod, req->container,
			      how == NRI_METHOD_UPDATE_CONTAINER ? req->linux_resources : NULL, &ct);
	if (r == -EBADMSG) {
		/* Nothing can be said about it: fail this request only. */
		r = reply_error(c, stream, NRI_STATUS_INVALID_ARGUMENT,
				"cpusetd: the request names no usable container id");
		goto out;
	}
	if (r < 0)
		goto out;
	switch (how) {
	case NRI_METHOD_CREATE_CONTAINER:
		if (c->h.create_container)
			rc = c->h.create_container(c->ctx, &ct, &reply);
		break;
	case NRI_METHOD_UPDATE_CONTAINER:
		if (c->h.update_container)
			rc = c->h.update_container(c->ctx, &ct, &reply);
		break;
	case NRI_METHOD_STOP_CONTAINER:
		if (c->h.stop_container)
			rc = c->h.stop_container(c->ctx, &ct, &reply);
		break;
	default:	/* not a container request */
		break;
	}
	nri_container_release(&ct);
	r = verdict(c, stream, rc, &reply);
	if (r != 0)
		goto out;
	/* In-band updates: one that fails (a container that just went)
	 * must not fail the request it rides on. */
	r = nri_msg_updates(reply.updates, reply.n_updates, true, &mu);
	if (r < 0)
		goto out;
	switch (how) {
	case NRI_METHOD_CREATE_CONTAINER:
		if (reply.adjust) {
			nri_msg_adjust(&reply, &adj);
			cresp.adjust = &adj.adj;
		}
		cresp.n_update = mu.n;
		cresp.update = mu.ptrs;
		r = reply_ok(c, stream, &cresp.base);
		break;
	case NRI_METHOD_UPDATE_CONTAINER:
		uresp.n_update = mu.n;
		uresp.update = mu.ptrs;
		r = reply_ok(c, stream, &uresp.base);
		break;
	case NRI_METHOD_STOP_CONTAINER:
		sresp.n_update = mu.n;
		sresp.update = mu.ptrs;
		r = reply_ok(c, stream, &sresp.base);
		break;
	default:
		break;
	}
out:
	nri_msg_updates_release(&mu);
	nri_reply_release(&reply);
	return r < 0 ? r : 0;
}

/* A container or pod is gone: id of the container, else of the pod. */
static void removed(struct nri_conn *c, const PbPod *pod, const PbContainer *ct)
{
	char id[72], sb[72];

	if (!c->h.remove)
		return;
	if (ct && nri_msg_str(&ct->id, id, sizeof(id)) == 0 && id[0])
		c->h.remove(c->ctx, id, "");
	else if (!ct && pod && nri_msg_str(&pod->id, sb, sizeof(sb)) == 0 && sb[0])
		c->h.remove(c->ctx, "", sb);
}

static int on_state_change(struct nri_conn *c, uint32_t stream, const ProtobufCBinaryData *p,
			   struct nri_pb_budget *b)
{
	Nri__Pkg__Api__V1alpha1__StateChangeEvent *ev;

	ev = (void *)decode(&PB(state_change_event__descriptor), p, b);
	if (!ev)
		return -EBADMSG;
	if (ev->event == NRI_EVENT_REMOVE_CONTAINER)
		removed(c, ev->pod, ev->container);
	else if (ev->event == NRI_EVENT_REMOVE_POD_SANDBOX)
		removed(c, ev->pod, NULL);
	return reply_ok(c, stream, NULL);
}

/* RemoveContainer / RemovePodSandbox as methods (after v0.8.0). */
static int on_remove(struct nri_conn *c, uint32_t stream, const ProtobufCBinaryData *p,
		     struct nri_pb_budget *b, bool pod_only)
{
	Nri__Pkg__Api__V1alpha1__StopContainerRequest *req;

	req = (void *)decode(&PB(stop_container_request__descriptor), p, b);
	if (!req)
		return -EBADMSG;
	removed(c, req->pod, pod_only ? NULL : req->container);
	return reply_ok(c, stream, NULL);
}

/* Whether b holds exactly the text s. */
static bool is(const ProtobufCBinaryData *b, const char *s)
{
	return b->len == strlen(s) && memcmp(b->data, s, b->len) == 0;
}

int nri_serve_request(struct nri_conn *c, const struct nri_ttrpc_msg *m)
{
	uint64_t t0 = clock_ns(CLOCK_MONOTONIC);
	struct nri_pb_budget budget;
	int timed = -1;		/* the enum nri_method to time, or -1 */
	Ttrpc__Request *req;
	char method[64];
	int r;

	nri_pb_budget_init(&budget, NRI_DECODE_BUDGET);
	req = (void *)protobuf_c_message_unpack(&ttrpc__request__descriptor, &budget.alloc,
						m->len, m->data);
	if (!req) {
		nri_pb_budget_release(&budget);
		snprintf(c->why, sizeof(c->why), "undecodable ttrpc request");
		return -EBADMSG;
	}
	c->st.requests++;
	if (!is(&req->service, NRI_SERVICE_PLUGIN))
		r = reply_error(c, m->stream, NRI_STATUS_UNIMPLEMENTED, "cpusetd: unknown service");
	else if (is(&req->method, "Configure"))
		r = on_configure(c, m->stream, &req->payload, &budget);
	else if (is(&req->method, "Synchronize"))
		r = on_synchronize(c, m->stream, &req->payload, t0);	/* times itself */
	else if (is(&req->method, "CreateContainer"))
		r = on_container(c, m->stream, &req->payload, &budget,
				 timed = NRI_METHOD_CREATE_CONTAINER);
	else if (is(&req->method, "UpdateContainer"))
		r = on_container(c, m->stream, &req->payload, &budget,
				 timed = NRI_METHOD_UPDATE_CONTAINER);
	else if (is(&req->method, "StopContainer"))
		r = on_container(c, m->stream, &req->payload, &budget,
				 timed = NRI_METHOD_STOP_CONTAINER);
	else if (is(&req->method, "StateChange"))
		r = on_state_change(c, m->stream, &req->payload, &budget);
	else if (is(&req->method, "RemoveContainer"))
		r = on_remove(c, m->stream, &req->payload, &budget, false);
	else if (is(&req->method, "RemovePodSandbox"))
		r = on_remove(c, m->stream, &req->payload, &budget, true);
	else if (is(&req->method, "Shutdown")) {
		/* The runtime goes away: answer, then close and retry. */
		r = reply_ok(c, m->stream, NULL);
		c->close_after_flush = true;
		snprintf(c->why, sizeof(c->why), "the runtime asked to shut down");
	} else {
		if (nri_msg_str(&req->method, method, sizeof(method)) < 0)
			strcpy(method, "?");
		log_sanitize(method);
		log_debug("nri: method %s not implemented", method);
		r = reply_error(c, m->stream, NRI_STATUS_UNIMPLEMENTED,
				"cpusetd: method not implemented");
	}
	if (r == -EBADMSG && !c->why[0]) {
		if (nri_msg_str(&req->method, method, sizeof(method)) < 0)
			strcpy(method, "?");
		log_sanitize(method);
		snprintf(c->why, sizeof(c->why), "undecodable %s request", method);
	}
	nri_pb_budget_release(&budget);	/* the request and its payload's messages */
	if (timed >= 0 && r >= 0)
		latency_add(&c->st.served[timed], clock_ns(CLOCK_MONOTONIC) - t0);
	return r;
}
