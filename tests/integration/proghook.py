#!/usr/bin/env python3
"""A corpus program whose own debug hook is the reference tracer.

  proghook.py PROGRAM.lua --recorderd PATH [--lua lua5.1] [--reftrace-c SO] [--save DIR]

The program runs under `recorderd run -- lua5.1 -lreftrace PROG` (or lua5.4,
with the helper built against 5.4: --reftrace-c): reftrace's
debug.sethook is then the program's own hook, which the collector chains
behind its own (collector/co_dbghook.c), one per coroutine. In a fresh
temporary directory (always removed):
  1. the program untraced, and under the reference tracer alone (as
     corpus.py runs them): the output, the truth's folded stacks;
  2. the same under recorderd: the program's output unchanged, and the
     truth written by its own hook equal to step 1's (the hook saw every
     event and stack that plain Lua shows it);
  3. recorderd's folded stacks, without reftrace's own (its module's
     load under lua.c's -l require, the only frames reftrace.lua has),
     equal to the truth.
Exit status: 0 pass, 1 fail, 77 skipped.
"""

import argparse
import os
import sys

sys.dont_write_bytecode = True  # keep the source tree clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import corpus  # noqa: E402
import reftrace_post  # noqa: E402
from harness import (SKIP, Failure, run, base_env, in_tmpdir,  # noqa: E402
                     have_recorderd, find_session, skip_missing)

def own(key, lua):
    """Is this stack reftrace's own (its load: lua.c's -lreftrace, require
    called from pmain, then reftrace.lua's main chunk), not the program's?
    lua: the interpreter, whose name roots every stack (lua5.1, lua5.4)."""
    load = '%s@[C];require "reftrace"@[C]' % os.path.basename(lua)
    return key == load or key.startswith(load + ';') or '/reftrace.lua:' in key


def traced_with_hook(args, prog_dir, prog, tmp, helper):
    """recorderd run of lua5.1 -lreftrace PROG: (result, session, truth
    lines, truth calls) with the truth written by the program's hook."""
    outdir = os.path.join(tmp, 'out')
    os.mkdir(outdir)
    truth = os.path.join(tmp, 'hook.out')
    env = base_env()
    env['LUA_PATH'] = './?.lua;%s/?.lua;;' % os.path.abspath(
        os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'lua'))
    env['LUA_CPATH'] = '%s/?.so;%s' % (os.path.dirname(helper),
                                       os.environ.get('LUA_CPATH', ';;'))
    env['REFTRACE_OUT'] = truth
    res = run([args.recorderd, 'run', '--quiet', '--lines', 'exact', '--out', outdir, '--',
               args.lua, '-lreftrace', prog], prog_dir, env)
    try:
        lines, calls = reftrace_post.parse(truth)
    except (OSError, reftrace_post.RefTraceError) as e:
        raise Failure('the program\'s hook (reftrace) failed under recorderd:'
                      ' %s\nstderr:\n%s' % (e, res.err[-600:]))
    return res, find_session(outdir), lines, calls


def check(args, tmp):
    path = os.path.abspath(args.program)
    prog_dir, prog = os.path.dirname(path), os.path.basename(path)
    helper = args.reftrace_c or corpus.build_helper(tmp)
    plain = run([args.lua, prog], prog_dir, base_env())
    ref, ref_lines, ref_calls = corpus.reference(args, prog_dir, prog, tmp, helper)
    corpus.compare_runs(plain, ref, 'the reference run changed the program'
                        ' output')
    res, session, hook_lines, hook_calls = traced_with_hook(args, prog_dir, prog,
                                                            tmp, helper)
    corpus.compare_runs(plain, res, 'the traced run changed the program output')
    problems = (corpus.diff('lines (the hook under recorderd)', ref_lines, hook_lines)
                + corpus.diff('calls (the hook under recorderd)', ref_calls, hook_calls))
    got = {}
    for weight in ('lines', 'calls'):
        d = corpus.report(args, session, weight, tmp)
        got[weight] = {k: v for k, v in d.items() if not own(k, args.lua)}
    cwd = corpus.session_cwd(session)
    ref_lines = reftrace_post.relabel(reftrace_post.cut_deep(ref_lines),
                                      lambda l: corpus.folded_label(l, cwd))
    ref_calls = reftrace_post.relabel(reftrace_post.cut_deep(ref_calls),
                                      lambda l: corpus.folded_label(l, cwd))
    problems += (corpus.diff('lines', ref_lines, got['lines'])
                 + corpus.diff('calls', ref_calls, got['calls']))
    if problems and args.save:
        for name, d in (('reference-lines', ref_lines), ('reference-calls', ref_calls),
                        ('hook-lines', hook_lines), ('hook-calls', hook_calls),
                        ('recorderd-lines', got['lines']),
                        ('recorderd-calls', got['calls'])):
            corpus.save(args.save, name + '.folded', d)
        problems.append('folded files saved in ' + args.save)
    if problems:
        raise Failure('%s with reftrace as its own hook:\n%s'
                      % (prog, '\n'.join(problems)))
    print('%s: ok under its own hook (%d line events, %d calls)'
          % (prog, sum(ref_lines.values()), sum(ref_calls.values())))


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    p.add_argument('program', help='a .lua file of tests/lua')
    p.add_argument('--recorderd', required=True, help='the recorderd binary')
    p.add_argument('--lua', default='lua5.1', help='the interpreter: lua5.1 or lua5.4')
    p.add_argument('--reftrace-c', help='reftrace_c.so (built here when not given)')
    p.add_argument('--save', help='on mismatch, write the folded files here')
    args = p.parse_args(argv)
    if not have_recorderd(args.recorderd):
        return SKIP
    if skip_missing(args.lua, args.program):
        return SKIP
    return in_tmpdir('luatrace-proghook-', lambda tmp: check(args, tmp))


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
