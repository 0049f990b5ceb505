/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The connection object, shared by nri_conn.c (socket, lifecycle, our
 * calls to the runtime) and nri_serve.c (the Plugin service the runtime
 * calls). Not for other modules.
 */
#ifndef CPUSETD_NRI_CONN_INTERNAL_H
#define CPUSETD_NRI_CONN_INTERNAL_H

#ifdef __bpf__
#error "user-space header: BPF programs share only maps/cpusetd.h"
#endif

#include <stdbool.h>
#include <stdint.h>
#include <sys/un.h>
#include "nri.h"
#include "nri_msg.h"
#include "nri_wire.h"

#define NRI_SERVICE_PLUGIN	"nri.pkg.api.v1alpha1.Plugin"
#define NRI_SERVICE_RUNTIME	"nri.pkg.api.v1alpha1.Runtime"

/* Output queued for the runtime, at most: a Synchronize answer for
 * thousands of containers is well under 1 MiB. */
#define NRI_OUT_MAX		(16u << 20)
/* Memory one decoded request may take (nri_pb_budget), and all the parts
 * of a split Synchronize together. */
#define NRI_DECODE_BUDGET	(64u << 20)
#define NRI_SYNC_BUDGET		(256u << 20)
#define NRI_SYNC_MAX_PARTS	4096
/* Our calls to the runtime awaiting an answer. */
#define NRI_MAX_PENDING		64

enum nri_phase {
	NRI_DOWN,		/* no socket; maybe a retry scheduled */
	NRI_REGISTERING,	/* socket open, RegisterPlugin sent */
	NRI_UP,			/* registered and configured */
};

enum nri_call { NRI_CALL_REGISTER = 1, NRI_CALL_UPDATE };

struct nri_pending {
	uint32_t stream;
	enum nri_call kind;
	uint32_t n;		/* containers in an UpdateContainers */
};

struct nri_conn {
	char socket_path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	int given_fd;		/* pre-installed: the runtime's socket, once */
	char name[NRI_NAME_MAX];
	char index[3];
	struct nri_handlers h;
	void *ctx;

	int fd;
	enum nri_phase phase;
	bool registered, configured;
	bool close_after_flush;	/* Shutdown answered */
	uint64_t retry_at_us;	/* DOWN: next attempt, UINT64_MAX none */
	uint64_t backoff_us;
	uint64_t up_since_us;	/* when it last came up */
	uint64_t deadline_us;	/* REGISTERING: give up at */
	char why[160];		/* the reason a callback asks to close */

	struct nri_rx rx;
	struct nri_buf out;
	uint32_t next_stream;	/* ours: odd, increasing */
	struct nri_pending pending[NRI_MAX_PENDING];
	size_t n_pending;

	/* A split Synchronize (more = true) being gathered. */
	struct nri_pb_budget sync_budget;
	PbSyncReq **sync_parts;
	size_t n_sync_parts;
	uint64_t sync_t0_ns;		/* CLOCK_MONOTONIC: its first part read */

	char runtime_name[64], runtime_version[64];
	struct nri_stats st;
};

/* nri_serve.c: one request of the Plugin service on connection 1;
 * answers it into c->out. Returns 0, or a negative errno that closes the
 * connection (c->why says why): -EBADMSG undecodable, -ENOMEM. */
int nri_serve_request(struct nri_conn *c, const struct nri_ttrpc_msg *m);

/* nri_serve.c: drops a half-gathered Synchronize. */
void nri_serve_reset(struct nri_conn *c);

#endif
