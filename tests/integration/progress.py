#!/usr/bin/env python3
"""Progress of `recorderd report` and `recorderd run` on stderr (progress.py).

  progress.py --recorderd PATH [--lua lua5.1]

Makes a trace of a few MB (a traced loop), then replays it with
`recorderd report --format folded`:
  1. stderr a pipe, LUATRACE_PROGRESS_MS=0: stderr stays empty;
  2. stderr a pty, LUATRACE_PROGRESS_MS=0 (a line after every chunk read):
     progress lines drawn with \\r (events, events/s, % read, time left),
     the last one erased, stdout (a pipe) the same report as in 1;
  3. stderr a pty, default interval (1 s): a replay shorter than a second
     draws nothing.
Then `recorderd run` of the same program, its reports written after it
ends:
  4. stderr a pipe, LUATRACE_PROGRESS_MS=0: the summary alone, no \\r;
  5. stderr a pty, LUATRACE_PROGRESS_MS=0: a line before each report
     (SESSION: writing FILE (I of N), S s), report.html first (written
     beside the others), session.json last, erased before
     the summary; the program's output untouched;
  6. stderr a pty, --quiet: nothing at all;
  7. (root, a tmpfs mount) stderr a pty, a 1 MB disk the trace fills: the
     reports fail, the cut trace is removed and they are written again;
     every line's "I of N" counts on (1, 2, ...) and never passes its N.
Everything runs in a temporary directory that is always removed.
Exit status: 0 pass, 1 fail, 77 skipped (no recorderd).
"""

import argparse
import json
import os
import pty
import re
import signal
import subprocess
import sys
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from corpus import trace_body  # noqa: E402
from harness import SKIP, expect, find_session, have_recorderd, in_tmpdir  # noqa: E402

TIMEOUT = 60

PROGRAM = '''local function step(i) return i % 7 end
local s = 0
for i = 1, 150000 do s = s + step(i) end
print(s)
'''


def env_without(*names, **extra):
    env = dict(os.environ)
    for n in names + ('LUATRACE_PROGRESS_MS',):
        env.pop(n, None)
    env.update(extra)
    return env


def make_trace(args, tmp):
    prog = os.path.join(tmp, 'loop.lua')
    with open(prog, 'w') as f:
        f.write(PROGRAM)
    out = os.path.join(tmp, 'out')
    # every line counted: a large trace
    r = subprocess.run([args.recorderd, 'run', '--quiet', '--lines', 'exact', '--out', out, '--',
                        args.lua, prog], cwd=tmp, env=env_without('LUA_INIT'),
                       capture_output=True, timeout=TIMEOUT)
    expect(r.returncode == 0, 'traced run failed: %r' % r.stderr)
    session = find_session(out)  # loop, or loop.PID if another ring was named so
    # replayed 256 KiB of records at a time: several reads
    size = len(trace_body(os.path.join(session, 'trace.ltr')))
    expect(size > (1 << 20), 'trace too small for the test: %d bytes of records' % size)
    return session


def report_cmd(args, session):
    return [args.recorderd, 'report', session, '--format', 'folded',
            '--weight', 'calls']


def under_pty(cmd, env, cwd=None):
    """Runs cmd with stderr on a pty; returns (stdout, what the pty got)."""
    master, slave = pty.openpty()
    proc = subprocess.Popen(cmd, env=env, stdin=subprocess.DEVNULL, cwd=cwd,
                            stdout=subprocess.PIPE, stderr=slave,
                            start_new_session=True)
    os.close(slave)
    got = b''
    deadline = time.monotonic() + TIMEOUT
    out_chunks = []
    try:
        # the report is small: read the pty to its end, then stdout
        while time.monotonic() < deadline:
            try:
                b = os.read(master, 65536)
            except OSError:  # EIO: the last holder of the slave is gone
                break
            if not b:
                break
            got += b
        out_chunks.append(proc.stdout.read())
        proc.wait(timeout=max(1, deadline - time.monotonic()))
    finally:
        os.close(master)
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    expect(proc.returncode == 0, 'report under a pty failed: %r' % got)
    return b''.join(out_chunks), got


def check(args, tmp):
    session = make_trace(args, tmp)
    cmd = report_cmd(args, session)

    # 1. not a terminal: silent, whatever the interval
    piped = subprocess.run(cmd, env=env_without(LUATRACE_PROGRESS_MS='0'),
                           capture_output=True, timeout=TIMEOUT)
    expect(piped.returncode == 0, 'report failed: %r' % piped.stderr)
    expect(piped.stderr == b'', 'stderr not a terminal, yet: %r'
           % piped.stderr[:300])
    expect(b'loop.lua:1 150000\n' in piped.stdout, 'no folded stacks on stdout: %r' % piped.stdout[:300])

    # 2. a terminal, a line after every chunk
    out, tty = under_pty(cmd, env_without(LUATRACE_PROGRESS_MS='0'))
    expect(out == piped.stdout, 'stdout differs under a pty')
    text = tty.decode('utf-8', 'replace')
    lines = [l for l in text.split('\r') if l.strip()]
    pat = re.compile(r'^recorderd: replaying: (\d+) events, [\d.]+ M events/s,'
                     r' (\d+)% read, \d+ s left *$')
    expect(len(lines) >= 3, 'expected several progress lines, got %r'
           % text[:500])
    counts = []
    for l in lines:
        m = pat.match(l)
        expect(m, 'unexpected progress line %r' % l)
        counts.append(int(m.group(1)))
    expect(counts == sorted(counts) and counts[-1] > counts[0],
           'event counts do not grow: %s' % counts)
    expect('\n' not in text, 'progress must stay on one line: %r' % text[:300])
    # erased at the end: \r, blanks over the whole line, \r
    expect(re.search(r'\r +\r$', text) is not None,
           'the last progress line is not erased: %r' % text[-200:])

    # 3. a terminal, default interval: a short replay draws nothing
    out, tty = under_pty(cmd, env_without())
    expect(out == piped.stdout, 'stdout differs under a pty')
    expect(tty == b'', 'a replay under a second drew progress: %r' % tty[:300])
    nrun = check_run(args, tmp)
    print('ok: %d progress lines of report, %d of run, silent when stderr is not a '
          'terminal' % (len(lines), nrun))


def run_cmd(args, tmp, *opts):
    return [args.recorderd, 'run', '--out', os.path.join(tmp, 'runout')] + list(opts) + [
        '--', args.lua, os.path.join(tmp, 'loop.lua')]


OPEN = r'open: runout/loop(\.\d+)*/report\.html'


def check_run(args, tmp):
    env = env_without('LUA_INIT', LUATRACE_PROGRESS_MS='0')
    # 4. not a terminal: the summary, nothing drawn
    piped = subprocess.run(run_cmd(args, tmp), env=env, cwd=tmp, capture_output=True,
                           timeout=TIMEOUT)
    expect(piped.returncode == 0, 'run failed: %r' % piped.stderr)
    # the session is loop, or loop.PID if another ring was named so then
    expect(b'\r' not in piped.stderr and b'writing' not in piped.stderr
           and re.search(OPEN, piped.stderr.decode('utf-8', 'replace')),
           'stderr not a terminal, yet: %r' % piped.stderr[:300])
    # 5. a terminal: a line before each report, erased before the summary
    out, tty = under_pty(run_cmd(args, tmp), env, cwd=tmp)
    expect(out == piped.stdout, 'the program\'s output differs under a pty')
    text = tty.decode('utf-8', 'replace')
    head, sep, summary = text.rpartition('\r\r\n')
    expect(sep and re.search(OPEN, summary),
           'no summary after the progress: %r' % text[:500])
    lines = [l for l in head.split('\r') if l.strip()]
    pat = re.compile(r'^recorderd: loop(?:\.\d+)*: writing (\S+) \((\d+) of (\d+)\), \d+ s *$')
    files = []
    for l in lines:
        m = pat.match(l)
        expect(m, 'unexpected progress line %r' % l)
        files.append(m.group(1))
        expect(int(m.group(2)) == len(files) and m.group(3) == str(len(lines)),
               'counts wrong in %r' % l)
    # report.html is written on a thread of its own beside the others; lines
    # by sample (run's default): no coverage.lcov
    expect(files == ['report.html', 'profile.txt', 'flamegraph.svg', 'session.json'],
           'reports drawn: %r' % files)
    expect(re.search(r'\r +\r$', head + '\r') is not None,
           'the last progress line is not erased: %r' % head[-200:])
    # 6. --quiet: nothing
    out, tty = under_pty(run_cmd(args, tmp, '--quiet'), env, cwd=tmp)
    expect(tty == b'', '--quiet drew %r' % tty[:300])
    check_full_disk(args, tmp, env)
    return len(lines)


# A trace of a few MB (zstd) for a 1 MiB disk, and reports of ~1 MB (the
# padding's lines in report.html): they do not fit beside the cut trace,
# they do once it is removed. 6 M rounds make 4.1 MB of trace here; 1.5 M
# made 1.09 MB, 5% over the disk, which a machine whose ticks compress
# better (daemon-diskfull's and daemon-fsize's failures) would fit whole:
# no trace cut, none removed.
FULL_PROGRAM = '''local function step(i) return i % 7 end
local s = 0
for i = 1, 6000000 do s = s + step(i) end
print(s)
''' + '-- padding: a long source for report.html\n' * 8000


def check_full_disk(args, tmp, env):
    # 7. a full disk: the reports written again count on, up to their N
    small = os.path.join(tmp, 'small')
    os.mkdir(small)
    if os.geteuid() != 0 or subprocess.run(
            ['mount', '-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', small],
            capture_output=True).returncode != 0:
        print('7. skipped: needs root and a tmpfs mount')
        return
    try:
        with open(os.path.join(tmp, 'full.lua'), 'w') as f:
            f.write(FULL_PROGRAM)
        cmd = [args.recorderd, 'run', '--lines', 'exact', '--out', os.path.join(small, 'out'),
               '--', args.lua, os.path.join(tmp, 'full.lua')]
        out, tty = under_pty(cmd, env, cwd=tmp)
        with open(os.path.join(small, 'out', 'full', 'session.json')) as f:
            error = json.load(f)['error']
    finally:
        if subprocess.run(['umount', small], capture_output=True).returncode != 0:
            subprocess.run(['umount', '-l', small], capture_output=True)
    expect('removed to make room for the reports' in error,
           'the reports were not written again: %s' % error)
    text = tty.decode('utf-8', 'replace').rpartition('\r\r\n')[0]
    pat = re.compile(r'^recorderd: full: writing (\S+) \((\d+) of (\d+)\), \d+ s *$')
    lines = [l for l in text.split('\r') if l.strip()]
    expect(len(lines) > 5, 'no retry drawn: %r' % lines)
    for k, l in enumerate(lines, 1):
        m = pat.match(l)
        expect(m and int(m.group(2)) == k and k <= int(m.group(3)),
               'counts wrong in %r (line %d of %r)' % (l, k, lines))
    expect(m.group(1) == 'session.json' and m.group(2) == m.group(3),
           'the last line is not session.json, N of N: %r' % lines[-1])


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--recorderd', required=True)
    ap.add_argument('--lua', default='lua5.1')
    args = ap.parse_args(argv)
    if not have_recorderd(args.recorderd):
        return SKIP
    args.recorderd = os.path.abspath(args.recorderd)
    return in_tmpdir('luatrace-progress-', lambda tmp: check(args, tmp), (subprocess.TimeoutExpired,))


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
