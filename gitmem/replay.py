"""From untrusted pack bytes to checked ops, and the rules that fold them.

Every op replayed here may come from a teammate's partition, so decoding never
raises: a bad line becomes a ``Skip`` with a reason that ``git mem status``
reports. The folding rules are written as pure functions of the *set* of ops
touching a memory, ordered by (clock, id), so that the projection does not
depend on the order in which partitions or commits arrive. Pure module.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass

import msgspec

from . import ops


@dataclass(frozen=True)
class Decoded:
    """A checked op: its id (hash of ``raw``), the op and its position in the pack."""

    id: str
    op: ops.Op
    line: int


@dataclass(frozen=True)
class Skip:
    """An op line that replay refused, and why."""

    line: int
    reason: str
    id: str | None = None


def decode_pack(data: bytes, partition: str) -> Iterator[Decoded | Skip]:
    """Decode a pack found on ``refs/memory/<partition>``; never raises."""
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
    reason = check_op(op, partition)
    if reason:
        return Skip(n, reason, oid)
    return Decoded(oid, op, n)


def check_op(op: ops.Op, partition: str) -> str | None:
    """Why a well-formed op must still be refused, or None."""
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
    return None


# -- folding ------------------------------------------------------------------

RETIRING = ("supersede", "invalidate", "forget")


@dataclass(frozen=True)
class Effect:
    """An op that retires a memory, as seen from that memory."""

    op_id: str
    type: str  # one of RETIRING
    clock: int
    at: int
    tz: int
    reason: str | None


@dataclass(frozen=True)
class Status:
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
