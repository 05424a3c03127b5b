#!/usr/bin/env python3
"""Check recorderd's callgrind.out with callgrind_annotate (valgrind).

  callgrind.py --recorderd PATH [--lua lua5.1] PROGRAM...

Runs each Lua PROGRAM under `recorderd run` (from its own directory, in a
temporary output directory, always removed), once with the default sampled
time and once with `--time exact --lines exact`, then:
  - callgrind.out has its header keys before `events: ns lines`;
  - `callgrind_annotate --threshold=100` exits 0 without warnings, and its
    PROGRAM TOTALS equal the summary line, the session's traced_ns (the
    traced time of profile.txt, within 1 ns) and the line events of the
    line-weighted folded stacks;
  - each function's self time equals the time-weighted folded stacks ending
    in it (within their rounding, 1 ns a stack), and the rest, the "(no
    frame)" time, is what the folded stacks leave out of the traced time;
  - `--inclusive=yes` exits 0 and each function's inclusive time is its
    total time in profile.txt (recursion counted once) within 2 us;
  - `recorderd report S --format callgrind -o F`, run from another
    directory, rebuilds the file byte for byte (the command and the
    working directory that resolves its paths come from session.json).
Exit status: 0 pass, 1 fail, 77 skipped (no recorderd, no callgrind_annotate).
"""

import json
import os
import re
import shutil
import sys
import tempfile

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import corpus  # noqa: E402
import harness  # noqa: E402

# callgrind_annotate writes a zero count as "."
NUM = r'([\d,]+|\.)(?: \([^)]*\))?'
ROW = re.compile(r'^\s*' + NUM + r'\s+' + NUM + r'\s+(\S.*)$')


check, run_ok = harness.expect, harness.run_ok


def read_folded(path):
    """{leaf label: (weight, stacks)} of a folded file, and its total."""
    leaves, total = {}, 0
    with open(path) as f:
        for line in f:
            stack, w = line.rstrip('\n').rsplit(' ', 1)
            leaf = stack.split(';')[-1]
            old = leaves.get(leaf, (0, 0))
            leaves[leaf] = (old[0] + int(w), old[1] + 1)
            total += int(w)
    return leaves, total


def cg_name(label, cwd):
    """The callgrind function name of a folded label NAME@SRC:LINE: the
    label people read, NAME (SRC:LINE), SRC relative to the program's
    working directory cwd (rd_label.h)."""
    return corpus.human_label(label, cwd)


def read_callgrind(path):
    """Header lines, summary and {fn name: self ns} of callgrind.out."""
    with open(path) as f:
        text = f.read()
    head, _, body = text.partition('\n\n')
    names, selfs, fn, after_calls = {}, {}, None, False
    for line in body.split('\n'):
        m = re.match(r'^c?fn=\((\d+)\)(?: (.*))?$', line)
        if m and m.group(2):
            names[m.group(1)] = m.group(2)
        if m and line.startswith('fn='):
            fn = names[m.group(1)]
        if re.match(r'^\d+ \d+ \d+$', line) and not after_calls:
            selfs[fn] = selfs.get(fn, 0) + int(line.split()[1])
        after_calls = line.startswith('calls=')
    return head.split('\n'), selfs, text


def count(text):
    return 0 if text == '.' else int(text.replace(',', ''))


def annotate(session, tmp, inclusive):
    cmd = ['callgrind_annotate', '--threshold=100', '--auto=no']
    if inclusive:
        cmd.append('--inclusive=yes')
    res = run_ok(cmd + [os.path.join(session, 'callgrind.out')], tmp)
    err = res.err.decode('utf-8', 'replace')
    check('WARNING' not in err and 'malformed' not in err and 'uninitialized' not in err,
          'callgrind_annotate: %s' % err)
    rows = {}
    for line in res.out.decode('utf-8', 'replace').split('\n'):
        m = ROW.match(line)
        if m:
            # "(calculated)" when the totals are zero
            key = m.group(3).replace(' (calculated)', '')
            rows[key] = (count(m.group(1)), count(m.group(2)))
    check('PROGRAM TOTALS' in rows, 'no PROGRAM TOTALS in:\n%s' % res.out.decode())
    return rows


def fn_rows(rows):
    """{fn name: ns} from annotate rows keyed FILE:FN (FILE has no ':')."""
    out = {}
    for k, v in rows.items():
        if k != 'PROGRAM TOTALS':
            name = k.split(':', 1)[1] if not k.startswith('[C]:') else k[4:]
            out[name] = out.get(name, 0) + v[0]
    return out


def profile_totals(path):
    """{callgrind name: total ms} of profile.txt's by-total table (one
    label in both, rd_label.h); labels found twice (two C functions of one name) are left out."""
    totals, seen, on = {}, set(), False
    with open(path) as f:
        for line in f:
            if line.startswith('By total time'):
                on = True
                continue
            parts = line.split(None, 6)
            if not on or len(parts) < 7 or not parts[0].isdigit():
                continue
            label = parts[6].rstrip('\n')  # callgrind's name too (rd_label.h)
            if label in seen:
                totals.pop(label, None)
            else:
                totals[label] = float(parts[3])
            seen.add(label)
    return totals


def check_self(selfs, folded, cwd):
    leaves, ftotal = folded
    by_name = {}
    for leaf, (w, n) in leaves.items():
        old = by_name.get(cg_name(leaf, cwd), (0, 0))
        by_name[cg_name(leaf, cwd)] = (old[0] + w, old[1] + n)
    for name, (w, n) in by_name.items():
        got = selfs.get(name, 0)
        check(abs(got - w) <= n, 'self of %s: callgrind %d, folded %d' % (name, got, w))
    extra = set(selfs) - set(by_name) - {'(no frame)'}
    check(all(selfs[x] <= 1 for x in extra), 'callgrind functions not in folded: %r' % extra)


def one(args, prog, tmp, opts=()):
    path = os.path.abspath(prog)
    name = os.path.splitext(os.path.basename(path))[0] + ('-exact' if opts else '')
    outdir = os.path.join(tmp, 'out-' + name)
    os.mkdir(outdir)
    harness.run([args.recorderd, 'run', '--quiet', '--out', outdir, '--format', 'callgrind']
                + list(opts) + ['--', args.lua, os.path.basename(path)],
                os.path.dirname(path), harness.base_env())
    session = harness.find_session(outdir)
    cg = os.path.join(session, 'callgrind.out')
    head, selfs, text = read_callgrind(cg)
    check(head[0] == '# callgrind format' and head[-2] == 'events: ns lines'
          and head[-1].startswith('summary: ') and 'positions: line' in head,
          'callgrind.out header:\n%s' % '\n'.join(head))
    summary = [int(x) for x in head[-1].split()[1:]]
    folded = {}
    for w in ('time', 'lines'):
        out = os.path.join(tmp, '%s-%s.folded' % (name, w))
        run_ok([args.recorderd, 'report', session, '--format', 'folded', '--weight', w,
                '-o', out], tmp)
        folded[w] = read_folded(out)
    with open(os.path.join(session, 'session.json')) as f:
        traced_ns = int(json.load(f)['traced_ns'])

    rows = annotate(session, tmp, False)
    total = rows['PROGRAM TOTALS']
    check(list(total) == summary, 'annotate totals %r, summary %r' % (total, summary))
    check(abs(total[0] - traced_ns) <= 1, 'total %d ns, traced %d ns' % (total[0], traced_ns))
    check(total[1] == folded['lines'][1], 'lines %d, folded %d' % (total[1], folded['lines'][1]))
    check(sum(selfs.values()) == total[0], 'self costs add up to %d, not %d'
          % (sum(selfs.values()), total[0]))
    check_self(selfs, folded['time'], corpus.session_cwd(session))
    nodes = sum(n for _, n in folded['time'][0].values())
    rest = total[0] - folded['time'][1]
    check(abs(rest - selfs.get('(no frame)', 0)) <= nodes,
          'traced %d - folded %d != (no frame) %d' % (total[0], folded['time'][1],
                                                      selfs.get('(no frame)', 0)))

    incl = fn_rows(annotate(session, tmp, True))
    totals = profile_totals(os.path.join(session, 'profile.txt'))
    check(totals, 'no totals in profile.txt')
    for fn, ms in totals.items():
        check(fn in incl, 'no %s in callgrind_annotate --inclusive=yes: %r' % (fn, list(incl)))
        check(abs(incl[fn] / 1e6 - ms) <= 0.002,
              'inclusive of %s: callgrind %d ns, profile.txt %.3f ms' % (fn, incl[fn], ms))

    rebuilt = os.path.join(tmp, name + '.callgrind')
    run_ok([args.recorderd, 'report', session, '--format', 'callgrind', '-o', rebuilt], tmp)
    with open(rebuilt) as f:
        again = f.read()
    check(again == text, 'report --format callgrind differs from callgrind.out')
    print('%s: %d ns, %d line events, %d functions, inclusive of %d checked'
          % (name, total[0], total[1], len(selfs), len(totals)))


def empty_names(args, tmp):
    """Chunks named "@" and "=" (an empty SRC): every check of one(), and
    callgrind_annotate reads the file without a warning. The program is
    outside tmp, where callgrind_annotate runs: it strips its working
    directory from fl= names but not from cfl= ones, which would show a
    file under two names."""
    src = tempfile.mkdtemp(prefix='luatrace-cg-src-')
    try:
        prog = os.path.join(src, 'empty_names.lua')
        with open(prog, 'w') as f:
            f.write('print(loadstring("return 1", "@")() + loadstring("return 2", "=")())\n')
        # every line and call timed: a program this short may get no
        # sample at all, and its names would then carry no cost
        one(args, prog, tmp, ('--time', 'exact', '--lines', 'exact'))
    finally:
        shutil.rmtree(src, ignore_errors=True)


SAMPLED_CALL = """local function f()
  local s = 0
  for i = 1, 3e7 do s = s + i end
  local r = string.rep("x", s % 3)
  return r
end
f()
"""


def sampled_call_line(args, tmp):
    """Under the default lines by sample, a frame's line is the one its
    last tick found: the call of string.rep on line 4, after the loop of
    line 3 that takes every tick, was put on line 3. A call's line is
    unknown there, and callgrind.out puts it on the caller's linedefined
    (1), as its self time on no line."""
    prog = os.path.join(tmp, 'sampled_call.lua')
    with open(prog, 'w') as f:
        f.write(SAMPLED_CALL)
    outdir = os.path.join(tmp, 'out-sampled-call')
    os.mkdir(outdir)
    run_ok([args.recorderd, 'run', '--quiet', '--out', outdir, '--format', 'callgrind',
            '--', args.lua, 'sampled_call.lua'], tmp)
    with open(os.path.join(harness.find_session(outdir), 'callgrind.out')) as f:
        text = f.read()
    m = re.search(r'^cfn=\(\d+\) string\.rep \[C\]\ncalls=1 0\n(\d+) ', text, re.M)
    check(m, 'no call of string.rep in:\n%s' % text)
    check(m.group(1) == '1', 'string.rep called from line %s, not 1 (f\'s linedefined):\n%s'
          % (m.group(1), text))
    print('sampled_call: string.rep on the caller\'s linedefined')


def main(argv):
    def body(args, tmp):
        if not shutil.which('callgrind_annotate'):
            print('SKIP: no callgrind_annotate (package valgrind)')
            return harness.SKIP
        for prog in args.programs:
            # the default samples time: a short program may get few samples
            one(args, prog, tmp)
            one(args, prog, tmp, ('--time', 'exact', '--lines', 'exact'))
        empty_names(args, tmp)
        sampled_call_line(args, tmp)
    return harness.program_main(argv, __doc__, 'luatrace-callgrind-', body,
                                (ValueError, KeyError, OSError))


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
