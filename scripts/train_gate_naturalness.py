#!/usr/bin/env python3
"""Write gitmem/gate/naturalness.bin: how surprising each letter is after the two before it.

    python scripts/train_gate_naturalness.py           # retrain from this Python's standard library
    python scripts/train_gate_naturalness.py --check   # exit 1 if the file differs

What it is: a character trigram model of the runs of letters and digits people write in
code and prose (identifiers, words, versions, file names), lower-cased, trained on the
standard library of the Python running this script (its .py files, site-packages left
out; about 4 million lines). The gate asks it how many bits per character a token
costs: words and names cost 2-4.5, machine-generated keys 5.5-8 (gate/naturalness.py).
Runs that are themselves random (over 30 characters, hex with digits, letters and
digits alternating four or more times) are left out of training, so that hashes and
keys in the library's tests do not teach the model that random is normal.

The file is 38**3 bytes: for symbols a, b, c of "^" + a-z + 0-9 + "$", byte
(a*38 + b)*38 + c is -log2 P(c | a b) in sixteenths of a bit (interpolated with the
bigram, unigram and uniform estimates; 255 for the impossible "^" after a letter).
"""

from __future__ import annotations

import collections
import math
import os
import re
import sys
import sysconfig
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "gitmem" / "gate" / "naturalness.bin"
SYMBOLS = "^abcdefghijklmnopqrstuvwxyz0123456789$"
RUN = re.compile(r"[A-Za-z0-9]+")
HEX = re.compile(r"[0-9a-f]{8,}")
ALTERNATING = re.compile(r"(?:[a-z]+[0-9]+){4}|(?:[0-9]+[a-z]+){4}")
WEIGHTS = (0.6, 0.28, 0.1, 0.02)  # trigram, bigram, unigram, uniform


def runs() -> "collections.abc.Iterator[str]":
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    for dirpath, dirnames, filenames in os.walk(stdlib):
        dirnames[:] = sorted(d for d in dirnames if d not in ("site-packages", "__pycache__"))
        for name in sorted(filenames):
            if not name.endswith(".py"):
                continue
            try:
                text = (Path(dirpath) / name).read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError):
                continue
            for m in RUN.finditer(text):
                run = m.group().lower()
                if len(run) > 30 or (HEX.fullmatch(run) and not run.isdigit() and not run.isalpha()):
                    continue
                if ALTERNATING.search(run):
                    continue
                yield run


def train() -> bytes:
    tri: collections.Counter[str] = collections.Counter()
    for run in runs():
        w = "^^" + run + "$"
        for j in range(2, len(w)):
            tri[w[j - 2:j + 1]] += 1
    bi: collections.Counter[str] = collections.Counter()
    uni: collections.Counter[str] = collections.Counter()
    ctx2: collections.Counter[str] = collections.Counter()
    for k, v in tri.items():
        bi[k[1:]] += v
        uni[k[2]] += v
        ctx2[k[:2]] += v
    ctx1: collections.Counter[str] = collections.Counter()
    for k, v in bi.items():
        ctx1[k[0]] += v
    total = sum(uni.values())
    n = len(SYMBOLS)
    l3, l2, l1, l0 = WEIGHTS
    out = bytearray(n ** 3)
    for i, a in enumerate(SYMBOLS):
        for j, b in enumerate(SYMBOLS):
            c2, c1 = ctx2[a + b], ctx1[b]
            for k, c in enumerate(SYMBOLS):
                if c == "^":
                    out[(i * n + j) * n + k] = 255
                    continue
                p1 = uni[c] / total
                p2 = bi[b + c] / c1 if c1 else p1
                p3 = tri[a + b + c] / c2 if c2 else p2
                p = l3 * p3 + l2 * p2 + l1 * p1 + l0 / (n - 1)
                out[(i * n + j) * n + k] = min(254, round(-math.log2(p) * 16))
    return bytes(out)


def main() -> None:
    data = train()
    if "--check" in sys.argv:
        if not OUT.exists() or OUT.read_bytes() != data:
            print(f"differs: {OUT}; run: python scripts/train_gate_naturalness.py", file=sys.stderr)
            sys.exit(1)
        return
    OUT.write_bytes(data)


if __name__ == "__main__":
    main()
