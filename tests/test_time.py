"""Time and truth: keyed facts, supersede, both timelines, dedup, salience.

Scenarios run with an injected clock (GIT_COMMITTER_DATE, which both the
writers and the readers of git mem take as "now") and several authors, through
real clones of a bare remote.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

import gitmem
from conftest import git, gm, ok


def at(when: str) -> dict[str, str]:
    """The environment of a command run at ``when`` (the injected clock)."""
    return {"GIT_COMMITTER_DATE": when}


def data(proc) -> object:  # type: ignore[no-untyped-def]
    ok(proc)
    return json.loads(proc.stdout)["data"]


def value(clone: Path, key: str, *extra: str, when: str = "2026-06-01T00:00:00Z") -> str:
    return str(data(gm("get", key, "--json", *extra, cwd=clone, env=at(when)))["value"])  # type: ignore[index]




# -- keyed facts ------------------------------------------------------------------


def test_set_supersede_and_get_across_syncs(team: dict[str, Path]) -> None:
    a, b = team["a"], team["b"]
    ok(gm("set", "db.engine", "PostgreSQL 14", cwd=a, env=at("2026-01-10T10:00:00Z")))
    ok(gm("sync", cwd=a, env=at("2026-01-10T10:01:00Z")))
    ok(gm("sync", cwd=b, env=at("2026-01-11T09:00:00Z")))
    assert value(b, "db.engine") == "PostgreSQL 14"
    # Bob changes it; Alice sees the new value and the old one only in history.
    ok(gm("set", "db.engine", "CockroachDB", cwd=b, env=at("2026-03-01T10:00:00Z")))
    ok(gm("sync", cwd=b, env=at("2026-03-01T10:01:00Z")))
    ok(gm("sync", cwd=a, env=at("2026-03-02T08:00:00Z")))
    assert value(a, "db.engine") == "CockroachDB"
    hist = data(gm("history", "db.engine", "--json", cwd=a))
    assert [v["text"] for v in hist["values"]] == ["PostgreSQL 14", "CockroachDB"]  # type: ignore[index]
    assert [v["author"] for v in hist["values"]] == ["Alice Doe", "Bob Roe"]  # type: ignore[index]
    assert [v["status"] for v in hist["values"]] == ["superseded", "active"]  # type: ignore[index]
    assert hist["current"] == hist["values"][1]["id"] and hist["conflicts"] == []  # type: ignore[index]
    # Recall returns only current truth; --all shows the old value, marked.
    res = data(gm("recall", "which database engine", "--json", cwd=a))["hits"]  # type: ignore[index]
    assert [r["text"] for r in res] == ["CockroachDB"]
    res = data(gm("recall", "which database engine", "--all", "--json", cwd=a))["hits"]  # type: ignore[index]
    old = next(r for r in res if r["text"] == "PostgreSQL 14")
    assert old["status"] == "superseded" and old["retired_at"] == "2026-03-01T10:00:00Z"
    human = ok(gm("recall", "which database engine", "--all", cwd=a)).stdout
    assert "[superseded 2026-03-01]" in human
    # Setting the value it already has writes no new memory, only a confirm.
    out = data(gm("set", "db.engine", "cockroachdb", "--json", cwd=a))
    assert out["duplicate_of"] == hist["current"]  # type: ignore[index]
    assert len(data(gm("history", "db.engine", "--json", cwd=a))["values"]) == 2  # type: ignore[index]
    # An unknown key is exit 5 with a hint.
    miss = gm("get", "no.such.key", cwd=a)
    assert miss.returncode == 5 and "hint:" in miss.stderr


def test_concurrent_sets_converge_with_a_recorded_conflict(team: dict[str, Path]) -> None:
    a, b, c = team["a"], team["b"], team["c"]
    ok(gm("set", "ci.runner", "jenkins", cwd=a, env=at("2026-02-01T09:00:00Z")))
    ok(gm("sync", cwd=a))
    for clone in (b, c):
        ok(gm("sync", cwd=clone))
    # Alice and Bob both change it before either syncs.
    ok(gm("set", "ci.runner", "github actions", cwd=a, env=at("2026-02-02T09:00:00Z")))
    ok(gm("set", "ci.runner", "buildkite", cwd=b, env=at("2026-02-02T09:05:00Z")))
    for clone in (a, b, c, a, b):
        ok(gm("sync", cwd=clone))
    answers = {str(p): data(gm("get", "ci.runner", "--json", cwd=p)) for p in (a, b, c)}
    winners = {v["value"] for v in answers.values()}  # type: ignore[index]
    assert len(winners) == 1 and winners <= {"github actions", "buildkite"}
    loser = ({"github actions", "buildkite"} - winners).pop()
    for v in answers.values():
        assert [x["text"] for x in v["conflicts"]] == [loser]  # type: ignore[index]
    winner = answers[str(a)]["value"]  # type: ignore[index]
    for p in (a, b, c):
        conf = data(gm("conflicts", "--json", cwd=p))["conflicts"]  # type: ignore[index]
        assert [(x["key"], x["current"]["text"], [o["text"] for o in x["others"]])
                for x in conf] == [("ci.runner", winner, [loser])]
        hist = data(gm("history", "ci.runner", "--json", cwd=p))
        assert len(hist["conflicts"]) == 1  # type: ignore[index, arg-type]
        assert "conflict" in ok(gm("history", "ci.runner", cwd=p)).stdout
    # Recall shows the winner by default and the loser, marked, with --all.
    res = data(gm("recall", "ci runner", "--json", cwd=c))["hits"]  # type: ignore[index]
    assert [r["text"] for r in res] == [winner]
    res = data(gm("recall", "ci runner", "--all", "--json", cwd=c))["hits"]  # type: ignore[index]
    assert any(r["text"] == loser and r["conflict_with"] for r in res)
    # Deleting the projection changes nothing: the winner is a function of the log.
    shutil.rmtree(c / ".git" / "mem" / "cache")
    assert data(gm("get", "ci.runner", "--json", cwd=c)) == answers[str(c)]
    # Someone sets it again: the conflict is resolved everywhere.
    ok(gm("set", "ci.runner", "buildkite", cwd=c, env=at("2026-02-03T09:00:00Z")))
    ok(gm("sync", cwd=c))
    for p in (a, b):
        ok(gm("sync", cwd=p))
        assert value(p, "ci.runner") == "buildkite"
        assert data(gm("conflicts", "--json", cwd=p))["conflicts"] == []  # type: ignore[index]
    # As of before that, with --all: the loser as it stood then, losing the conflict (a
    # review: it was labelled "superseded", retired after the time asked about).
    then = data(gm("recall", "ci runner", "--all", "--as-of", "2026-02-02T12:00:00Z",
                   "--json", cwd=a))["hits"]  # type: ignore[index]
    lost = [r for r in then if r["text"] == loser]
    won = [r for r in then if r["text"] == winner]
    assert lost and won and lost[0]["status"] == "active" and lost[0]["retired_at"] is None
    assert lost[0]["conflict_with"] == won[0]["id"] and won[0]["conflict_with"] is None


# -- the two timelines ----------------------------------------------------------------


def _commit(repo: Path, message: str, when: str) -> None:
    git("-c", "user.name=Rel", "-c", "user.email=rel@example.com", "commit", "-q",
        "--allow-empty", "-m", message, cwd=repo, env={**_env(), "GIT_COMMITTER_DATE": when,
                                                      "GIT_AUTHOR_DATE": when})


def _env() -> dict[str, str]:
    import os

    return dict(os.environ)


def test_as_of_by_date_and_by_tag(repo: Path) -> None:
    ok(gm("set", "db.engine", "PostgreSQL 14", cwd=repo, env=at("2026-01-10T10:00:00Z")))
    ok(gm("add", "the cache lives in redis", cwd=repo, env=at("2026-01-10T10:00:00Z")))
    _commit(repo, "release 1.4", "2026-01-20T12:00:00Z")
    git("tag", "v1.4", cwd=repo)
    ok(gm("set", "db.engine", "CockroachDB", cwd=repo, env=at("2026-03-01T10:00:00Z")))
    cache = data(gm("recall", "cache", "--json", cwd=repo))["hits"][0]["id"]  # type: ignore[index]
    ok(gm("invalidate", cache, "--reason", "moved to memcached", cwd=repo,
          env=at("2026-03-05T10:00:00Z")))
    assert value(repo, "db.engine") == "CockroachDB"
    assert value(repo, "db.engine", "--as-of", "v1.4") == "PostgreSQL 14"
    assert value(repo, "db.engine", "--as-of", "2026-02-28") == "PostgreSQL 14"
    assert value(repo, "db.engine", "--as-of", "2026-03-01") == "CockroachDB"  # a day includes itself
    before = gm("get", "db.engine", "--as-of", "2026-01-01", cwd=repo)
    assert before.returncode == 5 and "as of" in before.stderr
    # Recall as of the tag: what the memory said when v1.4 was cut.
    then = data(gm("recall", "db engine cache", "--as-of", "v1.4", "--mode", "lexical",
                   "--json", cwd=repo))
    assert sorted(r["text"] for r in then["hits"]) == ["PostgreSQL 14",  # type: ignore[index]
                                                         "the cache lives in redis"]
    # As they stood then: current, not "superseded"/"retired" by what came later (a new
    # user's trial: recall --as-of labelled them by events after the as-of time).
    assert {(r["status"], r.get("retired_at")) for r in then["hits"]} == {  # type: ignore[index]
        ("active", None)}
    shown = ok(gm("recall", "db engine cache", "--as-of", "v1.4", "--mode", "lexical",
                  cwd=repo)).stdout
    assert "superseded" not in shown and "retired" not in shown, shown
    now = data(gm("recall", "db engine cache", "--mode", "lexical", "--json", cwd=repo))
    assert [r["text"] for r in now["hits"]] == ["CockroachDB"]  # type: ignore[index]
    bad = gm("recall", "x", "--as-of", "no-such-tag", cwd=repo)
    assert bad.returncode == 2 and "neither a date nor a git revision" in bad.stderr


def test_valid_at_answers_what_was_true_in_the_world(repo: Path) -> None:
    # Learned late: the move happened on Feb 20 but was recorded on Mar 1.
    ok(gm("set", "db.engine", "PostgreSQL 14", "--valid-from", "2025-06-01", cwd=repo,
          env=at("2026-01-10T10:00:00Z")))
    ok(gm("set", "db.engine", "CockroachDB", "--valid-from", "2026-02-20", cwd=repo,
          env=at("2026-03-01T10:00:00Z")))
    ok(gm("add", "the office is in Leeds", "--kind", "fact", "--valid-from", "2024-01-01",
          "--valid-until", "2025-12-31", cwd=repo, env=at("2026-01-10T10:00:00Z")))
    assert value(repo, "db.engine", "--valid-at", "2026-01-01") == "PostgreSQL 14"
    assert value(repo, "db.engine", "--valid-at", "2026-02-25") == "CockroachDB"
    assert gm("get", "db.engine", "--valid-at", "2025-01-01", cwd=repo).returncode == 5
    # Both timelines: on Feb 25 the log did not know of the move yet.
    assert value(repo, "db.engine", "--valid-at", "2026-02-25", "--as-of", "2026-02-25") \
        == "PostgreSQL 14"
    office = data(gm("recall", "office", "--valid-at", "2025-06-01", "--json",
                     cwd=repo))["hits"]  # type: ignore[index]
    assert [r["text"] for r in office] == ["the office is in Leeds"]
    assert data(gm("recall", "office", "--valid-at", "2026-06-01", "--json",
                   cwd=repo))["hits"] == []  # type: ignore[index]


# -- dedup on write ---------------------------------------------------------------------


def test_duplicates_reinforce_and_near_duplicates_are_refused(repo: Path) -> None:
    first = data(gm("add", "Tests live in spec/, run them with make spec.", "--json", cwd=repo))
    again = data(gm("add", "tests live in  spec/, run them with make spec", "--json", cwd=repo))
    assert again["duplicate_of"] == first["id"] and again["id"] == first["id"]  # type: ignore[index]
    dup = ok(gm("add", "TESTS LIVE IN SPEC/, RUN THEM WITH MAKE SPEC", cwd=repo))
    assert dup.stdout == first["id"][:12] + "\n"  # type: ignore[index]
    assert dup.stderr.startswith(f"note: duplicate of {first['id'][:12]}")  # type: ignore[index]
    shown = data(gm("show", first["id"], "--json", cwd=repo))  # type: ignore[index]
    assert [o["type"] for o in shown["ops"]] == ["add", "confirm", "confirm"]  # type: ignore[index]
    # A rewording: refused with the existing id, exit 12; --force stores it.
    near = gm("add", "tests live in spec/; run them using make spec", "--json", cwd=repo)
    assert near.returncode == 12
    err = json.loads(near.stdout)["error"]
    assert err["code"] == "near_duplicate" and err["existing"] == first["id"]  # type: ignore[index]
    assert "--force" in err["hint"]
    forced = data(gm("add", "tests live in spec/; run them using make spec", "--force", "--json",
                     cwd=repo))
    assert forced["duplicate_of"] is None  # type: ignore[index]
    # The same words with another number are another fact: stored, flagged similar
    # (cosine 0.947: inside a similar band widened by configuration).
    git("config", "gitmem.similarThreshold", "0.90", cwd=repo)
    ok(gm("add", "the api listens on port 8080", cwd=repo))
    port = data(gm("add", "the api listens on port 9090", "--json", cwd=repo))
    assert port["similar"] and port["similar"][0]["cosine"] >= 0.90  # type: ignore[index]
    assert "review with 'git mem similar'" in ok(gm(
        "add", "the api listens on port 7070", cwd=repo)).stderr
    pairs = data(gm("similar", "--json", cwd=repo))["pairs"]  # type: ignore[index]
    texts = {frozenset((p["older"]["text"], p["newer"]["text"])) for p in pairs}
    assert frozenset(("the api listens on port 8080", "the api listens on port 9090")) in texts
    assert any(p["near_duplicate"] for p in pairs)  # the one stored with --force
    # Other kinds never collide; a duplicate of a retired memory is new again.
    assert data(gm("add", "the api listens on port 8080", "--kind", "fact", "--json",
                   cwd=repo))["duplicate_of"] is None  # type: ignore[index]


def test_thresholds_are_git_config(repo: Path) -> None:
    ok(gm("add", "deploys go out on tuesdays after standup", cwd=repo))
    git("config", "gitmem.duplicateThreshold", "0.5", cwd=repo)
    assert gm("add", "we ship releases every friday morning", cwd=repo).returncode == 12
    git("config", "gitmem.duplicateThreshold", "lots", cwd=repo)
    bad = gm("add", "anything", cwd=repo)
    assert bad.returncode == 2 and "gitmem.duplicateThreshold" in bad.stderr


# -- salience ----------------------------------------------------------------------------


def _order(repo: Path, query: str, when: str, *extra: str) -> list[str]:
    res = data(gm("recall", query, "--json", *extra, cwd=repo, env=at(when)))["hits"]  # type: ignore[index]
    return [r["text"] for r in res]


def test_decay_ordering_changes_as_the_clock_moves(repo: Path) -> None:
    git("config", "gitmem.recordUse", "false", cwd=repo)
    old_important = "the staging server restarts nightly at 02:00"
    fresh_minor = "staging server restarts were paused this week"
    ok(gm("add", old_important, "--kind", "fact", "--importance", "1",
          cwd=repo, env=at("2025-01-01T00:00:00Z")))
    ok(gm("add", fresh_minor, "--importance", "0.1", cwd=repo, env=at("2025-12-01T00:00:00Z")))
    q = "staging server restarts"
    # The day after the minor note, its freshness beats the old fact's importance...
    assert _order(repo, q, "2025-12-02T00:00:00Z") == [fresh_minor, old_important]
    # ...half a year on, the note (half-life 90 days) has decayed past the fact (365).
    assert _order(repo, q, "2026-06-01T00:00:00Z") == [old_important, fresh_minor]
    # A year on the note has faded: out of default recall, back with --all.
    late = "2027-01-01T00:00:00Z"
    assert _order(repo, q, late) == [old_important]
    res = data(gm("recall", q, "--all", "--explain", "--json", cwd=repo, env=at(late)))["hits"]  # type: ignore[index]
    faded = next(r for r in res if r["text"] == fresh_minor)
    assert faded["faded"] and faded["salience"] < 0.05
    assert set(faded["explain"]["factors"]) == {"importance", "decay", "reinforcement"}
    assert "[faded" in ok(gm("recall", q, "--all", cwd=repo, env=at(late))).stdout
    # A confirmation renews it (and counts as reinforcement).
    ok(gm("confirm", faded["id"], cwd=repo, env=at(late)))
    assert _order(repo, q, late)[0] == fresh_minor


def test_procedures_never_decay_and_half_lives_are_config(repo: Path) -> None:
    git("config", "gitmem.recordUse", "false", cwd=repo)
    ok(gm("add", "release with make release", "--kind", "procedure", cwd=repo,
          env=at("2020-01-01T00:00:00Z")))
    ok(gm("add", "release notes are in the wiki", cwd=repo, env=at("2020-01-01T00:00:00Z")))
    later = "2026-01-01T00:00:00Z"
    assert _order(repo, "release", later) == ["release with make release"]
    git("config", "gitmem.halfLife.note", "never", cwd=repo)
    assert sorted(_order(repo, "release", later)) == ["release notes are in the wiki",
                                                      "release with make release"]
    git("config", "gitmem.decay", "false", cwd=repo)
    git("config", "--unset", "gitmem.halfLife.note", cwd=repo)
    assert len(_order(repo, "release", later)) == 2


def test_use_in_recall_is_local_and_renews_age(repo: Path, tmp_path: Path) -> None:
    ok(gm("add", "the flaky test is test_upload", cwd=repo, env=at("2025-01-01T00:00:00Z")))
    ok(gm("recall", "flaky test", cwd=repo, env=at("2025-06-01T00:00:00Z")))
    res = data(gm("recall", "flaky test", "--explain", "--json", cwd=repo,
                  env=at("2025-06-02T00:00:00Z")))["hits"][0]  # type: ignore[index]
    assert res["explain"]["signals"]["uses"] == 1
    assert res["explain"]["signals"]["age_days"] == 1.0  # counted from the last use
    # Uses live beside the projection, never in the log.
    assert (repo / ".git" / "mem" / "usage.sqlite3").exists()
    refs = git("for-each-ref", "--format=%(refname)", cwd=repo).stdout.split()
    log = git("log", "-p", "--format=%B", *[r for r in refs if r.startswith("refs/memory/")],
              cwd=repo).stdout
    assert "confirm" not in log and "use" not in log.replace("because", "")
    # Deleting the projection keeps the answer: usage is not in it.
    git("config", "gitmem.recordUse", "false", cwd=repo)
    before = data(gm("recall", "flaky test", "--json", cwd=repo, env=at("2025-07-01T00:00:00Z")))
    shutil.rmtree(repo / ".git" / "mem" / "cache")
    assert data(gm("recall", "flaky test", "--json", cwd=repo,
                   env=at("2025-07-01T00:00:00Z"))) == before


def test_library_api_for_keys(repo: Path) -> None:
    with gitmem.open(repo) as s:
        s.set("lint.tool", "ruff")
        s.set("lint.tool", "ruff check --fix")
        assert s.get("lint.tool").value == "ruff check --fix"
        assert [v.key for v in s.keys()] == ["lint.tool"]
        assert len(s.history("lint.tool").values) == 2
        with pytest.raises(gitmem.InvalidInput):
            s.set("", "x")
        with pytest.raises(gitmem.UnknownId):
            s.get("nope")


# -- regressions found in review ---------------------------------------------------------


def test_forgetting_a_conflicts_loser_leaves_no_trace(team: dict[str, Path]) -> None:
    a, b = team["a"], team["b"]
    ok(gm("set", "ci.runner", "jenkins", cwd=a))
    ok(gm("set", "ci.runner", "buildkite", cwd=b))
    for clone in (a, b, a):
        ok(gm("sync", cwd=clone))
    got = data(gm("get", "ci.runner", "--json", cwd=a))
    loser = got["conflicts"][0]["id"]  # type: ignore[index]
    ok(gm("forget", loser, cwd=a))
    assert data(gm("conflicts", "--json", cwd=a))["conflicts"] == []  # type: ignore[index]
    incremental = gitmem.open(a)
    dump = incremental.refresh() and incremental.projection.dump()
    incremental.close()
    shutil.rmtree(a / ".git" / "mem" / "cache")
    with gitmem.open(a) as fresh:
        fresh.refresh()
        assert fresh.projection.dump() == dump


def test_reasons_pass_the_gate_and_stay_out_of_commit_subjects(repo: Path) -> None:
    mid = data(gm("add", "the deploy key rotates monthly", "--json", cwd=repo))["id"]  # type: ignore[index]
    token = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    for cmd in ("confirm", "invalidate", "forget"):
        out = gm(cmd, mid, "--reason", f"checked with {token}", cwd=repo)
        assert out.returncode == 11 and token not in out.stderr
    ok(gm("invalidate", mid, "--reason", "rotation moved to vault", cwd=repo))
    subjects = git("log", "--format=%s", "--glob=refs/memory", cwd=repo).stdout
    assert "rotation moved to vault" not in subjects and token not in subjects


def test_faded_memories_do_not_crowd_out_live_ones(repo: Path) -> None:
    lines = "\n".join(json.dumps({"text": f"rollback step {i}: revert migration {i}",
                                  "recorded_at": "2024-01-01T00:00:00Z"}) for i in range(220))
    ok(gm("import", "-", cwd=repo, input=lines + "\n"))
    ok(gm("add", "to rollback a release run make rollback", cwd=repo))
    res = data(gm("recall", "rollback", "-k", "3", "--json", cwd=repo))["hits"]  # type: ignore[index]
    assert [r["text"] for r in res] == ["to rollback a release run make rollback"]


def test_supersedes_with_the_text_of_another_memory_is_never_dropped(repo: Path) -> None:
    x = data(gm("add", "the staging host is stage.example.com", "--json", cwd=repo))["id"]  # type: ignore[index]
    y = data(gm("add", "staging lives on an old box", "--json", cwd=repo))["id"]  # type: ignore[index]
    # Never silently dropped: the --supersedes is refused whole, naming the twin...
    twin = gm("add", "the staging host is stage.example.com", "--supersedes", y, cwd=repo)
    assert twin.returncode == 12 and x[:12] in twin.stderr  # type: ignore[index]
    assert data(gm("show", y, "--json", cwd=repo))["memory"]["status"] == "active"  # type: ignore[index]
    # ...and with --force the replacement is written.
    out = data(gm("add", "the staging host is stage.example.com", "--supersedes", y, "--force",
                  "--json", cwd=repo))
    assert out["duplicate_of"] is None and out["superseded"] == [y]  # type: ignore[index]
    assert data(gm("show", y, "--json", cwd=repo))["memory"]["status"] == "superseded"  # type: ignore[index]


def test_looking_at_faded_memories_does_not_renew_them(repo: Path) -> None:
    ok(gm("add", "the old wiki lives on confluence", cwd=repo, env=at("2024-01-01T00:00:00Z")))
    late = "2026-01-01T00:00:00Z"
    assert _order(repo, "wiki", late) == []
    for _ in range(2):
        assert _order(repo, "wiki", late, "--all") == ["the old wiki lives on confluence"]
    assert _order(repo, "wiki", late) == []  # --all recorded no use


def test_a_value_set_ahead_of_time_takes_over_when_it_starts(repo: Path) -> None:
    ok(gm("set", "db.engine", "postgres", cwd=repo, env=at("2026-01-01T00:00:00Z")))
    ok(gm("set", "db.engine", "cockroach", "--valid-from", "2026-06-01", cwd=repo,
          env=at("2026-03-01T00:00:00Z")))
    assert value(repo, "db.engine", when="2026-03-02T00:00:00Z") == "postgres"
    assert value(repo, "db.engine", when="2026-06-02T00:00:00Z") == "cockroach"
    ok(gm("add", "the freeze lasts until march", "--kind", "fact", "--valid-until",
          "2026-03-31", cwd=repo, env=at("2026-03-01T00:00:00Z")))
    assert _order(repo, "freeze", "2026-03-15T00:00:00Z") == ["the freeze lasts until march"]
    assert _order(repo, "freeze", "2026-04-15T00:00:00Z") == []
    assert _order(repo, "freeze", "2026-04-15T00:00:00Z", "--all") \
        == ["the freeze lasts until march"]


def test_time_travel_with_all_marks_hits_as_they_stood(repo: Path) -> None:
    ok(gm("set", "db.engine", "PostgreSQL 14", cwd=repo, env=at("2026-01-10T10:00:00Z")))
    ok(gm("set", "db.engine", "CockroachDB", cwd=repo, env=at("2026-03-01T10:00:00Z")))
    res = data(gm("recall", "db engine", "--mode", "lexical", "--as-of", "2026-02-01", "--all",
                  "--json", cwd=repo))["hits"]  # type: ignore[index]
    assert [(r["text"], r["status"]) for r in res] == [("PostgreSQL 14", "active")]
    res = data(gm("recall", "db engine", "--mode", "lexical", "--valid-at", "2025-01-01",
                  "--all", "--json", cwd=repo))["hits"]  # type: ignore[index]
    assert res == []  # neither value was valid then, retired or not


def test_relative_dates_follow_the_injected_clock(repo: Path) -> None:
    ok(gm("set", "db.engine", "PostgreSQL 14", cwd=repo, env=at("2026-01-10T10:00:00Z")))
    ok(gm("set", "db.engine", "CockroachDB", cwd=repo, env=at("2026-03-01T10:00:00Z")))
    assert value(repo, "db.engine", "--as-of", "10 days ago", when="2026-03-05T00:00:00Z") \
        == "PostgreSQL 14"
    assert value(repo, "db.engine", "--as-of", "20260301", when="2026-03-05T00:00:00Z") \
        == "CockroachDB"


def test_keyed_imports_chain_instead_of_conflicting(repo: Path) -> None:
    lines = "\n".join(json.dumps({"text": f"v{i}", "key": "build.version", "kind": "fact"})
                      for i in range(300))
    ok(gm("import", "-", "--pack-size", "64", cwd=repo, input=lines + "\n"))
    assert value(repo, "build.version") == "v299"
    assert data(gm("conflicts", "--json", cwd=repo))["conflicts"] == []  # type: ignore[index]
    assert len(data(gm("history", "build.version", "--json", cwd=repo))["values"]) == 300  # type: ignore[index, arg-type]


def test_a_rewording_of_a_memory_not_embedded_yet_is_refused_with_or_without_the_cache(
        repo: Path) -> None:
    # An add never embeds: the memory added just before is compared from the
    # writer's vector cache (pending-vectors.json), or embedded again without it.
    cache = repo / ".git" / "mem" / "cache" / "pending-vectors.json"
    pairs = [("the release train leaves every friday at noon, run make release",
              "the release train leaves each friday at noon; run make release"),
             ("staging databases are wiped nightly by the cleanup cron job",
              "staging databases get wiped nightly by the cleanup cron job")]
    for (text, rewording), drop_cache in zip(pairs, (False, True)):
        first = data(gm("add", text, "--json", cwd=repo))
        if drop_cache:
            cache.unlink()
        near = gm("add", rewording, "--json", cwd=repo)
        assert near.returncode == 12, near.stdout
        err = json.loads(near.stdout)["error"]
        assert err["code"] == "near_duplicate" and err["existing"] == first["id"]  # type: ignore[index]
        assert err["cosine"] >= 0.97


@pytest.mark.parametrize("tz", ["UTC+24", "UTC-24", "XXX-24:59", "UTC+167"])
def test_a_local_zone_a_day_or_more_off_records_utc(tz: str, repo: Path) -> None:
    """POSIX allows such zones (git records -2400); an op's offset is under a day,
    so the time is recorded in UTC: every add failed, blaming the memory."""
    proc = gm("add", f"a memory about the deploy window in {tz}", cwd=repo,
              env={"TZ": tz, "GIT_COMMITTER_DATE": ""})
    assert proc.returncode == 0, proc.stderr
    shown = json.loads(ok(gm("show", proc.stdout.strip(), "--json", cwd=repo)).stdout)["data"]
    assert shown["memory"]["recorded_at"].endswith("Z")
    assert ok(gm("recall", "deploy window", "--as-of", "today", cwd=repo, env={"TZ": tz}))


def test_as_of_year_one_reads_as_a_date(repo: Path) -> None:
    ok(gm("add", "the first memory of the repository", cwd=repo))
    out = gm("recall", "first memory", "--as-of", "0001-01-01", "--json", cwd=repo)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["data"]["hits"] == []


def test_a_commit_date_out_of_range_is_named_not_the_memory(repo: Path) -> None:
    """GIT_COMMITTER_DATE past year 9999 made every add say 'this memory cannot be
    stored: malformed op', pointing at the memory."""
    out = gm("add", "a note written with a broken clock", cwd=repo,
             env={"GIT_COMMITTER_DATE": "@300000000000 +0000"})
    assert out.returncode == 2 and "GIT_COMMITTER_DATE" in out.stderr, out.stderr
    assert "memory cannot be stored" not in out.stderr and out.stderr.count("\n") == 1
