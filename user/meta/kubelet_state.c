// SPDX-License-Identifier: Apache-2.0
/*
 * kubelet CPU manager checkpoint reader (see kubelet_state.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <json-c/json.h>
#include "user/base/files.h"
#include "kubelet_state.h"

#define KUBELET_STATE_MAX_BYTES	(4u << 20)

/* key -> cpulist string, appended to *s. Returns 0 or -EBADMSG/-ENOMEM. */
static int add(struct kubelet_state *s, const char *uid, const char *name, json_object *v)
{
	struct kubelet_assignment *a, *grown;

	if (!json_object_is_type(v, json_type_string) || strlen(uid) >= sizeof(a->pod_uid) ||
	    strlen(name) >= sizeof(a->container) || !name[0])
		return -EBADMSG;
	grown = realloc(s->a, (s->n + 1) * sizeof(*s->a));
	if (!grown)
		return -ENOMEM;
	s->a = grown;
	a = &s->a[s->n];
	memset(a, 0, sizeof(*a));
	strcpy(a->pod_uid, uid);
	strcpy(a->container, name);
	if (cpulist_parse(json_object_get_string(v), &a->cpus) < 0)
		return -EBADMSG;
	s->n++;
	return 0;
}

static int parse_entries(json_object *entries, struct kubelet_state *s)
{
	json_object_object_foreach(entries, key, val) {
		int r = 0;

		if (json_object_is_type(val, json_type_object)) {	/* v2 */
			json_object_object_foreach(val, name, cpus) {
				r = add(s, key, name, cpus);
				if (r < 0)
					return r;
			}
		} else {
			r = add(s, "", key, val);			/* v1 */
		}
		if (r < 0)
			return r;
	}
	return 0;
}

static int parse_root(json_object *root, struct kubelet_state *s)
{
	json_object *policy, *def, *entries;

	if (!json_object_is_type(root, json_type_object) ||
	    !json_object_object_get_ex(root, "policyName", &policy) ||
	    !json_object_is_type(policy, json_type_string))
		return -EBADMSG;
	s->is_static = strcmp(json_object_get_string(policy), "static") == 0;
	if (json_object_object_get_ex(root, "defaultCpuSet", &def) &&
	    (!json_object_is_type(def, json_type_string) ||
	     cpulist_parse(json_object_get_string(def), &s->default_cpuset) < 0))
		return -EBADMSG;
	if (!s->is_static || !json_object_object_get_ex(root, "entries", &entries) || !entries)
		return 0;
	if (!json_object_is_type(entries, json_type_object))
		return -EBADMSG;
	return parse_entries(entries, s);
}

int kubelet_state_parse(const char *text, struct kubelet_state *ret)
{
	struct kubelet_state s = { 0 };
	json_tokener *tok = json_tokener_new();
	json_object *root;
	int r;

	if (!tok)
		return -ENOMEM;
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
	root = json_tokener_parse_ex(tok, text, (int)strlen(text));
	json_tokener_free(tok);
	if (!root)
		return -EBADMSG;
	r = parse_root(root, &s);
	json_object_put(root);
	if (r < 0) {
		free(s.a);
		return r;
	}
	*ret = s;
	return 0;
}

int kubelet_state_read(const char *path, struct kubelet_state *ret)
{
	size_t len;
	char *buf;
	int r;

	r = files_read(path, KUBELET_STATE_MAX_BYTES, &buf, &len);
	if (r < 0)
		return r;
	r = strlen(buf) == len ? kubelet_state_parse(buf, ret) : -EBADMSG;
	free(buf);
	return r;
}

void kubelet_state_free(struct kubelet_state *s)
{
	if (!s)
		return;
	free(s->a);
	s->a = NULL;
	s->n = 0;
}

const struct cpumask *kubelet_state_find(const struct kubelet_state *s, const char *pod_uid,
					 const char *container_name, const char *container_id)
{
	for (size_t i = 0; i < s->n; i++) {
		const struct kubelet_assignment *a = &s->a[i];

		if (a->pod_uid[0] ? pod_uid && container_name && !strcmp(a->pod_uid, pod_uid) &&
				    !strcmp(a->container, container_name)
				  : container_id && !strcmp(a->container, container_id))
			return &a->cpus;
	}
	return NULL;
}
