"""Where and why a text may not be stored: the one record every scanner returns.

A finding names the kind and the place, never the matched text, so a refusal
can be printed and logged without echoing a secret.
"""

from __future__ import annotations


import msgspec


class Finding(msgspec.Struct, frozen=True):
    """Why a text may not be stored: the kind of finding and where (never the secret)."""

    category: str  # secret | injection | unicode | gate (a rule failed on the text)
    kind: str  # e.g. "GitHubTokenDetector", "instruction override", "U+202E"
    line: int  # 1-based line of the text
    column: int  # 1-based column (0 when unknown)

    def describe(self) -> str:
        where = f"line {self.line}" + (f", column {self.column}" if self.column else "")
        return f"{self.category} ({self.kind}) at {where}"


def _line_col(text: str, offset: int) -> tuple[int, int]:
    line = text.count("\n", 0, offset) + 1
    return line, offset - (text.rfind("\n", 0, offset) + 1) + 1
