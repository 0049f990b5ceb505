#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Renders cpusetd(8), cpusetctl(8) and cpusetd.conf(5).

    tools/man/gen-man.py CPUSETD CPUSETCTL CONF OUTDIR

The option, command and key sections come from the programs themselves
(helptext.py: `cpusetd --help`, `cpusetctl [CMD] --help`, and the shipped
config file CONF, whose keys check-docs.py holds to the daemon's key
table); the prose around them is the hand-written template
tools/man/NAME.in, where a line "@NAME@" is replaced by a generated part.
So a new option or key reaches the man pages by a rebuild, and
check-docs.py fails until the README table has it too.

Date: SOURCE_DATE_EPOCH when set (dpkg-buildpackage sets it from the
changelog: reproducible), else today (UTC).
"""
import datetime
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import helptext  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))


def esc(s):
    """Text as roff: backslash, hyphen-minus (so options copy and
    paste), anything beyond ASCII as a named Unicode escape."""
    s = s.replace('\\', '\\e').replace('-', '\\-')
    return ''.join(c if ord(c) < 128 else '\\[u%04X]' % ord(c) for c in s)


def line(s):
    """One output line; a leading '.' or "'" would be a request."""
    s = esc(s)
    return '\\&' + s if s.startswith(('.', "'")) else s


def term(t):
    """A list term: options bold, their argument italic; a bare word
    (a command) bold."""
    names = helptext.item_options(t)
    if not names:
        return '\\fB' + esc(t) + '\\fR'
    lead = re.match(r'^(?:--?[A-Za-z0-9][\w-]*(?:\[=\w+\])?, )*--?[A-Za-z0-9][\w-]*', t).group(0)
    out = ', '.join('\\fB' + esc(n) + '\\fR' for n in names)
    rest = t[len(lead):]
    if rest:
        sp = ' ' if rest.startswith(' ') else ''
        out += sp + '\\fI' + esc(rest.strip()) + '\\fR'
    return out


def option_key(opt, keys):
    k = opt[2:].replace('-', '_')
    return k if opt.startswith('--') and k in keys else None


def render_help(blocks, keys=(), skip=('usage',)):
    """--help blocks as man(7) requests. keys: config keys, so that an
    option that is also a key points at cpusetd.conf(5)."""
    out = []
    prose = []

    def flush():
        if prose:
            out.extend(['.PP', line(' '.join(prose))])
            prose.clear()

    in_example = False
    for b in blocks:
        kind = b[0]
        if kind != 'example' and in_example:
            out.extend(['.fi', '.RE'])
            in_example = False
        if kind != 'text':
            flush()
        if kind in skip:
            continue
        if kind == 'usage':
            out.extend(['.PP', '\\fBUsage:\\fR ' + esc(' '.join(b[1]))])
        elif kind == 'text':
            prose.append(b[1])
        elif kind == 'heading':
            if b[1] not in ('Example', 'Examples', 'Options', 'Commands'):
                out.append('.SS ' + esc(b[1]))
            elif b[1].startswith('Example'):
                out.extend(['.PP', b[1] + ':'])
        elif kind == 'item':
            out.extend(['.TP', term(b[1])])
            desc = ' '.join(b[2])
            if desc:
                out.append(line(desc))
            k = [option_key(o, keys) for o in helptext.item_options(b[1])]
            k = [x for x in k if x]
            if k:
                out.extend(['.br', 'Key \\fB%s\\fR in \\fBcpusetd.conf\\fR(5).' % esc(k[0])])
        elif kind == 'example':
            if not in_example:
                out.extend(['.RS 4', '.nf'])
                in_example = True
            out.append(line(b[1]))
    flush()
    if in_example:
        out.extend(['.fi', '.RE'])
    return out


def render_desc(lines):
    """Config comment lines: plain ones filled, indented ones (lists)
    kept as they are."""
    out, fill, pre = [], [], []
    for text in lines + ['']:
        if text.startswith(' ') and text.strip():
            if fill:
                out.append(line(' '.join(fill)))
                fill = []
            pre.append(text)
            continue
        if pre:
            out.append('.nf')
            out.extend(line(p) for p in pre)
            out.append('.fi')
            pre = []
        if text.strip():
            fill.append(text.strip())
    if fill:
        out.append(line(' '.join(fill)))
    return out


def render_conf(entries, options):
    out = []
    for e in entries:
        if e[0] == 'section':
            if e[1]:
                t = e[1][0].upper() + e[1][1:]
                out.append('.SS ' + esc(t).replace('"', '\\(dq'))
            if e[2]:
                out.append('.PP')
                out.extend(render_desc(e[2]))
            continue
        _, name, values, desc = e
        out.extend(['.TP', '\\fB%s\\fR' % esc(name)])
        out.extend(render_desc(desc))
        out.append('.br')
        if values == ['']:
            out.append('Default: empty.')
        elif len(values) == 1:
            out.append('Default: \\fI%s\\fR.' % esc(values[0]))
        else:
            # one per line, unfilled: a path is too long to adjust
            out.extend(['Default:', '.nf'])
            out.extend('  \\fI%s\\fR' % esc(v) for v in values)
            out.append('.fi')
        opt = '--' + name.replace('_', '-')
        if opt in options:
            out.extend(['.br', 'Command line: \\fB%s\\fR.' % esc(opt)])
    return out


def fill_template(name, parts, version, date, outdir):
    with open(os.path.join(HERE, name + '.in')) as f:
        src = f.read().split('\n')
    out = []
    for ln in src:
        m = re.match(r'^@([A-Z_]+)@$', ln)
        if m:
            if m.group(1) not in parts:
                raise KeyError('%s.in: no part @%s@' % (name, m.group(1)))
            out.extend(parts[m.group(1)])
            continue
        out.append(ln.replace('@VERSION@', version).replace('@DATE@', date))
    with open(os.path.join(outdir, name) + '.tmp', 'w') as f:
        f.write('\n'.join(out).rstrip('\n') + '\n')
    os.replace(os.path.join(outdir, name) + '.tmp', os.path.join(outdir, name))


def main(argv):
    if len(argv) != 5:
        sys.exit('usage: gen-man.py CPUSETD CPUSETCTL CONF OUTDIR')
    cpusetd, ctl, conf, outdir = argv[1:]
    os.makedirs(outdir, exist_ok=True)
    epoch = os.environ.get('SOURCE_DATE_EPOCH')
    when = (datetime.datetime.fromtimestamp(int(epoch), datetime.timezone.utc) if epoch
            else datetime.datetime.now(datetime.timezone.utc))
    date = when.strftime('%Y-%m-%d')
    # "cpusetd 0.1.0 (revision abc)": the version is the second word
    version = helptext.run([cpusetd, '--version']).split()[1]

    with open(conf) as f:
        entries = helptext.parse_conf(f.read())
    keys = helptext.conf_keys(entries)
    d_blocks = helptext.parse_help(helptext.run([cpusetd, '--help']))
    d_opts = helptext.help_options(d_blocks)

    # OPTIONS: the items and their group headings, up to "Examples:"
    upto = next((i for i, b in enumerate(d_blocks) if b == ('heading', 'Examples')),
                len(d_blocks))
    d_parts = {
        'OPTIONS': render_help([b for b in d_blocks[:upto] if b[0] in ('item', 'heading')],
                               keys),
        'EXAMPLES': render_help(helptext.section(d_blocks, 'Examples')),
    }
    fill_template('cpusetd.8', d_parts, version, date, outdir)

    fill_template('cpusetd.conf.5', {'KEYS': render_conf(entries, d_opts)},
                  version, date, outdir)

    c_blocks = helptext.parse_help(helptext.run([ctl, '--help']))
    commands = []
    for cmd in helptext.ctl_commands(ctl):
        sub = helptext.parse_help(helptext.run([ctl, cmd, '--help']))
        commands.append('.SS ' + esc(cmd))
        commands.extend(render_help(sub, skip=()))
    ex = helptext.section(c_blocks, 'Examples')
    c_parts = {
        'OPTIONS': render_help(helptext.section(c_blocks, 'Options')),
        'COMMANDS': commands,
        'EXAMPLES': render_help([b for b in ex if b[0] == 'example']),
        'EXIT_STATUS': render_help([b for b in ex if b[0] == 'text']),
    }
    fill_template('cpusetctl.8', c_parts, version, date, outdir)


if __name__ == '__main__':
    main(sys.argv)
