"""Loose refs read straight from their files, and listed with packed-refs in git's order.

Why a module of its own: every read command lists ``refs/memory/*`` to see whether
anything moved, so the listing reads git's files backend itself instead of asking
libgit2: the loose ref files here, packed-refs in packedrefs.py. Anything it does not
read as plain files (a symbolic or unreadable ref, reftable) is answered None, and
the caller asks libgit2. refs.py lists, looks up and moves refs on top of it.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from pathlib import Path

from .objects import HEX_OID
from .packedrefs import Packed, read_packed


def loose_refs(commondir: Path, prefix: str) -> dict[str, str] | None:
    """The loose refs under ``prefix`` (a folder, or one exact ref name): name ->
    id; None for anything but plain files holding an id (a symbolic link, an
    unreadable or odd file: the caller asks libgit2)."""
    loose: dict[str, str] = {}
    base = os.path.join(commondir, prefix)
    try:
        st = os.lstat(base)
    except FileNotFoundError:
        return loose
    except OSError:
        return None
    if not stat.S_ISDIR(st.st_mode):  # an exact ref name rather than a folder
        if not stat.S_ISREG(st.st_mode):
            return None
        value = read_loose(base)
        if value is None:
            return None
        loose[prefix] = value
        return loose
    todo = [(base, prefix.rstrip("/"))]
    while todo:
        folder, rel = todo.pop()
        try:
            entries = list(os.scandir(folder))
        except FileNotFoundError:
            continue  # removed while we looked (git prunes empty folders)
        except OSError:
            return None
        for entry in entries:
            name = entry.name
            if name.endswith(".lock"):
                continue
            try:
                if entry.is_dir(follow_symlinks=False):
                    todo.append((entry.path, f"{rel}/{name}"))
                    continue
                if entry.is_symlink():
                    return None  # symbolic: let libgit2 resolve it
            except OSError:
                return None
            value = read_loose(entry.path)
            if value is None:
                if not os.path.lexists(entry.path):
                    continue  # deleted since the listing: a ref gone, as if never seen
                return None
            loose[f"{rel}/{name}"] = value
    return loose


def read_loose(path: str) -> str | None:
    """The id a loose ref file holds, or None (missing, unreadable, not an id)."""
    try:
        with open(path, "rb") as fh:
            raw = fh.read(256)
        value = raw.decode("ascii").strip()
    except (OSError, UnicodeDecodeError):
        return None
    return value if HEX_OID.match(value) else None


def read_ref_files(commondir: Path, prefix: str,
                   packed_now: Callable[[], Packed | None] | None = None) -> dict[str, str] | None:
    """Refs under ``prefix`` read straight from loose files and packed-refs.

    Loose refs are read first and packed-refs second, as git does: ``git
    pack-refs`` writes packed-refs before it deletes loose files, so this order
    can never miss a ref that is being packed. Loose values win. Returns None
    (the caller asks libgit2) for anything but the plain files backend, a
    symbolic or unreadable ref, or a packed-refs file we cannot parse.
    ``packed_now``: asked for packed-refs once the loose files are read, instead of
    reading it again (Refs keeps the last one it read). (Asked before them, a listing
    that overlapped a ``git pack-refs`` missed refs: 2,970 of 3,000.)
    """
    if (commondir / "reftable").exists():
        return None
    loose = loose_refs(commondir, prefix)
    if loose is None:
        return None
    packed = packed_now() if packed_now is not None else read_packed(commondir)
    if packed is None:
        return None
    try:
        out = {name.decode(): oid.decode() for name, oid in packed.items(prefix.encode())}
    except UnicodeDecodeError:
        return None
    out.update(loose)
    return out
