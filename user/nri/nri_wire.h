/* SPDX-License-Identifier: Apache-2.0 */
/*
 * NRI's wire below the messages, for the files of user/nri and their tests
 * (not for other modules): byte buffers, the multiplexer's frames
 * (nri_mux.c) and ttrpc's messages (nri_ttrpc.c).
 *
 * Sources: containerd/nri pkg/net/multiplex (mux.go, ttrpc.go) for the
 * frames, containerd/ttrpc PROTOCOL.md and request.proto for the messages.
 */
#ifndef CPUSETD_NRI_WIRE_H
#define CPUSETD_NRI_WIRE_H

#ifdef __bpf__
#error "user-space header: BPF programs share only maps/cpusetd.h"
#endif

#include <stddef.h>
#include <stdint.h>
#include <protobuf-c/protobuf-c.h>

/* Mux connection ids (multiplex/ttrpc.go): the plugin serves on 1 and
 * calls the runtime on 2; 0 is reserved; others are dropped, as the Go
 * mux drops frames for a connection nobody opened. */
#define NRI_CONN_PLUGIN		1u
#define NRI_CONN_RUNTIME	2u
#define NRI_MUX_HDR		8u
/* ttrpc: 10-byte header, data at most 4 MiB (PROTOCOL.md "Message Frame"). */
#define NRI_TTRPC_HDR		10u
#define NRI_TTRPC_MAX		(4u << 20)
/* A mux frame carries at most one whole ttrpc message (mux.go
 * maxPayloadSize): a longer length is hostile. */
#define NRI_MUX_MAX_PAYLOAD	(NRI_TTRPC_HDR + NRI_TTRPC_MAX)
/* What we write goes in frames of at most this many bytes. The Go mux
 * hands a reader one whole frame per Read and fails with ENOMEM when the
 * reader's buffer is smaller (mux.go conn.Read), and ttrpc reads the
 * header through a bufio.Reader of 4096 bytes (channel.go): a 12 KB
 * frame made containerd drop us at Synchronize ("cannot allocate
 * memory") with 150 containers to update. */
#define NRI_MUX_WRITE_MAX	4096u

/* ttrpc message types and flags (PROTOCOL.md). */
#define NRI_TTRPC_REQUEST	1u
#define NRI_TTRPC_RESPONSE	2u
#define NRI_TTRPC_DATA		3u

/* gRPC status codes used in responses (google.golang.org/grpc/codes). */
#define NRI_STATUS_OK			0
#define NRI_STATUS_UNKNOWN		2
#define NRI_STATUS_INVALID_ARGUMENT	3
#define NRI_STATUS_INTERNAL		13
#define NRI_STATUS_UNIMPLEMENTED	12

/* A byte queue: bytes [off, len) of p are live. */
struct nri_buf {
	uint8_t *p;
	size_t off, len, cap;
};

/* Appends n bytes, growing the buffer, but never past max live bytes.
 * Returns 0, -EMSGSIZE (over max; b unchanged), -ENOMEM. */
int nri_buf_append(struct nri_buf *b, const void *data, size_t n, size_t max);
/* Drops the first n live bytes (n <= live). Cannot fail. */
void nri_buf_consume(struct nri_buf *b, size_t n);
static inline size_t nri_buf_live(const struct nri_buf *b) { return b->len - b->off; }
static inline const uint8_t *nri_buf_data(const struct nri_buf *b) { return b->p + b->off; }
/* Frees and zeroes. A zeroed b is fine. */
void nri_buf_release(struct nri_buf *b);

/* One ttrpc message as received; data points into the receiver's buffer
 * and is valid during the callback only. */
struct nri_ttrpc_msg {
	uint32_t conn;		/* mux connection it came on */
	uint32_t stream;
	uint8_t type, flags;
	const uint8_t *data;
	uint32_t len;
};

/* Called for every complete message; a negative return stops the feed
 * and is returned by it. */
typedef int (*nri_msg_fn)(void *ctx, const struct nri_ttrpc_msg *m);

/* The multiplexer's reader: the header being read and the frame's
 * remaining payload. */
struct nri_mux_rx {
	uint8_t hdr[NRI_MUX_HDR];
	size_t hdr_have;
	uint32_t cid;		/* connection of the frame being read */
	uint32_t left;		/* its payload bytes still to come */
};

/* Called with each piece of a frame's payload as it arrives (a frame
 * may come in several pieces); a negative return stops the feed. */
typedef int (*nri_chunk_fn)(void *ctx, uint32_t conn, const uint8_t *p, size_t n);

/*
 * nri_mux.c: takes n bytes of the socket, any split (a header may end
 * anywhere), and passes the payload of every frame of connection 1 or 2
 * to fn; frames of other connections are skipped unbuffered. A frame
 * length over NRI_MUX_MAX_PAYLOAD is refused before any payload is taken.
 * Returns 0, -EMSGSIZE, or fn's negative value; m is then not fed again.
 */
int nri_mux_feed(struct nri_mux_rx *m, const uint8_t *p, size_t n, nri_chunk_fn fn, void *ctx);

/* The whole receive path: the mux reader and the byte stream of each
 * served connection, in which ttrpc messages ride. */
struct nri_rx {
	struct nri_mux_rx mux;
	struct nri_buf stream[2];	/* NRI_CONN_PLUGIN, NRI_CONN_RUNTIME */
	nri_msg_fn fn;			/* for the feed in progress */
	void *ctx;
};

/*
 * nri_ttrpc.c: n socket bytes, any split, through the mux into each
 * connection's stream; fn is called for every complete ttrpc message, in
 * order. Memory is bounded: a ttrpc length over NRI_TTRPC_MAX is refused
 * as soon as its header is in, and a stream holds at most one partial
 * message plus one frame.
 * Returns 0; -EMSGSIZE (hostile length), -EBADMSG (ttrpc's reserved
 * first byte set), fn's negative value, or -ENOMEM. After an error rx
 * must be released, not fed again.
 */
int nri_rx_feed(struct nri_rx *rx, const uint8_t *p, size_t n, nri_msg_fn fn, void *ctx);
void nri_rx_release(struct nri_rx *rx);

/* nri_mux.c: n payload bytes as frames of connection conn appended to out
 * (split at NRI_MUX_WRITE_MAX: what the Go reader takes). Returns 0, -EMSGSIZE
 * (out would pass max), -ENOMEM. */
int nri_mux_put(struct nri_buf *out, uint32_t conn, const uint8_t *p, size_t n, size_t max);

/* nri_ttrpc.c: msg packed as a ttrpc message (header + data) in mux
 * frames of conn, appended to out. Returns 0, -EMSGSIZE (msg over
 * NRI_TTRPC_MAX or out over max), -ENOMEM. */
int nri_ttrpc_put(struct nri_buf *out, uint32_t conn, uint32_t stream, uint8_t type,
		  const ProtobufCMessage *msg, size_t max);

/* A ttrpc Request {service, method, payload = body packed} on conn.
 * Returns as nri_ttrpc_put. */
int nri_ttrpc_put_request(struct nri_buf *out, uint32_t conn, uint32_t stream,
			  const char *service, const char *method,
			  const ProtobufCMessage *body, size_t max);

/* A ttrpc Response: status code and message (NULL = "") and, when code
 * is 0, payload = body packed (body may be NULL: empty). */
int nri_ttrpc_put_response(struct nri_buf *out, uint32_t conn, uint32_t stream, int code,
			   const char *message, const ProtobufCMessage *body, size_t max);

/*
 * The allocator every protobuf_c_message_unpack of peer data uses: an
 * arena with a byte budget. A message made of many tiny elements unpacks
 * to far more memory than its size (about 25 times for empty
 * submessages): past the budget unpack fails as for bad data. Blocks are
 * carved from 64 KiB chunks and never freed one by one (free is a no-op):
 * nri_pb_budget_release frees them all at once, which also spares the
 * thousands of malloc/free pairs of a large Synchronize. Initialise with
 * nri_pb_budget_init; the struct must not move while in use.
 */
struct nri_pb_budget {
	ProtobufCAllocator alloc;
	size_t bytes;		/* the budget */
	size_t left;		/* not yet taken by chunks */
	void *chunks;		/* newest first */
	char *cur;		/* free space in the newest chunk */
	size_t avail;
};
void nri_pb_budget_init(struct nri_pb_budget *b, size_t bytes);
/* Frees every block at once; b is then as fresh from init. */
void nri_pb_budget_release(struct nri_pb_budget *b);

#endif
