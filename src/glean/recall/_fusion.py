"""Reciprocal-rank fusion of the admitted channels of one family search. Pure."""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

import attrs

if TYPE_CHECKING:
    from .._families import Family
    from ._admission import AdmissionCounts, Admitted

RRF_K: Final = 60


@attrs.frozen
class FamilySearch:
    """One (family, scope) search after admission and fusion.

    ``ranked`` is the fused order of record keys, best first. The remaining fields are
    the signals the sufficiency gate reads: the best and second-best admitted cosine
    similarities and the share of query terms the best lexical candidate contains.
    """

    family: Family
    scope_id: str
    ranked: tuple[int, ...]
    counts: AdmissionCounts
    best_similarity: float | None = None
    next_similarity: float | None = None
    best_overlap: float = 0.0


def fuse(admitted: Admitted, term_count: int, *, k: int = RRF_K) -> FamilySearch:
    """Order the admitted candidates by reciprocal-rank fusion (``1 / (k + rank)`` per
    channel, rank from 1); ties keep lexical-first, then retrieval order."""
    scores: dict[int, float] = {}
    for channel in (admitted.lexical_keys, admitted.vector_keys):
        for rank, key in enumerate(channel, start=1):
            scores[key] = scores.get(key, 0.0) + 1.0 / (k + rank)
    order = sorted(scores, key=scores.__getitem__, reverse=True)  # stable: ties keep insertion
    similarities = admitted.vector_similarities[:2]
    best_matches = max(admitted.lexical_matches, default=0)
    counts = admitted.counts
    return FamilySearch(
        family=counts.family,
        scope_id=counts.scope_id,
        ranked=tuple(order),
        counts=counts,
        best_similarity=similarities[0] if similarities else None,
        next_similarity=similarities[1] if len(similarities) > 1 else None,
        best_overlap=best_matches / term_count if term_count else 0.0,
    )
