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

from .api import Store, open
from .model import Added, Retired, Shown, Status
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
from .model import Hit, OpInfo, Record, RefreshReport, Skipped

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
