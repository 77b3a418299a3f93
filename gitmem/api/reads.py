"""Reading one pool: recall, show, log, status.

Why this exists: these are the questions asked most (``recall`` on every agent
turn), and each is one refreshed read of the projection: validate the
question, refresh what moved in the log, ask the projection or the ranking
(``gitmem.recall``), and return plain records (``gitmem.model``). No model call,
no network: the query is embedded in pure Python.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING

import msgspec

from .. import ops
from ..errors import InvalidInput, NoIdentity
from ..oplog import REF_PREFIX
from ..model import (CodeAnchorInfo, Hit, Listing, OpInfo, PartitionInfo, Record, RefreshReport,
                     Shown, Skipped, Status)
from . import anchoring, settings, sharing
from .validate import repo_paths, well_formed
from .embedding import query_vector, word_rank
from ..salience import FUTURE_SKEW
from .pool import Pool

if TYPE_CHECKING:
    from ..projection import Projection

USE_TOP = 3  # how many of a recall's hits count as used
STATUSES = ("active", "retired", "all")  # what list shows
# Another pool's hits merged into these: (hits, as_of, valid_at) -> hits.
Merge = Callable[[list[Hit], int | None, int | None], list[Hit]]


def recall(
    pool: Pool,
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
    merge: Merge | None = None,
    authors: Sequence[str] = (),
    about: Sequence[str] = (),
    paths: Sequence[str] = (),
    min_score: float | None = None,
) -> list[Hit]:
    """The memories that best answer ``query``, best first.

    ``mode`` picks the channels: ``hybrid`` (the default: lexical and
    vector fused), ``lexical`` (FTS5 only) or ``vector`` (embeddings only).
    ``as_of`` answers from what the log believed at that time, ``valid_at``
    from what was true in the world then (a date, or a git revision).
    ``include_retired`` adds retired, conflict-losing and faded memories.
    ``merge`` puts another pool's hits beside these (``Store``: the personal pool).
    ``authors``, ``about`` and ``paths`` narrow like ``kinds`` and ``tags``;
    ``min_score`` leaves out hits less relevant than it (0 to 1; None: the
    gitmem.minScore setting, else ``relevance.MIN_SCORE``).
    """
    if not isinstance(query, str) or not query.strip():
        raise InvalidInput("the query is empty", "say what you are looking for")
    well_formed(query=query, kind=kinds, tag=tags, author=authors, about=about, path=paths)
    if not any(c.isalnum() for c in query):
        # "*" or "?": someone wants to browse, and no word can match anything.
        raise InvalidInput(f"the query {query.strip()[:20]!r} has no words to look for",
                           "to browse every memory, use git mem list")
    if k < 1:
        raise InvalidInput(f"-k must be at least 1 (got {k})", "use -k 10")
    at_most(k, "-k", "use -k 10")
    for kind in kinds:
        if kind not in ops.KINDS:
            raise InvalidInput(f"unknown kind '{kind}'", f"use one of: {', '.join(ops.KINDS)}")
    from ..recall import MODES, Query, rank

    if mode not in MODES:
        raise InvalidInput(f"unknown recall mode '{mode}'", f"use one of: {', '.join(MODES)}")
    t_as_of = settings.point_in_time(pool.log, as_of, "--as-of")
    t_valid = settings.point_in_time(pool.log, valid_at, "--valid-at")
    q = Query(query, k, list(kinds), list(tags), include_retired, mode, explain,
              include_quarantined, as_of=t_as_of, valid_at=t_valid,
              salience=settings.salience_config(pool.log, t_as_of),
              authors=list(authors), about=list(about),
              paths=narrowing_paths(pool, paths), min_score=cutoff(pool, min_score))
    usage = pool.usage()
    hits = pool.read(lambda p: anchoring.annotate(
        pool, p, rank(p, q, query_vector, usage.read if usage else None, word_rank),
        fade=not include_retired))
    if not hits:
        sharing.note_remote_memory(pool)
    for h in hits:
        h.pool = pool.name
    if merge is not None:
        hits = merge(hits, t_as_of, t_valid)
    if record_use and t_as_of is None and t_valid is None and not include_retired:
        # Being handed out is a (weak, local) reinforcement: the top hits only.
        record_use_of(pool, hits[:USE_TOP])
    if usage is not None and usage.error:
        pool.warnings.append(usage.error)
    return hits

def contested(pool: Pool, hits: Iterable[Hit], as_of: str | int | None = None,
              valid_at: str | int | None = None) -> dict[str, list[str]]:
    """The hits of this pool that win a keyed conflict, each with the ids of the values
    it wins over (``git mem conflicts``), at the point asked about if any. A winner
    reads like any current value, yet the team disagrees on it: an agent told only
    the value would take it as settled."""
    from ..projection import Scope

    keyed = [h for h in hits if h.key and h.pool == pool.name and h.status == "active"
             and h.conflict_with is None and h.quarantine is None]
    if not keyed:
        return {}
    scope = Scope(as_of=settings.point_in_time(pool.log, as_of, "--as-of"),
                  valid_at=settings.point_in_time(pool.log, valid_at, "--valid-at"),
                  shadow=False)

    def run(p: Projection) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {}
        values: dict[str, list[Record]] = {}
        for h in keyed:
            assert h.key is not None
            if h.key not in values:  # current values, the winner first (see keyed)
                values[h.key] = p.keyed(scope, h.key)
            current = values[h.key]
            if len(current) > 1 and current[0].id == h.id:
                out[h.id] = [r.id for r in current[1:]]
        return out

    return pool.read(run, embed=False)


MAX_COUNT = 1_000_000  # beyond any store; past 2**63 SQLite cannot even bind the number


def at_most(value: int, flag: str, hint: str) -> None:
    if value > MAX_COUNT:
        raise InvalidInput(f"{flag} must be at most {MAX_COUNT:,} (got {value})", hint)


def cutoff(pool: Pool, min_score: float | None) -> float | None:
    """The relevance a hit needs to be returned: the caller's, else gitmem.minScore,
    else None (recall's default, see ``recall.Query.min_score``)."""
    if min_score is None:
        if pool.log.settings().get("gitmem.minscore") is None:
            return None
        return settings.setting(pool.log, "gitmem.minScore", settings.unit, 0.0,
                                "use a number from 0 to 1, e.g. 0.05")
    if not isinstance(min_score, (int, float)) or not 0.0 <= min_score <= 1.0:
        raise InvalidInput(f"--min-score must be from 0 to 1 (got {min_score})",
                           "use --min-score 0.5 for probably relevant hits only, 0 for all")
    return float(min_score)


def narrowing_paths(pool: Pool, paths: Sequence[str]) -> list[str]:
    """Filter paths as stored: relative to the work tree, from wherever we run."""
    if not paths:
        return []
    if pool.log.workdir is None:
        raise InvalidInput("--path needs a work tree", "run it inside a checkout")
    return repo_paths(paths, pool.cwd, pool.log.workdir)


def browse(pool: Pool, *, kinds: Sequence[str] = (), tags: Sequence[str] = (),
           authors: Sequence[str] = (), about: Sequence[str] = (), paths: Sequence[str] = (),
           since: str | int | None = None, until: str | int | None = None,
           status: str = "active", include_quarantined: bool = False, limit: int = 50,
           offset: int = 0) -> Listing:
    """Memories newest first, narrowed like recall; one page of them (see ``Listing``)."""
    well_formed(kind=kinds, tag=tags, author=authors, about=about, path=paths)
    if status not in STATUSES:
        raise InvalidInput(f"unknown status '{status}'", f"use one of: {', '.join(STATUSES)}")
    for kind in kinds:
        if kind not in ops.KINDS:
            raise InvalidInput(f"unknown kind '{kind}'", f"use one of: {', '.join(ops.KINDS)}")
    if limit < 1:
        raise InvalidInput(f"-n must be at least 1 (got {limit})", "use -n 50")
    if offset < 0:
        raise InvalidInput(f"--offset must not be negative (got {offset})", "use --offset 0")
    at_most(limit, "-n", "use -n 50 and page with --offset")
    at_most(offset, "--offset", "use the offset the last page printed")
    from ..projection import Scope

    scope = Scope(kinds=tuple(kinds), tags=tuple(tags), retired=status != "active",
                  quarantined=include_quarantined, now=settings.now(),
                  authors=tuple(authors), about=tuple(about),
                  paths=tuple(narrowing_paths(pool, paths)),
                  since=settings.point_in_time(pool.log, since, "--since"),
                  until=settings.point_in_time(pool.log, until, "--until"))
    records, total = pool.read(lambda p: p.browse(
        scope, retired_only=status == "retired", limit=limit, offset=offset))
    for r in records:
        r.pool = pool.name
    nxt = offset + len(records)
    return Listing(memories=records, total=total, offset=offset,
                   next_offset=nxt if nxt < total else None)


def record_use_of(pool: Pool, hits: Iterable[Hit]) -> None:
    """Note, locally, that these hits were put before someone: it renews their
    age for decay (docs/time.md). Faded or retired hits are never renewed
    by being looked at; only a confirmation brings them back."""
    usage = pool.usage()
    if usage is None:
        return
    usage.record([h.id for h in hits if h.status == "active" and not h.faded
                  and h.conflict_with is None and h.pool == pool.name], settings.now())


def show(pool: Pool, memory_id: str) -> Shown:
    """A memory's whole record, provenance and every op that touched it."""
    mid = pool.resolve(memory_id)

    def run(p: Projection) -> Shown:
        rec = p.record(mid)
        assert rec is not None
        current = p.current_anchors(mid)
        if current is not None:  # the anchors a confirm re-anchored it at, else its add's
            rec.anchors.code = [CodeAnchorInfo(**msgspec.structs.asdict(a)) for a in current.code]
        anchoring.annotate(pool, p, [rec])
        return Shown(memory=rec, ops=p.ops_touching(mid))

    return pool.read(run)

def log_ops(pool: Pool, limit: int | None = None, author: str | None = None) -> list[OpInfo]:
    """Ops in replay order; ``limit`` keeps the last N."""
    if limit is not None and limit < 0:
        raise InvalidInput(f"-n must not be negative (got {limit})", "use -n 20")
    if limit is not None and limit >= 2**62:
        limit = None  # more than any log holds: all of it (SQLite cannot bind past 2**63)
    return pool.read(lambda p: p.log(limit, author))

def skipped(pool: Pool) -> list[Skipped]:
    return pool.read(lambda p: p.skipped())


STATUS_SKIPPED = 100  # skipped ops a status lists (it counts them all)
STATUS_PARTITIONS = 50  # partitions a status lists (it counts them all): this clone's first


def _skipped_listed(p: Projection, mine: str | None) -> list[Skipped]:
    """The skipped ops a status lists: this clone's own partition's first (a teammate's
    junk must not hide them), then others', STATUS_SKIPPED in all."""
    own = p.skipped(STATUS_SKIPPED, refs=[REF_PREFIX + mine]) if mine else []
    if len(own) >= STATUS_SKIPPED:
        return own
    seen = {(s.partition, s.commit, s.line) for s in own}
    rest = [s for s in p.skipped(STATUS_SKIPPED + len(own)) if (s.partition, s.commit, s.line) not in seen]
    return own + rest[:STATUS_SKIPPED - len(own)]


def status(pool: Pool) -> Status:
    """Partitions, op and memory counts, and the projection's state."""
    mine: str | None
    try:
        cid = pool.log.clone_id(create=False)
        who = pool.log.identity()
        # A clone that never wrote has no id yet: status names the partition it
        # would write without creating one (its .git may be read-only).
        mine = ops.partition_name(who.email, cid) if cid else pool.log.partition_for(who)
    except NoIdentity:
        mine = None
    except OSError:
        mine = None  # no clone id yet, and none can be created here

    def run(p: Projection) -> Status:
        tips, total = p.partition_page(REF_PREFIX + mine if mine else None, STATUS_PARTITIONS)
        counts = p.counts(sorted(tips))
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
        future = p.future_dated(settings.now() + FUTURE_SKEW)
        report = pool.last_refresh or RefreshReport()
        return Status(
            repository=str(pool.log.workdir),
            partition=mine,
            partitions=parts,
            partitions_total=total,
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
            skipped=_skipped_listed(p, mine),
            skipped_total=p.skipped_count(),
            future_dated=future[0],
            future_dated_ids=future[1],
        )

    out = pool.read(run)
    out.unpushed = sharing.unpushed(pool)
    out.remote_memory = sharing.remote_memory(pool)
    # A cut the replay met (shallow.py) counts whatever its commit holds: a tip with
    # no ops.jsonl is no memory commit to cut_by_shallow, yet hides the history under it.
    out.shallow = pool.log.cut_by_shallow() or bool(pool.read(lambda p: p.shallow_cut(), embed=False))
    if out.remote_memory is not None:
        pool.warn(sharing.hint(out.remote_memory))
    return out


# -- the memories that matter for a change (recall --diff) ----------------------------


DIFF_WORDS = 16  # identifiers of a change looked up in memory text
_TIE = {"exact": 1.0, "inside": 0.9, "above": 0.7, "root": 0.4}


def for_diff(pool: Pool, rev: str | None, k: int = 10) -> list[Hit]:
    """The memories that matter for a change (``recall --diff``), best first: tied to
    the paths it touches (the file itself first, then a folder above it), then those
    naming the identifiers on its changed lines (the lexical channel)."""
    change = pool.log.code_diff(rev)
    if change is None:
        raise InvalidInput(f"git cannot diff against {rev!r}",
                           "give a commit, branch or A..B, or no value for the work tree")
    paths, words = change
    cfg = settings.salience_config(pool.log, None)

    def run(p: Projection) -> list[Hit]:
        from ..salience import by_salience

        weight: dict[str, float] = {}
        for mid, asked, tied in p.ties(paths):
            kind = ("exact" if tied == asked else "root" if tied == "." else
                    "above" if asked.startswith(tied + "/") else "inside")
            weight[mid] = weight.get(mid, 0.0) + _TIE[kind]
        recs = [r for r in p.records(list(weight)).values()
                if r.status == "active" and r.quarantine is None and r.conflict_with is None]
        order = {r.id: i for i, (r, _) in enumerate(by_salience(p, cfg, recs))}
        recs = [r for r in recs if r.id in order]  # faded ones stay out
        recs.sort(key=lambda r: (-weight[r.id], order[r.id]))
        return [_hit(r, i + 1, min(1.0, 0.5 + 0.25 * weight[r.id]))
                for i, r in enumerate(anchoring.annotate(pool, p, recs, fade=True))]

    hits = pool.read(run)[:k]
    if len(hits) < k and words:
        seen = {h.id for h in hits}
        # Any memory holding one of the names counts (min_score 0): they come after
        # every memory tied to a touched path.
        for h in recall(pool, " ".join(words[:DIFF_WORDS]), k=k, mode="lexical",
                              record_use=False, min_score=0.0):
            if h.id not in seen and len(hits) < k:
                h.rank = len(hits) + 1
                hits.append(h)
    return hits


def _hit(r: Record, rank: int, score: float) -> Hit:
    import msgspec

    return Hit(**msgspec.structs.asdict(r), rank=rank, score=round(score, 4),
               rank_score=round(score, 4))
