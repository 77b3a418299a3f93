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

Codex CLI's rollout (JSON lines; ~/.codex/sessions/YYYY/MM/DD/rollout-<time>-<id>.jsonl,
the ``transcript_path`` its hooks send): every line is ``{"timestamp", "type",
"payload"}`` with ``type`` one of ``session_meta`` (``cwd``), ``turn_context``
(``cwd``), ``response_item`` (what the model saw: ``message`` with ``role`` and
``input_text``/``output_text`` blocks, ``function_call`` with ``name``, JSON
``arguments`` and ``call_id``, ``function_call_output`` whose ``output`` is the
text the model read, ``custom_tool_call`` such as ``apply_patch`` with its patch
as ``input``, ``local_shell_call``, ``reasoning``) and ``event_msg`` (what the
terminal showed; mostly a mirror, read only for ``exec_command_end``'s
``exit_code``). Older rollouts wrote the response items bare, without the
envelope. The person's words are the ``user`` messages, less what Codex injects
(AGENTS.md, ``<environment_context>``, ...). A shell command's outcome is read
from its output (``"exit_code"`` in JSON metadata, ``Exit code: N`` or ``Process
exited with code N``); Codex reads files through the shell, so a plain ``cat``,
``sed -n``, ``nl``, ``head`` or ``tail`` of one file counts as reading it, and an
``apply_patch`` as changing the files it names. The format is told from the
content (the envelope's types), never from the file name.

The transcript is hostile input like anything from disk: every line is parsed
on its own, a line that is not what we expect is skipped, and the amount read
is bounded (the newest MAX_BYTES).
"""

from __future__ import annotations

import json
import os
import re
import shlex
import stat
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
    """The events of the transcript at ``path`` (empty when it cannot be read, or is
    not a regular file: a FIFO blocked the capture in open() for good, /dev/zero has
    size 0 and was read whole, 14 GB in 45 s). At most its last MAX_BYTES."""
    try:
        # O_NONBLOCK: opening a FIFO with no writer returns at once instead of waiting.
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    except (OSError, ValueError):
        return []
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            return []
        start = max(0, st.st_size - MAX_BYTES)
        if hasattr(os, "set_blocking"):  # (Windows, Python 3.11: none, and no O_NONBLOCK)
            os.set_blocking(fd, True)
        with os.fdopen(fd, "rb", closefd=False) as fh:
            fh.seek(start)
            data = fh.read(MAX_BYTES)  # a file growing meanwhile is read no further
    except OSError:
        return []
    finally:
        os.close(fd)
    first_line = 1
    if start:
        cut = data.find(b"\n")  # a partial first line is dropped
        data = data[cut + 1:] if cut >= 0 else b""
        first_line = 0  # unknown: numbered from the part read
    stripped = data.lstrip()
    if stripped.startswith(b"{") and b'"messages"' in data[:4096] and not _is_jsonl(data):
        return list(_gemini(data))
    if _is_codex(data):
        return list(_codex(data, first_line))
    return list(_claude(data, first_line))


def _is_jsonl(data: bytes) -> bool:
    head = data.split(b"\n", 1)[0]
    try:
        obj = json.loads(head)
    except ValueError:
        return False
    return isinstance(obj, dict) and "messages" not in obj


def _lines(data: bytes, first_line: int) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, object) for every line that is a JSON object."""
    for n, raw in enumerate(data.split(b"\n"), start=max(first_line, 1)):
        if not raw.strip():
            continue
        try:
            obj = json.loads(raw)
        except ValueError:
            continue
        if isinstance(obj, dict):
            yield n, obj


def _claude(data: bytes, first_line: int) -> Iterator[Event]:
    pending: dict[str, tuple[int, str]] = {}  # tool_use id -> (line, command)
    for n, obj in _lines(data, first_line):
        if obj.get("isSidechain") is True:
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


# -- Codex CLI rollouts -----------------------------------------------------------------

_CODEX_ENVELOPES = {"session_meta", "turn_context", "response_item", "event_msg", "compacted"}
# Response items as older rollouts wrote them, bare (no envelope).
_CODEX_ITEMS = {"message", "function_call", "function_call_output", "custom_tool_call",
                "custom_tool_call_output", "local_shell_call", "reasoning"}
# What Codex puts in a "user" message that the person did not type (its contextual
# fragments: AGENTS.md, the environment, a `!command` the person ran, an interrupted
# turn, a skill, a subagent's report, ...).
_CODEX_INJECTED = ("# AGENTS.md instructions", "<INSTRUCTIONS>", "<user_instructions>",
                   "<environment_context>", "<user_shell_command>", "<turn_aborted>",
                   "<subagent_notification>", "<skill>", "<codex_internal_context",
                   "<goal_context>", "<hook_prompt")
_WRAPPED = re.compile(r"^<([a-z][a-z0-9_]*)(?:\s[^>]*)?>.*</\1>$", re.S)  # a whole tagged block
_EXIT = re.compile(r"^(?:Exit code|Shell exit code): (-?\d+)\s*$|"
                   r"^Process exited with code (-?\d+)\s*$", re.M)
_PATCH_FILE = re.compile(r"^\*\*\* (Add|Update) File: (.+?)\s*$|^\*\*\* Move to: (.+?)\s*$",
                         re.M)
_SHELLS = {"bash", "sh", "zsh", "/bin/bash", "/bin/sh", "/bin/zsh", "/usr/bin/bash",
           "/usr/bin/zsh"}
_READERS = {"cat", "nl", "head", "tail", "sed", "bat", "less"}


def _is_codex(data: bytes) -> bool:
    """Whether the first objects in ``data`` are Codex rollout lines (by their shape)."""
    for seen, (_, obj) in enumerate(_lines(data[:256 * 1024], 1)):
        typ = obj.get("type")
        if typ in _CODEX_ENVELOPES and isinstance(obj.get("payload"), dict):
            return True
        if typ in _CODEX_ITEMS and ("role" in obj or "call_id" in obj):
            return True
        if isinstance(typ, str) or seen >= 20:
            return False  # another agent's line (Claude Code: "user", "assistant", ...)
    return False


class _Codex:
    """One pass over a rollout: calls wait for their output, paths resolve against the
    session's working directory."""

    def __init__(self) -> None:
        self.cwd: str | None = None
        self.pending: dict[str, tuple[int, str]] = {}  # call_id -> (line, command)
        self.exit_codes: dict[str, int] = {}  # call_id -> exec_command_end's exit_code

    def line(self, n: int, obj: dict[str, Any]) -> Iterator[Event]:
        typ, payload = obj.get("type"), obj.get("payload")
        if typ not in _CODEX_ENVELOPES:
            yield from self.item(n, obj)  # an older rollout's bare response item
            return
        if not isinstance(payload, dict):
            return
        if typ in ("session_meta", "turn_context") and isinstance(payload.get("cwd"), str):
            self.cwd = payload["cwd"]
        elif typ == "response_item":
            yield from self.item(n, payload)
        elif typ == "event_msg" and payload.get("type") == "exec_command_end":
            call, code = payload.get("call_id"), payload.get("exit_code")
            if isinstance(call, str) and isinstance(code, int) and not isinstance(code, bool):
                self.exit_codes[call] = code

    def item(self, n: int, item: dict[str, Any]) -> Iterator[Event]:
        typ = item.get("type")
        if typ == "message":
            role = item.get("role")
            for block in _blocks(item.get("content")):
                text = block.get("text")
                if not isinstance(text, str) or not text.strip():
                    continue
                if role == "user" and block.get("type") == "input_text" and not _injected(text):
                    yield Event(line=n, kind="said", text=text[:MAX_TEXT])
                elif role == "assistant" and block.get("type") == "output_text":
                    yield Event(line=n, kind="reply", text=text[:MAX_TEXT])
        elif typ == "function_call":
            args = _json_object(item.get("arguments"))
            yield from self.call(n, item.get("name"), args, item.get("call_id"))
        elif typ == "local_shell_call":
            action = item.get("action")
            args = {"command": action.get("command")} if isinstance(action, dict) else {}
            call = item.get("call_id") or item.get("id")
            yield from self.call(n, "local_shell", args, call)
        elif typ == "custom_tool_call" and item.get("name") == "apply_patch":
            yield from self.patch(n, item.get("input"))
        elif typ == "function_call_output":
            call = item.get("call_id")
            if isinstance(call, str) and call in self.pending:
                line, command = self.pending.pop(call)
                code = self.exit_codes.get(call)
                ok = (code == 0) if code is not None else _outcome(item.get("output"))
                yield Event(line=line, kind="command", text=command, ok=ok)

    def call(self, n: int, name: object, args: dict[str, Any], call: object) -> Iterator[Event]:
        if name == "apply_patch":
            yield from self.patch(n, args.get("input") or args.get("patch"))
            return
        if name == "read_file":  # Codex's own file reader, where the model has it
            if isinstance(args.get("file_path"), str) and args["file_path"].strip():
                yield Event(line=n, kind="file", text=self.path(args["file_path"]),
                            action="read")
            return
        command = _shell_command(name, args)
        if command is None:
            return
        workdir = args.get("workdir")
        if command.startswith("apply_patch"):
            yield from self.patch(n, command, workdir)  # a patch sent through the shell
            return
        read = _read_target(command)
        if read is not None:
            yield Event(line=n, kind="file", text=self.path(read, workdir), action="read")
        if isinstance(call, str):
            self.pending[call] = (n, command[:MAX_TEXT])
        else:
            yield Event(line=n, kind="command", text=command[:MAX_TEXT])

    def patch(self, n: int, patch: object, workdir: object = None) -> Iterator[Event]:
        if not isinstance(patch, str):
            return
        for m in _PATCH_FILE.finditer(patch):
            path = m.group(2) or m.group(3)
            action = "write" if m.group(1) == "Add" else "edit"
            yield Event(line=n, kind="file", text=self.path(path, workdir), action=action)

    def path(self, path: str, workdir: object = None) -> str:
        """``path`` made absolute against the call's workdir or the session's cwd (the
        rules count visits by path, so one file must always read the same)."""
        path = path.strip()
        base = workdir if isinstance(workdir, str) and os.path.isabs(workdir) else self.cwd
        if os.path.isabs(path) or not base:
            return path
        return os.path.normpath(os.path.join(base, path))

    def rest(self) -> Iterator[Event]:
        for line, command in self.pending.values():  # never answered (the session ended)
            yield Event(line=line, kind="command", text=command, ok=None)


def _codex(data: bytes, first_line: int) -> Iterator[Event]:
    reader = _Codex()
    for n, obj in _lines(data, first_line):
        yield from reader.line(n, obj)
    yield from reader.rest()


def _injected(text: str) -> bool:
    head = text.lstrip()
    return head.startswith(_CODEX_INJECTED) or bool(_WRAPPED.match(head.rstrip()))


def _json_object(raw: object) -> dict[str, Any]:
    if isinstance(raw, dict):
        return raw
    if isinstance(raw, str):
        try:
            obj = json.loads(raw)
        except ValueError:
            return {}
        return obj if isinstance(obj, dict) else {}
    return {}


def _shell_command(name: object, args: dict[str, Any]) -> str | None:
    """The command line a Codex shell tool ran: ``shell`` and ``local_shell`` take an
    argv (``["bash", "-lc", "make spec"]`` is the inner command), ``shell_command``
    a string, unified exec's ``exec_command`` a ``cmd`` string."""
    if name in ("shell", "local_shell", "container.exec"):
        argv = args.get("command")
        if not isinstance(argv, list) or not argv or not all(isinstance(a, str) for a in argv):
            return None
        if len(argv) == 3 and argv[0] in _SHELLS and argv[1] in ("-lc", "-c"):
            command = argv[2]
        else:
            command = shlex.join(argv)
    elif name == "shell_command":
        command = args.get("command")
    elif name == "exec_command":
        command = args.get("cmd")
    else:
        return None
    return command.strip() if isinstance(command, str) and command.strip() else None


def _outcome(output: object) -> bool | None:
    """Whether a shell call succeeded, from the text its output gave the model."""
    if isinstance(output, dict):  # older rollouts: {"content": ..., "success": ...}
        success = output.get("success")
        return success if isinstance(success, bool) else _outcome(output.get("content"))
    if not isinstance(output, str):
        return None
    obj = _json_object(output) if output.lstrip().startswith("{") else {}
    meta = obj.get("metadata")
    if isinstance(meta, dict):
        code = meta.get("exit_code", meta.get("shell_exit_code"))
        if isinstance(code, int) and not isinstance(code, bool):
            return code == 0
    m = _EXIT.search(output[:4096])
    if m:
        return int(m.group(1) or m.group(2)) == 0
    return None


def _read_target(command: str) -> str | None:
    """The one file a plain read command shows (``sed -n '1,80p' f``, ``cat f``,
    ``nl -ba f``, ``head -n 40 f``), or None."""
    if any(c in command for c in "|;&<>`$\n"):
        return None
    try:
        words = shlex.split(command)
    except ValueError:
        return None
    if len(words) < 2 or words[0] not in _READERS:
        return None
    args = [w for w in words[1:] if not w.startswith("-")]
    if words[0] == "sed":
        args = args[1:]  # the script
    elif words[0] in ("head", "tail"):
        args = [a for a in args if not a.lstrip("+").isdigit()]
    return args[0] if len(args) == 1 else None


def excerpt(text: str, limit: int = 200) -> str:
    """One line of at most ``limit`` characters, for evidence."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def size(path: str | os.PathLike[str]) -> int:
    try:
        return Path(path).stat().st_size
    except OSError:
        return -1
