"""The library facade: every front end (CLI, MCP, hooks, tests) calls this.

``gitmem.open(path)`` returns a ``Store``; each method is one user-level action
and returns plain data (``gitmem.model``). Reads refresh the projection from
the op-log first, so nothing stale is ever served; writes only append to the
log. Warnings (a rebuilt projection, skipped ops) collect in
``Store.warnings`` for the front end to show.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import msgspec

from . import ops
from .errors import (
    AmbiguousId,
    BareRepository,
    GitMemError,
    EmptyText,
    GateRefused,
    InvalidDate,
    InvalidInput,
    NearDuplicate,
    NoIdentity,
    NotARepository,
    PartitionConflict,
    PurgeRefused,
    UnknownId,
    UnknownKey,
)
from .model import Hit, OpInfo, Record, RefreshReport, Skipped
from .oplog import REF_PREFIX, Integrated, Oplog, Rewrite

if TYPE_CHECKING:
    from .projection import Projection
from .timefmt import iso, now_from_env, parse_date

T = TypeVar("T")
_HEX = re.compile(r"^[0-9a-f]+$")
_DATE_ONLY = re.compile(r"^\d{4}-?\d{2}-?\d{2}$")
CACHE_DIR = "cache"
BUILT_MARKER = "projection-built"
USAGE_NAME = "usage.sqlite3"  # local use counts (a salience signal), never pushed
USE_TOP = 3  # how many of a recall's hits count as used
PENDING_LIMIT = 64  # unembedded memories a writer compares itself (else it embeds them)
DAY = 86400
# Dedup on write (git config gitmem.duplicateThreshold / gitmem.similarThreshold).
# Calibrated for the shipped static embedder, whose cosines run high: at 0.92,
# 86% of LoCoMo's distinct turns would have a "near-duplicate"; at 0.97, 1.6%,
# and those are true rewordings (docs/recall.md, "Dedup on write").
DUPLICATE_THRESHOLD = 0.97
SIMILAR_THRESHOLD = 0.95
_NUMBER = re.compile(r"\d+(?:[.,:]\d+)*")


class Added(msgspec.Struct, kw_only=True):
    id: str  # the memory's id (the existing memory's, for a duplicate)
    kind: str
    partition: str
    commit: str
    clock: int
    recorded_at: str
    op: str = ""  # the op written: the add itself, or a confirm for a duplicate
    duplicate_of: str | None = None  # same text as this current memory: reinforced it
    superseded: list[str] = []  # memories this one replaced (--supersedes, or the key's values)
    similar: list[dict[str, object]] = []  # stored, but close to these: see 'git mem similar'


class Confirmed(msgspec.Struct, kw_only=True):
    id: str  # the confirm op's id
    target: str
    confirms: int  # confirmations of the target, this one included


class FactValue(msgspec.Struct, kw_only=True):
    """The value of a keyed fact at a point of either timeline."""

    key: str
    value: str
    id: str
    author: str
    author_email: str
    recorded_at: str
    valid_from: str | None = None
    valid_until: str | None = None
    status: str = "active"  # at the point asked about (as_of / valid_at), else now
    status_now: str = "active"  # today: e.g. "superseded" for a value asked --as-of
    conflicts: list[Record] = []  # other values current at the same time (a conflict)
    as_of: str | None = None
    valid_at: str | None = None


class ContextItem(msgspec.Struct, kw_only=True):
    section: str  # persona | facts | procedures | notes | recent
    line: str
    id: str | None = None


class Context(msgspec.Struct, kw_only=True):
    """The always-on profile ('git mem context'): Markdown within a token budget."""

    budget: int
    tokens: int  # estimated as characters / 4, rounded up
    markdown: str
    items: list[ContextItem] = []
    left_out: int = 0  # candidates that did not fit the budget


class KeyHistory(msgspec.Struct, kw_only=True):
    key: str
    current: str | None  # id of the current value (None: retired or forgotten)
    conflicts: list[str]  # ids of other current values (a recorded conflict)
    values: list[Record]  # every value ever recorded, oldest first


class Conflict(msgspec.Struct, kw_only=True):
    key: str
    current: Record  # the deterministic winner: greatest (clock, id)
    others: list[Record]


class SimilarPair(msgspec.Struct, kw_only=True):
    cosine: float
    near_duplicate: bool  # at or above the duplicate threshold (stored with --force)
    older: Record
    newer: Record


class Imported(msgspec.Struct, kw_only=True):
    count: int
    ids: list[str]
    commits: list[str]
    partition: str
    # Lines whose text is already a current memory of the same kind and key
    # (or an earlier line): not added; a confirm reinforces the existing one.
    duplicates: list[dict[str, object]] = []


class ImportRecord(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """One line of ``git mem import``: the options of ``git mem add``."""

    text: str
    kind: str = "note"
    key: str | None = None
    tags: list[str] = []
    about: list[str] = []
    paths: list[str] = []
    importance: float = 0.5
    valid_from: str | int | None = None
    valid_until: str | int | None = None
    source: str | None = None
    session: str | None = None
    recorded_at: str | None = None  # when the log learned it (default: now)


_IMPORT_DECODER = msgspec.json.Decoder(ImportRecord)
_IMPORT_HINT = (
    'each line must be a JSON object like {"text": "...", "kind": "fact", "tags": ["x"]}; '
    "fields: text, kind, key, tags, about, paths, importance, valid_from, valid_until, "
    "source, session, recorded_at"
)


class PurgeRemote(msgspec.Struct, kw_only=True):
    """One remote's copy of a purged partition (as this clone last saw it)."""

    remote: str  # the namespace under refs/memory-remotes/
    tip: str
    has_content: bool  # its history holds the purged op
    next_push: str  # replace (force-with-lease) | fast-forward | rejected (...)


class PurgeReport(msgspec.Struct, kw_only=True):
    """What ``forget --purge`` rewrote, or with ``dry_run`` would rewrite."""

    dry_run: bool
    partition: str
    old_tip: str
    new_tip: str | None  # None on a dry run
    ops_removed: list[str]
    commits_rewritten: list[str]  # old commit ids rebuilt
    commits_dropped: list[str]  # old commit ids gone (every op removed)
    tombstone: bool  # a forget op is (or would be) written first
    remotes: list[PurgeRemote] = []
    backups: list[str] = []  # refs/memory-backup/* that held it (rewritten too)


class Retired(msgspec.Struct, kw_only=True):
    """Result of invalidate / forget."""

    id: str | None  # the new op's id (None when nothing had to be written)
    target: str
    status: str
    changed: bool
    purge: PurgeReport | None = None  # forget --purge only


class Shown(msgspec.Struct, kw_only=True):
    memory: Record
    ops: list[OpInfo]


class PartitionInfo(msgspec.Struct, kw_only=True):
    name: str
    ref: str
    tip: str
    ops: int
    authors: list[str]
    mine: bool


class Status(msgspec.Struct, kw_only=True):
    repository: str
    partition: str | None
    partitions: list[PartitionInfo]
    ops: dict[str, int]
    memories: dict[str, int]
    projection: dict[str, object]
    skipped: list[Skipped]


class SyncReport(msgspec.Struct, kw_only=True):
    """What pull / push / sync did."""

    remote: str
    fetched: bool = False
    created: list[str] = []
    fast_forwarded: list[str] = []
    replaced: list[str] = []
    conflicts: list[str] = []
    pushed: list[dict[str, object]] = []
    refresh: RefreshReport | None = None


class InitReport(msgspec.Struct, kw_only=True):
    clone_id: str
    partition: str | None
    fetch_refspecs_added: dict[str, bool] = {}


class RekeyReport(msgspec.Struct, kw_only=True):
    old_clone_id: str
    new_clone_id: str
    moved_ops: int
    partitions: dict[str, str]  # old partition -> new partition (where ops moved)
    backups: list[str]


def open(path: str | os.PathLike[str] | None = None) -> Store:  # noqa: A001 - public name
    """Open the git mem store of the repository containing ``path`` (default: cwd)."""
    return Store(path)


PERSONAL_ENV = "GITMEM_PERSONAL_DIR"
REPO_KEY = "repo:"  # the personal pool's pointer to a repository the person works in


def personal_dir() -> Path:
    """Where the personal pool lives: $GITMEM_PERSONAL_DIR, else
    $XDG_DATA_HOME/git-mem/personal, else ~/.local/share/git-mem/personal."""
    env = os.environ.get(PERSONAL_ENV)
    if env:
        path = Path(env).expanduser()
        if not path.is_absolute():
            raise InvalidInput(f"{PERSONAL_ENV}={env} is not an absolute path",
                               "give the personal pool's full path, or unset it")
        return path
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "git-mem" / "personal"


_REDIRECTS = ("GIT_DIR", "GIT_WORK_TREE", "GIT_COMMON_DIR")


def open_personal(*, create: bool = True) -> Store:
    """Open the personal pool: a git repository of its own, outside any project,
    for what belongs to the person (preferences, habits), never to a team.
    It is created on first use; push it to a private remote with sync.

    Refused while GIT_DIR and friends point git elsewhere (git hooks and
    'git --git-dir' set them): the pool's writes would land in that repository.
    """
    path = personal_dir()
    redirected = [v for v in _REDIRECTS if os.environ.get(v)]
    if redirected:
        raise InvalidInput(f"the personal pool cannot be used while {redirected[0]} is set",
                           f"unset {' and '.join(redirected)} for this command")
    try:
        if create:
            Oplog.create(path)
        elif not (path / ".git").is_dir():
            raise NotARepository(f"there is no personal pool yet (at {path})",
                                 "create it with: git mem add --personal TEXT")
        store = Store(path, pool="personal")
    except OSError as exc:
        raise NotARepository(f"cannot use the personal pool at {path}: {exc}",
                             f"fix or move that directory, or point {PERSONAL_ENV} elsewhere"
                             ) from None
    if store.log.workdir.resolve() != path.resolve():
        store.close()
        raise NotARepository(f"{path} is inside another repository ({store.log.workdir}), "
                             "not a personal pool of its own",
                             f"point {PERSONAL_ENV} at a directory outside any repository")
    return store


def open_personal_from(path: str | os.PathLike[str] | None = None) -> Store:
    """The personal pool, for a write made from ``path``: when that is inside a
    repository, the pool records (once) that the person works there. Refused
    when the pool would be that repository or lie inside it."""
    personal = open_personal(create=False) if (personal_dir() / ".git").is_dir() else None
    try:
        project: Store | None = Store(path)
    except (NotARepository, BareRepository):
        project = None
    if project is not None:
        pool = personal_dir().resolve()
        for inside in (project.log.workdir.resolve(), project.log.commondir.resolve()):
            if pool == inside or inside in pool.parents:
                project.close()
                if personal is not None:
                    personal.close()
                raise InvalidInput(f"the personal pool ({pool}) is inside this repository; "
                                   "personal memories would be shared with it",
                                   f"point {PERSONAL_ENV} at a directory outside any repository")
    if personal is None:
        personal = open_personal(create=True)
    if project is None:
        return personal
    try:
        project.remember_repository(personal)
    except GitMemError as exc:
        personal.warnings.append(f"could not record this repository in the personal pool: "
                                 f"{exc.message}")
    finally:
        project.close()
    return personal


class Store:
    """One repository's memory: the op-log plus its local projection."""

    def __init__(self, path: str | os.PathLike[str] | None = None, *,
                 pool: str = "project") -> None:
        self.cwd = Path(os.fspath(path)) if path is not None else Path.cwd()
        self.log = Oplog(self.cwd)
        self.pool = pool  # "project", or "personal" for the personal pool
        self._projection: Projection | None = None
        self.warnings: list[str] = []
        self.last_refresh: RefreshReport | None = None
        self._open = False
        self._usage_log: Any = None
        self._personal: Store | None | bool = False  # False: not looked for yet
        # Long operations (rebuild, import, a big pull) report (what, done, total or
        # None) here; the CLI draws a progress line on a terminal.
        self.progress: Callable[[str, int, int | None], None] | None = None

    # -- the personal pool --------------------------------------------------------

    def personal(self) -> Store | None:
        """The personal pool to merge into reads, or None (none yet, disabled with
        gitmem.personal=false, or this store is the personal pool)."""
        # None is looked up again on the next read: a long-lived server sees a pool
        # created after it started.
        if not isinstance(self._personal, Store) and self.pool == "project":
            self._personal = None
            if (self._setting("gitmem.personal", _bool, True, "use true or false")
                    and not any(os.environ.get(v) for v in _REDIRECTS)):
                try:
                    path = personal_dir()
                    pool = path.resolve()
                    mine = self.log.workdir.resolve()
                    if ((path / ".git").is_dir() and pool != mine and mine not in pool.parents
                            and self.log.commondir.resolve() not in pool.parents):
                        self._personal = open_personal(create=False)
                except Exception as exc:  # noqa: BLE001 - a broken pool must not break reads
                    self._skip_personal(exc)
        return self._personal if isinstance(self._personal, Store) else None

    def _skip_personal(self, exc: BaseException) -> None:
        """The personal pool is a second source: when it fails, the project's
        answer still comes, with one warning."""
        why = exc.message if isinstance(exc, GitMemError) else f"{type(exc).__name__}: {exc}"
        msg = f"personal pool skipped: {why}"
        if msg not in self.warnings:
            self.warnings.append(msg)

    def remember_repository(self, personal: Store) -> None:
        """Record in the personal pool that the person works in this repository
        (a pointer: its path and remotes, never its content). Written once."""
        root = str(self.log.workdir.resolve())
        key = f"{REPO_KEY}{root}"
        remotes = self.log.remote_urls()
        text = f"I work in the repository at {root}" + (
            " (remotes: " + ", ".join(f"{n} {u}" for n, u in sorted(remotes.items())) + ")"
            if remotes else "")
        try:
            if personal.get(key).value == text:
                return
        except UnknownId:
            pass
        personal.set(key, text, kind="edge", tags=["repository"], source="git mem")

    def _merge_personal(self, hits: list[Hit], fn: Callable[[Store], list[Hit]],
                        k: int) -> list[Hit]:
        for h in hits:
            h.pool = self.pool
        mine = self.personal()
        if mine is None:
            return hits
        try:
            theirs = fn(mine)
        except Exception as exc:  # noqa: BLE001 - see _skip_personal
            self._skip_personal(exc)
            return hits
        finally:
            self.warnings.extend(w for w in mine.warnings if w not in self.warnings)
        # The pool's pointers to repositories are its bookkeeping, not answers here.
        theirs = [h for h in theirs if not (h.key or "").startswith(REPO_KEY)]
        for h in theirs:
            h.pool = "personal"
        # One ranking: scores compare across pools (same formula); personal first
        # among equals, then by id, so the order is the same every time.
        merged = sorted(hits + theirs, key=lambda h: (-h.score, h.pool != "personal", h.id))[:k]
        for n, h in enumerate(merged, start=1):
            h.rank = n
        return merged

    @property
    def projection(self) -> Projection:
        """The local projection (created on first use: writes never need it)."""
        if self._projection is None:
            from .projection import Projection

            version, dim = _embedder_identity()
            self._projection = Projection(
                self.log.state_dir / CACHE_DIR,
                embedder_version=version,
                embedder_dim=dim,
                make_embedder=_doc_embedder,
            )
            self._projection.quarantine_check = _quarantine_reason
            self._projection.quarantine_version = _gate_version
        return self._projection

    def close(self) -> None:
        if isinstance(self._personal, Store):
            self._personal.close()
        if self._projection is not None:
            self._projection.close()
        if self._usage_log is not None:
            self._usage_log.close()
        self._open = False

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- projection lifecycle -------------------------------------------------

    def _ensure_open(self) -> Projection:
        from .projection import ProjectionCorrupt

        if self._open:
            return self.projection
        marker = self.log.state_dir / BUILT_MARKER
        # The marker is read first: a concurrent first reader creates the file and
        # then the marker, so "no marker yet" can never look like a lost projection.
        had_marker = marker.exists()
        missing = not self.projection.path.exists()
        try:
            self.projection.open()
        except ProjectionCorrupt:
            self.projection.destroy()
            self.warnings.append("projection was corrupt; rebuilt it from the op-log")
            self.projection.open()
        else:
            if missing and had_marker:
                self.warnings.append("projection was missing; rebuilt it from the op-log")
        if self.projection.reset_reason:
            self.warnings.append(f"{self.projection.reset_reason}; rebuilt it from the op-log")
        if not marker.exists():
            marker.write_text("a projection has been built in this clone\n")
        self._open = True
        return self.projection

    def _read(self, fn: Callable[[Projection], T], *, embed: bool = True) -> T:
        """Refresh, then run a query; a corrupt file is rebuilt once, with a warning."""
        from .projection import ProjectionCorrupt

        for attempt in (1, 2):
            try:
                proj = self._ensure_open()
                self._refresh(proj, embed=embed)
                return fn(proj)
            except ProjectionCorrupt:
                if attempt == 2:
                    raise
                self.projection.destroy()
                self._open = False
                self.warnings.append("projection was corrupt; rebuilt it from the op-log")
        raise AssertionError("unreachable")

    def _refresh(self, proj: Projection, *, full: bool = False, embed: bool = True) -> RefreshReport:
        # Refs may have moved by other means (a plain 'git fetch' with the
        # memory refspec, another process): integrate them first, so the
        # projection never serves stale state.
        integ = self.log.integrate()
        self._warn_conflicts(integ)
        proj.progress = self.progress
        report = proj.refresh(self.log, full=full, embed=embed)
        self.last_refresh = report
        if proj.vectors_damaged:
            proj.vectors_damaged = False
            self.warnings.append("vector file was damaged; re-embedded every memory")
        if report.ops_skipped:
            self.warnings.append(
                f"skipped {report.ops_skipped} unreadable op(s); see 'git mem status'"
            )
        return report

    def refresh(self) -> RefreshReport:
        """Replay whatever moved in refs/memory/* since the last refresh."""
        self._read(lambda p: None)
        return self.last_refresh or RefreshReport()

    def rebuild(self) -> RefreshReport:
        """Drop the projection's content and replay every partition."""
        from .projection import ProjectionCorrupt

        def run(p: Projection) -> RefreshReport:
            return self._refresh(p, full=True)

        proj = self._ensure_open()
        try:
            return run(proj)
        except ProjectionCorrupt:
            self.projection.destroy()
            self._open = False
            return run(self._ensure_open())

    # -- writes -----------------------------------------------------------------

    def add(
        self,
        text: str,
        *,
        kind: str = "note",
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
    ) -> Added:
        """Append a new memory to this clone's partition and return its id.

        The write gate runs first: a secret, prompt-injection phrasing or
        invisible Unicode refuses the write (GateRefused); with ``redact``
        secrets are masked instead (nothing else is ever let through).

        Then dedup: the same text (normalised) as a current memory of the same
        kind and key adds nothing: a confirm op reinforces that memory and
        ``duplicate_of`` names it. A near-duplicate (cosine at or above
        gitmem.duplicateThreshold, same kind) raises NearDuplicate unless
        ``force``; closer than gitmem.similarThreshold is stored and reported
        in ``similar``. A keyed memory replaces the key's current values.
        """
        body = self._body(
            text, kind=kind, key=key, tags=tags, about=about, paths=paths,
            importance=importance, valid_from=valid_from, valid_until=valid_until,
            source=source, session=session, head=self.log.head(),
        )
        body = _gate(body, redact=redact)
        old_ids = list(dict.fromkeys(self.resolve(s) for s in supersedes)) if supersedes else []
        dup, similar, replaced, vector = self._check_new(body, old_ids, force=force)
        if dup is not None:
            done = self._confirm(dup, "added again")
            return Added(id=dup, kind=body.kind, partition=done[1].partition, commit=done[2],
                         clock=done[1].clock, recorded_at=iso(done[1].at, done[1].tz) or "",
                         op=done[0], duplicate_of=dup)
        old_ids += [r for r in replaced if r not in old_ids]
        first_line = body.text.strip().splitlines()[0]
        summary = f"{'set ' + body.key if body.key else 'add ' + body.kind}: {_clip(first_line, 60)}"

        def make(author: ops.Author, partition: str, at: int, tz: int, clock: int) -> ops.Op:
            return ops.AddOp(
                v=ops.FORMAT_VERSION, author=author, partition=partition, clock=clock,
                at=at, tz=tz, memory=body, supersedes=old_ids,
            )

        oid, op, commit = self._append_one(make, summary)
        assert isinstance(op, ops.AddOp)
        if vector is not None:
            self._remember_pending(oid, vector)
        return Added(
            id=oid, kind=body.kind, partition=op.partition, commit=commit, clock=op.clock,
            recorded_at=iso(op.at, op.tz) or "", op=oid, superseded=old_ids,
            similar=[{"id": mid, "cosine": cos} for mid, cos in similar],
        )

    def _check_new(
        self, body: ops.MemoryBody, old_ids: list[str], *, force: bool
    ) -> tuple[str | None, list[tuple[str, float]], list[str], bytes | None]:
        """Dedup on write: (duplicate of, similar memories, the key's current values,
        the new memory's vector when one was computed)."""
        from .embed.text import embed_text
        from .projection import Scope

        dup_min, similar_min = self._thresholds()

        def run(p: Projection) -> tuple[str | None, list[tuple[str, float]], list[str],
                                        bytes | None]:
            current: list[str] = []
            if body.key is not None:
                values = p.keyed(Scope(shadow=False), body.key)
                current = [r.id for r in values]
                # The value is already the key's one current value: reinforce it.
                # (Setting it again during a conflict resolves the conflict.)
                if (len(values) == 1 and not old_ids and values[0].kind == body.kind
                        and ops.normalize_text(values[0].text or "") == ops.normalize_text(body.text)):
                    return values[0].id, [], current, None
                return None, [], current, None  # a new value replaces, it never duplicates
            dup = p.duplicate_of(body.text, body.kind, None)
            if dup is not None and not old_ids:  # with --supersedes it is a replacement
                return dup, [], current, None
            qvec = _query_vector(embed_text(None, body.text, body.entities, body.tags))
            if qvec is None:
                return None, [], current, None
            floor = min(similar_min, dup_min)
            # Memories replayed but not embedded yet (a writer does not pay for
            # numpy): few, so compared here with the pure-Python embedder.
            pending = p.unembedded(body.kind, PENDING_LIMIT)
            if pending is None:
                self._refresh(p)  # many: embed them the usual way first
                pending = []
            near = p.nearest(qvec, kind=body.kind, min_cos=floor, exclude=old_ids)
            known = self._pending_vectors({row[0] for row in pending})
            for mid, key, text, entities, tags in pending:
                if mid in old_ids:
                    continue
                other = known.get(mid) or _query_vector(embed_text(key, text, entities, tags))
                cos = _int8_cosine(qvec, other) if other else 0.0
                if cos >= floor:
                    near.append((mid, round(cos, 6)))
            near.sort(key=lambda x: (-x[1], x[0]))
            # The embedder barely sees numbers ("port 8080" ~ "port 9090"): texts
            # whose numbers differ are different facts, at most similar.
            if near and near[0][1] >= dup_min and not force:
                rec = p.record(near[0][0])
                if rec is not None and _same_numbers(body.text, rec.text):
                    raise NearDuplicate(near[0][0], near[0][1], rec.text or "")
            return None, near[:5], current, qvec

        return self._read(run, embed=False)

    # Vectors of memories this clone added and no read has embedded yet, so the
    # next add compares with them without re-embedding (a cache, like the
    # projection: it only saves time on the write path, answers never use it).
    _PENDING_FILE = "pending-vectors.json"

    def _pending_vectors(self, wanted: set[str]) -> dict[str, bytes]:
        try:
            cached = json.loads((self.log.state_dir / CACHE_DIR / self._PENDING_FILE).read_text())
            return {k: bytes.fromhex(v) for k, v in cached.items() if k in wanted}
        except (OSError, ValueError, TypeError, AttributeError):
            return {}

    def _remember_pending(self, memory_id: str, vector: bytes) -> None:
        path = self.log.state_dir / CACHE_DIR / self._PENDING_FILE
        try:
            cached = json.loads(path.read_text())
            if not isinstance(cached, dict):
                cached = {}
        except (OSError, ValueError):
            cached = {}
        cached = dict(list(cached.items())[-(PENDING_LIMIT - 1):])
        cached[memory_id] = vector.hex()
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_name(f".{path.name}.{os.getpid()}.{os.urandom(8).hex()}")
            tmp.write_text(json.dumps(cached))
            os.replace(tmp, path)
        except OSError:
            pass

    def set(self, key: str, value: str, **options: Any) -> Added:
        """Record the current value of an attribute (``set db.engine cockroachdb``).

        A keyed fact: it supersedes the key's current value(s), which keep
        their place in ``history``; setting the value it already has only
        reinforces it. Takes the options of ``add`` (kind defaults to fact).
        """
        k = _key(key)
        if not k:
            raise InvalidInput(f"'{key}' is not a usable key", "use a short name, e.g. db.engine")
        options.setdefault("kind", "fact")
        return self.add(value, key=k, **options)

    def confirm(self, memory_id: str, reason: str | None = None) -> Confirmed:
        """Reinforce a memory: it still holds. Salience counts confirmations."""
        owner = self._owner(memory_id)
        if owner is not self:
            return owner.confirm(memory_id, reason)
        target = self.resolve(memory_id)
        rec = self._read(lambda p: p.record(target))
        assert rec is not None
        if rec.status != "active":
            raise InvalidInput(
                f"memory {target[:12]} is {rec.status}; only current memories can be confirmed",
                "add it again (or set the key again) if it holds once more",
            )
        oid, _, _ = self._confirm(target, _gate_reason(_field(reason, "reason")))
        count = self._read(lambda p: p.salience_inputs([target]))[target][3]
        return Confirmed(id=oid, target=target, confirms=count)

    def _confirm(self, target: str, reason: str | None) -> tuple[str, ops.Op, str]:
        def make(author: ops.Author, partition: str, at: int, tz: int, clock: int) -> ops.Op:
            return ops.ConfirmOp(v=ops.FORMAT_VERSION, author=author, partition=partition,
                                 clock=clock, at=at, tz=tz, target=target, reason=reason)

        return self._append_one(make, f"confirm {target[:12]}")

    def _body(
        self,
        text: str,
        *,
        kind: str,
        key: str | None,
        tags: Iterable[str],
        about: Iterable[str],
        paths: Iterable[str],
        importance: float,
        valid_from: str | int | None,
        valid_until: str | int | None,
        source: str | None,
        session: str | None,
        head: str | None,
    ) -> ops.MemoryBody:
        """Validate what a user wants to remember and build the op's record."""
        if not isinstance(text, str) or not text.strip():
            raise EmptyText("memory text is empty")
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            raise InvalidInput(
                "memory text is not valid UTF-8", "convert it to UTF-8 (e.g. with iconv) first"
            ) from None
        if len(text.encode("utf-8")) > ops.MAX_TEXT_BYTES:
            raise InvalidInput(
                f"memory text is {len(text.encode('utf-8'))} bytes; the limit is "
                f"{ops.MAX_TEXT_BYTES}",
                "split it into several memories",
            )
        if kind not in ops.KINDS:
            raise InvalidInput(
                f"unknown kind '{kind}'", f"use one of: {', '.join(ops.KINDS)}"
            )
        if not 0.0 <= float(importance) <= 1.0:
            raise InvalidInput(
                f"importance {importance} is out of range", "use a number from 0 to 1"
            )
        vfrom = _when(valid_from, "--valid-from")
        vuntil = _when(valid_until, "--valid-until")
        if vfrom is not None and vuntil is not None and vuntil < vfrom:
            raise InvalidInput("valid-until is before valid-from", "swap the two dates")
        return ops.MemoryBody(
            kind=kind,  # type: ignore[arg-type]
            text=text,
            key=_key(key),
            tags=_names(tags, "tag"),
            entities=_names(about, "about"),
            importance=float(importance),
            valid_from=vfrom,
            valid_until=vuntil,
            source=_field(source, "source"),
            session=_field(session, "session"),
            anchors=ops.Anchors(commit=head, paths=self._paths(paths)),
        )

    def import_records(
        self, lines: Iterable[str | bytes], *, pack_size: int = 5000, redact: bool = False
    ) -> Imported:
        """Bulk-add memories from JSON lines, many ops per commit.

        Every line is validated before anything is written, so a bad line at
        the end does not leave half an import behind. Each pack (one commit)
        is atomic; the report lists the commits written.
        """
        if pack_size < 1:
            raise InvalidInput(f"pack size must be at least 1 (got {pack_size})", "use 5000")
        head = self.log.head()
        bodies: list[tuple[int, ops.MemoryBody, tuple[int, int] | None]] = []
        for n, line in enumerate(lines, start=1):
            if not (line.strip() if isinstance(line, str) else line.strip()):
                continue
            try:
                rec = _IMPORT_DECODER.decode(line)
            except (msgspec.DecodeError, msgspec.ValidationError) as exc:
                raise InvalidInput(f"line {n}: {exc}", _IMPORT_HINT) from None
            try:
                body = self._body(
                    rec.text, kind=rec.kind, key=rec.key, tags=rec.tags, about=rec.about,
                    paths=rec.paths, importance=rec.importance, valid_from=rec.valid_from,
                    valid_until=rec.valid_until, source=rec.source, session=rec.session,
                    head=head,
                )
                at = parse_date(rec.recorded_at) if rec.recorded_at else None
                body = _gate(body, redact=redact)
            except GateRefused as exc:
                raise GateRefused([f"line {n}: {f}" for f in exc.findings], exc.hint) from None
            except InvalidInput as exc:
                raise type(exc)(f"line {n}: {exc.message}", exc.hint) from None
            bodies.append((n, body, at))
        author = self.log.identity()
        now = now_from_env()
        partition = self.log.partition_for(author)
        # Dedup on write, exact only (a near-duplicate check would embed every
        # line): a line that repeats a current memory confirms it instead, a
        # line that repeats an earlier line is dropped.
        items: list[tuple[ops.MemoryBody | str, tuple[int, int] | None]] = []
        duplicates: list[dict[str, object]] = []
        # A keyed line replaces the key's values, like set: the current ones for
        # the first line of a key, then the previous line of the same key.
        keys = sorted({b.key for _, b, _ in bodies if b.key is not None})
        latest: dict[str, list[str]] = {}
        if keys:
            from .projection import Scope

            def current(p: Projection) -> dict[str, list[str]]:
                out: dict[str, list[str]] = {}
                for r in p.keyed(Scope(shadow=False)):
                    if r.key in keys:
                        out.setdefault(r.key or "", []).append(r.id)
                return out

            latest = self._read(current, embed=False)
        if bodies:
            existing = self._read(lambda p: [p.duplicate_of(b.text, b.kind, b.key)
                                             for _, b, _ in bodies], embed=False)
            first_line: dict[tuple[str, str | None, str], int] = {}
            for (n, body, at), dup in zip(bodies, existing):
                sig = (body.kind, body.key, ops.text_hash(body.text))
                if dup is not None:
                    duplicates.append({"line": n, "id": dup})
                    if sig not in first_line:
                        items.append((dup, at))
                        first_line[sig] = n
                elif sig in first_line:
                    duplicates.append({"line": n, "line_of_first": first_line[sig]})
                else:
                    first_line[sig] = n
                    items.append((body, at))
        ids: list[str] = []
        commits: list[str] = []
        for start in range(0, len(items), pack_size):
            chunk = items[start : start + pack_size]

            after: dict[str, list[str]] = {}

            def make(clock: int, chunk: list = chunk) -> list[bytes]:  # type: ignore[type-arg]
                out = []
                state = {k: list(v) for k, v in latest.items()}  # rebuilt on every retry
                for i, (what, at) in enumerate(chunk):
                    common = dict(v=ops.FORMAT_VERSION, author=author, partition=partition,
                                  clock=clock + i, at=(at or now)[0], tz=(at or now)[1])
                    if isinstance(what, ops.MemoryBody):
                        op: ops.Op = ops.AddOp(**common, memory=what,  # type: ignore[arg-type]
                                               supersedes=state.get(what.key, [])
                                               if what.key is not None else [])
                    else:
                        op = ops.ConfirmOp(**common, target=what,  # type: ignore[arg-type]
                                           reason="imported again")
                    out.append(ops.encode(op))
                    if isinstance(what, ops.MemoryBody) and what.key is not None:
                        state[what.key] = [ops.op_id(out[-1])]
                for line in out:
                    _check_writable(line, partition)
                after.clear()
                after.update(state)
                return out

            last_at = chunk[-1][1] or now
            adds = sum(isinstance(w, ops.MemoryBody) for w, _ in chunk)
            appended = self.log.append(
                partition, author, last_at[0], last_at[1], f"import {adds} memories", make
            )
            ids.extend(ops.op_id(line) for line, (w, _) in zip(appended.lines, chunk)
                       if isinstance(w, ops.MemoryBody))
            commits.append(appended.commit)
            latest = dict(after)
            if self.progress is not None:
                self.progress("importing", start + len(chunk), len(items))
        return Imported(count=len(ids), ids=ids, commits=commits, partition=partition,
                        duplicates=duplicates)

    def _owner(self, memory_id: str) -> Store:
        """This store, or the personal pool when only it knows ``memory_id``."""
        try:
            found = self.resolve(memory_id)
        except UnknownId:
            mine = self.personal()
            if mine is None:
                raise
            try:
                mine.resolve(memory_id)
            except UnknownId:
                raise UnknownId(f"no memory with id {memory_id.strip().lower()} "
                                "(in this repository or the personal pool)") from None
            return mine
        mine = self.personal() if len(memory_id.strip()) < ops.ID_HEX_LEN else None
        if mine is not None:
            try:
                other = mine.resolve(memory_id)
            except UnknownId:
                return self
            except Exception as exc:  # noqa: BLE001 - see _skip_personal
                self._skip_personal(exc)
                return self
            raise AmbiguousId(memory_id.strip().lower(), [found, other])
        return self

    def invalidate(self, memory_id: str, reason: str | None = None) -> Retired:
        """Retire a memory: it leaves default recall but stays in history."""
        owner = self._owner(memory_id)
        if owner is not self:
            return owner.invalidate(memory_id, reason)
        return self._retire(memory_id, "invalidate", reason)

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
        if dry_run and not purge:
            raise InvalidInput("--dry-run only applies to --purge",
                               "preview a purge with: git mem forget ID --purge --dry-run")
        owner = self._owner(memory_id)
        if owner is not self:
            return owner.forget(memory_id, reason, purge=purge, dry_run=dry_run)
        if not purge:
            return self._retire(memory_id, "forget", reason)
        target = self.resolve(memory_id)
        rec = self._read(lambda p: p.record(target))
        assert rec is not None
        if rec.partition not in self.log.own_partitions():
            tomb = ("it is already forgotten: the tombstone hides it in every clone that syncs"
                    if rec.status == "forgotten" else
                    f"a tombstone still hides it in every clone that syncs: git mem forget "
                    f"{target[:12]}")
            raise PurgeRefused(
                f"memory {target[:12]} was written by {rec.author} <{rec.author_email}> on "
                f"partition {rec.partition}, not by this clone; only that clone can purge it",
                f"ask its author to run 'git mem forget {target[:12]} --purge' in the clone "
                f"that wrote it; {tomb}",
            )
        tombstone = rec.status != "forgotten"
        if dry_run:
            plan = self.log.purge(rec.partition, [target], dry_run=True)
            return Retired(id=None, target=target, status=rec.status, changed=False,
                           purge=_purge_report(plan, dry_run=True, tombstone=tombstone))
        if tombstone:
            result = self._retire(target, "forget", reason)
        else:
            result = Retired(id=None, target=target, status=rec.status, changed=False)
        done = self.log.purge(rec.partition, [target])
        result.purge = _purge_report(done, dry_run=False, tombstone=tombstone)
        result.changed = result.changed or bool(done.removed)
        if not done.removed:
            self.warnings.append(f"memory {target[:12]} was not found on {done.ref}; "
                                 "nothing was purged")
        self.refresh()  # the projection drops the partition's rows and replays it
        return result

    def _retire(self, memory_id: str, kind: str, reason: str | None) -> Retired:
        target = self.resolve(memory_id)
        rec = self._read(lambda p: p.record(target))
        assert rec is not None
        if (kind == "forget" and rec.status == "forgotten") or (
            kind == "invalidate" and rec.status != "active"
        ):
            self.warnings.append(f"memory {target[:12]} is already {rec.status}; nothing written")
            return Retired(id=None, target=target, status=rec.status, changed=False)
        reason = _gate_reason(_field(reason, "reason"))
        cls = ops.ForgetOp if kind == "forget" else ops.InvalidateOp
        summary = f"{kind} {target[:12]}"  # reasons stay in the op, out of commit subjects

        def make(author: ops.Author, partition: str, at: int, tz: int, clock: int) -> ops.Op:
            return cls(
                v=ops.FORMAT_VERSION, author=author, partition=partition, clock=clock,
                at=at, tz=tz, target=target, reason=reason,
            )

        oid, _, _ = self._append_one(make, summary)
        new_status = "forgotten" if kind == "forget" else "invalidated"
        return Retired(id=oid, target=target, status=new_status, changed=True)

    def _append_one(
        self, make: Callable[[ops.Author, str, int, int, int], ops.Op], summary: str
    ) -> tuple[str, ops.Op, str]:
        author = self.log.identity()
        at, tz = now_from_env()
        partition = self.log.partition_for(author)
        built: list[ops.Op] = []

        def lines(clock: int) -> list[bytes]:
            built.clear()
            built.append(make(author, partition, at, tz, clock))
            line = ops.encode(built[0])
            _check_writable(line, partition)
            return [line]

        appended = self.log.append(partition, author, at, tz, summary, lines)
        return ops.op_id(appended.lines[0]), built[0], appended.commit

    def _paths(self, paths: Iterable[str]) -> list[str]:
        """Paths relative to the repository root, whatever directory we run in."""
        out: list[str] = []
        root = self.log.workdir.resolve()
        for p in paths:
            if not p or not p.strip():
                continue
            full = (self.cwd / p).resolve()
            try:
                rel = full.relative_to(root).as_posix()
            except ValueError:
                raise InvalidInput(
                    f"path '{p}' is outside the repository", "give a path inside the work tree"
                ) from None
            out.append(rel or ".")
        return _names(out, "path")

    # -- sync -------------------------------------------------------------------

    def _warn_conflicts(self, integ: Integrated) -> None:
        for name in integ.conflicts:
            msg = (f"a remote holds commits on this clone's partition {name} that this "
                   "clone does not have; run 'git mem pull' for details")
            if msg not in self.warnings:
                self.warnings.append(msg)

    def pull(self, remote: str | None = None) -> SyncReport:
        """Fetch every partition from ``remote`` and bring the others' forward."""
        remote = remote or self.log.default_remote()
        self.log.fetch(remote)
        integ = self.log.integrate(self.log.namespace(remote), replace=True)
        report = SyncReport(
            remote=remote, fetched=True, created=integ.created,
            fast_forwarded=integ.fast_forwarded, replaced=integ.replaced,
            conflicts=integ.conflicts,
        )
        report.refresh = self.refresh()
        if integ.conflicts:
            raise PartitionConflict(
                f"'{remote}' holds commits on this clone's partition "
                f"{', '.join(integ.conflicts)} that this clone does not have "
                "(the same clone id is used in two places)"
            )
        return report

    def push(self, remote: str | None = None) -> SyncReport:
        """Push this clone's own partitions to ``remote`` (fast-forward only)."""
        remote = remote or self.log.default_remote(push=True)
        pushed = self.log.push(remote, self.log.own_partitions())
        return SyncReport(
            remote=remote,
            pushed=[{"partition": p.partition, "status": p.status, "old": p.old, "new": p.new}
                    for p in pushed],
        )

    def sync(self, remote: str | None = None) -> SyncReport:
        """Pull, then push: after it, the remote and this clone hold the same memory."""
        remote = remote or self.log.default_remote()
        report = self.pull(remote)
        report.pushed = self.push(remote).pushed
        return report

    def init(self, *, fetch_refspec: bool = False, remote: str | None = None) -> InitReport:
        """One-time set-up: this clone's id, and optionally a memory fetch refspec."""
        cid = self.log.clone_id()
        try:
            mine: str | None = self.log.partition_for(self.log.identity())
        except NoIdentity:
            mine = None
        added: dict[str, bool] = {}
        if fetch_refspec:
            targets = [remote] if remote else [self.log.default_remote()]
            for r in targets:
                if r not in self.log.remotes():
                    raise InvalidInput(f"'{r}' is not a configured remote",
                                       "list remotes with 'git remote -v'")
                added[r] = self.log.add_fetch_refspec(r)
        return InitReport(clone_id=cid, partition=mine, fetch_refspecs_added=added)

    def rekey(self) -> RekeyReport:
        """Give this clone a new partition id, moving every op no remote has.

        For each of this clone's partitions: its tip is kept under
        refs/memory-backup/ first; the ops that no remote holds are re-appended
        to the new partition (ids referenced between them are remapped); the
        old local ref is then set to the remote's version, or removed when no
        remote has it (all its ops moved). The new id is saved last, so an
        interrupted rekey leaves this clone on its old id and can run again.
        """
        old_cid = self.log.clone_id()
        own = self.log.own_partitions()
        new_cid = os.urandom(6).hex()
        tracking: dict[str, list[str]] = {}
        for tref, tip in self.log.tracking().items():
            tracking.setdefault(tref.rsplit("/", 1)[-1], []).append(tip)
        local = self.log.partitions()
        plan = [(name, local[REF_PREFIX + name]) for name in own if REF_PREFIX + name in local]
        backups = [self.log.backup_ref(name, tip) for name, tip in plan]
        moved, renamed = 0, {}
        for name, tip in plan:
            remote_tips = sorted(set(tracking.get(name, [])))
            lines: list[bytes] = []
            for pack in self.log.iter_packs(tip, remote_tips):
                if pack.data is not None:
                    lines.extend(ops.split_pack(pack.data))
            moved += self._reappend(lines, new_cid, renamed)
            # The old partition now belongs to the other copy (or to nobody).
            newest = [t for t in remote_tips
                      if not any(o != t and self.log.is_ancestor(t, o) for o in remote_tips)]
            if newest:
                self.log.force_ref(REF_PREFIX + name, tip, newest[0])
            else:
                self.log.delete_ref(REF_PREFIX + name, tip)
        self.log.set_clone_id(new_cid)
        self.refresh()
        return RekeyReport(old_clone_id=old_cid, new_clone_id=new_cid, moved_ops=moved,
                           partitions=renamed, backups=backups)

    def _reappend(self, lines: list[bytes], new_cid: str, renamed: dict[str, str]) -> int:
        """Write ops again on this clone's new partition, remapping ids between them."""
        from .replay import Decoded, check_line

        idmap: dict[str, str] = {}
        count = 0
        for raw in lines:
            try:
                claimed = ops.decode(raw).partition
            except (msgspec.DecodeError, msgspec.ValidationError):
                continue  # replay skips it too: nothing to move
            item = check_line(raw, claimed)
            if not isinstance(item, Decoded):
                continue
            op = item.op
            partition = ops.partition_name(op.author.email, new_cid)
            renamed[op.partition] = partition

            def make(clock: int, op: ops.Op = op, partition: str = partition) -> list[bytes]:
                fields = {f: getattr(op, f) for f in op.__struct_fields__}
                fields.update(partition=partition, clock=clock)
                if isinstance(op, ops.AddOp):
                    fields["supersedes"] = [idmap.get(x, x) for x in op.supersedes]
                else:
                    fields["target"] = idmap.get(op.target, op.target)  # type: ignore[union-attr]
                return [ops.encode(type(op)(**fields))]

            appended = self.log.append(partition, op.author, op.at, op.tz,
                                       f"rekey: {ops.op_type(op)} {item.id[:12]}", make)
            idmap[item.id] = ops.op_id(appended.lines[0])
            count += 1
        return count

    # -- reads --------------------------------------------------------------------

    def resolve(self, prefix: str) -> str:
        """The full memory id for an id or unique prefix of 7+ hex digits."""
        p = (prefix or "").strip().lower()
        if not _HEX.match(p) or not ops.MIN_PREFIX <= len(p) <= ops.ID_HEX_LEN:
            raise InvalidInput(
                f"'{prefix}' is not a memory id",
                f"ids are {ops.MIN_PREFIX} to {ops.ID_HEX_LEN} hex digits, as printed by add",
            )
        found = self._read(lambda proj: proj.resolve_prefix(p))
        if not found:
            raise UnknownId(f"no memory with id {p}")
        if len(found) > 1:
            raise AmbiguousId(p, found)
        return found[0]

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
    ) -> list[Hit]:
        """The memories that best answer ``query``, best first.

        ``mode`` picks the channels: ``hybrid`` (the default: lexical and
        vector fused), ``lexical`` (FTS5 only) or ``vector`` (embeddings only).
        ``as_of`` answers from what the log believed at that time, ``valid_at``
        from what was true in the world then (a date, or a git revision).
        ``include_retired`` adds retired, conflict-losing and faded memories.
        """
        if not isinstance(query, str) or not query.strip():
            raise InvalidInput("the query is empty", "say what you are looking for")
        if k < 1:
            raise InvalidInput(f"-k must be at least 1 (got {k})", "use -k 10")
        for kind in kinds:
            if kind not in ops.KINDS:
                raise InvalidInput(f"unknown kind '{kind}'", f"use one of: {', '.join(ops.KINDS)}")
        from .recall import MODES, Query, rank

        if mode not in MODES:
            raise InvalidInput(f"unknown recall mode '{mode}'", f"use one of: {', '.join(MODES)}")
        t_as_of = self.point_in_time(as_of, "--as-of")
        t_valid = self.point_in_time(valid_at, "--valid-at")
        q = Query(query, k, list(kinds), list(tags), include_retired, mode, explain,
                  include_quarantined, as_of=t_as_of, valid_at=t_valid,
                  salience=self._salience(t_as_of))
        usage = self._usage()
        hits = self._read(lambda p: rank(p, q, _query_vector, usage.read if usage else None))
        hits = self._merge_personal(hits, lambda other: other.recall(
            query, k=k, kinds=kinds, tags=tags, include_retired=include_retired, mode=mode,
            explain=explain, include_quarantined=include_quarantined, as_of=t_as_of,
            valid_at=t_valid), k)
        if record_use and t_as_of is None and t_valid is None and not include_retired:
            # Being handed out is a (weak, local) reinforcement: the top hits only.
            self.record_use(hits[:USE_TOP])
        if usage is not None and usage.error:
            self.warnings.append(usage.error)
        return hits

    def record_use(self, hits: Iterable[Hit]) -> None:
        """Note, locally, that these hits were put before someone: it renews their
        age for decay (docs/time.md). Faded or retired hits are never renewed
        by being looked at; only a confirmation brings them back."""
        usage = self._usage()
        if usage is None:
            return
        usage.record([h.id for h in hits if h.status == "active" and not h.faded
                      and h.conflict_with is None and h.pool == self.pool], self.now())

    # -- time, salience and configuration ------------------------------------------

    def now(self) -> int:
        """The clock reads use: GITMEM_NOW, else GIT_COMMITTER_DATE (the clock writes
        use, so tests and replays can pin it), else the system clock."""
        env = os.environ.get("GITMEM_NOW")
        if env:
            try:
                return parse_date(env)[0]
            except InvalidDate as exc:
                raise InvalidDate(f"GITMEM_NOW: {exc.message}", exc.hint) from None
        return now_from_env()[0]

    def point_in_time(self, value: str | int | None, flag: str = "WHEN") -> int | None:
        """A point on either timeline: unix seconds, an ISO date or datetime (a date
        alone means the end of that day), or a git revision (its committer time)."""
        if value is None or value == "":
            return None
        if isinstance(value, int):
            return value
        text = str(value).strip()
        try:
            ts = parse_date(text, now=self.now())[0]
        except InvalidDate:
            found = self.log.revision_time(text)
            if found is None:
                raise InvalidDate(
                    f"{flag}: '{value}' is neither a date nor a git revision",
                    "use an ISO date (2026-03-01), a datetime (2026-03-01T12:00:00Z), "
                    "'3 weeks ago', or a tag, branch or commit (v1.4)",
                ) from None
            return found
        if _DATE_ONLY.match(text):
            ts += DAY - 1  # "as of March 1st" includes what happened on March 1st
        return ts

    def _setting(self, name: str, parse: Callable[[str], T], default: T, hint: str) -> T:
        raw = self.log.settings().get(name.lower())
        if raw is None:
            return default
        try:
            return parse(raw.strip())
        except ValueError:
            raise InvalidInput(f"git config {name} = '{raw}' is not valid",
                               f"{hint} (git config {name} VALUE), or unset it") from None

    def _thresholds(self) -> tuple[float, float]:
        dup = self._setting("gitmem.duplicateThreshold", _unit, DUPLICATE_THRESHOLD,
                            "use a cosine from 0 to 1, e.g. 0.92")
        sim = self._setting("gitmem.similarThreshold", _unit, SIMILAR_THRESHOLD,
                            "use a cosine from 0 to 1, e.g. 0.80")
        return dup, sim

    def _salience(self, as_of: int | None) -> Any:
        from .recall import HALF_LIFE_DAYS, SALIENCE_FLOOR, Salience

        halves: dict[str, float | None] = {}
        for kind, default in HALF_LIFE_DAYS.items():
            halves[kind] = self._setting(f"gitmem.halfLife.{kind}", _half_life, default,
                                         "use a number of days, or 'never'")
        return Salience(
            now=as_of if as_of is not None else self.now(),
            half_life_days=halves,
            floor=self._setting("gitmem.salienceFloor", _unit, SALIENCE_FLOOR,
                                "use a number from 0 to 1, e.g. 0.05"),
            decay=self._setting("gitmem.decay", _bool, True, "use true or false"),
        )

    def _usage(self) -> Any:
        if not self._setting("gitmem.recordUse", _bool, True, "use true or false"):
            return None
        if self._usage_log is None:
            from .projection import Usage

            self._usage_log = Usage(self.log.state_dir / USAGE_NAME)
        return self._usage_log

    # -- the context profile ------------------------------------------------------------

    def context(self, budget: int = 500, *, recent_days: int = 14) -> Context:
        """The profile an agent should read first, within ``budget`` tokens: persona,
        current keyed facts, procedures, the most salient notes, recent changes;
        the personal pool's memories first in each section, labelled.

        Deterministic for the same log and clock (the local use record is left
        out on purpose); everything in it is current truth, not quarantined.
        """
        from . import context as ctx

        if not isinstance(budget, int) or isinstance(budget, bool) or budget < ctx.MIN_BUDGET:
            raise InvalidInput(f"budget must be at least {ctx.MIN_BUDGET} tokens (got {budget})",
                               "use --budget 500")
        sections = self._context_sections(recent_days)
        mine = self.personal()
        if mine is not None:
            try:
                theirs = mine._context_sections(recent_days)
            except Exception as exc:  # noqa: BLE001 - see _skip_personal
                self._skip_personal(exc)
            else:
                for name, items in theirs.items():  # by salience, the person's own first on ties
                    sections[name] = sorted(items + sections.get(name, []),
                                            key=lambda i: (-i.score, not i.personal))
        built = ctx.build(sections, budget)
        return Context(budget=budget, tokens=built.tokens, markdown=built.markdown,
                       items=[ContextItem(section=i.section, line=i.line, id=i.id)
                              for i in built.items], left_out=built.left_out)

    def _context_sections(self, recent_days: int) -> dict[str, list[Any]]:
        """Each section's candidates, best first (ctx.Item)."""
        from . import context as ctx
        from .projection import Scope
        from .recall import salience

        cfg = self._salience(None)

        def ranked(p: Projection, records: list[Record]) -> list[tuple[Record, float]]:
            inputs = p.salience_inputs([r.id for r in records])
            scored = []
            for r in records:
                kind, imp, at, confirms, last = inputs[r.id]
                f = salience(cfg, kind=kind, importance=imp, at=at, confirms=confirms,
                             last_confirm=last, last_use=None)
                if f["salience"] >= cfg.floor:
                    scored.append((-f["salience"], r.recorded_at, r.id, r))
            scored.sort(key=lambda x: (x[0], x[1], x[2]))
            return [(x[3], -x[0]) for x in scored]

        def run(p: Projection) -> dict[str, list[ctx.Item]]:
            conflicted = set(p.conflicted_keys())
            label = "personal" if self.pool == "personal" else None

            def items(section: str, pairs: list[tuple[Record, float]],
                      with_key: bool = False) -> list[ctx.Item]:
                return [ctx.Item(section, ctx.memory_line(
                    r, with_key=with_key, conflict=with_key and r.key in conflicted, label=label),
                    r.id, score=sal, personal=label is not None) for r, sal in pairs]

            winners: dict[str, Record] = {}
            for v in self._values(p, None, None, None):
                winners.setdefault(v.key or "", v)
            facts = [(r, sal) for r, sal in ranked(p, list(winners.values()))
                     if not (label and (r.key or "").startswith(REPO_KEY))]  # pointers
            sections: dict[str, list[ctx.Item]] = {
                "persona": items("persona", ranked(
                    p, p.top(Scope(kinds=("persona",), now=cfg.now)))),
                "facts": items("facts", facts, with_key=True),
                "procedures": items("procedures", ranked(
                    p, p.top(Scope(kinds=("procedure",), now=cfg.now), keyed=False))),
                "notes": items("notes", ranked(
                    p, p.top(Scope(kinds=("fact", "note", "edge"), now=cfg.now), keyed=False))),
            }
            if label:
                return sections  # the person's recent changes are not the project's news
            since = cfg.now - recent_days * DAY
            recent = [o for o in reversed(p.log(limit=60)) if o.type != "confirm"]
            # Within the window; an op dated in the future (a skewed clock, or a
            # forged date) must not stay pinned to the top.
            recent = sorted((o for o in recent if since <= _ts(o.recorded_at) <= cfg.now + DAY),
                            key=lambda o: (-_ts(o.recorded_at), -o.clock, o.id))[:10]
            recs = p.records(o.id if o.type == "add" else o.target or "" for o in recent)
            lines = []
            for o in recent:
                rec = recs.get(o.id if o.type == "add" else o.target or "")
                if rec is not None and rec.quarantine:
                    continue  # what the gate refuses never reaches an agent, even as news
                if o.reason and _gate_findings(o.reason):
                    o = msgspec.structs.replace(o, reason=None)
                lines.append(ctx.Item("recent", ctx.recent_line(o, rec), o.id))
            sections["recent"] = lines
            return sections

        return self._read(run)


    # -- keyed facts and review -------------------------------------------------------

    def get(self, key: str, *, as_of: str | int | None = None,
            valid_at: str | int | None = None) -> FactValue:
        """The value of ``key``: current, as the log believed it at ``as_of``, or as
        true in the world at ``valid_at``. Concurrent values are in ``conflicts``."""
        from .projection import Scope

        t_as_of = self.point_in_time(as_of, "--as-of")
        t_valid = self.point_in_time(valid_at, "--valid-at")
        k = (key or "").strip()
        values = self._read(lambda p: self._values(p, k, t_as_of, t_valid))
        if not values:
            when = "".join([f" as of {iso(t_as_of)}" if t_as_of is not None else "",
                            f" valid at {iso(t_valid)}" if t_valid is not None else ""])
            raise UnknownKey(f"no value for key '{k}'{when}")
        return _fact_value(values[0], values[1:], t_as_of, t_valid)

    def keys(self, *, as_of: str | int | None = None,
             valid_at: str | int | None = None) -> list[FactValue]:
        """Every key's value (see ``get``), sorted by key."""
        from .projection import Scope

        t_as_of = self.point_in_time(as_of, "--as-of")
        t_valid = self.point_in_time(valid_at, "--valid-at")
        values = self._read(lambda p: self._values(p, None, t_as_of, t_valid))
        grouped: dict[str, list[Record]] = {}
        for r in values:
            grouped.setdefault(r.key or "", []).append(r)
        return [_fact_value(v[0], v[1:], t_as_of, t_valid) for _, v in sorted(grouped.items())]

    def _values(self, p: Projection, key: str | None, as_of: int | None,
                valid_at: int | None) -> list[Record]:
        """A key's (or every key's) values, winner first per key. Without a point in
        time: what holds now, so a value set ahead of time (--valid-from in the
        future) takes over only when it starts, and an expired one stops."""
        from .projection import Scope

        if as_of is not None or valid_at is not None:
            return p.keyed(Scope(as_of=as_of, valid_at=valid_at, shadow=False), key)
        now = self.now()
        values = p.keyed(Scope(shadow=False, now=now), key)
        started = [v for v in values if v.valid_from is None or _ts(v.valid_from) <= now]
        if len(started) == len(values):
            return values
        keys_waiting = {v.key for v in values} - {v.key for v in started}
        # Keys whose only current values have not started: what is valid now.
        earlier = [v for v in p.keyed(Scope(valid_at=now, shadow=False), key)
                   if v.key in keys_waiting]
        return sorted(started + earlier, key=lambda v: (v.key or "", -v.clock, v.id))

    def history(self, key: str) -> KeyHistory:
        """Every value ``key`` ever had, oldest first, with who set it and when."""
        k = (key or "").strip()
        values = self._read(lambda p: p.key_history(k))
        if not values:
            raise UnknownKey(f"key '{k}' was never set")
        live = [r for r in values if r.status == "active" and r.quarantine is None]
        current = next((r.id for r in live if r.conflict_with is None), None)
        return KeyHistory(key=k, current=current,
                          conflicts=[r.id for r in live if r.conflict_with is not None],
                          values=values)

    def conflicts(self) -> list[Conflict]:
        """Keys with more than one current value: concurrent sets not yet resolved."""
        from .projection import Scope

        def run(p: Projection) -> list[Conflict]:
            out = []
            for key in p.conflicted_keys():
                values = p.keyed(Scope(shadow=False), key)
                if len(values) > 1:
                    out.append(Conflict(key=key, current=values[0], others=values[1:]))
            return out

        return self._read(run)

    def similar(self, memory_id: str | None = None, *, since: str | int | None = None,
                limit: int = 50, kinds: Sequence[str] = ()) -> list[SimilarPair]:
        """Pairs of current memories of one kind that are close in meaning (cosine at
        or above gitmem.similarThreshold), most similar first, for review."""
        from .embed.text import embed_text

        if limit < 1:
            raise InvalidInput(f"--limit must be at least 1 (got {limit})", "use --limit 50")
        dup_min, sim_min = self._thresholds()
        t_since = self.point_in_time(since, "--since")
        target = self.resolve(memory_id) if memory_id else None

        def run(p: Projection) -> list[SimilarPair]:
            if target is not None:
                rec = p.record(target)
                if rec is None or rec.text is None:
                    return []
                qvec = _query_vector(embed_text(rec.key, rec.text, rec.entities, rec.tags))
                near = p.nearest(qvec, kind=rec.kind, min_cos=sim_min, exclude=[target],
                                 limit=limit) if qvec else []
                pairs = [(target, mid, cos) for mid, cos in near]
            else:
                pairs = p.similar_pairs(min_cos=sim_min, kinds=kinds, since=t_since,
                                        limit=limit)
            recs = p.records({x for a, b, _ in pairs for x in (a, b)})
            out = []
            for a, b, cos in pairs:
                older, newer = sorted((recs[a], recs[b]), key=lambda r: (r.clock, r.id))
                same = _same_numbers(older.text, newer.text)
                out.append(SimilarPair(cosine=cos, near_duplicate=cos >= dup_min and same,
                                       older=older, newer=newer))
            return out

        return self._read(run)

    def show(self, memory_id: str) -> Shown:
        """A memory's whole record, provenance and every op that touched it."""
        owner = self._owner(memory_id)
        if owner is not self:
            shown = owner.show(memory_id)
            shown.memory.pool = "personal"
            return shown
        mid = self.resolve(memory_id)

        def run(p: Projection) -> Shown:
            rec = p.record(mid)
            assert rec is not None
            return Shown(memory=rec, ops=p.ops_touching(mid))

        return self._read(run)

    def log_ops(self, limit: int | None = None, author: str | None = None) -> list[OpInfo]:
        """Ops in replay order; ``limit`` keeps the last N."""
        if limit is not None and limit < 0:
            raise InvalidInput(f"-n must not be negative (got {limit})", "use -n 20")
        return self._read(lambda p: p.log(limit, author))

    def skipped(self) -> list[Skipped]:
        return self._read(lambda p: p.skipped())

    def status(self) -> Status:
        """Partitions, op and memory counts, and the projection's state."""
        try:
            mine = self.log.partition_for(self.log.identity())
        except NoIdentity:
            mine = None

        def run(p: Projection) -> Status:
            counts = p.counts()
            tips = p.watermarks()
            per = counts["per_partition"]
            assert isinstance(per, dict)
            parts = [
                PartitionInfo(
                    name=ref.rsplit("/", 1)[-1], ref=ref, tip=tip,
                    ops=int(per.get(ref.rsplit("/", 1)[-1], {}).get("ops", 0)),
                    authors=list(per.get(ref.rsplit("/", 1)[-1], {}).get("authors", [])),
                    mine=ref.rsplit("/", 1)[-1] == mine,
                )
                for ref, tip in sorted(tips.items())
            ]
            op_counts = dict(counts["ops"])  # type: ignore[call-overload]
            op_counts["total"] = sum(op_counts.values())
            mem_counts = dict(counts["memories"])  # type: ignore[call-overload]
            mem_counts["total"] = sum(v for k, v in mem_counts.items() if k != "quarantined")
            size = sum(
                f.stat().st_size for f in p.directory.glob("*") if f.is_file()
            )
            meta = p.meta()
            report = self.last_refresh or RefreshReport()
            return Status(
                repository=str(self.log.workdir),
                partition=mine,
                partitions=parts,
                ops=op_counts,
                memories=mem_counts,
                projection={
                    "path": str(p.path),
                    "schema": int(meta.get("schema", 0)),
                    "format": int(meta.get("format", 0)),
                    "size_bytes": size,
                    "up_to_date": True,
                    "last_refresh": msgspec.to_builtins(report),
                },
                skipped=p.skipped(),
            )

        return self._read(run)


def _fact_value(rec: Record, others: list[Record], as_of: int | None,
                valid_at: int | None) -> FactValue:
    return FactValue(
        key=rec.key or "", value=rec.text or "", id=rec.id, author=rec.author,
        author_email=rec.author_email, recorded_at=rec.recorded_at,
        valid_from=rec.valid_from, valid_until=rec.valid_until,
        status=rec.status if as_of is None and valid_at is None else "active",
        status_now=rec.status, conflicts=others, as_of=iso(as_of) if as_of is not None else None,
        valid_at=iso(valid_at) if valid_at is not None else None,
    )


def _same_numbers(a: str | None, b: str | None) -> bool:
    return _NUMBER.findall(a or "") == _NUMBER.findall(b or "")


def _int8_cosine(a: bytes, b: bytes) -> float:
    va = memoryview(a).cast("b")
    vb = memoryview(b).cast("b")
    dot = sum(x * y for x, y in zip(va, vb))
    na = sum(x * x for x in va) ** 0.5
    nb = sum(y * y for y in vb) ** 0.5
    return dot / (na * nb) if na and nb else 0.0


def _ts(text: str) -> int:
    try:
        return parse_date(text)[0]
    except InvalidDate:
        return 0


def _unit(raw: str) -> float:
    value = float(raw)
    if not 0.0 <= value <= 1.0:
        raise ValueError(raw)
    return value


def _half_life(raw: str) -> float | None:
    if raw.lower() in ("never", "none", "off", "0"):
        return None
    value = float(raw)
    if value <= 0:
        raise ValueError(raw)
    return value


def _bool(raw: str) -> bool:
    low = raw.lower()
    if low in ("true", "yes", "on", "1", ""):
        return True
    if low in ("false", "no", "off", "0"):
        return False
    raise ValueError(raw)


def _purge_report(r: Rewrite, *, dry_run: bool, tombstone: bool) -> PurgeReport:
    return PurgeReport(
        dry_run=dry_run, partition=r.partition, old_tip=r.old_tip, new_tip=r.new_tip,
        ops_removed=r.removed, commits_rewritten=r.rewritten, commits_dropped=r.dropped,
        tombstone=tombstone, backups=r.backups,
        remotes=[PurgeRemote(remote=c.namespace, tip=c.tip, has_content=c.has_content,
                             next_push=c.next_push) for c in r.remotes],
    )


def _gate_version() -> str:
    from . import gate

    return gate.version()


def _quarantine_reason(body: ops.MemoryBody) -> str | None:
    """Why a replayed memory would not pass the write gate today, or None."""
    fields = [body.text, body.key or "", *body.tags, *body.entities, body.source or ""]
    findings = _gate_findings("\n".join(v for v in fields if v))
    return "; ".join(findings[:3]) if findings else None


def _gate(body: ops.MemoryBody, *, redact: bool) -> ops.MemoryBody:
    """Run the write gate over every free-text field of a memory."""
    from . import gate

    fields = {"text": body.text, "key": body.key or "", "tags": "\n".join(body.tags),
              "about": "\n".join(body.entities), "source": body.source or "",
              "session": body.session or "", "paths": "\n".join(body.anchors.paths)}
    findings: list[str] = []
    text = body.text
    for name, value in fields.items():
        if not value:
            continue
        found = gate.scan(value)
        if name == "text" and redact and found and all(f.category == "secret" for f in found):
            text, _ = gate.redact(value)
            found = gate.scan(text)
        findings += [f"{f.describe()}" + ("" if name == "text" else f" in {name}") for f in found]
    if findings:
        secret_only = all(f.startswith("secret") for f in findings)
        hint = ("remove it, or use --redact to store the text with secrets masked"
                if secret_only and not redact else
                "remove it: memories are shared with every clone and read by agents "
                "(see docs/security.md)")
        raise GateRefused(findings, hint)
    return msgspec.structs.replace(body, text=text) if text != body.text else body


def _gate_findings(text: str) -> list[str]:
    from . import gate

    return [f.describe() for f in gate.scan(text)]


def _gate_reason(reason: str | None) -> str | None:
    """A reason is free text that replicates like a memory: the same gate applies."""
    found = _gate_findings(reason) if reason else []
    if found:
        raise GateRefused([f"{f} in reason" for f in found],
                          "remove it from the reason: reasons are shared with every clone")
    return reason


def _check_writable(line: bytes, partition: str) -> None:
    """Refuse to write what replay would skip (limits, ranges, types): the
    writer and every reader apply the very same checks."""
    from .replay import Skip, check_line

    item = check_line(line, partition)
    if isinstance(item, Skip):
        raise InvalidInput(
            f"this memory cannot be stored: {item.reason}",
            "shorten or correct the offending field (see docs/data-model.md, Limits)",
        )


def _when(value: str | int | None, flag: str) -> int | None:
    if value is None or value == "":
        return None
    if isinstance(value, int):
        return value
    try:
        return parse_date(value)[0]
    except InvalidInput as exc:
        raise type(exc)(f"{flag}: {exc.message}") from None


def _field(value: str | None, what: str) -> str | None:
    if value is None:
        return None
    value = value.strip()
    if not value:
        return None
    if len(value) > ops.MAX_FIELD_CHARS:
        raise InvalidInput(
            f"{what} is {len(value)} characters; the limit is {ops.MAX_FIELD_CHARS}",
            f"shorten the {what}",
        )
    return value


def _key(key: str | None) -> str | None:
    """A key names an attribute: no line breaks, control characters or angle brackets
    (it is printed inside delimited context, where it must not look like markup)."""
    k = _field(key, "key")
    if k is not None and (any(c in k for c in "<>")
                          or any(ord(c) < 32 or ord(c) == 127 for c in k)):
        raise InvalidInput(f"'{key}' is not a usable key",
                           "use a short name without line breaks or angle brackets, "
                           "e.g. db.engine")
    return k


def _names(values: Iterable[str], what: str) -> list[str]:
    out: list[str] = []
    for v in values:
        f = _field(v, what)
        if f and f not in out:
            out.append(f)
    if len(out) > ops.MAX_LIST_ITEMS:
        raise InvalidInput(
            f"too many {what} values ({len(out)}); the limit is {ops.MAX_LIST_ITEMS}",
            f"use fewer {what} values",
        )
    return out


def _clip(text: str, n: int) -> str:
    return text if len(text) <= n else text[: n - 1] + "…"



# -- the embedder (gitmem.embed), kept out of every path that does not need it --


def _embedder_identity() -> tuple[str, int]:
    from . import embed

    _, version, dim = embed.identity()
    return version, dim


def _doc_embedder() -> Any:
    from . import embed

    return embed.default_embedder()


def _query_vector(text: str) -> bytes | None:
    # Pure Python (no numpy, no tokenizers): a fresh process pays ~2 ms, not ~65.
    from . import embed
    from .embed.text import quantize_query

    q = quantize_query(embed.embed_query(text))
    return q if any(q) else None
