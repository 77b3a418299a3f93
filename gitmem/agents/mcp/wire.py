"""Every line on the wire gets an answer: the SDK's stdio transport, with the lines
it cannot read answered as JSON-RPC errors.

Why: the SDK (mcp 2.3) hands a line it cannot parse or validate to the server as
an exception, which the server logs at debug level and drops (python-sdk issue
#2751; the fix proposed in PR #2766 was closed unmerged). A client that sent a
request in such a line waits for it forever: garbage, a JSON-RPC batch (MCP
removed batching in 2025-06-18), or a request whose JSON the SDK's parser refuses
although Python's accepts it (a lone surrogate escape such as ``\\ud800``, which is
not Unicode). ``Answering`` sits between the transport and the server: a line
that is not JSON gets -32700 (Parse error), one that is JSON but not a message
gets -32600 (Invalid Request), with the request's id whenever the line names one,
so the client stops waiting; a broken response or notification gets nothing
(JSON-RPC answers neither).

The read side is ours too (``Lines``): the SDK reads a line whole, so one endless
line from a careless or hostile client grew the server without bound (a 200 MiB
line: a peak of 1,002 MiB, now 105). A line over ``MAX_LINE_BYTES`` is read to its
end in bounded chunks and dropped, and answered with -32700, with the request's id
when the line starts by naming it. fd 0 is kept from handlers and children as the
SDK keeps it (pointed at the null device while serving); the write side is the SDK's
``stdio_server`` (UTF-8, fd 1 kept the same way).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from contextlib import contextmanager
from typing import IO, Any

import anyio

from mcp.server.mcpserver import MCPServer
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage
from mcp.types import INVALID_REQUEST, PARSE_ERROR, ErrorData, JSONRPCError

_SURROGATE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")

# Far above any message a tool takes (an op is at most 64 KiB of JSON) and the same
# bound as a hook's stdin.
MAX_LINE_BYTES = 16 << 20
# What stands for a dropped line: not JSON (the NUL), so the SDK hands it to
# ``rejection`` as a parse failure, which answers it with what the line named.
_DROPPED = "\0gitmem-dropped-line"
# ... and for a request whose id is no string or integer (1.5, true, null, an object):
# the SDK reads it as a notification, which nobody answers, and the client waits forever.
_BAD_ID = "\0gitmem-bad-id"
_CHECKED_BYTES = 1 << 20  # a line up to this size has its id looked at
# A request id the line gives before any nested value (as the first key, or after
# "jsonrpc" or "method"): the only one a prefix can name without doubt.
_LEADING_ID = re.compile(
    rb'\A\s*\{(?:\s*"(?:jsonrpc|method)"\s*:\s*"[^"\\]{0,256}"\s*,)*'
    rb'\s*"id"\s*:\s*(-?(?:0|[1-9]\d{0,17})(?=\s*[,}])|"[^"\\\x00-\x1f]{0,256}")')


def rejection(exc: Exception) -> JSONRPCError | None:
    """The error that answers a line the transport could not read (``exc``, the
    SDK's ValidationError), or None when the line asks for no answer."""
    listing = getattr(exc, "errors", None)
    errors = listing() if callable(listing) else []
    first: dict[str, Any] = errors[0] if errors else {}
    if first.get("type") == "json_invalid":
        raw = first.get("input")
        if isinstance(raw, str) and raw.startswith(_BAD_ID):
            return _error(None, INVALID_REQUEST, "Invalid Request: a request's id must be a "
                          "string or an integer (MCP), so this answer carries none")
        if isinstance(raw, str) and raw.startswith(_DROPPED):
            named = raw[len(_DROPPED):].strip()
            try:  # _LEADING_ID matched JSON; an error here must never end the session
                rid = json.loads(named) if named else None
            except (ValueError, RecursionError):
                rid = None
            return _error(rid, PARSE_ERROR, f"Parse error: the line is over "
                          f"{MAX_LINE_BYTES >> 20} MiB and was dropped unread; "
                          "send large text in smaller memories")
        if isinstance(raw, str) and not raw.strip():
            return None  # a blank line: nothing was asked
        try:  # the SDK's parser refused it: does Python's read it?
            parsed = json.loads(raw) if isinstance(raw, str) else None
        except ValueError:
            return _error(None, PARSE_ERROR, "Parse error: the line is not JSON")
        except RecursionError:  # a 2 KB line of "[" * 1000 ended the session
            leading = _LEADING_ID.match(raw.encode("utf-8", "surrogatepass")) if isinstance(raw, str) else None
            try:  # the id a valid request names before its nested value
                deep_id = json.loads(leading.group(1)) if leading else None
            except (ValueError, RecursionError):
                deep_id = None
            return _error(deep_id, PARSE_ERROR, "Parse error: the line is nested too deep to read")
        message = "Parse error: " + str(first.get("msg", "invalid JSON"))
        if isinstance(raw, str) and _SURROGATE.search(raw):
            message += " (a lone surrogate escape such as \\ud800 is not Unicode: send UTF-8 text)"
        return _error(_request_id(parsed), PARSE_ERROR, message)
    if not first:
        return _error(None, PARSE_ERROR, "Parse error")
    parsed = first.get("input")
    if isinstance(parsed, list):
        return _error(None, INVALID_REQUEST,
                      "Invalid Request: a batch (a JSON array) is not an MCP message; "
                      "send one message per line")
    if isinstance(parsed, dict) and "method" not in parsed and (
            "result" in parsed or "error" in parsed):
        return None  # a broken response: answering it would be a response to a response
    if isinstance(parsed, dict) and "method" in parsed and "id" not in parsed:
        return None  # a broken notification: JSON-RPC never answers one
    return _error(_request_id(parsed), INVALID_REQUEST,
                  "Invalid Request: not a JSON-RPC 2.0 message "
                  '({"jsonrpc": "2.0", "id": ..., "method": ..., "params": {...}})')


def _request_id(parsed: object) -> str | int | None:
    if not isinstance(parsed, dict) or "method" not in parsed:
        return None
    rid = parsed.get("id")
    return rid if isinstance(rid, (str, int)) and not isinstance(rid, bool) else None


def _error(rid: str | int | None, code: int, message: str) -> JSONRPCError:
    return JSONRPCError(jsonrpc="2.0", id=rid, error=ErrorData(code=code, message=message))


class Answering:
    """The transport's read stream without its exceptions: each is answered on the
    write stream (``rejection``) and the next message is read."""

    def __init__(self, inner: Any, write: Any) -> None:
        self.inner, self.write = inner, write

    @property
    def last_context(self) -> Any:  # the sender's context, which the SDK restores
        return getattr(self.inner, "last_context", None)

    async def receive(self) -> Any:
        while True:
            item = await self.inner.receive()
            if not isinstance(item, Exception):
                return item
            reply = rejection(item)
            if reply is not None:
                await self.write.send(SessionMessage(reply))

    async def aclose(self) -> None:
        await self.inner.aclose()

    def __aiter__(self) -> Answering:
        return self

    async def __anext__(self) -> Any:
        import anyio

        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def __aenter__(self) -> Answering:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


class Lines:
    """A binary stream's lines as text (UTF-8, bad bytes replaced), none over
    ``MAX_LINE_BYTES``: a longer line is read to its end in bounded chunks and
    ``_DROPPED`` (with the id its start names, as JSON) stands in for it."""

    CHUNK = 1 << 16

    def __init__(self, raw: IO[bytes]) -> None:
        self.raw = raw

    def readline(self) -> str:
        line = self.raw.readline(MAX_LINE_BYTES + 1)
        if len(line) <= MAX_LINE_BYTES:
            text = line.decode("utf-8", "replace")
            return _BAD_ID + "\n" if _bad_id(line, text) else text
        named = _LEADING_ID.match(line)
        rest = line
        while rest and not rest.endswith(b"\n"):
            rest = self.raw.readline(self.CHUNK)
        return _DROPPED + (named.group(1).decode("utf-8", "replace") if named else "") + "\n"


def _bad_id(line: bytes, text: str) -> bool:
    """A request (a method and an id) whose id is no string or integer."""
    if len(line) > _CHECKED_BYTES or b'"id"' not in line:
        return False
    try:
        message = json.loads(text)
    except (ValueError, RecursionError):
        return False  # answered as what it is by ``rejection``
    if not isinstance(message, dict) or "method" not in message or "id" not in message:
        return False
    rid = message["id"]
    if rid is None and str(message["method"]).startswith("notifications/"):
        return False  # a notification sent with "id": null (some clients do): delivered as one
    return not isinstance(rid, (str, int)) or isinstance(rid, bool)


@contextmanager
def claimed_stdin() -> Iterator[IO[bytes]]:
    """The wire's fd 0 as a private stream, with fd 0 itself on the null device while
    serving (so a handler or a child process reading stdin cannot take the client's
    bytes), put back on exit. The duplicate is not inherited by children."""
    wire = _dup_above_std(0)
    null = os.open(os.devnull, os.O_RDONLY)
    try:
        os.dup2(null, 0)
    finally:
        os.close(null)
    try:
        # closefd=False, and never closed: the reading thread may still block on it
        # when serving ends, and a closed number could be reused under it.
        yield os.fdopen(wire, "rb", closefd=False)
    finally:
        os.dup2(wire, 0)


def _dup_above_std(fd: int) -> int:
    """A private duplicate of ``fd`` numbered 3 or above (with fd 1 or 2 closed, a
    plain dup could land there, where output or a child's error would reach the
    wire); not inherited by children."""
    dups = []
    try:
        while (dup := os.dup(fd)) <= 2:
            dups.append(dup)
        return dup
    finally:
        for d in dups:
            os.close(d)


async def run_stdio(app: MCPServer[Any]) -> None:
    """``MCPServer.run_stdio_async`` with the read side bounded and answered: the
    same three steps. (The low-level server is an attribute the SDK does not
    publish; a change there fails tests/test_mcp_wire.py, which runs the real
    server.)"""
    low = app._lowlevel_server  # noqa: SLF001
    with claimed_stdin() as stdin:
        lines: Any = anyio.wrap_file(Lines(stdin))  # type: ignore[arg-type]  # a file's readline
        async with stdio_server(stdin=lines) as (read, write):
            await low.run(Answering(read, write), write, low.create_initialization_options())
