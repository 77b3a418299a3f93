"""Many processes appending to one clone at once: every op lands, git stays sound."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from conftest import GIT_MEM, git, gm

WORKERS = 8
ADDS = 50


@pytest.mark.slow
def test_eight_concurrent_adders_lose_nothing(repo: Path) -> None:
    script = (
        f'for i in $(seq 1 {ADDS}); do "{GIT_MEM}" add "worker $W wrote item $i" '
        '|| echo "FAILED $W $i" >&2; done'
    )
    procs = [
        subprocess.Popen(["bash", "-c", script], cwd=repo, env={**__import__("os").environ,
                         "W": str(w)}, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for w in range(WORKERS)
    ]
    outputs = [p.communicate() for p in procs]
    for out, err in outputs:
        # Notes (a text close to another) are fine; nothing else may be said.
        assert [line for line in err.splitlines() if not line.startswith("note: ")] == []
        assert len(out.split()) == ADDS  # every add printed an id
    st = json.loads(gm("status", "--json", cwd=repo).stdout)["data"]
    assert st["ops"]["add"] == WORKERS * ADDS
    assert len(st["partitions"]) == 1  # one clone, one author: one partition
    texts = {o["summary"] for o in json.loads(gm("log", "--json", cwd=repo).stdout)["data"]["ops"]}
    assert texts == {f"worker {w} wrote item {i}" for w in range(WORKERS)
                     for i in range(1, ADDS + 1)}
    fsck = git("fsck", "--strict", cwd=repo, check=False)
    assert fsck.returncode == 0, fsck.stderr
    # The chain is linear: one commit per add, each with the previous tip as parent.
    ref = st["partitions"][0]["ref"]
    assert git("rev-list", "--count", ref, cwd=repo).stdout.strip() == str(WORKERS * ADDS)
    assert git("rev-list", "--merges", ref, cwd=repo).stdout == ""
    # Clocks along the chain only increase.
    clocks = [int(line.split()[-1]) for line in git(
        "log", "--format=%(trailers:key=Gitmem-Clock,valueonly)", ref, cwd=repo
    ).stdout.split()]
    assert clocks == sorted(clocks, reverse=True) and len(set(clocks)) == len(clocks)


def test_a_rebuild_beside_readers_warns_no_one(repo: Path) -> None:
    """`git mem rebuild` while recalls and status run in other processes. The rebuild
    deleted the files under them, so a reader started a build of its own and the
    rebuild found vectors it had not written ("vector file was damaged"), or a
    reader found the file half made. It now replays into the file in use, in one
    transaction: the readers answer from the old rows until it commits, and no one
    has anything to warn about."""
    lines = "\n".join(json.dumps({"text": f"note {i}: the deploy pipeline runs stage {i % 7}"})
                      for i in range(400))
    assert gm("import", "-", cwd=repo, input=lines).returncode == 0
    env = {**__import__("os").environ}
    rebuilds = subprocess.Popen(
        ["bash", "-c", f'for i in $(seq 1 12); do "{GIT_MEM}" rebuild >/dev/null || '
                       'echo "FAILED rebuild $i" >&2; done'],
        cwd=repo, env=env, stderr=subprocess.PIPE, text=True)
    readers = [subprocess.Popen(
        ["bash", "-c", f'while kill -0 {rebuilds.pid} 2>/dev/null; do '
                       f'"{GIT_MEM}" {command} >/dev/null || echo "FAILED {command}" >&2; done'],
        cwd=repo, env=env, stderr=subprocess.PIPE, text=True)
        for command in ("recall 'deploy stage 3' --limit 3", "status")]
    said = [rebuilds.communicate(timeout=600)[1]]
    said += [r.communicate(timeout=600)[1] for r in readers]
    assert said == ["", "", ""]
    st = json.loads(gm("status", "--json", cwd=repo).stdout)["data"]
    assert st["memories"]["active"] == 400 and st["projection"]["up_to_date"]
