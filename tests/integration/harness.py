"""The integration tests' harness (doc/tests.md): processes, temporary
directories, recorderd and lua5.1 started and always stopped, and the two
mains a script ends with.

A case script (collector.py, daemon.py, ...) defines functions case_NAME(c)
and ends with

    if __name__ == '__main__':
        sys.exit(harness.case_main(sys.argv[1:], harness.cases(globals()), "luatrace-x-"))

`script.py --list` prints the case names; tests/integration/meson.build
reads them at configure time and makes a test SCRIPT-NAME of each, so a
case name is written once, in its function's name.

A script that checks programs (views.py, pprof.py, ...) ends with
program_main: --recorderd, --lua and the programs, a temporary directory,
FAIL on the errors it names.

Whatever happens (a failed check, an exception, meson's SIGTERM on a
timeout), the processes a test started are killed, its rings in /dev/shm
unlinked and its directory removed. Exit status: 0 pass, 1 fail, 77 skip.
"""

import argparse
import mmap
import os
import re
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time

sys.dont_write_bytecode = True  # keep the source tree clean

SKIP = 77
RUN_TIMEOUT = 60       # seconds, for each process we start
SHM_DIR = '/dev/shm'


class Failure(Exception):
    pass


def expect(cond, what):
    if not cond:
        raise Failure(what)


def retried(body, attempts=3):
    """body(attempt) until it passes, at most attempts times: for a bound
    a fair sample misses now and then, and a biased one every time."""
    last = None
    for attempt in range(attempts):
        try:
            return body(attempt)
        except Failure as e:
            last = e
            print('attempt %d: %s' % (attempt + 1, e))
    raise last


# {======================================================================
# Processes

class Result:
    def __init__(self, cmd, out, err, status):
        self.cmd, self.out, self.err, self.status = cmd, out, err, status


def kill_group(proc):
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def run(cmd, cwd, env, timeout=RUN_TIMEOUT, preexec_fn=None):
    """Run cmd in its own process group; kill the whole group on timeout or
    if we are interrupted. preexec_fn runs in the child before exec (limits)."""
    proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            start_new_session=True, preexec_fn=preexec_fn)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        kill_group(proc)
        proc.communicate()
        raise Failure('timeout after %ds: %s' % (timeout, ' '.join(cmd)))
    finally:
        if proc.poll() is None:
            kill_group(proc)
            proc.wait()
    # the program is done; take any straggler of its group with it
    kill_group(proc)
    return Result(cmd, out, err, proc.returncode)


def show_bytes(b, limit=600):
    """Program output for a failure message: decoded, cut to limit."""
    s = b.decode('utf-8', 'replace')
    if len(s) > limit:
        s = s[:limit] + '...[%d more chars]' % (len(s) - limit)
    return s


def run_ok(cmd, cwd, timeout=RUN_TIMEOUT, env=None, limit=600):
    """run() in env (base_env() when None); a Failure, with the output cut
    to limit, unless it exits 0."""
    res = run(cmd, cwd, base_env() if env is None else env, timeout)
    expect(res.status == 0, '%s exited with %s:\n%s'
           % (' '.join(cmd), res.status, show_bytes(res.out + res.err, limit)))
    return res


def base_env():
    """The environment all runs share: ours, minus what would change how
    lua5.1 starts or finds modules."""
    env = dict(os.environ)
    for var in ('LUA_INIT', 'LUA_PATH', 'REFTRACE_OUT', 'REFTRACE_NAIVE'):
        env.pop(var, None)
    return env


def find_session(outdir):
    """The one session folder recorderd wrote in outdir."""
    dirs = sorted(d for d in os.listdir(outdir)
                  if os.path.isdir(os.path.join(outdir, d)))
    if len(dirs) != 1:
        raise Failure('expected one session directory in %s, found %r'
                      % (outdir, os.listdir(outdir)))
    return os.path.join(outdir, dirs[0])


def record(args, prog, tmp, formats, *prog_args, timeout=RUN_TIMEOUT, exact=True):
    """recorderd run --format formats -- lua5.1 PROG prog_args, in prog's
    folder, into tmp/out-NAME; a Failure unless it exits 0. (NAME, the
    session's folder). exact: with --time exact, every stack timed and
    every line counted (the reports' tests: a short program gets a few
    ticks of run's default sampled time)."""
    path = os.path.abspath(prog)
    name = os.path.splitext(os.path.basename(path))[0]
    outdir = os.path.join(tmp, 'out-' + name)
    os.mkdir(outdir)
    how = ['--time', 'exact'] if exact else []
    run_ok([args.recorderd, 'run', '--quiet', '--out', outdir, '--format', formats] + how + ['--',
            args.lua, os.path.basename(path)] + list(prog_args), os.path.dirname(path), timeout)
    return name, find_session(outdir)


def wait_file(path, what, proc=None, timeout=30):
    """Until path exists; a Failure if proc (a Popen) exits first or after
    timeout seconds."""
    for _ in range(int(timeout / 0.01)):
        if os.path.exists(path):
            return
        if proc is not None and proc.poll() is not None:
            raise Failure('%s: the daemon died (status %s)' % (what, proc.poll()))
        time.sleep(0.01)
    raise Failure('%s: %s never appeared' % (what, path))


def proc_state(pid):
    """The state letter of /proc/PID/stat, or None once pid is gone."""
    try:
        with open('/proc/%d/stat' % pid) as f:
            return f.read().rpartition(')')[2].split()[0]
    except OSError:
        return None


def wait_blocked(pid, what, timeout=30):
    """Until process pid sleeps in a system call (state S, and
    /proc/PID/syscall names one): a program that said READY just before
    its blocking call (io.read, os.execute) is then in it, no longer on
    its way there running Lua, however slow the machine. A Failure if pid
    exits first or after timeout seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with open('/proc/%d/syscall' % pid) as f:
                nr = f.read().split()[0]
        except (OSError, IndexError):
            nr = None
        state = proc_state(pid)
        if state is None or state == 'Z':
            raise Failure('%s: process %d exited' % (what, pid))
        if state == 'S' and nr not in (None, 'running', '-1') and proc_state(pid) == 'S':
            return
        time.sleep(0.005)
    raise Failure('%s: process %d never blocked in a system call' % (what, pid))


EXITING = r'''
local stop = ...
local function rec(n)
  if n == 0 then local s = 0 for i = 1, 20000 do s = s + i end return s end
  return rec(n - 1) + 1
end
io.stdout:write("ready\n") io.stdout:flush()
while true do
  rec(60)
  local f = io.open(stop) if f then f:close() break end
end
'''


def exit_race(c, start, cmd, rounds=16):
    """recorderd CMD PID of a lua5.1 (never loaded luatrace, started by
    start(argv), a Popen) that exits while it is read: the stop file is
    made 0 to 14 ms after recorderd starts, so that the process exits as
    recorderd looks for its Lua API, its state or reads its heap. Each
    round must end in success (0) or a refusal saying that it exited
    (exit 1), never one saying it has no Lua or cannot be read. Returns
    the statuses and messages."""
    c.write('exiting.lua', EXITING)
    seen = []
    for i in range(rounds):
        stop = os.path.join(c.tmp, 'stop%d' % i)
        p = start([c.args.lua, 'exiting.lua', stop])
        expect(p.stdout.readline() == b'ready\n', 'exiting.lua did not start')
        timer = threading.Timer((i % 8) * 0.002, lambda s=stop: open(s, 'w').close())
        timer.start()
        r = run([c.args.recorderd] + [a.replace('PID', str(p.pid)) for a in cmd], c.tmp,
                base_env())
        timer.join()
        p.wait(timeout=30)
        err = r.err.decode(errors='replace')
        lines = [ln for ln in err.splitlines() if ln.startswith('recorderd: ')
                 and 'luatrace.so is loaded into it now' not in ln]
        print('round %d: %d %r' % (i, r.status, lines))
        seen.append((r.status, lines))
        expect(r.status == 0 or (r.status == 1 and lines and
                                 re.search(r'process %d exited|no process %d' % (p.pid, p.pid), lines[-1])),
               'round %d: %s of a process that exited meanwhile: %d %r'
               % (i, ' '.join(cmd), r.status, err))
    return seen


def forge_ring(c, name, size=65536):
    """A ring forged by hand for case c (unlinked with its rings): its shm
    fd, path, header and data mappings (proto/lt_ring.h's header, this
    process as the producer)."""
    c.used.add(name)
    path = os.path.join(SHM_DIR, 'luatrace-' + name)
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600)
    os.ftruncate(fd, 4096 + size)
    mm = mmap.mmap(fd, 4096)
    mm[0:32] = struct.pack('<QIIQII', 0x31474e4952544c, 1, 4096, size, os.getpid(), 0)
    return fd, path, mm, mmap.mmap(fd, size, offset=4096)


def drop_ring(fd, path):
    """Closes and unlinks a ring of forge_ring (the case may have unlinked it)."""
    os.close(fd)
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


def shm_segments():
    try:
        return {n for n in os.listdir(SHM_DIR) if n.startswith('luatrace-')}
    except FileNotFoundError:
        return set()

# }======================================================================


# {======================================================================
# A case: a temporary directory, recorderd listen, lua5.1 with the collector

class Case:
    def __init__(self, args, tmp):
        self.args, self.tmp = args, tmp
        self.sock = os.path.join(tmp, 'sock', 'recorderd.sock')
        self.out = os.path.join(tmp, 'out')
        self.daemon = None
        self.used = set()  # ring names this case may create

    def env(self, **extra):
        env = base_env()
        env['LUA_CPATH'] = self.args.cpath + '/?.so;;'
        for k in ('LUATRACE_SHM', 'LUATRACE_SOCKET', 'LUATRACE_SPAWN',
                  'LUATRACE_MODE', 'LUATRACE_RING', 'LUATRACE_OUT'):
            env.pop(k, None)
        env['XDG_RUNTIME_DIR'] = os.path.join(self.tmp, 'xdg')
        env.update(extra)
        if 'LUATRACE_SHM' in extra:
            self.used.add(extra['LUATRACE_SHM'])
        return env

    def mine(self, segments):
        """The segments this case could have made (other tests run at the
        same time and have rings of their own)."""
        return {n for n in segments
                if n[len('luatrace-'):].split('.')[0] in self.used}

    def write(self, name, text):
        self.used.add(name.rsplit('.', 1)[0])
        path = os.path.join(self.tmp, name)
        with open(path, 'w') as f:
            f.write(text)
        return name

    def start_daemon(self, preexec_fn=None, extra=()):
        self.daemon = subprocess.Popen(
            [self.args.recorderd, 'listen', '--socket', self.sock, '--out', self.out] + list(extra),
            cwd=self.tmp, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE, start_new_session=True, preexec_fn=preexec_fn)
        for _ in range(1000):  # until it answers: a stale file may already be there
            probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                probe.connect(self.sock)
                return
            except OSError:
                if self.daemon.poll() is not None:
                    raise Failure('recorderd listen exited: %r' % self.daemon.stderr.read())
                time.sleep(0.01)
            finally:
                probe.close()
        raise Failure('recorderd listen does not answer on %s' % self.sock)

    def stop_daemon(self):
        if self.daemon and self.daemon.poll() is None:
            self.daemon.send_signal(signal.SIGTERM)
            try:
                self.daemon.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.daemon.kill()
                self.daemon.wait()
                raise Failure('recorderd did not stop on SIGTERM')
            if self.daemon.returncode != 0:
                raise Failure('recorderd exited %d' % self.daemon.returncode)

    def kill_daemon(self):
        """Cleanup: subclasses that start more processes kill them here too."""
        if self.daemon and self.daemon.poll() is None:
            os.killpg(self.daemon.pid, signal.SIGKILL)
            self.daemon.wait()

    @staticmethod
    def kill_programs(procs):
        """Cleanup of programs a case started: each killed if it still runs,
        and its attach marker (left by a dormant collector) removed."""
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
            try:
                os.unlink('/tmp/luatrace-%d/attach/%d' % (os.getuid(), p.pid))
            except OSError:
                pass

    def lua(self, prog, env, timeout=60, traced=False):
        cmd = [self.args.lua] + (['-lluatrace'] if traced else []) + [prog]
        return run(cmd, self.tmp, env, timeout)

    def session(self, name):
        """The session of ring name: out/NAME, or out/NAME.PID[.N] where
        another process held that ring name as this one began (the suite
        runs tests at once: tests/lua/names.lua's ring is named names)."""
        path = os.path.join(self.out, name)
        have = os.listdir(self.out) if os.path.isdir(self.out) else []
        if os.path.isdir(path):
            return path
        other = [d for d in have if re.fullmatch(re.escape(name) + r'(\.\d+)+', d)]
        if len(other) != 1:
            raise Failure('no session %s in %s: %s' % (name, self.out, have))
        return os.path.join(self.out, other[0])

    def folded(self, session, weight='lines'):
        r = run([self.args.recorderd, 'report', session, '--format', 'folded',
                 '--weight', weight], self.tmp, base_env())
        if r.status != 0:
            raise Failure('report failed: %s' % r.err.decode())
        rows = {}
        for line in r.out.decode().splitlines():
            stack, _, n = line.rpartition(' ')
            rows[stack] = int(n)
        return rows


def run_case(case, name, make, prefix):
    """Runs case(c) on c = make(tmpdir); returns the exit status. Whatever
    happens, its daemon is killed (SIGKILL ends a stopped one too), the
    rings it made are removed and so is its directory."""
    before = shm_segments()
    tmp = tempfile.mkdtemp(prefix=prefix)
    c = make(tmp)
    try:
        case(c)
        c.stop_daemon()
        left = c.mine(shm_segments() - before)
        expect(not left, 'shm segments left behind: %s' % sorted(left))
    except Failure as e:
        print('FAIL: %s: %s' % (name, e))
        return 1
    finally:
        c.kill_daemon()
        for seg in c.mine(shm_segments() - before):
            try:
                os.unlink(os.path.join(SHM_DIR, seg))
            except OSError:
                pass
        shutil.rmtree(tmp, ignore_errors=True)
    print('ok: %s' % name)
    return 0

# }======================================================================


# {======================================================================
# The mains

# Lua for test programs: stack(level, co, key), the truth a program reads
# with debug.getinfo: its stack from `level` (of coroutine co, if given) to
# the root, each frame "SRC:N" (N its field key: "linedefined" or
# "currentline") or "[C]", tail pseudo-frames left out, top first.
LUA_STACK = r'''
local function stack(level, co, key)
  local t = {}
  while true do
    local i
    if co then i = debug.getinfo(co, level, "Sl") else i = debug.getinfo(level, "Sl") end
    if not i then break end
    if i.what ~= "tail" then
      t[#t + 1] = i.what == "C" and "[C]" or (i.source:gsub("^@", "") .. ":" .. i[key])
    end
    level = level + 1
  end
  return table.concat(t, " ")
end
'''

# The stack as folded stacks write it, root first: SRC:LINEDEFINED per
# frame (short_src), [C] for C; level as debug.getinfo counts it from
# folded itself.
LUA_FOLDED = r'''
local function folded(level)
  local t = {}
  local i = debug.getinfo(level, "S")
  while i do
    t[#t + 1] = i.what == "C" and "[C]" or i.short_src .. ":" .. i.linedefined
    level = level + 1
    i = debug.getinfo(level, "S")
  end
  local r = {}
  for k = #t, 1, -1 do r[#r + 1] = t[k] end
  return table.concat(r, ";")
end
'''


def cases(namespace):
    """{NAME: case_NAME} of a script's globals(): its cases, each named once."""
    return {k[len('case_'):]: v for k, v in namespace.items()
            if k.startswith('case_') and callable(v)}


def on_sigterm():
    """meson stops a test with SIGTERM on its timeout: unwind, so that the
    finally clauses kill children and remove the temporary directory."""
    signal.signal(signal.SIGTERM, lambda *_: sys.exit('killed by SIGTERM'))


def absolute(args, *names):
    for k in names:
        if getattr(args, k, None):
            setattr(args, k, os.path.abspath(getattr(args, k)))


def case_args(argv, table, add_args, cpath):
    """The case's name, --recorderd, --lua, --cpath (the collector's folder)
    when asked, and what add_args(ap) adds."""
    ap = argparse.ArgumentParser()
    ap.add_argument('case', choices=sorted(table))
    ap.add_argument('--recorderd', required=True)
    if cpath:
        ap.add_argument('--cpath', required=True)
    ap.add_argument('--lua', default='lua5.1')
    if add_args:
        add_args(ap)
    return ap.parse_args(argv)


def case_main(argv, table, prefix, add_args=None, make=Case, paths=()):
    """A case script's main: `--list` prints the case names; else runs the
    case named by the first argument with run_case, c = make(args, tmp).
    Options: --recorderd, --cpath, --lua, and those add_args(ap) adds; the
    paths among them made absolute (recorderd and cpath always)."""
    if list_cases(argv, table):
        return 0
    args = case_args(argv, table, add_args, cpath=True)
    absolute(args, 'recorderd', 'cpath', *paths)
    on_sigterm()
    return run_case(table[args.case], args.case, lambda tmp: make(args, tmp), prefix)


def list_cases(argv, names):
    """True after printing names, one a line, when argv is `--list`."""
    if argv[:1] != ['--list']:
        return False
    print('\n'.join(sorted(names)))
    return True


def have_recorderd(path):
    """False, after saying SKIP, when there is no recorderd at path."""
    if os.path.isfile(path) and os.access(path, os.X_OK):
        return True
    print('SKIP: no recorderd at %s' % path)
    return False


def missing_needs(lua, prog):
    """What a corpus program's `-- needs: MOD (PACKAGE), ...` line (in its
    first lines) names that lua cannot require, as 'MOD (PACKAGE)'; [] when
    it has no such line. For programs that drive a tool rather than a
    library: its test skips, saying so, where the tool is not installed."""
    with open(prog, 'rb') as f:
        m = re.search(rb'^-- needs: (.*)$', f.read(4096), re.M)
    missing = []
    for item in m.group(1).decode().split(',') if m else []:
        mod = item.split()[0]
        r = subprocess.run([lua, '-e', 'require(os.getenv("LUATRACE_NEED"))'],
                           env=dict(base_env(), LUATRACE_NEED=mod),
                           stdin=subprocess.DEVNULL, capture_output=True)
        if r.returncode != 0:
            missing.append(item.strip())
    return missing


def calls_of(session):
    """{function: calls} of profile.txt's self-time table."""
    with open(os.path.join(session, 'profile.txt')) as f:
        text = f.read().split('By total time')[0]
    got = {}
    for ln in text.splitlines():
        f = ln.split(None, 6)
        if len(f) == 7 and f[0].isdigit():
            got[f[6]] = int(f[0])
    return got


def need_lua54():
    """lua5.4's path; else SKIP said and the case ends with SKIP."""
    lua = shutil.which('lua5.4')
    if not lua:
        print('SKIP: no lua5.4')
        raise SystemExit(SKIP)
    return lua


def need_luajit():
    """luajit's path; else SKIP said and the case ends with SKIP."""
    lj = shutil.which('luajit')
    if not lj:
        print('SKIP: no luajit')
        raise SystemExit(SKIP)
    return lj


def skip_missing(lua, prog):
    """True, after saying SKIP, when prog needs what lua cannot require."""
    missing = missing_needs(lua, prog)
    if missing:
        print('SKIP: %s needs %s, not installed (scripts/setup installs it)'
              % (os.path.basename(prog), ', '.join(missing)))
    return bool(missing)


def in_tmpdir(prefix, body, errors=()):
    """body(tmp) in a fresh directory, always removed; 0 when it returns
    (or what it returns), 1 after `FAIL: ...` on a Failure or one of errors."""
    on_sigterm()
    tmp = tempfile.mkdtemp(prefix=prefix)
    try:
        return body(tmp) or 0
    except (Failure,) + tuple(errors) as e:
        print('FAIL: %s: %s' % (type(e).__name__, e))
        return 1
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def tmp_case_main(argv, table, prefix, add_args=None, errors=()):
    """A case script without a daemon of its own: `--list` prints the case
    names; else case(args, tmp) in in_tmpdir, for the case named by the
    first argument, with --recorderd, --lua and what add_args(ap) adds;
    SKIP without recorderd."""
    if list_cases(argv, table):
        return 0
    args = case_args(argv, table, add_args, cpath=False)
    if not have_recorderd(args.recorderd):
        return SKIP
    args.recorderd = os.path.abspath(args.recorderd)
    return in_tmpdir(prefix, lambda tmp: table[args.case](args, tmp), errors)


def program_main(argv, doc, prefix, body, errors=(), add_args=None, programs='+'):
    """A program script's main: --recorderd, --lua and the programs
    (nargs programs), plus add_args(ap); SKIP without recorderd; then
    body(args, tmp) in in_tmpdir."""
    ap = argparse.ArgumentParser(description=doc.split('\n')[0])
    ap.add_argument('--recorderd', required=True)
    ap.add_argument('--lua', default='lua5.1')
    ap.add_argument('programs', nargs=programs)
    if add_args:
        add_args(ap)
    args = ap.parse_intermixed_args(argv)
    if not have_recorderd(args.recorderd):
        return SKIP
    args.recorderd = os.path.abspath(args.recorderd)
    return in_tmpdir(prefix, lambda tmp: body(args, tmp), errors)

# }======================================================================
