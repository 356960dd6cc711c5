#!/usr/bin/env python3
"""Seeds for tests/fuzz/fuzz_trace: valid traces written by tests/tap/trace.py,
each after the bytes fuzz_trace.c reads as its profile (PROFILE_BYTES: flags,
a sample count, then per sample its level, data_pages and tracked / 16),
chosen so that every record is within its sample's bounds.

  trace_seeds.py DIR
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tap"))
import trace  # noqa: E402

NSAMPLES_MAX = 8


def prefix(spec, flags):
    out = bytearray([flags, len(spec["intervals"])])
    for iv in spec["intervals"]:
        n = len(iv["pages"])
        level = iv.get("level", 0)
        # data_pages n (exact) or members touched 2n (sampled at its level).
        out += bytes([level, min(255, 2 * n), 255])
    out += bytes(3 * (NSAMPLES_MAX - len(spec["intervals"])))
    return bytes(out)


def main(d):
    os.makedirs(d, exist_ok=True)
    # flags: 1 with the profile, 2 members checked, 4 checks rewritten
    cases = [("cycle", ["8", "6"], 5), ("ramp", ["6"], 5), ("sparse", ["6"], 1),
             ("sampled", ["256", "6", "2", "0x5eed"], 7), ("cycle", ["4", "3"], 4)]
    for i, (kind, args, flags) in enumerate(cases):
        spec = trace.gen(kind, args)
        path = os.path.join(d, "seed-trace-%d.bin" % i)
        trace.write(spec, path + ".tmp")
        with open(path + ".tmp", "rb") as f:
            body = f.read()
        os.unlink(path + ".tmp")
        with open(path, "wb") as f:
            f.write(prefix(spec, flags) + body)


if __name__ == "__main__":
    main(sys.argv[1])
