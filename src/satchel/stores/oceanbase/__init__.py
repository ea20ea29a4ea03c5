"""The store for OceanBase and seekdb: ``OceanBaseStore``, over the MySQL protocol.

Layout: ``_store.py`` is the store (its methods and transactions; every record rule comes
from ``stores._rules``); ``_rows.py`` writes rows inside a transaction (inserts,
retirements, counts, re-analysis); ``_erase.py`` deletes erased records from every
table inside the same transaction; ``_schema.py`` holds the tables and statements;
``_search.py`` runs the channels; ``_locks.py`` takes a write's lock on its scope;
``_connections.py`` pools connections (and sets each session's limits) and
``_bridge.py`` runs them on an asyncio loop of their own; ``_engine.py`` starts the
embedded seekdb engine of a ``seekdb://`` URL with the keeper process that outlives a
killed writer.
"""

from ._store import OceanBaseStore as OceanBaseStore

__all__ = ["OceanBaseStore"]
