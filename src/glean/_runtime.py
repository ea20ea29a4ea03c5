"""The public runtime: ``open_runtime`` wires a store, an embedder and the pipeline.

Only this module wires things together; the coordinator runs the tasks, the recall
core and the Builder stay pure.
"""

from __future__ import annotations

from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any, Final

import anyio
import attrs
import threadpoolctl

from . import _writes
from ._coordinator import Coordinator, RoundInput, SearchSpec
from ._embedders import Embedder, HashingEmbedder
from ._errors import InvalidRequestError, PrepareFailedError
from ._families import SEARCHABLE, Family
from ._limits import Limits
from ._records import topic_text
from ._requests import PreparedContext, PreparePlan, validate_request, validate_scope
from .builder import build_context, needs_body
from .recall._admission import AdmissionFloor
from .recall._allocation import allocate, check_ceiling
from .recall._analysis import analyse_query
from .stores._sqlite import SqliteStore

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Mapping, Sequence

    import numpy as np
    import numpy.typing as npt

    from ._records import (
        Experience,
        MemoryEntry,
        MemoryRecord,
        MemoryRef,
        Profile,
        RecordRef,
        Resource,
        TopicMemory,
    )
    from .recall._evidence import Evidence
    from .stores._protocol import Store

#: Families whose search has a vector channel (experience is lexical only).
VECTOR_FAMILIES: Final = frozenset({"memory", "topic-memory", "resource"})
#: Families searched in the request's own scope only.
OWN_SCOPE_ONLY: Final = frozenset({"topic-memory"})


@attrs.frozen(kw_only=True)
class RuntimeOptions:
    """Keyword options of :func:`open_runtime` beyond the named ones."""

    round_timeout: float | None = None
    prepare_timeout: float | None = None
    dedup_turns: int = 0
    readers: int = 4
    #: Threads BLAS may use while the runtime is open (None leaves BLAS alone). One is
    #: fastest for glean's products: with more, every search pays a thread wake-up.
    blas_threads: int | None = 1

    @classmethod
    def from_options(cls, options: Mapping[str, Any]) -> RuntimeOptions:
        known = {field.name for field in attrs.fields(cls)}
        for name in options:
            if name not in known:
                raise InvalidRequestError(
                    f"unknown runtime option {name!r}; expected one of {', '.join(sorted(known))}"
                )
        return cls(**options)


class Runtime:
    """One open glean runtime. Create it with :func:`open_runtime`."""

    def __init__(self, store: Store, embedder: Embedder, limits: Limits) -> None:
        self._store = store
        self._embedder = embedder
        self._limits = limits
        self._coordinator = Coordinator(store, limits)

    @property
    def store(self) -> Store:
        return self._store

    @property
    def limits(self) -> Limits:
        return self._limits

    # -- writes ---------------------------------------------------------------------

    async def add_memories(self, scope_id: str, entries: Sequence[MemoryEntry]) -> list[MemoryRef]:
        """Write a batch of memory entries atomically; one reference each, in input order."""
        scope_id = validate_scope(scope_id, "scope_id")
        checked = _writes.memory_entries(entries)
        if not checked:
            return []
        vectors = await self._embed([entry.text for entry in checked])
        return await self._store.add_memories(scope_id, checked, vectors)

    async def update_memory(self, ref: MemoryRef, entry: MemoryEntry) -> MemoryRef:
        """Write a new version of an entry; the old version stays readable by its ref."""
        ref = _writes.memory_ref(ref)
        _writes.batch([entry], type(entry), "entry")
        _writes.memory_entry(entry, "entry")
        return await self._store.update_memory(ref, entry, await self._embed([entry.text]))

    async def forget_memory(self, ref: MemoryRef) -> None:
        """Take an entry out of search; every version stays readable by its ref."""
        await self._store.forget_memory(_writes.memory_ref(ref))

    async def get_memory(self, ref: MemoryRef) -> MemoryRecord:
        """Read exactly the version ``ref`` names.

        Raises:
            NotFoundError: the entry or the version does not exist.
        """
        return await self._store.get_memory(_writes.memory_ref(ref))

    async def add_experiences(
        self, scope_id: str, experiences: Sequence[Experience]
    ) -> list[RecordRef]:
        scope_id = validate_scope(scope_id, "scope_id")
        checked = _writes.experiences(experiences)
        return await self._store.add_experiences(scope_id, checked) if checked else []

    async def add_topic_memories(
        self, scope_id: str, topics: Sequence[TopicMemory]
    ) -> list[RecordRef]:
        scope_id = validate_scope(scope_id, "scope_id")
        checked = _writes.topics(topics)
        if not checked:
            return []
        vectors = await self._embed([topic_text(topic) for topic in checked])
        return await self._store.add_topic_memories(scope_id, checked, vectors)

    async def set_profile(self, scope_id: str, profile: Profile) -> None:
        scope_id = validate_scope(scope_id, "scope_id")
        await self._store.set_profile(scope_id, _writes.profile(profile))

    async def add_resources(self, scope_id: str, resources: Sequence[Resource]) -> list[RecordRef]:
        scope_id = validate_scope(scope_id, "scope_id")
        checked = _writes.resources(resources)
        if not checked:
            return []
        vectors = await self._embed(_writes.embedding_texts(checked))
        return await self._store.add_resources(scope_id, checked, vectors)

    # -- prepare --------------------------------------------------------------------

    async def prepare_context(self, request: object) -> PreparedContext:
        """Search, fit and render a context pack for one turn.

        Raises:
            InvalidRequestError: a request field is malformed (the message names it).
            PrepareFailedError: a search of round 0 failed.
        """
        plan = validate_request(request)
        if not plan.families:
            return PreparedContext.empty()
        candidates = await self._recall(plan)
        candidates = await self._read_bodies(plan, candidates)
        result = build_context(
            candidates,
            max_bytes=plan.max_bytes,
            sections=plan.sections,
            detail=plan.detail,
            limits=self._limits,
        )
        return result.context

    async def _recall(self, plan: PreparePlan) -> dict[Family, tuple[Evidence, ...]]:
        specs = [
            SearchSpec(family, scope)
            for family in plan.families
            if family in SEARCHABLE
            for scope in ((plan.scope_id,) if family in OWN_SCOPE_ONLY else plan.scopes)
        ]
        query = analyse_query(plan.query)
        vector = None
        if any(spec.family in VECTOR_FAMILIES for spec in specs):
            vector = (await self._embedder.embed([plan.query]))[0]
        try:
            outcomes = await self._coordinator.run_round(
                specs, RoundInput(query, vector, AdmissionFloor())
            )
        except ExceptionGroup as group:
            raise PrepareFailedError(f"round 0 failed: {group.exceptions[0]!r}") from group
        candidates: dict[Family, tuple[Evidence, ...]] = {}
        for family in plan.families:
            if family == "profile":
                continue
            ranked = [outcomes[s].evidence for s in specs if s.family == family]
            ceiling = self._limits.ceiling(family)
            candidates[family] = allocate(ranked, ceiling)
            check_ceiling(family, candidates[family], ceiling)
        if "profile" in plan.families:
            profile = await self._store.get_profile(plan.scope_id)
            candidates["profile"] = () if profile is None else (profile,)
        return candidates

    async def _read_bodies(
        self, plan: PreparePlan, candidates: dict[Family, tuple[Evidence, ...]]
    ) -> dict[Family, tuple[Evidence, ...]]:
        """Read resource bodies, only for resources whose tier ceiling is ``full``."""
        resources = candidates.get("resource", ())
        wanted = [item for item in resources if needs_body(item, plan.detail)]
        if not wanted:
            return candidates
        bodies: dict[str, Mapping[str, str]] = {}
        for scope in {item.scope_id for item in wanted}:
            uris = [str(item.citation["uri"]) for item in wanted if item.scope_id == scope]
            bodies[scope] = await self._store.read_resource_bodies(scope, uris)
        candidates["resource"] = tuple(
            attrs.evolve(item, text=bodies[item.scope_id].get(str(item.citation["uri"])))
            if needs_body(item, plan.detail)
            else item
            for item in resources
        )
        return candidates

    async def _embed(self, texts: list[str]) -> npt.NDArray[np.float32]:
        return await self._embedder.embed(texts)


@asynccontextmanager
async def open_runtime(
    database: str = ":memory:",
    *,
    store: Store | None = None,
    embedder: Embedder | None = None,
    recall_policy: object | None = None,
    recall_effort_sink: object | None = None,
    tracer_provider: object | None = None,
    limits: Limits | None = None,
    **options: Any,
) -> AsyncIterator[Runtime]:
    """Open a runtime over an embedded SQLite file (or ``":memory:"``) or a given store.

    Args:
        database: path of the embedded store; ignored when ``store`` is given.
        store: any :class:`glean.Store`; the runtime closes it on exit.
        embedder: defaults to :class:`HashingEmbedder`.
        limits: candidate ceilings and item limits; defaults to :class:`Limits()`.
        **options: ``round_timeout``, ``prepare_timeout``, ``dedup_turns``, ``readers``
            (reader connections of the embedded store), ``blas_threads``.

    Raises:
        InvalidRequestError: an unknown option or a malformed argument.
    """
    del recall_policy, recall_effort_sink, tracer_provider  # wired by the orchestrator
    settings = RuntimeOptions.from_options(options)
    if limits is not None and not isinstance(limits, Limits):
        raise InvalidRequestError("limits must be a glean.Limits")
    if store is None:
        if not isinstance(database, str) or not database:
            raise InvalidRequestError("database must be a file path or ':memory:'")
        store = await SqliteStore.open(database, readers=settings.readers)
    blas = None
    if settings.blas_threads is not None:
        blas = threadpoolctl.threadpool_limits(limits=settings.blas_threads, user_api="blas")
    try:
        yield Runtime(store, embedder or HashingEmbedder(), limits or Limits())
    finally:
        if blas is not None:
            blas.restore_original_limits()
        with anyio.CancelScope(shield=True):
            await store.aclose()
