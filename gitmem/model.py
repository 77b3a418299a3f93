"""The plain data the library returns: records, ops as seen in the log, hits.

These are what front ends print and what ``--json`` serialises (with
``msgspec.to_builtins``), so their field names are public interface: add
fields freely, never rename or remove one. Pure module.
"""

from __future__ import annotations

import msgspec


class CodeAnchorInfo(msgspec.Struct, kw_only=True, omit_defaults=True):
    """A path a memory is anchored to, and what it held at the anchor commit."""

    path: str
    type: str  # blob | tree
    oid: str
    start: int | None = None  # a line range of a file, 1-based, inclusive
    end: int | None = None
    symbol: str | None = None


class Anchor(msgspec.Struct, kw_only=True):
    commit: str | None = None
    paths: list[str] = []
    code: list[CodeAnchorInfo] = []


class CodeChange(msgspec.Struct, kw_only=True, omit_defaults=True):
    """How one anchored path changed since the anchor, as of HEAD.

    ``state``: unchanged | whitespace | changed | renamed | deleted | unknown."""

    path: str
    state: str
    commits: int | None = None  # commits since the anchor that touched it
    changed_at: str | None = None  # the newest of them
    added: int | None = None  # lines, anchor -> HEAD
    deleted: int | None = None
    renamed_to: str | None = None
    range_touched: bool | None = None  # a FILE:START-END anchor: were its lines changed


class CodeStatus(msgspec.Struct, kw_only=True):
    """Whether the code a memory is anchored to changed since it was written."""

    stale: bool  # "code changed since": changed, renamed or deleted
    paths: list[CodeChange] = []


class LinkInfo(msgspec.Struct, kw_only=True):
    """An edge memory's endpoints (typed node names) and predicate."""

    src: str
    predicate: str
    dst: str


class Record(msgspec.Struct, kw_only=True):
    """A memory as the projection sees it now."""

    id: str
    kind: str
    text: str | None  # None once forgotten
    key: str | None = None
    tags: list[str] = []
    entities: list[str] = []
    importance: float = 0.5
    valid_from: str | None = None
    valid_until: str | None = None
    source: str | None = None
    session: str | None = None
    anchors: Anchor = msgspec.field(default_factory=Anchor)
    supersedes: list[str] = []
    author: str
    author_email: str
    partition: str
    clock: int
    recorded_at: str
    status: str  # active | invalidated | superseded | forgotten
    retired_at: str | None = None
    retired_by: str | None = None
    retired_reason: str | None = None
    commit: str
    quarantine: str | None = None  # why the write gate would refuse it (then hidden by default)
    # A keyed value that lost a conflict: the id of the value that is current.
    conflict_with: str | None = None
    pool: str = "project"  # or "personal": the person's own pool, never pushed to a team
    code: CodeStatus | None = None  # for a memory with code anchors: changed since?
    by: str | None = None  # "agent:NAME" when an agent wrote it; None: a person
    link: LinkInfo | None = None  # an edge's endpoints


class OpInfo(msgspec.Struct, kw_only=True):
    """One op of the log, in replay order, without the content it carried."""

    id: str
    type: str
    author: str
    author_email: str
    partition: str
    clock: int
    recorded_at: str
    commit: str
    target: str | None = None
    reason: str | None = None
    summary: str | None = None  # first line of the memory's text (add ops)


class Hit(Record, kw_only=True):
    """A recall result: the record plus its rank and score."""

    rank: int
    # How likely it is to answer the query, 0 to 1 (gitmem.relevance): 0.5 and
    # above reads "probably relevant". The order is recall's fused ranking, so a
    # lower hit may score higher than one above it.
    score: float
    rank_score: float = 0.0  # what the order comes from: fused ranks x salience
    # importance x decay x reinforcement; below the floor a memory has faded
    # (left out of default recall, returned with --all).
    salience: float = 1.0
    faded: bool = False
    explain: dict[str, object] | None = None  # every factor of the score (--explain)


class BriefHit(msgspec.Struct, kw_only=True, omit_defaults=True):
    """A recall hit with only what an agent reads: ``recall --format brief``, MCP."""

    id: str
    score: float
    kind: str
    text: str | None
    recorded_at: str
    # Only when they say something: absent means a current memory of this repository.
    key: str | None = None
    status: str | None = None  # invalidated, superseded, forgotten
    pool: str | None = None  # personal
    conflict_with: str | None = None
    faded: bool = False
    code_changed: bool = False  # the code it is anchored to changed since (see git mem stale)

    @classmethod
    def of(cls, h: Hit) -> BriefHit:
        return cls(id=h.id, score=h.score, kind=h.kind, text=h.text, recorded_at=h.recorded_at,
                   key=h.key, status=None if h.status == "active" else h.status,
                   pool=None if h.pool == "project" else h.pool, conflict_with=h.conflict_with,
                   faded=h.faded, code_changed=bool(h.code and h.code.stale))


class Listing(msgspec.Struct, kw_only=True):
    """One page of ``git mem list``: memories newest first."""

    memories: list[Record]
    total: int  # how many match the filters, over every page
    offset: int
    next_offset: int | None  # the next page's offset; None on the last page


class Skipped(msgspec.Struct, kw_only=True):
    """An op line replay refused."""

    partition: str
    commit: str
    line: int
    reason: str
    id: str | None = None


class RefreshReport(msgspec.Struct, kw_only=True):
    """What one refresh or rebuild did."""

    partitions_changed: int = 0
    partitions_rewritten: int = 0
    ops_applied: int = 0
    ops_skipped: int = 0
    embedded: int = 0
    embedded_ahead: int = 0  # vector rows a forked child made while the replay ran
    judged_ahead: int = 0  # gate verdicts a forked child gave while the replay ran
    full_rebuild: bool = False
    seconds: float = 0.0
    # False when a time budget stopped it early (the rest is done by the next one).
    complete: bool = True


# -- what the library's actions return (gitmem.api) --------------------------------


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
    reanchored: bool = False  # its code had moved on: anchored again at HEAD
    outcome: str | None = None  # a procedure followed: "worked" or "failed"


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


class Fork(msgspec.Struct, kw_only=True):
    """One memory replaced twice at once (two clones, before either synced): its
    current replacements, oldest first (gitmem/projection/forks.py)."""

    heads: list[Record]
    replaced: list[str]  # the memory replaced twice (the fork point)


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
    # Old commit ids rebuilt: those the partition held before the command (the
    # tombstone it writes first is rebuilt too, not listed), as the dry run lists them.
    commits_rewritten: list[str]
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
    # The first reads.STATUS_PARTITIONS partitions: this clone's, then the others by
    # name (a teammate's 20,000 would be 20,000 lines); how many there are in all.
    partitions: list[PartitionInfo]
    partitions_total: int = 0
    ops: dict[str, int]
    memories: dict[str, int]
    projection: dict[str, object]
    skipped: list[Skipped]  # the first reads.STATUS_SKIPPED of them
    skipped_total: int = 0  # how many op lines replay refused in all
    # Memories whose recorded time lies beyond now plus a day (a skewed or forged
    # clock): ranked as if recorded then. How many, and the first ids.
    future_dated: int = 0
    future_dated_ids: list[str] = []
    # This clone's commits and ops the push remote has not got (as of the last fetch
    # or push): {"remote", "commits", "ops", "fetched_before"}; None without a remote.
    unpushed: dict[str, object] | None = None
    # Memory on the remote this clone has never fetched: {"remote", "partitions",
    # "checked_at"} (one git ls-remote at most once a day), else None.
    remote_memory: dict[str, object] | None = None
    # A shallow fetch may have left a partition without its history: replay read only
    # the commits the clone has ('git fetch --unshallow' brings the rest, and
    # 'git mem rebuild' then replays it).
    shallow: bool = False


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
    # The opt-in pre-push hook: installed | chained | already | removed | absent.
    pre_push: str = "absent"


class RekeyReport(msgspec.Struct, kw_only=True):
    old_clone_id: str
    new_clone_id: str
    moved_ops: int
    partitions: dict[str, str]  # old partition -> new partition (where ops moved)
    backups: list[str]


class BootstrapItem(msgspec.Struct, kw_only=True, omit_defaults=True):
    """One memory ``git mem bootstrap`` proposes, and what became of it."""

    text: str
    kind: str
    source: str  # FILE:FIRST-LAST it came from
    # new (dry run: would be added) | added | known (already a current memory) |
    # refused (the write gate) | similar (a near-duplicate is stored)
    status: str
    tags: list[str] = []
    id: str | None = None
    supersedes: list[str] = []  # memories from the old text of the same lines
    why: str | None = None


class BootstrapReport(msgspec.Struct, kw_only=True):
    dry_run: bool
    files: list[str]
    items: list[BootstrapItem] = []


class Exported(msgspec.Struct, kw_only=True):
    format: str
    text: str
    count: int  # memories in it
    path: str | None = None  # --into: the file written
    changed: bool = False


class Evidence(msgspec.Struct, kw_only=True):
    """Where in a session a proposal came from: a transcript line and an excerpt."""

    line: int  # 0: no line number known (a model's quote)
    excerpt: str


class Proposal(msgspec.Struct, kw_only=True):
    """A memory capture proposes, waiting in this clone's inbox for a verdict."""

    id: str  # 16 hex digits; stable for the same proposal, so a verdict sticks
    action: str  # "add" a new memory, or "confirm" one that says the same
    text: str
    kind: str
    tags: list[str] = []
    paths: list[str] = []
    importance: float = 0.5
    reason: str  # which rule proposed it ("explicit request", "model extractor", ...)
    evidence: list[Evidence] = []
    session: str | None = None
    agent: str | None = None  # the agent whose session it came from ("claude-code")
    extractor: str = "builtin"  # or "model"
    proposed_at: str
    target: str | None = None  # confirm: the memory it confirms
    target_text: str | None = None
    outcome: str | None = None  # confirm of a procedure: "worked" or "failed"
    cosine: float | None = None  # confirm of a near-duplicate: how close


class CaptureReport(msgspec.Struct, kw_only=True):
    """What one capture run did with a session."""

    session: str | None
    transcript: str | None
    events: int  # events read from the transcript
    proposed: list[Proposal] = []  # new in the inbox
    known: int = 0  # already in the inbox, or decided before
    refused: int = 0  # the write gate refused them (never stored, not even in the inbox)
    accepted: list[str] = []  # auto-accepted (gitmem.captureAccept = personal): memory ids
    errors: list[str] = []  # one line each (the model extractor's failure, ...)
    dropped_session: bool = False  # the session's scratch notes were dropped (it ended)


class Verdict(msgspec.Struct, kw_only=True):
    """What became of an inbox proposal."""

    id: str
    verdict: str  # accepted | rejected
    memory: str | None = None  # accepted: the memory added or confirmed
    op: str | None = None
    pool: str = "project"
    duplicate_of: str | None = None


class ScratchNote(msgspec.Struct, kw_only=True):
    """A note in a session's working memory: local, never pushed, gone at session end."""

    id: str
    session: str
    text: str
    kind: str = "note"
    tags: list[str] = []
    keep: bool = False  # proposed for the shared log when the session ends
    recorded_at: str


class RelatedEdge(msgspec.Struct, kw_only=True):
    """A link reached by ``related``: its memory, endpoints and distance."""

    id: str  # the edge memory's id
    src: str
    predicate: str
    dst: str
    hops: int
    author: str
    recorded_at: str


class Related(msgspec.Struct, kw_only=True):
    """What is linked to a node, within ``depth`` hops."""

    node: str
    depth: int
    edges: list[RelatedEdge] = []
    memories: list[Record] = []  # memories that are nodes of the walk
    truncated: bool = False  # the walk stopped at its edge limit: there are more links


class SkillProposal(msgspec.Struct, kw_only=True):
    """A procedure ready to become a skill file, or a skill to retire."""

    action: str  # graduate | retire | current (its SKILL.md already says this) |
    #              refused (its SKILL.md is a link out of the work tree: reason says so)
    name: str
    path: str  # the SKILL.md, relative to the work tree
    memory: str  # the procedure's id
    text: str
    worked: int
    failed: int
    last_outcome: str | None = None
    reason: str
    diff: str = ""  # graduate: the unified diff that --write applies
    written: bool = False
    reference: str | None = None  # after --write: the memory that now points at the file


class Fading(msgspec.Struct, kw_only=True):
    """A current memory on its way out of default recall, and why."""

    memory: Record
    salience: float
    floor: float  # below it a memory has faded (gitmem.salienceFloor)
    days_left: float | None  # until it fades, if nothing renews it (None: it never does)
    why: str  # "note, half-life 90 days, last renewed 70 days ago, 0 confirmations"
