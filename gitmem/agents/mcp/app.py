"""Building and running the server: the tools, resources and prompt on one Server."""

from __future__ import annotations

import os
from typing import Any

import anyio
from mcp.server.mcpserver import MCPServer

from ... import __version__
from . import content, tools, wire
from .server import (INSTRUCTIONS, NAME, Server, argument_errors, prompt_errors,
                     unknown_arguments)


def build(server: Server) -> MCPServer[Any]:
    accepted = tools.accepted()
    app: MCPServer[Any] = MCPServer(NAME, version=__version__, instructions=INSTRUCTIONS,
                                    log_level="WARNING",
                                    middleware=[argument_errors, unknown_arguments(accepted),
                                                prompt_errors, server.roots_first])
    tools.register(app, tools.Tools(server))
    content.register(app, server)
    return app


def serve(path: str | os.PathLike[str] | None = None) -> int:
    """Run the server on stdin/stdout until the client closes it."""
    server = Server(path)
    server.warm()
    try:
        anyio.run(wire.run_stdio, build(server))
    except KeyboardInterrupt:
        pass
    finally:
        server.close()
    return 0
