#!/usr/bin/env python3
"""Time the traced program spent preempted is not in its profile.

  preempt.py --recorderd PATH [--lua lua5.1] [--handoff-host PATH]
                          [--forklib PATH]

A busy loop and `recorderd run` (with the traced program) share one CPU,
so the program waits for it about half the time. The program reports its
own CPU time (os.clock) and what the kernel counted as its wait for a CPU
(run_delay in /proc/self/schedstat). Its profile's total, its sleep left
out, must stay within its CPU time (which also holds the hooks' own
time): counting the waits, it came to twice that. session.json's
waited_ns must say what was taken off: at least half of what the kernel
counted (the rest fell before tracing began, or in waits under 20 us).
A sleep of the program's own (os.execute) must keep its length: a wait
for the CPU is taken off, a sleep is not.
With LUATRACE_COMPENSATE=0 nothing is taken off: the total must then
exceed the CPU time, which shows the check can fail.
With --handoff-host (tests/hosts/handoff_host), the same for a host that
hands its Lua state to a second thread after tracing began there (its
waits too are taken off), and back (its sleep keeps its length).
With --forklib (tests/hosts/forklib.so), a daemon's shape: a program that
closes every descriptor from 3 on, opens files of its own (under the
collector's old numbers), then forks a child that writes them: the
output is the untraced one (the child's collector, reopening its
schedstat file, closed one of the program's files).
Exit status: 0 pass, 1 fail, 77 skipped.
"""

import argparse
import json
import os
import subprocess
import sys

sys.dont_write_bytecode = True  # keep the source tree clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import corpus  # noqa: E402
import harness  # noqa: E402
import reftrace_post  # noqa: E402

PROGRAM = r'''
local function work(n)
  local t = 0
  for i = 1, n do t = t + #(string.rep("ab", 100):upper()) end
  return t
end
local s = 0
for k = 1, 20 do s = s + work(25000) end
os.execute("sleep 0.3")
local f = io.open("/proc/self/schedstat")
local stat = f:read("*a")
f:close()
local delay = tonumber(stat:match("^%d+ (%d+)"))
io.stderr:write(string.format("CPU %d DELAY %d\n", os.clock() * 1e9, delay))
print(s)
'''

HANDOFF = r'''
require "luatrace"
local function spin(n)
  local t = 0
  for i = 1, n do t = t + #(string.rep("ab", 100):upper()) end
  return t
end
local result = spin(10)
local function delay()
  local f = io.open("/proc/thread-self/schedstat")
  local stat = f:read("*a")
  f:close()
  return tonumber(stat:match("^%d+ (%d+)"))
end
function work()  -- on the host's second thread
  local c0, d0 = os.clock(), delay()
  for k = 1, 20 do result = result + spin(25000) end
  io.stderr:write(string.format("CPU %d DELAY %d\n", (os.clock() - c0) * 1e9, delay() - d0))
end
function finish()  -- on the main thread again
  os.execute("sleep 0.3")
  print(result)
end
'''

CLOSEFDS = r'''
local forklib = require "forklib"
local function spin(n)
  local t = 0
  for i = 1, n do t = t + #(string.rep("ab", 100):upper()) end
  return t
end
spin(1000)
forklib.closefrom(3)
local files = {}
for i = 1, 8 do files[i] = assert(io.open("f" .. i, "w")) end
local pid = forklib.fork()
if pid == 0 then
  spin(1000)
  for i = 1, 8 do assert(files[i]:write("child " .. i .. "\n")); assert(files[i]:flush()) end
  forklib.exit(0)
end
print("child exit", forklib.wait(pid))
for i = 1, 8 do files[i]:close() end
for i = 1, 8 do
  local f = io.open("f" .. i)
  io.write(f:read("*a"))
  f:close()
end
'''


def closefds(args, tmp):
    """A program that closes every descriptor above 2 and forks: the same output."""
    with open(os.path.join(tmp, 'closefds.lua'), 'w') as f:
        f.write(CLOSEFDS)
    env = harness.base_env()
    env['LUA_CPATH'] = os.path.join(os.path.dirname(args.forklib), '?.so') + ';;'
    prog = [args.lua, 'closefds.lua']
    plain = harness.run(prog, tmp, env)
    harness.expect(plain.status == 0, 'untraced run failed: %s' % harness.show_bytes(plain.err))
    outdir = os.path.join(tmp, 'out-closefds')
    os.mkdir(outdir)
    res = harness.run([args.recorderd, 'run', '--quiet', '-o', outdir, '--'] + prog, tmp, env)
    harness.expect(res.status == 0 and res.out == plain.out,
                   'closefds: traced output %s, want %s (stderr %s)'
                   % (harness.show_bytes(res.out), harness.show_bytes(plain.out),
                      harness.show_bytes(res.err)))
    print('closefds: the same output')


def pin_to(cpu):
    return lambda: os.sched_setaffinity(0, {cpu})


def traced_run(args, tmp, tag, cpu, compensate, prog):
    """One run on cpu: (profile total ns, os.execute's ns, cpu ns, wait ns)."""
    outdir = os.path.join(tmp, 'out-' + tag)
    os.mkdir(outdir)
    env = harness.base_env()
    env.pop('LUATRACE_COMPENSATE', None)
    if not compensate:
        env['LUATRACE_COMPENSATE'] = '0'
    # exact time: the waits for a CPU it takes off (sampled CPU time has none)
    cmd = [args.recorderd, 'run', '--quiet', '--time', 'exact', '-o', outdir, '--'] + prog
    res = harness.run(cmd, tmp, env, preexec_fn=pin_to(cpu))
    harness.expect(res.status == 0, '%s exited with %s:\n%s'
                   % (' '.join(cmd), res.status, harness.show_bytes(res.err)))
    words = res.err.decode().split()
    harness.expect('CPU' in words, 'no CPU line from the program: %s'
                   % harness.show_bytes(res.err))
    cpu_ns, wait_ns = int(words[words.index('CPU') + 1]), int(words[words.index('DELAY') + 1])
    session = harness.find_session(outdir)
    folded = corpus.report(args, session, 'time', tmp)
    total = sum(folded.values())
    if tag == 'handoff':  # work() alone: what the second thread ran
        total = sum(w for st, w in folded.items() if st.split(';')[0].startswith('work@'))
    sleep = sum(w for st, w in folded.items()
                if reftrace_post.leaf(st).startswith('os.execute@'))
    with open(os.path.join(session, 'session.json')) as f:
        taken = json.load(f)['waited_ns']
    with open(os.path.join(session, 'report.html')) as f:
        row = 'waited for a CPU' in f.read()
    harness.expect(row == (taken >= 1e6), 'report.html: a waited row %s for %d ns'
                   % ('shown' if row else 'missing', taken))
    return total, sleep, cpu_ns, wait_ns, taken


def check(args, tmp):
    if args.forklib:
        closefds(args, tmp)
    with open(os.path.join(tmp, 'prog.lua'), 'w') as f:
        f.write(PROGRAM)
    with open(os.path.join(tmp, 'handoff.lua'), 'w') as f:
        f.write(HANDOFF)
    cpu = min(os.sched_getaffinity(0))
    hog = subprocess.Popen([args.lua, '-e', 'while true do end'], preexec_fn=pin_to(cpu),
                           stdin=subprocess.DEVNULL, start_new_session=True)
    runs = [('compensated', True, [args.lua, 'prog.lua']), ('raw', False, [args.lua, 'prog.lua'])]
    if args.handoff_host:
        runs.append(('handoff', True, [args.handoff_host, 'handoff.lua']))
    try:
        for tag, comp, prog in runs:
            total, sleep, cpu_ns, wait_ns, taken = traced_run(args, tmp, tag, cpu, comp, prog)
            print('%s: profile %.3f s, os.execute %.3f s; program CPU %.3f s, waited %.3f s, '
                  'session.json waited_ns %.3f s'
                  % (tag, total / 1e9, sleep / 1e9, cpu_ns / 1e9, wait_ns / 1e9, taken / 1e9))
            harness.expect(wait_ns > cpu_ns // 2,
                           'the program hardly waited for the CPU: no contention to test')
            if comp:
                own = total if tag == 'handoff' else total - sleep  # work() has no sleep
                harness.expect(own <= cpu_ns * 1.1,
                               'the profile counts the waits for a CPU')
                harness.expect(sleep >= 0.25e9, "os.execute's sleep was taken off")
                # what was taken off is said, and is what the kernel counted
                # (handoff: DELAY is the second thread's alone, the main one's add)
                most = float('inf') if tag == 'handoff' else wait_ns * 1.05
                harness.expect(wait_ns // 2 <= taken <= most,
                               'session.json waited_ns %d for %d waited' % (taken, wait_ns))
            else:
                harness.expect(total - sleep > cpu_ns * 1.3 and taken == 0,
                               'LUATRACE_COMPENSATE=0: the waits should count')
    finally:
        harness.kill_group(hog)
        hog.wait()


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    p.add_argument('--recorderd', required=True)
    p.add_argument('--lua', default='lua5.1')
    p.add_argument('--handoff-host', help='tests/hosts/handoff_host')
    p.add_argument('--forklib', help='tests/hosts/forklib.so')
    args = p.parse_args(argv)
    if not harness.have_recorderd(args.recorderd):
        return harness.SKIP
    if not os.path.exists('/proc/self/schedstat'):
        print('SKIP: no /proc/self/schedstat')
        return harness.SKIP
    args.recorderd = os.path.abspath(args.recorderd)
    if args.handoff_host:
        args.handoff_host = os.path.abspath(args.handoff_host)
    if args.forklib:
        args.forklib = os.path.abspath(args.forklib)
    return harness.in_tmpdir('luatrace-preempt-', lambda tmp: check(args, tmp))


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
