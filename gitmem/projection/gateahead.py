"""Judging ahead: the second half of a large replay's ops judged on the other core.

Why this exists: a replay asks the write gate about every op it has no verdict for
(~0.1-0.3 ms an op: the first build after a clone of 100k memories spends most of
its time there, a pull of 1,000 ops a third of its). A verdict is a pure function
of the op's bytes and the gate's version (verdicts.py), so a child forked before
the replay decodes the second half of the packs that moved and judges their ops
meanwhile, while this process judges the first half as it replays them. At the
first pack of the child's half the replay takes the child's verdicts into those
it carries (waiting for them if it must), so the ops there are not judged again.

Exact by construction: the same gate function, at the same version, on the same
op bytes; an op the child did not judge (a pack it was not given, a child that
failed or was too slow and was killed) is judged here as before. The child
touches no connection it inherited and writes no file of the projection (the
gate may save a compiled pattern to its cache, atomically, as any process
does): it writes its answer to a pipe and leaves with ``os._exit`` (forked.py).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .. import forked, replay
from .verdicts import Carried

# A child that has not answered by then is killed and its ops judged here.
_PATIENCE = 120.0


class GateAhead:
    """A forked child judging the ops of a replay from one op on."""

    def __init__(self, child: forked.Child, first: dict[str, int], version: str) -> None:
        self._child: forked.Child | None = child
        self._first = first  # commit -> the first line of its pack the child judges
        self._version = version
        self.taken = 0  # verdicts taken from the child

    @classmethod
    def start(cls, packs: list[tuple[str, str, bytes]], check: Callable[[Any], str | None],
              version: str, carried: Carried) -> GateAhead | None:
        """Fork a child judging the second half (by ops) of ``packs`` ((commit,
        partition, pack bytes) in replay order: an import's thousands of ops are one
        pack); None when there is nothing for it or this process should not fork.
        Ops ``carried`` has a verdict of this version for are left out (a rebuild
        carries every verdict)."""
        lines = [data.count(b"\n", 0, len(data) - 1) + 1 for _, _, data in packs]
        left = sum(lines) // 2  # ops this process judges
        first: dict[str, int] = {}
        for (commit, _, _), n in zip(packs, lines):
            if left < n:
                first[commit] = max(left, 0)
            left -= n
        if not first:
            return None
        child = forked.Child.start(lambda: _judge(packs, first, check, version, carried))
        if child is None:
            return None
        return cls(child, first, version)

    def first_line(self, commit: str) -> int | None:
        """The first line of this commit's pack the child judges (None: none of it, or
        the child's verdicts are taken already)."""
        return self._first.get(commit) if self._child is not None else None

    def join(self, carried: Carried) -> None:
        """Take the child's verdicts into ``carried`` (waiting for it, once)."""
        child, self._child = self._child, None
        if child is None:
            return
        payload = child.result(_PATIENCE)
        if payload is None:
            return
        import msgspec

        try:
            found = msgspec.msgpack.decode(payload, type=dict[str, str | None])
        except msgspec.DecodeError:
            return
        for op_id, reason in found.items():
            kept = carried.get(op_id)
            if kept is None or kept[0] != self._version:
                carried[op_id] = (self._version, reason)
                self.taken += 1

    def close(self) -> None:
        """Stop the child if it is still running."""
        child, self._child = self._child, None
        if child is not None:
            child.close()


def _judge(packs: list[tuple[str, str, bytes]], first: dict[str, int],
           check: Callable[[Any], str | None], version: str, carried: Carried) -> bytes:
    """In the child: the gate's verdict on every op from ``first`` on without one."""
    import msgspec

    out: dict[str, str | None] = {}
    for commit, name, data in packs:
        start = first.get(commit)
        if start is None:
            continue
        for item in replay.decode_pack(data, name):
            if isinstance(item, replay.Decoded) and item.line >= start:
                kept = carried.get(item.id)
                if kept is None or kept[0] != version:
                    out[item.id] = check(item.op)
    return msgspec.msgpack.encode(out)
