"""Background jobs run the installed git mem, never a ``gitmem`` package that a cloned
repository holds (selfexec.py: ``python -P``)."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

from conftest import git, gm, ok
from gitmem import selfexec


def _booby_trapped(folder: Path, marker: Path) -> None:
    """A ``gitmem`` package in ``folder`` whose import leaves ``marker``."""
    (folder / "gitmem").mkdir(parents=True, exist_ok=True)
    (folder / "gitmem" / "__init__.py").write_text(
        f"open({str(marker)!r}, 'a').write('ran\\n')\nraise SystemExit(0)\n")


def test_a_job_started_in_a_folder_holding_a_gitmem_package_runs_the_installed_one(
        tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    _booby_trapped(tmp_path / "work", marker)
    proc = subprocess.run(selfexec.argv("gitmem", "--version"), cwd=tmp_path / "work",
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 0 and "version" in proc.stdout
    assert not marker.exists()


def test_the_session_start_probe_in_a_fresh_clone_runs_no_code_of_the_clone(
        team: dict[str, Path], tmp_path: Path) -> None:
    # (A review, rev38b: the background probe, started at the first session start of a
    # fresh clone, imported the clone's gitmem/__init__.py: python -m put the work tree
    # first on sys.path.)
    a, b, c = team["a"], team["b"], team["c"]
    marker = tmp_path / "ran"
    _booby_trapped(a, marker)
    git("add", "gitmem", cwd=a)
    git("commit", "-qm", "a package of the same name", cwd=a)
    git("push", "-q", "origin", "HEAD", cwd=a)
    ok(gm("add", "the build uses make", cwd=a))
    ok(gm("sync", cwd=a))
    fresh = tmp_path / "fresh"
    git("clone", "-q", str(a.parent / "remote.git"), str(fresh), cwd=tmp_path)
    payload = {"session_id": "s1", "cwd": str(fresh), "hook_event_name": "SessionStart",
               "source": "startup"}
    ok(gm("hook", "session-start", cwd=fresh, input=json.dumps(payload)))
    probed = fresh / ".git" / "mem" / "remote-probe.json"
    end = time.monotonic() + 15
    while time.monotonic() < end and not probed.exists():
        time.sleep(0.1)
    assert probed.exists()  # the probe ran (and answered)
    assert not marker.exists()
