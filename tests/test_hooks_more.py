"""GitHub Copilot's hook payloads: VS Code's agent hooks and Copilot CLI (and its cloud
agent) run git mem's hook commands and read different answers.

Payloads are shaped as the hosts document them:
VS Code, https://code.visualstudio.com/docs/agents/reference/hooks-reference (common
fields timestamp, hookEventName, sessionId, transcript_path, cwd; tool_input in VS Code's
camelCase); Copilot CLI, https://docs.github.com/en/copilot/reference/hooks-reference
(camelCase: sessionId, a timestamp in epoch ms, cwd, source, toolName, toolArgs)."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import git, gm, ok


def hook(repo: Path, name: str, payload: dict[str, object]) -> str:
    proc = gm("hook", name, cwd=repo, input=json.dumps(payload))
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr
    return proc.stdout


def anchored(repo: Path, text: str, rel: str) -> str:
    """A memory anchored to the committed file ``rel``; its id."""
    (repo / rel).parent.mkdir(parents=True, exist_ok=True)
    (repo / rel).write_text("def login(user):\n    return user.ok\n")
    git("add", rel, cwd=repo)
    git("commit", "-q", "-m", f"add {rel}", cwd=repo)
    proc = ok(gm("add", text, "--path", rel, "--json", cwd=repo))
    return str(json.loads(proc.stdout)["data"]["id"])


# -- the hook commands, fed each host's payloads ------------------------------------------


def test_copilot_cli_payloads_get_a_top_level_additional_context(repo: Path) -> None:
    ok(gm("add", "deploys go out on Tuesdays", "--kind", "procedure", cwd=repo))
    mid = anchored(repo, "login must check the account first", "src/auth.py")
    start = {"sessionId": "cdcfa3e5-7191-4064-a6c6-d4895b01f888", "timestamp": 1776373391304,
             "cwd": str(repo), "source": "new", "initialPrompt": "fix the login bug"}
    answer = json.loads(hook(repo, "session-start", start))
    assert list(answer) == ["additionalContext"]  # Copilot CLI's output: no hookSpecificOutput
    assert "Tuesdays" in answer["additionalContext"]
    assert "<git-mem-context>" in answer["additionalContext"]
    # Once per session (some Copilot CLI releases fired sessionStart on every prompt).
    assert hook(repo, "session-start", dict(start, timestamp=1776373399000)) == ""
    assert "Tuesdays" in hook(repo, "session-start", dict(start, sessionId="another"))

    viewed = {"sessionId": start["sessionId"], "timestamp": 1776373401684, "cwd": str(repo),
              "toolName": "view", "toolArgs": {"path": str(repo / "src" / "auth.py")},
              "toolResult": {"resultType": "success", "textResultForLlm": "1. def login"}}
    answer = json.loads(hook(repo, "pre-tool", viewed))
    assert list(answer) == ["additionalContext"]
    assert mid[:12] in answer["additionalContext"]
    assert "<git-mem-memories>" in answer["additionalContext"]
    assert hook(repo, "pre-tool", viewed) == ""  # once per file per session
    # Before a tool runs Copilot CLI sends toolArgs as a JSON string.
    edited = dict(viewed, sessionId="s2", toolName="edit",
                  toolArgs=json.dumps({"path": "src/auth.py", "old_str": "a", "new_str": "b"}))
    assert mid[:12] in json.loads(hook(repo, "pre-tool", edited))["additionalContext"]
    for silent in ({"command": "ls", "description": "list"}, "not json", None):
        assert hook(repo, "pre-tool", dict(viewed, sessionId="s3", toolName="bash",
                                           toolArgs=silent)) == ""


def test_vscode_payloads_get_hook_specific_output_naming_their_event(repo: Path) -> None:
    ok(gm("add", "deploys go out on Tuesdays", "--kind", "procedure", cwd=repo))
    mid = anchored(repo, "login must check the account first", "src/auth.py")
    common = {"timestamp": "2026-02-09T10:30:00.000Z", "cwd": str(repo),
              "sessionId": "vscode-session-1",
              "transcript_path": str(repo / ".vscode-transcript.json")}
    start = {**common, "hookEventName": "SessionStart", "source": "new"}
    answer = json.loads(hook(repo, "session-start", start))
    assert answer["hookSpecificOutput"]["hookEventName"] == "SessionStart"
    assert "Tuesdays" in answer["hookSpecificOutput"]["additionalContext"]
    # VS Code also runs .claude/settings.json's SessionStart entry: no second briefing.
    assert hook(repo, "session-start", start) == ""

    # Our postToolUse entry reaches VS Code as PostToolUse; VS Code drops an answer
    # naming another event, so the answer must say PostToolUse, not PreToolUse.
    read = {**common, "hookEventName": "PostToolUse", "tool_name": "read_file",
            "tool_input": {"filePath": str(repo / "src" / "auth.py"), "startLine": 1,
                           "endLine": 40},
            "tool_use_id": "tool-123", "tool_response": "def login(user): ..."}
    answer = json.loads(hook(repo, "pre-tool", read))
    assert set(answer) == {"hookSpecificOutput"}
    spec = answer["hookSpecificOutput"]
    assert set(spec) == {"hookEventName", "additionalContext"}  # no permission decision
    assert spec["hookEventName"] == "PostToolUse"
    assert mid[:12] in spec["additionalContext"]
    # The same file through .claude/settings.json's PreToolUse entry: already shown.
    assert hook(repo, "pre-tool", dict(read, hookEventName="PreToolUse")) == ""
    assert hook(repo, "pre-tool", dict(read, tool_name="run_in_terminal",
                                       tool_input={"command": "ls"})) == ""

    # VS Code's UserPromptSubmit reads the common output only: nothing to add.
    prompt = {**common, "hookEventName": "UserPromptSubmit", "prompt": "when do deploys go out?"}
    assert hook(repo, "user-prompt", prompt) == ""
