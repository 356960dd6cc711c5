#!/usr/bin/env python3
"""Read wss page traces (docs/trace-format.md) for the shell tests: an
independent reader of the format, so that a test checks the writer against
the document rather than against itself.

  trace.py dump FILE        one JSON line per record: {"type":"I","seq",
                            "t_ns","level","sets","pages":[[page,written,
                            tid],...],"events":[["gone",page,n] or
                            ["moved",from,to,n],...]} or {"type":"E","reason","last",
                            "errno"}; then {"type":"status","records":N,
                            "end":true|false,"cut":BYTES|null}
  trace.py check FILE       exit 0 when every record is whole and checks,
                            1 with the byte offset of the first that does
                            not (a record cut short at the end is not an
                            error: the status line says "cut")
"""
import json
import struct
import sys
import zlib


class Bad(Exception):
    pass


def varint(b, i):
    v = shift = 0
    for n in range(10):
        if i >= len(b):
            raise EOFError
        c = b[i]
        i += 1
        v |= (c & 0x7F) << shift
        shift += 7
        if not c & 0x80:
            return v, i
    raise Bad("varint longer than 10 bytes")


def records(data):
    """Yield (offset, type, payload); a record cut short ends the walk with
    ("cut", offset)."""
    if len(data) < 16 or data[:8] != b"WSSTRACE":
        raise Bad("byte 0: not a wss trace")
    version, shift = struct.unpack_from("<II", data, 8)
    if version != 1 or shift != 12:
        raise Bad("byte 8: version %d, page shift %d" % (version, shift))
    i = 16
    while i < len(data):
        start = i
        t = data[i]
        try:
            n, j = varint(data, i + 1)
        except EOFError:
            yield ("cut", start, None)
            return
        if j + n + 4 > len(data):
            yield ("cut", start, None)
            return
        (crc,) = struct.unpack_from("<I", data, j + n)
        if zlib.crc32(data[start:j + n]) != crc:
            raise Bad("byte %d: check does not match" % start)
        if t not in (0x49, 0x45):
            raise Bad("byte %d: unknown record type 0x%02x" % (start, t))
        yield (chr(t), start, data[j:j + n])
        i = j + n + 4


def interval(p, at):
    seq, i = varint(p, 0)
    t_ns, i = varint(p, i)
    level, sets = p[i], p[i + 1]
    nruns, i = varint(p, i + 2)
    pages = []
    prev_stop = None
    kind = None
    for r in range(nruns):
        gap, i = varint(p, i)
        len1, i = varint(p, i)
        k, i = varint(p, i)
        if k == 0:
            if kind is None:
                raise Bad("byte %d: the first run says 'as before'" % at)
        else:
            kind = k - 1
        start = gap if prev_stop is None else prev_stop + gap
        if prev_stop is not None and gap == 0 and k == 0:
            raise Bad("byte %d: a run that continues the one before" % at)
        for pg in range(start, start + len1 + 1):
            pages.append([pg, kind & 1, kind >> 1])
        prev_stop = start + len1 + 1
    nev, i = varint(p, i)
    events = []
    for e in range(nev):
        t = p[i]
        i += 1
        if t == 1:
            a, i = varint(p, i)
            n, i = varint(p, i)
            events.append(["gone", a, n])
        elif t == 2:
            a, i = varint(p, i)
            b, i = varint(p, i)
            n, i = varint(p, i)
            events.append(["moved", a, b, n])
        else:
            raise Bad("byte %d: unknown event type %d" % (at, t))
    if i != len(p):
        raise Bad("byte %d: %d bytes left after the events" % (at, len(p) - i))
    return {"type": "I", "seq": seq, "t_ns": t_ns, "level": level, "sets": sets, "pages": pages, "events": events}


def end(p):
    reason, i = varint(p, 0)
    last, i = varint(p, i)
    e = {"type": "E", "reason": reason, "last": last}
    if reason == 3:
        e["errno"], i = varint(p, i)
    return e


def main():
    cmd, path = sys.argv[1], sys.argv[2]
    data = open(path, "rb").read()
    out = []
    cut = None
    ended = False
    try:
        for t, at, p in records(data):
            if t == "cut":
                cut = at
                break
            if ended:
                raise Bad("byte %d: a record after the end record" % at)
            rec = interval(p, at) if t == "I" else end(p)
            ended = t == "E"
            out.append(rec)
    except Bad as e:
        print("%s: %s" % (path, e), file=sys.stderr)
        sys.exit(1)
    if cmd == "check":
        return
    for r in out:
        print(json.dumps(r))
    print(json.dumps({"type": "status", "records": sum(r["type"] == "I" for r in out), "end": ended, "cut": cut}))


if __name__ == "__main__":
    main()
