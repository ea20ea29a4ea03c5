"""The in-process reference store: ``MemoryStore``, the one to read first.

Layout: ``_store.py`` is the store (writes, exact reads, search entry points; every
record rule comes from ``stores._rules``), ``_stored.py`` what it keeps (a version per
stored record version, a scope of them), ``_channels.py`` its channels as plain scans.
"""

from ._store import MemoryStore as MemoryStore

__all__ = ["MemoryStore"]
