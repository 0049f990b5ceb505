/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cpusetd as an NRI plugin: the connection to the runtime and its events,
 * in the daemon's own terms.
 *
 * NRI (github.com/containerd/nri, pkg/api/api.proto; API levels v0.6.1 in
 * containerd 1.7 and v0.8.0 in containerd 2.1) runs ttrpc over one Unix
 * stream socket, multiplexed: each frame is a big-endian uint32 connection
 * id and uint32 length, then that many bytes (pkg/net/multiplex). The
 * plugin serves the Plugin service on connection 1 and calls the Runtime
 * service on connection 2. ttrpc (containerd/ttrpc PROTOCOL.md) puts a
 * 10-byte header before each message: uint32 length, uint32 stream id,
 * uint8 type (1 request, 2 response, 3 data), uint8 flags.
 *
 * This layer owns the socket, the framing and the protobuf messages
 * (protobuf-c, from our own user/nri/nri.proto). It turns every runtime
 * request into one call of struct nri_handlers with plain C types (a
 * struct pod_meta per container, the fields the policy reads), and the
 * handler's struct nri_reply into the response. Nothing in here decides
 * placement: the controller does (user/controller/controller_nri.c).
 *
 * Threading: one thread, the daemon's event loop. Every handler is called
 * from nri_conn_dispatch() and must not block; the reply is sent before
 * nri_conn_dispatch() returns. NRI is fail-open: a request the plugin
 * does not answer within the runtime's request timeout (2 s by default)
 * is dropped by the runtime and the container is created without us
 * (the BPF path then places it).
 */
#ifndef CPUSETD_NRI_H
#define CPUSETD_NRI_H

#ifdef __bpf__
#error "user-space header: BPF programs share only maps/cpusetd.h"
#endif

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "../base/cpumask.h"
#include "../base/latency.h"
#include "../meta/meta.h"

#define NRI_DEFAULT_SOCKET	"/var/run/nri/nri.sock"
#define NRI_DEFAULT_NAME	"cpusetd"
#define NRI_DEFAULT_INDEX	"99"
/* NRI_PLUGIN_SOCKET / NRI_PLUGIN_NAME / NRI_PLUGIN_IDX: the environment of
 * a plugin the runtime starts itself (pre-installed, /opt/nri/plugins);
 * the socket is the file descriptor number given there (3). */

/* NRI's ContainerState (api.proto). */
enum nri_container_state {
	NRI_CONTAINER_UNKNOWN = 0,
	NRI_CONTAINER_CREATED = 1,
	NRI_CONTAINER_PAUSED = 2,
	NRI_CONTAINER_RUNNING = 3,
	NRI_CONTAINER_STOPPED = 4,
};

/*
 * One container as the runtime describes it, with its pod. meta is filled
 * the way meta_parse_file fills it from a bundle (meta.h), from NRI's
 * PodSandbox and Container instead:
 *   - namespace_, pod_name, pod_uid, sandbox_id from the PodSandbox;
 *     container_name from Container.name; sandbox is always false (NRI
 *     never sends the pause container as a Container);
 *   - annotations: the pod's, then the container's over them, read with
 *     the same keys, limits and errors as a bundle's (meta->invalid is
 *     META_INVALID_ANNOTATION naming the key for a malformed one);
 *   - quota_us, period_us, cpu_shares, has_cpu_limit, runtime_sets_cpus /
 *     runtime_cpus, runtime_mems from Container.linux.resources.cpu (an UpdateContainer
 *     passes the new resources: those are used instead);
 *   - cgroups_path from Container.linux.cgroups_path;
 *   - from_bundle is false; termination_log is "" (no root write in NRI
 *     mode: a refusal is the error of CreateContainer).
 * Every string is NUL-terminated and bounded; every value is untrusted.
 */
struct nri_container {
	char id[72];			/* container id; never "" */
	char pod_cgroup_parent[384];	/* PodSandbox.linux.cgroup_parent, may be "" */
	enum nri_container_state state;
	uint32_t pid;			/* 0 when not running / not sent */
	struct pod_meta meta;		/* owned: meta_release on free */
};

/* One change to a container that already exists: new cpus and mems.
 * mems "" leaves the container's mems as they are. */
struct nri_update {
	char container_id[72];
	char cpus[CPULIST_MAX];
	char mems[CPULIST_MAX];
};

/*
 * What a handler answers. Zeroed by the layer before each call.
 *   error: non-empty = the request fails with this text (a gRPC status
 *     message the runtime shows: kubelet reports CreateContainerError with
 *     it). Then adjust and updates are ignored. One line, printable.
 *   adjust: CreateContainer only: set the container's cpus (and mems when
 *     mems is non-empty) in its ContainerAdjustment.
 *   updates: changes to other (or, for UpdateContainer/Synchronize, the
 *     same) containers, sent in the same response. The handler appends
 *     with nri_reply_add_update; the layer frees them.
 */
struct nri_reply {
	char error[256];
	bool adjust;
	char cpus[CPULIST_MAX];
	char mems[CPULIST_MAX];
	struct nri_update *updates;
	size_t n_updates, cap_updates;
};

/* Appends one update to r (copies the strings, truncating at their
 * sizes). Returns 0 or -ENOMEM (r unchanged). */
int nri_reply_add_update(struct nri_reply *r, const char *container_id,
			 const char *cpus, const char *mems);

/*
 * The daemon's side. Each returns 0, or a negative errno when it failed
 * for its own reasons (-ENOMEM): the layer then fails the request with
 * strerror's text. A refusal by policy is 0 with reply->error set.
 * ctx is nri_conn_new's.
 */
struct nri_handlers {
	/* The connection is up (registered and configured, before the first
	 * Synchronize) or down. runtime_name/version: ConfigureRequest's
	 * ("" when down). Called once per change. containerd 1.7 never
	 * sends Synchronize to a pre-installed plugin (seen with 1.7.24;
	 * 2.1.9 does): up may not be followed by synchronize. */
	void (*connected)(void *ctx, bool up, const char *runtime_name,
			  const char *runtime_version);
	/* The runtime's whole state: every container it knows (created,
	 * running, stopped), each with its pod. A split Synchronize (more =
	 * true, API v0.8) is gathered by the layer into one call. */
	int (*synchronize)(void *ctx, const struct nri_container *cts, size_t n,
			   struct nri_reply *reply);
	/* A container is about to be created: its cgroup does not exist yet. */
	int (*create_container)(void *ctx, const struct nri_container *ct,
				struct nri_reply *reply);
	/* kubelet changes a container's resources (in-place resize, or
	 * rewriting them): ct->meta has the new ones. reply->adjust is
	 * ignored: say the container's own cpus with an update. */
	int (*update_container)(void *ctx, const struct nri_container *ct,
				struct nri_reply *reply);
	/* A container stopped (its tasks are gone or going). */
	int (*stop_container)(void *ctx, const struct nri_container *ct,
			      struct nri_reply *reply);
	/* A container was removed, a pod sandbox removed (container_id ""
	 * then, sandbox_id set). No reply. */
	void (*remove)(void *ctx, const char *container_id, const char *sandbox_id);
};

struct nri_conn;

/* Where and as whom to connect. */
struct nri_conn_config {
	const char *socket_path;	/* connect here, e.g. NRI_DEFAULT_SOCKET */
	int socket_fd;			/* >= 0: an already connected socket
					 * (pre-installed: fd 3); socket_path
					 * is then unused and a lost connection
					 * is not retried */
	const char *plugin_name;	/* RegisterPluginRequest.plugin_name */
	const char *plugin_index;	/* two digits, "00".."99" */
};

/* The longest plugin name, with its NUL. */
#define NRI_NAME_MAX	64

/*
 * A plugin name as cpusetd takes it, from its config (nri_plugin_name) or
 * from the runtime (NRI_PLUGIN_NAME: the part of a pre-installed plugin's
 * file name after "NN-"): 1..NRI_NAME_MAX-1 letters, digits, '-', '_' or
 * '.'. The runtime logs it and keys its plugins by it, so nothing else.
 */
bool nri_plugin_name_valid(const char *s);
/* A plugin index: exactly two digits, "00".."99" (the runtime orders its
 * plugins by it; containerd/nri pkg/adaptation plugin.go). */
bool nri_plugin_index_valid(const char *s);

/*
 * Makes a connection object and starts the first connection attempt (no
 * error when the socket is not there yet: it is retried, with backoff from
 * 100 ms doubling to 5 s). The name and index must be valid
 * (nri_plugin_name_valid, nri_plugin_index_valid). Returns 0 with *ret,
 * -EINVAL (bad name, index or socket path), a negative errno of fcntl on
 * a given socket_fd, -ENOMEM.
 */
int nri_conn_new(const struct nri_conn_config *cfg, const struct nri_handlers *h,
		 void *ctx, struct nri_conn **ret);

/*
 * A plugin the runtime starts itself (pre-installed) finds its connection
 * in the environment (containerd/nri pkg/api/plugin.go, pkg/stub/stub.go):
 * NRI_PLUGIN_SOCKET is the connected socket's fd number, NRI_PLUGIN_NAME
 * and NRI_PLUGIN_IDX the name and index it was installed under. Sets
 * cfg->socket_fd and, when given, plugin_name and plugin_index (pointers
 * into the environment). Returns 1 when NRI_PLUGIN_SOCKET is set, 0 when
 * not (cfg untouched), -EINVAL when it is not a valid fd number or the fd
 * is not open (cfg untouched).
 */
int nri_conn_config_from_env(struct nri_conn_config *cfg);

/* Closes the connection (handlers->connected(false) if it was up) and
 * frees. NULL is fine. */
void nri_conn_free(struct nri_conn *c);

/* The fd to poll for input (EPOLLIN), or -1 while not connected. It
 * changes across reconnects: re-read it after every nri_conn_dispatch and
 * nri_conn_tick. */
int nri_conn_fd(const struct nri_conn *c);

/* Reads what is there, answers every complete request through the
 * handlers, and sends queued output. A broken or hostile peer (bad frame,
 * oversized length, undecodable message) closes the connection and
 * schedules a reconnect; it never aborts. Reads at most 4 MiB per call,
 * so that a peer that never stops cannot hold the loop: poll the fd
 * level-triggered (it stays readable). Returns 0, or -ENOMEM. */
int nri_conn_dispatch(struct nri_conn *c);

/* CLOCK_MONOTONIC µs at which nri_conn_tick must run next (a reconnect
 * attempt, a registration timeout), UINT64_MAX when none. */
uint64_t nri_conn_due_us(const struct nri_conn *c);

/* Runs what is due: a reconnect, a registration that took too long (10 s:
 * closed and retried), output the socket did not take at once. Returns 0,
 * or -ENOMEM. */
int nri_conn_tick(struct nri_conn *c);

/* Whether registered and configured: requests come through NRI. */
bool nri_conn_up(const struct nri_conn *c);

/* Whether the connection is gone for good: a pre-installed plugin's
 * (socket_fd given) was closed or lost. Its runtime starts a new instance
 * of the plugin when it restarts, so the old one has nothing left to do. */
bool nri_conn_ended(const struct nri_conn *c);

/*
 * Sends UpdateContainers to the runtime for changes made outside an NRI
 * request (a resize on a BPF event, hotplug), so that the runtime's record
 * of each container's cpus matches the kernel's. Asynchronous: never
 * called from inside a handler (the runtime holds its lock while it waits
 * for our reply). The runtime's answer (its failed list) is logged and
 * counted, not returned; these updates are sent without ignore_failure,
 * in-band ones (in a reply) with it, so that one container gone in the
 * meantime cannot fail a CreateContainer. The write is tried at once: a
 * broken connection found then calls handlers->connected(false) from in
 * here. Returns 0, -ENOTCONN when not up, -EBUSY with 64 calls still
 * unanswered, -EMSGSIZE when n updates pass ttrpc's 4 MiB (split them),
 * -ENOMEM.
 */
int nri_conn_update_containers(struct nri_conn *c, const struct nri_update *u, size_t n);

/* Counters for status and the export. */
/* The requests whose handling time is kept (the others decide nothing). */
enum nri_method {
	NRI_METHOD_SYNCHRONIZE,
	NRI_METHOD_CREATE_CONTAINER,
	NRI_METHOD_UPDATE_CONTAINER,
	NRI_METHOD_STOP_CONTAINER,
	NRI_METHOD__COUNT
};

/* Each method's name as api.proto's Plugin service calls it. */
extern const char *const nri_method_names[NRI_METHOD__COUNT];

struct nri_stats {
	uint64_t connects;		/* successful registrations */
	uint64_t disconnects;		/* connections lost or closed by error */
	uint64_t requests;		/* runtime requests answered */
	uint64_t protocol_errors;	/* bad frames / messages: disconnects */
	uint64_t update_failures;	/* containers the runtime failed to update */
	/* Each answered request's time in this process, by method: from its
	 * message read whole to its reply queued (decode, the handler's
	 * decision, encode). What cpusetd adds to the runtime's call, less
	 * the socket; the runtime gives up after its request timeout (2 s by
	 * default). A split Synchronize counts once, from its first part. */
	struct latency_hist served[NRI_METHOD__COUNT];
};
void nri_conn_stats(const struct nri_conn *c, struct nri_stats *ret);

#endif
