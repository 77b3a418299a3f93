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
(JSON-RPC answers neither). The rest of the transport is the SDK's own
(``stdio_server``: UTF-8, fds 0 and 1 kept from handlers and children).
"""

from __future__ import annotations

import json
import re
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage
from mcp.types import INVALID_REQUEST, PARSE_ERROR, ErrorData, JSONRPCError

_SURROGATE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")


def rejection(exc: Exception) -> JSONRPCError | None:
    """The error that answers a line the transport could not read (``exc``, the
    SDK's ValidationError), or None when the line asks for no answer."""
    listing = getattr(exc, "errors", None)
    errors = listing() if callable(listing) else []
    first: dict[str, Any] = errors[0] if errors else {}
    if first.get("type") == "json_invalid":
        raw = first.get("input")
        if isinstance(raw, str) and not raw.strip():
            return None  # a blank line: nothing was asked
        try:  # the SDK's parser refused it: does Python's read it?
            parsed = json.loads(raw) if isinstance(raw, str) else None
        except ValueError:
            return _error(None, PARSE_ERROR, "Parse error: the line is not JSON")
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


async def run_stdio(app: MCPServer[Any]) -> None:
    """``MCPServer.run_stdio_async`` with the read side answered: the same three
    steps. (The low-level server is an attribute the SDK does not publish; a
    change there fails tests/test_mcp_wire.py, which runs the real server.)"""
    low = app._lowlevel_server  # noqa: SLF001
    async with stdio_server() as (read, write):
        await low.run(Answering(read, write), write, low.create_initialization_options())
