"""One pool of memory: a repository's op-log and the projection replayed from it.

Why this exists: every action, read or write, needs the same few things from a
pool: the log to append to, a projection that is never stale (refreshed from
the log before each read), the clone's settings and clock, and one place to
collect warnings. A ``Pool`` is that and nothing more; the actions live in
their own modules and take a pool, and ``Store`` combines a project pool with
the person's own pool above them.

It is also the one place where the projection's failures are answered (the
projection package says what a failure means, ``damage.damage``): a corrupt
or missing projection is deleted and replayed from the log with a one-line
warning; a ``.git`` that cannot be written (a read-only mount or checkout)
moves reads to a temporary copy, brought up to date from the log, with a
one-line warning, while writes fail with ``ReadOnly`` (and what a plain
``git fetch`` brought into refs/memory-remotes/* is read as if integrated,
since the refs cannot move: ``readview.integrated_view``); a full disk is
``DiskFull``. ``rebuild`` starts from a fresh file and never depends on
reading the old one.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from .. import ops
from ..errors import (
    AmbiguousId,
    DiskError,
    DiskFull,
    GitMemError,
    InvalidInput,
    PathTooLong,
    ReadOnly,
    UnknownId,
    from_os_error,
)
from ..model import RefreshReport
from ..oplog import REF_PREFIX, Integrated, Oplog
from ..oplog.state import State
from . import embedding, gating, refsmarks, settings
from ..timefmt import now_from_env
from .readview import integrated_view
from .shallow import Cut
from .validate import check_writable

if TYPE_CHECKING:
    from ..projection import Projection, Usage
    from ..projection.damage import ProjectionUnwritable

T = TypeVar("T")
_HEX = re.compile(r"^[0-9a-f]+\Z")
CACHE_DIR = "cache"
# SQLite's unix VFS opens paths of up to 512 bytes, a database's own with room for
# the "-journal" it may add: longer, "unable to open database file" (as if corrupt).
SQLITE_MAX_PATH = 504
PROGRAMS_DIR = "regex"  # in CACHE_DIR: gate/programs.py
BUILT_MARKER = "projection-built"
USAGE_NAME = "usage.sqlite3"  # local use counts (a salience signal), never pushed
CORRUPT = "projection was corrupt; rebuilt it from the op-log"
# What code reading rows raises when the rows are not what the schema promises.
_ODD_ROWS = (LookupError, TypeError, ValueError, AttributeError, ArithmeticError)
Progress = Callable[[str, int, int | None], None]
MakeOp = Callable[[ops.Author, str, int, int, int], ops.Op]


def _exists(path: Path) -> bool:
    try:
        return path.exists()
    except OSError:
        return False


class Pool:
    """One repository's memory: the op-log plus its local projection."""

    def __init__(self, path: str | os.PathLike[str] | None = None, *,
                 name: str = "project", one_shot: bool = False) -> None:
        self.cwd = Path(os.fspath(path)) if path is not None else Path.cwd()
        self.log = Oplog(self.cwd)
        self.name = name  # "project", or "personal" for the personal pool
        if name == "project" and one_shot:
            # The gate's compiled patterns, beside the projection: for the git-mem program
            # only, which starts for every command (a long-lived process compiles each
            # once, and one that opens several repositories must not take one's files
            # for another's: gate/programs.py).
            gating.keep_programs_in(self.log.state_dir / CACHE_DIR / PROGRAMS_DIR)
        # This process ends with os._exit (the git-mem program): the projection's
        # connection may be left open until then (Store, connection.release).
        self.one_shot = one_shot
        self._projection: Projection | None = None
        self.warnings: list[str] = []
        self.last_refresh: RefreshReport | None = None
        self._open = False
        self._usage_log: Usage | None = None
        # Long operations (rebuild, import, a big pull) report (what, done, total or
        # None) here; the CLI draws a progress line on a terminal.
        self.progress: Progress | None = None
        self.healed = False  # own ops skipped for a poisoned clock looked for (heal.py)
        # Where the projection lives while .git cannot be written (None: in .git).
        self._temporary: Path | None = None
        self._temporary_warning: str | None = None
        # Front ends with a time budget (hooks, MCP): refresh until this moment
        # (time.monotonic) and answer from what is replayed by then; None: all.
        self.deadline: float | None = None
        # The deadline is a front end's budget (catchup.within), not a catch-up's slice:
        # a commit that would overrun it waits for the background catch-up.
        self.budget = False
        self.skip_refresh = False  # a background catch-up holds the projection: read as is
        self.behind = False  # the last read answered before the projection caught up

    @property
    def projection(self) -> Projection:
        """The local projection (created on first use: writes never need it)."""
        if self._projection is None:
            self._projection = self._new_projection(self.log.state_dir / CACHE_DIR)
        return self._projection

    def _new_projection(self, directory: Path) -> Projection:
        from ..projection import Projection

        version, dim = embedding.identity()
        proj = Projection(directory, embedder_version=version, embedder_dim=dim,
                          make_embedder=embedding.doc_embedder,
                          embedder_loaded=embedding.doc_embedder_loaded,
                          one_shot=self.one_shot)
        proj.quarantine_check = gating.quarantine_reason
        proj.quarantine_version = gating.gate_version
        return proj

    def close(self) -> None:
        if self._projection is not None:
            # A temporary copy is deleted next: nothing of it may stay open.
            self._projection.close(park=self._temporary is None)
        if self._usage_log is not None:
            self._usage_log.close()
            self._usage_log = None
        if self._temporary is not None:
            import shutil

            shutil.rmtree(self._temporary, ignore_errors=True)
            self._temporary = self._projection = None
        self._open = False

    def warn(self, message: str) -> None:
        if message not in self.warnings:
            self.warnings.append(message)

    # -- projection lifecycle -------------------------------------------------

    def _ensure_open(self, *, rebuilding: bool = False) -> Projection:
        from ..projection.damage import ProjectionUnwritable

        if self._open:
            if not self.projection.replaced():
                return self.projection
            self.projection.close(park=False)  # another process deleted it: reopen
            self._open = False
        try:
            self._open_projection(rebuilding=rebuilding)
        except ProjectionUnwritable as exc:
            if rebuilding or not self._use_temporary(exc):
                raise
            self._open_projection()
        self._open = True
        return self.projection

    def _open_projection(self, *, rebuilding: bool = False) -> None:
        from ..projection import ProjectionCorrupt

        proj = self.projection
        marker = self.log.state_dir / BUILT_MARKER
        # The marker is read first: a concurrent first reader creates the file and
        # then the marker, so "no marker yet" can never look like a lost projection.
        had_marker = _exists(marker)
        missing = not _exists(proj.path)
        size = len(os.fsencode(proj.path.absolute()))
        if size > SQLITE_MAX_PATH:
            if self.name == "personal":
                raise PathTooLong(f"the personal pool's projection path is {size} bytes long "
                                  f"({proj.directory})", "set XDG_DATA_HOME (or HOME) to a "
                                  "shorter path: SQLite opens paths of at most 504 bytes")
            raise PathTooLong(f"the projection's path (.git/mem/cache/ in this repository) "
                              f"is {size} bytes long")
        try:
            proj.open()
        except ProjectionCorrupt:
            # .git/mem itself in the way (a file, a FIFO): no projection can be made
            # there, and deleting it would lose the clone id; the user decides.
            State(self.log.state_dir).check_folder()
            self._discard()
            proj.open()
        except OSError:
            State(self.log.state_dir).check_folder()  # .git/mem a link to nothing, ...
            raise
        else:
            if (missing and had_marker and not rebuilding and self._temporary is None
                    and CORRUPT not in self.warnings):
                self.warn("projection was missing; rebuilt it from the op-log")
        if proj.reset_reason:
            self.warn(f"{proj.reset_reason}; rebuilt it from the op-log")
            proj.reset_reason = None
        if not had_marker and self._temporary is None:
            try:
                marker.write_text("a projection has been built in this clone\n")
            except OSError:
                pass  # only makes a later loss visible

    def _discard(self) -> None:
        """Delete a corrupt projection (the next open starts empty) and say so."""
        self._open = False
        self.projection.destroy()
        self.warn(CORRUPT)

    def _use_temporary(self, exc: ProjectionUnwritable) -> bool:
        """Move the projection to a temporary directory when .git cannot be
        written: a copy of the current files, brought up to date from the log
        by the next refresh. False when that does not apply (a full disk)."""
        import tempfile

        if exc.why != "read-only" or self._temporary is not None:
            return False
        real = self.projection
        real.close()
        try:
            tmp = Path(tempfile.mkdtemp(prefix="git-mem-projection-"))
        except OSError as err:
            raise ReadOnly(f"cannot write the projection in {real.directory} ({exc}) nor a "
                           f"temporary one ({err.strerror})",
                           "set TMPDIR to a writable directory to read from here") from None
        real.copy_into(tmp)
        proj = self._new_projection(tmp)
        proj.long_lived, proj.progress = real.long_lived, real.progress
        self._projection, self._temporary, self._open = proj, tmp, False
        self._temporary_warning = (
            f"cannot write the projection in {real.directory} ({str(exc).lower()}); "
            "answered from a temporary copy brought up to date from the op-log")
        self.warn(self._temporary_warning)
        if self._usage_log is not None:
            self._usage_log.close()
            self._usage_log = None  # reopened read-only
        return True

    def _typed(self, exc: ProjectionUnwritable) -> GitMemError:
        """The error a user sees when the projection's directory refused a write."""
        where = exc.directory if self._temporary is not None else self.log.state_dir.parent
        if exc.why == "full":
            what = "disk quota exceeded" if "quota" in str(exc).lower() else "no space left"
            return DiskFull(f"{what} on the device holding {where}")
        if exc.why == "io":
            return DiskError(f"disk I/O error writing {where}")
        return ReadOnly(f"cannot write the projection in {exc.directory}: {str(exc).lower()}")

    @contextmanager
    def writing(self) -> Iterator[None]:
        """Around anything that writes: a write the file system refuses is a
        typed error (DiskFull, ReadOnly, DiskError), never a traceback."""
        from ..projection.damage import ProjectionUnwritable

        try:
            yield
        except ProjectionUnwritable as exc:
            raise self._typed(exc) from None
        except ReadOnly:
            self._drop_temporary_warning()
            raise
        except OSError as exc:
            typed = from_os_error(exc, self.log.state_dir.parent)
            if typed is None:
                raise
            if isinstance(typed, ReadOnly):
                self._drop_temporary_warning()
            raise typed from None

    def _drop_temporary_warning(self) -> None:
        # A write that fails on a read-only .git says so itself: the warning about
        # where its preliminary read was answered from would only repeat it.
        if self._temporary_warning in self.warnings:
            self.warnings.remove(self._temporary_warning)

    def read(self, fn: Callable[[Projection], T], *, embed: bool = True) -> T:
        """Refresh, then run a query. A corrupt projection is rebuilt once, with a
        warning; a read-only .git moves it to a temporary copy, with a warning."""
        from ..projection import ProjectionCorrupt
        from ..projection.damage import ProjectionUnwritable

        try:
            for attempt in (1, 2):
                corrupt = False
                try:
                    proj = self._ensure_open()
                    self.refresh_from_log(proj, embed=embed)
                    out = fn(proj)
                except ProjectionCorrupt:
                    if attempt == 2:
                        raise
                    corrupt = True  # discarded below, once the failed query is freed
                except ProjectionUnwritable as exc:
                    # The file opened (nothing to write then) but a refresh must write.
                    if attempt == 2 or not self._use_temporary(exc):
                        raise
                except _ODD_ROWS:
                    # Rows that contradict each other (a byte flipped inside a row,
                    # which SQLite does not checksum) surface above the projection:
                    # if SQLite's full check finds the file damaged, it is rebuilt;
                    # if not, this is a bug and is raised as one.
                    if attempt == 2 or not self._open or self.projection.intact():
                        raise
                    corrupt = True
                else:
                    return out
                if corrupt:
                    self._discard()
            raise AssertionError("unreachable")
        except ProjectionUnwritable as exc:
            raise self._typed(exc) from None

    def refresh_from_log(self, proj: Projection, *, full: bool = False,
                         embed: bool = True) -> RefreshReport:
        # Refs may have moved by other means (a plain 'git fetch' with the
        # memory refspec, another process): integrate them first, so the
        # projection never serves stale state.
        if self.skip_refresh and not full:
            self.behind = True
            return self.last_refresh or RefreshReport(complete=False)
        view = self.log.refs_view()  # before integrating: see _mark
        loose = len(view.loose) if view is not None else 0
        if loose > refsmarks.PACK_LOOSE_FROM:
            view = None  # a mark that big would cost what it saves: packed below
        since = proj.refs_mark() if view is not None else None
        moved = refsmarks.moved_since(view, since)
        # History a shallow fetch had cut arrived since the last replay: only a
        # replay of everything reads it (shallow.py), unless a budget defers it. When
        # no ref moved and .git/shallow is the file the mark saw (the view holds its
        # identity), none can have: its list (up to 200k ids) is not read.
        cut = Cut.read(self.log, proj, look=full or moved is None or bool(moved))
        if cut.arrived and not self.budget:
            full = True
        if full:
            since = moved = None
        integ = self.log.integrate(only=moved)
        if view is not None and (integ.created or integ.fast_forwarded or integ.replaced):
            # The refs integration moved are in a view taken after it; that view
            # marks integration done only if no remote-tracking ref moved meanwhile.
            after = self.log.refs_view()
            view = after if after is not None and refsmarks.fetched_part(after) == refsmarks.fetched_part(
                view) else None
            moved = refsmarks.moved_since(view, since)
        self.warn_conflicts(integ)
        proj.progress = self.progress
        source = integrated_view(self.log, integ)
        mark = (refsmarks.mark_for(self.log, view, since, moved)
                if view is not None and source is self.log and not integ.conflicts else None)
        report = proj.refresh(cut.watch(source), full=full, embed=embed,
                              deadline=None if full else self.deadline, mark=mark,
                              budget=self.budget and self.deadline is not None)
        self.log.save_memos()
        held_back = cut.arrived and not full
        if not held_back:
            cut.record(self.log, proj, report, full=full)
        if loose > refsmarks.PACK_LOOSE_FROM and self.deadline is None:
            self.pack_flooded()  # (a hook's read has no time for it: the catch-up packs)
        self.behind = not report.complete or held_back
        self.last_refresh = report
        if proj.vectors_damaged:
            proj.vectors_damaged = False
            self.warnings.append("vector file was damaged; re-embedded every memory")
        self.warnings.extend(proj.take_notices())
        if report.ops_skipped:
            self.warnings.append(
                f"skipped {report.ops_skipped} unreadable op(s); see 'git mem status'"
            )
        return report

    def pack_flooded(self) -> None:
        """Pack the refs when a flood of fetched partitions left over refsmarks.PACK_LOOSE_FROM
        loose ones (one file per ref): the next commands then look at one file
        (packedrefs.Packed) instead of thousands. Never on a read-only .git."""
        if self._temporary is not None:
            return
        view = self.log.refs_view()
        if view is not None and len(view.loose) > refsmarks.PACK_LOOSE_FROM:
            self.log.pack_refs()

    def warn_conflicts(self, integ: Integrated) -> None:
        for name in integ.conflicts:
            self.warn(f"a remote holds commits on this clone's partition {name} that this "
                      "clone does not have; run 'git mem pull' for details")

    def warn_foreign(self, integ: Integrated) -> None:
        """On a pull only (a read would repeat it on every command, and only the
        remote's owner can remove such a ref)."""
        if integ.foreign:
            names = ", ".join(integ.foreign[:3]) + (" ..." if len(integ.foreign) > 3 else "")
            self.warn(f"left out {len(integ.foreign)} partition(s) a remote holds under this "
                      f"clone's id that this clone never wrote ({names}): a copy of this .git "
                      "(run 'git mem rekey' in the copy) or a name made to look like one")

    def refresh(self) -> RefreshReport:
        """Replay whatever moved in refs/memory/* since the last refresh."""
        self.read(lambda p: None)
        return self.last_refresh or RefreshReport()

    def rebuild(self) -> RefreshReport:
        """Replay every partition into a fresh projection file.

        Never reads the old file, whatever state it is in; only the write
        gate's cached verdicts are carried over, when it opens cleanly."""
        with self.writing():
            if self._temporary is not None:
                raise ReadOnly(f"cannot write the projection in {self.log.state_dir / CACHE_DIR}"
                               ": read-only file system")
            done = self._rebuild_in_place()
            if done is not None:
                return done
            proj = self.projection
            verdicts = self._salvage_verdicts(proj)
            self._open = False
            proj.destroy()
            proj = self._ensure_open(rebuilding=True)
            if verdicts:
                proj.keep_verdicts(verdicts)
            return self.refresh_from_log(proj, full=True)

    def _rebuild_in_place(self) -> RefreshReport | None:
        """Replay every partition into the file in use, in one transaction, when
        it is sound (opens at this schema, passes SQLite's page check); None
        otherwise, and the caller deletes it and starts afresh.

        Why in place: readers in other processes (an MCP server, hooks, a recall)
        keep answering from the old rows until the replay commits. Deleting the
        files under them made each reader start a build of its own, or append
        vectors to a file the rebuild then took for damaged. Nothing of the old
        rows survives the replay (it clears every table the log fills and writes
        a new vector file); the gate's verdicts stay, as the other way salvages
        them. It needs room for the replay beside the old rows (in the write-ahead
        log until it commits): on a disk too full for that, the old rows are
        deleted first, as before."""
        from ..projection import ProjectionCorrupt
        from ..projection.damage import ProjectionUnwritable

        proj = self.projection
        if not _exists(proj.path):
            return None
        try:
            self._open = False
            proj.open()
            proj.reset_reason = None  # an older schema was reset: replayed below anyway
            if not proj.intact(pages_only=True):
                raise ProjectionCorrupt("the page check failed")
            self._open = True
            return self.refresh_from_log(proj, full=True)
        except (ProjectionCorrupt, ProjectionUnwritable) as exc:
            if isinstance(exc, ProjectionUnwritable) and exc.why != "full":
                raise
            self._open = False
            proj.close(park=False)  # destroy() closes it for good before the files go
            return None

    @staticmethod
    def _salvage_verdicts(proj: Projection) -> list[tuple[str, str, str | None]]:
        """The gate's verdicts from the old file (re-gating every memory is the
        slowest part of a replay), or none when it does not open cleanly."""
        if not _exists(proj.path):
            return []
        try:
            proj.open()
            return proj.gate_verdicts()
        except Exception:  # noqa: BLE001 - whatever the old file holds, the rebuild goes on
            return []
        finally:
            proj.close()

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
        with self.writing():
            return self._append_one(make, summary)

    def _append_one(self, make: MakeOp, summary: str) -> tuple[str, ops.Op, str]:
        from . import heal  # first write only: off the read path

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

            self._usage_log = Usage(self.log.state_dir / USAGE_NAME,
                                    read_only=self._temporary is not None)
        return self._usage_log
