"""forget --purge: the text leaves the git history of every clone that syncs.

Real git only: a bare remote and three clones (tests/test_sync.py's team),
real 'git push' and 'git fetch' run by git mem, and 'git log -p' to look for
the bytes the way a user would.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

import gitmem
import gitmem.ops
from conftest import dump, git, gm, ok, texts

SECRET = "the staging vpn password is hunter-zebra"




def partition_of(clone: Path) -> str:
    cid = (clone / ".git/mem/clone-id").read_text().strip()
    email = git("config", "user.email", cwd=clone).stdout.strip()
    return gitmem.ops.partition_name(email, cid)


def log_p(where: Path, *revs: str) -> str:
    """What 'git log -p' shows (every ref with --all), commit messages included."""
    return git("log", "-p", *(revs or ("--all",)), cwd=where).stdout


def refs(where: Path) -> dict[str, str]:
    out = git("for-each-ref", "--format=%(refname) %(objectname)", cwd=where).stdout
    return dict(line.split(" ", 1) for line in out.splitlines())  # type: ignore[misc]


def objects(where: Path) -> set[str]:
    """Every object id in the repository (loose and packed)."""
    out = git("cat-file", "--batch-all-objects", "--batch-check=%(objectname)", cwd=where).stdout
    return set(out.split())


def fsck_clean(where: Path) -> None:
    proc = git("fsck", "--strict", "--no-dangling", cwd=where, check=False)
    assert proc.returncode == 0 and "error" not in proc.stderr, proc.stderr


def forget(clone: Path, mid: str, *flags: str) -> dict:  # type: ignore[type-arg]
    return json.loads(ok(gm("forget", mid, "--json", *flags, cwd=clone)).stdout)["data"]


def add(clone: Path, text: str, env: dict[str, str] | None = None) -> str:
    """Add a memory; its full id."""
    return json.loads(ok(gm("add", text, "--json", cwd=clone, env=env)).stdout)["data"]["id"]


def seeded(team: dict[str, Path]) -> tuple[str, str, str]:
    """Alice writes three memories (the middle one a secret); everyone syncs."""
    a, b, c = team["a"], team["b"], team["c"]
    before = add(a, "the cache lives in redis")
    secret = add(a, SECRET)
    after = add(a, "the queue lives in rabbitmq")
    ok(gm("add", "bob says the build takes 4 minutes", cwd=b))
    ok(gm("add", "chen says lint runs in ci", cwd=c))
    for clone in (a, b, c, a, b, c):
        ok(gm("sync", cwd=clone))
    for clone in (a, b, c):
        assert "hunter-zebra" in log_p(clone)
    return before, secret, after


def test_purge_removes_the_text_from_the_log_and_from_every_clone_after_sync(
    team: dict[str, Path],
) -> None:
    a, b, c = team["a"], team["b"], team["c"]
    remote = a.parent / "remote.git"
    _, secret, _ = seeded(team)
    mine = partition_of(a)
    ref = f"refs/memory/{mine}"
    others = {r: t for r, t in refs(remote).items()
              if r.startswith("refs/memory/") and r != ref}
    assert len(others) == 2
    b_own = refs(b)[f"refs/memory/{partition_of(b)}"]

    remote_before = refs(remote)[ref]
    report = forget(a, secret, "--purge")
    purge = report["purge"]
    assert report["changed"] and report["status"] == "forgotten" and report["id"]
    assert purge["dry_run"] is False and purge["tombstone"] is True
    assert purge["partition"] == mine and purge["ops_removed"] == [secret]
    assert len(purge["commits_dropped"]) == 1  # the add commit held only the secret
    assert len(purge["commits_rewritten"]) == 1  # the later add (the tombstone: not listed)
    assert purge["remotes"] == [{"remote": "origin", "tip": refs(remote)[ref],
                                 "has_content": True,
                                 "next_push": "replace (force-with-lease)"}]
    assert refs(a)[ref] == purge["new_tip"] != purge["old_tip"]
    # Gone from the partition at once; the remote-tracking ref still holds it until the push.
    assert "hunter-zebra" not in log_p(a, ref)
    assert "hunter-zebra" in log_p(a)

    # Pull before push: the remote's pre-purge history is not a partition conflict.
    pulled = ok(gm("pull", "--json", cwd=a))
    assert json.loads(pulled.stdout)["data"]["conflicts"] == []
    assert "warning" not in gm("recall", "vpn", cwd=a).stderr

    pushed = json.loads(ok(gm("push", "--json", cwd=a)).stdout)["data"]["pushed"]
    assert pushed == [{"partition": mine, "status": "forced", "old": remote_before,
                       "new": purge["new_tip"]}]
    assert "hunter-zebra" not in log_p(a)
    assert "hunter-zebra" not in log_p(remote)
    assert refs(remote)[ref] == purge["new_tip"]
    # Only that one ref moved on the remote.
    assert {r: t for r, t in refs(remote).items()
            if r.startswith("refs/memory/") and r != ref} == others

    # Clones that already fetched it keep it until they sync (git history, honestly).
    assert "hunter-zebra" in log_p(c)
    for clone in (b, c):
        out = json.loads(ok(gm("sync", "--json", cwd=clone)).stdout)["data"]
        assert out["replaced"] == [mine] and out["conflicts"] == []
        assert "hunter-zebra" not in log_p(clone)
        assert refs(clone)[ref] == purge["new_tip"]
    assert refs(b)[f"refs/memory/{partition_of(b)}"] == b_own  # never touched

    for clone in (a, b, c):
        # The tombstone replicates (it stays in the log), the text is nowhere.
        forgets = [o for o in json.loads(ok(gm("log", "--json", cwd=clone)).stdout)["data"]["ops"]
                   if o["type"] == "forget"]
        assert [o["target"] for o in forgets] == [secret]
        assert "hunter-zebra" not in gm("recall", "staging vpn password zebra", "--all",
                                   "--json", cwd=clone).stdout
        assert "hunter-zebra" not in gm("show", secret, "--json", cwd=clone).stdout
        assert "hunter-zebra" not in gm("log", cwd=clone).stdout
        assert texts(clone, "lives", "--mode", "lexical") == ["the cache lives in redis",
                                            "the queue lives in rabbitmq"]
        fsck_clean(clone)
    fsck_clean(remote)
    assert dump(a) == dump(b) == dump(c)
    # After a purge a full rebuild agrees with the incremental projection.
    with gitmem.open(b) as s:
        s.refresh()
        incremental = s.projection.dump()
        s.rebuild()
        assert s.projection.dump() == incremental


def test_rewritten_commits_keep_authors_times_and_messages(team: dict[str, Path]) -> None:
    a = team["a"]
    _, secret, _ = seeded(team)
    ref = f"refs/memory/{partition_of(a)}"
    fmt = "--format=%an|%ae|%at|%cn|%ce|%ct|%B%x00"
    before = [e.strip() for e in git("log", fmt, ref, cwd=a).stdout.split("\0") if e.strip()]
    forget(a, secret, "--purge")
    after = [e.strip() for e in git("log", fmt, ref, cwd=a).stdout.split("\0") if e.strip()]
    assert len(after) == len(before) == 3
    # newest first: the tombstone (new), then the two kept adds, verbatim
    assert after[1:] == [e for e in before if "hunter-zebra" not in e]
    assert after[0].split("|", 6)[6].startswith(f"forget {secret[:12]}\n\nGitmem-Format: 1\nGitmem-Ops: 1\n")
    # Every kept pack is byte-identical: ids are hashes of the line bytes.
    shown = git("show", f"{ref}~1:ops.jsonl", cwd=a).stdout
    assert "rabbitmq" in shown and "hunter-zebra" not in shown


def test_a_commit_that_loses_some_lines_gets_a_neutral_message(team: dict[str, Path]) -> None:
    a = team["a"]
    lines = "\n".join(json.dumps({"text": t}) for t in
                      ["first imported note", SECRET, "third imported note"])
    imported = json.loads(ok(gm("import", "-", "--json", cwd=a, input=lines)).stdout)["data"]
    secret = imported["ids"][1]
    ok(gm("forget", secret, cwd=a))
    ref = f"refs/memory/{partition_of(a)}"
    purge = forget(a, secret, "--purge")["purge"]
    assert purge["tombstone"] is False  # already forgotten: no second tombstone
    assert len(purge["commits_rewritten"]) == 2 and purge["commits_dropped"] == []
    message = git("log", "-1", "--format=%B", f"{ref}~1", cwd=a).stdout
    assert message.startswith("purge: removed 1 op(s)\n\nGitmem-Format: 1\nGitmem-Ops: 2\n")
    pack = git("show", f"{ref}~1:ops.jsonl", cwd=a).stdout.splitlines()
    assert [gitmem.ops.op_id(line.encode()) for line in pack] == [imported["ids"][0],
                                                                  imported["ids"][2]]
    assert texts(a, "imported note", "--mode", "lexical") == ["first imported note", "third imported note"]
    assert "hunter-zebra" not in log_p(a)
    fsck_clean(a)


def test_dry_run_writes_nothing(team: dict[str, Path]) -> None:
    a = team["a"]
    _, secret, _ = seeded(team)
    refs_before, objects_before = refs(a), objects(a)
    report = forget(a, secret, "--purge", "--dry-run")
    assert report["id"] is None and report["changed"] is False and report["status"] == "active"
    purge = report["purge"]
    assert purge["dry_run"] is True and purge["new_tip"] is None and purge["tombstone"] is True
    assert purge["ops_removed"] == [secret]
    assert len(purge["commits_dropped"]) == 1 and len(purge["commits_rewritten"]) == 1
    assert purge["remotes"][0]["has_content"] is True
    assert purge["remotes"][0]["next_push"] == "replace (force-with-lease)"
    assert refs(a) == refs_before and objects(a) == objects_before
    assert not (a / ".git/mem/purges").exists()
    assert texts(a, "vpn password", "--mode", "lexical") == [SECRET]
    human = ok(gm("forget", secret, "--purge", "--dry-run", cwd=a)).stdout
    assert human.startswith("dry run: nothing written\nwould forget ")
    assert "origin holds it; next 'git mem push' or 'sync': replace (force-with-lease)" in human
    assert refs(a) == refs_before and objects(a) == objects_before


@pytest.mark.parametrize("alone", [True, False])
def test_dry_run_reports_what_the_real_run_does(repo: Path, alone: bool) -> None:
    """The dry run said "0 commit(s) rewritten" and the real run then "1": the
    tombstone written first was counted by the real run only."""
    secret = add(repo, SECRET)
    if not alone:
        add(repo, "the queue lives in rabbitmq")
    dry = forget(repo, secret, "--purge", "--dry-run")["purge"]
    human_dry = ok(gm("forget", secret, "--purge", "--dry-run", cwd=repo)).stdout
    done = forget(repo, secret, "--purge")["purge"]
    assert done["new_tip"] and dry["new_tip"] is None
    for key in ("partition", "old_tip", "ops_removed", "commits_rewritten", "commits_dropped",
                "tombstone", "remotes", "backups"):
        assert dry[key] == done[key], key
    assert len(done["commits_rewritten"]) == (0 if alone else 1)
    counts = human_dry.splitlines()[-1].split(": ", 1)[1]
    assert counts == (f"1 op(s) removed, {0 if alone else 1} commit(s) rewritten, 1 dropped")


def test_dry_run_needs_purge(team: dict[str, Path]) -> None:
    a = team["a"]
    mid = add(a, "a note")
    out = gm("forget", mid, "--dry-run", cwd=a)
    assert out.returncode == 2
    assert out.stderr.strip() == ("error: --dry-run only applies to --purge; hint: preview a "
                                  "purge with: git mem forget ID --purge --dry-run")


def test_purging_someone_elses_memory_is_refused(team: dict[str, Path]) -> None:
    a, b = team["a"], team["b"]
    _, secret, _ = seeded(team)
    refs_before, objects_before = refs(b), objects(b)
    out = gm("forget", secret, "--purge", "--json", cwd=b)
    assert out.returncode == 2
    err = json.loads(out.stdout)["error"]
    assert err["code"] == "purge_refused" and err["exit_code"] == 2
    assert "written by Alice Doe <alice@example.com> on partition " + partition_of(a) in err["message"]
    assert f"git mem forget {secret[:12]} --purge' in the clone that wrote it" in err["hint"]
    assert f"a tombstone still hides it in every clone that syncs: git mem forget {secret[:12]}" \
        in err["hint"]
    assert out.stderr.startswith("error: memory ")
    assert refs(b) == refs_before and objects(b) == objects_before  # nothing written
    with pytest.raises(gitmem.errors.PurgeRefused), gitmem.open(b) as s:
        s.forget(secret, purge=True, dry_run=True)


def test_lease_fails_when_the_remote_moved(team: dict[str, Path], tmp_path: Path) -> None:
    a = team["a"]
    remote = a.parent / "remote.git"
    _, secret, _ = seeded(team)
    ref = f"refs/memory/{partition_of(a)}"
    # A copy of the same .git pushes more on the same partition (remote moves ahead).
    copy = tmp_path / "a-copy"
    shutil.copytree(a, copy)
    ok(gm("add", "written in the copy", cwd=copy))
    ok(gm("push", cwd=copy))
    moved = refs(remote)[ref]
    everything_else = {r: t for r, t in refs(remote).items() if r != ref}

    forget(a, secret, "--purge")
    out = gm("push", cwd=a)
    assert out.returncode == 8
    assert f"error: 'origin' moved your partition {partition_of(a)} since this clone last " \
           "fetched it" in out.stderr
    assert "stale info" in out.stderr
    assert refs(remote)[ref] == moved  # rejected, not forced
    assert {r: t for r, t in refs(remote).items() if r != ref} == everything_else
    # After a pull the copy's commit shows up as what it is: a conflict, not old history.
    assert gm("pull", cwd=a).returncode == 10


def test_plain_non_fast_forward_is_still_rejected_after_a_purge(team: dict[str, Path]) -> None:
    """The lease is only for history the purge replaced: any other rewrite stays refused."""
    a = team["a"]
    remote = a.parent / "remote.git"
    _, secret, _ = seeded(team)
    ref = f"refs/memory/{partition_of(a)}"
    forget(a, secret, "--purge")
    ok(gm("push", cwd=a))
    pushed = refs(remote)[ref]
    git("update-ref", ref, f"{ref}~1", cwd=a)  # drop the tombstone commit by hand
    ok(gm("add", "something else", cwd=a))
    assert gm("push", cwd=a).returncode == 8
    assert refs(remote)[ref] == pushed


def test_purge_before_the_first_push_needs_no_lease(team: dict[str, Path]) -> None:
    a, b = team["a"], team["b"]
    ok(gm("add", "kept note", cwd=a))
    secret = add(a, SECRET)
    purge = forget(a, secret, "--purge")["purge"]
    assert purge["remotes"] == []
    pushed = json.loads(ok(gm("sync", "--json", cwd=a)).stdout)["data"]["pushed"]
    assert pushed[0]["status"] == "new"
    ok(gm("sync", cwd=b))
    assert "hunter-zebra" not in log_p(a) and "hunter-zebra" not in log_p(b)
    assert texts(b, "kept note", "--mode", "lexical") == ["kept note"]


def test_purge_on_another_own_partition_keeps_one_empty_commit(team: dict[str, Path]) -> None:
    """The memory is the only op of a partition of this clone (another address):
    the ref is kept on an empty commit, so other clones replace it too."""
    a, b = team["a"], team["b"]
    work = {"GIT_AUTHOR_NAME": "Alice Work", "GIT_AUTHOR_EMAIL": "alice@work.example"}
    secret = add(a, SECRET, work)
    ok(gm("add", "a note from the home address", cwd=a))
    ok(gm("sync", cwd=a))
    ok(gm("sync", cwd=b))
    purge = forget(a, secret, "--purge")["purge"]  # tombstone lands on the home partition
    cid = (a / ".git/mem/clone-id").read_text().strip()
    assert purge["partition"] == gitmem.ops.partition_name("alice@work.example", cid)
    assert len(purge["commits_dropped"]) == 1
    ref = f"refs/memory/{purge['partition']}"
    assert git("show", f"{ref}:ops.jsonl", cwd=a).stdout == ""
    assert git("log", "--format=%s", ref, cwd=a).stdout == "purge: removed 1 op(s)\n"
    ok(gm("sync", cwd=a))
    ok(gm("sync", cwd=b))
    for clone in (a, b):
        assert "hunter-zebra" not in log_p(clone)
        assert texts(clone, "home address", "--mode", "lexical") == ["a note from the home address"]
        fsck_clean(clone)


def test_rekey_backups_holding_the_memory_are_rewritten(
    team: dict[str, Path], tmp_path: Path
) -> None:
    a = team["a"]
    ok(gm("add", "shared before the copy", cwd=a))
    ok(gm("sync", cwd=a))
    copy = tmp_path / "a-copy"
    shutil.copytree(a, copy)
    ok(gm("add", "written in the original", cwd=a))
    ok(gm("sync", cwd=a))
    ok(gm("add", SECRET, cwd=copy))
    assert gm("sync", cwd=copy).returncode == 10
    backups = json.loads(ok(gm("rekey", "--json", cwd=copy)).stdout)["data"]["backups"]
    ok(gm("sync", cwd=copy))
    assert "hunter-zebra" in log_p(copy, backups[0])
    hits = json.loads(ok(gm("recall", "vpn password", "--json", "--mode", "lexical",
                            cwd=copy)).stdout)["data"]["hits"]
    assert [h["text"] for h in hits] == [SECRET]
    secret = hits[0]["id"]
    dry = forget(copy, secret, "--purge", "--dry-run")["purge"]
    assert dry["backups"] == backups
    assert "hunter-zebra" in log_p(copy, backups[0])
    done = forget(copy, secret, "--purge")["purge"]
    assert done["backups"] == backups
    assert "shared before the copy" in log_p(copy, backups[0])  # the rest is kept
    ok(gm("sync", cwd=copy))
    assert "hunter-zebra" not in log_p(copy)
    fsck_clean(copy)


def test_library_purge_keeps_the_projection_consistent(team: dict[str, Path]) -> None:
    a = team["a"]
    before, secret, after = seeded(team)
    with gitmem.open(a) as s:
        res = s.forget(secret[:10], purge=True)
        assert isinstance(res.purge, gitmem.api.PurgeReport)
        assert res.purge.ops_removed == [secret]
        assert [h.id for h in s.recall("lives in", k=10, include_retired=True)] \
            and secret not in [h.id for h in s.recall("vpn password hunter2", include_retired=True)]
        with pytest.raises(gitmem.UnknownId):
            s.show(secret)
        assert {s.show(before).memory.text, s.show(after).memory.text} == {
            "the cache lives in redis", "the queue lives in rabbitmq"}
        incremental = s.projection.dump()
        s.rebuild()
        assert s.projection.dump() == incremental
        assert "hunter-zebra" not in incremental
