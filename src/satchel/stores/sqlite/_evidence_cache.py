"""A bounded cache of evidence by row, so hot entries are not decoded again each prepare.

A row is one immutable record version, so its evidence never changes; it only stops
being searchable. Retiring rows removes them and bumps a generation: evidence read
before a retirement is never cached after it, so a forgotten version cannot come back.

The cache is built to cost the garbage collector nothing lasting (the collector runs on
whichever thread allocates, often the host's event loop):

- Entries are dicts of strings, numbers and times (:func:`_kept`), not ``Evidence``
  objects. CPython never tracks such a dict, so no collection ever walks a kept entry,
  and none is promoted to an older generation to bring a full collection nearer. Kept
  ``Evidence`` objects (and the fit memo's candidates) made young collections beside
  prepares on a 20k-record scope walk thousands of them. Tuples are no better: they
  are untracked only by a collection that finds all their members untracked (never
  with a dict inside, and a tuple inside may be found later), and tuples from
  CPython's free list do not count towards the next young collection, so they pile up
  unwalked. Rebuilding an ``Evidence`` on a hit costs about a microsecond.
- A full cache evicts an eighth of itself at once, not one entry per new one. CPython
  counts each freed container against the allocations that trigger a young collection,
  so one-for-one eviction postponed young collections while new entries piled up in
  the young generation; freed in a batch, the count cannot go below zero.
"""

from __future__ import annotations

import itertools
import threading
from typing import TYPE_CHECKING, Any

from ...vocabulary._evidence import Evidence
from ...vocabulary._families import FAMILY_RULES, citation

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping, Sequence


#: Rows kept: a conversation's scopes several times over.
CAPACITY = 8192


class EvidenceCache:
    """Evidence of live record versions by row id, the oldest evicted first."""

    def __init__(self, capacity: int = CAPACITY) -> None:
        self._items: dict[int, dict[str, Any]] = {}
        self._lock = threading.Lock()
        self._capacity = capacity
        self.generation = 0

    def __len__(self) -> int:
        return len(self._items)

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
            if hit is None or hit["family"] != family or hit["scope_id"] != scope_id:
                missing.append(key)
            else:
                found[key] = _restored(hit)
        return found, missing

    def remember(self, found: Mapping[int, Evidence], generation: int) -> None:
        """Keep evidence read at ``generation``, unless rows were retired since."""
        with self._lock:
            if generation != self.generation:
                return
            items = self._items
            for key, evidence in found.items():
                kept = _kept(evidence)
                if kept is not None:
                    items[key] = kept
            overflow = len(items) - self._capacity
            if overflow > 0:
                # Only the oldest keys are visited: a full cache must not cost a walk over
                # all of it on every read (it did: 0.6 ms per search).
                for key in list(itertools.islice(items, overflow + self._capacity // 8)):
                    del items[key]

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


def _kept(evidence: Evidence) -> dict[str, Any] | None:
    """``evidence`` as a dict of plain values, or None if its citation is not the one its
    family spells (every store's evidence has that one: see ``Evidence.from_record``)."""
    family_rules = FAMILY_RULES[evidence.family]
    cited = evidence.citation
    record_id = cited.get(family_rules.id_field) if family_rules.id_field else None
    version = cited.get(family_rules.version_field) if family_rules.version_field else None
    if citation(evidence.family, evidence.scope_id, record_id, version) != cited:  # type: ignore[arg-type]
        return None
    return {
        "family": evidence.family,
        "scope_id": evidence.scope_id,
        "identity": evidence.identity,
        "record_id": record_id,
        "version": version,
        "text": evidence.text,
        "abstract": evidence.abstract,
        "overview": evidence.overview,
        "created_at": evidence.created_at,
        "thread": evidence.thread,
    }


def _restored(kept: dict[str, Any]) -> Evidence:
    """The evidence :func:`_kept` spelled."""
    family = kept["family"]
    scope_id = kept["scope_id"]
    return Evidence(
        family,
        scope_id,
        kept["identity"],
        citation(family, scope_id, kept["record_id"], kept["version"]),
        kept["text"],
        kept["abstract"],
        kept["overview"],
        kept["created_at"],
        kept["thread"],
    )
