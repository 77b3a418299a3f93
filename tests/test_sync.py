"""Team memory through real remotes: three clones, a bare repository, real git transport."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

import gitmem
from conftest import dump, git, gm, make_team, no_env_identity, ok, texts
from gitmem import ops


def test_add_in_a_sync_recall_in_b_and_c(team: dict[str, Path]) -> None:
    a, b, c = team["a"], team["b"], team["c"]
    ok(gm("add", "the staging database is db-stage-2", cwd=a))
    out = ok(gm("sync", cwd=a)).stdout
    assert "pushed to origin: alice-" in out and "(new)" in out
    for clone in (b, c):
        pulled = ok(gm("sync", cwd=clone)).stdout
        assert "pulled from origin: partitions 1 new, 0 updated; 1 ops replayed" in pulled
        assert texts(clone, "staging database") == ["the staging database is db-stage-2"]
    # memory travels on its own refs: no branch was touched anywhere
    for clone in (a, b, c):
        assert git("status", "--porcelain", cwd=clone).stdout == ""
        assert git("rev-parse", "main", cwd=clone).stdout == git("rev-parse", "origin/main", cwd=clone).stdout
    # the remote holds exactly the partition ref, nothing of ours under other names
    refs = git("for-each-ref", "--format=%(refname)", cwd=a.parent / "remote.git").stdout.split()
    assert sorted(r for r in refs if "memory" in r) == [
        f"refs/memory/{ops.partition_name('alice@example.com', (a / '.git/mem/clone-id').read_text().strip())}"
    ]


def test_invalidate_and_forget_in_b_reach_a_and_c(team: dict[str, Path]) -> None:
    a, b, c = team["a"], team["b"], team["c"]
    keep = ok(gm("add", "deploys happen on tuesdays", cwd=a)).stdout.strip()
    secret = ok(gm("add", "the old vpn password is in the wiki", cwd=a)).stdout.strip()
    ok(gm("sync", cwd=a))
    ok(gm("sync", cwd=b))
    ok(gm("invalidate", keep, "--reason", "we deploy daily now", cwd=b))
    ok(gm("forget", secret, cwd=b))
    ok(gm("sync", cwd=b))
    for clone in (a, c):
        ok(gm("sync", cwd=clone))
        assert texts(clone, "deploys tuesdays") == []
        shown = json.loads(ok(gm("show", keep, "--json", cwd=clone)).stdout)["data"]["memory"]
        assert shown["status"] == "invalidated" and shown["retired_reason"] == "we deploy daily now"
        gone = json.loads(ok(gm("show", secret, "--json", cwd=clone)).stdout)["data"]["memory"]
        assert gone["status"] == "forgotten" and gone["text"] is None
        assert "vpn" not in gm("log", cwd=clone).stdout
        assert "vpn" not in gm("recall", "vpn password wiki", "--all", cwd=clone).stdout


def test_unpushed_local_op_survives_a_pull(team: dict[str, Path]) -> None:
    a, b = team["a"], team["b"]
    ok(gm("add", "alice local note about caching", cwd=a))
    ok(gm("add", "bob shared note about caching", cwd=b))
    ok(gm("sync", cwd=b))
    ok(gm("pull", cwd=a))
    assert texts(a, "note caching") == ["alice local note about caching",
                                        "bob shared note about caching"]
    ok(gm("push", cwd=a))
    ok(gm("pull", cwd=b))
    assert texts(b, "note caching") == texts(a, "note caching")


def test_concurrent_adds_and_syncs_from_two_clones(team: dict[str, Path]) -> None:
    a, b, c = team["a"], team["b"], team["c"]
    script = 'for i in 1 2 3 4 5 6; do git-mem add "$W item $i about queues" >/dev/null && git-mem sync >/dev/null || exit 1; done'
    procs = [subprocess.Popen(["bash", "-c", script], cwd=p, env={**os.environ, "W": w},
                              stderr=subprocess.PIPE, text=True) for w, p in (("alice", a), ("bob", b))]
    for p in procs:
        _, err = p.communicate()
        assert p.returncode == 0, err
    for clone in (a, b, c, a, b):  # a final round
        ok(gm("sync", cwd=clone))
    expected = sorted(f"{w} item {i} about queues" for w in ("alice", "bob") for i in range(1, 7))
    for clone in (a, b, c):
        assert texts(clone, "item queues") == expected
    assert dump(a) == dump(b) == dump(c)
    assert git("fsck", "--strict", cwd=a.parent / "remote.git", check=False).returncode == 0


def test_plain_git_push_and_pull_unchanged_after_init(team: dict[str, Path]) -> None:
    a, b = team["a"], team["b"]
    before_push = git("config", "--get-all", "remote.origin.push", cwd=a, check=False).stdout
    first = ok(gm("init", "--fetch-refspec", cwd=a)).stdout
    assert "fetch refspec for origin: added" in first
    again = ok(gm("init", "--fetch-refspec", cwd=a)).stdout
    assert "fetch refspec for origin: already present" in again
    specs = git("config", "--get-all", "remote.origin.fetch", cwd=a).stdout.split()
    assert specs == ["+refs/heads/*:refs/remotes/origin/*",
                     "+refs/memory/*:refs/memory-remotes/origin/*"]
    assert git("config", "--get-all", "remote.origin.push", cwd=a, check=False).stdout == before_push

    # A plain 'git push' still pushes the current branch (and only it).
    (a / "code.txt").write_text("v1\n")
    git("add", "code.txt", cwd=a)
    git("commit", "-q", "-m", "code", cwd=a)
    ok(gm("add", "memory that must not ride a plain push", cwd=a))
    git("push", "-q", cwd=a)
    remote = a.parent / "remote.git"
    assert git("rev-parse", "main", cwd=remote).stdout == git("rev-parse", "main", cwd=a).stdout
    assert "refs/memory/" not in git("for-each-ref", cwd=remote).stdout

    # B shares memory; in A a plain 'git pull' still merges code and also brings memory.
    ok(gm("init", "--fetch-refspec", cwd=b))
    git("pull", "-q", "--ff-only", cwd=b)
    ok(gm("add", "bob knows the build takes 4 minutes", cwd=b))
    ok(gm("push", cwd=b))
    (b / "code.txt").write_text("v2\n")
    git("commit", "-q", "-am", "code v2", cwd=b)
    git("push", "-q", cwd=b)
    git("pull", "-q", "--ff-only", cwd=a)
    assert (a / "code.txt").read_text() == "v2\n"
    assert "refs/memory-remotes/origin/bob-" in git("for-each-ref", cwd=a).stdout
    # No 'git mem pull' was run: the read itself integrates what plain git fetched.
    assert texts(a, "build minutes") == ["bob knows the build takes 4 minutes"]


def test_refresh_sees_refs_moved_by_a_plain_fetch(team: dict[str, Path]) -> None:
    a, b = team["a"], team["b"]
    ok(gm("init", "--fetch-refspec", cwd=a))
    assert texts(a, "flaky") == []  # projection built and current
    ok(gm("add", "the flaky test is test_upload", cwd=b))
    ok(gm("push", cwd=b))
    git("fetch", "-q", cwd=a)
    assert texts(a, "flaky") == ["the flaky test is test_upload"]


def test_rewritten_partition_is_replaced_cleanly(team: dict[str, Path]) -> None:
    a, b = team["a"], team["b"]
    ok(gm("add", "first note about logging", cwd=a))
    ok(gm("add", "second note about logging, a mistake", cwd=a))
    ok(gm("sync", cwd=a))
    ok(gm("sync", cwd=b))
    assert len(texts(b, "note logging")) == 2
    # Alice rewrites her own partition (what purge will do): drop the tip commit.
    ref = git("for-each-ref", "--format=%(refname)", "refs/memory/", cwd=a).stdout.split()[0]
    git("update-ref", ref, f"{ref}~1", cwd=a)
    ok(gm("add", "third note about logging", "--force", cwd=a))  # close to the first
    git("push", "-q", "--force", "origin", f"{ref}:{ref}", cwd=a)
    out = ok(gm("pull", "--json", cwd=b))
    assert json.loads(out.stdout)["data"]["replaced"] == [ref.rsplit("/", 1)[-1]]
    assert texts(b, "note logging") == ["first note about logging", "third note about logging"]
    assert texts(b, "note logging", "--all") == texts(b, "note logging")  # no ghosts
    assert dump(a) == dump(b)


def test_copied_clone_stops_with_a_conflict_then_rekey_fixes_it(team: dict[str, Path], tmp_path: Path) -> None:
    a = team["a"]
    ok(gm("add", "written before the copy", cwd=a))
    ok(gm("sync", cwd=a))
    copy = tmp_path / "a-copy"
    shutil.copytree(a, copy)
    ok(gm("add", "written in the original", cwd=a))
    ok(gm("sync", cwd=a))
    ok(gm("add", "written in the copy", cwd=copy))
    failed = gm("sync", cwd=copy)
    assert failed.returncode == 10
    partition = (copy / ".git/mem/clone-id").read_text().strip()
    assert failed.stderr.splitlines()[-1].startswith(
        "error: 'origin' holds commits on this clone's partition alice-")
    assert partition in failed.stderr
    assert "or a push to this partition from somewhere else" in failed.stderr
    assert "hint: this clone's partition is also written from another place (a copied .git, " \
           "or someone who pushed to it" in failed.stderr
    assert "run 'git mem rekey'" in failed.stderr
    # Pushing alone is refused too, and nothing was overwritten on either side.
    assert gm("push", cwd=copy).returncode == 8
    fixed = json.loads(ok(gm("rekey", "--json", cwd=copy)).stdout)["data"]
    assert fixed["moved_ops"] == 1 and len(fixed["backups"]) == 1
    ok(gm("sync", cwd=copy))
    ok(gm("sync", cwd=a))
    expected = ["written before the copy", "written in the copy", "written in the original"]
    assert texts(copy, "written") == expected
    assert texts(a, "written") == expected
    assert dump(a) == dump(copy)


def test_no_remote_is_a_clear_error(repo: Path) -> None:
    out = gm("sync", cwd=repo)
    assert out.returncode == 8
    assert out.stderr.strip() == (
        "error: no remote to sync memory with; hint: add one with 'git remote add origin "
        "<url>', or name it: git mem sync <remote>"
    )
    # The hint names the command that asked (push said 'git mem sync <remote>').
    for command, hint in (("push", "git mem push <remote>"), ("pull", "git mem pull <remote>"),
                          ("init", "git mem init --fetch-refspec --remote <remote>")):
        out = gm(command, *(["--fetch-refspec"] if command == "init" else []), cwd=repo)
        assert out.returncode == 8 and out.stderr.strip().endswith(hint), out.stderr
    bad = gm("pull", "nosuchremote", cwd=repo)
    assert bad.returncode == 8 and bad.stderr.startswith("error: git fetch from 'nosuchremote' failed")


def test_a_remote_that_is_not_a_repository_says_why(repo: Path, tmp_path: Path) -> None:
    """git ends a failed fetch with advice; the error kept only its last line
    ("failed: and the repository exists.") and dropped the cause."""
    nowhere = tmp_path / "nowhere.git"
    git("remote", "add", "origin", str(nowhere), cwd=repo)
    out = gm("sync", cwd=repo)
    assert out.returncode == 8
    (line,) = out.stderr.strip().splitlines()
    assert line.startswith(
        f"error: git fetch from 'origin' failed: fatal: '{nowhere}' does not appear to be "
        "a git repository; fatal: Could not read from remote repository.; hint: ")
    assert "and the repository exists" not in line


@pytest.mark.skipif(shutil.which("ssh") is None, reason="no ssh client here")
def test_an_ssh_remote_that_refuses_says_what_ssh_said(repo: Path) -> None:
    """A review: ssh's own line ("ssh: connect to host ... refused") has no fatal:
    prefix, and only git's "Could not read from remote repository." was kept."""
    git("remote", "add", "origin", "ssh://127.0.0.1:1/x.git", cwd=repo)
    out = gm("sync", cwd=repo, env={"GIT_SSH_COMMAND": "ssh -o BatchMode=yes -o ConnectTimeout=5"})
    assert out.returncode == 8
    assert "ssh: connect to host 127.0.0.1 port 1" in out.stderr, out.stderr


def test_host_that_rejects_custom_refs_gets_a_clear_error(team: dict[str, Path]) -> None:
    a = team["a"]
    hook = a.parent / "remote.git" / "hooks" / "pre-receive"
    hook.write_text("#!/bin/sh\nwhile read old new ref; do case $ref in refs/heads/*|refs/tags/*) ;; "
                    "*) echo \"custom refs are not allowed: $ref\" >&2; exit 1;; esac; done\n")
    hook.chmod(0o755)
    ok(gm("add", "a memory", cwd=a))
    out = gm("push", cwd=a)
    assert out.returncode == 9
    line = out.stderr.strip().splitlines()[-1]
    assert line.startswith("error: 'origin' rejected refs/memory/alice-")
    assert "hint: this host refuses refs outside refs/heads and refs/tags" in line


# -- the same flow over a real network transport ------------------------------------


@pytest.fixture
def daemon(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    base = tmp_path / "served"
    base.mkdir()
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen(
        ["git", "daemon", "--reuseaddr", "--export-all", "--enable=receive-pack",
         f"--base-path={base}", "--listen=127.0.0.1", f"--port={port}", str(base)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                time.sleep(0.05)
        yield f"git://127.0.0.1:{port}", base
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_sync_over_git_daemon(tmp_path: Path, daemon: tuple[str, Path],
                              monkeypatch: pytest.MonkeyPatch) -> None:
    no_env_identity(monkeypatch)
    url, base = daemon
    bare = base / "remote.git"
    team = make_team(tmp_path, url=f"{url}/remote.git", bare=bare)
    a, b, c = team["a"], team["b"], team["c"]
    mid = ok(gm("add", "the network flow works over git://", cwd=a)).stdout.strip()
    ok(gm("sync", cwd=a))
    ok(gm("sync", cwd=b))
    ok(gm("invalidate", mid, "--reason", "checked", cwd=b))
    ok(gm("add", "bob was here too", cwd=b))
    ok(gm("sync", cwd=b))
    for clone in (c, a):
        ok(gm("sync", cwd=clone))
        assert texts(clone, "bob") == ["bob was here too"]
        assert texts(clone, "network flow", "--all") == ["the network flow works over git://"]
        assert texts(clone, "network flow") == []
    assert dump(a) == dump(b) == dump(c)


# -- convergence under random interleavings ----------------------------------------

from hypothesis import HealthCheck, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from hypothesis.stateful import (  # noqa: E402
    RuleBasedStateMachine,
    initialize,
    rule,
    run_state_machine_as_test,
)

WORDS = ["cache", "deploy", "tests", "schema", "queue", "port", "lint", "build"]


class Team(RuleBasedStateMachine):
    """Random add / invalidate / forget / sync on three clones; then everyone converges."""

    root: Path

    def __init__(self) -> None:
        super().__init__()
        import tempfile

        self.tmp = Path(tempfile.mkdtemp(dir=Team.root))
        self.clones = make_team(self.tmp)
        self.ids: list[str] = []

    def _store(self, who: str) -> gitmem.Store:
        return gitmem.open(self.clones[who])

    @initialize()
    def everyone_remembers_something(self) -> None:
        for who in "abc":
            self.add(who, ["build"])

    @rule(who=st.sampled_from("abc"), words=st.lists(st.sampled_from(WORDS), min_size=1, max_size=3))
    def add(self, who: str, words: list[str]) -> None:
        with self._store(who) as s:
            self.ids.append(s.add(" ".join(words) + f" by {who}", force=True).id)

    @rule(who=st.sampled_from("abc"), pick=st.integers(0, 1000), forget=st.booleans())
    def retire(self, who: str, pick: int, forget: bool) -> None:
        if not self.ids:
            return
        target = self.ids[pick % len(self.ids)]
        with self._store(who) as s:
            try:
                (s.forget if forget else s.invalidate)(target)
            except gitmem.UnknownId:
                pass  # this clone has not seen it yet

    @rule(who=st.sampled_from("abc"))
    def sync(self, who: str) -> None:
        with self._store(who) as s:
            s.sync()

    def teardown(self) -> None:
        try:
            for who in "abcab":
                self.sync(who)
            dumps = {}
            for who in "abc":
                with self._store(who) as s:
                    s.refresh()
                    dumps[who] = s.projection.dump()
                    order = [h.id for h in s.recall(" ".join(WORDS), k=100, include_retired=True)]
                    dumps[who] += "\n".join(order)
            assert dumps["a"] == dumps["b"] == dumps["c"]
        finally:
            shutil.rmtree(self.tmp, ignore_errors=True)


def test_random_histories_converge(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    no_env_identity(monkeypatch)
    Team.root = tmp_path
    run_state_machine_as_test(
        Team,
        settings=settings(max_examples=20, stateful_step_count=15, deadline=None,
                          suppress_health_check=list(HealthCheck)),
    )


def test_rekey_moves_every_unpushed_op_of_every_own_partition(
    team: dict[str, Path], tmp_path: Path
) -> None:
    """Two authors in one copied clone: nothing is lost, whichever partition conflicts."""
    a = team["a"]
    ok(gm("add", "m0 shared before the copy", cwd=a))
    ok(gm("sync", cwd=a))
    copy = tmp_path / "a-copy2"
    shutil.copytree(a, copy)
    ok(gm("add", "a1 from the original", cwd=a))
    ok(gm("sync", cwd=a))
    ok(gm("add", "b1 in the copy", cwd=copy))
    ok(gm("add", "b2 in the copy by another address", cwd=copy,
          env={"GIT_AUTHOR_NAME": "Alice Work", "GIT_AUTHOR_EMAIL": "alice@work.example"}))
    assert gm("sync", cwd=copy).returncode == 10
    report = json.loads(ok(gm("rekey", "--json", cwd=copy)).stdout)["data"]
    assert report["moved_ops"] == 2 and len(report["backups"]) == 2
    ok(gm("sync", cwd=copy))
    ok(gm("sync", cwd=a))
    everything = ["a1 from the original", "b1 in the copy", "b2 in the copy by another address",
                  "m0 shared before the copy"]
    assert texts(a, "the copy original shared before address") == everything
    assert texts(copy, "the copy original shared before address") == everything
    # The original keeps writing its old partition: the copy follows, loses nothing.
    ok(gm("add", "a2 later in the original", cwd=a))
    ok(gm("sync", cwd=a))
    ok(gm("sync", cwd=copy))
    assert "a2 later in the original" in texts(copy, "later original")
    assert texts(copy, "b2", "--mode", "lexical") == ["b2 in the copy by another address"]
