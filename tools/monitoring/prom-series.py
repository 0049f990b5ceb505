#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Series count of a cpusetd .prom file, per CPU, per container and per node.

    tools/monitoring/prom-series.py FILE.prom [--families]

A series is one sample line. It is per CPU when it has a "cpu" label, per
container when it has a "container_id" label (a cpu_owner_info line has
both and is counted per CPU: there is one per CPU whoever owns it), and
per node otherwise. The per-CPU and per-container figures are divided by
the CPUs and containers the file names, so they extrapolate to a bigger
node. --families adds one line per metric family.
"""
import re
import sys

SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{.*\})?\s+\S+$')
LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')
TYPE = re.compile(r'^# TYPE (\S+) (\S+)$')


def family_of(name, hist):
    for suffix in ('_bucket', '_sum', '_count'):
        if name.endswith(suffix) and name[:-len(suffix)] in hist:
            return name[:-len(suffix)]
    return name


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    hist, fams = set(), {}
    cpus, cts = set(), set()
    scope_n = {'cpu': 0, 'container': 0, 'node': 0}
    with open(sys.argv[1], encoding='utf-8') as f:
        for line in f:
            line = line.rstrip('\n')
            m = TYPE.match(line)
            if m:
                if m.group(2) == 'histogram':
                    hist.add(m.group(1))
                continue
            if not line or line.startswith('#'):
                continue
            m = SAMPLE.match(line)
            if not m:
                sys.exit('not a sample line: ' + line)
            labels = dict(LABEL.findall(m.group(2) or ''))
            if 'cpu' in labels:
                scope = 'cpu'
                cpus.add(labels['cpu'])
            elif labels.get('container_id'):
                scope = 'container'
                cts.add(labels['container_id'])
            else:
                scope = 'node'
            scope_n[scope] += 1
            fam = family_of(m.group(1), hist)
            fams.setdefault(fam, {'cpu': 0, 'container': 0, 'node': 0})[scope] += 1
    total = sum(scope_n.values())
    per_cpu = scope_n['cpu'] / len(cpus) if cpus else 0
    per_ct = scope_n['container'] / len(cts) if cts else 0
    print(f'series {total}: per node {scope_n["node"]}, '
          f'per CPU {per_cpu:g} ({len(cpus)} CPUs), '
          f'per container {per_ct:g} ({len(cts)} containers)')
    if '--families' in sys.argv[2:]:
        for fam, n in sorted(fams.items()):
            print(f'  {fam}: node {n["node"]}, cpu {n["cpu"]}, container {n["container"]}')


if __name__ == '__main__':
    main()
