#!/usr/bin/env python3
"""Check a corpus program and the reference tracer, without recorderd.

  reftrace_check.py PROGRAM.lua [--lua lua5.1] [--reftrace-c SO] [--naive]

  1. the program's untraced output (stdout, stderr, status) is the same in
     two runs;
  2. under reftrace.lua the output is unchanged, and two traced runs give
     the same folded stacks (lines and calls);
  3. with --naive, the reference computed by re-reading the whole stack at
     every event (REFTRACE_NAIVE=1, slow) equals the cached one.
Exit status: 0 pass, 1 fail.
"""

import argparse
import os
import sys
import tempfile

sys.dont_write_bytecode = True  # keep the source tree clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import corpus  # noqa: E402
import harness  # noqa: E402


def reference_run(args, prog_dir, prog, tmp, helper, naive=False):
    sub = tempfile.mkdtemp(dir=tmp)
    extra = {'REFTRACE_NAIVE': '1'} if naive else None
    return corpus.reference(args, prog_dir, prog, sub, helper, extra)


def check(args, tmp):
    path = os.path.abspath(args.program)
    prog_dir, prog = os.path.dirname(path), os.path.basename(path)
    helper = args.reftrace_c or corpus.build_helper(tmp)

    first = harness.run([args.lua, prog], prog_dir, harness.base_env())
    second = harness.run([args.lua, prog], prog_dir, harness.base_env())
    corpus.compare_runs(first, second, 'the program is not deterministic')

    ref1, lines1, calls1 = reference_run(args, prog_dir, prog, tmp, helper)
    corpus.compare_runs(first, ref1, 'reftrace.lua changed the output')
    _, lines2, calls2 = reference_run(args, prog_dir, prog, tmp, helper)
    problems = (corpus.diff('lines (second reference run)', lines1, lines2)
                + corpus.diff('calls (second reference run)', calls1, calls2))
    if args.naive:
        _, nlines, ncalls = reference_run(args, prog_dir, prog, tmp, helper,
                                          naive=True)
        problems += (corpus.diff('lines (naive)', lines1, nlines)
                     + corpus.diff('calls (naive)', calls1, ncalls))
    if problems:
        raise harness.Failure('%s: the reference is not stable\n%s'
                             % (prog, '\n'.join(problems)))
    print('%s: ok (status %d, %d line events, %d calls%s)'
          % (prog, first.status, sum(lines1.values()), sum(calls1.values()),
             ', naive agrees' if args.naive else ''))


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    p.add_argument('program')
    p.add_argument('--lua', default='lua5.1')
    p.add_argument('--reftrace-c')
    p.add_argument('--naive', action='store_true')
    args = p.parse_args(argv)
    if harness.skip_missing(args.lua, args.program):
        return harness.SKIP
    return harness.in_tmpdir('luatrace-reftrace-', lambda tmp: check(args, tmp))


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
