#!/usr/bin/env python3
"""`recorderd top PID` on a terminal, as a person sees it (tmux).

  top_keys.py CASE --recorderd PATH --cpath DIR [--lua lua5.1]

The program spends its time in inner(), called by outer(): the function a
person looks for by name is outer, which has no self time. Each case runs
`recorderd top` in a tmux session of its own (a private tmux server, -L),
reads the screen with capture-pane, and cleans up the server and the
program even when it fails. Cases:
  outside   a program that never loaded luatrace (sampled from outside)
  attached  a program waiting dormant (luatrace.listen(): traced)
In both: outer is listed with its total (100%) though its self is 0, the
header says the rows are sorted by self time; the key t sorts them by
total time (outer above inner), s back by self (inner first); q ends top.
"""

import os
import re
import shutil
import signal
import subprocess
import sys
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import Case, Failure, SKIP, expect  # noqa: E402

PROG = '''%s
local function inner(n) local s = 0 for i = 1, n do s = s + i %% 7 end return s end
local function outer() local t = 0 for k = 1, 50 do t = t + inner(2000) end return t end
while true do outer() end
'''


class Top(Case):
    def start_prog(self, dormant):
        prog = self.write('outer.lua', PROG % ('require("luatrace").listen()' if dormant else ''))
        self.prog = subprocess.Popen([self.args.lua, prog], cwd=self.tmp, env=self.env(),
                                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL, start_new_session=True)
        time.sleep(0.5)  # its Lua state made, listening if dormant

    def tmux(self, *args, check=True):
        r = subprocess.run(['tmux', '-L', self.server] + list(args), env=self.env(),
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=30)
        expect(r.returncode == 0 or not check, 'tmux %s: %r' % (args[0], r.stderr))
        return r.stdout.decode('utf-8', 'replace')

    def screen_until(self, want, what):
        """The screen once want (a regex) matches it, within 20 s."""
        for _ in range(200):
            text = self.tmux('capture-pane', '-p', '-t', 'top', check=False)
            if re.search(want, text, re.S):
                return text
            time.sleep(0.1)
        raise Failure('%s: the screen never showed %r:\n%s' % (what, want, text))

    def rows(self, text):
        """The function of each row, in order (the last screen drawn)."""
        last = text[text.rfind('luatrace top:'):]
        return [l.split()[-2] for l in last.splitlines()
                if re.match(r'\s*\d+\.\d\d\s+\d+\.\d\d\s', l)]

    def cleanup(self):
        self.tmux('kill-server', check=False)
        if getattr(self, 'prog', None) and self.prog.poll() is None:
            os.killpg(self.prog.pid, signal.SIGKILL)
            self.prog.wait()


def top_case(d, dormant):
    if not shutil.which('tmux'):
        print('SKIP: tmux not installed')
        raise SystemExit(SKIP)
    d.server = 'lttop%d' % os.getpid()
    try:
        d.start_prog(dormant)
        d.tmux('new-session', '-d', '-s', 'top', '-x', '120', '-y', '40',
               '%s top %d' % (d.args.recorderd, d.prog.pid))
        text = d.screen_until(r'sorted by self time.*outer \(outer\.lua:3\)', 'by self')
        rows = d.rows(text)
        expect(rows and rows[0] == 'inner', 'by self, inner first: %r' % rows)
        outer = re.search(r'^\s*(\d+\.\d\d)\s+(\d+\.\d\d)\s.*outer \(outer\.lua:3\)', text, re.M)
        expect(outer and float(outer.group(2)) > 90, 'outer, its total: %r' % text)
        d.tmux('send-keys', '-t', 'top', 't')
        text = d.screen_until(r'sorted by total time(?:(?!luatrace top:).)*outer.*inner',
                              'key t')
        rows = d.rows(text)
        expect(rows.index('outer') < rows.index('inner'), 'by total: %r' % rows)
        d.tmux('send-keys', '-t', 'top', 's')
        text = d.screen_until(r'sorted by self time(?:(?!luatrace top:).)*inner.*outer', 'key s')
        d.tmux('send-keys', '-t', 'top', 'q')
        for _ in range(100):  # top ends: its tmux session with it
            if 'top' not in d.tmux('list-sessions', '-F', '#S', check=False).split():
                break
            time.sleep(0.1)
        else:
            raise Failure('q did not end top')
        expect(d.prog.poll() is None, 'the program ended with top')
    finally:
        d.cleanup()


def case_outside(d):
    top_case(d, False)


def case_attached(d):
    top_case(d, True)


def main(argv):
    return harness.case_main(argv, harness.cases(globals()), 'luatrace-top-', make=Top)


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
