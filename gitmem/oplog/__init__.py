"""The op-log on git refs: the only package that talks to git.

Layout (docs/data-model.md): each author-and-clone pair writes one partition,
``refs/memory/<partition>``, a linear chain of commits. Each commit's tree holds
one blob, ``ops.jsonl``, the op pack of that append. Nothing but this package
writes those refs, and it never touches branches, the index or the work tree.

Crash and race safety of an append (append.py):
1. blob, tree and commit objects are written first, as loose objects by our
   own writer (objects.py: temp file, fsync, rename; content-addressed, so a
   crash leaves at most unreferenced objects). libgit2 writes them instead
   only where that writer does not apply (sha256 or reftable repositories);
2. the ref moves last, by compare-and-swap against the tip read in step 1
   (refs.py: ``<ref>.lock`` is created exclusively and the old value checked,
   as git does), so a crash leaves the ref on a complete commit and a
   concurrent appender makes us rebuild the commit on the new tip and retry.

The modules, bottom up:
  records.py    the plain records returned to callers (Pack, Appended, ...)
  libgit2.py    pygit2, imported only on first use; the lazily opened repository
  gitcmd.py     running the git binary (identity, config, fetch, push)
  state.py      this clone's files under .git/mem/: clone id, memos (atomic writes)
  discover.py   finding the repository; identity, settings, revision times
  objects.py    loose objects read and written with zlib, without libgit2
  looserefs.py  loose ref files read ourselves, listed with packed-refs as git does
  refs.py       refs listed and looked up; compare-and-swap with git's lock files
  history.py    a partition's packs, ancestry, the highest Lamport clock
  append.py     flock, then objects, then the ref by compare-and-swap
  purge.py      rewriting a partition without some ops; the purge record
  sync.py       fetch, integrate, push (given its collaborators, not a mixin)
  remotes.py    what a remote hands us, judged: names and URLs, partition names a
                clone can store, what a partial clone lacks
  log.py        Oplog: the facade the api and the projection use
"""

from .log import Oplog
from .objects import PACK_FILE
from .records import Appended, Integrated, Pack, Pushed, RemoteCopy, Rewrite
from .refs import BACKUP_PREFIX, REF_PREFIX, REMOTE_PREFIX, STALE_LOCK_SECONDS, tracked_partition
from .state import CLONE_ID_FILE, STATE_DIR

__all__ = [
    "BACKUP_PREFIX", "CLONE_ID_FILE", "PACK_FILE", "REF_PREFIX", "REMOTE_PREFIX",
    "STALE_LOCK_SECONDS", "STATE_DIR", "Appended", "Integrated", "Oplog", "Pack", "Pushed",
    "RemoteCopy", "Rewrite", "tracked_partition",
]
