"""``git mem mcp`` answers every line a client sends, refuses arguments a tool does
not take, and asks for roots only when the client offers them: raw JSON-RPC
lines to the real server in a subprocess, as a hostile or careless client sends
them. Each failed before: no answer at all (the client waited forever), a
silently ignored argument, a roots/list request to a client without roots
(5 s lost on the first call) and an MCPDeprecationWarning on stderr."""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from conftest import GIT_MEM, gm

from gitmem.agents.mcp import tools, wire


class Raw:
    """A JSON-RPC client over the server's stdin and stdout, one line each way."""

    def __init__(self, cwd: Path, errlog: Path, capabilities: dict[str, Any] | None = None,
                 ) -> None:
        self.err = errlog.open("wb")
        self.p = subprocess.Popen([GIT_MEM, "mcp"], cwd=cwd, stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, stderr=self.err, env=dict(os.environ))
        self.asked: list[dict[str, Any]] = []  # requests from the server (roots/list)
        first = self.request(1, "initialize", {
            "protocolVersion": "2025-06-18", "capabilities": capabilities or {},
            "clientInfo": {"name": "raw", "version": "0"}})
        assert "result" in first, first
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def send(self, message: dict[str, Any] | None = None, raw: bytes | None = None) -> None:
        assert self.p.stdin is not None
        self.p.stdin.write(raw if raw is not None else json.dumps(message).encode() + b"\n")
        self.p.stdin.flush()

    def answer(self, rid: object, timeout: float = 30) -> dict[str, Any]:
        """The server's answer to ``rid`` (roots/list requests answered with none)."""
        assert self.p.stdout is not None
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            ready, _, _ = select.select([self.p.stdout], [], [], 0.2)
            if not ready:
                continue
            line = self.p.stdout.readline()
            assert line, "the server closed stdout"
            msg = json.loads(line)
            if "method" in msg and "id" in msg:
                self.asked.append(msg)
                self.send({"jsonrpc": "2.0", "id": msg["id"], "result": {"roots": []}})
                continue
            if msg.get("id") == rid:
                return msg  # type: ignore[no-any-return]
        raise AssertionError(f"no answer to id {rid!r} in {timeout} s")

    def request(self, rid: int, method: str, params: dict[str, Any]) -> dict[str, Any]:
        self.send({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
        return self.answer(rid)

    def call(self, rid: int, tool: str, **arguments: Any) -> dict[str, Any]:
        res = self.request(rid, "tools/call", {"name": tool, "arguments": arguments})["result"]
        return res["structuredContent"]  # type: ignore[no-any-return]

    def close(self) -> str:
        assert self.p.stdin is not None
        self.p.stdin.close()
        self.p.wait(30)
        self.err.close()
        return Path(self.err.name).read_text()


@pytest.fixture
def raw(repo: Path, tmp_path: Path) -> Any:
    client = Raw(repo, tmp_path / "server.err")
    yield client
    if client.p.poll() is None:
        client.p.kill()
        client.p.wait()


def test_a_lone_surrogate_gets_an_answer_with_its_id(raw: Raw) -> None:
    raw.send(raw=b'{"jsonrpc":"2.0","id":77,"method":"tools/call","params":{"name":"add",'
                 b'"arguments":{"text":"lone \\ud800 surrogate note"}}}\n')
    got = raw.answer(77)
    assert got["error"]["code"] == -32700 and "surrogate" in got["error"]["message"]
    assert raw.call(78, "recall", query="surrogate")["ok"] is True  # still serving


def test_garbage_and_batches_get_json_rpc_errors(raw: Raw) -> None:
    raw.send(raw=b"this is not json\n")
    assert raw.answer(None)["error"]["code"] == -32700
    raw.send(raw=b'[{"jsonrpc":"2.0","id":5,"method":"ping"}]\n')
    got = raw.answer(None)
    assert got["error"]["code"] == -32600 and "batch" in got["error"]["message"]
    raw.send(raw=b'{"id":6,"method":"ping"}\n')  # JSON, but no "jsonrpc": its id is known
    assert raw.answer(6)["error"]["code"] == -32600
    raw.send(raw=b"\n")  # a blank line asks nothing: the next answer is the ping's
    assert raw.request(7, "ping", {}) == {"jsonrpc": "2.0", "id": 7, "result": {}}


@pytest.mark.parametrize("line", [
    b'{"jsonrpc":"2.0","id":3,"method":"tools/call","params":' + b"[" * 1000 + b"]" * 1000 + b"}",
    b'{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"recall","arguments":{"query":'
    + b'{"a":' * 20000 + b"1" + b"}" * 20000 + b"}}}",
], ids=["params 1000 deep", "an argument 20000 deep"])
def test_a_line_nested_too_deep_is_answered_and_the_session_goes_on(raw: Raw, line: bytes) -> None:
    # An adversarial run: 2 KB of "[" ended the server ("internal error: ExceptionGroup",
    # a RecursionError in Python's json while answering), the request never answered.
    raw.send(raw=line + b"\n")
    got = raw.answer(json.loads(line[line.index(b'"id":') + 5:line.index(b',"method"')]))
    assert got["error"]["code"] == -32700 and "nested too deep" in got["error"]["message"]
    assert raw.request(9, "ping", {}) == {"jsonrpc": "2.0", "id": 9, "result": {}}


def test_a_request_whose_id_is_no_string_or_integer_is_answered(raw: Raw) -> None:
    # The SDK read them as notifications: no answer, and the client waited forever.
    for rid in (b"1.5", b"true", b'{"a":1}', b"[1]", b"null"):
        raw.send(raw=b'{"jsonrpc":"2.0","id":' + rid + b',"method":"ping"}\n')
        got = raw.answer(None)
        assert got["error"]["code"] == -32600 and "string or an integer" in got["error"]["message"]
    assert raw.request(9, "ping", {}) == {"jsonrpc": "2.0", "id": 9, "result": {}}
    raw.send({"jsonrpc": "2.0", "method": "notifications/cancelled",  # a notification: none
              "params": {"requestId": 9}})
    assert raw.request(10, "ping", {}) == {"jsonrpc": "2.0", "id": 10, "result": {}}


def test_a_notification_with_a_null_id_is_delivered_not_answered(raw: Raw) -> None:
    # Some clients send one (a nil id serialised); answering it would answer a notification.
    raw.send(raw=b'{"jsonrpc":"2.0","method":"notifications/initialized","id":null}\n')
    raw.send({"jsonrpc": "2.0", "id": 12, "method": "ping"})
    assert raw.p.stdout is not None
    first = json.loads(raw.p.stdout.readline())
    assert first == {"jsonrpc": "2.0", "id": 12, "result": {}}, first


def test_a_request_nested_too_deep_is_answered_with_its_leading_id(raw: Raw) -> None:
    raw.send(raw=b'{"jsonrpc":"2.0","id":31,"method":"tools/call","params":'
                 + b"[" * 1000 + b"]" * 1000 + b"}\n")
    got = raw.answer(31)
    assert got["error"]["code"] == -32700


def test_an_unknown_argument_is_named_with_the_accepted_ones(raw: Raw, repo: Path) -> None:
    for n in range(12):
        assert gm("add", f"deploy note number {n} about the release train",
                  cwd=repo).returncode == 0
    got = raw.call(10, "recall", query="deploy note", limit=50)
    assert got["ok"] is False and got["error"]["code"] == "invalid_input"
    assert got["error"]["message"] == "unknown argument 'limit'"
    assert got["error"]["hint"].startswith("recall takes: query, k, ")
    assert len(raw.call(11, "recall", query="deploy note", k=12)["data"]["hits"]) == 12


def test_no_roots_request_to_a_client_without_roots_and_no_warning(repo: Path,
                                                                    tmp_path: Path) -> None:
    home = tmp_path / "elsewhere"  # outside any repository: the roots would be asked
    home.mkdir()
    client = Raw(home, tmp_path / "server.err")
    started = time.monotonic()
    got = client.call(2, "recall", query="x")
    assert got["error"]["code"] == "not_a_repository"
    assert time.monotonic() - started < 4  # it used to wait 5 s for an answer
    assert client.asked == []
    err = client.close()
    assert "Deprecat" not in err and "Traceback" not in err, err
    # A client that offers roots is asked (once), with no warning either.
    client = Raw(home, tmp_path / "server2.err", capabilities={"roots": {}})
    client.call(2, "recall", query="x")
    client.call(3, "recall", query="x")
    assert [m["method"] for m in client.asked] == ["roots/list"]
    err = client.close()
    assert "Deprecat" not in err, err


def test_every_tool_lists_the_arguments_its_schema_has(repo: Path, tmp_path: Path) -> None:
    client = Raw(repo, tmp_path / "server.err")
    listed = client.request(2, "tools/list", {})["result"]["tools"]
    client.close()
    assert {t["name"]: sorted(t["inputSchema"]["properties"]) for t in listed} == {
        name: sorted(args) for name, args in tools.accepted().items()}


def test_rejection_answers_requests_only() -> None:
    from pydantic import ValidationError
    from mcp import types

    def why(line: str) -> Any:
        try:
            types.jsonrpc_message_adapter.validate_json(line, by_name=False)
        except ValidationError as exc:
            return wire.rejection(exc)
        raise AssertionError("valid")

    assert why('{"jsonrpc":"2.0","method":"notifications/x","params":3}') is None
    assert why('{"jsonrpc":"2.0","id":3,"result":5,"error":{}}') is None  # a response
    assert why('{"id":true,"method":"ping"}').id is None  # no jsonrpc; true is no id
    assert why("   ") is None


def _peak_rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    raise AssertionError("no VmHWM")


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads /proc")
def test_an_endless_line_is_dropped_in_bounded_memory_and_answered(raw: Raw) -> None:
    # 200 MiB with no newline for a long while: the SDK's transport read a line whole
    # (then parsed it), so a careless or hostile client grew the server without bound.
    before = _peak_rss_kib(raw.p.pid)
    head = (b'{"jsonrpc":"2.0","id":91,"method":"tools/call","params":{"name":"add",'
            b'"arguments":{"text":"')
    raw.send(raw=head)
    chunk = b"a" * (1 << 20)
    for _ in range(200):
        raw.send(raw=chunk)
    raw.send(raw=b'"}}}\n')
    got = raw.answer(91, timeout=60)
    assert got["error"]["code"] == -32700 and "MiB" in got["error"]["message"], got
    grew = _peak_rss_kib(raw.p.pid) - before
    assert grew < 64 << 10, f"the server grew by {grew >> 10} MiB for one line"
    # One with no request id is answered without one; the server keeps serving.
    raw.send(raw=b"[" + b"1," * (10 << 20) + b"1]\n")
    assert raw.answer(None, timeout=60)["error"]["code"] == -32700
    assert raw.call(92, "recall", query="anything")["ok"] is True


def test_stdin_is_the_wires_alone_while_serving() -> None:
    # A handler or a child process that reads fd 0 must read nothing, not the
    # client's next message; fd 0 is the pipe again afterwards.
    script = (
        "import os, subprocess, sys\n"
        "from gitmem.agents.mcp import wire\n"
        "pipe = os.fstat(0).st_ino\n"
        "with wire.claimed_stdin() as s:\n"
        "    child = subprocess.run([sys.executable, '-c',"
        " 'import sys; print(len(sys.stdin.read()))'],"
        " capture_output=True, text=True).stdout.strip()\n"
        "    mine = os.read(0, 100)\n"
        "    first = wire.Lines(s).readline()\n"
        "print(child, len(mine), repr(first), os.fstat(0).st_ino == pipe)\n")
    out = subprocess.run([sys.executable, "-c", script], input=b"one\ntwo\n",
                         capture_output=True, check=True).stdout.decode()
    assert out.strip() == "0 0 'one\\n' True", out


def test_a_line_at_the_limit_is_kept_and_one_over_is_dropped() -> None:
    import io

    exact = b"x" * (wire.MAX_LINE_BYTES - 1) + b"\n"
    over = (b'{"jsonrpc":"2.0","id":"r-1","method":"ping","x":"' + b"y" * wire.MAX_LINE_BYTES
            + b'"}\n')
    lines = wire.Lines(io.BufferedReader(io.BytesIO(exact + over + b"after\n")))
    assert len(lines.readline()) == wire.MAX_LINE_BYTES
    assert lines.readline() == wire._DROPPED + '"r-1"\n'
    assert lines.readline() == "after\n"
    assert lines.readline() == ""


@pytest.mark.parametrize("start", [b'{"id":01,"x":"', b'{"id":"a\x01b","x":"', b'{"id":1e5,"x":"'])
def test_a_dropped_line_whose_start_names_no_valid_id_is_answered_without_one(start: bytes) -> None:
    # "id":01 and a raw control character in a string id matched the id pattern but are
    # not JSON: the answer raised, which would have ended the session.
    import io

    from pydantic import ValidationError
    from mcp import types

    line = wire.Lines(io.BufferedReader(io.BytesIO(start + b"y" * wire.MAX_LINE_BYTES + b'"}\n')))
    read = line.readline()
    try:
        types.jsonrpc_message_adapter.validate_json(read, by_name=False)
    except ValidationError as exc:
        got = wire.rejection(exc)
    else:
        raise AssertionError("valid")
    assert got is not None and got.id is None and got.error.code == -32700


def test_a_nul_or_an_overlong_path_is_invalid_input_not_an_internal_error(raw: Raw) -> None:
    # An adversarial run (adv35): each was "internal error: ValueError: embedded null
    # byte" (or OSError: File name too long), with "this is a bug" as its hint.
    for rid, tool, args, code in (
            (21, "recall", {"query": "x", "path": ["a\x00b"]}, "invalid_input"),
            (22, "about", {"path": "a\x00b"}, "invalid_input"),
            (23, "add", {"text": "the nightly job runs at two", "paths": ["\x00"]},
             "invalid_input"),
            (24, "recall", {"query": "x", "repo": "/tmp\x00"}, "not_a_repository"),
            (25, "recall", {"query": "x", "repo": "/" + "a" * 5000}, "not_a_repository")):
        got = raw.call(rid, tool, **args)
        assert got["ok"] is False and got["error"]["code"] == code, (tool, got)
    assert raw.call(26, "recall", query="nightly")["ok"] is True


def test_a_prompt_it_cannot_serve_is_invalid_params_without_a_traceback(
        repo: Path, tmp_path: Path) -> None:
    # An adversarial run (adv35): an unknown prompt, or an argument the briefing does
    # not take, printed a traceback on the server's stderr (the client's log) and was
    # answered with code 0.
    client = Raw(repo, tmp_path / "server.err")
    try:
        got = client.request(31, "prompts/get", {"name": "nope"})
        assert got["error"] == {"code": -32602, "message": "Unknown prompt: nope"}
        got = client.request(32, "prompts/get", {"name": "briefing", "arguments": {"x": "y"}})
        assert got["error"]["code"] == -32602
        assert "x: Unexpected keyword argument" in got["error"]["message"], got
        assert "memory" in client.request(33, "prompts/get", {"name": "briefing"})["result"][
            "messages"][0]["content"]["text"]
    finally:
        err = client.close()
    assert "Traceback" not in err, err


def test_the_context_budget_the_schema_allows_is_one_the_tool_takes(raw: Raw) -> None:
    # adv35: the schema said at least 50 tokens, the tool refused anything under 100.
    listed = raw.request(41, "tools/list", {})["result"]["tools"]
    budget = next(t for t in listed if t["name"] == "context")["inputSchema"]["properties"][
        "budget"]
    assert raw.call(42, "context", budget=budget["minimum"])["ok"] is True


def test_error_hints_name_the_tools_arguments_not_the_cli_flags(raw: Raw) -> None:
    """A near-duplicate said "store it anyway with --force" and a secret "use --redact":
    flags of the CLI; the add tool had no force argument at all."""
    first = raw.call(20, "add", text="Tests live in spec/, run them with make spec.")
    assert first["ok"] is True
    mid = first["data"]["id"]
    near = raw.call(21, "add", text="tests live in spec/; run them using make spec")
    assert near["ok"] is False and near["error"]["code"] == "near_duplicate"
    assert near["error"]["hint"] == (
        f"store it anyway with force=true, reinforce the existing one with the confirm tool "
        f"(id '{mid[:12]}'), or replace it with supersedes=[\"{mid[:12]}\"]")
    forced = raw.call(22, "add", text="tests live in spec/; run them using make spec", force=True)
    assert forced["ok"] is True and forced["data"]["id"] != mid
    secret = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    refused = raw.call(23, "add", text=f"the deploy token is {secret}")
    assert refused["error"]["code"] == "refused_by_gate"
    assert refused["error"]["hint"] == ("remove it, or use redact=true to store the text "
                                        "with secrets masked")
    keyed = raw.call(24, "set", key="deploy.token", value=f"it is {secret}")
    assert "--" not in keyed["error"]["hint"] and "the add tool with redact=true" in \
        keyed["error"]["hint"]
    assert secret not in json.dumps([refused, keyed])
    assert "Traceback" not in raw.close()


def test_the_briefing_resource_and_prompt_are_markdown_not_the_envelope(raw: Raw,
                                                                        repo: Path) -> None:
    """memory://context and the briefing prompt returned the JSON envelope where the docs
    say Markdown (content.py read ``.markdown`` off a dict)."""
    assert gm("add", "tests live in spec/, run them with make spec", "--kind", "procedure",
              cwd=repo).returncode == 0
    got = raw.request(50, "resources/read", {"uri": "memory://context"})["result"]["contents"][0]
    assert got["mimeType"] == "text/markdown"
    text = got["text"]
    assert text.startswith("#") and "make spec" in text, text
    with pytest.raises(ValueError):
        json.loads(text)
    prompt = raw.request(51, "prompts/get", {"name": "briefing"})["result"]["messages"][0]
    said = prompt["content"]["text"]
    brief = said.split("\n\n", 1)[1]
    assert brief == text and '"ok"' not in said, said


def test_kind_is_a_string_or_a_list_as_tags_are(raw: Raw) -> None:
    """recall and list refused {"kind": "procedure"} ("Input should be a valid list")."""
    assert raw.call(52, "add", text="run the tests with make spec", kind="procedure")["ok"]
    assert raw.call(53, "add", text="the office plant is a ficus")["ok"]
    for rid, tool, args in ((54, "list", {}), (55, "recall", {"query": "tests make spec"})):
        one = raw.call(rid, tool, kind="procedure", **args)
        many = raw.call(rid + 10, tool, kind=["procedure"], **args)
        assert one["ok"] is True and one["data"] == many["data"], one
        items = one["data"]["memories" if tool == "list" else "hits"]
        assert [m["kind"] for m in items] == ["procedure"], items
    bad = raw.call(56, "list", kind="nonsense")
    assert bad["ok"] is False and bad["error"]["code"] == "invalid_input"


def test_every_error_names_tool_arguments_and_tools_not_cli_options(raw: Raw) -> None:
    """Errors over MCP named CLI options and commands ("pass --session ID", "--since: ...",
    "list ids with 'git mem recall QUERY --all'") where docs/agents.md promises tool terms."""
    got = {
        "ephemeral": raw.call(60, "add", text="a scratch note", ephemeral=True),
        "since": raw.call(61, "list", since="garbage"),
        "as_of": raw.call(62, "get", key="db.engine", as_of="garbage"),
        "id": raw.call(63, "show", id="abcdef1234"),
        "key": raw.call(64, "get", key="no.such.key"),
    }
    for what, res in got.items():
        assert res["ok"] is False, (what, res)
        said = res["error"]["message"] + " " + res["error"]["hint"]
        assert "--" not in said and "git mem" not in said, (what, said)
    assert "pass the session argument" in got["ephemeral"]["error"]["hint"]
    assert got["since"]["error"]["message"].startswith("since: 'garbage'")
    assert got["as_of"]["error"]["message"].startswith("as_of: 'garbage'")
    assert "the recall tool (all=true)" in got["id"]["error"]["hint"], got["id"]
    assert got["key"]["error"]["hint"].startswith("set it with the set tool"), got["key"]
    assert "the keys tool" in got["key"]["error"]["hint"]


def test_list_items_carry_no_score_and_its_full_says_so(raw: Raw) -> None:
    """list items carried a meaningless "score": 1.0, and list's full said "id, score"."""
    assert raw.call(70, "add", text="the deploy runs from the release branch")["ok"]
    page = raw.call(71, "list")["data"]["memories"]
    assert page and all("score" not in m and len(m["id"]) == 64 for m in page), page
    listed = raw.request(72, "tools/list", {})["result"]["tools"]
    full = next(t for t in listed if t["name"] == "list")["inputSchema"]["properties"]["full"]
    assert "score" not in full["description"]
    assert "score" in raw.call(73, "recall", query="deploy release branch")["data"]["hits"][0]


def test_get_and_keys_give_conflicting_values_briefly_unless_full(team: dict[str, Path],
                                                                   tmp_path: Path) -> None:
    """get and keys returned each conflicting value as a whole record (~1.1 KB each)."""
    a, b = team["a"], team["b"]
    assert gm("set", "ci.runner", "github actions", cwd=a).returncode == 0
    assert gm("set", "ci.runner", "buildkite", cwd=b).returncode == 0
    for clone in (a, b, a):
        assert gm("sync", cwd=clone).returncode == 0, clone
    client = Raw(a, tmp_path / "server.err")
    try:
        got = client.call(80, "get", key="ci.runner")["data"]
        (other,) = got["conflicts"]
        assert set(other) <= {"id", "kind", "text", "recorded_at", "key", "status",
                              "conflict_with"}, other
        assert len(other["id"]) == 64 and other["text"] in {"github actions", "buildkite"}
        keys = client.call(81, "keys")["data"]["keys"]
        assert keys[0]["conflicts"] == got["conflicts"]
        whole = client.call(82, "get", key="ci.runner", full=True)["data"]["conflicts"][0]
        assert {"author", "tags", "anchors"} <= set(whole)
        assert "author" in client.call(83, "keys", full=True)["data"]["keys"][0]["conflicts"][0]
    finally:
        assert "Traceback" not in client.close()


def test_the_tool_terms_translation_keeps_what_is_not_ours() -> None:
    """The translation behind the errors above: git's own commands and options no tool
    has stay as they are; a CLI option named in the plural by a tool is that argument."""
    from gitmem.agents.mcp.server import in_tool_terms

    shapes = tools.shapes()

    def hint(tool: str, text: str) -> str:
        return str(in_tool_terms({"code": "x", "hint": text}, tool, shapes)["hint"])

    assert hint("add", "fix it with 'git fetch --all', then retry") == \
        "fix it with 'git fetch --all', then retry"
    assert hint("add", "set it with: git config --global user.name") == \
        "set it with: git config --global user.name"
    assert hint("add", "--path 'x' is outside the work tree") == \
        "paths 'x' is outside the work tree"
    assert hint("forget", "run 'git mem forget 3f2a9c1 --purge'") == \
        "run 'git mem forget 3f2a9c1 --purge'"  # no tool purges: a person's command
    assert hint("list", "see 'git mem sync'") == "see 'git mem sync'"
    # (A review: "use -n 50 and page with the list tool with offset", and "the recall
    # tool with min_score must be from 0 to 1" in a message whose subject it is.)
    assert hint("list", "use -n 50 and page with --offset") == "use limit=50 and page with offset"
    assert hint("add", "use -n 50 and page with --offset") == \
        "use -n 50 and page with the list tool with offset"  # add has no limit
    message = in_tool_terms({"code": "x", "message": "--min-score must be from 0 to 1"},
                            "about", shapes)["message"]
    assert message == "min_score must be from 0 to 1"
