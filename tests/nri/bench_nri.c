// SPDX-License-Identifier: Apache-2.0
/*
 * bench-nri: what the NRI wire layer itself costs per request, measured
 * through a socketpair with a peer in the same thread (so the figures
 * include both sides' syscalls, encoding and decoding, but no policy: the
 * handlers answer at once).
 *   - CreateContainer: the real request containerd 2.1.9 sent
 *     (tests/unit/fixtures/nri), answered with an adjustment and 8
 *     in-band updates; p50/p99 over N rounds;
 *   - Synchronize with 1,000 containers in 1,000 pods, each a copy of
 *     the real one with its own ids, answered with 1,000 updates.
 *   build/bench-nri [ROUNDS]     (run from the repo root)
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include "user/base/clock.h"
#include "user/base/log.h"
#include "user/nri/nri_msg.h"
#include "user/nri/nri_wire.h"
#include "user/nri/ttrpc.pb-c.h"

#define PB(x)	nri__pkg__api__v1alpha1__##x

static int got;

static int on_msg(void *ctx, const struct nri_ttrpc_msg *m)
{
	(void)ctx;
	(void)m;
	got++;
	return 0;
}

/* Reads what the plugin sent, without waiting. */
static void read_some(int fd, struct nri_rx *rx)
{
	static uint8_t buf[1 << 16];
	ssize_t n;

	while ((n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT)) > 0)
		nri_rx_feed(rx, buf, (size_t)n, on_msg, NULL);
	if (n == 0) {
		fprintf(stderr, "bench-nri: the plugin closed\n");
		exit(1);
	}
}

/* Writes out to the plugin while running it, until one more answer came
 * back: both ends are in this thread, so neither may block. */
static void round_trip(struct nri_conn *c, int fd, struct nri_buf *out, struct nri_rx *rx)
{
	int want = got + 1;

	while (got < want) {
		if (nri_buf_live(out)) {
			ssize_t w = send(fd, nri_buf_data(out), nri_buf_live(out), MSG_DONTWAIT);

			if (w > 0)
				nri_buf_consume(out, (size_t)w);
		}
		nri_conn_dispatch(c);
		read_some(fd, rx);
	}
	nri_buf_release(out);
}

static int h_create(void *ctx, const struct nri_container *ct, struct nri_reply *r)
{
	(void)ctx;
	(void)ct;
	r->adjust = true;
	strcpy(r->cpus, "2-3");
	strcpy(r->mems, "0");
	for (int i = 0; i < 8; i++)
		if (nri_reply_add_update(r, "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
					 "0-1,4-63", "") < 0)
			return -ENOMEM;
	return 0;
}

static size_t sync_n;

static int h_sync(void *ctx, const struct nri_container *cts, size_t n, struct nri_reply *r)
{
	(void)ctx;
	sync_n = n;
	for (size_t i = 0; i < n; i++)
		if (nri_reply_add_update(r, cts[i].id, "0-1,4-63", "") < 0)
			return -ENOMEM;
	return 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

/* A call of the Plugin service into out: body packed, or a payload as
 * captured (raw). */
static void make_call(struct nri_buf *out, uint32_t stream, const char *method,
		      const ProtobufCMessage *body, const uint8_t *raw, size_t raw_len)
{
	if (raw) {
		Ttrpc__Request req = TTRPC__REQUEST__INIT;

		req.service = (ProtobufCBinaryData){ 27, (uint8_t *)"nri.pkg.api.v1alpha1.Plugin" };
		req.method = (ProtobufCBinaryData){ strlen(method), (uint8_t *)method };
		req.payload = (ProtobufCBinaryData){ raw_len, (uint8_t *)raw };
		nri_ttrpc_put(out, NRI_CONN_PLUGIN, stream, NRI_TTRPC_REQUEST, &req.base, 64 << 20);
	} else {
		nri_ttrpc_put_request(out, NRI_CONN_PLUGIN, stream, "nri.pkg.api.v1alpha1.Plugin",
				      method, body, 64 << 20);
	}
}

int main(int argc, char **argv)
{
	static const struct nri_handlers h = { .create_container = h_create, .synchronize = h_sync };
	struct nri_conn_config cfg = { .socket_fd = -1, .plugin_name = "cpusetd", .plugin_index = "99" };
	int rounds = argc > 1 ? atoi(argv[1]) : 20000, sv[2];
	uint64_t *t = calloc((size_t)rounds, sizeof(*t)), t0;
	uint8_t raw[1 << 16];
	struct nri_rx rx = { 0 };
	struct nri_conn *c;
	uint32_t stream = 1;
	size_t raw_len;
	FILE *f;

	log_max_level = LOG_WARNING;
	setvbuf(stdout, NULL, _IOLBF, 0);
	f = fopen("tests/unit/fixtures/nri/containerd-2.1/002-CreateContainer.bin", "rb");
	if (!f) {
		fprintf(stderr, "bench-nri: run from the repo root\n");
		return 1;
	}
	raw_len = fread(raw, 1, sizeof(raw), f);
	fclose(f);
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) < 0)
		return 1;
	cfg.socket_fd = sv[0];
	if (nri_conn_new(&cfg, &h, NULL, &c) < 0)
		return 1;
	while (got < 1) {	/* RegisterPlugin */
		poll(&(struct pollfd){ sv[1], POLLIN, 0 }, 1, 1000);
		read_some(sv[1], &rx);
	}

	for (int i = 0; i < rounds; i++) {
		struct nri_buf out = { 0 };

		t0 = clock_ns(CLOCK_MONOTONIC);
		make_call(&out, stream, "CreateContainer", NULL, raw, raw_len);
		stream += 2;
		round_trip(c, sv[1], &out, &rx);
		t[i] = clock_ns(CLOCK_MONOTONIC) - t0;
	}
	qsort(t, (size_t)rounds, sizeof(*t), cmp_u64);
	printf("CreateContainer (%zu-byte real request, adjustment + 8 updates), %d rounds: "
	       "p50 %.1f us, p99 %.1f us, max %.1f us\n", raw_len, rounds,
	       t[rounds / 2] / 1e3, t[rounds * 99 / 100] / 1e3, t[rounds - 1] / 1e3);

	/* Synchronize: 1,000 copies of the real pod and container. */
	{
		Nri__Pkg__Api__V1alpha1__CreateContainerRequest *cr =
			PB(create_container_request__unpack)(NULL, raw_len, raw);
		PbSyncReq sr = NRI__PKG__API__V1ALPHA1__SYNCHRONIZE_REQUEST__INIT;
		enum { N = 1000 };
		PbPod *pods = calloc(N, sizeof(*pods)), **pp = calloc(N, sizeof(*pp));
		PbContainer *cts = calloc(N, sizeof(*cts)), **cp = calloc(N, sizeof(*cp));
		char (*ids)[2][72] = calloc(N, sizeof(*ids));
		uint64_t best = UINT64_MAX;

		for (int i = 0; i < N; i++) {
			pods[i] = *cr->pod;
			cts[i] = *cr->container;
			snprintf(ids[i][0], 72, "%064x", i);
			snprintf(ids[i][1], 72, "%063xc", i);
			pods[i].id = (ProtobufCBinaryData){ 64, (uint8_t *)ids[i][0] };
			cts[i].pod_sandbox_id = pods[i].id;
			cts[i].id = (ProtobufCBinaryData){ 64, (uint8_t *)ids[i][1] };
			pp[i] = &pods[i];
			cp[N - 1 - i] = &cts[i];	/* pods and containers in other orders */
		}
		sr.n_pods = N, sr.pods = pp, sr.n_containers = N, sr.containers = cp;
		for (int k = 0; k < 20; k++) {
			struct nri_buf out = { 0 };

			t0 = clock_ns(CLOCK_MONOTONIC);
			make_call(&out, stream, "Synchronize", &sr.base, NULL, 0);
			stream += 2;
			round_trip(c, sv[1], &out, &rx);
			t0 = clock_ns(CLOCK_MONOTONIC) - t0;
			best = t0 < best ? t0 : best;
		}
		printf("Synchronize, %zu containers in %d pods (%zu bytes), answered with %d updates: "
		       "best of 20 %.2f ms\n", sync_n, N, protobuf_c_message_get_packed_size(&sr.base),
		       N, best / 1e6);
	}
	nri_conn_free(c);
	return 0;
}
