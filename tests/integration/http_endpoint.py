#!/usr/bin/env python3
"""recorderd listen --http: the pprof endpoint (issue 21, part 3).

  http_endpoint.py CASE --recorderd PATH --cpath DIR [--lua lua5.1]

Each case starts a real `recorderd listen --http 127.0.0.1:0` (a free port,
read from its log) with --hello-timeout 1, and cleans up every process,
socket and ring even when it fails. Cases:
  traced    a traced lua5.1 program (a session the daemon serves) profiled
            for 1 s: `go tool pprof -top` names its hot function first,
            and not the function it was busy in before the window;
            /sessions lists it; its output and exit code equal an
            untraced run's
  sampled   an untouched lua5.1 program, profiled from outside: the same
  (both)    SIGTERM while a profile is under way: the daemon ends
  garbage   a bad method, an unknown path, a missing, bad or absent pid,
            seconds out of range, a body, an oversized header and binary
            junk each get their 4xx and a one-line message; the daemon
            keeps serving
  slow      a client that sends half a request is answered 408 and closed
            after the timeout, while other requests are served meanwhile;
            a 5th connection of one client at once is answered 503
  otheruser another user's process (useradd; root only, else skipped) is
            refused with 403
  otherclient another user (root only) asking for the owner's profile or
            /sessions is refused 403; holding 16 connections, it gets 4 and
            the owner is still served; the access log names each
  token     --http-token-file: an address not on loopback needs one; a file
            others can read, or a short token, is refused; another user
            (root only) gets in with the token, not with a wrong one or none;
            a client from a non-loopback address needs it, the owner on
            loopback does not
  shared    overlapping profiles of one untouched process (three at once, a
            fourth while they run) share one sampler: each answered 200 with
            the hot function first; one after them starts a new sampler
  busy      a process another tracer holds: 409 naming it (dump too)
  accesslog (in garbage) a line per answer in the daemon's log: time, uid,
            method, path, status, bytes
"""

import http.client
import json
import os
import random
import re
import resource
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import Case, Failure, SKIP, base_env, expect, run  # noqa: E402

# Busy in early() until the file GATE1 exists, then says so in the file
# PHASE2 and is busy in hot() until the file GATE exists, then a fixed
# output and exit 3.
PROG = '''
local function early(n) local s = 0 for i = 1, n do s = s + i % 5 end return s end
local function hot(n) local s = 0 for i = 1, n do s = s + i % 7 end return s end
local t = 0
repeat t = t + early(20000) until io.open(GATE1)
io.open(PHASE2, "w"):close()
repeat t = t + hot(20000) until io.open(GATE)
print("hot", hot(1000))
io.stdout:write("done\\n")
os.exit(3)
'''


# A client of the endpoint run as another user (setpriv ... python3 -c):
# argv PORT PATH [AUTHORIZATION]; prints [status, body] as JSON.
CLIENT_GET = '''
import http.client, json, sys
c = http.client.HTTPConnection("127.0.0.1", int(sys.argv[1]), timeout=60)
c.request("GET", sys.argv[2], headers={"Authorization": sys.argv[3]} if sys.argv[3:] else {})
r = c.getresponse()
print(json.dumps([r.status, r.read().decode("utf-8", "replace")]))
'''

# argv PORT N: opens N connections, each with half a request; prints how
# many were answered 503 at once, then holds the rest until stdin ends.
CLIENT_HOLD = '''
import socket, sys, time
held = []
for i in range(int(sys.argv[2])):
    s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=10)
    s.sendall(b"GET /sessions HTTP/1.1\\r\\n")
    held.append(s)
time.sleep(0.5)
refused = 0
for s in held:
    s.settimeout(0.2)
    try:
        refused += s.recv(12).startswith(b"HTTP/1.1 503")
    except socket.timeout:
        pass
print(refused, flush=True)
sys.stdin.read()
'''


class Http(Case):
    def start(self, host='127.0.0.1', extra=(), timeout=1):
        self.start_daemon(extra=['--http', host + ':0', '--hello-timeout', str(timeout)] +
                          list(extra))
        line = self.daemon.stderr.readline().decode()
        m = re.search(r'http://%s:(\d+)/' % re.escape(host), line)
        expect(m, 'no endpoint address in the log: %r' % line)
        self.port = int(m.group(1))
        self.procs = []

    def get_as(self, users, user, path, auth=None):
        """GET path as another user (users.cmd): status, text."""
        r = run(users.cmd(user, [sys.executable, '-c', CLIENT_GET, str(self.port), path] +
                          ([auth] if auth else [])), '/', base_env(), 60)
        expect(r.status == 0, 'the client as %s: %r' % (user.pw_name, r.err))
        return json.loads(r.out)

    def log_lines(self):
        """The daemon's log after it stopped: its access-log lines."""
        self.stop_daemon()
        return [l for l in self.daemon.stderr.read().decode().splitlines()
                if l.startswith('recorderd: http ')]

    def get(self, path, timeout=60):
        c = http.client.HTTPConnection('127.0.0.1', self.port, timeout=timeout)
        try:
            c.request('GET', path)
            r = c.getresponse()
            return r.status, r.read()
        finally:
            c.close()

    def raw(self, data, timeout=30):
        """Sends data as it is; the answer's status and body."""
        s = socket.create_connection(('127.0.0.1', self.port), timeout=timeout)
        try:
            s.sendall(data)
            return read_answer(s)
        finally:
            s.close()

    def spawn(self, prog, traced, user_cmd=None):
        env = self.traced_env('hot') if traced else self.env()
        cmd = [self.args.lua] + (['-lluatrace'] if traced else []) + [prog]
        p = subprocess.Popen((user_cmd or (lambda a: a))(cmd), cwd=self.tmp, env=env,
                             stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, start_new_session=True)
        self.procs.append(p)
        return p

    def traced_env(self, shm):
        return self.env(LUATRACE_SOCKET=self.sock, LUATRACE_SHM=shm)

    def serving(self):
        st, body = self.get('/sessions')
        expect(st == 200, '/sessions: %d %r' % (st, body))
        expect(self.daemon.poll() is None, 'the daemon died')
        return json.loads(body)

    def kill_all(self):  # the programs a case started
        for p in getattr(self, 'procs', []):
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait()

    def kill_daemon(self):
        self.kill_all()
        super().kill_daemon()


def read_answer(s):
    data = b''
    while True:
        try:
            b = s.recv(65536)
        except socket.timeout:
            raise Failure('no answer, connection still open: %r' % data[:200])
        if not b:
            break
        data += b
    head, _, body = data.partition(b'\r\n\r\n')
    m = re.match(rb'HTTP/1\.1 (\d{3}) ', head)
    expect(m, 'not an HTTP answer: %r' % data[:200])
    return int(m.group(1)), body


def go_env(tmp):
    env = base_env()
    env['HOME'] = tmp
    env['GOCACHE'] = os.path.join(tmp, 'gocache')
    env['GOPATH'] = os.path.join(tmp, 'gopath')
    env.pop('PPROF_TMPDIR', None)
    return env


def top_of(d, source):
    """`go tool pprof -top` of source (a profile's bytes, or the endpoint's
    URL for go to fetch): its text, and its functions by flat time, first
    first."""
    path = source
    if isinstance(source, bytes):
        path = os.path.join(d.tmp, 'p.pb.gz')
        with open(path, 'wb') as f:
            f.write(source)
    r = run([d.args.go, 'tool', 'pprof', '-top', path], d.tmp, go_env(d.tmp), 180)
    expect(r.status == 0, 'go tool pprof: %r' % r.err)
    text = r.out.decode()
    rows = [l.split(None, 5) for l in text.splitlines()]
    return text, [row[5] for row in rows if len(row) == 6 and row[1].endswith('%')
                  and row[0] != 'flat']


def plain_run(d, prog, gate):
    open(gate, 'w').close()
    try:
        return run([d.args.lua, prog], d.tmp, d.env(), 60)
    finally:
        os.unlink(gate)


def finish(d, p, gate, plain):
    open(gate, 'w').close()
    out, _ = p.communicate(timeout=60)
    expect(out == plain.out, 'output changed: %r, untraced %r' % (out, plain.out))
    expect(p.returncode == plain.status, 'exit %d, untraced %d' % (p.returncode, plain.status))


def wait_session(d, pid):
    for _ in range(600):
        if any(s['pid'] == pid for s in d.serving()['sessions']):
            return
        time.sleep(0.05)
    raise Failure('process %d never became a session' % pid)


def wait_file(path, p):
    for _ in range(1200):
        if os.path.exists(path) or p.poll() is not None:
            return
        time.sleep(0.05)
    raise Failure('%s never came' % path)


def need_go(d):
    """d.args.go, or the case is skipped."""
    go = shutil.which('go') or shutil.which('go', path='/usr/lib/go/bin')
    if not go:
        print('SKIP: go not installed (Debian golang-go)')
        raise SystemExit(SKIP)
    d.args.go = go


def profile_case(d, traced):
    """The profile is of the window only: early(), busy before it and a
    good part of the session, is not in it."""
    need_go(d)
    gate, gate1, phase2 = (os.path.join(d.tmp, n) for n in ('gate', 'gate1', 'phase2'))
    prog = d.write('hot.lua', PROG.replace('GATE1', repr(gate1)).replace('GATE', repr(gate))
                   .replace('PHASE2', repr(phase2)))
    open(gate1, 'w').close()
    plain = plain_run(d, prog, gate)
    expect(plain.status == 3, 'untraced run: %r' % plain.err)
    os.unlink(gate1)
    os.unlink(phase2)
    d.start()
    p = d.spawn(prog, traced)
    if traced:
        wait_session(d, p.pid)
    time.sleep(0.5)  # early() runs, traced
    open(gate1, 'w').close()
    wait_file(phase2, p)
    path = '/debug/pprof/profile?seconds=1&pid=%d' % p.pid
    if traced:
        st, body = d.get(path)
        expect(st == 200, 'profile: %d %r' % (st, body[:300]))
        expect(body[:2] == b'\x1f\x8b', 'not gzip: %r' % body[:10])
        text, top = top_of(d, body)
    else:  # as people will use it: go fetches it
        text, top = top_of(d, 'http://127.0.0.1:%d%s' % (d.port, path))
    # read from outside, a name the read could not settle is the
    # definition's (doc/attach.md): hot by its line then
    line = [n for n, l in enumerate(PROG.split('\n'), 1) if 'local function hot' in l][0]
    names = ('hot (hot.lua:%d)' % line,) + (() if traced else ('function (hot.lua:%d)' % line,))
    expect(top and top[0] in names, 'the hot function is not first: %r, want %s' % (top, names))
    expect(not any(f.startswith('early') for f in top), 'early() before the window: %r' % top)
    kind = 'every call traced' if traced else 'sampled from outside at 100 Hz'
    expect(kind in text, 'the profile does not say %r:\n%s' % (kind, text))
    sessions = d.serving()['sessions']
    expect(traced == any(s['pid'] == p.pid for s in sessions), '/sessions: %r' % sessions)
    stop_while_waiting(d, p.pid)
    finish(d, p, gate, plain)


def stop_while_waiting(d, pid):
    """SIGTERM while a 60 s profile is under way: the daemon ends (status
    0, within stop_daemon's bound); the client gets what the window had or
    a closed connection."""
    s = socket.create_connection(('127.0.0.1', d.port), timeout=60)
    try:
        s.sendall(b'GET /debug/pprof/profile?seconds=60&pid=%d HTTP/1.1\r\n\r\n' % pid)
        time.sleep(0.3)
        d.stop_daemon()
        data = s.recv(100)
        expect(not data or data.startswith(b'HTTP/1.1 200'), 'answer: %r' % data)
    finally:
        s.close()


def case_traced(d):
    profile_case(d, True)


def case_sampled(d):
    profile_case(d, False)


def case_garbage(d):
    d.start()
    me = os.getpid()
    dead = subprocess.Popen(['true'])
    dead.wait()
    bad = [
        (b'POST /sessions HTTP/1.1\r\nHost: x\r\n\r\n', 405),
        (b'DELETE /debug/pprof/profile?pid=1 HTTP/1.1\r\n\r\n', 405),
        (b'GET /nothing HTTP/1.1\r\n\r\n', 404),
        (b'GET /debug/pprof/profile?seconds=1 HTTP/1.1\r\n\r\n', 400),
        (b'GET /debug/pprof/profile?seconds=1&pid=abc HTTP/1.1\r\n\r\n', 400),
        (b'GET /debug/pprof/profile?seconds=1&pid=-4 HTTP/1.1\r\n\r\n', 400),
        (b'GET /debug/pprof/profile?seconds=1&pid=%d HTTP/1.1\r\n\r\n' % dead.pid, 404),
        (b'GET /debug/pprof/profile?seconds=0&pid=%d HTTP/1.1\r\n\r\n' % me, 400),
        (b'GET /debug/pprof/profile?seconds=301&pid=%d HTTP/1.1\r\n\r\n' % me, 400),
        (b'GET /debug/pprof/profile?seconds=x&pid=%d HTTP/1.1\r\n\r\n' % me, 400),
        (b'GET /debug/pprof/profile?seconds&pid=%d HTTP/1.1\r\n\r\n' % me, 400),
        (b'GET /debug/pprof/profile?seconds=1&pid HTTP/1.1\r\n\r\n', 400),
        (b'GET /debug/pprof/profile?seconds=1&pid=%d HTTP/1.1\r\n\r\n' % me, 404),  # not Lua
        (b'GET /sessions HTTP/1.1\r\nContent-Length: 5\r\n\r\nhello', 413),
        (b'GET /sessions HTTP/1.1\r\nX-Big: ' + b'a' * 9000 + b'\r\n\r\n', 431),
        (b'GET /' + b'a' * 3000 + b' HTTP/1.1\r\n\r\n', 414),
        (bytes(range(256)) * 4, 400),
        (b'\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03' + b'\x00' * 64, 400),  # TLS hello
        (b'GET /sessions HTTP/9.9\r\n\r\n', 400),
    ]
    for req, want in bad:
        st, body = d.raw(req)
        expect(st == want, '%r: %d %r, want %d' % (req[:60], st, body, want))
        text = body.decode('utf-8', 'replace')
        expect(text.endswith('\n') and text.count('\n') == 1 and len(text) > 5,
               'not a one-line message: %r' % text)
        d.serving()
    st, _ = d.raw(b'GET /' + b'a' * 3000 + b' HTTP/1.1\r\n\r\n')
    # the access log: a line per answer, in order, each /sessions after
    line = re.compile(r'recorderd: http \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ uid %d '
                      r'(GET|POST|DELETE|-) (\S+) (\d{3}) (\d+)$' % os.geteuid())
    got = [line.match(l) for l in d.log_lines()]
    expect(all(got), 'access log lines: %r' % [m for m in got if not m])
    want = [str(w) for _, w in bad for w in (w, 200)] + ['414']
    expect([m.group(3) for m in got] == want,
           'access log statuses: %r, want %r' % ([m.group(3) for m in got], want))
    expect(got[1].group(1, 2) == ('GET', '/sessions') and int(got[1].group(4)) > 10,
           'a /sessions line: %r' % got[1].group(0))


def case_slow(d):
    d.start()
    half = socket.create_connection(('127.0.0.1', d.port), timeout=60)
    try:
        half.sendall(b'GET /sessions HTTP/1.1\r\nHost: x\r\n')  # never ends
        for _ in range(3):
            d.serving()  # served meanwhile
        st, body = read_answer(half)
        expect(st == 408, 'a half request: %d %r' % (st, body))
    finally:
        half.close()
    held = []
    try:
        for _ in range(5):
            s = socket.create_connection(('127.0.0.1', d.port), timeout=60)
            held.append(s)
        st, body = read_answer(held[-1])
        expect(st == 503 and b'of yours' in body,
               'a 5th connection of one client at once: %d %r' % (st, body))
    finally:
        for s in held:
            s.close()
    for _ in range(50):  # the held ones are closed by now or soon
        try:
            d.serving()
            return
        except Failure:
            time.sleep(0.1)
    d.serving()


def case_refusedread(d):
    """Clients refused before their request is read (503: a client's 5th
    connection at once) must read the refusal, not a reset. Before, the
    daemon closed the connection with the request unread, which makes
    the kernel reset it, and the client's kernel dropped the 503 it had
    not read yet: 7 clients in 16 got ECONNRESET instead."""
    d.start(timeout=20)
    held, refused = [], []
    try:
        for _ in range(4):
            s = socket.create_connection(('127.0.0.1', d.port), timeout=30)
            s.sendall(b'GET /sessions HTTP/1.1\r\n')  # never ends: holds a place
            held.append(s)
        for _ in range(30):
            s = socket.create_connection(('127.0.0.1', d.port), timeout=30)
            refused.append(s)
            s.sendall(b'GET /sessions HTTP/1.1\r\nHost: x\r\n\r\n')
        time.sleep(0.5)  # every refusal sent, and any reset with it
        for i, s in enumerate(refused):
            try:
                st, body = read_answer(s)
            except ConnectionResetError:
                raise Failure('client %d of 30: reset instead of its 503' % (i + 1))
            expect(st == 503 and b'of yours' in body, 'client %d: %d %r' % (i + 1, st, body))
    finally:
        for s in held + refused:
            s.close()
    d.serving()


def cpu_secs(pid):
    """utime + stime of process pid, in seconds."""
    with open('/proc/%d/stat' % pid) as f:
        fields = f.read().rpartition(')')[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf('SC_CLK_TCK')


def case_crowded(d):
    """A machine with many TCP connections (a busy server beside the
    daemon: 8000 sockets, this test's own): each client is still told
    apart at once, the kernel asked for its socket alone. Before, the
    daemon read /proc/net/tcp to find each client's uid, every socket of
    the machine for each request, on the loop that serves the traced
    processes: 8 to 30 ms a request here (0.5 ms with none), 0.8 to 2.9 s
    of the daemon's CPU for these 100 requests (0.01 s now), so that a flood of
    connections kept the loop busy and a traced process's hello waited."""
    pairs = 4000
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    need = 2 * pairs + 200
    if soft < need:
        if hard != resource.RLIM_INFINITY and hard < need:
            print('SKIP: RLIMIT_NOFILE %d, %d descriptors needed' % (hard, need))
            raise SystemExit(SKIP)
        resource.setrlimit(resource.RLIMIT_NOFILE, (need, hard))
    d.start()
    srv = socket.socket()
    held = [srv]
    try:
        srv.bind(('127.0.0.1', 0))
        srv.listen(4096)
        for _ in range(pairs):
            held.append(socket.create_connection(srv.getsockname()))
            held.append(srv.accept()[0])
        d.serving()  # the owner, found among them
        before = cpu_secs(d.daemon.pid)
        # from ports drawn at random: each client anywhere in the kernel's
        # table, not where the next port of the sequence falls
        for port in random.sample(range(20000, 30000), 100):
            s = socket.create_connection(('127.0.0.1', d.port), timeout=60,
                                         source_address=('127.0.0.1', port))
            try:
                s.sendall(b'GET /sessions HTTP/1.0\r\n\r\n')
                st, body = read_answer(s)
            finally:
                s.close()
            expect(st == 200, '/sessions from port %d: %d %r' % (port, st, body))
        spent = cpu_secs(d.daemon.pid) - before
        expect(spent < 0.15, '100 requests took %.2f s of the daemon\'s CPU with %d TCP '
               'connections on the machine' % (spent, pairs))
    finally:
        for s in held:
            s.close()


def case_otheruser(d):
    from secconn import need_root, Users
    need_root()
    users = Users()
    try:
        gate = os.path.join(d.tmp, 'gate')
        os.chmod(d.tmp, 0o755)
        prog = d.write('hot.lua', PROG.replace('GATE', repr(gate)))
        d.start()
        p = d.spawn(prog, False, lambda a: users.cmd(users.b, a))
        time.sleep(0.2)
        st, body = d.get('/debug/pprof/profile?seconds=1&pid=%d' % p.pid)
        expect(st == 403, "another user's process: %d %r" % (st, body))
        expect(b'another user' in body, 'message: %r' % body)
        d.serving()
        open(gate, 'w').close()
        p.communicate(timeout=60)
    finally:
        d.kill_all()
        users.close()


def case_otherclient(d):
    """Another user of the machine asks: refused, and cannot keep the owner
    out by holding connections."""
    from secconn import need_root, Users
    need_root()
    users = Users()
    holder = None
    try:
        gate, gate1, phase2 = (os.path.join(d.tmp, n) for n in ('gate', 'gate1', 'phase2'))
        prog = d.write('hot.lua', PROG.replace('GATE1', repr(gate1)).replace('GATE', repr(gate))
                       .replace('PHASE2', repr(phase2)))
        open(gate1, 'w').close()  # straight to hot()
        d.start(timeout=30)
        p = d.spawn(prog, False)
        st, text = d.get_as(users, users.b, '/debug/pprof/profile?seconds=1&pid=%d' % p.pid)
        expect(st == 403 and 'serves its own user only' in text,
               "another user's request for the owner's profile: %d %r" % (st, text))
        st, text = d.get_as(users, users.b, '/sessions')
        expect(st == 403, "another user's /sessions: %d %r" % (st, text))
        holder = subprocess.Popen(users.cmd(users.b, [sys.executable, '-c', CLIENT_HOLD,
                                                      str(d.port), '16']),
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  start_new_session=True)
        refused = int(holder.stdout.readline() or -1)
        expect(refused == 12, 'another user holding 16 connections: %d refused at once, '
               'want 12 (4 a client)' % refused)
        d.serving()  # the owner, while the other user holds its 4
        holder.stdin.close()
        holder.wait(timeout=30)
        open(gate, 'w').close()
        p.communicate(timeout=60)
        log = d.log_lines()
        uid_b = users.b.pw_uid
        expect(any(l.endswith(' 403 %d' % len(text.encode())) and ' uid %d GET /sessions ' % uid_b
                   in l for l in log), 'no access-log line of the refusal: %r' % log)
    finally:
        if holder and holder.poll() is None:
            os.killpg(holder.pid, signal.SIGKILL)
            holder.wait()
        d.kill_all()
        users.close()


def local_address():
    """An IPv4 address of this machine's that is not loopback, or None."""
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        s.connect(('10.255.255.255', 1))  # no packet: only picks a route
        ip = s.getsockname()[0]
        return None if ip.startswith('127.') or ip == '0.0.0.0' else ip
    except OSError:
        return None
    finally:
        s.close()


def listen_refused(d, extra, why):
    r = run([d.args.recorderd, 'listen', '--socket', d.sock, '--out', d.out] + extra,
            d.tmp, d.env(), 30)
    expect(r.status == 2 and why in r.err.decode(), '%r: %d %r' % (extra, r.status, r.err))


def case_token(d):
    from secconn import need_root, Users
    need_root()
    tok = 'tok-' + os.urandom(16).hex()
    path = os.path.join(d.tmp, 'token')
    with open(path, 'w') as f:
        f.write(tok + '\n')
    os.chmod(path, 0o644)
    listen_refused(d, ['--http', '0.0.0.0:0'], 'not a loopback address')
    listen_refused(d, ['--http', '0.0.0.0:0', '--http-token-file', path], 'chmod 600')
    os.chmod(path, 0o600)
    short = d.write('short', 'abc\n')
    os.chmod(os.path.join(d.tmp, short), 0o600)
    listen_refused(d, ['--http', '127.0.0.1:0', '--http-token-file', os.path.join(d.tmp, short)],
                   '16 to 255 bytes')
    users = Users()
    try:
        os.chmod(d.tmp, 0o755)
        d.start(extra=['--http-token-file', path])
        for auth, want, why in [(None, 403, 'Authorization: Bearer'),
                                ('Bearer ' + tok[:-1] + 'x', 403, 'not the bearer token'),
                                ('Basic ' + tok, 403, 'not the bearer token'),
                                ('Bearer ' + tok, 200, '"sessions"')]:
            st, text = d.get_as(users, users.b, '/sessions', auth)
            expect(st == want and why in text, 'as another user with %r: %d %r' %
                   (auth and auth[:12], st, text))
        d.serving()  # the owner needs none
        d.stop_daemon()
        ip = local_address()
        if not ip:
            print('note: no non-loopback address here: the remote part not checked')
            return
        d.start(host='0.0.0.0', extra=['--http-token-file', path])
        for auth, want in [(None, 403), ('Bearer ' + tok, 200)]:
            c = http.client.HTTPConnection(ip, d.port, timeout=60)
            c.request('GET', '/sessions', headers={'Authorization': auth} if auth else {})
            r = c.getresponse()
            expect(r.status == want, 'from %s with %r: %d %r' % (ip, auth and auth[:12],
                                                                 r.status, r.read()))
            c.close()
        d.serving()  # the owner on loopback needs none
    finally:
        d.kill_all()
        users.close()


def case_shared(d):
    """Overlapping profiles of one untouched process: one sampler."""
    need_go(d)
    gate, gate1, phase2 = (os.path.join(d.tmp, n) for n in ('gate', 'gate1', 'phase2'))
    # a heap of a million tables: finding the state takes a while, so the
    # three requests at once overlap there too
    prog = d.write('hot.lua', 'keep = {} for i = 1, 1e6 do keep[i] = {} end\n' +
                   PROG.replace('GATE1', repr(gate1)).replace('GATE', repr(gate))
                   .replace('PHASE2', repr(phase2)))
    open(gate1, 'w').close()  # straight to hot()
    d.start()
    p = d.spawn(prog, False)
    wait_file(phase2, p)
    results = [None] * 4

    def fetch(i, secs):
        results[i] = d.get('/debug/pprof/profile?seconds=%d&pid=%d' % (secs, p.pid))
    # at once (two readers would stop the process together: one refused),
    # and one while they run
    threads = [threading.Thread(target=fetch, args=(i, secs))
               for i, secs in enumerate((2, 1, 1, 1))]
    for t in threads[:3]:
        t.start()
    time.sleep(0.6)
    threads[3].start()
    for t in threads:
        t.join(120)
    results.append(d.get('/debug/pprof/profile?seconds=1&pid=%d' % p.pid))  # after them
    # a name read from a running process may be the definition's, when
    # the read could not settle it (doc/attach.md): hot by its line then
    with open(os.path.join(d.tmp, prog)) as f:
        line = [n for n, l in enumerate(f, 1) if 'local function hot' in l][0]
    names = ('hot (hot.lua:%d)' % line, 'function (hot.lua:%d)' % line)
    for i, (st, body) in enumerate(results):
        expect(st == 200, 'profile %d: %d %r' % (i, st, body[:300]))
        text, top = top_of(d, body)
        expect(top and top[0] in names, 'profile %d: %r, want %s\n%s' % (i, top, names, text))
    open(gate, 'w').close()
    p.communicate(timeout=60)


def case_busy(d):
    """A process another tracer holds (here this test, PTRACE_SEIZE): 409,
    naming it, not a refusal blamed on Yama; `dump` says the same."""
    import ctypes
    gate, gate1, phase2 = (os.path.join(d.tmp, n) for n in ('gate', 'gate1', 'phase2'))
    prog = d.write('hot.lua', PROG.replace('GATE1', repr(gate1)).replace('GATE', repr(gate))
                   .replace('PHASE2', repr(phase2)))
    open(gate1, 'w').close()
    d.start()
    p = d.spawn(prog, False)
    wait_file(phase2, p)
    libc = ctypes.CDLL(None, use_errno=True)
    libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p]
    if libc.ptrace(0x4206, p.pid, None, None) != 0:  # PTRACE_SEIZE
        print('SKIP: cannot ptrace here: %s' % os.strerror(ctypes.get_errno()))
        raise SystemExit(SKIP)
    try:
        st, body = d.get('/debug/pprof/profile?seconds=1&pid=%d' % p.pid)
        want = 'being traced by process %d (' % os.getpid()
        expect(st == 409 and want in body.decode(), 'a traced process: %d %r' % (st, body))
        r = run([d.args.recorderd, 'dump', str(p.pid)], d.tmp, d.env(), 60)
        expect(r.status == 1 and want in r.err.decode(), 'dump: %d %r' % (r.status, r.err))
    finally:
        d.kill_all()


def main(argv):
    return harness.case_main(argv, harness.cases(globals()), 'luatrace-http-', make=Http)


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
