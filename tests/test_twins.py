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
