"""``MemoryStore``: the in-process reference store, and the example to copy.

Everything lives in Python dictionaries and is gone when the process ends. It is the
simplest store that keeps the whole :class:`~satchel.stores.Store` contract, so tests use
it and an implementer reads it first: the record rules (``stores._rules``) and the
placement (``stores._placing``) decide every write, and this store only keeps what they
decide. One write path serves every family, read off its row of the family table: a
record is kept as its columns (``FamilyRules.columns_of``); a profile (``named_by``
``scope``) replaces the scope's.

- A stored record version is one :class:`~._stored.Stored`, named by an integer
  ``key`` drawn from one counter: unique within its family and scope, never reused.
- ``Scope.live`` holds each family's searchable versions. An update, a replacement or a
  forget takes a version out of it; ``Scope.history`` keeps every version readable by
  its record id and number. An erase drops a record from both, and from the keys; the
  store keeps only its tombstone (``_rules.tombstone``).
- A write checks everything first, then changes state with no ``await`` in between: no
  other task ever sees half of it. Then it moves the scope's write version.
- A search scans the scope's searchable versions of one family (``_channels``).
- Sessions (``SessionStore``) live beside the scopes (``_sessions``) and never move a
  write version.

It never does I/O and never sees the gate, the orchestration or the Builder.
"""

from __future__ import annotations

import heapq
import itertools
from collections import Counter
from typing import TYPE_CHECKING

import anyio.lowlevel
import attrs

from ...vocabulary._errors import StoreError
from ...vocabulary._evidence import Evidence, Pool, ThreadNeighbours
from ...vocabulary._families import rules
from ...vocabulary._rarity import rarity_terms, rated
from ...vocabulary._records import MemoryRef
from ...vocabulary._speakers import TIMELINE_GAP, opens_with_speaker, passed_over, variant_floor
from .. import _rules
from .._copy_protocol import VectorOrigin, searchable_vectors
from .._placing import place
from .._sessions import erased_identities
from . import _copy as copying
from ._channels import frequencies, lexical, nearest, terms_starting, time_channel, unit
from ._sessions import Sessions
from ._stored import Placer, Scope, Stored, thread_order

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from datetime import datetime

    import numpy as np
    import numpy.typing as npt

    from ...vocabulary._families import Family
    from ...vocabulary._listing import ListedRecord
    from ...vocabulary._records import Columns, MemoryEntry, MemoryRecord, Record, Ref
    from ...vocabulary._retrieval import PoolRequest
    from .._copy_protocol import StoredVersion

    Vectors = npt.NDArray[np.float32]


class MemoryStore:
    """A :class:`~satchel.stores.Store` held in process memory: nothing outlives the process.

    ``satchel.open_runtime(store=MemoryStore())`` runs satchel on it (the runtime closes it).
    Each method keeps the contract its docstring in ``satchel.stores.Store`` states.
    """

    def __init__(self) -> None:
        self._scopes: dict[str, Scope] = {}
        self._keys = itertools.count(1)
        self._bound: str | None = None  # the fingerprint of the runtime's embedder
        self._built_by: str | None = None  # the fingerprint the stored vectors came from
        self._dimension: int | None = None  # the dimension of the stored vectors
        self._tombstones: set[str] = set()  # erased entries (``_rules.tombstone``)
        self._sessions = Sessions()
        self._closed = False

    # -- lifecycle --------------------------------------------------------------------

    async def bind_embedder(self, fingerprint: str, dimension: int) -> None:
        await self._enter()
        _rules.check_embedder(self._built_by, self._dimension, fingerprint, dimension)
        self._bound = fingerprint

    async def aclose(self) -> None:
        self._closed = True
        self._scopes.clear()
        self._sessions.clear()

    def scope_version(self, scope_id: str) -> int:
        self._check_open()
        scope = self._scopes.get(scope_id)
        return 0 if scope is None else scope.write_version

    def holds_nothing(self, family: Family, scope_id: str) -> bool:
        """Whether the scope holds no searchable record of ``family``
        (``stores.EmptyFamilies``)."""
        if self._closed:
            return False
        scope = self._scopes.get(scope_id)
        return scope is None or not scope.live.get(family)

    # -- writes -----------------------------------------------------------------------

    async def write(
        self,
        family: Family,
        scope_id: str,
        records: Sequence[Record],
        vectors: Vectors | None = None,
    ) -> list[Ref]:
        await self._enter()
        family_rules = _rules.check_write(family, records, vectors)
        kept = [family_rules.columns_of(record) for record in records]
        if vectors is not None:
            self._take_vectors(vectors, len(records))
        scope = self._scopes.setdefault(scope_id, Scope())
        refs: list[Ref] = []
        if family_rules.named_by == "scope":  # one per scope: the write replaces it
            scope.profile = kept[0].text
        else:
            placer = Placer(scope, family)
            paired = list(vectors) if vectors is not None else [None] * len(records)
            for columns, vector in zip(kept, paired, strict=True):
                decision = place(family, columns, placer)
                if decision.writes:
                    self._keep_version(scope, scope_id, family, decision, columns, vector)
                refs.append(_rules.ref_of(family, scope_id, decision))
        scope.moved()
        return refs

    async def update_memory(self, ref: MemoryRef, entry: MemoryEntry, vector: Vectors) -> MemoryRef:
        await self._enter()
        self._take_vectors(vector, 1)
        scope = self._scope(ref.scope_id)
        latest = _latest_memory(scope, ref)
        if latest.key not in scope.searchable("memory"):
            raise _rules.forgotten(ref)
        if entry.key is None:  # a new version keeps the entry's idempotency key
            entry = attrs.evolve(entry, key=latest.caller_key)
        scope.retire(latest)
        decision: _rules.WriteDecision[Stored]
        decision = _rules.WriteDecision("new-version", ref.entry_id, latest.version + 1)
        columns = rules("memory").columns_of(entry)
        self._keep_version(scope, ref.scope_id, "memory", decision, columns, vector[0])
        scope.moved()
        return MemoryRef(ref.scope_id, ref.entry_id, decision.version)

    async def forget_memory(self, ref: MemoryRef) -> bool:
        await self._enter()
        scope = self._scope(ref.scope_id)
        latest = _latest_memory(scope, ref)
        live = latest.key in scope.searchable("memory")  # else forgotten: nothing to do
        scope.retire(latest)
        scope.moved()
        return live

    async def erase(self, family: Family, scope_id: str, record_id: str | None) -> int:
        await self._enter()
        scope = self._scopes.get(scope_id)
        if scope is None:
            return 0
        if record_id is None:  # the profile
            erased = int(scope.profile is not None)
            scope.profile = None
        else:
            erased = len(scope.erase(family, record_id))
            if family == "memory" and erased:
                self._tombstones.add(_rules.tombstone(scope_id, record_id))
        if erased:
            scope.moved()
            self._sessions.forget(erased_identities(family, scope_id, record_id))
        return erased

    async def erase_scope(self, scope_id: str) -> int:
        await self._enter()
        scope = self._scopes.get(scope_id)
        if scope is None:
            return 0
        records = _rules.records_in(scope.history, scope.profile is not None)
        self._tombstones.update(
            _rules.tombstone(scope_id, record_id)
            for family, record_id in scope.history
            if family == "memory"
        )
        # A fresh scope whose write version goes on: a pool read before is never reused.
        self._scopes[scope_id] = Scope(write_version=scope.write_version + (records > 0))
        self._sessions.forget(erased_identities(None, scope_id, None))
        return records

    # -- sessions (``SessionStore``) ----------------------------------------------------

    async def next_turn(
        self, owner: str | None, session_id: str, *, turns: int, active_since: float
    ) -> tuple[int, frozenset[str]]:
        await self._enter()
        return self._sessions.next_turn(owner, session_id, turns=turns, active_since=active_since)

    async def record_turn(
        self,
        owner: str | None,
        session_id: str,
        served: Sequence[str],
        *,
        now: float,
        active_since: float,
        keep: int,
    ) -> int:
        await self._enter()
        return self._sessions.record_turn(
            owner, session_id, served, now=now, active_since=active_since, keep=keep
        )

    # -- exact reads ------------------------------------------------------------------

    async def get_memory(self, ref: MemoryRef) -> MemoryRecord:
        await self._enter()
        if _rules.tombstone(ref.scope_id, ref.entry_id) in self._tombstones:
            raise _rules.erased(ref)
        versions = self._scope(ref.scope_id).versions(ref)
        if not 1 <= ref.version <= len(versions):
            raise _rules.no_version(ref)
        return versions[ref.version - 1].memory_record(ref.scope_id)  # versions 1, 2, ...

    async def get_profile(self, scope_id: str) -> Evidence | None:
        await self._enter()
        scope = self._scopes.get(scope_id)
        if scope is None or scope.profile is None:
            return None
        return Evidence.from_record("profile", scope_id, text=scope.profile)

    async def read_resource_bodies(self, scope_id: str, uris: Sequence[str]) -> Mapping[str, str]:
        await self._enter()
        scope = self._scopes.get(scope_id)
        if scope is None:
            return {}
        bodies: dict[str, str] = {}
        for uri in uris:
            current = scope.at_uri(uri)
            if current is not None and current.columns.body is not None:
                bodies[uri] = current.columns.body
        return bodies

    async def scope_counts(self) -> Mapping[str, Mapping[Family, int]]:
        await self._enter()
        counts: dict[str, Mapping[Family, int]] = {}
        for scope_id, scope in self._scopes.items():
            # Searchable versions only: forgotten and replaced ones left ``live``.
            held: dict[Family, int] = {
                family: len(versions) for family, versions in scope.live.items() if versions
            }
            if scope.profile is not None:
                held["profile"] = 1
            if held:  # a scope whose every record left search, with no profile, holds nothing
                counts[scope_id] = held
        return counts

    async def scope_writes(self) -> Mapping[str, datetime | None]:
        await self._enter()
        return {
            scope_id: scope.written_at
            for scope_id, scope in self._scopes.items()
            if scope.history or scope.profile is not None
        }

    async def list_records(
        self,
        scope_id: str,
        families: Sequence[Family],
        *,
        include_forgotten: bool,
        before: int | None,
        limit: int,
    ) -> Sequence[ListedRecord]:
        await self._enter()
        scope = self._scopes.get(scope_id)
        if scope is None:
            return []
        listed = scope.listed(families, include_forgotten)
        if before is not None:
            listed = [record for record in listed if record.place < before]
        return heapq.nlargest(limit, listed, key=lambda record: record.place)

    # -- copying (``CopySource``, ``CopyTarget``; ``_copy``) ---------------------------

    async def copy_scopes(self) -> list[str]:
        await self._enter()
        return sorted(id_ for id_, scope in self._scopes.items() if copying.counted(scope))

    async def count_versions(self, scope_id: str) -> Mapping[Family, int]:
        await self._enter()
        scope = self._scopes.get(scope_id)
        return {} if scope is None else copying.counted(scope)

    async def read_versions(
        self, scope_id: str, family: Family, *, after: int, limit: int
    ) -> list[StoredVersion]:
        await self._enter()
        scope = self._scopes.get(scope_id)
        return [] if scope is None else copying.versions_of(scope, family, after, limit)

    async def read_tombstones(self) -> list[str]:
        await self._enter()
        return sorted(self._tombstones)

    async def vectors_built_by(self) -> VectorOrigin:
        await self._enter()
        return VectorOrigin(self._built_by, self._dimension)

    async def held_versions(
        self, scope_id: str, family: Family, record_ids: Sequence[str]
    ) -> Mapping[tuple[str, int], bool]:
        await self._enter()
        scope = self._scopes.get(scope_id, Scope())
        live = scope.searchable(family)
        return {
            (stored.record_id, stored.version): stored.key in live
            for record_id in record_ids
            for stored in scope.history.get((family, record_id), [])
        }

    async def write_versions(
        self,
        scope_id: str,
        family: Family,
        versions: Sequence[StoredVersion],
        *,
        fingerprint: str | None,
    ) -> int:
        await self._enter()
        vectors = searchable_vectors(family, versions)
        if vectors is not None:
            self._built_by = self._built_by or fingerprint
            self._take_vectors(vectors, len(vectors))
        scope = self._scopes.setdefault(scope_id, Scope())
        new = [
            v
            for v in versions
            if not copying.holds(scope, v) and not self._erased(scope_id, family, v.record_id)
        ]
        for version in new:
            stored = copying.stored_of(scope_id, version, next(self._keys))
            scope.keep(stored)
            if not version.live:
                scope.retire(stored)
        scope.moved()
        return len(new)

    async def retire_versions(
        self, scope_id: str, family: Family, versions: Sequence[tuple[str, int]]
    ) -> int:
        await self._enter()
        scope = self._scopes.get(scope_id, Scope())
        live = scope.searchable(family)
        found = [
            stored
            for record_id, version in versions
            for stored in scope.history.get((family, record_id), [])
            if stored.version == version and stored.key in live
        ]
        for stored in found:
            scope.retire(stored)
        if found:
            scope.moved()
        return len(found)

    async def keep_tombstones(self, tombstones: Sequence[str]) -> int:
        await self._enter()
        new = set(tombstones) - self._tombstones
        self._tombstones |= new
        for scope_id, scope in list(self._scopes.items()) if self._tombstones else ():
            for family, record_id in list(scope.history):  # what one names is erased here
                if self._erased(scope_id, family, record_id):
                    await self.erase("memory", scope_id, record_id)
        return len(new)

    def _erased(self, scope_id: str, family: Family, record_id: str) -> bool:
        """Whether the store keeps the tombstone of this memory entry."""
        return family == "memory" and _rules.tombstone(scope_id, record_id) in self._tombstones

    # -- search -----------------------------------------------------------------------

    async def retrieve(self, family: Family, scope_id: str, request: PoolRequest) -> Pool:
        await self._enter()
        scope = self._scopes.get(scope_id)
        if scope is None or not scope.searchable(family):
            return Pool(family, scope_id, 0 if scope is None else scope.write_version)
        records = list(scope.searchable(family).values())
        request, held_by = request.respelled(frequencies(records, request.frequency_terms))
        if starts := request.name_starts(held_by):  # a name spelled otherwise?
            spelled = terms_starting(records, starts, variant_floor(len(records)))
            request, held_by = request.naming_held(held_by, spelled, len(records))
        ranking = request.vector_for(held_by, len(records))
        lexical_keys, scores, matches, common, held, distinctive = lexical(
            records, request, held_by
        )
        vector_keys, similarities = nearest(family, records, request, ranking, self._dimension)
        time_keys, matched = time_channel(family, records, request, ranking)
        return Pool(
            family, scope_id, scope.write_version, scope_rows=len(records),
            lexical_keys=lexical_keys, lexical_scores=scores, lexical_matches=matches,
            vector_keys=vector_keys, vector_similarities=similarities,
            time_keys=time_keys, time_matched=matched, common_terms=common,
            held_terms=held, distinctive_terms=distinctive,
            unheld_names=request.unheld_names(held_by), spelled_names=request.spelled,
        )  # fmt: skip

    async def neighbours(
        self, family: Family, scope_id: str, keys: Sequence[int], *, reach: int = 1
    ) -> Mapping[int, ThreadNeighbours]:
        await self._enter()
        scope = self._scopes.get(scope_id)
        live = {} if scope is None else scope.searchable(family)
        threads: dict[str, list[Stored]] = {}
        for stored in live.values():
            conversation = _conversation_of(stored)
            if conversation is not None:
                threads.setdefault(conversation, []).append(stored)
        for thread in threads.values():
            thread.sort(key=thread_order)
        around: dict[int, ThreadNeighbours] = {}
        for key in keys:
            hit = live.get(key)
            conversation = None if hit is None else _conversation_of(hit)
            if hit is None or conversation is None:
                continue
            thread = threads[conversation]
            if not conversation:  # turns without a thread: those said near it
                thread = [near for near in thread if _near_in_time(near, hit)]
            line = [near.key for near in thread]
            around[key] = ThreadNeighbours.in_line(
                line, line.index(key), reach, lambda near: passed_over(live[near].evidence.text)
            )
        return around

    async def evidence(
        self, family: Family, scope_id: str, keys: Sequence[int]
    ) -> Mapping[int, Evidence]:
        await self._enter()
        scope = self._scopes.get(scope_id)
        live = {} if scope is None else scope.searchable(family)
        found = {key: live[key].evidence for key in keys if key in live}
        needed = rarity_terms(found.values())
        counts = Counter(term for stored in live.values() for term in needed & stored.terms.keys())
        return rated(found, counts, len(live))

    # -- internals --------------------------------------------------------------------

    async def _enter(self) -> None:
        """Every call is a checkpoint (it may be cancelled there), and refused once closed."""
        await anyio.lowlevel.checkpoint()
        self._check_open()

    def _check_open(self) -> None:
        if self._closed:
            raise StoreError(_rules.CLOSED)

    def _scope(self, scope_id: str) -> Scope:
        scope = self._scopes.get(scope_id)
        if scope is None:
            raise _rules.no_scope(scope_id)
        return scope

    def _take_vectors(self, vectors: Vectors, count: int) -> None:
        """Refuse vectors that do not fit, before the write changes anything; the first
        vectors written fix the store's dimension and embedder."""
        dimension = _rules.check_vectors(vectors, count, self._dimension)
        if count:
            self._dimension = dimension
            self._built_by = self._built_by or self._bound

    def _keep_version(
        self,
        scope: Scope,
        scope_id: str,
        family: Family,
        decision: _rules.WriteDecision[Stored],
        columns: Columns,
        vector: Vectors | None,
    ) -> None:
        """Keep the new searchable version ``decision`` names, under the next key."""
        cited = (decision.record_id, decision.version)
        kept_vector = None if vector is None else unit(vector)
        scope.keep(Stored.of(next(self._keys), family, scope_id, cited, columns, kept_vector))


def _latest_memory(scope: Scope, ref: MemoryRef) -> Stored:
    """The newest version of ``ref``'s entry, provided ``ref``'s own version exists."""
    versions = scope.versions(ref)
    if not 1 <= ref.version <= len(versions):
        raise _rules.no_version(ref)
    return versions[-1]


def _conversation_of(stored: Stored) -> str | None:
    """The conversation a record's neighbours are read in: its thread, the scope's turns
    without a thread for such a turn (``""``, which no thread is: threads are not
    blank), or none."""
    if stored.thread is not None:
        return stored.thread
    return "" if opens_with_speaker(stored.evidence.text) else None


def _near_in_time(one: Stored, other: Stored) -> bool:
    """Whether two turns without a thread are said within ``TIMELINE_GAP`` of each
    other (undated ones are said together)."""
    if one.said_at is None or other.said_at is None:
        return one.said_at is None and other.said_at is None
    return abs(one.said_at - other.said_at) <= TIMELINE_GAP
