// SPDX-License-Identifier: Apache-2.0
/*
 * Who may ask for a fixed set (issue 22, H2). weka.io/cores-ids and
 * Koordinator's resource-status make cpusetd take exactly the CPUs a pod
 * names, out of the shared pool; an annotation is pod input, so the node's
 * config names the namespaces whose pods may use them: comma-separated
 * fnmatch(3) patterns (cores_ids_namespaces, resource_status_namespaces;
 * "*" = every namespace, the rule book's behaviour; "" = none). Pure.
 */
#include <fnmatch.h>
#include <stdio.h>
#include <string.h>
#include "policy_internal.h"

/* Calls fn on each pattern of list (copied into a bounded buffer) until
 * it returns true. Returns what the last call did, false for "". */
static bool any_pattern(const char *list, const char *ns,
			bool (*fn)(const char *pattern, const char *ns))
{
	char pat[POLICY_NS_LIST_MAX];

	for (const char *s = list ? list : ""; *s;) {
		size_t len = strcspn(s, ",");

		if (len && len < sizeof(pat)) {
			memcpy(pat, s, len);
			pat[len] = '\0';
			if (fn(pat, ns))
				return true;
		}
		s += len;
		if (*s == ',')
			s++;
	}
	return false;
}

static bool matches(const char *pattern, const char *ns)
{
	return fnmatch(pattern, ns, 0) == 0;
}

static bool only_stars(const char *pattern, const char *ns)
{
	(void)ns;
	return strspn(pattern, "*") == strlen(pattern);
}

bool policy_namespace_allowed(const char *list, const char *ns)
{
	return any_pattern(list, ns ? ns : "", matches);
}

bool policy_namespace_all(const char *list)
{
	return any_pattern(list, "", only_stars);
}

void policy_set_namespaces(struct policy *p, const struct policy_config *cfg)
{
	snprintf(p->cfg.cores_ids_namespaces, sizeof(p->cfg.cores_ids_namespaces), "%s",
		 cfg->cores_ids_namespaces);
	snprintf(p->cfg.resource_status_namespaces, sizeof(p->cfg.resource_status_namespaces),
		 "%s", cfg->resource_status_namespaces);
}
