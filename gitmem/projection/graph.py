"""Walking the links: edge memories between people, paths, keys, components, memories.

Why this exists: some questions need two hops ("who owns what Ada works on?").
Edges are ordinary memories of kind ``edge`` (so they replicate, can be
invalidated, and obey as-of) whose endpoints fold into the ``edges`` table.
A walk follows only edges whose memory is live under the caller's scope, in
both directions, breadth first, each edge at the fewest hops it is reached.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable

from .scope import Scope, filters

MAX_EDGES = 500  # edges a walk returns at most (a hub must not flood recall)


def walk(c: sqlite3.Connection, *, scope: Scope, names: Iterable[str] = (),
         nodes: Iterable[str] = (), edges: Iterable[str] = (), depth: int = 2,
         limit: int = MAX_EDGES) -> list[tuple[str, int, str, str, str]]:
    """Edges reached from the nodes called ``names`` (a node's name without its
    type, any type), the typed ``nodes``, or the edge memories ``edges`` (found
    some other way: their own words): (memory, hops, src, predicate, dst),
    fewest hops first."""
    names, frontier = list(dict.fromkeys(names)), list(dict.fromkeys(nodes))
    seeds = list(dict.fromkeys(edges))
    if not names and not frontier and not seeds:
        return []
    out: list[tuple[str, int, str, str, str]] = []
    seen_edges: set[str] = set()
    seen_nodes: set[str] = {n.lower() for n in frontier}
    args: list[object]
    for hop in range(1, depth + 1):
        if hop == 1 and (names or seeds):
            conds, args = [], []
            if names:
                marks = ",".join("?" * len(names))
                conds.append(f"e.src_name IN ({marks}) OR e.dst_name IN ({marks})")
                args += [*names, *names]
            if seeds:
                conds.append(f"e.memory IN ({','.join('?' * len(seeds))})")
                args += seeds
            if frontier:
                fm = ",".join("?" * len(frontier))
                conds.append(f"e.src IN ({fm}) OR e.dst IN ({fm})")
                args += [*frontier, *frontier]
            where = "(" + " OR ".join(conds) + ")"
        else:
            if not frontier:
                break
            fm = ",".join("?" * len(frontier))
            where = f"(e.src IN ({fm}) OR e.dst IN ({fm}))"
            args = [*frontier, *frontier]
        sql, args = filters("SELECT e.memory, e.src, e.predicate, e.dst FROM edges e "
                            f"JOIN memories m ON m.digest = unhex(e.memory) WHERE {where}",
                            list(args), scope)
        found = c.execute(sql + " ORDER BY e.memory LIMIT ?", [*args, limit]).fetchall()
        frontier = []
        for memory, src, predicate, dst in found:
            if memory in seen_edges:
                continue
            seen_edges.add(memory)
            out.append((memory, hop, src, predicate, dst))
            for node in (src, dst):
                if node.lower() not in seen_nodes:
                    seen_nodes.add(node.lower())
                    frontier.append(node)
        if len(out) >= limit:
            break
    return out[:limit]


def any_edges(c: sqlite3.Connection) -> bool:
    return c.execute("SELECT 1 FROM edges LIMIT 1").fetchone() is not None
