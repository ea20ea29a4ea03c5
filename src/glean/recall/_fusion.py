"""Weighted reciprocal-rank fusion of the admitted channels of one family search. Pure."""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

import attrs

from .._errors import InvalidRequestError

if TYPE_CHECKING:
    from collections.abc import Mapping

    from .._families import Family
    from ._admission import AdmissionCounts, Admitted

RRF_K: Final = 60


def _weight(instance: object, attribute: attrs.Attribute[float], value: float) -> None:
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 10:
        raise InvalidRequestError(f"FusionWeights.{attribute.name} must be in 0..10")


@attrs.frozen(kw_only=True)
class FusionWeights:
    """How much each ranked channel counts in fusion: ``weight / (k + rank)`` per channel.

    Calibrated on the synthetic conversational workload (``python -m bench channels``,
    8000-byte budget): a cosine list carries less precision than a lexical one, so it
    counts half (equal weight lost 0.03 recall); when a query names a date, the entries
    recorded then are the only evidence of it, so the time list counts double (1.0 and
    1.5 lost 0.04 and 0.02); a neighbour at half its hit's score reached every reply
    without pushing out time-channel hits (0.8 and 1.0 lost 0.07 overall).

    Attributes:
        lexical: the full-text channel.
        vector: the vector channel.
        time: the time channel (entries recorded in the window a query's date names).
        neighbours: a neighbour's share of the score of the hit it sits next to, for
            the round-0 neighbour channel; 0 turns that channel off.
    """

    lexical: float = attrs.field(default=1.0, validator=_weight)
    vector: float = attrs.field(default=0.5, validator=_weight)
    time: float = attrs.field(default=2.0, validator=_weight)
    neighbours: float = attrs.field(default=0.5, validator=_weight)


@attrs.frozen
class FamilySearch:
    """One (family, scope) search after admission and fusion.

    ``ranked`` is the fused order of record keys, best first, and ``scores`` their fused
    scores. The remaining fields are the signals the sufficiency gate reads: the best and
    second-best admitted cosine similarities and the share of query terms the best
    lexical candidate contains.
    """

    family: Family
    scope_id: str
    ranked: tuple[int, ...]
    counts: AdmissionCounts
    best_similarity: float | None = None
    next_similarity: float | None = None
    best_overlap: float = 0.0
    scores: tuple[float, ...] = ()


def fuse(
    admitted: Admitted, term_count: int, weights: FusionWeights | None = None, *, k: int = RRF_K
) -> FamilySearch:
    """Order the admitted candidates by weighted reciprocal-rank fusion (``weight /
    (k + rank)`` per channel, rank from 1); ties keep lexical-first, then retrieval order."""
    weights = weights or FusionWeights()
    scores: dict[int, float] = {}
    channels = (
        (admitted.lexical_keys, weights.lexical),
        (admitted.vector_keys, weights.vector),
        (admitted.time_keys, weights.time),
    )
    for channel, weight in channels:
        for rank, key in enumerate(channel, start=1):
            scores[key] = scores.get(key, 0.0) + weight / (k + rank)
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
        scores=tuple(scores[key] for key in order),
    )


def with_neighbours(
    search: FamilySearch, neighbours: Mapping[int, tuple[int, ...]], weight: float
) -> tuple[int, ...]:
    """The fused order with the hits' thread neighbours fused in.

    A neighbour scores ``weight`` times the fused score of the best hit it sits next
    to, or its own fused score if it is a hit that ranks higher by itself: a reply that
    shares no word with the query ranks just below the question it answers.
    """
    fused = dict(zip(search.ranked, search.scores, strict=True))
    scored = dict(fused)
    for hit, around in neighbours.items():
        lifted = weight * fused.get(hit, 0.0)
        for key in around:
            scored[key] = max(scored.get(key, 0.0), lifted)
    return tuple(sorted(scored, key=scored.__getitem__, reverse=True))
