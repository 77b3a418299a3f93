"""Memory that grows by itself: session capture into an inbox, session working memory,
links, skills and trust. Real repositories, a real bare remote, real hook processes
and Claude Code and Codex CLI transcripts written in their documented formats
(fixtures/transcripts/README.md)."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import pytest

from conftest import git, gm, init_repo, ok

FIXTURE = Path(__file__).parent.parent / "fixtures" / "transcripts" / "claude-code.jsonl"
SESSION = "5d3c2a4e-7b1f-4c1e-9d6a-2f8e0b9c1a7d"
CODEX_FIXTURE = FIXTURE.with_name("codex.jsonl")
CODEX_SESSION = "019aa3f1-5c2e-7d40-9b8e-3e1f2a6c4d5b"
# What the built-in rules make of either fixture (the same session, told by two agents).
EXPECTED = sorted([
    "Run the tests with `make spec` before you commit.",
    "To run the tests: `make spec`",
    "Use the fake clock in spec/support/clock.rb and never sleep in specs.",
    "The staging database is read-only on Fridays.",
    "Work here keeps coming back to src/auth/session.py.",
])


def _code(repo: Path) -> None:
    (repo / "src" / "auth").mkdir(parents=True)
    (repo / "src" / "auth" / "session.py").write_text("def login(user):\n    return user\n")
    (repo / "spec" / "support").mkdir(parents=True)
    (repo / "spec" / "support" / "clock.rb").write_text("class FakeClock; end\n")
    git("add", "-A", cwd=repo)
    git("commit", "-q", "-m", "code", cwd=repo)


def _transcript(repo: Path, tmp: Path, fixture: Path = FIXTURE, name: str = SESSION) -> Path:
    path = tmp / f"{name}.jsonl"
    path.write_text(fixture.read_text().replace("{ROOT}", str(repo)))
    return path


def _data(proc: object) -> object:
    return json.loads(ok(proc).stdout)["data"]  # type: ignore[arg-type]


def _inbox(repo: Path) -> list[dict]:
    return list(_data(gm("inbox", "--json", cwd=repo)))  # type: ignore[arg-type]


def _by_text(items: list[dict], words: str) -> dict:
    found = [p for p in items if words in p["text"]]
    assert len(found) == 1, [p["text"] for p in items]
    return found[0]


@pytest.fixture
def code_repo(tmp_path: Path) -> Path:
    repo = init_repo(tmp_path / "code")
    _code(repo)
    return repo


# -- capture: the session-end hook, the inbox, a teammate ------------------------------


def test_session_end_hook_fills_the_inbox_and_an_accepted_memory_reaches_a_teammate(
        team: dict[str, Path], tmp_path: Path) -> None:
    a, b = team["a"], team["b"]
    _code(a)
    transcript = _transcript(a, tmp_path)
    payload = {"session_id": SESSION, "transcript_path": str(transcript), "cwd": str(a),
               "permission_mode": "default", "hook_event_name": "SessionEnd", "reason": "exit"}
    start = time.monotonic()
    proc = gm("hook", "session-end", cwd=a, input=json.dumps(payload))
    assert proc.returncode == 0 and proc.stdout == "" and proc.stderr == "", proc.stderr
    assert time.monotonic() - start < 10  # it handed off; capture runs in the background
    items: list[dict] = []
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and len(items) < 5:
        time.sleep(0.3)
        items = _inbox(a)
    texts = sorted(p["text"] for p in items)
    assert texts == EXPECTED
    staging = _by_text(items, "staging database")
    assert staging["action"] == "add" and staging["reason"] == "explicit request"
    assert staging["session"] == SESSION and staging["agent"] == "claude-code"
    assert staging["evidence"][0]["line"] == 15
    hot = _by_text(items, "keeps coming back")
    assert hot["paths"] == ["src/auth/session.py"]
    # The secret the person typed never reached the inbox, the log or the capture log.
    mem = a / ".git" / "mem"
    for f in mem.rglob("*"):
        if f.is_file() and f.suffix in (".json", ".log", ""):
            assert b"ghp_R7pK" not in f.read_bytes(), f
    # The capture writes its log line after the inbox: wait for it too (reading it as
    # soon as the fifth item appeared failed now and then under load).
    log = mem / "capture.log"
    while time.monotonic() < deadline and "refused=" not in (
            log.read_text() if log.exists() else ""):
        time.sleep(0.3)
    assert "refused=1" in log.read_text()
    assert git("for-each-ref", "refs/memory", cwd=a).stdout == ""  # nothing auto-shared

    accepted = _data(gm("accept", staging["id"][:8], "--json", cwd=a))
    correction = _by_text(items, "fake clock")
    ok(gm("reject", correction["id"][:8], cwd=a))
    assert len(_inbox(a)) == 3
    ok(gm("sync", cwd=a))
    ok(gm("sync", cwd=b))
    hits = _data(gm("recall", "staging database fridays", "--json", cwd=b))["hits"]  # type: ignore[index]
    assert hits[0]["id"] == accepted["memory"]  # type: ignore[index]
    assert hits[0]["source"] == "capture:builtin:claude-code"

    # The next run of the same session proposes neither the accepted nor the rejected one.
    again = _data(gm("capture", "--transcript", str(transcript), "--session", SESSION,
                     "--json", cwd=a))
    assert again["proposed"] == [] and again["known"] == 5  # type: ignore[index]
    assert {p["id"] for p in _inbox(a)} == {p["id"] for p in items} - {staging["id"],
                                                                       correction["id"]}


def test_the_builtin_rules_read_requests_corrections_commands_and_files(code_repo: Path,
                                                                          tmp_path: Path) -> None:
    from gitmem.capture import rules, transcript

    events = transcript.read(_transcript(code_repo, tmp_path))
    said = [e.text for e in events if e.kind == "said"]
    assert not any("<command-name>" in t or "<system-reminder>" in t for t in said)
    assert not any("sidechain" in t for t in said)
    commands = [(e.text, e.ok) for e in events if e.kind == "command"]
    assert commands == [("make spec", False), ("make spec", True), ("make spec", True)]
    found = {c.text: c for c in rules.extract(events)}
    assert found["To run the tests: `make spec`"].kind == "procedure"
    assert found["To run the tests: `make spec`"].reason == "command succeeded 2 of 3 times"
    assert found["Run the tests with `make spec` before you commit."].kind == "procedure"
    assert found["Use the fake clock in spec/support/clock.rb and never sleep in specs."].reason \
        == "correction"
    assert not any("ask me" in t for t in found)  # a question is not a request


def test_a_codex_rollout_is_read_by_its_content_not_its_name(code_repo: Path,
                                                               tmp_path: Path) -> None:
    from gitmem.capture import rules, transcript

    # Named like nothing in particular: the envelope's types tell the format.
    events = transcript.read(_transcript(code_repo, tmp_path, CODEX_FIXTURE, "notes"))
    said = [e.text for e in events if e.kind == "said"]
    assert said == [  # once each (the event_msg mirror is not read), nothing Codex injected
        "The login spec is flaky on CI. From now on, run the tests with `make spec` before "
        "you commit.",
        "no, use the fake clock in spec/support/clock.rb and never sleep in specs",
        "Good. Please also remember that the staging database is read-only on Fridays.",
        "remember that the deploy token is ghp_R7pK2mQ9xV4sL8nB3wE6tY1uI5oP0aZcDfGh for now",
        "Why does the logout spec exist at all? Always remember to ask me?",
    ]
    assert [e.text for e in events if e.kind == "reply"][-1] == \
        "Done: the spec passes and the clock is faked."
    commands = [(e.text, e.ok) for e in events if e.kind == "command"]
    assert commands == [("sed -n '1,80p' src/auth/session.py", True), ("make spec", False),
                        ("make spec", True), ("make spec", True),
                        ("nl -ba src/auth/session.py", True)]
    session_py = str(code_repo / "src" / "auth" / "session.py")
    assert [(e.text, e.action) for e in events if e.kind == "file"] == [
        (session_py, "read"), (session_py, "edit"), (session_py, "edit"), (session_py, "read")]
    found = {c.text: c for c in rules.extract(events)}
    assert found["To run the tests: `make spec`"].reason == "command succeeded 2 of 3 times"
    assert found["Use the fake clock in spec/support/clock.rb and never sleep in specs."].reason \
        == "correction"
    assert found["The staging database is read-only on Fridays."].evidence[0][0] == 29
    assert found[f"Work here keeps coming back to {session_py}."].reason == \
        "read or changed in 4 turns"
    assert not any("tests first" in t or "ask me" in t for t in found)  # AGENTS.md; a question


def test_codex_shell_outcomes_in_each_output_shape_codex_has_written(tmp_path: Path) -> None:
    from gitmem.capture import transcript

    def item(payload: dict) -> str:
        return json.dumps({"timestamp": "2026-11-20T10:00:00.000Z", "type": "response_item",
                           "payload": payload})

    def call(cid: str, name: str, args: dict) -> str:
        return item({"type": "function_call", "name": name, "arguments": json.dumps(args),
                     "call_id": cid})

    def out(cid: str, output: object) -> str:
        return item({"type": "function_call_output", "call_id": cid, "output": output})

    lines = [
        json.dumps({"timestamp": "t", "type": "session_meta", "payload": {"id": "s",
                                                                          "cwd": "/w"}}),
        # shell: an argv, structured JSON output
        call("c1", "shell", {"command": ["bash", "-lc", "pytest -q"], "workdir": "/w"}),
        out("c1", json.dumps({"output": "1 failed", "metadata": {"exit_code": 1,
                                                                 "duration_seconds": 1.5}})),
        # shell_command: a string, freeform output
        call("c2", "shell_command", {"command": "pytest -q"}),
        out("c2", "Exit code: 0\nWall time: 1.5 seconds\nOutput:\n3 passed"),
        # exec_command (unified exec) still running: no outcome yet
        call("c3", "exec_command", {"cmd": "npm run dev"}),
        out("c3", "Chunk ID: a1\nWall time: 10.0 seconds\nProcess running with session ID 7\n"
                  "Output:\nready"),
        # the terminal's own record wins over the text when the rollout kept it
        call("c4", "exec_command", {"cmd": "make lint"}),
        json.dumps({"timestamp": "t", "type": "event_msg", "payload": {
            "type": "exec_command_end", "call_id": "c4", "exit_code": 2}}),
        out("c4", "Output:\nsomething that says Exit code: 0 later on"),
        # local_shell_call, and an apply_patch sent through the shell
        item({"type": "local_shell_call", "call_id": "c5", "status": "completed",
              "action": {"type": "exec", "command": ["cargo", "test"]}}),
        out("c5", {"content": "ok", "success": True}),
        call("c6", "shell", {"command": ["apply_patch", "*** Begin Patch\n*** Add File: "
                                                        "docs/new.md\n+hi\n*** End Patch"]}),
        # a call whose output never came (the session ended)
        call("c7", "shell", {"command": ["bash", "-lc", "make build"]}),
    ]
    path = tmp_path / "rollout.jsonl"
    path.write_text("\n".join(lines) + "\n")
    events = transcript.read(path)
    assert [(e.text, e.ok) for e in events if e.kind == "command"] == [
        ("pytest -q", False), ("pytest -q", True), ("npm run dev", None), ("make lint", False),
        ("cargo test", True), ("make build", None)]
    assert [(e.text, e.action) for e in events if e.kind == "file"] == [
        ("/w/docs/new.md", "write")]
    # Older rollouts wrote the items bare, after a session line without a type.
    bare = tmp_path / "old.jsonl"
    bare.write_text("\n".join([
        json.dumps({"id": "s", "timestamp": "2025-05-01T10:00:00Z", "instructions": None}),
        json.dumps({"type": "message", "role": "user",
                    "content": [{"type": "input_text", "text": "never push to main"}]}),
        json.dumps({"type": "function_call", "name": "shell", "call_id": "c1",
                    "arguments": json.dumps({"command": ["make", "check"]})}),
        json.dumps({"type": "function_call_output", "call_id": "c1",
                    "output": json.dumps({"output": "", "metadata": {"exit_code": 0}})}),
    ]) + "\n")
    events = transcript.read(bare)
    assert [(e.kind, e.text, e.ok) for e in events] == [
        ("said", "never push to main", None), ("command", "make check", True)]


def test_codex_hooks_hand_its_rollout_to_capture_and_its_session_end_drops_working_memory(
        code_repo: Path, tmp_path: Path) -> None:
    ok(gm("hooks", "install", "--agent", "codex", cwd=code_repo))
    hooks = json.loads((code_repo / ".codex" / "hooks.json").read_text())["hooks"]
    ours = {event: groups[0]["hooks"][0] for event, groups in hooks.items()}
    command = ours["Stop"]["command"]
    assert command == ours["PreCompact"]["command"] == ours["SessionEnd"]["command"]
    sessions = tmp_path / "codex-home" / "sessions" / "2026" / "11" / "20"
    sessions.mkdir(parents=True)
    rollout = _transcript(code_repo, sessions, CODEX_FIXTURE,
                          f"rollout-2026-11-20T10-00-00-{CODEX_SESSION}")
    ok(gm("add", "check the logout spec next", "--ephemeral", "--session", CODEX_SESSION,
          cwd=code_repo))
    log = code_repo / ".git" / "mem" / "capture.log"

    def hook(payload: dict, runs: int) -> None:
        # The installed command, run as Codex runs it: its payload on stdin.
        proc = gm(*command.split()[2:], cwd=code_repo, input=json.dumps(payload))
        assert proc.returncode == 0 and proc.stdout == "" and proc.stderr == "", proc.stderr
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and (
                not log.exists() or log.read_text().count("session=") < runs):
            time.sleep(0.3)
        assert log.read_text().count("session=") == runs

    # Codex's Stop input (codex-rs/hooks/schema/generated/stop.command.input.schema.json).
    common = {"session_id": CODEX_SESSION, "transcript_path": str(rollout),
              "cwd": str(code_repo), "model": "gpt-5.1-codex", "permission_mode": "default"}
    hook({**common, "hook_event_name": "Stop", "turn_id": "turn-5", "stop_hook_active": False,
          "last_assistant_message": "Done: the spec passes and the clock is faked."}, 1)
    items = _inbox(code_repo)
    assert sorted(p["text"] for p in items) == EXPECTED
    staging = _by_text(items, "staging database")
    assert staging["agent"] == "codex" and staging["session"] == CODEX_SESSION
    assert staging["evidence"][0]["line"] == 29
    assert "refused=1" in log.read_text()  # the deploy token
    # A turn ended, not the session: its working memory stays ...
    assert len(list(_data(gm("session", "show", "--session", CODEX_SESSION, "--json",
                             cwd=code_repo)))) == 1  # type: ignore[arg-type]
    # ... until Codex's SessionEnd (cwd, session_id, transcript_path, model, permission_mode).
    hook({**common, "hook_event_name": "SessionEnd"}, 2)
    assert _data(gm("session", "show", "--session", CODEX_SESSION, "--json",
                    cwd=code_repo)) == []
    assert len(_inbox(code_repo)) == 5  # nothing proposed twice
    ok(gm("accept", staging["id"][:8], cwd=code_repo))
    hits = _data(gm("recall", "staging database fridays", "--json", cwd=code_repo))["hits"]  # type: ignore[index]
    assert hits[0]["source"] == "capture:builtin:codex"


def test_a_model_extractor_command_proposes_through_the_same_gate(code_repo: Path,
                                                                    tmp_path: Path) -> None:
    script = tmp_path / "extract.py"
    script.write_text(
        "import sys, json\n"
        "text = sys.stdin.read()\n"
        "assert 'JSON lines only' in text and 'RAN: make spec' in text\n"
        "print('Sure! Here are the memories:')\n"
        "print(json.dumps({'text': 'Specs need the FakeClock helper', 'kind': 'fact',\n"
        "                  'tags': ['testing'], 'evidence': 'use the fake clock'}))\n"
        "print(json.dumps({'text': 'the admin password is hunter2hunter2'}))\n"
        "print('{not json')\n")
    git("config", "gitmem.extractor", f"{sys.executable} {script}", cwd=code_repo)
    report = _data(gm("capture", "--transcript", str(_transcript(code_repo, tmp_path)),
                      "--session", "m1", "--json", cwd=code_repo))
    model = [p for p in report["proposed"] if p["extractor"] == "model"]  # type: ignore[index]
    assert [(p["text"], p["kind"], p["tags"]) for p in model] == [
        ("Specs need the FakeClock helper", "fact", ["testing"])]
    assert report["refused"] == 2  # type: ignore[index]  # the token line and the password
    # A failing extractor costs only its own proposals.
    git("config", "gitmem.extractor", f"{sys.executable} -c 'import sys; sys.exit(3)'",
        cwd=code_repo)
    report = _data(gm("capture", "--transcript", str(_transcript(code_repo, tmp_path)),
                      "--session", "m2", "--json", cwd=code_repo))
    assert report["errors"] == ["extractor exited 3: "]  # type: ignore[index]
    assert report["known"] >= 5  # type: ignore[index]  # the rules still ran


def test_a_near_duplicate_of_a_memory_is_proposed_as_a_confirmation(code_repo: Path,
                                                                      tmp_path: Path) -> None:
    mid = _data(gm("add", "The staging database is read-only on Fridays", "--json",
                   cwd=code_repo))["id"]  # type: ignore[index]
    ok(gm("capture", "--transcript", str(_transcript(code_repo, tmp_path)), "--session", "d1",
          cwd=code_repo))
    proposal = _by_text(_inbox(code_repo), "staging database")
    assert proposal["action"] == "confirm" and proposal["target"] == mid
    done = _data(gm("accept", proposal["id"], "--json", cwd=code_repo))
    assert done["memory"] == mid  # type: ignore[index]
    shown = _data(gm("show", mid, "--json", cwd=code_repo))
    assert [o["type"] for o in shown["ops"]] == ["add", "confirm"]  # type: ignore[index]


def test_a_solo_user_can_auto_accept_into_the_personal_pool_only(code_repo: Path,
                                                                   tmp_path: Path) -> None:
    git("config", "gitmem.captureAccept", "personal", cwd=code_repo)
    report = _data(gm("capture", "--transcript", str(_transcript(code_repo, tmp_path)),
                      "--session", "p1", "--agent", "claude-code", "--json", cwd=code_repo))
    assert len(report["accepted"]) == 5  # type: ignore[index]
    assert git("for-each-ref", "refs/memory", cwd=code_repo).stdout == ""  # the team's log: none
    hits = _data(gm("recall", "staging database", "--personal", "--json", cwd=code_repo))
    assert hits["hits"][0]["by"] == "agent:claude-code"  # type: ignore[index]


# -- session working memory ---------------------------------------------------------------


def test_session_working_memory_is_isolated_read_first_local_and_dropped(code_repo: Path) -> None:
    ok(gm("add", "the upload test is flaky on CI", cwd=code_repo))
    noted = _data(gm("add", "skip the upload test while auth is being fixed", "--ephemeral",
                     "--session", "s1", "--json", cwd=code_repo))
    ok(gm("add", "upload limit is 10 MB in this branch", "--ephemeral", "--keep", cwd=code_repo,
          env={"GITMEM_SESSION": "s1"}))
    assert git("for-each-ref", "refs/memory", cwd=code_repo).stdout.count("\n") == 1  # durable only

    def hits(*extra: str, env: dict[str, str] | None = None) -> list[dict]:
        return list(_data(gm("recall", "upload test", "--json", *extra, cwd=code_repo,
                             env=env))["hits"])  # type: ignore[index]

    first = hits("--session", "s1")
    assert first[0]["id"] == noted["id"] and first[0]["pool"] == "session"  # type: ignore[index]
    assert first[-1]["pool"] == "project"
    assert all(h["pool"] == "project" for h in hits("--session", "s2"))  # another session
    assert all(h["pool"] == "project" for h in hits())
    assert hits(env={"GITMEM_SESSION": "s1"})[0]["pool"] == "session"
    # Secrets are refused here too.
    proc = gm("add", "token ghp_R7pK2mQ9xV4sL8nB3wE6tY1uI5oP0aZcDfGh", "--ephemeral",
              "--session", "s1", cwd=code_repo)
    assert proc.returncode != 0 and "secret" in proc.stderr
    # The kept note is proposed at capture; the session's end drops the rest.
    report = _data(gm("capture", "--session", "s1", "--event", "SessionEnd", "--json",
                      cwd=code_repo))
    assert [p["text"] for p in report["proposed"]] == ["upload limit is 10 MB in this branch"]  # type: ignore[index]
    assert report["dropped_session"] is True  # type: ignore[index]
    assert _data(gm("session", "show", "--session", "s1", "--json", cwd=code_repo)) == []
    assert all(h["pool"] == "project" for h in hits("--session", "s1"))


def test_ephemeral_needs_a_session(code_repo: Path) -> None:
    proc = gm("add", "scratch", "--ephemeral", cwd=code_repo)
    assert proc.returncode == 2 and "GITMEM_SESSION" in proc.stderr


# -- links --------------------------------------------------------------------------------


def test_links_replicate_walk_two_hops_inform_recall_and_can_be_invalidated(
        team: dict[str, Path]) -> None:
    a, b = team["a"], team["b"]
    first = _data(gm("link", "ada@example.com", "works_on", "billing", "--json", cwd=a))
    second = _data(gm("link", "billing", "depends_on", "ledger", "--json", cwd=a))
    ok(gm("add", "the ledger service is written in Rust", cwd=a))
    ok(gm("sync", cwd=a))
    ok(gm("sync", cwd=b))
    walked = _data(gm("related", "ada@example.com", "--json", cwd=b))
    assert walked["node"] == "person:ada@example.com"  # type: ignore[index]
    assert [(e["src"], e["predicate"], e["dst"], e["hops"]) for e in walked["edges"]] == [  # type: ignore[index]
        ("person:ada@example.com", "works_on", "component:billing", 1),
        ("component:billing", "depends_on", "component:ledger", 2)]
    one_hop = _data(gm("related", "ada@example.com", "--depth", "1", "--json", cwd=b))
    assert len(one_hop["edges"]) == 1  # type: ignore[index]
    # Recall: the two-hop link comes through the graph, not through the words.
    ids = [h["id"] for h in _data(gm("recall", "ada", "--json", cwd=b))["hits"]]  # type: ignore[index]
    lexical = [h["id"] for h in _data(gm("recall", "ada", "--mode", "lexical", "--json",
                                         cwd=b))["hits"]]  # type: ignore[index]
    assert second["id"] in ids and second["id"] not in lexical  # type: ignore[index]
    assert first["id"] in lexical  # type: ignore[index]
    # Invalidated on one clone, gone from the walk on the other after sync.
    ok(gm("invalidate", first["id"], cwd=b))  # type: ignore[index]
    ok(gm("sync", cwd=b))
    ok(gm("sync", cwd=a))
    assert _data(gm("related", "ada@example.com", "--json", cwd=a))["edges"] == []  # type: ignore[index]


def test_a_link_refuses_an_unknown_predicate_and_resolves_memories(code_repo: Path) -> None:
    proc = gm("link", "a", "likes", "b", cwd=code_repo)
    assert proc.returncode == 2 and "works_on" in proc.stderr
    mid = _data(gm("add", "we chose PostgreSQL over MySQL", "--json", cwd=code_repo))["id"]  # type: ignore[index]
    made = _data(gm("link", "ada@example.com", "decided", mid[:10], "--json", cwd=code_repo))
    shown = _data(gm("show", made["id"], "--json", cwd=code_repo))["memory"]  # type: ignore[index]
    assert shown["link"] == {"src": "person:ada@example.com", "predicate": "decided",
                             "dst": f"memory:{mid}"}
    assert shown["kind"] == "edge"
    rel = _data(gm("related", mid, "--json", cwd=code_repo))
    assert [m["id"] for m in rel["memories"]] == [mid]  # type: ignore[index]
    path = _data(gm("link", "billing", "part_of", "src/auth", "--json", cwd=code_repo))
    assert _data(gm("show", path["id"], "--json", cwd=code_repo))["memory"]["link"]["dst"] == \
        "path:src/auth"  # type: ignore[index]


# -- skills -------------------------------------------------------------------------------


def test_a_procedure_that_keeps_working_graduates_to_a_skill_only_with_write(
        code_repo: Path) -> None:
    mid = _data(gm("add", "Release: run `make dist`, then `twine upload dist/*`.", "--kind",
                   "procedure", "--json", cwd=code_repo))["id"]  # type: ignore[index]
    for _ in range(2):
        ok(gm("confirm", mid, "--worked", cwd=code_repo))
    assert _data(gm("skills", "--json", cwd=code_repo)) == []  # below the threshold
    ok(gm("confirm", mid, "--failed", cwd=code_repo))
    ok(gm("confirm", mid, "--worked", cwd=code_repo))
    assert _data(gm("skills", "--json", cwd=code_repo)) == []  # 3 of 4: fails too often
    for _ in range(2):
        ok(gm("confirm", mid, "--worked", cwd=code_repo))
    proposed = list(_data(gm("skills", "--json", cwd=code_repo)))  # type: ignore[arg-type]
    assert [(s["action"], s["path"], s["worked"], s["failed"]) for s in proposed] == [
        ("graduate", ".claude/skills/release-make-dist-then-twine/SKILL.md", 5, 1)]
    diff = proposed[0]["diff"]
    assert diff.startswith("--- /dev/null\n+++ b/.claude/skills/release-make-dist-then-twine/")
    assert "+name: release-make-dist-then-twine\n" in diff and "+description: " in diff
    skill = code_repo / ".claude" / "skills" / "release-make-dist-then-twine" / "SKILL.md"
    assert not skill.exists()  # never written without --write
    written = list(_data(gm("skills", "--write", "--json", cwd=code_repo)))  # type: ignore[arg-type]
    assert written[0]["written"] is True and skill.read_text().startswith("---\nname: ")
    ref = written[0]["reference"]
    assert _data(gm("show", mid, "--json", cwd=code_repo))["memory"]["status"] == "superseded"  # type: ignore[index]
    ref_mem = _data(gm("show", ref, "--json", cwd=code_repo))["memory"]  # type: ignore[index]
    assert "skill" in ref_mem["tags"] and "twine upload" not in ref_mem["text"]
    assert _data(gm("skills", "--json", cwd=code_repo)) == []  # graduated: nothing to propose
    for _ in range(3):
        ok(gm("confirm", ref, "--failed", cwd=code_repo))
    retire = list(_data(gm("skills", "--json", cwd=code_repo)))  # type: ignore[arg-type]
    assert [(s["action"], s["memory"]) for s in retire] == [("retire", ref)]
    assert skill.exists()  # proposed for retirement, never deleted


def test_outcomes_are_for_procedures(code_repo: Path) -> None:
    mid = _data(gm("add", "the API is versioned", "--json", cwd=code_repo))["id"]  # type: ignore[index]
    proc = gm("confirm", mid, "--worked", cwd=code_repo)
    assert proc.returncode == 2 and "procedures" in proc.stderr


# -- trust ---------------------------------------------------------------------------------


def test_agent_memories_rank_below_until_a_person_or_second_author_confirms(
        team: dict[str, Path]) -> None:
    a, b = team["a"], team["b"]
    agent = _data(gm("add", "deploys go out from the release branch", "--json", cwd=a,
                     env={"CLAUDECODE": "1"}))["id"]  # type: ignore[index]
    person = _data(gm("add", "deploys go out on the release train", "--json", cwd=a))["id"]  # type: ignore[index]
    assert _data(gm("show", agent, "--json", cwd=a))["memory"]["by"] == "agent:claude-code"  # type: ignore[index]

    def order(clone: Path) -> list[str]:
        hits = _data(gm("recall", "deploys release", "--explain", "--json", cwd=clone))["hits"]  # type: ignore[index]
        return [h["id"] for h in hits]

    ranked = order(a)
    assert ranked.index(person) < ranked.index(agent)
    explained = {h["id"]: h["explain"]["factors"] for h in _data(gm(
        "recall", "deploys release", "--explain", "--json", cwd=a))["hits"]}  # type: ignore[index]
    assert explained[agent]["trust"] == 0.9 and "trust" not in explained[person]
    # The agent confirming its own memory vouches for nothing; a second author does.
    ok(gm("confirm", agent, "--by", "agent:claude-code", cwd=a))
    assert "trust" in {h["id"]: h["explain"]["factors"] for h in _data(gm(
        "recall", "deploys release", "--explain", "--json", cwd=a))["hits"]}[agent]  # type: ignore[index]
    ok(gm("sync", cwd=a))
    ok(gm("sync", cwd=b))
    ok(gm("confirm", agent, cwd=b))
    factors = {h["id"]: h["explain"]["factors"] for h in _data(gm(
        "recall", "deploys release", "--explain", "--json", cwd=b))["hits"]}  # type: ignore[index]
    assert "trust" not in factors[agent]


def test_a_clones_first_session_brain_dump_is_trusted_like_an_agent(code_repo: Path) -> None:
    dump = [_data(gm("add", f"fact number {n} about the build cache", "--session", "first",
                     "--json", cwd=code_repo))["id"] for n in range(10)]  # type: ignore[index]
    later = _data(gm("add", "the build cache lives in .cache/build", "--session", "second",
                     "--json", cwd=code_repo))["id"]  # type: ignore[index]
    factors = {h["id"]: h["explain"]["factors"] for h in _data(gm(
        "recall", "build cache", "-k", "20", "--explain", "--json", cwd=code_repo))["hits"]}  # type: ignore[index]
    assert all(factors[d].get("trust") == 0.9 for d in dump if d in factors)
    assert "trust" not in factors[later]


def test_by_is_checked(code_repo: Path) -> None:
    proc = gm("add", "x y z", "--by", "robot", cwd=code_repo)
    assert proc.returncode == 2 and "agent:NAME" in proc.stderr


def test_the_prompt_hook_reads_the_sessions_working_memory_first(code_repo: Path) -> None:
    ok(gm("add", "the upload service retries three times", cwd=code_repo))
    ok(gm("add", "upload retries are off while the auth fix lands", "--ephemeral", "--session",
          SESSION, cwd=code_repo))
    payload = {"session_id": SESSION, "transcript_path": "/dev/null", "cwd": str(code_repo),
               "hook_event_name": "UserPromptSubmit", "prompt": "why do upload retries fail?"}
    out = ok(gm("hook", "user-prompt", cwd=code_repo, input=json.dumps(payload))).stdout
    context = json.loads(out)["hookSpecificOutput"]["additionalContext"]
    mine = context.index("[session]")
    assert "auth fix lands" in context[mine:context.index("\n", mine)]
    assert mine < context.index("retries three times")
    other = ok(gm("hook", "user-prompt", cwd=code_repo,
                  input=json.dumps(dict(payload, session_id="another")))).stdout
    assert "auth fix lands" not in other


def test_accept_edit_stores_the_edited_text(code_repo: Path, tmp_path: Path) -> None:
    ok(gm("capture", "--transcript", str(_transcript(code_repo, tmp_path)), "--session", "e1",
          cwd=code_repo))
    proposal = _by_text(_inbox(code_repo), "staging database")
    editor = tmp_path / "editor.py"
    editor.write_text("import sys, pathlib\np = pathlib.Path(sys.argv[1])\n"
                      "p.write_text(p.read_text().replace('Fridays', 'Fridays after 14:00'))\n")
    done = _data(gm("accept", proposal["id"][:6], "--edit", "--json", cwd=code_repo,
                    env={"EDITOR": f"{sys.executable} {editor}"}))
    shown = _data(gm("show", done["memory"], "--json", cwd=code_repo))["memory"]  # type: ignore[index]
    assert shown["text"] == "The staging database is read-only on Fridays after 14:00."
    proc = gm("accept", proposal["id"][:6], cwd=code_repo)  # decided: gone from the inbox
    assert proc.returncode == 5 and "git mem inbox" in proc.stderr


def test_related_says_when_a_walk_stopped_at_its_edge_limit(repo: Path) -> None:
    """A hub with more links than a walk returns: the answer says it is cut, so the
    panel's graph does not claim that its list holds every link."""
    from gitmem import api
    from gitmem.projection import MAX_EDGES

    with api.Store(repo) as store:
        for i in range(MAX_EDGES + 1):
            store.link("component:hub", "depends_on", f"component:part-{i}")
        assert store.related("component:hub").truncated
        assert len(store.related("component:hub").edges) == MAX_EDGES
        store.link("component:small", "depends_on", "component:other")
        assert not store.related("component:small").truncated
    shown = _data(gm("related", "component:hub", "--json", cwd=repo))
    assert shown["truncated"] is True  # type: ignore[index]


def test_a_transcript_that_is_no_regular_file_reads_as_empty(tmp_path: Path) -> None:
    """The hook's transcript_path comes from the agent: a FIFO blocked the capture in
    open() for good, and /dev/zero (size 0) was read whole (14 GB in 45 s)."""
    import threading

    from gitmem.capture import transcript

    fifo = tmp_path / "transcript.fifo"
    os.mkfifo(fifo)
    link = tmp_path / "transcript.jsonl"
    link.symlink_to("/dev/zero")
    got: dict[str, object] = {}

    def run() -> None:
        got["fifo"] = transcript.read(fifo)
        got["zero"] = transcript.read("/dev/zero")
        got["link"] = transcript.read(link)
        got["dir"] = transcript.read(tmp_path)

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(20)
    assert not worker.is_alive(), "a transcript read blocked"
    assert got == {"fifo": [], "zero": [], "link": [], "dir": []}


def test_two_procedure_keys_that_differ_in_punctuation_get_a_skill_each(code_repo: Path) -> None:
    """adv35's review: 'deploy_prod' and 'deploy.prod' both became .claude/skills/deploy-prod,
    and --write made the second overwrite the first one's SKILL.md."""
    ids = []
    for key, text in (("deploy_prod", "Deploy prod: run `make release` then `argo sync prod`."),
                      ("deploy.prod", "Deploy prod from a laptop: `bin/ship prod --confirm`.")):
        ids.append(_data(gm("add", text, "--kind", "procedure", "--key", key, "--json",
                            cwd=code_repo))["id"])  # type: ignore[index]
    for mid in ids:
        for _ in range(3):
            ok(gm("confirm", mid, "--worked", cwd=code_repo))
    written = list(_data(gm("skills", "--write", "--json", cwd=code_repo)))  # type: ignore[arg-type]
    paths = sorted(s["path"] for s in written if s["action"] == "graduate")
    assert len(paths) == 2 and len(set(paths)) == 2, paths
    texts = sorted((code_repo / p).read_text() for p in paths)
    assert "make release" in texts[0] + texts[1] and "bin/ship prod" in texts[0] + texts[1]
    assert not ("make release" in texts[0] and "bin/ship" in texts[0])


def test_a_skill_folder_is_never_given_to_a_second_procedure(code_repo: Path) -> None:
    """A review of the first fix: a folder written in an earlier run (its procedure since
    superseded by the skill's reference) was given to a later key of the same name, and
    a hashed name a teammate chose as a key was overwritten."""
    import hashlib

    def graduate(key: str, text: str) -> None:
        mid = _data(gm("add", text, "--kind", "procedure", "--key", key, "--json",
                       cwd=code_repo))["id"]  # type: ignore[index]
        for _ in range(3):
            ok(gm("confirm", mid, "--worked", cwd=code_repo))

    graduate("deploy_prod", "Deploy prod: run `make release` then `argo sync prod`.")
    ok(gm("skills", "--write", cwd=code_repo))
    first = code_repo / ".claude" / "skills" / "deploy-prod" / "SKILL.md"
    assert "make release" in first.read_text()
    graduate("deploy.prod", "Deploy prod from a laptop: `bin/ship prod --confirm`.")
    twin = "deploy-prod-" + hashlib.sha256(b"deploy.prod").hexdigest()[:6]
    graduate(twin, "Roll back: `bin/ship rollback`.")
    ok(gm("skills", "--write", cwd=code_repo))
    assert "make release" in first.read_text()  # not overwritten by the later key
    bodies = [p.read_text() for p in (code_repo / ".claude" / "skills").rglob("SKILL.md")]
    assert sum("bin/ship prod" in b for b in bodies) == 1
    assert sum("bin/ship rollback" in b for b in bodies) == 1
    assert len(bodies) == 3


def test_a_hand_written_skill_is_never_overwritten(code_repo: Path) -> None:
    """A review of ca3b980: a SKILL.md with no mark of ours counted as free, and
    --write replaced the person's own text with the procedure's."""
    own = code_repo / ".claude" / "skills" / "deploy" / "SKILL.md"
    own.parent.mkdir(parents=True)
    own.write_text("---\nname: deploy\ndescription: \"our own\"\n---\nDo the careful thing.\n")
    mid = _data(gm("add", "Deploy: run `make deploy` then check the dashboard.", "--kind",
                   "procedure", "--key", "deploy", "--json", cwd=code_repo))["id"]  # type: ignore[index]
    for _ in range(3):
        ok(gm("confirm", mid, "--worked", cwd=code_repo))
    written = list(_data(gm("skills", "--write", "--json", cwd=code_repo)))  # type: ignore[arg-type]
    assert own.read_text().endswith("Do the careful thing.\n")
    paths = [s["path"] for s in written if s["action"] == "graduate"]
    assert len(paths) == 1 and paths[0].startswith(".claude/skills/deploy-"), paths
    assert "make deploy" in (code_repo / paths[0]).read_text()


def test_a_procedures_next_version_takes_its_skill_folder_over(code_repo: Path) -> None:
    """A review of ca3b980: the next value of a keyed procedure is the same procedure; it
    got a second folder beside the stale skill (agents saw two deploy skills), and the
    old reference kept counting for a file that holds another text."""
    def graduate(text: str) -> None:
        mid = _data(gm("add", text, "--kind", "procedure", "--key", "deploy", "--json",
                       cwd=code_repo))["id"]  # type: ignore[index]
        for _ in range(3):
            ok(gm("confirm", mid, "--worked", cwd=code_repo))

    graduate("Deploy: run `make deploy` then check the dashboard.")
    ok(gm("skills", "--write", cwd=code_repo))
    graduate("Deploy: run `bin/ship` then check the dashboard and the error budget.")
    written = list(_data(gm("skills", "--write", "--json", cwd=code_repo)))  # type: ignore[arg-type]
    assert [s["path"] for s in written if s["action"] == "graduate"] == [
        ".claude/skills/deploy/SKILL.md"]
    assert sorted(p.name for p in (code_repo / ".claude" / "skills").iterdir()) == ["deploy"]
    assert "bin/ship" in (code_repo / ".claude" / "skills" / "deploy" / "SKILL.md").read_text()
    refs = _data(gm("recall", "Skill deploy holds this procedure", "--json", "-k", "20",
                    cwd=code_repo))["hits"]  # type: ignore[index]
    assert sum(h["text"].startswith("Skill deploy ") for h in refs) == 1, refs


def test_an_agents_memory_that_both_channels_rank_first_is_not_sunk_by_trust(
        code_repo: Path) -> None:
    """A new user's trial: an agent saved a memory and asked for it with k=2; first in both
    channels, the trust factor (0.8) put it below two memories ranked 2nd and 3rd that
    scored 0.01. Trust settles near ties; it no longer overturns that."""
    for text, kind in (("run the test suite with make test; it uses pytest under python3", "procedure"),
                       ("the server reads the port from the CALC_PORT environment variable", "note"),
                       ("lint with make lint (ruff)", "procedure")):
        ok(gm("add", text, "--kind", kind, cwd=code_repo))
    mid = _data(gm("add", "integration tests need CALC_PORT set to a free port", "--kind",
                   "procedure", "--by", "agent:claude-code", "--json", cwd=code_repo))["id"]  # type: ignore[index]
    hits = _data(gm("recall", "integration tests port", "-k", "2", "--json", cwd=code_repo))["hits"]  # type: ignore[index]
    assert hits[0]["id"] == mid, hits


def test_a_takeover_retires_only_its_predecessors_reference_and_keeps_a_persons_edits(
        code_repo: Path) -> None:
    """A review of the takeover: every reference of the folder's name was superseded (a
    different procedure's too, once its folder was free again), and a person's edit of a
    marked SKILL.md was overwritten by the next version."""
    def graduate(key: str, text: str) -> str:
        mid = _data(gm("add", text, "--kind", "procedure", "--key", key, "--json",
                       cwd=code_repo))["id"]  # type: ignore[index]
        for _ in range(3):
            ok(gm("confirm", mid, "--worked", cwd=code_repo))
        return str(mid)

    def references() -> list[tuple[str, str]]:
        hits = _data(gm("recall", "Skill holds this procedure now", "--all", "--min-score", "0",
                        "-k", "20", "--json", cwd=code_repo))["hits"]  # type: ignore[index]
        return sorted((h["text"].split()[1], h["status"]) for h in hits
                      if h["text"].startswith("Skill "))

    graduate("deploy_prod", "Deploy prod: run `make deploy` then check the dashboard.")
    ok(gm("skills", "--write", cwd=code_repo))
    skills = code_repo / ".claude" / "skills"
    (skills / "deploy-prod" / "SKILL.md").unlink()
    (skills / "deploy-prod").rmdir()
    graduate("deploy.prod", "Rotate the prod TLS certificate with certbot renew.")
    ok(gm("skills", "--write", cwd=code_repo))
    assert references() == [("deploy-prod", "active")] * 2, references()

    graduate("release", "Release: tag the commit, then run `make publish`.")
    ok(gm("skills", "--write", cwd=code_repo))
    mine = skills / "release" / "SKILL.md"
    with mine.open("a") as f:
        f.write("PERSON: never release on Fridays.\n")
    graduate("release", "Release: tag the commit, run `make publish`, then announce it.")
    written = list(_data(gm("skills", "--write", "--json", cwd=code_repo)))  # type: ignore[arg-type]
    assert "PERSON: never release on Fridays." in mine.read_text()
    paths = [s["path"] for s in written if s["action"] == "graduate"]
    assert len(paths) == 1 and paths[0].startswith(".claude/skills/release-"), paths
