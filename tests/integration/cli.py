#!/usr/bin/env python3
"""The mistakes a newcomer makes on the command line, and what recorderd
says: one line naming what went wrong and what to do, and the exit status
doc/commands.md gives.

  cli.py CASE --recorderd PATH --cpath DIR [--lua lua5.1]

Cases:
  usage       recorderd --help says what each command is for, in a line
              under its synopsis; a mistyped command is one line naming
              the command meant (it printed the whole usage), exit 2;
              recorderd help [CMD] is --help, or CMD --help (help was
              "did you mean heap?")
  runnodash   run without "--", the command first (run lua5.1 app.lua): the
              program runs traced (it ran nothing, exit 0, before)
  runscript   run -- app.lua (lua5.1 forgotten): a script not on PATH or not
              executable says the command to type; a missing program says
              "not found on PATH" (it said "no such file or directory" of a
              file that is there); exit 127
  emptyout    a run, attach or record that records nothing leaves no --out
              directory it made
  reportlist  report --format LIST: several reports from one replay, as each
              alone would be
  samplehz    run --sample abc -- luajit app.lua: abc was meant as HZ (a
              "--" follows), refused with exit 2 (it ran "abc" as the
              command: exit 127)
  runnocmd    run with no command, or options only: exit 2, says how
  reportdir   report of a directory that is no session: the parent of the
              sessions names one of them, a --no-trace session says it has
              no trace, any other directory says what to give; exit 1
  listenhttp  listen --http with no address (abc, a port over 65535): one
              line naming the forms, exit 2 before anything listens (it
              was 1, as for an address that cannot be bound)
  reportweight report --weight with a format other than folded: refused
              before the replay, exit 2 (it was ignored: a --weight calls
              flame graph was a time one); an unknown option is "unknown
              option", as every command says
  reportbkdir report --backend -o DIR makes DIR, as annotate's -o does; a
              backend format's -o FILE in a missing directory is named; an
              unknown format lists lua:FILE.lua among the backends
  binarytty   report --format pprof to a terminal: refused before the
              replay, naming -o (it wrote gzip bytes as '?'s); to a pipe and
              to -o FILE as before
  nodaemon    status and stop with no daemon: one line saying how to start
              one, exit 1
  helpopts    every --option a command's --help names is one that command
              takes (run, listen, attach and serve said "(--weight)" of the
              folded format, and refused --weight as an unknown option)
  clockexact  run --clock wall with every line counted (--lines exact,
              --memory) times by wall-clock ticks, as --time sample --clock
              wall does (the clock was dropped: exact time); with --time
              exact it is refused, exit 2, in either order
  optvalopt   an option where a value belongs (run -o --memory -- lua5.1
              app.lua, -o -q): refused, exit 2, naming it (it made a
              directory --memory and ran untraced for memory)
  samplenone  run --sample 1 of a program shorter than a sample period: the
              summary's "no samples in Lua" says it may have run less than
              one (it said only that no Lua code ran)
  optequals   --out=DIR, --format=html (run, report): unknown, and the
              message says to put the value after a space (it said only
              "unknown option --out=DIR", of an option --help lists)
  usageflag   recorderd --versoin, --hlep: "did you mean --version?" (it
              said options go after the command, of a mistyped --version);
              -V, -v and version print the version as --version does
  covtime     run --coverage with --time or --clock (either order, either
              value), and listen's and attach's: refused, exit 2, saying to
              leave out --coverage and add -f lcov (coverage won and the
              time asked for was dropped without a word); -f lcov with
              --time sample is sampled time with every line counted
  covfolded   run --coverage -f folded (speedscope, flamegraph): refused,
              exit 2, naming report --weight calls (it wrote an empty
              stacks.folded); -f all leaves stacks.folded out instead, and
              report -f folded --weight calls of the session folds its calls
  reportfile  report of a file in a session directory (session.json,
              profile.txt, coverage.lcov, annotate/...): reports that
              session, saying so (it said "bad magic"); a file in no
              session says what to give; a renamed trace is read as before
  formatspace run --format callgrind, pprof (a space after the ','): refused,
              exit 2, saying to join the names with no space (run took
              pprof for the command: "cannot run pprof", exit 127), and so
              does report (html read as a second trace); the list quoted,
              "callgrind, pprof", writes both; a list of one, "callgrind,",
              stays one
  optypo      a mistyped --option (run --fromat, --line, report --wieght,
              attach --durtion, listen --sokcet): "did you mean --format?"
              naming the option of that command's --help (it said only
              "unknown option"); one far from any (--bogus) as before
  defaultout  run where ./luatrace-out cannot be written, no -o given: the
              message names it as the default and says to give -o DIR (it
              said "--out luatrace-out", an option never typed); a given
              --out is named as before; nothing runs, exit 2. listen there
              is refused alike, before its socket is bound (it listened,
              then refused every program that connected)
  notick      run of a program shorter than a tick (default sampled time):
              the summary lists its exact calls, top 10 by calls, and says
              to use --time exact (it printed the table's heading and no
              row, as if nothing ran)
  longcmd     a command line longer than the session's command holds (a
              linter given a directory's files): session.json and
              report.html end it with "..." (it was cut mid-argument
              without a mark, as if that were the whole command); a short
              one is whole
  statusrun   status with no --socket during a `recorderd run`: the run's
              sessions (its daemon is private; status said "no daemon
              answers"), and not once it has ended
  cannotbegin run of a program whose collector loaded and could not begin
              (a bad LUATRACE_RING): its message, and run's note that
              nothing was traced does not deny it was loaded
  shebang     run -- ./runner, a script whose #! line runs a Lua luatrace
              does not trace (lua5.3; busted's #!/usr/bin/env lua is 5.2
              on Debian): the note that nothing was traced names the
              command to type, lua5.1 and the script's path as found on
              PATH (it said only that nothing was traced); a script run
              by lua5.1 is traced, with no such line
  notlua      dump, top and record of a process that runs no Lua (sleep):
              "not a Lua 5.1 or 5.4 program" (it said "not Lua 5.1", as
              if 5.4 were not read), exit 1
  globbed     run and report with --exclude /usr/* unquoted, which the shell
              expands (--exclude /usr/bin /usr/etc ...): exit 2, saying to
              quote the pattern (run ran /usr/etc: "permission denied",
              127; report said "several traces given: add --merge"); the
              quoted pattern as before
  otheruser   record and top of another user's process (as nobody, of a
              root lua5.1; root only): "belongs to uid 0", not the long
              ptrace_scope advice
"""

import json
import os
import pty
import re
import shutil
import signal
import subprocess
import sys
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import expect, run  # noqa: E402


def case_usage(c):
    rd = c.args.recorderd
    r = run([rd, '--help'], c.tmp, c.env())
    lines = r.out.decode().splitlines()
    cmds = [l.split()[1] for l in lines if l.startswith('  recorderd ') and '--help' not in l]
    expect(r.status == 0 and len(cmds) >= 11 and 'run' in cmds and 'report' in cmds,
           'recorderd --help: %d %r' % (r.status, r.out))
    for i, l in enumerate(lines):  # each synopsis, then what it is for
        if l.startswith('  recorderd ') and '--help' not in l:
            expect(i + 1 < len(lines) and lines[i + 1].startswith('      ')
                   and len(lines[i + 1].split()) >= 4, 'no line for %s: %r' % (l, lines))
    expect(max(len(l) for l in lines) <= 80, 'a line over 80 columns: %r' % lines)
    for word, meant in (('rn', 'run'), ('reprot', 'report'), ('stats', 'status'),
                        ('lisen', 'listen'), ('xyz', None), ('r', None)):
        r = run([rd, word, '--', c.args.lua, '-e', 'os.exit(5)'], c.tmp, c.env())
        err = r.err.decode()
        tail = ': did you mean %s?' % meant if meant else ''
        expect(r.status == 2 and err == 'recorderd: unknown command %s%s (recorderd --help '
               'lists them)\n' % (word, tail), '%s: %d %r' % (word, r.status, err))
    # a program where the command goes, an option before the command
    for argv, said in ((['lua5.1', 'app.lua'], 'lua5.1: to trace it, recorderd run -- lua5.1 ...'),
                       (['luajit'], 'luajit: to trace it, recorderd run -- luajit'),
                       (['-o', 'x', 'run'], '-o: options go after the command (recorderd run '
                        '-o DIR -- lua5.1 app.lua)')):
        r = run([rd] + argv, c.tmp, c.env())
        expect(r.status == 2 and r.err.decode() == 'recorderd: unknown command %s\n' % said,
               '%s: %d %r' % (argv, r.status, r.err))
    # help, as git and go take it: the usage, or a command's --help (it
    # said "did you mean heap?")
    r = run([rd, 'help'], c.tmp, c.env())
    expect(r.status == 0 and r.out == run([rd, '--help'], c.tmp, c.env()).out and not r.err,
           'help: %d %r %r' % (r.status, r.out[:80], r.err))
    r = run([rd, 'help', 'attach'], c.tmp, c.env())
    expect(r.status == 0 and r.out == run([rd, 'attach', '--help'], c.tmp, c.env()).out,
           'help attach: %d %r %r' % (r.status, r.out[:80], r.err))
    r = run([rd, 'help', 'bogus'], c.tmp, c.env())
    expect(r.status == 2 and r.err.startswith(b'usage: recorderd COMMAND'),
           'help bogus: %d %r' % (r.status, r.err[:80]))
    # an option without its value names the command whose help to read
    for argv in (['run', '-o'], ['report', 'x', '-f'], ['listen', '--socket'],
                 ['--listen', '--socket']):
        r = run([rd] + argv, c.tmp, c.env())
        cmd = argv[0].lstrip('-')
        expect(r.status == 2 and r.err.decode() == 'recorderd %s: %s needs a value (recorderd %s '
               '--help)\n' % (cmd, argv[-1], cmd), '%s: %d %r' % (argv, r.status, r.err))


COMMANDS = ('run', 'listen', 'attach', 'dump', 'top', 'record', 'report', 'serve', 'status',
            'stop', 'env')


def case_helpopts(c):
    rd = c.args.recorderd
    for cmd in COMMANDS:
        r = run([rd, cmd, '--help'], c.tmp, c.env())
        expect(r.status == 0, '%s --help: %d %r' % (cmd, r.status, r.err))
        opts = set(re.findall(r'(?:^|[\s,(])(--[a-z][a-z-]*)', r.out.decode()))
        for opt in sorted(opts - {'--help'}):
            # "--" after it: a flag stops at it, an option taking a value
            # says it needs one; nothing starts, whatever the command
            r = run([rd, cmd, opt, '--'], c.tmp, c.env(), timeout=10)
            err = r.err.decode()
            expect(r.status == 2 and 'unknown option %s ' % opt not in err,
                   '%s --help names %s, which %s refuses: %d %r' % (cmd, opt, cmd, r.status,
                                                                    err))


def case_runnodash(c):
    prog = c.write('app.lua', 'print("ran", ...)\nos.exit(3)\n')
    for opts in ([], ['-q'], ['-o', c.out]):
        r = run([c.args.recorderd, 'run'] + opts + [c.args.lua, prog, 'a'], c.tmp, c.env())
        expect(r.status == 3 and r.out == b'ran\ta\n',
               'run %s lua5.1 app.lua: %d %r %r' % (opts, r.status, r.out, r.err))
    expect(os.path.isfile(os.path.join(c.session('app'), 'session.json')), 'no session')


def case_runscript(c):
    c.write('app.lua', 'print(1)\n')
    for cmd, what in (('app.lua', 'cannot run app.lua: not found on PATH (a Lua script: '
                       'recorderd run -- lua5.1 app.lua)'),
                      ('./app.lua', 'cannot run ./app.lua: permission denied (a Lua script: '
                       'recorderd run -- lua5.1 ./app.lua)'),
                      ('luatrace-no-such-program', 'cannot run luatrace-no-such-program: '
                       'not found on PATH')):
        r = run([c.args.recorderd, 'run', '--', cmd], c.tmp, c.env())
        expect(r.status == 127 and r.err == ('recorderd: %s\n' % what).encode(),
               'run -- %s: %d %r' % (cmd, r.status, r.err))


def case_formatspace(c):
    prog = c.write('app.lua', 'io.open("ran", "w"):close()\n')
    said = '--format callgrind, %s: join the names with no space (--format callgrind,%s)\n'
    r = run([c.args.recorderd, 'run', '-o', c.out, '--format', 'callgrind,', 'pprof', '--',
             c.args.lua, prog], c.tmp, c.env())
    expect(r.status == 2 and r.err.decode() == 'recorderd run: ' + said % ('pprof', 'pprof')
           and not os.path.exists(os.path.join(c.tmp, 'ran')), 'run: %d %r' % (r.status, r.err))
    harness.run_ok([c.args.recorderd, 'run', '-q', '-o', c.out, '--format', 'callgrind, pprof',
                    '--', c.args.lua, prog], c.tmp, env=c.env())
    s = c.session('app')
    for f in ('callgrind.out', 'profile.pb.gz'):
        expect(os.path.isfile(os.path.join(s, f)), 'quoted list: no %s' % f)
    r = run([c.args.recorderd, 'report', s, '-f', 'callgrind,', 'html'], c.tmp, c.env())
    expect(r.status == 2 and r.err.decode() == 'recorderd report: ' + said % ('html', 'html'),
           'report: %d %r' % (r.status, r.err))
    # a list of one, "callgrind,", is one on purpose (written into the session)
    harness.run_ok([c.args.recorderd, 'report', s, '-f', 'callgrind,'], c.tmp, env=c.env())


def case_optypo(c):
    prog = c.write('app.lua', 'io.open("ran", "w"):close()\n')
    for cmd, typo, meant in ((['run'], '--fromat', '--format'), (['run'], '--line', '--lines'),
                             (['run'], '--sampel', '--sample'), (['report', 'x'], '--wieght',
                             '--weight'), (['attach', '1'], '--durtion', '--duration'),
                             (['listen'], '--sokcet', '--socket'), (['run'], '--bogus', None)):
        r = run([c.args.recorderd] + cmd + [typo, 'x', '--', c.args.lua, prog], c.tmp, c.env(), 10)
        hint = ': did you mean %s?' % meant if meant else ''
        expect(r.status == 2 and r.out == b'' and r.err.decode() == 'recorderd %s: unknown option '
               '%s%s (see recorderd %s --help)\n' % (cmd[0], typo, hint, cmd[0]),
               '%s %s: %d %r' % (cmd[0], typo, r.status, r.err))
        expect(not os.path.exists(os.path.join(c.tmp, 'ran')), '%s %s ran it' % (cmd[0], typo))


def case_defaultout(c):
    prog = c.write('app.lua', 'io.open("ran", "w"):close()\n')
    c.write('luatrace-out', 'not a directory\n')  # as unwritable as it gets for root
    for opts, said in (([], 'recorderd run: cannot write the reports in ./luatrace-out (the '
                        'default --out): Not a directory; give -o DIR\n'),
                       (['-o', 'luatrace-out'], 'recorderd run: --out luatrace-out: cannot create '
                        'or write it: Not a directory\n')):
        r = run([c.args.recorderd, 'run'] + opts + ['--', c.args.lua, prog], c.tmp, c.env())
        expect(r.status == 2 and r.err.decode() == said, 'run %s: %d %r' % (opts, r.status, r.err))
        expect(not os.path.exists(os.path.join(c.tmp, 'ran')), 'run %s ran the command' % opts)
        sock = os.path.join(c.tmp, 's')
        r = run([c.args.recorderd, 'listen', '--socket', sock] + opts, c.tmp, c.env(), 10)
        expect(r.status == 2 and r.err.decode() == said.replace('recorderd run', 'recorderd listen')
               and not os.path.exists(sock), 'listen %s: %d %r' % (opts, r.status, r.err))


def case_notick(c):
    prog = c.write('app.lua', 'local function tiny(i) return i end\n'
                   'for i = 1, 7 do tiny(i) end\nprint("done")\n')

    def body(attempt):
        r = run([c.args.recorderd, 'run', '-o', c.out, '--', c.args.lua, prog], c.tmp, c.env())
        err = r.err.decode()
        expect(r.status == 0 and r.out == b'done\n', 'run: %d %r' % (r.status, r.err))
        if 'top 10 by self time' in err:  # a tick landed after all: no case
            raise harness.Failure('a tick landed in the tiny program: %r' % err)
        expect('     calls  function (top 10 by calls: no time)\n'
               '         7  tiny (app.lua:1)\n' in err
               and 'no tick landed where the program ran (it ran less than a tick): use '
               '--time exact for its time\n' in err, 'no calls listed: %r' % err)
    harness.retried(body)


def case_longcmd(c):
    prog = c.write('app.lua', 'print(select("#", ...))\n')
    many = ['argument-number-%d' % i for i in range(60)]
    for args, cut in ((['a', 'b'], False), (many, True)):
        harness.run_ok([c.args.recorderd, 'run', '-q', '-o', 'out', '--', c.args.lua, prog] + args,
                       c.tmp, env=c.env())
        whole = ' '.join([c.args.lua, prog] + args)
        with open(os.path.join(c.tmp, 'out', 'app', 'session.json')) as f:
            cmd = json.load(f)['command']
        if cut:
            expect(cmd.endswith('...') and whole.startswith(cmd[:-3]) and len(cmd) > 400,
                   'a cut command without its mark: %r' % cmd[-60:])
            with open(os.path.join(c.tmp, 'out', 'app', 'report.html')) as f:
                expect(cmd in f.read(), 'report.html: not the command %r' % cmd[-60:])
        else:
            expect(cmd == whole, 'a short command changed: %r, not %r' % (cmd, whole))
        shutil.rmtree(os.path.join(c.tmp, 'out'))


def case_covdefault(c):
    """Coverage asked of run's default session (lines by sample: its lines
    were never counted) is refused, alone and in a --merge, never written
    as every line missed; a --coverage run's has the program's hits."""
    prog = c.write('app.lua', 'local s = 0\nfor i = 1, 3 do s = s + i end\nprint(s)\n')
    harness.run_ok([c.args.recorderd, 'run', '-q', '-o', 'dflt', '--', c.args.lua, prog], c.tmp,
                   env=c.env())
    harness.run_ok([c.args.recorderd, 'run', '-q', '--coverage', '-o', 'cov', '--', c.args.lua,
                    prog], c.tmp, env=c.env())
    dflt = harness.find_session(os.path.join(c.tmp, 'dflt'))
    cov = harness.find_session(os.path.join(c.tmp, 'cov'))
    why = b'lines by sample (run\'s default): its lines were not counted, so it has no coverage'
    for args in ([dflt, '--format', 'lcov'], ['--merge', cov, dflt, '--format', 'cobertura',
                                              '-o', 'c.xml']):
        r = run([c.args.recorderd, 'report'] + args, c.tmp, c.env())
        expect(r.status == 1 and r.out == b'' and why in r.err,
               'report %s: %d %r %r' % (args, r.status, r.out[:200], r.err))
    expect(not os.path.exists(os.path.join(c.tmp, 'c.xml')), 'c.xml written')
    r = run([c.args.recorderd, 'report', cov, '--format', 'lcov'], c.tmp, c.env())
    expect(r.status == 0 and b'DA:2,4\n' in r.out and b'LH:3\n' in r.out,
           'report of a --coverage run: %d %r' % (r.status, r.out))


def case_emptyout(c):
    """run of a script that does not load, attach and record of a process
    that is not Lua: the --out directory they made is gone again (nothing
    was recorded), and so is its parent that they made; one that was there
    before stays, and a run that records keeps it."""
    q = subprocess.Popen(['sleep', '30'])
    try:
        out = os.path.join(c.tmp, 'new', 'out')
        for cmd in (['run', '--', c.args.lua, 'missing.lua'], ['attach', str(q.pid)],
                    ['record', str(q.pid), '-d', '1']):
            r = run([c.args.recorderd] + cmd[:1] + ['--out', out] + cmd[1:], c.tmp, c.env())
            expect(r.status == 1 and not os.path.exists(os.path.dirname(out)),
                   '%s: %d, %r left: %r' % (cmd[0], r.status, os.path.dirname(out), r.err))
    finally:
        q.kill()
        q.wait()
    os.makedirs(out)
    r = run([c.args.recorderd, 'run', '--out', out, '--', c.args.lua, 'missing.lua'], c.tmp,
            c.env())
    expect(r.status == 1 and os.path.isdir(out), 'an --out there before: %d' % r.status)
    os.rmdir(out)
    prog = c.write('app.lua', 'print(1)\n')
    r = run([c.args.recorderd, 'run', '-q', '--out', out, '--', c.args.lua, prog], c.tmp, c.env())
    expect(r.status == 0 and os.listdir(out) == ['app'], 'a run: %d %r' % (r.status, r.err))
    # a listen refused (another listens on its socket) leaves no --out it made
    sock = os.path.join(c.tmp, 'l.sock')
    first = subprocess.Popen([c.args.recorderd, 'listen', '--socket', sock, '-o',
                              os.path.join(c.tmp, 'lo')], cwd=c.tmp, env=c.env(),
                             stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        harness.wait_file(sock, 'the first listen', first)
        r = run([c.args.recorderd, 'listen', '--socket', sock, '-o',
                 os.path.join(c.tmp, 'lnew', 'sub')], c.tmp, c.env())
        expect(r.status == 1 and not os.path.exists(os.path.join(c.tmp, 'lnew')),
               'a refused listen: %d, %r' % (r.status, r.err))
    finally:
        first.terminate()
        first.wait(timeout=30)


def case_samplehz(c):
    prog = c.write('app.lua', 'print(1)\n')
    r = run([c.args.recorderd, 'run', '--sample', 'abc', '--', 'luajit', prog], c.tmp, c.env())
    expect(r.status == 2 and r.err == b'recorderd run: --sample abc: HZ is samples per second, '
           b'1 to 1000\n', '--sample abc: %d %r' % (r.status, r.err))
    # HZ stays optional: the command right after --sample, with no "--"
    r = run([c.args.recorderd, 'run', '-q', '-o', c.out, '--sample', c.args.lua, prog], c.tmp,
            c.env())
    expect(r.status == 0 and r.out == b'1\n', '--sample lua5.1: %d %r' % (r.status, r.err))


def case_clockexact(c):
    prog = c.write('app.lua', 'print(1)\n')
    rd = c.args.recorderd
    for opts in (['--clock', 'wall', '--lines', 'exact'], ['--clock', 'wall', '--memory'],
                 ['--lines', 'exact', '--clock', 'wall']):
        shutil.rmtree(c.out, ignore_errors=True)
        r = run([rd, 'run', '-q', '-o', c.out] + opts + ['--', c.args.lua, prog], c.tmp, c.env())
        expect(r.status == 0 and r.out == b'1\n', 'run %s: %d %r' % (opts, r.status, r.err))
        with open(os.path.join(c.session('app'), 'session.json')) as f:
            js = json.load(f)
        expect(js['time'] == 'sample' and js['lines'] == 'exact'
               and (js['tick'] or {}).get('clock') == 'wall',
               'run %s: time %r lines %r tick %r' % (opts, js['time'], js['lines'], js['tick']))
    shutil.rmtree(c.out, ignore_errors=True)
    for opts in (['--clock', 'wall', '--time', 'exact'], ['--time', 'exact', '--clock', 'cpu']):
        r = run([rd, 'run', '-o', c.out] + opts + ['--', c.args.lua, prog], c.tmp, c.env())
        expect(r.status == 2 and r.out == b'' and r.err == b'recorderd run: --clock is the clock '
               b'of sampled time (--time sample): not with --time exact, which reads each '
               b"event's clock\n" and not os.path.exists(c.out),
               'run %s: %d %r' % (opts, r.status, r.err))


def case_optvalopt(c):
    prog = c.write('app.lua', 'print(1)\n')
    for opt in ('--memory', '-q'):
        r = run([c.args.recorderd, 'run', '-o', opt, '--', c.args.lua, prog], c.tmp, c.env())
        expect(r.status == 2 and r.out == b'' and r.err == ('recorderd run: -o needs a value, '
               'not the option %s (recorderd run --help)\n' % opt).encode()
               and not os.path.exists(os.path.join(c.tmp, opt)),
               'run -o %s: %d %r %r' % (opt, r.status, r.out, r.err))
    r = run([c.args.recorderd, 'run', '-o', '--', c.args.lua, prog], c.tmp, c.env())
    expect(r.status == 2 and r.err == b'recorderd run: -o needs a value (recorderd run --help)\n',
           'run -o --: %d %r' % (r.status, r.err))


def case_samplenone(c):
    prog = c.write('app.lua', 'print(1)\n')
    r = run([c.args.recorderd, 'run', '-o', c.out, '--sample', '1', '--', c.args.lua, prog],
            c.tmp, c.env())
    expect(r.status == 0 and r.out == b'1\n' and b'\nno samples in Lua: the process ran no Lua '
           b'code while it was read, or less than a sample period (1/1 s)\n' in r.err,
           'run --sample 1: %d %r' % (r.status, r.err))


def case_optequals(c):
    prog = c.write('app.lua', 'print(1)\n')
    for cmd, opt, spaced in ((['run'], '--out=o', '--out o'), (['run'], '--format=html',
                             '--format html'), (['report', 'x'], '--format=html', '--format html')):
        r = run([c.args.recorderd] + cmd + [opt, '--', c.args.lua, prog], c.tmp, c.env())
        expect(r.status == 2 and r.out == b'' and r.err == ('recorderd %s: unknown option %s: '
               'options take their value after a space, %s (see recorderd %s --help)\n'
               % (cmd[0], opt, spaced, cmd[0])).encode(),
               '%s %s: %d %r' % (cmd[0], opt, r.status, r.err))


def case_usageflag(c):
    want = run([c.args.recorderd, '--version'], c.tmp, c.env()).out
    expect(want.startswith(b'recorderd ') and want.count(b'\n') == 1, '--version: %r' % want)
    for word in ('-V', '-v', 'version'):
        r = run([c.args.recorderd, word], c.tmp, c.env())
        expect(r.status == 0 and r.out == want and r.err == b'', '%s: %d %r %r'
               % (word, r.status, r.out, r.err))
    for word, meant in (('--versoin', '--version'), ('--hlep', '--help'), ('-help', '--help')):
        r = run([c.args.recorderd, word], c.tmp, c.env())
        expect(r.status == 2 and r.out == b'' and r.err == ('recorderd: unknown command %s: did '
               'you mean %s? (recorderd --help lists them)\n' % (word, meant)).encode(),
               '%s: %d %r' % (word, r.status, r.err))


def case_runnocmd(c):
    for opts in ([], ['-q'], ['--'], ['-q', '--']):
        r = run([c.args.recorderd, 'run'] + opts, c.tmp, c.env())
        err = r.err.decode()
        expect(r.status == 2 and err.count('\n') == 1 and 'no command given' in err
               and 'recorderd run -- lua5.1 app.lua' in err,
               'run %s: %d %r' % (opts, r.status, err))


def case_reportdir(c):
    prog = c.write('app.lua', 'print(1)\n')
    rd = c.args.recorderd
    for opts in ([], [], ['--no-trace', '-o', 'nt']):  # app, app.prev; nt/app
        harness.run_ok([rd, 'run', '-q', '-o', c.out] + opts + ['--', c.args.lua, prog], c.tmp,
                       env=c.env())
    os.mkdir(os.path.join(c.tmp, 'empty'))
    for arg, what in (
            (c.out, 'out: a directory of sessions, not a session: give one of them, e.g. '
                    'recorderd report %s/app\n' % c.out),
            (c.out + '/', 'a directory of sessions, not a session: give one of them, e.g. '
                          'recorderd report %s/app\n' % c.out),
            ('nt/app', 'nt/app: a session with no trace.ltr (run with --no-trace'),
            ('empty', 'empty: not a session directory (no trace.ltr in it): give a session '
                      'directory')):
        for merge in ([], ['--merge']):
            r = run([rd, 'report'] + merge + [arg], c.tmp, c.env())
            err = r.err.decode()
            expect(r.status == 1 and err.count('\n') == 1 and what in err
                   and err.startswith('recorderd report: '),
                   'report %s %s: %d %r' % (merge, arg, r.status, err))


COV_TIME = ('recorderd %s: --coverage reads no clock, so %s would be dropped: for coverage '
            'with %s time, leave out --coverage and add -f lcov (it counts every line)\n')


def case_covtime(c):
    prog = c.write('app.lua', 'print(1)\n')
    rd = c.args.recorderd
    for opts, asked, kind in ((['--coverage', '--time', 'sample'], '--time sample', 'sampled'),
                              (['--time', 'sample', '--coverage'], '--time sample', 'sampled'),
                              (['--coverage', '--time', 'exact'], '--time exact', 'exact'),
                              (['--clock', 'wall', '--coverage'], '--clock wall', 'sampled')):
        r = run([rd, 'run', '-o', c.out] + opts + ['--', c.args.lua, prog], c.tmp, c.env())
        expect(r.status == 2 and r.out == b'' and not os.path.exists(c.out)
               and r.err == (COV_TIME % ('run', asked, kind)).encode(),
               'run %s: %d %r' % (opts, r.status, r.err))
    # the same check, before listen binds its socket or attach touches a process
    sock = os.path.join(c.tmp, 'l.sock')
    for cmd in (['listen', '--socket', sock], ['attach', str(os.getpid())]):
        r = run([rd] + cmd + ['-o', c.out, '--coverage', '--time', 'sample'], c.tmp, c.env())
        expect(r.status == 2 and r.err == (COV_TIME % (cmd[0], '--time sample',
                                                       'sampled')).encode()
               and not os.path.exists(sock) and not os.path.exists(c.out),
               '%s: %d %r' % (cmd[0], r.status, r.err))
    # what the message offers: coverage with sampled time
    r = run([rd, 'run', '-q', '-o', c.out, '--time', 'sample', '-f', 'lcov', '--', c.args.lua,
             prog], c.tmp, c.env())
    expect(r.status == 0 and r.out == b'1\n', 'run --time sample -f lcov: %d %r'
           % (r.status, r.err))
    with open(os.path.join(c.session('app'), 'session.json')) as f:
        js = json.load(f)
    expect(js['time'] == 'sample' and js['lines'] == 'exact' and js['timing'] != 'none'
           and os.path.getsize(os.path.join(c.session('app'), 'coverage.lcov')) > 0,
           'run --time sample -f lcov: %r' % js)


def case_covfolded(c):
    prog = c.write('app.lua', 'local function f() end\nfor i = 1, 3 do f() end\n')
    rd = c.args.recorderd
    for fmt in ('folded', 'callgrind,folded', 'speedscope', 'flamegraph'):
        r = run([rd, 'run', '--coverage', '-f', fmt, '-o', c.out, '--', c.args.lua, prog],
                c.tmp, c.env())
        name = fmt.split(',')[-1]
        later = (', or fold the calls later: recorderd report SESSION -f folded --weight calls'
                 if name == 'folded' else '')
        expect(r.status == 2 and r.out == b'' and not os.path.exists(c.out)
               and r.err == ('recorderd run: --coverage reads no clock, so --format %s, '
                             'weighed by time, would be empty: for time, leave out --coverage '
                             '(-f lcov keeps the coverage)%s\n' % (name, later)).encode(),
               'run --coverage -f %s: %d %r' % (fmt, r.status, r.err))
    # every format: those weighed by time left out, none written empty
    harness.run_ok([rd, 'run', '-q', '--coverage', '-f', 'all', '-o', c.out, '--', c.args.lua,
                    prog], c.tmp, env=c.env())
    sess = c.session('app')
    have = sorted(os.listdir(sess))
    expect('stacks.folded' not in have and 'callgrind.out' in have
           and 'coverage.lcov' in have, '-f all: %r' % have)
    r = run([rd, 'report', sess, '-f', 'folded', '--weight', 'calls'], c.tmp, c.env())
    expect(r.status == 0 and b';f@app.lua:1 3\n' in r.out,
           'report -f folded --weight calls: %d %r %r' % (r.status, r.out, r.err))
    r = run([rd, 'report', sess, '-f', 'folded,callgrind'], c.tmp, c.env())
    expect(r.status == 0 and not os.path.exists(os.path.join(sess, 'stacks.folded'))
           and b'stacks.folded not written: the trace has no time (a --coverage run): '
               b'recorderd report SESSION -f folded --weight calls folds its calls\n' in r.err,
           'report -f folded,callgrind: %d %r' % (r.status, r.err))


def case_reportfile(c):
    prog = c.write('app.lua', 'print(1)\n')
    rd = c.args.recorderd
    harness.run_ok([rd, 'run', '-q', '-f', 'all', '-o', c.out, '--', c.args.lua, prog], c.tmp,
                   env=c.env())
    sess = os.path.relpath(c.session('app'), c.tmp)
    whole = run([rd, 'report', sess], c.tmp, c.env())
    expect(whole.status == 0 and whole.out.startswith(b'luatrace profile: app\n'),
           'report %s: %d %r' % (sess, whole.status, whole.err))
    for name in ('session.json', 'profile.txt', 'report.html', 'coverage.lcov',
                 'stacks.folded', 'profile.pb.gz', 'annotate', 'annotate/app.lua.txt'):
        arg = os.path.join(sess, name)
        r = run([rd, 'report', arg], c.tmp, c.env())
        expect(r.status == 0 and r.out == whole.out
               and r.err == ('recorderd report: %s is not a trace: reporting its session, '
                             '%s\n' % (arg, sess)).encode(),
               'report %s: %d %r' % (arg, r.status, r.err))
    # from inside the session
    r = run([rd, 'report', 'session.json'], os.path.join(c.tmp, sess), c.env())
    expect(r.status == 0 and r.out == whole.out, 'report session.json: %d %r'
           % (r.status, r.err))
    # a trace is a trace, wherever it is and whatever its name
    shutil.copy(os.path.join(c.tmp, sess, 'trace.ltr'), os.path.join(c.tmp, 'copy.bin'))
    r = run([rd, 'report', os.path.join(sess, 'trace.ltr')], c.tmp, c.env())
    expect(r.status == 0 and r.err == b'' and r.out == whole.out, 'report trace.ltr: %d %r'
           % (r.status, r.err))
    r = run([rd, 'report', 'copy.bin'], c.tmp, c.env())  # no session.json: no header
    expect(r.status == 0 and r.err == b'' and r.out.split(b'\n')[1:] ==
           whole.out.split(b'\n')[2:], 'report copy.bin: %d %r' % (r.status, r.err))
    c.write('notes.txt', 'not a trace\n')
    r = run([rd, 'report', 'notes.txt'], c.tmp, c.env())
    expect(r.status == 1 and r.err == b'recorderd report: notes.txt: not a luatrace trace file '
           b'(bad magic): give a session directory (luatrace-out/NAME) or its trace.ltr\n',
           'report notes.txt: %d %r' % (r.status, r.err))


def case_listenhttp(c):
    for spec in ('abc', '70000', '[::1]', ':6060'):
        r = run([c.args.recorderd, 'listen', '--socket', os.path.join(c.tmp, 's'), '--http', spec],
                c.tmp, c.env(), 30)
        expect(r.status == 2 and r.err == ('recorderd listen: --http %s: give PORT, IP:PORT or '
                                           '[IPv6]:PORT\n' % spec).encode()
               and not os.path.exists(os.path.join(c.tmp, 's')),
               'listen --http %s: %d %r' % (spec, r.status, r.err))


def case_reportweight(c):
    prog = c.write('app.lua', 'local function f() return 1 end\nprint(f())\n')
    harness.run_ok([c.args.recorderd, 'run', '-q', '-o', c.out, '--', c.args.lua, prog], c.tmp,
                   env=c.env())
    s = c.session('app')
    for opts, fmt in ((['-f', 'flamegraph', '-w', 'calls'], 'flamegraph'),
                      (['--weight', 'lines'], 'profile'), (['-w', 'time', '-f', 'html'], 'html')):
        r = run([c.args.recorderd, 'report', s] + opts + ['-o', 'x'], c.tmp, c.env())
        expect(r.status == 2 and r.err == ('recorderd report: --weight weighs folded stacks only '
                                           '(--format folded), not %s\n' % fmt).encode()
               and not os.path.exists(os.path.join(c.tmp, 'x')),
               'report %s: %d %r' % (opts, r.status, r.err))
    r = run([c.args.recorderd, 'report', s, '-f', 'folded', '-w', 'calls'], c.tmp, c.env())
    expect(r.status == 0 and r.out.decode().rstrip().endswith(';f@app.lua:1 1'),
           'folded by calls: %d %r' % (r.status, r.out))
    r = run([c.args.recorderd, 'report', s, '--bogus'], c.tmp, c.env())
    expect(r.status == 2 and r.err == b'recorderd report: unknown option --bogus (see recorderd '
           b'report --help)\n', 'report --bogus: %d %r' % (r.status, r.err))


def case_reportbkdir(c):
    prog = c.write('app.lua', 'local function f() return 1 end\nprint(f())\n')
    harness.run_ok([c.args.recorderd, 'run', '-q', '-o', c.out, '--', c.args.lua, prog], c.tmp,
                   env=c.env())
    s = c.session('app')
    r = run([c.args.recorderd, 'report', s, '--backend', 'chrome', '-o', 'new/dir'], c.tmp,
            c.env())
    expect(r.status == 0 and os.path.isfile(os.path.join(c.tmp, 'new/dir/trace.chrome.json')),
           'report --backend -o new/dir: %d %r' % (r.status, r.err))
    r = run([c.args.recorderd, 'report', s, '--format', 'chrome', '-o', 'nodir/x.json'], c.tmp,
            c.env())
    expect(r.status == 1 and r.err == b'recorderd report: cannot write nodir/x.json: '
           b'No such file or directory\n', 'report --format chrome -o nodir/x.json: %d %r'
           % (r.status, r.err))
    # an unknown format names every kind report takes, a Lua backend too
    r = run([c.args.recorderd, 'report', s, '--format', 'bogus'], c.tmp, c.env())
    expect(r.status == 2 and r.err.endswith(b', or a backend: chrome, speedscope-evented, '
           b'lua:FILE.lua)\n'), 'report --format bogus: %d %r' % (r.status, r.err))


def case_reportlist(c):
    """report --format LIST: several reports from one replay, each under its
    session file name in the session directory (or -o DIR), equal to the
    report of its own --format; a trace file needs -o DIR; an unknown name
    in the list is refused; a --coverage run's trace writes all but the
    time reports, saying why."""
    prog = c.write('app.lua', 'local function f(i) return i + 1 end\n'
                   'local s = 0\nfor i = 1, 100 do s = f(s) end\nprint(s)\n')
    # every line counted: coverage's reports too, every stack timed
    harness.run_ok([c.args.recorderd, 'run', '-q', '--lines', 'exact', '-o', c.out, '--',
                    c.args.lua, prog], c.tmp, env=c.env())
    s = c.session('app')
    r = run([c.args.recorderd, 'report', s, '--format', 'callgrind,chrome,annotate'], c.tmp,
            c.env())
    expect(r.status == 0 and r.out == b'' and
           r.err == ('recorderd report: wrote callgrind.out, annotate/ in %s\n'
                     'recorderd report: wrote trace.chrome.json in %s\n' % (s, s)).encode() and
           os.path.isfile(os.path.join(s, 'trace.chrome.json')) and
           os.path.isfile(os.path.join(s, 'annotate', 'app.lua.txt')),
           'report --format callgrind,chrome,annotate: %d %r %r' % (r.status, r.err, os.listdir(s)))
    one = run([c.args.recorderd, 'report', s, '--format', 'callgrind'], c.tmp, c.env())
    with open(os.path.join(s, 'callgrind.out'), 'rb') as f:
        expect(one.status == 0 and f.read() == one.out, 'callgrind.out differs from its report')
    r = run([c.args.recorderd, 'report', s, '--format', 'all', '-o', 'all'], c.tmp, c.env())
    files = sorted(os.listdir(os.path.join(c.tmp, 'all')))
    expect(r.status == 0 and files == sorted(ALL_FILES), 'report --format all: %d %r %r'
           % (r.status, r.err, files))
    for fmt, name in (('profile', 'profile.txt'), ('folded', 'stacks.folded'),
                      ('lcov', 'coverage.lcov'), ('html', 'report.html'),
                      ('cobertura', 'coverage.xml')):
        one = run([c.args.recorderd, 'report', s, '--format', fmt], c.tmp, c.env())
        with open(os.path.join(c.tmp, 'all', name), 'rb') as f:
            # coverage.xml's timestamp: the session's start here, the
            # report's own time alone (it reads no session.json)
            same = [re.sub(rb' timestamp="\d+"', b'', x) for x in (f.read(), one.out)]
            expect(one.status == 0 and same[0] == same[1], '%s differs from its report' % name)
    for args, err in ((['trace.ltr', '--format', 'profile,folded'],
                       b'recorderd report: several reports go to a directory: give -o DIR\n'),
                      ([s, '--format', 'profile,bogus'],
                       b'recorderd report: unknown format bogus (profile, '),
                      ([s, '--format', ','], b'recorderd report: --format , names no format\n')):
        r = run([c.args.recorderd, 'report'] + args, s if args[0] == 'trace.ltr' else c.tmp,
                c.env())
        expect(r.status == 2 and r.err.startswith(err), '%r: %d %r' % (args, r.status, r.err))
    r = run([c.args.recorderd, 'report', s, '--format', 'speedscope-evented,'], c.tmp, c.env())
    expect(r.status == 0 and os.path.isfile(os.path.join(s, 'trace.speedscope.json')),
           'a list of a backend only: %d %r' % (r.status, r.err))
    harness.run_ok([c.args.recorderd, 'run', '-q', '--coverage', '-o', 'cov', '--', c.args.lua,
                    prog], c.tmp, env=c.env())
    cov = harness.find_session(os.path.join(c.tmp, 'cov'))  # app, or app.PID (another app.lua)
    r = run([c.args.recorderd, 'report', cov, '--format', 'flamegraph,lcov'], c.tmp, c.env())
    expect(r.status == 0 and b'flamegraph.svg not written: the trace has no time' in r.err and
           b'wrote coverage.lcov in' in r.err, 'a --coverage run: %d %r' % (r.status, r.err))


ALL_FILES = ('profile.txt', 'stacks.folded', 'flamegraph.svg', 'profile.speedscope.json',
             'callgrind.out', 'profile.pb.gz', 'annotate', 'coverage.lcov', 'luacov.stats.out',
             'coverage.txt', 'coverage.xml', 'report.html')


def case_binarytty(c):
    prog = c.write('app.lua', 'local function f() return 1 end\nprint(f())\n')
    harness.run_ok([c.args.recorderd, 'run', '-q', '-o', c.out, '--', c.args.lua, prog], c.tmp,
                   env=c.env())
    cmd = [c.args.recorderd, 'report', c.session('app'), '--format', 'pprof']
    master, slave = pty.openpty()
    try:
        p = subprocess.Popen(cmd, cwd=c.tmp, env=c.env(), stdin=subprocess.DEVNULL, stdout=slave,
                             stderr=subprocess.PIPE, start_new_session=True)
        os.close(slave)
        slave = None
        _, err = p.communicate(timeout=60)
    finally:
        os.close(master)
        if slave is not None:
            os.close(slave)
    expect(p.returncode == 2 and err == b'recorderd report: pprof is binary, not for a '
           b'terminal: give -o FILE (-o profile.pb.gz)\n', 'to a tty: %d %r' % (p.returncode, err))
    r = run(cmd, c.tmp, c.env())
    expect(r.status == 0 and r.out[:2] == b'\x1f\x8b', 'to a pipe: %d %r' % (r.status, r.err))


def case_nodaemon(c):
    for cmd in ('status', 'stop'):
        r = run([c.args.recorderd, cmd, '--socket', c.sock], c.tmp, c.env())
        err = r.err.decode()
        expect(r.status == 1 and err.count('\n') == 1 and 'no daemon answers on %s' % c.sock in err
               and 'start one with recorderd listen' in err, '%s: %d %r' % (cmd, r.status, err))


def case_statusrun(c):
    """recorderd status with no --socket while a `recorderd run` traces:
    run's daemon is private, and status said "no daemon answers" (exit 1);
    it now shows the run's sessions, and forgets the run once it ended."""
    prog = c.write('waitrun.lua', 'local function f() end\nfor _ = 1, 1000 do f() end\n'
                   'io.read()\n')
    p = subprocess.Popen([c.args.recorderd, 'run', '-q', '--out', 'out', '--', c.args.lua, prog],
                         cwd=c.tmp, env=c.env(), stdin=subprocess.PIPE,
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                         start_new_session=True)
    try:
        for _ in range(500):  # until its session traces
            r = run([c.args.recorderd, 'status'], c.tmp, c.env())
            if b'waitrun.lua' in r.out:
                break
            time.sleep(0.02)
        expect(r.status == 0 and b'recorderd run (a daemon of its own):\n' in r.out and
               b'no daemon answers' not in r.err, 'during the run: %d %r %r'
               % (r.status, r.out, r.err))
        p.stdin.write(b'\n')
        p.stdin.close()
        expect(p.wait(timeout=60) == 0, 'the run failed: %r' % p.stderr.read())
    finally:
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()
        p.stderr.close()
    r = run([c.args.recorderd, 'status'], c.tmp, c.env())
    expect(b'waitrun.lua' not in r.out, 'the run ended but is listed: %r' % r.out)
    # runs of other tests may be listed; with none, the message is as before
    expect(r.status == 0 or b'no daemon answers on' in r.err, 'after: %d %r' % (r.status, r.err))


def case_cannotbegin(c):
    """A collector that loaded but could not begin (here a bad
    LUATRACE_RING; a full /dev/shm alike) says why, and run's note that
    nothing was traced no longer denies that it was loaded."""
    prog = c.write('begin.lua', 'print(1)\n')
    r = run([c.args.recorderd, 'run', '--out', 'out', '--', c.args.lua, prog], c.tmp,
            c.env(LUATRACE_RING='900G'))
    err = r.err.decode()
    expect(r.status == 125 and r.out == b'1\n' and 'LUATRACE_RING=900G' in err and
           'or none could begin to trace (its message above says why)' in err,
           '%d %r %r' % (r.status, r.out, err))


def case_shebang(c):
    bindir = os.path.join(c.tmp, 'bin')
    os.mkdir(bindir)
    for name, lua in (('runner53', 'lua5.3'), ('runner51', 'lua5.1')):
        path = os.path.join(bindir, name)
        with open(path, 'w') as f:
            f.write('#!/usr/bin/env %s\nprint("ran")\n' % lua)
        os.chmod(path, 0o755)
    env = c.env(PATH=bindir + os.pathsep + os.environ['PATH'])
    for cmd, shown in (('runner53', bindir + '/runner53'), ('bin/runner53', 'bin/runner53')):
        r = run([c.args.recorderd, 'run', '--out', c.out, '--', cmd, 'a'], c.tmp, env)
        want = ('recorderd: %s runs under lua5.3, as its #! line says: name the interpreter: '
                'recorderd run -- lua5.1 %s ...\n' % (cmd, shown)).encode()
        expect(r.status == 125 and r.out == b'ran\n' and r.err.endswith(want),
               'run -- %s: %d %r %r' % (cmd, r.status, r.out, r.err))
    r = run([c.args.recorderd, 'run', '-q', '--out', c.out, '--', 'runner51'], c.tmp, env)
    expect(r.status == 0 and r.out == b'ran\n' and b'#!' not in r.err,
           'run -- runner51: %d %r %r' % (r.status, r.out, r.err))


def case_notlua(c):
    p = subprocess.Popen(['sleep', '60'], cwd=c.tmp, start_new_session=True)
    try:
        for cmd in (['dump', str(p.pid)], ['top', str(p.pid), '-d', '1'],
                    ['record', str(p.pid), '-d', '1', '-o', c.out]):
            r = run([c.args.recorderd] + cmd, c.tmp, c.env())
            err = r.err.decode()
            expect(r.status == 1 and ('process %d has no Lua 5.1 state that recorderd can find '
                                      '(not a Lua 5.1 or 5.4 program, or its Lua not started '
                                      'yet)' % p.pid) in err,
                   '%s: %d %r' % (cmd, r.status, err))
    finally:
        p.kill()
        p.wait()


def case_globbed(c):
    prog = c.write('app.lua', 'print("ran")\n')
    said = ("recorderd %s: /usr/etc after --exclude /usr/bin: the shell expanded a pattern; "
            "quote it (--exclude '/usr/*')\n")
    glob = ['--exclude', '/usr/bin', '/usr/etc', '/usr/lib']
    r = run([c.args.recorderd, 'run', '-q', '--coverage', '--out', c.out] + glob +
            ['--', c.args.lua, prog], c.tmp, c.env())
    expect(r.status == 2 and r.out == b'' and r.err == (said % 'run').encode(),
           'run: %d %r %r' % (r.status, r.out, r.err))
    r = run([c.args.recorderd, 'run', '-q', '--coverage', '--out', c.out, '--exclude', '/usr/*',
             '--', c.args.lua, prog], c.tmp, c.env())
    expect(r.status == 0 and r.out == b'ran\n', 'run, quoted: %d %r' % (r.status, r.err))
    session = c.session('app')
    r = run([c.args.recorderd, 'report', session, '-f', 'lcov'] + glob, c.tmp, c.env())
    expect(r.status == 2 and r.err == (said % 'report').encode(),
           'report: %d %r' % (r.status, r.err))
    r = run([c.args.recorderd, 'report', '--exclude', '/usr/*', session, '-f', 'lcov'], c.tmp,
            c.env())
    expect(r.status == 0 and b'SF:app.lua' in r.out, 'report, quoted: %d %r' % (r.status, r.err))


def case_otheruser(c):
    if os.geteuid() != 0 or not shutil.which('setpriv'):
        print('skipped: needs root and setpriv')
        raise SystemExit(harness.SKIP)
    prog = c.write('spin.lua', 'io.read()\n')
    os.chmod(c.tmp, 0o755)
    p = subprocess.Popen([c.args.lua, prog], cwd=c.tmp, stdin=subprocess.PIPE,
                         stdout=subprocess.DEVNULL, start_new_session=True)
    try:
        nobody = ['setpriv', '--reuid=nobody', '--regid=nogroup', '--clear-groups']
        for cmd in (['record', str(p.pid), '-d', '1'], ['top', str(p.pid), '-d', '1'],
                    ['dump', str(p.pid)]):
            r = run(nobody + [c.args.recorderd] + cmd, '/', c.env())
            err = r.err.decode()
            expect(r.status == 1 and err.count('\n') == 1 and
                   ('process %d belongs to uid 0' % p.pid) in err and 'ptrace_scope' not in err,
                   '%s as nobody: %d %r' % (cmd, r.status, err))
    finally:
        p.kill()
        p.wait()


if __name__ == '__main__':
    sys.exit(harness.case_main(sys.argv[1:], harness.cases(globals()), 'luatrace-cli-'))
