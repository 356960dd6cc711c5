#!/usr/bin/env python3
"""Synthetic profile records for the report tests (the record types of peaks,
stacks, modules and hot pages, as the engine writes them).

  synth.py module ID ELF BIAS [BUILD_ID|-]  a module record for ELF loaded at
                                           BIAS (hex); [start,end) from its
                                           PT_LOAD headers; BUILD_ID: the
                                           file's own when omitted, none for -
  synth.py buildid ELF                     the file's GNU build-id (hex)
  synth.py summary FILE HOT_JSON           FILE's summary line with
                                           "hot_pages": HOT_JSON added
  synth.py inline ELF FUNC CALLER          an address in CALLER where FUNC is
                                           inlined, by addr2line -i: prints
                                           "addr FUNC-file:line CALLER-file:line"
"""
import json
import re
import struct
import subprocess
import sys

PT_LOAD, PT_NOTE, NT_GNU_BUILD_ID = 1, 4, 3


def phdrs(path):
    with open(path, "rb") as f:
        data = f.read()
    if data[:4] != b"\x7fELF" or data[4] != 2:
        raise SystemExit("%s: not a 64-bit ELF file" % path)
    phoff, = struct.unpack_from("<Q", data, 0x20)
    phentsize, phnum = struct.unpack_from("<HH", data, 0x36)
    out = []
    for k in range(phnum):
        p_type, _, p_off, p_vaddr, _, p_filesz, p_memsz, p_align = struct.unpack_from("<IIQQQQQQ", data, phoff + k * phentsize)
        out.append((p_type, p_off, p_vaddr, p_filesz, p_memsz, p_align))
    return data, out


def build_id(path):
    data, ph = phdrs(path)
    for p_type, off, _, filesz, _, _ in ph:
        if p_type != PT_NOTE:
            continue
        pos, end = off, off + filesz
        while pos + 12 <= end:
            namesz, descsz, ntype = struct.unpack_from("<III", data, pos)
            name = data[pos + 12:pos + 12 + namesz]
            desc_at = pos + 12 + ((namesz + 3) & ~3)
            if ntype == NT_GNU_BUILD_ID and name.rstrip(b"\0") == b"GNU":
                return data[desc_at:desc_at + descsz].hex()
            pos = desc_at + ((descsz + 3) & ~3)
    return None


def module(mid, path, bias, bid):
    _, ph = phdrs(path)
    loads = [p for p in ph if p[0] == PT_LOAD]
    lo = min(p[2] & ~(p[5] - 1) for p in loads)
    hi = max(p[2] + p[4] for p in loads)
    hi = (hi + 4095) & ~4095
    if bid is None:
        bid = build_id(path)
    elif bid == "-":
        bid = None
    return {"type": "module", "id": mid, "path": path, "bias": "0x%x" % bias,
            "start": "0x%x" % (bias + lo), "end": "0x%x" % (bias + hi), "build_id": bid}


def inline(path, func, caller):
    """The first address in CALLER whose addr2line -i chain is FUNC, CALLER."""
    nm = subprocess.run(["nm", "-S", path], capture_output=True, text=True, check=True).stdout
    m = re.search(r"^([0-9a-f]+) ([0-9a-f]+) [tT] %s$" % re.escape(caller), nm, re.M)
    if not m:
        raise SystemExit("%s: no symbol %s" % (path, caller))
    start, size = int(m.group(1), 16), int(m.group(2), 16)
    addrs = ["0x%x" % a for a in range(start, start + size)]
    out = subprocess.run(["addr2line", "-i", "-f", "-a", "-e", path] + addrs,
                         capture_output=True, text=True, check=True).stdout.splitlines()
    chains, cur = [], None
    for line in out:
        if line.startswith("0x"):
            cur = [int(line, 16), []]
            chains.append(cur)
        else:
            cur[1].append(line)
    for addr, lines in chains:
        names = lines[0::2]
        locs = [re.sub(r" \(discriminator \d+\)$", "", l) for l in lines[1::2]]
        if names == [func, caller] and all(not l.startswith("??") for l in locs):
            return "0x%x %s %s" % (addr, locs[0].rsplit("/", 1)[-1], locs[1].rsplit("/", 1)[-1])
    raise SystemExit("%s: no address where %s is inlined in %s" % (path, func, caller))


def main(argv):
    if len(argv) < 3:
        raise SystemExit(__doc__)
    cmd = argv[1]
    if cmd == "module":
        bid = argv[5] if len(argv) > 5 else None
        print(json.dumps(module(int(argv[2]), argv[3], int(argv[4], 16), bid), separators=(",", ":")))
    elif cmd == "buildid":
        print(build_id(argv[2]))
    elif cmd == "summary":
        with open(argv[2]) as f:
            s = [json.loads(l) for l in f if '"type":"summary"' in l][0]
        s["hot_pages"] = json.loads(argv[3])
        print(json.dumps(s, separators=(",", ":")))
    elif cmd == "inline":
        print(inline(argv[2], argv[3], argv[4]))
    else:
        raise SystemExit(__doc__)


if __name__ == "__main__":
    main(sys.argv)
