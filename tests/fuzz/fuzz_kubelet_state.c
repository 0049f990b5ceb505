// SPDX-License-Identifier: Apache-2.0
/*
 * kubelet's cpu_manager_state checkpoint (user/meta/kubelet_state.c
 * kubelet_state_parse): JSON shape, v1/v2 entries, cpulists.
 *
 * Invariants: only -EBADMSG / -ENOMEM; *ret untouched on error; on
 * success a non-static policy has no entries, every entry has a container
 * name and C strings inside their arrays, kubelet_state_find returns a
 * mask for every entry, and every mask round-trips through its cpulist.
 */
#include <errno.h>
#include "fuzz.h"
#include "user/meta/kubelet_state.h"

static void check_mask(const struct cpumask *m)
{
	char text[CPULIST_MAX];
	struct cpumask back;

	FUZZ_CHECK(cpulist_format(m, text, sizeof(text)) >= 0);
	FUZZ_CHECK(cpulist_parse(text, &back) == 0 && cpumask_equal(m, &back));
}

static void check_state(const struct kubelet_state *s)
{
	FUZZ_CHECK(s->is_static || s->n == 0);
	FUZZ_CHECK(s->n == 0 || s->a);
	check_mask(&s->default_cpuset);
	for (size_t i = 0; i < s->n; i++) {
		const struct kubelet_assignment *a = &s->a[i];

		FUZZ_CHECK_STR(a->pod_uid);
		FUZZ_CHECK_STR(a->container);
		FUZZ_CHECK(a->container[0]);
		check_mask(&a->cpus);
		FUZZ_CHECK(kubelet_state_find(s, a->pod_uid, a->container, a->container) != NULL);
	}
	FUZZ_CHECK(kubelet_state_find(s, NULL, NULL, NULL) == NULL);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = fuzz_strdup(data, size);
	struct kubelet_state s;
	int r;

	fuzz_canary(&s, sizeof(s));
	r = kubelet_state_parse(text, &s);
	FUZZ_CHECK(r == 0 || r == -EBADMSG || r == -ENOMEM);
	if (r == 0) {
		check_state(&s);
		kubelet_state_free(&s);
		FUZZ_CHECK(s.n == 0 && !s.a);
	} else
		FUZZ_CHECK(fuzz_untouched(&s, sizeof(s)));
	free(text);
	return 0;
}
