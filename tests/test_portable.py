"""What must hold on Windows and odd PATHs too, checked on this machine.

No Windows machine runs this suite, so what can be checked from here is: every
module imports without ``fcntl`` (Windows has none), the lock takes the Windows
branch's calls when ``fcntl`` is missing (``msvcrt.locking``, stood in for by a
POSIX byte-range lock: the stand-in checks our calls, not Windows), and git is
never started from the work tree, which Windows searches before PATH.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from conftest import git, init_repo

ROOT = Path(__file__).parent.parent

# A process with no fcntl and an msvcrt whose locking() is a POSIX byte-range lock
# (the real fcntl, saved before it is hidden): what a Windows process has.
# (subprocess is imported first: it decides it runs on Windows by importing msvcrt.)
NO_FCNTL = textwrap.dedent("""
    import errno, fcntl as _real, subprocess, sys, types
    sys.modules["fcntl"] = None
    def locking(fd, mode, nbytes):
        if mode == 1:  # LK_NBLCK
            try:
                _real.lockf(fd, _real.LOCK_EX | _real.LOCK_NB, nbytes, 0, 1)
            except OSError as exc:
                raise PermissionError(errno.EACCES, "locked") from exc
        elif mode == 0:  # LK_UNLCK
            _real.lockf(fd, _real.LOCK_UN, nbytes, 0, 1)
        else:
            raise AssertionError(mode)
    sys.modules["msvcrt"] = types.SimpleNamespace(locking=locking, LK_NBLCK=1, LK_UNLCK=0)
""")


# And no POSIX-only os functions or flags (Python 3.11 on Windows has none of these).
NO_POSIX_OS = NO_FCNTL + textwrap.dedent("""
    import os
    for _name in ("set_blocking", "get_blocking", "fork", "killpg", "getpgid", "setsid",
                  "fchmod", "fchown", "uname", "geteuid", "getuid", "O_NONBLOCK",
                  "O_NOFOLLOW", "O_CLOEXEC", "O_DIRECTORY"):
        if hasattr(os, _name):
            delattr(os, _name)
""")


def _python(script: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, "-c", NO_FCNTL + textwrap.dedent(script), *args],
                          capture_output=True, text=True, env=env, check=False, timeout=120)


def test_every_module_imports_without_fcntl() -> None:
    # The op-log's appender imported fcntl at its top: on Windows every write failed.
    proc = _python("""
        import importlib, pkgutil, traceback, gitmem
        failed = []
        for info in pkgutil.walk_packages(gitmem.__path__, "gitmem."):
            if info.name.endswith("__main__"):
                continue
            try:
                importlib.import_module(info.name)
            except ImportError as exc:
                # Ours only: the MCP SDK imports fcntl under `sys.platform != "win32"`.
                where = traceback.extract_tb(exc.__traceback__)[-1].filename
                if "/gitmem/" in where.replace("\\\\", "/"):
                    failed.append(f"{info.name}: {exc} ({where})")
        print("\\n".join(failed))
    """)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == ""


def test_a_write_and_the_background_locks_work_without_fcntl(tmp_path: Path) -> None:
    repo = init_repo(tmp_path / "repo")
    lock = tmp_path / "probe.lock"
    proc = _python("""
        import subprocess, sys
        import gitmem
        from gitmem.api import locks
        repo, lock, script = sys.argv[1], sys.argv[2], sys.argv[3]
        with gitmem.open(repo) as store:
            store.add("tests live in spec/, run with make spec")
        with locks.held(__import__("pathlib").Path(lock)) as free:
            assert free is True
            # another process sees it held; this one, having released it, takes it again
            other = subprocess.run([sys.executable, "-c", script, lock], capture_output=True,
                                   text=True)
            print("other:", other.stdout.strip(), other.stderr.strip()[-300:])
        with locks.held(__import__("pathlib").Path(lock)) as free:
            print("again:", free)
    """, str(repo), str(lock), NO_FCNTL + textwrap.dedent("""
        import sys, pathlib
        from gitmem.api import locks
        with locks.held(pathlib.Path(sys.argv[1])) as free:
            print(free)
    """))
    assert proc.returncode == 0, proc.stderr
    assert "other: False" in proc.stdout
    assert "again: True" in proc.stdout
    log = git("log", "--format=%s", "--glob=refs/memory", cwd=repo).stdout
    assert log.strip(), "the add wrote no op"


def test_git_is_never_started_from_the_work_tree(tmp_path: Path) -> None:
    # A clone that commits an executable `git`, and a PATH with an empty entry (the
    # current directory, as Windows always searches first): the committed program ran
    # at the first command (its `git config --list`), with the user's rights.
    repo = init_repo(tmp_path / "repo")
    marker = tmp_path / "ran"
    fake = repo / "git"
    fake.write_text(f"#!/bin/sh\ntouch {marker}\nexit 1\n")
    fake.chmod(0o755)
    env = dict(os.environ, PYTHONPATH=str(ROOT), PATH=os.pathsep + os.environ["PATH"])
    proc = subprocess.run([sys.executable, "-m", "gitmem", "add", "deploys go through make ship"],
                          cwd=repo, env=env, capture_output=True, text=True, check=False,
                          timeout=120)
    assert not marker.exists(), "the work tree's git ran"
    assert proc.returncode == 0, proc.stderr


def test_the_everyday_commands_need_no_posix_only_os_function(tmp_path: Path) -> None:
    # The session-end capture read its transcript with os.set_blocking, which Python
    # 3.11 has only on POSIX: on Windows the capture failed with AttributeError.
    repo = init_repo(tmp_path / "repo")
    transcript = tmp_path / "t.jsonl"
    transcript.write_text('{"type": "user", "message": {"content": "run make spec"}}\n')
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    script = NO_POSIX_OS + textwrap.dedent("""
        import sys
        import gitmem
        from gitmem.capture import transcript
        repo, path = sys.argv[1], sys.argv[2]
        with gitmem.open(repo) as store:
            store.add("tests live in spec/, run with make spec")
            store.set("db.engine", "postgres")
            print("hits:", len(store.recall("how do I run the tests")))
            store.sync("origin")
            store.status()
            store.context()
        print("events:", len(transcript.read(path)))
    """)
    git("init", "-q", "--bare", str(tmp_path / "remote.git"), cwd=tmp_path)
    git("remote", "add", "origin", str(tmp_path / "remote.git"), cwd=repo)
    proc = subprocess.run([sys.executable, "-c", script, str(repo), str(transcript)],
                          capture_output=True, text=True, env=env, check=False, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "hits: 0" not in proc.stdout
    assert "events: 1" in proc.stdout
    pushed = git("for-each-ref", "refs/memory", cwd=tmp_path / "remote.git").stdout
    assert pushed.strip(), "the sync pushed nothing"


def test_a_git_that_went_away_is_looked_for_again(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    # The path found was kept per PATH string: once that git was removed (a shim
    # uninstalled, a tool manager switching versions) a long-lived process (the MCP
    # server, ui) failed every git call, though PATH still held a git (a review, rev39a).
    from gitmem.oplog import gitcmd

    shim = tmp_path / "shim"
    shim.mkdir()
    (shim / "git").write_text("#!/bin/sh\nexec git \"$@\"\n")
    (shim / "git").chmod(0o755)
    monkeypatch.setenv("PATH", f"{shim}{os.pathsep}{os.environ['PATH']}")
    assert gitcmd.git_binary() == str(shim / "git")
    (shim / "git").unlink()
    assert gitcmd.run_git("--version").returncode == 0


def test_the_extractor_is_never_started_from_the_work_tree(tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    # gitmem.extractor ran by bare name with the work tree as cwd: with a relative PATH
    # entry (a trailing ':'), a committed program of that name ran (a review, rev39a).
    from gitmem.capture import runner

    work = tmp_path / "work"
    work.mkdir()
    ran = tmp_path / "ran"
    (work / "mytool").write_text(f"#!/bin/sh\ntouch {ran}\n")
    (work / "mytool").chmod(0o755)
    monkeypatch.setenv("PATH", os.environ["PATH"] + os.pathsep)
    with pytest.raises(runner.RunnerFailed, match="not found"):
        runner.run("mytool", [], cwd=str(work))
    assert not ran.exists()


def test_the_ui_never_starts_a_browser_from_the_work_tree(tmp_path: Path) -> None:
    # webbrowser finds a browser with shutil.which and starts it by name: with an empty
    # PATH entry, a work tree's committed `www-browser` ran (a review, rev39a).
    work = tmp_path / "work"
    work.mkdir()
    ran = tmp_path / "ran"
    for name in ("www-browser", "xdg-open", "links", "lynx", "w3m", "elinks"):
        (work / name).write_text(f"#!/bin/sh\ntouch {ran}\n")
        (work / name).chmod(0o755)
    script = textwrap.dedent("""
        import types
        from gitmem import ui
        ui._open_when_up(types.SimpleNamespace(started=True, should_exit=False),
                         "http://127.0.0.1:9/", wait=1.0)
    """)
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY", "BROWSER")}
    env.update(PYTHONPATH=str(ROOT), PATH=os.pathsep + "/usr/bin" + os.pathsep + "/bin")
    proc = subprocess.run([sys.executable, "-c", script], cwd=work, env=env, capture_output=True,
                          text=True, check=False, timeout=60)
    assert proc.returncode == 0, proc.stderr[-1000:]
    assert not ran.exists(), "a browser committed in the work tree ran"
