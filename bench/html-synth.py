#!/usr/bin/env python3
"""A synthetic wss profile for the HTML report's scale (issue 16): SAMPLES
samples of THREADS threads each, with peaks and first-touch stacks, in the
profile format (docs/profile-format.md).  Each thread's working set is a
slow wave of its own period plus noise, with a burst every so often, so
the page has structure to draw at every zoom.

  html-synth.py [--samples N] [--threads T] [--peaks K] -o PROFILE

Deterministic: the same arguments give the same file.
"""
import argparse
import json
import math
import random


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--samples", type=int, default=100000)
    ap.add_argument("--threads", type=int, default=64)
    ap.add_argument("--peaks", type=int, default=40)
    ap.add_argument("-o", "--output", required=True)
    a = ap.parse_args()
    rnd = random.Random(16)
    n, nt = a.samples, a.threads
    interval = 10_000_000
    pid = 40000
    tids = [pid] + [pid + 1 + k for k in range(nt - 1)]
    period = [200 + 37 * k for k in range(nt)]
    base = [50 + 13 * (k % 17) for k in range(nt)]
    peak_at = sorted(rnd.sample(range(10, n), min(a.peaks, n - 10))) if n > 10 else []
    peak_set = set(peak_at)
    with open(a.output, "w") as f:
        f.write(json.dumps({
            "type": "header", "version": 1, "tool": "wss synthetic", "pid": pid, "ppid": 1,
            "exe": "/synthetic/app", "argv": ["/synthetic/app", "--threads", str(nt)],
            "start_unix_ns": 1795596469649629711, "kernel": "synthetic", "page_size": 4096,
            "backend": "hybrid", "backend_reason": "synthetic profile (bench/html-synth.py)",
            "backend_sees": "reads and writes, writes apart", "time_base": "wall",
            "interval_ns": interval, "window_intervals": 1, "window_ns": interval, "track_mode": "exact",
            "track": {"heap": True, "anon_mmap": True, "data_segments": True, "library_data": False},
        }, separators=(",", ":")) + "\n")
        f.write('{"type":"module","id":1,"path":"/synthetic/app","bias":"0x555555554000",'
                '"start":"0x555555554000","end":"0x555555600000","build_id":null}\n')
        for s in range(1, 9):
            frames = ["0x%x" % (0x555555555000 + 0x40 * s + 0x1000 * d) for d in range(6 if s % 2 else 9)]
            f.write('{"type":"stack","id":%d,"frames":%s}\n' % (s, json.dumps(frames, separators=(",", ":"))))
        tot_data = tot_write = 0
        peak_data = peak_write = 0
        cpu = [0] * nt
        for i in range(1, n + 1):
            ths = []
            sd = sw = sf = 0
            burst = i in peak_set
            for k in range(nt):
                v = base[k] + int(base[k] * 0.8 * math.sin(2 * math.pi * i / period[k])) + rnd.randrange(8)
                if burst and k == i % nt:
                    v += 4000
                w = v * 3 // 4
                fl = rnd.randrange(20) + (4000 if burst and k == i % nt else 0)
                cpu[k] += interval // 2
                sd += v
                sw += w
                sf += fl
                ths.append('{"tid":%d,"data_pages":%d,"read_pages":%d,"write_pages":%d,"faults":%d,"cpu_ns":%d}'
                           % (tids[k], v, v - w, w, fl, cpu[k]))
            tot_data += sd
            tot_write += sw
            peak_data = max(peak_data, sd)
            peak_write = max(peak_write, sw)
            f.write('{"type":"sample","seq":%d,"t_ns":%d,"cpu_ns":%d,"data_pages":%d,"read_pages":%d,'
                    '"write_pages":%d,"faults":%d,"coarse":0,"threads":[%s]}\n'
                    % (i, i * interval, i * interval // 2 * nt, sd, sd - sw, sw, sf, ",".join(ths)))
            if burst:
                sites = [{"pc": "0x%x" % (0x555555555000 + 0x40 * s), "stack": s, "pages": 4000 // (s + 1)}
                         for s in range(1, 4)]
                f.write(json.dumps({"type": "peak", "seq": i, "series": "data", "value": sd, "mean": sd / 2,
                                    "threshold": sd * 0.7, "sites": sites, "other_pages": 10},
                                   separators=(",", ":")) + "\n")
        f.write(json.dumps({"type": "sites", "sites": [{"pc": "0x%x" % (0x555555555000 + 0x40 * s), "stack": s,
                                                        "pages": 100000 // s} for s in range(1, 9)],
                            "other_pages": 1234}, separators=(",", ":")) + "\n")
        hot = [{"addr": "0x%x" % (0x7f0000000000 + 4096 * k), "intervals": n - k, "mapping": "heap",
                "stack": 1 + k % 8} for k in range(20)]
        for h in hot[-2:]:
            h["gone"] = n - 1  # unmapped before the end
        f.write(json.dumps({
            "type": "summary", "samples": n, "duration_ns": n * interval,
            "data": {"avg": round(tot_data / n, 1), "peak": peak_data, "total": peak_data * 2},
            "read": {"avg": round((tot_data - tot_write) / n, 1), "peak": peak_data - peak_write, "total": peak_data},
            "write": {"avg": round(tot_write / n, 1), "peak": peak_write, "total": peak_write * 2},
            "faults": n * 10 * nt, "coarse": 0, "page_size": 4096, "hot_pages": hot,
        }, separators=(",", ":")) + "\n")


if __name__ == "__main__":
    main()
