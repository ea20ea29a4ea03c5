"""The embedded store: ``SqliteStore``, one SQLite file (WAL, FTS5, vectors in BLOBs).

Layout: ``_store.py`` is the store (its methods, caches and threads; every record rule
comes from ``stores._rules``); ``_rows.py`` writes rows inside a write transaction
(inserts, retirements, term statistics, migrations); ``_erase.py`` erases records from
every table, the full-text index, the freed pages and the write-ahead log;
``_schema.py`` holds the tables and statements; ``_search.py`` runs the channels;
``_connections.py`` the writer and reader connections; ``_evidence_cache.py`` the
evidence read by key; ``_scope_matrices.py``, ``_vectors.py`` and ``_ann.py`` each
scope's vectors (a matrix, then an HNSW sidecar).
"""

from ._store import SqliteStore as SqliteStore

__all__ = ["SqliteStore"]
