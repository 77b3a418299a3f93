"""Refs: read from files, moved by compare-and-swap with git's own lock files.

Every read command lists ``refs/memory/*`` to see whether anything moved, so
refs are read straight from loose files and ``packed-refs`` (libgit2 only
for layouts we do not read ourselves). A ref moves the way git moves it:
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

from ..errors import LogBusy, from_os_error
from .libgit2 import Libgit2, pygit2
from .objects import HEX_OID

REF_PREFIX = "refs/memory/"
# Where fetched partitions land before we move local refs ourselves, after
# checking ancestry. Never refs/memory/*: a forced fetch there would overwrite
# unpushed local commits, and --prune would delete local partitions.
REMOTE_PREFIX = "refs/memory-remotes/"
BACKUP_PREFIX = "refs/memory-backup/"
STALE_LOCK_SECONDS = 10.0
# The ref names we move by hand: components of letters, digits and . _ - that
# do not start with '.' or end in '.lock' (a subset of git's own rules).
_COMPONENT = re.compile(r"^(?!\.)[A-Za-z0-9._-]+(?<!\.lock)$")


def safe_ref_name(ref_name: str) -> bool:
    """True for ``refs/<component>/...`` made of safe components only: such a
    name cannot climb out of the refs folder or collide with a lock file."""
    parts = ref_name.split("/")
    return (len(parts) >= 3 and parts[0] == "refs"
            and all(_COMPONENT.match(p) and ".." not in p for p in parts[1:]))


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


def read_ref_files(commondir: Path, prefix: str) -> dict[str, str] | None:
    """Refs under ``prefix`` read straight from loose files and packed-refs.

    Loose refs are read first and packed-refs second, as git does: ``git
    pack-refs`` writes packed-refs before it deletes loose files, so this order
    can never miss a ref that is being packed. Loose values win. Returns None
    (the caller asks libgit2) for anything but the plain files backend, a
    symbolic or unreadable ref, or a packed-refs file we cannot parse.
    """
    if (commondir / "reftable").exists():
        return None
    loose: dict[str, str] = {}
    base = commondir / prefix
    if base.is_file() or base.is_symlink():  # an exact ref name rather than a folder
        try:
            value = base.read_text().strip() if not base.is_symlink() else ""
        except (OSError, UnicodeDecodeError):
            return None
        if not HEX_OID.match(value):
            return None
        loose[prefix] = value
    else:
        for dirpath, _dirs, files in os.walk(base):
            rel = Path(dirpath).relative_to(commondir).as_posix()
            for f in files:
                if f.endswith(".lock"):
                    continue
                path = Path(dirpath) / f
                try:
                    value = "" if path.is_symlink() else path.read_text().strip()
                except (OSError, UnicodeDecodeError):
                    return None
                if not HEX_OID.match(value):
                    return None  # symbolic or odd: let libgit2 resolve it
                loose[f"{rel}/{f}"] = value
    out: dict[str, str] = {}
    want = prefix.encode()
    try:
        with open(commondir / "packed-refs", "rb") as fh:
            for raw in fh:  # bytes: other refs may have any name git allows
                if raw[:1] in (b"#", b"^") or b" " not in raw:
                    continue
                oid, name = raw.rstrip(b"\n").split(b" ", 1)
                if name.startswith(want):
                    try:
                        out[name.decode()] = oid.decode()
                    except UnicodeDecodeError:
                        return None
    except FileNotFoundError:
        pass
    except OSError:
        return None
    out.update(loose)
    return out


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

    def tracking(self, namespace: str | None = None) -> dict[str, str]:
        """Remote-tracking partitions (of one remote namespace): ref -> tip."""
        return self.under(REMOTE_PREFIX + (namespace + "/" if namespace else ""))

    def under(self, prefix: str) -> dict[str, str]:
        """Every ref under ``prefix`` and its target id."""
        fast = read_ref_files(self._commondir, prefix)
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
        refs = read_ref_files(self._commondir, ref_name)
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
            refs = read_ref_files(self._commondir, name)
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
            fd = os.open(lock, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
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
