"""The op-log's vocabulary: one msgspec Struct per operation, and its encoding.

An op is the unit of truth. The projection is whatever a fold over the set of
ops gives, so everything a later reader may need must be written here, once.

Encoding rules (see docs/data-model.md):
- An op is one line of canonical JSON: msgspec's encoding of the Struct, fields
  in declaration order, default-valued fields omitted, no insignificant space.
- An op id is the SHA-256 of exactly those bytes, as 64 hex digits. Readers
  hash the bytes they read and never re-encode, so an op written by a newer
  version (with fields this version does not know) keeps its id.
- A pack is one or more op lines, each ending in ``\\n``; one pack per commit.

Tags (``"op": "add"``) never change once published. Adding an op type or an
optional field is backward compatible (old readers skip unknown op types and
report them); anything else bumps FORMAT_VERSION.

Format history:
    1: original format: add, invalidate, forget; later, within version 1 (an
       added op type, which older readers skip and report): confirm.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from typing import Annotated, Literal, Union

import msgspec

from . import hashes
from .folding import folded as folded  # ops.folded: the form of keys and tags

FORMAT_VERSION = 1

KINDS: tuple[str, ...] = ("fact", "note", "edge", "procedure", "persona")
Kind = Literal["fact", "note", "edge", "procedure", "persona"]

# Documented limits (docs/data-model.md). Writers refuse beyond them; replay
# skips ops beyond them.
MAX_TEXT_BYTES = 16 * 1024
MAX_FIELD_CHARS = 512
MAX_LIST_ITEMS = 64
MAX_OP_BYTES = 64 * 1024
MAX_PACK_BYTES = 64 * 1024 * 1024
# A pack commit's tree holds ops.jsonl (ours: one 37-byte entry) and its message a
# summary and the Gitmem-* trailers: anything over these is skipped unread (a
# 300k-entry tree reused by 50 commits, or 50 MiB messages, cost every clone minutes).
MAX_TREE_BYTES = 64 * 1024
MAX_COMMIT_BYTES = 64 * 1024
# Arrays and objects nest at most this deep in an op line (ours nest 4 deep).
# Checked before decoding, without recursion, so that a line is accepted or
# refused the same way in every process, whatever its call stack.
MAX_JSON_DEPTH = 32
ID_HEX_LEN = 64
MIN_PREFIX = 7

# Times are unix seconds within what every clone can render (years 1..9999);
# clocks stay below 2**53 so they survive JSON and SQLite everywhere.
MAX_CLOCK = 2**53
# A partition's clock may jump (its writer saw many ops from others) but not
# by more than this between two of its ops: a bigger jump is taken as an
# attempt to exhaust the clock space and the op is skipped on replay.
MAX_CLOCK_JUMP = 2**32
# A line number of a code anchor: every integer of an op has an upper bound that
# SQLite's 64-bit INTEGER holds (an unbounded one, stored, failed every replay).
MAX_LINE = 2**31 - 1
MIN_TIME = -62135596800  # 0001-01-01T00:00:00Z
MAX_TIME = 253402300799  # 9999-12-31T23:59:59Z
UnixTime = Annotated[int, msgspec.Meta(ge=MIN_TIME, le=MAX_TIME)]
Offset = Annotated[int, msgspec.Meta(gt=-1440, lt=1440)]
ShortStr = Annotated[str, msgspec.Meta(max_length=MAX_FIELD_CHARS)]
Importance = Annotated[float, msgspec.Meta(ge=0.0, le=1.0)]
OpId = Annotated[str, msgspec.Meta(pattern=r"^[0-9a-f]{64}\Z")]


class Author(msgspec.Struct, frozen=True):
    name: ShortStr
    email: ShortStr


class CodeAnchor(msgspec.Struct, frozen=True, omit_defaults=True):
    """A path the memory is about and what it held at HEAD when the memory was
    written (a blob, or a tree for a folder): the code's state, for staleness.
    ``start``-``end`` narrow a file to its lines (1-based, inclusive)."""

    path: ShortStr
    type: Literal["blob", "tree"]
    oid: Annotated[str, msgspec.Meta(pattern=r"^(?:[0-9a-f]{40}|[0-9a-f]{64})\Z")]
    start: Annotated[int, msgspec.Meta(ge=1, le=MAX_LINE)] | None = None
    end: Annotated[int, msgspec.Meta(ge=1, le=MAX_LINE)] | None = None
    symbol: ShortStr | None = None


class Anchors(msgspec.Struct, omit_defaults=True):
    """Where in the code the memory was written: HEAD at write time, paths, and
    (since the code-aware anchors) each path's object at that HEAD. Readers that
    predate ``code`` ignore it."""

    commit: str | None = None
    paths: Annotated[list[ShortStr], msgspec.Meta(max_length=MAX_LIST_ITEMS)] = []
    code: Annotated[list[CodeAnchor], msgspec.Meta(max_length=MAX_LIST_ITEMS)] = []


# Who wrote a memory or a confirmation: a person (the field left out) or an
# agent acting for the op's author ("agent:claude-code"). Ranking trusts an
# agent's memory less until a person or a second author confirms it.
BY_PATTERN = r"^agent:[A-Za-z0-9][A-Za-z0-9._-]{0,63}\Z"
By = Annotated[str, msgspec.Meta(pattern=BY_PATTERN)]

# The link vocabulary, kept deliberately tiny (docs/growth.md). Readers accept
# any predicate of this shape, so a newer writer's predicate is not lost.
PREDICATES: tuple[str, ...] = ("works_on", "owns", "decided", "depends_on", "replaces",
                               "part_of", "relates_to")
Predicate = Annotated[str, msgspec.Meta(pattern=r"^[a-z][a-z_]{0,31}\Z")]


class Link(msgspec.Struct, frozen=True):
    """An edge memory's endpoints: typed node names (``person:ada@example.com``,
    ``path:src/auth``, ``key:db.engine``, ``component:billing``,
    ``memory:<id>``) and the predicate between them."""

    src: ShortStr
    predicate: Predicate
    dst: ShortStr


NODE_TYPES: tuple[str, ...] = ("person", "path", "key", "component", "memory")


def node_name(node: str) -> str:
    """A node's name without its type: "billing" of "component:billing"."""
    typ, sep, name = node.partition(":")
    return name if sep and typ in NODE_TYPES and name else node


class MemoryBody(msgspec.Struct, omit_defaults=True, kw_only=True):
    """The content of a memory, as written by its ``add`` op."""

    kind: Kind = "note"
    text: Annotated[str, msgspec.Meta(min_length=1)]
    key: ShortStr | None = None
    tags: Annotated[list[ShortStr], msgspec.Meta(max_length=MAX_LIST_ITEMS)] = []
    entities: Annotated[list[ShortStr], msgspec.Meta(max_length=MAX_LIST_ITEMS)] = []
    importance: Importance = 0.5
    # When the memory is true in the world (unix seconds), as opposed to when
    # the log learned it (the op's ``at``).
    valid_from: UnixTime | None = None
    valid_until: UnixTime | None = None
    source: ShortStr | None = None
    session: ShortStr | None = None
    anchors: Anchors = msgspec.field(default_factory=Anchors)
    by: By | None = None  # None: a person wrote it
    link: Link | None = None  # an edge kind's endpoints


class OpBase(msgspec.Struct, kw_only=True, tag_field="op", omit_defaults=True):
    """Fields every op carries."""

    v: int
    author: Author
    partition: ShortStr
    # Lamport clock: greater than every clock the writer had seen. Replay
    # orders ops by (clock, id), which is a total order consistent with
    # causality and independent of arrival order.
    clock: Annotated[int, msgspec.Meta(ge=0, lt=MAX_CLOCK)]
    at: UnixTime  # wall time recorded, unix seconds (GIT_COMMITTER_DATE honoured)
    tz: Offset = 0  # writer's UTC offset in minutes


class AddOp(OpBase, tag="add", kw_only=True):
    """A new memory. Its id is the memory's id."""

    memory: MemoryBody
    # Memories this one replaces (retired when this op is replayed).
    supersedes: Annotated[list[OpId], msgspec.Meta(max_length=MAX_LIST_ITEMS)] = []


class InvalidateOp(OpBase, tag="invalidate", kw_only=True):
    """Retire a memory: it stops being current truth but stays in history."""

    target: OpId
    reason: ShortStr | None = None


class ForgetOp(OpBase, tag="forget", kw_only=True):
    """Tombstone: the target's content must no longer be returned anywhere."""

    target: OpId
    reason: ShortStr | None = None


class ConfirmOp(OpBase, tag="confirm", kw_only=True):
    """Reinforce a memory: someone confirmed it still holds, or added it again.

    It changes no content and retires nothing; ranking counts confirmations
    (and their time) as a salience signal. With ``anchors`` it also re-anchors
    the memory at the code as it is now (the latest such confirm wins).
    """

    target: OpId
    reason: ShortStr | None = None
    anchors: Anchors | None = None
    # A procedure's outcome when it was followed (skills count these).
    outcome: Literal["worked", "failed"] | None = None
    by: By | None = None


Op = Union[AddOp, InvalidateOp, ForgetOp, ConfirmOp]
OP_TYPES: tuple[str, ...] = ("add", "invalidate", "forget", "confirm")

_SLUG = re.compile(r"[^a-z0-9]+")
_SPACE = re.compile(r"\s+")
# A clone id as it appears in a partition name: one safe ref component, no '-'
# (the email hash is found by splitting on the last two).
_CLONE_PART = re.compile(r"^[0-9a-z]{1,64}\Z")


def normalize_text(text: str) -> str:
    """The form in which two texts count as the same memory (dedup on write).

    Unicode NFKC, case-folded, runs of white space collapsed, and trailing
    full stops and surrounding space dropped: "Use  make spec." and
    "use make spec" are one memory; any other difference makes two.
    """
    folded = unicodedata.normalize("NFKC", text).casefold()
    return _SPACE.sub(" ", folded).strip().rstrip(".").strip()


def text_hash(text: str) -> str:
    """A short digest of ``normalize_text(text)`` (an index key, not an id)."""
    return hashes.sha256(normalize_text(text).encode("utf-8", "surrogatepass")).hexdigest()[:32]


def email_hash(email: str) -> str:
    """8 hex digits identifying an author's email (case-insensitive)."""
    return hashes.sha256(email.strip().lower().encode()).hexdigest()[:8]


def partition_name(email: str, clone_id: str) -> str:
    """``<slug>-<email hash>-<clone id>``: unique per author and clone.

    Partitions sit one level under ``refs/memory/`` and never contain ``/``,
    so two writers can never create a file/directory ref conflict. The email
    hash lets replay check that an op's author owns the partition it is on.
    """
    if not _CLONE_PART.match(clone_id):
        # Never build a ref name from something that could climb out of
        # refs/memory/ (``../../heads/main``) or name a partition replay skips.
        raise ValueError(f"unsafe clone id {clone_id!r} in a partition name")
    local = email.split("@", 1)[0].lower()
    slug = _SLUG.sub("-", local).strip("-")[:24] or "author"
    return f"{slug}-{email_hash(email)}-{clone_id}"


def partition_email_hash(partition: str) -> str | None:
    parts = partition.rsplit("-", 2)
    return parts[1] if len(parts) == 3 else None


_encoder = msgspec.json.Encoder()


@functools.cache
def _decoder() -> msgspec.json.Decoder[Op]:
    # Built on first decode (~5 ms of type inspection): a read with nothing new
    # to replay never decodes an op.
    return msgspec.json.Decoder(Op)


def encode(op: Op) -> bytes:
    """Canonical bytes of an op (one JSON line, without the newline)."""
    return _encoder.encode(op)


def op_id(data: bytes) -> str:
    """The id of an op: SHA-256 of its canonical bytes, in hex."""
    return hashes.sha256(data).hexdigest()


def decode(data: bytes) -> Op:
    """Decode one op line. Raises msgspec.DecodeError / ValidationError.

    Nesting deeper than MAX_JSON_DEPTH is refused before msgspec sees the
    line: its decoder recurses, and a RecursionError would depend on how deep
    the caller's stack already is.
    """
    if nested_deeper_than(data, MAX_JSON_DEPTH):
        raise msgspec.DecodeError(f"JSON nested deeper than {MAX_JSON_DEPTH} levels")
    return _decoder().decode(data)


_JSON_SPECIAL = re.compile(rb'[\\"\[\]{}]')


def nested_deeper_than(data: bytes, limit: int) -> bool:
    """True when arrays and objects in ``data`` nest deeper than ``limit``.

    Brackets inside strings do not count. Linear in the length of ``data``,
    iterative, and exact for valid JSON (for anything else it may say either,
    and the decoder refuses the line anyway).
    """
    if data.count(b"[") + data.count(b"{") <= limit:
        return False  # the common case: too few brackets to nest that deep
    depth, in_string, escaped_at = 0, False, -1
    for m in _JSON_SPECIAL.finditer(data):
        i = m.start()
        if i == escaped_at:
            continue  # the character after a backslash, inside a string
        c = data[i]
        if in_string:
            if c == 0x5C:  # backslash
                escaped_at = i + 1
            elif c == 0x22:  # closing quote
                in_string = False
        elif c == 0x22:
            in_string = True
        elif c in (0x5B, 0x7B):  # [ {
            depth += 1
            if depth > limit:
                return True
        elif c in (0x5D, 0x7D):
            depth -= 1
    return False


def encode_pack(encoded_ops: list[bytes]) -> bytes:
    """Join already-encoded ops into a pack."""
    return b"".join(line + b"\n" for line in encoded_ops)


def split_pack(data: bytes) -> list[bytes]:
    """Split a pack into op lines (empty lines are ignored)."""
    return [line for line in data.split(b"\n") if line.strip()]


def op_type(op: Op) -> str:
    return op.__struct_config__.tag  # type: ignore[return-value]


# -- field rules: one validation, shared by the writer and replay ------------------
#
# msgspec checks types, lengths and ranges while decoding; these are the rules
# a type cannot say. ``api.validate`` refuses a value that breaks one on write
# (with a hint), ``replay.check_op`` skips an op that carries one. Every
# single-line field reaches terminals and agents' context on one line, so it
# must not carry a line break (which could start free-standing Markdown inside
# the context fence) or a control character (terminal escapes).

# C0 and C1 controls, DEL, and the Unicode line and paragraph separators.
_NOT_IN_A_LINE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")
# In a field that may span lines: the same, less tab and newline.
_NOT_IN_TEXT = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_LINE_BREAKS = frozenset("\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029")  # str.splitlines' set
_COMMIT_ID = re.compile(r"^[0-9a-f]{40}([0-9a-f]{24})?\Z")


def line_problem(value: str, what: str) -> str | None:
    """Why ``value`` cannot be the single-line field ``what``, or None."""
    if len(value) > MAX_FIELD_CHARS:
        return f"{what} is {len(value)} characters; the limit is {MAX_FIELD_CHARS}"
    m = _NOT_IN_A_LINE.search(value)
    if m is None:
        return None
    if m.group() in _LINE_BREAKS:
        return f"{what} contains a line break"
    return f"{what} contains a control character (U+{ord(m.group()):04X})"


def lines_problem(value: str, what: str) -> str | None:
    """Why ``value`` cannot be the field ``what``, which may span lines (a
    reason: renderers for agents fold it onto one line), or None."""
    if len(value) > MAX_FIELD_CHARS:
        return f"{what} is {len(value)} characters; the limit is {MAX_FIELD_CHARS}"
    m = _NOT_IN_TEXT.search(value)
    if m is None:
        return None
    return f"{what} contains a control character (U+{ord(m.group()):04X})"


def key_problem(key: str) -> str | None:
    """A key names an attribute and is printed inside delimited context, where
    it must not look like markup: one line, no controls, no angle brackets."""
    problem = line_problem(key, "key")
    if problem is None and ("<" in key or ">" in key):
        return "key contains '<' or '>'"
    return problem


def ident_problem(value: str, what: str) -> str | None:
    """An author's name or email: what a git ident line can hold."""
    problem = line_problem(value, what)
    if problem is None and ("<" in value or ">" in value):
        return f"{what} contains '<' or '>'"
    return problem


def path_problem(path: str) -> str | None:
    """Paths are stored relative to the work tree, with '/' separators."""
    problem = line_problem(path, "path")
    if problem is None and (path.startswith("/") or ".." in path.split("/")):
        return f"path '{path}' is not inside the work tree"
    return problem


def author_problem(author: Author) -> str | None:
    return ident_problem(author.name, "author name") or ident_problem(author.email, "author email")


def field_problem(op: Op) -> str | None:
    """Why a decoded op carries a field the writer would refuse, or None."""
    problem = author_problem(op.author)
    if problem is not None:
        return problem
    if isinstance(op, AddOp):
        m = op.memory
        # Keys and tags as the projection stores them too (folded): a look-alike
        # spelling must not carry what the writer refuses ('\ufe64' folds to '<').
        if m.key is not None and (problem := key_problem(m.key) or key_problem(folded(m.key))
                                  or (None if folded(m.key) else "key is blank")):
            return problem
        for values, what in ((m.tags, "tag"), (m.entities, "entity")):
            for v in values:
                if problem := line_problem(v, what):
                    return problem
        for v in m.tags:
            if problem := line_problem(folded(v), "tag") or (None if folded(v) else "tag is blank"):
                return problem
        for value, what in ((m.source, "source"), (m.session, "session")):
            if value is not None and (problem := line_problem(value, what)):
                return problem
        if m.valid_from is not None and m.valid_until is not None \
                and m.valid_until < m.valid_from:
            return "valid-until is before valid-from"
        if m.link is not None:
            for value, what in ((m.link.src, "link source"), (m.link.dst, "link target")):
                if problem := line_problem(value, what):
                    return problem
        return anchors_problem(m.anchors)
    if op.reason is not None and (problem := lines_problem(op.reason, "reason")):
        return problem
    if isinstance(op, ConfirmOp) and op.anchors is not None:
        return anchors_problem(op.anchors)
    return None


def anchors_problem(anchors: Anchors) -> str | None:
    """Why anchors carry a path or id the writer would refuse, or None."""
    for p in [*anchors.paths, *(a.path for a in anchors.code)]:
        if problem := path_problem(p):
            return problem
    for a in anchors.code:
        if a.symbol is not None and (problem := line_problem(a.symbol, "symbol")):
            return problem
        if (a.start is None) != (a.end is None) or (a.start or 0) > (a.end or 0):
            return f"anchor line range {a.start}-{a.end} of '{a.path}' is not a range"
    if anchors.commit is not None and not _COMMIT_ID.match(anchors.commit):
        return "anchor commit is not a commit id"
    return None
