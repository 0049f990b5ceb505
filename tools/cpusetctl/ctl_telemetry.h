/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cpusetctl's access to the pinned telemetry maps (user/telemetry/telemetry.h):
 * the snapshot for the CPUs status.json knows, and the one sentence that
 * says why there is none.
 */
#ifndef CPUSETD_CTL_TELEMETRY_H
#define CPUSETD_CTL_TELEMETRY_H

#include <stddef.h>
#include "ctl.h"
#include "user/telemetry/telemetry.h"

/* Highest CPU id + 1 in status.json's topology (cpus, else online), at
 * most CPUSETD_MAX_CPUS; CPUSETD_MAX_CPUS when it says nothing. */
unsigned ctl_n_cpus(json_object *root);

/*
 * Reads the maps pinned under o->pin_dir into *ret (free it with
 * telemetry_snapshot_free either way). Returns 0 or telemetry_read_pinned's
 * -errno (-ENOENT: not pinned there).
 */
int ctl_telemetry_read(const struct ctl_opts *o, unsigned n_cpus, struct telemetry_snapshot *ret);

/* Why err means no telemetry, one line without newline, into buf. */
const char *ctl_telemetry_why(const struct ctl_opts *o, int err, char *buf, size_t len);

#endif
