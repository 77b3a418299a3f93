"""``git mem ui``: the memory panel, a local web page over the library.

Starlette routes render Jinja2 templates (autoescaped: memory text is data from
people and agents, never markup) with htmx for live search; both ship in the
package. Every page is one or two library calls on one worker thread (the
Store is not thread-safe), the same calls and write gate as the CLI.

Who may use it: the server listens on 127.0.0.1 only, on a random port. The
URL it prints carries a one-time token; the first request with it gets a
session cookie (HttpOnly, SameSite=Strict) and the token is spent. Every other
request needs the cookie, and every action (a POST) also needs the session's
form token and a same-origin request, so another page in the browser cannot
drive it.
"""

from __future__ import annotations

import asyncio
import os
import secrets
import sys
import traceback
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from importlib import resources
from typing import Any, TypeVar

from jinja2 import Environment, FileSystemLoader, select_autoescape
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, PlainTextResponse, RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from .. import api
from ..errors import GitMemError
from ..ops import KINDS
from .graph import layout

T = TypeVar("T")
COOKIE = "gitmem_ui"


class Panel:
    """The Store, its worker thread, and the session secrets."""

    def __init__(self, store: api.Store, token: str) -> None:
        self.store = store
        self.token: str | None = token  # one-time: None once spent
        self.session = secrets.token_urlsafe(32)
        self.form = secrets.token_urlsafe(24)
        self._worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="gitmem-ui")
        folder = resources.files("gitmem.ui") / "templates"
        self.env = Environment(loader=FileSystemLoader(str(folder)),
                               autoescape=select_autoescape(["html"]), finalize=visible)

    async def do(self, fn: Callable[[api.Store], T]) -> T:
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._worker, fn, self.store)

    def page(self, name: str, request: Request, **values: Any) -> HTMLResponse:
        html = self.env.get_template(name).render(
            request=request, form_token=self.form, kinds=KINDS,
            repo=str(self.store.log.workdir), **values)
        return HTMLResponse(html)

    def close(self) -> None:
        self._worker.submit(self.store.close).result()
        self._worker.shutdown()


def create(store: api.Store, token: str) -> tuple[Starlette, Panel]:
    panel = Panel(store, token)

    def guarded(fn: Callable[[Request], Awaitable[Response]]) -> Callable[[Request],
                                                                        Awaitable[Response]]:
        async def handler(request: Request) -> Response:
            given = request.query_params.get("token")
            if given is not None and panel.token is not None and \
                    secrets.compare_digest(given, panel.token):
                panel.token = None  # spent
                # A page that sets the cookie and moves on, not a redirect: the browser
                # comes here from the file:// page serve() opened, and a SameSite=Strict
                # cookie set in a redirect chain that began on another site is not sent
                # on its next hop. The move from this page is our own site's.
                resp = panel.page("enter.html", request, target=request.url.path)
                resp.set_cookie(COOKIE, panel.session, httponly=True, samesite="strict")
                resp.headers["Cache-Control"] = "no-store"
                resp.headers["Referrer-Policy"] = "no-referrer"
                return resp
            cookie = request.cookies.get(COOKIE, "")
            if not secrets.compare_digest(cookie, panel.session):
                return PlainTextResponse("git mem ui: open the URL the command printed (its "
                                         "token works once)", status_code=403)
            if request.method == "POST":
                form = await request.form()
                origin = request.headers.get("origin")
                host = f"{request.url.scheme}://{request.url.netloc}"
                if str(form.get("csrf", "")) != panel.form or (origin and origin != host):
                    return PlainTextResponse("git mem ui: refused (stale form)", status_code=403)
            try:
                return await fn(request)
            except GitMemError as exc:
                return panel.page("error.html", request, error=exc)
            except Exception as exc:  # a bug: a page that says so, never a traceback
                if os.environ.get("GITMEM_DEBUG"):
                    traceback.print_exc(file=sys.stderr)
                resp = panel.page("error.html", request, error=GitMemError(
                    f"internal error: {type(exc).__name__}: {exc}",
                    "this is a bug; rerun 'git mem ui' with GITMEM_DEBUG=1 and report the "
                    "traceback it prints"))
                resp.status_code = 500
                return resp

        return handler

    async def search(request: Request) -> Response:
        q = request.query_params
        query = q.get("q", "").strip()
        kind = [k for k in q.getlist("kind") if k in KINDS]
        tag, author, path = (_many(q.getlist(name)) for name in ("tag", "author", "path"))
        as_of = q.get("as_of") or None
        include_retired = q.get("all") == "1"

        def run(s: api.Store) -> tuple[list[Any], int | None]:
            if query:
                hits = s.recall(query, k=50, kinds=kind, tags=tag, authors=author, paths=path,
                                as_of=as_of, include_retired=include_retired or bool(as_of),
                                record_use=False)
                return list(hits), None
            page = s.list_memories(kinds=kind, tags=tag, authors=author, paths=path,
                                   status="all" if include_retired else "active", limit=100)
            return list(page.memories), page.total

        memories, total = await panel.do(run)
        name = "results.html" if request.headers.get("hx-request") else "search.html"
        return panel.page(name, request, memories=memories, total=total, query=query,
                          kind=kind, tag=",".join(tag), author=",".join(author),
                          path=",".join(path), as_of=as_of or "", include_retired=include_retired)

    async def memory(request: Request) -> Response:
        mid = request.path_params["id"]

        def run(s: api.Store) -> tuple[Any, Any]:
            shown = s.show(mid)
            related = s.related("memory:" + shown.memory.id, depth=2)
            return shown, related

        shown, related = await panel.do(run)
        done = request.query_params.get("done")
        return panel.page("memory.html", request, shown=shown, m=shown.memory, related=related,
                          graph=layout(related), done=done)

    async def act(request: Request) -> Response:
        mid = request.path_params["id"]
        verb = request.path_params["verb"]
        form = await request.form()
        reason = str(form.get("reason", "")).strip() or None

        def run(s: api.Store) -> str:
            if verb == "confirm":
                return s.confirm(mid, reason).target
            if verb == "invalidate":
                return s.invalidate(mid, reason).target
            if verb == "forget":
                return s.forget(mid, reason).target
            raise KeyError(verb)

        if verb not in ("confirm", "invalidate", "forget"):
            return PlainTextResponse("unknown action", status_code=404)
        target = await panel.do(run)
        return RedirectResponse(f"/memory/{target}?done={verb}", status_code=303)

    async def timeline(request: Request) -> Response:
        # Both timelines: "recorded" answers what the memory said then (as_of),
        # "valid" what it now says was true in the world then (valid_at).
        valid = request.query_params.get("axis") == "valid"

        def run(s: api.Store) -> tuple[list[tuple[str, int]], Any, Any, int]:
            points = _points(s, valid=valid)
            index = _stop(points, request.query_params.get("at"), valid)
            when = points[index][1] if points else None
            if when is None:
                return points, [], None, index
            keys = s.keys(valid_at=when) if valid else s.keys(as_of=when)
            recorded = None if valid else s.list_memories(until=when, status="all", limit=50)
            return points, keys, recorded, index

        points, keys, recorded, index = await panel.do(run)
        return panel.page("timeline.html", request, points=points, index=index, keys=keys,
                          recorded=recorded, axis="valid" if valid else "recorded")

    async def facts(request: Request) -> Response:
        key = request.query_params.get("key")

        def run(s: api.Store) -> tuple[Any, Any, Any]:
            return s.keys(), s.conflicts(), (s.history(key) if key else None)

        keys, conflicts, history = await panel.do(run)
        return panel.page("facts.html", request, keys=keys, conflicts=conflicts,
                          history=history, key=key)

    async def review(request: Request) -> Response:
        def run(s: api.Store) -> tuple[Any, Any, Any]:
            return s.fading(limit=20), s.stale(), s.inbox()

        fading, stale, inbox = await panel.do(run)
        return panel.page("review.html", request, fading=fading, stale=stale, inbox=inbox,
                          done=request.query_params.get("done"))

    async def verdict(request: Request) -> Response:
        pid = request.path_params["id"]
        verb = request.path_params["verb"]
        if verb not in ("accept", "reject"):
            return PlainTextResponse("unknown action", status_code=404)
        await panel.do(lambda s: s.accept(pid) if verb == "accept" else s.reject(pid))
        return RedirectResponse(f"/review?done={verb}", status_code=303)

    static = StaticFiles(directory=str(resources.files("gitmem.ui") / "static"))
    app = Starlette(routes=[
        Route("/", guarded(search)),
        Route("/memory/{id:str}", guarded(memory)),
        Route("/memory/{id:str}/{verb:str}", guarded(act), methods=["POST"]),
        Route("/timeline", guarded(timeline)),
        Route("/facts", guarded(facts)),
        Route("/review", guarded(review)),
        Route("/inbox/{id:str}/{verb:str}", guarded(verdict), methods=["POST"]),
        Mount("/static", app=static),
    ])
    return app, panel


# Characters a page must not carry raw: C0 and C1 controls (a NUL in an id asked for
# in the URL, say), DEL, the line and paragraph separators, and the bidi controls
# that reorder what is shown ("Trojan Source"). Tab and newline stay.
_UNSAFE = [*range(0x00, 0x09), *range(0x0B, 0x20), *range(0x7F, 0xA0), 0x061C, 0x200E, 0x200F,
           0x2028, 0x2029, *range(0x202A, 0x202F), *range(0x2066, 0x206A)]
_ESCAPES = str.maketrans({cp: f"\\x{cp:02x}" if cp < 0x100 else f"\\u{cp:04x}"
                          for cp in _UNSAFE})


def visible(value: Any) -> Any:
    """Every value a template echoes, before it is escaped (the Environment's
    ``finalize``): text with each unsafe character written as an inert escape
    (``\\x00``, ``\\u202e``). Markup (``tojson``'s) keeps its type: its
    ``translate`` returns Markup."""
    if isinstance(value, str):
        return value.translate(_ESCAPES)
    return value


def _many(values: list[str]) -> list[str]:
    """A filter given as repeated fields or as one comma-separated field."""
    return [v.strip() for value in values for v in value.split(",") if v.strip()]


def _stop(points: list[tuple[str, int]], at: str | None, valid: bool) -> int:
    """The slider stop asked for by ``at`` (an index), else the last: everything the
    log holds, or on the valid timeline the latest stop not after today (a fact set
    far ahead, valid from 9999, must not hide what is true today)."""
    if at and at.isascii() and at.isdigit() and len(at) < 10 and int(at) < len(points):
        return int(at)  # (str.isdigit() also holds for "²", which int() refuses)
    if not valid:
        return len(points) - 1
    from ..api import settings

    today = settings.now() + 86400  # a day's stop stands at that day's end
    past = [i for i, (_, ts) in enumerate(points) if ts <= today]
    return past[-1] if past else len(points) - 1


def _points(s: api.Store, *, valid: bool = False) -> list[tuple[str, int]]:
    """The slider's stops: each day an op was recorded, and each git tag, oldest
    first, as (label, unix seconds at the end of that day or the tag). On the
    valid timeline also each day a memory became or stopped being true."""
    from ..timefmt import parse_date

    stops: dict[int, str] = {}
    days = [op.recorded_at[:10] for op in s.log_ops(limit=5000)]
    if valid:
        for m in s.list_memories(status="all", limit=5000).memories:
            days += [d[:10] for d in (m.valid_from, m.valid_until) if d]
    for day in days:
        try:
            ts = parse_date(day)[0] + 86399
        except GitMemError:  # a date from another clone that does not parse
            continue
        stops.setdefault(ts, day)
    for tag, ts in s.log.tag_times():
        stops[ts] = f"{tag}"
    return [(label, ts) for ts, label in sorted(stops.items())]
