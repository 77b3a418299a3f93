"""What an agent's sessions were already shown: state the hooks keep under .git/mem.

The pre-tool hook shows the memories about a file once per file per session,
and the session-start briefing lists the memories whose code changed since the
last session (by what was stale then, not by commit dates: a teammate's week-old
commit pulled today is news). Both
need a little state between hook processes; it lives here, in small files
under ``.git/mem/hook-sessions/`` (one per session, the oldest pruned), and
losing it only means something is shown once more.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

from . import cachefiles
from .pool import Pool

SESSIONS_DIR = "hook-sessions"
KEEP_SESSIONS = 64  # session files kept; older ones are removed
MAX_KEYS = 2000  # keys remembered per session
LAST_STALE = "stale-at-last-session"


def first_time(pool: Pool, session: str, key: str) -> bool:
    """True the first time ``key`` is asked for in ``session`` (and remember it)."""
    folder = pool.log.state_dir / SESSIONS_DIR
    path = folder / (hashlib.sha256(session.encode("utf-8", "surrogatepass")).hexdigest()[:24]
                     + ".json")
    seen = _read_list(path)
    if key in seen:
        return False
    seen = [*seen[-(MAX_KEYS - 1):], key]
    try:
        folder.mkdir(parents=True, exist_ok=True)
        _write(path, json.dumps(seen))
        _prune(folder)
    except OSError:
        pass  # a read-only .git: shown again next time, never an error
    return True


def newly(pool: Pool, ids: list[str]) -> list[str]:
    """Those of ``ids`` (the memories whose code changed, at a session's start) that
    were not so at the previous session's start; records ``ids`` for the next one."""
    path = pool.log.state_dir / LAST_STALE
    before = set(_read_list(path))
    try:
        pool.log.state_dir.mkdir(parents=True, exist_ok=True)
        _write(path, json.dumps(ids[-MAX_KEYS:]))
    except OSError:
        pass
    return [i for i in ids if i not in before]


def _read_list(path: Path) -> list[str]:
    data = cachefiles.load(path, list[Any])  # never blocks, never raises
    return [x for x in data if isinstance(x, str)] if isinstance(data, list) else []


def _write(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def _prune(folder: Path) -> None:
    files = sorted(folder.glob("*.json"), key=lambda f: f.stat().st_mtime)
    for old in files[:-KEEP_SESSIONS]:
        old.unlink(missing_ok=True)
