"""The store for OceanBase and seekdb: ``OceanBaseStore``, over the MySQL protocol.

Layout: ``_store.py`` is the store (its methods and transactions; every record rule comes
from ``stores._rules``); ``_rows.py`` writes rows inside a transaction (inserts,
retirements, counts, re-analysis); ``_schema.py`` holds the tables and statements;
``_search.py`` runs the channels; ``_connections.py`` pools connections and
``_bridge.py`` runs them on an asyncio loop of their own.
"""

from ._store import OceanBaseStore as OceanBaseStore

__all__ = ["OceanBaseStore"]
