"""The state of one prepare, made once and passed down: what it searches, for which
queries, until when, and what it must never deliver.

The :class:`~._prepare.Preparer` makes one :class:`PrepareState` per prepare, once the
queries are embedded, the profile read and the session's turn known; the coordinator,
its searches and its packer only read it. It must never change after it is made, never
do I/O and never read a clock: the deadline and the wall time are read by the preparer.
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

import attrs

from ..vocabulary import Limits, rules

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

    import numpy as np
    import numpy.typing as npt

    from ..vocabulary import AnalysedQuery, Citation, Evidence, Family, ResolvedRequest


@attrs.frozen(cache_hash=True)  # a key of every per-search mapping of a round
class SearchSpec:
    """One supervised search of a round: a family in a scope, for one of the prepare's
    queries (0: the caller's; a planner may add up to two more)."""

    family: Family
    scope_id: str
    query: int = 0


def search_specs(request: ResolvedRequest, queries: int = 1) -> tuple[SearchSpec, ...]:
    """One search per selected searchable family, scope (some families: own scope only)
    and query; a family's searches run scope by scope, the caller's query first."""
    return tuple(
        SearchSpec(family, scope, query)
        for family in request.families
        if rules(family).searchable
        for scope in ((request.scope_id,) if rules(family).own_scope_only else request.scopes)
        for query in range(queries)
    )


@attrs.frozen
class Exclusions:
    """What one prepare never delivers, as two sets of evidence identities.

    Attributes:
        excluded: the identities of the citations the caller holds
            (``PrepareContextRequest.exclude``); a search passes over them while reading
            and reads the next candidates in their place.
        excluded_per_place: how many of ``excluded`` each (family, scope) holds, so a
            search can tell how many of another scope's ranked candidates it will pass over.
        held_back: the identities the session's dedup ledger holds back this turn; they
            are read like any candidate and left out of every fit.
    """

    excluded: frozenset[str] = frozenset()
    excluded_per_place: Mapping[tuple[Family, str], int] = attrs.field(factory=dict)
    held_back: frozenset[str] = frozenset()

    @classmethod
    def of(cls, citations: Iterable[Citation], held_back: frozenset[str]) -> Exclusions:
        """The exclusions of validated ``citations`` (one identity each, repeats merged)
        and the ledger's ``held_back`` identities."""
        places = {citation.identity(): (citation.family, citation.scope) for citation in citations}
        return cls(
            excluded=frozenset(places),
            excluded_per_place=Counter(places.values()),  # type: ignore[arg-type]
            held_back=held_back,
        )

    @property
    def never_delivered(self) -> frozenset[str]:
        """Every identity no fit of this prepare delivers."""
        return self.excluded | self.held_back


@attrs.frozen
class PrepareState:
    """One prepare, as every part of it reads it; made once by the preparer.

    Attributes:
        request: the validated request.
        deadline: when the prepare must be done, on anyio's clock (``math.inf``: never);
            every round's cancel scope ends by it.
        now: the wall time the prepare began, in UTC epoch seconds: a query's relative
            dates are seen from it.
        queries: the caller's query first, then any a planner added, each analysed once.
        vectors: each query's vector, embedded once (None: no family needs one).
        unnamed: each query's vector without its proper names, embedded with the
            others (None: it names nothing, or no family needs one).
        specs: the searches of every round, in request order.
        exclusions: what no fit of this prepare delivers.
        unsearched: the families read whole rather than searched (the profile), as read.
        explain: whether the searches trace where each candidate stood
            (``Runtime.explain_context``); a plain prepare traces nothing.
        limits: the runtime's limits as this prepare's budget scales them
            (``Limits.for_bytes``): its searches' pool sizes, its ceilings, its fit.
    """

    request: ResolvedRequest
    deadline: float
    now: float
    queries: tuple[AnalysedQuery, ...]
    vectors: tuple[npt.NDArray[np.float32] | None, ...]
    exclusions: Exclusions = attrs.field(factory=Exclusions)
    unsearched: Mapping[Family, tuple[Evidence, ...]] = attrs.field(factory=dict)
    specs: tuple[SearchSpec, ...] = attrs.field(
        default=attrs.Factory(
            lambda self: search_specs(self.request, len(self.queries)), takes_self=True
        )
    )
    explain: bool = False
    unnamed: tuple[npt.NDArray[np.float32] | None, ...] = ()
    limits: Limits = attrs.field(factory=Limits)
