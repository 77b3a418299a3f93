"""Golden files for what a person reads: recall, show and context, byte for byte.

The human output is an interface too (people grep it, agents read it). Each
case runs the real ``git-mem`` on a fixed little history (fixed clock, identity
and clone id, so ids and commits are the same on every machine) and compares
stdout with ``fixtures/golden/<case>.txt``. After an intended change, rewrite
them all with ``pytest tests/test_golden.py --update-golden`` and review the diff.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import FIXED_DATE, gm, init_repo, ok

GOLDEN = Path(__file__).parent.parent / "fixtures" / "golden"
CLONE_ID = "0123456789ab"


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A repository whose HEAD is the same commit everywhere (anchors record it)."""
    monkeypatch.setenv("GIT_AUTHOR_DATE", FIXED_DATE)
    return init_repo(tmp_path / "golden")


@pytest.fixture
def history(repo: Path) -> dict[str, str]:
    """A small, fixed history: a procedure, a keyed fact changed once, notes, a retirement."""
    (repo / ".git" / "mem").mkdir(parents=True)
    (repo / ".git" / "mem" / "clone-id").write_text(CLONE_ID + "\n")
    (repo / "spec").mkdir()
    ids: dict[str, str] = {}

    def add(name: str, *args: str) -> None:
        out = ok(gm(*args, "--json", cwd=repo))
        ids[name] = json.loads(out.stdout)["data"]["id"]

    add("tests", "add", "tests live in spec/, run them with make spec", "--kind", "procedure",
        "--tag", "testing", "--path", "spec")
    add("pg", "set", "db.engine", "PostgreSQL 15, one database per service")
    add("crdb", "set", "db.engine", "CockroachDB since the March migration")
    add("cents", "add", "money is stored in integer cents, never floats", "--kind", "fact",
        "--importance", "0.8")
    add("flaky", "add", "the payments suite is flaky on Mondays", "--about", "payments")
    ok(gm("invalidate", ids["flaky"], "--reason", "fixed by the retry patch", cwd=repo))
    add("persona", "add", "answer tersely; prefer make targets over raw commands",
        "--kind", "persona")
    return ids


CASES = {
    "recall": ["recall", "how do I run the tests"],
    "recall-all": ["recall", "which database do we use", "--all"],
    "recall-explain": ["recall", "how do I run the tests", "--explain", "-k", "2"],
    "show": ["show", "{tests}"],
    "show-superseded": ["show", "{pg}"],
    "context": ["context"],
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_human_output_matches_its_golden_file(
    case: str, repo: Path, history: dict[str, str], request: pytest.FixtureRequest
) -> None:
    args = [a.format(**history) for a in CASES[case]]
    out = ok(gm(*args, cwd=repo)).stdout
    path = GOLDEN / f"{case}.txt"
    if request.config.getoption("--update-golden"):
        path.write_text(out)
    assert path.exists(), f"no golden file yet: run pytest {__file__} --update-golden"
    assert out == path.read_text(), f"{case}: output differs from {path} (see the module docstring)"
