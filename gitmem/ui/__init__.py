"""``git mem ui``: the memory panel in a browser (see app.py).

Optional: it needs the ``ui`` extra (Jinja2; Starlette and uvicorn come with
the MCP SDK). ``serve`` binds 127.0.0.1 on a random port, prints the one-time
URL, opens the browser unless told not to, and serves until Ctrl-C.

The token never goes on a command line, where any local user reads it (``ps``,
/proc/PID/cmdline) and could spend it before the browser does. The URL is
printed on our own stdout (the user's terminal); the browser is given the
path of a small page that redirects to it (as Jupyter does), in a directory
only the user can read, removed when the server stops. The browser is started
once the server listens, from a thread of its own: a terminal browser (w3m,
lynx) holds ``webbrowser.open`` until it exits, and it waits for the page.
"""

from __future__ import annotations

import html
import os
import secrets
import shutil
import signal
import socket
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING

from .. import api

if TYPE_CHECKING:
    import uvicorn


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
    sock.listen(128)
    url = f"http://127.0.0.1:{sock.getsockname()[1]}/?token={token}"
    print(f"git mem ui: {url}", flush=True)
    print("(the link works once, in one browser; Ctrl-C stops the panel)", file=sys.stderr,
          flush=True)
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off"))
    folder = None
    if open_browser:
        try:
            folder = tempfile.mkdtemp(prefix="gitmem-ui-")  # mode 0700
            page = _landing(Path(folder), url)
        except OSError as exc:
            print(f"git mem ui: no browser opened ({exc.strerror or exc}); open the URL above",
                  file=sys.stderr, flush=True)
        else:
            threading.Thread(target=_open_when_up, args=(server, page.as_uri()),
                             name="gitmem-ui-browser", daemon=True).start()
    # uvicorn stops gracefully on SIGTERM, then raises it again under the handler it
    # found: under the default one the process would die before the cleanup below,
    # and the page holding the token would stay in the temp directory.
    previous = {}
    if threading.current_thread() is threading.main_thread():
        for name in ("SIGTERM", "SIGHUP"):
            if hasattr(signal, name):
                previous[name] = signal.signal(getattr(signal, name), _stop)
    try:
        server.run(sockets=[sock])
    except (KeyboardInterrupt, _Stopped):
        pass
    finally:
        panel.close()
        sock.close()
        if folder is not None:
            shutil.rmtree(folder, ignore_errors=True)
        for name, handler in previous.items():
            signal.signal(getattr(signal, name), handler)
    return 0


class _Stopped(Exception):
    """SIGTERM or SIGHUP arrived: stop as Ctrl-C does."""


def _stop(signum: int, frame: object) -> None:
    raise _Stopped(signum)


def _landing(folder: Path, url: str) -> Path:
    """Write the page the browser opens: it sends the browser on to ``url`` (a
    meta refresh, and a link for browsers that do not follow one). Mode 0600,
    created new (never through a file or link already there)."""
    target = html.escape(url, quote=True)
    text = ("<!doctype html>\n<html><head><meta charset=\"utf-8\">\n"
            f"<meta http-equiv=\"refresh\" content=\"0;url={target}\">\n"
            "<title>git mem ui</title></head>\n"
            f"<body><p>Opening the memory panel: <a href=\"{target}\">{target}</a></p>"
            "</body></html>\n")
    page = folder / "open.html"
    fd = os.open(page, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
                 | getattr(os, "O_BINARY", 0), 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(text)
    return page


def _open_when_up(server: uvicorn.Server, page: str, wait: float = 60.0) -> None:
    """Start the browser on ``page`` once ``server`` listens (or give up after
    ``wait`` seconds). Runs in its own daemon thread: ``webbrowser.open`` may
    not return until the browser exits."""
    import webbrowser

    from ..pathsearch import absolute_only

    # The browser is found on PATH and started in the work tree: never one committed
    # there (an empty PATH entry would have found a work tree's `xdg-open` or
    # `www-browser`). This process starts nothing else by name.
    os.environ["PATH"] = absolute_only(os.environ.get("PATH", os.defpath))
    deadline = time.monotonic() + wait
    while not server.started:
        if server.should_exit or time.monotonic() > deadline:
            return
        time.sleep(0.02)
    try:
        webbrowser.open(page)
    except Exception as exc:  # a browser that fails must not take the server down
        print(f"git mem ui: could not start a browser ({exc}); open the URL above",
              file=sys.stderr, flush=True)
