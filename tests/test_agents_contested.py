"""The agent front ends say what the CLI says: a value the team disagrees on is
marked in the prompt hook and in MCP recall (as ``git mem recall`` marks it).
Each failed before: the hook and MCP showed a contested value as settled."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from conftest import gm, ok
from test_mcp_wire import Raw


def data(proc: Any) -> Any:
    ok(proc)
    return json.loads(proc.stdout)["data"]


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
