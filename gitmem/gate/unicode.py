"""Invisible and direction-changing Unicode: what may not hide in a memory.

Every default-ignorable code point and control character is refused, bar the
joiners and variation selectors that real writing (emoji, Persian, Indic
scripts) needs where they are needed.
"""

from __future__ import annotations

import re
import unicodedata

from .finding import Finding, _line_col
from .fold import _IGNORABLE, plain


# -- invisible Unicode -----------------------------------------------------------------------

def _is_pictographic(cp: int) -> bool:
    # Approximation of Extended_Pictographic; a gate should use a real table
    # (e.g. the third-party `regex` module's \p{Extended_Pictographic}).
    return (0x1F000 <= cp <= 0x1FAFF or 0x2600 <= cp <= 0x27BF or 0x2300 <= cp <= 0x23FF
            or 0x2B00 <= cp <= 0x2BFF or 0x2194 <= cp <= 0x21AA
            or cp in (0xA9, 0xAE, 0x203C, 0x2049, 0x2122, 0x2139, 0x3030, 0x303D, 0x3297, 0x3299))


def _joins_script_letters(prev: str, nxt: str) -> bool:
    def ok(ch: str) -> bool:
        cp = ord(ch)
        script = (0x0600 <= cp <= 0x06FF or 0x0750 <= cp <= 0x077F or 0x08A0 <= cp <= 0x08FF
                  or 0xFB50 <= cp <= 0xFDFF or 0xFE70 <= cp <= 0xFEFF  # Arabic (Persian, Urdu)
                  or 0x0900 <= cp <= 0x0DFF)                         # Indic scripts
        return script and unicodedata.category(ch)[0] in "LM"
    return ok(prev) and ok(nxt)


def _selector_base_ok(cp: int, base: str) -> bool:
    """Whether a VS1-VS16 may follow ``base``: VS15/VS16 pick the text or emoji form of a
    symbol, digit or keycap base; VS1-VS14 pick glyph variants of CJK ideographs and math
    symbols. After a letter a selector shows nothing and can only carry hidden data."""
    b = ord(base)
    if cp >= 0xFE0E:
        return _is_pictographic(b) or base in "0123456789#*" or unicodedata.category(base) in ("So", "Sm")
    return (0x3400 <= b <= 0x9FFF or 0xF900 <= b <= 0xFAFF or 0x20000 <= b <= 0x3FFFF
            or unicodedata.category(base) in ("So", "Sm") or base == "0")


_ASCII_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


def unicode_violations(text: str) -> list[str]:
    """Recommended rule; returns U+XXXX of every refused character."""
    return [code for _, code in unicode_violation_positions(text)]


def unicode_violation_positions(text: str) -> list[tuple[int, str]]:
    """(index, U+XXXX) of every refused character of ``text`` (CRLF counts as LF)."""
    text = text.replace("\r\n", "\n")  # normalise CRLF before the gate; a lone CR is refused
    if text.isascii() and not _ASCII_CONTROL.search(text):
        return []  # the common case, in C: nothing below can fire on plain ASCII
    bad = []
    for i, ch in enumerate(text):
        cp = ord(ch)
        prev = text[i - 1] if i else ""
        nxt = text[i + 1] if i + 1 < len(text) else ""
        if ch in "\t\n" or (cp < 0x80 and 0x20 <= cp < 0x7F):
            continue
        if cp == 0x200D:  # ZWJ: inside an emoji sequence, or between Arabic/Indic letters
            base = text[i - 2] if prev == "\ufe0f" and i >= 2 else prev
            emoji_before = base and (_is_pictographic(ord(base)) or 0x1F3FB <= ord(base) <= 0x1F3FF)
            if (emoji_before and nxt and _is_pictographic(ord(nxt))) or (
                    prev and nxt and _joins_script_letters(prev, nxt)):
                continue
        elif cp == 0x200C:  # ZWNJ: only between Arabic/Indic letters (Persian, Hindi)
            if prev and nxt and _joins_script_letters(prev, nxt):
                continue
        elif 0xFE00 <= cp <= 0xFE0F:  # one variation selector after a base that has variants
            if prev and not (0xFE00 <= ord(prev) <= 0xFE0F) and _selector_base_ok(cp, prev):
                continue
        elif 0x180B <= cp <= 0x180F:  # Mongolian selectors and vowel separator, in Mongolian
            if prev and 0x1820 <= ord(prev) <= 0x18AF:
                continue
        elif not (_IGNORABLE.match(ch) or unicodedata.category(ch) in ("Cc", "Cf", "Cs", "Zl", "Zp")):
            continue
        bad.append((i, f"U+{cp:04X}"))
    return bad



def scan_unicode(text: str) -> list[Finding]:
    text = text.replace("\r\n", "\n")
    out = []
    for i, code in unicode_violation_positions(text):
        line, col = _line_col(text, i)
        name = unicodedata.name(text[i], "unnamed")
        out.append(Finding("unicode", f"{code} {name.lower()}", line, col))
    return out
