// SPDX-License-Identifier: Apache-2.0
/*
 * The floor of tools/bench/telemetry.sh: a sched_switch program that
 * returns at once. Attached beside the telemetry in the same bpf_stats
 * runs, its ns/run is what any tp_btf program on sched_switch costs on
 * this host (the trampoline, bpf_stats' own two clock reads); the
 * telemetry's figure is quoted as a ratio to it. Loaded by
 * tools/bench/bpf-load.c; built only for the benchmark.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

SEC("tp_btf/sched_switch")
int BPF_PROG(empty_switch, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	return 0;
}
