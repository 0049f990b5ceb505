// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * cpusetd telemetry programs: noisy-neighbour figures in maps that user
 * space pins and SREs read with bpftool (layouts in maps/cpusetd.h).
 *
 *   sched_switch                    the outgoing task's run (and the
 *                                   run-queue wait before it) is charged,
 *                                   the incoming task is checked against
 *                                   its placement
 *   sched_wakeup, sched_wakeup_new  the wakee starts waiting (map mode only)
 *   sched_migrate_task              a managed task crossed NUMA nodes
 *
 * Run-queue wait comes from the scheduler's own per-task account,
 * sched_info.run_delay (CONFIG_SCHED_INFO; /proc/PID/schedstat field 2),
 * read from the two task_structs sched_switch has hot anyway: the wait
 * before a run is the growth of run_delay between the task's switch-in
 * and its switch-out. Keeping our own per-task wakeup timestamps costs a
 * cold per-task map access on every wakeup and every switch (~300 ns each
 * on the reference VM), so that is only the fallback (wait_from_map) for
 * kernels that do not keep run_delay; then the wakeup programs run too.
 *
 * Every figure belongs to the task it measures (the wakee, the incoming
 * or outgoing task), never to `current`: a wakeup runs on the waker's CPU.
 *
 * sched_switch runs on every context switch, so it is kept cheap
 * (BENCHMARKS.md, "BPF telemetry overhead"):
 *   - no cgroup walk for the outgoing task: who it is was noted when it
 *     was switched in (struct run_state);
 *   - the incoming task's cgroup comes from a small per-CPU cache keyed by
 *     its css_set pointer (struct cg_cache): on a hit, neither the
 *     css_set -> css -> cgroup -> kernfs walk, whose lines are often cold,
 *     nor the placement hash lookup runs. See cg_cache for why a cached
 *     entry is never wrong for long;
 *   - the time is the run queue's clock (rq->clock), which the scheduler
 *     has just updated, instead of a clocksource read (see clock_now());
 *     basic takes it from prev itself (prev->se.exec_start, the task
 *     clock; see clock_task_now()), one line instead of three;
 *   - per-CPU counters without atomics (each CPU writes only its own slot).
 *
 * Levels (config `telemetry`, set by the loader in tel_full before load,
 * so the verifier drops the other level's code):
 *   basic  per CPU: switches, preemptions, cross-cgroup switches, busy
 *          time, and on a CPU with an owner (cpu_owner) the time of other
 *          cgroups' tasks (cpu_stats.foreign_ns, `foreign` by cgroup) and
 *          of kernel threads (on_switch_basic()). Who ran is judged at
 *          its switch-out, from prev, whose lines the scheduler has just
 *          used; the incoming task, whose task_struct is the cold part
 *          of the full program, is never read. No placement lookup, no
 *          placement_gen read, no sched_info read, no cgroup_stats, no
 *          histogram; sched_migrate_task and the wakeup programs are not
 *          loaded.
 *   full   everything above and below.
 * What each costs per switch: BENCHMARKS.md "BPF telemetry overhead".
 *
 * Each tracepoint has a tp_btf and a raw_tp twin sharing one
 * __always_inline body; user/bpf/bpf_telemetry.c loads one of each pair. The
 * body takes a constant `btf`: the tp_btf twin reads task fields with
 * plain loads, the raw_tp twin through BPF_CORE_READ (a helper call per
 * field, several times dearer on sched_switch); the compiler drops the
 * branch the twin does not use.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "maps/cpusetd.h"
#include "core_fixes.bpf.h"
#include "task_cgroup.bpf.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* Set by the loader before load. */
const volatile bool cpuset_on_v2 = false;	/* cpuset on the v2 hierarchy */
const volatile bool wait_from_map = false;	/* no run_delay: use `waits` */
const volatile bool clock_ktime = false;	/* bpf_ktime_get_ns(), not rq->clock */
const volatile __u64 cache_ttl_ns = 4ULL * 1000 * 1000;	/* see cg_cache; 4 ms */

/*
 * Benchmark knobs: TEL_SKIP is a mask of parts of the sched_switch path
 * left out, for the variants tools/bench/telemetry.sh weighs against an
 * empty program (build/bench/telemetry-*.bpf.o, Makefile TEL_VARIANTS;
 * BENCHMARKS.md "BPF telemetry overhead"). The daemon's object is built
 * with 0, and the compiler drops every test. A variant's figures are
 * wrong by design; only its cost means something.
 */
#ifndef TEL_SKIP
#define TEL_SKIP 0
#endif
#define TEL_SKIP_CLOCK	0x01	/* the clock read: now = the last switch + 1 us */
#define TEL_SKIP_FLAGS	0x02	/* next->flags (idle, kthread); basic: prev's */
#define TEL_SKIP_IDENT	0x04	/* next's cgroup: css_set, cache, walk, placement;
				 * basic: prev's css_set and its cache slot */
#define TEL_SKIP_CACHE	0x08	/* the cgroup cache: walk + lookup every switch */
#define TEL_SKIP_STATE	0x10	/* prev->__state: runnable = preempt (both levels) */
#define TEL_SKIP_DELAY	0x20	/* sched_info.run_delay of prev and next */
#define TEL_SKIP_RUN	0x40	/* charge_run(): cpu_owner, cgroup_stats, foreign (both) */
#define TEL_SKIP_IN	0x80	/* charge_in(): the placement check */
#define TEL_SKIP_FULL	0x100	/* tel_full's default false: the basic level */
#define SKIP(part)	((TEL_SKIP) & TEL_SKIP_##part)
/* The basic path as it was before its last two savings, for the A/B. */
#define TEL_SKIP_EXEC	0x200	/* basic: rq->clock, not prev->se.exec_start */
#define TEL_SKIP_LAST	0x400	/* basic: no last-css_set shortcut */

/* Set by the loader before load (config telemetry; see "Levels"). */
const volatile bool tel_full = !SKIP(FULL);	/* telemetry = full; false: basic */

/* Template for a new cgroup_stats entry (a 280-byte zero struct does not
 * belong on the 512-byte BPF stack). */
const struct cpusetd_cgroup_stats zero_cgroup_stats = {};

#define PF_IDLE_FLAG	0x00000002	/* include/linux/sched.h PF_IDLE */
#define PF_KTHREAD_FLAG	0x00200000	/* include/linux/sched.h PF_KTHREAD */

/* p->field: a plain load in tp_btf twins, a probe read in raw_tp ones. */
#define TASK_READ(btf, p, field)	((btf) ? (p)->field : BPF_CORE_READ(p, field))

/* p->sched_info.run_delay (ns the task waited on run queues, in total);
 * 0 when the kernel has no CONFIG_SCHED_INFO. */
static __always_inline __u64 run_delay_of(struct task_struct *p, bool btf)
{
	if (!bpf_core_field_exists(p->sched_info.run_delay))
		return 0;
	return btf ? p->sched_info.run_delay : BPF_CORE_READ(p, sched_info.run_delay);
}

static __always_inline __u64 cgroup_of(struct task_struct *p, bool btf)
{
	return btf ? task_cgroup_id_btf(p, cpuset_on_v2) : task_cgroup_id(p, cpuset_on_v2);
}

#include "telemetry_clock.bpf.h"

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, CPUSETD_MAX_CPUS);
	__type(key, __u32);			/* logical CPU id */
	__type(value, struct cpusetd_cpu_stats);
} cpu_stats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, __u64);			/* cgroup id */
	__type(value, struct cpusetd_cgroup_stats);
} cgroup_stats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, CPUSETD_MAX_CPUS);
	__type(key, __u32);			/* logical CPU id */
	__type(value, struct cpusetd_cpu_owner);
} cpu_owner SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, struct cpusetd_foreign_key);
	__type(value, struct cpusetd_foreign);
} foreign SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, CPUSETD_MAX_CPUS);
	__type(key, __u32);			/* logical CPU id */
	__type(value, struct cpusetd_cpu_node);
} cpu_node SEC(".maps");

/* The detection object's map: the loader hands its fd over
 * (bpf_map__reuse_fd), so both read the same entries. */
#include "placement.bpf.h"

/* --- internal state, never pinned (stale timestamps would be charged) --- */

#define W_IDLE		1u	/* the per-CPU idle task (PF_IDLE) */
#define W_KTHREAD	2u
#define W_MANAGED	4u	/* its cgroup has a placement entry */

/* The task a CPU is running, as seen when it was switched in. */
struct run_state {
	__u64 ts;		/* switch-in time (clock_now()); 0 = not seen yet */
	__u64 cgid;
	__u64 run_delay;	/* its sched_info.run_delay at switch-in */
	__u32 pid;		/* only with wait_from_map; else 0 */
	__u32 flags;		/* W_* */
};

/*
 * The cgroup cache: css_set -> (cgroup id, managed here), a few direct-
 * mapped slots per CPU.
 *
 * A css_set names one cgroup per hierarchy and never changes which (a
 * task that moves gets another css_set), so the id is right for as long
 * as the css_set lives. What can change under an entry:
 *   - the placement map (a container becomes managed, is resized or is
 *     let go): user space bumps placement_gen after each change, and an
 *     entry filled under another generation is a miss. The generation is
 *     read before the placement lookup, so a fill that raced a change
 *     carries the older one and misses next time;
 *   - the css_set itself may be freed and its memory reused for another
 *     one (slab reuse) while a slot still holds its address. That is
 *     bounded by cache_ttl_ns (4 ms; CPUSETD_TELEMETRY_CACHE_TTL_MS for
 *     tests): an entry is used only within that long of its fill.
 * A placement written behind the daemon's back (bpftool) without a bump
 * is also seen within the TTL. So a switch-in is judged at most the TTL
 * late, and only in ways that cannot corrupt the exported figures:
 *   - only "unmanaged" and "managed, allowed on this CPU" are cached; a
 *     switch-in that is a placement violation never fills a slot, so a
 *     counted violation is always judged against the map as it is now,
 *     and a stale entry can delay counting one by at most the TTL;
 *   - a hit never creates a cgroup_stats entry (only lookups), so a
 *     container whose placement was deleted and whose stats user space
 *     dropped (bpf_telemetry_forget_cgroup) is never re-created by a
 *     stale entry; a container that just became managed starts counting
 *     at most the TTL late (its stats start at the first fresh look);
 *   - a reused css_set address (the ABA case) can name the old cgroup for
 *     at most the TTL after the fill: the charge of a few runs, never a
 *     lasting one. New containers get new css_sets, which miss.
 * 4 ms is a tick at HZ=250: against the daemon's 1 s export interval it
 * is noise, and on a busy CPU (10^4-10^5 switches/s) the walk then runs
 * on about one switch in a hundred or fewer.
 */
#define CG_CACHE_SLOTS	8			/* a power of two */

struct cg_cache {
	__u64 cset;		/* css_set address; 0 = empty */
	__u64 cgid;
	__u64 filled;		/* clock_now() at the fill */
	__u64 gen;		/* placement_gen when the placement was looked up */
	__u32 flags;		/* W_MANAGED or 0 */
	__u32 pad;
};

/* Everything one CPU keeps for itself: one lookup per switch. */
struct cpu_local {
	struct run_state cur;
	__u64 last_cgid;	/* basic: the cgroup of the run before; 0 = idle */
	__u64 cset_bits;	/* see who_comes_in() */
	/* basic: the cache slot prev's css_set hit at the switch before
	 * (its bits, cgroup id, fill time), checked before the slot hash:
	 * tasks of one cgroup often follow each other on a CPU. */
	__u64 last_cset;
	__u64 last_cset_cgid;
	__u64 last_filled;
	__u64 fill_gen;		/* placement_gen read before the lookup to cache */
	struct cg_cache cache[CG_CACHE_SLOTS];
} __attribute__((aligned(64)));

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct cpu_local);
} cpu_local SEC(".maps");

/* pid (kernel tid) -> when it became runnable; 0 = not waiting. LRU:
 * a task that exits with an entry left is evicted, never leaks. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 32768);
	__type(key, __u32);
	__type(value, __u64);
} waits SEC(".maps");

/* floor(log2(v)) for v > 0, 0 for v == 0; branch-free, no loop. */
static __always_inline __u32 log2_u64(__u64 v)
{
	__u32 r, s;

	r = (v > 0xFFFFFFFFULL) << 5; v >>= r;
	s = (v > 0xFFFF) << 4; v >>= s; r |= s;
	s = (v > 0xFF) << 3; v >>= s; r |= s;
	s = (v > 0xF) << 2; v >>= s; r |= s;
	s = (v > 0x3) << 1; v >>= s; r |= s;
	return r | (__u32)(v >> 1);
}

/* Histogram slot of a wait of ns nanoseconds (see CPUSETD_HIST_SLOTS). */
static __always_inline __u32 hist_slot(__u64 ns)
{
	__u32 k = log2_u64(ns / 1000);

	return k < CPUSETD_HIST_SLOTS ? k : CPUSETD_HIST_SLOTS - 1;
}

static __always_inline bool cpu_in(const struct cpusetd_placement *pl, __u32 cpu)
{
	return (pl->cpus[(cpu / 64) & (CPUSETD_MASK_WORDS - 1)] >> (cpu & 63)) & 1;
}

/* The stats entry of a managed cgroup, created on first use; NULL when the
 * map is full (the figures of that cgroup are then not kept). */
static __always_inline struct cpusetd_cgroup_stats *cg_stats(__u64 cgid)
{
	struct cpusetd_cgroup_stats *st;

	st = bpf_map_lookup_elem(&cgroup_stats, &cgid);
	if (st)
		return st;
	bpf_map_update_elem(&cgroup_stats, &cgid, &zero_cgroup_stats, BPF_NOEXIST);
	return bpf_map_lookup_elem(&cgroup_stats, &cgid);
}

/* The task starts waiting for a CPU at now. */
static __always_inline void wait_start(__u32 pid, __u64 now)
{
	__u64 *ts;

	if (!pid)
		return;
	/* In place when the task has an entry: cheaper than an LRU update. */
	ts = bpf_map_lookup_elem(&waits, &pid);
	if (ts)
		*ts = now;
	else
		bpf_map_update_elem(&waits, &pid, &now, BPF_ANY);
}

/* ns the task waited since wait_start, 0 if it was not seen waiting. */
static __always_inline __u64 wait_end(__u32 pid, __u64 now)
{
	__u64 *ts = bpf_map_lookup_elem(&waits, &pid);
	__u64 start;

	if (!ts || !*ts)
		return 0;
	start = *ts;
	*ts = 0;	/* not deleted: the next wakeup reuses the entry */
	return now > start ? now - start : 0;
}

static __always_inline void foreign_add(__u32 cpu, __u64 cgid, __u64 ns)
{
	struct cpusetd_foreign_key k = { .cpu = cpu, .cgroup_id = cgid };
	struct cpusetd_foreign *f, init = { .ns = ns, .switches = 1 };

	/* Only this CPU writes keys with this cpu: plain adds. */
	f = bpf_map_lookup_elem(&foreign, &k);
	if (!f) {
		bpf_map_update_elem(&foreign, &k, &init, BPF_NOEXIST);
		return;
	}
	f->ns += ns;
	f->switches++;
}

/* One run-queue wait of `wait` ns, to this CPU and (st != NULL) the
 * waiting task's cgroup. */
static __always_inline void record_wait(struct cpusetd_cpu_stats *cs,
					struct cpusetd_cgroup_stats *st, __u64 wait)
{
	__u32 slot = hist_slot(wait);

	/* Checked again at the access, behind a barrier so clang keeps it:
	 * the 6.1 verifier loses the bound hist_slot()'s 32-bit clamp
	 * proved ("unbounded memory access"); newer ones keep it. */
	barrier_var(slot);
	if (slot >= CPUSETD_HIST_SLOTS)
		return;

	cs->rq_wait_ns += wait;
	cs->rq_wait_count++;
	cs->rq_wait_hist[slot]++;
	if (st) {
		__sync_fetch_and_add(&st->rq_wait_ns, wait);
		__sync_fetch_and_add(&st->rq_wait_count, 1);
		__sync_fetch_and_add(&st->rq_wait_hist[slot], 1);
	}
}

/*
 * Charges the run of the task cached in rs (the outgoing one), delta ns,
 * to this CPU's counters and, if managed, to its cgroup; with wait > 0
 * also the run-queue wait that preceded that run. next_cgid is the
 * incoming task's cgroup (0 when it is the idle task).
 */
static __always_inline void charge_run(__u32 cpu, struct cpusetd_cpu_stats *cs,
				       const struct run_state *rs, __u64 delta, __u64 wait,
				       bool runnable, __u64 next_cgid)
{
	struct cpusetd_cgroup_stats *st = NULL;
	struct cpusetd_cpu_owner *own;

	cs->busy_ns += delta;
	own = bpf_map_lookup_elem(&cpu_owner, &cpu);
	if (own && own->cgroup_id) {
		if (rs->flags & W_KTHREAD) {
			cs->kthread_ns += delta;
		} else if (rs->cgid != own->cgroup_id) {
			cs->foreign_ns += delta;
			foreign_add(cpu, rs->cgid, delta);
		}
	}
	if (tel_full && (rs->flags & W_MANAGED))
		st = bpf_map_lookup_elem(&cgroup_stats, &rs->cgid);
	if (tel_full && wait)
		record_wait(cs, st, wait);
	if (!st)
		return;
	__sync_fetch_and_add(&st->cpu_ns, delta);
	if (runnable && next_cgid && next_cgid != rs->cgid)
		__sync_fetch_and_add(&st->preempted, 1);
}

/*
 * The incoming task's wait and placement, charged to it and this CPU.
 * pl is its placement when it was just looked up, NULL when the task is
 * not managed or was found in the cgroup cache (W_MANAGED in its flags
 * then says which). Only a fresh look creates the cgroup's stats entry
 * (see cg_cache). Returns true when this switch-in breaks the placement
 * (counted here as a violation).
 */
static __always_inline bool charge_in(__u32 cpu, struct cpusetd_cpu_stats *cs,
				      const struct run_state *in,
				      const struct cpusetd_placement *pl, __u64 now)
{
	struct cpusetd_cgroup_stats *st = NULL;
	bool violation;
	__u64 wait;

	if (pl)
		st = cg_stats(in->cgid);
	else if (wait_from_map && (in->flags & W_MANAGED))
		st = bpf_map_lookup_elem(&cgroup_stats, &in->cgid);
	if (wait_from_map) {
		wait = wait_end(in->pid, now);
		if (wait)
			record_wait(cs, st, wait);
	}
	violation = pl && pl->kind != CPUSETD_KIND_NONE && !cpu_in(pl, cpu);
	if (violation && st) {
		__sync_fetch_and_add(&st->violations, 1);
		st->last_violation_cpu = cpu;	/* latest writer wins */
	}
	return violation;
}

/* The cache slot of css_set address cset (multiplicative hash: css_sets
 * are slab objects, so their low bits say little). Never NULL. */
static __always_inline struct cg_cache *cache_slot(struct cpu_local *loc, __u64 cset)
{
	__u32 i = (__u32)((cset * 0x9E3779B97F4A7C15ULL) >> 56) & (CG_CACHE_SLOTS - 1);

	return &loc->cache[i];
}

/*
 * Who the incoming task next is: its cgroup id into in->cgid and W_MANAGED
 * into in->flags, from the cache when its css_set has a fresh entry (then
 * *ret_fill = NULL, *ret_pl = NULL); else from the walk and the placement
 * lookup, with *ret_pl its placement (NULL: not managed), *ret_fill the
 * slot to fill once the switch-in is known not to be a violation, and
 * *ret_cset the key to fill it with.
 */
static __always_inline void who_comes_in(struct cpu_local *loc, struct task_struct *next,
					 __u64 now, bool btf, struct run_state *in,
					 struct cpusetd_placement **ret_pl,
					 struct cg_cache **ret_fill, __u64 *ret_cset)
{
	struct css_set *cset = btf ? next->cgroups : BPF_CORE_READ(next, cgroups);
	struct cg_cache *e;
	__u32 zero = 0;
	__u64 *g, gen;

	*ret_pl = NULL;
	*ret_fill = NULL;
	if (!cset)
		return;
	/* basic: only the cgroup id is cached, which a css_set keeps for
	 * life; no placement, so no generation (0) either. */
	g = tel_full ? bpf_map_lookup_elem(&placement_gen, &zero) : NULL;
	gen = g ? *(volatile __u64 *)g : 0;
	/* The verifier allows no arithmetic on a kernel pointer (the slot
	 * hash multiplies); written to a map value and read back, its bits
	 * are a plain number. volatile: the compiler must not skip the trip. */
	*(volatile __u64 *)&loc->cset_bits = (__u64)cset;
	*ret_cset = *(volatile __u64 *)&loc->cset_bits;
	e = cache_slot(loc, *ret_cset);
	if (!SKIP(CACHE) && e->cset == *ret_cset && e->gen == gen &&
	    now - e->filled < cache_ttl_ns) {
		in->cgid = e->cgid;
		in->flags |= e->flags;
		return;
	}
	in->cgid = btf ? cset_cgroup_id_btf(cset, cpuset_on_v2) : cset_cgroup_id(cset, cpuset_on_v2);
	if (!in->cgid)
		return;
	loc->fill_gen = gen;	/* before the lookup: see cg_cache */
	*ret_fill = e;
	if (!tel_full)
		return;
	*ret_pl = bpf_map_lookup_elem(&placement, &in->cgid);
	if (*ret_pl)
		in->flags |= W_MANAGED;
}

/*
 * The cgroup id of task p (0: none), from the cgroup cache when its
 * css_set has a fresh entry, else from the walk, then cached (basic: no
 * placement, so generation 0; see cg_cache for why an entry is right).
 */
static __always_inline __u64 cgroup_cached(struct cpu_local *loc, struct task_struct *p,
					   __u64 now, bool btf)
{
	struct css_set *cset = btf ? p->cgroups : BPF_CORE_READ(p, cgroups);
	struct cg_cache *e;
	__u64 bits;

	if (!cset)
		return 0;
	/* kernel pointer bits as a number: see who_comes_in() */
	*(volatile __u64 *)&loc->cset_bits = (__u64)cset;
	bits = *(volatile __u64 *)&loc->cset_bits;
	if (!SKIP(LAST) && bits == loc->last_cset && now - loc->last_filled < cache_ttl_ns)
		return loc->last_cset_cgid;
	e = cache_slot(loc, bits);
	if (e->cset == bits && e->gen == 0 && now - e->filled < cache_ttl_ns) {
		if (!SKIP(LAST)) {
			loc->last_cset = bits;
			loc->last_cset_cgid = e->cgid;
			loc->last_filled = e->filled;
		}
		return e->cgid;
	}
	e->cgid = btf ? cset_cgroup_id_btf(cset, cpuset_on_v2) : cset_cgroup_id(cset, cpuset_on_v2);
	e->cset = e->cgid ? bits : 0;
	e->filled = now;
	e->gen = 0;
	e->flags = 0;
	return e->cgid;
}

/*
 * sched_switch at level basic: the run that ends now (from the last
 * switch on this CPU, loc->cur.ts) was prev's, so it is charged to what
 * prev is, read from prev now: its flags, state and css_set share lines
 * the scheduler has just written or read. A cross-cgroup switch is
 * counted when prev's run ends, against the run before it on this CPU
 * (the same pairs as on_switch() counts, one run later). The first switch
 * seen on a CPU only starts the clock.
 */
static __always_inline int on_switch_basic(bool preempt, struct task_struct *prev, bool btf)
{
	struct run_state who = {};
	struct cpusetd_cpu_stats *cs;
	__u32 cpu = bpf_get_smp_processor_id(), zero = 0;
	struct cpu_local *loc;
	unsigned int pf;
	bool runnable;
	__u64 now;

	cs = bpf_map_lookup_elem(&cpu_stats, &cpu);
	loc = bpf_map_lookup_elem(&cpu_local, &zero);
	if (!cs || !loc)
		return 0;
	pf = SKIP(FLAGS) ? 0 : TASK_READ(btf, prev, flags);
	if (SKIP(CLOCK))
		now = loc->cur.ts + 1000;
	else if (!SKIP(EXEC) && btf && !clock_ktime && !wait_from_map &&
		 bpf_core_field_exists(((struct cfs_rq *)0)->rq))
		now = clock_task_now(prev, pf & PF_IDLE_FLAG);
	else
		now = clock_now(prev, btf);
	if (!now)
		return 0;
	cs->switches++;
	if (loc->cur.ts) {
		if (pf & PF_IDLE_FLAG) {
			loc->last_cgid = 0;
		} else {
			who.flags = pf & PF_KTHREAD_FLAG ? W_KTHREAD : 0;
			who.cgid = SKIP(IDENT) ? 1 : cgroup_cached(loc, prev, now, btf);
			runnable = preempt || (!SKIP(STATE) &&
				   (btf ? task_state_btf(prev) : task_state(prev)) == 0);
			/* Never backwards on one run queue's clock; if a path
			 * ever skipped prev's stamp, charge 0, not 2^64. */
			if (!SKIP(RUN))
				charge_run(cpu, cs, &who, now > loc->cur.ts ? now - loc->cur.ts : 0,
					   0, runnable, 0);
			if (runnable)
				cs->preemptions++;
			if (loc->last_cgid && loc->last_cgid != who.cgid)
				cs->cross_switches++;
			loc->last_cgid = who.cgid;
		}
	}
	loc->cur.ts = now;
	return 0;
}

/*
 * sched_switch. The outgoing task is the one cpu_local.cur noted at its
 * switch-in on this CPU (every switch passes here, so that is prev);
 * before the first switch seen on a CPU there is nothing to charge.
 * Known limit: a task moved to another cgroup while running is charged to
 * its old cgroup until it is switched out.
 */
static __always_inline int on_switch(bool preempt, struct task_struct *prev,
				     struct task_struct *next, bool btf)
{
	struct cpusetd_placement *pl = NULL;
	struct cg_cache *fill = NULL;
	struct cpusetd_cpu_stats *cs;
	__u64 now, cset = 0;
	struct cpu_local *loc;
	struct run_state *rs, in = {};
	__u32 cpu = bpf_get_smp_processor_id(), zero = 0;
	bool runnable = false;
	unsigned int pf;

	if (!tel_full)
		return on_switch_basic(preempt, prev, btf);
	cs = bpf_map_lookup_elem(&cpu_stats, &cpu);
	loc = bpf_map_lookup_elem(&cpu_local, &zero);
	if (!cs || !loc)
		return 0;
	rs = &loc->cur;
	now = SKIP(CLOCK) ? rs->ts + 1000 : clock_now(prev, btf);
	if (!now)
		return 0;

	/* The idle task is told by PF_IDLE, as is_idle_task() does, not by
	 * pid 0: flags shares a line the scheduler has just used, pid does
	 * not, and the pid is needed only for the wait timestamps. */
	pf = SKIP(FLAGS) ? 0 : TASK_READ(btf, next, flags);
	if (pf & PF_IDLE_FLAG) {
		in.flags = W_IDLE;
	} else {
		if (pf & PF_KTHREAD_FLAG)
			in.flags = W_KTHREAD;
		if (tel_full && wait_from_map)
			in.pid = TASK_READ(btf, next, pid);
		if (!SKIP(IDENT))
			who_comes_in(loc, next, now, btf, &in, &pl, &fill, &cset);
	}

	cs->switches++;
	if (rs->ts && !(rs->flags & W_IDLE)) {
		__u64 wait = 0;

		/* Still runnable = preempted (or yielded): waits again. */
		runnable = preempt ||
			   (!SKIP(STATE) && (btf ? task_state_btf(prev) : task_state(prev)) == 0);
		if (tel_full && !wait_from_map && !SKIP(DELAY)) {
			wait = run_delay_of(prev, btf);
			wait = wait > rs->run_delay ? wait - rs->run_delay : 0;
		}
		if (!SKIP(RUN))
			charge_run(cpu, cs, rs, now - rs->ts, wait, runnable, in.cgid);
		if (runnable) {
			cs->preemptions++;
			if (tel_full && wait_from_map)
				wait_start(rs->pid, now);
		}
		if (!(in.flags & W_IDLE) && in.cgid != rs->cgid)
			cs->cross_switches++;
	}
	if (!(in.flags & W_IDLE) && (SKIP(IN) || !tel_full || !charge_in(cpu, cs, &in, pl, now)) &&
	    fill) {
		fill->cset = cset;
		fill->cgid = in.cgid;
		fill->filled = now;
		fill->gen = loc->fill_gen;
		fill->flags = in.flags & W_MANAGED;
	}

	in.ts = now;
	if (tel_full && !wait_from_map && !SKIP(DELAY) && !(in.flags & W_IDLE))
		in.run_delay = run_delay_of(next, btf);
	*rs = in;
	return 0;
}

/* sched_wakeup, sched_wakeup_new: the wakee (p), not current, waits. */
static __always_inline int on_wakeup(struct task_struct *p, bool btf)
{
	wait_start(TASK_READ(btf, p, pid), bpf_ktime_get_ns());	/* see clock_now() */
	return 0;
}

/* sched_migrate_task: p (not current) moves to dest_cpu; counted when
 * the two CPUs are on different NUMA nodes and p is in a managed cgroup. */
static __always_inline int on_migrate(struct task_struct *p, int dest_cpu, bool btf)
{
	__u32 src = task_cpu(p), dst = (__u32)dest_cpu;
	struct cpusetd_cgroup_stats *st;
	struct cpusetd_cpu_node *a, *b;
	__u64 cgid;

	if (src == dst)
		return 0;
	a = bpf_map_lookup_elem(&cpu_node, &src);
	b = bpf_map_lookup_elem(&cpu_node, &dst);
	if (!a || !b || a->node == b->node)
		return 0;
	cgid = cgroup_of(p, btf);
	if (!cgid || !bpf_map_lookup_elem(&placement, &cgid))
		return 0;
	st = cg_stats(cgid);
	if (st)
		__sync_fetch_and_add(&st->numa_migrations, 1);
	return 0;
}

SEC("tp_btf/sched_switch")
int BPF_PROG(switch_btf, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	return on_switch(preempt, prev, next, true);
}

SEC("raw_tp/sched_switch")
int BPF_PROG(switch_raw, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	return on_switch(preempt, prev, next, false);
}

SEC("tp_btf/sched_wakeup")
int BPF_PROG(wakeup_btf, struct task_struct *p)
{
	return on_wakeup(p, true);
}

SEC("raw_tp/sched_wakeup")
int BPF_PROG(wakeup_raw, struct task_struct *p)
{
	return on_wakeup(p, false);
}

SEC("tp_btf/sched_wakeup_new")
int BPF_PROG(wakeup_new_btf, struct task_struct *p)
{
	return on_wakeup(p, true);
}

SEC("raw_tp/sched_wakeup_new")
int BPF_PROG(wakeup_new_raw, struct task_struct *p)
{
	return on_wakeup(p, false);
}

SEC("tp_btf/sched_migrate_task")
int BPF_PROG(migrate_btf, struct task_struct *p, int dest_cpu)
{
	return on_migrate(p, dest_cpu, true);
}

SEC("raw_tp/sched_migrate_task")
int BPF_PROG(migrate_raw, struct task_struct *p, int dest_cpu)
{
	return on_migrate(p, dest_cpu, false);
}
