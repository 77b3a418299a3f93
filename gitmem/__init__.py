"""git mem: a memory for coding agents that lives inside the git repository.

Library use::

    import gitmem
    mem = gitmem.open(".")
    mem.add("tests live in spec/, run with make spec", kind="procedure")
    for hit in mem.recall("how do I run the tests"):
        print(hit.id[:12], hit.text)
"""

from __future__ import annotations

__version__ = "0.1.0"

TYPE_CHECKING = False  # typing itself costs a hook ~10 ms; mypy reads the block anyway
if TYPE_CHECKING:
    from typing import Any

    from .api import Store, open
    from .errors import (
        AmbiguousId,
        BareRepository,
        EmptyText,
        GitMemError,
        InvalidDate,
        InvalidInput,
        LogBusy,
        NoIdentity,
        NotARepository,
        UnknownId,
    )
    from .model import Added, Hit, OpInfo, Record, RefreshReport, Retired, Shown, Skipped, Status

# Names are imported on first use (PEP 562): ``import gitmem.x`` runs this file
# first, and a hook that must return in milliseconds cannot pay for pygit2 and
# msgspec here.
_WHERE = {"Store": "api", "open": "api"}
_WHERE.update(dict.fromkeys(("Added", "Hit", "OpInfo", "Record", "RefreshReport", "Retired",
                             "Shown", "Skipped", "Status"), "model"))
_WHERE.update(dict.fromkeys(("AmbiguousId", "BareRepository", "EmptyText", "GitMemError",
                             "InvalidDate", "InvalidInput", "LogBusy", "NoIdentity",
                             "NotARepository", "UnknownId"), "errors"))


def __getattr__(name: str) -> Any:
    where = _WHERE.get(name)
    if where is None:
        raise AttributeError(f"module 'gitmem' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(f".{where}", __name__), name)
    globals()[name] = value
    return value


__all__ = [
    "__version__",
    "open",
    "Store",
    "Added",
    "Retired",
    "Shown",
    "Status",
    "Hit",
    "OpInfo",
    "Record",
    "RefreshReport",
    "Skipped",
    "GitMemError",
    "InvalidInput",
    "EmptyText",
    "InvalidDate",
    "NotARepository",
    "BareRepository",
    "NoIdentity",
    "UnknownId",
    "AmbiguousId",
    "LogBusy",
]
