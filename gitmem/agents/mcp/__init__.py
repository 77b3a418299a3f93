"""``git mem mcp``: the memory as an MCP server, over stdio, on the official SDK.

``app.py`` builds and runs it; ``server.py`` is the plumbing (one worker thread per server, a Store per
repository, the repository taken from a ``repo`` argument, the start directory
or the client's roots, the CLI's envelope as every result, argument errors in
the same shape, unknown arguments refused); ``wire.py`` the stdio transport
with every unreadable line answered; ``tools.py`` the tools with their titles, annotations and
schemas; ``content.py`` the resources and the prompt. This package is the only
one importing the MCP SDK, and only ``git mem mcp`` imports it.
"""

from __future__ import annotations

from .app import build, serve
from .server import Server

__all__ = ["Server", "build", "serve"]
