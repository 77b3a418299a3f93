"""Refs: read from files, moved by compare-and-swap with git's own lock files.

Every read command lists ``refs/memory/*`` to see whether anything moved, so
refs are read straight from loose files and ``packed-refs`` (looserefs.py,
packedrefs.py; libgit2 only for layouts we do not read ourselves). A ref moves the way git moves it:
``<ref>.lock`` is created exclusively, the current value is checked against
the expected old one, the new id is written and the lock renamed over the
ref. So git, libgit2 and we can update refs side by side, and a writer that
lost a race learns it instead of overwriting.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Mapping
from pathlib import Path

import msgspec

from ..errors import LogBusy, from_os_error
from . import looserefs
from .libgit2 import Libgit2, pygit2
from .objects import HEX_OID
from .packedrefs import Packed, file_identity, packed_identity, read_packed

REF_PREFIX = "refs/memory/"
# Where fetched partitions land before we move local refs ourselves, after
# checking ancestry. Never refs/memory/*: a forced fetch there would overwrite
# unpushed local commits, and --prune would delete local partitions.
REMOTE_PREFIX = "refs/memory-remotes/"
BACKUP_PREFIX = "refs/memory-backup/"
STALE_LOCK_SECONDS = 10.0
# The ref names we move by hand: components of letters, digits and . _ - that
# do not start with '.' or end in '.lock' (a subset of git's own rules).
_COMPONENT = re.compile(r"^(?!\.)[A-Za-z0-9._-]+(?<!\.lock)\Z")


def safe_ref_name(ref_name: str) -> bool:
    """True for ``refs/<component>/...`` made of safe components only: such a
    name cannot climb out of the refs folder or collide with a lock file."""
    parts = ref_name.split("/")
    return (len(parts) >= 3 and parts[0] == "refs"
            and all(_COMPONENT.match(p) and ".." not in p for p in parts[1:]))


class RefsView(msgspec.Struct, frozen=True):
    """What some refs are made of, read without parsing packed-refs: every loose
    ref (name -> id, read whole) and packed-refs by its identity, which names its
    content only once ``settled`` (see packedrefs.SETTLED_SECONDS). Two views with equal
    parts show the same refs; two with the same settled packed-refs differ only
    in the loose refs that differ (``changed_since``)."""

    packed: list[int] | None
    settled: bool
    loose: dict[str, str]
    # .git/shallow by identity (None: none): a fetch --deepen or --unshallow moves no
    # ref, but makes a fast-forward integration could not prove before provable now.
    shallow: list[int] | None = None

    def changed_since(self, old: RefsView) -> set[str] | None:
        """The ref names that may hold something else now than in ``old``; None
        when only a whole listing can tell (packed-refs replaced, or not settled
        when ``old`` was taken; a loose ref gone, which may uncover a packed one)."""
        if old.packed != self.packed or not old.settled or old.shallow != self.shallow:
            return None
        if any(name not in self.loose for name in old.loose):
            return None
        return {name for name, oid in self.loose.items() if old.loose.get(name) != oid}


class RefLock:
    """A ref's ``<ref>.lock``, taken with the new value written (``Refs.lock``)."""

    def __init__(self, fd: int, lock: Path, path: Path) -> None:
        self.fd = fd
        self._lock = lock
        self._path = path

    def publish(self) -> None:
        """Rename the (flushed) lock over the ref: the new value, atomically."""
        try:
            os.close(self.fd)
            os.replace(self._lock, self._path)
        except BaseException:
            self._lock.unlink(missing_ok=True)
            raise

    def release(self) -> None:
        """Give up: the ref keeps its value."""
        try:
            os.close(self.fd)
        finally:
            self._lock.unlink(missing_ok=True)


def tracked_partition(tracking_ref: str) -> str | None:
    """The partition a remote-tracking ref (``refs/memory-remotes/<ns>/<name>``)
    stands for, or None when ``name`` is not one: a partition sits exactly one
    level under refs/memory/, so a ref a teammate pushed deeper
    (``refs/memory/<p>/x``) is nobody's partition and is never integrated."""
    rest = tracking_ref[len(REMOTE_PREFIX):].split("/", 1) \
        if tracking_ref.startswith(REMOTE_PREFIX) else []
    if len(rest) != 2 or not rest[1] or "/" in rest[1]:
        return None
    return rest[1]


def own_partitions(partitions: Mapping[str, str], clone_id: str) -> list[str]:
    """Partition names this clone writes (any author): they end in our clone id."""
    if not clone_id:
        return []
    return sorted(ref[len(REF_PREFIX):] for ref in partitions if ref.endswith("-" + clone_id))


class Refs:
    """The refs of one repository: listing, compare-and-swap, HEAD."""

    def __init__(self, gitdir: Path, commondir: Path, libgit2: Libgit2) -> None:
        self._gitdir = gitdir
        self._commondir = commondir
        self._libgit2 = libgit2
        self._packed: Packed | None = None
        self._plain: bool | None = None

    @property
    def directory(self) -> Path:
        """Where the loose refs live (``<common dir>/refs``)."""
        return self._commondir / "refs"

    def tracking(self, namespace: str | None = None) -> dict[str, str]:
        """Remote-tracking partitions (of one remote namespace): ref -> tip."""
        return self.under(REMOTE_PREFIX + (namespace + "/" if namespace else ""))

    def packed(self) -> Packed | None:
        """packed-refs as it is now (kept while its identity holds: re-read only when
        git replaced it), or None when it cannot be read."""
        ident, settled = packed_identity(self._commondir)
        if (self._packed is not None and self._packed.identity == ident and ident is not None
                and settled):
            return self._packed
        self._packed = read_packed(self._commondir)
        return self._packed

    def plain(self) -> bool:
        """True for the files backend, which we read ourselves."""
        if self._plain is None:
            self._plain = not (self._commondir / "reftable").exists()
        return self._plain

    def view(self, prefixes: tuple[str, ...]) -> RefsView | None:
        """What the refs under ``prefixes`` are made of, cheaply: the loose ones
        with their ids, and packed-refs by identity (see RefsView); None when
        they are not plain files we read ourselves."""
        if not self.plain():
            return None
        loose: dict[str, str] = {}
        for prefix in prefixes:
            found = looserefs.loose_refs(self._commondir, prefix)
            if found is None:
                return None
            loose.update(found)
        # After the loose files: see looserefs.read_ref_files.
        ident, settled = packed_identity(self._commondir)
        shallow = file_identity(self._commondir / "shallow")
        return RefsView(packed=list(ident) if ident is not None else None, settled=settled,
                        loose=loose, shallow=list(shallow) if shallow is not None else None)

    def lookup(self, names: list[str]) -> dict[str, str] | None:
        """The ids of the refs ``names`` that exist (loose first, then packed-refs
        by binary search); None when the layout is not one we read ourselves."""
        if not self.plain():
            return None
        out: dict[str, str] = {}
        missing: list[str] = []
        for name in names:
            path = os.path.join(self._commondir, name)
            value = looserefs.read_loose(path)
            if value is not None:
                out[name] = value
            elif os.path.lexists(path):
                return None  # there but odd (a symbolic ref, a folder): libgit2 knows
            else:
                missing.append(name)
        if missing:
            packed = self.packed()
            if packed is None:
                return None
            for name in missing:
                oid = packed.get(name.encode())
                if oid is not None:
                    out[name] = oid.decode()
        return out

    def ending(self, prefix: str, suffix: str) -> dict[str, str] | None:
        """The refs directly under ``prefix`` whose name ends in ``suffix`` (this
        clone's partitions: a search of packed-refs, not a parse); None when the
        layout is not one we read ourselves."""
        if not self.plain():
            return None
        loose = looserefs.loose_refs(self._commondir, prefix)
        packed = self.packed()
        if loose is None or packed is None:
            return None
        try:
            out = {n.decode(): o.decode() for n, o in packed.ending(prefix.encode(),
                                                                    suffix.encode())}
        except UnicodeDecodeError:
            return None
        out.update((n, o) for n, o in loose.items() if n.endswith(suffix))
        return {n: o for n, o in out.items() if "/" not in n[len(prefix):]}

    def namespaces(self) -> list[str] | None:
        """The remote namespaces under refs/memory-remotes/ (loose folders, and
        the packed ones found by skipping from one to the next); None when the
        layout is not one we read ourselves."""
        if not self.plain():
            return None
        found: set[str] = set()
        try:
            with os.scandir(os.path.join(self._commondir, REMOTE_PREFIX)) as it:
                found.update(e.name for e in it if e.is_dir(follow_symlinks=False))
        except FileNotFoundError:
            pass
        except OSError:
            return None
        packed = self.packed()
        if packed is None:
            return None
        prefix = REMOTE_PREFIX.encode()
        key = prefix
        while True:
            name = packed.first_after(key, prefix)
            if name is None:
                break
            space, sep, _ = name[len(prefix):].partition(b"/")
            if not sep:
                key = name + b"\0"  # a ref right under the prefix: no namespace
                continue
            try:
                found.add(space.decode())
            except UnicodeDecodeError:
                return None
            key = prefix + space + b"0"  # '0' follows '/': past every ref of this one
        return sorted(found)

    def any_under(self, prefix: str, but: str | None = None) -> bool:
        """True when at least one ref lies under ``prefix`` (with ``but``: one whose
        name does not end so; a few steps through packed-refs, not a listing)."""
        if self.plain():
            loose = looserefs.loose_refs(self._commondir, prefix)
            packed = self.packed()
            if loose is not None and packed is not None:
                if any(but is None or not name.endswith(but) for name in loose):
                    return True
                key, want = prefix.encode(), prefix.encode()
                tail = but.encode() if but is not None else None
                while True:
                    name = packed.first_after(key, want)
                    if name is None:
                        return False
                    if tail is None or not name.endswith(tail):
                        return True
                    key = name + b"\0"
        return any(but is None or not name.endswith(but) for name in self.under(prefix))

    def under(self, prefix: str) -> dict[str, str]:
        """Every ref under ``prefix`` and its target id."""
        fast = (looserefs.read_ref_files(self._commondir, prefix, self.packed)
                if self.plain() else None)
        if fast is not None:
            return fast
        repo = self._libgit2.repo
        out: dict[str, str] = {}
        for name in repo.listall_references():
            if not name.startswith(prefix):
                continue
            try:
                ref = repo.references[name].resolve()
            except (pygit2.GitError, KeyError):
                continue
            out[name] = str(ref.target)
        return out

    def current(self, ref_name: str) -> str | None:
        """The ref's value; "could not read" is never taken for "absent"."""
        refs = self.lookup([ref_name])
        if refs is not None:
            return refs.get(ref_name)
        ref = self._libgit2.repo.references.get(ref_name)  # libgit2 knows every layout
        return None if ref is None else str(ref.resolve().target)

    def head(self) -> str | None:
        """HEAD's commit id, or None on an unborn branch."""
        try:
            text = (self._gitdir / "HEAD").read_text().strip()
        except OSError:
            text = ""
        if HEX_OID.match(text):
            return text  # detached
        if text.startswith("ref: "):
            name = text[5:].strip()
            inside = name.startswith("refs/") and ".." not in name.split("/")
            refs = self.lookup([name]) if inside else None
            if refs is not None:
                return refs.get(name)
        try:
            return str(self._libgit2.repo.head.target)
        except (pygit2.GitError, KeyError):
            return None

    # -- moving refs without libgit2 (sha1 repositories, files backend) ----------

    def cas(self, ref_name: str, old: str | None, new: str) -> bool:
        """Move a ref from ``old`` to ``new`` the way git does; False if we lost a race.

        The exclusive create of ``<ref>.lock`` keeps every other writer (git,
        libgit2, another of us) out while we compare; the rename publishes
        the new value atomically, so a crash leaves the old value (and at
        worst a stale lock, cleared by a later append).
        """
        held = self.lock(ref_name, old, new)
        if held is None:
            return False
        try:
            os.fsync(held.fd)
        except BaseException:
            held.release()
            raise
        held.publish()
        return True

    def lock(self, ref_name: str, old: str | None, new: str) -> RefLock | None:
        """``cas`` up to the flush: ``<ref>.lock`` taken and ``new`` written in it if
        the ref still holds ``old``; None if we lost a race. The caller fsyncs
        ``fd`` (an append does it beside its objects' fsyncs), then ``publish``es,
        or ``release``s to give up."""
        if not safe_ref_name(ref_name):
            raise ValueError(f"refusing to move an unsafe ref name {ref_name!r}")
        path = self._commondir / ref_name
        path.parent.mkdir(parents=True, exist_ok=True)
        lock = Path(str(path) + ".lock")
        try:
            fd = os.open(lock, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o644)
        except FileExistsError:
            self._clear_stale_lock(lock)
            return None
        held = RefLock(fd, lock, path)
        try:
            if self.current(ref_name) != old:
                held.release()
                return None
            os.write(fd, new.encode() + b"\n")
            return held
        except BaseException:
            held.release()
            raise

    def _clear_stale_lock(self, lock: Path) -> None:
        """Remove a ref lock left by a crashed writer.

        Only called while we hold this clone's append flock, so no git mem
        appender owns it; nothing else holds a ref lock for more than a moment
        (git and libgit2 write, then rename at once), so a lock older than
        STALE_LOCK_SECONDS is a crash's leftover, not a live writer's.
        """
        try:
            if time.time() - lock.stat().st_mtime > STALE_LOCK_SECONDS:
                lock.unlink()
        except OSError:
            pass

    def busy(self, ref_name: str, attempts: int) -> LogBusy:
        """The error for a ref we could not move in time, naming a lock left behind."""
        lock = self._commondir / f"{ref_name}.lock"
        try:
            age = time.time() - lock.stat().st_mtime
        except OSError:
            return LogBusy(f"could not update {ref_name} after {attempts} attempts")
        return LogBusy(
            f"could not update {ref_name}: {lock} exists (for {age:.0f} s)",
            "if no git or git mem process is running, a crash left it behind: remove it",
        )

    # -- moving refs through libgit2 (any layout) ---------------------------------

    def force(self, ref: str, old: str | None, new: str) -> bool:
        """Move a local ref we own the decision for, by compare-and-swap."""
        try:
            refs = self._libgit2.repo.references
            r = refs.get(ref)
            if r is None:
                if old is not None:
                    return False
                refs.create(ref, new)
            else:
                if str(r.target) != old:
                    return False
                r.set_target(new)
            return True
        except pygit2.AlreadyExistsError:
            return False
        except (pygit2.GitError, OSError) as exc:
            # A disk that cannot take the ref is said (a pull "integrated" nothing
            # and reported success); any other failure is a lost race.
            typed = from_os_error(exc if isinstance(exc, OSError) else OSError(None, str(exc)),
                                  self._libgit2.repo.path)
            if typed is not None:
                raise typed from None
            return False

    def delete(self, ref: str, old: str) -> bool:
        """Delete a local ref if it still points at ``old``."""
        try:
            r = self._libgit2.repo.references.get(ref)
            if r is None or str(r.target) != old:
                return False
            r.delete()
            return True
        except (pygit2.GitError, OSError):
            return False

    def put(self, ref: str, tip: str) -> None:
        """Point ``ref`` at ``tip`` whatever it held (refs only we write: tracking, backups)."""
        self._libgit2.repo.references.create(ref, tip, force=True)

    def backup(self, partition: str, tip: str) -> str | None:
        """Keep a partition's old tip reachable outside refs/memory/ (never replayed);
        None when the object is missing (nothing to keep: git refuses such a ref)."""
        if self._libgit2.repo.get(tip) is None:
            return None
        name = f"{BACKUP_PREFIX}{partition}-{tip[:12]}"
        self.put(name, tip)
        return name
