/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The daemon's NRI connection (config nri = auto; user/daemon/README.md "NRI"): made at
 * start with the controller's handlers, its fd kept in the loop's epoll
 * set across reconnects, its timer run from the loop, and the updates the
 * runtime has not heard of sent from the loop, never from a handler.
 */
#ifndef CPUSETD_DAEMON_NRI_H
#define CPUSETD_DAEMON_NRI_H

#ifdef __bpf__
#error "user-space header: BPF programs share only maps/cpusetd.h"
#endif

#include <stdbool.h>
#include <stdint.h>
#include "user/controller/controller.h"
#include "user/config/config.h"
#include "user/export/snapshot.h"

struct daemon_nri;

/*
 * With cfg->nri: enables NRI in ctl and starts connecting (to
 * cfg->nri_socket, or, started by the runtime as a pre-installed plugin,
 * to the fd its NRI_PLUGIN_SOCKET names, with NRI_PLUGIN_NAME and
 * NRI_PLUGIN_IDX over the configured name and index), its fd added to
 * epfd whenever there is one. *ret NULL with nri = off. Logs the mode
 * once. Returns 0, -EINVAL (a bad NRI_PLUGIN_* environment), -ENOMEM.
 */
int daemon_nri_open(const struct cpusetd_config *cfg, struct controller *ctl, int epfd,
		    struct daemon_nri **ret);

/* Closes the connection and frees. NULL is fine. */
void daemon_nri_free(struct daemon_nri *n);

/* The connection's fd, or -1 (none, or NULL). */
int daemon_nri_fd(const struct daemon_nri *n);

/* Whether fd (from epoll) is the connection's. false for NULL. */
bool daemon_nri_owns(const struct daemon_nri *n, int fd);

/* The connection's fd is readable: its requests answered. 0 or -ENOMEM. */
int daemon_nri_on_ready(struct daemon_nri *n);

/* CLOCK_MONOTONIC µs of its next timer (a reconnect), 0 = none. */
uint64_t daemon_nri_due_us(const struct daemon_nri *n);

/*
 * Once per loop turn: the timer when due, then the updates of changes
 * made outside NRI requests (controller_nri_outbox) sent with
 * UpdateContainers. Cheap when nothing is due. 0, 1 when the daemon
 * must stop (pre-installed, and the runtime that started it closed its
 * connection: its next instance is started with a new one, and would
 * otherwise find this one holding the instance lock), or -ENOMEM.
 */
int daemon_nri_turn(struct daemon_nri *n);

/* The connection's counters into s (the controller filled the rest);
 * s->served borrows n's copy of the request times, valid until the next
 * call. Nothing for NULL. */
void daemon_nri_stats(struct daemon_nri *n, struct snapshot_nri *s);

#endif
