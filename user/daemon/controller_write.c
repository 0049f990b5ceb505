// SPDX-License-Identifier: Apache-2.0
/*
 * One container's cpuset write and the BPF placement map beside it:
 * the map allows a set before the set lands, and says exactly what was
 * decided after. Writes are skipped when the value we last wrote or read
 * is already there; every attempt is counted.
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

/* The entry set_map writes for ct with cpus. */
static struct cpusetd_placement placement_of(const struct container *ct,
					     const struct cpumask *cpus)
{
	struct cpusetd_placement pl = { .kind = ct->d.kind, .verify_pending = ct->exec_pending,
					.reject_id = ct->reject_armed ? ct->cgroup_id : 0 };

	memcpy(pl.cpus, cpus->bits, sizeof(pl.cpus));
	return pl;
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

/* Sets ct's placement map entry to cpus with what ct is now (kind, exec
 * check armed, rejection armed); map_cpus follows on success. A failure is
 * handled here (map_failed). Returns 0, or the map's -errno; nothing to do
 * without BPF or a cgroup id. */
static int set_map(struct controller *c, struct container *ct, const struct cpumask *cpus)
{
	struct cpusetd_placement pl;
	int r;

	if (!c->bpf || !ct->cgroup_id || placement_map_off())
		return 0;
	pl = placement_of(ct, cpus);
	r = bpf_events_set_placement(c->bpf, ct->cgroup_id, &pl);
	if (r < 0) {
		map_failed(c, ct, r);
		return r;
	}
	ct->map_cpus = *cpus;
	if (ct->map_err)
		map_recovered(c, ct);
	return 0;
}

void controller_set_maps(struct controller *c, struct container **cts, const struct cpumask *ms,
			 size_t n)
{
	struct cpusetd_placement *pls;
	uint64_t *ids;
	uint32_t done = 0;
	size_t k = 0;

	if (!c->bpf || !n || placement_map_off())
		return;
	ids = malloc(n * sizeof(*ids));
	pls = malloc(n * sizeof(*pls));
	if (ids && pls) {
		for (size_t i = 0; i < n; i++) {
			ids[i] = cts[i]->cgroup_id;
			pls[i] = placement_of(cts[i], &ms[i]);
		}
		/* an error is taken below, entry by entry, where it is
		 * counted and logged as before */
		bpf_events_set_placements(c->bpf, ids, pls, (uint32_t)n, &done);
	}
	free(ids);
	free(pls);
	for (; k < done; k++) {
		cts[k]->map_cpus = ms[k];
		if (cts[k]->map_err)
			map_recovered(c, cts[k]);
	}
	for (; k < n; k++)
		set_map(c, cts[k], &ms[k]);
}

/*
 * Before cpuset.cpus grows to m, the placement map must already allow m,
 * or telemetry counts the container's first runs on the new CPUs as
 * placement violations. So: widen the map (old ∪ m) before the write;
 * the exact m follows after the write (controller_sync_map), which is also
 * the order for a shrink. No map write when m is within the map already.
 */
void controller_widen_map(struct controller *c, struct container *ct, const struct cpumask *m)
{
	struct cpumask wide;

	if (!c->bpf || !ct->cgroup_id || cpumask_subset(m, &ct->map_cpus))
		return;
	cpumask_or(&wide, &ct->map_cpus, m);
	set_map(c, ct, &wide);
}

/* Writes f = m unless *known says it is there already. */
void controller_write_set(struct controller *c, struct container *ct, enum cgfs_cpuset_file f,
			  const struct cpumask *m, struct cpumask *applied, bool *known)
{
	char buf[CPULIST_MAX];
	int r;

	if (*known && cpumask_equal(applied, m))
		return;
	if (c->cfg->dry_run) {
		cpulist_format(m, buf, sizeof(buf));
		log_info("dry-run: %s: would set %s to %s", ct->name,
			 f == CGFS_CPUS ? "cpuset.cpus" : "cpuset.mems", buf);
		return;
	}
	if (f == CGFS_CPUS)
		controller_widen_map(c, ct, m);
	/* cpuset.cpus changes on every resize: keep it open. Out of fds
	 * (-EMFILE) a fresh fd would fail alike: counted and logged below. */
	if (f == CGFS_CPUS)
		r = cgfs_write_cpuset_fd(c->cg, c->root, ct->path, f, m, &ct->cpus_fd);
	else
		r = cgfs_write_cpuset(c->cg, c->root, ct->path, f, m);
	controller_note_write(c, ct, f == CGFS_CPUS ? "cpuset.cpus" : "cpuset.mems", r);
	if (r == 0) {
		*applied = *m;
		*known = true;
		c->dirty = true;
	}
}

/* Mirrors the decision into the BPF placement map. The exec check stays
 * armed until the container's first exec after it was placed. */
int controller_sync_map(struct controller *c, struct container *ct)
{
	return set_map(c, ct, &ct->d.cpus);
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
		c->dirty = true;
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
