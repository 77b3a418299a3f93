"""Redaction: a text with every secret the scan finds masked, key blocks whole."""

from __future__ import annotations

from .finding import Finding
from .secrets import scan_secrets


def _mask_once(text: str) -> tuple[str, int]:
    lines = text.split("\n")
    starts = [0]
    for line in lines[:-1]:
        starts.append(starts[-1] + len(line) + 1)
    spans: list[tuple[int, int]] = []
    for finding, span in scan_secrets(text):
        if span is None:
            start = starts[finding.line - 1]
            span = (start, start + len(lines[finding.line - 1]))
        spans.append(span)
    merged: list[list[int]] = []  # overlapping spans (a key block and its BEGIN line) merge
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    for start, end in reversed(merged):
        text = text[:start] + "[REDACTED]" + text[end:]
    return text, len(merged)


def redact(text: str) -> tuple[str, int]:
    """``text`` with every detected secret masked, and how many were masked.

    A private key block is masked from BEGIN to END inclusive (to the end of the text
    when its END line is missing); a secret whose exact span is unknown masks its
    whole line. Masking repeats while the scan still finds something (a mask can
    reveal a neighbour's shape); ``redaction_leftovers`` says what is left, if anything.
    """
    total = 0
    for _ in range(3):
        text, n = _mask_once(text)
        total += n
        if not n:
            break
    return text, total


def redaction_leftovers(text: str) -> list[Finding]:
    """What the secret scan still finds in a redacted text: a write must refuse if any."""
    return [f for f, _ in scan_secrets(text)]
