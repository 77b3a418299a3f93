"""Files opened with ``os.open`` open the same way on every system.

Windows opens a file descriptor in text mode unless ``O_BINARY`` is given: a read
stops at a Ctrl-Z and turns CRLF into LF, a write turns LF into CRLF (a settings
file's bytes changed, a SKILL.md's mark no longer matched). And Windows has no
``O_NONBLOCK``: ``os.O_NONBLOCK`` there is an AttributeError. Read from the source
with ``ast``, as test_layers.py reads imports, so a new ``os.open`` is checked the
moment it is written (a Windows machine is not needed to see it).
"""

from __future__ import annotations

import ast
from pathlib import Path

PKG = Path(__file__).parent.parent / "gitmem"

# Opened for no bytes of theirs (a lock held with flock, os.devnull handed to a child).
NO_BYTES = {"api/locks.py", "agents/mcp/wire.py"}
# (Every module opens its files so now: rev38b's finding 5.)
NOT_YET: set[str] = set()


def _names(tree: ast.Module, source: str) -> dict[str, list[str]]:
    """Every simple name assigned anywhere in the module -> the sources of its values."""
    out: dict[str, list[str]] = {}
    for node in ast.walk(tree):
        targets: list[ast.expr] = []
        if isinstance(node, ast.Assign):
            targets = list(node.targets)
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)) and node.value is not None:
            targets = [node.target]
        for target in targets:
            value = getattr(node, "value", None)
            if isinstance(target, ast.Name) and value is not None:
                out.setdefault(target.id, []).append(ast.get_source_segment(source, value) or "0")
    return out


def _expanded(text: str, names: dict[str, list[str]]) -> str:
    """``text`` with the values of the names it uses, and of theirs, appended."""
    seen: set[str] = set()
    todo = [text]
    while todo:
        part = todo.pop()
        text += part
        for n in ast.walk(ast.parse(f"({part or 0}\n)", mode="eval")):
            if isinstance(n, ast.Name) and n.id in names and n.id not in seen:
                seen.add(n.id)
                todo.extend(names[n.id])
    return text


def _problems(rel: str, source: str) -> list[str]:
    tree = ast.parse(source)
    names = _names(tree, source)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr == "O_NONBLOCK" and isinstance(
                node.value, ast.Name) and node.value.id == "os":
            found.append(f"{rel}:{node.lineno}: os.O_NONBLOCK (use getattr: Windows has none)")
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and node.func.attr == "open" and isinstance(node.func.value, ast.Name)
                and node.func.value.id == "os") or len(node.args) < 2 or rel in NO_BYTES:
            continue
        flags = node.args[1]
        if "O_BINARY" not in _expanded(ast.get_source_segment(source, flags) or "", names):
            found.append(f"{rel}:{node.lineno}: os.open without O_BINARY")
    return found


def test_every_os_open_is_binary_and_guards_o_nonblock() -> None:
    problems = []
    for path in sorted(PKG.rglob("*.py")):
        rel = path.relative_to(PKG).as_posix()
        if rel not in NOT_YET:
            problems += _problems(rel, path.read_text(encoding="utf-8"))
    assert problems == [], "\n".join(problems)


def test_the_check_catches_both() -> None:
    bad = ("import os\nFLAGS = os.O_RDONLY\n"
           "def f(p):\n    return os.open(p, FLAGS), os.open(p, os.O_RDONLY | os.O_NONBLOCK)\n")
    assert len(_problems("x.py", bad)) == 3
    good = ('import os\nFLAGS = os.O_RDONLY | getattr(os, "O_BINARY", 0)\n'
            "def f(p):\n    return os.open(p, FLAGS)\n")
    assert _problems("x.py", good) == []
