"""Sync against what others control: remote names and URLs, refs a teammate pushes,
and a remote's state (stop 34's adversarial run, /tmp/adv34). Real bare remotes,
real git push and fetch."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from conftest import git, gm, ok


def _one_line(out: str) -> str:
    lines = [line for line in out.strip().splitlines() if line]
    assert len(lines) == 1, out
    assert "Traceback" not in out
    return lines[0]


def _refused_as_option(out: subprocess.CompletedProcess[str], marker: Path) -> str:
    """The one line a remote that git would read as an option is refused with (exit 2),
    the command it names never run."""
    assert out.returncode == 2, out.stderr
    assert not marker.exists()
    return _one_line(out.stderr)


def test_a_remote_that_is_an_option_never_reaches_git_as_one(team: dict[str, Path]) -> None:
    """'--upload-pack=<command>' as the remote ran the command (sync, pull, push)."""
    a = team["a"]
    ok(gm("add", "a memory to push", cwd=a))
    for command, option in (("sync", "--upload-pack"), ("pull", "--upload-pack"),
                            ("push", "--receive-pack")):
        marker = a.parent / f"pwned-{command}"
        line = _refused_as_option(gm(command, "--", f"{option}=touch {marker}", cwd=a), marker)
        assert "is not a remote name or URL" in line and "hint:" in line


def test_a_remote_from_config_that_is_an_option_is_refused(team: dict[str, Path]) -> None:
    a = team["a"]
    marker = a.parent / "pwned-config"
    git("config", "branch.main.remote", f"--upload-pack=touch {marker}", cwd=a)
    line = _refused_as_option(gm("sync", cwd=a), marker)
    assert "branch.main.remote" in line and "git config --unset branch.main.remote" in line


def test_credentials_in_a_remote_url_are_never_printed(team: dict[str, Path]) -> None:
    a = team["a"]
    url = "https://bob:ghp_SECRETTOKEN1234567890abcdef@127.0.0.1:9/r.git"
    out = gm("push", url, cwd=a)  # nothing written yet: said without the token
    assert out.returncode == 0 and "SECRETTOKEN" not in out.stdout + out.stderr
    ok(gm("add", "a memory to push", cwd=a))
    for command in ("sync", "pull", "push"):
        out = gm(command, url, "--json", cwd=a) if command != "push" else gm(command, url, cwd=a)
        assert out.returncode == 8, out.stderr
        assert "SECRETTOKEN" not in out.stdout + out.stderr, command
        assert "127.0.0.1:9/r.git" in out.stdout + out.stderr
    # A password holding a raw "@" or "/" (git reads up to the last "@"), a token in
    # the query string, and the remote from config (git's own words are repeated).
    for other in ("https://bob:tok@SECRETTOKEN@127.0.0.1:9/r.git",
                  "https://bob:a/SECRETTOKEN@127.0.0.1:9/r.git",
                  # A quote or a space in it ended the URL the message pattern found
                  # (a review: the rest of the password was printed, twice).
                  "https://bob:pa'ss\"SECRETTOKEN@127.0.0.1:9/r.git",
                  "https://bob:pa ss SECRETTOKEN@127.0.0.1:9/r.git",
                  "https://127.0.0.1:9/r.git?private_token=glpat-SECRETTOKEN",
                  # An scp-like remote whose user part holds a password (git reads
                  # the user as the host, and said the rest back).
                  "bob:SECRETTOKEN@127.0.0.1:r.git",
                  "bob:Zq8/SECRETTOKEN@127.0.0.1:team/r.git",  # a token holding "/"
                  "bob:p@SECRETTOKEN@127.0.0.1:team/r.git"):  # ... or "@"
        git("config", "remote.pushDefault", other, cwd=a)
        for args in (["push"], ["pull", other]):
            out = gm(*args, cwd=a)
            assert out.returncode == 8, out.stderr
            assert "SECRETTOKEN" not in out.stdout + out.stderr, (other, out.stderr)


def test_a_remote_url_with_a_line_end_is_refused_without_its_password(
        team: dict[str, Path]) -> None:
    """A review: a URL read from a CRLF file ends in "\r"; refused as no remote, it
    was printed with a password holding a quote or a space."""
    a = team["a"]
    for url in ('https://bob:pa"ssSECRETTOKEN@127.0.0.1:9/r.git\r',
                "https://bob:pa ssSECRETTOKEN@127.0.0.1:9/r.git\n"):
        for args in (["sync", url, "--json"], ["sync", url]):
            out = gm(*args, cwd=a)
            assert out.returncode != 0 and "Traceback" not in out.stderr
            assert "SECRETTOKEN" not in out.stdout + out.stderr, (url, out.stdout, out.stderr)
            assert "127.0.0.1:9/r.git" in out.stdout + out.stderr


def test_a_named_remote_keeps_its_password_out_of_gits_words(team: dict[str, Path]) -> None:
    """A review: with an scp-like URL holding a password configured as origin, 'sync'
    and 'push origin' printed git's "'hunter2@host:repo.git' does not appear to be a
    git repository": only a URL given on the command line was scrubbed."""
    a = team["a"]
    fake = a.parent / "fakessh"  # runs the remote command here, as sshd would there
    fake.write_text('#!/bin/sh\nfor last; do :; done\nexec sh -c "$last"\n')
    fake.chmod(0o755)
    git("remote", "set-url", "origin", "bob:SECRETTOKEN@host:repo.git", cwd=a)
    ok(gm("add", "a memory to push", cwd=a))
    env = {"GIT_SSH_COMMAND": str(fake)}
    for args in (["sync"], ["push", "origin"], ["pull"]):
        out = gm(*args, cwd=a, env=env)
        assert out.returncode == 8, out.stderr
        said = out.stdout + out.stderr
        assert "SECRETTOKEN" not in said and "does not appear to be a git repository" in said, said


def test_a_stale_lock_on_the_remote_is_not_blamed_on_the_host(team: dict[str, Path]) -> None:
    """A receive-pack killed mid-update leaves refs/memory/<p>.lock on the remote: the
    push is refused there until it is removed, and the old hint said the host refuses
    refs/memory/* (run a second sync: the same happened with two syncs at once)."""
    a = team["a"]
    ok(gm("add", "first memory", cwd=a))
    ok(gm("sync", cwd=a))
    ok(gm("add", "second memory", cwd=a))
    remote = a.parent / "remote.git"
    (partition,) = [line.split()[1] for line in git(
        "for-each-ref", "--format=%(objectname) %(refname)", "refs/memory/",
        cwd=remote).stdout.splitlines()]
    lock = remote / (partition + ".lock")
    lock.write_text("")
    out = gm("push", cwd=a)
    assert out.returncode == 8, out.stderr
    line = _one_line(out.stderr)
    assert "could not update" in line and ".lock" in line
    assert "refuses refs outside" not in line
    lock.unlink()
    ok(gm("push", cwd=a))


def test_ids_with_a_trailing_newline_are_skipped_on_replay(team: dict[str, Path]) -> None:
    """'^...$' let one trailing newline through: a supersedes, confirm target, agent
    name or anchor commit ending in "\\n" was accepted, and then referred to nothing
    (``show`` listed a supersede that retired nothing)."""
    import json

    import craft

    a, b = team["a"], team["b"]
    ok(gm("add", "alice: the staging db is read only on fridays", cwd=a))
    ok(gm("sync", cwd=a))
    target = json.loads(ok(gm("list", "--json", cwd=a)).stdout)["data"]["memories"][0]["id"]
    head = git("rev-parse", "HEAD", cwd=a).stdout.strip()
    who = craft.author("mallory")
    part = craft.partition(who.email)
    base = {"v": 1, "author": {"name": who.name, "email": who.email}, "partition": part}
    lines = [
        {**base, "op": "add", "clock": 5, "at": 1768471200, "supersedes": [target + "\n"],
         "memory": {"kind": "note", "text": "mallory: supersedes through a newline"}},
        {**base, "op": "add", "clock": 6, "at": 1768471201,
         "memory": {"kind": "note", "text": "mallory: an agent with a newline", "by": "agent:x\n"}},
        {**base, "op": "add", "clock": 7, "at": 1768471202,
         "memory": {"kind": "note", "text": "mallory: anchored by a newline",
                    "anchors": {"commit": head + "\n"}}},
        {**base, "op": "confirm", "clock": 8, "at": 1768471203, "target": target + "\n"},
    ]
    craft.push_flood(b, [json.dumps(line).encode() for line in lines])
    ok(gm("sync", "--json", cwd=a))
    status = json.loads(ok(gm("status", "--json", cwd=a)).stdout)["data"]
    assert status["skipped_total"] == 4, status
    texts = [m["text"] for m in json.loads(ok(gm("list", "--json", cwd=a)).stdout)["data"]["memories"]]
    assert texts == ["alice: the staging db is read only on fridays"]


def test_a_thousand_filters_are_refused_in_one_line(team: dict[str, Path]) -> None:
    """1,000 --tag filters passed SQLite's expression limit: "internal error ... this is
    a bug" (a plain SQLite error read as a damaged projection)."""
    a = team["a"]
    ok(gm("add", "a memory with a tag", "--tag", "t1", cwd=a))
    many = [arg for i in range(1000) for arg in ("--tag", f"t{i}")]
    for command in (["recall", "memory"], ["list"]):
        out = gm(*command, *many, cwd=a)
        assert out.returncode == 2, out.stderr
        line = _one_line(out.stderr)
        assert "too many --tag values (1000); the limit is 64" in line
    ok(gm("recall", "memory", *many[:128], cwd=a))  # 64 tags: as before
    same = ["--about", "x"] * 1000  # one value, repeated: each was a clause too
    out = gm("list", *same, cwd=a)
    assert out.returncode == 2 and "too many --about values (1000)" in _one_line(out.stderr)


def test_a_partition_named_with_our_clone_id_by_someone_else_blocks_nothing(
        team: dict[str, Path]) -> None:
    """Clone ids are public (they end every partition name): a teammate pushing
    'mallory-0badc0de-<Bob's id>' made every pull of Bob's report a partition
    conflict and every sync fail, and 'rekey' only until the next such push."""
    import json

    import craft

    a, b, c = team["a"], team["b"], team["c"]
    ok(gm("add", "bob says deploy with make deploy", cwd=b))
    ok(gm("sync", cwd=b))
    cid = (b / ".git" / "mem" / "clone-id").read_text().strip()
    squat = f"refs/memory/mallory-0badc0de-{cid}"
    line = craft.add_op("mallory", 1, "deploys go straight to prod on fridays")
    tip = craft.commit_packs(a, [line + b"\n"])[-1]
    craft.set_ref(a, squat, tip)
    git("push", "-q", "origin", f"{squat}:{squat}", cwd=a)
    ok(gm("add", "carol: the cache is flushed nightly at 2am", cwd=c))
    ok(gm("sync", cwd=c))
    ok(gm("add", "bob second note about the linter config", cwd=b))
    out = gm("sync", "--json", cwd=b)
    assert out.returncode == 0, out.stderr
    envelope = json.loads(out.stdout)
    assert any("never wrote" in w and "mallory-0badc0de" in w for w in envelope["warnings"])
    texts = [m["text"] for m in json.loads(ok(gm("list", "--json", cwd=b)).stdout)["data"]["memories"]]
    assert "carol: the cache is flushed nightly at 2am" in texts  # the pull went through
    assert "deploys go straight to prod on fridays" not in texts  # not taken as ours
    assert git("for-each-ref", squat, cwd=b).stdout == ""
    # Said on a pull, not on every read (a plain fetch with the memory refspec brings
    # the squat moved again; then reads).
    ok(gm("init", "--fetch-refspec", cwd=b))
    more = craft.add_op("mallory", 2, "deploys go straight to prod on saturdays")
    tip = craft.commit_packs(a, [more + b"\n"], parent=tip)[-1]
    craft.set_ref(a, squat, tip)
    git("push", "-q", "origin", f"{squat}:{squat}", cwd=a)
    git("fetch", "-q", "origin", cwd=b)
    for command in (["list", "--json"], ["status", "--json"]):
        assert not any("never wrote" in w for w in json.loads(
            ok(gm(*command, cwd=b)).stdout)["warnings"]), command
    remote = a.parent / "remote.git"
    pushed = git("for-each-ref", "--format=%(refname)", "refs/memory/", cwd=remote).stdout
    assert sum(1 for r in pushed.split() if r.startswith("refs/memory/bob")) == 1
    assert git("rev-parse", f"refs/memory/{json.loads(out.stdout)['data']['pushed'][0]['partition']}",
               cwd=remote).stdout.strip() == git(
        "rev-parse", f"refs/memory/{json.loads(out.stdout)['data']['pushed'][0]['partition']}",
        cwd=b).stdout.strip()


def test_one_ref_a_clone_cannot_store_does_not_stop_every_sync(team: dict[str, Path]) -> None:
    """A teammate pushed a partition name too long for the file system, or 'p' beside
    'p/x' (a file and a folder at once): the one fetch of refs/memory/* failed on
    every clone, and no sync went through ('check the remote's name or URL')."""
    import json

    import craft

    a, b = team["a"], team["b"]
    ok(gm("add", "alice: lint with ruff", cwd=a))
    ok(gm("sync", cwd=a))
    ok(gm("sync", cwd=b))
    line = craft.add_op("mallory", 1, "mallory: hello")
    tip = craft.commit_packs(a, [line + b"\n"])[-1]
    remote = a.parent / "remote.git"
    git("push", "-q", "origin", f"{tip}:refs/memory/dfpair", cwd=a)
    # Written into packed-refs by hand (a file name that long cannot be a loose ref):
    # what a host holds once someone pushed them. No "sorted" trait: git sorts it.
    packed = remote / "packed-refs"
    kept = [ln for ln in (packed.read_text().splitlines() if packed.exists() else [])
            if not ln.startswith("#")]
    long_name = "refs/memory/mallory-" + "m" * 280
    packed.write_text("\n".join([*kept, f"{tip} {long_name}", f"{tip} refs/memory/dfpair/x"])
                      + "\n")
    assert len(git("ls-remote", str(remote), "refs/memory/*", cwd=a).stdout.splitlines()) == 4
    ok(gm("add", "alice: deploy on tuesdays", cwd=a))
    for clone in (a, b):
        out = gm("sync", "--json", cwd=clone)
        assert out.returncode == 0, out.stderr
        warnings = json.loads(out.stdout)["warnings"]
        assert any("left out 2 ref(s)" in w and "cannot store" in w for w in warnings), warnings
    texts = [m["text"] for m in json.loads(ok(gm("list", "--json", cwd=b)).stdout)["data"]["memories"]]
    assert "alice: deploy on tuesdays" in texts  # the pull went through
    tracked = git("for-each-ref", "--format=%(refname)", "refs/memory-remotes/", cwd=b).stdout
    assert "refs/memory-remotes/origin/dfpair\n" in tracked + "\n"  # a name like any other
    assert "dfpair/x" not in tracked and "mmmm" not in tracked


@pytest.mark.parametrize("how", ["blob:none", "tree:0", "read-first"])
def test_a_partial_clone_gets_the_memory_blobs_the_filter_left_out(tmp_path: Path,
                                                                    how: str) -> None:
    """'git clone --filter=blob:none' (or tree:0): git fetches a missing object when a
    command of its own needs it, libgit2 (replay) never does, so every op was skipped
    as a missing blob and recall found nothing, however often one synced; and ops a
    read skipped before a sync fetched their blobs stayed skipped ("read-first": a
    plain 'git fetch' with the memory refspec, then a read, then 'git mem sync')."""
    import json

    import craft
    from conftest import make_team

    team = make_team(tmp_path)
    a = team["a"]
    remote = tmp_path / "remote.git"
    git("config", "uploadpack.allowFilter", "true", cwd=remote)
    git("config", "uploadpack.allowAnySHA1InWant", "true", cwd=remote)
    for i in (1, 2, 3):
        ok(gm("add", f"memory number {i} about the build uses make target t{i}", cwd=a))
    ok(gm("set", "db.engine", "postgres", cwd=a))
    ok(gm("sync", cwd=a))
    # A memory commit that also carries a big file: never fetched (only ops.jsonl is).
    import pygit2

    repo = pygit2.Repository(str(a))
    line = craft.add_op("alice", 90, "alice: a memory beside a big file")
    tb = repo.TreeBuilder()
    tb.insert("ops.jsonl", repo.create_blob(line + b"\n"), pygit2.enums.FileMode.BLOB)
    junk = repo.create_blob(os.urandom(3 * 1024 * 1024))
    tb.insert("junk.bin", junk, pygit2.enums.FileMode.BLOB)
    sig = pygit2.Signature("Alice", "alice@example.com", 1768471200, 0)
    tip = repo.create_commit(None, sig, sig, "pack\n", tb.write(), [])
    extra = f"refs/memory/{craft.partition('alice@example.com')}"
    git("push", "-q", "origin", f"{tip}:{extra}", cwd=a)
    partial = tmp_path / "partial"
    flt = "tree:0" if how == "tree:0" else "blob:none"
    git("clone", "-q", f"--filter={flt}", f"file://{remote}", str(partial), cwd=tmp_path)
    git("config", "user.name", "Dee", cwd=partial)
    git("config", "user.email", "dee@example.com", cwd=partial)
    if how == "read-first":
        ok(gm("init", "--fetch-refspec", cwd=partial))
        git("fetch", "-q", "origin", cwd=partial)
        skipped = json.loads(ok(gm("status", "--json", cwd=partial)).stdout)["data"]
        assert skipped["skipped_total"] > 0  # what the read could not read yet
    ok(gm("sync", cwd=partial))
    status = json.loads(ok(gm("status", "--json", cwd=partial)).stdout)["data"]
    assert status["skipped_total"] == 0, status["skipped"]
    assert ok(gm("get", "db.engine", cwd=partial)).stdout.strip().startswith("postgres")
    texts = [m["text"] for m in json.loads(ok(gm("list", "--json", cwd=partial)).stdout)["data"]["memories"]]
    assert len(texts) == 5
    missing = git("rev-list", "--objects", "--missing=print", "--all", cwd=partial).stdout
    assert f"?{junk}" in missing.split()  # the big file was never asked for


def test_a_look_alike_name_never_hides_the_real_partition(team: dict[str, Path]) -> None:
    """With the fetch by name (one unstorable ref on the remote forces it), names equal
    but for case were taken once, the one whose commit id sorted first: a teammate
    mined a look-alike of Alice's partition to sort first and Alice's notes stopped
    reaching anyone (Alice's own sync listed her partition as left out)."""
    import json

    import craft

    a, b = team["a"], team["b"]
    ok(gm("add", "alice: lint with ruff", cwd=a))
    ok(gm("sync", cwd=a))
    ok(gm("sync", cwd=b))
    (real,) = [r.split("/", 2)[2] for r in git(
        "for-each-ref", "--format=%(refname)", "refs/memory/", cwd=a).stdout.split()]
    remote = a.parent / "remote.git"
    line = craft.add_op("mallory", 1, "mallory: hello")
    for attempt in range(400):  # a commit whose id sorts before every other: mined
        tip = craft.commit_packs(a, [line + b"\n" * (attempt + 1)])[-1]
        if tip < "08":
            break
    git("push", "-q", "origin", f"{tip}:refs/memory/{real.upper()}", cwd=a)
    git("push", "-q", "origin", f"{tip}:refs/memory/zz", cwd=a)
    packed = remote / "packed-refs"
    kept = [ln for ln in (packed.read_text().splitlines() if packed.exists() else [])
            if not ln.startswith("#")]
    packed.write_text("\n".join([*kept, f"{tip} refs/memory/zz/x"]) + "\n")
    ok(gm("add", "alice: deploys freeze on thursday", cwd=a))
    ok(gm("sync", cwd=a))
    out = gm("sync", "--json", cwd=b)
    assert out.returncode == 0, out.stderr
    assert not any(real in w for w in json.loads(out.stdout)["warnings"])
    texts = [m["text"] for m in json.loads(ok(gm("list", "--json", cwd=b)).stdout)["data"]["memories"]]
    assert "alice: deploys freeze on thursday" in texts


def test_a_remote_named_like_an_option_is_never_probed(repo: Path) -> None:
    """A read in a clone with no memory asks the remote whether it holds some
    (ls-remote): a remote named '--upload-pack=<command>' in git config ran the command."""
    marker = repo.parent / "pwned-probe"
    git("config", f"remote.--upload-pack=touch {marker};false.url",
        str(repo.parent / "nowhere.git"), cwd=repo)
    ok(gm("status", cwd=repo))
    ok(gm("recall", "anything", cwd=repo))
    assert not marker.exists()


def test_a_tracked_link_out_of_the_tree_is_named_as_a_link(repo: Path) -> None:
    """'about g' on a tracked symlink to /dev/zero said "outside the repository", which
    the user, looking at g in the tree, could not make sense of."""
    (repo / "g").symlink_to("/dev/zero")
    git("add", "g", cwd=repo)
    for args in (["about", "g"], ["add", "g streams zeros", "--path", "g"]):
        out = gm(*args, cwd=repo)
        assert out.returncode == 2, out.stderr
        line = _one_line(out.stderr)
        assert "'g' is a symbolic link to /dev/zero, outside the repository" in line
