"""Browsing and narrowing: `git mem list`, the filters recall shares with it, the
relevance cutoff, the empty result and the brief format."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import git, gm, ok

BOB = {"GIT_AUTHOR_NAME": "Bob Stone", "GIT_AUTHOR_EMAIL": "bob@example.com",
       "GIT_COMMITTER_NAME": "Bob Stone", "GIT_COMMITTER_EMAIL": "bob@example.com"}
CODING = Path(__file__).parent.parent / "fixtures" / "recall" / "coding.memories.jsonl"


def at(day: str, **more: str) -> dict[str, str]:
    return {"GIT_COMMITTER_DATE": f"{day}T12:00:00Z", **more}


def data(proc: object) -> dict:  # type: ignore[type-arg]
    return json.loads(ok(proc).stdout)["data"]  # type: ignore[arg-type]


def ids(proc: object) -> list[str]:
    return [m["id"][:12] for m in data(proc)["memories"]]


@pytest.fixture
def three(repo: Path) -> tuple[Path, str, str, str]:
    """Three memories by two people on three days, with kinds, tags, entities and paths."""
    (repo / "src" / "billing").mkdir(parents=True)
    ci = ok(gm("add", "CI runs on GitHub Actions, workflow ci.yml", "--kind", "procedure",
               "--tag", "ci", "--about", "GitHub Actions", "--path", ".github/workflows/ci.yml",
               cwd=repo, env=at("2025-01-01"))).stdout.strip()
    db = ok(gm("add", "the database is PostgreSQL 15; migrations live in db/migrations",
               "--kind", "fact", "--tag", "db", "--about", "PostgreSQL", "--path",
               "db/migrations", cwd=repo, env=at("2025-02-01", **BOB))).stdout.strip()
    inv = ok(gm("add", "invoice totals are rounded half-even, per line", "--path",
                "src/billing/invoice.py", cwd=repo, env=at("2025-03-01"))).stdout.strip()
    return repo, ci[:12], db[:12], inv[:12]


def test_list_is_newest_first_and_pages(three: tuple[Path, str, str, str]) -> None:
    repo, ci, db, inv = three
    page = data(gm("list", "--json", cwd=repo))
    assert [m["id"][:12] for m in page["memories"]] == [inv, db, ci]
    assert (page["total"], page["offset"], page["next_offset"]) == (3, 0, None)
    first = data(gm("list", "-n", "2", "--json", cwd=repo))
    assert [m["id"][:12] for m in first["memories"]] == [inv, db]
    assert first["next_offset"] == 2
    assert ids(gm("list", "-n", "2", "--offset", "2", "--json", cwd=repo)) == [ci]
    text = ok(gm("list", "-n", "2", cwd=repo)).stdout.splitlines()
    assert text[0].startswith(f"{inv}  2025-03-01  note") and "invoice totals" in text[0]
    assert text[-1] == "(1-2 of 3; next page: --offset 2)"
    assert ok(gm("list", "--tag", "nope", cwd=repo)).stdout == "no memories match these filters\n"


def test_list_keeps_the_order_of_one_seconds_adds_and_names_keys(repo: Path) -> None:
    """A new user's trial: six adds within one second listed in id order, not newest
    first; a keyed fact listed as its bare value ("8080")."""
    words = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot"]
    for w in words:
        ok(gm("add", f"memory {w} about topic {w}", cwd=repo, env=at("2025-05-01")))
    ok(gm("set", "server.port", "8080", cwd=repo, env=at("2025-04-01")))
    listed = [m["text"].split()[1] for m in data(gm("list", "--json", cwd=repo))["memories"]
              if m["key"] is None]
    assert listed == words[::-1]
    assert "server.port: 8080" in ok(gm("list", cwd=repo)).stdout


def test_list_filters(three: tuple[Path, str, str, str]) -> None:
    repo, ci, db, inv = three
    assert ids(gm("list", "--author", "BOB@example.com", "--json", cwd=repo)) == [db]
    assert ids(gm("list", "--author", "ada lovelace", "--json", cwd=repo)) == [inv, ci]
    assert ids(gm("list", "--author", "bob stone", "--author", "nobody", "--json",
                  cwd=repo)) == [db]
    assert ids(gm("list", "--kind", "procedure", "--json", cwd=repo)) == [ci]
    assert ids(gm("list", "--tag", "db", "--json", cwd=repo)) == [db]
    assert ids(gm("list", "--about", "postgresql", "--json", cwd=repo)) == [db]
    # A path matches its own anchor, anchors below a directory, and directory anchors above a file.
    assert ids(gm("list", "--path", "src/billing/invoice.py", "--json", cwd=repo)) == [inv]
    assert ids(gm("list", "--path", "src", "--json", cwd=repo)) == [inv]
    assert ids(gm("list", "--path", "db/migrations/0001_init.sql", "--json", cwd=repo)) == [db]
    assert ids(gm("list", "--path", "db/migrationsX", "--json", cwd=repo)) == []
    # Relative to where it runs, as add stores them.
    assert ids(gm("list", "--path", "billing", "--json", cwd=repo / "src")) == [inv]
    assert ids(gm("list", "--since", "2025-01-15", "--until", "2025-02-15", "--json",
                  cwd=repo)) == [db]
    assert ids(gm("list", "--since", "2025-02-01T12:00:00Z", "--json", cwd=repo)) == [inv, db]


def test_list_status(three: tuple[Path, str, str, str]) -> None:
    repo, ci, db, inv = three
    ok(gm("invalidate", ci, "--reason", "moved to Buildkite", cwd=repo))
    assert ids(gm("list", "--json", cwd=repo)) == [inv, db]
    assert ids(gm("list", "--status", "retired", "--json", cwd=repo)) == [ci]
    assert ids(gm("list", "--status", "all", "--json", cwd=repo)) == [inv, db, ci]
    assert "[invalidated]" in ok(gm("list", "--status", "retired", cwd=repo)).stdout


def test_list_refuses_bad_paging_in_one_line(three: tuple[Path, str, str, str]) -> None:
    repo = three[0]
    for args in (["-n", "0"], ["--offset", "-1"], ["--since", "not a date"]):
        out = gm("list", *args, cwd=repo)
        assert out.returncode != 0 and "Traceback" not in out.stderr
        assert len(out.stderr.strip().splitlines()) == 1 and "hint:" in out.stderr, out.stderr


def test_recall_takes_the_same_filters(three: tuple[Path, str, str, str]) -> None:
    repo, ci, db, inv = three

    def found(*args: str) -> list[str]:
        return [h["id"][:12] for h in data(gm("recall", *args, "--json", cwd=repo))["hits"]]

    q = "where do things live and run"
    assert set(found(q, "--min-score", "0")) == {ci, db, inv}
    assert found(q, "--min-score", "0", "--author", "bob@example.com") == [db]
    assert found(q, "--min-score", "0", "--path", "src/billing") == [inv]
    assert found(q, "--min-score", "0", "--about", "GitHub Actions") == [ci]
    assert set(found(q, "--min-score", "0", "--author", "Ada Lovelace")) == {ci, inv}


@pytest.fixture
def team_store(repo: Path) -> Path:
    """60 memories of a coding team (enough for the default cutoff to apply)."""
    lines = CODING.read_text().splitlines()[:60]
    records = [json.dumps({"text": json.loads(line)["text"]}) for line in lines]
    ok(gm("import", "-", cwd=repo, input="\n".join(records)))
    return repo


def test_nothing_relevant_says_so(team_store: Path) -> None:
    repo = team_store
    query = "banana bread recipe with walnuts"
    out = ok(gm("recall", query, cwd=repo))
    assert out.stdout == ("no memory matches (hits below the relevance cutoff are left out: "
                          "--min-score 0 shows them)\n")
    assert data(gm("recall", query, "--json", cwd=repo)) == {"query": query, "hits": []}
    # Still there for whoever asks for everything, each with a low score.
    every = data(gm("recall", query, "--min-score", "0", "--json", cwd=repo))["hits"]
    assert len(every) == 10 and all(0 <= h["score"] < 0.05 for h in every)
    # The repository can set its own cutoff.
    git("config", "gitmem.minScore", "0", cwd=repo)
    assert len(data(gm("recall", query, "--json", cwd=repo))["hits"]) == 10


def test_a_relevant_memory_scores_high_and_the_cutoff_is_a_floor(team_store: Path) -> None:
    repo = team_store
    hits = data(gm("recall", "how do I run the unit tests", "--json", cwd=repo))["hits"]
    assert hits[0]["text"].startswith("Run the unit tests with `make test`")
    assert hits[0]["score"] >= 0.5  # "probably relevant"
    strict = data(gm("recall", "how do I run the unit tests", "--min-score", "0.5", "--json",
                     cwd=repo))["hits"]
    assert strict and all(h["score"] >= 0.5 for h in strict)
    bad = gm("recall", "tests", "--min-score", "2", cwd=repo)
    assert bad.returncode != 0 and bad.stderr.startswith("error: --min-score must be from 0 to 1")
    git("config", "gitmem.minScore", "lots", cwd=repo)
    conf = gm("recall", "tests", cwd=repo)
    assert conf.returncode != 0 and "gitmem.minScore" in conf.stderr


def test_a_question_about_something_unheard_of_stays_quiet(team_store: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    repo = team_store
    # The novelty evidence, without the thesaurus: with it, a memory about "config"
    # gains "configuration", which holds "configure" (as FTS5 stems it), and clears the
    # cutoff (docs/recall.md, "Concept expansion", limits).
    monkeypatch.setenv("GITMEM_CONCEPTS", "")
    # "datadog" is in no memory and is no common English word: nothing here answers it,
    # however close "configure ... agents" comes (it scored above the cutoff before).
    query = "how do I configure Datadog agents"
    assert data(gm("recall", query, "--json", cwd=repo))["hits"] == []
    every = data(gm("recall", query, "--min-score", "0", "--explain", "--json", cwd=repo))["hits"]
    assert every and all(h["explain"]["relevance"]["novel"] > 0.2 for h in every)
    text = gm("recall", query, "--min-score", "0", "--explain", "-k", "1", cwd=repo).stdout
    assert "rare words no memory holds" in text
    # A paraphrase in common words is not novel, however few of them memories hold.
    para = data(gm("recall", "who do I page when something is down", "--min-score", "0",
                   "--explain", "--json", cwd=repo))["hits"]
    assert para and all(h["explain"]["relevance"]["novel"] == 0 for h in para)


def test_a_big_store_does_not_make_unrelated_memories_look_relevant(team_store: Path) -> None:
    """The best of thousands of unrelated cosines stands out by chance: a z-score is
    judged against what chance reaches in a store that size (relevance.chance), so
    3,000 more notes on other things do not put them above the cutoff."""
    import random

    repo = team_store
    rnd = random.Random(3)
    nouns = ("cache database queue scheduler parser gateway worker migration index "
             "pipeline cluster token session config logger router handler schema").split()
    verbs = "uses runs needs breaks owns calls retries caches stores reads writes".split()
    syllables = "ka ri to mu ne sa lo vi de pa go ru ti ma zo fe ba ki no".split()
    notes = []
    for _ in range(3000):
        w = ["".join(rnd.choice(syllables) for _ in range(3)) for _ in range(3)]
        a, b = rnd.sample(nouns, 2)
        notes.append(json.dumps({"text": f"the {a} in {w[0]}.py {rnd.choice(verbs)} {w[1]} "
                                         f"before the {b} {rnd.choice(verbs)} {w[2]}"}))
    ok(gm("import", "-", cwd=repo, input="\n".join(notes)))
    # Without the correction: 10 hits above the cutoff for each.
    assert len(data(gm("recall", "who is the CEO", "--json", cwd=repo))["hits"]) <= 2
    assert len(data(gm("recall", "how do I book a meeting room", "--json", cwd=repo))["hits"]) <= 5
    hits = data(gm("recall", "how do I run the unit tests", "--json", cwd=repo))["hits"]
    assert hits[0]["text"].startswith("Run the unit tests with `make test`")
    assert hits[0]["score"] >= 0.5


def test_a_handful_of_memories_is_not_cut_by_default(repo: Path) -> None:
    ok(gm("add", "the deploy runs on argo", cwd=repo))
    ok(gm("add", "tests live in spec/", cwd=repo))
    ok(gm("add", "lunch is at noon on fridays", cwd=repo))
    hits = data(gm("recall", "argo spec", "-k", "3", "--json", cwd=repo))["hits"]
    # Scores are shown, none is left out: a z-score over three memories says little.
    assert len(hits) == 2 and min(h["score"] for h in hits) < 0.05, hits
    assert data(gm("recall", "argo spec", "--min-score", "0.99", "--json",
                   cwd=repo))["hits"] == []


def test_brief_format(team_store: Path) -> None:
    repo = team_store
    lines = ok(gm("recall", "how do I run the unit tests", "--format", "brief", "-k", "3",
                  cwd=repo)).stdout.splitlines()
    assert 1 <= len(lines) <= 3
    first = lines[0].split("  ")
    assert len(first[0]) == 12 and 0 <= float(first[1]) <= 1
    assert "Run the unit tests" in lines[0]
    full = json.loads(ok(gm("recall", "how do I run the unit tests", "--json", "-k", "3",
                            cwd=repo)).stdout)
    brief = json.loads(ok(gm("recall", "how do I run the unit tests", "--json", "-k", "3",
                             "--format", "brief", cwd=repo)).stdout)
    assert set(brief["data"]["hits"][0]) == {"id", "score", "kind", "text", "recorded_at"}
    assert [h["id"] for h in brief["data"]["hits"]] == [h["id"] for h in full["data"]["hits"]]
    assert len(json.dumps(brief)) < len(json.dumps(full)) / 2


def test_huge_counts_are_one_line_errors_not_a_rebuild(repo: Path) -> None:
    ok(gm("add", "the deploy runs on argo", cwd=repo))
    huge = "99999999999999999999"
    for args in (["recall", "deploy", "-k", huge], ["list", "-n", huge], ["list", "--offset", huge]):
        out = gm(*args, cwd=repo)
        assert out.returncode != 0 and out.stderr.startswith("error: "), out.stderr
        assert "internal error" not in out.stderr and "at most 1,000,000" in out.stderr
        assert "rebuilt" not in out.stderr
    log = ok(gm("log", "-n", huge, cwd=repo))
    assert "the deploy runs on argo" in log.stdout and log.stderr == ""


def test_a_query_without_words_points_to_list(repo: Path) -> None:
    ok(gm("add", "the deploy runs on argo", cwd=repo))
    out = gm("recall", "*", cwd=repo)
    assert out.returncode != 0
    assert out.stderr == ("error: the query '*' has no words to look for; hint: to browse every "
                          "memory, use git mem list\n")


def test_a_filter_that_is_not_utf8_is_a_usage_error_not_damage(team_store: Path) -> None:
    """Bytes that are not UTF-8 reach Python as lone surrogates: SQLite cannot bind
    them, which looked like a damaged projection (rebuilt, then "internal error")."""
    repo = team_store
    ok(gm("recall", "tests", cwd=repo))
    cache = repo / ".git/mem/cache"
    before = sorted(p.name for p in cache.iterdir())
    bad = "\udcff"  # what os.fsdecode makes of the byte 0xff in argv
    for args in (["recall", "tests", "--tag", bad], ["recall", "tests", "--path", bad + "/x"],
                 ["recall", "tests", "--author", bad], ["list", "--tag", bad],
                 ["recall", "tests " + bad, "--json"]):
        proc = gm(*args, cwd=repo)
        assert proc.returncode == 2, (args, proc.stderr)
        assert "internal error" not in proc.stderr + proc.stdout
        assert "not valid UTF-8" in proc.stderr + proc.stdout
    assert sorted(p.name for p in cache.iterdir()) == before  # nothing was rebuilt


def test_a_keyed_fact_is_found_by_the_words_its_key_stands_for(team_store: Path) -> None:
    """A new user's trial: 'who is on call' never found `set oncall.primary carol@...`:
    the thesaurus read the key as one word, and a terse fact's vector, far below the
    others', held its score under the cutoff although the key held every word."""
    repo = team_store
    ok(gm("set", "oncall.primary", "carol@example.com", cwd=repo))
    hits = data(gm("recall", "who is on call", "--json", cwd=repo))["hits"]
    fact = [h for h in hits if h["key"] == "oncall.primary"]
    assert fact and fact[0]["score"] >= 0.05, hits  # the team's on-call notes come too


def test_an_empty_recalls_second_look_records_no_use_and_its_hint_leads_there(
        team_store: Path) -> None:
    """A review of the empty-recall hint: its second look (min-score 0) recorded a use of
    the best hit below the cutoff, which nobody was shown (renewing it against decay);
    and the retired hint came from a look without the cutoff, so --all alone could
    still show nothing."""
    import sqlite3

    repo = team_store
    usage = repo / ".git" / "mem" / "usage.sqlite3"

    def uses() -> list[tuple[object, ...]]:
        if not usage.exists():
            return []
        with sqlite3.connect(usage) as c:
            return sorted(c.execute("SELECT * FROM uses").fetchall())

    before = uses()
    assert ok(gm("recall", "banana bread recipe with walnuts", cwd=repo)).stdout.startswith(
        "no memory matches (hits below the relevance cutoff")
    assert uses() == before
    mid = ok(gm("add", "the banana bread recipe takes walnuts and brown butter", cwd=repo)).stdout.split()[0]
    ok(gm("invalidate", mid, "--reason", "moved to the wiki", cwd=repo))
    said = ok(gm("recall", "banana bread recipe with walnuts", cwd=repo)).stdout
    assert said == "no memory matches (retired memories are left out: --all shows them)\n", said
    assert "brown butter" in ok(gm("recall", "banana bread recipe with walnuts", "--all",
                                   cwd=repo)).stdout


def test_list_pages_and_counts_from_an_index_of_live_memories(
        three: tuple[Path, str, str, str]) -> None:
    """`list` at 100k memories scanned the whole table twice (its count, then its
    sort: ~90 ms each): the default view and its filters read memories_listed, a
    partial index of the live memories in the order listed; a view it does not hold (retired,
    as of a time) still answers, from the table."""
    import sqlite3

    from test_projection_files import traced_plans

    from gitmem.projection import Projection, Scope

    repo, ci, db, inv = three
    ok(gm("list", cwd=repo))  # the last add replayed
    p = Projection(repo / ".git" / "mem" / "cache")
    p.open()
    try:
        scopes = (Scope(), Scope(now=2 ** 40), Scope(kinds=("fact",)),
                  Scope(kinds=("note", "procedure"), tags=("ci",)))
        plans = [step for _, step in traced_plans(p, lambda: [p.browse(s, limit=2) for s in scopes])]
        assert plans and all("memories_listed" in step for step in plans
                             if step.startswith(("SCAN m", "SEARCH m "))), plans
        assert not any("TEMP B-TREE" in step for step in plans), plans  # in its order
        assert [r.id[:12] for r in p.browse(Scope(kinds=("fact",)))[0]] == [db]
        assert p.browse(Scope(retired=True))[1] == 3  # not held: still answered
        assert p.browse(Scope(as_of=2 ** 40))[1] == 3
    except sqlite3.OperationalError as exc:  # INDEXED BY an index that cannot serve
        raise AssertionError(exc) from exc
    finally:
        p.close()
