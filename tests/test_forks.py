"""One memory replaced twice at once (--supersedes on two clones before either
synced): both replacements are current, every clone says so the same way, and one
more replacement of both ends the fork (gitmem/projection/forks.py)."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import dump, gm, ok


def _data(proc: object) -> dict:  # type: ignore[type-arg]
    return json.loads(ok(proc).stdout)["data"]  # type: ignore[arg-type]


def _add(clone: Path, *args: str) -> str:
    return str(_data(gm("add", *args, "--json", cwd=clone))["id"])


def _fork(team: dict[str, Path]) -> tuple[Path, Path, str, str, str]:
    a, b = team["a"], team["b"]
    old = _add(a, "the release branch is release/2026")
    ok(gm("sync", cwd=a))
    ok(gm("sync", cwd=b))
    mine = _add(a, "the release branch is rel/2026-q4", "--supersedes", old)
    theirs = _add(b, "the release branch is releases/next", "--supersedes", old)
    # Noise: a plain chain of replacements is no fork, nor a keyed conflict (both
    # sets replace the old value: a conflict, said as one).
    ok(gm("set", "ci.runner", "jenkins", cwd=a))
    ok(gm("sync", cwd=a))
    ok(gm("sync", cwd=b))
    ok(gm("set", "ci.runner", "github actions", cwd=a))
    ok(gm("set", "ci.runner", "buildkite", cwd=b))
    port = _add(a, "the api listens on port 8080")
    ok(gm("add", "the api listens on port 9090", "--supersedes", port, cwd=a))
    for clone in (a, b, a):
        ok(gm("sync", cwd=clone))
    return a, b, old, mine, theirs


def test_both_replacements_say_they_are_a_fork_on_every_clone(team: dict[str, Path]) -> None:
    a, b, old, mine, theirs = _fork(team)
    for clone in (a, b):
        out = _data(gm("recall", "release branch", "--json", cwd=clone))
        assert out["forked"] == {mine: [theirs], theirs: [mine]}, out
        human = ok(gm("recall", "release branch", cwd=clone)).stdout
        assert human.count("[fork: ") == 2 and "see git mem conflicts" in human, human
        assert _data(gm("recall", "release branch", "--format", "brief", "--json",
                        cwd=clone))["forked"] == out["forked"]
        brief = ok(gm("recall", "release branch", "--format", "brief", cwd=clone)).stdout
        assert brief.count("[fork: ") == 2, brief
        assert "forked" not in _data(gm("recall", "api port", "--json", cwd=clone))
        runner = _data(gm("recall", "ci runner", "--json", cwd=clone))
        assert "contested" in runner and "forked" not in runner, runner
        listed = _data(gm("conflicts", "--json", cwd=clone))
        (fork,) = listed["forks"]
        assert sorted(h["id"] for h in fork["heads"]) == sorted([mine, theirs])
        assert fork["replaced"] == [old]
        assert "replaced twice" in ok(gm("conflicts", cwd=clone)).stdout
    assert dump(a) == dump(b)


def test_one_more_replacement_of_both_ends_the_fork(team: dict[str, Path]) -> None:
    a, b, old, mine, theirs = _fork(team)
    ok(gm("add", "the release branch is release/2026-q4", "--supersedes", mine,
          "--supersedes", theirs, cwd=b))
    for clone in (b, a):
        ok(gm("sync", cwd=clone))
    for clone in (a, b):
        assert "forked" not in _data(gm("recall", "release branch", "--json", cwd=clone))
        assert "forks" not in _data(gm("conflicts", "--json", cwd=clone))
        listed = ok(gm("conflicts", cwd=clone)).stdout
        assert "replaced twice" not in listed and "ci.runner" in listed  # the key's own


def test_the_prompt_hook_and_mcp_recall_say_so_too(team: dict[str, Path], tmp_path: Path) -> None:
    from test_mcp_wire import Raw

    a, b, old, mine, theirs = _fork(team)
    payload = json.dumps({"session_id": "s-1", "cwd": str(a), "hook_event_name": "UserPromptSubmit",
                          "prompt": "what is the release branch?"})
    out = ok(gm("hook", "user-prompt", input=payload, cwd=a))
    context = json.loads(out.stdout)["hookSpecificOutput"]["additionalContext"]
    forked = [x for x in context.splitlines() if "(fork: " in x]
    assert len(forked) == 2 and all("see git mem conflicts" in x for x in forked), context
    raw = Raw(a, tmp_path / "server.err")
    try:
        for rid, full in ((2, False), (3, True)):
            got = raw.call(rid, "recall", query="release branch", full=full)
            assert got["data"]["forked"] == {mine: [theirs], theirs: [mine]}, got
        plain = raw.call(4, "recall", query="api port")
        assert plain["data"]["hits"] and "forked" not in plain["data"], plain
    finally:
        assert "Traceback" not in raw.close()



def test_what_is_no_fork_is_not_called_one(repo: Path) -> None:
    """A review: a family was everything linked by replacements either way, so two
    memories replaced separately, then both by one later invalidated, were a 'fork';
    a fork below a chain was listed twice; and the same text replacing one memory on
    two clones (twins: agreement) was a fork."""
    a = _add(repo, "the frontend builds with webpack")
    b = _add(repo, "the backend logs to syslog")
    _add(repo, "the frontend builds with vite", "--supersedes", a)
    _add(repo, "the backend logs to journald", "--supersedes", b)
    both = _add(repo, "builds and logs are described in docs/ops.md", "--supersedes", a,
                "--supersedes", b)
    ok(gm("invalidate", both, "--reason", "no such page", cwd=repo))
    assert "forks" not in _data(gm("conflicts", "--json", cwd=repo))
    x = _add(repo, "docs are built by mkdocs")
    y = _add(repo, "docs are built by sphinx", "--supersedes", x)
    z1 = _add(repo, "docs are built by hugo", "--supersedes", y)
    z2 = _add(repo, "docs are built by docusaurus", "--supersedes", y)
    (fork,) = _data(gm("conflicts", "--json", cwd=repo))["forks"]
    assert sorted(h["id"] for h in fork["heads"]) == sorted([z1, z2]) and fork["replaced"] == [y]
    # Twins replacing one memory agree: no fork (the first recorded was refused as
    # a duplicate on this clone, so the second comes in by a teammate's push).
    old = _add(repo, "the staging host is stg1.internal")
    _add(repo, "the staging host is stg2.internal", "--supersedes", old)
    assert len(_data(gm("conflicts", "--json", cwd=repo))["forks"]) == 1


def test_twins_replacing_one_memory_on_two_clones_agree(team: dict[str, Path]) -> None:
    a, b = team["a"], team["b"]
    old = _add(a, "the staging host is stg1.internal")
    for clone in (a, b):
        ok(gm("sync", cwd=clone))
    _add(a, "the staging host is stg2.internal", "--supersedes", old)
    _add(b, "The staging host is stg2.internal.", "--supersedes", old)
    for clone in (a, b, a):
        ok(gm("sync", cwd=clone))
    assert "forks" not in _data(gm("conflicts", "--json", cwd=a))
    out = _data(gm("recall", "staging host", "--json", cwd=a))
    assert "forked" not in out and len(out["hits"]) == 1, out


def test_a_fork_below_a_long_chain_is_found_and_named_by_its_point(repo: Path) -> None:
    """A review: walks stopped after 256 memories, so once one side of a fork had been
    set 300 times more the fork was gone; and 'replaced' named every memory the heads
    replace, not the one replaced twice."""
    point = _add(repo, "deploys go to the staging cluster")
    other = _add(repo, "deploys go to the blue production cluster", "--supersedes", point)
    _add(repo, "deploys go to gamma", "--key", "deploy.where", "--supersedes", point)
    lines = "".join(json.dumps({"key": "deploy.where", "text": f"deploys go to cell {n}"}) + "\n"
                    for n in range(300))
    ok(gm("import", "-", input=lines, cwd=repo))
    (fork,) = _data(gm("conflicts", "--json", cwd=repo))["forks"]
    assert fork["replaced"] == [point], fork["replaced"]
    heads = {h["id"]: h["text"] for h in fork["heads"]}
    assert other in heads and "deploys go to cell 299" in heads.values(), heads
    out = _data(gm("recall", "blue production cluster", "--json", cwd=repo))
    assert other in out.get("forked", {}), out


def test_a_fork_in_the_personal_pool_is_listed_where_recall_points(repo: Path) -> None:
    """A review: recall marked a personal fork '(see git mem conflicts)', and conflicts
    listed only the project's."""
    p = _add(repo, "I prefer tabs for indentation", "--personal")
    _add(repo, "I prefer two spaces for indentation", "--personal", "--supersedes", p)
    _add(repo, "I prefer four spaces for indentation", "--personal", "--supersedes", p, "--force")
    (fork,) = _data(gm("conflicts", "--json", cwd=repo))["forks"]
    assert fork["replaced"] == [p] and {h["pool"] for h in fork["heads"]} == {"personal"}
    assert "[personal]" in ok(gm("conflicts", cwd=repo)).stdout
