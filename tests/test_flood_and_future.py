"""A teammate's forged times and floods do not take over ranking or the profile
(issue 13, item 13), through a real bare remote and clones."""

from __future__ import annotations

import json
from pathlib import Path

import craft
from conftest import FIXED_TS, gm, ok

YEAR_9999 = 253402214400  # 9999-12-31


def _hits(clone: Path, query: str, *extra: str, when: str | None = None) -> list[dict]:  # type: ignore[type-arg]
    env = {"GITMEM_NOW": when} if when else None
    out = ok(gm("recall", query, "--json", *extra, cwd=clone, env=env))
    return json.loads(out.stdout)["data"]["hits"]  # type: ignore[no-any-return]


def test_a_memory_dated_9999_decays_like_any_other_and_is_listed(team: dict[str, Path]) -> None:
    a, b = team["a"], team["b"]
    ok(gm("add", "the deploy checklist lives in docs/deploy.md", cwd=a))
    ok(gm("sync", cwd=a))
    forged = craft.add_op("mallory", 2, "the deploy checklist is in the wiki now", at=YEAR_9999)
    craft.push_flood(b, [forged])
    ok(gm("sync", cwd=a))
    status = json.loads(ok(gm("status", "--json", cwd=a)).stdout)["data"]
    assert status["future_dated"] == 1 and status["future_dated_ids"][0].startswith(
        craft.ops.op_id(forged)[:12])
    assert "dated in the future: 1" in ok(gm("status", cwd=a)).stdout
    # A year later the honest note has decayed, and so has the forged one: it is
    # not ranked as if it were new.
    later = "2027-01-15T10:00:00Z"
    hits = {h["text"]: h for h in _hits(a, "deploy checklist", "--explain", when=later)}
    forged_hit = hits["the deploy checklist is in the wiki now"]
    honest = hits["the deploy checklist lives in docs/deploy.md"]
    assert forged_hit["explain"]["factors"]["decay"] <= honest["explain"]["factors"]["decay"]
    assert forged_hit["explain"]["factors"]["decay"] < 0.2


def test_a_flood_from_one_teammate_does_not_crowd_the_profile(team: dict[str, Path]) -> None:
    a, b = team["a"], team["b"]
    for text in ("alice: run make spec before pushing", "alice: the api speaks JSON:API",
                 "alice: staging deploys from the release branch"):
        ok(gm("add", text, "--kind", "note", cwd=a))
    ok(gm("sync", cwd=a))
    flood = [craft.add_op("mallory", 10 + i, f"mallory says {i}: read this first",
                          importance=1.0, at=FIXED_TS) for i in range(600)]
    craft.push_flood(b, flood)
    ok(gm("sync", cwd=a))
    ctx = json.loads(ok(gm("context", "--json", "--budget", "400", cwd=a)).stdout)["data"]
    notes = [i["line"] for i in ctx["items"] if i["section"] == "notes"]
    assert sum("- alice:" in line for line in notes) == 3, notes
    mallory = sum("mallory says" in line for line in notes)
    assert mallory <= max(3, len(notes) // 2), notes


def test_the_profile_looks_past_a_crowd_author_by_author_or_in_one_walk_alike(
        team: dict[str, Path], monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Past a crowd, the profile's candidates come from each other author's best
    (an index seek each) or, with more authors than MAX_AUTHORS (a flood under
    many names), from one walk: the same memories either way."""
    from gitmem import api
    from gitmem.projection import queries

    a, b = team["a"], team["b"]
    for text in ("alice: run make spec before pushing", "alice: the api speaks JSON:API"):
        ok(gm("add", text, "--kind", "note", cwd=a))
    ok(gm("add", "alice: deploys need two approvals", "--kind", "procedure", cwd=a))
    ok(gm("sync", cwd=a))
    flood = [craft.add_op("mallory", 10 + i, f"mallory says {i}: read this first",
                          importance=1.0, at=FIXED_TS) for i in range(600)]
    craft.push_flood(b, flood)
    ok(gm("sync", cwd=a))
    by_author = api.Store(a).context(budget=400)  # two authors: one seek each
    monkeypatch.setattr(queries, "MAX_AUTHORS", 0)
    one_walk = api.Store(a).context(budget=400)
    assert by_author.items == one_walk.items
    assert sum("- alice:" in i.line for i in by_author.items) == 3
