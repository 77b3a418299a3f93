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
