// SPDX-License-Identifier: Apache-2.0
/*
 * What a write or a placement entry's update (user/enforce: planned and
 * carried out there) means for its container: the record follows, every
 * attempt is counted, a failure is logged and listed for the pod.
 *
 * The placement map is pinned and bounded (65536 entries): keys of
 * containers that went away unseen are pruned after every resync, and an
 * entry that cannot be written is an error (counted, logged once per
 * cause, listed for the pod) until a later write of it works.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "controller_internal.h"
#include "user/enforce/enforce.h"

void controller_note_write(struct controller *c, struct container *ct, const char *what, int r)
{
	c->n.cgroup_writes++;
	if (r == 0 || r == -ENOENT)	/* vanished: it will be gone from the table soon */
		return;
	c->n.cgroup_write_errors++;
	ct_log(LOG_WARNING, ct, "cgroup_write_failed", "%s (%s): writing %s failed: %s", ct->name,
	       ct->path, what, strerror(-r));
}

#define MAP_ERROR	"placement_map_error"	/* its reason in the pod's error list */

/*
 * ct's entry could not be written (r: -errno; -E2BIG: every entry is
 * taken). What the BPF side does with an entry is off for ct until a later
 * write works: the kill of a rejection at its own exec (user space kills
 * it at its first exec instead: CPUSETD_EXEC_UNPLACED), the exec check
 * (only the first exec is reported), and, with a BPF write hook (not
 * fanotify, which does not consult the map), the report of foreign
 * writes. Counted once per container until it works again; logged at
 * error level once per cause until the next prune (resync); listed for
 * the pod unless an admission error is listed for the container (that
 * one says more, and stays).
 */
static void map_failed(struct controller *c, struct container *ct, int r)
{
	const char *hook = bpf_events_write_hook(c->bpf);
	bool bpf_hook = strcmp(hook, "fanotify") != 0 && strcmp(hook, "none") != 0;
	char msg[256];

	snprintf(msg, sizeof(msg),
		 "BPF placement map update failed: %s%s; until its entry is written %s"
		 "only its first exec is checked%s", strerror(-r),
		 r == -E2BIG ? " (all 65536 entries taken)" : "",
		 ct->d.reject ? "BPF cannot kill it (cpusetd kills it at its first exec), " : "",
		 bpf_hook ? " and foreign writes of its cpuset go unseen" : "");
	if (!ct->map_err) {
		c->n.placement_map_errors++;
		c->dirty = true;
	}
	ct->map_err = r;
	if (c->map_err_logged != r) {
		c->map_err_logged = r;
		ct_log(LOG_ERR, ct, MAP_ERROR, "%s (%.12s): %s; retried at each change, stale "
		       "entries pruned at the next resync (SIGHUP); more containers are counted "
		       "in placement_map_errors, not logged", ct->name, ct->info.container_id, msg);
	} else {
		log_debug("%s: %s", ct->name, msg);
	}
	if (!ct->d.err)
		controller_note_pod_error(c, ct, MAP_ERROR, msg, "kept");
}

/* ct's entry was written after a failure: its listed error goes. */
static void map_recovered(struct controller *c, struct container *ct)
{
	const struct pod_error *e = pod_errors_get(c->errors, ct->meta.namespace_,
						   container_error_pod(ct),
						   container_error_name(ct));

	ct->map_err = 0;
	if (e && strcmp(e->reason, MAP_ERROR) == 0)
		pod_errors_forget(c->errors, ct->meta.namespace_, container_error_pod(ct),
				  container_error_name(ct));
	ct_log(LOG_INFO, ct, "placement_map_written", "%s (%.12s): placement map entry written",
	       ct->name, ct->info.container_id);
	c->dirty = true;
}

/* For benchmarks only: CPUSETD_PLACEMENT_MAP_OFF=1 leaves the placement
 * map alone (what its two updates per resized container cost). The exec
 * check and the BPF side of rejections then see no entry. */
static bool placement_map_off(void)
{
	static int off = -1;

	if (off < 0)
		off = getenv("CPUSETD_PLACEMENT_MAP_OFF") != NULL;
	return off;
}

void controller_entry_of(const struct controller *c, const struct container *ct,
			 struct enforce_target *t)
{
	t->map_have = c->bpf && ct->cgroup_id && !placement_map_off() ? &ct->map_cpus : NULL;
	t->cgroup_id = ct->cgroup_id;
	t->entry = (struct enforce_entry){
		.kind = ct->d.kind, .verify_pending = ct->exec_pending,
		.reject_id = ct->reject_armed ? ct->cgroup_id : 0 };
}

void controller_write_result(struct controller *c, struct container *ct,
			     const struct enforce_op *op, int r)
{
	if (r == ENFORCE_SKIPPED)
		return;
	switch (op->kind) {
	case ENFORCE_CPUS:
	case ENFORCE_MEMS:
		controller_note_write(c, ct, op->kind == ENFORCE_CPUS ? "cpuset.cpus" :
					     "cpuset.mems", r);
		if (r)
			return;
		if (op->kind == ENFORCE_CPUS) {
			ct->cpus_applied = op->set;
			ct->cpus_known = true;
		} else {
			ct->mems_applied = op->set;
			ct->mems_known = true;
		}
		c->dirty = true;
		return;
	case ENFORCE_MAP_WIDEN:
	case ENFORCE_MAP:
		if (r < 0) {
			map_failed(c, ct, r);
			return;
		}
		ct->map_cpus = op->set;
		if (ct->map_err)
			map_recovered(c, ct);
		return;
	case ENFORCE_HOST:
		return;
	}
}

/* Mirrors the decision into the BPF placement map: a plan of one exact
 * entry, through the one executor. */
int controller_sync_map(struct controller *c, struct container *ct)
{
	struct enforce_target t = { 0 };
	struct enforce_op op = { .kind = ENFORCE_MAP, .set = ct->d.cpus };
	struct enforce_plan p = { .ops = &op, .n = 1, .cap = 1 };
	struct enforce_io io = { .bpf = c->bpf };
	int r;

	controller_entry_of(c, ct, &t);
	if (!t.map_have)
		return 0;
	enforce_exec(&io, &t, &p, 0, 1, &r);
	controller_write_result(c, ct, &op, r);
	return r < 0 ? r : 0;
}

/* The table's cgroup ids, sorted, for bsearch. */
struct id_set {
	uint64_t *ids;
	size_t n;
};

static int cmp_id(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static bool in_set(uint64_t id, void *ctx)
{
	const struct id_set *s = ctx;

	return bsearch(&id, s->ids, s->n, sizeof(*s->ids), cmp_id) != NULL;
}

void controller_prune_map(struct controller *c)
{
	struct id_set s = { 0 };
	size_t it = 0;
	const char *k;
	void *v;
	int r;

	c->map_err_logged = 0;	/* a new chance: said again if it fails again */
	if (!c->bpf)
		return;
	s.ids = calloc(strmap_count(c->by_path) + 1, sizeof(*s.ids));
	if (!s.ids) {
		log_warn("placement map: no memory to prune it; retried at the next resync");
		return;
	}
	while (strmap_next(c->by_path, &it, &k, &v))
		s.ids[s.n++] = ((struct container *)v)->cgroup_id;
	qsort(s.ids, s.n, sizeof(*s.ids), cmp_id);
	r = bpf_events_prune_placements(c->bpf, in_set, &s);
	free(s.ids);
	if (r < 0) {
		log_warn("placement map: pruning the entries of containers that are gone "
			 "failed: %s; retried at the next resync", strerror(-r));
	} else if (r > 0) {
		c->n.placement_map_pruned += (uint64_t)r;
		log_info("placement map: pruned %d entr%s of containers that are gone", r,
			 r == 1 ? "y" : "ies");
	}
}

/* The entry of a container that goes (controller_forget): deleted here,
 * so this file stays the one writer of the map. A failure changes
 * nothing for anyone: the next resync's prune takes the key. */
void controller_unmap(struct controller *c, struct container *ct)
{
	if (c->bpf && ct->cgroup_id)
		bpf_events_del_placement(c->bpf, ct->cgroup_id);
}
