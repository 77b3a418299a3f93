"""kill -9 at random moments of add, import, rebuild and sync: nothing half-written, nothing lost.

The default suite runs CRASH_TRIALS trials (24); set GITMEM_CRASH_TRIALS=100 (or more) for the
full run. After every trial: `git fsck --strict` is clean, every op whose command reported
success is in the log, and recall works.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import time
from pathlib import Path

import pytest

from conftest import GIT_MEM, git, gm

CRASH_TRIALS = int(os.environ.get("GITMEM_CRASH_TRIALS", "24"))


def _start(args: list[str], cwd: Path, stdin: bytes | None = None) -> subprocess.Popen[bytes]:
    return subprocess.Popen([GIT_MEM, *args], cwd=cwd, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)


@pytest.mark.slow
def test_kill_minus_nine_at_random_moments(tmp_path: Path, repo: Path) -> None:
    rnd = random.Random(20261121)
    bare = tmp_path / "remote.git"
    git("init", "-q", "--bare", str(bare), cwd=tmp_path)
    git("remote", "add", "origin", str(bare), cwd=repo)
    assert gm("add", "seed memory", cwd=repo).returncode == 0
    confirmed: set[str] = set()
    outcomes = {"completed": 0, "killed": 0}
    for trial in range(CRASH_TRIALS):
        kind = rnd.choice(["add", "add", "import", "rebuild", "sync"])
        stdin = None
        if kind == "add":
            args = ["add", f"trial {trial} memory about crash safety", "--json"]
        elif kind == "import":
            lines = [json.dumps({"text": f"trial {trial} imported note {i}"}) for i in range(400)]
            args, stdin = ["import", "-", "--pack-size", "50", "--json"], "\n".join(lines).encode()
        elif kind == "rebuild":
            args = ["rebuild", "--json"]
        else:
            args = ["sync", "--json"]
        proc = _start(args, repo)
        if stdin is not None:
            proc.stdin.write(stdin)  # type: ignore[union-attr]
        proc.stdin.close()  # type: ignore[union-attr]
        time.sleep(rnd.uniform(0.0, 0.35))
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            outcomes["killed"] += 1
        out = proc.stdout.read() if proc.stdout else b""  # type: ignore[union-attr]
        proc.wait()
        if proc.returncode == 0:
            outcomes["completed"] += 1
            data = json.loads(out)["data"]
            if kind == "add":
                confirmed.add(data["id"])
            elif kind == "import":
                confirmed.update(data["ids"])
        # After every trial: git is sound, confirmed ops are there, reads work.
        fsck = git("fsck", "--strict", cwd=repo, check=False)
        assert fsck.returncode == 0, (trial, kind, fsck.stderr)
        assert not [line for line in fsck.stdout.splitlines() if "error" in line.lower()]
        rec = gm("recall", "crash safety memory", "--json", cwd=repo)
        assert rec.returncode == 0, (trial, kind, rec.stderr)
    log = json.loads(gm("log", "--json", cwd=repo).stdout)["data"]["ops"]
    present = {o["id"] for o in log}
    assert confirmed <= present, confirmed - present
    print(f"\ncrash trials: {CRASH_TRIALS} ({outcomes}), {len(confirmed)} confirmed ops all present")
    assert outcomes["killed"] > 0
