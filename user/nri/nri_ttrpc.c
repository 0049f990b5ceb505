// SPDX-License-Identifier: Apache-2.0
/*
 * ttrpc, our side (containerd/ttrpc PROTOCOL.md, request.proto): a 10-byte
 * header (big-endian uint32 data length, uint32 stream id, uint8 type,
 * uint8 flags) before each message; data at most 4 MiB, so the first
 * header byte is always 0 ("reserved"). Requests carry {service, method,
 * payload, timeout_nano, metadata}, responses {status, payload}; the
 * envelope is protobuf-c from user/nri/ttrpc.proto.
 *
 * Also the arena with a byte budget every unpack of peer data goes through.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "user/nri/ttrpc.pb-c.h"
#include "nri_wire.h"

static uint32_t get_be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void put_be32(uint8_t *p, uint32_t v)
{
	p[0] = v >> 24;
	p[1] = v >> 16;
	p[2] = v >> 8;
	p[3] = v;
}

/* The complete messages at the front of one connection's stream, each
 * passed to fn and consumed; a partial one stays. */
static int extract(struct nri_buf *stream, uint32_t conn, nri_msg_fn fn, void *ctx)
{
	while (nri_buf_live(stream) >= NRI_TTRPC_HDR) {
		const uint8_t *h = nri_buf_data(stream);
		struct nri_ttrpc_msg m = {
			.conn = conn,
			.len = get_be32(h),
			.stream = get_be32(h + 4),
			.type = h[8],
			.flags = h[9],
			.data = h + NRI_TTRPC_HDR,
		};
		int r;

		if (h[0] != 0)
			return -EBADMSG;	/* reserved: a length over 16 MiB */
		if (m.len > NRI_TTRPC_MAX)
			return -EMSGSIZE;
		if (nri_buf_live(stream) - NRI_TTRPC_HDR < m.len)
			return 0;
		r = fn(ctx, &m);
		if (r < 0)
			return r;
		nri_buf_consume(stream, NRI_TTRPC_HDR + m.len);
	}
	return 0;
}

/* A stream holds one partial message (<= NRI_MUX_MAX_PAYLOAD) and the
 * frame that completes it. */
#define STREAM_MAX	(2 * (size_t)NRI_MUX_MAX_PAYLOAD)

/* A piece of a frame's payload (nri_mux_feed's callback). Messages are
 * taken out as soon as complete, so the stream stays within STREAM_MAX. */
static int on_chunk(void *ctx, uint32_t conn, const uint8_t *p, size_t n)
{
	struct nri_rx *rx = ctx;
	struct nri_buf *s = &rx->stream[conn - 1];
	int r;

	r = nri_buf_append(s, p, n, STREAM_MAX);
	if (r < 0)
		return r;
	return extract(s, conn, rx->fn, rx->ctx);
}

int nri_rx_feed(struct nri_rx *rx, const uint8_t *p, size_t n, nri_msg_fn fn, void *ctx)
{
	rx->fn = fn;
	rx->ctx = ctx;
	return nri_mux_feed(&rx->mux, p, n, on_chunk, rx);
}

void nri_rx_release(struct nri_rx *rx)
{
	nri_buf_release(&rx->stream[0]);
	nri_buf_release(&rx->stream[1]);
	*rx = (struct nri_rx){ 0 };
}

int nri_ttrpc_put(struct nri_buf *out, uint32_t conn, uint32_t stream, uint8_t type,
		  const ProtobufCMessage *msg, size_t max)
{
	size_t len = protobuf_c_message_get_packed_size(msg);
	uint8_t *buf;
	int r;

	if (len > NRI_TTRPC_MAX)
		return -EMSGSIZE;
	buf = malloc(NRI_TTRPC_HDR + len);
	if (!buf)
		return -ENOMEM;
	put_be32(buf, (uint32_t)len);
	put_be32(buf + 4, stream);
	buf[8] = type;
	buf[9] = 0;	/* unary: no flags */
	protobuf_c_message_pack(msg, buf + NRI_TTRPC_HDR);
	r = nri_mux_put(out, conn, buf, NRI_TTRPC_HDR + len, max);
	free(buf);
	return r;
}

/* body packed into a fresh buffer (*ret, caller frees; NULL body = empty).
 * Returns 0, -EMSGSIZE, -ENOMEM. */
static int pack_body(const ProtobufCMessage *body, ProtobufCBinaryData *ret)
{
	size_t len = body ? protobuf_c_message_get_packed_size(body) : 0;

	*ret = (ProtobufCBinaryData){ 0 };
	if (!len)
		return 0;
	if (len > NRI_TTRPC_MAX)
		return -EMSGSIZE;
	ret->data = malloc(len);
	if (!ret->data)
		return -ENOMEM;
	ret->len = protobuf_c_message_pack(body, ret->data);
	return 0;
}

int nri_ttrpc_put_request(struct nri_buf *out, uint32_t conn, uint32_t stream,
			  const char *service, const char *method,
			  const ProtobufCMessage *body, size_t max)
{
	Ttrpc__Request req = TTRPC__REQUEST__INIT;
	int r;

	req.service = (ProtobufCBinaryData){ strlen(service), (uint8_t *)service };
	req.method = (ProtobufCBinaryData){ strlen(method), (uint8_t *)method };
	r = pack_body(body, &req.payload);
	if (r < 0)
		return r;
	r = nri_ttrpc_put(out, conn, stream, NRI_TTRPC_REQUEST, &req.base, max);
	free(req.payload.data);
	return r;
}

int nri_ttrpc_put_response(struct nri_buf *out, uint32_t conn, uint32_t stream, int code,
			   const char *message, const ProtobufCMessage *body, size_t max)
{
	Ttrpc__Response resp = TTRPC__RESPONSE__INIT;
	Ttrpc__Status status = TTRPC__STATUS__INIT;
	int r;

	/* An OK response carries no status at all, as ttrpc-go sends it. */
	if (code != NRI_STATUS_OK) {
		status.code = code;
		if (message)
			status.message = (ProtobufCBinaryData){ strlen(message), (uint8_t *)message };
		resp.status = &status;
		body = NULL;
	}
	r = pack_body(body, &resp.payload);
	if (r < 0)
		return r;
	r = nri_ttrpc_put(out, conn, stream, NRI_TTRPC_RESPONSE, &resp.base, max);
	free(resp.payload.data);
	return r;
}

#define CHUNK	(64u << 10)

struct chunk {
	struct chunk *next;
	size_t size;		/* with this header, for the budget */
	max_align_t data[];
};

static void *budget_alloc(void *data, size_t size)
{
	struct nri_pb_budget *b = data;
	struct chunk *ch;
	size_t want;
	void *p;

	size = (size + 15) & ~(size_t)15;
	if (size > b->avail) {
		if (size > SIZE_MAX / 2)
			return NULL;
		want = sizeof(*ch) + (size > CHUNK ? size : CHUNK);
		if (want > b->left)
			return NULL;
		ch = malloc(want);
		if (!ch)
			return NULL;
		ch->size = want;
		ch->next = b->chunks;
		b->chunks = ch;
		b->left -= want;
		b->cur = (char *)ch->data;
		b->avail = want - sizeof(*ch);
	}
	p = b->cur;
	b->cur += size;
	b->avail -= size;
	return p;
}

/* Blocks go back all at once (nri_pb_budget_release). */
static void budget_free(void *data, void *p)
{
	(void)data;
	(void)p;
}

void nri_pb_budget_init(struct nri_pb_budget *b, size_t bytes)
{
	*b = (struct nri_pb_budget){ .bytes = bytes, .left = bytes };
	b->alloc.alloc = budget_alloc;
	b->alloc.free = budget_free;
	b->alloc.allocator_data = b;
}

void nri_pb_budget_release(struct nri_pb_budget *b)
{
	struct chunk *ch = b->chunks;

	while (ch) {
		struct chunk *next = ch->next;

		free(ch);
		ch = next;
	}
	nri_pb_budget_init(b, b->bytes);
}
