#!/usr/bin/env python3
"""recorderd heap PID: a running lua5.1 process's heap read from outside.

  heap.py CASE --recorderd PATH --lua lua5.1 --forged-host PATH

Real recorderd, real lua5.1 processes (never loaded luatrace), each
started in a session of its own and killed whatever happens. Cases:
  rest      a program with its collector stopped after a full collection:
            what was reached plus the state's own bytes equal its own
            collectgarbage("count") within 1% (--stop); _G.cache.sessions
            keeps the most, with the program's count of entries; _G.keep
            is the biggest table, its array part 2^18 slots (200000 made);
            a big table only an upvalue holds has the upvalue's name in
            its path, one only a function's local holds the local's and
            the function's; the process runs on afterwards
  diff      a program adding sessions all the time: --diff 1 says
            _G.cache.sessions grew, first, and by how many objects at least
  chain     a linked list growing beside an array of tables: both show,
            the list once by what holds it (_G.list), never a .next.next
            row, in what keeps the most and in what grew (--diff 1)
  weak      weak tables, the collector stopped: a cache of weak values
            (8000 of them held by it alone, 2000 also by _G.strongs), weak
            keys held by nothing else, weak keys an anchor holds (their
            values reached through them), a chain of weak keys from a
            global, and values that hold their own key (directly, or two
            entries each other's: Lua 5.1 keeps them): what was reached plus the state's own bytes equal what
            the same program counts after two full collections (within
            1%), and no row says the cache keeps its 8000 (they were
            walked as strong: 1.2 MB of garbage shown as kept)
  keys      tables under odd keys: each path says its key as Lua would
            write it (escapes, a NUL, "", a keyword, true, a function, a
            long key cut with ...), no two alike
  forged    forged_host table (a table that says it has 2^27 array slots
            starting at its hash part): the report ends with what could
            not be read said, nothing of 2 GB counted, the process alive
  refusals  a process with no Lua (sleep), a bad --top, no pid: a clear
            error, exit 1 or 2
  exiting   a process that exits while heap looks for its state or reads
            it (16 rounds, its exit 0 to 14 ms after heap starts): a report,
            or "process N exited" (it said "has no Lua 5.1 state that
            recorderd can find", or "its Lua state cannot be read", or gave
            a third of the heap as lua_close freed it, exit 0)
"""
import os
import re
import signal
import subprocess
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import base_env, Case, cases, expect, Failure, run  # noqa: E402

REST = '''
cache = {sessions = {}}
for i = 1, 3000 do cache.sessions[i] = {id = i, user = "user" .. i} end
local hidden = {}
for i = 1, 40000 do hidden[i] = i * 0.5 end
function handler() return hidden end
keep = {}
for i = 1, 200000 do keep[i] = i end
local function wait()
  local pending = {}
  for i = 1, 1000 do pending[i] = {i} end
  collectgarbage("collect") collectgarbage("stop")
  io.stdout:write(string.format("%d %d\\n", collectgarbage("count") * 1024, #cache.sessions))
  io.stdout:flush()
  io.read()
  return #pending
end
wait()
print("still here")
'''

GROW = '''
cache = {sessions = {}}
local n = 0
io.stdout:write("ready\\n") io.stdout:flush()
while true do
  for _ = 1, 50 do n = n + 1 cache.sessions[n] = {id = n, user = "user" .. n} end
  local t = os.clock() while os.clock() - t < 0.002 do end
end
'''


CHAIN = '''
list = {} local tail = list
local growing = {} keep2 = growing
local function grow() for i = 1, 300 do tail.next = {v = i} tail = tail.next
                                        growing[#growing + 1] = {i} end end
for _ = 1, 20 do grow() end
io.stdout:write("ready\\n") io.stdout:flush()
while true do grow() local t = os.clock() while os.clock() - t < 0.05 do end end
'''


class HeapCase(Case):
    def __init__(self, args, tmp):
        super().__init__(args, tmp)
        self.procs = []

    def start(self, cmd):
        p = subprocess.Popen(cmd, cwd=self.tmp, env=base_env(), stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             start_new_session=True)
        self.procs.append(p)
        return p

    def kill_daemon(self):
        for p in self.procs:
            if p.poll() is None:
                try:
                    os.killpg(p.pid, signal.SIGKILL)
                except OSError:
                    p.kill()
                p.wait()
        super().kill_daemon()


def heap(c, pid, *extra):
    r = run([c.args.recorderd, 'heap', str(pid)] + list(extra), c.tmp, base_env(), timeout=60)
    print(r.out.decode(errors='replace'))
    return r


def heap_of(c, name, text, *extra):
    """Starts lua5.1 on name (its text), once it says ready, recorderd heap
    of it with extra: (the process, the report), the report's status 0."""
    c.write(name, text)
    p = c.start([c.args.lua, name])
    expect(p.stdout.readline() == b'ready\n', '%s did not start' % name)
    r = heap(c, p.pid, *extra)
    expect(r.status == 0, 'status %d, %r' % (r.status, r.err))
    return p, r.out.decode()


def kib(text):
    """Bytes of a size as heap prints it (B, kB, MB)."""
    n, unit = text.split()
    return float(n) * {'B': 1, 'kB': 1024, 'MB': 1 << 20}[unit]


def case_rest(c):
    c.write('rest.lua', REST)
    p = c.start([c.args.lua, 'rest.lua'])
    own, nsessions = (int(x) for x in p.stdout.readline().split())
    r = heap(c, p.pid, '--stop')
    out = r.out.decode()
    expect(r.status == 0 and r.err == b'', 'status %d, %r' % (r.status, r.err))
    m = re.search(r'reached from its roots: ([\d.]+ \w?B) in \d+ objects; the state\'s own: '
                  r'([\d.]+ \w?B)', out)
    expect(m, 'no figures:\n' + out)
    seen = kib(m.group(1)) + kib(m.group(2))
    print('the program counts %d bytes; reached and the state\'s own: %.0f' % (own, seen))
    expect(abs(seen - own) <= own * 0.01, 'heap says %.0f bytes, the program %d' % (seen, own))
    expect(re.search(r'\n +[\d.]+ \w?B +[\d.]+% +\d+  _G\.cache\.sessions \(' + str(nsessions)
                     + r' entries, mostly table\)\n', out), 'no _G.cache.sessions row:\n' + out)
    big = out[out.index('Biggest tables'):].splitlines()[2].split()
    expect(big[-1] == '_G.keep' and big[2] == str(1 << 18) and big[3] == '0',
           'the biggest table: %r' % big)
    expect(re.search(r'_G\.handler\(upvalue hidden\)\n', out),
           'the table only an upvalue holds is not named after it:\n' + out)
    wait_line = REST.split('\n').index('local function wait()') + 1
    expect('main thread(local pending of function (rest.lua:%d)) (1000 entries' % wait_line
           in out, 'the table only a local holds is not named after it:\n' + out)
    p.stdin.write(b'\n')
    p.stdin.flush()
    expect(p.stdout.readline() == b'still here\n', 'the program did not go on')


def case_diff(c):
    p, out = heap_of(c, 'grow.lua', GROW, '--diff', '1')
    rows = out[out.index('What grew'):].splitlines()
    first = rows[2].split()
    expect(first[-1] == '_G.cache.sessions' and int(first[-2]) > 100,
           'what grew first: %r' % rows[2])
    expect(p.poll() is None, 'the program ended')


def case_chain(c):
    p, out = heap_of(c, 'chain.lua', CHAIN, '--diff', '1')
    keeps = out[out.index('What keeps'):out.index('Biggest tables')]
    grew = out[out.index('What grew'):]
    for part, text in (('what keeps', keeps), ('what grew', grew)):
        expect(any(re.search(r'\s_G\.list( \(|$)', line) for line in text.splitlines()),
               '%s has no _G.list row:\n%s' % (part, text))
        expect(any(re.search(r'\s_G\.keep2( \(|$)', line) for line in text.splitlines()),
               '%s has no _G.keep2 row:\n%s' % (part, text))
        expect('.next' not in text, '%s shows links of the chain:\n%s' % (part, text))


# arg[1] "collect": two full collections before it says ready (the truth
# of what the weak tables keep); else their garbage is still there
WEAK = '''
collectgarbage("stop")
weakcache = setmetatable({}, {__mode = "v"})
strongs = {}
for i = 1, 10000 do
  local o = {i, i, i, i, i, i}
  weakcache[i] = o
  if i % 5 == 0 then strongs[#strongs + 1] = o end
end
ek = setmetatable({}, {__mode = "k"})
anchors = {}
for i = 1, 1000 do local k = {i} anchors[i] = k ek[k] = {i, i, i, i, i, i, i, i} end
for i = 1, 3000 do ek[{i}] = {i, i, i, i, i, i, i, i} end
for i = 1, 500 do local k = {i} ek[k] = {owner = k, i, i, i, i} end -- 5.1 keeps them
local d, e = {}, {} ek[d] = e ek[e] = d -- and these
local a, b, c = {}, {}, {}
chain = a
ek[a] = b ek[b] = c ek[c] = {"end"}
if arg[1] == "collect" then
  collectgarbage("collect") collectgarbage("collect") collectgarbage("stop")
end
io.stdout:write(string.format("%d\\n", collectgarbage("count") * 1024))
io.stdout:flush()
io.read()
'''


def case_weak(c):
    c.write('weak.lua', WEAK)
    counts, seen = [], []
    for how in ('collect', 'keep'):
        p = c.start([c.args.lua, 'weak.lua', how])
        counts.append(int(p.stdout.readline()))
        r = heap(c, p.pid, '--stop')
        out = r.out.decode()
        expect(r.status == 0, 'status %d, %r' % (r.status, r.err))
        m = re.search(r'reached from its roots: ([\d.]+ \w?B) in \d+ objects; the state\'s own: '
                      r'([\d.]+ \w?B)', out)
        expect(m, 'no figures:\n' + out)
        seen.append(kib(m.group(1)) + kib(m.group(2)))
        expect(not re.search(r'_G\.weakcache \(\d+ entries', out),
               'the weak cache keeps its entries:\n' + out)
    truth, garbage = counts[0], counts[1] - counts[0]
    print('after two collections the program counts %d bytes (%d more before them); reached '
          'and the state\'s own: %.0f after, %.0f before' % (truth, garbage, seen[0], seen[1]))
    expect(garbage > truth, 'the weak tables hold too little garbage: %d, %d' % (garbage, truth))
    for s in seen:
        expect(abs(s - truth) <= truth * 0.01, 'heap says %.0f bytes, the program %d after '
               'collecting' % (s, truth))


KEYS = r'''
t = {}
local function big() local x = {} for i = 1, 2000 do x[i] = {i} end return x end
t["a\0b\n\"c"] = big() t["\0"] = big() t[""] = big() t[true] = big() t[print] = big()
t["end"] = big() t[string.rep("L", 500)] = big() t["x\ny"] = big() t.ok_name = big()
io.stdout:write("ready\n") io.stdout:flush() io.read()
'''


def case_keys(c):
    p, out = heap_of(c, 'keys.lua', KEYS, '--top', '12')
    for path in (r'_G.t["a\0b\n\"c"]', r'_G.t["\0"]', '_G.t[""]', '_G.t[true]',
                 '_G.t[a function]', '_G.t["end"]', '_G.t["' + 'L' * 40 + '"...]',
                 r'_G.t["x\ny"]', '_G.t.ok_name'):
        expect(re.search(r'%\s+2001  ' + re.escape(path) + r' \(2000 entries', out),
               'no row for %s:\n%s' % (path, out))


def case_forged(c):
    p = c.start([c.args.forged_host, 'table'])
    expect(p.stdout.readline() == b'READY\n', 'forged_host did not get ready')
    r = heap(c, p.pid)
    out = r.out.decode()
    expect(r.status == 0, 'status %d, %r' % (r.status, r.err))
    expect(re.search(r'\n\d+ values changed under the read or could not be read', out),
           'the bad table is not said:\n' + out)
    expect(' GB' not in out and not re.search(r'\b\d{4,}\.\d MB', out),
           'the forged size was counted:\n' + out)
    p.stdin.write(b'ping\n')
    p.stdin.flush()
    expect(p.stdout.readline() == b'ALIVE\n', 'forged_host does not answer')


def case_refusals(c):
    p = c.start(['sleep', '30'])
    r = heap(c, p.pid)
    expect(r.status == 1 and b'has no Lua 5.1 state' in r.err, '%d %r' % (r.status, r.err))
    r = run([c.args.recorderd, 'heap', str(p.pid), '--top', '0'], c.tmp, base_env())
    expect(r.status == 2 and b'--top takes rows' in r.err, '%d %r' % (r.status, r.err))
    r = run([c.args.recorderd, 'heap'], c.tmp, base_env())
    expect(r.status == 2 and b'give the process id' in r.err, '%d %r' % (r.status, r.err))


def case_exiting(c):
    harness.exit_race(c, c.start, ['heap', 'PID'])


def main(argv):
    def add_args(ap):
        ap.add_argument('--forged-host', help='tests/hosts/forged_host')
    return harness.case_main(argv, cases(globals()), 'luatrace-heap-', add_args,
                             make=HeapCase, paths=('forged_host',))


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
