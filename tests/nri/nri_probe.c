// SPDX-License-Identifier: Apache-2.0
/*
 * nri-probe: the NRI wire layer (user/nri) as a stand-alone plugin that
 * logs every event, for trying it against a real containerd by hand and
 * for capturing real request payloads as test fixtures. It decides
 * nothing: CreateContainer is answered without adjustment unless --cpus
 * is given. --update LIST: after Synchronize, UpdateContainers with these
 * cpus for every container it listed, and for one that does not exist.
 * --sync-update LIST: the same cpus for every listed container in
 * Synchronize's own reply.
 *
 *   build/nri-probe --socket /tmp/x/nri.sock [--name probe] [--index 10]
 *       [--cpus 0-1] [--capture DIR] [--seconds N]
 *
 * Started by the runtime as a pre-installed plugin (NRI_PLUGIN_SOCKET in
 * the environment), it uses the connection it was given.
 *
 * --capture puts a relay between the layer and the runtime (a socketpair
 * given to the layer as a pre-installed plugin's fd) and saves the
 * payload of every request the runtime sends as DIR/NNN-Method.bin: the
 * bytes of api.proto's request message, as the unit tests load them. A
 * captured session does not reconnect.
 */
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>
#include "user/base/clock.h"
#include "user/base/log.h"
#include "user/nri/nri.h"
#include "user/nri/nri_wire.h"
#include "user/nri/ttrpc.pb-c.h"

static const char *cpus;
static volatile sig_atomic_t stop;
static const char *update_cpus;
static const char *sync_cpus;	/* --sync-update: in Synchronize's reply */
/* Containers Synchronize listed, for --update (sent after it, not from
 * inside the handler: the runtime waits for our answer meanwhile). */
static struct nri_update *to_update;
static size_t n_to_update;
static const char *capture_dir;
static unsigned captured;

static void show(const char *what, const struct nri_container *c)
{
	const struct pod_meta *m = &c->meta;

	printf("%s %.12s %s/%s/%s state=%d quota=%lld period=%llu shares=%llu cpus=\"%s\" "
	       "cores-ids=%s cgroups_path=%s invalid=%d%s%s\n",
	       what, c->id, m->namespace_, m->pod_name, m->container_name, c->state,
	       (long long)m->quota_us, (unsigned long long)m->period_us,
	       (unsigned long long)m->cpu_shares, m->runtime_cpus,
	       m->cores_ids ? m->cores_ids : "-", m->cgroups_path, m->invalid,
	       m->error[0] ? " error=" : "", m->error);
	fflush(stdout);
}

static void on_connected(void *ctx, bool up, const char *name, const char *version)
{
	(void)ctx;
	printf("connected %s %s %s\n", up ? "up" : "down", name, version);
	fflush(stdout);
}

static int on_sync(void *ctx, const struct nri_container *cts, size_t n, struct nri_reply *r)
{
	(void)ctx;
	printf("synchronize %zu containers\n", n);
	for (size_t i = 0; i < n; i++) {
		show("  sync", &cts[i]);
		if (sync_cpus && nri_reply_add_update(r, cts[i].id, sync_cpus, "") < 0)
			return -ENOMEM;
	}
	if (update_cpus) {
		/* And one the runtime does not know, to see its failed list. */
		to_update = calloc(n + 1, sizeof(*to_update));
		if (!to_update)
			return -ENOMEM;
		for (size_t i = 0; i <= n; i++) {
			snprintf(to_update[i].container_id, sizeof(to_update[i].container_id), "%s",
				 i < n ? cts[i].id : "no-such-container");
			snprintf(to_update[i].cpus, sizeof(to_update[i].cpus), "%s", update_cpus);
		}
		n_to_update = n + 1;
	}
	return 0;
}

static int on_create(void *ctx, const struct nri_container *c, struct nri_reply *r)
{
	(void)ctx;
	show("create", c);
	if (cpus) {
		r->adjust = true;
		snprintf(r->cpus, sizeof(r->cpus), "%s", cpus);
	}
	return 0;
}

static int on_update(void *ctx, const struct nri_container *c, struct nri_reply *r)
{
	(void)ctx;
	(void)r;
	show("update", c);
	return 0;
}

static int on_stop(void *ctx, const struct nri_container *c, struct nri_reply *r)
{
	(void)ctx;
	(void)r;
	show("stop", c);
	return 0;
}

static void on_remove(void *ctx, const char *id, const char *sandbox)
{
	(void)ctx;
	printf("remove container=%.12s sandbox=%.12s\n", id, sandbox);
	fflush(stdout);
}

/* A request the runtime sent, seen in the relay: save its payload. */
static int save(void *ctx, const struct nri_ttrpc_msg *m)
{
	Ttrpc__Request *req;
	char path[4096], method[64] = "?";
	FILE *f;

	(void)ctx;
	if (m->conn != NRI_CONN_PLUGIN || m->type != NRI_TTRPC_REQUEST)
		return 0;
	req = ttrpc__request__unpack(NULL, m->len, m->data);
	if (!req)
		return 0;
	if (req->method.len < sizeof(method)) {
		memcpy(method, req->method.data, req->method.len);
		method[req->method.len] = '\0';
	}
	snprintf(path, sizeof(path), "%s/%03u-%s.bin", capture_dir, captured++, method);
	f = fopen(path, "w");
	if (f) {
		fwrite(req->payload.data, 1, req->payload.len, f);
		fclose(f);
	}
	ttrpc__request__free_unpacked(req, NULL);
	return 0;
}

/* Copies what is readable on from to to; copy to rx when given.
 * Returns 0, or -1 at EOF or error. */
static int relay(int from, int to, struct nri_rx *rx)
{
	uint8_t buf[65536];
	ssize_t n = read(from, buf, sizeof(buf));

	if (n <= 0)
		return n < 0 && errno == EAGAIN ? 0 : -1;
	if (rx)
		nri_rx_feed(rx, buf, (size_t)n, save, NULL);
	for (ssize_t off = 0; off < n;) {
		ssize_t w = write(to, buf + off, (size_t)(n - off));

		if (w < 0)
			return -1;
		off += w;
	}
	return 0;
}

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static int connect_to(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		fprintf(stderr, "nri-probe: %s: %s\n", path, strerror(errno));
		exit(1);
	}
	return fd;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "socket", required_argument, NULL, 's' },
		{ "name", required_argument, NULL, 'n' },
		{ "index", required_argument, NULL, 'i' },
		{ "cpus", required_argument, NULL, 'c' },
		{ "capture", required_argument, NULL, 'C' },
		{ "seconds", required_argument, NULL, 't' },
		{ "update", required_argument, NULL, 'u' },
		{ "sync-update", required_argument, NULL, 'S' },
		{ 0 },
	};
	struct nri_handlers h = {
		.connected = on_connected, .synchronize = on_sync, .create_container = on_create,
		.update_container = on_update, .stop_container = on_stop, .remove = on_remove,
	};
	struct nri_conn_config cfg = { .socket_path = NRI_DEFAULT_SOCKET, .socket_fd = -1,
				       .plugin_name = "nri-probe", .plugin_index = "10" };
	struct nri_rx rx = { 0 };
	struct nri_conn *c;
	struct nri_stats st;
	uint64_t end = UINT64_MAX;
	int o, r, sv[2] = { -1, -1 }, rfd = -1;

	while ((o = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (o) {
		case 's': cfg.socket_path = optarg; break;
		case 'n': cfg.plugin_name = optarg; break;
		case 'i': cfg.plugin_index = optarg; break;
		case 'c': cpus = optarg; break;
		case 'C': capture_dir = optarg; break;
		case 'u': update_cpus = optarg; break;
		case 'S': sync_cpus = optarg; break;
		case 't': end = clock_us(CLOCK_MONOTONIC) + strtoull(optarg, NULL, 10) * 1000000; break;
		default:
			fprintf(stderr, "usage: nri-probe --socket PATH [--name N] [--index NN] "
				"[--cpus LIST] [--update LIST] [--sync-update LIST] [--capture DIR] "
				"[--seconds N]\n");
			return 2;
		}
	}
	log_max_level = LOG_DEBUG;
	setvbuf(stdout, NULL, _IOLBF, 0);
	/* SIGTERM/SIGINT end the loop: the stats line is still printed. */
	sigaction(SIGTERM, &(struct sigaction){ .sa_handler = on_signal }, NULL);
	sigaction(SIGINT, &(struct sigaction){ .sa_handler = on_signal }, NULL);
	/* Started by the runtime from its plugin_path: the socket is ours. */
	r = nri_conn_config_from_env(&cfg);
	if (r < 0) {
		fprintf(stderr, "nri-probe: NRI_PLUGIN_SOCKET: not an open fd\n");
		return 1;
	}
	if (r > 0)
		printf("pre-installed as %s-%s on fd %d\n", cfg.plugin_index, cfg.plugin_name,
		       cfg.socket_fd);
	else if (capture_dir) {
		rfd = connect_to(cfg.socket_path);
		if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
			return 1;
		cfg.socket_fd = sv[0];
	}
	r = nri_conn_new(&cfg, &h, NULL, &c);
	if (r < 0) {
		fprintf(stderr, "nri-probe: %s\n", strerror(-r));
		return 1;
	}
	while (!stop && clock_us(CLOCK_MONOTONIC) < end) {
		struct pollfd p[3] = { { nri_conn_fd(c), POLLIN, 0 }, { rfd, POLLIN, 0 },
				       { sv[1], POLLIN, 0 } };
		uint64_t due = nri_conn_due_us(c), now = clock_us(CLOCK_MONOTONIC);
		int ms = due == UINT64_MAX ? 1000 : due <= now ? 0 : (int)((due - now) / 1000 + 1);

		if (ms > 1000)
			ms = 1000;
		if (poll(p, 3, ms) < 0 && errno != EINTR)
			break;
		if (p[1].revents && relay(rfd, sv[1], &rx) < 0)
			break;
		if (p[2].revents && relay(sv[1], rfd, NULL) < 0)
			break;
		if (p[0].revents)
			nri_conn_dispatch(c);
		nri_conn_tick(c);
		/* A given fd is not reconnected: once lost, we are done (the
		 * runtime starts a new pre-installed instance when it restarts). */
		if (nri_conn_fd(c) < 0 && nri_conn_due_us(c) == UINT64_MAX)
			break;
		if (n_to_update) {
			r = nri_conn_update_containers(c, to_update, n_to_update);
			printf("update_containers %zu to %s: %s\n", n_to_update, update_cpus,
			       strerror(-r));
			free(to_update);
			to_update = NULL;
			n_to_update = 0;
		}
	}
	nri_conn_stats(c, &st);
	printf("stats connects=%llu disconnects=%llu requests=%llu protocol_errors=%llu "
	       "update_failures=%llu\n",
	       (unsigned long long)st.connects, (unsigned long long)st.disconnects,
	       (unsigned long long)st.requests, (unsigned long long)st.protocol_errors,
	       (unsigned long long)st.update_failures);
	nri_conn_free(c);
	nri_rx_release(&rx);
	return 0;
}
