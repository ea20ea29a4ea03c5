"""Stores: where records live and pools come from (I/O).

They write records and retrieve pools, and know nothing of the gate, the orchestration
or the Builder; they use only the vocabulary (and an embedder, to rebuild vectors).
"""

from ._protocol import Store as Store
from ._sqlite import SqliteStore as SqliteStore

__all__ = ["SqliteStore", "Store"]
