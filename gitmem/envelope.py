"""The one ``--json`` envelope, shared by the command line and the MCP server.

Agents parse this shape, so it is built in one place and its version lives
here (docs/cli.md and the man page are generated from it)::

    {"ok": true, "command": "recall", "version": 1, "data": ..., "warnings": [...]}
    {"ok": false, "command": "recall", "version": 1, "error": {...}, "warnings": [...]}

The MCP server names the field ``tool`` instead of ``command``; nothing else
differs. Pure: no click, no SDK, no store.
"""

from __future__ import annotations

from typing import Any, Literal

import msgspec

# Bump only for a change an agent parsing version 1 would misread; adding a
# field to ``data`` is not one.
VERSION = 1

Label = Literal["command", "tool"]


def ok(name: str, data: Any, warnings: list[str], label: Label = "command") -> dict[str, Any]:
    """A success: ``data`` is any result of the library (Structs become plain JSON)."""
    return {"ok": True, label: name, "version": VERSION, "data": msgspec.to_builtins(data),
            "warnings": list(warnings)}


def error(name: str, error: dict[str, object], warnings: list[str],
          label: Label = "command") -> dict[str, Any]:
    """A failure: ``error`` is ``GitMemError.to_dict()`` (code, message, hint, exit_code)."""
    return {"ok": False, label: name, "version": VERSION, "error": error,
            "warnings": list(warnings)}


def encode(payload: dict[str, Any]) -> str:
    """One line of compact JSON, as printed on stdout and put in a tool result."""
    return msgspec.json.encode(payload).decode()
