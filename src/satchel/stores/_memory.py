"""``MemoryStore``: the in-process reference store, and the example to copy.

Everything lives in Python dictionaries and is gone when the process ends. It is the
simplest store that keeps the whole :class:`~satchel.stores.Store` contract, so tests use
it and an implementer reads it first: every rule below is one a database-backed store
keeps too, spelled here without an index or a query planner in the way.

- A stored record version is one :class:`_Version`, named by an integer ``key`` drawn
  from one counter: unique within its family and scope, never reused.
- ``_Scope.live`` holds each family's searchable versions. An update, a replacement
  or a forget takes a version out of it; ``_Scope.history`` keeps every version
  readable by its record id and number.
- A write checks everything first, then changes state with no ``await`` in between:
  no other task ever sees half of it. Then it moves the scope's write version.
- A search scans the scope's searchable versions of one family: BM25 over their
  analysed terms, a cosine product over their vectors, a comparison of timestamps.
  A large store would keep indexes instead; the results must be the same.
"""

from __future__ import annotations

import itertools
import math
import uuid
from collections import Counter
from datetime import UTC
from typing import TYPE_CHECKING, Any

import anyio.lowlevel
import attrs
import numpy as np

from ..vocabulary._analysis import analyse
from ..vocabulary._dates import mentioned_days
from ..vocabulary._errors import NotFoundError, StoreError
from ..vocabulary._evidence import Evidence, Pool
from ..vocabulary._families import rules
from ..vocabulary._records import MemoryRecord, MemoryRef, RecordRef, experience_text, topic_text
from ..vocabulary._retrieval import RARE_POSTINGS, bm25

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence

    import numpy.typing as npt

    from ..vocabulary._families import Family
    from ..vocabulary._records import Experience, MemoryEntry, Profile, Resource, TopicMemory
    from ..vocabulary._retrieval import PoolRequest

    Vectors = npt.NDArray[np.float32]


@attrs.frozen(eq=False)
class _Version:
    """One stored record version: what search, evidence and exact reads need of it."""

    key: int
    family: Family
    record_id: str  # entry id, record id, or URI for a resource
    version: int  # version (memory) or revision (the other families)
    evidence: Evidence  # what a pool key reads, with its exact citation
    content: tuple[object, ...]  # what an idempotency key compares
    caller_key: str | None  # the caller's idempotency key
    terms: Counter[str]  # analysed terms of the searched text, with their counts
    length: int  # how many analysed terms (BM25's document length)
    vector: Vectors | None = None  # unit length; None for a family without vectors
    # Memory only: when it was said (epoch seconds), its thread, the days its own text
    # names (UTC ``[start, end)``) and the record ``get_memory`` returns.
    said_at: float | None = None
    thread: str | None = None
    mentions: tuple[tuple[float, float], ...] = ()
    record: MemoryRecord | None = None
    body: str | None = None  # resource only: read on demand, never searched


@attrs.define
class _Scope:
    """One scope's records, profile and write version."""

    version: int = 0
    profile: str | None = None
    #: Each family's searchable versions by key, in the order they were written.
    live: dict[Family, dict[int, _Version]] = attrs.Factory(dict)
    #: Every version ever written, per (family, record id), oldest first.
    history: dict[tuple[Family, str], list[_Version]] = attrs.Factory(dict)

    def searchable(self, family: Family) -> dict[int, _Version]:
        return self.live.setdefault(family, {})

    def find(self, family: Family, test: Callable[[_Version], bool]) -> _Version | None:
        """The first searchable version of ``family`` that passes ``test``."""
        return next((found for found in self.searchable(family).values() if test(found)), None)

    def retire(self, stored: _Version) -> None:
        """Take a version out of search; ``history`` keeps it readable."""
        self.searchable(stored.family).pop(stored.key, None)


class MemoryStore:
    """A :class:`~satchel.stores.Store` held in process memory: nothing outlives the process.

    ``satchel.open_runtime(store=MemoryStore())`` runs satchel on it (the runtime closes it).
    Each method keeps the contract its docstring in ``satchel.stores.Store`` states.
    """

    def __init__(self) -> None:
        self._scopes: dict[str, _Scope] = {}
        self._keys = itertools.count(1)
        self._bound: str | None = None  # the fingerprint of the runtime's embedder
        self._built_by: str | None = None  # the fingerprint the stored vectors came from
        self._dimension: int | None = None  # the dimension of the stored vectors
        self._closed = False

    # -- lifecycle --------------------------------------------------------------------

    async def bind_embedder(self, fingerprint: str, dimension: int) -> None:
        await self._enter()
        if self._built_by not in (None, fingerprint) or self._dimension not in (None, dimension):
            built = self._built_by or f"a {self._dimension}-dimensional embedder"
            raise StoreError(
                f"this store's vectors were built by {built}; the runtime was opened with"
                f" {fingerprint}. Open it with the same embedder."
            )
        self._bound = fingerprint

    async def aclose(self) -> None:
        self._closed = True
        self._scopes.clear()

    def scope_version(self, scope_id: str) -> int:
        self._check_open()
        scope = self._scopes.get(scope_id)
        return 0 if scope is None else scope.version

    # -- writes -----------------------------------------------------------------------

    async def add_memories(
        self, scope_id: str, entries: Sequence[MemoryEntry], vectors: Vectors
    ) -> list[MemoryRef]:
        await self._enter()
        self._check_vectors(vectors, len(entries))
        scope = self._scopes.setdefault(scope_id, _Scope())
        refs: list[MemoryRef] = []
        for entry, vector in zip(entries, vectors, strict=True):
            hit = _keyed(scope, "memory", entry.key, _memory_content(entry))
            entry_id, version = (uuid.uuid4().hex, 1) if hit is None else hit[:2]
            if hit is None or hit[2]:
                self._add_memory(scope, MemoryRef(scope_id, entry_id, version), entry, vector)
            refs.append(MemoryRef(scope_id, entry_id, version))
        scope.version += 1
        return refs

    async def update_memory(self, ref: MemoryRef, entry: MemoryEntry, vector: Vectors) -> MemoryRef:
        await self._enter()
        self._check_vectors(vector, 1)
        scope = self._scope(ref.scope_id)
        latest = _latest_memory(scope, ref)
        if latest.key not in scope.searchable("memory"):
            raise NotFoundError(f"memory entry {ref.entry_id!r} was forgotten")
        if entry.key is None:  # a new version keeps the entry's idempotency key
            entry = attrs.evolve(entry, key=latest.caller_key)
        scope.retire(latest)
        new_ref = MemoryRef(ref.scope_id, ref.entry_id, latest.version + 1)
        self._add_memory(scope, new_ref, entry, vector[0])
        scope.version += 1
        return new_ref

    async def forget_memory(self, ref: MemoryRef) -> None:
        await self._enter()
        scope = self._scope(ref.scope_id)
        scope.retire(_latest_memory(scope, ref))  # nothing to do if it was forgotten
        scope.version += 1

    async def add_experiences(
        self, scope_id: str, experiences: Sequence[Experience]
    ) -> list[RecordRef]:
        await self._enter()
        scope = self._scopes.setdefault(scope_id, _Scope())
        refs: list[RecordRef] = []
        for experience in experiences:
            text = experience_text(experience)
            hit = _keyed(scope, "experience", experience.key, (text,))
            record_id, revision = (uuid.uuid4().hex, 1) if hit is None else hit[:2]
            if hit is None or hit[2]:
                self._add(
                    scope,
                    Evidence.from_record("experience", scope_id, record_id, revision, text=text),
                    record_id=record_id, version=revision, content=(text,),
                    caller_key=experience.key, searched=text,
                )  # fmt: skip
            refs.append(RecordRef("experience", scope_id, record_id, revision))
        scope.version += 1
        return refs

    async def add_topic_memories(
        self, scope_id: str, topics: Sequence[TopicMemory], vectors: Vectors
    ) -> list[RecordRef]:
        await self._enter()
        self._check_vectors(vectors, len(topics))
        scope = self._scopes.setdefault(scope_id, _Scope())
        refs: list[RecordRef] = []
        for topic, vector in zip(topics, vectors, strict=True):
            text = topic_text(topic)
            content = (topic.title, text)
            hit = _keyed(scope, "topic-memory", topic.key, content)
            if hit is not None and not hit[2]:
                refs.append(RecordRef("topic-memory", scope_id, *hit[:2]))
                continue
            if hit is not None:
                record_id, revision = hit[:2]
            else:  # no key, or one nobody holds: the title names the note
                titled = _titled(scope, topic.title)
                record_id, revision = uuid.uuid4().hex, 1
                if titled is not None:
                    scope.retire(titled)
                    record_id, revision = titled.record_id, titled.version + 1
            self._add(
                scope,
                Evidence.from_record("topic-memory", scope_id, record_id, revision, text=text),
                record_id=record_id, version=revision, content=content,
                caller_key=topic.key, searched=text, vector=vector,
            )  # fmt: skip
            refs.append(RecordRef("topic-memory", scope_id, record_id, revision))
        scope.version += 1
        return refs

    async def add_resources(
        self, scope_id: str, resources: Sequence[Resource], vectors: Vectors
    ) -> list[RecordRef]:
        await self._enter()
        self._check_vectors(vectors, len(resources))
        scope = self._scopes.setdefault(scope_id, _Scope())
        refs: list[RecordRef] = []
        for resource, vector in zip(resources, vectors, strict=True):
            uri = resource.uri
            content = (uri, resource.abstract, resource.overview, resource.body)
            hit = _keyed(scope, "resource", resource.key, content)
            if hit is not None and not hit[2]:
                refs.append(RecordRef("resource", scope_id, *hit[:2]))
                continue
            # The URI names the document: what it named leaves search (the key's record,
            # when it had another URI, left in ``_keyed``).
            current = _live_resource(scope, uri)
            if current is not None:
                scope.retire(current)
            revision = len(scope.history.get(("resource", uri), [])) + 1
            evidence = Evidence.from_record(
                "resource", scope_id, uri, revision,
                abstract=resource.abstract, overview=resource.overview,
            )  # fmt: skip
            self._add(
                scope, evidence, record_id=uri, version=revision, content=content,
                caller_key=resource.key, vector=vector, body=resource.body,
                # Searched on its summaries only; the body is read on demand.
                searched=" ".join(filter(None, (resource.abstract, resource.overview))),
            )  # fmt: skip
            refs.append(RecordRef("resource", scope_id, uri, revision))
        scope.version += 1
        return refs

    async def set_profile(self, scope_id: str, profile: Profile) -> None:
        await self._enter()
        scope = self._scopes.setdefault(scope_id, _Scope())
        scope.profile = profile.text
        scope.version += 1

    # -- exact reads ------------------------------------------------------------------

    async def get_memory(self, ref: MemoryRef) -> MemoryRecord:
        await self._enter()
        versions = self._scope(ref.scope_id).history.get(("memory", ref.entry_id), [])
        if not 1 <= ref.version <= len(versions):
            raise NotFoundError(_no_version(ref))
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
            current = _live_resource(scope, uri)
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

    # -- search -----------------------------------------------------------------------

    async def retrieve(self, family: Family, scope_id: str, request: PoolRequest) -> Pool:
        await self._enter()
        scope = self._scopes.get(scope_id)
        if scope is None or not scope.searchable(family):
            return Pool(family, scope_id, 0 if scope is None else scope.version)
        records = list(scope.searchable(family).values())
        lexical_keys, scores, matches, common = _lexical(records, request)
        vector_keys, similarities = self._nearest(family, records, request)
        time_keys, matched = _time_channel(family, records, request)
        return Pool(
            family,
            scope_id,
            scope.version,
            scope_rows=len(records),
            lexical_keys=lexical_keys,
            lexical_scores=scores,
            lexical_matches=matches,
            vector_keys=vector_keys,
            vector_similarities=similarities,
            time_keys=time_keys,
            time_matched=matched,
            common_terms=common,
        )

    async def neighbours(
        self, family: Family, scope_id: str, keys: Sequence[int]
    ) -> Mapping[int, tuple[int, ...]]:
        await self._enter()
        scope = self._scopes.get(scope_id)
        live = {} if scope is None else scope.searchable(family)
        threads: dict[str, list[_Version]] = {}
        for stored in live.values():
            if stored.thread is not None:
                threads.setdefault(stored.thread, []).append(stored)
        for thread in threads.values():
            thread.sort(key=_thread_order)
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
            raise StoreError("the store is closed")

    def _scope(self, scope_id: str) -> _Scope:
        scope = self._scopes.get(scope_id)
        if scope is None:
            raise NotFoundError(f"scope {scope_id!r} holds no memory")
        return scope

    def _check_vectors(self, vectors: Vectors, count: int) -> None:
        """Refuse vectors that do not fit, before the write changes anything; the first
        vectors written fix the store's dimension and embedder."""
        if vectors.ndim != 2 or vectors.shape[0] != count:
            raise StoreError(f"expected {count} vectors, got an array of shape {vectors.shape}")
        if count == 0:
            return
        dimension = int(vectors.shape[1])
        if self._dimension not in (None, dimension):
            raise StoreError(
                f"this store holds {self._dimension}-dimensional vectors; the embedder"
                f" produced {dimension} dimensions"
            )
        self._dimension = dimension
        self._built_by = self._built_by or self._bound

    def _add(
        self,
        scope: _Scope,
        evidence: Evidence,
        *,
        record_id: str,
        version: int,
        content: tuple[object, ...],
        caller_key: str | None,
        searched: str,
        vector: Vectors | None = None,
        **extra: Any,
    ) -> None:
        """Store a new searchable version (the one ``evidence`` cites) under the next
        key; its full-text terms are those of ``searched``."""
        terms = analyse(searched)  # the terms satchel.vocabulary.index_text joins
        stored = _Version(
            key=next(self._keys), family=evidence.family, record_id=record_id,
            version=version, evidence=evidence, content=content, caller_key=caller_key,
            terms=Counter(terms), length=len(terms),
            vector=None if vector is None else _unit(vector), **extra,
        )  # fmt: skip
        scope.searchable(stored.family)[stored.key] = stored
        scope.history.setdefault((stored.family, record_id), []).append(stored)

    def _add_memory(
        self, scope: _Scope, ref: MemoryRef, entry: MemoryEntry, vector: Vectors
    ) -> None:
        said = entry.created_at
        self._add(
            scope,
            Evidence.from_record(
                "memory", ref.scope_id, ref.entry_id, ref.version,
                text=entry.text, created_at=said, thread=entry.thread,
            ),
            record_id=ref.entry_id, version=ref.version, content=_memory_content(entry),
            caller_key=entry.key, searched=entry.text, vector=vector, thread=entry.thread,
            said_at=None if said is None else said.timestamp(),
            # The days the text names, seen from the day it was said ("yesterday").
            mentions=() if said is None else tuple(
                mentioned_days(entry.text, said.astimezone(UTC).date())
            ),
            record=MemoryRecord(
                ref=ref, text=entry.text, kind=entry.kind, tags=entry.tags,
                created_at=said, thread=entry.thread, key=entry.key,
            ),
        )  # fmt: skip

    def _nearest(
        self, family: Family, records: list[_Version], request: PoolRequest
    ) -> tuple[list[int], list[float]]:
        """The vector channel: the ``request.size`` most cosine-similar, best first."""
        query = request.vector
        if query is None or not rules(family).vector_channel or request.size <= 0:
            return [], []
        if self._dimension not in (None, len(query)):
            raise StoreError(
                f"this store holds {self._dimension}-dimensional vectors; the query vector"
                f" has {len(query)} dimensions (was it built with another embedder?)"
            )
        embedded = [stored for stored in records if stored.vector is not None]
        if not embedded:
            return [], []
        similarities = _similarities(embedded, query)
        keys = np.array([stored.key for stored in embedded], dtype=np.int64)
        order = np.lexsort((keys, -similarities))[: request.size]  # ties: the older first
        return keys[order].tolist(), similarities[order].tolist()


# -- idempotency and lookups ------------------------------------------------------------


def _keyed(
    scope: _Scope, family: Family, caller_key: str | None, content: tuple[object, ...]
) -> tuple[str, int, bool] | None:
    """What an idempotency key makes of a write: None when no searchable version of the
    family holds it (a new record); ``(id, version, False)`` when that version holds
    exactly ``content`` (nothing to write); ``(id, next version, True)`` when it holds
    other content (retired here: the caller writes the next version)."""
    if caller_key is None:
        return None
    found = scope.find(family, lambda stored: stored.caller_key == caller_key)
    if found is None:
        return None
    if found.content == content:
        return found.record_id, found.version, False
    scope.retire(found)
    return found.record_id, found.version + 1, True


def _memory_content(entry: MemoryEntry) -> tuple[object, ...]:
    """What an idempotency key compares of a memory entry (its time as written)."""
    said = None if entry.created_at is None else entry.created_at.isoformat()
    return (entry.text, entry.kind, entry.tags, said, entry.thread)


def _latest_memory(scope: _Scope, ref: MemoryRef) -> _Version:
    """The newest version of ``ref``'s entry, provided ``ref``'s own version exists."""
    versions = scope.history.get(("memory", ref.entry_id), [])
    if not 1 <= ref.version <= len(versions):
        raise NotFoundError(_no_version(ref))
    return versions[-1]


def _titled(scope: _Scope, title: str) -> _Version | None:
    """The searchable topic memory titled ``title``, if any."""
    return scope.find("topic-memory", lambda found: found.content[0] == title)


def _live_resource(scope: _Scope, uri: str) -> _Version | None:
    """The searchable resource at ``uri``, if any (only its newest version can be)."""
    versions = scope.history.get(("resource", uri), [])
    if versions and versions[-1].key in scope.searchable("resource"):
        return versions[-1]
    return None


def _no_version(ref: MemoryRef) -> str:
    return f"no version {ref.version} of memory entry {ref.entry_id!r} in scope {ref.scope_id!r}"


# -- the channels -----------------------------------------------------------------------


def _lexical(
    records: list[_Version], request: PoolRequest
) -> tuple[list[int], list[float], list[int], int]:
    """The full-text channel as ``request.plan_lexical`` asks for it: each candidate's
    key, its BM25 (lower is better) and how many distinct query terms it holds (the
    scope's common ones left out), and how many terms were left out so."""
    frequencies = {
        term: holders
        for term in request.query.terms
        if (holders := sum(term in stored.terms for stored in records))
    }
    plan = request.plan_lexical(frequencies, len(records))
    if not plan.terms:
        return [], [], [], 0
    counted = [term for term in request.query.terms if term not in plan.common]
    average = sum(stored.length for stored in records) / len(records)

    def ranked(terms: Sequence[str]) -> list[tuple[float, _Version]]:
        """The records holding any of ``terms``, by BM25 over them (ties: older first)."""
        hits = [
            (bm25(stored.terms, stored.length, terms, frequencies, len(records), average), stored)
            for stored in records
            if any(term in stored.terms for term in terms)
        ]
        return sorted(hits, key=lambda hit: (hit[0], hit[1].key))

    found = ranked(plan.terms)[: plan.limit]
    if plan.rescue is not None:  # every other holder of the rare term, scored by it alone
        kept = {stored.key for _, stored in found}
        rescued = ranked([plan.rescue])[:RARE_POSTINGS]
        found += [(score, stored) for score, stored in rescued if stored.key not in kept]
    return (
        [stored.key for _, stored in found],
        [score for score, _ in found],
        [sum(term in stored.terms for term in counted) for _, stored in found],
        len(plan.common),
    )


def _time_channel(
    family: Family, records: list[_Version], request: PoolRequest
) -> tuple[list[int], int]:
    """The records of the windows the query's dates name, and how many there are: those
    whose own text names a day in a window first, then those said in one; each group
    most similar to the query first (nearest the window's middle without a vector)."""
    dates = request.query.dates
    if not dates or not rules(family).time_channel or request.time_size <= 0:
        return [], 0
    said = {stored.key: stored.said_at for stored in records if stored.said_at is not None}
    newest = max(said.values()) if said and request.needs_reference else None
    distance: dict[int, float] = {}  # 0 for a record naming the day, else from the middle
    for window in request.time_windows(newest):
        for key, at in said.items():
            if window.said_from <= at < window.said_to:
                distance[key] = min(distance.get(key, math.inf), window.distance(at))
        for stored in records:
            if any(window.names(start, end) for start, end in stored.mentions):
                distance[stored.key] = 0.0
    found = [stored for stored in records if stored.key in distance]
    if request.vector is not None and rules(family).vector_channel and found:
        similarity = dict(zip(found, _similarities(found, request.vector).tolist(), strict=True))
        found.sort(key=lambda s: (distance[s.key] > 0, -similarity[s], distance[s.key], s.key))
    else:
        found.sort(key=lambda s: (distance[s.key], s.key))
    return [stored.key for stored in found[: request.time_size]], len(found)


def _similarities(records: list[_Version], query: Vectors) -> npt.NDArray[np.float32]:
    """The cosine similarity of each record's vector to ``query`` (-1 without one)."""
    unit = _unit(query)
    return np.array(
        [-1.0 if stored.vector is None else stored.vector @ unit for stored in records],
        dtype=np.float32,
    )


def _unit(vector: Vectors) -> Vectors:
    """A float32 copy of ``vector`` scaled to length 1 (a zero vector stays zero)."""
    copy = np.array(vector, dtype=np.float32)
    norm = float(np.linalg.norm(copy))
    return copy / norm if norm > 0 else copy


def _thread_order(stored: _Version) -> tuple[float, int]:
    """A thread's order: ``created_at`` (records without one first), then insertion."""
    return (-math.inf if stored.said_at is None else stored.said_at, stored.key)
