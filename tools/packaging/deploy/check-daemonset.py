#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Reads cpusetd's DaemonSet as kubectl would apply it (the output of
`kubectl kustomize tools/packaging/deploy`) and either checks it or turns it into
what `ctr run` needs to run the same container.

  check-daemonset.py check RENDERED.yaml
      One TAP line per requirement (tools/packaging/deploy/README.md "Install as a DaemonSet"):
      privileged, hostPID, hostNetwork, the host mounts, the liveness probe
      on `cpusetctl status`, resources, priority class, tolerations, the
      rolling update that never runs two daemons, the ConfigMap mounted
      as a file. Exit 1 when any fails.

  check-daemonset.py run-spec RENDERED.yaml
      JSON for tests/containerd/test_image.sh: image, command + args, env,
      namespaces, memory limit, probes, mounts (hostPath source or
      ConfigMap data, destination, read-only, propagation as containerd's
      CRI turns mountPropagation into mount options). Any field of the pod
      or the container that such a run would not follow is an error (exit
      1, one line naming it), so the test cannot pass on a manifest it does
      not run.
"""
import json
import sys

import yaml

# Fields of the pod spec and the container that the run-spec turns into
# ctr run options, or that only matter to the scheduler or kubelet and
# change nothing in how the container runs on its node.
POD_FOLLOWED = {"hostPID", "hostNetwork", "containers", "volumes"}
POD_SCHEDULING = {"priorityClassName", "tolerations", "affinity", "nodeSelector",
                  "terminationGracePeriodSeconds", "automountServiceAccountToken",
                  "enableServiceLinks", "dnsPolicy", "serviceAccountName"}
CTR_FOLLOWED = {"name", "image", "imagePullPolicy", "command", "args", "env",
                "securityContext", "resources", "volumeMounts", "startupProbe",
                "livenessProbe"}
MOUNT_KEYS = {"name", "mountPath", "readOnly", "mountPropagation", "subPath"}
# containerd's CRI (pkg/cri/opts/spec_linux.go, WithMounts): the
# propagation option each mountPropagation value becomes.
PROPAGATION = {None: "rprivate", "None": "rprivate", "HostToContainer": "rslave",
               "Bidirectional": "rshared"}

# What the daemon needs from the node: container path -> (host path,
# writable, why). tools/packaging/deploy/README.md "Host unit or DaemonSet".
REQUIRED_MOUNTS = {
    "/sys/fs/cgroup": ("/sys/fs/cgroup", True, "cpuset files of every container"),
    "/sys/fs/bpf": ("/sys/fs/bpf", True, "pinned maps"),
    "/run/containerd/io.containerd.runtime.v2.task":
        ("/run/containerd/io.containerd.runtime.v2.task", False, "containerd's bundles"),
    # At its own path: a bundle names the termination-message file by its
    # host path.
    "/var/lib/kubelet/pods": ("/var/lib/kubelet/pods", True, "termination messages"),
    "/var/lib/prometheus/node-exporter":
        ("/var/lib/prometheus/node-exporter", True, "textfile dir"),
    "/run/cpusetd": ("/run/cpusetd", True, "state dir: status.json, instance lock"),
}


class Unfollowed(Exception):
    """A manifest field the ctr run would not follow."""


def load(path):
    with open(path, encoding="utf-8") as f:
        docs = [d for d in yaml.safe_load_all(f) if d]
    ds = [d for d in docs if d.get("kind") == "DaemonSet"]
    if len(ds) != 1:
        raise Unfollowed(f"{path}: {len(ds)} DaemonSets, want 1")
    cms = {d["metadata"]["name"]: d.get("data", {}) for d in docs if d.get("kind") == "ConfigMap"}
    return ds[0], cms


def daemon_container(ds):
    ctrs = ds["spec"]["template"]["spec"].get("containers", [])
    if len(ctrs) != 1:
        raise Unfollowed(f"{len(ctrs)} containers, the run has one")
    return ctrs[0]


def quantity_bytes(q):
    """Kubernetes memory quantity ("256Mi", "1G", "1048576") -> bytes."""
    units = {"Ki": 1 << 10, "Mi": 1 << 20, "Gi": 1 << 30, "Ti": 1 << 40,
             "k": 10**3, "M": 10**6, "G": 10**9, "T": 10**12}
    q = str(q)
    for u, m in units.items():
        if q.endswith(u):
            return int(float(q[:-len(u)]) * m)
    return int(q)


def exec_probe(probe, what):
    if not probe:
        return None
    if set(probe) - {"exec", "periodSeconds", "timeoutSeconds", "failureThreshold",
                     "initialDelaySeconds", "successThreshold"}:
        raise Unfollowed(f"{what}: only exec probes are run")
    return probe["exec"]["command"]


def run_spec(path):
    ds, cms = load(path)
    pod = ds["spec"]["template"]["spec"]
    for k in pod:
        if k not in POD_FOLLOWED | POD_SCHEDULING:
            raise Unfollowed(f"pod spec field {k!r}")
    c = daemon_container(ds)
    for k in c:
        if k not in CTR_FOLLOWED:
            raise Unfollowed(f"container field {k!r}")
    sc = c.get("securityContext", {})
    if set(sc) - {"privileged"}:
        raise Unfollowed(f"securityContext fields {sorted(set(sc) - {'privileged'})}")
    env = []
    for e in c.get("env", []):
        if set(e) != {"name", "value"}:
            raise Unfollowed(f"env {e.get('name')!r}: only name/value pairs")
        env.append(f"{e['name']}={e['value']}")
    res = c.get("resources", {})
    limits = res.get("limits", {})
    if set(limits) - {"memory"}:
        raise Unfollowed(f"resource limits {sorted(set(limits) - {'memory'})}")
    vols = {v["name"]: v for v in pod.get("volumes", [])}
    mounts = []
    for m in c.get("volumeMounts", []):
        if set(m) - MOUNT_KEYS:
            raise Unfollowed(f"volumeMount {m['name']}: {sorted(set(m) - MOUNT_KEYS)}")
        v = vols.get(m["name"])
        if v is None:
            raise Unfollowed(f"volumeMount {m['name']}: no such volume")
        prop = m.get("mountPropagation")
        if prop not in PROPAGATION:
            raise Unfollowed(f"volumeMount {m['name']}: mountPropagation {prop}")
        out = {"name": m["name"], "dst": m["mountPath"], "ro": bool(m.get("readOnly")),
               "propagation": PROPAGATION[prop]}
        if "hostPath" in v and set(v) == {"name", "hostPath"}:
            if "subPath" in m:
                raise Unfollowed(f"volumeMount {m['name']}: subPath of a hostPath")
            out.update(kind="hostPath", host=v["hostPath"]["path"],
                       type=v["hostPath"].get("type", ""))
        elif "configMap" in v and set(v) == {"name", "configMap"}:
            cm = v["configMap"]
            if set(cm) != {"name"} or cm["name"] not in cms:
                raise Unfollowed(f"volume {m['name']}: configMap {cm.get('name')} not in the manifest")
            if "subPath" not in m or m["subPath"] not in cms[cm["name"]]:
                raise Unfollowed(f"volumeMount {m['name']}: a ConfigMap is run as one file (subPath)")
            out.update(kind="configMap", key=m["subPath"], data=cms[cm["name"]][m["subPath"]])
        else:
            raise Unfollowed(f"volume {m['name']}: only hostPath and configMap")
        mounts.append(out)
    # Parents before children (/var/lib/kubelet before .../pods), as the
    # runtimes order them.
    mounts.sort(key=lambda x: x["dst"].rstrip("/").count("/"))
    return {
        "image": c["image"],
        "command": c.get("command", []),
        "args": c.get("args", []),
        "env": env,
        "privileged": bool(sc.get("privileged")),
        "host_pid": bool(pod.get("hostPID")),
        "host_network": bool(pod.get("hostNetwork")),
        "memory_limit": quantity_bytes(limits["memory"]) if "memory" in limits else 0,
        "startup": exec_probe(c.get("startupProbe"), "startupProbe"),
        "liveness": exec_probe(c.get("livenessProbe"), "livenessProbe"),
        "mounts": mounts,
    }


def check(path):
    results = []

    def ok(name, cond):
        results.append(bool(cond))
        print(("ok - " if cond else "not ok - ") + "deploy: " + name)

    ds, cms = load(path)
    meta = ds["metadata"]
    spec = ds["spec"]
    pod = spec["template"]["spec"]
    c = daemon_container(ds)
    ok("namespace kube-system (system-node-critical is admitted there)",
       meta.get("namespace") == "kube-system")
    ok("selector matches the pod template's labels",
       all(spec["template"]["metadata"]["labels"].get(k) == v
           for k, v in spec["selector"]["matchLabels"].items()))
    ok("privileged", c.get("securityContext", {}).get("privileged") is True)
    ok("hostPID", pod.get("hostPID") is True)
    ok("hostNetwork (CPU hotplug uevents)", pod.get("hostNetwork") is True)
    ok("priorityClassName system-node-critical",
       pod.get("priorityClassName") == "system-node-critical")
    ok("tolerates every taint (operator Exists, no key, no effect)",
       any(t == {"operator": "Exists"} for t in pod.get("tolerations", [])))
    ru = spec.get("updateStrategy", {})
    ok("updateStrategy RollingUpdate, maxUnavailable 1, maxSurge 0 (one daemon per node)",
       ru.get("type") == "RollingUpdate" and
       ru.get("rollingUpdate", {}).get("maxUnavailable") == 1 and
       ru.get("rollingUpdate", {}).get("maxSurge") == 0)
    res = c.get("resources", {})
    ok("resource requests of cpu and memory",
       {"cpu", "memory"} <= set(res.get("requests", {})))
    ok("a memory limit at least the request, no CPU limit (throttling delays placements)",
       "memory" in res.get("limits", {}) and "cpu" not in res.get("limits", {}) and
       quantity_bytes(res["limits"]["memory"]) >= quantity_bytes(res["requests"]["memory"]))
    live = c.get("livenessProbe", {})
    cmd = live.get("exec", {}).get("command", [])
    ok("livenessProbe execs `cpusetctl status` (exit 3 on a stale heartbeat)",
       cmd[:2] == ["cpusetctl", "status"])
    # The heartbeat is stale after 3 export intervals + 5 s (50 s by
    # default): a probe that gives up sooner would kill a healthy daemon.
    ok("liveness gives up no sooner than a stale heartbeat (>= 50 s)",
       live.get("periodSeconds", 10) * live.get("failureThreshold", 3) >= 50)
    ok("startupProbe covers BPF loading and the first sync (>= 60 s)",
       c.get("startupProbe", {}).get("periodSeconds", 10) *
       c.get("startupProbe", {}).get("failureThreshold", 3) >= 60)
    vols = {v["name"]: v for v in pod.get("volumes", [])}
    by_dst = {m["mountPath"]: m for m in c.get("volumeMounts", [])}
    for dst, (host, rw, why) in REQUIRED_MOUNTS.items():
        m = by_dst.get(dst)
        v = vols.get(m["name"], {}) if m else {}
        ok(f"hostPath {host} at {dst}{' read-write' if rw else ''} ({why})",
           v.get("hostPath", {}).get("path") == host and (not rw or not m.get("readOnly")))
    for dst in ("/run/containerd/io.containerd.runtime.v2.task", "/var/lib/kubelet/pods"):
        ok(f"{dst}: mountPropagation HostToContainer (no stale copies of the host's mounts)",
           by_dst.get(dst, {}).get("mountPropagation") == "HostToContainer")
    cfg = next((m for m in c.get("volumeMounts", [])
                if "configMap" in vols.get(m["name"], {})), None)
    cm_name = vols[cfg["name"]]["configMap"]["name"] if cfg else None
    ok("config: a ConfigMap of the manifest, mounted as a file (subPath) at --config's path",
       cfg is not None and cm_name in cms and cfg.get("subPath") in cms[cm_name] and
       cfg["mountPath"] in c.get("args", []) + c.get("command", []))
    try:
        run_spec(path)
        ok("every pod and container field is one the containerd test runs", True)
    except Unfollowed as e:
        ok(f"every pod and container field is one the containerd test runs ({e})", False)
    return 0 if all(results) else 1


def main():
    if len(sys.argv) != 3 or sys.argv[1] not in ("check", "run-spec"):
        print(__doc__, file=sys.stderr)
        return 2
    if sys.argv[1] == "check":
        return check(sys.argv[2])
    try:
        print(json.dumps(run_spec(sys.argv[2]), indent=1))
    except Unfollowed as e:
        print(f"check-daemonset: the run does not follow: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
