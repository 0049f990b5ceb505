#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Every query of the dashboard and the alert rules names what cpusetd exports.

    tools/monitoring/check-queries.py --prom FILE.prom [--readme README.md] FILE...

FILE.prom is a textfile written by a real daemon (the test makes one with
every family the queries use holding samples). FILE is a Grafana
dashboard (.json: every panel target's expr and every query variable) or
a Prometheus rule file (.yml: every rule's expr). For each query:

- every metric it names is a sample name of FILE.prom (a histogram's
  _bucket/_sum/_count included), and has samples there;
- every label in a selector ({label="..."}) is on a sample of that metric;
- every label in by/without/on/ignoring/group_left/group_right is on a
  sample of a metric the query names, or is a scrape target label
  (instance, job);
- it names at least one cpusetd metric.

With --readme, also the tools/monitoring/README.md "Metrics" section: every family of
FILE.prom has a row in its table; every row names a family of FILE.prom
(the cpusetd_isolation_* gauges are written only with isolate_host, so
they may be missing); a row's labels are the labels of its family's
samples ("*ct*" stands for the four container labels); and its example
queries (```promql blocks) pass the checks above.

Prints TAP lines ("ok - ...", "not ok - ..."); exit 1 when one fails.
So a renamed metric or label fails the check, and so does a README row
left behind.
"""
import json
import re
import sys

import yaml

SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{.*\})?\s+\S+$')
LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')
TYPE = re.compile(r'^# TYPE (\S+) (\S+)$')
TARGET_LABELS = {'instance', 'job'}
CT_LABELS = ['k8s_namespace_name', 'k8s_pod_name', 'k8s_container_name', 'container_id']
# PromQL words that are not metric names (functions are followed by "(").
KEYWORDS = {'by', 'without', 'on', 'ignoring', 'group_left', 'group_right', 'and', 'or',
            'unless', 'bool', 'offset', 'atan2', 'inf', 'nan'}
GROUPING = re.compile(r'\b(by|without|on|ignoring|group_left|group_right)\s*\(([^)]*)\)')
SELECTOR = re.compile(r'([a-zA-Z_:][a-zA-Z0-9_:]*)?\s*\{([^}]*)\}')
MATCHER = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)\s*(=~|!~|!=|=)\s*"((?:[^"\\]|\\.)*)"')
IDENT = re.compile(r'[a-zA-Z_:][a-zA-Z0-9_:]*')

results = []


def check(ok, name, detail=''):
    results.append(ok)
    print(('ok - ' if ok else 'not ok - ') + name)
    if not ok and detail:
        for line in detail.rstrip().split('\n'):
            print('#   ' + line)


def read_prom(path):
    """(labels of each sample name, families {name: type}, labels per family)."""
    names, families, fam_labels = {}, {}, {}
    with open(path, encoding='utf-8') as f:
        for line in f:
            line = line.rstrip('\n')
            m = TYPE.match(line)
            if m:
                families[m.group(1)] = m.group(2)
                fam_labels.setdefault(m.group(1), set())
                continue
            if not line or line.startswith('#'):
                continue
            m = SAMPLE.match(line)
            if not m:
                sys.exit(f'{path}: not a sample line: {line}')
            labels = {k for k, _ in LABEL.findall(m.group(2) or '')}
            names.setdefault(m.group(1), set()).update(labels)
            fam = m.group(1)
            for suffix in ('_bucket', '_sum', '_count'):
                base = fam[:-len(suffix)]
                if fam.endswith(suffix) and families.get(base) == 'histogram':
                    fam = base
            fam_labels.setdefault(fam, set()).update(labels)
    return names, families, fam_labels


def dashboard_queries(path):
    with open(path, encoding='utf-8') as f:
        dash = json.load(f)
    out = []

    def walk(panels):
        for p in panels:
            for t in p.get('targets', []):
                if t.get('expr'):
                    out.append((f'panel "{p.get("title")}" {t.get("refId")}', t['expr']))
            walk(p.get('panels', []))
    walk(dash.get('panels', []))
    for v in dash.get('templating', {}).get('list', []):
        if v.get('type') != 'query':
            continue
        q = v.get('query')
        q = q.get('query') if isinstance(q, dict) else q
        m = re.fullmatch(r'\s*label_values\((.*),\s*([a-zA-Z_]\w*)\s*\)\s*', q or '')
        if m:	# label_values(QUERY, LABEL): QUERY is PromQL, LABEL a label of it
            out.append((f'variable ${v["name"]}', m.group(1), m.group(2)))
        elif q:
            out.append((f'variable ${v["name"]}', q))
    return out


def rule_queries(path):
    with open(path, encoding='utf-8') as f:
        doc = yaml.safe_load(f)
    out = []
    for g in doc.get('groups', []):
        for r in g.get('rules', []):
            out.append((f'rule {r.get("alert") or r.get("record")}', str(r['expr'])))
    return out


def check_query(where, expr, names, extra_label=None):
    """Problems of one query, as a list of strings."""
    problems = []
    text = re.sub(r'\$\{?\w+\}?', '', expr)		# Grafana variables
    text = re.sub(r'\[[^\]]*\]', '', text)		# range and subquery windows
    used = []
    # selectors: metric{matchers} or {matchers}
    for m in SELECTOR.finditer(text):
        metric = m.group(1) if m.group(1) not in KEYWORDS else None
        for label, _, _ in MATCHER.findall(m.group(2)):
            if label == '__name__' or label in TARGET_LABELS:
                continue
            if metric and metric in names and label not in names[metric]:
                problems.append(f'label {label} is not on {metric}')
    grouping = []
    for m in GROUPING.finditer(text):
        grouping += [x.strip() for x in m.group(2).split(',') if x.strip()]
    bare = GROUPING.sub(' ', text)
    bare = re.sub(r'\{[^}]*\}', ' ', bare)
    bare = re.sub(r'"(?:[^"\\]|\\.)*"', ' ', bare)
    for m in IDENT.finditer(bare):
        word = m.group(0)
        after = bare[m.end():].lstrip()
        if word in KEYWORDS or after.startswith('('):
            continue
        if re.fullmatch(r'[0-9.e+-]+', word):
            continue
        used.append(word)
    if not any(w.startswith('cpusetd_') for w in used):
        problems.append('names no cpusetd metric')
    for w in used:
        if w not in names:
            problems.append(f'metric {w} is not in the .prom file')
    have = set(TARGET_LABELS)
    for w in used:
        have |= names.get(w, set())
    for label in grouping + ([extra_label] if extra_label else []):
        if label not in have:
            problems.append(f'label {label} is on none of its metrics')
    return used, problems


def readme_table(path):
    """Rows of the README Metrics table: (names, type, labels or None)."""
    text = open(path, encoding='utf-8').read()
    start = text.index('\n## Metrics')
    end = text.index('\n## ', start + 1)
    rows = []
    for line in text[start:end].split('\n'):
        cells = [c.strip() for c in line.strip().strip('|').split('|')]
        if len(cells) < 4 or not cells[0].startswith('`cpusetd_'):
            continue
        names = re.findall(r'`(cpusetd_\w+)`', cells[0])
        # "`pool` (`shared`, `be`)": values in parentheses are not labels
        labels = re.sub(r'\([^)]*\)', '', cells[2]).replace('*ct*', ', '.join(CT_LABELS))
        labels = {x for x in re.findall(r'[a-z_][a-z0-9_]*', labels.replace('`', ''))}
        rows.append((names, cells[1], labels))
    return rows


def readme_queries(path):
    """The example queries of the README Metrics section: one per line of
    a ```promql block, an indented line continuing the one before."""
    text = open(path, encoding='utf-8').read()
    start = text.index('\n## Metrics')
    end = text.index('\n## ', start + 1)
    out = []
    for block in re.findall(r'```promql\n(.*?)```', text[start:end], re.S):
        for line in block.split('\n'):
            if not line.strip() or line.lstrip().startswith('#'):
                continue
            if line[0] in ' \t' and out:
                out[-1] = (out[-1][0], out[-1][1] + ' ' + line.strip())
            else:
                out.append((f'README example {line.strip()[:40]}', line.strip()))
    return out


def check_readme(path, families, fam_labels, names):
    bad = []
    queries = readme_queries(path)
    for q in queries:
        bad += [f'{q[0]}: {p}' for p in check_query(q[0], q[1], names)[1]]
    check(queries and not bad, f'README Metrics: {len(queries)} example queries name exported metrics',
          '\n'.join(bad))
    rows = readme_table(path)
    documented = {n: (t, l) for names, t, l in rows for n in names}
    missing = sorted(f for f in families if f not in documented)
    check(not missing, 'README Metrics: every family of the .prom file has a row',
          '\n'.join(missing))
    stale = sorted(n for n in documented if n not in families
                   and not n.startswith('cpusetd_isolation_'))
    check(not stale, 'README Metrics: every row names a family cpusetd writes',
          '\n'.join(stale))
    wrong = []
    for name, (typ, labels) in sorted(documented.items()):
        if name not in families:
            continue
        if typ != families[name]:
            wrong.append(f'{name}: type {typ} in the README, {families[name]} in the file')
        seen = fam_labels.get(name, set())
        if seen and seen != labels:
            wrong.append(f'{name}: labels {sorted(labels)} in the README, {sorted(seen)} in the file')
    check(not wrong, 'README Metrics: each row has its family\'s type and labels', '\n'.join(wrong))


def main(argv):
    prom, readme, files = None, None, []
    it = iter(argv)
    for a in it:
        if a == '--prom':
            prom = next(it)
        elif a == '--readme':
            readme = next(it)
        else:
            files.append(a)
    if not prom or not (files or readme):
        sys.exit(__doc__)
    names, families, fam_labels = read_prom(prom)
    for path in files:
        queries = dashboard_queries(path) if path.endswith('.json') else rule_queries(path)
        bad, metrics = [], set()
        for q in queries:
            used, problems = check_query(q[0], q[1], names, q[2] if len(q) > 2 else None)
            metrics |= set(used)
            bad += [f'{q[0]}: {p}' for p in problems]
        check(queries and not bad,
              f'{path}: {len(queries)} queries name {len(metrics)} metrics cpusetd exports',
              '\n'.join(bad) if queries else 'no queries found')
    if readme:
        check_readme(readme, families, fam_labels, names)
    return 0 if all(results) else 1


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
