"""The ``git mem`` command line: parse, make one library call, print.

Every command takes ``--json`` and then prints exactly one envelope on stdout
(gitmem/envelope.py):

    {"ok": true, "command": "recall", "version": 1, "data": ..., "warnings": [...]}
    {"ok": false, "command": "recall", "version": 1, "error": {...}, "warnings": [...]}

Errors also print one line on stderr, ``error: <message>; hint: <hint>``, and
exit with the code documented in gitmem/errors.py and docs/cli.md.

``app`` holds the group, the one run-and-print path and the error map;
``render`` every line of human output; the other modules the commands, by
theme. Importing one registers its commands on ``cli``; the group imports a
command's module only when that command runs (``app.COMMANDS``), and
``load_all()`` registers every command.
"""

from __future__ import annotations

from .app import COMPLETE_VAR, cli, load_all, main

__all__ = ["cli", "main", "load_all", "COMPLETE_VAR"]
