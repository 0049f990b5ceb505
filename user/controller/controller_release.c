// SPDX-License-Identifier: Apache-2.0
/*
 * What cpusetd --release (user/release) asks of the controller: which
 * containers hold CPUs of their own, decided as a start decides. Here,
 * not in user/release, so that the release needs nothing of the
 * controller but this answer (main.c hands it over: release_run), and
 * only the public controller.h is used.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "controller.h"
#include "user/base/strmap.h"

static bool exclusive(const struct snapshot_container *sc)
{
	return strcmp(sc->state, "placed") == 0 && !sc->d->reject &&
	       (sc->d->kind == CPUSETD_KIND_INTEGER || sc->d->kind == CPUSETD_KIND_ANNOTATED);
}

int controller_exclusive_cgroups(const struct cpusetd_config *cfg, struct cgfs *cg,
				 const struct topology *topo, const char *root,
				 struct strmap *kept)
{
	struct cpusetd_config *dry = malloc(sizeof(*dry));
	struct controller *c = NULL;
	struct snapshot s = { 0 };
	int r;

	if (!dry)
		return -ENOMEM;
	*dry = *cfg;
	dry->dry_run = true;
	dry->release = true;
	r = controller_new(dry, cg, topo, root, &c);
	if (r == 0)
		r = controller_resync(c);
	if (r == 0)
		r = controller_snapshot(c, &s);
	for (size_t i = 0; r == 0 && i < s.n_containers; i++)
		if (exclusive(&s.containers[i]) &&
		    strmap_put(kept, s.containers[i].cgroup, (void *)1) < 0)
			r = -ENOMEM;
	snapshot_release(&s);
	controller_free(c);
	free(dry);
	return r;
}
