// SPDX-License-Identifier: Apache-2.0
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
#include "user/base/clock.h"
#include "user/base/files.h"
#include "user/base/log.h"
#include "user/base/procs.h"
#include "export_koord_write.h"
#include "snapshot.h"
#include "status.h"
#include "status_detail.h"
#include "user/base/strmap.h"
#include "user/topo/topology_json.h"

static void add(json_object *o, const char *k, json_object *v)
{
	json_object_object_add(o, k, v);
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

/* Who and how alive: what a reader needs to tell a live daemon from a
 * file left behind (status.h, "Liveness"). */
static void add_liveness(json_object *o, const struct snapshot *s,
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
	add(o, "export_interval_s", json_object_new_int((int)s->export_interval_s));
	add(o, "stopped_at", b->stopped ? json_object_new_double(now) : NULL);
	add(o, "pid", json_object_new_int(b->pid ? b->pid : getpid()));
	add(o, "comm", json_object_new_string(comm));
	add(o, "pid_ns", json_object_new_uint64(pidns));
}

/* NRI's state (user/daemon/README.md "NRI"): "off", "connecting" or "connected", the
 * runtime, and the connection's counters. */
static json_object *nri_obj(const struct snapshot_nri *n)
{
	json_object *o = json_object_new_object();

	add(o, "state", json_object_new_string(n->state ? n->state : "off"));
	add(o, "runtime", json_object_new_string(n->runtime_name ? n->runtime_name : ""));
	add(o, "runtime_version",
	    json_object_new_string(n->runtime_version ? n->runtime_version : ""));
	add(o, "pending", json_object_new_uint64(n->pending));
	add(o, "connects", json_object_new_uint64(n->connects));
	add(o, "disconnects", json_object_new_uint64(n->disconnects));
	add(o, "requests", json_object_new_uint64(n->requests));
	add(o, "protocol_errors", json_object_new_uint64(n->protocol_errors));
	add(o, "update_failures", json_object_new_uint64(n->update_failures));
	return o;
}

static json_object *daemon_obj(const struct snapshot *s, const struct status_beat *b,
			       double now)
{
	json_object *o = json_object_new_object();

	add_liveness(o, s, b, now);
	add(o, "version", json_object_new_string(s->version ? s->version : ""));
	add(o, "revision", json_object_new_string(s->revision ? s->revision : "unknown"));
	add(o, "cgroup_mode", json_object_new_string(s->cgroup_mode));
	add(o, "kubepods_root", json_object_new_string(s->kubepods_root));
	add(o, "bpf_attach", json_object_new_string(s->bpf_attach));
	add(o, "telemetry", json_object_new_string(s->telemetry ? s->telemetry : "off"));
	add(o, "write_hook", json_object_new_string(s->write_hook));
	add(o, "dry_run", json_object_new_boolean(s->dry_run));
	add(o, "on_error", json_object_new_string(
		s->policy->on_error == POLICY_ON_ERROR_SHARED ? "shared" : "reject"));
	add(o, "min_shared_cpus", json_object_new_int((int)s->policy->min_shared_cpus));
	add(o, "restart_needed", json_object_new_string(s->restart_needed ? s->restart_needed : ""));
	add(o, "mode", json_object_new_string(s->nri.mode ? s->nri.mode : "bpf"));
	add(o, "nri", nri_obj(&s->nri));
	add(o, "allocation", allocation_obj(s->policy));
	return o;
}

/* A message (raw text that may quote pod values: a policy reason) as
 * one escaped line, as the log shows it (log_escape, once: here). */
static json_object *message_json(const char *raw)
{
	char buf[4 * sizeof(((struct pod_error *)0)->message) + 1];

	log_escape(raw, buf, sizeof(buf));
	return json_object_new_string(buf);
}

static json_object *error_obj(const struct policy_decision *d)
{
	json_object *o = json_object_new_object();

	add(o, "reason", json_object_new_string(policy_error_name(d->err)));
	add(o, "message", message_json(d->reason));
	/* kept: a hotplug error on a placed container, which keeps running
	 * on what it has (policy_hotplug.h). */
	add(o, "action", json_object_new_string(d->reject ? "rejected" :
						d->err_hotplug ? "kept" : "shared"));
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
	add(o, "message", message_json(e->message));
	add(o, "action", json_object_new_string(e->action));
	add(o, "attempts", json_object_new_uint64(e->attempts));
	add(o, "first", json_object_new_double(e->first));
	add(o, "last", json_object_new_double(e->last));
	return o;
}

static json_object *container_obj(const struct snapshot *s, const struct snapshot_container *ct)
{
	const struct pod_meta *m = ct->meta;
	json_object *o = json_object_new_object();

	add(o, "container_id", json_object_new_string(ct->container_id));
	add(o, "namespace", json_object_new_string(m->namespace_));
	add(o, "pod", json_object_new_string(m->pod_name));
	add(o, "container", json_object_new_string(m->container_name));
	add(o, "pod_uid", json_object_new_string(m->pod_uid));
	add(o, "sandbox", json_object_new_boolean(m->sandbox));
	add(o, "qos", json_object_new_string(pod_qos_name(ct->qos)));
	add(o, "kind", json_object_new_string(policy_kind_name(ct->d->kind)));
	/* Effective Koordinator class ("" = none given and not exclusive). */
	add(o, "qos_class", json_object_new_string(ct->entry ? policy_qos_name(ct->entry->qos) : ""));
	add(o, "cpus", cpumask_json(&ct->d->cpus));
	add(o, "mems", cpumask_json(&ct->d->mems));
	add(o, "cgroup", json_object_new_string(ct->cgroup));
	add(o, "state", json_object_new_string(ct->state));
	add(o, "error", ct->d->err ? error_obj(ct->d) : NULL);
	add(o, "decision", status_decision_obj(s, ct));
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
static json_object *writers_obj(const struct snapshot *s)
{
	json_object *o = json_object_new_object();

	for (size_t i = 0; i < s->n_writers; i++)
		add(o, s->writers[i].comm, json_object_new_uint64(s->writers[i].writes));
	return o;
}

static json_object *convergence_obj(const struct snapshot *s)
{
	json_object *o = json_object_new_object(), *recent = json_object_new_array();
	json_object *phases = NULL;
	uint64_t n = s->conv_count < s->conv_ring_len ? s->conv_count : s->conv_ring_len;

	for (uint64_t i = s->conv_count - n; i < s->conv_count; i++)
		json_object_array_add(recent, json_object_new_uint64(s->conv_ring[i % s->conv_ring_len]));
	add(o, "count", json_object_new_uint64(s->conv_count));
	add(o, "last_ns", json_object_new_uint64(
		s->conv_count ? s->conv_ring[(s->conv_count - 1) % s->conv_ring_len] : 0));
	add(o, "recent_ns", recent);
	/* each phase's share of the same samples (snapshot.h), same order */
	for (int p = 0; p < CONV_PHASE__COUNT && s->conv_phase_ring[p]; p++) {
		json_object *a = json_object_new_array();
		char key[32];

		for (uint64_t i = s->conv_count - n; i < s->conv_count; i++)
			json_object_array_add(a, json_object_new_uint64(
				s->conv_phase_ring[p][i % s->conv_ring_len]));
		if (!phases)
			phases = json_object_new_object();
		snprintf(key, sizeof(key), "%s_ns", conv_phase_names[p]);
		add(phases, key, a);
	}
	if (phases)
		add(o, "phases", phases);
	return o;
}

/* Host isolation (isolate_host), as its last pass left it; null when off. */
static json_object *isolation_obj(const struct snapshot_isolation *is)
{
	json_object *o = json_object_new_object(), *reasons = json_object_new_array();

	add(o, "active", json_object_new_boolean(is->active));
	add(o, "exclusive", cpumask_json(&is->exclusive));
	add(o, "host", cpumask_json(&is->host));
	add(o, "host_cgroups_narrowed", json_object_new_uint64(is->cgroups_narrowed));
	add(o, "host_cgroups_left", json_object_new_uint64(is->cgroups_left));
	add(o, "tasks_narrowed", json_object_new_uint64(is->tasks_narrowed));
	add(o, "tasks_left", json_object_new_uint64(is->tasks_left));
	add(o, "kthreads_pinned", json_object_new_uint64(is->kthreads_pinned));
	add(o, "irqs_moved", json_object_new_uint64(is->irqs_moved));
	add(o, "irqs_refused", json_object_new_uint64(is->irqs_refused));
	add(o, "irq_default_narrowed", json_object_new_boolean(is->irq_default_narrowed));
	add(o, "workqueue_narrowed", json_object_new_boolean(is->workqueue_narrowed));
	add(o, "pass_ns", json_object_new_uint64(is->pass_ns));
	for (unsigned i = 0; i < is->n_reasons; i++)
		json_object_array_add(reasons, json_object_new_string(is->reasons[i]));
	add(o, "reasons", reasons);
	return o;
}

static json_object *build(const struct snapshot *s, const struct status_beat *b, double now)
{
	json_object *o = json_object_new_object();
	json_object *list = json_object_new_array(), *errors = json_object_new_array();
	size_t it = 0;

	add(o, "version", json_object_new_int(1));
	add(o, "updated", json_object_new_double(b->updated));
	add(o, "daemon", daemon_obj(s, b, now));
	add(o, "topology", topo_json(s->topo, true));
	add(o, "shared_pool", cpumask_json(&s->shared_pool));
	add(o, "be_pool", cpumask_json(&s->be_pool));
	add(o, "reserved", cpumask_json(&s->reserved));
	for (size_t i = 0; i < s->n_containers; i++)
		json_object_array_add(list, container_obj(s, &s->containers[i]));
	for (const struct pod_error *e; (e = pod_errors_next(s->errors, &it));)
		json_object_array_add(errors, pod_error_obj(e));
	add(o, "containers", list);
	add(o, "errors", errors);
	add(o, "counters", counters_obj(s->n));
	add(o, "foreign_writers", writers_obj(s));
	add(o, "convergence", convergence_obj(s));
	add(o, "isolation", s->isolation ? isolation_obj(s->isolation) : NULL);
	return o;
}

bool status_due(bool dirty, const struct status_beat *b)
{
	return dirty || b->stopped || !b->next_us || clock_us(CLOCK_MONOTONIC) >= b->next_us;
}

int status_timeout_ms(const struct status_beat *b, int max_ms)
{
	uint64_t now = clock_us(CLOCK_MONOTONIC), left_ms;

	if (!b->next_us)
		return max_ms;
	left_ms = now >= b->next_us ? 1 : (b->next_us - now + 999) / 1000;
	return left_ms < (uint64_t)max_ms ? (int)left_ms : max_ms;
}

bool status_begin(const struct snapshot *s, struct status_beat *b)
{
	bool changed = s->dirty || !b->updated;

	/* A failed write is retried at the next heartbeat, not at every turn. */
	b->next_us = clock_us(CLOCK_MONOTONIC) + s->export_interval_s * 1000000ULL;
	if (changed)
		b->updated = clock_unix_s();
	return changed;
}

int status_write_files(const struct snapshot *s, const struct status_beat *b,
		       const char *state_dir, bool changed)
{
	const char *text;
	json_object *o;
	int r;

	o = build(s, b, clock_unix_s());
	if (!o)
		return -ENOMEM;
	text = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);
	r = text ? files_write_atomic(state_dir, STATUS_FILE, text, strlen(text), 0644) : -ENOMEM;
	json_object_put(o);
	/* topology.json goes with every change, for Koordinator agents */
	return r < 0 || !changed ? r : export_koord_write(s, state_dir);
}

int status_write(const struct snapshot *s, struct status_beat *b, const char *state_dir)
{
	bool changed = status_begin(s, b);

	return status_write_files(s, b, state_dir, changed);
}
