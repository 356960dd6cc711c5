#!/usr/bin/env python3
"""TOML conformance of tests/toml/toml-decoder, as TAP.

usage: toml-test.py DECODER SUITE_DIR
       toml-test.py DECODER --tomllib FILE...

The first form runs the toml-test suite's TOML 1.0 cases: each valid/X.toml
must decode to the value of valid/X.json (floats compared numerically,
date-times as instants, local dates and times field by field); each
invalid/X.toml must be rejected with exit status 1 (not a crash).

The second compares the decoder with Python's tomllib on each FILE: both
must accept it with the same value, or both reject it."""
import json
import os
import re
import subprocess
import sys
from decimal import Decimal

DT = re.compile(r'^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?([Zz]|[+-]\d{2}:\d{2})?$')
TM = re.compile(r'^(\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?$')


def frac_ns(f):
    # TOML: extra precision is truncated, not rounded.
    return int((f or '').ljust(9, '0')[:9])


def canon(typ, val):
    if typ == 'integer':
        return int(val)
    if typ == 'float':
        v = val.lower().lstrip('+')
        if v in ('nan', '-nan'):
            return 'nan'
        return float(v)
    if typ == 'bool':
        return val
    if typ == 'string':
        return val
    if typ in ('datetime', 'datetime-local'):
        m = DT.match(val)
        if not m:
            raise ValueError('bad %s %r' % (typ, val))
        y, mo, d, h, mi, s = (int(x) for x in m.groups()[:6])
        ns = frac_ns(m.group(7))
        if typ == 'datetime-local':
            return (y, mo, d, h, mi, s, ns)
        import datetime
        off = m.group(8)
        if off is None:
            raise ValueError('datetime without offset %r' % val)
        mins = 0 if off in 'Zz' else (1 if off[0] == '+' else -1) * (int(off[1:3]) * 60 + int(off[4:6]))
        t = datetime.datetime(y, mo, d, h, mi, s, tzinfo=datetime.timezone(datetime.timedelta(minutes=mins)))
        return (int(t.timestamp()), ns)
    if typ == 'date-local':
        return tuple(int(x) for x in val.split('-'))
    if typ == 'time-local':
        m = TM.match(val)
        return (int(m.group(1)), int(m.group(2)), int(m.group(3)), frac_ns(m.group(4)))
    raise ValueError('unknown type %r' % typ)


def norm(v):
    if isinstance(v, dict):
        if set(v) == {'type', 'value'} and isinstance(v['type'], str) and isinstance(v['value'], str):
            return ('scalar', v['type'], canon(v['type'], v['value']))
        return {k: norm(x) for k, x in v.items()}
    if isinstance(v, list):
        return [norm(x) for x in v]
    raise ValueError('untagged value %r' % (v,))


def tag(v):
    """tomllib's value in the decoder's tagged form."""
    import datetime
    if isinstance(v, dict):
        return {k: tag(x) for k, x in v.items()}
    if isinstance(v, list):
        return [tag(x) for x in v]
    if isinstance(v, bool):
        return {'type': 'bool', 'value': 'true' if v else 'false'}
    if isinstance(v, int):
        return {'type': 'integer', 'value': str(v)}
    if isinstance(v, float):
        return {'type': 'float', 'value': repr(v)}
    if isinstance(v, str):
        return {'type': 'string', 'value': v}
    if isinstance(v, datetime.datetime):
        return {'type': 'datetime' if v.tzinfo else 'datetime-local', 'value': v.isoformat()}
    if isinstance(v, datetime.date):
        return {'type': 'date-local', 'value': v.isoformat()}
    if isinstance(v, datetime.time):
        return {'type': 'time-local', 'value': v.isoformat()}
    raise ValueError('unexpected %r' % (v,))


def against_tomllib(decoder, files):
    import tomllib
    print('1..%d' % len(files))
    failed = 0
    for n, path in enumerate(files, 1):
        with open(path, 'rb') as f:
            data = f.read()
        try:
            want = norm(tag(tomllib.loads(data.decode('utf-8-sig'))))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as e:
            want = 'rejected (%s)' % e
        p = subprocess.run([decoder], input=data, capture_output=True)
        if p.returncode == 0:
            got = norm(json.loads(p.stdout))
        elif p.returncode == 1:
            got = 'rejected (%s)' % p.stderr.decode(errors='replace').strip()
        else:
            got = 'exit status %d' % p.returncode
        same = got == want or (isinstance(got, str) and isinstance(want, str) and got.startswith('rejected')
                               and want.startswith('rejected'))
        name = os.path.basename(path)
        if same:
            print('ok %d - %s: %s' % (n, name, 'both reject' if isinstance(got, str) else 'same value as tomllib'))
        else:
            failed += 1
            print('not ok %d - %s' % (n, name))
            print('# decoder: %s' % (got,))
            print('# tomllib: %s' % (want,))
    return 1 if failed else 0


def main():
    if len(sys.argv) > 2 and sys.argv[2] == '--tomllib':
        return against_tomllib(sys.argv[1], sys.argv[3:])
    decoder, suite = sys.argv[1], sys.argv[2]
    with open(os.path.join(suite, 'files-toml-1.0.0')) as f:
        cases = [l.strip() for l in f if l.strip().endswith('.toml')]
    print('1..%d' % len(cases))
    failed = 0
    for n, case in enumerate(cases, 1):
        path = os.path.join(suite, case)
        with open(path, 'rb') as f:
            data = f.read()
        p = subprocess.run([decoder], input=data, capture_output=True)
        why = None
        if case.startswith('valid/'):
            if p.returncode != 0:
                why = 'rejected: ' + p.stderr.decode(errors='replace').strip()
            else:
                with open(path[:-5] + '.json') as f:
                    want = norm(json.load(f))
                try:
                    got = norm(json.loads(p.stdout))
                except ValueError as e:
                    got = None
                    why = 'bad decoder output: %s' % e
                if why is None and got != want:
                    why = 'got %s\n# want %s' % (p.stdout.decode(errors='replace').strip(), json.dumps(json.load(open(path[:-5] + '.json'))))
        else:
            if p.returncode == 0:
                why = 'accepted: ' + p.stdout.decode(errors='replace').strip()[:200]
            elif p.returncode != 1:
                why = 'exit status %d (crash?): %s' % (p.returncode, p.stderr.decode(errors='replace').strip())
        if why:
            failed += 1
            print('not ok %d - %s' % (n, case))
            for line in why.splitlines():
                print('# ' + line)
        else:
            print('ok %d - %s' % (n, case))
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
