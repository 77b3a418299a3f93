"""A teammate's code anchors cannot make staleness diff a huge blob (issue 13, 08):
an anchor's object id may name megabytes of "a\\n" shipped inside a memory commit's
tree. Real clones, a real bare remote, the real git-mem command."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pygit2
from pygit2.enums import FileMode

import craft
from conftest import git, gm, ok
from gitmem.oplog import code
from gitmem.oplog.gitcmd import run_git_bounded

README = "one\ntwo\nthree\n"


def _share_readme(team: dict[str, Path]) -> str:
    """b commits README on main and pushes it; a pulls. Returns that commit."""
    a, b = team["a"], team["b"]
    (b / "README").write_text(README)
    git("add", "README", cwd=b)
    git("commit", "-q", "-m", "readme", cwd=b)
    git("push", "-q", "origin", "HEAD:main", cwd=b)
    git("pull", "-q", "origin", "main", cwd=a)
    return git("rev-parse", "HEAD", cwd=b).stdout.strip()


def _push_carrying(clone: Path, repo: pygit2.Repository, op: bytes, carried: pygit2.Oid,
                   mode: FileMode) -> None:
    """Mallory's pack commit of ``op``, with ``carried`` (a blob or a tree) riding along
    as an extra entry of its tree, so a fetch brings it; pushed to the bare remote."""
    tb = repo.TreeBuilder()
    tb.insert("ops.jsonl", repo.create_blob(op + b"\n"), FileMode.BLOB)
    tb.insert("carrier", carried, mode)
    sig = pygit2.Signature("Mallory", "mallory@example.com", 1768471200, 0)
    tip = repo.create_commit(None, sig, sig, "note\n", tb.write(), [])
    ref = f"refs/memory/{craft.partition('mallory@example.com')}"
    craft.set_ref(clone, ref, str(tip))
    git("push", "-q", "origin", f"{ref}:{ref}", cwd=clone)


def _push_anchor_to(clone: Path, head: str, blob: bytes, text: str) -> str:
    """Mallory's op anchored to README at ``head`` with the oid of ``blob``. Returns the
    blob id."""
    repo = pygit2.Repository(str(clone))
    big = repo.create_blob(blob)
    op = craft.add_op("mallory", 1, text, anchors={
        "commit": head, "paths": ["README"],
        "code": [{"path": "README", "type": "blob", "oid": str(big), "start": 1, "end": 3}]})
    _push_carrying(clone, repo, op, big, FileMode.BLOB)
    return str(big)


def _code_of(clone: Path, query: str) -> dict:  # type: ignore[type-arg]
    out = ok(gm("recall", query, "--json", cwd=clone))
    hits = json.loads(out.stdout)["data"]["hits"]
    assert hits, out.stdout
    return dict(hits[0]["code"])


def test_an_anchor_to_a_blob_over_the_limit_is_unknown_not_diffed(team: dict[str, Path]) -> None:
    a, b = team["a"], team["b"]
    head = _share_readme(team)
    # Just over the limit: every line differs from README's, so a diff would call
    # the range touched (stale); its size says "cannot tell" before any diff.
    _push_anchor_to(b, head, b"a\n" * (code.MAX_BLOB_BYTES // 2 + 1), "the caching layer note")
    ok(gm("sync", cwd=a))
    got = _code_of(a, "caching layer")
    assert got["stale"] is False
    assert [(c["path"], c["state"]) for c in got["paths"]] == [("README", "unknown")]
    assert json.loads(ok(gm("stale", "--json", cwd=a)).stdout)["data"] == []
    # show says git cannot tell, not "unchanged since" (it said so for any unknown state)
    mid = json.loads(ok(gm("recall", "caching layer", "--json", cwd=a)).stdout)["data"]["hits"][0]["id"]
    shown = ok(gm("show", mid, cwd=a)).stdout
    assert "cannot tell for README" in shown and "unchanged since" not in shown


def test_an_anchor_to_a_small_blob_is_still_compared(team: dict[str, Path]) -> None:
    a, b = team["a"], team["b"]
    head = _share_readme(team)
    _push_anchor_to(b, head, b"zero\none\n", "the small caching note")
    ok(gm("sync", cwd=a))
    got = _code_of(a, "caching note")
    assert got["stale"] is True
    assert got["paths"][0]["state"] == "changed" and got["paths"][0]["range_touched"] is True


def test_git_output_is_read_up_to_a_limit_and_git_is_stopped(team: dict[str, Path]) -> None:
    b = team["b"]
    big = _push_anchor_to(b, _share_readme(team), b"a\n" * 500_000, "x")
    got = run_git_bounded("cat-file", "blob", big, cwd=b, timeout=10, limit=4096)
    assert got is not None and got.cut and not got.ok and got.out == "a\n" * 2048


def test_a_git_that_runs_past_its_timeout_is_stopped(team: dict[str, Path]) -> None:
    b = team["b"]
    start = time.monotonic()
    got = run_git_bounded("-c", "alias.slow=!sleep 30", "slow", cwd=b, timeout=0.5, limit=4096)
    assert got is not None and got.cut and not got.ok
    assert time.monotonic() - start < 5


def test_a_folder_anchor_never_diffs_a_big_blob_inside(team: dict[str, Path]) -> None:
    a, b = team["a"], team["b"]
    (b / "docs").mkdir()
    (b / "docs" / "README").write_text(README)
    git("add", "docs", cwd=b)
    git("commit", "-q", "-m", "docs", cwd=b)
    git("push", "-q", "origin", "HEAD:main", cwd=b)
    git("pull", "-q", "origin", "main", cwd=a)
    head = git("rev-parse", "HEAD", cwd=b).stdout.strip()
    repo = pygit2.Repository(str(b))
    inner = repo.TreeBuilder()
    inner.insert("README", repo.create_blob(b"a\n" * (code.MAX_BLOB_BYTES // 2 + 1)), FileMode.BLOB)
    folder = inner.write()
    op = craft.add_op("mallory", 1, "the docs folder note", anchors={
        "commit": head, "paths": ["docs"],
        "code": [{"path": "docs", "type": "tree", "oid": str(folder)}]})
    _push_carrying(b, repo, op, folder, FileMode.TREE)
    ok(gm("sync", cwd=a))
    got = _code_of(a, "docs folder")
    # A changed blob over the limit is binary to git: counted, never read line by line.
    assert [(c["path"], c.get("added"), c.get("deleted")) for c in got["paths"]] == [("docs", 0, 0)]
