"""GitHub Copilot hooks (.github/hooks/git-mem.json, read by VS Code's agent hooks and by
Copilot CLI and its cloud agent) and Windsurf, which keeps MCP and its rules file.

Payloads are shaped as the hosts document them:
VS Code, https://code.visualstudio.com/docs/agents/reference/hooks-reference (common
fields timestamp, hookEventName, sessionId, transcript_path, cwd; tool_input in VS Code's
camelCase); Copilot CLI, https://docs.github.com/en/copilot/reference/hooks-reference
(camelCase: sessionId, a timestamp in epoch ms, cwd, source, toolName, toolArgs)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from conftest import git, gm, ok

HOOKS = Path(".github") / "hooks" / "git-mem.json"

# Someone's own entries in the same file, and a key Copilot CLI reads beside "hooks".
EXISTING = {
    "version": 1,
    "hooks": {
        "sessionStart": [{"type": "command", "bash": "./scripts/log-start.sh",
                          "powershell": "./scripts/log-start.ps1", "timeoutSec": 5}],
        "preToolUse": [{"type": "command", "bash": "./scripts/guard.sh"}],
    },
    "disableAllHooks": False,
}

OUR_SESSION_START = {"type": "command", "bash": "git mem hook session-start",
                     "powershell": "git mem hook session-start", "timeoutSec": 30, "timeout": 30}
OUR_POST_TOOL = {"type": "command", "bash": "git mem hook pre-tool",
                 "powershell": "git mem hook pre-tool",
                 "matcher": "view|edit|create|str_replace_editor", "timeoutSec": 10, "timeout": 10}


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


# -- install ----------------------------------------------------------------------------


def test_copilot_install_merges_is_idempotent_and_uninstall_is_exact(repo: Path) -> None:
    path = repo / HOOKS
    path.parent.mkdir(parents=True)
    original = json.dumps(EXISTING, indent=2) + "\n"
    path.write_text(original)
    other = path.parent / "security.json"  # another hooks file in the folder
    other.write_text('{"version": 1, "hooks": {"preToolUse": []}}\n')

    out = json.loads(ok(gm("hooks", "install", "--agent", "copilot", "--json", cwd=repo)).stdout)
    data = out["data"]
    assert data["events"] == ["sessionStart", "postToolUse", "mcp", "instructions"]
    assert data["status"] == "installed" and data["changed"] is True
    assert data["path"].split(", ") == [str(path), str(repo / ".vscode" / "mcp.json"),
                                        str(repo / ".github" / "copilot-instructions.md")]
    merged = json.loads(path.read_text())
    assert list(merged) == ["version", "hooks", "disableAllHooks"]  # order kept
    assert merged["version"] == 1 and merged["disableAllHooks"] is False
    hooks = merged["hooks"]
    assert list(hooks) == ["sessionStart", "preToolUse", "postToolUse"]
    assert hooks["sessionStart"] == [*EXISTING["hooks"]["sessionStart"], OUR_SESSION_START]
    assert hooks["preToolUse"] == EXISTING["hooks"]["preToolUse"]
    assert hooks["postToolUse"] == [OUR_POST_TOOL]
    assert "git mem recall" in (repo / ".github" / "copilot-instructions.md").read_text()
    mcp = json.loads((repo / ".vscode" / "mcp.json").read_text())
    assert mcp["servers"]["git-mem"] == {"type": "stdio", "command": "git", "args": ["mem", "mcp"]}

    installed = path.read_text()
    again = ok(gm("hooks", "install", "--agent", "copilot", cwd=repo))
    assert again.stdout.startswith("already installed: ")
    assert path.read_text() == installed

    gone = json.loads(ok(gm("hooks", "uninstall", "--agent", "copilot", "--json",
                            cwd=repo)).stdout)["data"]
    assert gone["status"] == "removed"
    assert gone["events"] == ["sessionStart", "postToolUse", "mcp", "instructions"]
    assert path.read_text() == original  # byte for byte
    assert other.read_text() == '{"version": 1, "hooks": {"preToolUse": []}}\n'
    assert not (repo / ".vscode").exists() and not (repo / ".github" / "copilot-instructions.md").exists()
    twice = json.loads(ok(gm("hooks", "uninstall", "--agent", "copilot", "--json",
                             cwd=repo)).stdout)["data"]
    assert twice["status"] == "not installed" and twice["events"] == []
    assert path.read_text() == original


def test_copilot_install_creates_its_own_file_and_uninstall_removes_it(repo: Path) -> None:
    ok(gm("hooks", "install", "--agent", "copilot", cwd=repo))
    text = (repo / HOOKS).read_text()
    assert text.startswith('{\n  "version": 1,\n  "hooks": {\n')  # Copilot's format, version first
    assert json.loads(text) == {"version": 1, "hooks": {"sessionStart": [OUR_SESSION_START],
                                                        "postToolUse": [OUR_POST_TOOL]}}
    ok(gm("hooks", "uninstall", "--agent", "copilot", cwd=repo))
    assert not (repo / ".github" / "hooks").exists()
    assert git("status", "--porcelain", cwd=repo).stdout == ""  # nothing of ours left


@pytest.mark.parametrize("content", [
    '{"version": 2, "hooks": {}}',  # a format this writer does not know
    '{"version": 1, "hooks": {"sessionStart": {"type": "command"}}}',  # not a list
    '{"version": 1, "hooks": {',  # not JSON
])
def test_a_copilot_hooks_file_it_cannot_read_is_left_untouched(repo: Path, content: str) -> None:
    path = repo / HOOKS
    path.parent.mkdir(parents=True)
    path.write_text(content)
    for command in ("install", "uninstall"):
        proc = gm("hooks", command, "--agent", "copilot", cwd=repo)
        assert proc.returncode == 2 and "nothing was changed" in proc.stderr, proc.stderr
        assert path.read_text() == content
    assert not (repo / ".vscode").exists()  # refused before anything else was written


def test_a_copilot_hooks_file_linked_out_of_the_repository_is_refused(repo: Path,
                                                                      tmp_path: Path) -> None:
    outside = tmp_path / "home" / ".copilot" / "hooks"
    outside.mkdir(parents=True)
    theirs = outside / "git-mem.json"
    theirs.write_text('{"version": 1, "hooks": {}}\n')
    (repo / ".github").mkdir()
    (repo / ".github" / "hooks").symlink_to(outside)  # the whole folder leads out
    proc = gm("hooks", "install", "--agent", "copilot", cwd=repo)
    assert proc.returncode == 2 and "outside this repository" in proc.stderr
    # The file is no link; the folder on its way is (a review said "is a symlink" misled).
    assert "leads through a linked folder to" in proc.stderr, proc.stderr
    assert theirs.read_text() == '{"version": 1, "hooks": {}}\n'
    assert gm("hooks", "uninstall", "--agent", "copilot", cwd=repo).returncode == 2
    assert theirs.read_text() == '{"version": 1, "hooks": {}}\n'


def test_doctor_reports_copilot_hooks(repo: Path) -> None:
    (repo / ".github" / "hooks").mkdir(parents=True)

    def copilot() -> dict[str, object]:
        report = json.loads(ok(gm("doctor", "--json", cwd=repo)).stdout)["data"]
        return dict(next(a for a in report if a["agent"] == "copilot"))

    before = copilot()
    assert ".github/hooks/" in before["found"]  # type: ignore[operator]
    assert before["hooks"] == "not installed"
    assert "git mem hooks install --agent copilot" in before["todo"]  # type: ignore[operator]
    ok(gm("hooks", "install", "--agent", "copilot", cwd=repo))
    after = copilot()
    assert after["hooks"] == "installed" and after["mcp_project"] is True
    assert after["instructions"] == ".github/copilot-instructions.md" and after["todo"] == []
    data = json.loads((repo / HOOKS).read_text())
    del data["hooks"]["postToolUse"]
    (repo / HOOKS).write_text(json.dumps(data))
    assert copilot()["hooks"] == "partly installed (sessionStart)"
    assert "copilot: found" in ok(gm("doctor", cwd=repo)).stdout


def test_windsurf_keeps_mcp_and_its_rules_file_and_gets_no_hooks_file(repo: Path) -> None:
    home = Path(os.environ["HOME"])
    out = json.loads(ok(gm("hooks", "install", "--agent", "windsurf", "--json", cwd=repo)).stdout)
    assert out["data"]["events"] == ["mcp", "instructions"]
    assert not (repo / ".windsurf").exists()  # Cascade hooks cannot add context
    config = home / ".codeium" / "windsurf" / "mcp_config.json"
    assert json.loads(config.read_text())["mcpServers"]["git-mem"]["args"] == ["mem", "mcp"]
    assert "git mem recall" in (repo / ".windsurfrules").read_text()
    gone = json.loads(ok(gm("hooks", "uninstall", "--agent", "windsurf", "--json",
                            cwd=repo)).stdout)
    assert gone["data"]["events"] == ["mcp", "instructions"]
    assert not config.exists() and not (repo / ".windsurfrules").exists()


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


def test_a_copilot_install_that_fails_half_way_leaves_nothing_behind(repo: Path,
                                                                      tmp_path: Path) -> None:
    """Its MCP file is a symlink out of the repository: refused, and the hooks file
    written just before is taken back, as the error says ("nothing was changed")."""
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (repo / ".vscode").symlink_to(outside)
    out = gm("hooks", "install", "--agent", "copilot", cwd=repo)
    assert out.returncode == 2 and "nothing was changed" in out.stderr
    assert not (repo / HOOKS).exists() and not (repo / ".github" / "hooks").exists()
    assert list(outside.iterdir()) == []


def probed(clone: Path, seconds: float = 20.0) -> dict[str, object]:
    """The answer the background probe kept for origin (waited for)."""
    import time

    path = clone / ".git" / "mem" / "remote-probe.json"
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        try:
            entry = json.loads(path.read_text())["origin"]
        except (OSError, ValueError, KeyError):
            time.sleep(0.05)
            continue
        assert isinstance(entry, dict)
        return entry
    raise AssertionError(f"no probe answer in {path} after {seconds} s")


def _remote_that_hangs(team: dict[str, Path]) -> tuple[Path, Path, dict[str, str]]:
    """a's memory on the remote, which b reaches through a fake ssh that hangs until the
    gate file appears, then serves like sshd: (the gate, the file counting connections,
    the environment that uses it)."""
    a, b = team["a"], team["b"]
    ok(gm("add", "the build uses make", cwd=a))
    ok(gm("sync", cwd=a))
    gate, count = b.parent / "gate", b.parent / "ssh-runs"
    fake = b.parent / "slowssh"
    fake.write_text(f'#!/bin/sh\necho run >> "{count}"\n'
                    f'while [ ! -e "{gate}" ]; do sleep 0.05; done\n'
                    'for last; do :; done\nexec sh -c "$last"\n')
    fake.chmod(0o755)
    git("remote", "set-url", "origin", f"host:{b.parent / 'remote.git'}", cwd=b)
    # (simple: git runs no '-G' variant check through it, so one line is one connection)
    return gate, count, {"GIT_SSH_COMMAND": str(fake), "GIT_SSH_VARIANT": "simple"}


def test_session_start_never_waits_on_a_hanging_remote(team: dict[str, Path]) -> None:
    """The first session start of the day in a fresh clone waited up to 3 s (the probe's
    timeout) on 'git ls-remote' to a remote that hangs: now it answers at once, the
    probe runs in the background (one at a time), and the next session says the hint."""
    import time

    from gitmem.api.sharing import PROBE_TIMEOUT

    a, b = team["a"], team["b"]
    gate, count, env = _remote_that_hangs(team)

    def start(session: str) -> tuple[str, float]:
        payload = {"session_id": session, "cwd": str(b), "hook_event_name": "SessionStart",
                   "source": "startup"}
        began = time.monotonic()
        out = gm("hook", "session-start", cwd=b, input=json.dumps(payload), env=env)
        took = time.monotonic() - began
        assert out.returncode == 0 and out.stderr == "", out.stderr
        if not out.stdout:
            return "", took
        return str(json.loads(out.stdout)["hookSpecificOutput"]["additionalContext"]), took

    for session in ("s1", "s2"):  # the second finds the first's probe running
        said, took = start(session)
        assert said == "" and took < PROBE_TIMEOUT - 0.5, (said, took)
    gate.write_text("")
    entry = probed(b)
    assert entry["partitions"] == 1, entry
    assert count.read_text() == "run\n"  # one probe, never two at once
    said, took = start("s3")
    assert said == ("(git mem: 'origin' holds team memory (1 partition(s)) this clone has "
                    "not fetched: run 'git mem sync' once)")
    # The user's own read still asks in the foreground (the kept answer: no new probe).
    assert "holds team memory" in ok(gm("recall", "deploy", cwd=b, env=env)).stderr
    assert count.read_text() == "run\n"


def test_hooks_start_no_probe_where_the_probe_lock_cannot_be_taken(
        team: dict[str, Path]) -> None:
    """A folder at .git/mem/remote-probe.lock (or a read-only .git): the lock could not be
    opened and counted as free, so each session start began its own background probe, and
    each asked the remote (a review, rev38b: eight hooks at once, eight 'ls-remote'). A
    lock nobody can hold now means no background probe; the user's own read still asks."""
    import time

    a, b = team["a"], team["b"]
    gate, count, env = _remote_that_hangs(team)
    (b / ".git" / "mem" / "remote-probe.lock").mkdir(parents=True)
    try:
        for session in ("s1", "s2", "s3"):
            payload = {"session_id": session, "cwd": str(b), "hook_event_name": "SessionStart",
                       "source": "startup"}
            out = gm("hook", "session-start", cwd=b, input=json.dumps(payload), env=env)
            assert out.returncode == 0 and out.stderr == "", out.stderr
        time.sleep(3)  # time for a background probe to reach the remote, were one started
        assert not count.exists(), count.read_text()  # (before: one 'run' per hook)
    finally:
        gate.write_text("")
    assert "holds team memory" in ok(gm("recall", "deploy", cwd=b, env=env)).stderr
    assert count.read_text() == "run\n"


def test_session_start_in_a_fresh_clone_says_to_sync_once_a_session(
        team: dict[str, Path]) -> None:
    """A fresh clone of a repository whose remote holds memory: recall warned "'origin'
    holds team memory ... run 'git mem sync'", the session-start hook said nothing."""
    a, b = team["a"], team["b"]
    ok(gm("add", "the build uses make", cwd=a))
    ok(gm("sync", cwd=a))

    def start(session: str) -> str:
        payload = {"session_id": session, "cwd": str(b), "hook_event_name": "SessionStart",
                   "source": "startup"}
        out = gm("hook", "session-start", cwd=b, input=json.dumps(payload))
        assert out.returncode == 0 and out.stderr == "", out.stderr
        if not out.stdout:
            return ""
        return str(json.loads(out.stdout)["hookSpecificOutput"]["additionalContext"])

    # The first session start asks the remote in the background (a hook never waits
    # on the network) and says nothing yet; the next one says what it found.
    assert start("s0") == ""
    probed(b)
    said = start("s1")
    assert said == ("(git mem: 'origin' holds team memory (1 partition(s)) this clone has "
                    "not fetched: run 'git mem sync' once)")
    assert start("s1") == ""  # once a session
    assert "run 'git mem sync'" in start("s2")
    ok(gm("sync", cwd=b))
    after = start("s3")
    assert "the build uses make" in after and "git mem sync" not in after
    # A clone holding memory of its own is not told, nor probes the remote (a review:
    # its own partition pushed with plain git counted as "team memory").
    c = team["c"]
    ok(gm("add", "the linter is ruff", cwd=c))
    git("push", "-q", "origin", "refs/memory/*:refs/memory/*", cwd=c)
    payload = {"session_id": "c1", "cwd": str(c), "hook_event_name": "SessionStart",
               "source": "startup"}
    out = ok(gm("hook", "session-start", cwd=c, input=json.dumps(payload))).stdout
    assert "git mem sync" not in out, out


# -- a teammate's huge instructions file (issue 13, adv39 10) ---------------------------


def test_hooks_install_refuses_an_instructions_file_over_the_limit(team: dict[str, Path]) -> None:
    from gitmem.agents.settings import MAX_FILE_BYTES

    a, b = team["a"], team["b"]
    big = b / ".github" / "copilot-instructions.md"
    big.parent.mkdir()
    big.write_text("# Copilot\n" + "x" * MAX_FILE_BYTES + "\n")
    git("add", "-A", cwd=b)
    git("commit", "-q", "-m", "instructions", cwd=b)
    git("push", "-q", "origin", "HEAD:main", cwd=b)
    git("pull", "-q", "origin", "main", cwd=a)
    mine = a / ".github" / "copilot-instructions.md"
    before = mine.stat()
    got = gm("hooks", "install", "--agent", "copilot", cwd=a)
    assert got.returncode == 2, got.stderr
    assert got.stderr.count("\n") == 1 and got.stderr.startswith("error: ")
    assert "more than the 4 MiB git mem reads of an agent's file; nothing was changed" in got.stderr
    assert mine.stat().st_mtime_ns == before.st_mtime_ns and mine.stat().st_size == before.st_size
    assert "git mem" not in mine.read_text()[-2000:]


def test_doctor_reads_only_the_head_of_a_huge_instructions_file(repo: Path) -> None:
    import subprocess
    import sys

    from conftest import GIT_MEM

    path = repo / ".github" / "copilot-instructions.md"
    path.parent.mkdir()
    with open(path, "wb") as f:
        for _ in range(96):
            f.write(b"x" * (1 << 20))
    wrapper = ("import json, resource, subprocess, sys\n"
               "p = subprocess.run(sys.argv[1:], capture_output=True, text=True)\n"
               "print(json.dumps([resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024,"
               " p.returncode, p.stderr]))\n")
    out = subprocess.run([sys.executable, "-c", wrapper, GIT_MEM, "doctor"], cwd=repo,
                         capture_output=True, text=True, check=True, timeout=300)
    peak, code, stderr = json.loads(out.stdout)
    assert code in (0, 1), stderr
    assert peak < 90, peak  # MB: the 96 MB file is never read whole
