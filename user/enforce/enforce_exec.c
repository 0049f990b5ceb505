// SPDX-License-Identifier: Apache-2.0
/*
 * The executor (enforce.h): the one place an event's cpuset files and
 * placement entries are written. It keeps no state: what a result means
 * for a container (its record, its counters, its log line) is the
 * caller's.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "enforce.h"
#include "user/base/log.h"
#include "user/bpf/bpf_events.h"

static const char *file_name(enum enforce_op_kind k)
{
	return k == ENFORCE_MEMS ? "cpuset.mems" : "cpuset.cpus";
}

/* One file write; text: the last cpuset.cpus text formatted in this
 * run (a pool's resize writes one set to every pooled container: it is
 * formatted once). */
static int write_file(const struct enforce_io *io, const struct enforce_target *t,
		      const struct enforce_op *op, struct cgfs_list *text)
{
	char buf[CPULIST_MAX];
	int r;

	if (io->dry_run) {
		cpulist_format(&op->set, buf, sizeof(buf));
		log_info("dry-run: %s: would set %s to %s", t->name ? t->name : t->path,
			 file_name(op->kind), buf);
		return ENFORCE_SKIPPED;
	}
	if (op->kind == ENFORCE_MEMS)
		return cgfs_write_cpuset(io->cg, io->root, t->path, CGFS_MEMS, &op->set);
	/* Out of fds (-EMFILE) a fresh fd would fail alike: the caller
	 * counts and logs it as any failed write. */
	if (t->planned)
		return cgfs_write_cpus_planned(io->cg, t->path, &op->set, t->cpus_fd);
	if (!t->cpus_fd)
		return cgfs_write_cpuset(io->cg, io->root, t->path, CGFS_CPUS, &op->set);
	r = cgfs_list_of(text, &op->set);
	if (r < 0)
		return r;
	return cgfs_write_cpuset_list_fd(io->cg, io->root, t->path, CGFS_CPUS, text, t->cpus_fd);
}

static struct cpusetd_placement entry_of(const struct enforce_target *t, const struct cpumask *m)
{
	struct cpusetd_placement pl = { .kind = t->entry.kind,
					.verify_pending = t->entry.verify_pending,
					.reject_id = t->entry.reject_id };

	memcpy(pl.cpus, m->bits, sizeof(pl.cpus));
	return pl;
}

/* ops[from..to), entry operations of one kind, in one batched map update; what
 * the batch did not write (an error at one entry, no batch support, no
 * memory) is written entry by entry, each with its own result. */
static void write_entries(const struct enforce_io *io, const struct enforce_target *t,
			  const struct enforce_op *ops, size_t from, size_t to, int *res)
{
	size_t n = to - from, k = from;
	uint64_t *ids = malloc(n * sizeof(*ids));
	struct cpusetd_placement *pls = malloc(n * sizeof(*pls));
	uint32_t done = 0;

	if (ids && pls && n > 1) {
		for (size_t i = 0; i < n; i++) {
			ids[i] = t[ops[from + i].target].cgroup_id;
			pls[i] = entry_of(&t[ops[from + i].target], &ops[from + i].set);
		}
		bpf_events_set_placements(io->bpf, ids, pls, (uint32_t)n, &done);
	}
	free(ids);
	free(pls);
	for (; k < from + done; k++)
		res[k] = 0;
	for (; k < to; k++) {
		struct cpusetd_placement pl = entry_of(&t[ops[k].target], &ops[k].set);

		res[k] = bpf_events_set_placement(io->bpf, t[ops[k].target].cgroup_id, &pl);
	}
}

void enforce_exec(const struct enforce_io *io, const struct enforce_target *t,
		  const struct enforce_plan *p, size_t from, size_t to, int *res)
{
	struct cgfs_list text = { .len = 0 };	/* 2.6 kB, one per run */
	size_t k = from;

	if (to > p->n)
		to = p->n;
	while (k < to) {
		const struct enforce_op *op = &p->ops[k];
		size_t end = k + 1;

		switch (op->kind) {
		case ENFORCE_HOST:
			if (io->host)
				io->host(io->ctx);
			res[k] = 0;
			break;
		case ENFORCE_CPUS:
		case ENFORCE_MEMS:
			res[k] = write_file(io, &t[op->target], op, &text);
			break;
		case ENFORCE_MAP_WIDEN:
		case ENFORCE_MAP:
			while (end < to && p->ops[end].kind == op->kind)
				end++;
			/* dry run: nothing is written, so nothing to allow first */
			if (!io->bpf || (io->dry_run && op->kind == ENFORCE_MAP_WIDEN)) {
				for (size_t i = k; i < end; i++)
					res[i] = ENFORCE_SKIPPED;
			} else {
				write_entries(io, t, p->ops, k, end, res);
			}
			break;
		}
		k = end;
	}
}
