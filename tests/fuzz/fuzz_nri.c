// SPDX-License-Identifier: Apache-2.0
/*
 * The NRI connection's input path (user/nri: nri_conn_dispatch -> mux
 * frames -> ttrpc messages -> protobuf-c requests -> nri_msg conversion
 * -> handlers -> replies): the bytes a runtime could send, written into
 * the plugin's end of a socketpair, in pieces whose size the first byte
 * chooses (so a frame or a message may end anywhere).
 *
 * Invariants: no crash, hang or leak (ASan, libFuzzer); every string the
 * handlers get is NUL-terminated in its field; the connection is either
 * still open or closed and counted (a bad frame, an oversized length, a
 * truncated or undecodable message ends in a disconnect, never more than
 * one, since a given fd is not reconnected); output stays bounded.
 * Seeds (tests/fuzz/corpus/nri) are whole sessions built from the real
 * requests of containerd 1.7.24 and 2.1.9 (tests/unit/fixtures/nri).
 */
#include <errno.h>
#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>
#define FUZZ_SETUP	setup
#include "fuzz.h"
#include "user/nri/nri.h"

static int ups;

/* FUZZ_NRI_LOG=1: the layer's log lines, to see how far a seed gets. */
static void setup(void)
{
	if (getenv("FUZZ_NRI_LOG"))
		log_max_level = LOG_DEBUG;
}

static void check_ct(const struct nri_container *c)
{
	FUZZ_CHECK_STR(c->id);
	FUZZ_CHECK(c->id[0]);
	FUZZ_CHECK_STR(c->pod_cgroup_parent);
	FUZZ_CHECK_STR(c->meta.namespace_);
	FUZZ_CHECK_STR(c->meta.pod_name);
	FUZZ_CHECK_STR(c->meta.container_name);
	FUZZ_CHECK_STR(c->meta.pod_uid);
	FUZZ_CHECK_STR(c->meta.sandbox_id);
	FUZZ_CHECK_STR(c->meta.runtime_cpus);
	FUZZ_CHECK_STR(c->meta.cgroups_path);
	FUZZ_CHECK_STR(c->meta.error);
	FUZZ_CHECK(!c->meta.sandbox);
	FUZZ_CHECK(c->meta.invalid != META_INVALID_BUNDLE);
	FUZZ_CHECK(c->meta.has_cpu_limit == (c->meta.quota_us > 0 && c->meta.period_us > 0));
}

static void on_connected(void *ctx, bool up, const char *name, const char *version)
{
	(void)ctx;
	FUZZ_CHECK(strlen(name) < 64 && strlen(version) < 64);
	ups += up ? 1 : -1;
	FUZZ_CHECK(ups == 0 || ups == 1);
}

static int on_sync(void *ctx, const struct nri_container *cts, size_t n, struct nri_reply *r)
{
	(void)ctx;
	for (size_t i = 0; i < n; i++) {
		check_ct(&cts[i]);
		if (i < 4 && nri_reply_add_update(r, cts[i].id, "0-1", "") < 0)
			return -ENOMEM;
	}
	return 0;
}

static int on_create(void *ctx, const struct nri_container *c, struct nri_reply *r)
{
	(void)ctx;
	check_ct(c);
	if (c->meta.invalid != META_VALID) {
		snprintf(r->error, sizeof(r->error), "refused: %s", c->meta.error);
		return 0;
	}
	r->adjust = true;
	strcpy(r->cpus, "1");
	strcpy(r->mems, c->meta.cores_ids ? "0" : "");
	return nri_reply_add_update(r, "shared", "0", "");
}

static int on_update(void *ctx, const struct nri_container *c, struct nri_reply *r)
{
	(void)ctx;
	check_ct(c);
	return nri_reply_add_update(r, c->id, "1", "");
}

static int on_stop(void *ctx, const struct nri_container *c, struct nri_reply *r)
{
	(void)ctx;
	(void)r;
	check_ct(c);
	return c->pid & 1 ? -ENOMEM : 0;	/* a failing handler too */
}

static void on_remove(void *ctx, const char *id, const char *sandbox)
{
	(void)ctx;
	FUZZ_CHECK(strlen(id) < 72 && strlen(sandbox) < 72);
	FUZZ_CHECK(!id[0] != !sandbox[0]);
}

static const struct nri_handlers handlers = {
	.connected = on_connected, .synchronize = on_sync, .create_container = on_create,
	.update_container = on_update, .stop_container = on_stop, .remove = on_remove,
};

/* What the plugin wrote: read and dropped (the runtime's side). */
static void drain(int fd)
{
	static uint8_t buf[1 << 16];

	while (read(fd, buf, sizeof(buf)) > 0)
		;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct nri_conn_config cfg = { .socket_fd = -1, .plugin_name = "cpusetd",
				       .plugin_index = "99" };
	struct nri_update u = { "c", "0", "" };
	struct nri_conn *c;
	struct nri_stats st;
	size_t piece;
	int sv[2];

	if (size < 1 || size > (1 << 20))
		return 0;
	piece = data[0] ? (size_t)data[0] * 7 : size;
	data++, size--;
	FUZZ_CHECK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv) == 0);
	/* The runtime's socket buffer must take each piece whole. */
	FUZZ_CHECK(setsockopt(sv[1], SOL_SOCKET, SO_SNDBUF, &(int){ 4 << 20 }, sizeof(int)) == 0);
	cfg.socket_fd = sv[0];
	ups = 0;
	FUZZ_CHECK(nri_conn_new(&cfg, &handlers, NULL, &c) == 0);
	drain(sv[1]);
	while (size && nri_conn_fd(c) >= 0) {
		size_t n = piece < size ? piece : size;
		ssize_t w = write(sv[1], data, n);

		FUZZ_CHECK(w > 0);
		data += w, size -= (size_t)w;
		FUZZ_CHECK(nri_conn_dispatch(c) == 0);
		drain(sv[1]);
	}
	if (nri_conn_up(c))
		FUZZ_CHECK(nri_conn_update_containers(c, &u, 1) == 0);
	FUZZ_CHECK(nri_conn_tick(c) == 0);
	nri_conn_stats(c, &st);
	FUZZ_CHECK(st.disconnects <= 1 && st.protocol_errors <= st.disconnects);
	FUZZ_CHECK(st.connects <= 1);
	if (nri_conn_fd(c) < 0)
		FUZZ_CHECK(st.disconnects == 1 && nri_conn_due_us(c) == UINT64_MAX);
	nri_conn_free(c);
	FUZZ_CHECK(ups == 0);
	close(sv[1]);	/* sv[0] is the connection's: closed by it */
	return 0;
}
