"""What this clone shares and has not shared: unpushed ops, memory on the remote.

Why this exists: memory that never leaves a clone helps nobody, and a new
clone does not know the team's memory exists until it runs ``git mem sync``
(plain ``git clone`` fetches branches and tags, not ``refs/memory/*``).
``status`` says how much of this clone's memory no remote has seen yet, and
reads in a clone that has none of the team's memory say once that the remote
holds some.

Cheap by construction: the unpushed count compares local refs with the
remote-tracking copies ``push``/``pull`` keep (no network). The remote probe
(one ``git ls-remote``, a few seconds at most, never prompting) runs only in
a clone with no memory from anyone else and no tracking refs for the remote,
at most once a day per remote; its answer is kept in ``.git/mem/``.

A front end with a time budget (a hook, the MCP server: ``catchup.within``)
never waits on the network: with no answer kept, or one older than a day, it
starts the probe in the background (detached, one at a time per clone: it
holds ``.git/mem/remote-probe.lock``; none where that lock cannot be taken;
and a process starts at most one a minute) and says what the
kept answer says, if anything; a later session reads what the probe found. The user's own reads
(``git mem recall``, ``status``) still probe in the foreground.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import Any

from .. import hashes, ops
from ..oplog import REF_PREFIX
from . import cachefiles, locks
from .pool import Pool

PROBE_FILE = "remote-probe.json"
PROBE_LOCK = "remote-probe.lock"  # held by the one probe of a clone running
PROBE_EVERY = 24 * 3600  # seconds between two probes of one remote
PROBE_TIMEOUT = 3.0
# A process starts at most one background probe of a clone in this many seconds (a
# session-start asks twice: its briefing and its sync line; the probe it started
# may not hold its lock yet when the second asks).
RESTART_AFTER = 60.0
_started: dict[Path, float] = {}


def _push_remote(pool: Pool) -> str | None:
    try:
        names = list(pool.log.remote_urls())
    except OSError:
        return None
    if not names:
        return None
    try:
        return pool.log.default_remote(push=True)
    except Exception:  # noqa: BLE001 - any failure to decide means "no remote to name"
        return names[0]


def unpushed(pool: Pool) -> dict[str, Any] | None:
    """This clone's commits and ops the push remote has not got (as of the last
    fetch or push); None when there is no remote."""
    remote = _push_remote(pool)
    if remote is None:
        return None
    ns = pool.log.namespace(remote)
    own = pool.log.own_partitions()  # their refs looked up alone: not 20,000 others listed
    local = pool.log.tips([REF_PREFIX + name for name in own])
    tracking = pool.log.tips([f"refs/memory-remotes/{ns}/{name}" for name in own])
    commits = op_count = 0
    seen = bool(tracking) or pool.log.fetched(ns)
    for name in own:
        tip = local.get(REF_PREFIX + name)
        if tip is None:
            continue
        theirs = tracking.get(f"refs/memory-remotes/{ns}/{name}")
        for pack in pool.log.iter_packs(tip, [theirs] if theirs else None):
            commits += 1
            if pack.data is not None:
                op_count += len(ops.split_pack(pack.data))
    return {"remote": remote, "commits": commits, "ops": op_count, "fetched_before": seen}


def _probe_cache(pool: Pool) -> dict[str, Any]:
    data = cachefiles.load(pool.log.state_dir / PROBE_FILE, dict[str, Any])  # never blocks
    return data if isinstance(data, dict) else {}


def _save_probe(pool: Pool, cache: dict[str, Any]) -> None:
    path = pool.log.state_dir / PROBE_FILE
    tmp = path.with_suffix(f".{os.getpid()}.tmp")
    try:
        tmp.write_text(json.dumps(cache, sort_keys=True), encoding="utf-8")
        os.replace(tmp, path)
    except OSError:
        tmp.unlink(missing_ok=True)  # a read-only .git: probe again next time


def _target(pool: Pool, empty_only: bool) -> tuple[str, str] | None:
    """(remote, a digest of its URL) to probe, or None when there is nothing to ask: a
    clone with the team's memory (or, ``empty_only``, any memory), no remote, one
    fetched before. (A digest: the answer kept is for that URL, and a URL may hold a
    password, which must not lie in a file of .git: a review, rev38b.)"""
    if empty_only and pool.log.any_partitions():
        return None
    if pool.log.others_partition():
        return None  # this clone has the team's memory already
    try:
        urls = pool.log.remote_urls()
    except OSError:
        return None
    if not urls:
        return None
    remote = "origin" if "origin" in urls else sorted(urls)[0]
    if pool.log.fetched(pool.log.namespace(remote)):
        return None  # fetched before: nothing new to say
    return remote, hashes.blake2b(urls[remote].encode("utf-8", "surrogatepass"),
                                  digest_size=16).hexdigest()


def _kept(cache: dict[str, Any], remote: str, url: str) -> dict[str, Any] | None:
    """The answer kept for ``remote`` at ``url`` (however old), or None."""
    entry = cache.get(remote)
    if (isinstance(entry, dict) and isinstance(entry.get("at"), int)
            and entry.get("url") == url):
        return entry
    return None


def _fresh(entry: dict[str, Any] | None, now: int) -> bool:
    return entry is not None and 0 <= now - entry["at"] < PROBE_EVERY


def _in_budget(pool: Pool) -> bool:
    """A front end with a time budget is reading (``catchup.within`` set it up: a
    deadline, or a background catch-up holds the projection)."""
    return pool.budget or pool.skip_refresh


def remote_memory(pool: Pool, *, empty_only: bool = False,
                  wait: bool | None = None) -> dict[str, Any] | None:
    """``{"remote", "partitions", "checked_at"}`` when the remote holds memory this
    clone has never fetched; None otherwise (or when it cannot tell).

    ``empty_only`` (reads): look only in a clone with no memory at all, so a
    recall in a clone that writes its own memory never pays for the check.
    ``wait``: probe now when the kept answer is missing or a day old (the
    default, unless a front end with a time budget is reading); else start the
    probe in the background and answer from what is kept."""
    target = _target(pool, empty_only)
    if target is None:
        return None
    remote, url = target
    now = int(time.time())
    entry = _kept(_probe_cache(pool), remote, url)
    if not _fresh(entry, now):
        if wait if wait is not None else not _in_budget(pool):
            entry = _probe(pool, remote, url) or entry  # (None: another probe is asking)
        else:
            start_probe(pool)
    if entry is None:
        return None
    count = entry.get("partitions")
    if not isinstance(count, int) or count <= 0:
        return None
    return {"remote": remote, "partitions": count, "checked_at": entry["at"]}


def _probe(pool: Pool, remote: str, url: str, *,
           unlocked: bool = True) -> dict[str, Any] | None:
    """Ask the remote (one ``git ls-remote``) and keep the answer, holding the probe
    lock; the answer kept (by this probe or one that just finished), or None when
    another probe of this clone is running (it keeps the answer for the next read).
    ``unlocked``: ask anyway when the lock cannot be taken at all (its file cannot
    be opened); the user's own read does, a background probe does not."""
    with locks.held(pool.log.state_dir / PROBE_LOCK, unopened=unlocked) as free:
        if not free:
            return None
        cache = _probe_cache(pool)
        now = int(time.time())
        entry = _kept(cache, remote, url)
        if _fresh(entry, now):
            return entry  # a probe that held the lock before us has just answered
        found = pool.log.probe_memory(remote, PROBE_TIMEOUT)
        entry = {"at": now, "url": url, "partitions": found}
        cache[remote] = entry
        _save_probe(pool, cache)
        return entry


def start_probe(pool: Pool) -> bool:
    """Start the probe in the background, as the catch-up is started (detached, its
    own session); at most one runs per clone (the lock), and this process starts at
    most one a minute. None is started where the lock cannot be taken (its file
    cannot be opened: a read-only .git, a folder at its name), as none could hold
    it: eight hooks at once asked the remote eight times. True if one was started."""
    key = pool.log.state_dir
    last = _started.get(key)
    if last is not None and time.monotonic() - last < RESTART_AFTER:
        return False
    with locks.held(key / PROBE_LOCK, unopened=False) as free:
        if not free:
            return False  # one is running, or none can hold the lock
    _started[key] = time.monotonic()
    from .. import selfexec  # (here: a read that starts no probe never loads it)

    argv = selfexec.argv("gitmem.api.sharing", "--probe")
    return pool.log.spawn(argv)


def probe_in_background(path: str) -> int:
    """The background probe (``python -m gitmem.api.sharing --probe``, in the work
    tree): what a read would probe, kept for the next one. Says nothing, always 0."""
    try:
        pool = Pool(path)
        target = _target(pool, empty_only=False)
        if target is not None:
            _probe(pool, *target, unlocked=False)
    except Exception:  # noqa: BLE001 - nobody reads it: the next read probes again
        pass
    return 0


def hint(found: dict[str, Any]) -> str:
    """The one line a read prints when the remote holds memory this clone lacks."""
    return (f"'{found['remote']}' holds team memory ({found['partitions']} partition(s)) "
            f"this clone has not fetched: run 'git mem sync' once")


def note_remote_memory(pool: Pool) -> None:
    """On a read in a clone with no memory: say so once if the remote has some."""
    try:
        found = remote_memory(pool, empty_only=True)
    except Exception:  # noqa: BLE001 - a hint must never fail a read
        return
    if found is not None:
        pool.warn(hint(found))


if __name__ == "__main__" and sys.argv[1:] == ["--probe"]:
    sys.exit(probe_in_background(os.getcwd()))
