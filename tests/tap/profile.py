#!/usr/bin/env python3
"""Read wss profiles for the shell tests.

  profile.py check FILE [--prefix]   validate the schema (exit 1 with a reason);
                                     --prefix accepts a profile cut short
  profile.py get FILE KEY.PATH       a value from the header or the summary,
                                     e.g. summary.data.peak, header.backend
  profile.py samples FILE            one line per sample: seq data_pages faults
                                     sum-of-thread-pages nthreads write_pages
                                     (- when the backend does not see writes)
  profile.py threads FILE SEQ        "tid pages" lines of one sample
  profile.py thread FILE SEQ TID     "data_pages write_pages faults" of one
                                     thread in one sample (0 0 0 if absent)
  profile.py peaks FILE              "seq series value top-stack-id" per peak
  profile.py stack FILE ID           the stack's frames, symbolised with
                                     addr2line -f -i through the module
                                     records: "function file:line" lines
  profile.py tids FILE               one line per sample: seq t_ns and the
                                     tids of its threads
"""
import json
import sys

HEADER_KEYS = {"version": int, "pid": int, "exe": str, "argv": list, "page_size": int,
               "backend": str, "time_base": str, "interval_ns": int, "window_intervals": int}
SAMPLE_KEYS = {"seq": int, "t_ns": int, "data_pages": int, "threads": list, "faults": int}


def load(path, prefix=False):
    recs = []
    with open(path, "rb") as f:
        data = f.read()
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    elif prefix and lines:
        lines.pop()  # a record cut in the middle: not part of the prefix
    for n, line in enumerate(lines, 1):
        try:
            recs.append(json.loads(line))
        except ValueError as e:
            raise SystemExit("%s:%d: not JSON: %s" % (path, n, e))
    return recs


def check(path, prefix):
    recs = load(path, prefix)
    if not recs:
        raise SystemExit("%s: empty profile" % path)
    h = recs[0]
    if h.get("type") != "header":
        raise SystemExit("%s:1: first record is not a header" % path)
    for k, t in HEADER_KEYS.items():
        if not isinstance(h.get(k), t):
            raise SystemExit("%s:1: header.%s missing or not %s" % (path, k, t.__name__))
    if h["version"] != 1:
        raise SystemExit("%s:1: unknown version %r" % (path, h["version"]))
    last = 0
    stacks = set()
    seen_sites = seen_alloc = False
    # "process" notes come from other processes of the session, appended
    # whenever they start or end: anywhere after the header, even after the
    # summary.
    end = len(recs)
    while end > 1 and recs[end - 1].get("type") == "process":
        end -= 1
    for n, r in enumerate(recs[1:], 2):
        t = r.get("type")
        if t == "process":
            if not isinstance(r.get("pid"), int) or not (r.get("profile") is None or isinstance(r.get("profile"), str)):
                raise SystemExit("%s:%d: process record without pid or profile" % (path, n))
            if r.get("profile") is None and not isinstance(r.get("reason"), str):
                raise SystemExit("%s:%d: process record without a profile or a reason" % (path, n))
            continue
        if t == "summary":
            if n != end:
                raise SystemExit("%s:%d: summary is not the last record" % (path, n))
            for k in ("avg", "peak", "total"):
                v = r.get("data", {}).get(k)
                # wss attach's reference bits cannot tell the run's total.
                if not isinstance(v, (int, float)) and not (k == "total" and v is None and h["backend"] == "refbits"):
                    raise SystemExit("%s:%d: summary.data.%s missing" % (path, n, k))
            # The run's distinct pages are at least one window's.
            for sk in ("data", "read", "write"):
                st = r.get(sk)
                if st and isinstance(st.get("total"), int) and st["total"] < st["peak"]:
                    raise SystemExit("%s:%d: summary.%s.total %d below its peak %d" % (path, n, sk, st["total"], st["peak"]))
                # No interval held more than the peak: nor their average
                # (printed to a tenth).
                if st and isinstance(st.get("avg"), (int, float)) and isinstance(st.get("peak"), int) and st["avg"] > st["peak"] + 0.05:
                    raise SystemExit("%s:%d: summary.%s.avg %s above its peak %d" % (path, n, sk, st["avg"], st["peak"]))
            continue
        if t == "module":
            if not isinstance(r.get("path"), str) or not all(isinstance(r.get(k), str) and r[k].startswith("0x") for k in ("bias", "start", "end")):
                raise SystemExit("%s:%d: module record without path, bias, start, end" % (path, n))
            continue
        if t == "stack":
            if not isinstance(r.get("id"), int) or not r.get("frames") or not all(f.startswith("0x") for f in r["frames"]):
                raise SystemExit("%s:%d: stack record without id or frames" % (path, n))
            stacks.add(r["id"])
            continue
        if t == "peak":
            if r.get("seq") != last:
                raise SystemExit("%s:%d: peak of seq %r after sample %d" % (path, n, r.get("seq"), last))
            for site in r.get("sites", []):
                if "stack" in site and site["stack"] not in stacks:
                    raise SystemExit("%s:%d: peak site refers to stack %d before its record" % (path, n, site["stack"]))
            continue
        if t == "sites":
            # The run's first-touch sites: once, after the final sample,
            # most pages first, every stack already written.
            # (stacks captured meanwhile may follow it, for the hot pages)
            if seen_sites or any(x.get("type") not in ("stack", "summary", "process", "alloc_sites") for x in recs[n:end]):
                raise SystemExit("%s:%d: sites record that is not the last before the summary" % (path, n))
            seen_sites = True
            pages = [site["pages"] for site in r["sites"]]
            if pages != sorted(pages, reverse=True) or (pages and pages[-1] <= 0) or not isinstance(r.get("other_pages"), int):
                raise SystemExit("%s:%d: sites not sorted by pages, or without other_pages" % (path, n))
            for site in r["sites"]:
                if not site["pc"].startswith("0x") or ("stack" in site and site["stack"] not in stacks):
                    raise SystemExit("%s:%d: site %r without pc or with a stack not written before" % (path, n, site))
            continue
        if t == "alloc_sites":
            # Allocation sites: once, after the final sample, largest
            # first (live now plus at the peak), every stack written
            # before, each figure inside its interval.
            if seen_alloc or any(x.get("type") not in ("stack", "summary", "process") for x in recs[n:end]):
                raise SystemExit("%s:%d: alloc_sites record that is not the last before the summary" % (path, n))
            seen_alloc = True
            for k in ("mean_bytes", "idle_after", "intervals", "cut_intervals", "dropped"):
                if not isinstance(r.get(k), int):
                    raise SystemExit("%s:%d: alloc_sites.%s missing" % (path, n, k))
            size = [x["live_pages"] + x["peak_live_pages"] for x in r["sites"]]
            if size != sorted(size, reverse=True):
                raise SystemExit("%s:%d: alloc_sites not sorted by size" % (path, n))
            for x in r["sites"]:
                if x["stack"] and x["stack"] not in stacks:
                    raise SystemExit("%s:%d: alloc site refers to stack %d before its record" % (path, n, x["stack"]))
                for k, c in (("live_pages", "live_ci"), ("idle_pages", "idle_ci"), ("touched_pages", "touched_ci")):
                    lo, hi = x[c]
                    if not lo <= x[k] <= hi:
                        raise SystemExit("%s:%d: alloc site %s %d outside %s %r" % (path, n, k, x[k], c, x[c]))
            continue
        if t == "trace":
            continue
        if t != "sample":
            raise SystemExit("%s:%d: unknown record type %r" % (path, n, t))
        for k, ty in SAMPLE_KEYS.items():
            if not isinstance(r.get(k), ty):
                raise SystemExit("%s:%d: sample.%s missing or not %s" % (path, n, k, ty.__name__))
        if r["seq"] != last + 1:
            raise SystemExit("%s:%d: seq %d after %d" % (path, n, r["seq"], last))
        last = r["seq"]
        # Sampled: each thread's estimate is rounded on its own.
        rate = r.get("rate", 1)
        slack = len(r["threads"]) if rate > 1 else 0
        if rate > 1:
            for th in [r] + r["threads"]:
                for k, v in th["ci"].items():
                    est = th["%s_pages" % k]
                    if not (isinstance(v, list) and len(v) == 2 and v[0] <= est <= v[1]):
                        raise SystemExit("%s:%d: %s interval %r does not hold the estimate %d" % (path, n, k, v, est))
            smp = r["sampled"]
            if not 0 <= smp["data"] <= smp["members"] <= smp["tracked"]:
                raise SystemExit("%s:%d: sampled counts out of order: %r" % (path, n, smp))
        s = sum(th["data_pages"] for th in r["threads"])
        if abs(s - r["data_pages"]) > slack:
            raise SystemExit("%s:%d: threads sum to %d, sample says %d" % (path, n, s, r["data_pages"]))
        if "write_pages" in r:  # backends that see writes
            if not 0 <= r["write_pages"] <= r["data_pages"]:
                raise SystemExit("%s:%d: write_pages %d not within data_pages %d" % (path, n, r["write_pages"], r["data_pages"]))
            if abs(sum(th["write_pages"] for th in r["threads"]) - r["write_pages"]) > slack:
                raise SystemExit("%s:%d: threads' write_pages do not sum to the sample's" % (path, n))
            for th in [r] + r["threads"]:
                if "read_pages" in th and th["read_pages"] != th["data_pages"] - th["write_pages"]:
                    raise SystemExit("%s:%d: read_pages is not data_pages - write_pages" % (path, n))
    if not prefix and recs[end - 1].get("type") != "summary":
        raise SystemExit("%s: no summary at the end" % path)


def main(argv):
    if len(argv) < 3:
        raise SystemExit(__doc__)
    cmd, path = argv[1], argv[2]
    if cmd == "check":
        check(path, "--prefix" in argv[3:])
    elif cmd == "get":
        recs = load(path, True)
        kind, _, rest = argv[3].partition(".")
        rec = next((r for r in recs if r.get("type") == kind), None)
        if rec is None:
            raise SystemExit("%s: no %s record" % (path, kind))
        # Keys may contain dots themselves ("config_source.session.interval"):
        # take the longest key that exists at each level.
        v, parts = rec, rest.split(".")
        while parts:
            for n in range(len(parts), 0, -1):
                k = ".".join(parts[:n])
                if isinstance(v, dict) and k in v:
                    v, parts = v[k], parts[n:]
                    break
            else:
                raise SystemExit("%s: no %s in the %s record" % (path, ".".join(parts), kind))
        print(v if isinstance(v, str) else json.dumps(v))
    elif cmd == "samples":
        for r in load(path, True):
            if r.get("type") == "sample":
                print(r["seq"], r["data_pages"], r["faults"],
                      sum(t["data_pages"] for t in r["threads"]), len(r["threads"]), r.get("write_pages", "-"))
    elif cmd == "threads":
        seq = int(argv[3])
        for r in load(path, True):
            if r.get("type") == "sample" and r["seq"] == seq:
                for t in r["threads"]:
                    print(t["tid"], t["data_pages"])
    elif cmd == "thread":
        seq, tid = int(argv[3]), int(argv[4])
        for r in load(path, True):
            if r.get("type") == "sample" and r["seq"] == seq:
                for t in r["threads"]:
                    if t["tid"] == tid:
                        print(t["data_pages"], t.get("write_pages", "-"), t["faults"])
                        break
                else:
                    print(0, 0, 0)
    elif cmd == "peaks":
        for r in load(path, True):
            if r.get("type") == "peak":
                top = r["sites"][0].get("stack", 0) if r["sites"] else 0
                print(r["seq"], r["series"], r["value"], top)
    elif cmd == "stack":
        import subprocess
        recs = load(path, True)
        mods = [r for r in recs if r.get("type") == "module"]
        st = next(r for r in recs if r.get("type") == "stack" and r["id"] == int(argv[3]))
        for i, f in enumerate(st["frames"]):
            a = int(f, 16)
            m = next((m for m in mods if int(m["start"], 16) <= a < int(m["end"], 16)), None)
            if m is None:
                print(f, "?")
                continue
            # Return addresses (all but the first frame) point after the call.
            off = a - int(m["bias"], 16) - (1 if i else 0)
            out = subprocess.run(["addr2line", "-f", "-i", "-e", m["path"], hex(off)],
                                 capture_output=True, text=True).stdout.split("\n")
            for fn, loc in zip(out[0::2], out[1::2]):
                print(fn, loc.split(" ")[0].split("/")[-1])
    elif cmd == "tids":
        for r in load(path, True):
            if r.get("type") == "sample":
                print(r["seq"], r["t_ns"], *(t["tid"] for t in r["threads"]))
    else:
        raise SystemExit(__doc__)


if __name__ == "__main__":
    main(sys.argv)
