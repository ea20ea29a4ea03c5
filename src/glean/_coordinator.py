"""The coordinator: runs each round's searches as one task group and collects them.

Search tasks never touch shared state: each retrieves, admits and fuses, then sends its
result through a memory object stream to the coordinator, which alone stages the round.
A round is all-or-nothing: if any search fails, the whole round fails as one
exception group, and the caller decides what that means (round 0: prepare fails).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import anyio
import attrs

from .recall._admission import AdmissionFloor, admit
from .recall._fusion import FamilySearch, fuse

if TYPE_CHECKING:
    from collections.abc import Sequence

    import numpy as np
    import numpy.typing as npt
    from anyio.streams.memory import MemoryObjectSendStream

    from ._families import Family
    from ._limits import Limits
    from .recall._analysis import AnalysedQuery
    from .recall._evidence import Evidence, Pool
    from .stores._protocol import Store


@attrs.frozen
class SearchSpec:
    """One supervised search of a round: a family in a scope."""

    family: Family
    scope_id: str


@attrs.frozen
class SearchOutcome:
    """What one search task sends the coordinator: the pool it read, its fused result,
    and the evidence of the fused candidates within the family's ceiling, in order."""

    spec: SearchSpec
    pool: Pool
    search: FamilySearch
    evidence: tuple[Evidence, ...]


@attrs.frozen
class RoundInput:
    """Everything a round's searches share: the query is analysed and embedded once."""

    query: AnalysedQuery
    vector: npt.NDArray[np.float32] | None
    floor: AdmissionFloor


class Coordinator:
    """Runs rounds of concurrent family searches against one store."""

    def __init__(self, store: Store, limits: Limits) -> None:
        self._store = store
        self._limits = limits

    async def run_round(
        self, specs: Sequence[SearchSpec], shared: RoundInput
    ) -> dict[SearchSpec, SearchOutcome]:
        """Run every search of one round concurrently and stage their outcomes.

        Raises:
            ExceptionGroup: if any search failed; nothing of the round is returned.
        """
        staged: dict[SearchSpec, SearchOutcome] = {}
        send, receive = anyio.create_memory_object_stream[SearchOutcome](len(specs) or 1)
        async with anyio.create_task_group() as group:
            async with send:
                for spec in specs:
                    group.start_soon(self._search, spec, shared, send.clone())
            async with receive:
                async for outcome in receive:
                    staged[outcome.spec] = outcome
        return staged

    async def _search(
        self,
        spec: SearchSpec,
        shared: RoundInput,
        results: MemoryObjectSendStream[SearchOutcome],
    ) -> None:
        async with results:
            pool = await self._store.retrieve(
                spec.family,
                spec.scope_id,
                shared.query,
                shared.vector,
                self._limits.pool_size(spec.family),
            )
            terms = len(shared.query.terms)
            search = fuse(admit(pool, terms, shared.floor), terms)
            # No scope can offer more than the family's ceiling, so only that prefix is read.
            top = search.ranked[: self._limits.ceiling(spec.family)]
            found = await self._store.evidence(spec.family, spec.scope_id, top)
            evidence = tuple(found[key] for key in top if key in found)
            await results.send(SearchOutcome(spec, pool, search, evidence))
