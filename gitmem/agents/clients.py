"""Registering ``git mem mcp`` with each MCP client, and removing it.

Pure file logic (no git, no SQLite), like ``settings.py``: each client's
documented config file, merged without touching other entries, written whole
(a temp file and a rename), idempotent; uninstall removes exactly our entry.
Where each format comes from (checked 2026-11):

=============  =========================================  ===========================  ===============
client         project file                               user file                    entry
=============  =========================================  ===========================  ===============
claude-code    .mcp.json                                  (``claude mcp add -s user``)  mcpServers
cursor         .cursor/mcp.json                           ~/.cursor/mcp.json           mcpServers
codex          .codex/config.toml (trusted projects)      ~/.codex/config.toml         [mcp_servers.*]
gemini-cli     .gemini/settings.json                      ~/.gemini/settings.json      mcpServers
windsurf       (none)                                     ~/.codeium/windsurf/mcp_config.json  mcpServers
opencode       opencode.json                              ~/.config/opencode/opencode.json     mcp (local)
copilot        .vscode/mcp.json                           (VS Code's profile; by hand)  servers (stdio)
=============  =========================================  ===========================  ===============

Sources: code.claude.com/docs/en/mcp, cursor.com/docs/context/mcp,
developers.openai.com/codex/mcp, geminicli.com/docs/tools/mcp-server,
docs.windsurf.com/windsurf/cascade/mcp, opencode.ai/docs/mcp-servers,
code.visualstudio.com/docs/agents/reference/mcp-configuration.

Our entry is named ``git-mem`` and runs ``git mem mcp``; the server finds the
repository from its start directory or the client's roots (agents/mcp).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import msgspec

from ..errors import InvalidInput
from .settings import inside, read_bytes, write_json, write_text

NAME = "git-mem"
COMMAND = ["git", "mem", "mcp"]


class Client(msgspec.Struct, frozen=True):
    project: str | None  # relative to the work tree
    user: str | None  # relative to the home directory
    key: str  # where servers live in the file ("mcp_servers" for TOML)
    shape: str  # "plain" {command, args}; "stdio" {type, command, args}; "opencode"; "toml"


CLIENTS: dict[str, Client] = {
    "claude-code": Client(".mcp.json", None, "mcpServers", "plain"),
    "cursor": Client(".cursor/mcp.json", ".cursor/mcp.json", "mcpServers", "plain"),
    "codex": Client(".codex/config.toml", ".codex/config.toml", "mcp_servers", "toml"),
    "gemini-cli": Client(".gemini/settings.json", ".gemini/settings.json", "mcpServers", "plain"),
    "windsurf": Client(None, ".codeium/windsurf/mcp_config.json", "mcpServers", "plain"),
    "opencode": Client("opencode.json", ".config/opencode/opencode.json", "mcp", "opencode"),
    "copilot": Client(".vscode/mcp.json", None, "servers", "stdio"),
}


class ClientReport(msgspec.Struct, kw_only=True):
    client: str
    scope: str  # project | user
    path: str
    status: str  # installed | already installed | removed | not installed
    changed: bool


def entry(shape: str) -> Any:
    """Our server entry in a client's format."""
    if shape == "opencode":
        return {"type": "local", "command": list(COMMAND), "enabled": True}
    if shape == "stdio":
        return {"type": "stdio", "command": COMMAND[0], "args": COMMAND[1:]}
    return {"command": COMMAND[0], "args": COMMAND[1:]}


def path_for(client: str, scope: str, root: Path, home: Path) -> Path:
    spec = _spec(client)
    rel = spec.project if scope == "project" else spec.user
    if rel is None:
        other = "user" if scope == "project" else "project"
        raise InvalidInput(f"{client} has no {scope}-level MCP file that git mem can write",
                           f"use --scope {other}" + (
                               " (or 'claude mcp add -s user git-mem -- git mem mcp')"
                               if client == "claude-code" else
                               " (or add it in VS Code: 'MCP: Open User Configuration')"
                               if client == "copilot" else ""))
    return inside(root, root / rel) if scope == "project" else home / rel


def install(client: str, scope: str, root: Path, home: Path) -> ClientReport:
    spec = _spec(client)
    path = path_for(client, scope, root, home)
    tree = _tree(scope, root)
    if spec.shape == "toml":
        text = _read(path, tree)
        if _toml_block(text) is not None:
            return ClientReport(client=client, scope=scope, path=str(path),
                                status="already installed", changed=False)
        _check_toml(path, text)
        block = (f'[mcp_servers.{NAME}]\ncommand = "{COMMAND[0]}"\n'
                 f'args = [{", ".join(json.dumps(a) for a in COMMAND[1:])}]\n')
        new = text + ("" if not text or text.endswith("\n") else "\n") + ("\n" if text.strip() else "") + block
        _check_toml(path, new)
        write_text(path, new, within=tree)
        return ClientReport(client=client, scope=scope, path=str(path), status="installed",
                            changed=True)
    data = _load(path, tree)
    servers = data.setdefault(spec.key, {})
    if not isinstance(servers, dict):
        raise InvalidInput(f'{path}: "{spec.key}" is not an object; nothing was changed',
                           "fix the file, then run the command again")
    if servers.get(NAME) == entry(spec.shape):
        return ClientReport(client=client, scope=scope, path=str(path),
                            status="already installed", changed=False)
    servers[NAME] = entry(spec.shape)
    if spec.shape == "opencode":
        data.setdefault("$schema", "https://opencode.ai/config.json")
    write_json(path, data, tree)
    return ClientReport(client=client, scope=scope, path=str(path), status="installed",
                        changed=True)


def uninstall(client: str, scope: str, root: Path, home: Path) -> ClientReport:
    spec = _spec(client)
    path = path_for(client, scope, root, home)
    tree = _tree(scope, root)
    gone = ClientReport(client=client, scope=scope, path=str(path), status="not installed",
                        changed=False)
    if not path.exists():
        return gone
    if spec.shape == "toml":
        text = _read(path, tree)
        span = _toml_block(text)
        if span is None:
            return gone
        new = (text[:span[0]] + text[span[1]:]).rstrip("\n")
        new = new + "\n" if new else ""
        _check_toml(path, new)
        if new:
            write_text(path, new, within=tree)
        else:
            _remove(path)  # nothing left but what install created
    else:
        data = _load(path, tree)
        servers = data.get(spec.key)
        if not isinstance(servers, dict) or NAME not in servers:
            return gone
        del servers[NAME]
        if not servers:
            del data[spec.key]
        if data and set(data) != {"$schema"}:
            write_json(path, data, tree)
        else:
            _remove(path)  # nothing left but what install created
    return ClientReport(client=client, scope=scope, path=str(path), status="removed",
                        changed=True)


def installed(client: str, scope: str, root: Path, home: Path) -> bool | None:
    """Whether our entry is in the client's file (None: the scope has no file)."""
    spec = _spec(client)
    try:
        path = path_for(client, scope, root, home)
    except InvalidInput:
        return None
    if not path.exists():
        return False
    try:
        if spec.shape == "toml":
            return _toml_block(_read(path, _tree(scope, root))) is not None
        servers = _load(path, _tree(scope, root)).get(spec.key)
    except InvalidInput:
        return False
    return isinstance(servers, dict) and NAME in servers


def _remove(path: Path) -> None:
    path.unlink()
    try:
        path.parent.rmdir()  # the folder install made, if nothing else lives there
    except OSError:
        pass


def _spec(client: str) -> Client:
    if client not in CLIENTS:
        raise InvalidInput(f"unknown MCP client '{client}'", f"use one of: {', '.join(CLIENTS)}")
    return CLIENTS[client]


def _tree(scope: str, root: Path) -> Path | None:
    """The work tree a project file was checked against (``settings.resolved``); a
    user-level file is the person's own, links and all."""
    return root if scope == "project" else None


def _load(path: Path, tree: Path | None = None) -> dict[str, Any]:
    text = _read(path, tree)
    if not text.strip():
        return {}
    try:
        data = json.loads(text)
    except (ValueError, RecursionError) as exc:  # (a committed file nested 100k deep)
        raise InvalidInput(f"{path} is not valid JSON ({exc}); nothing was changed",
                           "fix the file (comments are not JSON), then run the command "
                           "again") from None
    if not isinstance(data, dict):
        raise InvalidInput(f"{path} does not hold a JSON object; nothing was changed",
                           "fix the file, then run the command again")
    return data


def _read(path: Path, tree: Path | None = None) -> str:
    try:
        found = read_bytes(path, tree)  # never through a link or a FIFO put there since the check
        return "" if found is None else found.decode("utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise InvalidInput(f"cannot read {path} ({exc}); nothing was changed",
                           "make it a readable UTF-8 file (or move it away)") from None


# A table header for our server: [mcp_servers.git-mem] or [mcp_servers."git-mem"], and
# its sub-tables ([mcp_servers.git-mem.env]).
_OUR_HEADER = re.compile(r'^\s*\[\s*mcp_servers\s*\.\s*(?:git-mem|"git-mem")\s*(?:\.[^\]]*)?\]\s*'
                         r"(?:#.*)?$")
_HEADER = re.compile(r"^\s*\[")


def _toml_block(text: str) -> tuple[int, int] | None:
    """Where our table (and its sub-tables) is in a TOML text: (start, end) offsets."""
    lines = text.splitlines(keepends=True)
    start = end = None
    offset = 0
    for line in lines:
        if _OUR_HEADER.match(line):
            if start is None:
                start = offset
            end = None
        elif _HEADER.match(line) and start is not None and end is None:
            end = offset
        offset += len(line)
    if start is None:
        return None
    return start, end if end is not None else len(text)


def _check_toml(path: Path, text: str) -> None:
    import tomllib

    try:
        tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise InvalidInput(f"{path} is not valid TOML ({exc}); nothing was changed",
                           "fix the file, then run the command again") from None
