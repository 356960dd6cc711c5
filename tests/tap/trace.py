#!/usr/bin/env python3
"""Synthetic page traces and their profiles for the analyses' tests, written
byte for byte from docs/trace-format.md (independently of cli/model/trace.c), and
the numbers the analyses must give, computed here the plain way.

  trace.py gen KIND ARGS... > SPEC.json   a workload (see gen() below)
  trace.py write SPEC.json OUT.trace      the trace's bytes
  trace.py pair NAME KIND ARGS...         gen, write and profile at once:
                                          NAME.json, NAME.trace and
                                          NAME.jsonl (window 1)
  trace.py profile SPEC.json OUT.jsonl NAME [WINDOW]
                                          a profile whose header names trace
                                          NAME (omit: "-" for none); samples
                                          from the spec for window WINDOW (1)
  trace.py offsets FILE                   "offset type length" per record
  trace.py window SPEC.json N             "seq data x rate" per interval: the
                                          working set for a window of N
  trace.py lru SPEC.json FRAMES           "faults hits" of LRU over the
                                          reference string (address order
                                          within an interval)
  trace.py member PN LEVEL SEED           1 if page PN is a member, else 0
  trace.py hostile LOG2 OUT.trace OUT.jsonl NAME
                                          a pair that agrees on a run of
                                          2^LOG2 pages in each of three
                                          intervals, and a move and an
                                          unmap of 2^LOG2 pages

A spec: {"page_shift":12, "seed":"0x..", "tracked":N, "intervals":[{"seq":1,
"t_ns":..,"level":0,"sets":1,"pages":[[pn, written, tid], ...]}, ...],
"end":{"reason":1,"last":K} or null}.
"""
import json
import struct
import sys
import zlib

M64 = (1 << 64) - 1
GOLDEN = 0x9e3779b97f4a7c15


# ---- sampling membership, as docs/profile-format.md describes it ----
def mix64(z):
    z = ((z ^ (z >> 30)) * 0xbf58476d1ce4e5b9) & M64
    z = ((z ^ (z >> 27)) * 0x94d049bb133111eb) & M64
    return z ^ (z >> 31)


def member(pn, level, seed):
    node = pn >> level
    for i in range(level, 0, -1):
        bit = mix64(((node * GOLDEN) & M64) ^ seed ^ ((i << 59) & M64)) & 1
        if bit != (pn >> (i - 1)) & 1:
            return False
        node = (node << 1) | bit
    return True


def top_level(pn, seed):
    t = 0
    while t < 30 and member(pn, t + 1, seed):
        t += 1
    return t


# ---- writing ----
def varint(v):
    out = bytearray()
    while True:
        b = v & 0x7f
        v >>= 7
        if v:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def record(rtype, payload):
    head = bytes([rtype]) + varint(len(payload))
    return head + payload + struct.pack("<I", zlib.crc32(head + payload) & 0xffffffff)


def runs_of(pages):
    """Pages [pn, written, tid] sorted by pn -> runs (first, n, tid, written)."""
    runs = []
    for pn, w, tid in sorted(pages):
        r = runs[-1] if runs else None
        if r and r[0] + r[1] == pn and r[2] == tid and r[3] == w:
            r[1] += 1
        else:
            runs.append([pn, 1, tid, w])
    return runs


def interval_payload(iv):
    out = bytearray(varint(iv["seq"]) + varint(iv["t_ns"]) + bytes([iv.get("level", 0), iv.get("sets", 1)]))
    runs = iv["runs"] if "runs" in iv else runs_of(iv["pages"])
    out += varint(len(runs))
    end, prev = None, None
    for first, n, tid, w in runs:
        out += varint(first if end is None else first - end)
        out += varint(n - 1)
        kind = (tid, w)
        out += varint(0 if prev == kind else 1 + ((tid << 1) | w))
        prev, end = kind, first + n
    # The interval's events: ["gone", first, n] or ["moved", from, to, n].
    evs = iv.get("events", [])
    out += varint(len(evs))
    for e in evs:
        if e[0] == "gone":
            out += bytes([1]) + varint(e[1]) + varint(e[2])
        else:
            out += bytes([2]) + varint(e[1]) + varint(e[2]) + varint(e[3])
    return bytes(out)


def write(spec, path):
    data = bytearray(b"WSSTRACE" + struct.pack("<II", 1, spec.get("page_shift", 12)))
    for iv in spec["intervals"]:
        data += record(0x49, interval_payload(iv))
    end = spec.get("end")
    if end:
        p = varint(end["reason"]) + varint(end["last"])
        if end["reason"] == 3:
            p += varint(end.get("errno", 28))
        data += record(0x45, p)
    with open(path, "wb") as f:
        f.write(data)


def offsets(path):
    data = open(path, "rb").read()
    pos = 16
    while pos < len(data):
        t = data[pos]
        n, shift, k = 0, 0, pos + 1
        while True:
            b = data[k]
            n |= (b & 0x7f) << shift
            shift += 7
            k += 1
            if not b & 0x80:
                break
        print(pos, chr(t), n)
        pos = k + n + 4


# ---- what the analyses must say ----
def window_series(spec, n):
    seed = int(spec.get("seed", "0x0"), 16)
    newest = {}
    out = []
    ivs = spec["intervals"]
    for i, iv in enumerate(ivs):
        k = iv["seq"]
        for pn, _, _ in iv["pages"]:
            newest[pn] = k
        level = max(v.get("level", 0) for v in ivs[max(0, i - n + 1):i + 1])
        x = sum(1 for pn, s in newest.items() if s > k - n and (level == 0 or member(pn, level, seed)))
        out.append((k, x, level))
    return out


def window_estimate(spec, x, level):
    if level == 0:
        return x
    n = spec["tracked"]
    m = (n + (1 << (level - 1))) >> level
    return (n * x + m // 2) // m


def gen(kind, args):
    """cycle K I [BASE]: K consecutive pages from BASE every interval, for I
    intervals (even pages written, thread 101, odd ones read by 102);
    ramp I: interval i touches pages 0..i-1 plus page 1000+i once;
    sparse I: pages spread over addresses with gaps (for --by address);
    sampled K I LEVEL SEED: the members of LEVEL among K pages, every
    interval;
    random SEED I LEVELMAX: I intervals drawn from SEED: long runs and
    many short ones over a few regions, overlapping from one interval to
    the next, threads and writes mixed, pages gone and moved (source and
    target apart, as mremap's), at levels up to LEVELMAX (sampled
    intervals list the members of their level)."""
    a = [int(x, 0) for x in args]
    ivs = []
    if kind == "cycle":
        k, n = a[0], a[1]
        base = a[2] if len(a) > 2 else 0x10000
        for i in range(n):
            ivs.append({"seq": i + 1, "t_ns": (i + 1) * 1000000, "level": 0, "sets": 3,
                        "pages": [[base + p, 1 - (p & 1), 101 + (p & 1)] for p in range(k)]})
        spec = {"intervals": ivs}
    elif kind == "ramp":
        for i in range(a[0]):
            pages = [[0x400 + p, 0, 7] for p in range(i + 1)] + [[0x1000 + i, 1, 8]]
            ivs.append({"seq": i + 1, "t_ns": (i + 1) * 1000000, "level": 0, "sets": 1, "pages": pages})
        spec = {"intervals": ivs}
    elif kind == "sparse":
        for i in range(a[0]):
            pages = [[0x100 + (i % 4), 1, 5], [0x100000 + 16 * (i % 8), 0, 5]]
            ivs.append({"seq": i + 1, "t_ns": (i + 1) * 1000000, "level": 0, "sets": 1, "pages": pages})
        spec = {"intervals": ivs}
    elif kind == "sampled":
        k, n, level, seed = a
        for i in range(n):
            lv = level if i >= n // 2 else max(level - 1, 0)
            pages = [[0x20000 + p, p & 1, 9] for p in range(k) if member(0x20000 + p, lv, seed)
                     and (p + i) % 3 != 0]
            ivs.append({"seq": i + 1, "t_ns": (i + 1) * 1000000, "level": lv, "sets": 1, "pages": pages})
        spec = {"intervals": ivs, "seed": "0x%x" % seed, "tracked": k}
    elif kind == "random":
        spec = gen_random(a[0], a[1], a[2])
    else:
        raise SystemExit("trace.py gen: unknown kind " + kind)
    spec["page_shift"] = 12
    spec["end"] = {"reason": 1, "last": len(ivs)}
    return spec


def gen_random(seed, n, level_max):
    import random
    rng = random.Random(seed)
    sseed = 0x5eed0000 + seed
    regions = [0x10000, 0x10400, 0x7f0000000, 0x7f0000800]
    ivs = []
    for i in range(n):
        level = rng.choice([0, 0, 0] + list(range(1, level_max + 1))) if level_max else 0
        pages = {}
        for _ in range(rng.randint(0, 6)):
            base = rng.choice(regions) + rng.randint(0, 0x300)
            if rng.random() < 0.3:
                first, length = base, rng.randint(20, 600)
            else:
                first, length = base, rng.randint(1, 4)
            w, tid = rng.randint(0, 1), rng.choice([0, 11, 12])
            for pn in range(first, first + length):
                # a few pages within a run change thread or write bit
                pw, ptid = (1 - w, tid) if rng.random() < 0.05 else (w, tid)
                pages[pn] = [pn, pw, ptid]
        if level:
            pages = {pn: v for pn, v in pages.items() if member(pn, level, sseed)}
        evs = []
        for _ in range(rng.choice([0, 0, 0, 1, 2])):
            frm = rng.choice(regions) + rng.randint(0, 0x300)
            cnt = rng.randint(1, 300)
            if rng.random() < 0.5:
                evs.append(["gone", frm, cnt])
            else:
                to = rng.choice(regions) + rng.randint(0, 0x300)
                if to < frm + cnt and frm < to + cnt:
                    to = frm + cnt + rng.randint(0, 50)
                evs.append(["moved", frm, to, cnt])
        ivs.append({"seq": i + 1, "t_ns": (i + 1) * 1000000, "level": level, "sets": rng.choice([1, 3]),
                    "pages": sorted(pages.values()), "events": evs})
    return {"intervals": ivs, "seed": "0x%x" % sseed, "tracked": 4096}


def profile(spec, path, name, window):
    seed = spec.get("seed", "0x5eed")
    h = {"type": "header", "version": 1, "tool": "wss 0.1.0", "pid": 4242, "ppid": 4241, "exe": "/opt/app/synth",
         "argv": ["/opt/app/synth"], "kernel": "6.8.0-test", "page_size": 1 << spec.get("page_shift", 12),
         "backend": "hybrid", "backend_reason": "auto: hybrid (test fixture)",
         "backend_sees": "reads and writes, writes apart", "time_base": "manual", "interval_ns": 100000000,
         "window_intervals": window, "window_ns": window * 100000000, "track_mode": "auto", "sampling_seed": seed}
    lines = [h]
    if name != "-":
        lines.append({"type": "trace", "file": name})
    for (k, x, level), iv in zip(window_series(spec, window), spec["intervals"]):
        est = window_estimate(spec, x, level)
        s = {"type": "sample", "seq": k, "t_ns": iv["t_ns"], "data_pages": est, "faults": len(iv["pages"]),
             "rate": 1 << level, "threads": [{"tid": 4242, "data_pages": est, "faults": len(iv["pages"])}]}
        if level:
            s["sampled"] = {"tracked": spec["tracked"], "members": (spec["tracked"] + (1 << (level - 1))) >> level,
                            "data": x}
        lines.append(s)
    if spec.get("end") and spec["end"]["reason"] == 1:
        lines.append({"type": "summary", "samples": len(spec["intervals"]), "duration_ns": 1,
                      "data": {"avg": 0.0, "peak": 0, "total": 0}})
    with open(path, "w") as f:
        for r in lines:
            f.write(json.dumps(r, separators=(",", ":")) + "\n")


def lru(spec, frames):
    stack, faults, hits = [], 0, 0
    for iv in spec["intervals"]:
        for pn in sorted(p[0] for p in iv["pages"]):
            if pn in stack:
                hits += 1
                stack.remove(pn)
            else:
                faults += 1
                if frames and len(stack) == frames:
                    stack.pop()
            if frames:
                stack.insert(0, pn)
    return faults, hits


def hostile(log2, trace_path, prof_path, name):
    """Claimed lengths the profile backs: every interval's sample counts
    2^log2 pages, so the reader's bounds let them through."""
    n = 1 << log2
    base = 0x100000
    ivs = [{"seq": 1, "t_ns": 1000000, "runs": [[base, n, 7, 1]]},
           {"seq": 2, "t_ns": 2000000, "runs": [[base, n // 2, 7, 0], [base + n, n // 2, 8, 1]],
            "events": [["moved", base + n // 4, base + 4 * n, n // 2]]},
           {"seq": 3, "t_ns": 3000000, "runs": [[base + 4 * n, n, 9, 1]], "events": [["gone", base, n]]}]
    spec = {"intervals": ivs, "end": {"reason": 1, "last": 3}}
    write(spec, trace_path)
    h = {"type": "header", "version": 1, "tool": "wss 0.1.0", "pid": 4242, "ppid": 4241, "exe": "/opt/app/synth",
         "argv": ["/opt/app/synth"], "kernel": "6.8.0-test", "page_size": 4096, "backend": "hybrid",
         "backend_reason": "auto: hybrid (test fixture)", "backend_sees": "reads and writes, writes apart",
         "time_base": "manual", "interval_ns": 100000000, "window_intervals": 1, "window_ns": 100000000,
         "track_mode": "all", "sampling_seed": "0x5eed"}
    lines = [h, {"type": "trace", "file": name}]
    for iv in ivs:
        lines.append({"type": "sample", "seq": iv["seq"], "t_ns": iv["t_ns"], "data_pages": n, "faults": 1, "rate": 1,
                      "threads": [{"tid": 4242, "data_pages": n, "faults": 1}]})
    lines.append({"type": "summary", "samples": 3, "duration_ns": 1, "data": {"avg": 0.0, "peak": 0, "total": 0}})
    with open(prof_path, "w") as f:
        for r in lines:
            f.write(json.dumps(r, separators=(",", ":")) + "\n")


def main():
    cmd, args = sys.argv[1], sys.argv[2:]
    if cmd == "gen":
        json.dump(gen(args[0], args[1:]), sys.stdout)
    elif cmd == "pair":
        spec = gen(args[1], args[2:])
        with open(args[0] + ".json", "w") as f:
            json.dump(spec, f)
        write(spec, args[0] + ".trace")
        profile(spec, args[0] + ".jsonl", args[0] + ".trace", 1)
    elif cmd == "write":
        write(json.load(open(args[0])), args[1])
    elif cmd == "profile":
        profile(json.load(open(args[0])), args[1], args[2], int(args[3]) if len(args) > 3 else 1)
    elif cmd == "offsets":
        offsets(args[0])
    elif cmd == "window":
        spec = json.load(open(args[0]))
        for k, x, level in window_series(spec, int(args[1])):
            print(k, window_estimate(spec, x, level), x, 1 << level)
    elif cmd == "lru":
        print(*lru(json.load(open(args[0])), int(args[1])))
    elif cmd == "hostile":
        hostile(int(args[0]), args[1], args[2], args[3])
    elif cmd == "member":
        print(int(member(int(args[0], 0), int(args[1]), int(args[2], 0))))
    else:
        raise SystemExit("trace.py: unknown command " + cmd)


if __name__ == "__main__":
    main()
