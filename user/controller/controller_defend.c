// SPDX-License-Identifier: Apache-2.0
/*
 * Foreign writes: another process wrote a managed container's cpuset.
 * The placement is written again, and a writer that keeps fighting is
 * given up on (write_conflict).
 *
 * foreign_writes counts only writes that left the file off our decision,
 * so that it is something to alert on: a runtime creating a container
 * writes its cpuset files too (runc copies the parent's cpus and mems into
 * a new v1 cpuset, and applies the bundle's linux.resources.cpu.cpus), and
 * a copy that equals our decision, or a file the decision leaves alone (a
 * pooled container's mems), is no one's fault. The bundle's own set,
 * written before the container's first exec, is the runtime doing what it
 * was told: undone, and counted in exec_reapplied, not as foreign.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "controller_internal.h"

/*
 * A writer that keeps undoing our set is a conflict, not a loop: after
 * RESTORES_MAX restores, each within RESTORES_WINDOW_NS of the one
 * before, the container is given up (write_conflict). A writer that
 * comes back after a quiet window starts a new count.
 */
#define RESTORES_MAX		5
#define RESTORES_WINDOW_NS	(60ULL * 1000000000ULL)

/* The comm as a printable string (the writer names itself). */
static void writer_comm(const struct cpusetd_event *ev, char *buf, size_t len)
{
	size_t n = strnlen(ev->comm, sizeof(ev->comm));

	n = n < len - 1 ? n : len - 1;
	memcpy(buf, ev->comm, n);
	buf[n] = '\0';
	log_sanitize(buf);
}

/*
 * The writers by comm (status.json foreign_writers, the .prom's
 * cpusetd_foreign_cpuset_writes_total{comm}) are bounded: a writer names
 * itself, so a pod could make up a new comm for every write. The first
 * WRITERS_MAX distinct comms keep an entry each for the daemon's life,
 * and every later one is counted under WRITERS_OTHER. "Top" is by
 * arrival, not by count: an entry is never dropped for a busier writer,
 * because a Prometheus counter whose series went away and came back would
 * read as a reset. A writer whose comm is "other" shares that entry.
 * 16 is far more than the writers a node has (kubelet, a runtime, an
 * agent, an admin's shell), and bounds the series at 17.
 */
#define WRITERS_MAX	16
#define WRITERS_OTHER	"other"

/* One more foreign write by comm, for status.json and the .prom export. */
static void count_writer(struct controller *c, const char *comm)
{
	struct writer_count *w = strmap_get(c->writers, comm);

	if (!w && strmap_count(c->writers) >= WRITERS_MAX) {
		comm = WRITERS_OTHER;
		w = strmap_get(c->writers, comm);
	}
	if (!w) {
		w = calloc(1, sizeof(*w));
		if (!w || strmap_put(c->writers, comm, w) < 0) {
			free(w);
			return;		/* ENOMEM: the total still counts */
		}
		snprintf(w->comm, sizeof(w->comm), "%s", comm);
	}
	w->writes++;
}

/* The fight is lost: say so once, list it, and stop restoring. */
static void give_up(struct controller *c, struct container *ct, const char *comm,
		    const struct cpusetd_event *ev, const char *file)
{
	char msg[256];

	ct->defence.conflict = true;
	c->n.write_conflicts++;
	snprintf(msg, sizeof(msg), "%s[%u] keeps writing %s (%u restores, each within %llu s); "
		 "cpusetd no longer restores it", comm, ev->pid, file, ct->defence.restores,
		 RESTORES_WINDOW_NS / 1000000000ULL);
	ct_log(LOG_ERR, ct, "write_conflict", "%s (%.12s): write conflict: %s", ct->name,
	       ct->info.container_id, msg);
	controller_note_pod_error(c, ct, "write_conflict", msg, "conflict");
}

/*
 * Reads the container's cpuset.cpus (cpus) or .mems as it is now into
 * what we believe it holds. Returns true when that changed it (or either
 * read failed), false when the file holds what we believed.
 */
static bool reread(struct controller *c, struct container *ct, bool cpus)
{
	struct cpumask *m = cpus ? &ct->cpus_applied : &ct->mems_applied;
	bool *known = cpus ? &ct->cpus_known : &ct->mems_known;
	struct cpumask before = *m;
	bool was_known = *known;

	*known = cgfs_read_cpuset(c->cg, ct->path, cpus ? CGFS_CPUS : CGFS_MEMS, m) == 0;
	return !was_known || !*known || !cpumask_equal(&before, m);
}

/*
 * The runtime writing the bundle's linux.resources.cpu.cpus before the
 * container's own first exec (controller_exec.c): what it was told to do,
 * and runc does it twice (as it makes the cgroup, and again once its init
 * is ready). Undone by the same rules; the first one counted in
 * exec_reapplied. Returns true when the file (as just read) holds the
 * bundle's set and the container's program has not run yet (handled
 * then), false when it is some other write; -ENOMEM in *ret.
 */
static bool runtime_write(struct controller *c, struct container *ct, int *ret)
{
	char have[CPULIST_MAX];
	struct cpumask want;
	uint64_t writes;
	bool first;

	*ret = 0;
	if (!ct->meta.runtime_cpus[0] || cpulist_parse(ct->meta.runtime_cpus, &want) < 0 ||
	    !ct->cpus_known || !cpumask_equal(&ct->cpus_applied, &want) ||
	    controller_container_started(c, ct))
		return false;
	first = ct->runtime_write_pending;
	ct->runtime_write_pending = false;
	cpulist_format(&ct->cpus_applied, have, sizeof(have));
	writes = c->n.cgroup_writes;
	if (!c->cfg->dry_run && controller_apply_one(c, ct) == -ENOMEM)
		*ret = -ENOMEM;
	if (c->n.cgroup_writes != writes && first) {
		log_notice("%s: runtime wrote cpus %s before its first exec; re-applied", ct->name,
			   have);
		c->n.exec_reapplied++;
	}
	return true;
}

/*
 * Another process wrote a managed container's cpuset.cpus or .mems
 * (BPF: after the write went through). The file as it is now replaces
 * what we believed, and the decision is written again where they differ,
 * by the same rules as every write. Counted (foreign_writes, by writer)
 * only when the write left the file off our decision (see the top).
 * Logged once per container and writer.
 */
int controller_on_cpuset_write(struct controller *c, const struct cpusetd_event *ev)
{
	struct container *ct = controller_find_id(c, ev->cgroup_id);
	bool cpus = ev->arg == CPUSETD_FILE_CPUS;
	const char *file = cpus ? "cpuset.cpus" : "cpuset.mems";
	char comm[sizeof(ev->comm) + 1], wrote[CPULIST_MAX], now[CPULIST_MAX];
	uint64_t writes, t = clock_ns(CLOCK_MONOTONIC);
	bool bytes = ev->path[0] != '\0';	/* BPF hooks carry what was written */
	bool changed;
	int r;

	if (!ct || !container_live(ct) || ct->killed)
		return 0;
	changed = reread(c, ct, cpus);
	/* fanotify cannot tell a write from the truncation of an
	 * open(O_TRUNC) before it (both are FAN_MODIFY), and does not carry
	 * the bytes: for it, a foreign write is one that changed the file. */
	if (!bytes && !changed)
		return 0;
	/* Placed at NRI CreateContainer: until its first exec, writes are
	 * its runtime creating it (v1: runc copies the parent's sets into
	 * the new cpuset, then writes our answer); its exec check judges
	 * what they left (controller_nri_book.c). */
	if (ct->nri_placed && ct->exec_pending && !controller_container_started(c, ct))
		return 0;
	if (cpus && runtime_write(c, ct, &r))
		return r;
	if (!controller_off_decision(c, ct, cpus ? CGFS_CPUS : CGFS_MEMS))
		return 0;	/* it left the file as we decided: nothing foreign */
	writer_comm(ev, comm, sizeof(comm));
	c->n.foreign_writes++;
	count_writer(c, comm);
	c->dirty = true;
	if (ct->defence.conflict || c->cfg->dry_run)
		return 0;
	/* Without the bytes, the file as read above stands for them. */
	if (bytes)
		snprintf(wrote, sizeof(wrote), "%.64s", ev->path);
	else if (cpus ? ct->cpus_known : ct->mems_known)
		cpulist_format(cpus ? &ct->cpus_applied : &ct->mems_applied, wrote, sizeof(wrote));
	else
		snprintf(wrote, sizeof(wrote), "(unreadable)");
	writes = c->n.cgroup_writes;
	if (controller_apply_one(c, ct) == -ENOMEM)
		return -ENOMEM;
	if (c->n.cgroup_writes == writes)
		return 0;	/* it wrote what we want: nothing to undo */
	c->n.foreign_restores++;
	ct->defence.restores = t - ct->defence.last_restore_ns < RESTORES_WINDOW_NS ?
			       ct->defence.restores + 1 : 1;
	ct->defence.last_restore_ns = t;
	wrote[strcspn(wrote, "\n")] = '\0';	/* echo's newline */
	log_sanitize(wrote);
	cpulist_format(cpus ? &ct->cpus_applied : &ct->mems_applied, now, sizeof(now));
	if (strcmp(ct->defence.writer_logged, comm) != 0) {
		ct_log(LOG_WARNING, ct, "foreign_write", "%s (%.12s): %s[%u] wrote %s %s; restored %s",
		       ct->name, ct->info.container_id, comm, ev->pid, file, wrote, now);
		snprintf(ct->defence.writer_logged, sizeof(ct->defence.writer_logged), "%s", comm);
	}
	if (ct->defence.restores >= RESTORES_MAX)
		give_up(c, ct, comm, ev, file);
	return 0;
}
