// SPDX-License-Identifier: Apache-2.0
/*
 * The build's git revision, in one object: $(OUT)/revision.h is rewritten
 * by the Makefile only when the revision changes, so only this file is
 * compiled again after a commit.
 */
#include "config.h"
#include "revision.h"

const char cpusetd_revision[] = CPUSETD_REVISION;
