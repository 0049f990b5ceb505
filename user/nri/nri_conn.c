// SPDX-License-Identifier: Apache-2.0
/*
 * The connection to the runtime's NRI socket: connect (or adopt the
 * pre-installed plugin's fd), register, read and answer, write without
 * blocking, and start over with backoff when the runtime goes away.
 *
 * Phases: DOWN (no socket; a retry is due at retry_at_us) -> REGISTERING
 * (RegisterPlugin sent on connection 2; the runtime answers it, then
 * calls Configure on connection 1) -> UP (both done; handlers->connected).
 * A registration that does not finish in NRI_REGISTER_TIMEOUT_US closes
 * the socket: the runtime gives up after its own 5 s anyway.
 *
 * Output is queued in c->out and written with MSG_DONTWAIT whenever we
 * run; what the socket does not take waits for the next dispatch or tick
 * (nri_conn_due_us asks for one soon), so the event loop never blocks and
 * needs no EPOLLOUT.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include "user/base/clock.h"
#include "user/base/log.h"
#include "user/nri/ttrpc.pb-c.h"
#include "nri_conn_internal.h"

#define PB(x)	nri__pkg__api__v1alpha1__##x

#define NRI_BACKOFF_MIN_US		100000ULL
#define NRI_BACKOFF_MAX_US		5000000ULL
/* A connection that stayed up this long starts the next backoff afresh;
 * one the runtime drops sooner (it refuses what we answer) backs off,
 * instead of registering again every 100 ms. */
#define NRI_STABLE_US			10000000ULL
#define NRI_REGISTER_TIMEOUT_US		10000000ULL
/* Queued output is retried this soon when the socket was full. */
#define NRI_FLUSH_RETRY_US		10000ULL
/* Bytes read in one dispatch at most: a peer that never stops sending
 * must not starve the rest of the loop (the fd stays readable). */
#define NRI_READ_PER_DISPATCH		(4u << 20)

static uint64_t now_us(void)
{
	return clock_us(CLOCK_MONOTONIC);
}

/* The socket is gone (or never came): forget the session, tell the
 * handlers if it was up, and schedule the next attempt. why: the reason
 * for the log line, NULL when we close it ourselves. */
static void lose(struct nri_conn *c, const char *why, bool protocol_error)
{
	bool was_up = c->phase == NRI_UP;

	if (c->fd >= 0) {
		close(c->fd);
		c->st.disconnects++;
		if (protocol_error)
			c->st.protocol_errors++;
		if (!why)
			log_debug("nri: connection closed by us");
		else if (c->given_fd >= 0)
			log_warn("nri: connection lost: %s; a pre-installed plugin is not reconnected",
				 why);
		else
			log_warn("nri: connection to %s lost: %s; retrying in %llu ms", c->socket_path,
				 why, (unsigned long long)c->backoff_us / 1000);
	}
	c->fd = -1;
	c->phase = NRI_DOWN;
	c->registered = c->configured = c->close_after_flush = false;
	c->why[0] = '\0';
	nri_rx_release(&c->rx);
	nri_buf_release(&c->out);
	c->n_pending = 0;
	nri_serve_reset(c);
	if (was_up && now_us() - c->up_since_us >= NRI_STABLE_US)
		c->backoff_us = NRI_BACKOFF_MIN_US;
	/* The runtime's fd is given once: nothing to reconnect to. */
	c->retry_at_us = c->given_fd >= 0 ? UINT64_MAX : now_us() + c->backoff_us;
	c->backoff_us = c->backoff_us * 2 > NRI_BACKOFF_MAX_US ? NRI_BACKOFF_MAX_US : c->backoff_us * 2;
	c->runtime_name[0] = c->runtime_version[0] = '\0';
	if (was_up && c->h.connected)
		c->h.connected(c->ctx, false, "", "");
}

/* Writes what the socket takes. Returns 0, or -1 after losing it. */
static int flush(struct nri_conn *c)
{
	while (c->fd >= 0 && nri_buf_live(&c->out)) {
		ssize_t n = send(c->fd, nri_buf_data(&c->out), nri_buf_live(&c->out),
				 MSG_DONTWAIT | MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return 0;
		if (n < 0) {
			char why[96];

			snprintf(why, sizeof(why), "write: %s", strerror(errno));
			lose(c, why, false);
			return -1;
		}
		nri_buf_consume(&c->out, (size_t)n);
	}
	if (c->fd >= 0 && c->close_after_flush) {
		lose(c, c->why[0] ? c->why : NULL, false);
		return -1;
	}
	return 0;
}

/* An odd stream id for our next call (ttrpc: client streams are odd). */
static uint32_t next_stream(struct nri_conn *c)
{
	uint32_t s = c->next_stream;

	c->next_stream += 2;
	return s;
}

static int add_pending(struct nri_conn *c, uint32_t stream, enum nri_call kind, uint32_t n)
{
	if (c->n_pending == NRI_MAX_PENDING)
		return -EBUSY;
	c->pending[c->n_pending++] = (struct nri_pending){ stream, kind, n };
	return 0;
}

/* A fresh socket: register. Returns 0 or -ENOMEM (then lost). */
static int start_session(struct nri_conn *c, int fd)
{
	Nri__Pkg__Api__V1alpha1__RegisterPluginRequest req =
		NRI__PKG__API__V1ALPHA1__REGISTER_PLUGIN_REQUEST__INIT;
	uint32_t s;
	int r;

	c->fd = fd;
	c->phase = NRI_REGISTERING;
	c->next_stream = 1;
	c->deadline_us = now_us() + NRI_REGISTER_TIMEOUT_US;
	req.plugin_name = c->name;
	req.plugin_idx = c->index;
	s = next_stream(c);
	r = nri_ttrpc_put_request(&c->out, NRI_CONN_RUNTIME, s, NRI_SERVICE_RUNTIME,
				  "RegisterPlugin", &req.base, NRI_OUT_MAX);
	if (r == 0)
		r = add_pending(c, s, NRI_CALL_REGISTER, 0);
	if (r < 0) {
		lose(c, "cannot queue RegisterPlugin", false);
		return r == -ENOMEM ? r : 0;
	}
	flush(c);
	return 0;
}

/* One connection attempt; a failure schedules the next. */
static int try_connect(struct nri_conn *c)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd;

	memcpy(sa.sun_path, c->socket_path, sizeof(sa.sun_path));
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		goto fail;
	/* A Unix socket connects at once or not at all (EAGAIN: the
	 * runtime's backlog is full; retried like a missing socket). */
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		int e = errno;

		close(fd);
		errno = e;
		goto fail;
	}
	log_debug("nri: connected to %s", c->socket_path);
	return start_session(c, fd);
fail:
	log_debug("nri: cannot connect to %s: %s", c->socket_path, strerror(errno));
	c->retry_at_us = now_us() + c->backoff_us;
	c->backoff_us = c->backoff_us * 2 > NRI_BACKOFF_MAX_US ? NRI_BACKOFF_MAX_US : c->backoff_us * 2;
	return 0;
}

/* Registered and configured: the connection is up. */
static void mark_up(struct nri_conn *c)
{
	if (c->phase == NRI_UP)
		return;
	c->phase = NRI_UP;
	c->st.connects++;
	c->up_since_us = now_us();
	log_info("nri: registered with %s %s as %s-%s", c->runtime_name[0] ? c->runtime_name : "?",
		 c->runtime_version, c->index, c->name);
	if (c->h.connected)
		c->h.connected(c->ctx, true, c->runtime_name, c->runtime_version);
}

/* The answer to one of our calls on connection 2. */
static int on_response(struct nri_conn *c, const struct nri_ttrpc_msg *m)
{
	struct nri_pb_budget budget;
	struct nri_pending call = { 0 };
	Ttrpc__Response *resp;
	int code;

	for (size_t i = 0; i < c->n_pending; i++) {
		if (c->pending[i].stream != m->stream)
			continue;
		call = c->pending[i];
		c->pending[i] = c->pending[--c->n_pending];
		break;
	}
	if (!call.kind) {
		snprintf(c->why, sizeof(c->why), "a response to stream %u, which we never opened",
			 m->stream);
		return -EPROTO;
	}
	nri_pb_budget_init(&budget, NRI_DECODE_BUDGET);
	resp = (void *)protobuf_c_message_unpack(&ttrpc__response__descriptor, &budget.alloc,
						 m->len, m->data);
	if (!resp) {
		nri_pb_budget_release(&budget);
		snprintf(c->why, sizeof(c->why), "undecodable ttrpc response");
		return -EBADMSG;
	}
	code = resp->status ? resp->status->code : 0;
	if (call.kind == NRI_CALL_REGISTER) {
		if (code != 0) {
			char msg[128];

			if (nri_msg_str(&resp->status->message, msg, sizeof(msg)) < 0)
				strcpy(msg, "?");
			log_sanitize(msg);
			snprintf(c->why, sizeof(c->why), "registration refused: %s", msg);
			nri_pb_budget_release(&budget);
			return -ECONNREFUSED;
		}
		c->registered = true;
		if (c->configured)
			mark_up(c);
	} else if (code != 0) {
		c->st.update_failures += call.n;
		log_warn("nri: UpdateContainers of %u containers failed (status %d)", call.n, code);
	} else {
		Nri__Pkg__Api__V1alpha1__UpdateContainersResponse *u;

		u = (void *)protobuf_c_message_unpack(&PB(update_containers_response__descriptor),
						      &budget.alloc, resp->payload.len,
						      resp->payload.data);
		if (u && u->n_failed) {
			char id[72];

			c->st.update_failures += u->n_failed;
			if (nri_msg_str(&u->failed[0]->container_id, id, sizeof(id)) < 0)
				strcpy(id, "?");
			log_sanitize(id);
			log_warn("nri: the runtime failed to update %zu containers (first: %.12s)",
				 u->n_failed, id);
		}
	}
	nri_pb_budget_release(&budget);
	return 0;
}

/* Every complete ttrpc message (nri_rx_feed's callback). */
static int on_message(void *ctx, const struct nri_ttrpc_msg *m)
{
	struct nri_conn *c = ctx;

	if (m->conn == NRI_CONN_PLUGIN && m->type == NRI_TTRPC_REQUEST) {
		int r = nri_serve_request(c, m);

		/* Configure comes after RegisterPlugin's answer; the other
		 * order is tolerated (on_response checks too). */
		if (r == 0 && c->configured && c->registered)
			mark_up(c);
		return r;
	}
	if (m->conn == NRI_CONN_RUNTIME && m->type == NRI_TTRPC_RESPONSE)
		return on_response(c, m);
	/* NRI is unary only: no data messages, no calls from the runtime on
	 * connection 2, no responses on 1. */
	snprintf(c->why, sizeof(c->why), "unexpected ttrpc message type %u on connection %u",
		 m->type, m->conn);
	return -EPROTO;
}

int nri_conn_dispatch(struct nri_conn *c)
{
	static uint8_t buf[64 << 10];
	size_t total = 0;

	while (c->fd >= 0 && total < NRI_READ_PER_DISPATCH) {
		ssize_t n = recv(c->fd, buf, sizeof(buf), MSG_DONTWAIT);
		char why[200];
		int r;

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			break;
		if (n <= 0) {
			snprintf(why, sizeof(why), "%s", n == 0 ? "closed by the runtime" : strerror(errno));
			lose(c, why, false);
			return 0;
		}
		total += (size_t)n;
		r = nri_rx_feed(&c->rx, buf, (size_t)n, on_message, c);
		if (r == -ENOMEM) {
			lose(c, "out of memory", false);
			return r;
		}
		if (r < 0) {
			if (r == -ECONNREFUSED)
				snprintf(why, sizeof(why), "%s", c->why);
			else
				snprintf(why, sizeof(why), "protocol error: %s",
					 c->why[0] ? c->why :
					 r == -EMSGSIZE ? "a frame or message over the size limit" :
					 r == -EBADMSG ? "a malformed frame" : strerror(-r));
			lose(c, why, r != -ECONNREFUSED);
			return 0;
		}
		/* Answers go out as they are made, not after the whole read. */
		if (flush(c) < 0)
			return 0;
	}
	flush(c);
	return 0;
}

uint64_t nri_conn_due_us(const struct nri_conn *c)
{
	if (c->fd < 0)
		return c->retry_at_us;
	if (nri_buf_live(&c->out))
		return now_us() + NRI_FLUSH_RETRY_US;
	return c->phase == NRI_REGISTERING ? c->deadline_us : UINT64_MAX;
}

int nri_conn_tick(struct nri_conn *c)
{
	uint64_t now = now_us();

	if (c->fd < 0)
		return now >= c->retry_at_us ? try_connect(c) : 0;
	if (c->phase == NRI_REGISTERING && now >= c->deadline_us) {
		lose(c, c->registered ? "registered but never configured" :
		     "registration not answered in time", false);
		return 0;
	}
	flush(c);
	return 0;
}

int nri_conn_fd(const struct nri_conn *c)
{
	return c->fd;
}

bool nri_conn_up(const struct nri_conn *c)
{
	return c->phase == NRI_UP;
}

bool nri_conn_ended(const struct nri_conn *c)
{
	return c->given_fd >= 0 && c->phase == NRI_DOWN;
}

void nri_conn_stats(const struct nri_conn *c, struct nri_stats *ret)
{
	*ret = c->st;
}

int nri_conn_update_containers(struct nri_conn *c, const struct nri_update *u, size_t n)
{
	Nri__Pkg__Api__V1alpha1__UpdateContainersRequest req =
		NRI__PKG__API__V1ALPHA1__UPDATE_CONTAINERS_REQUEST__INIT;
	struct nri_msg_updates mu;
	uint32_t s;
	int r;

	if (c->phase != NRI_UP)
		return -ENOTCONN;
	if (c->n_pending == NRI_MAX_PENDING)
		return -EBUSY;
	/* Not ignore_failure: the runtime's failed list is what we count. */
	r = nri_msg_updates(u, n, false, &mu);
	if (r < 0)
		return r;
	req.n_update = mu.n;
	req.update = mu.ptrs;
	s = next_stream(c);
	r = nri_ttrpc_put_request(&c->out, NRI_CONN_RUNTIME, s, NRI_SERVICE_RUNTIME,
				  "UpdateContainers", &req.base, NRI_OUT_MAX);
	nri_msg_updates_release(&mu);
	if (r < 0)
		return r;
	add_pending(c, s, NRI_CALL_UPDATE, (uint32_t)n);
	flush(c);
	return 0;
}

/* Name: what the runtime shows and sorts by; printable, no '/' (it ends
 * up in a file name for pre-installed plugins). Index: two digits. */
bool nri_plugin_name_valid(const char *s)
{
	size_t n = s ? strlen(s) : 0;

	return n > 0 && n < NRI_NAME_MAX &&
	       strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.") == n;
}

bool nri_plugin_index_valid(const char *s)
{
	return s && s[0] >= '0' && s[0] <= '9' && s[1] >= '0' && s[1] <= '9' && !s[2];
}

int nri_conn_new(const struct nri_conn_config *cfg, const struct nri_handlers *h,
		 void *ctx, struct nri_conn **ret)
{
	struct nri_conn *c;

	if (!nri_plugin_name_valid(cfg->plugin_name) || !nri_plugin_index_valid(cfg->plugin_index))
		return -EINVAL;
	if (cfg->socket_fd < 0 && (!cfg->socket_path || !cfg->socket_path[0] ||
				   strlen(cfg->socket_path) >= sizeof(c->socket_path)))
		return -EINVAL;
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	if (cfg->socket_fd < 0)
		strcpy(c->socket_path, cfg->socket_path);
	else
		snprintf(c->socket_path, sizeof(c->socket_path), "fd %d", cfg->socket_fd);
	strcpy(c->name, cfg->plugin_name);
	strcpy(c->index, cfg->plugin_index);
	c->h = *h;
	c->ctx = ctx;
	c->fd = -1;
	c->given_fd = cfg->socket_fd;
	c->backoff_us = NRI_BACKOFF_MIN_US;
	c->retry_at_us = UINT64_MAX;
	nri_pb_budget_init(&c->sync_budget, NRI_SYNC_BUDGET);
	if (cfg->socket_fd >= 0) {
		int fl = fcntl(cfg->socket_fd, F_GETFL);

		/* Ours from now on: not inherited, never blocking. */
		if (fl < 0 || fcntl(cfg->socket_fd, F_SETFL, fl | O_NONBLOCK) < 0 ||
		    fcntl(cfg->socket_fd, F_SETFD, FD_CLOEXEC) < 0) {
			free(c);
			return -errno;
		}
		if (start_session(c, cfg->socket_fd) < 0) {
			free(c);
			return -ENOMEM;
		}
	} else if (try_connect(c) < 0) {
		free(c);
		return -ENOMEM;
	}
	*ret = c;
	return 0;
}

void nri_conn_free(struct nri_conn *c)
{
	if (!c)
		return;
	if (c->fd >= 0)
		lose(c, NULL, false);
	nri_serve_reset(c);
	free(c);
}
