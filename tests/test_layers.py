"""One-way layers: each outside system is imported by one layer, and no layer imports up.

Read from the source with ``ast`` (nothing is imported), so a new module or a new
import is checked the moment it is written. A layer is a top-level module
(``ops``) or a package (``oplog``, ``projection``, ``embed``, ``api``, ``cli``,
``agents``); inside a package, modules import each other without cycles.
"""

from __future__ import annotations

import ast
from pathlib import Path

PKG = Path(__file__).parent.parent / "gitmem"

# layer -> layers of the package it may import (its own layer always allowed)
ALLOWED: dict[str, set[str]] = {
    "errors": set(),
    "hashes": set(),
    "forked": set(),
    "selfexec": set(),
    "filelock": set(),
    "pathsearch": set(),
    "timefmt": {"errors"},
    "folding": set(),
    "ops": {"hashes", "folding"},
    "twins": {"ops"},
    "model": set(),
    "concepts": {"hashes", "embed"},
    "embed": {"hashes", "folding"},
    "gate": {"hashes"},
    "envelope": {"errors"},
    "replay": {"ops"},
    "oplog": {"ops", "errors", "hashes", "filelock", "pathsearch"},
    "projection": {"ops", "replay", "model", "timefmt", "embed", "forked", "hashes", "concepts"},
    "relevance": set(),
    # (timefmt: FUTURE_SKEW, shared with import; ops: node_name, the one reading of a
    # link's node, as the projection's edges table names it)
    "salience": {"model", "projection", "timefmt"},
    "relations": {"ops"},
    "reorder": {"ops", "projection", "relations"},
    "recall": {"model", "ops", "projection", "relevance", "timefmt", "twins", "salience",
               "relations", "reorder"},
    "context": {"model"},
    "capture": {"pathsearch"},
    "api": {"ops", "errors", "forked", "hashes", "model", "oplog", "projection", "recall", "replay", "timefmt",
            "embed", "gate", "context", "capture", "twins", "selfexec", "salience", "filelock"},
    "agents": {"api", "errors", "model", "ops", "context", "envelope", "selfexec"},
    "cli": {"api", "errors", "model", "ops", "agents", "envelope", "ui"},
    "ui": {"api", "errors", "model", "ops", "timefmt", "pathsearch"},
    "__init__": {"api", "errors", "model"},
    "__main__": {"cli"},
}
# outside library -> the layers (or single modules, dotted) allowed to import it
OUTSIDE: dict[str, set[str]] = {
    "pygit2": {"oplog.libgit2"},
    # git; the user's model command; the session-end hook's hand-off (which must
    # import nothing of ours to return in milliseconds).
    "subprocess": {"oplog.gitcmd", "capture.runner", "agents.spawn"},
    "sqlite3": {"projection"},
    "simsimd": {"projection"},
    "numpy": {"embed", "projection"},
    "tokenizers": {"embed"},
    "detect_secrets": {"gate"},
    "click": {"cli"},
    # The memory panel (git mem ui): the web server, the ASGI framework, templates.
    "starlette": {"ui"},
    "uvicorn": {"ui"},
    "jinja2": {"ui"},
    "mcp": {"agents.mcp"},
    "pydantic": {"agents.mcp"},
}


def _modules() -> dict[str, Path]:
    """Dotted names inside gitmem ("api.store", "ops", "oplog" for oplog/__init__.py)."""
    out = {}
    for path in PKG.rglob("*.py"):
        parts = list(path.relative_to(PKG).with_suffix("").parts)
        if parts[-1] == "__init__" and len(parts) > 1:
            parts.pop()
        out[".".join(parts)] = path
    return out


def _imports(name: str, path: Path, runtime_only: bool = False) -> tuple[set[str], set[str]]:
    """(modules of the package, outside top-level modules) that ``name`` imports."""
    package = name.split(".")[:-1] if path.name != "__init__.py" or name == "__init__" \
        else name.split(".")
    if name == "__init__":
        package = []
    inner: set[str] = set()
    outer: set[str] = set()
    tree = ast.parse(path.read_text())
    # Imports under "if TYPE_CHECKING:" never run: they count for the layers
    # (a type from a higher layer is still a dependency) but not for cycles.
    typing_only = {id(n) for block in ast.walk(tree) if isinstance(block, ast.If)
                   and getattr(block.test, "id", None) == "TYPE_CHECKING"
                   for stmt in block.body for n in ast.walk(stmt)}
    for node in ast.walk(tree):
        if runtime_only and id(node) in typing_only:
            continue
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - (node.level - 1)]
                target = base + (node.module.split(".") if node.module else [])
                if node.module:
                    inner.add(".".join(target))
                # "from . import x" / "from .mod import name": x may be a module
                for alias in node.names:
                    inner.add(".".join([*target, alias.name]))
            elif node.module and node.module.split(".")[0] == "gitmem":
                inner.add(".".join(node.module.split(".")[1:]) or "__init__")
                for alias in node.names:
                    inner.add(".".join([*node.module.split(".")[1:], alias.name]))
            elif node.module:
                outer.add(node.module.split(".")[0])
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "gitmem":
                    inner.add(".".join(alias.name.split(".")[1:]) or "__init__")
                else:
                    outer.add(alias.name.split(".")[0])
    known = _modules()
    return {m for m in inner if m in known}, outer


def _layer(name: str) -> str:
    return name.split(".")[0]


def test_every_layer_has_a_rule() -> None:
    assert {_layer(m) for m in _modules()} <= set(ALLOWED)


def test_layers_point_one_way() -> None:
    for name, path in sorted(_modules().items()):
        inner, outer = _imports(name, path)
        layer = _layer(name)
        extra = {_layer(m) for m in inner} - ALLOWED[layer] - {layer}
        assert not extra, f"{name} imports {extra}"
        for lib, owners in OUTSIDE.items():
            if lib in outer:
                # An owner names a layer, a module or a package (and its modules).
                assert layer in owners or any(name == o or name.startswith(o + ".")
                                              for o in owners), f"{name} imports {lib}"


def test_no_cycles_inside_a_package() -> None:
    graph = {}
    for name, path in _modules().items():
        inner, _ = _imports(name, path, runtime_only=True)
        graph[name] = {m for m in inner if _layer(m) == _layer(name) and m != name
                       and "." in m}  # a package's own __init__ re-exports: not an edge

    seen: dict[str, int] = {}

    def visit(node: str, trail: list[str]) -> None:
        if seen.get(node) == 2:
            return
        assert seen.get(node) != 1, "import cycle: " + " -> ".join([*trail, node])
        seen[node] = 1
        for nxt in sorted(graph.get(node, ())):
            visit(nxt, [*trail, node])
        seen[node] = 2

    for name in sorted(graph):
        visit(name, [])


def test_the_rules_catch_a_violation(tmp_path: Path) -> None:
    """The checker itself: an api module importing click is reported."""
    bad = tmp_path / "bad.py"
    bad.write_text("import click\nfrom ..cli import main\n")
    inner, outer = _imports("api.bad", bad)
    assert "click" in outer and "api" not in OUTSIDE["click"]
    assert "cli" in {_layer(m) for m in inner} and "cli" not in ALLOWED["api"]
