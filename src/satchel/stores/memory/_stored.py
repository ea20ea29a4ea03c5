"""What the in-process store keeps: one :class:`Stored` per stored record version, and
one :class:`Scope` per scope (its searchable versions, its history, its profile).

It never searches and never decides a record rule (``stores._rules`` does); it only
holds versions and finds them by key, title or URI.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import attrs

from ...vocabulary._records import TopicMemory
from .._rules import Live, by_title, by_uri, content_hash_of, decide, name_of

if TYPE_CHECKING:
    from collections import Counter
    from collections.abc import Callable

    import numpy as np
    import numpy.typing as npt

    from ...vocabulary._evidence import Evidence
    from ...vocabulary._families import Family
    from ...vocabulary._records import MemoryRecord, MemoryRef
    from .._rules import Keepable, WriteDecision

    Vectors = npt.NDArray[np.float32]


@attrs.frozen(eq=False)
class Stored:
    """One stored record version: what search, evidence and exact reads need of it."""

    key: int
    family: Family
    record_id: str  # entry id, record id, or URI for a resource
    version: int  # version (memory) or revision (the other families)
    evidence: Evidence  # what a pool key reads, with its exact citation
    caller_key: str | None  # the caller's idempotency key
    content_hash: str | None  # kept when it has a caller's key
    terms: Counter[str]  # analysed terms of the searched text, with their counts
    length: int  # how many analysed terms (BM25's document length)
    vector: Vectors | None = None  # unit length; None for a family without vectors
    title: str | None = None  # topic memory only: the title that names it
    # Memory only: when it was said (epoch seconds), its thread, the days its own text
    # names (UTC ``[start, end)``) and the record ``get_memory`` returns.
    said_at: float | None = None
    thread: str | None = None
    mentions: tuple[tuple[float, float], ...] = ()
    record: MemoryRecord | None = None
    body: str | None = None  # resource only: read on demand, never searched

    def live(self) -> Live[Stored]:
        """This version as the record rules see a found one."""
        return Live(self, self.record_id, self.version, self.content_hash)


@attrs.define
class Scope:
    """One scope's records, profile and write version."""

    write_version: int = 0
    profile: str | None = None
    #: Each family's searchable versions by key, in the order they were written.
    live: dict[Family, dict[int, Stored]] = attrs.Factory(dict)
    #: Every version ever written, per (family, record id), oldest first.
    history: dict[tuple[Family, str], list[Stored]] = attrs.Factory(dict)
    #: The latest version written with each caller's key, per (family, key).
    keys: dict[tuple[Family, str], Stored] = attrs.Factory(dict)

    def searchable(self, family: Family) -> dict[int, Stored]:
        return self.live.setdefault(family, {})

    def find(self, family: Family, test: Callable[[Stored], bool]) -> Live[Stored] | None:
        """The first searchable version of ``family`` that passes ``test``."""
        found = next((stored for stored in self.searchable(family).values() if test(stored)), None)
        return None if found is None else found.live()

    def keyed(self, family: Family, record: Keepable) -> WriteDecision[Stored]:
        """What the record's idempotency key makes of its write (``_rules.decide``),
        given the latest version that holds the key: a searchable one, or a forgotten
        record's last one with every version the key wrote (a version a newer one of its
        record replaced counts as none)."""
        if record.key is None:
            return decide(None, "")
        latest = self.keys.get((family, record.key))
        found: Live[Stored] | None = None
        if latest is not None and latest.key in self.searchable(family):
            found = latest.live()
        elif latest is not None and self.history[(family, latest.record_id)][-1] is latest:
            earlier = {  # its record was forgotten: what the key ever wrote stays so
                stored.content_hash: stored.version
                for stored in self.history[(family, latest.record_id)]
                if stored.caller_key == record.key and stored.content_hash is not None
            }
            found = attrs.evolve(latest.live(), live=False, earlier=earlier)
        return decide(found, content_hash_of(record))

    def titled(self, title: str) -> Live[Stored] | None:
        """The searchable topic memory titled ``title``, if any."""
        return self.find("topic-memory", lambda stored: stored.title == title)

    def at_uri(self, uri: str) -> Stored | None:
        """The searchable resource at ``uri``, if any (only its newest version can be)."""
        versions = self.history.get(("resource", uri), [])
        if versions and versions[-1].key in self.searchable("resource"):
            return versions[-1]
        return None

    def by_name(self, record: Keepable) -> WriteDecision[Stored]:
        """Where a record its key did not place goes by its name
        (``_rules.needs_name``): a topic memory by its title, a resource by its URI."""
        if isinstance(record, TopicMemory):
            return by_title(self.titled(record.title))
        uri = name_of(record)
        assert uri is not None, "only a topic memory or a resource is placed by its name"
        current = self.at_uri(uri)
        latest = len(self.history.get(("resource", uri), []))
        return by_uri(uri, None if current is None else current.live(), latest)

    def versions(self, ref: MemoryRef) -> list[Stored]:
        """Every version of ``ref``'s entry, oldest first (version n at n - 1)."""
        return self.history.get(("memory", ref.entry_id), [])

    def keep(self, stored: Stored) -> None:
        """Make a new version searchable and readable."""
        self.searchable(stored.family)[stored.key] = stored
        self.history.setdefault((stored.family, stored.record_id), []).append(stored)
        if stored.caller_key is not None:
            self.keys[(stored.family, stored.caller_key)] = stored

    def retire(self, stored: Stored | None) -> None:
        """Take a version out of search; ``history`` keeps it readable."""
        if stored is not None:
            self.searchable(stored.family).pop(stored.key, None)

    def erase(self, family: Family, record_id: str) -> list[Stored]:
        """Drop every version of a record: out of search, history and keys (a key
        naming one of them is free again). Returns the versions dropped."""
        versions = self.history.pop((family, record_id), [])
        for stored in versions:
            self.searchable(family).pop(stored.key, None)
            if (
                stored.caller_key is not None
                and self.keys.get((family, stored.caller_key)) is stored
            ):
                del self.keys[(family, stored.caller_key)]
        return versions


def thread_order(stored: Stored) -> tuple[float, int]:
    """A thread's order: ``created_at`` (records without one first), then insertion."""
    return (-math.inf if stored.said_at is None else stored.said_at, stored.key)
