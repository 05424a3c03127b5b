#!/usr/bin/env python3
"""Check that recorderd's time weights are proportional to the work done.

  timing.py --recorderd PATH [--lua lua5.1] [--program timing_ratio.lua]
  timing.py --recorderd PATH [--lua lua5.1] --fidelity PAIR

Runs tests/lua/timing_ratio.lua under `recorderd run`, then reads
`recorderd report SESSION --format folded --weight time` (nanoseconds) and
sums the self time (stacks whose leaf is the function) of twice() and
once(). twice() does exactly twice the work of once(), so the ratio must be
2 within 20%.

With --fidelity, a pair of bench/fidelity.lua instead: a Lua-heavy part
(many events) and a C-heavy part (few), sized by a plain run to take the
same CPU time. Their time in the profile (callees included) must then be
equal within --bound (a factor): what each hook costs the program beyond
its own measured time is taken off (the calibration, co_calib.c);
without that, the Lua-heavy part weighed 2.4 (dense) to 4.6 (calls)
times the other. Under LuaJIT (calllines), what its interpreter spends on
each hook beyond the hook is taken off where it lands (after the event):
without that, the calls weighed 3 to 3.5 times the long lines. The machine's own noise (plain runs of one part differ
by 20% between processes here) is why the bound is wide; calls, 60 ns of
work for 7 events, moves most (0.34 to 1.98 over a day's runs).

A busy machine can skew one run, so up to --attempts runs are made; one
good run passes.
Exit status: 0 pass, 1 fail, 77 skipped (recorderd does not exist).
"""

import argparse
import os
import shutil
import signal
import sys
import tempfile

sys.dont_write_bytecode = True  # keep the source tree clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import corpus  # noqa: E402
import harness  # noqa: E402
import reftrace_post  # noqa: E402

EXPECTED, TOLERANCE = 2.0, 0.20
FIDELITY_PROGRAM = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..',
                                'bench', 'fidelity.lua')


def self_times(folded):
    """Sum the weights of stacks whose leaf is once@... or twice@..."""
    sums = {'once': 0, 'twice': 0}
    for stack, weight in folded.items():
        leaf = reftrace_post.leaf(stack)
        for name in sums:
            if leaf.startswith(name + '@'):
                sums[name] += weight
    return sums


def traced_folded(args, tmp, program, prog_args=()):
    """One traced run of program: its folded stacks, weight time."""
    path = os.path.abspath(program)
    prog_dir, prog = os.path.dirname(path), os.path.basename(path)
    outdir = os.path.join(tmp, 'out')
    os.mkdir(outdir)
    cmd = [args.recorderd, 'run', '--quiet', '--out', outdir, '--',
           args.lua, prog] + list(prog_args)
    res = harness.run(cmd, prog_dir, harness.base_env())
    if res.status != 0:
        raise harness.Failure('%s exited with %s:\n%s'
                             % (' '.join(cmd), res.status,
                                harness.show_bytes(res.err)))
    session = harness.find_session(outdir)
    return corpus.report(args, session, 'time', tmp)


def measure(args, tmp):
    """One traced run: returns (once_ns, twice_ns)."""
    sums = self_times(traced_folded(args, tmp, args.program))
    if sums['once'] <= 0 or sums['twice'] <= 0:
        raise harness.Failure('no self time for once/twice: %r' % sums)
    return sums['once'], sums['twice']


def fidelity_counts(args):
    """Iteration counts of the pair's parts for equal plain CPU time (LuaJIT
    with its JIT off, as it runs traced)."""
    jit = ['-joff'] if 'luajit' in os.path.basename(args.lua) else []
    res = harness.run([args.lua] + jit + [FIDELITY_PROGRAM, 'measure', args.fidelity],
                      os.path.dirname(FIDELITY_PROGRAM), harness.base_env())
    if res.status != 0:
        raise harness.Failure('plain measure failed: %s' % harness.show_bytes(res.err))
    return res.out.decode().split()


def measure_fidelity(args, tmp, counts):
    """One traced run of the pair: returns (lua_part_ns, c_part_ns)."""
    folded = traced_folded(args, tmp, FIDELITY_PROGRAM, ['run', args.fidelity] + counts)
    sums = {'part_a': 0, 'part_b': 0}
    for stack, weight in folded.items():
        frames = stack.split(';')
        for part in sums:
            if any(f.startswith(part + '@') for f in frames):
                sums[part] += weight
    if sums['part_a'] <= 0 or sums['part_b'] <= 0:
        raise harness.Failure('no time for part_a/part_b: %r' % sums)
    return sums['part_b'], sums['part_a']


def main(argv):
    default_prog = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                '..', 'lua', 'timing_ratio.lua')
    p = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    p.add_argument('--recorderd', required=True)
    p.add_argument('--lua', default='lua5.1')
    p.add_argument('--program', default=default_prog)
    p.add_argument('--attempts', type=int, default=3)
    p.add_argument('--fidelity', help='a pair of bench/fidelity.lua')
    p.add_argument('--bound', type=float, default=2.0,
                   help='--fidelity: the largest ratio either way')
    args = p.parse_args(argv)
    if not (os.path.isfile(args.recorderd)
            and os.access(args.recorderd, os.X_OK)):
        print('SKIP: no recorderd at %s' % args.recorderd)
        return harness.SKIP
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
    lo, hi = EXPECTED * (1 - TOLERANCE), EXPECTED * (1 + TOLERANCE)
    names = ('once', 'twice')
    if args.fidelity:
        try:
            counts = fidelity_counts(args)
        except harness.Failure as e:
            print('FAIL: %s' % e)
            return 1
        lo, hi, names = 1 / args.bound, args.bound, ('C part', 'Lua part')
    for attempt in range(1, args.attempts + 1):
        tmp = tempfile.mkdtemp(prefix='luatrace-timing-')
        try:
            if args.fidelity:
                once, twice = measure_fidelity(args, tmp, counts)
            else:
                once, twice = measure(args, tmp)
        except harness.Failure as e:
            print('FAIL: %s' % e)
            return 1
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        ratio = twice / once
        print('attempt %d: %s %d ns, %s %d ns, ratio %.3f (want %.1f..%.1f)'
              % (attempt, names[0], once, names[1], twice, ratio, lo, hi))
        if lo <= ratio <= hi:
            return 0
    print('FAIL: time ratio %s/%s out of range in %d attempts'
          % (names[1], names[0], args.attempts))
    return 1


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
