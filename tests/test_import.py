"""Bulk import: many ops per commit, all lines checked before anything is written."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import git, gm


def test_import_writes_packs_and_everything_is_recallable(repo: Path, tmp_path: Path) -> None:
    lines = [json.dumps({"text": f"service {i} talks to the billing queue", "kind": "fact",
                         "tags": ["billing"], "recorded_at": "2025-06-01T12:00:00Z"})
             for i in range(25)]
    f = tmp_path / "in.jsonl"
    f.write_text("\n".join(lines) + "\n\n")
    out = gm("import", str(f), "--pack-size", "10", "--json", cwd=repo)
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)["data"]
    assert data["count"] == 25 and len(data["commits"]) == 3
    ref = "refs/memory/" + data["partition"]
    assert git("rev-list", "--count", ref, cwd=repo).stdout.strip() == "3"
    pack = git("show", f"{ref}:ops.jsonl", cwd=repo).stdout.splitlines()
    assert len(pack) == 5  # the last commit holds the remainder
    hits = json.loads(gm("recall", "billing queue", "-k", "50", "--json", cwd=repo).stdout)
    results = hits["data"]["hits"]
    assert len(results) == 25
    assert {r["recorded_at"] for r in results} == {"2025-06-01T12:00:00Z"}
    clocks = sorted(r["clock"] for r in results)
    assert clocks == list(range(1, 26))  # op i of a pack has clock + i


def test_a_bad_line_means_nothing_is_written(repo: Path) -> None:
    good = json.dumps({"text": "fine"})
    for bad, message in [
        ('{"text": ""}', "error: line 2: memory text is empty"),
        ('{"text": "x", "kind": "gossip"}', "error: line 2: unknown kind 'gossip'"),
        ('{"txt": "typo"}', "error: line 2: Object contains unknown field `txt`"),
        ("not json", "error: line 2: JSON is malformed"),
        ('{"text": "x", "valid_from": "soonish"}', "error: line 2: --valid-from: cannot parse"),
    ]:
        out = gm("import", "-", cwd=repo, input=f"{good}\n{bad}\n")
        assert out.returncode == 2, bad
        assert out.stderr.startswith(message), out.stderr
    assert git("for-each-ref", "refs/memory/", cwd=repo).stdout == ""
