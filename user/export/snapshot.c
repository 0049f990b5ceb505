// SPDX-License-Identifier: Apache-2.0
#include <stdlib.h>
#include "snapshot.h"

const char *const conv_phase_names[CONV_PHASE__COUNT] = {
	[CONV_PHASE_WAKEUP] = "wakeup",
	[CONV_PHASE_PLAN] = "plan",
	[CONV_PHASE_WRITES] = "writes",
	[CONV_PHASE_FINISH] = "finish",
};

void snapshot_release(struct snapshot *s)
{
	free((void *)s->containers);
	free((void *)s->writers);
	s->containers = NULL;
	s->writers = NULL;
}
