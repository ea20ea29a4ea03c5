"""Which scopes' full-text postings a store holds (``_postings``), and when: read
once the statement has searched a scope about as often as reading it costs, patched
after the process's own writes of the scope, dropped on an erase.

Kept per (family, scope) for one write version of the scope
(``SqliteStore.scope_version``) and the table's totals for one write epoch of the
store, as the vector matrices are: a write of this process to the scope patches the
postings to its new version (``ScopePostings.patched``); any other change leaves
them stale, and the statement searches until they are due again (``ROWS_PER_SEARCH``).
Held in numpy arrays and a dict of strings to ints, which the garbage collector never
walks; the scopes together stay within ``CAPACITY_BYTES``, the least recently searched
dropped first. Thread-safe: searches run in worker threads, writes commit in another.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import TYPE_CHECKING, Final

from . import _postings
from . import _schema as sql

if TYPE_CHECKING:
    import sqlite3
    from collections.abc import Iterable

    from ...vocabulary._families import Family
    from .._postings import ScopePostings, Totals
    from ._rows import Write

#: Bytes of postings held over every scope of a store.
CAPACITY_BYTES: Final = 64 * 1024 * 1024

#: Scopes of more records keep the statement: reading one is about 0.2 s of Python in
#: a worker thread (beside the host's loop) and 10 MB held, and any write another
#: process makes, or one that cannot be followed, has it read again.
MOST_ROWS: Final = 32768

#: Rows of a scope per statement search before its postings are read: a scope is read
#: once the statement searched it ``1 + rows // ROWS_PER_SEARCH`` times since its
#: postings were last held, about when the statement has cost what reading costs
#: (renting until the rent reaches the price: never far from twice the better choice's
#: cost). Held postings follow the process's own writes, so a scope written between
#: searches is read once, not at every write. Measured (``python -m bench postings``,
#: CPU): reading costs 4-6 us a row, as much as 4 statement searches at 400 rows, 9 at
#: 2,000 and 35 at 10,000 (on LoCoMo's conversations, 3-7 at 369-605 rows).
ROWS_PER_SEARCH: Final = 200

#: Held postings of at most this many rows follow a write of their scope at once, on
#: the thread that committed it (``python -m bench postings``: 0.16 ms at 400 rows,
#: 2.1 ms at 10,000, against 2.0 and 56 ms to read the scope again); larger ones are
#: dropped.
PATCH_ROWS: Final = MOST_ROWS

#: Scopes whose statement searches are counted; past it the counts start again (a
#: store of many scopes keeps no unbounded tally).
COUNTED_SCOPES: Final = 65536


class PostingsCache:
    """The held postings of a store's scopes, and each family's table totals."""

    def __init__(self, capacity: int = CAPACITY_BYTES, most_rows: int = MOST_ROWS) -> None:
        self._scopes: OrderedDict[tuple[Family, int], tuple[int, ScopePostings | None]] = (
            OrderedDict()
        )
        self._totals: dict[Family, tuple[int, Totals]] = {}
        # Searches by the statement since the scope's postings were last read or held.
        self._searched: dict[tuple[Family, int], int] = {}
        self._bytes = 0
        self._capacity = capacity
        self.most_rows = most_rows
        self._lock = threading.Lock()
        #: Scopes read from the database (for tests and benchmarks).
        self.builds = 0

    @property
    def nbytes(self) -> int:
        return self._bytes

    def ready(self, family: Family, scope_key: int, version: int, rows: int) -> bool:
        """Whether a search of the scope (of ``rows`` records) at ``version`` reads no
        postings first: they are held, or not due yet."""
        where = (family, scope_key)
        kept = self._scopes.get(where)
        return (kept is not None and kept[0] == version) or not self._due(where, rows)

    def held(self, family: Family, scope_key: int, version: int) -> ScopePostings | None:
        """The scope's postings if they are held at ``version``: no read, and no search
        counted towards reading them."""
        with self._lock:
            kept = self._scopes.get((family, scope_key))
        return kept[1] if kept is not None and kept[0] == version else None

    def postings(
        self,
        conn: sqlite3.Connection,
        family: Family,
        scope_key: int,
        at: tuple[int, int],
        *,
        may_read: bool = True,
    ) -> ScopePostings | None:
        """The scope's postings at its write version, read now if they are due and
        ``may_read`` (``at``: the version and the scope's rows); None when they are not
        held (the statement searches it). A search on the event loop's thread may not
        read: another search may have made them due since it was judged ``ready``."""
        where = (family, scope_key)
        version, rows = at
        with self._lock:
            kept = self._scopes.get(where)
            if kept is not None and kept[0] == version:
                self._scopes.move_to_end(where)
                return kept[1]
            if not may_read or not self._due(where, rows):
                if len(self._searched) >= COUNTED_SCOPES:
                    self._searched.clear()
                self._searched[where] = self._searched.get(where, 0) + 1
                return None
        found = _postings.read_postings(conn, family, scope_key)
        with self._lock:
            self.builds += 1
            self._searched.pop(where, None)
            kept = self._scopes.get(where)
            if kept is not None and kept[0] >= version:
                return found  # a newer read landed meanwhile: keep that one
            self._drop(where)
            self._scopes[where] = (version, found)
            self._bytes += 0 if found is None else found.nbytes
            self._evict(where)
        return found

    def follow(
        self, family: Family, scope_key: int, versions: tuple[int, int], write: Write
    ) -> None:
        """Follow a committed ``write`` of the scope, which moved its write version
        from ``versions[0]`` to ``versions[1]``: postings held at the first are patched
        to the second when the write can be followed and the scope is small enough to
        patch on the caller's thread; else they are dropped (read again when due)."""
        where = (family, scope_key)
        before, after = versions
        with self._lock:
            kept = self._scopes.get(where)
            if kept is None:
                return
            held = kept[1]
            self._drop(where)
            if kept[0] != before or held is None or len(held.rows) > PATCH_ROWS:
                return
            if any(row not in write.indexed for row in write.added_rows):
                return  # a row inserted without its terms at hand (a copy's)
            added = [(row, write.indexed[row]) for row in write.added_rows]
            found = held.patched(sql.term_prefix(scope_key), added, write.removed_rows)
            if found is not None:
                self._scopes[where] = (after, found)
                self._bytes += found.nbytes
                self._evict(where)

    def erase(self, jobs: Iterable[tuple[Family, int]]) -> None:
        """Drop the postings of (family, scope) pairs records were erased from: no term
        of an erased record outlives the erase here."""
        with self._lock:
            for where in jobs:
                self._drop(where)
                self._searched.pop(where, None)

    def totals(self, conn: sqlite3.Connection, family: Family, epoch: int) -> Totals:
        """The family's FTS5 table totals at the store's write ``epoch``."""
        kept = self._totals.get(family)
        if kept is not None and kept[0] == epoch:
            return kept[1]
        found = _postings.read_totals(conn, family)
        with self._lock:
            kept = self._totals.get(family)
            if kept is None or kept[0] <= epoch:
                self._totals[family] = (epoch, found)
        return found

    def _due(self, where: tuple[Family, int], rows: int) -> bool:
        """Whether the scope's postings are to be read at this search."""
        return self._searched.get(where, 0) >= 1 + rows // ROWS_PER_SEARCH

    def _drop(self, where: tuple[Family, int]) -> None:
        kept = self._scopes.pop(where, None)
        if kept is not None and kept[1] is not None:
            self._bytes -= kept[1].nbytes

    def _evict(self, newest: tuple[Family, int]) -> None:
        """Drop the least recently searched scopes until within capacity (never the one
        just read)."""
        for where in list(self._scopes):
            if self._bytes <= self._capacity:
                break
            if where != newest:
                self._drop(where)
