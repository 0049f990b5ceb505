#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The documentation says what the programs do: TAP lines out.

    tools/man/check-docs.py CPUSETD CPUSETCTL MANDIR CONFIG_TABLE_MD CONF

The programs are the source (helptext.py): `cpusetd --help`, the
daemon's key table as `cpusetd --check-config` prints it, and
`cpusetctl [COMMAND] --help`. Checked against them:
  - the shipped config file CONF has every key, with the daemon's default;
  - cpusetd(8) has every cpusetd option, cpusetd.conf(5) every key and
    no other, cpusetctl(8) every command and each command's options, as
    man renders them (MANDIR holds the pages make man built);
  - the configuration table (systemd/README.md) has a row for every cpusetd option
    and no other;
  - man --warnings (lintian's way) has nothing to say about any page.
Exit status 1 when a check fails.
"""
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import helptext  # noqa: E402

results = []


def check(ok, name, detail=''):
    results.append(ok)
    print(('ok - ' if ok else 'not ok - ') + name)
    if not ok and detail:
        for ln in str(detail).rstrip().split('\n'):
            print('#   ' + ln)


def render(page):
    """The page as man shows it, plain ASCII, one line per paragraph
    line, never hyphenated."""
    env = dict(os.environ, MANWIDTH='250', LC_ALL='C.UTF-8', MAN_KEEP_FORMATTING='')
    out = subprocess.run(['man', '--nh', '--nj', '-E', 'ascii', '-l', page], env=env,
                         check=True, capture_output=True, text=True).stdout
    return re.sub(r'.\x08', '', out).split('\n')


def sections(lines):
    """{SECTION: [lines]} of a rendered page (headings at column 0)."""
    out, cur = {}, None
    for ln in lines:
        if re.match(r'^[A-Z][A-Z ]+$', ln):
            cur = ln.strip()
            out[cur] = []
        elif cur:
            out[cur].append(ln)
    return out


def subsections(lines):
    """{title: [lines]} of a section (titles indented by 3)."""
    out, cur = {}, None
    for ln in lines:
        m = re.match(r'^   (\S.*)$', ln)
        if m:
            cur = m.group(1).strip()
            out[cur] = []
        elif cur is not None:
            out[cur].append(ln)
    return out


def has_opt(text, opt):
    return re.search(r'(?<![\w-])' + re.escape(opt) + r'(?![\w-])', text) is not None


def missing(opts, text):
    return [o for o in opts if not has_opt(text, o)]


def warnings(page):
    """What lintian's man check would print (its exact invocation)."""
    env = dict(os.environ, LC_ALL='C.UTF-8', MANROFFSEQ='', MANWIDTH='80')
    r = subprocess.run(['man', '--warnings', '-E', 'UTF-8', '-l', '-Tutf8', '-Z', page],
                       env=env, capture_output=True, text=True)
    return (r.stderr + ('' if r.returncode == 0 else 'exit %d' % r.returncode)).strip()


def readme_options(path):
    """Options of the "## Configuration" table (systemd/README.md)'s first column."""
    text = open(path).read()
    m = re.search(r'^## Configuration\n(.*?)(?=^## )', text, re.S | re.M)
    if not m:
        return None
    opts = []
    for ln in m.group(1).split('\n'):
        # cells split at '|' but not at an escaped '\|' ("reject\|shared")
        cells = re.split(r'(?<!\\)\|', ln)
        if len(cells) > 2 and cells[0] == '' and cells[1].strip().startswith('`-'):
            for code in re.findall(r'`([^`]*)`', cells[1]):
                opts.extend(helptext.item_options(code.replace('\\|', '|')))
    return opts


def main(argv):
    if len(argv) != 6:
        sys.exit('usage: check-docs.py CPUSETD CPUSETCTL MANDIR README CONF')
    cpusetd, ctl, mandir, readme, conf = argv[1:]

    d_blocks = helptext.parse_help(helptext.run([cpusetd, '--help']))
    d_opts = helptext.help_options(d_blocks)
    with tempfile.NamedTemporaryFile('w', suffix='.conf') as empty:
        keys = helptext.daemon_keys(cpusetd, empty.name)
        effective = helptext.run([cpusetd, '--check-config', '--config', empty.name])
    with open(conf) as f:
        entries = helptext.parse_conf(f.read())

    # the shipped config file against the daemon's key table
    c_keys = helptext.conf_keys(entries)
    check(sorted(c_keys) == sorted(keys), 'the shipped config has every key and no other',
          'only in the daemon: %s\nonly in the file: %s' %
          (sorted(set(keys) - set(c_keys)), sorted(set(c_keys) - set(keys))))
    defaults = {}
    for ln in effective.split('\n'):
        m = re.match(r'^([a-z0-9_]+) =(?: (.*))?$', ln)
        if m:
            defaults.setdefault(m.group(1), []).append(m.group(2) or '')
    # case aside: the file names policies as Koordinator does (None), the
    # daemon prints kubelet's spelling (none); both read the same
    wrong = ['%s: file says %s, daemon %s' % (e[1], e[2], defaults.get(e[1], ['']))
             for e in entries if e[0] == 'key' and
             [v.lower() for v in e[2]] != [v.lower() for v in defaults.get(e[1], [''])]]
    check(not wrong, "the shipped config's defaults are the daemon's", '\n'.join(wrong))
    no_opt = [k for k in keys if '--' + k.replace('_', '-') not in d_opts]
    check(not no_opt, 'every key is a cpusetd option too', no_opt)

    # cpusetd(8)
    page = os.path.join(mandir, 'cpusetd.8')
    sec = sections(render(page))
    miss = missing(d_opts, '\n'.join(sec.get('OPTIONS', [])))
    check(not miss, 'cpusetd(8) OPTIONS has all %d options of cpusetd --help' % len(d_opts), miss)

    # cpusetd.conf(5): every key is a term of KEYS, and every term a key
    page = os.path.join(mandir, 'cpusetd.conf.5')
    sec = sections(render(page))
    # a term is at indent 7, alone or (a short one) followed by the gap
    # to its paragraph; text is never justified, so prose has no gaps
    terms = [m.group(1) for m in (re.match(r'^       ([a-z0-9_]+)(?:$| {2,}\S)', ln)
                                  for ln in sec.get('KEYS', [])) if m]
    check(sorted(terms) == sorted(keys), 'cpusetd.conf(5) KEYS has all %d keys and no other'
          % len(keys), 'missing: %s\nunknown: %s' %
          (sorted(set(keys) - set(terms)), sorted(set(terms) - set(keys))))

    # the README table, both ways
    r_opts = readme_options(readme)
    if r_opts is None:
        check(False, 'README has a "## Configuration" section')
    else:
        check(not set(d_opts) - set(r_opts) and not set(r_opts) - set(d_opts),
              'the README configuration table has each of the %d options and no other'
              % len(d_opts), 'missing: %s\nnot an option: %s' %
              (sorted(set(d_opts) - set(r_opts)), sorted(set(r_opts) - set(d_opts))))

    # cpusetctl(8)
    page = os.path.join(mandir, 'cpusetctl.8')
    sec = sections(render(page))
    c_blocks = helptext.parse_help(helptext.run([ctl, '--help']))
    g_opts = helptext.help_options(helptext.section(c_blocks, 'Options'))
    miss = missing(g_opts, '\n'.join(sec.get('OPTIONS', [])))
    check(not miss, 'cpusetctl(8) OPTIONS has its %d global options' % len(g_opts), miss)
    cmds = helptext.ctl_commands(ctl)
    subs = subsections(sec.get('COMMANDS', []))
    check(sorted(subs) == sorted(cmds), 'cpusetctl(8) COMMANDS has all %d commands and no other'
          % len(cmds), 'missing: %s\nunknown: %s' %
          (sorted(set(cmds) - set(subs)), sorted(set(subs) - set(cmds))))
    bad = []
    n = 0
    for cmd in cmds:
        opts = helptext.help_options(helptext.parse_help(helptext.run([ctl, cmd, '--help'])))
        n += len(opts)
        bad += ['%s %s' % (cmd, o) for o in missing(opts, '\n'.join(subs.get(cmd, [])))]
    check(not bad, "cpusetctl(8) has each command's options (%d)" % n, bad)

    for name in ('cpusetd.8', 'cpusetctl.8', 'cpusetd.conf.5'):
        w = warnings(os.path.join(mandir, name))
        check(not w, 'man --warnings: %s is clean' % name, w)

    return 0 if all(results) else 1


if __name__ == '__main__':
    sys.exit(main(sys.argv))
