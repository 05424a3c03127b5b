#!/usr/bin/env python3
"""recorderd listen under load and under faults.

  daemon.py CASE --recorderd PATH --cpath DIR --corpus DIR [--lua lua5.1]
            [--reftrace-c SO]

Every case starts a real `recorderd listen` on a socket in a temporary
directory and real lua5.1 processes, and removes its daemons, sockets and
shm segments even when it fails. Cases:
  status      status (text and --json) while a program runs; stop
  concurrent  16 traced processes at once: each session equals the truth
  lossless    the daemon frozen (SIGSTOP) while a program traces: it waits,
              nothing is lost, the stacks equal the truth
  drop        LUATRACE_MODE=drop with a tiny ring and a frozen daemon:
              drops counted and reported, the session completes
  dropstacks  drop mode, the daemon frozen and thawed 30 times: no stack
              that the lossless run does not have (stacks sent after gaps)
  stopped     status and stop against a daemon frozen by SIGSTOP: said at
              once, with its pid; resumed, it answers, and stop's request
              stops it
  killed      a traced process SIGKILLed: its session is written, marked
              truncated; the daemon serves the next one
  stopwait    `recorderd stop` while a program of 3000 functions traces:
              when stop returns, the daemon has exited, every report and
              session.json are written and the socket is gone
  stopbusy    stop while a program traces as fast as the daemon drains
              (LUATRACE_TEST_DRAIN_PAUSE_US): the session ends at the stop,
              truncated; stop returns while the program runs on
  notsocket   listen --socket on a file that is not a socket (a regular
              file, a directory, a symlink): refused, named, left alone
  restart     daemon SIGKILLed, a new one on the same socket serves on
  unwritable  an output directory that cannot be created: listen refuses to
              start (exit 2, no socket); one made unwritable once it
              listens: a clear refusal, the program runs untraced, the
              daemon survives
  badinput    garbage, bad msgpack, a huge message, a bad ring name on the
              socket: each connection refused, the daemon survives
  otheruser   a program of another user (nobody): its collector refuses
              the socket's directory; its hello sent by hand is refused
              by the daemon (SO_PEERCRED)
  sigbus      a producer shrinks its ring under the daemon: that session is
              cut with a clear error, the daemon survives
  sigbusdone  a producer says DONE, sees its ring drained, then truncates
              it to 0 while the daemon runs a (slow) backend: the daemon
              survives and another live session's reports are written
  hangup      300 peers that hang up before the daemon's reply: the
              daemon survives (no death by SIGPIPE)
  fsize       recorderd run under RLIMIT_FSIZE (SIGXFSZ at its default:
              recorderd takes a write() past it as EFBIG) smaller than the trace: the program's output
              and exit code unchanged, trace.ltr cut at its last complete
              record and replayable, every report of the whole run written,
              session.json says so
  fsizereports  the daemon under a limit smaller than some reports: each
              one missing is named in session.json's error and in status;
              the daemon survives
  diskfull    the output on a 1 MB tmpfs (root only, else skipped): the
              partial trace is removed so that the reports and session.json
              fit, and session.json says so
"""

import json
import os
import random
import resource
import shutil
import signal
import socket
import struct
import subprocess
import sys
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import (SKIP, Case, Failure, base_env, cases, drop_ring, expect, forge_ring,  # noqa: E402
                     run, wait_file)
import reftrace_post  # noqa: E402
from corpus import reference, build_helper  # noqa: E402


class Daemon(Case):
    def status(self):
        r = run([self.args.recorderd, 'status', '--socket', self.sock, '--json'], self.tmp,
                base_env())
        expect(r.status == 0, 'status failed: %r' % r.err)
        return json.loads(r.out)

    def alive(self):
        expect(self.daemon.poll() is None, 'the daemon died (status %s)' % self.daemon.poll())
        self.status()

    def spawn_lua(self, prog, env, cwd=None):
        return subprocess.Popen([self.args.lua, '-lluatrace', prog], cwd=cwd or self.tmp, env=env,
                                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, start_new_session=True)

    def traced_env(self, shm, **extra):
        return self.env(LUATRACE_SOCKET=self.sock, LUATRACE_SHM=shm, **extra)

    def meta(self, session):
        return json.load(open(os.path.join(session, 'session.json')))


def wait(proc, timeout=120):
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        raise Failure('a traced program hung')
    return out, err, proc.returncode


SLOW = '''
local function work(n) local s = 0 for i = 1, n do s = s + i % 7 end return s end
local t = 0
for round = 1, ROUNDS do t = t + work(100000) end
print(t)
'''


# Works until the file GATE exists: the test sees it running for sure.
UNTIL_GATE = '''
local function work(n) local s = 0 for i = 1, n do s = s + i % 7 end return s end
local t = 0
repeat t = t + work(20000) until io.open(GATE)
print(t > 0)
'''


def poll_status(d, p, ready, timeout=30):
    """status until ready(status) holds, program p ends or timeout s pass
    (registering takes a moment on a busy machine); the last status."""
    deadline = time.monotonic() + timeout
    while True:
        st = d.status()
        if ready(st) or p.poll() is not None or time.monotonic() > deadline:
            return st
        time.sleep(0.05)


def spawn_gated(d, file, src, session):
    """The daemon started and src (GATE: a file the case makes to end it)
    traced as session: (the gate, the program's process)."""
    gate = os.path.join(d.tmp, 'gate')
    prog = d.write(file, src.replace('GATE', repr(gate)))
    d.start_daemon()
    return gate, d.spawn_lua(prog, d.traced_env(session))


def case_status(d):
    # an ESC in the command: the text status must not pass it to a terminal
    gate, p = spawn_gated(d, 'slow\x1b[2J.lua', UNTIL_GATE, 'slow')
    try:
        st = poll_status(d, p, lambda st: st['sessions'])
        names = [s['session'] for s in st['sessions']]
        expect(names == ['slow'], 'status lists %s (program exit %s)' % (names, p.poll()))
        row = st['sessions'][0]
        expect(row['pid'] == p.pid and row['state'] in ('tracing', 'draining', 'writing'),
               'status row %s' % row)
        r = run([d.args.recorderd, 'status', '--socket', d.sock], d.tmp, base_env())
        expect(b'slow?[2J.lua' in r.out and b'\x1b' not in r.out and b'EVENTS/S' in r.out,
               'text status: %r' % r.out)
        expect(row['command'].endswith('slow\x1b[2J.lua'), 'status --json: %r' % row)
    finally:
        open(gate, 'w').close()
    out, err, rc = wait(p)
    expect(rc == 0, 'program failed: %r' % err)
    r = run([d.args.recorderd, 'stop', '--socket', d.sock], d.tmp, base_env())
    expect(r.status == 0, 'stop failed: %r' % r.err)
    d.daemon.wait(timeout=30)
    expect(d.daemon.returncode == 0, 'daemon exit %d' % d.daemon.returncode)
    expect(not os.path.exists(d.sock), 'socket left behind')
    expect(d.meta(d.session('slow'))['status'] == 'complete', 'session not complete')
    r = run([d.args.recorderd, 'status', '--socket', d.sock], d.tmp, base_env())
    expect(r.status == 1 and b'no daemon answers' in r.err, 'status without daemon: %r' % r.err)


def case_stopped(d):
    """status and stop against a daemon frozen by SIGSTOP: each says at
    once that the daemon (its pid) is stopped and how to resume it, exit 1
    (before: status waited 30 s, then 'bad or no answer'); stop's request
    waits in the socket, and the daemon, resumed, stops."""
    d.start_daemon()
    pid = d.daemon.pid
    try:
        os.kill(pid, signal.SIGSTOP)
        for cmd in (['status'], ['status', '--json'], ['stop']):
            r = run([d.args.recorderd] + cmd + ['--socket', d.sock], d.tmp, base_env(), timeout=60)
            err = r.err.decode()
            expect(r.status == 1 and '(pid %d) is stopped' % pid in err and
                   'kill -CONT %d' % pid in err and err.count('\n') == 1 and not r.out,
                   '%s of a stopped daemon: %d %r %r' % (cmd[0], r.status, r.out, err))
            expect(('then it stops' in err) == (cmd == ['stop']), 'stop\'s note: %r' % err)
            if cmd != ['stop']:  # resumed, it answers
                os.kill(pid, signal.SIGCONT)
                expect(d.status()['sessions'] == [], 'status after SIGCONT')
                os.kill(pid, signal.SIGSTOP)
    finally:
        os.kill(pid, signal.SIGCONT)
    d.daemon.wait(timeout=30)  # the stop waiting in its socket
    expect(d.daemon.returncode == 0, 'daemon exit %d' % d.daemon.returncode)
    expect(not os.path.exists(d.sock), 'socket left behind')


def rss_kb(pid):
    with open('/proc/%d/status' % pid) as f:
        for line in f:
            if line.startswith('VmRSS:'):
                return int(line.split()[1])
    raise Failure('no VmRSS for %d' % pid)


def case_idlememory(d):
    """What a session held goes back to the system when it ends: a daemon
    idle after four sessions of luacheck over Penlight (models of tens of
    MB) is back under 32 MB resident. It kept 70 MB: the glibc arena of
    each session's drainer thread kept the free space at its top
    (rd_session_malloc_opts). Not under a sanitizer's or valgrind's
    allocator, which glibc's options do not reach."""
    if 'libasan' in os.environ.get('LD_PRELOAD', '') or 'valgrind' in os.environ.get('LD_PRELOAD', ''):
        print('a sanitizer\'s allocator: skipped')
        return
    luacheck, pl = shutil.which('luacheck'), '/usr/share/lua/5.1/pl'
    if not luacheck or not os.path.isdir(pl):
        raise Failure('needs luacheck (lua-check) and Penlight (lua-penlight): scripts/setup')
    d.start_daemon()
    for i in range(4):
        p = subprocess.Popen([d.args.lua, '-lluatrace', luacheck, '-q', pl], cwd=d.tmp,
                             env=d.traced_env('idle%d' % i), stdin=subprocess.DEVNULL,
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                             start_new_session=True)
        _, err, rc = wait(p)
        expect(rc in (0, 1), 'luacheck: exit %s %r' % (rc, err))
        wait_meta(d, d.session('idle%d' % i))
    for _ in range(100):  # until the last session's thread is joined, its model freed
        kb = rss_kb(d.daemon.pid)
        if kb < 32 * 1024:
            break
        time.sleep(0.1)
    d.stop_daemon()
    expect(kb < 32 * 1024, 'daemon idle after 4 sessions: %d kB resident' % kb)


def truth(d, prog_name):
    """The reference folded stacks (lines) of a corpus program."""
    helper = d.args.reftrace_c or build_helper(d.tmp)
    return reference(d.args, d.args.corpus, prog_name, d.tmp, helper)[1]


def folded_equal(d, session, ref_lines, what):
    got = {reftrace_post.compress(k): v for k, v in d.folded(session, 'lines').items()}
    if got != ref_lines:
        extra = {k for k in got if got[k] != ref_lines.get(k)}
        missing = set(ref_lines) - set(got)
        raise Failure('%s: stacks differ from the truth (%d missing, %d extra), e.g. %s'
                      % (what, len(missing), len(extra),
                         [(reftrace_post.expand(k)[-120:], got.get(k), ref_lines.get(k))
                          for k in sorted(extra or set(got))[:3]]))


def case_concurrent(d):
    prog = 'coroutines.lua'
    ref = truth(d, prog)
    d.start_daemon()
    procs = [d.spawn_lua(prog, d.traced_env('conc'), cwd=d.args.corpus) for _ in range(16)]
    outs = [wait(p) for p in procs]
    d.stop_daemon()
    expect(all(o[2] == 0 and not o[1] for o in outs) and len({o[0] for o in outs}) == 1,
           'programs failed or printed different things: %s' % [o[1] for o in outs if o[1]])
    sessions = sorted(os.listdir(d.out))
    expect(len(sessions) == 16, 'expected 16 sessions, got %s' % sessions)
    for name in sessions:
        path = os.path.join(d.out, name)
        expect(d.meta(path)['status'] == 'complete', '%s incomplete' % name)
        folded_equal(d, path, ref, name)


GATED = '''
local function f(n) if n == 0 then return 0 end return 1 + f(n - 1) end
local gen = coroutine.wrap(function() local i = 0 while true do i = i + 1 coroutine.yield(i) end end)
local function phase(k) local t = 0 for i = 1, k do t = t + f(20) + gen() end return t end
print(phase(100))
io.read("*l")
print(phase(ROUNDS))
io.open("phase2.done", "w"):close()
'''


def gated_run(d, shm, rounds, **env):
    """Starts the gated program traced, waits until its session traces,
    freezes the daemon, lets the program's second phase run, and returns
    (process, whether that phase was still unfinished after 0.5 s frozen)."""
    prog = d.write('gated.lua', GATED.replace('ROUNDS', str(rounds)))
    p = subprocess.Popen([d.args.lua, '-lluatrace', prog], cwd=d.tmp,
                         env=d.traced_env(shm, LUATRACE_RING='64K', **env),
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         start_new_session=True)
    for _ in range(500):
        if any(s['session'] == shm and s['events'] > 0 for s in d.status()['sessions']):
            break
        time.sleep(0.01)
    else:
        raise Failure('the session never started')
    os.kill(d.daemon.pid, signal.SIGSTOP)
    try:
        p.stdin.write(b'go\n')
        p.stdin.flush()
        time.sleep(0.5)
        blocked = not os.path.exists(os.path.join(d.tmp, 'phase2.done'))
    finally:
        os.kill(d.daemon.pid, signal.SIGCONT)
    return p, blocked


def case_lossless(d):
    prog = d.write('gated.lua', GATED.replace('ROUNDS', '3000'))
    helper = d.args.reftrace_c or build_helper(d.tmp)
    ref_out = os.path.join(d.tmp, 'ref.txt')
    env = base_env()
    env['LUA_PATH'] = os.path.join(d.args.corpus, '?.lua') + ';;'
    env['LUA_CPATH'] = os.path.dirname(helper) + '/?.so;;'
    env['REFTRACE_OUT'] = ref_out
    r = subprocess.run([d.args.lua, '-lreftrace', prog], cwd=d.tmp, env=env, input=b'go\n',
                       capture_output=True, timeout=300)
    os.unlink(os.path.join(d.tmp, 'phase2.done'))
    expect(r.returncode == 0, 'reference run failed: %r' % r.stderr)
    ref = reftrace_post.parse(ref_out)[0]
    d.start_daemon()
    p, blocked = gated_run(d, 'lossless', 3000)
    out, err, rc = wait(p)
    expect(blocked, 'the program did not wait for the frozen daemon')
    expect(rc == 0 and out == r.stdout, 'program changed: %r %r' % (out, err))
    d.stop_daemon()
    meta = d.meta(d.session('lossless'))
    expect(meta['status'] == 'complete' and meta['drops'] == 0, 'session %s' % meta)
    folded_equal(d, d.session('lossless'), ref, 'lossless')


def dropped_run(d, shm, **env):
    """A program traced in drop mode while the daemon is frozen: it must
    not wait, nor change, and its report must say events were dropped.
    Returns the session's directory."""
    prog = d.write('gated.lua', GATED.replace('ROUNDS', '3000'))
    plain = subprocess.run([d.args.lua, prog], cwd=d.tmp, env=d.env(), input=b'go\n',
                           capture_output=True, timeout=60)
    os.unlink(os.path.join(d.tmp, 'phase2.done'))
    d.start_daemon()
    p, blocked = gated_run(d, shm, 3000, LUATRACE_MODE='drop', **env)
    out, err, rc = wait(p)
    d.stop_daemon()
    expect(not blocked, 'drop mode waited for the frozen daemon')
    expect(out == plain.stdout and rc == 0 and not err, 'program changed: %r %r' % (out, err))
    meta = d.meta(d.session(shm))
    expect(meta['status'] == 'complete', 'session %s' % meta)
    expect(meta['drops'] > 0, 'no drops counted: %s' % meta)
    r = run([d.args.recorderd, 'report', d.session(shm)], d.tmp, base_env())
    expect(r.status == 0, 'report after drops failed: %r' % r.err)
    expect(b'DROPPED EVENTS' in r.out, 'the profile does not say events were dropped')
    return d.session(shm), r.out


def case_drop(d):
    dropped_run(d, 'drop')


def case_dropsampled(d):
    """Sampled time with drops: profile.txt's time line (what report
    prints) must not call the stacks exact, as it did above DROPPED
    EVENTS."""
    session, text = dropped_run(d, 'dropsampled', LUATRACE_TIMING='sample')
    with open(os.path.join(session, 'profile.txt'), 'rb') as f:
        expect(f.read() == text, 'report printed another profile than profile.txt')
    expect(b'incomplete (events dropped): stacks and' in text and b'exact stacks' not in text,
           'the time line: %r' % text[:600])


DROPPY = '''
local function leaf(x) return x + 1 end
local function mid(x) return leaf(x) * 2 end
local function rec(n) if n == 0 then return mid(n) end return 1 + rec(n - 1) end
local gen = coroutine.wrap(function()
  local i = 0
  while true do i = i + 1 coroutine.yield(leaf(i)) end
end)
local function cmp(a, b) return mid(a) < mid(b) end
local function sorter()
  local t = {}
  for i = 1, 30 do t[i] = (i * 7919) % 31 end
  table.sort(t, cmp)
  return t[1]
end
local function bad(n) if n % 3 == 0 then error("x") end return leaf(n) end
local t0, acc, rounds = os.clock(), 0, 0
local seconds = tonumber(os.getenv("DROPPY_SECONDS"))
while os.clock() - t0 < seconds do
  rounds = rounds + 1
  acc = (acc + rec(12) + gen() + sorter() + (pcall(bad, rounds) and 1 or 0)) % 1000003
end
print("done")
'''


def case_dropstacks(d):
    """Drop mode, the daemon frozen and thawed again and again while the
    program runs: after each gap the collector sends the stacks again, so
    no stack appears that the lossless run does not have (depths alone put
    calls under frames that had returned during the gap)."""
    d.start_daemon()
    prog = d.write('droppy.lua', DROPPY)
    r = run([d.args.lua, '-lluatrace', prog], d.tmp, d.traced_env('dropref', DROPPY_SECONDS='0.3'))
    expect(r.status == 0, 'lossless run failed: %r' % r.err)
    p = d.spawn_lua(prog, d.traced_env('dropped', LUATRACE_RING='64K', LUATRACE_MODE='drop',
                                       DROPPY_SECONDS='2'))
    try:
        time.sleep(0.2)
        for _ in range(30):
            os.kill(d.daemon.pid, signal.SIGSTOP)
            time.sleep(0.02)
            os.kill(d.daemon.pid, signal.SIGCONT)
            time.sleep(0.03)
    finally:
        os.kill(d.daemon.pid, signal.SIGCONT)
    out, err, rc = wait(p)
    d.stop_daemon()
    expect(rc == 0 and out == b'done\n', 'program changed: %r %r' % (out, err))
    meta = d.meta(d.session('dropped'))
    expect(meta['status'] == 'complete' and meta['bad_records'] == 0, 'session %s' % meta)
    expect(meta['drops'] > 0, 'no drops: the case tests nothing: %s' % meta)
    want = set(d.folded(d.session('dropref'), 'calls'))
    got = set(d.folded(d.session('dropped'), 'calls'))
    extra = sorted(got - want)
    expect(not extra, '%d stacks the lossless run never had (%d drops), e.g.\n  %s'
           % (len(extra), meta['drops'], '\n  '.join(x[-160:] for x in extra[:5])))


def case_killed(d):
    prog = d.write('slow.lua', SLOW.replace('ROUNDS', '300'))
    d.start_daemon(extra=('--format', 'folded'))
    p = d.spawn_lua(prog, d.traced_env('victim'))
    time.sleep(0.3)
    os.killpg(p.pid, signal.SIGKILL)
    p.communicate()
    hello = d.write('hello.lua', 'print("hi")\n')
    r = run([d.args.lua, '-lluatrace', hello], d.tmp, d.traced_env('next'))
    expect(r.status == 0 and r.out == b'hi\n', 'next program: %r' % r.err)
    d.stop_daemon()
    meta = d.meta(d.session('victim'))
    expect(meta['status'] == 'truncated' and meta['events'] > 0, 'victim session %s' % meta)
    for f in ('profile.txt', 'stacks.folded', 'trace.ltr'):
        expect(os.path.exists(os.path.join(d.session('victim'), f)), '%s missing' % f)
    expect(d.meta(d.session('next'))['status'] == 'complete', 'next session incomplete')


# 3000 functions (the reports take a while), called until the file GATE exists
WIDE = '''
local fs = {}
for i = 1, 3000 do
  fs[i] = loadstring("local a = ... if a > 0 then return " .. i .. " end return 0", "=c" .. i)
end
repeat for i = 1, 3000 do fs[i](i) end until io.open(GATE)
print("done")
'''


def case_stopwait(d):
    gate, p = spawn_gated(d, 'wide.lua', WIDE, 'wide')
    try:
        rows = poll_status(d, p, lambda st: st['sessions'] and
                           st['sessions'][0]['events'] > 2000000)['sessions']
        expect(p.poll() is None and rows, 'the program is not traced: %s' % rows)
        r = run([d.args.recorderd, 'stop', '--socket', d.sock], d.tmp, base_env())
        # nothing waited for beyond stop itself
        session = os.path.join(d.out, 'wide')
        written = os.path.exists(os.path.join(session, 'session.json'))
        sock_left = os.path.exists(d.sock)
        expect(r.status == 0, 'stop failed: %r' % r.err)
        expect(written, 'stop returned before session.json was written')
        expect(not sock_left, 'stop returned with the socket still there')
        d.daemon.wait(timeout=10)  # its exit follows the end of the connection at once
        expect(d.daemon.returncode == 0, 'daemon exit %d' % d.daemon.returncode)
        expect(d.meta(session)['status'] == 'truncated', 'session %s' % d.meta(session))
    finally:
        open(gate, 'w').close()
    out, err, rc = wait(p)
    expect(rc == 0 and out == b'done\n', 'program changed: %d %r %r' % (rc, out, err))


# Calls, with a little work between them, until the file GATE exists: a
# few MB of records a second, which a drainer that pauses 0.2 s after each
# read keeps up with (a 16M ring never fills, so the program never waits)
# but always finds more.
CALLS_UNTIL_GATE = '''
local function f(x) local y = x for j = 1, 30 do y = y + j % 3 end return y end
local s = 0
repeat for i = 1, 1000 do s = f(s) end until io.open(GATE)
print(s > 0)
'''


def case_stopbusy(d):
    """stop while a program traces into a ring the daemon drains as fast as
    the program fills it, never full (so the program never waits, and does
    not see the stop) nor ever found empty (seen under AddressSanitizer;
    here a pause after each read, LUATRACE_TEST_DRAIN_PAUSE_US): the
    session ends at what the ring held at the stop, truncated, stop returns
    and the program goes on. Before, the drainer drained until it found the
    ring empty: stop waited for the program's end."""
    gate = os.path.join(d.tmp, 'gate')
    prog = d.write('busy.lua', CALLS_UNTIL_GATE.replace('GATE', repr(gate)))
    os.environ['LUATRACE_TEST_DRAIN_PAUSE_US'] = '200000'  # the daemon's, below
    try:
        d.start_daemon()
    finally:
        del os.environ['LUATRACE_TEST_DRAIN_PAUSE_US']
    p = d.spawn_lua(prog, d.traced_env('busy', LUATRACE_RING='16M'))
    try:
        st = poll_status(d, p, lambda st: st['sessions'] and st['sessions'][0]['events'] > 0)
        expect(p.poll() is None and st['sessions'], 'the program is not traced: %s' % st)
        r = run([d.args.recorderd, 'stop', '--socket', d.sock], d.tmp, base_env(), 20)
        expect(r.status == 0, 'stop failed: %r' % r.err)
        d.daemon.wait(timeout=10)
        expect(d.daemon.returncode == 0, 'daemon exit %d' % d.daemon.returncode)
        meta = d.meta(d.session('busy'))
        expect(meta['status'] == 'truncated' and meta['events'] > 0, 'session %s' % meta)
        expect(p.poll() is None, 'the program ended before the stop returned')
    finally:
        open(gate, 'w').close()
    out, err, rc = wait(p)
    expect(rc == 0 and out == b'true\n', 'program changed: %d %r %r' % (rc, out, err))


def case_notsocket(d):
    os.makedirs(os.path.dirname(d.sock), exist_ok=True)
    precious = os.path.join(d.tmp, 'precious.txt')
    with open(precious, 'w') as f:
        f.write('data\n')
    link = os.path.join(d.tmp, 'link')
    os.symlink(precious, link)
    for path in (precious, link, os.path.dirname(d.sock)):
        r = run([d.args.recorderd, 'listen', '--socket', path, '--out', d.out], d.tmp,
                base_env(), 10)
        expect(r.status == 1 and b'exists and is not a socket' in r.err and
               path.encode() in r.err, 'listen on %s: %d %r' % (path, r.status, r.err))
    expect(open(precious).read() == 'data\n' and os.path.islink(link) and
           os.path.isdir(os.path.dirname(d.sock)), 'a file was replaced')


def case_restart(d):
    d.start_daemon()
    d.kill_daemon()
    expect(os.path.exists(d.sock), 'the test expects a stale socket file')
    d.start_daemon()
    hello = d.write('hello.lua', 'print("hi")\n')
    r = run([d.args.lua, '-lluatrace', hello], d.tmp, d.traced_env('after'))
    expect(r.status == 0 and not r.err, 'after restart: %r' % r.err)
    d.stop_daemon()
    expect(d.meta(d.session('after'))['status'] == 'complete', 'session incomplete')


def case_unwritable(d):
    # an --out it cannot make is refused before the socket is bound (it
    # listened, then refused every program that connected)
    r = run([d.args.recorderd, 'listen', '--socket', d.sock, '--out', '/dev/null/luatrace-out'],
            d.tmp, base_env(), 10)
    expect(r.status == 2 and r.err == b'recorderd listen: --out /dev/null/luatrace-out: cannot '
           b'create or write it: Not a directory\n' and not os.path.exists(d.sock),
           'listen --out /dev/null/...: %d %r' % (r.status, r.err))
    # one it can no longer write once it listens: each program refused, said
    d.start_daemon()
    shutil.rmtree(d.out)
    with open(d.out, 'w') as f:
        f.write('in the way\n')
    hello = d.write('hello.lua', 'print("hi")\n')
    r = run([d.args.lua, '-lluatrace', hello], d.tmp, d.traced_env('nowhere'))
    expect(r.status == 0 and r.out == b'hi\n', 'program changed: %r' % r.out)
    expect(b'cannot create a session directory' in r.err and b'running untraced' in r.err,
           'unclear refusal: %r' % r.err)
    d.alive()
    errors = d.status()['errors']
    expect(len(errors) == 1 and 'cannot create a session directory' in errors[0],
           'status does not show the problem: %s' % errors)
    r = run([d.args.recorderd, 'status', '--socket', d.sock], d.tmp, base_env())
    expect(b'latest problems' in r.out, 'text status does not show the problem: %r' % r.out)
    d.stop_daemon()


def case_outremoved(d):
    """The output directory removed while the daemon listens (rm -rf
    luatrace-out between runs): the next program is traced into it made
    again. Before, the daemon kept the removed directory open and refused
    every later program for good ('cannot create a session directory in
    out: No such file or directory'; they ran untraced) until restarted."""
    d.start_daemon()
    hello = d.write('hello.lua', 'local function f() return 1 end\nf()\nprint("hi")\n')
    for round in range(3):
        name = 'again%d' % round
        r = run([d.args.lua, '-lluatrace', hello], d.tmp, d.traced_env(name))
        expect(r.status == 0 and r.out == b'hi\n' and not r.err,
               'round %d: %d %r %r' % (round, r.status, r.out, r.err))
        wait_file(os.path.join(d.out, name, 'session.json'), 'round %d' % round, d.daemon)
        shutil.rmtree(d.out)
    d.alive()
    errors = d.status()['errors']
    expect(not errors, 'the daemon met problems: %s' % errors)
    d.stop_daemon()


def case_sockremoved(d):
    """The daemon's socket file removed while it listens (a cleaner of
    /tmp, XDG_RUNTIME_DIR removed, rm), then its directory too: each time
    the daemon binds it again within seconds, says so, and programs,
    status and stop reach it. Before, it ran on unreachable: programs ran
    untraced, status and stop said no daemon answers."""
    d.start_daemon()
    hello = d.write('hello.lua', 'local function f() return 1 end\nf()\nprint("hi")\n')
    for round, gone in enumerate((d.sock, os.path.dirname(d.sock))):
        if gone == d.sock:
            os.unlink(gone)
        else:
            shutil.rmtree(gone)
        deadline = time.monotonic() + 10
        while not os.path.exists(d.sock):
            expect(d.daemon.poll() is None, 'the daemon died')
            expect(time.monotonic() < deadline, 'round %d: the socket was not made again'
                   % round)
            time.sleep(0.05)
        name = 'back%d' % round
        r = run([d.args.lua, '-lluatrace', hello], d.tmp, d.traced_env(name))
        expect(r.status == 0 and r.out == b'hi\n' and not r.err,
               'round %d: %d %r %r' % (round, r.status, r.out, r.err))
        wait_file(os.path.join(d.out, name, 'session.json'), 'round %d' % round, d.daemon)
        errors = d.status()['errors']
        expect(len(errors) == round + 1 and 'was removed: listening on it again' in errors[-1],
               'round %d: status says %s' % (round, errors))
    r = run([d.args.recorderd, 'stop', '--socket', d.sock], d.tmp, base_env())
    expect(r.status == 0, 'stop: %d %r' % (r.status, r.err))
    expect(d.daemon.wait(timeout=30) == 0, 'the daemon exited %s' % d.daemon.returncode)
    expect(not os.path.exists(d.sock), 'the socket is left')


def pack_str(s):
    b = s.encode()
    return (bytes([0xa0 | len(b)]) if len(b) < 32 else bytes([0xd9, len(b)])) + b


def pack_uint(v):
    return bytes([v]) if v < 128 else b'\xce' + struct.pack('>I', v)


def hello_bytes(shm, pid, ring=65536):
    kv = [('type', pack_str('hello')), ('v', pack_uint(1)), ('pid', pack_uint(pid)),
          ('shm', pack_str(shm)), ('ring', pack_uint(ring)), ('cmd', pack_str('fake'))]
    return bytes([0x80 | len(kv)]) + b''.join(pack_str(k) + v for k, v in kv)


def send_raw(d, data, read=True):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(10)
    s.connect(d.sock)
    try:
        s.sendall(data)
        return s.recv(4096) if read else b''
    except (ConnectionResetError, BrokenPipeError, socket.timeout):
        return b''
    finally:
        s.close()


def case_badinput(d):
    d.start_daemon()
    for data in (os.urandom(3000), b'\xc1' * 10, b'\x81\xa4type\xa5hello',
                 b'\xdb\xff\xff\xff\xff' + b'x' * 5000,
                 hello_bytes('../../etc/passwd', os.getpid()),
                 hello_bytes('nonexistent-ring', os.getpid()),
                 hello_bytes('ok-name', 1)):
        reply = send_raw(d, data)
        expect(b'"ok' not in reply, 'accepted garbage')
        d.alive()
    d.stop_daemon()


def case_hangup(d):
    """Peers that hang up before the daemon's reply (a traced process that
    crashes just after its hello): the reply's write fails with EPIPE,
    which must not kill the daemon (SIGPIPE)."""
    d.start_daemon()
    for _ in range(300):
        for _ in range(500):
            try:
                send_raw(d, hello_bytes('nonexistent-ring', os.getpid()), read=False)
                break
            except BlockingIOError:  # the backlog is full: busy, not dead
                time.sleep(0.01)
    time.sleep(0.3)
    d.alive()
    d.stop_daemon()


def case_hellodied(d):
    """Producers that die just after a valid hello, while the daemon starts
    their session (a traced process killed under load as it registers):
    the ack's write fails with EPIPE before the read sees the EOF. Each
    session must end, truncated, and the daemon live on. Before, the
    failed ack closed and freed the connection the session still pointed
    to: the session waited for an EOF that never came ('tracing' with 0
    events, 43 s after its process was killed), and its end closed the
    freed connection: the daemon aborted (uv_close: Assertion `0' failed,
    in 200 tries out of 200)."""
    tries = 200
    names = ['died-%d-%d' % (os.getpid(), i) for i in range(tries)]
    for name in names:
        fd, path, mm, data = forge_ring(d, name)
        data.close()
        mm.close()
        os.close(fd)
    d.start_daemon()
    for name in names:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(10)
        try:
            s.connect(d.sock)
        except OSError as e:
            raise Failure('the daemon stopped answering (status %s): %s'
                          % (d.daemon.poll(), e))
        s.sendall(hello_bytes(name, os.getpid()))
        time.sleep(random.uniform(0, 0.004))  # dies as the daemon answers
        s.close()
    deadline = time.monotonic() + 30
    while True:
        d.alive()
        st = d.status()
        if not st['sessions']:
            break
        expect(time.monotonic() < deadline, 'sessions never ended: %s'
               % [(x['session'], x['state']) for x in st['sessions']][:5])
        time.sleep(0.2)
    d.stop_daemon()
    for name in names:
        meta = d.meta(d.session(name))
        expect(meta['status'] == 'truncated', '%s: %s' % (name, meta['status']))


def case_sigbus(d):
    name = 'fake-%d' % os.getpid()
    size = 65536
    fd, path, mm, data = forge_ring(d, name, size)
    try:
        clock = b'\x94\x02\x01\x01\x00'           # CLOCK [1, 1, 0]
        data[0:len(clock)] = clock
        d.start_daemon()
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(10)
        s.connect(d.sock)
        s.sendall(hello_bytes(name, os.getpid(), size))
        expect(b'session' in s.recv(4096), 'the fake producer was refused')
        mm[64:72] = struct.pack('<Q', len(clock))   # publish the record
        time.sleep(0.2)
        data.close()
        os.ftruncate(fd, 4096)                     # the data is gone...
        mm[64:72] = struct.pack('<Q', len(clock) + 200)  # ...and more is announced
        time.sleep(0.5)
        s.close()
        time.sleep(0.5)
        d.alive()
        d.stop_daemon()
        meta = d.meta(d.session(name))
        expect(meta['status'] == 'truncated' and 'SIGBUS' in meta['error'],
               'session %s' % meta)
    finally:
        drop_ring(fd, path)


# A backend whose close waits, for the fake producer's session only, until
# the test has truncated the ring: the daemon then finishes that session
# with its ring gone (what a slow backend made happen 4 times out of 4).
GATED_BACKEND = '''
return { close = function(info)
  if not info.dir:find("/fake%-[^/]*$") then return end
  io.open(info.dir .. "/in-close", "w"):close()
  while not io.open(info.dir .. "/go") do os.execute("sleep 0.02") end
end }
'''


def case_sigbusdone(d):
    gate = os.path.join(d.tmp, 'gate')
    other = None
    bk = d.write('gated.lua', GATED_BACKEND)
    name = 'fake-%d' % os.getpid()
    fd, path, mm, data = forge_ring(d, name)
    try:
        d.start_daemon(extra=['--backend', 'lua:' + os.path.join(d.tmp, bk)])
        other = d.spawn_lua(d.write('other.lua', UNTIL_GATE.replace('GATE', repr(gate))),
                            d.traced_env('other'))
        st = poll_status(d, other, lambda st: st['sessions'])
        expect(len(st['sessions']) == 1, 'the other program is not traced: %s' % st)
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(10)
        s.connect(d.sock)
        s.sendall(hello_bytes(name, os.getpid(), 65536))
        expect(b'session' in s.recv(4096), 'the fake producer was refused')
        clock = b'\x94\x02\x01\x01\x00'           # CLOCK [1, 1, 0]
        data[0:len(clock)] = clock
        mm[64:72] = struct.pack('<Q', len(clock))   # head: the record is published
        mm[88:92] = struct.pack('<I', 1)            # prod_state DONE
        session = os.path.join(d.out, name)
        wait_file(os.path.join(session, 'in-close'), 'the backend', d.daemon)
        expect(struct.unpack('<Q', mm[128:136])[0] == len(clock), 'the ring is not drained')
        data.close()
        mm.close()
        os.ftruncate(fd, 0)                          # drained: the producer truncates
        open(os.path.join(session, 'go'), 'w').close()
        s.close()
        wait_file(os.path.join(session, 'session.json'), 'the fake session', d.daemon)
        open(gate, 'w').close()
        out, err, code = wait(other)
        expect(code == 0 and out == b'true\n', 'other program: %d %r %r' % (code, out, err))
        d.alive()
        d.stop_daemon()
        meta = d.meta(d.session('other'))
        expect(meta['status'] == 'complete' and meta['events'] > 0, 'other session %s' % meta)
        expect(os.path.exists(os.path.join(d.session('other'), 'profile.txt')),
               'the other session has no profile.txt')
        meta = d.meta(d.session(name))
        expect(meta['status'] == 'complete', 'the fake session %s' % meta)
    finally:
        if other is not None and other.poll() is None:
            os.killpg(other.pid, signal.SIGKILL)
            other.wait()
        drop_ring(fd, path)


# A hello sent by hand (as a collector that skipped its own checks would):
# prints the daemon's answer.
RAW_HELLO = r'''
import os, socket, struct, sys
def s(b):
    return bytes([0xa0 | len(b)]) + b
def u(n):
    return b'\xce' + struct.pack('>I', n)
m = (b'\x87' + s(b'type') + s(b'hello') + s(b'v') + b'\x01' + s(b'pid') + u(os.getpid()) +
     s(b'shm') + s(b'intruder') + s(b'ring') + u(65536) + s(b'cmd') + s(b'') + s(b'cwd') + s(b''))
c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
c.connect(sys.argv[1])
c.sendall(m)
sys.stdout.buffer.write(c.recv(4096))
'''


def case_otheruser(d):
    """A process of another uid reaching the socket: its collector refuses
    the socket's directory (not its own) and sends nothing; a hello sent
    anyway is refused by the daemon (SO_PEERCRED)."""
    if os.geteuid() != 0 or not shutil.which('setpriv'):
        print('skipped: needs root and setpriv')
        raise SystemExit(77)
    d.start_daemon()
    os.chmod(os.path.dirname(d.sock), 0o755)
    os.chmod(d.sock, 0o666)
    os.chmod(d.tmp, 0o755)
    hello = d.write('hello.lua', 'print("hi")\n')
    os.chmod(os.path.join(d.tmp, hello), 0o644)
    raw = d.write('raw.py', RAW_HELLO)
    os.chmod(os.path.join(d.tmp, raw), 0o644)
    nobody = ['setpriv', '--reuid=nobody', '--regid=nogroup', '--clear-groups']
    env = d.traced_env('intruder')
    r = run(nobody + [d.args.lua, '-lluatrace', hello], d.tmp, env)
    expect(r.status == 0 and r.out == b'hi\n', 'program changed: %r %r' % (r.out, r.err))
    expect(b'not a directory of yours' in r.err and b'running untraced' in r.err,
           'not refused: %r' % r.err)
    r = run(nobody + [sys.executable, raw, d.sock], d.tmp, env)
    expect(r.status == 0 and b'peer is another user' in r.out, 'not refused: %r %r' %
           (r.out, r.err))
    d.alive()
    d.stop_daemon()
    expect(not os.path.exists(os.path.join(d.out, 'intruder')), 'a session was made')


# ~11 trace bytes a round: N rounds make a trace far over the limits below
BUSY = '''
local function f(x) return x + 1 end
local s = 0
for i = 1, N do s = f(s) end
print(s)
os.exit(3)
'''

REPORTS = ('profile.txt', 'stacks.folded', 'flamegraph.svg', 'profile.speedscope.json',
           'callgrind.out', 'profile.pb.gz', 'annotate', 'coverage.lcov', 'luacov.stats.out',
           'coverage.txt', 'coverage.xml', 'report.html')


def file_limit(nbytes):
    """A preexec_fn: files of the process at most nbytes long. SIGXFSZ is
    left as it comes (the default kills): recorderd must take a write past
    the limit as the error EFBIG by itself."""
    def pre():
        resource.setrlimit(resource.RLIMIT_FSIZE, (nbytes, nbytes))
    return pre


def busy_program(d, rounds, padding=0):
    """Writes busy.lua (with padding comment lines, which the reports that
    show sources copy); returns its name and its untraced output."""
    pad = ''.join('-- padding line %06d: the reports that list sources copy it\n' % i
                  for i in range(padding))
    prog = d.write('busy.lua', BUSY.replace('N', str(rounds)) + pad)
    r = d.lua(prog, d.env())
    expect(r.status == 3 and r.out == b'%d\n' % rounds, 'untraced run: %r %r' % (r.out, r.err))
    return prog, r.out


def only_session(d):
    """The one session directory (its ring name may have gained a .pid)."""
    names = os.listdir(d.out) if os.path.isdir(d.out) else []
    expect(len(names) == 1, 'sessions in %s: %s' % (d.out, names))
    return os.path.join(d.out, names[0])


def wait_meta(d, session, timeout=60):
    """session.json once the daemon has written it: a session's reports
    are written after its program ends, session.json last."""
    path = os.path.join(session, 'session.json')
    for _ in range(int(timeout / 0.02)):
        if os.path.exists(path):
            return d.meta(session)
        time.sleep(0.02)
    raise Failure('no session.json in %s after %d s' % (session, timeout))


def f_calls(session):
    """The calls of f in profile.txt."""
    for line in open(os.path.join(session, 'profile.txt')):
        if line.rstrip().endswith('f (busy.lua:2)'):
            return int(line.split()[0])
    raise Failure('no f in profile.txt')


def case_fsize(d):
    # ~7 MB of records, 0.97-1.8 MB of trace (the split blocks of version
    # 11: the less the machine's noise in the ticks, the smaller): a limit
    # of 1 MiB was not always reached
    rounds, limit = 600000, 256 << 10
    prog, out = busy_program(d, rounds)
    # the ring (64K) fits under the limit: the program is not hurt by it
    env = d.env(LUATRACE_RING='64K')
    r = run([d.args.recorderd, 'run', '--quiet', '--out', d.out, '--format', 'all', '--',
             d.args.lua, prog], d.tmp, env, preexec_fn=file_limit(limit))
    expect(r.status == 3 and r.out == out, 'program changed: %d %r %r' % (r.status, r.out, r.err))
    expect(b'trace.ltr: File too large' in r.err, 'no error on stderr: %r' % r.err)
    session = only_session(d)
    meta = d.meta(session)
    expect(meta['status'] == 'complete' and meta['trace'] == 'partial', 'session %s' % meta)
    expect('trace.ltr: File too large' in meta['error'] and 'last complete record' in meta['error'],
           'error %r' % meta['error'])
    expect(meta['bytes'] > limit, 'the trace was not cut mid-run: %s' % meta)
    for name in REPORTS:
        expect(os.path.exists(os.path.join(session, name)), '%s missing' % name)
    expect(f_calls(session) == rounds, 'profile.txt is not of the whole run')
    trace = os.path.join(session, 'trace.ltr')
    expect(os.path.getsize(trace) <= limit, 'trace.ltr over the limit')
    rep = run([d.args.recorderd, 'report', session, '--format', 'none'], d.tmp, base_env())
    expect(rep.status == 0, 'the cut trace does not replay: %r' % rep.err)
    replayed = int(rep.out.split()[0])
    expect(0 < replayed < meta['events'], 'replayed %d of %d events' % (replayed, meta['events']))


def case_fsizereports(d):
    limit = 3000  # profile.txt and session.json fit, the flame graph does not
    prog, out = busy_program(d, 20000)
    d.start_daemon(preexec_fn=file_limit(limit), extra=('--format', 'all'))
    r = d.lua(prog, d.traced_env('busy'), traced=True)
    expect(r.status == 3 and r.out == out, 'program changed: %d %r %r' % (r.status, r.out, r.err))
    d.alive()
    session = only_session(d)
    meta = wait_meta(d, session)
    missing = [n for n in REPORTS if not os.path.exists(os.path.join(session, n))]
    expect(len(missing) >= 2 and 'profile.txt' not in missing, 'missing: %s' % missing)
    error = meta['error']
    expect(error.startswith('trace.ltr: File too large'), 'error %r' % error)
    for name in missing:
        expect(name in error, '%s missing but not named: %r' % (name, error))
    for name in set(REPORTS) - set(missing):
        expect(name not in error, '%s written but named: %r' % (name, error))
    left = [n for n in os.listdir(session) if n.endswith('.tmp')]
    expect(not left, 'temporary files left: %s' % left)
    logged = ' '.join(d.status()['errors'])
    expect(all(name in logged for name in missing), 'status errors: %r' % logged)
    d.stop_daemon()


def case_diskfull(d):
    small = os.path.join(d.tmp, 'small')
    os.mkdir(small)
    if os.geteuid() != 0 or run(['mount', '-t', 'tmpfs', '-o', 'size=3m', 'tmpfs', small], d.tmp,
                                base_env()).status != 0:
        print('skipped: needs root and a tmpfs mount')
        raise SystemExit(SKIP)
    try:
        d.out = os.path.join(small, 'out')
        # A trace that fills the 3 MB (~6 MB, zstd: 0.19 bytes an event
        # here; 2.4 M rounds, ~1.8 MB since trace-file version 11, fitted
        # on a fast machine), and reports that need more than what cutting
        # it back to its last flush frees (up to 256 KiB of records, ~100
        # KB): 8000 lines of source in html, annotate and coverage.txt, ~1.5
        # MB. Only the trace's removal makes room.
        rounds = 8000000
        prog, out = busy_program(d, rounds, padding=8000)
        d.start_daemon(extra=('--format', 'all'))
        r = d.lua(prog, d.traced_env('busy'), traced=True)
        expect(r.status == 3 and r.out == out, 'program changed: %r %r' % (r.out, r.err))
        d.alive()
        d.stop_daemon()
        session = only_session(d)
        meta = d.meta(session)
        expect(meta['trace'] == 'none' and meta['status'] == 'complete', 'session %s' % meta)
        expect(meta['error'] == 'trace.ltr: No space left on device: the partial trace was '
               'removed to make room for the reports', 'error %r' % meta['error'])
        expect(not os.path.exists(os.path.join(session, 'trace.ltr')), 'trace.ltr kept')
        for name in REPORTS:
            expect(os.path.exists(os.path.join(session, name)), '%s missing' % name)
        expect(f_calls(session) == rounds, 'profile.txt is not of the whole run')
    finally:
        d.kill_daemon()
        if run(['umount', small], d.tmp, base_env()).status != 0:
            run(['umount', '-l', small], d.tmp, base_env())


def main(argv):
    def add_args(ap):
        ap.add_argument('--corpus', required=True)
        ap.add_argument('--reftrace-c', default=None)
    return harness.case_main(argv, cases(globals()), 'luatrace-daemon-', add_args,
                             make=Daemon, paths=('corpus', 'reftrace_c'))


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
