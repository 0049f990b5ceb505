/*
 * One container's cpuset write and the BPF placement map beside it:
 * the map allows a set before the set lands, and says exactly what was
 * decided after. Writes are skipped when the value we last wrote or read
 * is already there; every attempt is counted.
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

/* Sets ct's placement map entry to cpus with what ct is now (kind, exec
 * check armed, rejection armed); map_cpus follows on success. Returns 0,
 * or the map's -errno; nothing to do without BPF or a cgroup id. */
static int set_map(struct controller *c, struct container *ct, const struct cpumask *cpus)
{
	struct cpusetd_placement pl = { .kind = ct->d.kind, .verify_pending = ct->exec_pending,
					.reject = ct->reject_armed };
	int r;

	if (!c->bpf || !ct->cgroup_id)
		return 0;
	memcpy(pl.cpus, cpus->bits, sizeof(pl.cpus));
	r = bpf_events_set_placement(c->bpf, ct->cgroup_id, &pl);
	if (r == 0)
		ct->map_cpus = *cpus;
	return r;
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
void controller_sync_map(struct controller *c, struct container *ct)
{
	if (set_map(c, ct, &ct->d.cpus) < 0)
		log_debug("%s: placement map update failed", ct->name);
}
