/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The clocks of the telemetry's sched_switch path (telemetry.bpf.c):
 * which "now" a run length is measured on, and why that one. Included
 * by telemetry.bpf.c only, after its loader-set constants
 * (wait_from_map, clock_ktime), which clock_now() reads.
 *
 * BPF side only: include after vmlinux.h.
 */
#ifndef CPUSETD_TELEMETRY_CLOCK_BPF_H
#define CPUSETD_TELEMETRY_CLOCK_BPF_H

/*
 * Now, in ns, for the intervals sched_switch measures on one CPU (run
 * lengths: from the previous switch on this CPU to this one). prev is the
 * task being switched out on this CPU.
 *
 * rq->clock: this CPU's run-queue clock (sched_clock_cpu(), ns), which
 * __schedule() updates under the run-queue lock just before it picks the
 * next task, so it is a load from a line the scheduler has just written,
 * where bpf_ktime_get_ns() reads the clocksource. The run queue is found
 * from prev (prev->se.cfs_rq->rq, CONFIG_FAIR_GROUP_SCHED; the cfs_rq
 * pointer is kept for every task, whatever its class, and is this CPU's
 * for a task on this CPU); the per-CPU `runqueues` variable would be one
 * load shorter, but its address is only in kallsyms with
 * CONFIG_KALLSYMS_ALL, which our kernel of reference lacks.
 * Accuracy: the value is the time of the last update_rq_clock() on this
 * CPU, which in __schedule() is now, except after a wakeup preemption or a
 * yield, where the scheduler skips the update (RQCF_ACT_SKIP) and the
 * value is the one taken a few µs earlier when the wakee was enqueued; the
 * scheduler measures its own run times, and run_delay, on this clock. It
 * is per CPU and not synchronised with the other CPUs' clocks, so it is
 * used only for intervals that start and end on this CPU.
 *
 * bpf_ktime_get_ns() (CLOCK_MONOTONIC, ns) instead: in raw_tp twins (the
 * chain would be three probe reads), in the wakeup fallback (its wait
 * timestamps start on the waker's CPU and end on the wakee's), without
 * CONFIG_FAIR_GROUP_SCHED, and when the loader says so (clock_ktime).
 */
static __always_inline __u64 clock_now(struct task_struct *prev, bool btf)
{
	struct cfs_rq *q = NULL;
	struct rq *rq;

	if (!btf || wait_from_map || clock_ktime || !bpf_core_field_exists(q->rq))
		return bpf_ktime_get_ns();
	q = prev->se.cfs_rq;
	rq = q ? q->rq : NULL;
	/* Never NULL for a task on a CPU; 0 makes on_switch() charge nothing. */
	return rq ? rq->clock : 0;
}

/*
 * Now on the run queue's task clock (rq->clock_task: rq->clock less IRQ
 * and steal time where the kernel accounts them), for tp_btf only. For a
 * task that is not the idle task, the scheduler has just stamped it in
 * prev->se.exec_start (update_curr() at the dequeue or put_prev of every
 * class), a line of prev's it has just written; the idle task's stamp is
 * not kept, so it is read from the run queue then.
 */
static __always_inline __u64 clock_task_now(struct task_struct *prev, bool idle)
{
	struct cfs_rq *q;
	struct rq *rq;

	if (!idle)
		return prev->se.exec_start;
	q = prev->se.cfs_rq;
	rq = q ? q->rq : NULL;
	return rq ? rq->clock_task : 0;
}

#endif
