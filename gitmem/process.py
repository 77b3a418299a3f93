"""What kind of process this is: one that ends with ``os._exit`` as soon as its
command is done (the ``git-mem`` program), or a host that lives on (a library
user, a test run).

Why this exists: what a one-shot process may leave to its exit differs. Its
SQLite connections need not be closed (projection/connection.release): closing the
last connection checkpoints the write-ahead log and syncs the file, ~5-15 ms of
a command that wrote, which the next writer or the log's own limit does
anyway. A host must close what it opens. The CLI says which it is, before it
opens anything; everything else assumes a host.
"""

from __future__ import annotations

one_shot = False


def ends_with_exit() -> None:
    """This process ends with ``os._exit`` when its command is done (cli.main)."""
    global one_shot
    one_shot = True
