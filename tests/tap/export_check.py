#!/usr/bin/env python3
"""Checks `wss export` output against the profile it came from
(tests/integration/export.sh).  Each command exits non-zero with a line
saying what differs.

  export_check.py csv PROFILE CSV      every sample and thread row equals the JSON records
  export_check.py trace PROFILE JSON   trace-event JSON: documented fields per phase,
                                       counters equal to the samples, instants = peaks
  export_check.py pprof PROFILE PB.GZ  profile.proto decoded by hand: string table,
                                       ids, mappings, values; prints "LEAF PAGES" per sample
"""
import csv
import gzip
import json
import sys

COLUMNS = ["scope", "seq", "t_ns", "cpu_ns", "tid", "data_pages", "read_pages", "write_pages", "faults", "rate",
           "data_lo", "data_hi", "read_lo", "read_hi", "write_lo", "write_hi", "final", "lower_bound"]
# The kinds of memory, in the order of their columns (one for each kind some
# sample has, last).
KINDS = ["heap", "anon", "data", "shared", "file", "stack"]


def kinds_of(recs):
    seen = set()
    for r in recs:
        if r.get("type") == "sample":
            seen |= set(r.get("kinds", {}))
    return [k for k in KINDS if k in seen]


def records(path):
    out = []
    with open(path) as f:
        for line in f:
            try:
                out.append(json.loads(line))
            except ValueError:
                break  # a last line cut short
    return out


def fail(msg):
    raise SystemExit("# " + msg)


def opt(v):
    return "" if v is None else str(v)


def num(v):
    # The shortest form of a number (integers without ".0").
    return "" if v is None else str(int(v)) if float(v) == int(v) else repr(float(v))


def expected_rows(recs):
    rows = []
    kinds = kinds_of(recs)
    for r in recs:
        if r.get("type") != "sample":
            continue
        ci = r.get("ci", {})
        common = [str(r["seq"]), str(r["t_ns"])]
        tail = ["1" if r.get("final") else "0", "1" if r.get("lower_bound") else "0"]

        def cis(c, keys):
            out = []
            for k in ("data", "read", "write"):
                lo, hi = c[k] if k in keys and k in c else (None, None)
                out += [num(lo), num(hi)]
            return out

        rows.append(["process"] + common + [opt(r.get("cpu_ns")), "", str(r["data_pages"]), opt(r.get("read_pages")),
                     opt(r.get("write_pages")), opt(r.get("faults")), str(r.get("rate", 1))]
                    + cis(ci, ("data", "read", "write")) + tail
                    + [opt(r.get("kinds", {}).get(k, {}).get("data")) for k in kinds])
        for t in r["threads"]:
            rows.append(["thread"] + common + [opt(t.get("cpu_ns")), str(t["tid"]), str(t["data_pages"]),
                         opt(t.get("read_pages")), opt(t.get("write_pages")), str(t.get("faults", 0)),
                         str(r.get("rate", 1))] + cis(t.get("ci", {}), ("data", "write")) + tail + [""] * len(kinds))
    return rows


def check_csv(profile, path):
    with open(path, newline="") as f:
        got = list(csv.reader(f))
    recs = records(profile)
    if not got or got[0] != COLUMNS + ["kind_" + k + "_pages" for k in kinds_of(recs)]:
        fail("header %r" % (got[:1],))
    want = expected_rows(recs)
    if len(got) - 1 != len(want):
        fail("%d rows, want %d" % (len(got) - 1, len(want)))
    for i, (g, w) in enumerate(zip(got[1:], want)):
        if g != w:
            fail("row %d: %r, want %r" % (i + 2, g, w))
    print("%d rows" % len(want))


def check_trace(profile, path):
    recs = records(profile)
    h = recs[0]
    doc = json.load(open(path))
    if not isinstance(doc, dict) or not isinstance(doc.get("traceEvents"), list) or doc.get("displayTimeUnit") != "ms":
        fail("not a JSON Object Format trace with traceEvents and displayTimeUnit ms")
    number = (int, float)
    counters, instants, names = {}, [], {}
    for e in doc["traceEvents"]:
        ph = e.get("ph")
        # Fields every phase has (the Trace Event Format's common ones).
        if not (isinstance(e.get("name"), str) and isinstance(e.get("pid"), int) and isinstance(e.get("tid"), int)
                and isinstance(e.get("args"), dict) and isinstance(e.get("ts"), number)):
            fail("event without name/pid/tid/ts/args of the right types: %r" % e)
        if e["pid"] != h["pid"]:
            fail("event of another pid: %r" % e)
        if ph == "C":
            if not e["args"] or not all(isinstance(v, number) for v in e["args"].values()):
                fail("counter whose args are not numbers: %r" % e)
            counters.setdefault(e["name"], []).append((e["ts"], e["tid"], e["args"]))
        elif ph == "M":
            if e["name"] not in ("process_name", "thread_name") or not isinstance(e["args"].get("name"), str):
                fail("metadata event %r" % e)
            names[(e["name"], e["tid"])] = e["args"]["name"]
        elif ph == "i":
            if e.get("s") not in ("g", "p", "t"):
                fail("instant event without scope s: %r" % e)
            instants.append(e)
        else:
            fail("unexpected phase %r" % ph)
    if ("process_name", h["pid"]) not in names:
        fail("no process_name")
    us = lambda ns: round(ns / 1000, 3)
    samples = [r for r in recs if r.get("type") == "sample"]
    for series in ("data", "read", "write"):
        want = [(us(r["t_ns"]), h["pid"], {"pages": r[series + "_pages"]}) for r in samples if series + "_pages" in r]
        if counters.get(series, []) != want:
            fail("process counter %s differs from the samples" % series)
    tids = []
    for r in samples:
        for t in r["threads"]:
            if t["tid"] not in tids:
                tids.append(t["tid"])
    for tid in tids:
        if ("thread_name", tid) not in names:
            fail("no thread_name for %d" % tid)
        # Its data counter: its pages at each sample it is in, 0 at the
        # first sample after it leaves.
        want, present = [], False
        for r in samples:
            mine = [t for t in r["threads"] if t["tid"] == tid]
            if mine:
                want.append((us(r["t_ns"]), tid, {"pages": mine[0]["data_pages"]}))
            elif present:
                want.append((us(r["t_ns"]), tid, {"pages": 0}))
            present = bool(mine)
        if counters.get("thread %d data" % tid) != want:
            fail("thread %d's data counter %r, want %r" % (tid, counters.get("thread %d data" % tid), want))
    peaks = sorted((r for r in recs if r.get("type") == "peak"), key=lambda r: r["seq"])
    got = [(e["args"]["seq"], e["args"]["series"], e["args"]["value"], e["ts"], e["s"]) for e in instants]
    t_of = {r["seq"]: us(r["t_ns"]) for r in samples}
    want = [(p["seq"], p["series"], p["value"], t_of[p["seq"]], "t" if p["series"].startswith("thread:") else "p")
            for p in peaks]
    if got != want:
        fail("instant events %r, want the peaks %r" % (got, want))
    for e, p in zip(instants, peaks):
        if [s["pages"] for s in e["args"]["sites"]] != [s["pages"] for s in p.get("sites", [])]:
            fail("peak %d's sites differ" % p["seq"])
    print("%d counters, %d threads, %d peaks" % (len(counters), len(tids), len(instants)))
    for e in instants:  # the top site's innermost frame, for the shell
        s = e["args"]["sites"]
        print("peak", e["args"]["seq"], s[0]["frames"][0] if s and s[0]["frames"] else "-")


# ---- protocol buffers, decoded by hand ----

def varint(b, i):
    v = shift = 0
    while True:
        c = b[i]
        i += 1
        v |= (c & 0x7F) << shift
        shift += 7
        if c < 0x80:
            return v, i


def fields(b):
    """(field, wire type, value) of a message: ints for varints, bytes for
    length-delimited fields."""
    i, out = 0, []
    while i < len(b):
        key, i = varint(b, i)
        f, wt = key >> 3, key & 7
        if wt == 0:
            v, i = varint(b, i)
        elif wt == 2:
            n, i = varint(b, i)
            v, i = b[i:i + n], i + n
        else:
            fail("wire type %d in field %d" % (wt, f))
        out.append((f, wt, v))
    return out


def ints(fs, f):
    """A repeated integer field, packed or not."""
    out = []
    for g, wt, v in fs:
        if g != f:
            continue
        if wt == 0:
            out.append(v)
        else:
            i = 0
            while i < len(v):
                x, i = varint(v, i)
                out.append(x)
    return out


def one(fs, f, default=0):
    vals = [v for g, _, v in fs if g == f]
    return vals[-1] if vals else default


def msgs(fs, f):
    return [fields(v) for g, _, v in fs if g == f]


def check_pprof(profile, path):
    recs = records(profile)
    h = recs[0]
    raw = open(path, "rb").read()
    if raw[:2] != b"\x1f\x8b":
        fail("not gzipped")
    p = fields(gzip.decompress(raw))
    strs = [v.decode() for g, _, v in p if g == 6]
    if not strs or strs[0] != "":
        fail("string_table[0] is not \"\"")
    s = lambda i: strs[i] if 0 <= i < len(strs) else fail("string index %d out of range" % i)
    types = [(s(one(m, 1)), s(one(m, 2))) for m in msgs(p, 1)]
    alloc = [("live", "pages"), ("working_set", "pages"), ("idle", "pages")]
    first = [("first_touches", "pages"), ("first_touch_bytes", "bytes")]
    if types not in (first, first + alloc) or s(one(p, 14)) != "first_touches":
        fail("sample types %r, default %r" % (types, s(one(p, 14))))
    pt = msgs(p, 11)
    if len(pt) != 1 or (s(one(pt[0], 1)), s(one(pt[0], 2))) != ("pages", "pages"):
        fail("period_type")
    summary = [r for r in recs if r.get("type") == "summary"]
    if one(p, 9) != h["start_unix_ns"] or (summary and one(p, 10) != summary[0]["duration_ns"]):
        fail("time_nanos %d / duration_nanos %d" % (one(p, 9), one(p, 10)))
    mods = [r for r in recs if r.get("type") == "module"]
    maps = {one(m, 1): m for m in msgs(p, 3)}
    if sorted(maps) != list(range(1, len(mods) + 1)):
        fail("mapping ids %r for %d modules" % (sorted(maps), len(mods)))
    for k, mod in enumerate(mods):
        m = maps[k + 1]
        if (s(one(m, 5)), s(one(m, 6)), one(m, 2), one(m, 3)) != \
                (mod["path"], mod.get("build_id") or "", int(mod["start"], 16), int(mod["end"], 16)):
            fail("mapping %d does not match module %r" % (k + 1, mod))
    funcs = {one(m, 1): s(one(m, 2)) for m in msgs(p, 5)}
    locs = {}
    for m in msgs(p, 4):
        lines = msgs(m, 4)
        if not lines or any(one(ln, 1) not in funcs for ln in lines) or (one(m, 2) and one(m, 2) not in maps):
            fail("location %d refers to a missing function or mapping" % one(m, 1))
        locs[one(m, 1)] = [funcs[one(ln, 1)] for ln in lines]
    if 0 in locs or 0 in funcs:
        fail("an id 0")
    total = 0
    for m in msgs(p, 2):
        ids, vals = ints(m, 1), ints(m, 2)
        if not ids or any(i not in locs for i in ids) or len(vals) != len(types) or vals[1] != vals[0] * h["page_size"]:
            fail("sample %r %r" % (ids, vals))
        if len(vals) > 2 and vals[0] == 0:
            continue  # an allocation site's
        total += vals[0]
        print(locs[ids[0]][0], vals[0])
    sites = [r for r in recs if r.get("type") == "sites"]
    if sites:
        want = sum(x["pages"] for x in sites[0]["sites"]) + sites[0]["other_pages"]
    else:
        # The peaks' sites, once per interval (a data peak and a thread's
        # in the same interval have the same sites).
        first = {}
        for r in recs:
            if r.get("type") == "peak":
                first.setdefault(r["seq"], r)
        want = sum(x["pages"] for r in first.values() for x in r.get("sites", []))
    if total != want:
        fail("samples hold %d pages, the profile's sites %d" % (total, want))


if __name__ == "__main__":
    cmds = {"csv": check_csv, "trace": check_trace, "pprof": check_pprof}
    if len(sys.argv) != 4 or sys.argv[1] not in cmds:
        raise SystemExit(__doc__)
    cmds[sys.argv[1]](sys.argv[2], sys.argv[3])
