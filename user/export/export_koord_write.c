/*
 * Writes <state-dir>/topology.json (export_koord.h) from a snapshot of the
 * placements, next to status.json and through the same atomic write
 * (files_write_atomic).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "snapshot.h"
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

static bool has_own_cpus(const struct policy_decision *d)
{
	return !d->err && (d->kind == CPUSETD_KIND_INTEGER || d->kind == CPUSETD_KIND_ANNOTATED);
}

/* One entry per pod with exclusive CPUs into *ret (caller frees), *ret_n. */
static int collect(const struct snapshot *s, struct export_koord_pod **ret, size_t *ret_n)
{
	struct export_koord_pod *pods = calloc(s->n_containers + 1, sizeof(*pods));
	size_t n = 0;

	if (!pods)
		return -ENOMEM;
	for (size_t i = 0; i < s->n_containers; i++) {
		const struct snapshot_container *ct = &s->containers[i];
		struct export_koord_pod *p;

		if (!has_own_cpus(ct->d))
			continue;
		p = pod_find(pods, n, ct->meta->pod_uid);
		if (!p) {
			p = &pods[n++];
			p->namespace_ = ct->meta->namespace_;
			p->name = ct->meta->pod_name;
			p->uid = ct->meta->pod_uid;
		}
		cpumask_or(&p->cpus, &p->cpus, &ct->d->cpus);
	}
	export_koord_sort(pods, n);
	*ret = pods;
	*ret_n = n;
	return 0;
}

int export_koord_write(const struct snapshot *s, const char *state_dir)
{
	struct export_koord_pod *pods;
	const char *text;
	json_object *o;
	size_t n;
	int r;

	r = collect(s, &pods, &n);
	if (r < 0)
		return r;
	o = export_koord_json(s->topo, pods, n, &s->shared_pool);
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
