"""``MemoryStore``: the in-process reference store, and the example to copy.

Everything lives in Python dictionaries and is gone when the process ends. It is the
simplest store that keeps the whole :class:`~satchel.stores.Store` contract, so tests use
it and an implementer reads it first: the record rules (``stores._rules``) decide every
write, and this store only keeps what they decide.

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

import itertools
from collections import Counter
from datetime import UTC
from typing import TYPE_CHECKING, Any

import anyio.lowlevel
import attrs

from ...vocabulary._analysis import analyse
from ...vocabulary._dates import mentioned_days
from ...vocabulary._errors import StoreError
from ...vocabulary._evidence import Evidence, Pool
from ...vocabulary._records import MemoryEntry, MemoryRecord, MemoryRef, RecordRef
from .. import _rules
from .._copy_protocol import VectorOrigin, searchable_vectors
from .._sessions import erased_identities
from . import _copy as copying
from ._channels import frequencies, lexical, nearest, time_channel, unit
from ._sessions import Sessions
from ._stored import Scope, Stored, thread_order

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    import numpy as np
    import numpy.typing as npt

    from ...vocabulary._families import Family
    from ...vocabulary._records import Experience, Profile, Resource, TopicMemory
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

    # -- writes -----------------------------------------------------------------------

    async def add_memories(
        self, scope_id: str, entries: Sequence[MemoryEntry], vectors: Vectors
    ) -> list[MemoryRef]:
        return await self._add_records(scope_id, "memory", entries, vectors)

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
        new_ref = MemoryRef(ref.scope_id, ref.entry_id, latest.version + 1)
        self._add_memory(scope, new_ref, entry, vector[0])
        scope.write_version += 1
        return new_ref

    async def forget_memory(self, ref: MemoryRef) -> bool:
        await self._enter()
        scope = self._scope(ref.scope_id)
        latest = _latest_memory(scope, ref)
        live = latest.key in scope.searchable("memory")  # else forgotten: nothing to do
        scope.retire(latest)
        scope.write_version += 1
        return live

    async def add_experiences(
        self, scope_id: str, experiences: Sequence[Experience]
    ) -> list[RecordRef]:
        return await self._add_records(scope_id, "experience", experiences, None)

    async def add_topic_memories(
        self, scope_id: str, topics: Sequence[TopicMemory], vectors: Vectors
    ) -> list[RecordRef]:
        return await self._add_records(scope_id, "topic-memory", topics, vectors)

    async def add_resources(
        self, scope_id: str, resources: Sequence[Resource], vectors: Vectors
    ) -> list[RecordRef]:
        return await self._add_records(scope_id, "resource", resources, vectors)

    async def _add_records(
        self,
        scope_id: str,
        family: Family,
        records: Sequence[_rules.Keepable],
        vectors: Vectors | None,
    ) -> list[Any]:
        """Write a batch of one family's records, as the record rules decide each
        (unchanged, a new version, or new); one reference each, in order."""
        await self._enter()
        if vectors is not None:
            self._take_vectors(vectors, len(records))
        paired = list(vectors) if vectors is not None else [None] * len(records)
        scope = self._scopes.setdefault(scope_id, Scope())
        refs: list[Any] = []
        for record, vector in zip(records, paired, strict=True):
            decision = scope.keyed(family, record)
            scope.retire(decision.retire)
            if decision.writes and _rules.needs_name(family, decision, _rules.name_of(record)):
                decision = scope.by_name(record)
                scope.retire(decision.retire)
            ref = _rules.ref_of(family, scope_id, decision)
            if decision.writes:
                self._keep_version(scope, ref, record, vector)
            refs.append(ref)
        scope.write_version += 1
        return refs

    async def set_profile(self, scope_id: str, profile: Profile) -> None:
        await self._enter()
        scope = self._scopes.setdefault(scope_id, Scope())
        scope.profile = profile.text
        scope.write_version += 1

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
            scope.write_version += 1
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
        record = versions[ref.version - 1].record  # versions are 1, 2, ... in order
        assert record is not None
        return record

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
            if current is not None and current.body is not None:
                bodies[uri] = current.body
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
        scope.write_version += 1
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
        scope.write_version += bool(found)
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
        held_by = frequencies(records, request)
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
        )  # fmt: skip

    async def neighbours(
        self, family: Family, scope_id: str, keys: Sequence[int]
    ) -> Mapping[int, tuple[int, ...]]:
        await self._enter()
        scope = self._scopes.get(scope_id)
        live = {} if scope is None else scope.searchable(family)
        threads: dict[str, list[Stored]] = {}
        for stored in live.values():
            if stored.thread is not None:
                threads.setdefault(stored.thread, []).append(stored)
        for thread in threads.values():
            thread.sort(key=thread_order)
        around: dict[int, tuple[int, ...]] = {}
        for key in keys:
            hit = live.get(key)
            if hit is None or hit.thread is None:
                continue
            thread = threads[hit.thread]
            at = thread.index(hit)
            around[key] = tuple(
                near.key for near in thread[max(at - 1, 0) : at + 2] if near.key != key
            )
        return around

    async def evidence(
        self, family: Family, scope_id: str, keys: Sequence[int]
    ) -> Mapping[int, Evidence]:
        await self._enter()
        scope = self._scopes.get(scope_id)
        live = {} if scope is None else scope.searchable(family)
        return {key: live[key].evidence for key in keys if key in live}

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
        ref: MemoryRef | RecordRef,
        record: _rules.Keepable,
        vector: Vectors | None,
    ) -> None:
        """Keep a new searchable version of a record; its evidence cites ``ref``."""
        if isinstance(record, MemoryEntry):
            assert isinstance(ref, MemoryRef)
            assert vector is not None
            self._add_memory(scope, ref, record, vector)
            return
        assert isinstance(ref, RecordRef)
        columns = _rules.columns_of(record)
        evidence = Evidence.from_record(
            ref.family, ref.scope_id, ref.id, ref.revision,
            text=columns.text, abstract=columns.abstract, overview=columns.overview,
        )  # fmt: skip
        self._keep(
            scope, evidence, ref.id, ref.revision, record, columns.searched,
            vector=vector, title=columns.title, body=columns.body,
        )  # fmt: skip

    def _add_memory(
        self, scope: Scope, ref: MemoryRef, entry: MemoryEntry, vector: Vectors
    ) -> None:
        said = entry.created_at
        evidence = Evidence.from_record(
            "memory", ref.scope_id, ref.entry_id, ref.version,
            text=entry.text, created_at=said, thread=entry.thread,
        )  # fmt: skip
        self._keep(
            scope, evidence, ref.entry_id, ref.version, entry, entry.text, vector=vector,
            thread=entry.thread, said_at=None if said is None else said.timestamp(),
            # The days the text names, seen from the day it was said ("yesterday").
            mentions=() if said is None else tuple(
                mentioned_days(entry.text, said.astimezone(UTC).date())
            ),
            record=MemoryRecord(
                ref=ref, text=entry.text, kind=entry.kind, tags=entry.tags,
                created_at=said, thread=entry.thread, key=entry.key,
            ),
        )  # fmt: skip

    def _keep(
        self,
        scope: Scope,
        evidence: Evidence,
        record_id: str,
        version: int,
        kept: _rules.Keepable,
        searched: str,
        *,
        vector: Vectors | None,
        **extra: Any,
    ) -> None:
        """Store version ``version`` of ``kept`` (``evidence`` cites it) under the next
        key; its full-text terms are those of ``searched``."""
        terms = analyse(searched)  # the terms satchel.vocabulary.index_text joins
        scope.keep(
            Stored(
                key=next(self._keys), family=evidence.family, record_id=record_id,
                version=version, evidence=evidence, caller_key=kept.key,
                content_hash=_content_hash(kept), terms=Counter(terms), length=len(terms),
                vector=None if vector is None else unit(vector), **extra,
            )
        )  # fmt: skip


def _content_hash(record: _rules.Keepable) -> str | None:
    """What a later write under the record's key compares (nothing without a key)."""
    return None if record.key is None else _rules.content_hash_of(record)


def _latest_memory(scope: Scope, ref: MemoryRef) -> Stored:
    """The newest version of ``ref``'s entry, provided ``ref``'s own version exists."""
    versions = scope.versions(ref)
    if not 1 <= ref.version <= len(versions):
        raise _rules.no_version(ref)
    return versions[-1]
