// SPDX-License-Identifier: Apache-2.0
/*
 * The daemon's NRI connection (daemon_nri.h): the wire layer
 * (user/nri/nri.h) on one side, the controller's handlers on the other,
 * and the loop's epoll set, whose entry follows the connection's fd as it
 * changes across reconnects.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>
#include "daemon_nri.h"
#include "user/base/clock.h"
#include "user/base/log.h"
#include "user/nri/nri.h"

struct daemon_nri {
	struct nri_conn *conn;
	struct controller *ctl;
	int epfd;
	int fd;			/* in epfd now; -1 = none */
	struct nri_stats st;	/* as of the last daemon_nri_stats */
};

/* The connection's fd into the epoll set, whatever happened since the
 * last look: a closed fd left the set by itself (and its number may be
 * the new one's), so the current one is added again unless it is there. */
static void follow_fd(struct daemon_nri *n)
{
	struct epoll_event ev = { .events = EPOLLIN };
	int fd = nri_conn_fd(n->conn);

	if (n->fd >= 0 && n->fd != fd)
		epoll_ctl(n->epfd, EPOLL_CTL_DEL, n->fd, NULL);	/* closed already: EBADF */
	n->fd = fd;
	if (fd < 0)
		return;
	ev.data.fd = fd;
	if (epoll_ctl(n->epfd, EPOLL_CTL_ADD, fd, &ev) < 0 && errno != EEXIST) {
		log_error("NRI: cannot poll its socket: %s; requests wait for the next "
			  "reconnect", strerror(errno));
		n->fd = -1;
	}
}

int daemon_nri_open(const struct cpusetd_config *cfg, struct controller *ctl, int epfd,
		    struct daemon_nri **ret)
{
	struct nri_conn_config nc = { .socket_path = cfg->nri_socket, .socket_fd = -1,
				      .plugin_name = cfg->nri_plugin_name,
				      .plugin_index = cfg->nri_plugin_index };
	struct nri_handlers h;
	struct daemon_nri *n;
	int pre, r;

	*ret = NULL;
	if (!cfg->nri) {
		log_info("NRI off (nri = off): placing by cgroup events (BPF) only");
		return 0;
	}
	/* Started by the runtime (pre-installed): its connection, its name. */
	pre = nri_conn_config_from_env(&nc);
	if (pre < 0) {
		log_error("NRI: NRI_PLUGIN_SOCKET=%s is not an open file descriptor",
			  getenv("NRI_PLUGIN_SOCKET"));
		return pre;
	}
	n = calloc(1, sizeof(*n));
	if (!n)
		return -ENOMEM;
	n->ctl = ctl;
	n->epfd = epfd;
	n->fd = -1;
	r = controller_nri_enable(ctl);
	if (r < 0) {
		free(n);
		return r;
	}
	controller_nri_handlers(&h);
	/* The runtime's NRI_PLUGIN_NAME/IDX obey the config's rules too (the
	 * log escapes them). */
	if (!nri_plugin_name_valid(nc.plugin_name) || !nri_plugin_index_valid(nc.plugin_index)) {
		log_error("NRI: the runtime named us \"%s\", index \"%s\" (NRI_PLUGIN_NAME, "
			  "NRI_PLUGIN_IDX): a name is 1..%d letters, digits, '-', '_' or '.', an "
			  "index two digits; not registering", nc.plugin_name, nc.plugin_index,
			  NRI_NAME_MAX - 1);
		free(n);
		return -EINVAL;
	}
	r = nri_conn_new(&nc, &h, ctl, &n->conn);
	if (r < 0) {
		log_error("NRI: cannot start as %s-%s: %s", nc.plugin_index, nc.plugin_name,
			  r == -EINVAL ? "bad socket path" : strerror(-r));
		free(n);
		return r;
	}
	if (pre)
		log_info("NRI: pre-installed plugin on fd %d, as %s-%s: placing at CreateContainer "
			 "once registered, cgroup events (BPF) until then and for what NRI misses",
			 nc.socket_fd, nc.plugin_index, nc.plugin_name);
	else
		log_info("NRI: connecting to %s as %s-%s (retried while it is missing): placing at "
			 "CreateContainer once registered, cgroup events (BPF) until then and for "
			 "what NRI misses", nc.socket_path, nc.plugin_index, nc.plugin_name);
	follow_fd(n);
	*ret = n;
	return 0;
}

void daemon_nri_free(struct daemon_nri *n)
{
	if (!n)
		return;
	nri_conn_free(n->conn);
	free(n);
}

int daemon_nri_fd(const struct daemon_nri *n)
{
	return n ? n->fd : -1;
}

bool daemon_nri_owns(const struct daemon_nri *n, int fd)
{
	return n && fd >= 0 && fd == n->fd;
}

int daemon_nri_on_ready(struct daemon_nri *n)
{
	int r = nri_conn_dispatch(n->conn);

	follow_fd(n);
	return r;
}

uint64_t daemon_nri_due_us(const struct daemon_nri *n)
{
	uint64_t at = n ? nri_conn_due_us(n->conn) : UINT64_MAX;

	return at == UINT64_MAX ? 0 : at;
}

/* UpdateContainers takes at most this many updates per call: ttrpc's
 * 4 MiB message limit is far above it (an update is ~100 bytes). */
#define UPDATES_PER_CALL	1024

/* Changes made outside a request, to the runtime (asynchronous). What
 * the connection cannot take now (-EBUSY: too many calls unanswered) is
 * kept for a later turn; a lost connection leaves it to the next
 * Synchronize. */
static int send_outbox(struct daemon_nri *n)
{
	struct nri_update *u;
	size_t k, at, m;
	int r = controller_nri_outbox(n->ctl, &u, &k);

	if (r < 0 || !k)
		return r;
	for (at = 0; at < k; at += m) {
		m = k - at < UPDATES_PER_CALL ? k - at : UPDATES_PER_CALL;
		r = nri_conn_update_containers(n->conn, u + at, m);
		if (r < 0)
			break;
	}
	if (r == -EBUSY)
		controller_nri_untell(n->ctl, u + at, k - at);
	else if (r < 0 && r != -ENOTCONN && r != -ENOMEM)
		log_warn("NRI: %zu container updates not sent: %s; the next synchronize "
			 "catches up", k - at, strerror(-r));
	free(u);
	return r == -ENOMEM ? r : 0;
}

int daemon_nri_turn(struct daemon_nri *n)
{
	uint64_t at;
	int r;

	if (!n)
		return 0;
	at = daemon_nri_due_us(n);
	if (at && clock_us(CLOCK_MONOTONIC) >= at) {
		r = nri_conn_tick(n->conn);
		follow_fd(n);
		if (r < 0)
			return r;
	}
	if (nri_conn_ended(n->conn)) {
		log_notice("NRI: the runtime that started this pre-installed plugin closed its "
			   "connection; stopping (its next start of the plugin takes over)");
		return 1;
	}
	if (!nri_conn_up(n->conn))
		return 0;
	r = send_outbox(n);
	follow_fd(n);
	return r;
}

void daemon_nri_stats(struct daemon_nri *n, struct snapshot_nri *s)
{
	if (!n)
		return;
	nri_conn_stats(n->conn, &n->st);
	s->connects = n->st.connects;
	s->disconnects = n->st.disconnects;
	s->requests = n->st.requests;
	s->protocol_errors = n->st.protocol_errors;
	s->update_failures = n->st.update_failures;
	s->served = n->st.served;
	s->served_methods = nri_method_names;
	s->n_served = NRI_METHOD__COUNT;
}
