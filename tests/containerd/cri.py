#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""A small CRI client for the containerd lane: makes the calls kubelet makes
(RunPodSandbox, CreateContainer, StartContainer, ContainerStatus,
UpdateContainerResources, StopContainer, RemoveContainer, StopPodSandbox,
RemovePodSandbox), in kubelet's order, over the runtime.v1 gRPC API of a containerd socket.

    cri.py gen OUTDIR                       generate the stubs from cri.proto
    cri.py [common options] COMMAND ...     (see --help of each command)

Common options: --socket (containerd's gRPC socket), --gen (the generated
stubs), --state (this client's record of the pods it ran: their sandbox
config, which kubelet passes again to CreateContainer), --pods-dir
(kubelet's pods directory, where the termination message files live).
Debian's python3-grpcio and python3-grpc-tools only: run it with
/usr/bin/python3.
"""
import argparse
import base64
import json
import os
import secrets
import shlex
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
CALL_TIMEOUT = 60	# seconds, for every RPC

pb = None
rpc = None


def generate(outdir):
    os.makedirs(outdir, exist_ok=True)
    return subprocess.call([sys.executable, "-m", "grpc_tools.protoc", "-I", HERE,
                            "--python_out=" + outdir, "--grpc_python_out=" + outdir,
                            os.path.join(HERE, "cri.proto")])


def load(gen):
    global pb, rpc
    sys.path.insert(0, gen)
    import cri_pb2
    import cri_pb2_grpc
    pb, rpc = cri_pb2, cri_pb2_grpc


class Client:
    def __init__(self, socket):
        import grpc
        self.grpc = grpc
        self.channel = grpc.insecure_channel("unix://" + socket)
        self.rt = rpc.RuntimeServiceStub(self.channel)
        self.img = rpc.ImageServiceStub(self.channel)

    def call(self, svc, name, req):
        return getattr(svc, name)(req, timeout=CALL_TIMEOUT)


def die(msg, code=1):
    print("cri.py: " + msg, file=sys.stderr)
    sys.exit(code)


def kv_list(items):
    out = {}
    for it in items or []:
        if "=" not in it:
            die("expected KEY=VALUE, got %r" % it, 2)
        k, v = it.split("=", 1)
        out[k] = v
    return out


# --- the client's record of its pods ---

def pod_file(state, name):
    return os.path.join(state, name + ".json")


def save_pod(state, name, pod_id, cfg):
    os.makedirs(state, exist_ok=True)
    tmp = pod_file(state, name) + ".tmp"
    with open(tmp, "w") as f:
        json.dump({"id": pod_id, "uid": cfg.metadata.uid,
                   "config": base64.b64encode(cfg.SerializeToString()).decode()}, f)
    os.rename(tmp, pod_file(state, name))


def load_pod(state, name):
    try:
        with open(pod_file(state, name)) as f:
            d = json.load(f)
    except OSError as e:
        die("unknown pod %s: %s" % (name, e))
    cfg = pb.PodSandboxConfig()
    cfg.ParseFromString(base64.b64decode(d["config"]))
    return d["id"], cfg


# --- commands ---

def cmd_version(c, a):
    r = c.call(c.rt, "Version", pb.VersionRequest(version="v1"))
    print(r.runtime_name, r.runtime_version, r.runtime_api_version)


def cmd_image_status(c, a):
    r = c.call(c.img, "ImageStatus", pb.ImageStatusRequest(image=pb.ImageSpec(image=a.image)))
    if not r.image.id:
        die("image %s not known to the CRI" % a.image)
    print(r.image.id, " ".join(r.image.repo_tags))


def cmd_run_pod(c, a):
    cfg = pb.PodSandboxConfig()
    cfg.metadata.name = a.name
    cfg.metadata.uid = a.uid
    cfg.metadata.namespace = a.namespace
    cfg.metadata.attempt = 0
    cfg.log_directory = os.path.join(a.logs, "%s_%s_%s" % (a.namespace, a.name, a.uid))
    os.makedirs(cfg.log_directory, exist_ok=True)
    # kubelet's labels and annotations, then the pod's own annotations.
    cfg.labels.update({"io.kubernetes.pod.name": a.name, "io.kubernetes.pod.namespace": a.namespace,
                       "io.kubernetes.pod.uid": a.uid})
    cfg.annotations.update({"kubernetes.io/config.source": "api",
                            "kubernetes.io/config.seen": time.strftime("%Y-%m-%dT%H:%M:%SZ")})
    cfg.annotations.update(kv_list(a.annotation))
    cfg.labels.update(kv_list(a.label))
    cfg.linux.cgroup_parent = a.cgroup_parent
    ns = cfg.linux.security_context.namespace_options
    ns.network = pb.NODE
    ns.pid = pb.CONTAINER
    ns.ipc = pb.POD
    r = c.call(c.rt, "RunPodSandbox", pb.RunPodSandboxRequest(config=cfg))
    save_pod(a.state, a.name, r.pod_sandbox_id, cfg)
    print(r.pod_sandbox_id)


def termination_file(pods_dir, uid, name):
    """kubelet: an empty host file per container attempt, bind-mounted at
    /dev/termination-log."""
    d = os.path.join(pods_dir, uid, "containers", name)
    os.makedirs(d, exist_ok=True)
    path = os.path.join(d, secrets.token_hex(4))
    with open(path, "w"):
        pass
    os.chmod(path, 0o666)
    return path


def status_dict(c, cid):
    r = c.call(c.rt, "ContainerStatus", pb.ContainerStatusRequest(container_id=cid, verbose=True))
    s = r.status
    pid = 0
    cpu = {}
    try:
        info = json.loads(r.info.get("info", "{}"))
        pid = int(info.get("pid", 0))
        # The runtime's own record of the container (its OCI spec, as
        # containerd keeps it and updates it on UpdateContainerResources
        # and NRI's adjustments and updates): cpus and mems.
        cpu = ((info.get("runtimeSpec") or {}).get("linux") or {}).get("resources") or {}
        cpu = cpu.get("cpu") or {}
    except (ValueError, AttributeError):
        pass
    # The CRI's own field (ContainerStatus.resources, containerd 1.7 and
    # 2.x: copied from the spec at create and at every resource update);
    # null when the runtime reports none.
    res = None
    if s.HasField("resources") and s.resources.HasField("linux"):
        l = s.resources.linux
        res = {"cpus": l.cpuset_cpus, "mems": l.cpuset_mems, "shares": l.cpu_shares,
               "quota": l.cpu_quota, "period": l.cpu_period}
    return {"id": s.id, "name": s.metadata.name, "attempt": s.metadata.attempt,
            "state": pb.ContainerState.Name(s.state), "exit_code": s.exit_code,
            "reason": s.reason, "message": s.message, "pid": pid,
            "started_at": s.started_at, "finished_at": s.finished_at,
            "cpus": cpu.get("cpus", ""), "mems": cpu.get("mems", ""),
            "quota": cpu.get("quota", 0), "period": cpu.get("period", 0),
            "resources": res}


def wait_state(c, cid, state, timeout):
    deadline = time.monotonic() + timeout
    while True:
        st = status_dict(c, cid)
        if st["state"] == state:
            return st, True
        if time.monotonic() >= deadline:
            return st, False
        time.sleep(0.05)


def kubelet_cpu(res, request, limit):
    """kubelet's arithmetic (pkg/kubelet/cm/helpers_linux.go): shares from
    the request (the limit when none; at least 2), quota from the limit
    (millicores) over a 100 ms period."""
    req = request if request is not None else limit
    res.cpu_shares = max(2, req * 1024 // 1000) if req else 2
    if limit:
        res.cpu_period = 100000
        res.cpu_quota = limit * 100000 // 1000


def container_config(a, sbx, attempt, term):
    cfg = pb.ContainerConfig()
    cfg.metadata.name = a.name
    cfg.metadata.attempt = attempt
    cfg.image.image = a.image
    cfg.command.extend(shlex.split(a.cmd))
    cfg.envs.add(key="PATH", value="/bin")
    cfg.mounts.add(container_path="/dev/termination-log", host_path=term, readonly=False)
    cfg.labels.update({"io.kubernetes.container.name": a.name,
                       "io.kubernetes.pod.name": sbx.metadata.name,
                       "io.kubernetes.pod.namespace": sbx.metadata.namespace,
                       "io.kubernetes.pod.uid": sbx.metadata.uid})
    cfg.annotations.update({"io.kubernetes.container.restartCount": str(attempt),
                            "io.kubernetes.container.terminationMessagePath": "/dev/termination-log",
                            "io.kubernetes.container.terminationMessagePolicy": "File",
                            "io.kubernetes.pod.terminationGracePeriod": "30"})
    cfg.log_path = "%s/%d.log" % (a.name, attempt)
    os.makedirs(os.path.join(sbx.log_directory, a.name), exist_ok=True)
    res = cfg.linux.resources
    kubelet_cpu(res, a.cpu_request, a.cpu_limit)
    if a.memory_limit:
        res.memory_limit_in_bytes = a.memory_limit
    res.oom_score_adj = -997 if a.guaranteed else 1000
    ns = cfg.linux.security_context.namespace_options
    ns.network = pb.NODE
    ns.pid = pb.CONTAINER
    ns.ipc = pb.POD
    return cfg


def cmd_run_container(c, a):
    """One JSON line per attempt: id, termination (the host file),
    started, error, create_ms and start_ms (each call's round trip, for
    tools/bench/cri.sh), and with --wait-exit the status it exited with.
    Attempts are sequential, each after the previous one exited (as
    kubelet restarts a container)."""
    pod_id, sbx = load_pod(a.state, a.pod)
    rc = 0
    for attempt in range(a.attempt, a.attempt + a.attempts):
        term = termination_file(a.pods_dir, sbx.metadata.uid, a.name)
        cfg = container_config(a, sbx, attempt, term)
        out = {"id": "", "attempt": attempt, "termination": term, "started": False, "error": ""}
        t0 = time.monotonic()
        try:
            r = c.call(c.rt, "CreateContainer",
                       pb.CreateContainerRequest(pod_sandbox_id=pod_id, config=cfg, sandbox_config=sbx))
            out["id"] = r.container_id
        except c.grpc.RpcError as e:
            out["error"] = "CreateContainer: %s" % e.details()
            print(json.dumps(out), flush=True)
            rc = 2
            continue
        t1 = time.monotonic()
        out["create_ms"] = round((t1 - t0) * 1000, 2)
        try:
            c.call(c.rt, "StartContainer", pb.StartContainerRequest(container_id=out["id"]))
            out["started"] = True
        except c.grpc.RpcError as e:
            out["error"] = "StartContainer: %s" % e.details()
            rc = rc or 3
        out["start_ms"] = round((time.monotonic() - t1) * 1000, 2)
        if a.wait_exit:
            out["status"], _ = wait_state(c, out["id"], "CONTAINER_EXITED", a.wait_exit)
        print(json.dumps(out), flush=True)
    return rc


def cmd_update_resources(c, a):
    """UpdateContainerResources as kubelet sends it: for an in-place
    resize, the container's whole CPU (and memory) resources from its new
    request and limit; for its CPU manager's rewrite, cpuset_cpus alone
    (--cpuset-cpus without --cpu-limit/--cpu-request)."""
    res = pb.LinuxContainerResources()
    if a.cpu_limit is not None or a.cpu_request is not None:
        kubelet_cpu(res, a.cpu_request, a.cpu_limit)
    if a.memory_limit:
        res.memory_limit_in_bytes = a.memory_limit
    if a.cpuset_cpus is not None:
        res.cpuset_cpus = a.cpuset_cpus
    if a.cpuset_mems is not None:
        res.cpuset_mems = a.cpuset_mems
    c.call(c.rt, "UpdateContainerResources",
           pb.UpdateContainerResourcesRequest(container_id=a.id, linux=res))


def cmd_status(c, a):
    print(json.dumps(status_dict(c, a.id)))


def cmd_wait(c, a):
    st, ok = wait_state(c, a.id, a.state, a.timeout)
    print(json.dumps(st))
    return 0 if ok else 1


def list_containers(c, pod_id=""):
    f = pb.ContainerFilter(pod_sandbox_id=pod_id)
    return c.call(c.rt, "ListContainers", pb.ListContainersRequest(filter=f)).containers


def list_pods(c):
    return c.call(c.rt, "ListPodSandbox", pb.ListPodSandboxRequest()).items


def remove_pod(c, pod_id):
    """kubelet's order: stop the containers, stop the sandbox; the garbage
    collector then removes containers and sandbox."""
    ctrs = list_containers(c, pod_id)
    for ct in ctrs:
        c.call(c.rt, "StopContainer", pb.StopContainerRequest(container_id=ct.id, timeout=0))
    c.call(c.rt, "StopPodSandbox", pb.StopPodSandboxRequest(pod_sandbox_id=pod_id))
    for ct in ctrs:
        c.call(c.rt, "RemoveContainer", pb.RemoveContainerRequest(container_id=ct.id))
    c.call(c.rt, "RemovePodSandbox", pb.RemovePodSandboxRequest(pod_sandbox_id=pod_id))


def cmd_remove_pod(c, a):
    pod_id, _ = load_pod(a.state, a.pod)
    remove_pod(c, pod_id)
    os.unlink(pod_file(a.state, a.pod))


def cmd_remove_all(c, a):
    rc = 0
    for p in list_pods(c):
        try:
            remove_pod(c, p.id)
        except c.grpc.RpcError as e:
            print("cri.py: removing pod %s: %s" % (p.metadata.name, e.details()), file=sys.stderr)
            rc = 1
    return rc


def cmd_ps(c, a):
    """Every container and sandbox: ID, pod, name (POD for a sandbox), state."""
    pods = {p.id: p for p in list_pods(c)}
    for p in pods.values():
        print(p.id, p.metadata.name, "POD", pb.PodSandboxState.Name(p.state))
    for ct in list_containers(c):
        p = pods.get(ct.pod_sandbox_id)
        print(ct.id, p.metadata.name if p else "?", ct.metadata.name, pb.ContainerState.Name(ct.state))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--socket", default=os.environ.get("CRI_SOCKET", ""))
    ap.add_argument("--gen", default=os.environ.get("CRI_GEN", ""))
    ap.add_argument("--state", default=os.environ.get("CRI_STATE", ""))
    ap.add_argument("--pods-dir", default=os.environ.get("CRI_PODS_DIR", ""))
    ap.add_argument("--logs", default=os.environ.get("CRI_LOGS", "/tmp"))
    sub = ap.add_subparsers(dest="action", required=True)
    p = sub.add_parser("gen")
    p.add_argument("outdir")
    sub.add_parser("version")
    p = sub.add_parser("image-status")
    p.add_argument("image")
    p = sub.add_parser("run-pod")
    p.add_argument("name")
    p.add_argument("--uid", required=True)
    p.add_argument("--namespace", default="default")
    p.add_argument("--cgroup-parent", required=True)
    p.add_argument("--annotation", action="append", help="KEY=VALUE, a pod annotation")
    p.add_argument("--label", action="append", help="KEY=VALUE, a pod label")
    p = sub.add_parser("run-container", help="CreateContainer + StartContainer; prints JSON, "
                       "exit 0 when started, 2 when one was not created, 3 when not started")
    p.add_argument("pod")
    p.add_argument("name")
    p.add_argument("--image", required=True)
    p.add_argument("--attempt", type=int, default=0)
    p.add_argument("--attempts", type=int, default=1, help="run N attempts, one after another")
    p.add_argument("--cpu-limit", type=int, help="millicores")
    p.add_argument("--cpu-request", type=int, help="millicores (default: the limit)")
    p.add_argument("--memory-limit", type=int, help="bytes")
    p.add_argument("--guaranteed", action="store_true", help="oom_score_adj as for Guaranteed")
    p.add_argument("--wait-exit", type=float, default=0, help="then wait up to S s for it to exit")
    p.add_argument("--cmd", default="sleep 3600", help="the command, split as by a shell")
    p = sub.add_parser("status", help="ContainerStatus as JSON: cpus, mems, quota, period from "
                       "the runtime's spec (verbose info), resources from the CRI's own field")
    p.add_argument("id")
    p = sub.add_parser("update-resources", help="UpdateContainerResources, as kubelet's in-place "
                       "resize or its CPU manager sends it")
    p.add_argument("id")
    p.add_argument("--cpu-limit", type=int, help="millicores")
    p.add_argument("--cpu-request", type=int, help="millicores (default: the limit)")
    p.add_argument("--memory-limit", type=int, help="bytes")
    p.add_argument("--cpuset-cpus", help="a cpulist, as kubelet's CPU manager writes it")
    p.add_argument("--cpuset-mems", help="a list of NUMA nodes")
    p = sub.add_parser("wait")
    p.add_argument("id")
    p.add_argument("state", choices=["CONTAINER_CREATED", "CONTAINER_RUNNING", "CONTAINER_EXITED"])
    p.add_argument("--timeout", type=float, default=30)
    p = sub.add_parser("remove-pod")
    p.add_argument("pod")
    sub.add_parser("remove-all")
    sub.add_parser("ps")
    a = ap.parse_args()

    if a.action == "gen":
        return generate(a.outdir)
    if not a.socket or not a.gen:
        die("--socket and --gen (or CRI_SOCKET, CRI_GEN) are required", 2)
    if a.action in ("run-pod", "run-container", "remove-pod") and not a.state:
        die("--state (or CRI_STATE) is required", 2)
    if a.action == "run-container" and not a.pods_dir:
        die("--pods-dir (or CRI_PODS_DIR) is required", 2)
    load(a.gen)
    c = Client(a.socket)
    fn = globals()["cmd_" + a.action.replace("-", "_")]
    try:
        return fn(c, a) or 0
    except c.grpc.RpcError as e:
        die("%s: %s: %s" % (a.action, e.code().name, e.details()))


if __name__ == "__main__":
    sys.exit(main())
