"""Installing git mem's hooks into an agent's settings file, and removing them.

Pure file and JSON logic (no git, no SQLite): the CLI finds the work tree;
this module edits the agent's project settings (``.claude/settings.json``,
``.gemini/settings.json``, ``.codex/hooks.json``, ``.github/hooks/git-mem.json``)
and nothing else, keeping every other key and hook as it found them.

The Claude Code settings contract (hooks reference,
https://code.claude.com/docs/en/hooks): ``{"hooks": {"<Event>": [{"matcher":
"...", "hooks": [{"type": "command", "command": "...", "timeout":
<seconds>}]}]}}``; ``SessionStart`` matchers name the session's source
(startup, resume, clear, compact); ``UserPromptSubmit`` takes no matcher;
``PreToolUse`` matchers name tools (``Read|Edit|Write``).

Gemini CLI uses the same shape in ``.gemini/settings.json`` (hooks reference,
https://geminicli.com/docs/hooks/reference) with its own event names, tool
names and timeouts in milliseconds. Its ``BeforeTool`` cannot add context, so
a file's memories come with ``AfterTool`` (appended to what the tool read).

GitHub Copilot reads ``.github/hooks/*.json`` in two hosts: VS Code's agent
hooks and Copilot CLI (and its cloud agent). The file is Copilot CLI's format
(hooks reference, https://docs.github.com/en/copilot/reference/hooks-reference):
``{"version": 1, "hooks": {"<event>": [{"type": "command", "bash": "...",
"powershell": "...", "timeoutSec": <seconds>}]}}``, flat (no groups), events in
camelCase, the spelling every Copilot CLI release reads (PascalCase names came
later, as a VS Code-compatible variant).
VS Code reads the same file, turning ``sessionStart`` into ``SessionStart``,
``bash`` into its macOS and Linux command and ``powershell`` into its Windows
one (https://code.visualstudio.com/docs/agent-customization/hooks). We write
our own file, ``git-mem.json``, and wire only the two events whose output both
hosts add to the model's context: sessionStart and postToolUse (a file's
memories after it was viewed or changed). Copilot CLI drops what a
userPromptSubmitted command prints, and VS Code reads no context from
UserPromptSubmit, so prompts get no hook.

Our entries are recognised by their command (``git mem hook ...``), so
uninstall removes exactly them and install never duplicates them.
"""

from __future__ import annotations

import errno
import json
import os
import stat
from pathlib import Path
from typing import Any

import msgspec

from ..errors import InvalidInput

COMMAND_PREFIX = "git mem hook "

# event -> (matcher or None, command, timeout in the agent's unit)
CLAUDE_HOOKS: dict[str, tuple[str | None, str, int]] = {
    # Not on resume: the resumed transcript already holds the briefing.
    "SessionStart": ("startup|clear|compact", COMMAND_PREFIX + "session-start", 30),
    "UserPromptSubmit": (None, COMMAND_PREFIX + "user-prompt", 10),
    # Before a file is read or changed: the memories anchored to it, once per session.
    "PreToolUse": ("Read|Edit|MultiEdit|Write|NotebookEdit", COMMAND_PREFIX + "pre-tool", 10),
    # After each turn, at the end and before compaction: capture the session in the
    # background (proposals wait in the inbox; the hook returns at once).
    "Stop": (None, COMMAND_PREFIX + "session-end", 10),
    "SessionEnd": (None, COMMAND_PREFIX + "session-end", 10),
    "PreCompact": (None, COMMAND_PREFIX + "session-end", 10),
}
GEMINI_HOOKS: dict[str, tuple[str | None, str, int]] = {
    "SessionStart": (None, COMMAND_PREFIX + "session-start", 30_000),
    "BeforeAgent": (None, COMMAND_PREFIX + "user-prompt", 10_000),
    "AfterTool": ("read_file|replace|write_file", COMMAND_PREFIX + "pre-tool", 10_000),
    "SessionEnd": (None, COMMAND_PREFIX + "session-end --agent gemini-cli", 10_000),
    "PreCompress": (None, COMMAND_PREFIX + "session-end --agent gemini-cli", 10_000),
}
# Codex CLI reads Claude Code's shape from .codex/hooks.json (developers.openai.com/
# codex/hooks; its PreToolUse sees only Bash, so files get no hook). Stop (after each
# turn), PreCompact and SessionEnd (Codex 0.145 and later, which caps its timeout at
# 3 s) send the session's rollout as transcript_path: capture reads it. A Codex
# without SessionEnd ignores the key (its hooks file has one field per known event).
CODEX_HOOKS: dict[str, tuple[str | None, str, int]] = {
    "SessionStart": ("startup|clear", COMMAND_PREFIX + "session-start", 30),
    "UserPromptSubmit": (None, COMMAND_PREFIX + "user-prompt", 10),
    "Stop": (None, COMMAND_PREFIX + "session-end --agent codex", 10),
    "PreCompact": (None, COMMAND_PREFIX + "session-end --agent codex", 10),
    "SessionEnd": (None, COMMAND_PREFIX + "session-end --agent codex", 3),
}


# GitHub Copilot (.github/hooks/git-mem.json, read by VS Code and Copilot CLI):
# the matcher is Copilot CLI's tool-name regex (VS Code ignores matchers and
# runs the command after every tool; the answer is empty for a tool without a file).
COPILOT_HOOKS: dict[str, tuple[str | None, str, int]] = {
    "sessionStart": (None, COMMAND_PREFIX + "session-start", 30),
    "postToolUse": ("view|edit|create|str_replace_editor", COMMAND_PREFIX + "pre-tool", 10),
}


class AgentSpec(msgspec.Struct, frozen=True):
    settings: Path  # relative to the work tree
    hooks: dict[str, tuple[str | None, str, int]]
    flat: bool = False  # Copilot's entries: commands straight in the event's list


SPECS: dict[str, AgentSpec] = {
    "claude-code": AgentSpec(Path(".claude") / "settings.json", CLAUDE_HOOKS),
    "gemini-cli": AgentSpec(Path(".gemini") / "settings.json", GEMINI_HOOKS),
    "codex": AgentSpec(Path(".codex") / "hooks.json", CODEX_HOOKS),
    "copilot": AgentSpec(Path(".github") / "hooks" / "git-mem.json", COPILOT_HOOKS, flat=True),
}
COPILOT_VERSION = 1  # the "version" of a Copilot hooks file
AGENTS = tuple(SPECS)
SETTINGS = SPECS["claude-code"].settings


class HooksReport(msgspec.Struct, kw_only=True):
    agent: str
    path: str
    status: str  # installed | already installed | removed | not installed
    changed: bool
    events: list[str] = []  # the events whose entries were added or removed


# -- settings.json -------------------------------------------------------------------


def _load(path: Path, events: dict[str, Any], flat: bool = False,
          within: Path | None = None) -> dict[str, Any]:
    try:
        found = read_bytes(path, within)
        if found is None:
            return {}
        raw = found.decode("utf-8-sig")  # a BOM is tolerated, as editors write it
    except (OSError, UnicodeDecodeError) as exc:
        raise InvalidInput(f"cannot read {path} ({exc}); nothing was changed",
                           "make it a readable UTF-8 JSON file (or move it away), then run "
                           "the command again") from None
    if not raw.strip():
        return {}
    try:
        data = json.loads(raw)
    except (ValueError, RecursionError) as exc:  # (a committed file nested 100k deep)
        raise InvalidInput(
            f"{path} is not valid JSON ({exc}); nothing was changed",
            "fix the file (or move it away), then run the command again",
        ) from None
    if not isinstance(data, dict):
        raise InvalidInput(f"{path} does not hold a JSON object; nothing was changed",
                           "fix the file (or move it away), then run the command again")
    hooks = data.get("hooks", {})
    # Other keys under "hooks" (Gemini CLI's "enabled", "disabled") are kept as
    # they are; an event's value must be a list of groups.
    if not isinstance(hooks, dict) or not all(
            isinstance(v, list) and all(isinstance(g, dict) and isinstance(g.get("hooks", []), list)
                                        for g in v)
            for e, v in hooks.items() if isinstance(v, list) or e in events):
        raise InvalidInput(
            f'{path}: "hooks" is not an object of lists; nothing was changed',
            "fix the file's hooks section (see the Claude Code hooks reference), then run again",
        )
    if flat and data.get("version", COPILOT_VERSION) != COPILOT_VERSION:
        raise InvalidInput(f'{path}: "version" is not {COPILOT_VERSION}; nothing was changed',
                           "fix the file (Copilot's hooks files are version 1), then run again")
    return data


def write_json(path: Path, data: dict[str, Any], within: Path | None = None) -> None:
    """Write all or nothing (see ``write_text``), 2-space indented."""
    write_text(path, json.dumps(data, indent=2, ensure_ascii=False) + "\n", within=within)


# The checks on a file to read or write (``inside``) and the read or write are two
# steps, and another process may put a link, a FIFO or a folder at the path between
# them: so a read opens what is there without following a link or waiting for a
# FIFO's writer and checks what it opened, and a write goes to a new file (never one
# already there) renamed onto a path that is checked again just before.
_READ = (os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
         | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0))


def resolved(path: Path, within: Path | None = None) -> Path:
    """``path`` with its links resolved (a symlinked settings file is read and written
    through), checked again against the work tree ``within`` (``inside``'s check:
    a link put there since leads nowhere outside it), so that the read or write
    uses this path and never resolves the links anew."""
    real = Path(os.path.realpath(path))
    if within is not None:
        inside(within, real)
    return real


# The largest agent settings or instructions file read (and so rewritten): hand-made
# ones are a few KB. A teammate's committed 300 MB copilot-instructions.md made
# 'hooks install --agent copilot' read and rewrite it (6.3 s, 944 MB; issue 13).
MAX_FILE_BYTES = 4 << 20


def read_bytes(path: Path, within: Path | None = None) -> bytes | None:
    """The content of the regular file at ``path`` (a link to one in the work tree
    ``within`` is resolved first, as ``write_text`` writes through it), None when
    there is none. OSError when what is there is no regular file (a FIFO, a folder,
    a link put there since): never followed, never waited on. InvalidInput when it
    holds more than MAX_FILE_BYTES: refused, never read whole."""
    real = resolved(path, within)
    try:
        fd = os.open(real, _READ)
    except FileNotFoundError:
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise OSError(errno.EINVAL, f"{path} is not a regular file")
        chunks, size = [], 0
        while size <= MAX_FILE_BYTES and (chunk := os.read(fd, 1 << 16)):
            chunks.append(chunk)
            size += len(chunk)
        if size > MAX_FILE_BYTES:  # (read up to the limit only: it may be growing)
            raise too_big(path, max(size, info.st_size))
        return b"".join(chunks)
    finally:
        os.close(fd)


def too_big(path: Path, size: int) -> InvalidInput:
    """The refusal of an agent file over MAX_FILE_BYTES."""
    return InvalidInput(
        f"{path} holds {size / (1 << 20):.1f} MiB, more than the "
        f"{MAX_FILE_BYTES >> 20} MiB git mem reads of an agent's file; nothing was changed",
        "shorten it (or move it away), then run the command again")


def _regular(path: Path, shown: Path) -> None:
    """InvalidInput when something that is no regular file is at ``path`` (not
    followed); a regular file or nothing passes."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return
    if not stat.S_ISREG(info.st_mode):
        raise InvalidInput(
            f"{shown} is not a regular file; nothing was changed",
            "put a regular file of its own there (not a link, a folder or a FIFO), or edit "
            "the settings by hand",
        )


def write_text(path: Path, text: str, *, newline: str | None = None,
               within: Path | None = None) -> None:
    """Write all or nothing (``export.replace_file``: a new file renamed onto the
    path, which must hold a regular file or nothing, checked again just before).
    ``newline``: as ``open``'s ("" keeps the text's line endings); ``within``: the
    work tree the path was checked against (``resolved``)."""
    from ..api.export import replace_file

    shown = path
    path = resolved(path, within)  # a symlinked settings file stays a symlink
    path.parent.mkdir(parents=True, exist_ok=True)
    _regular(path, shown)
    if newline is None:
        newline = os.linesep
    if newline not in ("", "\n"):
        text = text.replace("\n", newline)
    try:
        replace_file(path, text.encode("utf-8"))
    except OSError:
        _regular(path, shown)  # something else put there since: said as the check says it
        raise


# Where an entry keeps its command: "command" (Claude Code's shape); Copilot's
# "bash" and "powershell" as well.
_COMMAND_KEYS = ("command", "bash", "powershell")


def _ours(entry: object) -> bool:
    return isinstance(entry, dict) and any(
        str(entry.get(k, "")).startswith(COMMAND_PREFIX) for k in _COMMAND_KEYS)


def _runs(entry: object, command: str) -> bool:
    return isinstance(entry, dict) and any(entry.get(k) == command for k in _COMMAND_KEYS)


def _has(groups: list[Any], command: str, flat: bool = False) -> bool:
    if flat:
        return any(_runs(e, command) for e in groups)
    return any(isinstance(g, dict) and any(_runs(h, command) for h in g.get("hooks") or [])
               for g in groups)


def _entry(matcher: str | None, command: str, timeout: int, flat: bool) -> dict[str, Any]:
    """One of our entries in the agent's shape."""
    if not flat:
        group: dict[str, Any] = {} if matcher is None else {"matcher": matcher}
        group["hooks"] = [{"type": "command", "command": command, "timeout": timeout}]
        return group
    # Copilot CLI reads bash/powershell and timeoutSec; VS Code maps bash and
    # powershell to its OS commands and documents "timeout" (both in seconds).
    entry: dict[str, Any] = {"type": "command", "bash": command, "powershell": command}
    if matcher is not None:
        entry["matcher"] = matcher
    entry["timeoutSec"] = entry["timeout"] = timeout
    return entry


def _check_agent(agent: str) -> None:
    if agent not in AGENTS:
        raise InvalidInput(f"unknown agent '{agent}'", f"use one of: {', '.join(AGENTS)}")


def inside(root: Path, path: Path) -> Path:
    """``path``, refused when it (or a folder on the way) is a symlink leading out
    of the repository or into its git dir: a committed ``.claude/settings.json``
    linking to the user's own settings must not make an install write there."""
    from ..api.validate import foreign_file

    problem = foreign_file(root, path)
    if problem is not None:
        raise InvalidInput(
            f"{problem}; nothing was changed",
            "replace the link with a file of its own, or edit the settings it points to by hand",
        )
    return path


def install(root: Path, agent: str = "claude-code") -> HooksReport:
    """Add our hooks to the agent's settings in ``root``, keeping everything else."""
    _check_agent(agent)
    spec = SPECS[agent]
    path = inside(root, root / spec.settings)
    data = _load(path, spec.hooks, spec.flat, root)
    if spec.flat and "version" not in data:
        data = {"version": COPILOT_VERSION, **data}
    hooks = data.setdefault("hooks", {})
    added = []
    for event, (matcher, command, timeout) in spec.hooks.items():
        groups = hooks.setdefault(event, [])
        if _has(groups, command, spec.flat):
            continue
        groups.append(_entry(matcher, command, timeout, spec.flat))
        added.append(event)
    if added:
        write_json(path, data, root)
    return HooksReport(agent=agent, path=str(path),
                       status="installed" if added else "already installed",
                       changed=bool(added), events=added)


def uninstall(root: Path, agent: str = "claude-code") -> HooksReport:
    """Remove exactly our hook entries; leave every other key and hook alone."""
    _check_agent(agent)
    spec = SPECS[agent]
    path = inside(root, root / spec.settings)
    if not path.exists():
        return HooksReport(agent=agent, path=str(path), status="not installed", changed=False)
    data = _load(path, spec.hooks, spec.flat, root)
    hooks = data.get("hooks")
    removed = []
    if isinstance(hooks, dict):
        for event in list(hooks):
            if not isinstance(hooks[event], list):
                continue
            kept_groups = []
            for group in hooks[event]:
                if spec.flat and _ours(group):
                    if event not in removed:
                        removed.append(event)
                    continue
                if isinstance(group, dict) and isinstance(group.get("hooks"), list) and any(
                        _ours(h) for h in group["hooks"]):
                    rest = [h for h in group["hooks"] if not _ours(h)]
                    if event not in removed:
                        removed.append(event)
                    if not rest:
                        continue  # the group held only our command
                    group = {**group, "hooks": rest}
                kept_groups.append(group)
            if kept_groups:
                hooks[event] = kept_groups
            elif event in removed:
                del hooks[event]
        if not hooks and removed:
            del data["hooks"]
    if not removed:
        return HooksReport(agent=agent, path=str(path), status="not installed", changed=False)
    if data and not (spec.flat and data == {"version": COPILOT_VERSION}):
        write_json(path, data, root)
    else:  # nothing left but what install created
        path.unlink()
        try:
            path.parent.rmdir()
        except OSError:
            pass  # not empty: other files live there
    order = list(spec.hooks)
    removed.sort(key=lambda e: (order.index(e) if e in order else len(order), e))
    return HooksReport(agent=agent, path=str(path), status="removed", changed=True,
                       events=removed)


def installed(root: Path, agent: str) -> list[str]:
    """The events whose git mem hook is in the agent's settings in ``root``."""
    _check_agent(agent)
    spec = SPECS[agent]
    path = root / spec.settings
    if not path.exists():
        return []
    try:
        hooks = _load(path, spec.hooks, spec.flat, root).get("hooks", {})
    except InvalidInput:
        return []
    return [event for event, (_, command, _) in spec.hooks.items()
            if isinstance(hooks.get(event), list) and _has(hooks[event], command, spec.flat)]
