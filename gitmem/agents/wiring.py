"""Wiring an agent that has no hook system git mem uses: its MCP entry and a
usage block in the instruction file it reads.

``git mem hooks install --agent cursor|windsurf|opencode|copilot`` comes
here: it installs what the agent has (clients.py for the MCP entry, at project
scope where the client has one) and the ``git mem agents-md`` block between
markers in the agent's instruction file, so a re-run changes nothing and
uninstall removes exactly the block (and the file, if the block was all of it).
``git mem bootstrap`` skips the block: it is ours, not the repository's.
"""

from __future__ import annotations

from pathlib import Path

from ..api.export import AGENTS_BEGIN as BEGIN, AGENTS_END as END
from .agents_md import AGENTS_MD
from .clients import CLIENTS, install as mcp_install, uninstall as mcp_uninstall
from .settings import HooksReport, inside

# The instruction file each agent reads (AGENTS.md where it reads that).
INSTRUCTIONS = {"cursor": "AGENTS.md", "opencode": "AGENTS.md",
                "windsurf": ".windsurfrules", "copilot": ".github/copilot-instructions.md"}


def scope_of(agent: str) -> str:
    return "project" if CLIENTS[agent].project is not None else "user"


def install(root: Path, home: Path, agent: str) -> HooksReport:
    mcp = mcp_install(agent, scope_of(agent), root, home)
    path = inside(root, root / INSTRUCTIONS[agent])
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    added = [] if not mcp.changed else ["mcp"]
    if BEGIN not in text:
        block = f"{BEGIN}\n{AGENTS_MD.rstrip()}\n{END}\n"
        sep = "" if not text else ("\n" if text.endswith("\n") else "\n\n")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text + sep + block, encoding="utf-8")
        added.append("instructions")
    return HooksReport(agent=agent, path=f"{mcp.path}, {path}",
                       status="installed" if added else "already installed",
                       changed=bool(added), events=added)


def uninstall(root: Path, home: Path, agent: str) -> HooksReport:
    mcp = mcp_uninstall(agent, scope_of(agent), root, home)
    path = inside(root, root / INSTRUCTIONS[agent])
    removed = ["mcp"] if mcp.changed else []
    if path.exists():
        text = path.read_text(encoding="utf-8")
        start, end = text.find(BEGIN), text.find(END)
        if start >= 0 and end > start:
            rest = (text[:start].rstrip("\n") + "\n" + text[end + len(END):].lstrip("\n"))
            rest = rest.strip("\n")
            if rest:
                path.write_text(rest + "\n", encoding="utf-8")
            else:
                path.unlink()
            removed.append("instructions")
    return HooksReport(agent=agent, path=f"{mcp.path}, {path}",
                       status="removed" if removed else "not installed",
                       changed=bool(removed), events=removed)
