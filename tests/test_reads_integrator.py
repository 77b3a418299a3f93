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


CODING = Path(__file__).parent.parent / "fixtures" / "recall" / "coding.memories.jsonl"


def coding_store(repo: Path, n: int = 60) -> Path:
    """``n`` memories of a coding team (from 50 on, the default cutoff applies)."""
    lines = CODING.read_text().splitlines()[:n]
    records = [json.dumps({"text": json.loads(line)["text"]}) for line in lines]
    ok(gm("import", "-", cwd=repo, input="\n".join(records)))
    return repo


def test_an_empty_recall_names_all_when_only_retired_memories_answer(repo: Path) -> None:
    coding_store(repo)
    old = ok(gm("add", "the zorblax daemon listens on port 9090", cwd=repo)).stdout.split()[0]
    ok(gm("invalidate", old, "--reason", "moved", cwd=repo))
    mid = ok(gm("add", "the zorblax daemon listens on port 8080", cwd=repo)).stdout.split()[0]
    last = ok(gm("add", "the zorblax daemon listens on port 7070", "--supersedes", mid,
                 cwd=repo)).stdout.split()[0]
    ok(gm("invalidate", last, "--reason", "gone", cwd=repo))
    query = "which port does the zorblax daemon listen on"
    # Below the cutoff are only unrelated memories: --min-score 0 would not show the
    # answers; --all does, and scores them high. (A name no current memory holds: with
    # "the API", two current notes about the API client scored 0.08 once the spread of
    # the cosines left the retired answers out; they had inflated it.)
    below = data(gm("recall", query, "--min-score", "0", "--json", cwd=repo))["hits"]  # type: ignore[index]
    assert below and not any("listens" in h["text"] for h in below)  # type: ignore[index]
    every = data(gm("recall", query, "--all", "--json", cwd=repo))["hits"]  # type: ignore[index]
    assert all(h["score"] > 0.5 and "listens" in h["text"] for h in every)  # type: ignore[index]
    said = ok(gm("recall", query, cwd=repo)).stdout
    assert said == "no memory matches (retired memories are left out: --all shows them)\n", said
    # Nothing retired near the question: the cutoff is what to loosen.
    said = ok(gm("recall", "how is the generated client kept in sync", "--min-score", "0.99",
                 cwd=repo)).stdout
    assert said.startswith("no memory matches (hits below the relevance cutoff"), said


def test_the_hint_follows_the_best_scoring_second_look() -> None:
    from gitmem.cli.render_recall import left_out
    from gitmem.model import Hit

    def hit(score: float, status: str = "active") -> Hit:
        return Hit(id="a" * 64, kind="note", text="x", author="A", author_email="a@x",
                   partition="p", clock=1, recorded_at="2026-01-01T00:00:00Z", status=status,
                   commit="c" * 40, rank=1, score=score)

    def looks(table: dict[tuple[float | None, bool], list[Hit]]):  # type: ignore[no-untyped-def]
        return lambda cutoff, retired: table.get((cutoff, retired), [])

    unrelated, answer = [hit(0.03)], [hit(0.04, "superseded")]
    # Below the cutoff, the retired answer outscores the unrelated hit: --all --min-score 0.
    assert left_out(looks({(0.0, False): unrelated, (0.0, True): unrelated + answer}),
                    None, False) == "both"
    # The unrelated hit is the best of it: --min-score 0 alone.
    assert left_out(looks({(0.0, False): [hit(0.045)], (0.0, True): [hit(0.045)] + answer}),
                    None, False) == "cutoff"
    assert left_out(looks({(None, True): [hit(0.8, "superseded")],
                           (0.0, False): unrelated}), None, False) == "retired"
    assert left_out(looks({}), None, False) is None
    # Under --all only the cutoff can hide anything; under --min-score 0 only retirement.
    assert left_out(looks({(0.0, True): unrelated}), None, True) == "cutoff"
    assert left_out(looks({(0.0, False): unrelated}), 0.0, False) is None


def test_with_all_a_current_value_comes_before_the_one_it_replaced(repo: Path) -> None:
    coding_store(repo)
    old = ok(gm("add", "the API listens on port 8080", cwd=repo)).stdout.split()[0]
    new = ok(gm("add", "the API now listens on port 9090", "--supersedes", old,
                cwd=repo)).stdout.split()[0]
    # Equal in the query's words, nearly in meaning: the shorter 8080 ranked first in
    # both channels (rank 1 against 2: a factor 0.92).
    hits = data(gm("recall", "api port", "--all", "--explain", "--json", cwd=repo))["hits"]  # type: ignore[index]
    order = [h["id"][:12] for h in hits if h["id"][:12] in (old, new)]  # type: ignore[index]
    assert order == [new, old], [(h["text"], h["rank_score"]) for h in hits]  # type: ignore[index]
    why = {h["id"][:12]: h["explain"]["factors"] for h in hits}  # type: ignore[index]
    assert why[old]["retired"] == 0.8 and "retired" not in why[new]
    # Default recall has no retired factor (benchmarks/coding.py: its order is unchanged).
    plain = data(gm("recall", "api port", "--explain", "--json", cwd=repo))["hits"]  # type: ignore[index]
    assert not any("retired" in h["explain"]["factors"] for h in plain)  # type: ignore[index]


def test_a_small_context_budget_says_what_it_left_out(repo: Path) -> None:
    coding_store(repo)
    ok(gm("add", "deploys go through make deploy ENV=staging first, then production after "
          "the smoke tests pass on staging for at least an hour", "--kind", "procedure",
          cwd=repo))
    ok(gm("set", "ci.runner", "buildkite", cwd=repo))
    for budget in (100, 150, 500):
        out = ok(gm("context", "--budget", str(budget), cwd=repo)).stdout
        assert "no memories yet" not in out, out
        got = data(gm("context", "--budget", str(budget), "--json", cwd=repo))
        md, left = got["markdown"], got["left_out"]  # type: ignore[index]
        assert left > 0 and got["tokens"] <= budget  # type: ignore[index, operator]
        assert md.rstrip("\n").splitlines()[-1].startswith(f"({left} memories left out"), md
        assert f"no room in {budget} tokens" in md
        assert out.rstrip("\n") == md.rstrip("\n")
        if "none shown from" in md:  # the sections named show no line
            named = md.rsplit("none shown from ", 1)[1].split(":")[0].split(", ")
            assert named and all(f"## {t}\n" not in md for t in named), md


def test_the_note_names_a_section_whose_items_are_longer_than_its_share() -> None:
    from gitmem import context

    def item(section: str, n: int, words: int) -> context.Item:
        return context.Item(section=section, line=f"- {section} {n} " + "word " * words,
                            id=f"{section}{n}")

    sections = {"facts": [item("facts", 1, 4)], "notes": [item("notes", n, 6) for n in range(3)],
                "procedures": [item("procedures", 1, 50)]}
    built = context.build(sections, 150)
    assert built.tokens <= 150 and built.left_out > 0
    assert "## Procedures" not in built.markdown
    assert built.left_out == 1 and built.markdown.endswith(
        "(1 memory left out, no room in 150 tokens; none shown from "
        "Procedures and conventions: ask for a larger budget, or recall what you need)\n"), \
        built.markdown
    # Everything fits: no note.
    assert "left out" not in context.build({"facts": [item("facts", 1, 4)]}, 150).markdown


def test_recall_marks_the_winner_of_a_keyed_conflict(team: dict[str, Path]) -> None:
    from test_agents_contested import conflict

    # Alice and Bob both change ci.runner before either syncs: a recorded conflict.
    a, winner, loser = conflict(team)
    got = data(gm("recall", "ci runner", "--json", cwd=a))
    assert [h["id"] for h in got["hits"]] == [winner]  # type: ignore[index]
    assert got["hits"][0]["conflict_with"] is None  # type: ignore[index]  # as it was
    assert got["contested"] == {winner: [loser]}  # type: ignore[index]
    brief = data(gm("recall", "ci runner", "--format", "brief", "--json", cwd=a))
    assert brief["contested"] == {winner: [loser]}  # type: ignore[index]
    out = ok(gm("recall", "ci runner", cwd=a)).stdout
    assert f"[conflict: wins over {loser[:12]}; see git mem conflicts]" in out, out
    out = ok(gm("recall", "ci runner", "--format", "brief", cwd=a)).stdout
    assert f"[conflict: wins over {loser[:12]}]" in out, out
    # With --all the loser is there too, marked as before; the winner still says it wins.
    every = data(gm("recall", "ci runner", "--all", "--json", cwd=a))
    assert every["contested"] == {winner: [loser]}  # type: ignore[index]
    assert {h["id"]: h["conflict_with"] for h in every["hits"]}[loser] == winner  # type: ignore[index]
    # Resolved: no mark.
    ok(gm("set", "ci.runner", "buildkite", cwd=a))
    assert "contested" not in data(gm("recall", "ci runner", "--json", cwd=a))  # type: ignore[operator]
    assert "wins over" not in ok(gm("recall", "ci runner", cwd=a)).stdout


def _add(clone: Path, *args: str) -> str:
    return str(json.loads(ok(gm("add", *args, "--json", cwd=clone)).stdout)["data"]["id"])


def test_superseding_what_is_no_longer_current_says_so(repo: Path) -> None:
    """A new user's trial: '--supersedes <a forgotten id>' printed 'note: supersedes ...'
    and nothing changed; superseding a memory replaced already makes a fork, unsaid."""
    gone = _add(repo, "the staging db is read only on fridays")
    ok(gm("forget", gone, cwd=repo))
    out = ok(gm("add", "the staging db is writable again", "--supersedes", gone, cwd=repo))
    assert f"{gone[:12]} is forgotten" in out.stderr, out.stderr
    old = _add(repo, "the release branch is release/2026")
    _add(repo, "the release branch is rel/2026-q4", "--supersedes", old)
    out = ok(gm("add", "the release branch is releases/next", "--supersedes", old, cwd=repo))
    assert f"{old[:12]} is superseded already" in out.stderr, out.stderr
    assert "replaced twice" in ok(gm("conflicts", cwd=repo)).stdout
    fresh = _add(repo, "the cache is warmed by make warm")
    out = ok(gm("add", "the cache is warmed by make cache", "--supersedes", fresh, cwd=repo))
    assert "already" not in out.stderr and "forgotten" not in out.stderr, out.stderr


def test_a_key_asked_about_before_it_was_set_points_to_its_value_now(repo: Path) -> None:
    """A new user's trial: 'get KEY --as-of T' before the key existed hinted 'set it
    with git mem set KEY VALUE', for a key that holds a value."""
    ok(gm("set", "db.engine", "postgres 16", cwd=repo))
    out = gm("get", "db.engine", "--as-of", "2001-01-01", cwd=repo)
    assert out.returncode != 0 and "no value for key 'db.engine' as of" in out.stderr
    assert "git mem set" not in out.stderr and "git mem history db.engine" in out.stderr, out.stderr
    assert "git mem set" in gm("get", "db.nothing", cwd=repo).stderr  # never set: as before


def test_the_left_out_count_counts_memories_once(repo: Path) -> None:
    """A review: 6 notes and a set at --budget 100 said '13 memories left out': a
    note and its add among the recent changes were two."""
    for n in range(6):
        ok(gm("add", f"note number {n} about the build cache and its warm up", cwd=repo))
    ok(gm("set", "db.engine", "postgres 16", cwd=repo))
    got = json.loads(ok(gm("context", "--budget", "100", "--json", cwd=repo)).stdout)["data"]
    shown = {i["id"] for i in got["items"]}
    assert 0 < got["left_out"] <= 7 - len(shown), got
    assert f"({got['left_out']} memor" in got["markdown"], got["markdown"]


def test_a_keyed_add_without_a_kind_keeps_its_keys_kind(repo: Path) -> None:
    """A review: 'add --key deploy' on a key holding a procedure stored a fact (the
    key's procedure left the procedures); with no value yet, a keyed add is a fact."""
    first = _add(repo, "run make deploy, then watch the dashboard", "--key", "deploy",
                 "--kind", "procedure")
    nxt = _add(repo, "run make deploy-all, then watch the dashboard", "--key", "deploy")
    kinds = {m["id"]: m["kind"] for m in json.loads(ok(gm(
        "list", "--status", "all", "--json", cwd=repo)).stdout)["data"]["memories"]}
    assert kinds[first] == kinds[nxt] == "procedure", kinds
    assert json.loads(ok(gm("show", _add(repo, "postgres 16", "--key", "db.engine"), "--json",
                            cwd=repo)).stdout)["data"]["memory"]["kind"] == "fact"


def test_a_refused_write_says_nothing_of_what_it_would_have_replaced(repo: Path) -> None:
    """A review: the fork warning came, then 'near-duplicate ... nothing written'."""
    old = _add(repo, "lint with flake8 before each commit")
    _add(repo, "lint with ruff before each commit", "--supersedes", old)
    out = gm("add", "lint with ruff before each commit", "--supersedes", old, cwd=repo)
    assert "superseded already" not in out.stderr, out.stderr


def test_an_import_line_with_a_key_and_no_kind_keeps_its_keys_kind(repo: Path) -> None:
    """A review: add --key kept a procedure's kind, import made it a fact."""
    _add(repo, "run make deploy, then watch the dashboard", "--key", "deploy", "--kind", "procedure")
    lines = [{"text": "run make deploy-all, then watch the dashboard", "key": "deploy"},
             {"text": "page the on-call person through PagerDuty", "key": "oncall", "kind": "procedure"},
             {"text": "page the on-call person through Opsgenie", "key": "oncall"},
             {"text": "postgres 16", "key": "db.engine"}]
    ok(gm("import", "-", cwd=repo, input="".join(json.dumps(x) + "\n" for x in lines)))
    kinds = {m["text"]: m["kind"] for m in json.loads(ok(gm(
        "list", "--status", "all", "--json", cwd=repo)).stdout)["data"]["memories"]}
    assert kinds["run make deploy-all, then watch the dashboard"] == "procedure", kinds
    assert kinds["page the on-call person through Opsgenie"] == "procedure", kinds
    assert kinds["postgres 16"] == "fact", kinds
