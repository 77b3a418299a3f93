"""``git mem ui``: the memory panel in a browser (see app.py).

Optional: it needs the ``ui`` extra (Jinja2; Starlette and uvicorn come with
the MCP SDK). ``serve`` binds 127.0.0.1 on a random port, prints the one-time
URL, opens it in the browser unless told not to, and serves until Ctrl-C.
"""

from __future__ import annotations

import os
import secrets
import socket
import sys

from .. import api


def available() -> bool:
    """Whether the ``ui`` extra's template engine is installed."""
    import importlib.util

    return importlib.util.find_spec("jinja2") is not None


def serve(path: str | os.PathLike[str] | None = None, *, port: int = 0,
          open_browser: bool = True) -> int:
    import uvicorn

    from .app import create

    store = api.open(path)
    token = secrets.token_urlsafe(24)
    app, panel = create(store, token)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    sock.listen(128)  # a browser opened now waits in the backlog until uvicorn serves
    url = f"http://127.0.0.1:{sock.getsockname()[1]}/?token={token}"
    print(f"git mem ui: {url}", flush=True)
    print("(the link works once, in one browser; Ctrl-C stops the panel)", file=sys.stderr,
          flush=True)
    if open_browser:
        import webbrowser

        webbrowser.open(url)
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off"))
    try:
        server.run(sockets=[sock])
    except KeyboardInterrupt:
        pass
    finally:
        panel.close()
        sock.close()
    return 0
