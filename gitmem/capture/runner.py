"""The model extractor: the user's own command reads a session, writes memories.

Why a command and not a library: git mem downloads nothing and calls no model
on its own. ``gitmem.extractor`` names a command the user already has (a local
model runner such as ``ollama run llama3.2``, or an LLM command-line tool such
as ``llm -m gpt-4o-mini``). It gets, on stdin, the shipped prompt
(gitmem/data/prompts/extract.md) followed by an excerpt of the session, and
answers with JSON lines: ``{"text", "kind", "tags", "evidence"}``. It runs
without a shell, with a time limit, in the background process that capture
runs in; what it prints is hostile input like any other (bounded, parsed
line by line, anything odd skipped), and everything it proposes goes to the
inbox through the write gate like the built-in rules' proposals.

This is the one module that starts the model runner.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
from importlib import resources

from .. import pathsearch
from .rules import Candidate
from .transcript import Event, excerpt

EXCERPT_CHARS = 24_000  # the newest part of a session the model sees
MAX_OUTPUT = 1024 * 1024
MAX_PROPOSALS = 8
TIMEOUT = 120.0
KINDS = ("fact", "note", "procedure")


class RunnerFailed(Exception):
    """The extractor command could not run, timed out or failed (one line)."""


def prompt() -> str:
    return (resources.files("gitmem") / "data" / "prompts" / "extract.md").read_text("utf-8")


def session_excerpt(events: list[Event], limit: int = EXCERPT_CHARS) -> str:
    """The session as the model reads it: one line per event, newest kept."""
    lines = []
    for e in events:
        if e.kind == "said":
            lines.append(f"[{e.line}] USER: {excerpt(e.text, 600)}")
        elif e.kind == "reply":
            lines.append(f"[{e.line}] AGENT: {excerpt(e.text, 400)}")
        elif e.kind == "command":
            how = {True: "ok", False: "failed", None: "no result"}[e.ok]
            lines.append(f"[{e.line}] RAN: {excerpt(e.text, 200)} ({how})")
        elif e.kind == "file":
            lines.append(f"[{e.line}] FILE: {excerpt(e.text, 200)} ({e.action})")
    out: list[str] = []
    total = 0
    for line in reversed(lines):
        total += len(line) + 1
        if total > limit:
            break
        out.append(line)
    return "\n".join(reversed(out))


def run(command: str, events: list[Event], *, timeout: float = TIMEOUT,
        cwd: str | None = None) -> list[Candidate]:
    """Run the extractor ``command`` on a session; its proposals (RunnerFailed if
    it cannot be run, times out or exits non-zero)."""
    try:
        argv = shlex.split(command)
    except ValueError as exc:
        raise RunnerFailed(f"gitmem.extractor is not a valid command line ({exc})") from None
    if not argv:
        raise RunnerFailed("gitmem.extractor is empty")
    text = prompt() + "\n" + session_excerpt(events) + "\n"
    env = dict(os.environ, GITMEM_EXTRACTOR="1")
    try:
        # A bare name from PATH's absolute entries only: it runs in the work tree.
        argv[0] = pathsearch.find(argv[0])
        proc = subprocess.run(argv, input=text.encode("utf-8"), capture_output=True,
                              timeout=timeout, cwd=cwd, env=env, check=False)
    except FileNotFoundError:
        raise RunnerFailed(f"extractor command not found: {argv[0]}") from None
    except subprocess.TimeoutExpired:
        raise RunnerFailed(f"extractor timed out after {timeout:.0f} s") from None
    except OSError as exc:
        raise RunnerFailed(f"extractor could not run ({exc})") from None
    if proc.returncode != 0:
        tail = proc.stderr.decode("utf-8", "replace").strip().splitlines()[-1:] or [""]
        raise RunnerFailed(f"extractor exited {proc.returncode}: {excerpt(tail[0], 160)}")
    return parse(proc.stdout[:MAX_OUTPUT].decode("utf-8", "replace"))


def parse(output: str) -> list[Candidate]:
    """The JSON-lines answer, line by line; anything that is not a proposal is skipped."""
    out: list[Candidate] = []
    for raw in output.splitlines():
        raw = raw.strip().strip("`")
        if not raw.startswith("{"):
            continue
        try:
            obj = json.loads(raw)
        except ValueError:
            continue
        if not isinstance(obj, dict):
            continue
        text = obj.get("text")
        if not isinstance(text, str) or not text.strip() or len(text) > 2000:
            continue
        kind = obj.get("kind") if obj.get("kind") in KINDS else "note"
        tags = [t for t in obj.get("tags") or [] if isinstance(t, str) and 0 < len(t) <= 40][:8] \
            if isinstance(obj.get("tags"), list) else []
        evidence = obj.get("evidence")
        ev = [(0, excerpt(evidence, 200))] if isinstance(evidence, str) and evidence.strip() else []
        out.append(Candidate(text=" ".join(text.split()), kind=str(kind), tags=tags,
                             reason="model extractor", evidence=ev))
        if len(out) >= MAX_PROPOSALS:
            break
    return out
