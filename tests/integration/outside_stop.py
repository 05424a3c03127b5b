#!/usr/bin/env python3
"""Reading a process from outside holds it stopped briefly, whatever its
memory holds, and record ends when it should.

  outside_stop.py CASE --recorderd PATH --cpath DIR --forged-host PATH [--lua lua5.1]

A poller thread reads /proc/PID/task/*/stat while recorderd works and
times every stretch in which a task of the program is stopped by ptrace
(state 't'). Bounds are generous (a loaded machine is slow); the figures
are doc/attach.md's (scripts/bench-dumpstop). Cases:
  dumpcycle     dump of a C host whose GC list loops (tests/hosts/forged_host
                cycle): a one-line error within 10 s, exit 1, the running
                thread's stack still shown; the host was never stopped for
                2 s and answers afterwards (it hung recorderd for minutes,
                the host stopped all along)
  dumpchain     the same with 4 M forged objects on the list, ending in
                NULL: a one-line error, the host stopped under 2 s (it was
                stopped for the whole walk: 10 s and more)
  dumpbigheap   dump of a lua5.1 holding 2 M tables, with 8 suspended
                coroutines and, running, a coroutine made anew each few
                milliseconds (made after the walk of the GC list, found
                from the running chain): every one shown; stopped under 2 s
                at a stretch (4 to 8 s before)
  recorddeadline  record -d 2 and top -d 2 of a host whose stack no read
                can take (forged_host ci): both end within 10 s, record
                saying why (it never ended)
  recordyoung   record of a process about to exec lua5.1 (sh -c 'sleep 0.3;
                exec lua5.1 prog.lua'), which ends 0.7 s later: a session
                with samples (it said 'no Lua 5.1 state' and wrote none)
"""

import os
import re
import signal
import subprocess
import sys
import threading
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import base_env, Case, cases, expect, Failure  # noqa: E402

ANSWER_S = 10  # recorderd answers within this, whatever the layout
STOP_MAX_S = 2.0  # the longest stretch a program may be held stopped


class StopWatch:
    """Times, from outside, the stretches in which a task of pid is
    stopped by ptrace, until stop()."""

    def __init__(self, pid):
        self.pid, self.longest, self.now_stopped = pid, 0.0, False
        self.done = threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def stopped(self):
        tdir = '/proc/%d/task' % self.pid
        try:
            for t in os.listdir(tdir):
                with open('%s/%s/stat' % (tdir, t)) as f:
                    if f.read().rpartition(')')[2].split()[0] == 't':
                        return True
        except OSError:
            pass
        return False

    def run(self):
        start = None
        while not self.done.is_set():
            s, now = self.stopped(), time.monotonic()
            if s and start is None:
                start = now
            elif not s and start is not None:
                self.longest = max(self.longest, now - start)
                start = None
            if start is not None:  # still stopped: counts as it goes
                self.longest = max(self.longest, now - start)
        # a reading of the last moment before the let go may end the loop:
        # left stopped is stopped still, 10 readings over 100 ms later
        for _ in range(10):
            self.now_stopped = self.stopped()
            if not self.now_stopped:
                break
            time.sleep(0.01)

    def stop(self):
        self.done.set()
        self.thread.join()
        return self.longest


def run_timed(c, args, pid):
    """recorderd ARGS while a StopWatch watches pid: (result, seconds,
    longest stop). A recorderd that has not ended after ANSWER_S + 20 s is
    killed (its ptrace ends with it) and the case fails."""
    w = StopWatch(pid)
    t0 = time.monotonic()
    p = subprocess.Popen([c.args.recorderd] + args, cwd=c.tmp, env=base_env(),
                         stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         start_new_session=True)
    c.procs.append(p)
    try:
        out, err = p.communicate(timeout=ANSWER_S + 20)
    except subprocess.TimeoutExpired:
        p.kill()
        p.communicate()
        longest = w.stop()
        raise Failure('recorderd %s did not answer in %d s (the program held stopped up to '
                      '%.1f s)' % (' '.join(args), ANSWER_S + 20, longest))
    took = time.monotonic() - t0
    longest = w.stop()
    expect(not w.now_stopped, 'recorderd %s left the program stopped' % ' '.join(args))
    return subprocess.CompletedProcess(p.args, p.returncode, out, err), took, longest


def forged(c, mode):
    """forged_host MODE, once it has corrupted its state (READY)."""
    p = subprocess.Popen([c.args.forged_host, mode], cwd=c.tmp, env=base_env(),
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         start_new_session=True)
    c.procs.append(p)
    line = p.stdout.readline()
    if line != b'READY\n':
        p.kill()
        raise Failure('forged_host %s did not get ready: %r %r' % (mode, line, p.stderr.read()))
    return p


def still_alive(p):
    """p answers a line, then ends at the end of its input, exit 0."""
    p.stdin.write(b'ping\n')
    p.stdin.flush()
    expect(p.stdout.readline() == b'ALIVE\n', 'the host does not answer after the dump')
    p.stdin.close()
    expect(p.wait(timeout=30) == 0, 'the host exited %d' % p.returncode)


def hostile_dump(c, mode, why):
    p = forged(c, mode)
    r, took, longest = run_timed(c, ['dump', str(p.pid)], p.pid)
    err = r.stderr.decode()
    expect(took < ANSWER_S, 'dump answered in %.1f s' % took)
    expect(longest < STOP_MAX_S, 'the host was held stopped %.2f s' % longest)
    expect(r.returncode == 1 and err.count('\n') == 1 and why in err,
           'dump of forged_host %s: exit %d, %r' % (mode, r.returncode, err))
    out = r.stdout.decode()
    expect('(running):' in out and 'host_forge [C]' in out and 'serve (' in out,
           'no running stack in the dump: %r' % out)
    still_alive(p)


def case_dumpcycle(c):
    hostile_dump(c, 'cycle', 'loops back on itself')


def case_dumpchain(c):
    hostile_dump(c, 'chain', 'cannot be read')


BIGHEAP = '''local keep = {}
for i = 1, 2000000 do keep[i] = {} end
local cos = {}
for i = 1, 8 do
  cos[i] = coroutine.create(function() local function parked() coroutine.yield() end parked() end)
  coroutine.resume(cos[i])
end
local function spin() local s = 0 for i = 1, 1e6 do s = s + i end return s end
io.stdout:write("READY\\n") io.stdout:flush()
while not io.open("stop") do coroutine.wrap(function() spin() end)() end
io.stdout:write("done\\n")
'''


def case_dumpbigheap(c):
    c.write('prog.lua', BIGHEAP)
    p = subprocess.Popen([c.args.lua, 'prog.lua'], cwd=c.tmp, env=c.env(),
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    c.procs.append(p)
    expect(p.stdout.readline() == b'READY\n', 'the program did not get ready')
    inside = 0
    for i in range(6):
        r, took, longest = run_timed(c, ['dump', str(p.pid)], p.pid)
        out = r.stdout.decode()
        expect(r.returncode == 0 and r.stderr == b'', 'dump %d: %d %r' % (i, r.returncode, r.stderr))
        expect(longest < STOP_MAX_S, 'dump %d: the program was held stopped %.2f s' % (i, longest))
        expect(out.count('(suspended):') == 8 and out.count('    parked (prog.lua:5)') == 8,
               'dump %d: not the 8 suspended coroutines: %r' % (i, out))
        # the running coroutine, made a few ms before the stop (after the
        # walk of the list): found from main's call of its wrap function
        running = out.split('(suspended):')[0]
        inside += bool(re.search(
            r'\nCoroutine 0x[0-9a-f]+ \(running\):\n    spin \(prog.lua:8\)\n'
            r'    function \(prog.lua:10\)\nThread 0x[0-9a-f]+ \(resumed another\):\n'
            r'    coroutine.wrap\(prog.lua:10\) \[C\]\n    main chunk', running))
    # spin runs 10-20 ms a coroutine, nearly all the time: most stops see it
    expect(inside >= 3, 'the running coroutine in %d dumps of 6: %r' % (inside, out))
    open(os.path.join(c.tmp, 'stop'), 'w').close()
    pout, perr = p.communicate(timeout=60)
    expect(p.returncode == 0 and pout == b'done\n', 'the program: %d %r' % (p.returncode, perr))


def case_recorddeadline(c):
    p = forged(c, 'ci')
    out = os.path.join(c.tmp, 'out')
    r, took, _ = run_timed(c, ['record', str(p.pid), '-d', '2', '-o', out, '-q'], p.pid)
    expect(took < ANSWER_S, 'record -d 2 took %.1f s' % took)
    expect(r.returncode == 1 and b'no read of its Lua stack succeeded' in r.stderr,
           'record -d 2: %d %r' % (r.returncode, r.stderr))
    r, took, _ = run_timed(c, ['top', str(p.pid), '-d', '2'], p.pid)
    expect(took < ANSWER_S and r.returncode == 0, 'top -d 2: %d in %.1f s %r'
           % (r.returncode, took, r.stderr))
    still_alive(p)


SHORT = '''local function hot(n) local s = 0 for i = 1, n do s = s + i % 7 end return s end
local t = os.clock() while os.clock() - t < 0.7 do hot(1e4) end
'''


def case_recordyoung(c):
    c.write('prog.lua', SHORT)
    p = subprocess.Popen(['sh', '-c', 'sleep 0.3; exec "$0" prog.lua', c.args.lua], cwd=c.tmp,
                         env=c.env(), stdin=subprocess.DEVNULL, start_new_session=True)
    c.procs.append(p)
    out = os.path.join(c.tmp, 'out')
    r = subprocess.run([c.args.recorderd, 'record', str(p.pid), '-o', out, '-q'], cwd=c.tmp,
                       env=base_env(), stdin=subprocess.DEVNULL, capture_output=True, timeout=60)
    expect(p.wait(timeout=60) == 0, 'the program exited %d' % p.returncode)
    expect(r.returncode == 0 and b'exited' in r.stderr, 'record: %d %r' % (r.returncode, r.stderr))
    expect(os.listdir(out) == ['prog'], 'sessions: %r' % os.listdir(out))
    meta = c.meta(os.path.join(out, 'prog'))
    expect(meta['sampled_hz'] == 100 and meta['pid'] == p.pid, 'session.json: %r' % meta)
    folded = os.path.join(c.tmp, 'f.folded')
    r = subprocess.run([c.args.recorderd, 'report', os.path.join(out, 'prog'), '--format', 'folded',
                        '-o', folded], capture_output=True, timeout=60)
    expect(r.returncode == 0 and any('hot@prog.lua:1' in l for l in open(folded)),
           'no sample in hot: %r' % r.stderr)


class StopCase(Case):
    def __init__(self, args, tmp):
        super().__init__(args, tmp)
        self.procs = []

    def meta(self, session):
        import json
        return json.load(open(os.path.join(session, 'session.json')))

    def kill_daemon(self):
        for p in self.procs:
            if p.poll() is None:
                try:  # each started in a session of its own: its group
                    os.killpg(p.pid, signal.SIGKILL)
                except OSError:
                    p.kill()
                p.wait()
        super().kill_daemon()


def main(argv):
    def add_args(ap):
        ap.add_argument('--forged-host', help='tests/hosts/forged_host')
    return harness.case_main(argv, cases(globals()), 'luatrace-outside-', add_args,
                             make=StopCase, paths=('forged_host',))


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
