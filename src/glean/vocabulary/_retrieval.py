"""What a search asks a store for: one value, carrying the ranking rules a store follows.

A store implements retrieval (a full-text ranking, a vector product, a date range scan);
which query terms are worth ranking by, and when a rare term's every holder joins the
pool, are rules of glean's, decided here, so every store applies the same ones. Pure:
no I/O, no clock.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

import attrs

from ._analysis import AnalysedQuery

if TYPE_CHECKING:
    from collections.abc import Mapping

    import numpy as np
    import numpy.typing as npt

#: Most postings (records holding any chosen term) one full-text search may rank.
POSTINGS_BUDGET: Final = 2048
#: A query term held by at most this many of a scope's records is rare enough that every
#: record holding it joins the full-text candidates, however the ranking placed it.
RARE_POSTINGS: Final = 32


@attrs.frozen
class LexicalPlan:
    """How one full-text search runs: rank the records holding any of ``terms``
    (rarest first), keep the best ``limit``, then append every other record holding
    ``rescue`` (at most ``RARE_POSTINGS`` of them), scored by that term alone."""

    terms: tuple[str, ...] = ()
    limit: int = 0
    rescue: str | None = None


@attrs.frozen
class PoolRequest:
    """One search's request to a store: a family's pool in one scope.

    ``query`` is the analysed query (its terms, which every candidate's matched-term
    count is taken over, and its dates, for the time channel); ``vector`` its embedding,
    or None when the vector channel is off; ``size`` the most candidates per channel.
    """

    query: AnalysedQuery = attrs.field(validator=attrs.validators.instance_of(AnalysedQuery))
    vector: npt.NDArray[np.float32] | None
    size: int

    @property
    def time_size(self) -> int:
        """The most candidates of the time channel: a quarter of the pool."""
        return self.size // 4

    def plan_lexical(self, frequencies: Mapping[str, int]) -> LexicalPlan:
        """The full-text search to run, given how many of the scope's searchable
        records hold each query term (a term absent from the mapping, or at 0, is held
        by none).

        Ranking costs per matching record, so a term held by most of a scope would make
        every search scan the scope while adding almost nothing to the order. Terms are
        taken rarest first while their postings stay within ``POSTINGS_BUDGET`` (the
        rarest is always taken). A length-normalised ranking can push a long record
        naming a rare term once past the limit, below short records holding two common
        terms; when the rarest term is rare and the postings overflow the limit, its
        every holder is kept (``rescue``).
        """
        held = {term: count for term in self.query.terms if (count := frequencies.get(term, 0))}
        chosen: list[str] = []
        postings = 0
        for term in sorted(held, key=held.__getitem__):
            if chosen and postings + held[term] > POSTINGS_BUDGET:
                break
            chosen.append(term)
            postings += held[term]
        if not chosen:
            return LexicalPlan()
        rarest = chosen[0]
        rescue = postings > self.size and held[rarest] <= RARE_POSTINGS and len(chosen) > 1
        return LexicalPlan(tuple(chosen), self.size, rarest if rescue else None)
