"""What git itself hands git mem is not trusted either (issue 13, adversarial round 2).

Each test makes the hostile state with the real ``git`` binary, in clones of a
real bare remote, and checks the answer: a one-line typed error with a hint and
a documented exit code, never "internal error" or a traceback.

- A: bytes that are not UTF-8 in git's config (a Latin-1 ``user.name``, an
  alias) or in ``GIT_AUTHOR_EMAIL``, and in what a remote says;
- B: this clone's own partition ref pointing at a tag, blob, tree or nothing;
- C: a full disk or a read-only ``.git`` under push, sync and rekey;
- D: a teammate's ``refs/memory/<our partition>/x`` on the remote, which
  blocks our partition's ref there (a ref cannot be a name and a folder).
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from conftest import gm, git, ok, texts

LATIN1_NAME = "Jos\udce9 Garc\udceda"  # b"Jos\xe9 Garc\xeda", passed to git as bytes


def _quiet(proc: subprocess.CompletedProcess[str]) -> None:
    assert "Traceback" not in proc.stderr and "internal error" not in proc.stderr, proc.stderr


def _one_error(proc: subprocess.CompletedProcess[str], code: int, *says: str) -> str:
    _quiet(proc)
    assert proc.returncode == code, (proc.returncode, proc.stderr)
    lines = [x for x in proc.stderr.splitlines() if not x.startswith("warning: ")]
    assert len(lines) == 1 and lines[0].startswith("error: ") and "; hint: " in lines[0], lines
    for s in says:
        assert s in lines[0], lines[0]
    return lines[0]


def _shared(team: dict[str, Path]) -> tuple[Path, Path]:
    """a writes a memory and pushes it; b has synced once."""
    a, b = team["a"], team["b"]
    ok(gm("add", "the deploy script lives in tools/deploy.sh", cwd=a))
    ok(gm("sync", cwd=a))
    ok(gm("sync", cwd=b))
    return a, b


# -- A: bytes that are not UTF-8 --------------------------------------------------------

def test_a_config_value_that_is_not_utf8_never_breaks_a_command(
        team: dict[str, Path], hermetic: Path) -> None:
    a, b = _shared(team)
    # One Latin-1 byte in an alias of the global config: plain git is fine with it.
    git("config", "--global", "alias.hi", "!echo caf\udce9", cwd=b)
    git("config", "gitmem.nothing", "caf\udce9", cwd=b)
    ok(git("status", cwd=b))
    for args in (["recall", "deploy"], ["status"], ["context"], ["log"],
                 ["add", "the queue worker retries three times"], ["sync"]):
        out = gm(*args, cwd=b)
        _quiet(out)
        assert out.returncode == 0, (args, out.stderr)
    ok(gm("sync", cwd=a))
    assert "the queue worker retries three times" in texts(a, "queue worker")


def test_an_identity_that_is_not_utf8_is_refused_for_writes_with_its_latin1_reading(
        team: dict[str, Path]) -> None:
    a, b = _shared(team)
    git("config", "user.name", LATIN1_NAME, cwd=b)
    ok(git("commit", "-q", "--allow-empty", "-m", "plain git takes it", cwd=b))
    for args in (["add", "a note about the build"], ["set", "build.tool", "make"]):
        line = _one_error(gm(*args, cwd=b), 4, "identity's name is not UTF-8",
                          "b'Jos\\xe9 Garc\\xeda'")
        assert "git config user.name 'José García'" in line, line
    # Reads and sharing never need the identity.
    for args in (["recall", "deploy"], ["status"], ["context"], ["sync"]):
        out = gm(*args, cwd=b)
        _quiet(out)
        assert out.returncode == 0, (args, out.stderr)
    assert texts(b, "deploy script") == ["the deploy script lives in tools/deploy.sh"]
    # Fixed as the hint says: the write goes through, and reaches the team.
    git("config", "user.name", "José García", cwd=b)
    ok(gm("add", "a note about the build", cwd=b))
    ok(gm("sync", cwd=b))
    ok(gm("sync", cwd=a))
    hits = json.loads(ok(gm("recall", "note build", "--json", cwd=a)).stdout)["data"]["hits"]
    assert ("a note about the build", "José García") in [(h["text"], h["author"]) for h in hits]


def test_an_author_email_from_the_environment_that_is_not_utf8_is_refused(
        team: dict[str, Path]) -> None:
    _, b = _shared(team)
    out = gm("add", "another note", cwd=b, env={"GIT_AUTHOR_EMAIL": "x\udcff@example.com"})
    line = _one_error(out, 4, "identity's email is not UTF-8", "GIT_AUTHOR_EMAIL")
    assert "GIT_AUTHOR_EMAIL='xÿ@example.com'" in line, line
    both = gm("add", "another note", cwd=b,
              env={"GIT_AUTHOR_EMAIL": "bob@example.com", "GIT_AUTHOR_NAME": LATIN1_NAME})
    _one_error(both, 4, "identity's name is not UTF-8", "GIT_AUTHOR_NAME=")


def test_a_remote_that_answers_in_latin1_does_not_break_sync(team: dict[str, Path],
                                                             tmp_path: Path) -> None:
    a, b = _shared(team)
    hook = tmp_path / "remote.git" / "hooks" / "pre-receive"
    hook.write_bytes(b"#!/bin/sh\nprintf 'bienvenue au caf\\351\\n' >&2\n")
    hook.chmod(0o755)
    ok(gm("add", "the queue worker retries three times", cwd=b))
    out = gm("sync", cwd=b)
    _quiet(out)
    assert out.returncode == 0, out.stderr
    ok(gm("sync", cwd=a))
    assert "the queue worker retries three times" in texts(a, "queue worker")
