#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The shipped monitoring (tools/monitoring/): the alert rules pass
# `promtool check rules` and their own `promtool test rules`; the Grafana
# dashboard is well-formed; and every query of the dashboard and of the
# rules names metrics and labels that a real daemon writes, as does every
# row of the tools/monitoring/README.md "Metrics" table (tools/monitoring/check-queries.py
# against the .prom file of a daemon placing real runc containers:
# shared, integer, one with an admission error). A copy with a renamed
# metric or label fails the check, so the check can fail.
cd "$(dirname "$0")/../.." || exit 1
IT_OUT=${1:-build}
. tests/integration/lib.sh
it_start monitoring kubepods
for t in promtool python3; do
	command -v "$t" >/dev/null || it_skip_all "$t missing (make deps)"
done
python3 -c 'import yaml' 2>/dev/null || it_skip_all "python3-yaml missing (make deps)"

MON=tools/monitoring
RULES=$MON/cpusetd-alerts.yml
DASH=$MON/cpusetd-dashboard.json
PROM=$IT_WORK/prom/cpusetd.prom
has() { grep -Eq -- "$1" "$PROM"; }

# quiet CMD...: CMD's output only when it fails (as TAP comments).
quiet() {
	"$@" >"$IT_WORK/out" 2>&1 && return 0
	sed 's/^/# /' "$IT_WORK/out"
	return 1
}
check "promtool check rules" quiet promtool check rules "$RULES"
check "promtool test rules (every alert fires when it should, and only then)" \
	quiet promtool test rules "$MON/cpusetd-alerts.test.yml"

# The dashboard: JSON, unique panel ids, every target with a refId and
# the datasource variable, the node variable over cpusetd_build_info.
dash_ok() {
	python3 - "$DASH" <<-'EOF'
	import json, sys
	d = json.load(open(sys.argv[1]))
	panels, ids = [], set()
	def walk(ps):
	    for p in ps:
	        panels.append(p)
	        walk(p.get('panels', []))
	walk(d['panels'])
	for p in panels:
	    assert p['id'] not in ids, f"panel id {p['id']} twice"
	    ids.add(p['id'])
	    for t in p.get('targets', []):
	        assert t.get('refId') and t.get('expr'), p['title']
	        assert t['datasource']['uid'] == '${datasource}', p['title']
	names = [v['name'] for v in d['templating']['list']]
	assert names == ['datasource', 'instance'], names
	assert d['uid'] and d['title'] and len(panels) > 10
	EOF
}
check "the dashboard is well-formed" dash_ok

# A real daemon with every family the queries use holding samples:
# per-container series (export_containers = all), an integer container,
# and a container with an admission error (it asks for 2 CPUs of 2;
# on_error = shared keeps it running).
daemon_start "$ROOT" --export-interval 1 --export-containers all --on-error shared \
	--telemetry full	# every metric the dashboard and the rules query
pod_start web burstable 500
pod_start db guaranteed 1000
pod_start big guaranteed 2000
check "the daemon exports an integer container" wait_for 20 \
	has '^cpusetd_container_cpuset_info\{.*k8s_pod_name="db"'
check "... the admission error" wait_for 20 \
	has '^cpusetd_pod_admission_error_attempts\{.*k8s_pod_name="big".*\} 1$'
check "... and the per-container telemetry" wait_for 20 \
	has '^cpusetd_container_cpu_seconds_total\{.*k8s_pod_name="db"'
check "... with the BPF telemetry" has '^cpusetd_telemetry_available 1$'
cp "$PROM" "$IT_WORK/real.prom"
daemon_stop
# tools/monitoring/README.md "Cardinality": 6 counters, 13 histogram series (the default
# buckets) and 1 owner series on the owned CPU, 2 on the pooled one.
check "20.5 series per CPU (README Cardinality)" bash -c \
	"python3 $MON/prom-series.py $IT_WORK/real.prom | grep -q 'per CPU 20.5 (2 CPUs)'"

queries_ok() { quiet python3 "$MON/check-queries.py" --prom "$IT_WORK/real.prom" "$@"; }
check "every dashboard query names exported metrics and labels" queries_ok "$DASH"
check "every alert rule names exported metrics and labels" queries_ok "$RULES"
check "the README Metrics table matches the file (names, types, labels)" \
	queries_ok --readme tools/monitoring/README.md

# The check can fail: a renamed metric, a renamed label, an old label.
sed 's/cpusetd_cpu_busy_seconds_total/cpusetd_cpu_busy_seconds/' "$DASH" >"$IT_WORK/renamed.json"
sed 's/k8s_pod_name/pod/g' "$RULES" >"$IT_WORK/relabelled.yml"
sed 's/owner="integer"/kind="integer"/' "$RULES" >"$IT_WORK/badlabel.yml"
python3 "$MON/check-queries.py" --prom "$IT_WORK/real.prom" "$IT_WORK/renamed.json" \
	>"$IT_WORK/renamed.out" 2>&1
check "a dashboard with a renamed metric fails the check" test $? -ne 0
check "... and names it" \
	grep -q 'metric cpusetd_cpu_busy_seconds is not in the .prom file' "$IT_WORK/renamed.out"
check "rules with a renamed group_left label fail the check" bash -c \
	"! python3 $MON/check-queries.py --prom $IT_WORK/real.prom $IT_WORK/relabelled.yml >/dev/null"
check "rules with a selector label the metric lacks fail the check" bash -c \
	"! python3 $MON/check-queries.py --prom $IT_WORK/real.prom $IT_WORK/badlabel.yml >/dev/null"
it_done
