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
"""

from __future__ import annotations

import json
import os
import time
from typing import Any

from .. import ops
from ..oplog import REF_PREFIX
from . import cachefiles
from .pool import Pool

PROBE_FILE = "remote-probe.json"
PROBE_EVERY = 24 * 3600  # seconds between two probes of one remote
PROBE_TIMEOUT = 3.0


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


def remote_memory(pool: Pool, *, empty_only: bool = False) -> dict[str, Any] | None:
    """``{"remote", "partitions", "checked_at"}`` when the remote holds memory this
    clone has never fetched; None otherwise (or when it cannot tell).

    ``empty_only`` (reads): look only in a clone with no memory at all, so a
    recall in a clone that writes its own memory never pays for the check."""
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
    cache = _probe_cache(pool)
    entry = cache.get(remote)
    now = int(time.time())
    fresh = (isinstance(entry, dict) and isinstance(entry.get("at"), int)
             and entry.get("url") == urls[remote] and 0 <= now - entry["at"] < PROBE_EVERY)
    if not fresh:
        found = pool.log.probe_memory(remote, PROBE_TIMEOUT)
        entry = {"at": now, "url": urls[remote], "partitions": found}
        cache[remote] = entry
        _save_probe(pool, cache)
    assert isinstance(entry, dict)
    count = entry.get("partitions")
    if not isinstance(count, int) or count <= 0:
        return None
    return {"remote": remote, "partitions": count, "checked_at": entry["at"]}


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
