"""Git objects as loose files, read and written without libgit2.

``git mem add`` writes one blob, one tree and one commit, and the read that
follows sees mostly what this clone just wrote: loose objects. Handling them
with zlib spares both commands the ~70 ms of loading libgit2. The format is
git's own, so git, libgit2 and we can write side by side. Anything else
(packed objects, sha256 or reftable repositories) goes to libgit2, which
stays the reference.
"""

from __future__ import annotations

import os
import re
import zlib
from pathlib import Path

from .. import hashes

PACK_FILE = "ops.jsonl"
HEX_OID = re.compile(r"^[0-9a-f]{40}([0-9a-f]{24})?$")
# Loose objects larger than this are left to libgit2: a small file may inflate
# to gigabytes, and nothing we write comes near (packs stop at 64 MiB).
MAX_LOOSE_BYTES = 80 * 1024 * 1024


class Objects:
    """The loose objects of one repository (``<commondir>/objects``)."""

    def __init__(self, commondir: Path) -> None:
        self._commondir = commondir
        self._plain: bool | None = None

    def plain_writes_ok(self) -> bool:
        """True for a sha1 repository with the files ref backend: the layout
        our own writers (objects here, refs in refs.py) know. Anything else
        is written through libgit2."""
        if self._plain is None:
            try:
                config = (self._commondir / "config").read_text(errors="replace").lower()
            except OSError:
                config = ""
            self._plain = (
                "objectformat" not in config
                and "refstorage" not in config
                and not (self._commondir / "reftable").exists()
                and (self._commondir / "objects").is_dir()
            )
        return self._plain

    def write(self, kind: bytes, data: bytes) -> str:
        """Store an object; its id. Crash-safe: compressed to a temp name,
        fsynced, then renamed into place, so a reader sees all of it or
        nothing. Content-addressed: an object already there is left alone."""
        raw = kind + b" " + str(len(data)).encode() + b"\0" + data
        oid = hashes.sha1(raw).hexdigest()
        folder = self._commondir / "objects" / oid[:2]
        path = folder / oid[2:]
        if path.exists():
            return oid
        folder.mkdir(exist_ok=True)
        tmp = folder / f"tmp_obj_{os.getpid()}_{os.urandom(16).hex()}"
        with open(tmp, "wb") as fh:
            fh.write(zlib.compress(raw, 1))
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, 0o444)
        os.replace(tmp, path)
        return oid

    def header(self, oid: str) -> tuple[bytes, int] | None:
        """(type, size) of a loose object, inflating only its header; or None."""
        if not HEX_OID.match(oid):
            return None
        try:
            with open(self._commondir / "objects" / oid[:2] / oid[2:], "rb") as fh:
                start = fh.read(4096)
            head = zlib.decompressobj().decompress(start, 64)
        except (OSError, zlib.error):
            return None
        header, nul, _ = head.partition(b"\0")
        kind, _, size = header.partition(b" ")
        if not nul or not size.isdigit() or len(size) > 20:
            return None
        return kind, int(size)

    def loose(self, oid: str) -> tuple[bytes, bytes] | None:
        """(type, body) of a loose object, or None (also for one over MAX_LOOSE_BYTES)."""
        if not HEX_OID.match(oid):
            return None
        try:
            inflate = zlib.decompressobj()
            data = (self._commondir / "objects" / oid[:2] / oid[2:]).read_bytes()
            raw = inflate.decompress(data, MAX_LOOSE_BYTES + 64)
        except (OSError, zlib.error):
            return None
        if inflate.unconsumed_tail:
            return None  # inflates beyond the bound: let libgit2 answer
        header, _, body = raw.partition(b"\0")
        kind, _, size = header.partition(b" ")
        if not size.isdigit() or int(size) != len(body):
            return None
        return kind, body

    def commit(self, oid: str) -> tuple[str, list[str]] | None:
        """(tree, parents) of a loose commit, or None."""
        obj = self.loose(oid)
        if obj is None or obj[0] != b"commit":
            return None
        tree, parents = "", []
        for line in obj[1].split(b"\n"):
            if not line:
                break
            name, _, value = line.partition(b" ")
            if name == b"tree":
                tree = value.decode("ascii", "replace")
            elif name == b"parent":
                parents.append(value.decode("ascii", "replace"))
        return (tree, parents) if tree else None

    def commit_message(self, oid: str) -> bytes | None:
        """The message of a loose commit (trailers included), or None."""
        obj = self.loose(oid)
        if obj is None or obj[0] != b"commit":
            return None
        return obj[1].partition(b"\n\n")[2]
