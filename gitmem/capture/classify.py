"""A memory's kind by rule of thumb: shared by bootstrap and session capture.

A sentence that names a command (in backticks) is a procedure; one that lays
down a rule (always, never, must, prefer, ...) is a convention (a note tagged
``convention``); anything else is a plain note. Proposals are reviewed by a
person (bootstrap's dry run, the inbox), so a wrong guess costs one edit.
"""

from __future__ import annotations

import re

COMMAND = re.compile(r"`[^`]*\b(?:make|npm|pnpm|yarn|npx|pip|uv|poetry|pytest|python|cargo|go|"
                     r"gradle|mvn|docker|kubectl|git|bundle|rake|rails|mix|dotnet|just|task|"
                     r"tox|nox|bazel|deno|bun)\b[^`]*`", re.IGNORECASE)
RULE = re.compile(r"\b(?:always|never|must|must not|do not|don't|should|shouldn't|prefer|avoid)\b",
                  re.IGNORECASE)


def classify(text: str) -> tuple[str, list[str]]:
    """(kind, tags) for a proposed memory's text."""
    if COMMAND.search(text):
        return "procedure", []
    if RULE.search(text):
        return "note", ["convention"]
    return "note", []
