"""The remembered git config (oplog/gitconfig.py) per work tree, and believed
only from a file of our own: real repositories, real ``git worktree add``,
real config files, real chown."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from conftest import GIT_MEM, git, gm
from test_discover_owner import NOBODY, foreign, needs_root  # noqa: F401 (a fixture)

OLD = time.time() - 3600

# -- believed only from a file of our own ----------------------------------------------


def _settings(repo: Path) -> dict[str, str]:
    code = ("import json, sys, gitmem; s = gitmem.open(sys.argv[1]); "
            "print(json.dumps(s.log.settings()))")
    proc = subprocess.run([sys.executable, "-c", code, str(repo)], capture_output=True,
                          text=True, check=True)
    out: dict[str, str] = json.loads(proc.stdout)
    return out


def _planted(repo: Path) -> Path:
    """The remembered config with gitmem.extractor planted in it, its
    fingerprint intact (what another user who can write .git/mem could do)."""
    git("config", "gitmem.minScore", "0.3", cwd=repo)
    for p in (repo / ".git" / "config", Path(os.environ["HOME"]) / ".gitconfig"):
        if p.exists():
            os.utime(p, (OLD, OLD))
    assert _settings(repo) == {"gitmem.minscore": "0.3"}
    cache = repo / ".git" / "mem" / "gitconfig.json"
    assert cache.stat().st_mode & 0o777 == 0o600  # written for its owner only
    entry = json.loads(cache.read_text())
    entry["settings"]["gitmem.extractor"] = "sh -c 'id > PWNED'"
    cache.write_text(json.dumps(entry))
    os.chmod(cache, 0o600)
    return cache


def test_a_remembered_config_writable_by_others_is_not_believed(repo: Path) -> None:
    cache = _planted(repo)
    # Control: a file of our own, mode 0600, is believed (the fingerprint holds).
    assert _settings(repo).get("gitmem.extractor") == "sh -c 'id > PWNED'"
    _planted(repo)
    os.chmod(cache, 0o666)
    assert "gitmem.extractor" not in _settings(repo)
    _planted(repo)
    os.chmod(cache, 0o620)  # group-writable too
    assert "gitmem.extractor" not in _settings(repo)


@needs_root
def test_a_remembered_config_owned_by_another_user_is_not_believed(repo: Path) -> None:
    cache = _planted(repo)
    os.chown(cache, NOBODY, NOBODY)
    assert "gitmem.extractor" not in _settings(repo)
    assert _settings(repo) == {"gitmem.minscore": "0.3"}  # git was asked


@needs_root
def test_a_trusted_foreign_repository_still_ignores_its_planted_cache(
        foreign: tuple[Path, Path]) -> None:
    """safe.directory trusts the repository's config, as git does; a cache file
    its owner wrote is still never believed (s25: the planted extractor ran)."""
    repo, mine = foreign
    git("config", "--global", "--add", "safe.directory", str(repo), cwd=mine)
    for p in (repo / ".git" / "config", Path(os.environ["HOME"]) / ".gitconfig"):
        os.utime(p, (OLD, OLD))
    assert gm("status", cwd=mine).returncode == 0
    assert "gitmem.extractor" not in _settings(mine)
    cache = repo / ".git" / "mem" / "gitconfig.json"
    entry = json.loads(cache.read_text())  # remembered by us: its fingerprint holds
    entry["settings"]["gitmem.extractor"] = "sh -c 'id > PWNED'"
    cache.write_text(json.dumps(entry))
    os.chown(cache, NOBODY, NOBODY)
    os.chmod(cache, 0o644)
    assert "gitmem.extractor" not in _settings(mine)


# -- linked worktrees: each its own identity and settings --------------------------------

def _env_without_identity() -> dict[str, str]:
    return {k: v for k, v in os.environ.items()
            if k not in ("GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL")}


def test_each_linked_worktree_has_its_own_identity_and_settings(repo: Path,
                                                                tmp_path: Path) -> None:
    """s01: with extensions.worktreeConfig, worktree B's user.name was ignored
    (the remembered config of the main worktree answered for it)."""
    env = _env_without_identity()
    git("config", "--global", "user.name", "Alice A", cwd=repo)
    git("config", "--global", "user.email", "alice@example.com", cwd=repo)
    git("config", "extensions.worktreeConfig", "true", cwd=repo)
    wt = tmp_path / "wt-b"
    git("worktree", "add", "-q", str(wt), cwd=repo)
    git("config", "--worktree", "user.name", "Bob B", cwd=wt)
    git("config", "--worktree", "user.email", "bob@example.com", cwd=wt)
    git("config", "--worktree", "gitmem.minScore", "0.99", cwd=wt)
    home = Path(os.environ["HOME"])
    for p in (repo / ".git" / "config", repo / ".git" / "worktrees" / "wt-b" / "config.worktree",
              home / ".gitconfig"):
        os.utime(p, (OLD, OLD))
    assert "Bob B" in git("var", "GIT_AUTHOR_IDENT", cwd=wt, env=env).stdout

    def add(where: Path, text: str) -> None:
        proc = subprocess.run([GIT_MEM, "add", text], cwd=where, env=env, capture_output=True,
                              text=True)
        assert proc.returncode == 0, proc.stderr

    add(repo, "alpha memory added in the main worktree about deploys")
    add(wt, "beta memory added in worktree b about caching layers")
    add(repo, "gamma memory added in the main worktree about queues")
    add(wt, "delta memory added in worktree b about the build cache")
    log = subprocess.run([GIT_MEM, "log"], cwd=repo, env=env, capture_output=True,
                         text=True).stdout
    by_text = {line.split()[-1]: line for line in log.splitlines()}
    authors = {word: ("Bob B" if "Bob B" in line else "Alice A" if "Alice A" in line else "?")
               for word, line in by_text.items()}
    assert authors == {"deploys": "Alice A", "layers": "Bob B", "queues": "Alice A",
                       "cache": "Bob B"}, log
    assert _settings(wt).get("gitmem.minscore") == "0.99"
    assert "gitmem.minscore" not in _settings(repo)
    # Two remembered answers, one per worktree, neither overwriting the other.
    main_cache = repo / ".git" / "mem" / "gitconfig.json"
    wt_cache = repo / ".git" / "worktrees" / "wt-b" / "mem" / "gitconfig.json"
    stamps = (main_cache.stat().st_mtime_ns, wt_cache.stat().st_mtime_ns)
    for _ in range(2):
        assert _settings(wt).get("gitmem.minscore") == "0.99"
        assert "gitmem.minscore" not in _settings(repo)
    assert (main_cache.stat().st_mtime_ns, wt_cache.stat().st_mtime_ns) == stamps
    # git worktree remove takes the worktree's answer with it.
    git("worktree", "remove", "--force", str(wt), cwd=repo)
    assert not wt_cache.parent.exists()
