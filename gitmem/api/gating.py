"""The write gate as the library applies it: to every free-text field of a memory.

Why this exists: ``gitmem.gate`` scans one string; this module decides which
fields of an op are scanned, how a refusal is reported (one error listing every
finding, the secret never echoed), what ``--redact`` may mask, and how replay
asks "would the gate refuse this today?" to quarantine what came from others.
``gitmem.gate`` (and detect-secrets) is imported only when text is scanned.
"""

from __future__ import annotations

import msgspec

from .. import ops
from ..errors import GateRefused


def gate_version() -> str:
    from .. import gate

    return gate.version()


def quarantine_reason(body: ops.MemoryBody) -> str | None:
    """Why a replayed memory would not pass the write gate today, or None."""
    fields = [body.text, body.key or "", *body.tags, *body.entities, body.source or ""]
    found = findings("\n".join(v for v in fields if v))
    return "; ".join(found[:3]) if found else None


def screen(body: ops.MemoryBody, *, redact: bool) -> ops.MemoryBody:
    """Run the write gate over every free-text field of a memory."""
    from .. import gate

    fields = {"text": body.text, "key": body.key or "", "tags": "\n".join(body.tags),
              "about": "\n".join(body.entities), "source": body.source or "",
              "session": body.session or "", "paths": "\n".join(body.anchors.paths)}
    found_all: list[str] = []
    text = body.text
    for name, value in fields.items():
        if not value:
            continue
        found = gate.scan(value)
        if name == "text" and redact and found and all(f.category == "secret" for f in found):
            text, _ = gate.redact(value)
            found = gate.scan(text)
        found_all += [f"{f.describe()}" + ("" if name == "text" else f" in {name}") for f in found]
    if found_all:
        secret_only = all(f.startswith("secret") for f in found_all)
        hint = ("remove it, or use --redact to store the text with secrets masked"
                if secret_only and not redact else
                "remove it: memories are shared with every clone and read by agents "
                "(see docs/security.md)")
        raise GateRefused(found_all, hint)
    return msgspec.structs.replace(body, text=text) if text != body.text else body


def findings(text: str) -> list[str]:
    from .. import gate

    return [f.describe() for f in gate.scan(text)]


def screen_reason(reason: str | None) -> str | None:
    """A reason is free text that replicates like a memory: the same gate applies."""
    found = findings(reason) if reason else []
    if found:
        raise GateRefused([f"{f} in reason" for f in found],
                          "remove it from the reason: reasons are shared with every clone")
    return reason
