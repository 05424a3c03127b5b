#!/usr/bin/env python3
"""recorderd on crafted, hostile input: traces written by hand, not by the
collector.

  untrusted.py CASE --recorderd PATH --cpath DIR [--lua lua5.1]

Cases:
  pprofdate   report --format pprof of a trace dated past 2262 (its mtime):
              no start time (time_nanos) rather than an overflowed one
  pprofclock  the same of a trace whose clock makes its traced time longer
              than the epoch: no overflow (UBSan in scripts/sanitize)
  labels      a 2.4 MB trace of 140 000 functions that each have an 8 KB
              label, under a 512 MB address-space limit: the reports, not
              an out of memory (1.59 GB without a limit, before)
  membound    a trace that makes a call-tree node of every 3 bytes, the
              limit lowered to 16 bytes a byte (LUATRACE_MEM_PER_BYTE): a
              clear error naming the memory limit, as a file and through a
              ring (that session cut, the daemon alive)
  deepforged  a call chain 1.1 million frames deep, more than any Lua
              allows, under a 1 GB address-space limit: a clear error
  widetree    a real program whose every call makes a new stack (mutual
              recursion, 2^19 distinct stacks): traced whole, not taken for
              a forged trace, its calls as the program counts them
  deepchain   a chain of 20 000 distinct functions (a 0.5 MB trace): the
              folded stacks stop at 64 MiB + 2 KiB a stack, with a last line [...] holding
              the weight left out; a chain of 4 KB labels: no line past
              64 KiB, its middle frames one [...]
  manystacks  a program of 2^17 distinct deep stacks (over 64 MiB of
              folded lines, as luacheck's): written whole, no cut said
  escapes     a program whose function, script and module names hold
              terminal escapes: run's summary, report (a pipe and a
              terminal), status text, listen's messages and a backend's
              error carry no control byte; status --json escapes them
  memforged   MEM records, full (a version 13 trace) and short (14),
              forged: sizes past 2^32, no address, deltas that wrap or
              land on 0, frees and reallocations of blocks never made,
              cut short: counted as bad or unknown, never a crash; the
              same allocations full and short give the same memory table
  fifo        a session directory whose trace.ltr, then session.json, is a
              FIFO (planted in a trace someone else made): report says that
              trace.ltr is no file, renders with no session.json, and never
              waits on either; a trace named on the command line may still
              be a pipe
"""

import gzip
import json
import os
import re
import pty
import resource
import socket
import struct
import subprocess
import time
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import (Failure, base_env, cases, drop_ring, expect, forge_ring,  # noqa: E402
                     run)
from pprof import varint  # noqa: E402

# lt_event.h: the kinds in LT_EVENT_LIST order
STR, FUNC, CLOCK, START, FRAME, CALL, RET, LINE, RESUME, YIELD, GAP, STOP, THREAD = range(13)
MEM = 22
MNEW, MFREE, MRE = 0xe3, 0xe4, 0xe5  # MEM's short forms


def pack_uint(v):
    if v < 0x80:
        return bytes([v])
    for tag, w in ((0xcc, 1), (0xcd, 2), (0xce, 4), (0xcf, 8)):
        if v < 1 << (8 * w):
            return bytes([tag]) + v.to_bytes(w, 'big')
    raise ValueError(v)


def pack_str(s):
    n = len(s)
    head = bytes([0xa0 | n]) if n < 32 else b'\xd9' + bytes([n]) if n < 256 else \
        b'\xda' + n.to_bytes(2, 'big')
    return head + s


def rec(kind, *args):
    """One record of lt_event.h: [kind, args...]."""
    return bytes([0x90 | (1 + len(args)), kind]) + b''.join(
        pack_str(a) if isinstance(a, bytes) else pack_uint(a) for a in args)


HEADER = b'LUATRACE' + struct.pack('<II', 3, 0)


def begin(ticks=0, ns=0):
    """A trace's start: a clock (not a TSC: 1 ns a tick), thread 1, its
    main chunk (fid 1) as its one frame."""
    return (HEADER + rec(CLOCK, ticks, ns, 0) + rec(THREAD, 1, 0x1000) + rec(START, 1, 0) +
            rec(STR, 1, b'main chunk') + rec(STR, 2, b'main.lua') +
            rec(FUNC, 1, 2, 2, 1, 0, 0, 0) + rec(FRAME, 1, 1, 1))


def write(c, name, data):
    path = os.path.join(c.tmp, name)
    with open(path, 'wb') as f:
        f.write(data)
    return path


def pb_fields(path):
    """The top-level varint fields of a profile.pb.gz: {field: value}."""
    with gzip.open(path) as f:
        b = f.read()
    at, out = 0, {}
    while at < len(b):
        key, at = varint(b, at)
        kind = key & 7
        if kind == 0:
            out[key >> 3], at = varint(b, at)
        elif kind == 2:
            n, at = varint(b, at)
            at += n
        else:
            at += 8 if kind == 1 else 4
    return out


def pprof_of(c, trace):
    pb = os.path.join(c.tmp, 'out.pb.gz')
    r = run([c.args.recorderd, 'report', trace, '--format', 'pprof', '-o', pb], c.tmp,
            base_env())
    expect(r.status == 0, 'report --format pprof: %d %r' % (r.status, r.err))
    return pb_fields(pb)


def plain_trace(c):
    """1010 ns traced."""
    return write(c, 'plain.ltr', begin() + rec(LINE, 1, 1000, 2) + rec(STOP, 10, 1))


def clock_trace(c):
    """A TSC clock of 2^40 ns over 1 tick, then 2^30 ticks: 2^70 ns traced."""
    return write(c, 'clock.ltr', begin(1, 1).replace(rec(CLOCK, 1, 1, 0), rec(CLOCK, 1, 1, 1)) +
                 rec(CLOCK, 2, 1 + (1 << 40), 1) + rec(LINE, 1, 1 << 30, 2) + rec(STOP, 10, 1))


def expect_no_start(c, trace, sec, what):
    """The file dated sec (seconds since 1970) gives a profile with no
    start time: none can be told (an overflowed one was told before)."""
    os.utime(trace, (sec, sec))
    f = pprof_of(c, trace)
    expect(9 not in f, '%s: a start time (time_nanos) of %s' % (what, f.get(9)))
    return f


def case_pprofdate(c):
    late = 2 * 10 ** 10  # 2603; ext4 keeps 2446
    trace = plain_trace(c)
    os.utime(trace, (late, late))
    if os.stat(trace).st_mtime <= (1 << 63) // 10 ** 9:
        print('skipped: the file system keeps no date past 2262')
        raise SystemExit(77)
    f = expect_no_start(c, trace, late, 'a trace dated past 2262')
    expect(f.get(10) == 1010, 'duration_nanos %s' % f.get(10))
    expect_no_start(c, clock_trace(c), late, 'a trace dated past 2262 with 2^70 ns traced')


def case_pprofclock(c):
    trace = clock_trace(c)
    expect_no_start(c, trace, 1.7e9, 'a trace of 2023 with 2^70 ns traced')
    expect_no_start(c, trace, -10 ** 9, 'a trace of 1938 with 2^70 ns traced')


def limited(mb):
    """preexec_fn: an address-space limit of mb MB."""
    def f():
        resource.setrlimit(resource.RLIMIT_AS, (mb << 20, mb << 20))
    return f


# AddressSanitizer (scripts/sanitize preloads it) reserves terabytes of
# address space: under it, a memory limit is the peak RSS, checked after.
ASAN = 'libasan' in os.environ.get('LD_PRELOAD', '')


def report(c, trace, *opts, mb=None):
    """report under an address-space limit of mb MB if given."""
    r = run([c.args.recorderd, 'report', trace] + list(opts), c.tmp, base_env(),
            preexec_fn=limited(mb) if mb and not ASAN else None)
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss >> 10
    expect(not mb or not ASAN or peak < mb, 'report: a peak RSS of %d MB' % peak)
    return r


def labels_trace(n):
    """n functions, each named by one 4000-byte string in one 4000-byte
    file: 17 bytes of FUNC record for an 8 KB label each."""
    out = [begin(), rec(STR, 3, b'n' * 4000), rec(STR, 4, b's' * 4000)]
    out += [rec(FUNC, i, 0, 4, 3, i, i, 0) for i in range(2, n)]
    out += [rec(CALL, 2, 1, 2), rec(RET, 2, 1)]
    return b''.join(out) + rec(STOP, 10, 1)


def case_labels(c):
    trace = write(c, 'labels.ltr', labels_trace(140000))
    r = report(c, trace, '--format', 'profile', mb=512)
    expect(r.status == 0 and b'events: 140010 ' in r.out, 'report under 512 MB: %d %r %r'
           % (r.status, r.out[:300], r.err[-300:]))


def nodes_records(n):
    """After begin(): a call chain alternating two functions, a new
    call-tree node and frame for every 3-byte short CALL."""
    return (rec(STR, 3, b'g') + rec(FUNC, 2, 0, 2, 3, 5, 5, 0) + rec(CALL, 2, 0, 2) +
            b'\xe1\x00\x01\xe1\x00\x02' * (n // 2))


LIMIT_NAMED = b'over the limit of 64 MiB + 16 bytes per byte of trace'


def case_membound(c):
    # a real trace may need 45 bytes a byte and more (widetree): the
    # default limit is above what this trace needs, so it is lowered here
    # to see that a trace past the limit is stopped and the limit named
    os.environ['LUATRACE_MEM_PER_BYTE'] = '16'
    trace = write(c, 'nodes.ltr', begin() + nodes_records(1000000) + rec(STOP, 10, 1))
    r = report(c, trace, '--format', 'none', mb=1024)
    expect(r.status == 1 and LIMIT_NAMED in r.err, 'report: %d %r' % (r.status, r.err))
    membound_ring(c)


def case_deepforged(c):
    trace = write(c, 'deep.ltr', begin() + nodes_records(1100000) + rec(STOP, 10, 1))
    r = report(c, trace, '--format', 'none', mb=1024)
    said = b'a stack of more than 1048576 frames, deeper than any Lua allows'
    expect(r.status == 1 and said in r.err, 'report: %d %r' % (r.status, r.err))


WIDETREE = '''local calls = {a = 0, b = 0}
local a, b
function a(d) calls.a = calls.a + 1 if d == 0 then return 1 end return a(d - 1) + b(d - 1) end
function b(d) calls.b = calls.b + 1 if d == 0 then return 1 end return b(d - 1) + a(d - 1) end
print(a(19), calls.a, calls.b)
'''


def case_widetree(c):
    """The bug: 2.5 MiB of records for 2^20 call-tree nodes (112 MiB)
    passed the limit of 16 bytes a byte and the session was cut as a
    forged trace, half its calls missing."""
    prog = c.write('wide.lua', WIDETREE)
    r = run([c.args.recorderd, 'run', '-q', '--out', c.out, '--format', 'profile', '--',
             c.args.lua, prog], c.tmp, c.env())
    expect(len(r.out.split()) == 3, 'run: %d %r %r' % (r.status, r.out, r.err[-400:]))
    leaves, na, nb = (int(x) for x in r.out.split())
    meta = json.load(open(os.path.join(c.session('wide'), 'session.json')))
    expect(r.status == 0 and leaves == 1 << 19 and b'forged' not in r.err and
           meta['status'] == 'complete', 'run: %d %r, session %s' % (r.status, r.err, meta))
    calls = {k.split(' ', 1)[0]: n for k, n in harness.calls_of(c.session('wide')).items()
             if 'wide.lua:' in k}
    expect(calls.get('a') == na and calls.get('b') == nb,
           'calls: traced %s, the program counted a %d, b %d' % (calls, na, nb))


def ring_feed(c, data, mm, ring, size, proc):
    """Writes data into the forged ring as its consumer frees room."""
    head = 0
    while head < len(data):
        tail = struct.unpack('<Q', mm[128:136])[0]
        room = size - (head - tail)
        if room < 4096:
            if proc.poll() is not None:
                raise Failure('the daemon died (status %s)' % proc.poll())
            if struct.unpack('<I', mm[136:140])[0] == 2:  # cons_state GONE: cut
                return False
            time.sleep(0.001)
            continue
        k = min(room, len(data) - head)
        at = head % size
        first = min(k, size - at)
        ring[at:at + first] = data[head:head + first]
        ring[0:k - first] = data[head + first:head + k]
        head += k
        mm[64:72] = struct.pack('<Q', head)
    return True


def membound_ring(c):
    """The same records through a ring forged by hand: the session is cut
    with the limit named; the daemon serves on."""
    name = 'nodes-%d' % os.getpid()
    size = 1 << 20
    fd, path, mm, ring = forge_ring(c, name, size)
    try:
        c.start_daemon()
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(10)
        s.connect(c.sock)
        kv = [('type', b'hello'), ('v', 1), ('pid', os.getpid()), ('shm', name.encode()),
              ('ring', size), ('cmd', b'forged')]
        s.sendall(bytes([0x80 | len(kv)]) + b''.join(
            pack_str(k.encode()) + (pack_str(v) if isinstance(v, bytes) else pack_uint(v))
            for k, v in kv))
        expect(b'session' in s.recv(4096), 'the forged producer was refused')
        data = begin()[len(HEADER):] + nodes_records(2000000)
        ring_feed(c, data, mm, ring, size, c.daemon)
        mm[88:92] = struct.pack('<I', 1)  # prod_state DONE
        s.close()
        session = os.path.join(c.out, name)
        for _ in range(3000):
            if os.path.exists(os.path.join(session, 'session.json')):
                break
            time.sleep(0.01)
        meta = json.load(open(os.path.join(c.session(name), 'session.json')))
        expect(meta['status'] == 'truncated' and LIMIT_NAMED.decode() in meta['error'],
               'the forged session: %s' % meta)
        r = run([c.args.recorderd, 'status', '--socket', c.sock], c.tmp, base_env())
        expect(r.status == 0, 'the daemon does not answer: %r' % r.err)
        c.stop_daemon()
        ring.close()
        mm.close()
    finally:
        drop_ring(fd, path)


def chain_trace(n, label):
    """A chain of n distinct functions, each calling the next."""
    out = [begin(), rec(STR, 3, label)]
    for i in range(2, n + 2):
        out += [rec(FUNC, i, 0, 2, 3, i, i, 0), rec(CALL, i, 1, i)]
    return b''.join(out) + rec(STOP, 10, 1)


def folded_calls(c, trace):
    out = os.path.join(c.tmp, 'out.folded')
    r = report(c, trace, '--format', 'folded', '--weight', 'calls', '-o', out)
    expect(r.status == 0, 'report --format folded: %d %r' % (r.status, r.err))
    with open(out, 'rb') as f:
        lines = f.read().splitlines()
    return os.path.getsize(out), lines


CUT = re.compile(r'stacks.folded stopped at its (?:\d+) MiB bound: (\d+\.\d)% of its (\w+) is '
                 r'on its last line \'\[\.\.\.\]\', the stacks it had no room for; '
                 r'profile.pb.gz \(--format pprof\) and callgrind.out hold every stack')


def cut_share(lines):
    """The share of the weight on the last line [...] of folded lines."""
    weights = [int(l.rsplit(b' ', 1)[1]) for l in lines]
    return 100.0 * weights[-1] / sum(weights)


def case_deepchain(c):
    size, lines = folded_calls(c, write(c, 'chain.ltr', chain_trace(20000, b'f')))
    # 64 MiB + 2 KiB a distinct stack (20 000 and the root's): 103 MiB, of
    # the 436 MB the chain's stacks would take
    bound = (64 << 20) + (2 << 10) * 20002
    expect(size <= bound + 64, 'stacks.folded of a 20 000-function chain: %d bytes' % size)
    expect(lines[-1].startswith(b'[...] ') and sum(int(l.rsplit(b' ', 1)[1]) for l in lines)
           == 19999, 'the weight left out is not on a last [...] line: %r'
           % [l[:60] for l in lines[-2:]])
    # and says so, with the share left out and what holds every stack
    r = report(c, os.path.join(c.tmp, 'chain.ltr'), '--format', 'folded', '--weight', 'calls',
               '-o', os.path.join(c.tmp, 'again.folded'))
    m = CUT.search(r.err.decode())
    expect(m and m.group(2) == 'calls' and abs(float(m.group(1)) - cut_share(lines)) < 0.051 and
           ' its %d MiB bound' % (bound >> 20) in r.err.decode(),
           'report does not say what the cut left out: %r (%.1f%%)' % (r.err, cut_share(lines)))
    # a session's too: on stderr with --quiet, and in session.json; a
    # chain of 1500 functions with 600-byte names makes 1500 lines of up
    # to 64 KiB
    name = ('f%04d_' + 'x' * 600).__mod__
    prog = c.write('deep.lua', ''.join('function %s() %s() end\n' % (name(i), name(i + 1))
                                       for i in range(1500)) +
                   'function %s() end\n%s()\n' % (name(1500), name(0)))
    # exact time: every stack timed (a few ticks would not fill the bound)
    r = run([c.args.recorderd, 'run', '-q', '--time', 'exact', '--out', c.out, '--format',
             'folded', '--', c.args.lua, prog], c.tmp, c.env())
    session = c.session('deep')
    with open(os.path.join(session, 'stacks.folded'), 'rb') as f:
        lines = f.read().splitlines()
    meta = json.load(open(os.path.join(session, 'session.json')))
    m, mj = CUT.search(r.err.decode()), CUT.search(meta['cut'])
    expect(r.status == 0 and m and mj and m.group(0) == mj.group(0) and m.group(2) == 'time'
           and abs(float(m.group(1)) - cut_share(lines)) < 0.051,
           'run of a deep recursion: %d %r, session.json cut %r (%.1f%% on the last line)'
           % (r.status, r.err, meta['cut'], cut_share(lines)))
    # speedscope's samples are cut alike: past 64 MiB one sample of the cut
    # frame carries the weight left out (the chain wrote 102 MB there)
    out = os.path.join(c.tmp, 'out.speedscope.json')
    r = report(c, os.path.join(c.tmp, 'chain.ltr'), '--format', 'speedscope', '-o', out)
    expect(r.status == 0, 'report --format speedscope: %d %r' % (r.status, r.err))
    size = os.path.getsize(out)
    with open(out) as f:
        doc = json.load(f)
    prof, frames = doc['profiles'][0], doc['shared']['frames']
    expect(size <= (70 << 20) and len(prof['samples']) == len(prof['weights']) and
           sum(prof['weights']) == prof['endValue'] and
           [frames[i]['name'] for i in prof['samples'][-1]] == ['[...]'],
           'speedscope of a 20 000-function chain: %d bytes, last sample %r'
           % (size, prof['samples'][-1][:5]))
    size, lines = folded_calls(c, write(c, 'long.ltr', chain_trace(600, b'f' * 4000)))
    longest = max(len(l.rsplit(b' ', 1)[0]) for l in lines)
    expect(longest <= 64 << 10, 'a folded line of %d bytes' % longest)
    cut = [l for l in lines if b';[...];' in l]
    expect(len(lines) == 599 and len(cut) == 599 - 16, '%d lines, %d cut with a [...] frame'
           % (len(lines), len(cut)))


# Escapes that would set the window title and clear the screen.
EVIL = '\x1b]0;PWNED\x07\x1b[2J'
EVIL_LUA = '"\\27]0;PWNED\\7\\27[2J"'
EVIL_PROG = '''
local E = EVIL
_G[E] = function() return 1 end
local m = require("mod\\27[2J")
local t = {}
t[E .. "x"] = function() return m.f() end
for i = 1, 3 do _G[E]() t[E .. "x"]() end
if GATE then repeat until io.open(GATE) end
print("done")
'''.replace('EVIL', EVIL_LUA)
EVIL_MOD = 'local M = {}\nfunction M.f() return 2 end\nreturn M\n'
# A backend whose error quotes a function's label, as a real one may.
EVIL_BACKEND = '''
local seen
return { enter = function(frame) if frame.label:find("PWNED") then seen = frame.label end end,
         close = function() error("no " .. tostring(seen)) end }
'''


# Two functions calling each other both ways down to a depth: each path of
# choices a stack of its own, as a recursive-descent parser makes them
# (luacheck linting Penlight: 246 625 stacks 40 frames deep on average)
MANYSTACKS = '''
local A_a_function_with_a_name_as_long_as_a_method, B_a_function_with_a_name_as_long_as_a_method
function A_a_function_with_a_name_as_long_as_a_method(d)
  if d == 0 then return 1 end
  return A_a_function_with_a_name_as_long_as_a_method(d - 1) + B_a_function_with_a_name_as_long_as_a_method(d - 1)
end
function B_a_function_with_a_name_as_long_as_a_method(d)
  if d == 0 then return 1 end
  return B_a_function_with_a_name_as_long_as_a_method(d - 1) + A_a_function_with_a_name_as_long_as_a_method(d - 1)
end
print(A_a_function_with_a_name_as_long_as_a_method(16))
'''


def case_manystacks(c):
    """A real program's many distinct deep stacks (2^17, over 64 MiB of
    folded lines) are written whole: no [...] line, no cut said, their
    weights the session's traced time (before: cut at 64 MiB, as
    luacheck's were)."""
    prog = c.write('many.lua', MANYSTACKS)
    # exact time: every one of the stacks timed
    r = run([c.args.recorderd, 'run', '-q', '--time', 'exact', '--out', c.out, '--format',
             'folded', '--', c.args.lua, prog], c.tmp, c.env())
    session = c.session('many')
    path = os.path.join(session, 'stacks.folded')
    size = os.path.getsize(path)
    with open(path, 'rb') as f:
        lines = f.read().splitlines()
    meta = json.load(open(os.path.join(session, 'session.json')))
    total = sum(int(l.rsplit(b' ', 1)[1]) for l in lines)
    expect(r.status == 0 and b'stopped at its' not in r.err and not meta['cut'],
           'run: %d %r, session.json cut %r' % (r.status, r.err, meta['cut']))
    expect(size > (64 << 20) and len(lines) >= 1 << 17 and
           not any(l.startswith(b'[...]') or b';[...]' in l for l in lines),
           'stacks.folded: %d bytes, %d lines, last %r' % (size, len(lines), lines[-1][:80]))
    expect(abs(total - meta['traced_ns']) <= len(lines),
           'the folded weights %d, the traced time %d' % (total, meta['traced_ns']))


def adelta(base, a):
    """lt_put_adelta: a - base, zigzag, divided by 16 when aligned."""
    d = (a - base + (1 << 63)) % (1 << 64) - (1 << 63)
    if d % 16 == 0:
        s = d >> 4
        return pack_uint(((s << 1) ^ (s >> 63)) % (1 << 64) << 1)
    return pack_uint(((((d << 1) ^ (d >> 63)) % (1 << 64)) << 1 | 1) % (1 << 64))


def mem_trace(version, records):
    return (begin().replace(HEADER, b'LUATRACE' + struct.pack('<II', version, 0)) +
            b''.join(records) + rec(LINE, 1, 5, 2) + rec(STOP, 10, 1))


def mem_table(c, name, data):
    r = report(c, write(c, name, data), '--format', 'profile', '-o', os.path.join(c.tmp, 'p.txt'))
    expect(r.status == 0, '%s: report %d %r' % (name, r.status, r.err[-300:]))
    with open(os.path.join(c.tmp, 'p.txt'), 'rb') as f:
        text = f.read()
    m = re.search(rb'\nmemory: [^\n]*', text)
    expect(m, '%s: no memory line in %r' % (name, text[:400]))
    return m.group(0)


def case_memforged(c):
    a, b = 0x7f0012345670, 0x7f00123456a0
    full = [rec(MEM, 40, 0, a, 0), rec(MEM, 24, 0, b, 0), rec(MEM, 100, 24, b, b),
            rec(MEM, 0, 40, 0, a), rec(MEM, 0, 8, 0, 0x999990)]
    short = [bytes([MNEW, 40]) + adelta(0, a), bytes([MNEW, 24]) + adelta(a, b),
             bytes([MRE, 100, 24]) + adelta(b, b) + adelta(b, b),
             bytes([MFREE, 40]) + adelta(b, a), bytes([MFREE, 8]) + adelta(a, 0x999990)]
    old, new = mem_table(c, 'full13.ltr', mem_trace(13, full)), \
        mem_table(c, 'short14.ltr', mem_trace(14, short))
    expect(old == new and b'5 allocator calls' in old, 'full %r, short %r' % (old, new))
    forged = [bytes([MNEW, 8]) + adelta(0, 0),  # a new block at 0
              bytes([MNEW, 0xce, 0xff, 0xff, 0xff, 0xff]) + adelta(0, 0x10),
              bytes([MNEW, 0xcf]) + b'\xff' * 8 + b'\xcf' + b'\xff' * 8,  # past 2^32, wraps
              bytes([MFREE, 0]) + adelta(0, 0x20),  # a free of nothing
              bytes([MRE, 5, 7, 0xcf]) + b'\x80' * 8 + b'\x01',  # a block never made
              bytes([MRE, 0, 0]) + adelta(0, 0) + adelta(0, 0),
              rec(MEM, 0, 0, 0, 0), rec(MEM, 1 << 40, 0, 16, 0),
              bytes([MFREE, 0xcf]) + b'\x01' * 8 + adelta(0, 0x30)]
    for version in (13, 14):
        mem_table(c, 'forged%d.ltr' % version, mem_trace(version, forged))
    for cut in (1, 2, 3, 5):  # a short MEM cut short: the trace ends there
        data = mem_trace(14, short)[:-len(rec(LINE, 1, 5, 2) + rec(STOP, 10, 1))]
        r = report(c, write(c, 'cut.ltr', data[:-cut]), '--format', 'profile', '-o',
                   os.path.join(c.tmp, 'cut.txt'))
        expect(r.status in (0, 1) and r.status != -11, 'cut %d: %d %r' % (cut, r.status, r.err))
    for byte in range(0xe6, 0x100):  # past the short forms: a clear error, no crash
        r = report(c, write(c, 'bad.ltr', mem_trace(14, [bytes([byte, 1, 1])])), '--format',
                   'profile', '-o', os.path.join(c.tmp, 'bad.txt'))
        expect(r.status in (0, 1), 'byte 0x%x: %d %r' % (byte, r.status, r.err))


def case_fifo(c):
    session = os.path.join(c.tmp, 'planted')
    os.mkdir(session)
    trace = os.path.join(session, 'trace.ltr')
    os.mkfifo(trace)
    r = run([c.args.recorderd, 'report', session], c.tmp, base_env(), timeout=20)
    expect(r.status == 1 and b'trace.ltr: not a regular file' in r.err,
           'a FIFO as trace.ltr: %d %r' % (r.status, r.err))
    os.unlink(trace)
    with open(plain_trace(c), 'rb') as f:
        write(c, 'planted/trace.ltr', f.read())
    os.mkfifo(os.path.join(session, 'session.json'))
    for fmt in ('profile', 'html', 'lcov', 'pprof'):
        r = run([c.args.recorderd, 'report', session, '--format', fmt, '-o',
                 os.path.join(c.tmp, 'out.' + fmt)], c.tmp, base_env(), timeout=20)
        expect(r.status == 0, 'a FIFO as session.json, %s: %d %r' % (fmt, r.status, r.err))
    r = run(['sh', '-c', 'cat "$1" | "$0" report /dev/stdin --format none', c.args.recorderd,
             trace], c.tmp, base_env(), timeout=20)
    expect(r.status == 0 and r.out == b'9 events\n', 'a trace on a pipe: %d %r %r'
           % (r.status, r.out, r.err))


def no_control(what, data, keep=b'\n'):
    bad = sorted({c for c in data if (c < 0x20 or c == 0x7f) and c not in keep})
    expect(not bad, '%s carries control bytes %s: %r' % (what, bad, data[:2000]))


def on_pty(cmd, cwd):
    """What cmd writes to stdout when stdout is a terminal."""
    master, slave = pty.openpty()
    p = subprocess.Popen(cmd, cwd=cwd, env=base_env(), stdin=subprocess.DEVNULL, stdout=slave,
                         stderr=subprocess.PIPE, start_new_session=True)
    os.close(slave)
    out = b''
    try:
        while True:
            try:
                chunk = os.read(master, 65536)
            except OSError:  # EIO: the other side closed
                break
            if not chunk:
                break
            out += chunk
    finally:
        os.close(master)
        p.wait(timeout=60)
    expect(p.returncode == 0, '%s: %d %r' % (' '.join(cmd), p.returncode, p.stderr.read()))
    return out.replace(b'\r\n', b'\n')


def evil_files(c, gate=None):
    prog = c.write('evil' + EVIL + '.lua', EVIL_PROG.replace('GATE', repr(gate) if gate else 'nil'))
    c.write('mod\x1b[2J.lua', EVIL_MOD)
    return prog


def case_escapes(c):
    prog = evil_files(c)
    # every line counted, every function timed: the names in each report
    r = run([c.args.recorderd, 'run', '--time', 'exact', '--out', c.out, '--', c.args.lua, prog],
            c.tmp, c.env())
    expect(r.status == 0 and r.out == b'done\n', 'run: %d %r %r' % (r.status, r.out, r.err))
    no_control("run's summary", r.err)
    # the summary's labels: the names, escaped (its top 10 by self time)
    expect(b'PWNED' in r.err and b'(mod?[2J.lua:' in r.err, 'no summary: %r' % r.err)
    session = c.session('evil__0_PWNED___2J')
    for fmt in ('profile', 'none', 'coverage'):
        r = run([c.args.recorderd, 'report', session, '--format', fmt], c.tmp, base_env())
        expect(r.status == 0, 'report --format %s: %r' % (fmt, r.err))
        no_control('report --format %s' % fmt, r.out)
    for fmt in ('folded', 'annotate', 'callgrind'):  # byte-exact in a file, not on a terminal
        out = on_pty([c.args.recorderd, 'report', session, '--format', fmt], c.tmp)
        expect(b'PWNED' in out, 'report --format %s: no names: %r' % (fmt, out[:300]))
        no_control('report --format %s on a terminal' % fmt, out, b'\n\t')
    escapes_daemon(c)


def escapes_daemon(c):
    gate = os.path.join(c.tmp, 'gate')
    prog = evil_files(c, gate)
    bk = c.write('evilbk.lua', EVIL_BACKEND)
    c.start_daemon(extra=['--backend', 'lua:' + os.path.join(c.tmp, bk)])
    env = c.env(LUATRACE_SOCKET=c.sock, LUATRACE_SHM='evil')
    p = subprocess.Popen([c.args.lua, '-lluatrace', prog], cwd=c.tmp, env=env,
                         stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, start_new_session=True)
    try:
        status = lambda *a: run([c.args.recorderd, 'status', '--socket', c.sock] + list(a),
                                c.tmp, base_env())
        for _ in range(3000):
            r = status('--json')
            if json.loads(r.out)['sessions'] or p.poll() is not None:
                break
            time.sleep(0.01)
        no_control('status --json', r.out)
        st = json.loads(r.out)
        expect([s['command'] for s in st['sessions']] == ['%s -lluatrace %s' % (c.args.lua, prog)]
               or EVIL in st['sessions'][0]['command'], 'status --json: %s' % st)
        r = status()
        expect(b'PWNED' in r.out, 'status: %r' % r.out)
        no_control('status', r.out)
        open(gate, 'w').close()
        expect(p.wait(timeout=60) == 0, 'the program failed: %r' % p.stderr.read())
        for _ in range(3000):
            r = status()
            if b'latest problems' in r.out:
                break
            time.sleep(0.01)
        expect(b'PWNED' in r.out and b'latest problems' in r.out, 'status: %r' % r.out)
        no_control('status after the backend\'s error', r.out)
        c.stop_daemon()
        err = c.daemon.stderr.read()
        expect(b'PWNED' in err, 'listen said nothing of the error: %r' % err)
        no_control("listen's messages", err, b'\n\t')  # a traceback's tabs
    finally:
        if p.poll() is None:
            os.killpg(p.pid, 9)
            p.wait()


def main(argv):
    return harness.case_main(argv, cases(globals()), 'luatrace-untrusted-')


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
