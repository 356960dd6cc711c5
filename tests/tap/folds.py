#!/usr/bin/env python3
"""Checks of wss report's folded interpreter frames (tests/integration/
interpreters.sh), against an implementation of the rule of its own: a run
of two or more frames in a runtime's interpreter or VM module (python3.X,
libpython3.X.so, libjvm.so, node) is one line "[LABEL: N frames]".

  folds.py text TEXT RAW JSON
      the Peaks section of `wss report` (TEXT) against `--raw-stacks` (RAW)
      and `--json` (JSON), site by site: JSON's "folded" marks are on the
      frames of such runs and no others, with their label and length; the
      text shows each run as its label and every other frame as a line;
      the raw text has every frame.  Prints "ok" or what differs, then
      "folds N", "longest L" (lines of the longest stack), "longest_raw R",
      "longest_in_modules M" (of the stacks whose every frame is in some
      module: a JIT's frames, which are the program's code, are never
      folded and can make a stack of any length; and none in the dynamic
      loader: a library's constructors run by dlopen, as libjvm.so's are
      at the JVM's start, sit under a dozen of ld.so's and libc's frames,
      which are no runtime's), "labels LABEL,...".
  folds.py html PAGE
      the page's data: every stack's frames carry [LABEL, N] on the
      runs' frames and on no others.  Prints "ok" or what differs, then
      "folds N".
"""
import json
import os
import re
import sys

RULES = [
    (re.compile(r"^(python[0-9]*(\.[0-9]+)*[a-z]{0,2}|libpython[0-9]*(\.[0-9]+)*[a-z]{0,2}\.so(\.[0-9]+)*)$"),
     "python interpreter"),
    (re.compile(r"^libjvm\.so$"), "JVM"),
    (re.compile(r"^(node|nodejs|libnode\.so(\.[0-9]+)*)$"), "node/V8"),
]


def loader(module):
    return bool(module) and os.path.basename(module).startswith("ld-linux")


def runtime(module):
    if not module:
        return None
    base = os.path.basename(module)
    for rx, label in RULES:
        if rx.match(base):
            return label
    return None


def runs(modules):
    """[(label or None, length)] over a stack's frames' modules."""
    out, k = [], 0
    while k < len(modules):
        lab = runtime(modules[k])
        j = k + 1
        while lab and j < len(modules) and runtime(modules[j]) == lab:
            j += 1
        if lab and j - k >= 2:
            out.append((lab, j - k))
            k = j
        else:
            out.append((None, 1))
            k += 1
    return out


def fold_text(lab, n):
    return "[%s: %d frame%s]" % (lab, n, "" if n == 1 else "s")


def text_sites(path):
    """Each site of the Peaks section: its stack's lines, the address
    column cut off."""
    sites, cur, inside = [], None, False
    for line in open(path, encoding="utf-8"):
        line = line.rstrip("\n")
        if line.startswith("Peaks"):
            inside = True
            continue
        if not inside:
            continue
        if not line:
            break
        if re.match(r"^   [0-9]+ pages? first touched at", line):
            cur = []
            sites.append(cur)
        elif line.startswith("      ") and cur is not None:
            cur.append(line[26:] if len(line) > 26 else line.strip())
        else:
            cur = None  # a peak's line, a burst's "seq N:"
    return sites


def check_text(text, raw, js):
    bad = []
    folded, rawsites = text_sites(text), text_sites(raw)
    doc = json.load(open(js, encoding="utf-8"))
    # The text lists each interval's sites once, in the peaks' order.
    jsites, seen = [], set()
    for pk in doc["peaks"]:
        if pk["seq"] in seen:
            continue
        seen.add(pk["seq"])
        jsites.extend(pk["sites"])
    if not (len(folded) == len(rawsites) == len(jsites)):
        bad.append("sites: text %d, raw %d, json %d" % (len(folded), len(rawsites), len(jsites)))
    nfolds, longest, longest_raw, longest_mod, labels = 0, 0, 0, 0, set()
    for i, (f, r, s) in enumerate(zip(folded, rawsites, jsites)):
        frames = s["frames"] or []
        want = []
        k = 0
        for lab, n in runs([x["module"] for x in frames]):
            for x in frames[k:k + n]:
                got = x.get("folded")
                exp = {"label": lab, "frames": n} if lab else None
                if got != exp:
                    bad.append("site %d frame %d (%s in %s): folded %r, want %r" % (i, k, x["function"], x["module"], got, exp))
            want.append(fold_text(lab, n) if lab else None)
            k += n
            if lab:
                nfolds += 1
                labels.add(lab)
        if frames and len(r) != len(frames):
            bad.append("site %d: %d raw lines, %d frames in the JSON" % (i, len(r), len(frames)))
        if frames and len(f) != len(want):
            bad.append("site %d: %d lines, want %d: %r" % (i, len(f), len(want), f))
        for line, w in zip(f, want):
            if w is not None and line != w:
                bad.append("site %d: %r where %r" % (i, line, w))
            if w is None and line.startswith("["):
                bad.append("site %d: %r, a label where a frame belongs" % (i, line))
        longest, longest_raw = max(longest, len(f)), max(longest_raw, len(r))
        if all(x["module"] for x in frames) and not any(loader(x["module"]) for x in frames):
            longest_mod = max(longest_mod, len(f))
    print("ok" if not bad else "\n".join(bad[:20]))
    print("folds %d\nlongest %d\nlongest_raw %d\nlongest_in_modules %d\nlabels %s"
          % (nfolds, longest, longest_raw, longest_mod, ",".join(sorted(labels))))


def check_html(page):
    html = open(page, encoding="utf-8").read()
    m = re.search(r'<script type="application/json" id="wss-data">(.*?)</script>', html, re.S)
    doc = json.loads(m.group(1))
    bad, nfolds = [], 0
    for proc in doc["procs"]:
        prof = proc.get("profile") or {}
        for sid, frames in (prof.get("stacks") or {}).items():
            k = 0
            for lab, n in runs([x[4] for x in frames]):
                for x in frames[k:k + n]:
                    got = x[9] if len(x) > 9 else None
                    exp = [lab, n] if lab else None
                    if got != exp:
                        bad.append("stack %s frame %d (%s): %r, want %r" % (sid, k, x[0], got, exp))
                k += n
                nfolds += 1 if lab else 0
    print("ok" if not bad else "\n".join(bad[:20]))
    print("folds %d" % nfolds)


if __name__ == "__main__":
    if len(sys.argv) == 5 and sys.argv[1] == "text":
        check_text(*sys.argv[2:])
    elif len(sys.argv) == 3 and sys.argv[1] == "html":
        check_html(sys.argv[2])
    else:
        raise SystemExit(__doc__)
