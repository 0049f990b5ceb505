// SPDX-License-Identifier: Apache-2.0
/*
 * NRI's multiplexer, our side (containerd/nri pkg/net/multiplex/mux.go):
 * one Unix stream carries frames of an 8-byte header (big-endian uint32
 * connection id, uint32 payload length) and the payload. The frames of one
 * connection are a byte stream; ttrpc messages ride in it and may span
 * frames, or share one. This file turns socket bytes into per-connection
 * streams (nri_ttrpc.c reads messages from them), and writes frames.
 * A frame's length is checked before any payload is taken; frames of
 * unknown connections are skipped without buffering.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
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

int nri_buf_append(struct nri_buf *b, const void *data, size_t n, size_t max)
{
	size_t live = b->len - b->off;

	if (n > max || live > max - n)
		return -EMSGSIZE;
	if (b->len + n > b->cap && b->off) {
		/* Reuse the consumed front before growing. */
		memmove(b->p, b->p + b->off, live);
		b->len = live;
		b->off = 0;
	}
	if (b->len + n > b->cap) {
		size_t cap = b->cap ? b->cap : 4096;
		uint8_t *p;

		while (cap < b->len + n)
			cap *= 2;
		p = realloc(b->p, cap);
		if (!p)
			return -ENOMEM;
		b->p = p;
		b->cap = cap;
	}
	if (n)
		memcpy(b->p + b->len, data, n);
	b->len += n;
	return 0;
}

void nri_buf_consume(struct nri_buf *b, size_t n)
{
	b->off += n;
	if (b->off == b->len)
		b->off = b->len = 0;
}

void nri_buf_release(struct nri_buf *b)
{
	free(b->p);
	*b = (struct nri_buf){ 0 };
}

int nri_mux_feed(struct nri_mux_rx *m, const uint8_t *p, size_t n, nri_chunk_fn fn, void *ctx)
{
	while (n) {
		size_t k;

		if (m->hdr_have < NRI_MUX_HDR) {
			k = NRI_MUX_HDR - m->hdr_have;
			k = k < n ? k : n;
			memcpy(m->hdr + m->hdr_have, p, k);
			m->hdr_have += k;
			p += k;
			n -= k;
			if (m->hdr_have < NRI_MUX_HDR)
				return 0;
			m->cid = get_be32(m->hdr);
			m->left = get_be32(m->hdr + 4);
			if (m->left > NRI_MUX_MAX_PAYLOAD)
				return -EMSGSIZE;
			if (m->left == 0)
				m->hdr_have = 0;
			continue;
		}
		k = m->left < n ? m->left : n;
		if (m->cid == NRI_CONN_PLUGIN || m->cid == NRI_CONN_RUNTIME) {
			int r = fn(ctx, m->cid, p, k);

			if (r < 0)
				return r;
		}
		p += k;
		n -= k;
		m->left -= (uint32_t)k;
		if (m->left == 0)
			m->hdr_have = 0;
	}
	return 0;
}

int nri_mux_put(struct nri_buf *out, uint32_t conn, const uint8_t *p, size_t n, size_t max)
{
	size_t frames = n ? (n + NRI_MUX_WRITE_MAX - 1) / NRI_MUX_WRITE_MAX : 1;
	size_t live = nri_buf_live(out);
	int r;

	/* All or nothing: a half-queued message would desynchronise the peer. */
	if (n > max || frames * NRI_MUX_HDR > max - n || live > max - n - frames * NRI_MUX_HDR)
		return -EMSGSIZE;
	do {
		uint8_t hdr[NRI_MUX_HDR];
		size_t k = n < NRI_MUX_WRITE_MAX ? n : NRI_MUX_WRITE_MAX;

		put_be32(hdr, conn);
		put_be32(hdr + 4, (uint32_t)k);
		r = nri_buf_append(out, hdr, sizeof(hdr), max);
		if (r == 0)
			r = nri_buf_append(out, p, k, max);
		if (r < 0) {
			out->len = out->off + live;	/* undo */
			return r;
		}
		p += k;
		n -= k;
	} while (n);
	return 0;
}
