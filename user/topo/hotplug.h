/* SPDX-License-Identifier: Apache-2.0 */
/*
 * CPU hotplug events: the kernel's uevents for cpu devices, read from a
 * NETLINK_KOBJECT_UEVENT socket bound to the kernel group.
 *
 * Why this and not the alternatives:
 *  - libsystemd's sd_device_monitor (252 here) can only listen to the
 *    udev group through its public API, i.e. to what udevd re-broadcasts
 *    after running its rules; with no udevd (the VM lane's initramfs,
 *    minimal nodes) nothing arrives, and the kernel group is private API.
 *  - a BPF program on the cpuhp_exit tracepoint fires for each of the
 *    ~100 hotplug states of every CPU and would need a new program and
 *    event layout in maps/ (the BPF/user ABI) for what the kernel already
 *    announces once per CPU: device_online()/device_offline() send
 *    KOBJ_ONLINE/KOBJ_OFFLINE ("online@/devices/system/cpu/cpuN"), also
 *    for SMT control (cpuhp_smt_disable).
 * A message is only a trigger: the caller re-reads the online set from
 * sysfs after each batch, so a lost (ENOBUFS), forged or repeated message
 * changes nothing but when we look.
 */
#ifndef CPUSETD_HOTPLUG_H
#define CPUSETD_HOTPLUG_H

#ifdef __bpf__
#error "user-space header: BPF programs share only maps/cpusetd.h"
#endif

#include <stdbool.h>
#include <stddef.h>

/*
 * Opens the uevent socket (non-blocking, close-on-exec) for an epoll set.
 * Returns the fd, or -errno from socket/bind (-EPROTONOSUPPORT without
 * CONFIG_NET or in a sandbox that forbids netlink).
 */
int hotplug_open(void);

/*
 * Reads every waiting message without blocking. Returns 1 when at least
 * one was a cpu device uevent, or the socket overflowed (events were
 * lost, so the online set must be re-read); 0 when none; -errno on any
 * other read error.
 */
int hotplug_drain(int fd);

/*
 * Whether a uevent message (len bytes: "action@devpath" then NUL-separated
 * KEY=value pairs) is about a cpu device: SUBSYSTEM=cpu, or a devpath
 * under /devices/system/cpu/cpu. Pure; cannot fail.
 */
bool hotplug_is_cpu_uevent(const char *msg, size_t len);

#endif
