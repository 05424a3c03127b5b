#!/usr/bin/env python3
"""Check that recorderd's time weights are proportional to the work done.

  timing.py --recorderd PATH [--lua lua5.1] [--program timing_ratio.lua]

Runs tests/lua/timing_ratio.lua under `recorderd run`, then reads
`recorderd report SESSION --format folded --weight time` (nanoseconds) and
sums the self time (stacks whose leaf is the function) of twice() and
once(). twice() does exactly twice the work of once(), so the ratio must be
2 within 20%. A busy machine can skew one run, so up to --attempts runs are
made; one good run passes.
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


def self_times(folded):
    """Sum the weights of stacks whose leaf is once@... or twice@..."""
    sums = {'once': 0, 'twice': 0}
    for stack, weight in folded.items():
        leaf = reftrace_post.leaf(stack)
        for name in sums:
            if leaf.startswith(name + '@'):
                sums[name] += weight
    return sums


def measure(args, tmp):
    """One traced run: returns (once_ns, twice_ns)."""
    path = os.path.abspath(args.program)
    prog_dir, prog = os.path.dirname(path), os.path.basename(path)
    outdir = os.path.join(tmp, 'out')
    os.mkdir(outdir)
    cmd = [args.recorderd, 'run', '--quiet', '--out', outdir, '--',
           args.lua, prog]
    res = harness.run(cmd, prog_dir, harness.base_env())
    if res.status != 0:
        raise harness.Failure('%s exited with %s:\n%s'
                             % (' '.join(cmd), res.status,
                                harness.show_bytes(res.err)))
    session = harness.find_session(outdir)
    sums = self_times(corpus.report(args, session, 'time', tmp))
    if sums['once'] <= 0 or sums['twice'] <= 0:
        raise harness.Failure('no self time for once/twice: %r' % sums)
    return sums['once'], sums['twice']


def main(argv):
    default_prog = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                '..', 'lua', 'timing_ratio.lua')
    p = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    p.add_argument('--recorderd', required=True)
    p.add_argument('--lua', default='lua5.1')
    p.add_argument('--program', default=default_prog)
    p.add_argument('--attempts', type=int, default=3)
    args = p.parse_args(argv)
    if not (os.path.isfile(args.recorderd)
            and os.access(args.recorderd, os.X_OK)):
        print('SKIP: no recorderd at %s' % args.recorderd)
        return harness.SKIP
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
    lo, hi = EXPECTED * (1 - TOLERANCE), EXPECTED * (1 + TOLERANCE)
    for attempt in range(1, args.attempts + 1):
        tmp = tempfile.mkdtemp(prefix='luatrace-timing-')
        try:
            once, twice = measure(args, tmp)
        except harness.Failure as e:
            print('FAIL: %s' % e)
            return 1
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        ratio = twice / once
        print('attempt %d: once %d ns, twice %d ns, ratio %.3f (want %.1f..%.1f)'
              % (attempt, once, twice, ratio, lo, hi))
        if lo <= ratio <= hi:
            return 0
    print('FAIL: time ratio twice/once out of range in %d attempts'
          % args.attempts)
    return 1


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
