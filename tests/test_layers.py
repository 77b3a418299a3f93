"""One-way layers: each outside system is imported by exactly one module."""

from __future__ import annotations

import ast
from pathlib import Path

PKG = Path(__file__).parent.parent / "gitmem"

# module -> modules of the package it may import
ALLOWED = {
    "errors": set(),
    "timefmt": {"errors"},
    "ops": set(),
    "model": set(),
    "embed": set(),
    "gate": set(),
    "replay": {"ops"},
    "oplog": {"ops", "errors"},
    "projection": {"ops", "replay", "model", "timefmt", "embed"},
    "recall": {"model", "projection"},
    "api": {"ops", "errors", "model", "oplog", "projection", "recall", "replay", "timefmt",
            "embed", "gate", "context"},
    "context": {"model"},
    "cli": {"api", "errors", "model", "ops", "hooks", "mcp_server"},
    "hooks": {"errors", "model", "context"},
    "mcp_server": {"api", "errors", "model", "ops"},
    "__init__": {"api", "errors", "model"},
    "__main__": {"cli"},
}
OUTSIDE = {"pygit2": {"oplog"}, "sqlite3": {"projection"}, "subprocess": {"oplog"},
           "hnswlib": {"projection"}, "simsimd": {"projection"}, "detect_secrets": {"gate"}}


def _imports(path: Path) -> tuple[set[str], set[str]]:
    inner, outer = set(), set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                if node.module:
                    inner.add(node.module.split(".")[0])
                else:
                    inner.update(a.name for a in node.names)
            elif node.module:
                (inner if node.module.startswith("gitmem") else outer).add(
                    node.module.split(".")[-1] if node.module.startswith("gitmem.") else node.module.split(".")[0])
        elif isinstance(node, ast.Import):
            outer.update(a.name.split(".")[0] for a in node.names)
    return inner, outer


def test_every_module_has_a_rule() -> None:
    assert {p.stem for p in PKG.glob("*.py")} <= set(ALLOWED)


def test_layers_point_one_way() -> None:
    for path in PKG.glob("*.py"):
        inner, outer = _imports(path)
        inner.discard("__version__")
        extra = inner - ALLOWED[path.stem]
        assert not extra, f"{path.stem} imports {extra}"
        for lib, owners in OUTSIDE.items():
            if lib in outer:
                assert path.stem in owners, f"{path.stem} imports {lib}"
