/*
 * Writes <state-dir>/topology.json (export_koord.h) from the controller's
 * placements, next to status.json and through the same atomic write
 * (files_write_atomic).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "user/daemon/controller_internal.h"
#include "user/base/strmap.h"
#include "export_koord.h"
#include "export_koord_write.h"
#include "user/base/files.h"

/* The entry of pods[0..n) for uid, or NULL. Linear: a node runs at most a
 * few hundred pods and this runs once per status write. */
static struct export_koord_pod *pod_find(struct export_koord_pod *pods, size_t n, const char *uid)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(pods[i].uid, uid) == 0)
			return &pods[i];
	return NULL;
}

static bool has_own_cpus(const struct container *ct)
{
	return !ct->d.err && (ct->d.kind == CPUSETD_KIND_INTEGER ||
			      ct->d.kind == CPUSETD_KIND_ANNOTATED);
}

/* One entry per pod with exclusive CPUs into *ret (caller frees), *ret_n. */
static int collect(const struct controller *c, struct export_koord_pod **ret, size_t *ret_n)
{
	size_t cap = strmap_count(c->by_path), n = 0, it = 0;
	struct export_koord_pod *pods = calloc(cap ? cap : 1, sizeof(*pods));
	const char *k;
	void *v;

	if (!pods)
		return -ENOMEM;
	while (strmap_next(c->by_path, &it, &k, &v)) {
		const struct container *ct = v;
		struct export_koord_pod *p;

		if (!has_own_cpus(ct))
			continue;
		p = pod_find(pods, n, ct->meta.pod_uid);
		if (!p) {
			p = &pods[n++];
			p->namespace_ = ct->meta.namespace_;
			p->name = ct->meta.pod_name;
			p->uid = ct->meta.pod_uid;
		}
		cpumask_or(&p->cpus, &p->cpus, &ct->d.cpus);
	}
	export_koord_sort(pods, n);
	*ret = pods;
	*ret_n = n;
	return 0;
}

int export_koord_write(const struct controller *c, const char *state_dir)
{
	struct export_koord_pod *pods;
	struct cpumask pool;
	const char *text;
	json_object *o;
	size_t n;
	int r;

	r = collect(c, &pods, &n);
	if (r < 0)
		return r;
	policy_shared_pool(c->policy, &pool);
	o = export_koord_json(c->topo, pods, n, &pool);
	free(pods);
	if (!o)
		return -ENOMEM;
	text = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
						 JSON_C_TO_STRING_NOSLASHESCAPE);
	r = text ? files_write_atomic(state_dir, EXPORT_KOORD_FILE, text, strlen(text), 0644) :
		   -ENOMEM;
	json_object_put(o);
	return r;
}
