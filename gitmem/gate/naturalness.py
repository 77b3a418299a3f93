"""How machine-made a token looks: bits per character under a model of what people write.

Why this exists: the generic secret rules must tell a generated key (``Kp3vX9mQ2rLw8TbN``)
from a name a person wrote (``WaitForSingleObject``, ``_Hd_Mp4_Hev1_Aac_16x9``,
``Token.Name.Builtin``). Counting how often the character class changes cannot: names
with digits and capitals change class as often as keys do. A character trigram model of
identifiers and words can: a name costs 2-4.5 bits a character under it, a random key
5.5-8. The model is learned (scripts/train_gate_naturalness.py, from the standard
library's source), shipped as a 55 KB table, read on first use (~0.1 ms), and runs in
pure Python: only on tokens a cheaper test has already picked.
"""

from __future__ import annotations

import functools
import re
from pathlib import Path

_SYMBOLS = "^abcdefghijklmnopqrstuvwxyz0123456789$"
_INDEX = {c: i for i, c in enumerate(_SYMBOLS)}
_N = len(_SYMBOLS)
_RUN = re.compile(r"[A-Za-z0-9]+")


@functools.cache
def _table() -> bytes:
    return (Path(__file__).with_name("naturalness.bin")).read_bytes()


def _run_bits(run: str) -> float:
    """Total bits of one run of letters and digits (lower-cased), its end included."""
    table, index, n = _table(), _INDEX, _N
    a, b, bits = 0, 0, 0
    for ch in run:
        c = index[ch]
        bits += table[(a * n + b) * n + c]
        a, b = b, c
    return (bits + table[(a * n + b) * n + _N - 1]) / 16


def bits_per_char(token: str) -> float:
    """Mean surprise of ``token``'s letters and digits (each run scored on its own, its
    end counted as one character); 0.0 when it has none."""
    bits, chars = 0.0, 0
    for m in _RUN.finditer(token):
        run = m.group().lower()
        if not run.isascii():
            continue
        bits += _run_bits(run)
        chars += len(run) + 1
    return bits / chars if chars else 0.0
