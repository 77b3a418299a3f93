"""``git mem mcp`` through the official SDK's own stdio client, in real repositories.

Each test starts the installed console script as a subprocess, exactly as an
MCP client would, and talks to it with ``mcp.ClientSession``.
"""

from __future__ import annotations

import asyncio
import json
import os
import sqlite3
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.types import Implementation, ListRootsResult, Root

from conftest import GIT_MEM, gm

TOOLS = {"add", "recall", "context", "set", "get", "invalidate", "show", "list", "keys",
         "history", "about", "stale", "related", "inbox", "confirm", "link", "forget"}
READ_ONLY = {"recall", "context", "show", "list", "get", "keys", "history", "about", "stale",
             "related", "inbox"}


@asynccontextmanager
async def session(cwd: Path, errlog: Path,
                  roots: list[Path] | None = None) -> AsyncIterator[ClientSession]:
    params = StdioServerParameters(command=GIT_MEM, args=["mcp"], cwd=str(cwd),
                                   env=dict(os.environ))

    async def list_roots(context: Any) -> ListRootsResult:
        return ListRootsResult(roots=[Root(uri=p.as_uri(), name=p.name) for p in roots or []])

    with errlog.open("w") as err:
        async with stdio_client(params, errlog=err) as (read, write):
            async with ClientSession(read, write, client_info=Implementation(
                    name="claude-code", version="2.0.31"),
                    list_roots_callback=list_roots if roots is not None else None) as s:
                await s.initialize()
                yield s


def run(repo: Path, tmp_path: Path, body: Callable[[ClientSession], Awaitable[None]],
        roots: list[Path] | None = None) -> str:
    """Run ``body`` against a fresh server; return what the server wrote on stderr."""
    errlog = tmp_path / "server.err"

    async def main() -> None:
        async with session(repo, errlog, roots) as s:
            await asyncio.wait_for(body(s), timeout=120)

    asyncio.run(main())
    return errlog.read_text()


async def call(s: ClientSession, tool: str, **arguments: Any) -> tuple[bool, dict[str, Any]]:
    """(is_error, envelope); the text content and the structured content agree."""
    result = await s.call_tool(tool, arguments)
    assert len(result.content) == 1 and result.content[0].type == "text"
    payload = json.loads(result.content[0].text)
    assert result.structured_content == payload
    assert payload["tool"] == tool and payload["version"] == 1
    assert payload["ok"] is (not result.is_error)
    return bool(result.is_error), payload


def test_tools_are_listed_with_titles_hints_and_strict_schemas(repo: Path,
                                                                 tmp_path: Path) -> None:
    async def body(s: ClientSession) -> None:
        tools = {t.name: t for t in (await s.list_tools()).tools}
        assert set(tools) == TOOLS
        props = {name: set(t.input_schema["properties"]) for name, t in tools.items()}
        assert {"text", "kind", "key", "tags", "about", "paths", "importance", "valid_from",
                "valid_until", "source", "session", "supersedes", "redact", "ephemeral",
                "keep", "repo"} <= props["add"]
        assert "ctx" not in props["add"]  # the SDK's context is not an argument
        assert tools["add"].input_schema["required"] == ["text"]
        assert {"query", "k", "kind", "tags", "all", "mode", "repo"} <= props["recall"]
        assert props["show"] == {"id", "repo"}
        assert props["invalidate"] == {"id", "reason", "repo"}
        assert props["context"] == {"budget", "repo"}
        for name, t in tools.items():
            a = t.annotations
            assert a is not None and a.title and t.title == a.title, name
            assert a.read_only_hint is (name in READ_ONLY), name
            assert a.destructive_hint is (name in ("invalidate", "forget")), name
            assert a.open_world_hint is False, name
            assert t.description and "\n    " not in t.description, name  # no docstring indent
        schema = tools["recall"].input_schema["properties"]
        assert schema["mode"]["enum"] == ["hybrid", "lexical", "vector"]
        assert schema["k"]["minimum"] == 1 and schema["k"]["maximum"] == 100
        kinds = tools["add"].input_schema["properties"]["kind"]
        # Optional: no kind is a fact with a key, else a note (as git mem add).
        assert [b["enum"] for b in kinds["anyOf"] if "enum" in b] == [
            ["fact", "note", "edge", "procedure", "persona"]]
        assert kinds["default"] is None
        imp = tools["add"].input_schema["properties"]["importance"]
        assert (imp["minimum"], imp["maximum"]) == (0.0, 1.0)
        assert tools["link"].input_schema["properties"]["predicate"]["enum"][0] == "works_on"
        # A value outside the schema is our error shape, not a crash.
        err, bad = await call(s, "recall", query="x", mode="fuzzy")
        assert err and bad["error"]["code"] == "invalid_input"

    run(repo, tmp_path, body)


def test_add_recall_show_invalidate_round_trip(repo: Path, tmp_path: Path) -> None:
    async def body(s: ClientSession) -> None:
        err, added = await call(s, "add", text="tests live in spec/, run with make spec",
                                kind="procedure", tags=["testing"], importance=0.9)
        assert not err, added
        mid = added["data"]["id"]
        assert added["data"]["kind"] == "procedure" and len(mid) == 64
        await call(s, "add", text="the web server listens on port 8080")

        err, found = await call(s, "recall", query="how do I run the tests", k=5)
        assert not err
        top = found["data"]["hits"][0]
        assert top["id"] == mid and top["text"] == "tests live in spec/, run with make spec"
        # Slim by default: what an agent reads, not the whole record.
        assert set(top) == {"id", "score", "kind", "text", "recorded_at"}, str(top)
        assert 0 < top["score"] <= 1
        err, whole = await call(s, "recall", query="how do I run the tests", k=5, full=True)
        assert whole["data"]["hits"][0]["tags"] == ["testing"]
        assert whole["data"]["hits"][0]["status"] == "active"

        err, shown = await call(s, "show", id=mid[:10])
        assert not err and shown["data"]["memory"]["id"] == mid
        assert shown["data"]["memory"]["by"] == "agent:claude-code"  # the client's name
        # Ephemeral: the session's working memory, not the log.
        err, noted = await call(s, "add", text="tests are slow today", ephemeral=True,
                                session="s-1")
        assert not err and noted["data"]["session"] == "s-1", noted
        err, found = await call(s, "recall", query="why are tests slow", session="s-1")
        assert found["data"]["hits"][0]["pool"] == "session"
        err, found = await call(s, "recall", query="why are tests slow")
        assert all(h.get("pool") != "session" for h in found["data"]["hits"])
        err, refused = await call(s, "add", text="no session here", ephemeral=True)
        assert err and "session" in refused["error"]["message"]
        assert [o["type"] for o in shown["data"]["ops"]] == ["add"]

        err, retired = await call(s, "invalidate", id=mid, reason="we use pytest now")
        assert not err and retired["data"]["status"] == "invalidated"
        _, after = await call(s, "recall", query="how do I run the tests")
        assert mid not in [h["id"] for h in after["data"]["hits"]]
        _, with_all = await call(s, "recall", query="how do I run the tests", all=True)
        assert any(h["id"] == mid and h["status"] == "invalidated"
                   for h in with_all["data"]["hits"])
        # Again: nothing written, a warning says so.
        _, again = await call(s, "invalidate", id=mid)
        assert again["data"]["changed"] is False and again["warnings"]

    stderr = run(repo, tmp_path, body)
    assert "Traceback" not in stderr
    log = gm("log", "--json", cwd=repo)
    assert [o["type"] for o in json.loads(log.stdout)["data"]["ops"]] == ["add", "add",
                                                                          "invalidate"]


def test_errors_are_tool_errors_and_the_server_keeps_working(repo: Path, tmp_path: Path) -> None:
    async def body(s: ClientSession) -> None:
        # The write gate: refused, the secret never echoed.
        secret = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
        err, refused = await call(s, "add", text=f"the deploy token is {secret}")
        assert err and refused["error"]["code"] == "refused_by_gate"
        assert refused["error"]["exit_code"] == 11 and refused["error"]["hint"]
        assert secret not in json.dumps(refused)

        err, bad = await call(s, "recall", query="anything", k=0)
        assert err and bad["error"]["code"] == "invalid_input"
        assert bad["error"]["message"] == (
            "k: Input should be greater than or equal to 1 [type=greater_than_equal]")

        err, unknown = await call(s, "show", id="f" * 12)
        assert err and unknown["error"] == {
            "code": "unknown_id", "message": "no memory with id ffffffffffff",
            "hint": 'list ids with the recall tool (all=true) or the list tool (status="all")',
            "exit_code": 5}

        err, empty = await call(s, "add", text="   ")
        assert err and empty["error"]["code"] == "empty_text"

        # Wrong types and missing arguments, rejected by the input schema.
        err, wrong = await call(s, "recall", query="x", k="many")
        assert err and wrong["error"]["code"] == "invalid_input"
        assert "k" in wrong["error"]["message"] and wrong["error"]["hint"]
        err, missing = await call(s, "add")
        assert err and missing["error"]["code"] == "invalid_input"
        assert "text" in missing["error"]["message"]
        err, kind = await call(s, "add", text="x", kind="rumour")
        assert err and kind["error"]["message"].startswith("kind: Input should be 'fact'")

        # Still serving.
        err, ok = await call(s, "add", text="still here after all those errors")
        assert not err and ok["data"]["id"]

    stderr = run(repo, tmp_path, body)
    assert "Traceback" not in stderr


def test_a_memory_added_by_another_process_is_seen(repo: Path, tmp_path: Path) -> None:
    async def body(s: ClientSession) -> None:
        await call(s, "add", text="first memory, about caching")
        _, before = await call(s, "recall", query="which database engine")
        assert before["data"]["hits"] == []
        out = await asyncio.to_thread(
            gm, "add", "the database engine is postgres 16", "--json", cwd=repo)
        assert out.returncode == 0, out.stderr
        other = json.loads(out.stdout)["data"]["id"]
        _, after = await call(s, "recall", query="which database engine")
        assert [h["id"] for h in after["data"]["hits"]][:1] == [other]
        _, shown = await call(s, "show", id=other)
        assert shown["data"]["memory"]["text"] == "the database engine is postgres 16"

    run(repo, tmp_path, body)


def test_a_projection_deleted_or_rebuilt_under_the_server_is_reopened(
        repo: Path, tmp_path: Path) -> None:
    """Another process deletes the cache (``rm -rf .git/mem/cache``) or runs ``git mem
    rebuild``. The server took the file it still held for damaged ("projection was
    corrupt", "vector file was damaged"), or answered from a deleted file. It now
    sees that the file at its path is not the one it opened, and reopens: a deleted
    one is rebuilt with the warning that says so, a rebuilt one is simply read."""
    import shutil

    db = repo / ".git" / "mem" / "cache" / "projection.sqlite3"

    async def body(s: ClientSession) -> None:
        await call(s, "add", text="the staging database is postgres 16 on port 5433")
        _, before = await call(s, "recall", query="staging database port")
        assert before["data"]["hits"] and before["warnings"] == []
        shutil.rmtree(db.parent)
        _, after = await call(s, "recall", query="staging database port")
        assert [h["id"] for h in after["data"]["hits"]] == [h["id"] for h in
                                                             before["data"]["hits"]]
        assert after["warnings"] == ["projection was missing; rebuilt it from the op-log"]
        assert db.exists()
        rebuilt = await asyncio.to_thread(gm, "rebuild", cwd=repo)
        assert rebuilt.returncode == 0 and "warning" not in rebuilt.stderr, rebuilt.stderr
        await asyncio.to_thread(gm, "add", "the cache is redis 7, flushed on deploy", cwd=repo)
        _, third = await call(s, "recall", query="which cache, redis")
        assert "redis 7" in third["data"]["hits"][0]["text"] and third["warnings"] == []

    err = run(repo, tmp_path, body)
    assert "Traceback" not in err, err
    listed = json.loads(gm("status", "--json", cwd=repo).stdout)["data"]
    assert listed["memories"]["active"] == 2, listed


def test_outside_a_repository_every_call_is_a_tool_error(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()

    async def body(s: ClientSession) -> None:
        assert {t.name for t in (await s.list_tools()).tools} == TOOLS
        err, out = await call(s, "recall", query="anything")
        assert err and out["error"]["code"] == "not_a_repository"
        assert out["error"]["exit_code"] == 3

    assert "Traceback" not in run(plain, tmp_path, body)


# -- set / get / context: Store methods added in a parallel branch --------------------


def test_set_get_and_context(repo: Path, tmp_path: Path) -> None:
    async def body(s: ClientSession) -> None:
        err, first = await call(s, "set", key="db.engine", value="postgres")
        assert not err, first
        err, second = await call(s, "set", key="db.engine", value="cockroachdb")
        assert not err, second
        err, got = await call(s, "get", key="db.engine")
        assert not err, got
        assert got["data"]["key"] == "db.engine" and got["data"]["value"] == "cockroachdb"
        assert got["data"]["id"] == second["data"]["id"]
        assert got["data"]["author"] and got["data"]["recorded_at"]

        await call(s, "add", text="tests live in spec/, run with make spec", kind="procedure")
        err, ctx = await call(s, "context", budget=300)
        assert not err, ctx
        assert isinstance(ctx["data"]["markdown"], str) and ctx["data"]["markdown"]
        assert 0 < ctx["data"]["tokens"] <= 300
        err, bad = await call(s, "context", budget=0)
        assert err and bad["error"]["code"] == "invalid_input"

    run(repo, tmp_path, body)



def test_a_server_started_outside_a_repository_uses_the_clients_roots(repo: Path,
                                                                        tmp_path: Path) -> None:
    home = tmp_path / "elsewhere"
    home.mkdir()
    ok_add = gm("add", "deploys go out on Tuesdays", cwd=repo)
    assert ok_add.returncode == 0, ok_add.stderr

    async def with_roots(s: ClientSession) -> None:
        err, found = await call(s, "recall", query="when do deploys go out")
        assert not err, found
        assert found["data"]["hits"][0]["text"] == "deploys go out on Tuesdays"

    run(home, tmp_path, with_roots, roots=[tmp_path / "not-a-repo", repo])

    async def without(s: ClientSession) -> None:
        err, failed = await call(s, "recall", query="deploys")
        assert err and failed["error"]["code"] == "not_a_repository"
        assert str(home) in failed["error"]["message"]
        assert "gave no roots" in failed["error"]["message"]
        assert "repo=PATH" in failed["error"]["hint"]
        err, found = await call(s, "recall", query="deploys", repo=str(repo))  # the argument
        assert not err and found["data"]["hits"]
        err, wrong = await call(s, "recall", query="deploys", repo=str(home))
        assert err and wrong["error"]["code"] == "not_a_repository"

    run(home, tmp_path, without)


def test_resources_read_first_find_the_repository_through_the_clients_roots(
        repo: Path, tmp_path: Path) -> None:
    home = tmp_path / "elsewhere"
    home.mkdir()
    added = gm("add", "deploys go out on Tuesdays", "--json", cwd=repo)
    assert added.returncode == 0, added.stderr
    mid = json.loads(added.stdout)["data"]["id"]
    roots = [tmp_path / "not-a-repo", repo]

    # Each a fresh server started outside any repository, the resource its first request.
    async def briefing_first(s: ClientSession) -> None:
        brief = await s.read_resource("memory://context")
        assert "deploys go out on Tuesdays" in brief.contents[0].text

    run(home, tmp_path, briefing_first, roots=roots)

    async def memory_first(s: ClientSession) -> None:
        one = await s.read_resource(f"memory://memory/{mid}")
        payload = json.loads(one.contents[0].text)
        assert payload["ok"] and payload["data"]["memory"]["id"] == mid

    run(home, tmp_path, memory_first, roots=roots)

    # Neither the start directory nor any root: the tools' error, as the resource's text.
    async def nowhere(s: ClientSession) -> None:
        for uri in ("memory://context", f"memory://memory/{mid}"):
            failed = json.loads((await s.read_resource(uri)).contents[0].text)
            assert failed["ok"] is False and failed["error"]["code"] == "not_a_repository"
            assert str(home) in failed["error"]["message"]
            assert str(tmp_path / "not-a-repo") in failed["error"]["message"]
        err, tool = await call(s, "recall", query="deploys")
        assert err and tool["error"] == failed["error"]

    assert "Traceback" not in run(home, tmp_path, nowhere, roots=[tmp_path / "not-a-repo"])


def test_every_tool_resources_and_the_prompt(repo: Path, tmp_path: Path) -> None:
    (repo / "src").mkdir()
    (repo / "src" / "app.py").write_text("def main():\n    pass\n")
    assert gm("add", "x", "--json", cwd=repo).returncode == 0  # a log to begin with

    async def body(s: ClientSession) -> None:
        err, proc = await call(s, "add", text="Release: run `make dist`", kind="procedure",
                               paths=["src/app.py"])
        assert not err, proc
        pid = proc["data"]["id"]
        err, done = await call(s, "confirm", id=pid[:8], outcome="worked")
        assert not err and done["data"]["outcome"] == "worked"
        err, _ = await call(s, "set", key="db.engine", value="postgres")
        err, _ = await call(s, "set", key="db.engine", value="cockroachdb")
        err, keys = await call(s, "keys")
        assert [k["value"] for k in keys["data"]["keys"]] == ["cockroachdb"]
        err, hist = await call(s, "history", key="db.engine")
        assert len(hist["data"]["values"]) == 2
        err, page = await call(s, "list", kind=["procedure"])
        assert [m["id"] for m in page["data"]["memories"]] == [pid]
        assert set(page["data"]["memories"][0]) <= {"id", "score", "kind", "text",
                                                    "recorded_at", "code_changed"}
        err, about = await call(s, "about", path="src/app.py")
        assert [m["id"] for m in about["data"]["memories"]] == [pid]
        err, stale = await call(s, "stale")
        assert not err and stale["data"]["memories"] == []
        err, linked = await call(s, "link", a="ada@example.com", predicate="owns", b=pid[:10])
        assert not err, linked
        err, rel = await call(s, "related", node="ada@example.com")
        assert rel["data"]["edges"][0]["dst"] == f"memory:{pid}"
        err, inbox = await call(s, "inbox")
        assert not err and inbox["data"]["proposals"] == []
        err, gone = await call(s, "forget", id=linked["data"]["id"], reason="test")
        assert not err and gone["data"]["status"] == "forgotten"
        err, again = await call(s, "forget", id=linked["data"]["id"])
        assert not err and again["data"]["changed"] is False  # idempotent

        listed = await s.list_resources()
        assert [str(r.uri) for r in listed.resources] == ["memory://context"]
        templates = await s.list_resource_templates()
        assert [t.uri_template for t in templates.resource_templates] == ["memory://memory/{id}"]
        brief = await s.read_resource("memory://context")
        assert "Release: run `make dist`" in brief.contents[0].text
        one = await s.read_resource(f"memory://memory/{pid}")
        assert json.loads(one.contents[0].text)["data"]["memory"]["id"] == pid
        prompts = await s.list_prompts()
        assert [p.name for p in prompts.prompts] == ["briefing"]
        got = await s.get_prompt("briefing")
        text = got.messages[0].content.text
        assert "recall" in text and "Release: run `make dist`" in text

    run(repo, tmp_path, body)


def test_a_recall_result_is_compact(repo: Path, tmp_path: Path) -> None:
    texts = [f"service {n} listens on port {8000 + n} behind the load balancer" for n in range(10)]
    for t in texts:
        assert gm("add", t, cwd=repo).returncode == 0

    async def body(s: ClientSession) -> None:
        result = await s.call_tool("recall", {"query": "which port does the service listen on"})
        payload = result.structured_content
        assert payload is not None
        memory = sum(len(h["text"]) for h in payload["data"]["hits"])
        wire = len(result.content[0].text)
        assert wire < 3 * memory + 1500, (wire, memory)  # ids, scores, times; nothing else

    run(repo, tmp_path, body)


def test_a_projection_locked_past_the_busy_timeout_is_a_tool_error_not_a_bug(
        repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # (adv39 07: a catch-up holding the write lock; the CLI says projection_busy, the
    # server said "internal error ... this is a bug".)
    monkeypatch.setenv("GITMEM_BUSY_TIMEOUT", "0.5")
    holder: list[sqlite3.Connection] = []

    async def body(s: ClientSession) -> None:
        await call(s, "add", text="the build runs on buildkite")
        await call(s, "recall", query="build")
        # another process's op: the server's next write must replay it first
        out = await asyncio.to_thread(gm, "add", "releases are cut on tuesdays", cwd=repo)
        assert out.returncode == 0, out.stderr
        [db] = list((repo / ".git" / "mem").rglob("projection.sqlite3"))
        conn = sqlite3.connect(db, isolation_level=None)
        holder.append(conn)
        conn.execute("BEGIN IMMEDIATE")  # a catch-up, mid-slice
        failed, payload = await call(s, "add", text="deploys go through staging first")
        conn.execute("ROLLBACK")
        assert failed and payload["error"]["code"] == "projection_busy", payload
        assert "this is a bug" not in json.dumps(payload)
        assert not (await call(s, "add", text="deploys go through staging first"))[0]

    try:
        run(repo, tmp_path, body)
    finally:
        for conn in holder:
            conn.close()
