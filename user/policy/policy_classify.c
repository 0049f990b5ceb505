// SPDX-License-Identifier: Apache-2.0
/*
 * What a container is: annotated, scheduled (Koordinator resource-status),
 * integer (exclusive CPUs), shared or BE. Pure; every annotation value is
 * untrusted, and a bad one is an admission error naming the annotation.
 *
 * Order of the rules, first match wins:
 *   sandbox                          shared (PRD §3.1: pause never pinned)
 *   malformed pod annotation         error
 *   weka.io/cores-ids                annotated (PRD §2)
 *   resource-status cpuset           scheduled (the Koordinator proposal "resource-status")
 *   qosClass LS / SYSTEM             shared;  BE: BE pool
 *   Guaranteed, quota % period == 0  integer, LSE unless LSR (class or config)
 *   qosClass LSE / LSR otherwise     error: exclusive needs integer CPUs
 *   BestEffort QoS                   besteffort pool (config)
 *   anything else                    shared
 */
#include <errno.h>
#include <string.h>
#include "policy_internal.h"

static const char *const qos_names[] = {
	[POLICY_QOS_NONE] = "",
	[POLICY_QOS_LSE] = "LSE",
	[POLICY_QOS_LSR] = "LSR",
	[POLICY_QOS_LS] = "LS",
	[POLICY_QOS_BE] = "BE",
	[POLICY_QOS_SYSTEM] = "SYSTEM",
};

const char *policy_qos_name(enum policy_qos qos)
{
	return qos <= POLICY_QOS_SYSTEM ? qos_names[qos] : "?";
}

int policy_qos_parse(const char *s, enum policy_qos *ret)
{
	for (int q = POLICY_QOS_LSE; q <= POLICY_QOS_SYSTEM; q++)
		if (strcmp(s, qos_names[q]) == 0) {
			*ret = q;
			return 0;
		}
	return -EINVAL;
}

/* Integer CPUs of a Guaranteed container (static CPU manager criterion:
 * Guaranteed QoS and an integer CPU limit), or 0. */
static unsigned integer_cpus(const struct policy_request *req)
{
	uint64_t n;

	if (req->qos != POD_QOS_GUARANTEED || req->quota_us <= 0 || !req->period_us ||
	    (uint64_t)req->quota_us % req->period_us)
		return 0;
	n = (uint64_t)req->quota_us / req->period_us;
	return n > CPUSETD_MAX_CPUS ? CPUSETD_MAX_CPUS + 1 : (unsigned)n;
}

/* The pod's annotations that make sense before the class is known. */
static int check_pod(const struct pod_policy_ann *a, enum policy_qos *qos,
		     struct policy_decision *d)
{
	char why[192];

	if (a->error[0])
		return policy_fail(d, POLICY_ERR_INVALID_ANNOTATION, "%s", a->error);
	if (a->qos_class[0] && policy_qos_parse(a->qos_class, qos) < 0)
		return policy_fail(d, POLICY_ERR_INVALID_ANNOTATION,
				   "%s%s \"%s\" is not LSE, LSR, LS, BE or SYSTEM",
				   META_QOS_CLASS_ANNOTATION,
				   a->qos_from == META_QOS_FROM_LABEL ? " label" : "", a->qos_class);
	if (a->prefer_isolated[0] && strcmp(a->prefer_isolated, "true") &&
	    strcmp(a->prefer_isolated, "false"))
		return policy_fail(d, POLICY_ERR_INVALID_ANNOTATION,
				   "%s \"%s\" is not \"true\" or \"false\"",
				   META_PREFER_ISOLATED_ANNOTATION, a->prefer_isolated);
	if (policy_alloc_check_spec(a, why, sizeof(why)) < 0)
		return policy_fail(d, POLICY_ERR_INVALID_ANNOTATION, "%s", why);
	return 0;
}

static bool wants_isolated(const struct policy *p, const struct pod_policy_ann *a)
{
	if (a && a->prefer_isolated[0])
		return strcmp(a->prefer_isolated, "true") == 0;
	return p->cfg.prefer_isolated;
}

int policy_classify(const struct policy *p, const struct policy_request *req,
		    struct klass_info *ret, struct policy_decision *d)
{
	static const struct pod_policy_ann none;
	struct klass_info ki = { .k = K_SHARED };
	const struct pod_policy_ann *a = req->pod ? req->pod : &none;
	unsigned n;
	int r;

	/* Never a silent fallback to the shared pool: what the bundle says
	 * cannot be known, so it is an admission error like any other. */
	if (req->invalid == META_INVALID_BUNDLE)
		return policy_fail(d, POLICY_ERR_INVALID_BUNDLE, "%s", req->invalid_why);
	if (req->invalid == META_INVALID_ANNOTATION)
		return policy_fail(d, POLICY_ERR_INVALID_ANNOTATION, "%s", req->invalid_why);
	if (req->sandbox) {
		ki.rule = POLICY_RULE_SANDBOX;
		goto out;
	}
	r = check_pod(a, &ki.qos, d);
	if (r < 0)
		return r;
	n = integer_cpus(req);
	if (req->cores_ids) {
		ki.k = K_ANNOTATED;
		ki.rule = POLICY_RULE_CORES_IDS;
	} else if (a->has_status_cpuset) {
		ki.k = K_SCHEDULED;
		ki.rule = POLICY_RULE_RESOURCE_STATUS;
		ki.qos = ki.qos == POLICY_QOS_LSR ? POLICY_QOS_LSR : POLICY_QOS_LSE;
	} else if (ki.qos == POLICY_QOS_BE) {
		ki.k = K_BE;
		ki.rule = POLICY_RULE_QOS_CLASS;
	} else if (ki.qos == POLICY_QOS_LS || ki.qos == POLICY_QOS_SYSTEM) {
		ki.k = K_SHARED;
		ki.rule = POLICY_RULE_QOS_CLASS;
	} else if (n) {
		ki.k = K_INTEGER;
		ki.rule = POLICY_RULE_INTEGER;
		ki.n = n;
		if (ki.qos == POLICY_QOS_NONE)
			ki.qos = p->cfg.integer_qos;
		ki.prefer_isolated = wants_isolated(p, req->pod);
	} else if (ki.qos == POLICY_QOS_LSE || ki.qos == POLICY_QOS_LSR) {
		return policy_fail(d, POLICY_ERR_INVALID_ANNOTATION,
				   "%s %s needs a Guaranteed pod with an integer CPU limit",
				   META_QOS_CLASS_ANNOTATION, policy_qos_name(ki.qos));
	} else if (req->qos == POD_QOS_BESTEFFORT && p->cfg.besteffort_be_pool) {
		ki.k = K_BE;
		ki.rule = POLICY_RULE_BESTEFFORT_POOL;
	}
out:
	*ret = ki;
	return 0;
}
