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
import sys
import textwrap
from pathlib import Path

import pytest

import diskfill
from conftest import GIT_MEM, gm, git, ok, texts

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


# -- C: a full disk and a read-only .git under push, sync and rekey ---------------------

@pytest.fixture
def namespaces(tmp_path: Path) -> None:
    if not diskfill.can_unshare(tmp_path, tmpfs=True):
        pytest.skip("needs unshare -rm, tmpfs and bind mounts (user namespaces)")


# Runs in a private mount namespace: b's clone on a small tmpfs that it fills.
_FULL_DISK = diskfill.FILL_AND_FREE + textwrap.dedent('''
    import json, os, subprocess, sys
    mnt, bare, a, git_mem = sys.argv[1:5]
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", mnt], check=True)
    os.environ["TMPDIR"] = mnt
    b = os.path.join(mnt, "b")
    out = {}

    def run(name, *args, cwd=b):
        p = subprocess.run(args, cwd=cwd, capture_output=True, text=True)
        out[name] = [p.returncode, p.stdout, p.stderr]

    subprocess.run(["git", "clone", "-q", bare, b], check=True)
    subprocess.run(["git", "config", "user.name", "Bob Roe"], cwd=b, check=True)
    subprocess.run(["git", "config", "user.email", "bob@example.com"], cwd=b, check=True)
    run("setup sync", git_mem, "sync")
    run("setup add", git_mem, "add", "the full disk note about sprockets")
    # A teammate shares more while b's disk fills.
    run("a add", git_mem, "add", "the queue worker retries three times", cwd=a)
    run("a sync", git_mem, "sync", cwd=a)
    fill()
    run("push", git_mem, "push")
    run("remote after push", "git", "ls-remote", bare, "refs/memory/*")
    run("sync", git_mem, "sync")
    run("rekey", git_mem, "rekey")
    free()
    run("push again", git_mem, "push")
    run("sync again", git_mem, "sync")
    run("status", git_mem, "status", "--json")
    run("fsck", "git", "fsck", "--strict")
    print(json.dumps(out))
''')


def test_a_full_disk_under_push_sync_and_rekey_is_said_not_a_bug(
        team: dict[str, Path], tmp_path: Path, namespaces: None) -> None:
    a, _ = _shared(team)
    driver = tmp_path / "full_disk.py"
    driver.write_text(_FULL_DISK)
    mnt = tmp_path / "small"
    mnt.mkdir()
    proc = subprocess.run(["unshare", "-rm", sys.executable, str(driver), str(mnt),
                           str(tmp_path / "remote.git"), str(a), GIT_MEM],
                          capture_output=True, text=True, check=False, timeout=600)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    for name in ("setup sync", "setup add", "a add", "a sync"):
        assert out[name][0] == 0, (name, out[name])
    # The push reached the remote: said so, with what this clone could not record.
    code, stdout, err = out["push"]
    _quiet(subprocess.CompletedProcess([], code, stdout, err))
    assert code == 0, err
    assert "(new)" in stdout, stdout
    assert err.startswith("warning: pushed to 'origin', but this clone could not record it: "
                          "no space left on the device holding "), err
    assert "counts it as unpushed" in err and len(err.splitlines()) == 1, err
    assert out["remote after push"][1].count("refs/memory/") == 2, out["remote after push"]
    # A fetch that cannot write here is the disk's fault, not the remote's (was exit 8).
    for name in ("sync", "rekey"):
        code, stdout, err = out[name]
        _one_error(subprocess.CompletedProcess([], code, stdout, err), 13, "no space left")
        assert "remote's name or URL" not in err, (name, err)
    # Space again: the push is recorded, nothing is unpushed, nothing is corrupt.
    for name in ("push again", "sync again", "status", "fsck"):
        assert out[name][0] == 0, (name, out[name])
    assert out["push again"][2] == "" and "(up-to-date)" in out["push again"][1]
    unpushed = json.loads(out["status"][1])["data"]["unpushed"]
    assert unpushed["ops"] == 0, unpushed


def _ro(clone: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """git-mem with the clone's .git bind-mounted read-only (EROFS, even for root)."""
    script = 'mount --bind -o ro "$0/.git" "$0/.git" && cd "$0" && exec "$@"'
    return subprocess.run(["unshare", "-rm", "sh", "-c", script, str(clone), GIT_MEM, *args],
                          cwd=clone, capture_output=True, text=True, check=False, timeout=300)


def test_a_read_only_git_under_push_sync_and_rekey_is_said_not_a_bug(
        team: dict[str, Path], tmp_path: Path, namespaces: None) -> None:
    a, b = _shared(team)
    ok(gm("add", "the read-only note about the flux capacitor", cwd=b))
    ok(gm("add", "the queue worker retries three times", cwd=a))
    ok(gm("sync", cwd=a))
    # sync: the fetch cannot write the teammate's objects here.
    _one_error(_ro(b, "sync"), 14, "read-only file system")
    # push: it reaches the remote; this clone cannot record it, and says so.
    out = _ro(b, "push")
    _quiet(out)
    assert out.returncode == 0 and "(new)" in out.stdout, out.stderr
    assert "warning: pushed to 'origin', but this clone could not record it: cannot write " \
        in out.stderr and "read-only file system" in out.stderr, out.stderr
    ok(gm("sync", cwd=a))
    assert "the read-only note about the flux capacitor" in texts(a, "flux capacitor")
    _one_error(_ro(b, "rekey"), 14, "read-only file system")
    ok(gm("sync", cwd=b))  # writable again: everything works
    assert json.loads(ok(gm("status", "--json", cwd=b)).stdout)["data"]["unpushed"]["ops"] == 0


# -- B: this clone's own partition ref pointing at something that is not a commit -------

def _own_ref(clone: Path) -> str:
    cid = (clone / ".git" / "mem" / "clone-id").read_text().strip()
    refs = git("for-each-ref", "--format=%(refname)", "refs/memory/", cwd=clone).stdout.split()
    [ref] = [r for r in refs if r.endswith("-" + cid)]
    return ref


def _retarget(clone: Path, kind: str) -> str:
    """Point this clone's partition ref at a tag, blob, tree or missing object."""
    ref = _own_ref(clone)
    tip = git("rev-parse", ref, cwd=clone).stdout.strip()
    if kind == "tag":
        body = f"object {tip}\ntype commit\ntag t\ntagger x <x@e> 0 +0000\n\nm\n"
        oid = git("mktag", cwd=clone, input=body).stdout.strip()
    elif kind == "blob":
        oid = git("hash-object", "-w", "--stdin", cwd=clone, input="a blob\n").stdout.strip()
    elif kind == "tree":
        oid = git("rev-parse", f"{tip}^{{tree}}", cwd=clone).stdout.strip()
    else:
        oid = "0123456789abcdef0123456789abcdef01234567"
        (clone / ".git" / ref).write_text(oid + "\n")
        return oid
    git("update-ref", ref, oid, cwd=clone)
    return oid


@pytest.mark.parametrize("kind", ["tag", "blob", "tree", "missing"])
def test_a_partition_ref_that_is_not_a_commit_is_never_built_on_nor_pushed(
        team: dict[str, Path], tmp_path: Path, kind: str) -> None:
    a, b = _shared(team)
    ok(gm("add", "owls nest in the old barn behind the depot", cwd=b))
    ok(gm("sync", cwd=b))
    ok(gm("add", "the staging database is db-stage-2 on port 5433", cwd=b))  # not pushed yet
    ref = _own_ref(b)
    odd = _retarget(b, kind)
    bare = tmp_path / "remote.git"
    remote_before = git("for-each-ref", cwd=bare).stdout
    for args in (["add", "release builds are signed with the hardware key in vault 7"], ["push"], ["sync"]):
        line = _one_error(gm(*args, cwd=b), 10, f"partition {ref} points at {odd[:12]}",
                          "which is not a commit", "rekey")
        if kind == "tag":
            assert "git update-ref " in line, line
    assert git("rev-parse", ref, cwd=b).stdout.strip() == odd  # nothing built on it
    assert git("for-each-ref", cwd=bare).stdout == remote_before  # nothing spread
    if kind != "missing":  # (git itself cannot gc a repository whose ref names nothing)
        ok(git("fsck", "--strict", cwd=b, check=False))
        ok(git("gc", "-q", cwd=b, check=False))
    # The hint heals it: rekey keeps the odd object, and writing and sharing work again.
    rekey = json.loads(ok(gm("rekey", "--json", cwd=b)).stdout)["data"]
    assert len(rekey["backups"]) == (0 if kind == "missing" else 1)
    if kind == "tag":  # the op the tag wrapped, pushed nowhere, is moved, not lost
        assert rekey["moved_ops"] == 1
    ok(gm("add", "release builds are signed with the hardware key in vault 7", cwd=b))
    ok(gm("sync", cwd=b))
    ok(gm("sync", cwd=a))
    assert "owls nest in the old barn behind the depot" in texts(a, "owls barn")
    assert "release builds are signed with the hardware key in vault 7" in texts(
        a, "release builds signed")
    assert ("the staging database is db-stage-2 on port 5433" in texts(
        a, "staging database port")) == (kind == "tag")
    if kind != "missing":
        ok(git("fsck", "--strict", cwd=b, check=False))
    ok(git("fsck", "--strict", cwd=bare, check=False))


# -- D: a teammate's ref under this clone's partition name on the remote -----------------

def test_a_ref_that_blocks_our_partition_on_the_remote_is_named_with_how_to_remove_it(
        team: dict[str, Path], tmp_path: Path) -> None:
    a, b = _shared(team)
    c = team["c"]
    ok(gm("add", "owls nest in the old barn behind the depot", cwd=b))
    ok(gm("sync", cwd=b))
    ref = _own_ref(b)
    # The teammate moves b's partition one level down on the remote.
    git("fetch", "-q", "origin", f"{ref}:refs/tmp/v", cwd=a)
    git("push", "-q", "origin", f":{ref}", cwd=a)
    git("push", "-q", "origin", f"refs/tmp/v:{ref}/x", cwd=a)
    ok(gm("add", "release builds are signed with the hardware key in vault 7", cwd=b))
    for args in (["sync"], ["push"]):
        line = _one_error(gm(*args, cwd=b), 9, f"'origin' cannot store {ref}: it holds {ref}/x",
                          f"git push origin :{ref}/x")
        assert "refs outside refs/heads" not in line, line  # not the host's fault
    # The nested ref is nobody's partition: no clone takes it as one (it was
    # integrated as refs/memory/x before).
    ok(gm("sync", cwd=c))
    for clone in (b, c):
        refs = git("for-each-ref", "--format=%(refname)", "refs/memory/", cwd=clone).stdout
        assert "refs/memory/x\n" not in refs, refs
        assert gm("status", cwd=clone).stderr == ""
    # As the hint says: remove it, and everything flows again.
    git("push", "-q", "origin", f":{ref}/x", cwd=a)
    ok(gm("sync", cwd=b))
    ok(gm("sync", cwd=c))
    assert "release builds are signed with the hardware key in vault 7" in texts(
        c, "release builds signed")
    ok(git("fsck", "--strict", cwd=tmp_path / "remote.git", check=False))


def test_a_pull_that_cannot_move_our_refs_says_so(
        team: dict[str, Path], tmp_path: Path, namespaces: None) -> None:
    """The fetch lands (refs/memory-remotes is writable) but the teammate's partition
    cannot be taken into refs/memory: said with the typed error, never 'new: 1'."""
    a, b = _shared(team)
    ok(gm("add", "the note b already has", cwd=b))
    ok(gm("add", "the queue worker retries three times", cwd=a))
    ok(gm("sync", cwd=a))
    script = ('mount --bind -o ro "$0/.git/refs/memory" "$0/.git/refs/memory" '
              '&& cd "$0" && exec "$@"')
    out = subprocess.run(["unshare", "-rm", "sh", "-c", script, str(b), GIT_MEM, "sync"],
                         cwd=b, capture_output=True, text=True, check=False, timeout=300)
    _one_error(out, 14, "read-only file system")
    ok(gm("sync", cwd=b))  # writable again: the pull completes
    assert "the queue worker retries three times" in texts(b, "queue worker")
