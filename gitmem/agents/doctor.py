"""``git mem doctor``: per coding agent on this machine or in this repository, what
is wired to git mem and what is not.

An agent counts as present when its program is on PATH or its project folder or
file is in the work tree. For each: its lifecycle hooks (Claude Code, Gemini
CLI, Codex CLI and GitHub Copilot have hooks git mem installs; the others have
none it can use, see docs/agents.md), its MCP entry (project and user scope), and whether the
instruction file it reads mentions git mem. Reads files only; changes nothing.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import msgspec

from ..api.export import BEGIN, END, block_span
from ..errors import GitMemError
from . import clients, settings

# agent -> (programs, project markers, instruction files it reads, hook agent or None)
AGENTS: dict[str, tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...], str | None]] = {
    "claude-code": (("claude",), (".claude", ".mcp.json", "CLAUDE.md"), ("CLAUDE.md", "AGENTS.md"),
                    "claude-code"),
    "cursor": (("cursor", "cursor-agent"), (".cursor", ".cursorrules"),
               (".cursor/rules", ".cursorrules", "AGENTS.md"), None),
    "codex": (("codex",), (".codex",), ("AGENTS.md",), "codex"),
    "gemini-cli": (("gemini",), (".gemini", "GEMINI.md"), ("GEMINI.md", "AGENTS.md"),
                   "gemini-cli"),
    "windsurf": (("windsurf",), (".windsurf", ".windsurfrules"),
                 (".windsurfrules", ".windsurf/rules", "AGENTS.md"), None),
    "opencode": (("opencode",), ("opencode.json", ".opencode"), ("AGENTS.md",), None),
    "copilot": (("code", "copilot"),
                (".vscode", ".github/copilot-instructions.md", ".github/hooks"),
                (".github/copilot-instructions.md", "AGENTS.md"), "copilot"),
}


class AgentState(msgspec.Struct, kw_only=True):
    agent: str
    found: list[str]  # why it counts as present ("on PATH: claude", ".cursor/")
    hooks: str  # "installed", "partly installed (...)", "not installed", "no hooks"
    mcp_project: bool | None  # None: the client has no project-level file
    mcp_user: bool | None
    instructions: str | None  # the instruction file that mentions git mem, if any
    todo: list[str] = []  # the commands that would wire what is missing


def check(root: Path | None, home: Path, *, everything: bool = False) -> list[AgentState]:
    """Every agent found (all of them with ``everything``). With no ``root`` (not in a
    repository): what is on PATH and the user-scope MCP entries, nothing of a project."""
    out = []
    for agent, (programs, markers, files, hook_agent) in AGENTS.items():
        found = [f"on PATH: {p}" for p in programs if shutil.which(p)]
        found += [m + ("/" if (root / m).is_dir() else "") for m in markers
                  if root is not None and (root / m).exists()]
        if not found and not everything:
            continue
        todo: list[str] = []
        if root is None:
            out.append(_outside(agent, found, home, hook_agent))
            continue
        if hook_agent is None:
            hooks = "no hooks"
        else:
            have = settings.installed(root, hook_agent)
            want = list(settings.SPECS[hook_agent].hooks)
            hooks = ("installed" if have == want else "not installed" if not have else
                     f"partly installed ({', '.join(have)})")
            if have != want:
                todo.append(f"git mem hooks install --agent {hook_agent}")
        project = clients.installed(agent, "project", root, home)
        user = clients.installed(agent, "user", root, home)
        if not project and not user:
            scope = "project" if project is not None else "user"
            todo.append(f"git mem mcp install --client {agent} --scope {scope}")
        told = next((f for f in files if _mentions(root / f)), None)
        if told is None:
            todo.append(f"git mem agents-md >> {files[0] if '/' not in files[0] else 'AGENTS.md'}")
        out.append(AgentState(agent=agent, found=found, hooks=hooks, mcp_project=project,
                              mcp_user=user, instructions=told, todo=todo))
    return out


def _outside(agent: str, found: list[str], home: Path, hook_agent: str | None) -> AgentState:
    """An agent seen from outside any repository: its user-scope MCP entry only (hooks
    and instruction files belong to a repository)."""
    try:
        user = clients.installed(agent, "user", home, home)
    except GitMemError:
        user = None
    return AgentState(agent=agent, found=found,
                      hooks="no hooks" if hook_agent is None else "not in a repository",
                      mcp_project=None, mcp_user=user, instructions=None,
                      todo=[f"git mem mcp install --client {agent} --scope user"]
                      if user is False else [])


def _mentions(path: Path) -> bool:
    """A file (or any file of a folder) that mentions git mem outside the block
    ``git mem export --into`` writes: that block holds team facts and names
    ``git mem recall`` in passing, but tells an agent nothing about using the memory
    (it counted, and doctor stopped suggesting agents-md)."""
    files = sorted(path.rglob("*"))[:200] if path.is_dir() else [path]
    for f in files:
        try:
            if f.is_file() and "git mem" in _without_export(_head(f)):
                return True
        except OSError:
            continue
    return False


def _head(path: Path, limit: int = 200_000) -> str:
    """The first ``limit`` bytes of a file as text: only those are looked at, and only
    those are read (a committed 300 MB instructions file cost doctor 638 MB)."""
    with open(path, "rb") as f:
        return f.read(limit).decode("utf-8", errors="replace")


def _without_export(text: str) -> str:
    while (span := block_span(text, BEGIN, END)) is not None:
        text = text[:span[0]] + text[span[1]:]
    return text
