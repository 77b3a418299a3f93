"""Concept expansion: a memory naming a tool is found by the words for what the tool
is, and a synonym finds what its twin says (gitmem/concepts.py).

The thesaurus here is a small one of the tests' own (GITMEM_CONCEPTS names it),
so the tests say what the mechanism does whatever the shipped file holds.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import gitmem
from gitmem import concepts
from gitmem.projection import connection

from conftest import gm, ok

THESAURUS = [
    {"name": "Grafana", "aliases": ["grafana cloud"], "is": ["metrics dashboards", "observability"]},
    {"name": "Vault", "aliases": ["hashicorp vault"], "is": ["secrets manager", "credential storage"]},
    {"same": ["postmortem", "incident review", "retrospective"]},
    {"same": ["feature flag", "feature toggle", "feature switch"]},
]

MEMORIES = [
    "Grafana lives at grafana.internal, sign in with the company SSO",
    "Database passwords are kept in Vault under kv/prod/db",
    "Write a postmortem within two days of any outage, blameless",
    "Run make lint before pushing; CI rejects unformatted code",
    "The billing service retries webhooks three times with backoff",
    "Staging is redeployed from main every night at 02:00 UTC",
]


def write(path: Path, entries: list[object], extra: str = "") -> Path:
    path.write_text("".join(json.dumps(e) + "\n" for e in entries) + extra)
    return path


@pytest.fixture
def thesaurus(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    # (A malformed line among them: skipped, the others used.)
    path = write(tmp_path / "concepts.jsonl", THESAURUS, extra='{"name": "Broken", "is": [\n')
    monkeypatch.setenv(concepts.ENV, str(path))
    return path


@pytest.fixture
def team(repo: Path, thesaurus: Path) -> Path:
    lines = "\n".join(json.dumps({"text": t, "kind": "fact"}) for t in MEMORIES)
    ok(gm("import", "-", cwd=repo, input=lines))
    return repo


def hits(repo: Path, query: str, *extra: str) -> list[str]:
    out = ok(gm("recall", query, "--json", "-k", "3", "--min-score", "0", *extra, cwd=repo))
    return [h["text"] for h in json.loads(out.stdout)["data"]["hits"]]


# -- the matcher ---------------------------------------------------------------------


def test_names_aliases_and_same_phrases_match_as_whole_words() -> None:
    t = concepts.compile_lines(b"".join(json.dumps(e).encode() + b"\n" for e in THESAURUS))
    assert t.entries(["we graph in GRAFANA"]) == [0]
    assert t.entries(["grafanas"]) == [0]  # a final plural s
    assert t.entries(["grafanaish", "vaulted ceilings"]) == []  # whole words only
    assert t.entries(["HashiCorp Vault"]) == [1]
    assert t.entries(["Feature Toggles are read at start"]) == [3]  # a phrase, plural
    assert t.entries(["feature", "toggle"]) == []  # a phrase within one part
    assert t.expansion(["Incident reviews are blameless"]) == "postmortem retrospective"
    # The words added: the entry's others, none the text holds already.
    assert t.expansion(["grafana cloud"]) == "metrics dashboards observability"


@pytest.mark.parametrize("sets_from", [0, 10 ** 9])  # matched as sets, word by word
def test_longer_phrases_match_only_whole_and_in_one_part(
        sets_from: int, monkeypatch: pytest.MonkeyPatch) -> None:
    # Phrases of one, two and three words sharing their first words: each is named
    # only by all of its words in a row, within one part, however often it is said.
    monkeypatch.setattr(concepts, "SETS_FROM", sets_from)
    data = "".join(json.dumps(e) + "\n" for e in [
        {"name": "In-memory database", "aliases": ["in memory db"], "is": ["ram store"]},
        {"name": "In progress", "is": ["wip"]},
        {"name": "The Silver Searcher", "is": ["code search"]},
        {"same": ["memory", "ram"]},
    ]).encode()
    t = concepts.compile_lines(data)
    assert t.entries(["an in memory database for tests"]) == [0, 3]
    assert t.entries(["in memory databases"]) == [0, 3]  # the last word's plural
    assert t.entries(["in memory", "database"]) == [3]  # the phrase split between parts
    assert t.entries(["in memory of the database"]) == [3]
    assert t.entries(["work in progress, then in memory db"]) == [0, 1, 3]
    assert t.entries(["the silver searcher " * 2000]) == [2]
    assert t.entries(["the silver lining of the searcher"]) == []
    assert t.expansion(["In progress: the in-memory database"]) == (
        "db ram store wip")
    assert (t._sets is None) == bool(sets_from)


def test_both_ways_of_matching_agree_on_the_shipped_thesaurus(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # A process matches its first texts word by word (no setup: an add), then as sets
    # (a rebuild): the same entries either way, for every phrase of the thesaurus
    # alone, all of them in a row, and their plurals.
    shipped = concepts.load_index(concepts.INDEX.read_text("utf-8"))[1]
    phrases = [item.split("|")[0] for record in shipped.records.values()
               for item in record.split(";")]
    texts = [*phrases, " ".join(phrases), " and ".join(p + "s" for p in phrases),
             *(" ".join(phrases[i:i + 7]) for i in range(0, len(phrases), 5))]
    got = []
    for sets_from in (10 ** 9, 0):
        monkeypatch.setattr(concepts, "SETS_FROM", sets_from)
        t = concepts.load_index(concepts.INDEX.read_text("utf-8"))[1]
        got.append([t.entries([text]) for text in texts])
        assert (t._sets is None) == bool(sets_from)
    assert got[0] == got[1]
    assert sum(map(bool, got[0])) > len(phrases) / 2  # (most phrases name something)


def test_a_malformed_line_is_skipped(tmp_path: Path) -> None:
    data = write(tmp_path / "c.jsonl", THESAURUS[:1], extra=(
        '{"name": "Broken", "is": ["never"\n'  # not JSON
        '{"name": 7, "is": ["a number"]}\n'  # a name that is no string
        '{"name": "Kafka", "is": "not a list"}\n'
        '{"same": "not a list"}\n'
        '["an", "array"]\n'
        '{"same": ["!!!"]}\n'  # no word in it
        '{"same": ["mono repo", "monorepo"]}\n')).read_bytes()
    t = concepts.compile_lines(data)
    assert t.skipped == 6
    assert t.expansion(["one big monorepo"]) == "mono repo"
    assert t.expansion(["kafka topics", "broken never"]) == ""
    assert t.expansion(["grafana"]) != ""


def test_a_common_word_alone_names_nothing() -> None:
    # "Make" the build tool, "make" the verb: a single word the embedder knows well
    # (its vocabulary's first COMMON_RANK ids) is not a name; a phrase still is.
    data = json.dumps({"name": "Make", "aliases": ["gnu make", "makefile"],
                       "is": ["build automation"]}).encode()
    version, t = concepts.compiled(data)
    assert t.entries(["we make coffee"]) == []
    assert t.entries(["GNU Make 4.3"]) == t.entries(["edit the Makefile"]) == [0]
    assert concepts.compile_lines(data).entries(["we make coffee"]) == [0]  # unjudged
    assert version != concepts.digest(data)  # the judgement is part of the version


def test_the_expansion_is_capped() -> None:
    many = [{"name": f"tool{i}", "is": [f"category{i} thing{i}"]} for i in range(100)]
    t = concepts.compile_lines("".join(json.dumps(e) + "\n" for e in many).encode())
    words = t.expansion([" ".join(f"tool{i}" for i in range(100))]).split()
    assert len(words) == concepts.MAX_WORDS
    assert words[:2] == ["category0", "thing0"]


# -- recall --------------------------------------------------------------------------


def test_a_tool_is_found_by_the_words_for_what_it_is(team: Path) -> None:
    # No word of the query is in the memory: only the thesaurus links them.
    assert hits(team, "metrics dashboards", "--mode", "lexical")[:1] == [MEMORIES[0]]
    assert MEMORIES[1] in hits(team, "where is the secrets manager")


def test_a_synonym_finds_its_twin(team: Path) -> None:
    assert hits(team, "incident review", "--mode", "lexical") == [MEMORIES[2]]
    assert MEMORIES[2] in hits(team, "retrospective")


def test_the_expansion_never_shows(team: Path) -> None:
    # (Lexical: only the thesaurus's words find it; in hybrid recall the vector
    # channel's order among six memories decides what comes first.)
    out = ok(gm("recall", "metrics dashboards", "--json", "--explain", "--mode", "lexical",
                cwd=team)).stdout
    hit = json.loads(out)["data"]["hits"][0]
    assert hit["text"] == MEMORIES[0]
    assert "observability" not in out
    human = ok(gm("recall", "metrics dashboards", "--mode", "lexical", cwd=team)).stdout
    assert MEMORIES[0] in human and "observability" not in human
    assert "observability" not in ok(gm("list", cwd=team)).stdout


def test_without_a_thesaurus_nothing_is_added(team: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(concepts.ENV, "")
    assert hits(team, "metrics dashboards", "--mode", "lexical") == []
    assert hits(team, "incident review", "--mode", "lexical") == []


def test_a_changed_thesaurus_rebuilds_the_projection(team: Path, tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    assert hits(team, "observability", "--mode", "lexical") == [MEMORIES[0]]
    other = write(tmp_path / "other.jsonl", [{"same": ["unformatted code", "style violations"]}])
    monkeypatch.setenv(concepts.ENV, str(other))
    out = ok(gm("recall", "style violations", "--json", "--mode", "lexical", cwd=team))
    env = json.loads(out.stdout)
    assert [h["text"] for h in env["data"]["hits"]] == [MEMORIES[3]]
    assert any("rebuilt" in w for w in env["warnings"])
    assert hits(team, "observability", "--mode", "lexical") == []


def vectors(proj: object) -> list[tuple[str, bytes]]:
    """Each memory's vector rows, by id (a rebuild lays them out anew)."""
    c = proj.conn  # type: ignore[attr-defined]
    data = proj.vec_path.read_bytes()  # type: ignore[attr-defined]
    dim = proj.dim  # type: ignore[attr-defined]
    return [(mid, data[slot * dim:(slot + 1) * dim]) for mid, slot in c.execute(
        "SELECT m.id, r.slot FROM vec_rows r JOIN memories m ON m.rowid = r.memory "
        "WHERE m.status != 'forgotten' ORDER BY m.id, r.slot")]


def test_rebuild_gives_the_same_index_and_vectors(team: Path) -> None:
    # Incrementally: a forget (its words leave the index through memories_text,
    # expansion included) and adds after the first replay.
    ok(gm("add", "Feature toggles are read from config/toggles.yaml", cwd=team))
    first = json.loads(ok(gm("recall", "incident review", "--json", cwd=team)).stdout)
    ok(gm("forget", first["data"]["hits"][0]["id"], cwd=team))
    ok(gm("add", "Grafana alerts page the on-call engineer", cwd=team))
    with gitmem.open(team) as s:
        s.refresh()
        proj = s.projection
        before = proj.dump(), vectors(proj)
        s.rebuild()
        after = proj.dump(), vectors(proj)
        c = proj.conn
        assert c is not None
        c.execute("INSERT INTO memories_fts(memories_fts, rank) VALUES ('integrity-check', 1)")
    assert after[0] == before[0]
    assert after[1] == before[1] and len(after[1]) == len(MEMORIES) + 1
    assert "switch" in before[0]  # the index holds the synonym's words
    assert hits(team, "feature switch", "--mode", "lexical")[:1] == [
        "Feature toggles are read from config/toggles.yaml"]
    assert hits(team, "postmortem", "--mode", "lexical") == []


def test_the_function_never_raises(monkeypatch: pytest.MonkeyPatch) -> None:
    """An exception inside an SQL function reads as a damaged file (a rebuild of every
    projection): values of other types add nothing, and a failing matcher adds nothing."""
    fn = connection.connect.__globals__["_concepts"]
    assert fn(None, 3, b"x", 1.5) == ""
    assert "exception" in fn("Errors go to Sentry", None, "[]", "[]").split()

    def broken(*parts: str | None) -> str:
        raise RuntimeError("a bug in the matcher")

    monkeypatch.setattr(concepts, "expansion", broken)
    assert fn("Errors go to Sentry", None, "[]", "[]") == ""


def test_the_index_reads_back_as_the_thesaurus_compiles() -> None:
    data = b"".join(json.dumps(e).encode() + b"\n" for e in THESAURUS) + b"oops\n"
    d, t = concepts.load_index(concepts.dump_index(data))
    version, direct = concepts.compiled(data)
    assert d == version
    assert (t.starts, t.records, t.words, t.skipped, t.singles, t.pairs) == (
        direct.starts, direct.records, direct.words, 1, direct.singles, direct.pairs)
    for text in MEMORIES + ["Feature toggles", "hashicorp vault", "incident reviews"]:
        assert t.expansion([text]) == direct.expansion([text])
    with pytest.raises(ValueError):
        concepts.load_index("something else\n")


def test_the_shipped_index_is_current() -> None:
    # The shipped thesaurus is read from its index: made from it, and in use.
    assert concepts.INDEX.read_text("utf-8") == concepts.dump_index(concepts.DATA.read_bytes())
    assert concepts.source() == concepts.DATA
    assert concepts.version() == concepts.compiled(concepts.DATA.read_bytes())[0]


def test_a_long_lived_process_with_another_thesaurus_never_damages_the_index(
        team: Path, thesaurus: Path) -> None:
    """A server keeps the thesaurus it loaded; a CLI with a changed one rebuilds the
    projection; the server then indexed new memories with its own words, and the
    CLI's forget deleted them by the CLI's words: the index no longer matched its
    rows ('database disk image is malformed' from FTS5's integrity check)."""
    with gitmem.open(team) as server:
        server.recall("observability")  # its thesaurus is loaded: Grafana is observability
        write(thesaurus, [{"name": "Grafana", "is": ["dashboards for graphs"]}])
        ok(gm("list", cwd=team))  # another process, the changed thesaurus: rebuilt
        added = server.add("Grafana also pages the on-call engineer", force=True)
        server.recall("observability")  # the server replays its add, with its words
        ok(gm("forget", added.id, cwd=team))  # the CLI deletes it, by its words
    concepts._LOADED.clear()  # this process now reads the thesaurus as the CLI does
    concepts._LAST = None
    c = connection.connect(team / ".git" / "mem" / "cache" / "projection.sqlite3")
    c.execute("INSERT INTO memories_fts(memories_fts, rank) VALUES ('integrity-check', 1)")
    c.close()
    with gitmem.open(team) as s:
        s.refresh()
        before = s.projection.dump()
        s.rebuild()
        assert s.projection.dump() == before
