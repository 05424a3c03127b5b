#!/usr/bin/env python3
"""Whom the collector and recorderd's clients talk to, and the faults of
the connection between them (issue 24).

  secconn.py CASE --recorderd PATH --cpath DIR [--lua lua5.1]

Cases that need two users create them (useradd; root only, else skipped)
and remove them, their processes and files even when they fail. Cases:
  planted    user B makes /tmp/luatrace-<A's uid> (mode 777) first and
             listens there with a fake daemon that acks and never drains;
             A's program (no XDG_RUNTIME_DIR) refuses it before sending
             anything, says why once, runs untraced and unchanged, leaves
             no ring; `recorderd status` and `stop` as A refuse it too
  peer       B's listening socket moved into a directory of A's own: the
             listener's uid (SO_PEERCRED) is not A's, nothing is sent
  listendir  recorderd listen creates its socket directory 0700 and
             refuses one another user owns or others can write
  rawtext    a daemon's refusal and status text with control bytes: both
             printed escaped, never raw
  nofd       12 programs at once on a daemon under ulimit -n 20: each one
             is traced or told why not (out of file descriptors), never
             dropped silently; the daemon logs and counts (status) each
             refusal
  stalled    the daemon stopped (SIGSTOP) under a program in wait mode:
             it says once that recorderd is not draining, drops events
             after LUATRACE_WAIT_MAX and ends unchanged; the session, once
             the daemon runs again, counts the drops
  fork       a pre-forking program (tests/hosts/forklib.so): each child
             that runs Lua after fork() is a session of its own, NAME.PID,
             with its own stacks; the parent's session has none of the
             children's calls
  idle       connections that send nothing, or half a hello, are closed
             after listen --hello-timeout, logged and counted in status
"""

import json
import os
import pwd
import resource
import shutil
import signal
import socket
import subprocess
import sys
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import SKIP, base_env, Case, cases, expect, Failure, run, shm_segments, wait_file  # noqa: E402

# A fake recorderd: logs what it receives to LOG. MODE ack: acks any hello
# (ok) and never reads the ring nor closes. MODE esc: answers a hello with a
# refusal and a status with text, both holding terminal control bytes.
FAKE = r'''
import os, socket, sys
sock, log, mode = sys.argv[1:4]
def s(b):
    return bytes([0xa0 | len(b)]) + b if len(b) < 32 else b'\xd9' + bytes([len(b)]) + b
def kv(k, v):
    if isinstance(v, bool):
        return s(k) + (b'\xc3' if v else b'\xc2')
    if isinstance(v, int):
        return s(k) + bytes([v])
    return s(k) + s(v)
def msg(*pairs):
    return bytes([0x80 | len(pairs)]) + b''.join(kv(k, v) for k, v in pairs)
l = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
l.bind(sock)
os.chmod(sock, 0o777)
l.listen(16)
open(log + '.ready', 'w').close()
keep = []
while True:
    c, _ = l.accept()
    keep.append(c)
    c.settimeout(5)
    try:
        data = c.recv(4096)
    except OSError:
        data = b''
    with open(log, 'ab') as f:
        f.write(data + b'\n--\n')
    if mode == 'ack' and b'hello' in data:
        c.sendall(msg((b'type', b'ack'), (b'v', 1), (b'ok', True), (b'session', b'stolen')))
    elif mode == 'esc' and b'hello' in data:
        c.sendall(msg((b'type', b'ack'), (b'v', 1), (b'ok', False),
                      (b'err', b'no\x1b[2J\x07bell')))
        c.close()
    elif mode == 'refuse':
        c.sendall(msg((b'type', b'ack'), (b'v', 1), (b'ok', False), (b'err', b'full\x1b[2J')))
        c.close()
    elif mode == 'esc':
        c.sendall(msg((b'type', b'status'), (b'v', 1), (b'text', b'st\x1b]0;x\x07\n'),
                      (b'json', b'{"a\x1b[31m": 1}\n')))
        c.close()
'''

# Fills a 64K ring many times over: a waiting program hangs on a fake
# daemon that never drains.
BUSY = '''
local function f(x) return x + 1 end
local s = 0
for i = 1, 300000 do s = f(s) end
print(s)
'''


def need_root():
    if os.geteuid() != 0 or not shutil.which('useradd') or not shutil.which('setpriv'):
        print('skipped: needs root, useradd and setpriv')
        raise SystemExit(SKIP)


class Users:
    """Two users made for the case, A and B; gone again at close()."""

    def __init__(self):
        self.names, self.procs, self.paths = [], [], []
        for who in ('a', 'b'):
            name = 'ltsec%s%d' % (who, os.getpid() % 100000)
            r = run(['useradd', '-M', '-s', '/usr/sbin/nologin', name], '/', base_env())
            if r.status != 0:
                self.close()
                raise Failure('useradd %s: %r' % (name, r.err))
            self.names.append(name)
        self.a, self.b = (pwd.getpwnam(n) for n in self.names)

    def cmd(self, user, argv):
        return ['setpriv', '--reuid=%d' % user.pw_uid, '--regid=%d' % user.pw_gid,
                '--clear-groups'] + argv

    def spawn(self, user, argv, cwd, env):
        p = subprocess.Popen(self.cmd(user, argv), cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                             start_new_session=True)
        self.procs.append(p)
        return p

    def close(self):
        for p in self.procs:
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait()
        for path in self.paths:
            shutil.rmtree(path, ignore_errors=True)
        for name in self.names:
            run(['userdel', name], '/', base_env())


def user_dir(d, users, user, name):
    """A directory of d.tmp that user owns (d.tmp itself is passable)."""
    os.chmod(d.tmp, 0o711)
    path = os.path.join(d.tmp, name)
    os.mkdir(path, 0o755)
    os.chown(path, user.pw_uid, user.pw_gid)
    return path


def start_fake(d, users, user, sock, mode):
    """The fake daemon on sock, as user (None: as ourselves); its log."""
    script = os.path.join(d.tmp, 'fake.py')
    with open(script, 'w') as f:
        f.write(FAKE)
    os.chmod(script, 0o644)
    logdir = user_dir(d, users, user, 'fakelog') if user else d.tmp
    log = os.path.join(logdir, 'log')
    argv = [sys.executable, script, sock, log, mode]
    if user:
        p = users.spawn(user, argv, d.tmp, base_env())
    else:
        p = subprocess.Popen(argv, cwd=d.tmp, stdin=subprocess.DEVNULL,
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                             start_new_session=True)
        d.fake = p
    for _ in range(1000):
        if os.path.exists(log + '.ready'):
            return log
        if p.poll() is not None:
            raise Failure('the fake daemon exited: %r' % p.stderr.read())
        time.sleep(0.01)
    raise Failure('the fake daemon never listened')


def received(log):
    """The bytes the fake daemon got (a connection that sent nothing, as the
    peer check makes, adds none)."""
    try:
        return open(log, 'rb').read().replace(b'\n--\n', b'')
    except FileNotFoundError:
        return b''


def lua_env(d, **extra):
    env = d.env(**extra)
    env.pop('XDG_RUNTIME_DIR', None)
    return env


def refused_once(r, what):
    text = r.err.decode(errors='replace')
    expect(text.count(what) == 1 and text.count('running untraced') == 1,
           'not refused once (%r): %r' % (what, text))


def as_a_program(d, users, env):
    """BUSY as A, in a directory of A's; its result (a hang fails)."""
    home = user_dir(d, users, users.a, 'a')
    prog = os.path.join(home, 'busy.lua')
    with open(prog, 'w') as f:
        f.write(BUSY)
    os.chmod(prog, 0o644)
    r = run(users.cmd(users.a, [d.args.lua, '-lluatrace', prog]), home, env, timeout=30)
    expect(r.status == 0 and r.out == b'300000\n', 'program changed: %d %r %r' %
           (r.status, r.out, r.err))
    expect(not os.path.exists(os.path.join(home, 'luatrace-out')), 'a recorder was spawned')
    return r


def as_a_clients(d, users, sock, log, what):
    """recorderd status and stop as A: refused, nothing sent."""
    for verb in ('status', 'stop'):
        before = received(log)
        r = run(users.cmd(users.a, [d.args.recorderd, verb, '--socket', sock]), '/',
                base_env(), timeout=30)
        expect(r.status != 0 and what.encode() in r.err and r.out == b'',
               '%s not refused: %d %r %r' % (verb, r.status, r.out, r.err))
        expect(received(log) == before, '%s sent %r' % (verb, received(log)))


def case_planted(d):
    need_root()
    users = Users()
    rundir = '/tmp/luatrace-%d' % users.a.pw_uid
    users.paths.append(rundir)
    try:
        shutil.rmtree(rundir, ignore_errors=True)
        os.mkdir(rundir)
        os.chown(rundir, users.b.pw_uid, users.b.pw_gid)
        os.chmod(rundir, 0o777)
        sock = os.path.join(rundir, 'recorderd.sock')
        log = start_fake(d, users, users.b, sock, 'ack')
        before = shm_segments()
        r = as_a_program(d, users, lua_env(d, LUATRACE_SHM='planted', LUATRACE_RING='64K'))
        refused_once(r, 'not a directory of yours')
        expect(received(log) == b'', 'the fake daemon got %r' % received(log))
        left = {n for n in shm_segments() - before if n.startswith('luatrace-planted')}
        expect(not left, 'rings left: %s' % left)
        as_a_clients(d, users, sock, log, 'not a directory of yours')
    finally:
        users.close()


def case_peer(d):
    need_root()
    users = Users()
    try:
        bdir = user_dir(d, users, users.b, 'b')
        log = start_fake(d, users, users.b, os.path.join(bdir, 's.sock'), 'ack')
        adir = user_dir(d, users, users.a, 'asock')
        os.chmod(adir, 0o700)
        sock = os.path.join(adir, 'recorderd.sock')
        os.rename(os.path.join(bdir, 's.sock'), sock)  # still B's listener
        r = as_a_program(d, users, lua_env(d, LUATRACE_SHM='peer', LUATRACE_RING='64K',
                                           LUATRACE_SOCKET=sock))
        refused_once(r, 'runs as uid %d, not as you' % users.b.pw_uid)
        expect(received(log) == b'', 'the fake daemon got %r' % received(log))
        as_a_clients(d, users, sock, log, 'not as you')
    finally:
        users.close()


def listen(d, sock):
    return run([d.args.recorderd, 'listen', '--socket', sock, '--out', d.out], d.tmp,
               base_env(), timeout=30)


def case_listendir(d):
    need_root()
    users = Users()
    try:
        theirs = user_dir(d, users, users.b, 'theirs')
        open_dir = os.path.join(d.tmp, 'open')
        os.mkdir(open_dir)
        os.chmod(open_dir, 0o777)
        group = os.path.join(d.tmp, 'group')
        os.mkdir(group)
        os.chmod(group, 0o770)
        for dirname in (theirs, open_dir, group):
            r = listen(d, os.path.join(dirname, 'r.sock'))
            expect(r.status != 0 and b'not a directory of yours' in r.err,
                   'listen in %s: %d %r' % (dirname, r.status, r.err))
            expect(os.listdir(dirname) == [], 'a socket made in %s' % dirname)
        os.umask(0)  # the directory's mode must not come from the umask
        d.sock = os.path.join(d.tmp, 'fresh', 'r.sock')
        d.start_daemon()
        mode = os.stat(os.path.dirname(d.sock)).st_mode & 0o7777
        expect(mode == 0o700, 'socket directory mode %o' % mode)
        d.stop_daemon()
    finally:
        users.close()


def case_rawtext(d):
    sockdir = os.path.join(d.tmp, 'sock')
    os.mkdir(sockdir, 0o700)
    sock = os.path.join(sockdir, 'r.sock')
    start_fake(d, None, None, sock, 'esc')
    prog = d.write('hi.lua', 'print("hi")\n')
    r = d.lua(prog, d.env(LUATRACE_SOCKET=sock, LUATRACE_SHM='rawtext'), traced=True)
    expect(r.status == 0 and r.out == b'hi\n', 'program changed: %r %r' % (r.out, r.err))
    expect(b'\x1b' not in r.err and b'\x07' not in r.err and b'no\\x1b[2J\\x07bell' in r.err,
           'refusal printed raw: %r' % r.err)
    for flag in ([], ['--json']):
        s = run([d.args.recorderd, 'status', '--socket', sock] + flag, d.tmp, base_env())
        # recorderd shows a control byte of a daemon's text as ? (rd_write_printable)
        expect(s.status == 0 and b'\x1b' not in s.out and b'\x07' not in s.out and
               (b'?' in s.out or b'\\x1b' in s.out), 'status printed raw: %r %r' % (s.out, s.err))
    # a status request refused (as out of file descriptors): the reason, escaped
    os.unlink(os.path.join(d.tmp, 'log.ready'))
    os.rename(os.path.join(d.tmp, 'log'), os.path.join(d.tmp, 'log.esc'))
    refusing = os.path.join(sockdir, 'refusing.sock')
    first = d.fake
    start_fake(d, None, None, refusing, 'refuse')
    d.fakes = [first]
    s = run([d.args.recorderd, 'status', '--socket', refusing], d.tmp, base_env())
    expect(s.status == 1 and s.err == b'recorderd: the daemon refused: full\\x1b[2J\n',
           'refusal: %r' % s.err)
    s = run([d.args.recorderd, 'stop', '--socket', refusing], d.tmp, base_env())
    expect(s.status == 1 and s.err == b'recorderd: the daemon refused: full\\x1b[2J\n',
           'stop refused: %r' % s.err)


# Says it started (the collector has registered or been refused by then),
# then works until the file GATE exists.
UNTIL_GATE = '''
io.stdout:write("started\\n") io.stdout:flush()
local function work(n) local s = 0 for i = 1, n do s = s + i % 7 end return s end
local t = 0
repeat t = t + work(2000) until io.open(GATE)
print(t > 0)
'''


def status(d, json_out=True):
    """status of d's daemon; it may refuse a connection while out of
    descriptors (counted in d.status_refused): then asked again."""
    for _ in range(200):
        r = run([d.args.recorderd, 'status', '--socket', d.sock] + (['--json'] if json_out else []),
                d.tmp, base_env())
        if r.status == 0:
            return json.loads(r.out) if json_out else r.out.decode()
        expect(b'the daemon refused: recorderd is out of file descriptors' in r.err,
               'status failed: %r' % r.err)
        d.status_refused += 1
        time.sleep(0.05)
    raise Failure('status fails: %r' % r.err)


def case_nofd(d):
    gate = os.path.join(d.tmp, 'gate')
    prog = d.write('gated.lua', UNTIL_GATE.replace('GATE', repr(gate)))
    d.start_daemon(preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_NOFILE, (20, 20)))
    procs = []
    try:
        for i in range(12):
            env = d.env(LUATRACE_SOCKET=d.sock, LUATRACE_SHM='nofd%d' % i, LUATRACE_RING='64K')
            procs.append(subprocess.Popen([d.args.lua, '-lluatrace', prog], cwd=d.tmp, env=env,
                                          stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                          stderr=subprocess.PIPE, start_new_session=True))
        for p in procs:
            expect(p.stdout.readline() == b'started\n', 'a program did not start')
        open(gate, 'w').close()
        errs = []
        for p in procs:
            out, err = p.communicate(timeout=120)
            expect(p.returncode == 0 and out == b'true\n', 'program changed: %r %r' % (out, err))
            errs.append(err.decode(errors='replace'))
    finally:
        for p in procs:
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait()
    told = [e for e in errs if e]
    for e in told:
        expect(('out of file descriptors' in e or 'Too many open files' in e) and
               e.count('running untraced') == 1 and 'Broken pipe' not in e,
               'a program was not told why: %r' % e)
    expect(told, 'every program was traced: the limit did not bite')
    st = status(d)
    refused = len(told) + d.status_refused  # status itself may have been refused
    expect(st.get('refused_no_fd') == refused, 'status counts %s refusals, the programs and '
           'status saw %d' % (st.get('refused_no_fd'), refused))
    text = status(d, False)
    refused = len(told) + d.status_refused
    expect(('refused out of file descriptors: %d' % refused) in text,
           'the text status does not count them: %r' % text)
    d.stop_daemon()
    log = d.daemon.stderr.read().decode(errors='replace')
    at_accept = sum('out of file descriptors' in e for e in told) + d.status_refused
    expect(log.count('a connection refused: recorderd is out of file descriptors') == at_accept,
           'the log says %r' % log)
    for e in told:
        if 'cannot open ring' in e:
            ring = e.split('cannot open ring ')[1].split(':')[0]
            expect('refused: cannot open ring %s:' % ring in log, 'not logged: %r' % e)


# Says it started, waits for GATE, then fills a 64K ring many times over.
GATED_BUSY = '''
io.stdout:write("started\\n") io.stdout:flush()
repeat until io.open(GATE)
local function f(x) return x + 1 end
local s = 0
for i = 1, 300000 do s = f(s) end
print(s)
'''


def case_stalled(d):
    gate = os.path.join(d.tmp, 'gate')
    prog = d.write('stalled.lua', GATED_BUSY.replace('GATE', repr(gate)))
    d.start_daemon()
    env = d.env(LUATRACE_SOCKET=d.sock, LUATRACE_SHM='stalled', LUATRACE_RING='64K',
                LUATRACE_WAIT_MAX='2')
    p = subprocess.Popen([d.args.lua, '-lluatrace', prog], cwd=d.tmp, env=env,
                         stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, start_new_session=True)
    try:
        expect(p.stdout.readline() == b'started\n', 'the program did not start')
        os.kill(d.daemon.pid, signal.SIGSTOP)
        open(gate, 'w').close()
        try:
            out, err = p.communicate(timeout=120)
        except subprocess.TimeoutExpired:
            raise Failure('the program hangs on a stopped daemon')
    finally:
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()
        os.kill(d.daemon.pid, signal.SIGCONT)
    err = err.decode(errors='replace')
    expect(p.returncode == 0 and out == b'300000\n', 'program changed: %r %r' % (out, err))
    expect(err.count('recorderd is not draining the ring') == 1 and
           err.count('read nothing for 2 s (LUATRACE_WAIT_MAX)') == 1 and
           len(err.splitlines()) == 2, 'stderr: %r' % err)
    session = d.session('stalled')
    for _ in range(3000):
        if os.path.exists(os.path.join(session, 'session.json')):
            break
        time.sleep(0.02)
    meta = json.load(open(os.path.join(session, 'session.json')))
    expect(meta['drops'] > 0, 'session %s' % meta)
    d.stop_daemon()
    bad = d.lua(prog, d.env(LUATRACE_SOCKET=d.sock, LUATRACE_SHM='stalled',
                            LUATRACE_WAIT_MAX='soon'), traced=True)
    expect(b'LUATRACE_WAIT_MAX=soon: whole seconds' in bad.err, 'bad value: %r' % bad.err)


# Forks two children that run Lua: each serves, and resumes a coroutine
# the parent made and left suspended.
FORKING = '''
local forklib = require "forklib"
local function work(n) local s = 0 for i = 1, n do s = s + i % 7 end return s end
local function serve(k) local r = work(20000 * k) return r end
local function parent_after() local r = work(30000) return r end
local co = coroutine.create(function(a)
  while true do local r = work(a) a = coroutine.yield(r) end
end)
coroutine.resume(co, 10)
local kids = {}
for k = 1, 2 do
  io.stdout:flush()
  local pid = forklib.fork()
  if pid == 0 then
    local function child_main()
      local r = serve(k)
      local _, c = coroutine.resume(co, 100)
      return r + c
    end
    print("child", k, child_main())
    os.exit(0)
  end
  kids[#kids + 1] = pid
end
print("parent", parent_after())
for _, pid in ipairs(kids) do assert(forklib.wait(pid) == 0) end
'''


def case_fork(d):
    if not d.args.forklib:
        raise Failure('--forklib is needed')
    prog = d.write('forking.lua', FORKING)
    env = d.env(LUATRACE_SOCKET=d.sock, LUATRACE_SHM='forkp')
    env['LUA_CPATH'] = '%s/?.so;%s/?.so;;' % (d.args.cpath, os.path.dirname(d.args.forklib))
    plain = d.lua(prog, env)
    d.start_daemon()
    r = d.lua(prog, env, traced=True)
    expect(r.status == 0 and sorted(r.out.splitlines()) == sorted(plain.out.splitlines()) and
           r.err == b'', 'program changed: %r %r' % (r.out, r.err))
    d.stop_daemon()
    names = sorted(os.listdir(d.out))
    expect(len(names) == 3 and names[0] == 'forkp' and
           all(n.startswith('forkp.') for n in names[1:]), 'sessions %s' % names)
    parent = '\n'.join(d.folded(d.session('forkp'), 'calls'))
    expect('parent_after' in parent and 'child_main' not in parent and 'serve' not in parent,
           "the parent's session has the children's calls: %s" % parent)
    ks = set()
    for name in names[1:]:
        meta = json.load(open(os.path.join(d.session(name), 'session.json')))
        expect(meta['status'] == 'complete' and name == 'forkp.%d' % meta['pid'],
               'session %s: %s' % (name, meta))
        stacks = '\n'.join(sorted(d.folded(d.session(name), 'calls')))
        main = 'main chunk@forking.lua:0;child_main@forking.lua:15;'
        expect(main + 'serve@forking.lua:4;work@forking.lua:3' in stacks and
               main + 'coroutine.resume@[C];function@forking.lua:6;work@forking.lua:3' in stacks
               and '?' not in stacks and 'parent_after' not in stacks,
               'child session %s: %r' % (name, stacks))
        ks.add(tuple(sorted(d.folded(d.session(name), 'lines').items())))
    expect(len(ks) == 2, 'the two children have the same trace')


EXECS = r"""
local forklib = require "forklib"
local function f(i) return i end
for i = 1, 1000 do f(i) end
print("exec")
io.stdout:flush()
forklib.exec("/bin/sleep", "1")
"""


def case_exec(d):
    """A traced lua5.1 that execs another program (a launcher becoming its
    server), which lives on: the session has every call made before the
    exec, 1000. Before, it had 755: the records written since the last
    published batch were left in the ring, as the process had not died
    (truncated is said all the same: the trace had no end)."""
    if not d.args.forklib:
        raise Failure('--forklib is needed')
    prog = d.write('execs.lua', EXECS)
    env = d.env(LUATRACE_SOCKET=d.sock, LUATRACE_SHM='execs')
    env['LUA_CPATH'] = '%s/?.so;%s/?.so;;' % (d.args.cpath, os.path.dirname(d.args.forklib))
    d.start_daemon()
    r = d.lua(prog, env, traced=True)
    expect(r.status == 0 and r.out == b'exec\n' and r.err == b'',
           'program changed: %d %r %r' % (r.status, r.out, r.err))
    wait_file(os.path.join(d.out, 'execs', 'session.json'), 'the session', d.daemon)
    d.stop_daemon()
    calls = d.folded(d.session('execs'), 'calls')
    n = sum(v for k, v in calls.items() if k.endswith(';f@execs.lua:3'))
    expect(n == 1000, 'f called %d times in the session, 1000 in the program: %s' % (n, calls))


def case_idle(d):
    d.start_daemon(extra=['--hello-timeout', '1'])
    silent, half = (socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) for _ in range(2))
    try:
        for s in (silent, half):
            s.settimeout(60)
            s.connect(d.sock)
        half.sendall(b'\x87\xa4type\xa5hel')
        for s in (silent, half):
            try:
                expect(s.recv(100) == b'', 'the daemon answered')
            except socket.timeout:
                raise Failure('a connection with no hello is still open after 60 s')
    finally:
        silent.close()
        half.close()
    st = status(d)
    expect(st['closed_no_hello'] == 2, 'status: %s' % st)
    errors = ' '.join(st['errors'])
    expect('closed: no message within 1 s' in errors and
           'closed: no whole message within 1 s' in errors, 'errors: %r' % errors)
    prog = d.write('hi.lua', 'print("hi")\n')
    r = d.lua(prog, d.env(LUATRACE_SOCKET=d.sock, LUATRACE_SHM='idlehi'), traced=True)
    expect(r.status == 0 and r.out == b'hi\n' and r.err == b'', 'program: %r %r' % (r.out, r.err))
    d.stop_daemon()


class SecCase(Case):
    fake = None
    fakes = ()
    status_refused = 0

    def kill_daemon(self):
        super().kill_daemon()
        for fake in list(self.fakes) + [self.fake]:
            if fake and fake.poll() is None:
                os.killpg(fake.pid, signal.SIGKILL)
                fake.wait()


def main(argv):
    def add_args(ap):
        ap.add_argument('--forklib', help='tests/hosts/forklib.so (case fork)')
    return harness.case_main(argv, cases(globals()), 'luatrace-secconn-', add_args, make=SecCase)


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
