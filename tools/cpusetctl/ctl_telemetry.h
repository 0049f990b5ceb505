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

/*
 * Whether status.json says the daemon runs telemetry = basic: then the
 * run-queue wait and the per-container figures of the maps are not
 * collected (zeros that mean nothing) and are shown as absent. false for
 * "full", "off", or an older daemon that does not say (those collected
 * everything).
 */
bool ctl_telemetry_basic(json_object *root);

/*
 * For telemetry_rates_json() output (o NULL is accepted): adds
 * "telemetry": "basic" and sets the run-queue wait figures of every CPU
 * and of the totals to null, so a reader sees them absent, not 0.
 */
void ctl_telemetry_json_basic(json_object *o);

/* Why err means no telemetry, one line without newline, into buf. */
const char *ctl_telemetry_why(const struct ctl_opts *o, int err, char *buf, size_t len);

#endif
