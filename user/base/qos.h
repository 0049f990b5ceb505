/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A pod's Kubernetes QoS class (Guaranteed, Burstable, BestEffort): the
 * kubelet's cgroup naming shows it (cgroupfs/), the policy decides by it.
 * Source: Kubernetes "Pod Quality of Service Classes".
 */
#ifndef CPUSETD_QOS_H
#define CPUSETD_QOS_H

#ifdef __bpf__
#error "user-space header: BPF programs share only maps/cpusetd.h"
#endif

enum pod_qos {
	POD_QOS_UNKNOWN = 0,
	POD_QOS_GUARANTEED,
	POD_QOS_BURSTABLE,
	POD_QOS_BESTEFFORT,
};

/* Name of a QoS class as Kubernetes spells it ("Guaranteed", ...;
 * "Unknown" for anything else). Never NULL. */
const char *pod_qos_name(enum pod_qos qos);

#endif
