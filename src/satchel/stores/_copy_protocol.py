"""What a store does to be copied from or into: :class:`CopySource` and :class:`CopyTarget`.

``satchel.stores.copy_store`` moves a store's contents into another store through these
two protocols, never through :class:`~satchel.stores.Store`: they read and write record
versions verbatim (ids, version numbers, searchable or not, keys, dates, vectors), which
no search and no caller's write ever needs. Ranking code never sees them. Every store
satchel ships implements both; a store written outside satchel implements them to take
part in a copy.

A version travels as a :class:`StoredVersion`: every column a store keeps of it, and its
vector when it is searchable. Within one family of one scope, a source hands versions
out in the order it wrote them (its own keys, as ``position``) and a target writes them
in the order given, so the target's keys keep that order: every tie a search breaks by
key (the older first) breaks the same way after a copy.

It never decides a record rule, never embeds, never searches.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final, Protocol, runtime_checkable

import attrs
import numpy as np

from ..vocabulary._errors import StoreError
from ..vocabulary._families import FAMILY_RULES, rules
from ..vocabulary._refs import compact_id
from . import _rules

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from datetime import datetime

    import numpy.typing as npt

    from ..vocabulary._evidence import Evidence
    from ..vocabulary._families import Family
    from ..vocabulary._records import Columns, Record, Ref

    Vectors = npt.NDArray[np.float32]

#: The families whose records are versioned and copied version by version (a profile is
#: one text per scope, copied whole), in the order a copy moves them.
VERSIONED: Final[tuple[Family, ...]] = tuple(
    family for family, rules in FAMILY_RULES.items() if rules.id_field is not None
)


@attrs.frozen
class VectorOrigin:
    """What built a store's vectors: the fingerprint the store recorded with its first
    vector (None when none was recorded: no vector yet, or vectors written without a
    bound embedder) and their dimension (None: no vector yet)."""

    fingerprint: str | None
    dimension: int | None


@attrs.frozen
class StoredVersion:
    """One stored version of a record, verbatim: what a copy reads from one store and
    writes into another. Compared by content: ``position`` and ``vector`` are left out.

    Attributes:
        family: memory, experience, topic-memory or resource.
        record_id: the entry id (memory), record id (experience, topic memory) or URI
            (resource).
        version: its version (memory) or revision (the other families).
        live: searchable; False for a forgotten entry's versions and for a version a
            newer one replaced (both stay readable by their reference).
        position: the source store's key for it; versions of one family in one scope
            come in increasing position, the order the store wrote them.
        key: the caller's idempotency key.
        text: what it reads as: a memory's text, an experience's or topic memory's
            text as rendered (``Situation: ...``, ``title\\n\\ntext``); None for a
            resource.
        kind, tags, created_at, thread: a memory entry's.
        title: a topic memory's.
        abstract, overview, body: a resource's.
        vector: its embedding when it is searchable and its family has a vector
            channel; None otherwise (a store keeps no vector of what left search).
    """

    family: Family
    record_id: str
    version: int
    live: bool
    position: int = attrs.field(default=0, eq=False)
    key: str | None = None
    text: str | None = None
    kind: str | None = None
    tags: tuple[str, ...] = ()
    created_at: datetime | None = None
    thread: str | None = None
    title: str | None = None
    abstract: str | None = None
    overview: str | None = None
    body: str | None = None
    vector: Vectors | None = attrs.field(default=None, eq=False)

    @property
    def said(self) -> str | None:
        """A memory's ``created_at`` as stores keep it (ISO 8601), None without one."""
        return None if self.created_at is None else self.created_at.isoformat()

    def columns(self) -> Columns:
        """What the version keeps, as every write keeps it (a resource's URI is its
        record id): the columns its family's content names, and its key."""
        return _rules.columns_from(
            self.family,
            {
                "text": self.text, "kind": self.kind, "tags": self.tags,
                "created_at": self.created_at, "thread": self.thread, "title": self.title,
                "uri": self.record_id, "abstract": self.abstract, "overview": self.overview,
                "body": self.body,
            },
            self.key,
        )  # fmt: skip

    def content_hash(self) -> str:
        """Its content hash (``_rules.content_hash_of``): what a caller's key compares."""
        return _rules.content_hash_of(self.family, self.columns())

    def searched(self) -> str:
        """The text it is indexed on (``FamilyRules.indexed_text``)."""
        return rules(self.family).indexed_text(self.columns())

    def embedding_text(self) -> str:
        """The text its vector embeds, as the runtime embeds it
        (``FamilyRules.embedded_text``)."""
        return rules(self.family).embedded_text(self.columns())


def searchable_vectors(family: Family, versions: Sequence[StoredVersion]) -> Vectors | None:
    """The vectors of the searchable versions of a write, stacked in order (None for a
    family without a vector channel, or a write with no searchable version): what a
    target adds to search.

    Raises:
        StoreError: a version is of another family, or a searchable version of a
            vector family has no vector.
    """
    if any(version.family != family for version in versions):
        raise StoreError(f"a write of {family} versions holds a version of another family")
    live = [version for version in versions if version.live]
    if not FAMILY_RULES[family].vector_channel or not live:
        return None
    lacking = next((version for version in live if version.vector is None), None)
    if lacking is not None:
        raise StoreError(
            f"searchable {family} {compact_id(lacking.record_id)!r} version {lacking.version}"
            " has no vector"
        )
    return np.stack([np.asarray(version.vector, dtype=np.float32) for version in live])


@runtime_checkable
class CopySource(Protocol):
    """A store a copy reads from. Reads only: nothing here changes the store."""

    async def copy_scopes(self) -> Sequence[str]:
        """Every scope holding a record version (searchable or not) or a profile,
        sorted. Unlike ``scope_counts``, a scope whose every entry was forgotten is
        listed; a scope whose records were all erased is not."""
        ...

    async def count_versions(self, scope_id: str) -> Mapping[Family, int]:
        """How many versions the scope holds per family, searchable or not (a profile
        counts 1); a family it holds none of is absent."""
        ...

    async def read_versions(
        self, scope_id: str, family: Family, *, after: int, limit: int
    ) -> Sequence[StoredVersion]:
        """At most ``limit`` versions of the family in the scope whose ``position`` is
        greater than ``after``, in increasing position (the order they were written):
        pass the last one's position as ``after`` for the next page; an empty page ends
        it. Searchable versions of a family with a vector channel carry their vector,
        exactly as written."""
        ...

    async def read_tombstones(self) -> Sequence[str]:
        """Every tombstone the store keeps of an erased memory entry
        (``_rules.tombstone``: a hash that names no scope, so all of them), sorted."""
        ...

    async def vectors_built_by(self) -> VectorOrigin:
        """The embedder that built the store's vectors, as it recorded it."""
        ...

    async def get_profile(self, scope_id: str) -> Evidence | None:
        """The scope's profile (``satchel.stores.RecordStore.get_profile``)."""
        ...


@runtime_checkable
class CopyTarget(Protocol):
    """A store a copy writes into. Each write is atomic and durable when it returns,
    and moves the scope's write version, as every write of a store."""

    async def held_versions(
        self, scope_id: str, family: Family, record_ids: Sequence[str]
    ) -> Mapping[tuple[str, int], bool]:
        """Every version the scope holds of these records of the family, as
        ``(record id, version)``, with whether it is searchable."""
        ...

    async def write_versions(
        self,
        scope_id: str,
        family: Family,
        versions: Sequence[StoredVersion],
        *,
        fingerprint: str | None,
    ) -> int:
        """Write ``versions`` (all of ``family``) verbatim, in order, each under a fresh
        key: its record id, version, key, columns and searchability as given, no record
        rule applied. A searchable one joins search (its text, its vector, its dates);
        one that is not stays readable by its reference only, as a forgotten or
        replaced version does. A version of a family with a vector channel that is
        searchable carries its vector. ``fingerprint`` is recorded as the builder of
        the store's vectors if none is (when the write holds a vector).

        A version the scope holds already (the same record id and version) is skipped,
        checked inside the write: a page written again after an interruption (whose
        first write may have committed after its caller gave up) is written once. So is
        every version of a memory entry whose tombstone the store keeps: an entry
        erased here never comes back by a copy.

        Returns:
            How many versions it wrote.

        Raises:
            StoreError: a searchable version of a vector family has no vector, or its
                dimension is not the store's.
        """
        ...

    async def retire_versions(
        self, scope_id: str, family: Family, versions: Sequence[tuple[str, int]]
    ) -> int:
        """Take the named versions ``(record id, version)`` out of search; each stays
        readable. Returns how many were searchable."""
        ...

    async def keep_tombstones(self, tombstones: Sequence[str]) -> int:
        """Keep these tombstones of erased memory entries, so ``get_memory`` of such an
        entry says it was erased, and erase every entry the store holds that a tombstone
        it keeps names (an erase copied: the entry leaves here as it left the source);
        returns how many tombstones were new."""
        ...

    async def vectors_built_by(self) -> VectorOrigin:
        """The embedder that built the store's vectors, as it recorded it."""
        ...

    async def count_versions(self, scope_id: str) -> Mapping[Family, int]:
        """As :meth:`CopySource.count_versions`."""
        ...

    async def get_profile(self, scope_id: str) -> Evidence | None:
        """The scope's profile (``satchel.stores.RecordStore.get_profile``)."""
        ...

    async def write(
        self,
        family: Family,
        scope_id: str,
        records: Sequence[Record],
        vectors: Vectors | None = None,
    ) -> list[Ref]:
        """Write records as a caller writes them (``satchel.stores.RecordStore.write``):
        a copy writes each scope's profile so."""
        ...
