// SPDX-License-Identifier: Apache-2.0
/*
 * nri_conn.c and nri_serve.c: whole conversations with a test runtime
 * written here, over a socketpair (the pre-installed plugin's way) and a
 * listening Unix socket (the external plugin's way, with reconnects). The
 * peer builds its messages with the same generated protobuf-c code and
 * reads ours with nri_rx_feed, whose framing test_nri_wire checks from
 * hand-made bytes.
 */
#include <errno.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>
#include "user/base/clock.h"
#include "user/nri/nri_msg.h"
#include "user/nri/nri_wire.h"
#include "user/nri/ttrpc.pb-c.h"

#define PB(x)	nri__pkg__api__v1alpha1__##x

/* --- the test runtime --- */

struct msg {
	uint32_t conn, stream;
	uint8_t type;
	uint8_t *data;
	size_t len;
};

struct peer {
	int fd;
	struct nri_rx rx;
	struct msg q[32];
	int nq;
	uint32_t next_stream;	/* the runtime's calls: odd too */
};

static int queue(void *ctx, const struct nri_ttrpc_msg *m)
{
	struct peer *p = ctx;
	struct msg *q = &p->q[p->nq++];

	q->conn = m->conn;
	q->stream = m->stream;
	q->type = m->type;
	q->len = m->len;
	q->data = malloc(m->len ? m->len : 1);
	memcpy(q->data, m->data, m->len);
	return 0;
}

/* The next message the plugin sent; fails after 2 s of silence. */
static struct msg peer_recv(struct peer *p)
{
	struct msg m;

	while (p->nq == 0) {
		struct pollfd pfd = { p->fd, POLLIN, 0 };
		uint8_t buf[65536];
		ssize_t n;

		if (poll(&pfd, 1, 2000) != 1)
			fail_msg("the plugin sent nothing");
		n = read(p->fd, buf, sizeof(buf));
		if (n <= 0)
			fail_msg("the plugin closed the connection");
		assert_int_equal(nri_rx_feed(&p->rx, buf, (size_t)n, queue, p), 0);
	}
	m = p->q[0];
	memmove(p->q, p->q + 1, (size_t)--p->nq * sizeof(p->q[0]));
	return m;
}

static void peer_write(struct peer *p, struct nri_buf *out)
{
	assert_int_equal(write(p->fd, nri_buf_data(out), nri_buf_live(out)),
			 (ssize_t)nri_buf_live(out));
	nri_buf_release(out);
}

/* A call of the Plugin service on connection 1; returns its stream. */
static uint32_t peer_call(struct peer *p, const char *method, const ProtobufCMessage *body)
{
	struct nri_buf out = { 0 };
	uint32_t s = p->next_stream;

	p->next_stream += 2;
	assert_int_equal(nri_ttrpc_put_request(&out, NRI_CONN_PLUGIN, s, "nri.pkg.api.v1alpha1.Plugin",
					       method, body, 1 << 24), 0);
	peer_write(p, &out);
	return s;
}

static void peer_answer(struct peer *p, uint32_t stream, int code, const ProtobufCMessage *body)
{
	struct nri_buf out = { 0 };

	assert_int_equal(nri_ttrpc_put_response(&out, NRI_CONN_RUNTIME, stream, code,
						code ? "refused" : NULL, body, 1 << 24), 0);
	peer_write(p, &out);
}

/* The plugin's answer to stream s on connection 1, decoded. */
static Ttrpc__Response *peer_response(struct peer *p, uint32_t s)
{
	struct msg m = peer_recv(p);
	Ttrpc__Response *r;

	assert_int_equal(m.conn, NRI_CONN_PLUGIN);
	assert_int_equal(m.type, NRI_TTRPC_RESPONSE);
	assert_int_equal(m.stream, s);
	r = ttrpc__response__unpack(NULL, m.len, m.data);
	assert_non_null(r);
	free(m.data);
	return r;
}

/* A call the plugin made on connection 2. */
static Ttrpc__Request *peer_request(struct peer *p, const char *method, uint32_t *stream)
{
	struct msg m = peer_recv(p);
	Ttrpc__Request *r;

	assert_int_equal(m.conn, NRI_CONN_RUNTIME);
	assert_int_equal(m.type, NRI_TTRPC_REQUEST);
	assert_int_equal(m.stream % 2, 1);
	r = ttrpc__request__unpack(NULL, m.len, m.data);
	assert_non_null(r);
	assert_int_equal(r->service.len, strlen("nri.pkg.api.v1alpha1.Runtime"));
	assert_memory_equal(r->service.data, "nri.pkg.api.v1alpha1.Runtime", r->service.len);
	assert_int_equal(r->method.len, strlen(method));
	assert_memory_equal(r->method.data, method, r->method.len);
	*stream = m.stream;
	free(m.data);
	return r;
}

static void peer_release(struct peer *p)
{
	for (int i = 0; i < p->nq; i++)
		free(p->q[i].data);
	nri_rx_release(&p->rx);
	if (p->fd >= 0)
		close(p->fd);
}

/* --- the daemon's side: handlers that record and answer --- */

struct seen {
	int up, down;
	char runtime[64];
	size_t sync_n;
	char sync_names[8][64];
	char created[72], updated_quota[32], removed[72], removed_sb[72];
	bool refuse;
};

static void h_connected(void *ctx, bool up, const char *name, const char *version)
{
	struct seen *s = ctx;

	if (up) {
		s->up++;
		snprintf(s->runtime, sizeof(s->runtime), "%s %s", name, version);
	} else {
		s->down++;
	}
}

static int h_sync(void *ctx, const struct nri_container *cts, size_t n, struct nri_reply *r)
{
	struct seen *s = ctx;

	s->sync_n = n;
	for (size_t i = 0; i < n && i < 8; i++)
		snprintf(s->sync_names[i], sizeof(s->sync_names[i]), "%s/%s/%s",
			 cts[i].meta.pod_name, cts[i].meta.container_name, cts[i].id);
	return nri_reply_add_update(r, cts[0].id, "0-1", "");
}

static int h_create(void *ctx, const struct nri_container *ct, struct nri_reply *r)
{
	struct seen *s = ctx;

	snprintf(s->created, sizeof(s->created), "%s", ct->id);
	if (s->refuse) {
		snprintf(r->error, sizeof(r->error), "cpusetd: no free CPUs\nfor %.64s",
			 ct->meta.pod_name);
		return 0;
	}
	r->adjust = true;
	strcpy(r->cpus, "1");
	strcpy(r->mems, "0");
	return nri_reply_add_update(r, "shared-one", "0", "");
}

static int h_update(void *ctx, const struct nri_container *ct, struct nri_reply *r)
{
	struct seen *s = ctx;

	snprintf(s->updated_quota, sizeof(s->updated_quota), "%lld", (long long)ct->meta.quota_us);
	return nri_reply_add_update(r, ct->id, "1", "");
}

static int h_stop(void *ctx, const struct nri_container *ct, struct nri_reply *r)
{
	(void)ctx;
	(void)ct;
	(void)r;
	return -ENOMEM;		/* the layer must turn this into an error status */
}

static void h_remove(void *ctx, const char *id, const char *sandbox)
{
	struct seen *s = ctx;

	snprintf(s->removed, sizeof(s->removed), "%s", id);
	snprintf(s->removed_sb, sizeof(s->removed_sb), "%s", sandbox);
}

static const struct nri_handlers handlers = {
	.connected = h_connected, .synchronize = h_sync, .create_container = h_create,
	.update_container = h_update, .stop_container = h_stop, .remove = h_remove,
};

/* --- message builders --- */

static ProtobufCBinaryData B(const char *s)
{
	return (ProtobufCBinaryData){ strlen(s), (uint8_t *)s };
}

static void mk_pod(PbPod *p, const char *id, const char *name)
{
	PB(pod_sandbox__init)(p);
	p->id = B(id);
	p->name = B(name);
	p->namespace_ = B("ns");
	p->uid = B("uid");
}

static void mk_ct(PbContainer *c, const char *id, const char *pod, const char *name)
{
	PB(container__init)(c);
	c->id = B(id);
	c->pod_sandbox_id = B(pod);
	c->name = B(name);
	c->state = NRI_CONTAINER_RUNNING;
}

/* Runs the plugin's side once. */
static void run(struct nri_conn *c)
{
	assert_int_equal(nri_conn_dispatch(c), 0);
}

/* RegisterPlugin is the plugin's first word; answered, then Configure. */
static void handshake(struct peer *p, struct nri_conn *c, struct seen *s)
{
	Nri__Pkg__Api__V1alpha1__ConfigureRequest cfg = NRI__PKG__API__V1ALPHA1__CONFIGURE_REQUEST__INIT;
	Nri__Pkg__Api__V1alpha1__RegisterPluginRequest *reg;
	Nri__Pkg__Api__V1alpha1__ConfigureResponse *cr;
	Ttrpc__Request *req;
	Ttrpc__Response *resp;
	uint32_t st, s1;
	int ups = s->up;

	req = peer_request(p, "RegisterPlugin", &st);
	reg = PB(register_plugin_request__unpack)(NULL, req->payload.len, req->payload.data);
	assert_non_null(reg);
	assert_string_equal(reg->plugin_name, "cpusetd");
	assert_string_equal(reg->plugin_idx, "99");
	PB(register_plugin_request__free_unpacked)(reg, NULL);
	ttrpc__request__free_unpacked(req, NULL);
	peer_answer(p, st, 0, NULL);
	run(c);
	assert_false(nri_conn_up(c));	/* registered, not yet configured */
	cfg.runtime_name = B("containerd");
	cfg.runtime_version = B("2.1.9");
	s1 = peer_call(p, "Configure", &cfg.base);
	run(c);
	resp = peer_response(p, s1);
	assert_null(resp->status);
	cr = PB(configure_response__unpack)(NULL, resp->payload.len, resp->payload.data);
	assert_non_null(cr);
	/* CreateContainer, UpdateContainer, StopContainer, RemoveContainer,
	 * RemovePodSandbox: bits 3, 7, 9, 10, 2 (api/event.go). */
	assert_int_equal(cr->events, 1 << 3 | 1 << 7 | 1 << 9 | 1 << 10 | 1 << 2);
	PB(configure_response__free_unpacked)(cr, NULL);
	ttrpc__response__free_unpacked(resp, NULL);
	assert_true(nri_conn_up(c));
	assert_int_equal(s->up, ups + 1);
	assert_string_equal(s->runtime, "containerd 2.1.9");
}

static void test_conversation(void **state)
{
	struct nri_conn_config cfg = { .socket_fd = -1, .plugin_name = "cpusetd", .plugin_index = "99" };
	struct peer p = { .fd = -1, .next_stream = 1 };
	struct seen s = { 0 };
	struct nri_conn *c;
	struct nri_stats st;
	Ttrpc__Response *resp;
	int sv[2];
	uint32_t sid;

	(void)state;
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	p.fd = sv[1];
	cfg.socket_fd = sv[0];
	assert_int_equal(nri_conn_new(&cfg, &handlers, &s, &c), 0);
	assert_int_equal(nri_conn_fd(c), sv[0]);
	handshake(&p, c, &s);

	/* Synchronize in two parts (v0.8.0 more = true); a container of the
	 * first part's pod arrives in the second. */
	{
		PbSyncReq r1 = NRI__PKG__API__V1ALPHA1__SYNCHRONIZE_REQUEST__INIT, r2 = r1;
		Nri__Pkg__Api__V1alpha1__SynchronizeResponse *sr;
		PbPod pa, pb, *pods1[] = { &pa }, *pods2[] = { &pb };
		PbContainer a1, a2, b1, *c1[] = { &a1 }, *c2[] = { &b1, &a2 };

		mk_pod(&pa, "sbA", "podA");
		mk_pod(&pb, "sbB", "podB");
		mk_ct(&a1, "a1", "sbA", "one");
		mk_ct(&a2, "a2", "sbA", "two");
		mk_ct(&b1, "b1", "sbB", "uno");
		r1.n_pods = 1, r1.pods = pods1, r1.n_containers = 1, r1.containers = c1, r1.more = true;
		r2.n_pods = 1, r2.pods = pods2, r2.n_containers = 2, r2.containers = c2;
		sid = peer_call(&p, "Synchronize", &r1.base);
		run(c);
		resp = peer_response(&p, sid);
		sr = PB(synchronize_response__unpack)(NULL, resp->payload.len, resp->payload.data);
		assert_true(sr->more);
		assert_int_equal(sr->n_update, 0);
		assert_int_equal(s.sync_n, 0);	/* not yet */
		PB(synchronize_response__free_unpacked)(sr, NULL);
		ttrpc__response__free_unpacked(resp, NULL);
		sid = peer_call(&p, "Synchronize", &r2.base);
		run(c);
		resp = peer_response(&p, sid);
		sr = PB(synchronize_response__unpack)(NULL, resp->payload.len, resp->payload.data);
		assert_false(sr->more);
		assert_int_equal(s.sync_n, 3);
		assert_string_equal(s.sync_names[0], "podA/one/a1");
		assert_string_equal(s.sync_names[1], "podB/uno/b1");
		assert_string_equal(s.sync_names[2], "podA/two/a2");
		assert_int_equal(sr->n_update, 1);
		assert_memory_equal(sr->update[0]->container_id.data, "a1", 2);
		assert_memory_equal(sr->update[0]->linux_->resources->cpu->cpus.data, "0-1", 3);
		PB(synchronize_response__free_unpacked)(sr, NULL);
		ttrpc__response__free_unpacked(resp, NULL);
	}

	/* CreateContainer: adjustment and an in-band update; then a refusal. */
	{
		Nri__Pkg__Api__V1alpha1__CreateContainerRequest cr =
			NRI__PKG__API__V1ALPHA1__CREATE_CONTAINER_REQUEST__INIT;
		Nri__Pkg__Api__V1alpha1__CreateContainerResponse *ccr;
		PbPod pod;
		PbContainer ct;

		mk_pod(&pod, "sbC", "podC");
		mk_ct(&ct, "new1", "sbC", "web");
		cr.pod = &pod;
		cr.container = &ct;
		sid = peer_call(&p, "CreateContainer", &cr.base);
		run(c);
		resp = peer_response(&p, sid);
		assert_null(resp->status);
		ccr = PB(create_container_response__unpack)(NULL, resp->payload.len, resp->payload.data);
		assert_non_null(ccr->adjust);
		assert_memory_equal(ccr->adjust->linux_->resources->cpu->cpus.data, "1", 1);
		assert_memory_equal(ccr->adjust->linux_->resources->cpu->mems.data, "0", 1);
		assert_int_equal(ccr->n_update, 1);
		assert_memory_equal(ccr->update[0]->container_id.data, "shared-one", 10);
		assert_true(ccr->update[0]->ignore_failure);
		PB(create_container_response__free_unpacked)(ccr, NULL);
		ttrpc__response__free_unpacked(resp, NULL);
		assert_string_equal(s.created, "new1");

		s.refuse = true;
		sid = peer_call(&p, "CreateContainer", &cr.base);
		run(c);
		resp = peer_response(&p, sid);
		assert_non_null(resp->status);
		assert_int_equal(resp->status->code, NRI_STATUS_UNKNOWN);
		/* One line: the newline the handler put in is escaped. */
		assert_null(memchr(resp->status->message.data, '\n', resp->status->message.len));
		assert_int_equal(resp->status->message.len, strlen("cpusetd: no free CPUs?for podC"));
		assert_memory_equal(resp->status->message.data, "cpusetd: no free CPUs?for podC",
				    resp->status->message.len);
		assert_int_equal(resp->payload.len, 0);
		ttrpc__response__free_unpacked(resp, NULL);
	}

	/* UpdateContainer: the request's resources are the ones seen. */
	{
		Nri__Pkg__Api__V1alpha1__UpdateContainerRequest ur =
			NRI__PKG__API__V1ALPHA1__UPDATE_CONTAINER_REQUEST__INIT;
		Nri__Pkg__Api__V1alpha1__UpdateContainerResponse *uresp;
		PbResources res = NRI__PKG__API__V1ALPHA1__LINUX_RESOURCES__INIT;
		PbCpu cpu = NRI__PKG__API__V1ALPHA1__LINUX_CPU__INIT;
		Nri__Pkg__Api__V1alpha1__OptionalInt64 q = NRI__PKG__API__V1ALPHA1__OPTIONAL_INT64__INIT;
		PbContainer ct;

		mk_ct(&ct, "new1", "sbC", "web");
		q.value = 200000;
		cpu.quota = &q;
		res.cpu = &cpu;
		ur.container = &ct;
		ur.linux_resources = &res;
		sid = peer_call(&p, "UpdateContainer", &ur.base);
		run(c);
		resp = peer_response(&p, sid);
		assert_null(resp->status);
		uresp = PB(update_container_response__unpack)(NULL, resp->payload.len, resp->payload.data);
		assert_int_equal(uresp->n_update, 1);
		PB(update_container_response__free_unpacked)(uresp, NULL);
		ttrpc__response__free_unpacked(resp, NULL);
		assert_string_equal(s.updated_quota, "200000");
	}

	/* StopContainer whose handler fails: an error status, still up. */
	{
		Nri__Pkg__Api__V1alpha1__StopContainerRequest sr =
			NRI__PKG__API__V1ALPHA1__STOP_CONTAINER_REQUEST__INIT;
		PbContainer ct;

		mk_ct(&ct, "new1", "sbC", "web");
		sr.container = &ct;
		sid = peer_call(&p, "StopContainer", &sr.base);
		run(c);
		resp = peer_response(&p, sid);
		assert_int_equal(resp->status->code, NRI_STATUS_INTERNAL);
		ttrpc__response__free_unpacked(resp, NULL);
	}

	/* StateChange: RemoveContainer, then RemovePodSandbox. */
	{
		Nri__Pkg__Api__V1alpha1__StateChangeEvent ev =
			NRI__PKG__API__V1ALPHA1__STATE_CHANGE_EVENT__INIT;
		PbPod pod;
		PbContainer ct;

		mk_pod(&pod, "sbC", "podC");
		mk_ct(&ct, "new1", "sbC", "web");
		ev.event = NRI_EVENT_REMOVE_CONTAINER;
		ev.pod = &pod;
		ev.container = &ct;
		sid = peer_call(&p, "StateChange", &ev.base);
		run(c);
		resp = peer_response(&p, sid);
		assert_null(resp->status);
		ttrpc__response__free_unpacked(resp, NULL);
		assert_string_equal(s.removed, "new1");
		assert_string_equal(s.removed_sb, "");
		ev.event = NRI_EVENT_REMOVE_POD_SANDBOX;
		ev.container = NULL;
		sid = peer_call(&p, "StateChange", &ev.base);
		run(c);
		resp = peer_response(&p, sid);
		ttrpc__response__free_unpacked(resp, NULL);
		assert_string_equal(s.removed, "");
		assert_string_equal(s.removed_sb, "sbC");
	}

	/* A method we do not know: Unimplemented, and the connection stays. */
	sid = peer_call(&p, "ValidateContainerAdjustment", NULL);
	run(c);
	resp = peer_response(&p, sid);
	assert_int_equal(resp->status->code, NRI_STATUS_UNIMPLEMENTED);
	ttrpc__response__free_unpacked(resp, NULL);
	assert_true(nri_conn_up(c));

	/* UpdateContainers: our call on connection 2, answered with one
	 * failure, counted. */
	{
		struct nri_update u[2] = { { "x1", "0", "" }, { "x2", "1", "0" } };
		Nri__Pkg__Api__V1alpha1__UpdateContainersRequest *ur;
		Nri__Pkg__Api__V1alpha1__UpdateContainersResponse ans =
			NRI__PKG__API__V1ALPHA1__UPDATE_CONTAINERS_RESPONSE__INIT;
		Ttrpc__Request *req;
		PbUpdate failed = NRI__PKG__API__V1ALPHA1__CONTAINER_UPDATE__INIT, *fp[] = { &failed };
		uint32_t st2;

		assert_int_equal(nri_conn_update_containers(c, u, 2), 0);
		req = peer_request(&p, "UpdateContainers", &sid);
		assert_int_equal(sid, 3);	/* after RegisterPlugin's 1 */
		ur = PB(update_containers_request__unpack)(NULL, req->payload.len, req->payload.data);
		assert_int_equal(ur->n_update, 2);
		assert_false(ur->update[0]->ignore_failure);
		assert_memory_equal(ur->update[1]->linux_->resources->cpu->mems.data, "0", 1);
		PB(update_containers_request__free_unpacked)(ur, NULL);
		ttrpc__request__free_unpacked(req, NULL);
		assert_int_equal(nri_conn_update_containers(c, u, 1), 0);
		req = peer_request(&p, "UpdateContainers", &st2);
		assert_int_equal(st2, 5);
		ttrpc__request__free_unpacked(req, NULL);
		failed.container_id = B("x2");
		ans.n_failed = 1;
		ans.failed = fp;
		peer_answer(&p, sid, 0, &ans.base);
		peer_answer(&p, st2, NRI_STATUS_UNKNOWN, NULL);
		run(c);
		nri_conn_stats(c, &st);
		assert_int_equal(st.update_failures, 2);	/* x2, and the whole second call */
	}

	/* A hostile frame: disconnected, counted, told, not retried (a
	 * pre-installed plugin's fd is given once). */
	{
		uint8_t bad[8] = { 0, 0, 0, 1, 0xff, 0xff, 0xff, 0xff };

		assert_int_equal(write(p.fd, bad, sizeof(bad)), 8);
		run(c);
		assert_int_equal(nri_conn_fd(c), -1);
		assert_false(nri_conn_up(c));
		assert_int_equal(s.down, 1);
		nri_conn_stats(c, &st);
		assert_int_equal(st.connects, 1);
		assert_int_equal(st.disconnects, 1);
		assert_int_equal(st.protocol_errors, 1);
		assert_int_equal(st.requests, 10);
		assert_int_equal(nri_conn_due_us(c), UINT64_MAX);
		assert_int_equal(nri_conn_update_containers(c, NULL, 0), -ENOTCONN);
	}
	nri_conn_free(c);
	peer_release(&p);
}

/* An external plugin: the socket is not there yet, then it is; the
 * runtime goes away and comes back; a refused registration. A runtime
 * that drops the plugin right after registering it is retried later each
 * time, not every 100 ms. */
static void test_reconnect(void **state)
{
	struct nri_conn_config cfg = { .socket_fd = -1, .plugin_name = "cpusetd", .plugin_index = "99" };
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char dir[] = "/tmp/test_nri_conn.XXXXXX";
	struct seen s = { 0 };
	struct nri_conn *c;
	struct nri_stats st;
	uint64_t due, t0, delay[2] = { 0, 0 };
	int lfd;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/nri.sock", dir);
	cfg.socket_path = sa.sun_path;
	assert_int_equal(nri_conn_new(&cfg, &handlers, &s, &c), 0);
	assert_int_equal(nri_conn_fd(c), -1);
	t0 = clock_us(CLOCK_MONOTONIC);
	due = nri_conn_due_us(c);
	assert_true(due > t0 && due <= t0 + 100000);	/* the first backoff */

	lfd = socket(AF_UNIX, SOCK_STREAM, 0);
	assert_int_equal(bind(lfd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(listen(lfd, 4), 0);
	for (int round = 0; round < 3; round++) {
		struct peer p = { .fd = -1, .next_stream = 1 };

		while (clock_us(CLOCK_MONOTONIC) < nri_conn_due_us(c))
			usleep(5000);
		assert_int_equal(nri_conn_tick(c), 0);
		assert_true(nri_conn_fd(c) >= 0);
		p.fd = accept(lfd, NULL, NULL);
		assert_true(p.fd >= 0);
		if (round < 2) {
			handshake(&p, c, &s);
			assert_int_equal(s.up, round + 1);
		} else {
			Ttrpc__Request *req = peer_request(&p, "RegisterPlugin", &(uint32_t){ 0 });

			ttrpc__request__free_unpacked(req, NULL);
			peer_answer(&p, 1, NRI_STATUS_INVALID_ARGUMENT, NULL);
			run(c);
			assert_int_equal(nri_conn_fd(c), -1);
			assert_int_equal(s.down, 2);	/* was never up this time */
			peer_release(&p);
			break;
		}
		/* The runtime restarts: the plugin sees EOF, tells, retries. */
		peer_release(&p);
		run(c);
		assert_int_equal(nri_conn_fd(c), -1);
		assert_int_equal(s.down, round + 1);
		assert_true(nri_conn_due_us(c) != UINT64_MAX);
		delay[round] = nri_conn_due_us(c) - clock_us(CLOCK_MONOTONIC);
	}
	/* Up for less than 10 s each time: 200 ms, then 400 ms. */
	assert_true(delay[0] > 100000);
	assert_true(delay[1] > delay[0] + 100000);
	nri_conn_stats(c, &st);
	assert_int_equal(st.connects, 2);
	assert_int_equal(st.disconnects, 3);
	assert_int_equal(st.protocol_errors, 0);
	nri_conn_free(c);
	close(lfd);
	unlink(sa.sun_path);
	rmdir(dir);
}

/* Shutdown is answered, then the connection closes. */
static void test_shutdown(void **state)
{
	struct nri_conn_config cfg = { .socket_path = "/nonexistent", .socket_fd = -1,
				       .plugin_name = "cpusetd", .plugin_index = "99" };
	struct peer p = { .fd = -1, .next_stream = 1 };
	struct seen s = { 0 };
	struct nri_conn *c;
	Ttrpc__Response *resp;
	int sv[2];
	uint32_t sid;

	(void)state;
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	p.fd = sv[1];
	cfg.socket_fd = sv[0];
	assert_int_equal(nri_conn_new(&cfg, &handlers, &s, &c), 0);
	handshake(&p, c, &s);
	sid = peer_call(&p, "Shutdown", NULL);
	run(c);
	resp = peer_response(&p, sid);
	assert_null(resp->status);
	ttrpc__response__free_unpacked(resp, NULL);
	assert_int_equal(nri_conn_fd(c), -1);
	assert_int_equal(s.down, 1);
	nri_conn_free(c);
	peer_release(&p);
}

static void test_bad_config(void **state)
{
	struct nri_conn_config cfg = { .socket_path = "/x", .socket_fd = -1,
				       .plugin_name = "cpusetd", .plugin_index = "99" };
	struct nri_conn *c;

	(void)state;
	cfg.plugin_index = "9";
	assert_int_equal(nri_conn_new(&cfg, &handlers, NULL, &c), -EINVAL);
	cfg.plugin_index = "99";
	cfg.plugin_name = "a/b";
	assert_int_equal(nri_conn_new(&cfg, &handlers, NULL, &c), -EINVAL);
	cfg.plugin_name = "";
	assert_int_equal(nri_conn_new(&cfg, &handlers, NULL, &c), -EINVAL);
	/* The config's rule (test_config_nri), also for what the runtime
	 * passes a pre-installed plugin: printable is not enough. */
	cfg.plugin_name = "cpu:setd";
	assert_int_equal(nri_conn_new(&cfg, &handlers, NULL, &c), -EINVAL);
	assert_false(nri_plugin_name_valid("a\"b"));
	assert_false(nri_plugin_name_valid("caf\xc3\xa9"));
	assert_false(nri_plugin_name_valid(NULL));
	assert_true(nri_plugin_name_valid("cpu-set_d.1"));
	assert_true(nri_plugin_name_valid("012345678901234567890123456789012345678901234567890123456789012"));
	assert_false(nri_plugin_name_valid("0123456789012345678901234567890123456789012345678901234567890123"));
	assert_false(nri_plugin_index_valid("1"));
	assert_true(nri_plugin_index_valid("00"));
	nri_conn_free(NULL);
}

/* The pre-installed plugin's environment. */
static void test_env(void **state)
{
	struct nri_conn_config cfg = { .socket_path = "/x", .socket_fd = -1,
				       .plugin_name = "cpusetd", .plugin_index = "99" };

	(void)state;
	unsetenv("NRI_PLUGIN_SOCKET");
	assert_int_equal(nri_conn_config_from_env(&cfg), 0);
	assert_int_equal(cfg.socket_fd, -1);
	setenv("NRI_PLUGIN_SOCKET", "3x", 1);
	assert_int_equal(nri_conn_config_from_env(&cfg), -EINVAL);
	setenv("NRI_PLUGIN_SOCKET", "987654", 1);	/* not open */
	assert_int_equal(nri_conn_config_from_env(&cfg), -EINVAL);
	assert_int_equal(cfg.socket_fd, -1);
	setenv("NRI_PLUGIN_SOCKET", "2", 1);		/* stderr is open */
	setenv("NRI_PLUGIN_NAME", "placement", 1);
	setenv("NRI_PLUGIN_IDX", "42", 1);
	assert_int_equal(nri_conn_config_from_env(&cfg), 1);
	assert_int_equal(cfg.socket_fd, 2);
	assert_string_equal(cfg.plugin_name, "placement");
	assert_string_equal(cfg.plugin_index, "42");
	unsetenv("NRI_PLUGIN_SOCKET");
	unsetenv("NRI_PLUGIN_NAME");
	unsetenv("NRI_PLUGIN_IDX");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_conversation),
		cmocka_unit_test(test_reconnect),
		cmocka_unit_test(test_shutdown),
		cmocka_unit_test(test_bad_config),
		cmocka_unit_test(test_env),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
