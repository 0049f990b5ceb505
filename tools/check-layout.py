#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The code map holds: user/README.md "Code map" as checks, TAP lines out.

    tools/check-layout.py BUILD_DIR

1. Each folder includes only the folders below it (ALLOWED).
2. No call cycle between files: a graph of "file A calls a function file B
   defines", from the symbols of BUILD_DIR's objects (nm), has no cycle.
   An object whose source is gone (moved or deleted: build/obj keeps it
   after a rebase until make clean) is skipped, so a stale one neither
   fails the checks nor adds edges the code no longer has.
3. No include cycle between headers.
4. Every header under user/ and cgroupfs/ refuses a BPF compile (#error
   under __bpf__): only maps/ is shared with the BPF programs.
4b. A folder's *_internal.h (what its files share) is included by no file
   outside that folder: the others use its public header.
5. Every source file names its licence on an SPDX line within its first
   three lines: GPL-2.0-only OR BSD-2-Clause for bpf/ and maps/cpusetd.h
   (the kernel side), Apache-2.0 for the rest (LICENSES/README.md).
6. tools/ has one room per job (TOOL_ROOMS): each file sits in the room
   its job names, and no file sits outside a room.
Exit status 1 when a check fails.
"""
import fnmatch
import os
import re
import subprocess
import sys

# folder -> the folders it may include or call. The pipeline, from the
# bottom: base <- cgroupfs, topo, meta <- alloc <- policy <- config <-
# controller <- daemon -> export; telemetry and the BPF loaders beside
# it; nri (the NRI wire layer) on base and meta, used by the controller
# and the daemon (and by config, for its defaults). enforce (plan->write)
# under the controller, on cgroupfs and the placement map. Beside the
# daemon, under it: reject (termination messages), process (the daemon's
# lock and own scheduling), release (cpusetd --release; the one answer it
# needs from the controller comes in as a function, never by a call into
# controller/). maps/ is the BPF ABI, open to all.
ALLOWED = {
    'base': set(),
    'cgroupfs': {'base'},
    'topo': {'base'},
    'meta': {'base'},
    'alloc': {'base', 'topo'},
    'policy': {'base', 'topo', 'meta', 'alloc'},
    'config': {'base', 'topo', 'meta', 'alloc', 'policy', 'nri'},
    'telemetry': {'base'},
    'host': {'base', 'cgroupfs'},
    'enforce': {'base', 'cgroupfs', 'bpf', 'telemetry'},
    'bpf': {'base', 'telemetry'},
    'export': {'base', 'topo', 'meta', 'alloc', 'policy', 'telemetry'},
    'nri': {'base', 'meta'},
    'reject': {'base', 'meta'},
    'process': {'base', 'config'},
    'release': {'base', 'cgroupfs', 'topo', 'config', 'host', 'process'},
    'controller': {'base', 'cgroupfs', 'topo', 'meta', 'alloc', 'policy',
                   'config', 'telemetry', 'bpf', 'export', 'host', 'nri',
                   'reject', 'enforce'},
    'daemon': {'base', 'cgroupfs', 'topo', 'meta', 'alloc', 'policy',
               'config', 'telemetry', 'bpf', 'export', 'host', 'nri',
               'reject', 'process', 'release', 'controller'},
    'tools': {'base', 'cgroupfs', 'topo', 'meta', 'alloc', 'policy',
              'config', 'telemetry', 'export'},
}
SOURCE_DIRS = ('user', 'cgroupfs', 'tools')

# tools/ by job: folder -> the file names (fnmatch patterns) it may hold.
# cpusetctl's sources are all of tools/cpusetctl/ (the Makefile builds
# build/cpusetctl from them); what ships or installs cpusetd (the Debian
# package, the OCI image, the DaemonSet) is tools/packaging/; what a build
# or test host needs installed (make deps) is tools/deps/; the benchmarks
# (make bench; their figures are in BENCHMARKS.md) are tools/bench/.
TOOL_ROOMS = {
    'tools': ['README.md', 'check-layout.py', 'demo.sh', 'verify-unit.sh'],
    'tools/bench': ['*.c', '*.h', '*.sh'],
    'tools/cpusetctl': ['cpusetctl.c', 'ctl.h', 'ctl_*.c', 'ctl_*.h'],
    'tools/deps': ['deps.sh', 'deps-*.sh'],
    'tools/man': ['*.in', '*.py'],
    'tools/monitoring': ['README.md', '*.py', '*.yml', '*.json'],
    'tools/packaging': ['build-deb.sh'],
    'tools/packaging/debian': ['*'],
    'tools/packaging/debian/source': ['format'],
    'tools/packaging/deploy': ['README.md', '*.py', '*.yaml', 'cpusetd.conf'],
    'tools/packaging/image': ['build-image.sh'],
}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)

results = []


def check(ok, name, detail=''):
    results.append(ok)
    print(('ok - ' if ok else 'not ok - ') + name)
    if not ok and detail:
        for line in detail.rstrip().split('\n'):
            print('#   ' + line)


def folder(path):
    parts = path.split('/')
    if parts[0] == 'user' and len(parts) > 2:
        return parts[1]
    if parts[0] in ('cgroupfs', 'tools', 'maps'):
        return parts[0]
    return None


def sources():
    out = []
    for top in SOURCE_DIRS:
        for d, _, names in os.walk(top):
            out += [os.path.join(d, n) for n in names
                    if n.endswith(('.c', '.h'))]
    return sorted(out)


def resolve(src, inc):
    """The repository path an #include "inc" in src names, or None."""
    for cand in (os.path.join(os.path.dirname(src), inc), inc):
        cand = os.path.normpath(cand)
        if os.path.isfile(cand):
            return cand
    return None     # generated (skeletons, vmlinux.h)


def includes(files):
    graph = {}
    for f in files:
        text = open(f).read()
        graph[f] = [r for r in (resolve(f, i) for i in INCLUDE.findall(text)) if r]
    return graph


def cycles(graph):
    """Strongly connected components with more than one node (Tarjan)."""
    index, low, on, stack, out = {}, {}, set(), [], []
    counter = [0]
    sys.setrecursionlimit(10000)

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def calls(build):
    """file -> files whose functions or data it uses, from nm."""
    defined, used = {}, {}
    objroot = os.path.join(build, 'obj')
    for d, _, names in os.walk(objroot):
        for n in names:
            if not n.endswith('.o'):
                continue
            obj = os.path.join(d, n)
            src = os.path.relpath(obj, objroot)[:-2] + '.c'
            if folder(src) is None or not os.path.exists(src):
                continue
            nm = subprocess.run(['nm', '-P', obj], capture_output=True,
                                text=True, check=True).stdout
            for line in nm.splitlines():
                fields = line.split()
                if len(fields) < 2:
                    continue
                sym, kind = fields[0], fields[1]
                if kind == 'U':
                    used.setdefault(src, set()).add(sym)
                elif kind in 'TDBRV':
                    defined[sym] = src
    graph = {}
    for src, syms in used.items():
        graph[src] = sorted({defined[s] for s in syms
                             if s in defined and defined[s] != src})
    return graph


def main():
    build = sys.argv[1] if len(sys.argv) > 1 else 'build'
    os.chdir(os.path.join(os.path.dirname(os.path.abspath(__file__)), '..'))
    files = sources()
    inc = includes(files)
    call = calls(build)

    for name in sorted(ALLOWED):
        bad = []
        for f in files:
            if folder(f) != name:
                continue
            for g in inc[f]:
                to = folder(g)
                if to not in (None, name, 'maps') and to not in ALLOWED[name]:
                    bad.append(f'{f} includes {g}')
            for g in call.get(f[:-2] + '.c', []) if f.endswith('.c') else []:
                to = folder(g)
                if to not in (None, name) and to not in ALLOWED[name]:
                    bad.append(f'{f} calls into {g}')
        allowed = ', '.join(sorted(ALLOWED[name])) or 'nothing'
        check(not bad, f'{name}/ uses only {allowed}', '\n'.join(bad))

    found = cycles(call)
    check(not found, 'no call cycle between files',
          '\n'.join(' <-> '.join(c) for c in found))
    found = cycles(inc)
    check(not found, 'no include cycle between headers',
          '\n'.join(' <-> '.join(c) for c in found))

    leaks = [f'{f} includes {g}' for f in files for g in inc[f]
             if g.endswith('_internal.h') and os.path.dirname(g) != os.path.dirname(f)]
    check(not leaks, 'a room\'s *_internal.h is included only in its room',
          '\n'.join(leaks))

    bare = [f for f in files if f.endswith('.h') and folder(f) not in ('tools', None)
            and '__bpf__' not in open(f).read()]
    check(not bare, 'every user-space header refuses a BPF compile',
          '\n'.join(bare))
    check(not unlicensed(), 'every source file has its SPDX line',
          '\n'.join(unlicensed()))
    for room, bad in misplaced_tools():
        check(not bad, f'{room}/ holds only ' + ' '.join(TOOL_ROOMS[room]),
              '\n'.join(bad))
    return 0 if all(results) else 1


def tracked():
    """The files git tracks; in an unpacked tarball, every file but the
    build's."""
    out = subprocess.run(['git', 'ls-files'], capture_output=True, text=True)
    if out.returncode == 0:
        return out.stdout.split()
    return [os.path.relpath(os.path.join(d, f)) for d, dirs, fs in os.walk('.')
            for f in fs if not d.startswith(('./build', './.git'))]


def misplaced_tools():
    """(room, [files in it that are not its job]) per room of TOOL_ROOMS,
    and ('tools', [files in no room at all])."""
    bad = {room: [] for room in TOOL_ROOMS}
    for f in tracked():
        if not f.startswith('tools/'):
            continue
        room, name = os.path.dirname(f), os.path.basename(f)
        if room not in TOOL_ROOMS:
            bad['tools'].append(f'{f}: {room}/ is not a room of TOOL_ROOMS')
        elif not any(fnmatch.fnmatchcase(name, p) for p in TOOL_ROOMS[room]):
            bad[room].append(f'{f}: not one of {room}/\'s files')
    return sorted(bad.items())


BPF_SIDE = 'GPL-2.0-only OR BSD-2-Clause'
SOURCE = re.compile(r'\.(c|h|proto|sh|py|yml|yaml)$|(^|/)Makefile$|^tests/vm/init$'
                    r'|^tools/packaging/debian/(rules|cpusetd\.prerm|cpusetd\.postrm)$|^\.ci/run$')
DATA = ('tests/fixtures/', 'tests/unit/fixtures/', 'tests/fuzz/corpus/')


def unlicensed():
    """Tracked source files whose first three lines lack the right SPDX line."""
    bad = []
    for f in tracked():
        if not SOURCE.search(f) or f.startswith(DATA):
            continue
        want = BPF_SIDE if f.startswith('bpf/') or f == 'maps/cpusetd.h' else 'Apache-2.0'
        with open(f, errors='replace') as fh:
            head = ''.join(fh.readline() for _ in range(3))
        m = re.search(r'SPDX-License-Identifier: (.*?)(?: \*/)?$', head, re.M)
        if not m or m.group(1).strip() != want:
            bad.append(f'{f}: want "{want}"')
    return bad


if __name__ == '__main__':
    sys.exit(main())
