"""Wiring an agent: its lifecycle hooks where git mem can use them (settings.py),
and for the agents that read an MCP config and an instruction file of their
own, the MCP entry and a usage block.

``git mem hooks install --agent NAME`` comes here. Claude Code, Gemini CLI and
Codex get their hooks. Cursor, Windsurf and OpenCode have no hooks that can add
context (docs/agents.md says why), so they get what they have instead: the MCP
entry (clients.py, at project scope where the client has one) and the ``git
mem agents-md`` block between markers in the instruction file they read.
GitHub Copilot gets all three: its hooks file, its MCP entry and its block. A
re-run changes nothing and uninstall removes exactly what install added (the
block's file too, if the block was all of it). ``git mem bootstrap`` skips the
block: it is ours, not the repository's.
"""

from __future__ import annotations

from pathlib import Path

from ..api.export import AGENTS_BEGIN as BEGIN, AGENTS_END as END, block_span, newline_of
from ..errors import GitMemError, InvalidInput
from .agents_md import block as usage_block
from .clients import CLIENTS, install as mcp_install, uninstall as mcp_uninstall
from . import settings
from .settings import HooksReport, inside, read_bytes, write_text

# The instruction file each agent reads (AGENTS.md where it reads that).
INSTRUCTIONS = {"cursor": "AGENTS.md", "opencode": "AGENTS.md",
                "windsurf": ".windsurfrules", "copilot": ".github/copilot-instructions.md"}


def scope_of(agent: str) -> str:
    return "project" if CLIENTS[agent].project is not None else "user"


def install(root: Path, home: Path, agent: str) -> HooksReport:
    """Everything git mem wires for ``agent``, as one report."""
    reports = []
    if agent in settings.SPECS:
        reports.append(settings.install(root, agent))
    if agent in INSTRUCTIONS:
        try:
            reports.append(_install_extras(root, home, agent))
        except GitMemError:
            # The error says nothing was changed: take back the hooks just written.
            if reports and reports[0].changed:
                settings.uninstall(root, agent)
            raise
    return _merged(agent, reports, "installed", "already installed")


def uninstall(root: Path, home: Path, agent: str) -> HooksReport:
    """Remove exactly what ``install`` added for ``agent``."""
    reports = []
    if agent in settings.SPECS:
        reports.append(settings.uninstall(root, agent))
    if agent in INSTRUCTIONS:
        reports.append(_uninstall_extras(root, home, agent))
    return _merged(agent, reports, "removed", "not installed")


def _merged(agent: str, reports: list[HooksReport], done: str, nothing: str) -> HooksReport:
    if not reports:
        raise InvalidInput(f"unknown agent '{agent}'",
                           f"use one of: {', '.join(sorted({*settings.SPECS, *INSTRUCTIONS}))}")
    if len(reports) == 1:
        return reports[0]
    changed = any(r.changed for r in reports)
    return HooksReport(agent=agent, path=", ".join(r.path for r in reports),
                       status=done if changed else nothing, changed=changed,
                       events=[e for r in reports for e in r.events])


def _install_extras(root: Path, home: Path, agent: str) -> HooksReport:
    path = inside(root, root / INSTRUCTIONS[agent])  # before anything is written
    mcp = mcp_install(agent, scope_of(agent), root, home)
    text = _read(path, root)
    added = [] if not mcp.changed else ["mcp"]
    if block_span(text, BEGIN, END) is None:
        nl = newline_of(text)  # a CRLF file stays CRLF
        block = usage_block(nl)
        sep = "" if not text else (nl if text.endswith("\n") else nl * 2)
        write_text(path, text + sep + block, newline="", within=root)
        added.append("instructions")
    return HooksReport(agent=agent, path=f"{mcp.path}, {path}",
                       status="installed" if added else "already installed",
                       changed=bool(added), events=added)


def _uninstall_extras(root: Path, home: Path, agent: str) -> HooksReport:
    mcp = mcp_uninstall(agent, scope_of(agent), root, home)
    path = inside(root, root / INSTRUCTIONS[agent])
    removed = ["mcp"] if mcp.changed else []
    if path.exists():
        text = _read(path, root)
        span = block_span(text, BEGIN, END)
        if span is not None:
            start, end = span
            nl = newline_of(text)
            rest = (text[:start].rstrip("\r\n") + nl + text[end:].lstrip("\r\n"))
            rest = rest.strip("\r\n")
            if rest:
                write_text(path, rest + nl, newline="", within=root)
            else:
                path.unlink()
            removed.append("instructions")
    return HooksReport(agent=agent, path=f"{mcp.path}, {path}",
                       status="removed" if removed else "not installed",
                       changed=bool(removed), events=removed)


def _read(path: Path, root: Path) -> str:
    """The instructions file's text with its line endings as they are ("" when there is
    none), read without following a link or waiting on a FIFO put there since the check."""
    found = read_bytes(path, root)
    try:
        return "" if found is None else found.decode("utf-8")
    except UnicodeDecodeError as exc:  # (a Latin-1 file was an internal error)
        raise InvalidInput(f"cannot read {path} ({exc}); nothing was changed",
                           "make it a UTF-8 file (or move it away), then run the command "
                           "again") from None
