"""One text added on two clones before either synced: two memories in the log
(merging is union), one in what readers show (gitmem/twins.py)."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import gm, ok

TEXT = "CI runs on GitHub Actions, workflow ci.yml"


def _twins(team: dict[str, Path]) -> tuple[Path, Path]:
    a, b = team["a"], team["b"]
    ok(gm("add", TEXT, "--kind", "procedure", cwd=a))
    ok(gm("add", "ci runs on github actions,   workflow ci.yml.", "--kind", "procedure", cwd=b))
    ok(gm("add", "the staging deploy needs the vpn up", "--kind", "procedure", cwd=b))
    for clone in (a, b, a):
        ok(gm("sync", cwd=clone))
    return a, b


def test_twins_are_both_kept_in_the_log_and_listed(team: dict[str, Path]) -> None:
    a, b = _twins(team)
    for clone in (a, b):
        listed = json.loads(ok(gm("list", "--json", cwd=clone)).stdout)["data"]["memories"]
        assert sum("github actions" in m["text"].lower() for m in listed) == 2


def test_export_and_context_show_twins_once(team: dict[str, Path]) -> None:
    a, b = _twins(team)
    for clone in (a, b):
        exported = ok(gm("export", cwd=clone)).stdout
        assert exported.lower().count("github actions") == 1, exported
        assert "vpn" in exported
        md = json.loads(ok(gm("context", "--json", cwd=clone)).stdout)["data"]["markdown"]
        procedures = md.split("## Procedures and conventions\n")[1].split("##")[0]
        assert procedures.lower().count("github actions") == 1, md
    # The same on both clones: the first recorded is the one kept.
    assert ok(gm("export", cwd=a)).stdout == ok(gm("export", cwd=b)).stdout


def test_a_twin_whose_code_is_gone_leaves_the_other_in_context(team: dict[str, Path]) -> None:
    """A review: twins were merged before the fade, so when the one kept was anchored to
    a file since deleted, context lost the memory altogether."""
    from conftest import git

    a, b = team["a"], team["b"]
    (a / "old.py").write_text("def f():\n    pass\n")
    git("add", "old.py", cwd=a)
    git("commit", "-q", "-m", "old", cwd=a)
    text = "retries must stay idempotent in the billing client"
    ok(gm("add", text, "--path", "old.py", "--importance", "0.9", "--kind", "procedure", cwd=a))
    ok(gm("add", text, "--no-anchor", "--importance", "0.3", "--kind", "procedure", cwd=b))
    for clone in (a, b, a):
        ok(gm("sync", cwd=clone))
    md = json.loads(ok(gm("context", "--json", cwd=a)).stdout)["data"]["markdown"]
    assert md.split("## Procedures and conventions\n")[1].split("##")[0].count("idempotent") == 1
    git("rm", "-q", "old.py", cwd=a)
    git("commit", "-q", "-m", "gone", cwd=a)
    md = json.loads(ok(gm("context", "--json", cwd=a)).stdout)["data"]["markdown"]
    assert md.split("## Procedures and conventions\n")[1].split("##")[0].count("idempotent") == 1, md


def test_a_text_both_pools_hold_takes_one_line_in_context(repo: Path) -> None:
    ok(gm("add", "Use British English in docs", "--kind", "persona", "--personal", cwd=repo))
    ok(gm("add", "Use British English in docs", "--kind", "persona", cwd=repo))
    md = ok(gm("context", cwd=repo)).stdout
    assert md.split("## Persona\n")[1].split("##")[0].count("British English") == 1, md
    assert "[personal] Use British English" in md  # the person's own first on ties


def test_recall_spends_one_place_on_twins(team: dict[str, Path]) -> None:
    """A new user's trial: 'recall CI github actions' gave the same text twice."""
    a, b = _twins(team)
    for clone in (a, b):
        hits = json.loads(ok(gm("recall", "CI github actions workflow", "-k", "2", "--min-score", "0",
                                "--json", cwd=clone)).stdout)["data"]["hits"]
        assert [h["text"].lower().count("github actions") for h in hits] == [1, 0], hits
        assert "vpn" in hits[1]["text"]
    # --all still shows both when one is retired (it is no twin of a current one then).
    hits = json.loads(ok(gm("recall", "CI github actions workflow", "--json", cwd=a)).stdout)["data"]["hits"]
    first = [h for h in hits if "github actions" in h["text"].lower()][0]["id"]
    ok(gm("invalidate", first, "--reason", "moved", cwd=a))
    hits = json.loads(ok(gm("recall", "CI github actions workflow", "--all", "--json",
                            cwd=a)).stdout)["data"]["hits"]
    assert sum("github actions" in h["text"].lower() for h in hits) == 2, hits
