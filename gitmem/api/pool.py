"""One pool of memory: a repository's op-log and the projection replayed from it.

Why this exists: every action, read or write, needs the same few things from a
pool: the log to append to, a projection that is never stale (refreshed from
the log before each read, rebuilt with a warning when corrupt or missing), the
clone's settings and clock, and one place to collect warnings. A ``Pool`` is
that and nothing more; the actions live in their own modules and take a pool,
and ``Store`` combines a project pool with the person's own pool above them.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from .. import ops
from ..errors import AmbiguousId, InvalidInput, UnknownId
from ..model import RefreshReport
from ..oplog import REF_PREFIX, Integrated, Oplog
from . import embedding, gating, heal, settings
from ..timefmt import now_from_env
from .validate import check_writable

if TYPE_CHECKING:
    from ..projection import Projection, Usage

T = TypeVar("T")
_HEX = re.compile(r"^[0-9a-f]+$")
CACHE_DIR = "cache"
BUILT_MARKER = "projection-built"
USAGE_NAME = "usage.sqlite3"  # local use counts (a salience signal), never pushed
Progress = Callable[[str, int, int | None], None]
MakeOp = Callable[[ops.Author, str, int, int, int], ops.Op]


class Pool:
    """One repository's memory: the op-log plus its local projection."""

    def __init__(self, path: str | os.PathLike[str] | None = None, *,
                 name: str = "project") -> None:
        self.cwd = Path(os.fspath(path)) if path is not None else Path.cwd()
        self.log = Oplog(self.cwd)
        self.name = name  # "project", or "personal" for the personal pool
        self._projection: Projection | None = None
        self.warnings: list[str] = []
        self.last_refresh: RefreshReport | None = None
        self._open = False
        self._usage_log: Usage | None = None
        # Long operations (rebuild, import, a big pull) report (what, done, total or
        # None) here; the CLI draws a progress line on a terminal.
        self.progress: Progress | None = None
        self.healed = False  # own ops skipped for a poisoned clock looked for (heal.py)

    @property
    def projection(self) -> Projection:
        """The local projection (created on first use: writes never need it)."""
        if self._projection is None:
            from ..projection import Projection

            version, dim = embedding.identity()
            self._projection = Projection(
                self.log.state_dir / CACHE_DIR,
                embedder_version=version,
                embedder_dim=dim,
                make_embedder=embedding.doc_embedder,
            )
            self._projection.quarantine_check = gating.quarantine_reason
            self._projection.quarantine_version = gating.gate_version
        return self._projection

    def close(self) -> None:
        if self._projection is not None:
            self._projection.close()
        if self._usage_log is not None:
            self._usage_log.close()
        self._open = False

    def warn(self, message: str) -> None:
        if message not in self.warnings:
            self.warnings.append(message)

    # -- projection lifecycle -------------------------------------------------

    def _ensure_open(self) -> Projection:
        from ..projection import ProjectionCorrupt

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

    def read(self, fn: Callable[[Projection], T], *, embed: bool = True) -> T:
        """Refresh, then run a query; a corrupt file is rebuilt once, with a warning."""
        from ..projection import ProjectionCorrupt

        for attempt in (1, 2):
            try:
                proj = self._ensure_open()
                self.refresh_from_log(proj, embed=embed)
                return fn(proj)
            except ProjectionCorrupt:
                if attempt == 2:
                    raise
                self.projection.destroy()
                self._open = False
                self.warnings.append("projection was corrupt; rebuilt it from the op-log")
        raise AssertionError("unreachable")

    def refresh_from_log(self, proj: Projection, *, full: bool = False,
                         embed: bool = True) -> RefreshReport:
        # Refs may have moved by other means (a plain 'git fetch' with the
        # memory refspec, another process): integrate them first, so the
        # projection never serves stale state.
        integ = self.log.integrate()
        self.warn_conflicts(integ)
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

    def warn_conflicts(self, integ: Integrated) -> None:
        for name in integ.conflicts:
            self.warn(f"a remote holds commits on this clone's partition {name} that this "
                      "clone does not have; run 'git mem pull' for details")

    def refresh(self) -> RefreshReport:
        """Replay whatever moved in refs/memory/* since the last refresh."""
        self.read(lambda p: None)
        return self.last_refresh or RefreshReport()

    def rebuild(self) -> RefreshReport:
        """Drop the projection's content and replay every partition."""
        from ..projection import ProjectionCorrupt

        proj = self._ensure_open()
        try:
            return self.refresh_from_log(proj, full=True)
        except ProjectionCorrupt:
            self.projection.destroy()
            self._open = False
            return self.refresh_from_log(self._ensure_open(), full=True)

    # -- ids, appends, settings ---------------------------------------------------

    def resolve(self, prefix: str) -> str:
        """The full memory id for an id or unique prefix of 7+ hex digits."""
        p = (prefix or "").strip().lower()
        if not _HEX.match(p) or not ops.MIN_PREFIX <= len(p) <= ops.ID_HEX_LEN:
            raise InvalidInput(
                f"'{prefix}' is not a memory id",
                f"ids are {ops.MIN_PREFIX} to {ops.ID_HEX_LEN} hex digits, as printed by add",
            )
        found = self.read(lambda proj: proj.resolve_prefix(p))
        if not found:
            raise UnknownId(f"no memory with id {p}")
        if len(found) > 1:
            raise AmbiguousId(p, found)
        return found[0]

    def append_one(self, make: MakeOp, summary: str) -> tuple[str, ops.Op, str]:
        """Append one op to this clone's partition: (op id, op, commit id)."""
        heal.rescue_skipped_clocks(self)  # outside the append lock: it appends too
        author = self.log.identity()
        at, tz = now_from_env()
        partition = self.log.partition_for(author)
        built: list[ops.Op] = []

        def lines(clock: int) -> list[bytes]:
            built.clear()
            built.append(make(author, partition, at, tz, clock))
            line = ops.encode(built[0])
            check_writable(line, partition)
            return [line]

        appended = self.log.append(partition, author, at, tz, summary, lines,
                                   next_clock=lambda: self.next_clock(partition))
        return ops.op_id(appended.lines[0]), built[0], appended.commit

    def next_clock(self, partition: str, n: int = 1) -> int:
        """The first Lamport clock for a pack of ``n`` ops on our ``partition``,
        taken only from ops replay accepted (replay.next_clock says how)."""
        from ..replay import clock_jump, next_clock

        top, own = self.read(lambda p: p.clock_bounds(REF_PREFIX + partition), embed=False)
        clock = next_clock(top, own, n)
        # A write must never produce an op its own replay would skip.
        if clock_jump(own, clock) is not None or clock + n > ops.MAX_CLOCK:
            raise AssertionError(f"clock {clock} after {own} would be skipped on replay")
        return clock

    def setting(self, name: str, parse: Callable[[str], T], default: T, hint: str) -> T:
        return settings.setting(self.log, name, parse, default, hint)

    def usage(self) -> Usage | None:
        """The local use record, or None when gitmem.recordUse is off."""
        if not self.setting("gitmem.recordUse", settings.boolean, True, "use true or false"):
            return None
        if self._usage_log is None:
            from ..projection import Usage

            self._usage_log = Usage(self.log.state_dir / USAGE_NAME)
        return self._usage_log
