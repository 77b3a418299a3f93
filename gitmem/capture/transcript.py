"""Reading an agent's session transcript into a few plain events.

Why this exists: extractors (rules.py, runner.py) should not know any agent's
file format. This module turns a transcript into ``Event``s: what the person
said, what the agent said, the tools it ran (a shell command and whether it
succeeded, a file it read or changed), each with the line it came from (the
evidence an inbox entry shows).

The Claude Code format (JSON lines, one object per line; ~/.claude/projects/
<project>/<session>.jsonl): ``{"type": "user" | "assistant" | ..., "message":
{"role", "content"}, "uuid", "timestamp", "isSidechain", "isMeta"}``. A user
message's content is a string (what the person typed) or blocks, among them
``tool_result`` (``tool_use_id``, ``content``, ``is_error``); an assistant's
holds ``text`` and ``tool_use`` (``id``, ``name``, ``input``) blocks. Gemini
CLI's JSON transcript (``{"messages": [{"type": "user" | "gemini", "content",
"toolCalls"}]}``) is read the same way, as far as it goes.

The transcript is hostile input like anything from disk: every line is parsed
on its own, a line that is not what we expect is skipped, and the amount read
is bounded (the newest MAX_BYTES).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec
import msgspec.structs

MAX_BYTES = 8 * 1024 * 1024  # the newest part of a long transcript is read
MAX_TEXT = 4000  # characters kept of one message or command output

# Text Claude Code injects as a "user" message that the person did not type.
_INJECTED = ("<command-name>", "<command-message>", "<local-command-stdout>",
             "<system-reminder>", "<user-prompt-submit-hook>", "Caveat: ",
             "This session is being continued from a previous conversation")

FILE_TOOLS = {"Read": "read", "Edit": "edit", "MultiEdit": "edit", "Write": "write",
              "NotebookEdit": "edit", "read_file": "read", "replace": "edit",
              "write_file": "write"}
SHELL_TOOLS = {"Bash", "run_shell_command"}


class Event(msgspec.Struct, frozen=True, kw_only=True):
    """One thing that happened in a session, in order."""

    line: int  # 1-based line of the transcript it came from
    kind: str  # "said" (the person), "reply" (the agent), "command", "file"
    text: str = ""  # what was said; the command; the file's path
    ok: bool | None = None  # a command's outcome (None: no result seen)
    action: str | None = None  # a file event's read | edit | write


def read(path: str | os.PathLike[str]) -> list[Event]:
    """The events of the transcript at ``path`` (empty when it cannot be read)."""
    try:
        with open(path, "rb") as fh:
            size = fh.seek(0, os.SEEK_END)
            start = max(0, size - MAX_BYTES)
            fh.seek(start)
            data = fh.read()
    except OSError:
        return []
    first_line = 1
    if start:
        cut = data.find(b"\n")  # a partial first line is dropped
        data = data[cut + 1:] if cut >= 0 else b""
        first_line = 0  # unknown: numbered from the part read
    stripped = data.lstrip()
    if stripped.startswith(b"{") and b'"messages"' in data[:4096] and not _is_jsonl(data):
        return list(_gemini(data))
    return list(_claude(data, first_line))


def _is_jsonl(data: bytes) -> bool:
    head = data.split(b"\n", 1)[0]
    try:
        obj = json.loads(head)
    except ValueError:
        return False
    return isinstance(obj, dict) and "messages" not in obj


def _claude(data: bytes, first_line: int) -> Iterator[Event]:
    pending: dict[str, tuple[int, str]] = {}  # tool_use id -> (line, command)
    for n, raw in enumerate(data.split(b"\n"), start=max(first_line, 1)):
        if not raw.strip():
            continue
        try:
            obj = json.loads(raw)
        except ValueError:
            continue
        if not isinstance(obj, dict) or obj.get("isSidechain") is True:
            continue  # a subagent's own conversation: not this session's
        message = obj.get("message")
        if not isinstance(message, dict):
            continue
        content = message.get("content")
        if obj.get("type") == "user":
            if isinstance(content, str):
                if obj.get("isMeta") is not True and not content.lstrip().startswith(_INJECTED):
                    yield Event(line=n, kind="said", text=content[:MAX_TEXT])
                continue
            for block in _blocks(content):
                if block.get("type") == "text" and obj.get("isMeta") is not True:
                    text = block.get("text")
                    if isinstance(text, str) and not text.lstrip().startswith(_INJECTED):
                        yield Event(line=n, kind="said", text=text[:MAX_TEXT])
                elif block.get("type") == "tool_result":
                    use = block.get("tool_use_id")
                    if isinstance(use, str) and use in pending:
                        line, command = pending.pop(use)
                        yield Event(line=line, kind="command", text=command,
                                    ok=block.get("is_error") is not True)
        elif obj.get("type") == "assistant":
            for block in _blocks(content):
                typ = block.get("type")
                if typ == "text" and isinstance(block.get("text"), str):
                    yield Event(line=n, kind="reply", text=block["text"][:MAX_TEXT])
                elif typ == "tool_use":
                    yield from _tool(n, block.get("name"), block.get("input"),
                                     block.get("id"), pending)
    for line, command in pending.values():  # never answered (the session ended)
        yield Event(line=line, kind="command", text=command, ok=None)


def _tool(n: int, name: object, args: object, use_id: object,
          pending: dict[str, tuple[int, str]]) -> Iterator[Event]:
    if not isinstance(name, str) or not isinstance(args, dict):
        return
    if name in SHELL_TOOLS:
        command = args.get("command")
        if isinstance(command, str) and command.strip():
            if isinstance(use_id, str):
                pending[use_id] = (n, command.strip()[:MAX_TEXT])
            else:
                yield Event(line=n, kind="command", text=command.strip()[:MAX_TEXT])
    elif name in FILE_TOOLS:
        path = args.get("file_path") or args.get("notebook_path") or args.get("absolute_path")
        if isinstance(path, str) and path.strip():
            yield Event(line=n, kind="file", text=path.strip(), action=FILE_TOOLS[name])


def _blocks(content: object) -> Iterator[dict[str, Any]]:
    if isinstance(content, list):
        for block in content:
            if isinstance(block, dict):
                yield block


def _gemini(data: bytes) -> Iterator[Event]:
    """Gemini CLI's session file: one JSON object with a list of messages (no line
    numbers to point at: each message's position stands in for its line)."""
    try:
        obj = json.loads(data)
    except ValueError:
        return
    messages = obj.get("messages") if isinstance(obj, dict) else None
    if not isinstance(messages, list):
        return
    for n, m in enumerate(messages, start=1):
        if not isinstance(m, dict):
            continue
        content = m.get("content")
        text = content if isinstance(content, str) else " ".join(
            b.get("text", "") for b in _blocks(content) if isinstance(b.get("text"), str))
        if m.get("type") == "user" and text.strip():
            yield Event(line=n, kind="said", text=text[:MAX_TEXT])
        elif m.get("type") == "gemini":
            if text.strip():
                yield Event(line=n, kind="reply", text=text[:MAX_TEXT])
            for call in m.get("toolCalls") or []:
                if not isinstance(call, dict):
                    continue
                events = list(_tool(n, call.get("name"), call.get("args"), None, {}))
                status = call.get("status")
                for e in events:
                    if e.kind == "command" and isinstance(status, str):
                        e = msgspec.structs.replace(e, ok=status == "success")
                    yield e


def excerpt(text: str, limit: int = 200) -> str:
    """One line of at most ``limit`` characters, for evidence."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def size(path: str | os.PathLike[str]) -> int:
    try:
        return Path(path).stat().st_size
    except OSError:
        return -1
