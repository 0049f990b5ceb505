// SPDX-License-Identifier: Apache-2.0
/*
 * Planning one thing (host_internal.h): its original from its record or
 * its live value, the value it should have, and the record kept ahead of
 * the write; the skip patterns; reasons for status.
 */
#include <errno.h>
#include <fnmatch.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "host_internal.h"

bool host_skipped(const struct host_opts *o, const char *path)
{
	char pre[CGFS_PATH_MAX];
	size_t n = strlen(path);

	if (n >= sizeof(pre))
		return false;
	/* the path and each ancestor: a pattern names a subtree's top */
	for (size_t end = n; end > 0; end--) {
		if (end != n && path[end] != '/')
			continue;
		memcpy(pre, path, end);
		pre[end] = '\0';
		for (unsigned i = 0; i < o->n_skip; i++)
			if (fnmatch(o->skip[i], pre, FNM_PATHNAME) == 0)
				return true;
	}
	return false;
}

void host_reason(struct host *h, const char *fmt, ...)
{
	va_list ap;

	if (h->st.n_reasons >= HOST_MAX_REASONS)
		return;
	va_start(ap, fmt);
	vsnprintf(h->st.reasons[h->st.n_reasons++], sizeof(h->st.reasons[0]), fmt, ap);
	va_end(ap);
}

int host_plan_add(struct host *h, const struct host_plan *p)
{
	if (h->n_plans == h->cap_plans) {
		size_t cap = h->cap_plans ? h->cap_plans * 2 : 64;
		struct host_plan *n = realloc(h->plans, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		h->plans = n;
		h->cap_plans = cap;
	}
	h->plans[h->n_plans++] = *p;
	return 0;
}

int host_plan_thing(struct host *h, enum host_kind kind, const char *key, uint64_t start,
		    int depth, const struct cpumask *cur, const struct cpumask *host, bool active,
		    const struct cpumask *fallback_orig, struct cpumask *ret_orig)
{
	struct host_rec *rec = host_rec_get(h, kind, key);
	struct host_plan p = { .kind = kind, .start = start, .depth = depth, .cur = *cur };
	int empty = 0;

	if (rec && rec->start != start) {
		host_rec_del(h, kind, key);	/* a reused tid: another task */
		rec = NULL;
	}
	if (rec)
		rec->seen = true;
	/* Still what we wrote: the record knows the original. Anything else
	 * was set by someone since (or our write never landed): that is
	 * the thing's own wish now. */
	if (rec && cpumask_equal(&rec->applied, cur))
		p.orig = rec->orig;
	else if (fallback_orig)
		p.orig = *fallback_orig;
	else
		p.orig = *cur;
	if (ret_orig)
		*ret_orig = p.orig;
	if (!active) {
		p.want = p.orig;
	} else if (cpumask_empty(&p.orig)) {
		p.want = *host;		/* a v2 cgroup that inherits: the host's set */
	} else {
		cpumask_and(&p.want, &p.orig, host);
		if (cpumask_empty(&p.want)) {
			p.want = p.orig;	/* all exclusive: left to its owner */
			empty = 1;
		}
	}
	p.restore = cpumask_equal(&p.want, &p.orig);
	snprintf(p.key, sizeof(p.key), "%s", key);
	if (cpumask_equal(&p.want, cur)) {
		/* nothing to write; the record follows the truth */
		if (p.restore)
			host_rec_del(h, kind, key);
		else if (host_rec_put(h, kind, key, start, &p.orig, &p.want) < 0)
			return -ENOMEM;
		return empty;
	}
	if (!p.restore && host_rec_put(h, kind, key, start, &p.orig, &p.want) < 0)
		return -ENOMEM;
	/* host_rec_put may have replaced the record: revert info from before */
	return host_plan_add(h, &p) < 0 ? -ENOMEM : empty;
}
