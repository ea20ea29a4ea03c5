"""A bounded cache of evidence by row, so hot entries are not decoded again each prepare.

A row is one immutable record version, so its evidence never changes; it only stops
being searchable. Retiring rows removes them and bumps a generation: evidence read
before a retirement is never cached after it, so a forgotten version cannot come back.
"""

from __future__ import annotations

import itertools
import threading
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping, Sequence

    from ..vocabulary._evidence import Evidence


#: Rows kept: a conversation's scopes several times over. Every cached evidence is an
#: object the garbage collector walks, on whichever thread triggers the collection
#: (often the event loop's, or a worker's holding the GIL): 65,536 of them, with the fit
#: memo's, made full collections of 45-136 ms beside 20k-record prepares; this many
#: young collections of up to 7 ms (see ``builder.MEMO_CAPACITY``).
CAPACITY = 8192


class EvidenceCache:
    """Evidence of live record versions by row id, oldest evicted first."""

    def __init__(self, capacity: int = CAPACITY) -> None:
        self._items: dict[int, Evidence] = {}
        self._lock = threading.Lock()
        self._capacity = capacity
        self.generation = 0

    def split(
        self, keys: Sequence[int], family: str, scope_id: str
    ) -> tuple[dict[int, Evidence], list[int]]:
        """The cached evidence of ``keys`` in the family and scope, and the keys that
        must be read (a row cached for another family or scope is read, and not found)."""
        found: dict[int, Evidence] = {}
        missing: list[int] = []
        items = self._items
        for key in keys:
            hit = items.get(key)
            if hit is None or hit.family != family or hit.scope_id != scope_id:
                missing.append(key)
            else:
                found[key] = hit
        return found, missing

    def remember(self, found: Mapping[int, Evidence], generation: int) -> None:
        """Keep evidence read at ``generation``, unless rows were retired since."""
        with self._lock:
            if generation != self.generation:
                return
            self._items.update(found)
            overflow = len(self._items) - self._capacity
            if overflow > 0:
                # Only the oldest ``overflow`` keys are visited: a full cache must not cost
                # a walk over all of it on every read (it did: 0.6 ms per search).
                for key in list(itertools.islice(self._items, overflow)):
                    del self._items[key]

    def retire(self, rows: Iterable[int]) -> None:
        """Forget rows that left search; in-flight reads will not cache them either."""
        with self._lock:
            self.generation += 1
            for row in rows:
                self._items.pop(row, None)

    def retire_all(self) -> None:
        """Forget everything (another process wrote): nothing read before is cached."""
        with self._lock:
            self.generation += 1
            self._items.clear()
