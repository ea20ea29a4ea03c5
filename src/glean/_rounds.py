"""One round of family searches: a task group whose results reach only the coordinator.

Each (family, scope) search is a supervised task. It takes the scope's read guard,
reuses the pool an earlier round retrieved while the scope's write version is unchanged
(else retrieves again), admits it at the round's floor, fuses it, reads the evidence of
its new candidates, and sends the outcome through a memory object stream. Tasks never
touch shared state; the round's cancel scope is the single stop switch.
"""

from __future__ import annotations

import itertools
from typing import TYPE_CHECKING

import anyio
import attrs

from .recall._admission import AdmissionFloor, admit
from .recall._fusion import FamilySearch, FusionWeights, fuse, with_neighbours

#: The best fused hits of a memory search whose thread neighbours join the candidates.
NEIGHBOUR_HITS = 3

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    import numpy as np
    import numpy.typing as npt
    from anyio.streams.memory import MemoryObjectSendStream
    from opentelemetry.trace import Tracer

    from ._families import Family
    from ._limits import Limits
    from ._locks import ScopeGuards
    from .recall._analysis import AnalysedQuery
    from .recall._evidence import Evidence, Pool
    from .stores._protocol import Store


@attrs.frozen
class SearchSpec:
    """One supervised search of a round: a family in a scope."""

    family: Family
    scope_id: str


@attrs.frozen
class RoundInput:
    """What every search of one round shares; the query is analysed and embedded once.

    ``pools`` are the pools of earlier rounds, to re-admit; ``known`` the keys already
    committed per search, which a round never reads again; ``room`` how many new
    candidates each family can still take. ``neighbours`` says whether a memory
    search's best hits bring their thread neighbours (round 0's neighbour channel, or
    the ``"neighbours"`` expansion action).
    """

    index: int
    action: str
    query: AnalysedQuery
    vector: npt.NDArray[np.float32] | None
    floor: AdmissionFloor
    room: Mapping[Family, int]
    pools: Mapping[SearchSpec, Pool] = attrs.Factory(dict)
    known: Mapping[SearchSpec, frozenset[int]] = attrs.Factory(dict)
    weights: FusionWeights = attrs.Factory(FusionWeights)
    neighbours: bool = False


@attrs.frozen
class SearchOutcome:
    """What one search task sends the coordinator.

    ``keys`` and ``evidence`` are the search's new candidates in fused order, at most
    the family's room; ``retrieved_again`` is True when an earlier pool could not be
    reused because the scope was written in between; ``neighbours`` counts the keys
    that joined as a hit's thread neighbour.
    """

    spec: SearchSpec
    pool: Pool
    search: FamilySearch
    keys: tuple[int, ...]
    evidence: tuple[Evidence, ...]
    retrieved_again: bool = False
    neighbours: int = 0


class RoundRunner:
    """Runs the searches of one round concurrently against one store."""

    def __init__(
        self,
        store: Store,
        limits: Limits,
        guards: ScopeGuards,
        tracer: Tracer,
        *,
        sequential: bool = False,
    ) -> None:
        self._store = store
        self._limits = limits
        self._guards = guards
        self._tracer = tracer
        # Benchmarks only: the same searches one after another, to measure concurrency.
        self._sequential = sequential

    async def run(
        self, specs: Sequence[SearchSpec], shared: RoundInput
    ) -> dict[SearchSpec, SearchOutcome]:
        """Run every search of one round and return all their outcomes.

        Raises:
            ExceptionGroup: if any search failed; no outcome of the round is returned.
        """
        staged: dict[SearchSpec, SearchOutcome] = {}
        send, receive = anyio.create_memory_object_stream[SearchOutcome](max(len(specs), 1))
        if self._sequential:
            async with send, receive:
                for spec in specs:
                    await self._search(spec, shared, send.clone())
                    staged[spec] = receive.receive_nowait()
            return staged
        async with anyio.create_task_group() as group:
            async with send:
                for spec in specs:
                    group.start_soon(self._search, spec, shared, send.clone())
            async with receive:
                async for outcome in receive:
                    staged[outcome.spec] = outcome
        return staged

    async def _search(
        self, spec: SearchSpec, shared: RoundInput, results: MemoryObjectSendStream[SearchOutcome]
    ) -> None:
        attributes = {
            "gen_ai.operation.name": "search_memory",
            "glean.memory.family": spec.family,
            "glean.scope": spec.scope_id,
            "glean.recall.round.index": shared.index,
        }
        async with results:
            with self._tracer.start_as_current_span("search_memory", attributes=attributes) as span:
                async with self._guards.reading(spec.scope_id):
                    outcome = await self._searched(spec, shared)
                span.set_attribute("glean.recall.retrieved", outcome.search.counts.retrieved)
                span.set_attribute("glean.recall.admitted", outcome.search.counts.admitted)
                span.set_attribute("glean.recall.retrieved_again", outcome.retrieved_again)
                span.set_attribute("glean.recall.neighbours", outcome.neighbours)
            await results.send(outcome)

    async def _searched(self, spec: SearchSpec, shared: RoundInput) -> SearchOutcome:
        pool = shared.pools.get(spec)
        again = pool is not None and self._store.scope_version(spec.scope_id) != pool.version
        if pool is None or again:
            pool = await self._store.retrieve(
                spec.family,
                spec.scope_id,
                shared.query,
                shared.vector,
                self._limits.pool_size(spec.family),
            )
        terms = len(shared.query.terms)
        search = fuse(admit(pool, terms, shared.floor), terms, shared.weights)
        known = shared.known.get(spec, frozenset())
        ranked, joined = await self._joined(spec, shared, search, known)
        # A scope never offers more than its family's room, so only that prefix is read.
        fresh = (key for key in ranked if key not in known)
        wanted = list(itertools.islice(fresh, shared.room[spec.family]))
        found = await self._store.evidence(spec.family, spec.scope_id, wanted) if wanted else {}
        keys = tuple(key for key in wanted if key in found)
        evidence = tuple(found[key] for key in keys)
        neighbours = sum(key in joined for key in keys)
        return SearchOutcome(spec, pool, search, keys, evidence, again, neighbours)

    async def _joined(
        self, spec: SearchSpec, shared: RoundInput, search: FamilySearch, known: frozenset[int]
    ) -> tuple[tuple[int, ...], frozenset[int]]:
        """The search's order with its best hits' thread neighbours, and those neighbours.

        In round 0 they are fused in, a channel like any other; the ``"neighbours"``
        action offers only them, after the committed candidates, so it never displaces
        one.
        """
        if not shared.neighbours or spec.family != "memory" or not search.ranked:
            return search.ranked, frozenset()
        hits = search.ranked[:NEIGHBOUR_HITS]
        if shared.index:
            hits = tuple(key for key in search.ranked if key in known)[:NEIGHBOUR_HITS]
        around = await self._store.neighbours(spec.family, spec.scope_id, hits)
        joined = frozenset(key for near in around.values() for key in near) - set(search.ranked)
        if shared.index:
            return tuple(key for hit in hits for key in around.get(hit, ())), joined
        return with_neighbours(search, around, shared.weights.neighbours), joined
