"""Every line the CLI prints goes through ``echo``: ``click.echo``, or a plain write.

Why not always click: the fast path (fast.py) answers the hot forms of
``recall``, ``add`` and ``context`` without loading click (~6-10 ms of a fresh
process). It runs only where ``click.echo`` would write to ``sys.stdout`` and
``sys.stderr`` themselves (not on Windows; text streams whose encoding is not
ASCII: ``fast.plain_streams``), and what it prints is escaped by
``render.safe`` or JSON, so there is no ANSI code for click to strip: a write
and a flush there are the bytes ``click.echo`` writes.
"""

from __future__ import annotations

import sys

# Set by the fast path once it has checked the streams.
plain = False

# Output goes out in pieces no longer than this. Why: CPython's buffered writer
# (3.11-3.13) hands one large write to the pipe; when the reader goes away
# part-way (`git mem log | head -1` on a large log), the write returns short and
# the EPIPE that follows is lost, so the command exited 0 with its output cut.
# Piece by piece, the next write meets the closed pipe and raises, and the
# command ends as git does (exit 141, output.internal_error).
PIECE = 16384


def echo(text: str, err: bool = False, nl: bool = True) -> None:
    """One line on stdout (or stderr), flushed, as ``click.echo`` prints it.

    A line on stderr (a warning, an error's message) is best effort: a full or
    broken stderr must not take the answer on stdout, or the exit code, with it."""
    if nl:
        text += "\n"
    try:
        if not plain:
            import click

            for piece in _pieces(text, err):
                click.echo(piece, err=err, nl=False)
            return
        stream = sys.stderr if err else sys.stdout
        for piece in _pieces(text, err):
            stream.write(piece)
            stream.flush()
    except OSError:
        if not err:
            raise
        import os  # stderr failed: what is left in its buffer must not fail the exit too

        sys.stderr = open(os.devnull, "w", encoding="utf-8")  # noqa: SIM115 - for the process


def _pieces(text: str, err: bool) -> list[str]:
    if err or len(text) <= PIECE:
        return [text]
    return [text[i:i + PIECE] for i in range(0, len(text), PIECE)]
