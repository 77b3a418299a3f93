"""The agent front ends say what the CLI says: a value the team disagrees on is
marked in the prompt hook and in MCP recall (as ``git mem recall`` marks it), and
a keyed memory with no kind is a fact in MCP ``add`` and ``git mem import`` (as
``git mem add --key`` and ``set`` store it). Each failed before: the hook and MCP
showed a contested value as settled, and both writers stored a keyed note."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from conftest import gm, ok
from test_mcp_wire import Raw, raw  # noqa: F401 (raw: a fixture)


def data(proc: Any) -> Any:
    ok(proc)
    return json.loads(proc.stdout)["data"]


def kind_of(repo: Path, mid: str) -> str:
    return data(gm("show", mid, "--json", cwd=repo))["memory"]["kind"]  # type: ignore[no-any-return]


def conflict(team: dict[str, Path]) -> tuple[Path, str, str]:
    """Alice's clone after she and Bob set ci.runner concurrently and both synced:
    (her clone, the winning value's id, the losing value's id)."""
    a, b = team["a"], team["b"]
    ok(gm("set", "ci.runner", "jenkins", cwd=a))
    ok(gm("sync", cwd=a))
    ok(gm("sync", cwd=b))
    ok(gm("set", "ci.runner", "github actions", cwd=a))
    ok(gm("set", "ci.runner", "buildkite", cwd=b))
    for clone in (a, b, a):
        ok(gm("sync", cwd=clone))
    conf = data(gm("conflicts", "--json", cwd=a))["conflicts"][0]
    return a, conf["current"]["id"], conf["others"][0]["id"]


def prompt(clone: Path, text: str) -> str:
    payload = json.dumps({"session_id": "s-1", "cwd": str(clone),
                          "hook_event_name": "UserPromptSubmit", "prompt": text})
    out = ok(gm("hook", "user-prompt", input=payload, cwd=clone))
    assert out.stderr == "", out.stderr
    return json.loads(out.stdout)["hookSpecificOutput"]["additionalContext"]  # type: ignore[no-any-return]


def test_the_prompt_hook_marks_the_winner_of_a_keyed_conflict(team: dict[str, Path]) -> None:
    a, winner, loser = conflict(team)
    context = prompt(a, "which ci runner do we use?")
    line = next(x for x in context.splitlines() if x.startswith(f"- [{winner[:12]}]"))
    assert line.endswith(": buildkite") or line.endswith(": github actions"), line
    assert "(in conflict: see git mem conflicts):" in line, context
    assert loser[:12] not in context  # the loser is not shown (recall leaves it out)
    # Resolved: no mark.
    ok(gm("set", "ci.runner", "buildkite", cwd=a))
    assert "in conflict" not in prompt(a, "which ci runner do we use?")


def test_mcp_recall_carries_the_contested_map(team: dict[str, Path], tmp_path: Path) -> None:
    a, winner, loser = conflict(team)
    ok(gm("add", "the deploy script lives in ops/deploy.sh", cwd=a))
    raw = Raw(a, tmp_path / "server.err")
    try:
        brief = raw.call(2, "recall", query="ci runner")
        assert brief["ok"] is True, brief
        assert [h["id"] for h in brief["data"]["hits"]] == [winner]
        assert brief["data"]["contested"] == {winner: [loser]}
        full = raw.call(3, "recall", query="ci runner", full=True)
        assert full["data"]["contested"] == {winner: [loser]}
        assert full["data"]["hits"][0]["conflict_with"] is None
        # Only when a hit wins a conflict.
        plain = raw.call(4, "recall", query="deploy script")
        assert plain["data"]["hits"] and "contested" not in plain["data"], plain
        ok(gm("set", "ci.runner", "buildkite", cwd=a))  # resolved: no map
        for rid, shape in ((5, False), (6, True)):
            settled = raw.call(rid, "recall", query="ci runner", full=shape)
            assert settled["data"]["hits"] and "contested" not in settled["data"], settled
    finally:
        assert "Traceback" not in raw.close()


def test_mcp_add_with_a_key_and_no_kind_stores_a_fact(raw: Raw, repo: Path) -> None:
    keyed = raw.call(2, "add", text="postgres 16", key="db.engine")
    assert keyed["ok"] is True, keyed
    assert kind_of(repo, keyed["data"]["id"]) == "fact"
    assert data(gm("get", "db.engine", "--json", cwd=repo))["value"] == "postgres 16"
    plain = raw.call(3, "add", text="the staging box reboots on sundays")
    assert kind_of(repo, plain["data"]["id"]) == "note"
    # An explicit kind stays (a keyed procedure is a skill's next version).
    proc = raw.call(4, "add", text="run make release, then tag", key="release.steps",
                    kind="procedure")
    assert kind_of(repo, proc["data"]["id"]) == "procedure"
    note = raw.call(5, "add", text="we might move to mysql", key="db.next", kind="note")
    assert kind_of(repo, note["data"]["id"]) == "note"


def test_an_import_line_with_a_key_and_no_kind_is_a_fact(repo: Path) -> None:
    lines = [{"text": "postgres 16", "key": "db.engine"},
             {"text": "the staging box reboots on sundays"},
             {"text": "run make release, then tag", "key": "release.steps", "kind": "procedure"},
             {"text": "we might move to mysql", "key": "db.next", "kind": "note"}]
    ok(gm("import", "-", cwd=repo, input="".join(json.dumps(x) + "\n" for x in lines)))
    kinds = {m["text"]: m["kind"] for m in data(gm("list", "--json", cwd=repo))["memories"]}
    assert kinds == {"postgres 16": "fact", "the staging box reboots on sundays": "note",
                     "run make release, then tag": "procedure",
                     "we might move to mysql": "note"}
    assert data(gm("get", "db.engine", "--json", cwd=repo))["value"] == "postgres 16"
    # An explicit null is no kind; an empty one is still refused.
    ok(gm("import", "-", cwd=repo,
          input=json.dumps({"text": "mysql 8", "key": "db.replica", "kind": None}) + "\n"))
    replica = data(gm("get", "db.replica", "--json", cwd=repo))["id"]
    assert kind_of(repo, replica) == "fact"
    out = gm("import", "-", cwd=repo, input=json.dumps({"text": "x", "kind": ""}) + "\n")
    assert out.returncode == 2 and out.stderr.startswith("error: line 1: unknown kind"), out.stderr
