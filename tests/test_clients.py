"""Registering git mem's MCP server with each client, hooks for agents without any,
and `git mem doctor`: fixture configs in each client's documented format, through
the real command in fresh processes."""

from __future__ import annotations

import json
import os
import tomllib
from pathlib import Path

import pytest

from conftest import gm, ok

OURS_PLAIN = {"command": "git", "args": ["mem", "mcp"]}

# client -> (scope, file relative to the repo or HOME, an existing config in its format,
#            where the servers live, our entry)
CASES = {
    "claude-code": ("project", ".mcp.json",
                    {"mcpServers": {"github": {"command": "npx", "args": ["-y", "gh-mcp"]}}},
                    "mcpServers", OURS_PLAIN),
    "cursor": ("project", ".cursor/mcp.json",
               {"mcpServers": {"docs": {"url": "https://example.com/mcp"}}}, "mcpServers",
               OURS_PLAIN),
    "gemini-cli": ("project", ".gemini/settings.json",
                   {"theme": "GitHub", "mcpServers": {"x": {"command": "x"}}}, "mcpServers",
                   OURS_PLAIN),
    "windsurf": ("user", ".codeium/windsurf/mcp_config.json",
                 {"mcpServers": {"ollama": {"command": "py", "args": ["-m", "mcp_ollama"],
                                            "disabled": False, "env": {}}}}, "mcpServers",
                 OURS_PLAIN),
    "opencode": ("project", "opencode.json",
                 {"$schema": "https://opencode.ai/config.json", "model": "anthropic/claude",
                  "mcp": {"fs": {"type": "local", "command": ["npx", "fs-mcp"], "enabled": True}}},
                 "mcp", {"type": "local", "command": ["git", "mem", "mcp"], "enabled": True}),
    "copilot": ("project", ".vscode/mcp.json",
                {"inputs": [{"type": "promptString", "id": "key", "password": True}],
                 "servers": {"memory": {"command": "npx", "args": ["-y", "mem"]}}},
                "servers", {"type": "stdio", "command": "git", "args": ["mem", "mcp"]}),
}


def _where(repo: Path, home: Path, scope: str, rel: str) -> Path:
    return (repo if scope == "project" else home) / rel


@pytest.mark.parametrize("client", sorted(CASES))
def test_install_keeps_other_entries_is_idempotent_and_uninstall_is_exact(
        client: str, repo: Path, hermetic: Path) -> None:
    scope, rel, existing, key, ours = CASES[client]
    path = _where(repo, hermetic, scope, rel)
    path.parent.mkdir(parents=True, exist_ok=True)
    original = json.dumps(existing, indent=2) + "\n"
    path.write_text(original)
    out = json.loads(ok(gm("mcp", "install", "--client", client, "--scope", scope, "--json",
                           cwd=repo)).stdout)["data"]
    assert out["status"] == "installed" and out["path"] == str(path)
    data = json.loads(path.read_text())
    assert data[key]["git-mem"] == ours
    for name, value in existing[key].items():
        assert data[key][name] == value  # the others, as they were
    assert {k: v for k, v in data.items() if k != key} == {
        k: v for k, v in existing.items() if k != key}
    installed = path.read_text()
    again = ok(gm("mcp", "install", "--client", client, "--scope", scope, cwd=repo))
    assert again.stdout.startswith("already installed") and path.read_text() == installed
    ok(gm("mcp", "uninstall", "--client", client, "--scope", scope, cwd=repo))
    assert json.loads(path.read_text()) == existing
    gone = json.loads(ok(gm("mcp", "uninstall", "--client", client, "--scope", scope, "--json",
                            cwd=repo)).stdout)["data"]
    assert gone["status"] == "not installed"


def test_codex_toml_keeps_comments_and_tables_and_uninstall_restores_it(
        repo: Path, hermetic: Path) -> None:
    path = hermetic / ".codex" / "config.toml"
    path.parent.mkdir()
    original = ('model = "gpt-5-codex"  # the default\n\n[mcp_servers.docs]\ncommand = "npx"\n'
                'args = ["-y", "docs-mcp"]\n\n[mcp_servers.docs.env]\nTOKEN_FILE = "~/.t"\n\n'
                '[profiles.fast]\nmodel = "o4-mini"\n')
    path.write_text(original)
    ok(gm("mcp", "install", "--client", "codex", "--scope", "user", cwd=repo))
    parsed = tomllib.loads(path.read_text())
    assert parsed["mcp_servers"]["git-mem"] == {"command": "git", "args": ["mem", "mcp"]}
    assert parsed["mcp_servers"]["docs"]["env"] == {"TOKEN_FILE": "~/.t"}
    assert path.read_text().startswith(original)  # appended, nothing rewritten
    assert ok(gm("mcp", "install", "--client", "codex", "--scope", "user",
                 cwd=repo)).stdout.startswith("already installed")
    ok(gm("mcp", "uninstall", "--client", "codex", "--scope", "user", cwd=repo))
    assert path.read_text() == original
    # Project scope, from nothing: the file is created, and removed again.
    ok(gm("mcp", "install", "--client", "codex", cwd=repo))
    assert tomllib.loads((repo / ".codex" / "config.toml").read_text())["mcp_servers"]
    ok(gm("mcp", "uninstall", "--client", "codex", cwd=repo))
    assert not (repo / ".codex").exists()


@pytest.mark.parametrize(("client", "rel", "content"), [
    ("cursor", ".cursor/mcp.json", '{"mcpServers": {'),
    ("opencode", "opencode.json", '{"mcp": {"a": 1}, // a comment\n}'),
    ("codex", ".codex/config.toml", "[mcp_servers\ncommand = 1\n"),
])
def test_a_config_that_does_not_parse_is_left_untouched(repo: Path, client: str, rel: str,
                                                        content: str) -> None:
    path = repo / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(content)
    proc = gm("mcp", "install", "--client", client, cwd=repo)
    assert proc.returncode == 2 and "nothing was changed" in proc.stderr
    assert path.read_text() == content


def test_scopes_a_client_does_not_have_say_what_to_do(repo: Path) -> None:
    proc = gm("mcp", "install", "--client", "claude-code", "--scope", "user", cwd=repo)
    assert proc.returncode == 2 and "claude mcp add -s user" in proc.stderr
    proc = gm("mcp", "install", "--client", "windsurf", cwd=repo)
    assert proc.returncode == 2 and "--scope user" in proc.stderr


@pytest.mark.parametrize(("agent", "mcp_file", "instructions"), [
    ("cursor", ".cursor/mcp.json", "AGENTS.md"),
    ("opencode", "opencode.json", "AGENTS.md"),
])  # copilot: its hooks file as well (test_hooks_more.py)
def test_an_agent_without_hooks_gets_its_mcp_entry_and_instruction_block(
        repo: Path, agent: str, mcp_file: str, instructions: str) -> None:
    mine = "# Team notes\n\n- Deploys go out on Tuesdays.\n"
    (repo / instructions).parent.mkdir(parents=True, exist_ok=True)
    (repo / instructions).write_text(mine)
    out = json.loads(ok(gm("hooks", "install", "--agent", agent, "--json", cwd=repo)).stdout)
    assert out["data"]["events"] == ["mcp", "instructions"]
    assert (repo / mcp_file).exists()
    text = (repo / instructions).read_text()
    assert text.startswith(mine) and "git mem recall" in text
    again = json.loads(ok(gm("hooks", "install", "--agent", agent, "--json", cwd=repo)).stdout)
    assert again["data"]["status"] == "already installed"
    assert (repo / instructions).read_text() == text
    # Bootstrap proposes the team's line, not our block.
    proposed = json.loads(ok(gm("bootstrap", "--json", cwd=repo)).stdout)["data"]["items"]
    assert [p["text"] for p in proposed] == ["Team notes: Deploys go out on Tuesdays."]
    gone = json.loads(ok(gm("hooks", "uninstall", "--agent", agent, "--json", cwd=repo)).stdout)
    assert gone["data"]["events"] == ["mcp", "instructions"]
    assert (repo / instructions).read_text() == mine
    assert not (repo / mcp_file).exists()


def test_doctor_reports_what_is_wired_per_agent_found(repo: Path) -> None:
    (repo / ".cursor").mkdir()
    (repo / "AGENTS.md").write_text("Use `git mem recall` before you start.\n")
    report = json.loads(ok(gm("doctor", "--json", cwd=repo)).stdout)["data"]
    cursor = next(a for a in report if a["agent"] == "cursor")
    assert cursor["found"] == [".cursor/"] and cursor["hooks"] == "no hooks"
    assert cursor["mcp_project"] is False and cursor["instructions"] == "AGENTS.md"
    assert cursor["todo"] == ["git mem mcp install --client cursor --scope project"]
    assert not any(a["agent"] == "windsurf" for a in report)  # not here
    ok(gm("mcp", "install", "--client", "cursor", cwd=repo))
    ok(gm("hooks", "install", cwd=repo))
    report = json.loads(ok(gm("doctor", "--all", "--json", cwd=repo)).stdout)["data"]
    by = {a["agent"]: a for a in report}
    assert by["cursor"]["mcp_project"] is True and by["cursor"]["todo"] == []
    assert by["claude-code"]["hooks"] == "installed"
    assert by["gemini-cli"]["hooks"] == "not installed"
    assert len(by) == 7
    human = ok(gm("doctor", cwd=repo)).stdout
    assert "cursor: found (.cursor/)" in human


def test_codex_hooks_install_in_its_hooks_file_and_answer_its_payloads(repo: Path) -> None:
    path = repo / ".codex" / "hooks.json"
    path.parent.mkdir()
    mine = {"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "./notify.sh",
                                           "timeout": 5}]}]}}
    path.write_text(json.dumps(mine))
    out = json.loads(ok(gm("hooks", "install", "--agent", "codex", "--json", cwd=repo)).stdout)
    assert out["data"]["events"] == ["SessionStart", "UserPromptSubmit", "Stop", "PreCompact",
                                     "SessionEnd"]
    data = json.loads(path.read_text())
    assert data["hooks"]["Stop"][0] == mine["hooks"]["Stop"][0]  # theirs first, kept
    assert data["hooks"]["Stop"][1]["hooks"][0]["command"] == \
        "git mem hook session-end --agent codex"
    assert data["hooks"]["SessionEnd"][0]["hooks"][0]["timeout"] == 3  # Codex's cap
    assert data["hooks"]["SessionStart"][0]["matcher"] == "startup|clear"
    ok(gm("add", "deploys go out on Tuesdays", cwd=repo))
    # A Codex UserPromptSubmit payload (its hooks reference: session_id, transcript_path,
    # cwd, hook_event_name, model, turn_id, prompt).
    payload = {"session_id": "019a-codex", "transcript_path": None, "cwd": str(repo),
               "hook_event_name": "UserPromptSubmit", "model": "gpt-5-codex",
               "turn_id": "t1", "prompt": "when do deploys go out?"}
    answer = json.loads(ok(gm("hook", "user-prompt", cwd=repo,
                              input=json.dumps(payload))).stdout)
    # Codex's output schema allows exactly these two keys.
    assert set(answer["hookSpecificOutput"]) == {"hookEventName", "additionalContext"}
    assert answer["hookSpecificOutput"]["hookEventName"] == "UserPromptSubmit"
    assert "Tuesdays" in answer["hookSpecificOutput"]["additionalContext"]
    ok(gm("hooks", "uninstall", "--agent", "codex", cwd=repo))
    assert json.loads(path.read_text()) == mine


def test_claude_is_taken_for_claude_code(repo: Path) -> None:
    """'--agent claude' (what the program is called) was refused: only claude-code worked."""
    out = json.loads(ok(gm("hooks", "install", "--agent", "claude", "--json", cwd=repo)).stdout)
    assert out["data"]["agent"] == "claude-code" and out["data"]["changed"]
    assert "SessionStart" in json.loads((repo / ".claude" / "settings.json").read_text())["hooks"]
    gone = json.loads(ok(gm("hooks", "uninstall", "--agent", "claude", "--json", cwd=repo)).stdout)
    assert gone["data"]["agent"] == "claude-code" and gone["data"]["changed"]
    assert not (repo / ".claude" / "settings.json").exists()
    ok(gm("mcp", "install", "--client", "claude", cwd=repo))
    assert "git-mem" in json.loads((repo / ".mcp.json").read_text())["mcpServers"]
    ok(gm("mcp", "uninstall", "--client", "claude", cwd=repo))
    assert not (repo / ".mcp.json").exists()
    bad = gm("hooks", "install", "--agent", "clau", cwd=repo)
    assert bad.returncode == 2 and "'clau' is not one of 'claude-code'" in bad.stderr


def test_doctor_tells_an_exported_block_from_usage_instructions(repo: Path) -> None:
    """An `export --into AGENTS.md` block (team facts; it names `git mem recall`) counted as
    the agent's instructions, and doctor stopped suggesting agents-md."""
    (repo / ".codex").mkdir()
    ok(gm("add", "run the tests with make spec", "--kind", "procedure", cwd=repo))
    ok(gm("export", "--into", "AGENTS.md", cwd=repo))
    assert "git mem" in (repo / "AGENTS.md").read_text()
    report = json.loads(ok(gm("doctor", "--json", cwd=repo)).stdout)["data"]
    codex = next(a for a in report if a["agent"] == "codex")
    assert codex["instructions"] is None and "git mem agents-md >> AGENTS.md" in codex["todo"]
    with (repo / "AGENTS.md").open("a") as f:
        f.write(ok(gm("agents-md", cwd=repo)).stdout)
    report = json.loads(ok(gm("doctor", "--json", cwd=repo)).stdout)["data"]
    codex = next(a for a in report if a["agent"] == "codex")
    assert codex["instructions"] == "AGENTS.md" and not any("agents-md" in t for t in codex["todo"])


def test_doctor_outside_a_repository_reports_the_user_scope(tmp_path: Path) -> None:
    """doctor outside a repository exited 3, though the user-scope MCP entries and the
    programs on PATH are there to report."""
    outside = tmp_path / "nowhere"
    outside.mkdir()
    home = Path(os.environ["HOME"])
    report = json.loads(ok(gm("doctor", "--all", "--json", cwd=outside)).stdout)["data"]
    cursor = next(a for a in report if a["agent"] == "cursor")
    assert cursor["mcp_user"] is False and cursor["mcp_project"] is None
    assert cursor["todo"] == ["git mem mcp install --client cursor --scope user"]
    (home / ".cursor").mkdir(exist_ok=True)
    (home / ".cursor" / "mcp.json").write_text(
        '{"mcpServers": {"git-mem": {"command": "git", "args": ["mem", "mcp"]}}}')
    report = json.loads(ok(gm("doctor", "--all", "--json", cwd=outside)).stdout)["data"]
    cursor = next(a for a in report if a["agent"] == "cursor")
    assert cursor["mcp_user"] is True and cursor["todo"] == []
    human = ok(gm("doctor", "--all", cwd=outside)).stdout
    assert human.startswith("not in a git repository") and "cursor: not found here" in human


def test_an_instructions_file_that_is_not_utf8_is_a_one_line_error(repo: Path) -> None:
    # (A review, rev38b: a Latin-1 AGENTS.md made `hooks install --agent cursor` fail
    # with an internal UnicodeDecodeError.)
    latin = "# Équipe\n\n- Déploiement le mardi.\n".encode("latin-1")
    (repo / "AGENTS.md").write_bytes(latin)
    proc = gm("hooks", "install", "--agent", "cursor", cwd=repo)
    assert proc.returncode == 2 and "internal error" not in proc.stderr, proc.stderr
    assert "cannot read" in proc.stderr and "UTF-8" in proc.stderr
    assert (repo / "AGENTS.md").read_bytes() == latin
