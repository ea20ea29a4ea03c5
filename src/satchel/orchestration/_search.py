"""One (family, scope) search: the task a round runs once per search it holds.

A search takes the scope's read guard, reuses the pool an earlier round retrieved while
the scope's write version is unchanged (else retrieves again), admits the pool at the
round's floor, fuses it, reads the evidence of its new candidates (and the bodies the
request pins, so every read a round needs happens inside its all-or-nothing stage) and
sends the outcome to the coordinator through the round's stream. It never touches
shared state.
"""

from __future__ import annotations

import itertools
from typing import TYPE_CHECKING, Final

import attrs

from ..builder import needs_body
from ..recall import FamilySearch, FusionWeights, admit, fuse, with_neighbours
from ..vocabulary import PoolRequest, loop_turn, rules

if TYPE_CHECKING:
    from collections.abc import Mapping

    import numpy as np
    import numpy.typing as npt
    from anyio.streams.memory import MemoryObjectSendStream
    from opentelemetry.trace import Tracer

    from ..recall import AdmissionFloor
    from ..stores import Store
    from ..vocabulary import (
        AnalysedQuery,
        Evidence,
        Family,
        Limits,
        Pool,
        ResolvedRequest,
        Tier,
    )
    from ._locks import ScopeGuards
    from ._shares import FairShares

#: The best fused hits of a search whose thread neighbours join its candidates.
NEIGHBOUR_HITS: Final = 3


@attrs.frozen
class SearchSpec:
    """One supervised search of a round: a family in a scope, for one of the prepare's
    queries (0: the caller's; a planner may add up to two more)."""

    family: Family
    scope_id: str
    query: int = 0


def search_specs(request: ResolvedRequest, queries: int = 1) -> list[SearchSpec]:
    """One search per selected searchable family, scope (some families: own scope only)
    and query; a family's searches run scope by scope, the caller's query first."""
    return [
        SearchSpec(family, scope, query)
        for family in request.families
        if rules(family).searchable
        for scope in ((request.scope_id,) if rules(family).own_scope_only else request.scopes)
        for query in range(queries)
    ]


@attrs.frozen
class RoundSettings:
    """What every search of one round shares; each query is analysed and embedded once.

    ``pools`` are the pools of earlier rounds, to re-admit; ``known`` the keys already
    committed per search, which a round never reads again; ``room`` how many new
    candidates each family can still take; ``detail`` the request's tier pins, which say
    whose bodies a search must read; ``excluded`` the identities the caller already
    holds, which a search passes over for the next candidates. With
    ``offer_neighbours`` a search's best hits bring their thread neighbours: fused in
    round 0, or, for the ``"neighbours"`` expansion action, offered after the committed
    candidates. ``now`` is the wall time the prepare began, in UTC epoch seconds: a
    query's relative dates are seen from it.
    """

    index: int
    action: str
    queries: tuple[AnalysedQuery, ...]
    vectors: tuple[npt.NDArray[np.float32] | None, ...]
    floor: AdmissionFloor
    room: Mapping[Family, int]
    pools: Mapping[SearchSpec, Pool] = attrs.Factory(dict)
    known: Mapping[SearchSpec, frozenset[int]] = attrs.Factory(dict)
    weights: FusionWeights = attrs.Factory(FusionWeights)
    offer_neighbours: bool = False
    detail: Mapping[Family, Tier] = attrs.Factory(dict)
    excluded: frozenset[str] = frozenset()
    now: float | None = None


@attrs.frozen
class _Ranked:
    """A search's ranking before any evidence is read: its pool and fused search, its
    ``fresh`` keys (ranked, not committed by an earlier round) and the keys that joined
    as a hit's thread neighbour."""

    pool: Pool
    search: FamilySearch
    fresh: tuple[int, ...]
    joined: frozenset[int]
    again: bool


@attrs.frozen
class SearchOutcome:
    """What one search sends the coordinator.

    ``keys`` and ``evidence`` are the search's new candidates in fused order, at most
    the family's room; ``retrieved_again`` is True when an earlier pool could not be
    reused because the scope was written in between; ``joined_neighbours`` counts the
    keys that joined as a hit's thread neighbour.
    """

    spec: SearchSpec
    pool: Pool
    search: FamilySearch
    keys: tuple[int, ...] = ()
    evidence: tuple[Evidence, ...] = ()
    retrieved_again: bool = False
    joined_neighbours: int = 0


class Searcher:
    """Runs single searches against one store; the coordinator starts one task each."""

    def __init__(self, store: Store, limits: Limits, guards: ScopeGuards, tracer: Tracer) -> None:
        self._store = store
        self._limits = limits
        self._guards = guards
        self._tracer = tracer

    async def search(
        self,
        spec: SearchSpec,
        settings: RoundSettings,
        shares: FairShares[SearchSpec],
        results: MemoryObjectSendStream[SearchOutcome],
    ) -> None:
        """Search ``spec`` under the scope's read guard and send the outcome.

        When the family's room is shared with other scopes, the guard is let go while
        the search waits for their counts (a search waiting on another under a guard
        that a queued writer holds back could wait forever), and taken again to read.
        """
        attributes = {
            "gen_ai.operation.name": "search_memory",
            "satchel.memory.family": spec.family,
            "satchel.scope": spec.scope_id,
            "satchel.recall.round.index": settings.index,
        }
        async with results:
            with self._tracer.start_as_current_span("search_memory", attributes=attributes) as span:
                alone = shares.whole_room(spec)
                async with self._guards.reading(spec.scope_id):
                    ranked = await self._ranked(spec, settings)
                    if alone:
                        outcome = await self._read(spec, settings, ranked, shares.room(spec))
                if not alone:
                    wanted = await shares.share(spec, len(ranked.fresh))
                    async with self._guards.reading(spec.scope_id):
                        outcome = await self._read(spec, settings, ranked, wanted)
                span.set_attribute("satchel.recall.retrieved", outcome.search.counts.retrieved)
                span.set_attribute("satchel.recall.admitted", outcome.search.counts.admitted)
                span.set_attribute("satchel.recall.retrieved_again", outcome.retrieved_again)
                span.set_attribute("satchel.recall.neighbours", outcome.joined_neighbours)
                span.set_attribute("satchel.recall.read", len(outcome.keys))
            await results.send(outcome)

    async def _ranked(self, spec: SearchSpec, settings: RoundSettings) -> _Ranked:
        """The search's pool (reused while the scope is unchanged), admitted at the
        round's floor, fused, with its hits' thread neighbours."""
        pool = settings.pools.get(spec)
        again = pool is not None and self._store.scope_version(spec.scope_id) != pool.version
        if pool is None or again:
            request = PoolRequest(
                settings.queries[spec.query],
                settings.vectors[spec.query],
                self._limits.pool_size(spec.family),
                settings.now,
            )
            pool = await self._store.retrieve(spec.family, spec.scope_id, request)
        terms = pool.counted_terms(len(settings.queries[spec.query].terms))
        async with loop_turn():
            search = fuse(admit(pool, terms, settings.floor), terms, settings.weights)
        known = settings.known.get(spec, frozenset())
        ranked, joined = await self._with_neighbours(spec, settings, search, known)
        fresh = tuple(key for key in ranked if key not in known)
        return _Ranked(pool, search, fresh, joined, again)

    async def _read(
        self, spec: SearchSpec, settings: RoundSettings, ranked: _Ranked, wanted: int
    ) -> SearchOutcome:
        """The outcome: the evidence of the best ``wanted`` fresh candidates, with the
        bodies the request pins."""
        keys, evidence = await self._fresh_evidence(spec, settings, ranked.fresh, wanted)
        evidence = await self._with_bodies(spec, settings, evidence)
        joined = sum(key in ranked.joined for key in keys)
        return SearchOutcome(spec, ranked.pool, ranked.search, keys, evidence, ranked.again, joined)

    async def _fresh_evidence(
        self,
        spec: SearchSpec,
        settings: RoundSettings,
        fresh: tuple[int, ...],
        wanted: int,
    ) -> tuple[tuple[int, ...], tuple[Evidence, ...]]:
        """The evidence of the best ``wanted`` of the ``fresh`` keys (not committed yet).

        Only that prefix is read. A key whose record left search meanwhile, or whose
        evidence the caller excluded, is passed over and the next key read in its place.
        """
        remaining = iter(fresh)
        excluded = settings.excluded
        kept: list[tuple[int, Evidence]] = []
        while len(kept) < wanted:
            batch = list(itertools.islice(remaining, wanted - len(kept)))
            if not batch:
                break
            found = await self._store.evidence(spec.family, spec.scope_id, batch)
            kept += [
                (key, item)
                for key in batch
                if (item := found.get(key)) is not None and item.identity not in excluded
            ]
        keys = tuple(key for key, _ in kept)
        evidence = tuple(item for _, item in kept)
        return keys, evidence

    async def _with_bodies(
        self, spec: SearchSpec, settings: RoundSettings, evidence: tuple[Evidence, ...]
    ) -> tuple[Evidence, ...]:
        """``evidence`` with the bodies the request pins (a resource at ``full``) read in."""
        if not rules(spec.family).body_on_demand or settings.detail.get(spec.family) != "full":
            return evidence  # the common case: nothing of this search needs its body
        pinned = [item for item in evidence if needs_body(item, settings.detail)]
        if not pinned:
            return evidence
        uris = [str(item.citation["uri"]) for item in pinned]
        bodies = await self._store.read_resource_bodies(spec.scope_id, uris)
        return tuple(
            attrs.evolve(item, text=bodies.get(str(item.citation["uri"])))
            if needs_body(item, settings.detail)
            else item
            for item in evidence
        )

    async def _with_neighbours(
        self,
        spec: SearchSpec,
        settings: RoundSettings,
        search: FamilySearch,
        known: frozenset[int],
    ) -> tuple[tuple[int, ...], frozenset[int]]:
        """The search's order with its best hits' thread neighbours, and those neighbours.

        In round 0 they are fused in, a channel like any other; the ``"neighbours"``
        action offers only them, after the committed candidates, so it never displaces
        one.
        """
        if not (settings.offer_neighbours and rules(spec.family).neighbour_channel):
            return search.ranked, frozenset()
        if not search.ranked:
            return search.ranked, frozenset()
        hits = search.ranked[:NEIGHBOUR_HITS]
        if settings.index:
            hits = tuple(key for key in search.ranked if key in known)[:NEIGHBOUR_HITS]
        around = await self._store.neighbours(spec.family, spec.scope_id, hits)
        joined = frozenset(key for near in around.values() for key in near) - set(search.ranked)
        if settings.index:
            return tuple(key for hit in hits for key in around.get(hit, ())), joined
        share = settings.weights.neighbour_share
        return with_neighbours(search, around, share), joined
