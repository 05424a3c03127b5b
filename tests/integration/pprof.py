#!/usr/bin/env python3
"""Check recorderd's profile.pb.gz with `go tool pprof` (Debian golang-go).

  pprof.py --recorderd PATH [--lua lua5.1] PROGRAM...

Runs each Lua PROGRAM under `recorderd run` (from its own directory, in a
temporary output directory, always removed), then:
  - `go tool pprof -raw` reads the profile: sample types time/nanoseconds
    (the default) and lines/count; the time values add up to the session's
    traced_ns (profile.txt's traced time) within 1 ns, the line values to
    the line-weighted folded stacks;
  - `-top -sample_index=time` (every node kept, in ns) gives each function
    the self time of profile.txt (functions of the same label added up),
    within profile.txt's rounding, and the same top function;
  - `-traces` lists one stack per sample, each with a known function;
  - `recorderd report S --format pprof -o F` gives the same samples.
Go needs a writable HOME and GOCACHE: both go to the temporary directory.
Exit status: 0 pass, 1 fail, 77 skipped (no recorderd, no go).
"""

import argparse
import json
import os
import re
import shutil
import signal
import sys
import tempfile

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import corpus  # noqa: E402

TOP_ROW = re.compile(r'^\s*(\d+)ns\s+[\d.]+%\s+[\d.]+%\s+(\d+)ns\s+[\d.]+%\s+(\S.*)$')
PROFILE_ROW = re.compile(r'^\s*\d+\s+([\d.]+)\s+[\d.]+\s+[\d.]+\s+[\d.]+\s+[\d.]+\s+(\S.*)$')


def check(cond, msg):
    if not cond:
        raise corpus.Failure(msg)


def run_ok(cmd, cwd, env=None):
    res = corpus.run(cmd, cwd, env or corpus.base_env(), 180)
    check(res.status == 0, '%s exited with %s:\n%s'
          % (' '.join(cmd), res.status, corpus.show_bytes(res.out + res.err)))
    return res.out.decode('utf-8', 'replace')


def go_env(tmp):
    env = corpus.base_env()
    env['HOME'] = tmp
    env['GOCACHE'] = os.path.join(tmp, 'gocache')
    env['GOPATH'] = os.path.join(tmp, 'gopath')
    env.pop('PPROF_TMPDIR', None)
    return env


def pprof(args, tmp, path, *opts):
    return run_ok([args.go, 'tool', 'pprof'] + list(opts) + [path], tmp, go_env(tmp))


def read_raw(text):
    """Sample types, then [(time, lines, location ids)] of `pprof -raw`."""
    head, _, rest = text.partition('\nSamples:\n')
    check(rest, 'no Samples: in pprof -raw output:\n' + text[:600])
    lines = rest.split('\n')
    types = lines[0].split()
    samples = []
    for line in lines[1:]:
        m = re.match(r'^\s+(\d+)\s+(\d+):((?: \d+)+) ?$', line)
        if not m:
            break
        samples.append((int(m.group(1)), int(m.group(2)), m.group(3).split()))
    return types, samples


def read_profile_txt(path):
    """{label: self ms} (labels alike added up) of profile.txt's self table."""
    selfs, in_self = {}, False
    with open(path) as f:
        for line in f:
            if line.startswith('By self time'):
                in_self = True
            elif line.startswith('By total time'):
                break
            m = PROFILE_ROW.match(line) if in_self else None
            if m:
                label = m.group(2)
                selfs[label] = selfs.get(label, 0.0) + float(m.group(1))
    check(selfs, 'no functions in ' + path)
    return selfs


def folded_total(args, session, tmp):
    path = os.path.join(tmp, 'lines.folded')
    run_ok([args.recorderd, 'report', session, '--format', 'folded', '--weight', 'lines',
            '-o', path], tmp)
    with open(path) as f:
        return sum(int(line.rsplit(' ', 1)[1]) for line in f if line.strip())


def check_top(args, tmp, pb, selfs, total):
    text = pprof(args, tmp, pb, '-top', '-sample_index=time', '-unit=ns', '-nodecount=100000',
                 '-nodefraction=0', '-edgefraction=0')
    check('Type: time' in text, 'pprof -top: no "Type: time":\n' + text[:600])
    check('Total samples = %dns' % total in text, 'pprof total is not %d ns:\n%s'
          % (total, text[:600]))
    flat = {}
    for line in text.split('\n'):
        m = TOP_ROW.match(line)
        if m:
            flat[m.group(3)] = int(m.group(1))
    check(sum(flat.values()) == total, 'flat times add up to %d, not %d'
          % (sum(flat.values()), total))
    for label, ms in selfs.items():
        got = flat.get(label, 0) / 1e6
        # profile.txt prints each function's self to 0.001 ms
        check(abs(got - ms) <= 0.0006 * (1 + label.startswith('?')),
              '%s: self %.6f ms in pprof, %.3f in profile.txt' % (label, got, ms))
    rest = set(flat) - set(selfs) - {'(no frame)'}
    check(not rest, 'functions in pprof but not in profile.txt: %r' % sorted(rest))
    top_p = max(selfs, key=lambda k: selfs[k])
    top_g = max(flat, key=lambda k: flat[k])
    check(top_p == top_g or abs(flat[top_g] / 1e6 - selfs[top_p]) < 0.001,
          'top function %r in pprof, %r in profile.txt' % (top_g, top_p))
    return top_g


def one(args, prog, tmp):
    path = os.path.abspath(prog)
    name = os.path.splitext(os.path.basename(path))[0]
    outdir = os.path.join(tmp, 'out-' + name)
    os.mkdir(outdir)
    run_ok([args.recorderd, 'run', '--quiet', '--out', outdir, '--', args.lua,
            os.path.basename(path)], os.path.dirname(path))
    session = corpus.find_session(outdir)
    pb = os.path.join(session, 'profile.pb.gz')
    with open(pb, 'rb') as f:
        check(f.read(2) == b'\x1f\x8b', 'profile.pb.gz is not gzipped')
    with open(os.path.join(session, 'session.json')) as f:
        traced = json.load(f)['traced_ns']
    raw = pprof(args, tmp, pb, '-raw')
    types, samples = read_raw(raw)
    check(types == ['time/nanoseconds[dflt]', 'lines/count'], 'sample types %r' % types)
    total = sum(s[0] for s in samples)
    check(abs(total - traced) <= 1, 'samples add up to %d ns, traced_ns is %d' % (total, traced))
    lines = sum(s[1] for s in samples)
    check(lines == folded_total(args, session, tmp),
          'line events %d differ from the folded stacks' % lines)
    check('Duration: ' in raw and 'PeriodType: time nanoseconds' in raw and 'Time: ' in raw,
          'no time, duration or period type:\n' + raw[:400])
    top = check_top(args, tmp, pb, read_profile_txt(os.path.join(session, 'profile.txt')),
                    total)
    traces = pprof(args, tmp, pb, '-traces')
    blocks = [b for b in traces.split('-----------+') if re.search(r'^\s+\d', b, re.M)]
    check(len(blocks) == len(samples), '%d traces, %d samples' % (len(blocks), len(samples)))
    again = os.path.join(tmp, name + '.pb.gz')
    run_ok([args.recorderd, 'report', session, '--format', 'pprof', '-o', again], tmp)
    check(read_raw(pprof(args, tmp, again, '-raw'))[1] == samples,
          'report --format pprof gives other samples')
    print('%s: %d samples, %d ns, %d line events, top %s' % (name, len(samples), total, lines,
                                                             top))


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    p.add_argument('--recorderd', required=True)
    p.add_argument('--lua', default='lua5.1')
    p.add_argument('programs', nargs='+')
    args = p.parse_args(argv)
    if not (os.path.isfile(args.recorderd) and os.access(args.recorderd, os.X_OK)):
        print('SKIP: no recorderd at %s' % args.recorderd)
        return corpus.SKIP
    args.go = shutil.which('go') or shutil.which('go', path='/usr/lib/go/bin')
    if not args.go:
        print('SKIP: go not installed (Debian golang-go): go tool pprof not available')
        return corpus.SKIP
    args.recorderd = os.path.abspath(args.recorderd)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
    tmp = tempfile.mkdtemp(prefix='luatrace-pprof-')
    try:
        for prog in args.programs:
            one(args, prog, tmp)
    except (corpus.Failure, ValueError, KeyError) as e:
        print('FAIL: %s: %s' % (type(e).__name__, e))
        return 1
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
