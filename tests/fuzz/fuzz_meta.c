// SPDX-License-Identifier: Apache-2.0
/*
 * The OCI bundle config.json reader (user/meta/meta.c meta_parse_text), on
 * whole documents: JSON syntax, key types, string limits, mounts.
 * fuzz_annotations.c aims at the annotation values instead.
 *
 * Invariants (meta.h): 0 or -ENOMEM; an unusable bundle carries only its
 * verdict and reason, a usable one from_bundle; a reason exactly when not
 * valid; every text field a C string inside its array, cpulist strings
 * within META_MAX_CPULIST_BYTES; the CPU limit fields agree; copy,
 * inherit, name and release behave (fuzz_meta.h).
 */
#include <errno.h>
#include "fuzz.h"
#include "fuzz_meta.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *json = fuzz_strdup(data, size);
	struct pod_meta m;

	fuzz_check_pod_meta(meta_parse_text(json, &m), &m);
	free(json);
	return 0;
}
