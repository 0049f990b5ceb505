// SPDX-License-Identifier: Apache-2.0
/*
 * cgroup v2 hierarchical writes: the container table becomes the tree
 * cgfs_plan_v2 wants (node 0 the kubepods root, then QoS slices and pods,
 * each before its children), the planner says which cpuset.cpus to write
 * and in which order, and the enforce stage writes them (with the
 * placement entries widened first: enforce_plan_tree).
 *
 * The slices' and pods' own sets are cached (struct cgnode, with the
 * cpuset.cpus fd kept open like the containers'); a node is read from the
 * kernel once, when first seen, and forgotten at its rmdir or a resync.
 *
 * The tree lives across events. A container's mkdir appends its leaf
 * (and its pod and slice when they are new), its rmdir leaves a hole: a
 * leaf without a target, or a node without a cgnode, which the planner
 * leaves alone. A plan only refreshes each node's target and own set from
 * the table (one pass, no lookups) and reads nothing from the kernel. The
 * whole tree is built again only when it must be: the first plan, after a
 * resync (every cgroup re-read), a CPU hotplug or a new kubepods root
 * (the root's parent is re-read then, and only then), and when holes are
 * more than half of it (so a plan stays O(live containers)).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cgroupfs/cgfs_plan.h"
#include "controller_plan.h"
#include "user/base/log.h"
#include "user/base/strmap.h"

/* A QoS slice, a pod or the root: a cgroup above the containers. */
struct cgnode {
	char path[CGFS_PATH_MAX];
	struct cpumask own;	/* its cpuset.cpus as last read or written */
	int fd;			/* cpuset.cpus kept open; -1 */
	uint64_t gen;		/* plan in which idx is valid */
	int idx;
};

struct controller_plan {
	struct strmap *nodes;		/* path -> struct cgnode */
	struct cgfs_plan_node *pn;	/* the tree, kept across plans */
	struct container **ct;		/* per plan node: the container, or NULL */
	struct cgnode **cg;		/* per plan node: the cgnode, or NULL */
	struct cgfs_plan_write *w;
	int *node_target;		/* per plan node: its enforce target, or -1 */
	size_t n, cap;
	/* the enforce targets of one plan: written nodes and leaves whose
	 * placement entry must widen; tnode[k]: target k's plan node */
	struct enforce_target *t;
	size_t *tnode;
	size_t tn, tcap;
	struct enforce_plan ops;
	int *res;
	size_t res_cap;
	size_t holes;			/* nodes whose container or cgroup is gone */
	bool stale;			/* build the tree again before the next plan */
	struct cpumask above;		/* the root's parent's effective set, read at build */
	uint64_t gen;			/* tree generation: cgnode/container idx valid */
};

/* Holes tolerated before the tree is built again (and half of it). */
#define PLAN_MAX_HOLES 64

int controller_plan_init(struct controller *c)
{
	c->plan = NULL;
	if (!cgfs_mounts(c->cg)->cpuset_on_v2 || c->cfg->v2_per_container)
		return 0;
	c->plan = calloc(1, sizeof(*c->plan));
	if (!c->plan || !(c->plan->nodes = strmap_new())) {
		free(c->plan);
		c->plan = NULL;
		return -ENOMEM;
	}
	c->plan->stale = true;
	return 0;
}

static void cgnode_free(struct cgnode *g)
{
	if (!g)
		return;
	if (g->fd >= 0)
		close(g->fd);
	free(g);
}

void controller_plan_reset(struct controller *c)
{
	struct controller_plan *p = c->plan;
	size_t it = 0;
	const char *k;
	void *v;

	if (!p)
		return;
	while (strmap_next(p->nodes, &it, &k, &v))
		cgnode_free(v);
	strmap_free(p->nodes);
	p->nodes = strmap_new();	/* NULL on ENOMEM: apply reports it */
	controller_plan_rebuild(c);
}

void controller_plan_rebuild(struct controller *c)
{
	if (!c->plan)
		return;
	c->plan->stale = true;
	c->plan->n = 0;		/* no pointer into the old table survives */
}

void controller_plan_free(struct controller *c)
{
	struct controller_plan *p = c->plan;

	if (!p)
		return;
	controller_plan_reset(c);
	strmap_free(p->nodes);
	free(p->pn);
	free(p->ct);
	free(p->cg);
	free(p->w);
	free(p->node_target);
	free(p->t);
	free(p->tnode);
	free(p->res);
	enforce_plan_free(&p->ops);
	free(p);
	c->plan = NULL;
}

/* Node i's container or cgroup is gone: a hole the planner leaves alone
 * (no leaf with a target below it; a leaf without one). */
static void hole(struct controller_plan *p, size_t i)
{
	p->ct[i] = NULL;
	p->cg[i] = NULL;
	cpumask_zero(&p->pn[i].target);
	p->holes++;
	if (p->holes > PLAN_MAX_HOLES && p->holes > p->n / 2)
		p->stale = true;
}

void controller_plan_forget(struct controller *c, const char *path)
{
	struct controller_plan *p = c->plan;
	struct cgnode *g;

	if (!p || !p->nodes || !(g = strmap_del(p->nodes, path)))
		return;
	/* Its containers went before it (the kernel removes a cgroup only
	 * without children), so nothing below still needs it. */
	if (!p->stale && g->gen == p->gen)
		hole(p, (size_t)g->idx);
	cgnode_free(g);
}

static int grow(struct controller_plan *p)
{
	size_t cap = p->cap ? p->cap * 2 : 256;
	struct cgfs_plan_node *pn = realloc(p->pn, cap * sizeof(*pn));
	struct container **ct;
	struct cgnode **cg;
	struct cgfs_plan_write *w;

	if (pn)
		p->pn = pn;
	ct = pn ? realloc(p->ct, cap * sizeof(*ct)) : NULL;
	if (ct)
		p->ct = ct;
	cg = ct ? realloc(p->cg, cap * sizeof(*cg)) : NULL;
	if (cg)
		p->cg = cg;
	int *nt;

	w = cg ? realloc(p->w, cap * sizeof(*w)) : NULL;
	if (w)
		p->w = w;
	nt = w ? realloc(p->node_target, cap * sizeof(*nt)) : NULL;
	if (!nt)
		return -ENOMEM;
	p->node_target = nt;
	p->cap = cap;
	return 0;
}

/* Appends a plan node; returns its index or -ENOMEM. */
static int push(struct controller_plan *p, int parent, struct container *ct, struct cgnode *g)
{
	if (p->n == p->cap && grow(p) < 0)
		return -ENOMEM;
	p->pn[p->n] = (struct cgfs_plan_node){ .parent = parent };
	p->ct[p->n] = ct;
	p->cg[p->n] = g;
	return (int)p->n++;
}

/* The cached node for path, read from the kernel the first time. */
static struct cgnode *get_cgnode(struct controller *c, const char *path)
{
	struct cgnode *g = strmap_get(c->plan->nodes, path);

	if (g)
		return g;
	g = calloc(1, sizeof(*g));
	if (!g)
		return NULL;
	g->fd = -1;
	snprintf(g->path, sizeof(g->path), "%s", path);
	if (cgfs_read_cpuset(c->cg, path, CGFS_CPUS, &g->own) < 0)
		cpumask_zero(&g->own);	/* vanished or unreadable: as if "" */
	if (strmap_put(c->plan->nodes, g->path, g) < 0) {
		free(g);
		return NULL;
	}
	return g;
}

/* Plan index of the cgroup at path (the root or above a container),
 * adding it and its ancestors up to the root. -ENOMEM. */
static int node_index(struct controller *c, const char *path)
{
	struct controller_plan *p = c->plan;
	char parent[CGFS_PATH_MAX], *slash;
	struct cgnode *g = get_cgnode(c, path);
	int up = -1, i;

	if (!g)
		return -ENOMEM;
	if (g->gen == p->gen)
		return g->idx;
	snprintf(parent, sizeof(parent), "%s", path);
	slash = strrchr(parent, '/');
	/* Stops at the root, and at anything not below it (cannot happen for
	 * table paths, which cgfs_parse_path placed below the root). */
	if (strcmp(path, c->root) && slash && slash != parent &&
	    strlen(parent) > strlen(c->root)) {
		*slash = '\0';
		up = node_index(c, parent);
		if (up < 0)
			return up;
	} else if (p->n) {
		up = 0;
	}
	i = push(p, up, NULL, g);
	if (i < 0)
		return i;
	p->pn[i].own = g->own;
	g->gen = p->gen;
	g->idx = i;
	return i;
}

/* One container as a leaf below its pod; its target comes at refresh. */
static int add_leaf(struct controller *c, struct container *ct)
{
	struct controller_plan *p = c->plan;
	char pod[CGFS_PATH_MAX], *slash;
	int up, i;

	snprintf(pod, sizeof(pod), "%s", ct->path);
	slash = strrchr(pod, '/');
	if (!slash)
		return 0;
	*slash = '\0';
	up = node_index(c, pod);
	if (up < 0)
		return up;
	i = push(p, up, ct, NULL);
	if (i < 0)
		return i;
	p->pn[i].leaf = true;
	ct->plan_gen = p->gen;
	ct->plan_node = i;
	return 0;
}

/* The root's parent's effective set: what the root can get at most. */
static void above_root(const struct controller *c, struct cpumask *ret)
{
	char parent[CGFS_PATH_MAX], *slash;

	snprintf(parent, sizeof(parent), "%s", c->root);
	slash = strrchr(parent, '/');
	if (slash)
		slash[slash == parent] = '\0';	/* "/kubepods" -> "/" */
	if (!slash || cgfs_read_cpuset(c->cg, parent, CGFS_EFFECTIVE_CPUS, ret) < 0 ||
	    cpumask_empty(ret))
		*ret = c->topo->online;
}

/* The whole tree from the table; cached slices and pods are not re-read. */
static int build(struct controller *c)
{
	struct controller_plan *p = c->plan;
	size_t it = 0;
	const char *k;
	void *v;
	int r;

	if (!p->nodes)
		return -ENOMEM;
	p->n = 0;
	p->holes = 0;
	p->gen++;
	c->n.plan_builds++;
	above_root(c, &p->above);
	r = node_index(c, c->root);
	while (r >= 0 && strmap_next(c->by_path, &it, &k, &v))
		r = add_leaf(c, v);
	if (r < 0) {
		p->n = 0;
		return r;
	}
	p->stale = false;
	return 0;
}

void controller_plan_add(struct controller *c, struct container *ct)
{
	struct controller_plan *p = c->plan;

	if (!p || p->stale || !c->root[0])
		return;		/* the next build takes it from the table */
	if (add_leaf(c, ct) < 0)
		controller_plan_rebuild(c);
}

void controller_plan_remove(struct controller *c, struct container *ct)
{
	struct controller_plan *p = c->plan;

	if (p && !p->stale && ct->plan_gen == p->gen && p->ct[ct->plan_node] == ct)
		hole(p, (size_t)ct->plan_node);
}

/*
 * Each node's facts as of now, from the table: a live container's target
 * is its pool's set now (a pooled decision follows its pool: status,
 * placement map) or its own CPUs; one without a task has no target (no
 * opinion: nothing to plan for). Own sets are what was last written or
 * read; unknown is a fresh cgroup, "".
 */
static void refresh(struct controller *c)
{
	struct controller_plan *p = c->plan;

	for (size_t i = 0; i < p->n; i++) {
		struct cgfs_plan_node *x = &p->pn[i];
		struct container *ct = p->ct[i];

		if (p->cg[i]) {
			x->own = p->cg[i]->own;
		} else if (ct) {
			/* A pool part or the SYSTEM set is a set of its
			 * own: written at the container. */
			x->exclusive = !pooled(ct) || pool_part(ct) || ct->d.system_pool;
			cpumask_zero(&x->target);
			if (container_live(ct)) {
				policy_pool_for(c->policy, &ct->d, &ct->d.cpus);
				x->target = ct->d.cpus;
			}
			if (ct->cpus_known)
				x->own = ct->cpus_applied;
			else
				cpumask_zero(&x->own);
		}
	}
}

/* Plan node i as enforce target: a container (its placement entry too:
 * cpus is the set it must end on, whatever level writes it) or a slice
 * or pod. -ENOMEM. */
static int add_target(struct controller *c, size_t i)
{
	struct controller_plan *p = c->plan;
	struct container *ct = p->ct[i];
	struct cgnode *g = p->cg[i];
	struct enforce_target *t;

	if (p->tn == p->tcap) {
		size_t cap = p->tcap ? p->tcap * 2 : 64;
		struct enforce_target *nt = realloc(p->t, cap * sizeof(*nt));
		size_t *tnode = nt ? realloc(p->tnode, cap * sizeof(*tnode)) : NULL;

		if (nt)
			p->t = nt;
		if (!tnode)
			return -ENOMEM;
		p->tnode = tnode;
		p->tcap = cap;
	}
	t = &p->t[p->tn];
	*t = (struct enforce_target){ .planned = true };
	if (ct) {
		t->name = ct->name;
		t->path = ct->path;
		t->cpus_fd = &ct->cpus_fd;
		t->cpus = cpumask_empty(&p->pn[i].target) ? NULL : &p->pn[i].target;
		controller_entry_of(c, ct, t);
	} else {
		t->path = g->path;
		t->cpus_fd = &g->fd;
	}
	p->node_target[i] = (int)p->tn;
	p->tnode[p->tn++] = i;
	return 0;
}

/* The targets of a plan of nw writes: each written node, and each leaf
 * whose set may grow past its placement entry (enforce_plan_tree widens
 * those before any write). Holes are never targets. -ENOMEM. */
static int collect_targets(struct controller *c, size_t nw)
{
	struct controller_plan *p = c->plan;
	int r = 0;

	p->tn = 0;
	for (size_t i = 0; i < p->n; i++)
		p->node_target[i] = -1;
	for (size_t k = 0; k < nw && !r; k++) {
		size_t i = (size_t)p->w[k].node;

		if ((p->ct[i] || p->cg[i]) && p->node_target[i] < 0)
			r = add_target(c, i);
	}
	for (size_t i = 0; i < p->n && !r; i++)
		if (p->ct[i] && p->node_target[i] < 0 && c->bpf &&
		    !cpumask_empty(&p->pn[i].target) &&
		    !cpumask_subset(&p->pn[i].target, &p->ct[i]->map_cpus))
			r = add_target(c, i);
	return r;
}

/* A slice's or pod's write result: its cached set follows. */
static void node_result(struct controller *c, struct cgnode *g, const struct enforce_op *op, int r)
{
	if (r == ENFORCE_SKIPPED)
		return;
	c->n.cgroup_writes++;
	if (r < 0 && r != -ENOENT) {
		c->n.cgroup_write_errors++;
		log_warn("%s: writing cpuset.cpus failed: %s", g->path, strerror(-r));
	}
	if (r == 0) {
		g->own = op->set;
		c->dirty = true;
	}
}

/* Plans the nw writes with their widenings (enforce_plan_tree), carries
 * them out (enforce_exec) and gives each result to its record. */
static int execute(struct controller *c, size_t nw)
{
	struct controller_plan *p = c->plan;
	struct enforce_io io = { .cg = c->cg, .root = c->root, .bpf = c->bpf,
				 .dry_run = c->cfg->dry_run };
	int r = collect_targets(c, nw);

	if (!r)
		r = enforce_plan_tree(p->t, p->tn, p->w, nw, p->node_target, &p->ops);
	if (!r && p->ops.n > p->res_cap) {
		int *res = realloc(p->res, p->ops.cap * sizeof(*res));

		if (!res)
			r = -ENOMEM;
		else
			p->res = res, p->res_cap = p->ops.cap;
	}
	if (r < 0)
		return r;
	enforce_exec(&io, p->t, &p->ops, 0, p->ops.n, p->res);
	for (size_t k = 0; k < p->ops.n; k++) {
		const struct enforce_op *op = &p->ops.ops[k];
		size_t i = p->tnode[op->target];

		if (p->ct[i])
			controller_write_result(c, p->ct[i], op, p->res[k]);
		else
			node_result(c, p->cg[i], op, p->res[k]);
	}
	return 0;
}

bool controller_plan_off(struct controller *c, struct container *ct)
{
	struct controller_plan *p = c->plan;
	size_t nw = 0;

	if (!p || !c->root[0])
		return false;
	if (p->stale && build(c) < 0)
		return true;
	if (ct->plan_gen != p->gen || p->ct[ct->plan_node] != ct)
		return true;	/* not in the tree: the next plan builds it */
	refresh(c);
	if (cgfs_plan_v2(p->pn, p->n, &p->above, p->w, &nw) < 0)
		return true;
	for (size_t k = 0; k < nw; k++)
		if (p->w[k].node == ct->plan_node)
			return true;
	return false;
}

int controller_plan_apply(struct controller *c)
{
	struct controller_plan *p = c->plan;
	size_t nw = 0;
	int r;

	if (!p || !c->root[0])
		return 0;
	if (p->stale && (r = build(c)) < 0)
		return r;
	refresh(c);
	r = cgfs_plan_v2(p->pn, p->n, &p->above, p->w, &nw);
	if (r < 0) {
		log_error("v2 write plan: bad tree under %s (%s)", c->root, strerror(-r));
		return 0;
	}
	r = execute(c, nw);
	if (r < 0)
		log_error("v2 write plan: out of memory; nothing written, retried at the next "
			  "event");
	return r;
}
