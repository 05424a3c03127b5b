#!/usr/bin/env python3
"""Check recorderd against the reference tracer on one corpus program.

  corpus.py PROGRAM.lua --recorderd PATH [--lua lua5.1] [--ref-lua CMD] [--reftrace-c SO]
            [--lua-opt=OPT ...]

In a fresh temporary directory (always removed), with the program's
directory as the working directory and the program given by its file name:
  1. run it untraced: stdout, stderr, exit status;
  2. run it under the reference tracer (lua5.1 -lreftrace PROG): same
     output expected, and the folded stacks of the truth (lines and calls);
  3. run it under `recorderd run --quiet --out DIR -- lua5.1 PROG`: output
     must be byte-identical to step 1; then `recorderd report SESSION
     --format folded --weight lines|calls`;
  4. compare the folded stacks exactly (the truth's stacks deeper than
     1000 frames cut in the middle as recorderd prints them, rd_path.h).
--lua-opt gives the interpreter an option before the program in all three
runs (after -lreftrace in the reference's): --lua-opt=-lcorpus_mod.
Step 3 runs with --lines exact (every line counted), the mode whose lines
step 4 compares. --lines-sample runs run's default instead (sampled time,
lines by sample): the calls, each stack's, must still be the reference's.
--memory traces with `run --memory`: the GC steps' (gc) frames (calls of
a frame the program never sees) are left out of the comparison, every
other stack must still agree.
Exit status: 0 pass, 1 fail, 77 skipped (recorderd does not exist).
"""

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True  # keep the source tree clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import reftrace_post  # noqa: E402
from harness import (SKIP, Failure, run, base_env, show_bytes,  # noqa: E402,F401
                     in_tmpdir, have_recorderd, find_session, skip_missing)

MAX_DIFF_LINES = 30


TRACE_HDR = 16  # proto/lt_file.h
TRACE_ZSTD = 1  # the header's flag: the body is zstd frames
TRACE_SPLIT = 2  # and of lt_split.h blocks (version 11)


def trace_header(path):
    """(version, flags) of a trace.ltr."""
    with open(path, 'rb') as f:
        h = f.read(TRACE_HDR)
    return int.from_bytes(h[8:12], 'little'), int.from_bytes(h[12:16], 'little')


def msgpack_len(b, i):
    """The bytes of the msgpack uint or string at b[i] (the records' fields)."""
    x = b[i]
    if x < 0x80:
        return 1
    if x in (0xcc, 0xcd, 0xce, 0xcf):
        return 1 + {0xcc: 1, 0xcd: 2, 0xce: 4, 0xcf: 8}[x]
    if 0xa0 <= x <= 0xbf:
        return 1 + (x & 0x1f)
    hl = 2 if x == 0xd9 else 3
    return hl + int.from_bytes(b[i + 1:i + hl], 'big')


def merge_blocks(body):
    """The records of a version 11 body's blocks (proto/lt_split.h): each a
    header (lenA, lenB, splitA), the records less their hot deltas (A),
    then the deltas (B), merged back; apart from recorderd's lt_merge."""
    out, i = bytearray(), 0
    while i < len(body):
        la, lb, sa = (int.from_bytes(body[i + k:i + k + 4], 'little') for k in (0, 4, 8))
        a, b = body[i + 12:i + 12 + la], body[i + 12 + la:i + 12 + la + lb]
        i, j, k = i + 12 + la + lb, 0, 0
        while k < sa:
            h = a[k]
            if h < 0x80 or 0xe0 <= h <= 0xe2:  # a step or short form: its delta from B
                d = msgpack_len(b, j)
                out += a[k:k + 1] + b[j:j + d]
                j, k = j + d, k + 1
                if h in (0xe0, 0xe1):
                    x = msgpack_len(a, k)
                    out += a[k:k + x]
                    k += x
            elif 0xe3 <= h <= 0xe5:  # a short MEM, whole in A: 2 fields, 4 for a realloc
                n = 1
                for _ in range(4 if h == 0xe5 else 2):
                    n += msgpack_len(a, k + n)
                out += a[k:k + n]
                k += n
            else:  # a fixarray record, whole in A
                n = 2
                for _ in range((h & 0x0f) - 1):
                    n += msgpack_len(a, k + n)
                out += a[k:k + n]
                k += n
        assert j == lb and k == sa, 'a block that does not merge'
        out += a[sa:]
    return bytes(out)


def decompressed(path):
    """(its header's flags, the body of a trace.ltr): decompressed by the
    zstd tool when the header says zstd, its blocks not merged."""
    version, flags = trace_header(path)
    with open(path, 'rb') as f:
        body = f.read()[TRACE_HDR:]
    if version < 5 or not flags & TRACE_ZSTD:
        return 0, body
    return flags, subprocess.run(['zstd', '-dcq'], input=body, stdout=subprocess.PIPE,
                                 check=True).stdout


def trace_end(path):
    """The last records of a trace.ltr: of a split body, its last two
    blocks' (each block merges on its own), else the whole body."""
    flags, body = decompressed(path)
    if not flags & TRACE_SPLIT:
        return body
    starts, i = [0], 0
    while i < len(body):
        starts.append(i)
        i += 12 + sum(int.from_bytes(body[i + k:i + k + 4], 'little') for k in (0, 4))
    return merge_blocks(body[starts[-2]:])


def trace_body(path):
    """The records of a trace.ltr, decompressed by the zstd tool when the
    header says zstd (and merged from its blocks when it says split): a
    check apart from recorderd's own reader."""
    flags, body = decompressed(path)
    return merge_blocks(body) if flags & TRACE_SPLIT else body


def plain_trace(path, out):
    """Writes out: the trace at path as a version 4 file, uncompressed (the
    records at their offsets in the file, for tests that cut or corrupt
    them). Returns its bytes."""
    with open(path, 'rb') as f:
        magic = f.read(8)
    data = magic + (4).to_bytes(4, 'little') + bytes(4) + trace_body(path)
    with open(out, 'wb') as f:
        f.write(data)
    return data


def unsanitized_env():
    """base_env() for a program that loads none of our code: without the
    sanitizer runtimes that scripts/sanitize preloads for our own code
    (chromium under them stalls until the test times out; plain luajit
    under them crashed once in a write to 0x20, in CI's sanitize stage)."""
    env = base_env()
    for var in ('LD_PRELOAD', 'ASAN_OPTIONS', 'UBSAN_OPTIONS'):
        env.pop(var, None)
    return env


CHROMIUM_TIMEOUT = 60  # a run takes a few seconds
CHROMIUM_TRIES = 3


def headless(exe, tmp, url, *opts):
    """Runs headless Chromium exe on url with a user data dir of its own
    (removed afterwards) and returns the Result. A run that hangs
    (Chromium's screenshot hung once in some hundred runs on a loaded
    2-CPU machine: CI at 84a1f2d) is killed and started again, at most
    CHROMIUM_TRIES times; what it printed is for the caller to check."""
    for attempt in range(1, CHROMIUM_TRIES + 1):
        profile = tempfile.mkdtemp(prefix='chromium-', dir=tmp)
        try:
            # --run-all-compositor-stages-before-draw: without it a screenshot
            # taken under load may miss tiles not yet rastered (white), about 1
            # run in 50 here; with it 0 in 200 under three busy loops
            return run([exe, '--headless', '--no-sandbox', '--disable-gpu',
                        '--hide-scrollbars', '--force-device-scale-factor=1',
                        '--run-all-compositor-stages-before-draw',
                        '--no-first-run', '--user-data-dir=' + profile] + list(opts) + [url],
                       tmp, unsanitized_env(), CHROMIUM_TIMEOUT)
        except Failure as e:
            if not str(e).startswith('timeout after') or attempt == CHROMIUM_TRIES:
                raise
            print('chromium %s hung (%s); run again' % (' '.join(opts), e))
        finally:
            shutil.rmtree(profile, ignore_errors=True)



C_ADDR = re.compile(rb'\[C\]: at 0x[0-9a-f]+')


def compare_runs(expected, got, what, luajit=False):
    """Raise Failure unless stdout, stderr and status are identical. Under
    LuaJIT a traceback names a C function by its address, which ASLR moves
    from run to run: those compare as one."""
    if luajit:
        for r in (expected, got):
            r.out, r.err = C_ADDR.sub(b'[C]: at ADDR', r.out), C_ADDR.sub(b'[C]: at ADDR', r.err)
    problems = []
    if expected.status != got.status:
        problems.append('exit status %s, expected %s'
                        % (got.status, expected.status))
    for name in ('out', 'err'):
        a, b = getattr(expected, name), getattr(got, name)
        if a != b:
            problems.append('std%s differs:\n--- expected\n%s\n--- got\n%s'
                            % (name, show_bytes(a), show_bytes(b)))
    if problems:
        raise Failure('%s (%s):\n%s' % (what, ' '.join(got.cmd),
                                         '\n'.join(problems)))


# {======================================================================
# Reference tracer

def build_helper(tmp):
    """Compile tests/lua/reftrace_c.c when no --reftrace-c was given."""
    src = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                       '..', 'lua', 'reftrace_c.c')
    try:
        cflags = subprocess.run(['pkg-config', '--cflags', 'lua5.1'],
                                capture_output=True, text=True,
                                check=True).stdout.split()
    except (OSError, subprocess.CalledProcessError):
        cflags = ['-I/usr/include/lua5.1']
    so = os.path.join(tmp, 'reftrace_c.so')
    cc = os.environ.get('CC', 'cc')
    proc = subprocess.run([cc, '-shared', '-fPIC', '-O2'] + cflags
                          + [src, '-o', so], capture_output=True, text=True)
    if proc.returncode != 0:
        raise Failure('cannot build reftrace_c.so:\n' + proc.stderr)
    return so


def lua_opts(args):
    """The interpreter's options before the program (--lua-opt; none for
    the scripts that call these functions with arguments of their own)."""
    return list(getattr(args, 'lua_opt', None) or [])


def reference(args, prog_dir, prog, tmp, helper, extra_env=None):
    """Run the program under reftrace.lua: (result, lines, calls)."""
    out = os.path.join(tmp, 'reftrace.out')
    env = base_env()
    env.update(extra_env or {})
    env['LUA_PATH'] = './?.lua;%s/?.lua;;' % os.path.abspath(
        os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'lua'))
    cpath = os.environ.get('LUA_CPATH', ';;')
    env['LUA_CPATH'] = '%s/?.so;%s' % (os.path.dirname(helper), cpath)
    env['REFTRACE_OUT'] = out
    res = run((getattr(args, 'ref_lua', None) or args.lua).split() + ['-lreftrace']
              + lua_opts(args) + [prog], prog_dir, env)
    try:
        lines, calls = reftrace_post.parse(out)
    except (OSError, reftrace_post.RefTraceError) as e:
        raise Failure('reference tracer failed: %s\nstderr:\n%s'
                      % (e, show_bytes(res.err)))
    for key in lines:
        if reftrace_post.leaf(key).endswith('@[C]'):
            raise Failure('reference: line events in a C frame: '
                          + squeeze(key))
    return res, lines, calls

# }======================================================================


# {======================================================================
# recorderd

def traced(args, prog_dir, prog, tmp):
    outdir = os.path.join(tmp, 'out')
    os.mkdir(outdir)
    how = [] if getattr(args, 'lines_sample', False) else ['--lines', 'exact']
    cmd = [args.recorderd, 'run', '--quiet', '--out', outdir] + how + \
        (['--memory'] if getattr(args, 'memory', False) else []) + ['--', args.lua] + lua_opts(args) + [prog]
    res = run(cmd, prog_dir, base_env())
    return res, outdir


def short_src(src, cwd=None):
    """SRC as recorderd shows it (recorderd/core/rd_label.h): past its Lua
    library root (.../share/lua/5.N/, .../lib/lua/5.N/) when it has one,
    else past "CWD/" when under the program's working directory cwd and
    past a leading "./". (The rule's exception, two sources shown the same,
    is collector-labels' to check: the corpus has none.)"""
    root = re.search(r'/(?:share|lib)/lua/5\.[1-9]/(?=.)', src)
    if root:
        return src[root.end():]
    cwd = (cwd or '').rstrip('/')
    if cwd and src.startswith(cwd + '/') and len(src) > len(cwd) + 1:
        src = src[len(cwd) + 1:]
    while src.startswith('./') and len(src) > 2:
        src = src[2:]
    return src


def human_label(label, cwd=None):
    """What people read for a traced label NAME@SRC:LINE: `NAME (SRC:LINE)`
    with SRC shown short (short_src); `NAME [C]`."""
    name, where = label.rsplit('@', 1)
    if where == '?':
        return '? (unknown frame)'
    if where == '[C]' or ':' not in where:  # [unknown resumer]: the reference's
        return name + ' ' + where
    src, line = where.rsplit(':', 1)
    return '%s (%s:%s)' % (name, short_src(src, cwd), line)


def folded_label(label, cwd=None):
    """A traced label NAME@SRC:LINE as stacks.folded writes it: the same,
    SRC shown short (short_src); '[...]', a cut, as it is."""
    name, at, where = label.rpartition('@')
    if not at or where in ('?', '[C]') or ':' not in where:  # [unknown resumer]: the reference's
        return label
    src, line = where.rsplit(':', 1)
    return '%s@%s:%s' % (name, short_src(src, cwd), line)


def session_cwd(session):
    """The program's working directory, from the session's session.json."""
    with open(os.path.join(session, 'session.json')) as f:
        return json.load(f).get('cwd')


def report(args, session, weight, tmp):
    path = os.path.join(tmp, 'report-%s.folded' % weight)
    cmd = [args.recorderd, 'report', session, '--format', 'folded',
           '--weight', weight, '-o', path]
    res = run(cmd, tmp, base_env())
    if res.status != 0:
        raise Failure('%s failed with status %s:\n%s'
                      % (' '.join(cmd), res.status, show_bytes(res.err)))
    try:
        return reftrace_post.read_folded(path)
    except (OSError, ValueError) as e:
        raise Failure('bad folded report: %s' % e)

# }======================================================================


# {======================================================================
# Comparison

def squeeze(key, limit=240):
    """A stack key for display: runs of one frame as 'frame*N', long ones
    cut in the middle (the leaf end is kept)."""
    s = ';'.join(label if n == 1 else '%s*%d' % (label, n)
                 for label, n in reftrace_post.runs_of(key))
    if len(s) > limit:
        s = s[:60] + ' ... ' + s[-(limit - 65):]
    return s


def diff(weight, ref, got):
    """Lines describing how got differs from ref (empty if equal)."""
    ref = {k: v for k, v in ref.items() if v}
    got = {k: v for k, v in got.items() if v}
    if ref == got:
        return []
    rows = []
    for stack in sorted(set(ref) | set(got)):
        a, b = ref.get(stack), got.get(stack)
        if a == b:
            continue
        if b is None:
            rows.append('  missing %s  (reference %d)' % (squeeze(stack), a))
        elif a is None:
            rows.append('  extra   %s  (recorderd %d)' % (squeeze(stack), b))
        else:
            rows.append('  count   %s  reference %d, recorderd %d'
                        % (squeeze(stack), a, b))
    head = ('weight %s: %d stacks differ (reference: %d stacks, %d events;'
            ' recorderd: %d stacks, %d events)'
            % (weight, len(rows), len(ref), sum(ref.values()), len(got),
               sum(got.values())))
    if len(rows) > MAX_DIFF_LINES:
        rows = rows[:MAX_DIFF_LINES] + ['  ... %d more'
                                        % (len(rows) - MAX_DIFF_LINES)]
    return [head] + rows


def without_gc(folded):
    """folded without the stacks that end in a (gc) frame (run --memory)."""
    return {k: v for k, v in folded.items() if not k.rsplit(';', 1)[-1].startswith('(gc)@')}


def save(dirname, name, d):
    os.makedirs(dirname, exist_ok=True)
    reftrace_post.write_folded(d, os.path.join(dirname, name))

# }======================================================================


# {======================================================================

def check(args, tmp):
    path = os.path.abspath(args.program)
    prog_dir, prog = os.path.dirname(path), os.path.basename(path)
    helper = args.reftrace_c or build_helper(tmp)

    plain = run([args.lua] + lua_opts(args) + [prog], prog_dir, unsanitized_env())
    ref, ref_lines, ref_calls = reference(args, prog_dir, prog, tmp, helper)
    ref_lines = reftrace_post.cut_deep(ref_lines)
    ref_calls = reftrace_post.cut_deep(ref_calls)
    luajit = 'luajit' in os.path.basename(args.lua)
    compare_runs(plain, ref, 'the reference run changed the program output'
                 ' (reftrace.lua disturbs it, or the program is not'
                 ' deterministic)', luajit)

    # run --quiet: under luajit not even the collector's note that the JIT
    # is off (LUATRACE_QUIET), so stderr too is the plain run's
    res, outdir = traced(args, prog_dir, prog, tmp)
    compare_runs(plain, res, 'the traced run changed the program output', luajit)
    session = find_session(outdir)
    lines = report(args, session, 'lines', tmp)
    calls = report(args, session, 'calls', tmp)
    if getattr(args, 'memory', False):  # randprog.py's arguments have none
        lines, calls = without_gc(lines), without_gc(calls)
    cwd = session_cwd(session)
    ref_lines = reftrace_post.relabel(ref_lines, lambda l: folded_label(l, cwd))
    ref_calls = reftrace_post.relabel(ref_calls, lambda l: folded_label(l, cwd))

    sampled = getattr(args, 'lines_sample', False)  # lines by sample: calls only
    problems = ([] if sampled else diff('lines', ref_lines, lines)) + diff('calls', ref_calls,
                                                                          calls)
    if problems and args.save:
        save(args.save, 'reference-lines.folded', ref_lines)
        save(args.save, 'reference-calls.folded', ref_calls)
        save(args.save, 'recorderd-lines.folded', lines)
        save(args.save, 'recorderd-calls.folded', calls)
        problems.append('folded files saved in ' + args.save)
    if problems:
        raise Failure('%s: recorderd disagrees with the reference\n%s'
                      % (prog, '\n'.join(problems)))
    print('%s: ok (%d line events in %d stacks, %d calls in %d stacks)'
          % (prog, sum(ref_lines.values()), len(ref_lines),
             sum(ref_calls.values()), len(ref_calls)))


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    p.add_argument('program', help='a .lua file of tests/lua')
    p.add_argument('--recorderd', required=True, help='the recorderd binary')
    p.add_argument('--lua', default='lua5.1', help='the Lua 5.1 interpreter')
    p.add_argument('--ref-lua', help='the reference run\'s interpreter and its'
                   ' options (default: --lua), e.g. "luajit -joff"')
    p.add_argument('--reftrace-c', help='reftrace_c.so (built here with cc'
                   ' when not given)')
    p.add_argument('--lua-opt', action='append', default=[],
                   help='an option of the interpreter before the program, in'
                   ' every run (repeatable; write --lua-opt=-lmod)')
    p.add_argument('--memory', action='store_true', help='trace with run --memory')
    p.add_argument('--lines-sample', action='store_true',
                   help="run's default, lines by sample: compare the calls only")
    p.add_argument('--save', help='on mismatch, write the four folded files'
                   ' into this directory')
    return p.parse_args(argv)


def main(argv):
    args = parse_args(argv)
    if not have_recorderd(args.recorderd):
        return SKIP
    if skip_missing(args.lua, args.program):
        return SKIP
    return in_tmpdir('luatrace-corpus-', lambda tmp: check(args, tmp))

# }======================================================================


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
