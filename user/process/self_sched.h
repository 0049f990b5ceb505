/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The daemon's own scheduling policy and CPUs (systemd/README.md "Scheduling").
 */
#ifndef CPUSETD_SELF_SCHED_H
#define CPUSETD_SELF_SCHED_H

#ifdef __bpf__
#error "user-space header: BPF programs share only maps/cpusetd.h"
#endif

#include "user/base/cpumask.h"
#include "user/config/config.h"

/*
 * c's sched_policy and sched_priority (or nice, for SCHED_OTHER) on every
 * thread of this process, unless a thread has them already (set by the
 * service manager, which may also forbid the call: RestrictRealtime=);
 * with run_on_reserved_cpus, every thread's affinity to reserved_cpus ∩
 * online (CPU ids). At start and at a reload that changed those keys.
 * Logged once, in one line: info when all went through, warning when
 * the kernel refused (no CAP_SYS_NICE or RLIMIT_RTPRIO, a seccomp
 * filter); the daemon then runs as it was, only slower to react on a
 * busy node. Cannot fail otherwise.
 */
void self_sched_apply(const struct cpusetd_config *c, const struct cpumask *online);

/*
 * After CPU hotplug: every thread back onto reserved_cpus ∩ online (the
 * kernel moves a task whose CPUs all went offline anywhere, and never
 * back). Logs a failure only.
 */
void self_sched_follow_cpus(const struct cpusetd_config *c, const struct cpumask *online);

#endif
