/*
 * status.json writer (schema in status.h). Built with json-c, written to
 * a temporary file in the same directory and renamed over the old one, so
 * readers never see a half-written file.
 *
 * The heartbeat rewrites the whole file: one writer and one schema, at the
 * cost of the work of one placement change every export_interval (15 s by
 * default) even when nothing changed.
 */
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "user/daemon/controller_internal.h"
#include "user/base/files.h"
#include "user/base/procs.h"
#include "export_koord_write.h"
#include "status.h"
#include "status_detail.h"
#include "user/base/strmap.h"
#include "user/topo/topology_json.h"

static void add(json_object *o, const char *k, json_object *v)
{
	json_object_object_add(o, k, v);
}

static const char *mode_name(enum cgfs_mode m)
{
	return m == CGFS_MODE_V2 ? "v2" : m == CGFS_MODE_HYBRID ? "hybrid" : "v1";
}

/* The allocation settings in force, spelled as in the config file. */
static json_object *allocation_obj(const struct policy_config *p)
{
	json_object *o = json_object_new_object();

	add(o, "engine", json_object_new_string(p->alloc.kubelet_compat ? "kubelet" : "koordinator"));
	add(o, "cpu_bind_policy", json_object_new_string(koord_bind_policy_name(p->alloc.bind)));
	add(o, "cpu_exclusive_policy",
	    json_object_new_string(koord_excl_policy_name(p->alloc.exclusive)));
	add(o, "numa_allocate_strategy",
	    json_object_new_string(koord_numa_strategy_name(p->alloc.numa)));
	add(o, "numa_topology_alignment_policy", json_object_new_string(numa_policy_name(p->alloc.align)));
	add(o, "topology_manager_scope",
	    json_object_new_string(p->alloc.pod_scope ? "pod" : "container"));
	add(o, "besteffort_pool", json_object_new_string(p->besteffort_be_pool ? "be" : "shared"));
	add(o, "integer_qos", json_object_new_string(policy_qos_name(p->integer_qos)));
	add(o, "reserved_cpus", cpumask_json(&p->reserved_cpus));
	add(o, "prefer_isolated_cpus", json_object_new_boolean(p->prefer_isolated));
	return o;
}

static unsigned interval_s(const struct controller *c)
{
	return c->cfg->export_interval_s ? c->cfg->export_interval_s : 1;
}

/* Who and how alive: what a reader needs to tell a live daemon from a
 * file left behind (status.h, "Liveness"). */
static void add_liveness(json_object *o, const struct controller *c,
			 const struct status_beat *b, double now)
{
	/* Our own comm and PID namespace never change: read once, not at
	 * every write. "" and 0 when /proc is not there: readers then skip
	 * those checks. */
	static char comm[32];
	static uint64_t pidns;
	static bool known;

	if (!known) {
		procs_comm(0, comm, sizeof(comm));
		procs_pidns(0, &pidns);
		known = true;
	}

	add(o, "state", json_object_new_string(b->stopped ? "stopped" : "running"));
	add(o, "heartbeat", json_object_new_double(now));
	add(o, "export_interval_s", json_object_new_int((int)interval_s(c)));
	add(o, "stopped_at", b->stopped ? json_object_new_double(now) : NULL);
	add(o, "pid", json_object_new_int(getpid()));
	add(o, "comm", json_object_new_string(comm));
	add(o, "pid_ns", json_object_new_uint64(pidns));
}

static json_object *daemon_obj(const struct controller *c, const struct status_beat *b,
			       double now)
{
	json_object *o = json_object_new_object();

	add_liveness(o, c, b, now);
	add(o, "cgroup_mode", json_object_new_string(mode_name(cgfs_mounts(c->cg)->mode)));
	add(o, "kubepods_root", json_object_new_string(c->root));
	add(o, "bpf_attach", json_object_new_string(c->bpf ? bpf_events_attach_mode(c->bpf) : "none"));
	add(o, "write_hook", json_object_new_string(c->bpf ? bpf_events_write_hook(c->bpf) : "none"));
	add(o, "dry_run", json_object_new_boolean(c->cfg->dry_run));
	add(o, "on_error", json_object_new_string(
		c->cfg->policy.on_error == POLICY_ON_ERROR_SHARED ? "shared" : "reject"));
	add(o, "min_shared_cpus", json_object_new_int((int)c->cfg->policy.min_shared_cpus));
	add(o, "allocation", allocation_obj(&c->cfg->policy));
	return o;
}

static json_object *error_obj(const struct container *ct)
{
	json_object *o = json_object_new_object();

	add(o, "reason", json_object_new_string(policy_error_name(ct->d.err)));
	add(o, "message", json_object_new_string(ct->d.reason));
	/* kept: a hotplug error on a placed container, which keeps running
	 * on what it has (policy_hotplug.h). */
	add(o, "action", json_object_new_string(ct->d.reject ? "rejected" :
						ct->d.err_hotplug ? "kept" : "shared"));
	return o;
}

/* One entry of the per-pod error table (pod_errors.h). */
static json_object *pod_error_obj(const struct pod_error *e)
{
	json_object *o = json_object_new_object();

	add(o, "namespace", json_object_new_string(e->namespace_));
	add(o, "pod", json_object_new_string(e->pod));
	add(o, "container", json_object_new_string(e->container));
	add(o, "pod_uid", json_object_new_string(e->pod_uid));
	add(o, "container_id", json_object_new_string(e->container_id));
	add(o, "reason", json_object_new_string(e->reason));
	add(o, "message", json_object_new_string(e->message));
	add(o, "action", json_object_new_string(e->action));
	add(o, "attempts", json_object_new_uint64(e->attempts));
	add(o, "first", json_object_new_double(e->first));
	add(o, "last", json_object_new_double(e->last));
	return o;
}

static const char *state_name(const struct container *ct)
{
	if (ct->killed)
		return "rejected";
	return ct->state == CT_WAITING ? "waiting" : ct->state == CT_EXITED ? "exited" : "placed";
}

static json_object *container_obj(const struct controller *c, const struct container *ct)
{
	const struct policy_entry *e = policy_lookup(c->policy, ct->info.container_id);
	json_object *o = json_object_new_object();

	add(o, "container_id", json_object_new_string(ct->info.container_id));
	add(o, "namespace", json_object_new_string(ct->meta.namespace_));
	add(o, "pod", json_object_new_string(ct->meta.pod_name));
	add(o, "container", json_object_new_string(ct->meta.container_name));
	add(o, "pod_uid", json_object_new_string(ct->meta.pod_uid));
	add(o, "sandbox", json_object_new_boolean(ct->meta.sandbox));
	add(o, "qos", json_object_new_string(pod_qos_name(ct->info.qos)));
	add(o, "kind", json_object_new_string(policy_kind_name(ct->d.kind)));
	/* Effective Koordinator class ("" = none given and not exclusive). */
	add(o, "qos_class", json_object_new_string(e ? policy_qos_name(e->qos) : ""));
	add(o, "cpus", cpumask_json(&ct->d.cpus));
	add(o, "mems", cpumask_json(&ct->d.mems));
	add(o, "cgroup", json_object_new_string(ct->path));
	add(o, "state", json_object_new_string(state_name(ct)));
	add(o, "error", ct->d.err ? error_obj(ct) : NULL);
	add(o, "decision", status_decision_obj(c, ct));
	return o;
}

static json_object *counters_obj(const struct cpusetd_counters *n)
{
	json_object *o = json_object_new_object();

	for (unsigned i = 0; i < COUNTERS_N; i++)
		add(o, counter_info[i].name, json_object_new_uint64(counter_value(n, i)));
	return o;
}

/* Foreign cpuset writes by writer: {"<comm>": N, ...}. */
static json_object *writers_obj(const struct controller *c)
{
	json_object *o = json_object_new_object();
	size_t it = 0;
	const char *k;
	void *v;

	while (strmap_next(c->writers, &it, &k, &v))
		add(o, ((struct writer_count *)v)->comm,
		    json_object_new_uint64(((struct writer_count *)v)->writes));
	return o;
}

static json_object *convergence_obj(const struct controller *c)
{
	json_object *o = json_object_new_object(), *recent = json_object_new_array();
	uint64_t n = c->conv_count < STATUS_RECENT ? c->conv_count : STATUS_RECENT;

	for (uint64_t i = c->conv_count - n; i < c->conv_count; i++)
		json_object_array_add(recent, json_object_new_uint64(c->conv_ns[i % STATUS_RECENT]));
	add(o, "count", json_object_new_uint64(c->conv_count));
	add(o, "last_ns", json_object_new_uint64(
		c->conv_count ? c->conv_ns[(c->conv_count - 1) % STATUS_RECENT] : 0));
	add(o, "recent_ns", recent);
	return o;
}

static json_object *build(const struct controller *c, const struct status_beat *b, double now)
{
	json_object *o = json_object_new_object();
	json_object *list = json_object_new_array(), *errors = json_object_new_array();
	struct cpumask m;
	size_t it = 0;
	const char *k;
	void *v;

	add(o, "version", json_object_new_int(1));
	add(o, "updated", json_object_new_double(b->updated));
	add(o, "daemon", daemon_obj(c, b, now));
	add(o, "topology", topo_json(c->topo, true));
	policy_shared_pool(c->policy, &m);
	add(o, "shared_pool", cpumask_json(&m));
	policy_be_pool(c->policy, &m);
	add(o, "be_pool", cpumask_json(&m));
	policy_reserved(c->policy, &m);
	add(o, "reserved", cpumask_json(&m));
	while (strmap_next(c->by_path, &it, &k, &v)) {
		const struct container *ct = v;

		json_object_array_add(list, container_obj(c, ct));
	}
	it = 0;
	for (const struct pod_error *e; (e = pod_errors_next(c->errors, &it));)
		json_object_array_add(errors, pod_error_obj(e));
	add(o, "containers", list);
	add(o, "errors", errors);
	add(o, "counters", counters_obj(&c->n));
	add(o, "foreign_writers", writers_obj(c));
	add(o, "convergence", convergence_obj(c));
	return o;
}

bool status_due(const struct controller *c, const struct status_beat *b)
{
	return c->dirty || b->stopped || !b->next_us || clock_us(CLOCK_MONOTONIC) >= b->next_us;
}

int status_timeout_ms(const struct status_beat *b, int max_ms)
{
	uint64_t now = clock_us(CLOCK_MONOTONIC), left_ms;

	if (!b->next_us)
		return max_ms;
	left_ms = now >= b->next_us ? 1 : (b->next_us - now + 999) / 1000;
	return left_ms < (uint64_t)max_ms ? (int)left_ms : max_ms;
}

int status_write(const struct controller *c, struct status_beat *b, const char *state_dir)
{
	double now = (double)clock_us(CLOCK_REALTIME) / 1e6;
	bool changed = c->dirty || !b->updated;
	const char *text;
	json_object *o;
	int r;

	/* A failed write is retried at the next heartbeat, not at every turn. */
	b->next_us = clock_us(CLOCK_MONOTONIC) + interval_s(c) * 1000000ULL;
	if (changed)
		b->updated = now;
	o = build(c, b, now);
	if (!o)
		return -ENOMEM;
	text = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);
	r = text ? files_write_atomic(state_dir, STATUS_FILE, text, strlen(text), 0644) : -ENOMEM;
	json_object_put(o);
	/* topology.json goes with every change, for Koordinator agents */
	return r < 0 || !changed ? r : export_koord_write(c, state_dir);
}
