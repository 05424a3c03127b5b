#!/usr/bin/env python3
"""Where recorderd writes, with which modes, and which sources it embeds.

  secout.py CASE --recorderd PATH --cpath DIR --lua lua5.1

Real recorderd and lua5.1 processes; everything they make is in a temporary
directory removed at the end, with the users that a case creates (root only:
other cases are skipped, status 77), even when it fails. Cases:
  modes     under umask 0, a session's directories are 0700 and its files
            0600 (trace.ltr, session.json, annotate/, every report and a Lua
            backend's info.write), and so is a `report -o FILE`
  symlinks  symlinks planted where reports go (report -o FILE, annotate/ of
            report -o DIR, a Lua backend's info.write, the out directory
            itself) are never written through: the file they point to is
            unchanged; -o /dev/stdout and /dev/null are written into, not
            replaced
  outrule   an out directory that others may write and that is not sticky
            is refused by run and listen; a sticky one is used
  shared    (root) user B owns a sticky --out; right after A's session
            directory is made, B moves it away and puts in its place a
            directory of B's whose annotate/server.lua.txt is a symlink to
            A's 0600 file: that file is unchanged, A's reports all land in
            A's own directory, none in B's
  sources   (root) a trace made by B whose chunks are named after A's 0600
            file and /etc/shadow: `report` by root embeds neither (html,
            annotate, coverage), nor does A's report of it; a file B may
            read is embedded
"""

import os
import pwd
import shutil
import stat
import subprocess
import sys
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import Failure, base_env, cases, expect, run  # noqa: E402

SKIP = 77
DEADLINE = 60  # seconds: only so that a broken case fails instead of hanging


class Case(harness.Case):
    """No daemon of its own: recorderd run and report; users made for a case
    are deleted whatever happens."""
    def __init__(self, args, tmp):
        super().__init__(args, tmp)
        self.users = []

    def path(self, *p):
        return os.path.join(self.tmp, *p)

    def write(self, rel, text, mode=0o644):
        p = self.path(rel)
        with open(p, 'w') as f:
            f.write(text)
        os.chmod(p, mode)
        return p

    def env(self, **extra):
        env = base_env()
        env['LUA_CPATH'] = self.args.cpath + '/?.so;;'
        for k in ('LUATRACE_SHM', 'LUATRACE_SOCKET', 'LUATRACE_SPAWN', 'LUATRACE_MODE',
                  'LUATRACE_RING', 'LUATRACE_OUT'):
            env.pop(k, None)
        env.update(extra)
        return env

    def rd(self, *argv, cwd=None, env=None, umask=None):
        pre = (lambda: os.umask(umask)) if umask is not None else None
        return run([self.args.recorderd] + list(argv), cwd or self.tmp, env or self.env(),
                   preexec_fn=pre)

    def traced(self, out, prog, cwd=None, user=None, umask=None, backend=None, extra=()):
        """recorderd run --out out [extra] -- lua5.1 prog [as user]."""
        cmd = [self.args.recorderd, 'run', '--quiet', '--format', 'annotate', '--out', out] + \
            (['--backend', backend] if backend else []) + list(extra) + \
            ['--', self.args.lua, '-lluatrace', prog]
        pre = (lambda: os.umask(umask)) if umask is not None else None
        return run(self.as_user(user, cmd), cwd or self.tmp, self.env(), preexec_fn=pre)

    def as_user(self, user, cmd):
        if not user:
            return cmd
        return ['setpriv', '--reuid=' + user, '--regid=' + user, '--clear-groups'] + cmd

    def add_user(self, tag):
        name = 'ltsec%s%d' % (tag, os.getpid() % 100000)
        subprocess.run(['userdel', name], stderr=subprocess.DEVNULL)
        subprocess.run(['useradd', '-M', '-U', '-s', '/bin/sh', name], check=True)
        self.users.append(name)
        return name, pwd.getpwnam(name).pw_uid

    def kill_daemon(self):
        super().kill_daemon()
        for u in self.users:
            subprocess.run(['userdel', u], stderr=subprocess.DEVNULL)


def need_root():
    if os.geteuid() != 0 or not shutil.which('useradd') or not shutil.which('setpriv'):
        print('skipped: needs root, useradd and setpriv')
        raise SystemExit(SKIP)


def session_of(out):
    """The one session directory in out: server, or server.PID when a test
    running beside this one has a ring of that name."""
    found = os.listdir(out)
    expect(len(found) == 1 and found[0].startswith('server'), 'sessions: %s' % found)
    return os.path.join(out, found[0])


def modes_under(top):
    """{relative path: (is_dir, mode)} of everything under top."""
    found = {}
    for root, dirs, files in os.walk(top):
        for n in dirs + files:
            p = os.path.join(root, n)
            st = os.lstat(p)
            found[os.path.relpath(p, top)] = (stat.S_ISDIR(st.st_mode), st.st_mode & 0o7777)
    return found


SERVER = 'local function work(x) return x + 1 end\nprint(work(1))\n'

# a Lua backend that writes its file with info.write
WRITER = '''
return {
  record = function() end,
  close = function(info)
    assert(info.write("calls.txt", "hello\\n"))
    local ok, err = pcall(info.write, "../x", "no")
    assert(not ok and err:find("not a file name"), err)
  end,
}
'''


def case_modes(c):
    c.write('server.lua', SERVER)
    c.write('writer.lua', WRITER)
    out = c.path('out')
    r = c.traced(out, 'server.lua', umask=0, backend='lua:writer.lua')
    expect(r.status == 0 and r.out == b'2\n' and b'backend' not in r.err,
           'run: %r %r' % (r.out, r.err))
    sess = session_of(out)
    found = modes_under(sess)
    for want in ('trace.ltr', 'session.json', 'profile.txt', 'report.html', 'calls.txt',
                 'annotate', os.path.join('annotate', 'server.lua.txt')):
        expect(want in found, '%s missing: %s' % (want, sorted(found)))
    bad = {p: oct(m) for p, (d, m) in found.items() if m != (0o700 if d else 0o600)}
    expect(not bad, 'modes not 0700/0600: %s' % bad)
    expect(os.stat(sess).st_mode & 0o7777 == 0o700, 'session dir %o' % os.stat(sess).st_mode)
    r = c.rd('report', '--format', 'html', os.path.join(sess, 'trace.ltr'), '-o', 'r.html',
             umask=0)
    expect(r.status == 0, 'report: %r' % r.err)
    expect(os.stat(c.path('r.html')).st_mode & 0o7777 == 0o600,
           'report -o FILE: %o' % os.stat(c.path('r.html')).st_mode)


def case_symlinks(c):
    victim = c.write('victim.txt', 'victim\n', 0o600)
    c.write('server.lua', SERVER)
    r = c.traced(c.path('out'), 'server.lua')
    expect(r.status == 0, 'run: %r' % r.err)
    trace = os.path.join(session_of(c.path('out')), 'trace.ltr')
    os.mkdir(c.path('adir'))
    os.symlink(victim, c.path('adir', 'server.lua.txt'))
    os.symlink(victim, c.path('link.txt'))
    r = c.rd('report', '--format', 'annotate', trace, '-o', 'adir')
    expect(r.status == 0, 'annotate: %r' % r.err)
    r = c.rd('report', '--format', 'profile', trace, '-o', 'link.txt')
    expect(r.status == 0, 'profile: %r' % r.err)
    c.write('writer.lua', WRITER)
    os.symlink(victim, c.path('adir', 'calls.txt'))
    r = c.rd('report', trace, '--backend', 'lua:writer.lua', '-o', 'adir')
    expect(r.status == 0 and b'backend' not in r.err and
           not os.path.islink(c.path('adir', 'calls.txt')),
           'info.write: %r' % r.err)
    with open(victim) as f:
        expect(f.read() == 'victim\n', 'a symlink was written through')
    for p in ('adir/server.lua.txt', 'link.txt'):
        expect(not os.path.islink(c.path(p)), '%s still a symlink' % p)
    # a device or a pipe is written into, never replaced (nor /dev/null by root)
    r = c.rd('report', trace, '-o', '/dev/stdout')
    expect(r.status == 0 and r.out.startswith(b'luatrace profile'), '/dev/stdout: %r' % r.err)
    r = c.rd('report', trace, '-o', '/dev/null')
    expect(r.status == 0 and stat.S_ISCHR(os.stat('/dev/null').st_mode), '/dev/null: %r' % r.err)
    # a name for one of the process's own descriptors (/dev/stdout's kind:
    # a symlink to /proc/self/fd/1) with stdout a regular file is written
    # into, and the symlink stays (as root, renaming over it had replaced
    # /dev/stdout itself with a file); /dev/fd/1 likewise
    os.symlink('/proc/self/fd/1', c.path('mystdout'))
    for name in (c.path('mystdout'), '/dev/fd/1'):
        with open(c.path('redirected.txt'), 'wb') as f:
            p = subprocess.run([c.args.recorderd, 'report', trace, '-o', name], cwd=c.tmp,
                               env=c.env(), stdout=f, stderr=subprocess.PIPE)
        with open(c.path('redirected.txt'), 'rb') as f:
            got = f.read()
        expect(p.returncode == 0 and got.startswith(b'luatrace profile') and
               os.path.islink(c.path('mystdout')),
               '-o %s with stdout a file: %d %r %r' % (name, p.returncode, got[:40], p.stderr))
    os.symlink(c.path('out'), c.path('outlink'))
    r = c.traced(c.path('outlink'), 'server.lua')
    expect(r.status == 2 and b'symlink' in r.err, 'run --out SYMLINK: %r' % r.err)


def case_outrule(c):
    c.write('server.lua', SERVER)
    for mode, ok in ((0o777, False), (0o775, False), (0o1777, True), (0o755, True)):
        out = c.path('out%o' % mode)
        os.mkdir(out)
        os.chmod(out, mode)
        r = c.traced(out, 'server.lua')
        if ok:
            expect(r.status == 0 and len(os.listdir(out)) == 1,
                   'mode %o: %r %s' % (mode, r.err, os.listdir(out)))
        else:
            expect(r.status == 2 and b'not sticky' in r.err and os.listdir(out) == [],
                   'mode %o not refused: %r %s' % (mode, r.err, os.listdir(out)))
    r = c.rd('listen', '--socket', c.path('sock'), '--out', c.path('out777'))
    expect(r.status != 0 and b'not sticky' in r.err, 'listen: %r' % r.err)


def wait_for(pred, what, proc=None):
    end = time.monotonic() + DEADLINE
    while not pred():
        if proc is not None and proc.poll() is not None:
            raise Failure('%s: the program ended first: %r' % (what, proc.communicate()))
        if time.monotonic() > end:
            raise Failure('%s: never happened' % what)
        time.sleep(0.02)


# A's program: says it runs (its session directory exists), then waits for
# the test to say go (B has swapped the directory)
WAITING = '''
local f = assert(io.open(READY, "w")) f:write("ready\\n") f:close()
local g = assert(io.open(GO, "r")) g:read("*l") g:close()
local function work(x) return x + 1 end
print(work(1))
'''


def two_users(c):
    """Users A and B (skipped unless root), and A's home, private to A."""
    need_root()
    a, auid = c.add_user('a')
    b, buid = c.add_user('b')
    os.chmod(c.tmp, 0o755)
    home = c.path('ahome')
    os.mkdir(home, 0o700)
    return a, auid, b, buid, home


def private_file(folder, name, text):
    """folder/name holding text, mode 0600."""
    path = os.path.join(folder, name)
    with open(path, 'w') as f:
        f.write(text)
    os.chmod(path, 0o600)
    return path


def case_shared(c):
    a, auid, b, buid, home = two_users(c)
    precious = private_file(home, 'precious.txt', 'precious\n')
    ready, go = os.path.join(home, 'ready'), c.path('go')
    os.mkfifo(go)
    os.chmod(go, 0o666)
    with open(os.path.join(home, 'server.lua'), 'w') as f:
        f.write('READY, GO = %r, %r\n' % (ready, go) + WAITING)
    for p in (home, precious, os.path.join(home, 'server.lua')):
        os.chown(p, auid, auid)
    out = c.path('out')
    os.mkdir(out)
    os.chown(out, buid, buid)
    os.chmod(out, 0o1777)  # sticky: still, its owner may rename what is in it
    cmd = c.as_user(a, [c.args.recorderd, 'run', '--quiet', '--format', 'annotate', '--out', out,
                        '--', c.args.lua,
                        '-lluatrace', 'server.lua'])
    proc = subprocess.Popen(cmd, cwd=home, env=c.env(HOME=home), stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            start_new_session=True)
    try:
        wait_for(lambda: os.path.exists(ready), 'A\'s program starts', proc)
        swap = ('set -e; cd "$1"; s=$(ls); mv "$s" moved; mkdir -p "$s/annotate"; '
                'ln -s "$2" "$s/annotate/server.lua.txt"; printf %s "$s"')
        r = run(c.as_user(b, ['sh', '-c', swap, 'sh', out, precious]), c.tmp, c.env())
        expect(r.status == 0, 'B\'s swap: %r' % r.err)
        theirs = os.path.join(out, r.out.decode())
        fd = None
        end = time.monotonic() + DEADLINE
        while fd is None:
            try:
                fd = os.open(go, os.O_WRONLY | os.O_NONBLOCK)
            except OSError:
                expect(time.monotonic() < end and proc.poll() is None, 'A never waits for go')
                time.sleep(0.02)
        os.write(fd, b'go\n')
        os.close(fd)
        o, e = proc.communicate(timeout=DEADLINE)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    expect(proc.returncode == 0 and o == b'2\n', 'A\'s run: %r %r' % (o, e))
    with open(precious) as f:
        expect(f.read() == 'precious\n', 'A\'s precious.txt was overwritten')
    expect(sorted(modes_under(theirs)) == ['annotate', 'annotate/server.lua.txt'],
           'A wrote into B\'s directory: %s' % sorted(modes_under(theirs)))
    moved = c.path('out', 'moved')
    found = modes_under(moved)
    for want in ('session.json', 'profile.txt', 'annotate/server.lua.txt', 'trace.ltr'):
        expect(want in found, '%s not in A\'s directory: %s' % (want, sorted(found)))
    bad = {p: oct(m) for p, (d, m) in found.items() if m != (0o700 if d else 0o600)}
    expect(not bad, 'modes not 0700/0600: %s' % bad)
    expect(all(os.lstat(os.path.join(moved, p)).st_uid == auid for p in found), 'not A\'s')


def case_sources(c):
    a, auid, b, buid, home = two_users(c)
    secret = private_file(home, 'secret.lua', 'local x = "SECRET_MARKER"\nlocal y = 2\n')
    os.chown(home, auid, auid)
    os.chown(secret, auid, auid)
    public = c.write('public.lua', 'local x = "PUBLIC_MARKER"\nlocal y = 2\n')
    with open('/etc/shadow') as f:
        shadow_line = f.readline().strip()
    bdir = c.path('bdir')
    os.mkdir(bdir, 0o700)
    prog = os.path.join(bdir, 'crafted.lua')
    with open(prog, 'w') as f:
        for p in (secret, '/etc/shadow', public):
            f.write('assert(loadstring("local a = 1\\nlocal b = 2\\n", %r))()\n' % ('@' + p))
    os.chown(bdir, buid, buid)
    os.chown(prog, buid, buid)
    # every line counted: its coverage report is one that reads the sources
    r = c.traced(os.path.join(bdir, 'out'), prog, cwd=bdir, user=b, extra=['--lines', 'exact'])
    expect(r.status == 0, 'B\'s run: %r' % r.err)
    trace = os.path.join(bdir, 'out', 'crafted', 'trace.ltr')
    expect(os.stat(trace).st_uid == buid, 'the trace is not B\'s')
    texts = {}
    for fmt in ('html', 'annotate', 'coverage'):
        r = c.rd('report', '--format', fmt, trace)
        expect(r.status == 0, '%s: %r' % (fmt, r.err))
        texts[fmt] = r.out
    r = c.rd('report', '--format', 'html', os.path.dirname(trace))  # SESSION_DIR
    expect(r.status == 0, 'html of the session dir: %r' % r.err)
    texts['html of the session dir'] = r.out
    # B shares the trace; A reports it: A may read the file, B may not
    shared = os.path.join(bdir, 'shared.ltr')
    r = run(c.as_user(b, ['cp', trace, shared]), c.tmp, c.env())
    expect(r.status == 0, 'B\'s cp: %r' % r.err)
    os.chmod(shared, 0o644)
    os.chmod(bdir, 0o755)
    r = run(c.as_user(a, [c.args.recorderd, 'report', '--format', 'html', shared]), c.tmp,
            c.env())
    expect(r.status == 0, 'A\'s report: %r' % r.err)
    texts['html by A'] = r.out
    for fmt, t in texts.items():
        expect(b'SECRET_MARKER' not in t, '%s embeds A\'s 0600 file' % fmt)
        expect(shadow_line.encode() not in t, '%s embeds /etc/shadow' % fmt)
        expect(b'PUBLIC_MARKER' in t, '%s lost the file B may read' % fmt)


def main(argv):
    return harness.case_main(argv, cases(globals()), 'secout.', make=Case)


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
