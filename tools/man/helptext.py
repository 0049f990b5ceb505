# SPDX-License-Identifier: Apache-2.0
"""Reads the programs' own documentation: --help texts and cpusetd.conf.

Used by gen-man.py (which renders the man pages from them) and by
check-docs.py (which checks that the man pages and the README say the
same). The programs are the source: config_usage() in
user/config/config_options.c, the command table and usage texts in
tools/cpusetctl/cpusetctl.c and tools/cpusetctl/ctl_*.c, and the commented default config
systemd/cpusetd.conf, whose keys the daemon's own key table
(user/config/config_show.c, printed by --check-config) must match.

A --help text is read as blocks, in order:
  ('usage', [lines])          "Usage: ..." and its indented continuation
  ('text', line)              an unindented line of prose
  ('heading', title)          an unindented line ending in ':' ("Options:")
  ('item', term, [desc])      "  TERM  DESCRIPTION", continued by lines
                              indented deeper; "  --a X   --b Y" is two items
  ('example', line)           an indented line under "Example(s):"
"""
import re
import subprocess

ITEM = re.compile(r'^  (\S.*?)(?:\s{2,}(\S.*))?$')
CONF_KEY = re.compile(r'^#([a-z0-9_]+) =(?: (.*))?$')
CONF_SECTION = re.compile(r'^# --- (.*?) -*$')


def run(argv):
    """stdout of argv; a non-zero exit is an error (a --help must work)."""
    return subprocess.run(argv, check=True, capture_output=True, text=True).stdout


def parse_help(text):
    blocks = []
    in_examples = False
    lines = [l for l in text.rstrip('\n').split('\n') if l.strip()]
    for i, line in enumerate(lines):
        indent = len(line) - len(line.lstrip(' '))
        if line.startswith('Usage:'):
            blocks.append(('usage', [line[len('Usage:'):].strip()]))
            in_examples = False
        elif indent == 0:
            m = re.match(r'^(Examples?):\s*(.*)$', line)
            if m:
                blocks.append(('heading', m.group(1)))
                in_examples = True
                if m.group(2):
                    blocks.append(('example', m.group(2)))
            elif line.endswith(':') and i + 1 < len(lines) and lines[i + 1].startswith(' '):
                # a heading is followed by its indented items; a prose
                # line may end in ':' too
                blocks.append(('heading', line[:-1]))
                in_examples = False
            else:
                blocks.append(('text', line))
                in_examples = False
        elif in_examples:
            blocks.append(('example', line[2:]))
        elif indent > 2 and blocks and blocks[-1][0] in ('item', 'usage'):
            blocks[-1][-1].append(line.strip())
        else:
            rest = line
            while True:
                m = ITEM.match(rest)
                if not m:
                    raise ValueError('cannot read help line: %r' % line)
                term, desc = m.group(1), m.group(2)
                if desc and desc.startswith('-'):
                    # two options on one line: "  --a X   --b Y"
                    blocks.append(('item', term, []))
                    rest = '  ' + desc
                    continue
                blocks.append(('item', term, [desc] if desc else []))
                break
    return blocks


def item_options(term):
    """The option names a term defines: '-h, --help' -> ['-h', '--help']."""
    # only the leading "-x, --xx" names: "--nice -20..19" defines --nice
    lead = re.match(r'^(?:--?[A-Za-z0-9][\w-]*(?:\[=\w+\])?, )*--?[A-Za-z0-9][\w-]*', term)
    return re.findall(r'--?[A-Za-z0-9][\w-]*', lead.group(0)) if lead else []


def help_options(blocks):
    """Every option an item of a --help text defines, in order."""
    out = []
    for b in blocks:
        if b[0] == 'item':
            out.extend(o for o in item_options(b[1]) if o not in out)
    return out


def section(blocks, title):
    """The blocks under heading title, up to the next heading."""
    out, inside = [], False
    for b in blocks:
        if b[0] == 'heading':
            inside = b[1] == title
        elif inside:
            out.append(b)
    return out


def ctl_commands(ctl):
    """cpusetctl's commands, from its --help "Commands:" list."""
    return [b[1] for b in section(parse_help(run([ctl, '--help'])), 'Commands')
            if b[0] == 'item']


def parse_conf(text):
    """cpusetd.conf as [('section', title, [paragraph lines]) |
    ('key', name, [default values], [description lines])].

    A comment block ending in '#key = default' documents that key; a
    block ending at a blank line is prose of the current section; the
    header before '[cpusetd]' is not read (the man page has its own).
    Description lines keep their indentation after '# ' (lists)."""
    out = []
    lines = text.split('\n')
    start = lines.index('[cpusetd]') + 1
    prose = []
    for line in lines[start:] + ['']:
        m = CONF_KEY.match(line)
        s = CONF_SECTION.match(line)
        if s:
            out.append(('section', s.group(1), []))
            prose = []
        elif m:
            name, value = m.group(1), m.group(2) or ''
            if not prose and out and out[-1][0] == 'key' and out[-1][1] == name:
                out[-1][2].append(value)	# bundle_path: one line per path
            else:
                out.append(('key', name, [value], prose))
            prose = []
        elif line.startswith('#'):
            prose.append(line[2:] if line.startswith('# ') else line[1:])
        elif not line.strip():
            if prose:
                if not out or out[-1][0] != 'section':
                    out.append(('section', None, []))
                out[-1][2].extend(prose)
            prose = []
        else:
            raise ValueError('cannot read config line: %r' % line)
    return out


def conf_keys(entries):
    return [e[1] for e in entries if e[0] == 'key']


def daemon_keys(cpusetd, empty_conf):
    """Every key of the daemon's key table, from --check-config's output
    for a config file with nothing in it (all defaults)."""
    text = run([cpusetd, '--check-config', '--config', empty_conf])
    keys = []
    for line in text.split('\n'):
        m = re.match(r'^#?([a-z0-9_]+) =', line)
        if m and m.group(1) not in keys:
            keys.append(m.group(1))
    return keys
