#!/usr/bin/env python3
"""`recorderd run --coverage`: a trace with no clock (nocov.py).

  nocov.py --recorderd PATH --noclock PRELOAD --corpus DIR --cpath DIR [--lua lua5.1] NAME...

For each corpus program NAME (tests/lua/NAME.lua, run from its directory):
  1. a timed run (`recorderd run`) and a coverage run (`recorderd run
     --coverage`), the program's own process under PRELOAD
     (tests/hosts/noclock.c: an rdtsc raises SIGSEGV, clock_gettime and
     gettimeofday are counted) in the coverage run;
  2. the coverage run's program behaves as the timed one (output, exit
     status) and read no clock: no TSC (it would have died of SIGSEGV) and
     0 clock calls in every traced process;
  3. its coverage.lcov equals the timed run's, byte for byte; the folded
     stacks weighed by calls and by lines, rebuilt by `recorderd report`
     from each trace, are equal: the same stacks, calls and line counts;
  4. session.json says timing "none" (the timed run's "timed"), the same
     events; profile.txt says there is no time and ranks by calls;
     report.html says so too and has no flame graph; no flamegraph.svg;
     `report --format folded` (by time) of such a trace warns.
Then `recorderd listen --coverage`: the first program, run with
-lluatrace under PRELOAD, is told by the ack to read no clock: 0 clock
calls, timing "none", the timed run's coverage.lcov.
Programs whose counts depend on time (they loop on os.clock) are not
compared: NOT_DETERMINISTIC; programs that cannot run under PRELOAD are
left out: NEEDS_CLOCK. Everything runs in a temporary directory that
is always removed. Exit status: 0 pass, 1 fail, 77 skipped.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from corpus import Failure, base_env, run, show_bytes  # noqa: E402
import harness  # noqa: E402

SKIP = 77
# counts that depend on the machine's speed: loops bounded by os.clock
NOT_DETERMINISTIC = {'timing_ratio'}
# programs that cannot run under noclock.so, traced or not: they read the
# clock themselves (busted's luasystem; os.tmpname's mkstemp in
# ldoc_penlight; libuv's loop time in luv_coroutine: SIGSEGV untraced) or
# read the output of a process started by io.popen, which gets none there
# (luac5.1 in stripped_chunks)
NEEDS_CLOCK = {'busted_suite', 'ldoc_penlight', 'stripped_chunks', 'luv_coroutine'}


def expect(cond, what):
    if not cond:
        raise Failure(what)


def one_session(outdir):
    dirs = [d for d in os.listdir(outdir) if os.path.isdir(os.path.join(outdir, d))]
    expect(len(dirs) >= 1, 'no session in %s' % outdir)
    return [os.path.join(outdir, d) for d in sorted(dirs)]


def traced(args, name, tmp, coverage):
    prog = os.path.join(args.corpus, name + '.lua')
    outdir = os.path.join(tmp, ('cov-' if coverage else 'timed-') + name)
    counts = os.path.join(tmp, 'clock-' + name)
    # the timed run counts every line too, as the coverage run
    cmd = [args.recorderd, 'run', '--quiet', '--out', outdir] + \
        ([] if coverage else ['--lines', 'exact'])
    if coverage:
        cmd += ['--coverage', '--', 'env', 'LD_PRELOAD=' + args.noclock,
                'NOCLOCK_OUT=' + counts]
    else:
        cmd += ['--']
    res = run(cmd + [args.lua, prog], os.path.dirname(prog), base_env())
    return res, outdir, counts


def folded(args, session, weight):
    res = run([args.recorderd, 'report', session, '--format', 'folded', '--weight', weight],
              session, base_env())
    expect(res.status == 0, 'report %s failed: %s' % (session, show_bytes(res.err)))
    return res.out


def read(path, mode='r'):
    with open(path, mode) as f:
        return f.read()


def check_clock(name, counts):
    expect(os.path.exists(counts), '%s: the preload wrote no count' % name)
    rows = [l.split() for l in read(counts).splitlines()]
    expect(rows and all(int(c) == 0 for _, c in rows),
           '%s: clock read in the coverage run: %r' % (name, rows))


def check_session_files(name, session):
    sj = json.load(open(os.path.join(session, 'session.json')))
    expect(sj.get('timing') == 'none', '%s: session.json timing %r' % (name, sj.get('timing')))
    expect(sj.get('traced_ns') == 0, '%s: traced_ns %r' % (name, sj.get('traced_ns')))
    expect(not os.path.exists(os.path.join(session, 'flamegraph.svg')),
           '%s: flamegraph.svg written without time' % name)
    prof = read(os.path.join(session, 'profile.txt'))
    expect('no time: a coverage run' in prof and '\nBy calls\n' in prof
           and 'self ms' not in prof, '%s: profile.txt: %s' % (name, prof[:300]))
    html = read(os.path.join(session, 'report.html'))
    expect('none: a coverage run' in html and 'id="flame"' not in html,
           '%s: report.html does not say it has no time' % name)
    return sj


def check_program(args, name, tmp):
    t_res, t_out, _ = traced(args, name, tmp, False)
    c_res, c_out, counts = traced(args, name, tmp, True)
    expect(c_res.status == t_res.status and c_res.out == t_res.out,
           '%s: the coverage run differs: status %s vs %s, stderr %s'
           % (name, c_res.status, t_res.status, show_bytes(c_res.err)))
    check_clock(name, counts)
    t_sess, c_sess = one_session(t_out), one_session(c_out)
    expect(len(t_sess) == len(c_sess), '%s: %d sessions vs %d' % (name, len(c_sess), len(t_sess)))
    for t, c in zip(t_sess, c_sess):
        sj = check_session_files(name, c)
        tj = json.load(open(os.path.join(t, 'session.json')))
        expect(tj.get('timing') == 'timed', '%s: timed run says %r' % (name, tj.get('timing')))
        if name in NOT_DETERMINISTIC:
            continue
        # a timed trace's BIAS and HOOK records (the hook's cost) are
        # not counted as events: it has the same
        t_events = tj['events']
        expect(sj.get('bias_ns') is None, '%s: a coverage run with bias_ns' % name)
        expect(sj['events'] == t_events,
               '%s: %d events vs %d' % (name, sj['events'], t_events))
        expect(read(os.path.join(c, 'coverage.lcov')) == read(os.path.join(t, 'coverage.lcov')),
               '%s: coverage.lcov differs from the timed run\'s' % name)
        for weight in ('calls', 'lines'):
            expect(folded(args, c, weight) == folded(args, t, weight),
                   '%s: folded stacks by %s differ from the timed run\'s' % (name, weight))


def check_listen(args, name, tmp):
    """listen --coverage: the ack asks the collector for no clock."""
    prog = os.path.join(args.corpus, name + '.lua')
    sockdir = os.path.join(tmp, 'sock')
    os.mkdir(sockdir, 0o700)
    sock, outdir = os.path.join(sockdir, 's'), os.path.join(tmp, 'listen-' + name)
    counts = os.path.join(tmp, 'listen-clock')
    daemon = subprocess.Popen([args.recorderd, 'listen', '--coverage', '--socket', sock,
                               '--out', outdir], stdin=subprocess.DEVNULL,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                              start_new_session=True)
    try:
        deadline = time.monotonic() + 10
        while not os.path.exists(sock) and time.monotonic() < deadline:
            time.sleep(0.02)
        env = dict(base_env(), LUATRACE_SOCKET=sock, LUA_CPATH=args.cpath + '/?.so;;',
                   LD_PRELOAD=args.noclock, NOCLOCK_OUT=counts)
        res = run([args.lua, '-lluatrace', prog], os.path.dirname(prog), env)
        expect(res.status == 0, '%s under listen: status %s: %s'
               % (name, res.status, show_bytes(res.err)))
        check_clock(name + ' under listen', counts)
        deadline = time.monotonic() + 30
        while not any(os.path.exists(os.path.join(s, 'session.json')) for s in
                      (one_session(outdir) if os.path.isdir(outdir) else [])):
            expect(time.monotonic() < deadline, 'listen wrote no session.json')
            time.sleep(0.05)
    finally:
        subprocess.run([args.recorderd, 'stop', '--socket', sock], capture_output=True,
                       timeout=30)
        try:
            daemon.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(daemon.pid, 9)
            daemon.wait()
    session = one_session(outdir)[0]
    check_session_files(name + ' under listen', session)
    # a view weighed by time of a trace that has none says so
    res = run([args.recorderd, 'report', session, '--format', 'folded'], session, base_env())
    expect(res.status == 0 and b'the trace has no time' in res.err,
           'report by time of a coverage trace: %d %r' % (res.status, res.err[:300]))
    timed = one_session(os.path.join(tmp, 'timed-' + name))[0]
    expect(read(os.path.join(session, 'coverage.lcov')) ==
           read(os.path.join(timed, 'coverage.lcov')),
           '%s under listen: coverage.lcov differs from the timed run\'s' % name)


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--recorderd', required=True)
    ap.add_argument('--noclock', required=True)
    ap.add_argument('--corpus', required=True)
    ap.add_argument('--cpath', required=True)
    ap.add_argument('--lua', default='lua5.1')
    ap.add_argument('names', nargs='+')
    args = ap.parse_args(argv)
    for a in ('recorderd', 'noclock', 'corpus', 'cpath'):
        setattr(args, a, os.path.abspath(getattr(args, a)))
    if not os.access(args.recorderd, os.X_OK):
        print('SKIP: no recorderd at %s' % args.recorderd)
        return SKIP
    if 'libasan' in os.environ.get('LD_PRELOAD', ''):
        # noclock.so forbids the TSC, whose vDSO read AddressSanitizer's
        # runtime makes too: there is no clock-free process to check
        print('SKIP: under AddressSanitizer, whose runtime reads the clock itself')
        return SKIP
    tmp = tempfile.mkdtemp(prefix='luatrace-nocov-')
    try:
        for name in args.names:
            if name not in NEEDS_CLOCK and not harness.skip_missing(
                    args.lua, os.path.join(args.corpus, name + '.lua')):
                check_program(args, name, tmp)
        check_listen(args, args.names[0], tmp)
        print('ok: %d programs: coverage, calls and lines as timed, no clock read; '
              'listen --coverage too' % len(args.names))
        return 0
    except Failure as e:
        print('FAIL: %s' % e)
        return 1
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
