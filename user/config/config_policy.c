// SPDX-License-Identifier: Apache-2.0
/*
 * The allocation-policy settings of the config file and command line
 * (config.h lists them); one table from option name to parser, so
 * config.c only routes names here. Calls go one way, config.c -> here:
 * the boolean parser both files use lives here too.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include "config.h"

int config_parse_bool(const char *v, bool *ret)
{
	static const char *const yes[] = { "true", "yes", "1" }, *const no[] = { "false", "no", "0" };

	for (int i = 0; i < 3; i++) {
		if (strcasecmp(v, yes[i]) == 0 || strcasecmp(v, no[i]) == 0) {
			*ret = strcasecmp(v, yes[i]) == 0;
			return 0;
		}
	}
	return -EINVAL;
}

typedef int (*setter)(struct policy_config *c, const char *v, char *err, size_t len);

static int set_bind(struct policy_config *c, const char *v, char *err, size_t len)
{
	if (koord_bind_policy_parse(v, &c->alloc.bind) == 0)
		return 0;
	snprintf(err, len, "expected FullPCPUs|SpreadByPCPUs|FullPCPUsOnly, got '%s'", v);
	return -EINVAL;
}

static int set_exclusive(struct policy_config *c, const char *v, char *err, size_t len)
{
	if (koord_excl_policy_parse(v, &c->alloc.exclusive) == 0)
		return 0;
	snprintf(err, len, "expected None|PCPULevel|NUMANodeLevel, got '%s'", v);
	return -EINVAL;
}

static int set_numa(struct policy_config *c, const char *v, char *err, size_t len)
{
	if (koord_numa_strategy_parse(v, &c->alloc.numa) == 0)
		return 0;
	snprintf(err, len, "expected MostAllocated|LeastAllocated|DistributeEvenly, got '%s'", v);
	return -EINVAL;
}

static int set_align(struct policy_config *c, const char *v, char *err, size_t len)
{
	if (numa_policy_parse(v, &c->alloc.align) == 0)
		return 0;
	snprintf(err, len, "expected None|BestEffort|Restricted|SingleNUMANode "
		 "(or none|best-effort|restricted|single-numa-node), got '%s'", v);
	return -EINVAL;
}

static int set_scope(struct policy_config *c, const char *v, char *err, size_t len)
{
	if (strcmp(v, "container") == 0 || strcmp(v, "pod") == 0) {
		c->alloc.pod_scope = v[0] == 'p';
		return 0;
	}
	snprintf(err, len, "expected container|pod, got '%s'", v);
	return -EINVAL;
}

static int set_bool(bool *dst, const char *v, char *err, size_t len)
{
	if (config_parse_bool(v, dst) == 0)
		return 0;
	snprintf(err, len, "expected true|false|yes|no|1|0, got '%s'", v);
	return -EINVAL;
}

static int set_compat(struct policy_config *c, const char *v, char *err, size_t len)
{
	return set_bool(&c->alloc.kubelet_compat, v, err, len);
}

static int set_isolated(struct policy_config *c, const char *v, char *err, size_t len)
{
	return set_bool(&c->prefer_isolated, v, err, len);
}

static int set_be_numa(struct policy_config *c, const char *v, char *err, size_t len)
{
	return set_bool(&c->be_numa_aware, v, err, len);
}

static int set_kubelet_options(struct policy_config *c, const char *v, char *err, size_t len)
{
	return policy_kubelet_options_parse(v, &c->alloc.kubelet, err, len);
}

static int set_be_pool(struct policy_config *c, const char *v, char *err, size_t len)
{
	if (strcmp(v, "shared") == 0 || strcmp(v, "be") == 0) {
		c->besteffort_be_pool = v[0] == 'b';
		return 0;
	}
	snprintf(err, len, "expected shared|be, got '%s'", v);
	return -EINVAL;
}

static int set_integer_qos(struct policy_config *c, const char *v, char *err, size_t len)
{
	if (strcmp(v, "LSE") == 0 || strcmp(v, "LSR") == 0) {
		c->integer_qos = v[2] == 'E' ? POLICY_QOS_LSE : POLICY_QOS_LSR;
		return 0;
	}
	snprintf(err, len, "expected LSE|LSR, got '%s'", v);
	return -EINVAL;
}

static int set_cpulist(struct cpumask *m, const char *v, char *err, size_t len)
{
	if (cpulist_parse(v, m) == 0)
		return 0;
	snprintf(err, len, "expected a cpulist such as 0,2-3, got '%s'", v);
	return -EINVAL;
}

static int set_reserved(struct policy_config *c, const char *v, char *err, size_t len)
{
	return set_cpulist(&c->reserved_cpus, v, err, len);
}

static int set_system_qos(struct policy_config *c, const char *v, char *err, size_t len)
{
	return set_cpulist(&c->system_qos_cpus, v, err, len);
}

/* A namespace pattern list (policy.h, policy_namespaces.c): at most
 * POLICY_NS_MAX_PATTERNS comma-separated fnmatch patterns made of what a
 * namespace name may hold (RFC 1123 label: a-z, 0-9, '-') and fnmatch's
 * * ? [ ] !; "" = no namespace. Checked strictly: "Kube-System" or
 * "a, b" would match nothing, silently. */
static int set_namespaces(char *dst, const char *v, char *err, size_t len)
{
	unsigned n = 0;

	if (strlen(v) >= POLICY_NS_LIST_MAX) {
		snprintf(err, len, "longer than %d characters", POLICY_NS_LIST_MAX - 1);
		return -EINVAL;
	}
	for (const char *p = v; *p; n++) {
		size_t l = strcspn(p, ","), ok = strspn(p, "abcdefghijklmnopqrstuvwxyz0123456789-*?[]!");

		if (l == 0 || ok < l) {
			snprintf(err, len, "expected comma-separated namespace patterns (a-z, 0-9, '-' "
				 "and fnmatch's * ? [...]), got '%.*s'", (int)l, p);
			return -EINVAL;
		}
		p += l;
		if (*p == ',' && !*++p) {
			snprintf(err, len, "a pattern list may not end in ','");
			return -EINVAL;
		}
	}
	if (n > POLICY_NS_MAX_PATTERNS) {
		snprintf(err, len, "at most %d patterns", POLICY_NS_MAX_PATTERNS);
		return -EINVAL;
	}
	strcpy(dst, v);
	return 0;
}

static int set_cores_ids_ns(struct policy_config *c, const char *v, char *err, size_t len)
{
	return set_namespaces(c->cores_ids_namespaces, v, err, len);
}

static int set_resource_status_ns(struct policy_config *c, const char *v, char *err, size_t len)
{
	return set_namespaces(c->resource_status_namespaces, v, err, len);
}

static const struct {
	const char *name;
	setter set;
} setters[] = {
	{ "cpu-bind-policy", set_bind },
	{ "cpu-exclusive-policy", set_exclusive },
	{ "numa-allocate-strategy", set_numa },
	{ "numa-topology-alignment-policy", set_align },
	{ "topology-manager-scope", set_scope },
	{ "kubelet-compat", set_compat },
	{ "kubelet-cpu-manager-policy-options", set_kubelet_options },
	{ "besteffort-pool", set_be_pool },
	{ "be-numa-aware", set_be_numa },
	{ "integer-qos", set_integer_qos },
	{ "reserved-cpus", set_reserved },
	{ "system-qos-cpus", set_system_qos },
	{ "prefer-isolated-cpus", set_isolated },
	{ "cores-ids-namespaces", set_cores_ids_ns },
	{ "resource-status-namespaces", set_resource_status_ns },
};

int config_policy_set(struct policy_config *c, const char *name, const char *v,
		      char *err, size_t len)
{
	for (size_t i = 0; i < sizeof(setters) / sizeof(setters[0]); i++)
		if (strcmp(setters[i].name, name) == 0)
			return setters[i].set(c, v, err, len);
	return -ENOENT;
}

void config_policy_defaults(struct policy_config *c)
{
	c->integer_qos = POLICY_QOS_LSE;
	c->be_numa_aware = true;	/* as koordlet's BECPUManager */
	/* PRD: any pod may name its CPUs; the shipped config says why
	 * to narrow it (user/README.md "Security model") */
	strcpy(c->cores_ids_namespaces, "*");
	strcpy(c->resource_status_namespaces, "*");
	c->alloc = (struct policy_alloc_config){
		.bind = KOORD_BIND_FULL_PCPUS,
		.exclusive = KOORD_EXCL_NONE,
		.numa = KOORD_NUMA_MOST_ALLOCATED,
		.align = NUMA_POLICY_NONE,
	};
}
