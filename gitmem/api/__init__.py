"""The library facade: every front end (CLI, MCP, hooks, tests) calls this.

``gitmem.open(path)`` returns a ``Store``; each method is one user-level action
and returns plain data (``gitmem.model``). Reads refresh the projection from
the op-log first, so nothing stale is ever served; writes only append to the
log. Warnings (a rebuilt projection, skipped ops) collect in
``Store.warnings`` for the front end to show.

The package, one job per module (data flows down this list, never up):

    store.py      Store: the handle front ends hold, one thin method per action
    pools.py      a project pool + the personal pool beside it: merged reads, id owner
    write.py      add, set, confirm, invalidate, forget, purge (validate -> gate -> append)
    importer.py   bulk import from JSON lines (importcheck.py: every line checked first)
    dedup.py      duplicates on write, similar pairs for review
    reads.py      recall, show, log, status
    facts.py      keyed facts on both timelines, history, conflicts
    profile.py    the context profile's sections
    sync.py       pull, push, sync, init, rekey
    personal.py   where the personal pool lives and the rules that keep it apart
    pool.py       one pool: op-log + projection lifecycle, appends, settings
    validate.py   input checks;  gating.py  the write gate per field
    settings.py   the clock and gitmem.* git config;  embedding.py  embedder glue
    anchoring.py, seen.py, bootstrap.py, export.py   code-aware memory (docs/code.md)
    growth.py     Store methods for capture, inbox, sessions, links, skills (docs/growth.md):
                  capture.py, inbox.py, scratch.py, links.py, skills.py
    catchup.py, locks.py   answers within a time budget; one background job at a time
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..model import (
    Added,
    BootstrapReport,
    Confirmed,
    Conflict,
    Context,
    ContextItem,
    Exported,
    FactValue,
    Fork,
    Imported,
    InitReport,
    KeyHistory,
    PartitionInfo,
    PurgeRemote,
    PurgeReport,
    RekeyReport,
    Retired,
    Shown,
    SimilarPair,
    Status,
    SyncReport,
)
from .personal import PERSONAL_ENV, REPO_KEY, personal_dir
from .pool import BUILT_MARKER, CACHE_DIR, USAGE_NAME, Pool
from .settings import DUPLICATE_THRESHOLD, SIMILAR_THRESHOLD
from .store import Store, open, open_personal, open_personal_from

__all__ = [
    "Store", "Pool", "open", "open_personal", "open_personal_from", "personal_dir",
    "Added", "Confirmed", "Conflict", "Context", "ContextItem", "FactValue", "Fork", "Imported",
    "ImportRecord", "BootstrapReport", "Exported", "InitReport", "KeyHistory", "PartitionInfo", "PurgeRemote", "PurgeReport",
    "RekeyReport", "Retired", "Shown", "SimilarPair", "Status", "SyncReport",
    "PERSONAL_ENV", "REPO_KEY", "BUILT_MARKER", "CACHE_DIR", "USAGE_NAME",
    "DUPLICATE_THRESHOLD", "SIMILAR_THRESHOLD",
]


if TYPE_CHECKING:
    from .importcheck import ImportRecord


def __getattr__(name: str) -> Any:
    # The import schema loads with the import, not with every read.
    if name == "ImportRecord":
        from .importcheck import ImportRecord
        return ImportRecord
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
