"""What the in-process store keeps: one :class:`Stored` per stored record version, and
one :class:`Scope` per scope (its searchable versions, its history, its profile).

It never searches and never decides a record rule (``stores._rules`` does); it only
holds versions and finds them by key, title or URI.
"""

from __future__ import annotations

import math
from collections import Counter
from datetime import UTC, datetime
from typing import TYPE_CHECKING

import attrs

from ...vocabulary._analysis import analyse
from ...vocabulary._dates import mentioned_days
from ...vocabulary._evidence import Evidence
from ...vocabulary._families import rules
from ...vocabulary._listing import PROFILE_PLACE, ListedRecord
from ...vocabulary._records import Columns, MemoryRecord, MemoryRef
from .._rules import Live, content_hash_of

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    import numpy as np
    import numpy.typing as npt

    from ...vocabulary._families import Family

    Vectors = npt.NDArray[np.float32]


@attrs.frozen(eq=False)
class Stored:
    """One stored record version: what search, evidence and exact reads need of it."""

    key: int
    family: Family
    record_id: str  # entry id, record id, or URI for a resource
    version: int  # version (memory) or revision (the other families)
    evidence: Evidence  # what a pool key reads, with its exact citation
    columns: Columns  # what it keeps, as written (the caller's key among them)
    content_hash: str | None  # kept when it has a caller's key
    terms: Counter[str]  # analysed terms of the searched text, with their counts
    length: int  # how many analysed terms (BM25's document length)
    vector: Vectors | None = None  # unit length; None for a family without vectors
    # A dated version's time (epoch seconds) and the days its own text names (UTC
    # ``[start, end)``, seen from the day it was said: "yesterday").
    said_at: float | None = None
    mentions: tuple[tuple[float, float], ...] = ()

    @classmethod
    def of(
        cls,
        key: int,
        family: Family,
        scope_id: str,
        cited: tuple[str, int],
        columns: Columns,
        vector: Vectors | None,
    ) -> Stored:
        """Version ``cited`` (record id, version) of a record of ``family`` in
        ``scope_id`` that keeps ``columns``, under ``key``; ``vector`` is unit length."""
        record_id, version = cited
        said = columns.created_at
        evidence = Evidence.from_record(
            family, scope_id, record_id, version, text=columns.text,
            abstract=columns.abstract, overview=columns.overview, created_at=said,
            thread=columns.thread,
        )  # fmt: skip
        terms = analyse(rules(family).indexed_text(columns))  # what index_text joins
        return cls(
            key=key, family=family, record_id=record_id, version=version, evidence=evidence,
            columns=columns,
            content_hash=None if columns.key is None else content_hash_of(family, columns),
            terms=Counter(terms), length=len(terms), vector=vector,
            said_at=None if said is None else said.timestamp(),
            mentions=() if said is None or columns.text is None else tuple(
                mentioned_days(columns.text, said.astimezone(UTC).date())
            ),
        )  # fmt: skip

    @property
    def caller_key(self) -> str | None:
        """The caller's idempotency key."""
        return self.columns.key

    @property
    def thread(self) -> str | None:
        return self.columns.thread

    def live(self) -> Live[Stored]:
        """This version as the record rules see a found one."""
        return Live(self, self.record_id, self.version, self.content_hash)

    def memory_record(self, scope_id: str) -> MemoryRecord:
        """This memory version as ``get_memory`` returns it."""
        kept = self.columns
        assert kept.text is not None
        assert kept.kind is not None
        return MemoryRecord(
            ref=MemoryRef(scope_id, self.record_id, self.version), text=kept.text,
            kind=kept.kind, tags=kept.tags or (), created_at=kept.created_at,
            thread=kept.thread, key=kept.key,
        )  # fmt: skip


@attrs.define
class Scope:
    """One scope's records, profile and write version."""

    write_version: int = 0
    #: When the write version last moved (UTC); None while nothing was written.
    written_at: datetime | None = None
    profile: str | None = None
    #: Each family's searchable versions by key, in the order they were written.
    live: dict[Family, dict[int, Stored]] = attrs.Factory(dict)
    #: Every version ever written, per (family, record id), oldest first.
    history: dict[tuple[Family, str], list[Stored]] = attrs.Factory(dict)
    #: The latest version written with each caller's key, per (family, key).
    keys: dict[tuple[Family, str], Stored] = attrs.Factory(dict)

    def searchable(self, family: Family) -> dict[int, Stored]:
        return self.live.setdefault(family, {})

    def moved(self) -> None:
        """Count one change of the scope: its write version moves, dated now."""
        self.write_version += 1
        self.written_at = datetime.now(UTC)

    def find(self, family: Family, test: Callable[[Stored], bool]) -> Live[Stored] | None:
        """The first searchable version of ``family`` that passes ``test``."""
        found = next((stored for stored in self.searchable(family).values() if test(stored)), None)
        return None if found is None else found.live()

    def at_uri(self, uri: str) -> Stored | None:
        """The searchable resource at ``uri``, if any (only its newest version can be)."""
        versions = self.history.get(("resource", uri), [])
        if versions and versions[-1].key in self.searchable("resource"):
            return versions[-1]
        return None

    def versions(self, ref: MemoryRef) -> list[Stored]:
        """Every version of ``ref``'s entry, oldest first (version n at n - 1)."""
        return self.history.get(("memory", ref.entry_id), [])

    def listed(self, families: Sequence[Family], include_forgotten: bool) -> list[ListedRecord]:
        """Every record of ``families`` as a listing shows it (its newest version,
        placed by its first version's key), the profile at place 0; unordered."""
        listed = [
            ListedRecord(
                versions[0].key, family, record_id, versions[-1].version,
                versions[-1].columns, forgotten=versions[-1].key not in self.searchable(family),
            )
            for (family, record_id), versions in self.history.items()
            if family in families and versions
        ]  # fmt: skip
        if "profile" in families and self.profile is not None:
            listed.append(
                ListedRecord(PROFILE_PLACE, "profile", None, None, Columns(text=self.profile))
            )
        return [record for record in listed if include_forgotten or not record.forgotten]

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


@attrs.frozen
class Placer:
    """Where a write to one family of a scope finds what placing a record asks
    (``_placing.Placer``): the scope's own versions, the write's earlier ones among
    them."""

    scope: Scope
    family: Family

    def key_holder(self, key: str) -> Live[Stored] | None:
        """The latest version holding the key: a searchable one, or a forgotten
        record's last one with every version the key wrote (a version a newer one of its
        record replaced counts as none)."""
        scope, family = self.scope, self.family
        latest = scope.keys.get((family, key))
        if latest is not None and latest.key in scope.searchable(family):
            return latest.live()
        if latest is None or scope.history[(family, latest.record_id)][-1] is not latest:
            return None
        earlier = {  # its record was forgotten: what the key ever wrote stays so
            stored.content_hash: stored.version
            for stored in scope.history[(family, latest.record_id)]
            if stored.caller_key == key and stored.content_hash is not None
        }
        return attrs.evolve(latest.live(), live=False, earlier=earlier)

    def name_holder(self, field: str, name: str) -> Live[Stored] | None:
        """The first searchable version whose column ``field`` holds ``name``."""
        return self.scope.find(self.family, lambda stored: getattr(stored.columns, field) == name)

    def latest_version(self, record_id: str) -> int:
        return len(self.scope.history.get((self.family, record_id), []))

    def retire(self, handle: Stored) -> None:
        self.scope.retire(handle)


def thread_order(stored: Stored) -> tuple[float, int]:
    """A thread's order: ``created_at`` (records without one first), then insertion."""
    return (-math.inf if stored.said_at is None else stored.said_at, stored.key)
