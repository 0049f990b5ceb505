/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cpusetctl allocate: the fixture case runners. The driver
 * (ctl_allocate.c) reads a JSONL file of cases, builds each case's
 * topology and hands the case object to the runner for its schema
 * (fixtures/SOURCE.md); runners own the comparison with "expect".
 */
#ifndef CPUSETD_CTL_ALLOC_H
#define CPUSETD_CTL_ALLOC_H

#include <stddef.h>
#include <json-c/json.h>
#include "user/alloc/alloc_topo.h"

/*
 * Runs one kubelet case (k8s-cases.jsonl: options.algorithm selects the
 * routine) on topology t. Returns 0 when the result matches expect (and
 * error, when expect = "error"); 1 when it does not, with a one-line
 * "got X, want Y" in why; -EINVAL for a case it cannot read (why says
 * which field).
 */
int ctl_case_kube(json_object *c, const struct alloc_topo *t, char *why, size_t len);

/*
 * Runs one Koordinator case (koord-cases.jsonl: kind take, sequence or
 * spread_order) on topology t. Returns as ctl_case_kube.
 */
int ctl_case_koord(json_object *c, const struct alloc_topo *t, char *why, size_t len);

#endif
