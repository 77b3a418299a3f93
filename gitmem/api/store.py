"""``Store``: the one object every front end holds, over a project and a personal pool.

Why this exists: the CLI, the MCP server, the hooks and library users want one
handle with one method per user-level action. A ``Store`` owns the pool it was
opened on and, for a project, the person's own pool beside it; how the two are
read together (merged reads, their conflicts and forks, the pool an id
belongs to) is ``pools.py``. Each method is a thin call into the module that
does the job (``write``, ``reads``, ``facts``, ``dedup``, ``importer``,
``sync``, ``pools``, ...), with the docstring that documents the action.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from ..model import (Added, BootstrapReport, Confirmed, Exported, Conflict, Context, FactValue, Fork, Hit, Imported, InitReport,
                     Listing,
                     KeyHistory, OpInfo, Record, RefreshReport, RekeyReport, Retired, Shown,
                     SimilarPair, Skipped, Status, SyncReport)
from ..oplog import Oplog
# The job modules are imported in the methods that use them (reads too: an add
# never ranks): a fresh command is mostly import time (benchmarks/latency.py).
from . import settings
from .growth import Growth
from .pool import Pool, Progress
from .pools import Pools

T = TypeVar("T")

if TYPE_CHECKING:
    from ..projection import Projection


class Store(Growth):
    """One repository's memory: the op-log plus its local projection, and the
    person's own pool read beside it.

    ``one_shot``: this process ends with ``os._exit`` once its command is done
    (the ``git-mem`` program says so). Its SQLite connections are then left open
    until the exit instead of closed (``projection/connection.release``): closing
    the last one checkpoints and syncs the write-ahead log, ~5-15 ms of a command
    that wrote. A host that lives on (a library user, a server) leaves it False.
    """

    def __init__(self, path: str | os.PathLike[str] | None = None, *,
                 pool: str = "project", one_shot: bool = False) -> None:
        self._pool = Pool(path, name=pool, one_shot=one_shot)
        self._pools = Pools(self._pool)

    @classmethod
    def _over(cls, pool: Pool) -> Store:
        store = cls.__new__(cls)
        store._pool = pool
        store._pools = Pools(pool)
        return store

    # -- what front ends read and set on a store ----------------------------------

    @property
    def log(self) -> Oplog:
        return self._pool.log

    @property
    def cwd(self) -> Any:
        return self._pool.cwd

    @property
    def pool(self) -> str:
        """"project", or "personal" for the personal pool."""
        return self._pool.name

    @property
    def warnings(self) -> list[str]:
        return self._pool.warnings

    @property
    def last_refresh(self) -> RefreshReport | None:
        return self._pool.last_refresh

    @property
    def progress(self) -> Progress | None:
        return self._pool.progress

    @progress.setter
    def progress(self, value: Progress | None) -> None:
        self._pool.progress = value

    @property
    def projection(self) -> Projection:
        """The local projection (created on first use: writes never need it)."""
        return self._pool.projection

    def close(self) -> None:
        self._pools.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- the personal pool beside a project -----------------------------------------

    def personal(self) -> Store | None:
        """The personal pool merged into reads, or None (none yet, disabled with
        gitmem.personal=false, or this store is the personal pool)."""
        mine = self._pools.personal()
        return Store._over(mine) if mine is not None else None

    def remember_repository(self, other: Store) -> None:
        """Record in the personal pool ``other`` that the person works here."""
        from . import personal
        personal.remember_repository(self._pool, other._pool)

    # -- the projection --------------------------------------------------------------

    def refresh(self) -> RefreshReport:
        """Replay whatever moved in refs/memory/* since the last refresh."""
        return self._pool.refresh()

    def rebuild(self) -> RefreshReport:
        """Drop the projection's content and replay every partition."""
        return self._pool.rebuild()

    def within(self, seconds: float, fn: Callable[[Store], T]) -> tuple[T, bool]:
        """``fn(self)`` with its refresh bounded to ``seconds`` (hooks, MCP): its answer,
        and True if the projection was behind (a background catch-up is then started)."""
        from . import catchup
        return catchup.within(self._pool, seconds, lambda: fn(self))

    def catch_up(self) -> bool:
        """Refresh to the end in committed slices under the catch-up lock; False if
        another catch-up holds it."""
        from . import catchup
        return catchup.catch_up(self._pool)

    # -- writes ----------------------------------------------------------------------

    def add(
        self,
        text: str,
        *,
        kind: str | None = None,
        key: str | None = None,
        tags: Iterable[str] = (),
        about: Iterable[str] = (),
        paths: Iterable[str] = (),
        importance: float = 0.5,
        valid_from: str | int | None = None,
        valid_until: str | int | None = None,
        source: str | None = None,
        session: str | None = None,
        supersedes: Iterable[str] = (),
        redact: bool = False,
        force: bool = False,
        symbol: str | None = None,
        anchor: bool = True,
        by: str | None = None,
    ) -> Added:
        """Append a new memory to this clone's partition and return its id.

        ``paths`` anchor it to code (a file, a folder, or ``FILE:START-END``;
        ``symbol`` names what in the file it is about): each path's blob or tree
        at HEAD is recorded, so reads can say when that code changed. Paths the
        text names that exist in the work tree are anchored too, unless
        ``anchor`` is False. ``by``: "agent:NAME" when an agent writes it for
        the author (ranked below confirmed memories until a person or a
        second author confirms it), None for a person.

        The write gate runs first: a secret, prompt-injection phrasing or
        invisible Unicode refuses the write (GateRefused); with ``redact``
        secrets are masked instead (nothing else is ever let through).

        Then dedup: the same text (normalised) as a current memory of the same
        kind and key adds nothing: a confirm op reinforces that memory and
        ``duplicate_of`` names it. A near-duplicate (cosine at or above
        gitmem.duplicateThreshold, same kind) raises NearDuplicate unless
        ``force``; closer than gitmem.similarThreshold is stored and reported
        in ``similar``. A keyed memory replaces the key's current values.
        ``kind`` defaults to fact for a keyed memory (as ``set``), else note.
        """
        from . import write
        return write.add(
            self._pool, text, kind=kind, key=key, tags=tags, about=about, paths=paths,
            importance=importance, valid_from=valid_from, valid_until=valid_until,
            source=source, session=session, supersedes=supersedes, redact=redact, force=force,
            symbol=symbol, anchor=anchor, by=by,
        )

    def set(self, key: str, value: str, **options: Any) -> Added:
        """Record the current value of an attribute (``set db.engine cockroachdb``).

        A keyed fact: it supersedes the key's current value(s), which keep
        their place in ``history``; setting the value it already has only
        reinforces it. Takes the options of ``add`` (kind defaults to fact).
        """
        from . import write
        options.setdefault("kind", "fact")
        return self.add(value, key=write.key_for_set(key), **options)

    def confirm(self, memory_id: str, reason: str | None = None, *,
                outcome: str | None = None, by: str | None = None) -> Confirmed:
        """Reinforce a memory: it still holds. Salience counts confirmations.

        ``outcome`` ("worked" or "failed") records that a procedure was
        followed and how it went (``git mem skills`` counts them); a failure
        reinforces nothing."""
        from . import write
        return write.confirm(self._pools.owner(memory_id), memory_id, reason, outcome=outcome, by=by)

    def import_records(
        self, lines: Iterable[str | bytes], *, pack_size: int = 5000, redact: bool = False
    ) -> Imported:
        """Bulk-add memories from JSON lines, many ops per commit.

        Every line is validated before anything is written, so a bad line at
        the end does not leave half an import behind. Each pack (one commit)
        is atomic; the report lists the commits written.
        """
        from . import importer
        return importer.import_records(self._pool, lines, pack_size=pack_size, redact=redact)

    def invalidate(self, memory_id: str, reason: str | None = None) -> Retired:
        """Retire a memory: it leaves default recall but stays in history."""
        from . import write
        return write.retire(self._pools.owner(memory_id), memory_id, "invalidate", reason)

    def forget(
        self,
        memory_id: str,
        reason: str | None = None,
        *,
        purge: bool = False,
        dry_run: bool = False,
    ) -> Retired:
        """Tombstone a memory: its content is no longer returned by any clone.

        With ``purge``, also rewrite this clone's partition that holds the
        memory so its bytes are gone from the log (the tombstone is written
        first and stays); the next push replaces that one ref on the remote
        with a lease. Only the clone that wrote a memory can purge it
        (PurgeRefused otherwise). ``dry_run`` (with ``purge``) writes nothing
        and reports what would change.
        """
        from . import write
        if dry_run and not purge:
            from ..errors import InvalidInput

            raise InvalidInput("--dry-run only applies to --purge",
                               "preview a purge with: git mem forget ID --purge --dry-run")
        owner = self._pools.owner(memory_id)
        if not purge:
            return write.retire(owner, memory_id, "forget", reason)
        return write.purge(owner, memory_id, reason, dry_run=dry_run)

    # -- sync ------------------------------------------------------------------------

    def pull(self, remote: str | None = None) -> SyncReport:
        """Fetch every partition from ``remote`` and bring the others' forward."""
        from . import sync
        return sync.pull(self._pool, remote)

    def push(self, remote: str | None = None) -> SyncReport:
        """Push this clone's own partitions to ``remote`` (fast-forward only)."""
        from . import sync
        return sync.push(self._pool, remote)

    def sync(self, remote: str | None = None) -> SyncReport:
        """Pull, then push: after it, the remote and this clone hold the same memory."""
        from . import sync
        return sync.sync(self._pool, remote)

    def init(self, *, fetch_refspec: bool = False, remote: str | None = None,
             pre_push: bool | None = None) -> InitReport:
        """One-time set-up: this clone's id; optionally a memory fetch refspec, and the
        opt-in pre-push hook (True installs it, False removes it, None leaves it)."""
        from . import sync
        return sync.init(self._pool, fetch_refspec=fetch_refspec, remote=remote,
                         pre_push=pre_push)

    def rekey(self) -> RekeyReport:
        """Give this clone a new partition id, moving every op no remote has."""
        from . import sync
        return sync.rekey(self._pool)

    # -- reads -----------------------------------------------------------------------

    def resolve(self, prefix: str) -> str:
        """The full memory id for an id or unique prefix of 7+ hex digits."""
        return self._pool.resolve(prefix)

    def stale(self) -> list[Record]:
        """Current memories whose anchored code changed since they were written
        (changed, renamed or deleted), newest change first. ``confirm`` re-anchors
        one at HEAD; ``invalidate`` retires it."""
        from . import anchoring
        return anchoring.stale(self._pool)

    def about(self, path: str) -> list[Record]:
        """Current memories anchored to ``path`` or a folder above it (for a folder,
        also to anything inside it), best first."""
        from . import anchoring
        return anchoring.about(self._pool, path)

    def recall_diff(self, rev: str | None = None, *, k: int = 10) -> list[Hit]:
        """The memories that matter for a change, best first: tied to the paths it
        touches, then naming the identifiers its changed lines hold. ``rev`` None:
        the work tree against HEAD; else the work tree against ``rev``, or ``A..B``."""
        from . import reads
        return reads.for_diff(self._pool, rev, k)

    def bootstrap(self, *, yes: bool = False) -> BootstrapReport:
        """Propose a memory per bullet or short section of the instruction files the
        repository has (CLAUDE.md, AGENTS.md, Cursor and Copilot rules, CONTRIBUTING.md,
        ADRs); with ``yes``, add them (each through the write gate)."""
        from . import bootstrap
        return bootstrap.run(self._pool, yes=yes)

    def export(self, fmt: str = "agents-md", *, kinds: Sequence[str] = (),
               into: str | None = None) -> Exported:
        """Current procedures, conventions, decisions and keyed facts as text
        (``agents-md``, ``markdown`` or ``jsonl``); ``into`` writes the agents-md
        block into that file, replacing an earlier export's block."""
        from . import export
        return export.run(self._pool, fmt, list(kinds), into)

    def first_time(self, session: str, key: str) -> bool:
        """True the first time ``key`` is asked for in an agent ``session`` (hooks)."""
        from . import seen
        return seen.first_time(self._pool, session, key)

    def remote_memory(self) -> str | None:
        """The one line reads warn with ("'origin' holds team memory ... run 'git mem
        sync' once") when the remote holds memory and this clone holds none; None
        otherwise or when it cannot tell. Probes the remote at most once a day, for
        a few seconds at most (sharing.py), and never from a clone with memory of its
        own (a review: a session start then paid the probe, and counted the clone's
        own pushed partition as the team's). Under a front end's time budget (a hook,
        MCP) the probe runs in the background and this answers from the last one."""
        from . import sharing
        try:
            found = sharing.remote_memory(self._pool, empty_only=True)
        except Exception:  # noqa: BLE001 - a hint must never fail what asked for it
            return None
        return sharing.hint(found) if found is not None else None

    def newly_stale(self, ids: list[str]) -> list[str]:
        """Those of ``ids`` that were not stale at the previous agent session's start
        (and remember ``ids`` for the next one)."""
        from . import seen
        return seen.newly(self._pool, ids)

    def recall(
        self,
        query: str,
        *,
        k: int = 10,
        kinds: Sequence[str] = (),
        tags: Sequence[str] = (),
        include_retired: bool = False,
        mode: str = "hybrid",
        explain: bool = False,
        include_quarantined: bool = False,
        as_of: str | int | None = None,
        valid_at: str | int | None = None,
        record_use: bool = True,
        authors: Sequence[str] = (),
        about: Sequence[str] = (),
        paths: Sequence[str] = (),
        min_score: float | None = None,
        session: str | None = None,
    ) -> list[Hit]:
        """The memories that best answer ``query``, best first, from this pool
        and the personal pool beside it (and first, from ``session``'s working
        memory: its notes that share a word with the query, ``pool`` "session").

        ``mode`` picks the channels: ``hybrid`` (the default: lexical and
        vector fused), ``lexical`` (FTS5 only) or ``vector`` (embeddings only).
        ``as_of`` answers from what the log believed at that time, ``valid_at``
        from what was true in the world then (a date, or a git revision).
        ``include_retired`` adds retired, conflict-losing and faded memories.
        ``authors`` (any of them, name or email), ``about`` and ``paths`` (all
        of them) narrow like ``kinds`` and ``tags``. Each hit's ``score`` is its
        relevance, 0 to 1; hits below ``min_score`` are left out (None: the
        gitmem.minScore setting, else 0.05; 0 keeps every hit).
        """
        return self._pools.recall(
            query, k=k, kinds=kinds, tags=tags, include_retired=include_retired, mode=mode,
            explain=explain, include_quarantined=include_quarantined, as_of=as_of,
            valid_at=valid_at, record_use=record_use, authors=authors, about=about,
            paths=paths, min_score=min_score, session=session)

    def contested(self, hits: Sequence[Hit], *, as_of: str | int | None = None,
                  valid_at: str | int | None = None) -> dict[str, list[str]]:
        """Of ``hits`` (a recall's), the keyed values that win a conflict, each with
        the ids it wins over: shown as "in conflict" like get, keys and context do."""
        return self._pools.contested(hits, as_of, valid_at)

    def list_memories(
        self,
        *,
        kinds: Sequence[str] = (),
        tags: Sequence[str] = (),
        authors: Sequence[str] = (),
        about: Sequence[str] = (),
        paths: Sequence[str] = (),
        since: str | int | None = None,
        until: str | int | None = None,
        status: str = "active",
        include_quarantined: bool = False,
        limit: int = 50,
        offset: int = 0,
    ) -> Listing:
        """Browse memories, newest recorded first, one page at a time.

        Filters as ``recall``; ``since``/``until`` bound the recorded time (a
        date, datetime or git revision); ``status`` is active (current truth),
        retired (invalidated, superseded, losing values) or all. This pool
        only: the personal pool is listed with ``git mem list --personal``.
        """
        from . import reads
        return reads.browse(self._pool, kinds=kinds, tags=tags, authors=authors, about=about,
                            paths=paths, since=since, until=until, status=status,
                            include_quarantined=include_quarantined, limit=limit, offset=offset)

    def record_use(self, hits: Iterable[Hit]) -> None:
        """Note, locally, that these hits were put before someone: it renews their
        age for decay (docs/time.md). Faded or retired hits are never renewed
        by being looked at; only a confirmation brings them back."""
        from . import reads
        reads.record_use_of(self._pool, hits)

    def show(self, memory_id: str) -> Shown:
        """A memory's whole record, provenance and every op that touched it."""
        return self._pools.show(memory_id)

    def log_ops(self, limit: int | None = None, author: str | None = None) -> list[OpInfo]:
        """Ops in replay order; ``limit`` keeps the last N."""
        from . import reads
        return reads.log_ops(self._pool, limit, author)

    def skipped(self) -> list[Skipped]:
        from . import reads
        return reads.skipped(self._pool)

    def status(self) -> Status:
        """Partitions, op and memory counts, and the projection's state."""
        from . import reads
        return reads.status(self._pool)

    # -- time ------------------------------------------------------------------------

    def now(self) -> int:
        """The clock reads use: GITMEM_NOW, else GIT_COMMITTER_DATE (the clock writes
        use, so tests and replays can pin it), else the system clock."""
        return settings.now()

    def point_in_time(self, value: str | int | None, flag: str = "WHEN") -> int | None:
        """A point on either timeline: unix seconds, an ISO date or datetime (a date
        alone means the end of that day), or a git revision (its committer time)."""
        return settings.point_in_time(self.log, value, flag)

    # -- the context profile -----------------------------------------------------------

    def context(self, budget: int = 500, *, recent_days: int = 14) -> Context:
        """The profile an agent should read first, within ``budget`` tokens: persona,
        current keyed facts, procedures, the most salient notes, recent changes;
        the personal pool's memories first in each section, labelled.

        Deterministic for the same log and clock (the local use record is left
        out on purpose); everything in it is current truth, not quarantined.
        """
        return self._pools.context(budget, recent_days)

    # -- keyed facts and review ----------------------------------------------------------

    def get(self, key: str, *, as_of: str | int | None = None,
            valid_at: str | int | None = None) -> FactValue:
        """The value of ``key``: current, as the log believed it at ``as_of``, or as
        true in the world at ``valid_at``. Concurrent values are in ``conflicts``."""
        from . import facts
        return facts.get(self._pool, key, as_of=as_of, valid_at=valid_at)

    def keys(self, *, as_of: str | int | None = None,
             valid_at: str | int | None = None) -> list[FactValue]:
        """Every key's value (see ``get``), sorted by key."""
        from . import facts
        return facts.keys(self._pool, as_of=as_of, valid_at=valid_at)

    def history(self, key: str) -> KeyHistory:
        """Every value ``key`` ever had, oldest first, with who set it and when."""
        from . import facts
        return facts.history(self._pool, key)

    def conflicts(self) -> list[Conflict]:
        """Keys with more than one current value: concurrent sets not yet resolved."""
        from . import facts
        return facts.conflicts(self._pool)

    def forks(self) -> list[Fork]:
        """Memories replaced twice at once (two clones that had not synced each gave
        one a replacement): each fork's current replacements, the personal pool's too
        (recall marks its forks as the project's)."""
        return self._pools.forks()

    def forked(self, hits: Sequence[Hit]) -> dict[str, list[str]]:
        """Of ``hits`` (a recall's), those that are one of several current replacements
        of one memory, each with the others: shown as a fork, as ``conflicts`` lists it."""
        return self._pools.forked(hits)

    def similar(self, memory_id: str | None = None, *, since: str | int | None = None,
                limit: int = 50, kinds: Sequence[str] = ()) -> list[SimilarPair]:
        """Pairs of current memories of one kind that are close in meaning (cosine at
        or above gitmem.similarThreshold), most similar first, for review."""
        from . import dedup
        return dedup.similar(self._pool, memory_id, since=since, limit=limit, kinds=kinds)


def open(path: str | os.PathLike[str] | None = None, *,  # noqa: A001 - public name
         one_shot: bool = False) -> Store:
    """Open the git mem store of the repository containing ``path`` (default: cwd);
    ``one_shot`` as ``Store``'s."""
    return Store(path, one_shot=one_shot)


def open_personal(*, create: bool = True, one_shot: bool = False) -> Store:
    """Open the personal pool: a git repository of its own, outside any project,
    for what belongs to the person (preferences, habits), never to a team.
    It is created on first use; push it to a private remote with sync.

    Refused while GIT_DIR and friends point git elsewhere (git hooks and
    'git --git-dir' set them): the pool's writes would land in that repository.
    """
    from . import personal
    return Store._over(personal.open_pool(create=create, one_shot=one_shot))


def open_personal_from(path: str | os.PathLike[str] | None = None, *,
                       one_shot: bool = False) -> Store:
    """The personal pool, for a write made from ``path``: when that is inside a
    repository, the pool records (once) that the person works there. Refused
    when the pool would be that repository or lie inside it."""
    from . import personal
    return Store._over(personal.pool_from(path, one_shot=one_shot))
