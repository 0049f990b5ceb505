// SPDX-License-Identifier: Apache-2.0
/*
 * nri_mux.c and nri_ttrpc.c: NRI's frames and ttrpc's messages, from
 * bytes built here by hand (so a mistake in our writer cannot hide one in
 * our reader) and through our writer (round trips).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "user/nri/nri_wire.h"
#include "user/nri/nri_msg.h"
#include "user/nri/ttrpc.pb-c.h"

/* What the feed delivered. */
struct got {
	int n;
	struct {
		uint32_t conn, stream, len;
		uint8_t type, flags;
		uint8_t data[64];
	} m[16];
};

static int collect(void *ctx, const struct nri_ttrpc_msg *m)
{
	struct got *g = ctx;

	assert_true(g->n < 16);
	g->m[g->n].conn = m->conn;
	g->m[g->n].stream = m->stream;
	g->m[g->n].len = m->len;
	g->m[g->n].type = m->type;
	g->m[g->n].flags = m->flags;
	memcpy(g->m[g->n].data, m->data, m->len < 64 ? m->len : 64);
	g->n++;
	return 0;
}

static size_t be32(uint8_t *p, uint32_t v)
{
	p[0] = v >> 24, p[1] = v >> 16, p[2] = v >> 8, p[3] = v;
	return 4;
}

/* A ttrpc message: header + data, into p; returns its size. */
static size_t ttrpc(uint8_t *p, uint32_t stream, uint8_t type, const char *data)
{
	size_t n = strlen(data);

	be32(p, (uint32_t)n);
	be32(p + 4, stream);
	p[8] = type;
	p[9] = 0;
	memcpy(p + 10, data, n);
	return 10 + n;
}

/* A mux frame of conn around payload[0..n), into p; returns its size. */
static size_t frame(uint8_t *p, uint32_t conn, const uint8_t *payload, size_t n)
{
	be32(p, conn);
	be32(p + 4, (uint32_t)n);
	memcpy(p + 8, payload, n);
	return 8 + n;
}

/* Two messages on conn 1 and one on conn 2, fed in every possible pair of
 * pieces: each split gives the same three messages. */
static void test_any_split(void **state)
{
	uint8_t msg[256], wire[512];
	size_t m1, m2, m3, w = 0;

	(void)state;
	m1 = ttrpc(msg, 1, NRI_TTRPC_REQUEST, "hello");
	m2 = ttrpc(msg + m1, 3, NRI_TTRPC_REQUEST, "world!");
	/* The first two messages in one frame of conn 1... */
	w += frame(wire + w, 1, msg, m1 + m2);
	/* ...then conn 2's, then an empty frame, then a frame of conn 9. */
	m3 = ttrpc(msg, 1, NRI_TTRPC_RESPONSE, "reply");
	w += frame(wire + w, 2, msg, m3);
	w += frame(wire + w, 1, msg, 0);
	w += frame(wire + w, 9, (const uint8_t *)"ignored", 7);
	for (size_t cut = 0; cut <= w; cut++) {
		struct nri_rx rx = { 0 };
		struct got g = { 0 };

		assert_int_equal(nri_rx_feed(&rx, wire, cut, collect, &g), 0);
		assert_int_equal(nri_rx_feed(&rx, wire + cut, w - cut, collect, &g), 0);
		assert_int_equal(g.n, 3);
		assert_int_equal(g.m[0].conn, 1);
		assert_int_equal(g.m[0].stream, 1);
		assert_memory_equal(g.m[0].data, "hello", 5);
		assert_int_equal(g.m[1].stream, 3);
		assert_int_equal(g.m[1].len, 6);
		assert_int_equal(g.m[2].conn, 2);
		assert_int_equal(g.m[2].type, NRI_TTRPC_RESPONSE);
		assert_memory_equal(g.m[2].data, "reply", 5);
		nri_rx_release(&rx);
	}
}

/* One message spread over three frames, interleaved with a frame of the
 * other connection: reassembled per connection. */
static void test_span_and_interleave(void **state)
{
	uint8_t msg[64], other[64], wire[512];
	size_t n, o, w = 0;
	struct nri_rx rx = { 0 };
	struct got g = { 0 };

	(void)state;
	n = ttrpc(msg, 5, NRI_TTRPC_REQUEST, "a message in three parts");
	o = ttrpc(other, 7, NRI_TTRPC_RESPONSE, "meanwhile");
	w += frame(wire + w, 1, msg, 4);		/* part of the header */
	w += frame(wire + w, 2, other, o);
	w += frame(wire + w, 1, msg + 4, 12);
	w += frame(wire + w, 1, msg + 16, n - 16);
	assert_int_equal(nri_rx_feed(&rx, wire, w, collect, &g), 0);
	assert_int_equal(g.n, 2);
	assert_int_equal(g.m[0].conn, 2);
	assert_int_equal(g.m[1].conn, 1);
	assert_int_equal(g.m[1].stream, 5);
	assert_memory_equal(g.m[1].data, "a message in three parts", n - 10);
	nri_rx_release(&rx);
}

/* Hostile lengths are refused from the header alone: nothing is
 * allocated for them and nothing is delivered. */
static void test_oversize(void **state)
{
	uint8_t wire[64];
	struct nri_rx rx = { 0 };
	struct got g = { 0 };

	(void)state;
	/* A mux frame longer than one ttrpc message can be. */
	be32(wire, 1);
	be32(wire + 4, NRI_MUX_MAX_PAYLOAD + 1);
	assert_int_equal(nri_rx_feed(&rx, wire, 8, collect, &g), -EMSGSIZE);
	nri_rx_release(&rx);
	/* The largest frame is fine as far as its header goes. */
	be32(wire + 4, NRI_MUX_MAX_PAYLOAD);
	assert_int_equal(nri_rx_feed(&rx, wire, 8, collect, &g), 0);
	assert_null(rx.stream[0].p);
	nri_rx_release(&rx);
	/* A ttrpc length over 4 MiB inside a small frame. */
	be32(wire + 4, 10);
	be32(wire + 8, NRI_TTRPC_MAX + 1);
	memset(wire + 12, 0, 6);
	assert_int_equal(nri_rx_feed(&rx, wire, 18, collect, &g), -EMSGSIZE);
	nri_rx_release(&rx);
	/* ttrpc's reserved first byte. */
	be32(wire + 8, 0x01000000);
	assert_int_equal(nri_rx_feed(&rx, wire, 18, collect, &g), -EBADMSG);
	nri_rx_release(&rx);
	assert_int_equal(g.n, 0);
}

/* A callback's error stops the feed and comes back. */
static int refuse(void *ctx, const struct nri_ttrpc_msg *m)
{
	(void)ctx;
	(void)m;
	return -EPROTO;
}

static void test_callback_error(void **state)
{
	uint8_t msg[64], wire[128];
	struct nri_rx rx = { 0 };
	size_t n;

	(void)state;
	n = ttrpc(msg, 1, NRI_TTRPC_REQUEST, "x");
	n = frame(wire, 1, msg, n);
	assert_int_equal(nri_rx_feed(&rx, wire, n, refuse, NULL), -EPROTO);
	nri_rx_release(&rx);
}

/* Our writer: a Request through nri_ttrpc_put_request reads back. */
static int decode_request(void *ctx, const struct nri_ttrpc_msg *m)
{
	Ttrpc__Request **ret = ctx;

	assert_int_equal(m->conn, NRI_CONN_RUNTIME);
	assert_int_equal(m->stream, 7);
	assert_int_equal(m->type, NRI_TTRPC_REQUEST);
	*ret = ttrpc__request__unpack(NULL, m->len, m->data);
	assert_non_null(*ret);
	return 0;
}

static void test_request_round_trip(void **state)
{
	Nri__Pkg__Api__V1alpha1__RegisterPluginRequest reg =
		NRI__PKG__API__V1ALPHA1__REGISTER_PLUGIN_REQUEST__INIT, *back;
	struct nri_buf out = { 0 };
	struct nri_rx rx = { 0 };
	Ttrpc__Request *req = NULL;

	(void)state;
	reg.plugin_name = "cpusetd";
	reg.plugin_idx = "99";
	assert_int_equal(nri_ttrpc_put_request(&out, NRI_CONN_RUNTIME, 7, "svc", "RegisterPlugin",
					       &reg.base, 1 << 20), 0);
	assert_int_equal(nri_rx_feed(&rx, nri_buf_data(&out), nri_buf_live(&out),
				     decode_request, &req), 0);
	assert_non_null(req);
	assert_int_equal(req->service.len, 3);
	assert_memory_equal(req->method.data, "RegisterPlugin", 14);
	back = nri__pkg__api__v1alpha1__register_plugin_request__unpack(NULL, req->payload.len,
									  req->payload.data);
	assert_non_null(back);
	assert_string_equal(back->plugin_name, "cpusetd");
	assert_string_equal(back->plugin_idx, "99");
	nri__pkg__api__v1alpha1__register_plugin_request__free_unpacked(back, NULL);
	ttrpc__request__free_unpacked(req, NULL);
	nri_rx_release(&rx);
	nri_buf_release(&out);
}

static int decode_response(void *ctx, const struct nri_ttrpc_msg *m)
{
	Ttrpc__Response **ret = ctx;

	assert_int_equal(m->type, NRI_TTRPC_RESPONSE);
	*ret = ttrpc__response__unpack(NULL, m->len, m->data);
	assert_non_null(*ret);
	return 0;
}

/* An error response carries the status and no payload; an OK one no
 * status. */
static void test_response_round_trip(void **state)
{
	Nri__Pkg__Api__V1alpha1__ConfigureResponse cr = NRI__PKG__API__V1ALPHA1__CONFIGURE_RESPONSE__INIT;
	struct nri_buf out = { 0 };
	struct nri_rx rx = { 0 };
	Ttrpc__Response *resp = NULL;

	(void)state;
	cr.events = 5;
	assert_int_equal(nri_ttrpc_put_response(&out, 1, 1, NRI_STATUS_UNIMPLEMENTED, "nope",
						&cr.base, 1 << 20), 0);
	assert_int_equal(nri_rx_feed(&rx, nri_buf_data(&out), nri_buf_live(&out),
				     decode_response, &resp), 0);
	assert_non_null(resp->status);
	assert_int_equal(resp->status->code, NRI_STATUS_UNIMPLEMENTED);
	assert_memory_equal(resp->status->message.data, "nope", 4);
	assert_int_equal(resp->payload.len, 0);
	ttrpc__response__free_unpacked(resp, NULL);
	nri_buf_release(&out);
	assert_int_equal(nri_ttrpc_put_response(&out, 1, 1, 0, NULL, &cr.base, 1 << 20), 0);
	assert_int_equal(nri_rx_feed(&rx, nri_buf_data(&out), nri_buf_live(&out),
				     decode_response, &resp), 0);
	assert_null(resp->status);
	assert_int_equal(resp->payload.len, 2);	/* field 2, varint 5 */
	ttrpc__response__free_unpacked(resp, NULL);
	nri_rx_release(&rx);
	nri_buf_release(&out);
}

/* A payload larger than one frame is split in frames the Go reader can
 * take (NRI_MUX_WRITE_MAX), and the output bound is all or nothing. */
static void test_mux_put_split(void **state)
{
	size_t n = 3 * NRI_MUX_WRITE_MAX + 100, hdrs = 4 * NRI_MUX_HDR;
	uint8_t *p = calloc(1, n);
	struct nri_buf out = { 0 };
	const uint8_t *d;

	(void)state;
	assert_non_null(p);
	assert_int_equal(nri_mux_put(&out, 2, p, n, 2 * n), 0);
	assert_int_equal(nri_buf_live(&out), n + hdrs);
	d = nri_buf_data(&out);
	for (int i = 0; i < 3; i++, d += NRI_MUX_HDR + NRI_MUX_WRITE_MAX) {
		assert_int_equal(d[3], 2);
		assert_int_equal((uint32_t)d[4] << 24 | d[5] << 16 | d[6] << 8 | d[7],
				 NRI_MUX_WRITE_MAX);
	}
	assert_int_equal(d[3], 2);
	assert_int_equal(d[7], 100);
	assert_int_equal(nri_mux_put(&out, 2, p, n, 2 * n), -EMSGSIZE);
	assert_int_equal(nri_buf_live(&out), n + hdrs);
	nri_buf_release(&out);
	free(p);
}

/* The arena refuses past its budget, and unpack fails cleanly:
 * 100,000 empty StrEntry (2 bytes each on the wire) need far more than
 * 1 MiB once unpacked; 64 MiB is enough, and release gives it all back
 * (ASan and valgrind see no leak). */
static void test_budget(void **state)
{
	size_t n = 100000;
	uint8_t *wire = malloc(4 * n);
	struct nri_pb_budget b;
	PbContainer *ct;

	(void)state;
	assert_non_null(wire);
	for (size_t i = 0; i < n; i++) {
		wire[2 * i] = 6 << 3 | 2;	/* Container.annotations, length-delimited */
		wire[2 * i + 1] = 0;
	}
	nri_pb_budget_init(&b, 1 << 20);
	assert_null(protobuf_c_message_unpack(&nri__pkg__api__v1alpha1__container__descriptor,
					      &b.alloc, 2 * n, wire));
	assert_true(b.left < (1 << 20));	/* it took from the budget */
	nri_pb_budget_release(&b);
	assert_int_equal(b.left, 1 << 20);
	nri_pb_budget_init(&b, 64 << 20);
	ct = (PbContainer *)protobuf_c_message_unpack(&nri__pkg__api__v1alpha1__container__descriptor,
						      &b.alloc, 2 * n, wire);
	assert_non_null(ct);
	assert_int_equal(ct->n_annotations, n);
	assert_int_equal(ct->annotations[n - 1]->key.len, 0);
	/* One large block (over a chunk) next to small ones. */
	assert_non_null(b.alloc.alloc(&b, 200000));
	assert_non_null(b.alloc.alloc(&b, 8));
	nri_pb_budget_release(&b);
	assert_int_equal(b.left, 64 << 20);
	assert_null(b.chunks);
	free(wire);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_any_split),
		cmocka_unit_test(test_span_and_interleave),
		cmocka_unit_test(test_oversize),
		cmocka_unit_test(test_callback_error),
		cmocka_unit_test(test_request_round_trip),
		cmocka_unit_test(test_response_round_trip),
		cmocka_unit_test(test_mux_put_split),
		cmocka_unit_test(test_budget),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
