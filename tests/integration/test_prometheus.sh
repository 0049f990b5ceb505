#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The Prometheus textfile export against its real consumers: the daemon
# writes --textfile into a directory it creates; `promtool check metrics`
# accepts the file (also with a hostile pod name); a real
# prometheus-node-exporter (textfile collector only, on 127.0.0.1) serves
# our series with node_textfile_scrape_error 0; the file is replaced
# atomically (a reader never sees part of it) and follows pods starting
# and stopping. Cardinality (tools/monitoring/README.md "Metrics"): export_containers
# exclusive (the default), all and none; sandboxes never; no label named
# like a kube-prometheus target label; an exclusive admission ends only
# the pools' and the taken CPU's info series, never a container's; the
# run-queue histogram has the configured buckets.
cd "$(dirname "$0")/../.." || exit 1
IT_OUT=${1:-build}
. tests/integration/lib.sh
it_start prom kubepods
for t in promtool prometheus-node-exporter curl python3; do
	command -v "$t" >/dev/null || it_skip_all "$t missing (make deps)"
done

PROM_DIR=$IT_WORK/textfile/collector	# missing: the daemon makes it
PROM=$PROM_DIR/cpusetd.prom
NE_PID=

stop_node_exporter() {
	[ -n "$NE_PID" ] || return 0
	kill "$NE_PID" 2>/dev/null
	wait "$NE_PID" 2>/dev/null
	NE_PID=
}
trap 'stop_node_exporter; it_cleanup' EXIT

# has PATTERN: the current file has a line matching the ERE.
has() { grep -Eq -- "$1" "$PROM"; }
lacks() { ! grep -Eq -- "$1" "$PROM"; }
# count ERE: the number of lines of the current file matching it.
count() { grep -Ec -- "$1" "$PROM"; }
# series_keys FILE: every sample's name{labels}, sorted.
series_keys() { grep -v '^#' "$1" | sed -E 's/ [^ ]+$//' | sort; }
promtool_ok() { promtool check metrics <"$PROM" >"$IT_WORK/promtool.out" 2>&1; }
# The first labels of a demo pod's series (an ERE prefix).
CT='k8s_namespace_name="demo",k8s_pod_name'
ID='container_id="[0-9a-f]{64}"'

# A pod name no Kubernetes would allow, but the bundle is untrusted input.
EVIL=$'ev"il\\pod\nname'

pod_start web burstable 500
daemon_start "$ROOT" --textfile "$PROM" --export-interval 1
check "the textfile directory is created and the file written" wait_for 10 test -s "$PROM"
check "promtool check metrics accepts the file" promtool_ok
check "exclusive (the default): no series for a shared container" lacks 'k8s_pod_name="web"'
check "shared pool size" has '^cpusetd_pool_cpus\{pool="shared"\} 2$'
check "the shared pool's cpulist" has '^cpusetd_pool_info\{pool="shared",cpus="0-1"\} 1$'
check "health counters" has '^cpusetd_cgroup_writes_total [0-9]+$'
check "last sync timestamp is set" has '^cpusetd_last_sync_timestamp_seconds [1-9][0-9]{9}\.[0-9]{3}$'
check "the heartbeat (last update timestamp) is set" \
	has '^cpusetd_last_update_timestamp_seconds [1-9][0-9]{9}\.[0-9]{3}$'
check "no temporary file is left" test -z "$(find "$PROM_DIR" -name '*.tmp')"

# export_containers = all: the shared container too, its CPUs only as a
# count (its cpulist is its pool's), never the sandbox.
daemon_stop
daemon_start "$ROOT" --textfile "$PROM" --export-interval 1 --export-containers all \
	--telemetry full	# the run-queue histogram and container series are full-only
check "all: the shared container's info" wait_for 10 \
	has "^cpusetd_container_info\\{$CT=\"web\",k8s_container_name=\"app\",$ID,kind=\"shared\",qos=\"Burstable\",qos_class=\"[A-Z]*\"\\} 1\$"
check "all: the shared container's CPU count" \
	has "^cpusetd_container_cpus\\{$CT=\"web\",k8s_container_name=\"app\",$ID\\} 2\$"
check "all: no cpulist for a pooled container" lacks 'cpusetd_container_cpuset_info\{.*k8s_pod_name="web"'
check "all: never a sandbox" lacks 'k8s_container_name="POD"'
check "no label named namespace, pod or container (kube-prometheus target labels)" \
	lacks '[{,](namespace|pod|container)="'
cp "$PROM" "$IT_WORK/before.prom"

# An integer pod takes one CPU, the shared pool keeps the other. The
# series that end: the pools' cpulists and the taken CPU's owner, nothing
# else (no series of the shared container changes its labels).
pod_start db guaranteed 1000
check "refreshed after an integer pod starts" wait_for 10 \
	has "^cpusetd_container_cpuset_info\\{$CT=\"db\",k8s_container_name=\"app\",$ID,cpus=\"[01]\",mems=\"0\"\\} 1\$"
own=$(sed -nE 's/^cpusetd_container_cpuset_info\{.*k8s_pod_name="db",k8s_container_name="app",.*cpus="([01])".*/\1/p' "$PROM")
other=$((1 - ${own:-0}))
series_keys "$IT_WORK/before.prom" >"$IT_WORK/before.keys"
series_keys "$PROM" >"$IT_WORK/after.keys"
comm -23 "$IT_WORK/before.keys" "$IT_WORK/after.keys" >"$IT_WORK/gone.keys"
check "an exclusive admission ends the shared pool's old cpulist series" \
	grep -qx 'cpusetd_pool_info{pool="shared",cpus="0-1"}' "$IT_WORK/gone.keys"
check "... and no series but pool_info and the taken CPU's owner_info" bash -c \
	"! grep -Ev '^cpusetd_pool_info\\{|^cpusetd_cpu_owner_info\\{cpu=\"$own\",' '$IT_WORK/gone.keys'"
check "the integer container's info" \
	has "^cpusetd_container_info\\{$CT=\"db\",k8s_container_name=\"app\",$ID,kind=\"integer\",qos=\"Guaranteed\",qos_class=\"[A-Z]*\"\\} 1\$"
check "the integer container owns its CPU" \
	has "^cpusetd_cpu_owner_info\\{cpu=\"$own\",owner=\"integer\",$CT=\"db\",k8s_container_name=\"app\","
check "the shared pool shrank to the other CPU" has "^cpusetd_pool_info\\{pool=\"shared\",cpus=\"$other\"\\} 1$"
check "the shared container's CPU count follows (same series)" \
	has "^cpusetd_container_cpus\\{$CT=\"web\",k8s_container_name=\"app\",$ID\\} 1\$"
check "a convergence sample is in the histogram" \
	has '^cpusetd_resize_convergence_seconds_count [1-9]'

# Hostile names: escaped, and the file still parses.
pod_start "$EVIL" burstable 100
check "a hostile pod name is escaped" wait_for 10 \
	has '^cpusetd_container_cpus\{k8s_namespace_name="demo",k8s_pod_name="ev\\"il\\\\pod\\nname",k8s_container_name="app",'
check "promtool accepts the file with the hostile name" promtool_ok

# Telemetry, when the BPF programs are there.
if has '^cpusetd_telemetry_available 1$'; then
	check "per-CPU switches" has '^cpusetd_cpu_context_switches_total\{cpu="0"\} [0-9]+$'
	check "per-CPU run-queue histogram" \
		has '^cpusetd_cpu_runqueue_wait_seconds_bucket\{cpu="1",le="\+Inf"\} [0-9]+$'
	check "the default run-queue buckets: 10 bounds and +Inf" \
		test "$(count '^cpusetd_cpu_runqueue_wait_seconds_bucket\{cpu="1",')" = 11
	check "... from 4 µs to 1.048576 s" \
		has '^cpusetd_cpu_runqueue_wait_seconds_bucket\{cpu="1",le="0.000004"\} '
	check "... up to 1.048576 s" \
		has '^cpusetd_cpu_runqueue_wait_seconds_bucket\{cpu="1",le="1.048576"\} '
	check "foreign seconds on the owned CPU" \
		has "^cpusetd_cpu_foreign_seconds_total\\{cpu=\"$own\"\\} [0-9.]+$"
	check "per-container CPU seconds (a container that ran)" wait_for 5 \
		has "^cpusetd_container_cpu_seconds_total\\{$CT=\"db\",k8s_container_name=\"app\","
else
	check "telemetry is exported (the daemon runs with its BPF programs)" false
fi

# Atomic replacement: many reads while the file is rewritten every second
# and pods come and go; each must be a whole file (first and last family,
# final newline).
reader() {
	local i=0 bad=0 text
	while [ $i -lt 400 ]; do
		text=$(cat "$PROM"; printf x)
		case $text in
		"# HELP cpusetd_build_info "*"# TYPE cpusetd_container_admission_error_info gauge"*$'\n'x) ;;
		*) bad=$((bad + 1)) ;;
		esac
		i=$((i + 1))
	done
	echo "$bad" >"$IT_WORK/reader.bad"
}
# The first file stays open, so its inode cannot be freed and its number
# reused by a later file (ext4 does reuse them): a new number is a new file.
exec 7<"$PROM"
ino1=$(stat -L -c %i /proc/self/fd/7)
reader &
READER=$!
pod_start churn1 guaranteed 1000
pod_stop churn1
pod_start churn2 burstable 200
wait "$READER"
check "a reader never sees a partial file (400 reads)" test "$(cat "$IT_WORK/reader.bad")" = 0
check "the file is replaced by rename (new inode)" test "$(stat -c %i "$PROM")" != "$ino1"
exec 7<&-

# Refreshed after a pod stops.
pod_stop db
check "refreshed after the integer pod stops" wait_for 10 lacks 'k8s_pod_name="db"'
check "its CPU is back in the shared pool" wait_for 5 \
	has "^cpusetd_cpu_owner_info\\{cpu=\"$own\",owner=\"shared\","
check "promtool still accepts the file" promtool_ok

# A real node_exporter, textfile collector only, on a free local port.
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
prometheus-node-exporter --web.listen-address="127.0.0.1:$port" \
	--collector.disable-defaults --collector.textfile \
	--collector.textfile.directory="$PROM_DIR" >"$IT_WORK/node_exporter.log" 2>&1 &
NE_PID=$!
scrape() { curl -sf "http://127.0.0.1:$port/metrics" >"$IT_WORK/scrape.txt"; }
check "node_exporter serves /metrics" wait_for 10 scrape
check "node_exporter: node_textfile_scrape_error is 0" \
	grep -qx 'node_textfile_scrape_error 0' "$IT_WORK/scrape.txt"
check "node_exporter: our placement series" grep -Eq \
	'^cpusetd_container_info\{.*k8s_pod_name="web".*\} 1$' "$IT_WORK/scrape.txt"
check "node_exporter: the hostile name survives" grep -Fq \
	'k8s_pod_name="ev\"il\\pod\nname"' "$IT_WORK/scrape.txt"
check "node_exporter: the convergence histogram" grep -Eq \
	'^cpusetd_resize_convergence_seconds_bucket\{le="\+Inf"\} [1-9]' "$IT_WORK/scrape.txt"
check "node_exporter: our file's mtime is reported" grep -Eq \
	"^node_textfile_mtime_seconds\\{file=\"(.*/)?cpusetd.prom\"\\}" "$IT_WORK/scrape.txt"
stop_node_exporter

# export_containers = none and a coarse histogram: per-CPU and per-node
# series only.
daemon_stop
pod_start db2 guaranteed 1000
daemon_start "$ROOT" --textfile "$PROM" --export-interval 1 --export-containers none \
	--runqueue-wait-buckets-us 1024,65536 --telemetry full
check "none: an integer pod still owns its CPU" wait_for 10 \
	has '^cpusetd_cpu_owner_info\{.*owner="integer",.*k8s_pod_name="db2"'
check "none: no per-container series" lacks '^cpusetd_container_'
if has '^cpusetd_telemetry_available 1$'; then
	check "the configured run-queue buckets: 1.024 ms, 65.536 ms, +Inf" \
		test "$(count '^cpusetd_cpu_runqueue_wait_seconds_bucket\{cpu="0",le="(0.001024|0.065536|\+Inf)"\} ')" = 3
	check "... and no other" test "$(count '^cpusetd_cpu_runqueue_wait_seconds_bucket\{cpu="0",')" = 3
fi
check "promtool accepts the coarse file" promtool_ok
pod_stop db2

# --textfile "" turns the export off.
daemon_stop
rm -f "$PROM"
daemon_start "$ROOT" --textfile ""	# the export would come before status.json
check "--textfile \"\" writes no file" test ! -e "$PROM"
daemon_stop
if [ "$IT_FAILED" -ne 0 ]; then
	sed 's/^/# daemon: /' "$IT_WORK/daemon.log" | tail -20
	sed 's/^/# promtool: /' "$IT_WORK/promtool.out" 2>/dev/null
fi
it_done
