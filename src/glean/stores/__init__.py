"""Stores: where records live and pools come from (I/O). They know nothing of the gate,
the coordinator or the Builder."""

from ._protocol import Store as Store
from ._sqlite import SqliteStore as SqliteStore

__all__ = ["SqliteStore", "Store"]
