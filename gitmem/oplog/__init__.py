"""The op-log on git refs: the only package that talks to git."""

from .log import (
    BACKUP_PREFIX,
    CLONE_ID_FILE,
    PACK_FILE,
    REF_PREFIX,
    REMOTE_PREFIX,
    STALE_LOCK_SECONDS,
    STATE_DIR,
    Appended,
    Integrated,
    Oplog,
    Pack,
    Pushed,
    RemoteCopy,
    Rewrite,
)

__all__ = [
    "BACKUP_PREFIX", "CLONE_ID_FILE", "PACK_FILE", "REF_PREFIX", "REMOTE_PREFIX",
    "STALE_LOCK_SECONDS", "STATE_DIR", "Appended", "Integrated", "Oplog", "Pack", "Pushed",
    "RemoteCopy", "Rewrite",
]
