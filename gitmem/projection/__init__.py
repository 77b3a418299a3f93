"""The disposable local projection: the only package that talks to SQLite and the vector index.

The projection is a cache of the fold over every op in ``refs/memory/*``,
rebuilt from the log whenever it is missing, damaged or of another schema.
Read the modules in this order:

- ``tables``      what the SQLite file holds: the DDL, SCHEMA_VERSION, the check on open
- ``connection``  opening the file (its pragmas) and letting it go (release, the log)
- ``damage``      what a failure means: ProjectionCorrupt (rebuild) or ProjectionUnwritable
- ``fold``        replaying partition moves and ops into the tables (SQL that writes;
                  the rules are ``gitmem.replay``'s)
- ``scope``       which memories a query may see (``Scope`` and its SQL conditions)
- ``rows``        table rows -> ``gitmem.model`` records
- ``queries``     the read queries
- ``vectors``     the int8 vector file: append, zero, exact scans
- ``distances``   what a scan's distances say: nearest rows, rows within a cut, spread
- ``refresh``     a refresh that found something moved: replay and embedding, one transaction
- ``store``       ``Projection``, the facade composing all of the above
- ``usage``       the separate, local record of what recall handed out
"""

from typing import TYPE_CHECKING, Any

from .damage import ProjectionCorrupt
from .graph import MAX_EDGES
from .tables import DB_NAME, SCHEMA_VERSION
from .scope import Scope
from .marks import RefsMark
from .store import Projection
from .usage import Usage
from .generations import VEC_NAME
from .vectors import EMBED_BATCH, DocEmbedder

__all__ = [
    "DB_NAME",
    "MAX_EDGES",
    "EMBED_BATCH",
    "SCHEMA_VERSION",
    "VEC_NAME",
    "DocEmbedder",
    "LogSource",
    "Projection",
    "ProjectionCorrupt",
    "RefsMark",
    "Scope",
    "Usage",
]


if TYPE_CHECKING:
    from .logsource import LogSource


def __getattr__(name: str) -> Any:
    # A type for callers to name (logsource.py): loaded when asked for, not with every read.
    if name == "LogSource":
        from .logsource import LogSource

        return LogSource
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
