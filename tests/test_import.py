"""Bulk import: many ops per commit, all lines checked before anything is written."""

from __future__ import annotations

import collections
import json
import shutil
from pathlib import Path

import pytest

import gitmem
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


def test_an_import_gates_each_memory_once(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The replay of an import's packs takes the verdicts its check reached: the
    # scans' memo (32k entries) does not carry them past its size, and at 100k
    # lines every memory was scanned a second time (a third of the import).
    from gitmem.api import gating

    monkeypatch.setattr(gating, "_MEMO_SIZE", 4)  # a memo that carries nothing
    scanned: collections.Counter[str] = collections.Counter()
    real = gating.findings

    def counting(text: str) -> list[str]:
        scanned[text] += 1
        return real(text)

    monkeypatch.setattr(gating, "findings", counting)
    texts = [f"service {chr(97 + i % 26)}{chr(97 + i // 26)} talks to the billing queue"
             for i in range(60)]
    with gitmem.open(repo) as store:
        store.import_records([json.dumps({"text": t}) for t in texts], pack_size=20)
        report = store.refresh()  # every pack replayed (the import replayed the last)
        assert report.ops_skipped == 0
        assert len(store.recall("service talks to the billing queue", k=100, mode="lexical")) == 60
    assert all(scanned[t] == 1 for t in texts), [scanned[t] for t in texts]


def test_the_verdicts_an_import_hands_its_replay_are_what_a_rescan_finds(
        repo: Path, tmp_path: Path) -> None:
    f = tmp_path / "in.jsonl"
    f.write_text("\n".join(json.dumps({"text": f"the queue {i} drains nightly", "tags": ["ops"]})
                           for i in range(30)))
    assert gm("import", str(f), "--pack-size", "10", cwd=repo).returncode == 0

    def hits() -> list[object]:
        out = gm("recall", "queue drains nightly", "-k", "50", "--quarantined",
                 "--mode", "lexical", "--json", cwd=repo)
        return sorted(json.dumps(h, sort_keys=True) for h in json.loads(out.stdout)["data"]["hits"])

    first = hits()
    assert len(first) == 30
    shutil.rmtree(repo / ".git" / "mem" / "cache")  # replayed again, every op scanned
    assert hits() == first
