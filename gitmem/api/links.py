"""Links: typed edges between people, paths, keys, components and memories.

An edge is an ordinary memory of kind ``edge`` (``git mem link A PREDICATE B``)
whose ``link`` names its endpoints, so it replicates with the log, is retired
by ``invalidate`` like any memory, and answers as-of questions. Node names are
typed (``person:``, ``path:``, ``key:``, ``component:``, ``memory:``); a bare
name is typed by what it looks like: an id of a memory, an e-mail address, a
path of the work tree, else a component. The predicate vocabulary is
deliberately tiny (ops.PREDICATES): a graph is useful when two people would
draw the same edge.
"""

from __future__ import annotations

import re

from .. import ops
from ..errors import AmbiguousId, InvalidInput, UnknownId
from ..model import Added, Related, RelatedEdge
from ..projection import MAX_EDGES, Projection, Scope
from . import validate, write
from .pool import Pool

MAX_DEPTH = 4
_HEX = re.compile(r"^[0-9a-f]{7,64}\Z")


def node(pool: Pool, value: str) -> str:
    """``value`` as a typed node name (see the module docstring)."""
    text = validate.field(value, "node")
    if not text:
        raise InvalidInput("a link end is empty", "name a person, path, key, component or id")
    typ, sep, name = text.partition(":")
    if sep and typ in ops.NODE_TYPES:
        name = name.strip()
        if not name:
            raise InvalidInput(f"'{text}' names no {typ}", f"write it as {typ}:NAME")
        if typ == "memory":
            return "memory:" + pool.resolve(name)
        if typ == "path":
            return "path:" + validate.repo_paths([name], pool.cwd, pool.log.workdir)[0]
        if typ == "person":
            return "person:" + name.lower() if "@" in name else "person:" + name
        return f"{typ}:{name}"
    if _HEX.match(text):
        try:
            return "memory:" + pool.resolve(text)
        except (UnknownId, AmbiguousId):
            pass
    if "@" in text and " " not in text:
        return "person:" + text.lower()
    if (pool.cwd / text).exists():
        try:
            return "path:" + validate.repo_paths([text], pool.cwd, pool.log.workdir)[0]
        except InvalidInput:
            pass
    return "component:" + text


def link(pool: Pool, src: str, predicate: str, dst: str, *, by: str | None = None) -> Added:
    """Record ``src PREDICATE dst`` as an edge memory."""
    pred = predicate.strip().lower().replace("-", "_")
    if pred not in ops.PREDICATES:
        raise InvalidInput(f"unknown predicate '{predicate}'",
                           f"use one of: {', '.join(ops.PREDICATES)}")
    a, b = node(pool, src), node(pool, dst)
    if a.lower() == b.lower():
        raise InvalidInput("a link needs two different ends", "name two nodes")
    text = f"{_shown(pool, a)} {pred.replace('_', ' ')} {_shown(pool, b)}"
    paths = [str(pool.log.workdir / ops.node_name(n)) for n in (a, b) if n.startswith("path:")]
    entities = [ops.node_name(n) for n in (a, b) if not n.startswith("memory:")]
    # Edges between different ends read alike ("ada works on billing", "bob works
    # on billing"): only the same edge is a duplicate, never a near one.
    return write.add(pool, text, kind="edge", about=entities, paths=paths, tags=[pred],
                     force=True, anchor=False, by=by,
                     link=ops.Link(src=a, predicate=pred, dst=b))


def _shown(pool: Pool, n: str) -> str:
    """How a node reads in the edge's text. A memory is named by its id only: its
    words in the edge would make the edge compete with the memory in recall."""
    if n.startswith("memory:"):
        return f"memory {n[len('memory:'):][:12]}"
    return ops.node_name(n)


def related(pool: Pool, value: str, *, depth: int = 2) -> Related:
    """The links within ``depth`` hops of a node, nearest first."""
    if not 1 <= depth <= MAX_DEPTH:
        raise InvalidInput(f"--depth {depth} is out of range", f"use 1 to {MAX_DEPTH}")
    start = node(pool, value)

    def run(p: Projection) -> Related:
        reached = p.graph_walk(scope=Scope(), nodes=[start], depth=depth)
        if not reached and not start.startswith("memory:"):
            # A bare name may be any type ("billing" linked as a path or a key).
            reached = p.graph_walk(scope=Scope(), names=[ops.node_name(start)], depth=depth)
        records = p.records(mid for mid, *_ in reached)
        edges = [RelatedEdge(id=mid, src=s, predicate=pr, dst=d, hops=h,
                             author=records[mid].author, recorded_at=records[mid].recorded_at)
                 for mid, h, s, pr, d in reached if mid in records]
        nodes = {n[len("memory:"):] for e in edges for n in (e.src, e.dst)
                 if n.startswith("memory:")}
        if start.startswith("memory:"):
            nodes.add(start[len("memory:"):])
        mems = p.records(sorted(nodes))
        return Related(node=start, depth=depth, edges=edges,
                       memories=[mems[m] for m in sorted(mems)],
                       truncated=len(reached) >= MAX_EDGES)

    return pool.read(run)
