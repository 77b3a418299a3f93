"""The links graph on a memory's page: where each node and edge is drawn.

Why this exists: the page lists a memory's links by hops; a picture shows at a
glance who and what sits around it. The layout is computed here, in plain
Python, and drawn by a template as inline SVG: no JavaScript library, nothing
fetched. It is a radial tree: the memory in the centre, the nodes one hop away
on a ring around it, those two hops away on a wider ring. The first ring is
evenly spaced, ordered by name and starting on the right; a node further out
sits in the slice of the circle that belongs to its inner neighbour (the first
by that order). So the same links always give the same picture, and spokes
rarely cross. Labels are clipped here and escaped by the template (Jinja2
autoescape): node names and memory text are data from other clones, never
markup.
"""

from __future__ import annotations

import dataclasses
import math
from collections import Counter
from dataclasses import dataclass
from urllib.parse import quote

from .. import ops
from ..model import Record, Related

STEP = 150.0  # px between rings
LABEL = 26  # characters of a label before it is clipped
MAX_RING = 12  # nodes drawn on the first ring at most; about twice that on each further one
CENTRE_R, NODE_R = 14.0, 9.0
PAD_X, PAD_Y = 180.0, 48.0  # room for labels around the outermost nodes
BEND = math.radians(25)  # an only child turns this far off its parent's spoke, at most


@dataclass(frozen=True)
class Node:
    key: str  # the typed node name ("person:ada@example.com", "memory:<id>")
    type: str  # person | path | key | component | memory | node (its colour)
    kind: str  # the small line above the label: a node type, or a memory's kind
    label: str  # clipped
    title: str  # the whole name or text, shown on hover
    href: str
    x: float
    y: float
    r: float
    ring: int
    anchor: str  # text-anchor of the label: start | middle | end
    lx: float  # where the label starts
    ly: float
    retired: bool


@dataclass(frozen=True)
class Edge:
    id: str  # the edge memory
    predicate: str  # as it reads: "works on"
    href: str
    x1: float
    y1: float
    x2: float
    y2: float
    lx: float  # the middle of the predicate's label
    ly: float
    lw: float  # the label's width, about (the pill behind it)


@dataclass(frozen=True)
class Graph:
    width: float
    height: float
    nodes: list[Node]
    edges: list[Edge]
    hidden: int  # nodes left out (rings are capped; the list below has them all)


def clip(text: str, n: int = LABEL) -> str:
    """One line of at most ``n`` characters, control characters blanked."""
    flat = " ".join("".join(ch if ch.isprintable() else " " for ch in text).split())
    return flat if len(flat) <= n else flat[: n - 1] + "…"


def layout(related: Related) -> Graph | None:
    """Where to draw the links of ``related`` (None when there are none)."""
    centre = related.node.lower()
    names: dict[str, str] = {centre: related.node}  # lower -> as first seen
    near: dict[str, set[str]] = {centre: set()}
    for e in related.edges:
        a, b = e.src.lower(), e.dst.lower()
        names.setdefault(a, e.src)
        names.setdefault(b, e.dst)
        near.setdefault(a, set()).add(b)
        near.setdefault(b, set()).add(a)
    rings = _rings(centre, near)
    if len(rings) < 2:
        return None
    sector: dict[str, tuple[float, float]] = {centre: (0.0, math.pi)}  # angle, half-width
    ring_of, parent_of = {centre: 0}, {centre: ""}
    hidden = 0
    for ring in range(1, len(rings)):
        inner = [k for k in rings[ring - 1] if k in sector]  # drawn, in drawing order
        order = {k: i for i, k in enumerate(inner)}
        kids: dict[str, list[str]] = {}
        for key in rings[ring]:  # by name; each under its first drawn neighbour inside
            parents = [n for n in near[key] if n in order]
            if parents:
                kids.setdefault(min(parents, key=order.__getitem__), []).append(key)
            else:
                hidden += 1
        cap = max(2, MAX_RING * 2 ** (ring - 1) // max(1, len(kids)))
        for parent in inner:
            group = kids.get(parent, [])
            hidden += max(0, len(group) - cap)
            group = group[:cap]
            angle, half = sector[parent]
            for i, key in enumerate(group):
                if ring == 1:  # the first ring all round, starting on the right
                    at, width = 2 * math.pi * i / len(group), math.pi / len(group)
                elif len(group) == 1:  # off the parent's spoke, so a chain is no line
                    at, width = angle + min(BEND, half * 0.45), half * 0.45
                else:  # spread over the parent's slice
                    width = half * 0.9 / len(group)
                    at = angle - half * 0.9 + (2 * i + 1) * width
                sector[key], ring_of[key], parent_of[key] = (at, width), ring, parent
    records = {m.id: m for m in related.memories}
    fanned = {k for k, n in Counter(parent_of.values()).items() if n > 1}
    placed = {k: _node(names[k], ring_of[k], sector[k][0], k in fanned, records)
              for k in sector}
    # Crop to what is drawn: the picture starts at (0, 0).
    left = min(n.x for n in placed.values()) - PAD_X
    top = min(n.y for n in placed.values()) - PAD_Y
    width = max(n.x for n in placed.values()) + PAD_X - left
    height = max(n.y for n in placed.values()) + PAD_Y - top
    placed = {k: dataclasses.replace(n, x=n.x - left, y=n.y - top, lx=n.lx - left,
                                     ly=n.ly - top) for k, n in placed.items()}

    edges: list[Edge] = []
    pairs: dict[frozenset[str], int] = {}
    for e in sorted(related.edges, key=lambda e: (e.hops, e.id)):
        src, dst = placed.get(e.src.lower()), placed.get(e.dst.lower())
        if src is None or dst is None:
            continue
        pair = frozenset((e.src.lower(), e.dst.lower()))
        nth = pairs[pair] = pairs.get(pair, -1) + 1
        edges.append(_edge(e.id, e.predicate, src, dst, nth))
    nodes = sorted(placed.values(), key=lambda n: (n.ring, n.key))
    return Graph(width=width, height=height, nodes=nodes, edges=edges, hidden=hidden)


def _rings(centre: str, near: dict[str, set[str]]) -> list[list[str]]:
    """Nodes by their fewest hops from the centre, each ring sorted by name."""
    rings, seen, frontier = [[centre]], {centre}, [centre]
    while frontier:
        nxt = sorted({n for k in frontier for n in near[k]} - seen)
        if not nxt:
            break
        seen.update(nxt)
        rings.append(nxt)
        frontier = nxt
    return rings


def _node(name: str, ring: int, angle: float, fanned: bool,
          records: dict[str, Record]) -> Node:
    """A node at ``angle`` on ring ``ring`` (the centre at 0, 0). Its label keeps
    off the spokes: the centre's above it; beyond the node when no spoke goes on
    straight out (no child, or an only child that bends off); beside the node,
    running towards the centre, when its children fan out (``fanned``)."""
    typ = name.partition(":")[0] if ":" in name else "node"
    typ = typ if typ in ops.NODE_TYPES else "node"
    value = ops.node_name(name)
    retired = False
    if typ == "memory":
        m = records.get(value)
        kind = m.kind if m else "memory"
        title = (m.text if m.text is not None else "(forgotten)") if m \
            else f"memory {value[:12]}"
        retired = m is not None and m.status != "active"
        href = "/memory/" + quote(value, safe="")
    else:
        kind, title = typ, value
        href = "/facts?key=" + quote(value, safe="") if typ == "key" else \
            "/?path=" + quote(value, safe="") if typ == "path" else "/?q=" + quote(value, safe="")
    x, y = math.cos(angle) * ring * STEP, math.sin(angle) * ring * STEP
    r = CENTRE_R if ring == 0 else NODE_R
    if ring == 0:
        dx, dy = 0.0, -1.0
    elif fanned:  # across the spoke: its children's spokes go on outward
        dx, dy = math.sin(angle), -math.cos(angle)
    else:
        dx, dy = math.cos(angle), math.sin(angle)
    if abs(dx) > 0.5:
        anchor = "start" if dx > 0 else "end"
        lx, ly = x + math.copysign(r + 5, dx), y - 4
    else:
        anchor, lx = "middle", x
        if fanned:  # above or under it, running back towards the centre
            anchor = "end" if math.cos(angle) > 0 else "start"
            lx = x + math.copysign(4, math.cos(angle))
        ly = y - r - 20 if dy < 0 else y + r + 14
    return Node(key=name, type=typ, kind=kind, label=clip(title), title=title, href=href,
                x=x, y=y, r=r, ring=ring, anchor=anchor, lx=lx, ly=ly, retired=retired)


def _edge(eid: str, predicate: str, a: Node, b: Node, nth: int) -> Edge:
    """A line from ``a`` (src) to ``b`` (dst), stopped at both circles so the arrow
    shows; its label half way, the ``nth`` label between the same two nodes moved
    aside so labels never sit on each other."""
    dx, dy = b.x - a.x, b.y - a.y
    length = math.hypot(dx, dy) or 1.0
    ux, uy = dx / length, dy / length
    shift = 16.0 * nth
    text = predicate.replace("_", " ")
    return Edge(id=eid, predicate=text, href="/memory/" + quote(eid, safe=""),
                x1=a.x + ux * (a.r + 2), y1=a.y + uy * (a.r + 2),
                x2=b.x - ux * (b.r + 4), y2=b.y - uy * (b.r + 4),
                lx=(a.x + b.x) / 2 - uy * shift, ly=(a.y + b.y) / 2 + ux * shift,
                lw=6.2 * len(text) + 10)
