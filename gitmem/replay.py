"""From untrusted pack bytes to checked ops, and every rule that folds them.

Every op replayed here may come from a teammate's partition, so decoding never
raises: a bad line becomes a ``Skip`` with a reason that ``git mem status``
reports. The folding rules (which ops a partition may contribute, a memory's
status, the winner of a keyed conflict) are written as pure functions of sets
of ops ordered by (clock, id), so that the projection does not depend on the
order in which partitions or commits arrive. The projection only reads their
inputs from its tables and writes their results back. Pure module: no SQLite,
no I/O.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

import msgspec

from . import ops


class Decoded(msgspec.Struct, frozen=True):
    """A checked op: its id (hash of ``raw``), the op and its position in the pack."""

    id: str
    op: ops.Op
    line: int


class Skip(msgspec.Struct, frozen=True):
    """An op line that replay refused, and why."""

    line: int
    reason: str
    id: str | None = None


def decode_pack(data: bytes, partition: str) -> Iterator[Decoded | Skip]:
    """Decode a pack found on ``refs/memory/<partition>``; never raises (a line
    nested too deep for the decoder included: see ``ops.decode``)."""
    for n, raw in enumerate(ops.split_pack(data)):
        yield check_line(raw, partition, n)


def check_line(raw: bytes, partition: str, n: int = 0) -> Decoded | Skip:
    oid = ops.op_id(raw)
    if len(raw) > ops.MAX_OP_BYTES:
        return Skip(n, f"oversized op ({len(raw)} bytes > {ops.MAX_OP_BYTES})", oid)
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError:
        return Skip(n, "invalid UTF-8", oid)
    try:
        op = ops.decode(raw)
    except (msgspec.DecodeError, msgspec.ValidationError) as exc:
        return Skip(n, f"malformed op: {exc}", oid)
    except Exception as exc:  # noqa: BLE001 - whatever a hostile line makes the decoder raise
        return Skip(n, f"undecodable op ({type(exc).__name__})", oid)
    reason = check_op(op, partition)
    if reason:
        return Skip(n, reason, oid)
    return Decoded(oid, op, n)


def check_op(op: ops.Op, partition: str) -> str | None:
    """Why a well-formed op must still be refused, or None.

    The writer runs this too (``api.validate.check_writable``), so nothing is
    written that a reader would skip; the field rules are ``ops.field_problem``.
    """
    if op.v < 1 or op.v > ops.FORMAT_VERSION:
        return f"unknown format version {op.v} (this git-mem reads up to {ops.FORMAT_VERSION})"
    if op.partition != partition:
        return f"op claims partition '{op.partition}' but was found on '{partition}'"
    if ops.partition_email_hash(partition) != ops.email_hash(op.author.email):
        return f"author <{op.author.email}> does not own partition '{partition}'"
    if isinstance(op, ops.AddOp):
        size = len(op.memory.text.encode("utf-8"))
        if size > ops.MAX_TEXT_BYTES:
            return f"text of {size} bytes exceeds {ops.MAX_TEXT_BYTES}"
    return ops.field_problem(op)


# -- which ops a partition may contribute ---------------------------------------


def clock_jump(last: int, clock: int) -> str | None:
    """Why an op with Lamport ``clock`` is refused after its partition's last
    accepted clock ``last``, or None: a jump above ``ops.MAX_CLOCK_JUMP`` is
    taken as an attempt to exhaust the clock space."""
    if clock > last + ops.MAX_CLOCK_JUMP:
        return (f"implausible Lamport clock jump from {last} "
                f"to {clock} (bound {ops.MAX_CLOCK_JUMP})")
    return None


def next_clock(top: int, own: int, n: int = 1) -> int:
    """The first Lamport clock of a pack of ``n`` ops a writer appends, given the
    greatest clock replay accepted anywhere (``top``) and on the writer's own
    partition (``own``).

    One more than everything seen keeps causal order, but never more than the
    jump rule lets the writer's own partition take, and never so high that the
    pack reaches ``ops.MAX_CLOCK``: a teammate who pushed huge clocks (however
    they got them accepted) cannot make an honest writer produce ops its own
    replay would skip. Under such an attack, the honest op may order before the
    attacker's; it is never lost.
    """
    return max(0, min(top + 1, own + ops.MAX_CLOCK_JUMP, ops.MAX_CLOCK - n))


class ClockGuard:
    """The clock-jump rule over one partition's ops, read in commit order.

    Invariant: whether an op is refused depends only on the ops before it in
    its own partition (``last`` is the greatest clock accepted so far, 0 for a
    new partition), never on other partitions or on when they arrived. Every
    clone walks a partition's commits in the same order, and the projection
    stores ``last`` with the partition's tip, so an incremental replay refuses
    exactly what a full replay would.
    """

    def __init__(self, last: int = 0) -> None:
        self.last = last

    def admit(self, item: Decoded | Skip) -> Decoded | Skip:
        """``item``, or a Skip if its clock jumps too far; an admitted op moves ``last``."""
        if isinstance(item, Skip):
            return item
        reason = clock_jump(self.last, item.op.clock)
        if reason:
            return Skip(item.line, reason, item.id)
        self.last = max(self.last, item.op.clock)
        return item


# -- folding ------------------------------------------------------------------

RETIRING = ("supersede", "invalidate", "forget")


class Effect(msgspec.Struct, frozen=True):
    """An op that retires a memory, as seen from that memory."""

    op_id: str
    type: str  # one of RETIRING
    clock: int
    at: int
    tz: int
    reason: str | None


class Status(msgspec.Struct, frozen=True):
    status: str  # active | invalidated | superseded | forgotten
    by: Effect | None = None


def fold_status(effects: Iterable[Effect]) -> Status:
    """The status of a memory given every op that retires it.

    A forget wins over everything (the content must go). Otherwise the
    earliest retirement in (clock, id) order says when and why the memory
    stopped being current; later ones are kept in its history only.
    """
    ordered = sorted(effects, key=lambda e: (e.clock, e.op_id))
    forgets = [e for e in ordered if e.type == "forget"]
    if forgets:
        return Status("forgotten", forgets[0])
    if ordered:
        first = ordered[0]
        return Status("superseded" if first.type == "supersede" else "invalidated", first)
    return Status("active")


class KeyedValue(msgspec.Struct, frozen=True):
    """One memory recorded under a key, as the conflict rule sees it."""

    id: str
    clock: int
    status: str  # as folded by fold_status
    quarantined: bool  # the write gate would refuse it


def keyed_winner(values: Iterable[KeyedValue]) -> tuple[str | None, list[str]]:
    """The current value of a key and the values it shadows: (winner, losers).

    Only active, unquarantined values compete; among them the greatest
    (clock, id) is current and every other is shadowed by it (retired and
    quarantined values are neither). A function of the set of values, so
    every clone picks the same winner whatever order the ops arrived in; a
    later set supersedes them all and ends the conflict.
    """
    live = sorted(((v.clock, v.id) for v in values
                   if v.status == "active" and not v.quarantined), reverse=True)
    if not live:
        return None, []
    return live[0][1], [mid for _, mid in live[1:]]
