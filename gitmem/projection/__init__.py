"""The disposable local projection: the only package that talks to SQLite and the vector index."""

from .store import (
    DB_NAME,
    EMBED_BATCH,
    HNSW_FRESH_MIN,
    HNSW_NAME,
    HNSW_WARM_MIN,
    SCHEMA_VERSION,
    VEC_NAME,
    DocEmbedder,
    LogSource,
    Projection,
    ProjectionCorrupt,
    Scope,
    Usage,
)

__all__ = [
    "DB_NAME",
    "EMBED_BATCH",
    "HNSW_FRESH_MIN",
    "HNSW_NAME",
    "HNSW_WARM_MIN",
    "SCHEMA_VERSION",
    "VEC_NAME",
    "DocEmbedder",
    "LogSource",
    "Projection",
    "ProjectionCorrupt",
    "Scope",
    "Usage",
]
