#!/usr/bin/env python3
"""Folded stacks: read reftrace.lua output and folded files, write folded.

reftrace.lua writes (see tests/lua/README.md):
  N <id> <parent> <label>   stack node: stack <parent> followed by <label>
  L <id>                    one line event with full stack <id>
  C <id>                    one call, the called function is the leaf of <id>
  X <text>                  the tracer met something it cannot handle

In memory a stack is a *key*: its frames joined by ';' with each run of
one repeated frame written once as 'frame\\x01COUNT' (a 3000-deep recursion
would otherwise cost megabytes per stack). compress() and expand() convert.

Usage as a script: reftrace_post.py OUT.txt LINES.folded CALLS.folded
"""

import sys

RUN = '\x01'


class RefTraceError(Exception):
    pass


def _run(label, count):
    return label if count == 1 else '%s%s%d' % (label, RUN, count)


def compress(stack):
    """Key of a folded stack string 'f1;f2;...'."""
    runs, prev, count = [], None, 0
    for frame in stack.split(';'):
        if frame == prev:
            count += 1
            continue
        if prev is not None:
            runs.append(_run(prev, count))
        prev, count = frame, 1
    runs.append(_run(prev, count))
    return ';'.join(runs)


def runs_of(key):
    """(label, count) pairs of a key, root first."""
    for run in key.split(';'):
        label, sep, count = run.partition(RUN)
        yield label, int(count) if sep else 1


def expand(key):
    """The folded stack string of a key."""
    return ';'.join(';'.join([label] * count) for label, count in runs_of(key))


# recorderd's path writers print a stack deeper than PATH_MAX frames as its
# PATH_ROOT root-most frames, one CUT frame and the rest of PATH_MAX at the
# leaf (recorderd/core/rd_path.h)
PATH_MAX, PATH_ROOT, CUT = 1000, 100, '[...]'


def cut_deep(d):
    """d (keys -> counts) with every stack printed as recorderd prints it:
    deep ones cut in the middle, those then alike added up."""
    out = {}
    for key, count in d.items():
        frames = expand(key).split(';')
        if len(frames) > PATH_MAX:
            frames = (frames[:PATH_ROOT] + [CUT]
                      + frames[len(frames) - (PATH_MAX - PATH_ROOT - 1):])
            key = compress(';'.join(frames))
        out[key] = out.get(key, 0) + count
    return out


def relabel(d, fn):
    """d (keys -> counts) with each frame's label mapped through fn (as
    recorderd shows labels), stacks then alike added up."""
    out = {}
    for key, count in d.items():
        key = compress(';'.join(fn(label) for label in expand(key).split(';')))
        out[key] = out.get(key, 0) + count
    return out


def leaf(key):
    """The label of the leaf frame of a key."""
    return key.rsplit(';', 1)[-1].partition(RUN)[0]


def parse(path):
    """Return (lines, calls): dicts mapping stack keys to event counts."""
    nodes = {0: None}  # id -> (head key, last label, its count) or None
    keys = {}          # id -> key, for ids that were counted
    lines, calls = {}, {}

    def key_of(ident):
        key = keys.get(ident)
        if key is None:
            head, label, count = nodes[ident]
            run = _run(label, count)
            key = run if head is None else head + ';' + run
            keys[ident] = key
        return key

    with open(path, 'r', encoding='utf-8', errors='surrogateescape') as f:
        data = f.read()
    if data and not data.endswith('\n'):
        raise RefTraceError('%s: truncated last line' % path)
    for n, line in enumerate(data.splitlines(), 1):
        kind, _, rest = line.partition(' ')
        if kind == 'N':
            ident, parent, label = rest.split(' ', 2)
            up = nodes[int(parent)]
            if up is None:
                nodes[int(ident)] = (None, label, 1)
            elif up[1] == label:
                nodes[int(ident)] = (up[0], label, up[2] + 1)
            else:
                nodes[int(ident)] = (key_of(int(parent)), label, 1)
        elif kind in ('L', 'C'):
            key = key_of(int(rest))
            target = lines if kind == 'L' else calls
            target[key] = target.get(key, 0) + 1
        elif kind == 'X':
            raise RefTraceError('%s:%d: reftrace: %s' % (path, n, rest))
        else:
            raise RefTraceError('%s:%d: bad line %r' % (path, n, line[:80]))
    return lines, calls


def write_folded(d, path):
    """Write a dict of keys -> counts as a folded file."""
    with open(path, 'w', encoding='utf-8', errors='surrogateescape') as f:
        for key in sorted(d):
            f.write('%s %d\n' % (expand(key), d[key]))


def read_folded(path):
    """Read a folded file ('frame;frame;... COUNT' lines) into a dict of
    keys -> counts."""
    d = {}
    with open(path, 'r', encoding='utf-8', errors='surrogateescape') as f:
        for n, line in enumerate(f, 1):
            line = line.rstrip('\n')
            if not line:
                continue
            stack, sep, count = line.rpartition(' ')
            if not sep or not stack or not count.isdigit():
                raise ValueError('%s:%d: not a folded line: %r'
                                 % (path, n, line[:80]))
            key = compress(stack)
            d[key] = d.get(key, 0) + int(count)
    return d


def main(argv):
    if len(argv) != 4:
        sys.stderr.write('usage: %s OUT.txt LINES.folded CALLS.folded\n'
                         % argv[0])
        return 2
    lines, calls = parse(argv[1])
    write_folded(lines, argv[2])
    write_folded(calls, argv[3])
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
