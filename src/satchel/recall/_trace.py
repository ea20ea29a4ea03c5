"""Where each candidate of one search stood: its rank in every channel and its fused
score. Pure.

Only an explained prepare (``Runtime.explain_context``) traces its searches: a plain
prepare never calls anything here, so receipts cost its hot path nothing. A trace names
store keys, never text, and must never be put on a span or into ``RecallEffort``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import attrs

from ._admission import admit
from ._fusion import neighbour_scores

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

    from ..vocabulary._evidence import Evidence, Pool
    from ._admission import AdmissionFloor, Admitted
    from ._fusion import FamilySearch

#: A key's rank per channel (1-based), by channel name.
Ranks = dict[str, int]


@attrs.frozen
class SearchTrace:
    """One search as an explanation reads it.

    Attributes:
        ranked: the search's order of keys, best first (a hit's thread neighbours
            included where they joined).
        channels: each ranked key's rank in every channel that admitted it.
        scores: each ranked key's fused score.
        passed_over: the keys the search read and passed over because the request
            excludes their evidence, with that evidence, in rank order.
    """

    ranked: tuple[int, ...]
    channels: Mapping[int, Ranks]
    scores: Mapping[int, float]
    passed_over: tuple[tuple[int, Evidence], ...] = ()


def trace_search(
    admitted: Admitted,
    search: FamilySearch,
    ranked: tuple[int, ...],
    around: Mapping[int, tuple[int, ...]],
    share: float,
) -> SearchTrace:
    """The trace of a search that fused ``admitted`` into ``search`` and ranked
    ``ranked``, where ``around`` holds the thread neighbours of the hits that brought
    theirs (empty: none) at ``share`` of their hit's score."""
    channels: dict[int, Ranks] = {}
    # A conversation's full-text channel ranks by passage: a turn's rank there is its
    # passage's, which it may hold without a query word of its own.
    lexical = admitted.lexical_keys if admitted.context_keys is None else admitted.context_keys
    lists: list[tuple[str, Iterable[int]]] = [
        ("lexical", lexical.tolist()),
        ("vector", admitted.vector_keys.tolist()),
        ("time", admitted.time_keys.tolist()),
        ("neighbour", dict.fromkeys(key for near in around.values() for key in near)),
    ]
    for name, keys in lists:
        for rank, key in enumerate(keys, 1):
            channels.setdefault(key, {}).setdefault(name, rank)
    scores = (
        neighbour_scores(search, around, share)
        if around
        else dict(zip(search.ranked, search.scores, strict=True))
    )
    return SearchTrace(ranked, channels, scores)


def below_floor(pool: Pool, term_count: int, floor: AdmissionFloor) -> list[tuple[int, Ranks]]:
    """The keys ``pool`` retrieved that ``floor`` admits in no channel, with their rank in
    each channel that retrieved them, best rank first."""
    admitted = admit(pool, term_count, floor)
    passed = {
        *admitted.lexical_keys.tolist(),
        *admitted.vector_keys.tolist(),
        *admitted.time_keys.tolist(),
    }
    found: dict[int, Ranks] = {}
    for name, keys in (("lexical", pool.lexical_keys), ("vector", pool.vector_keys)):
        for rank, key in enumerate(keys.tolist(), 1):
            if key not in passed:
                found.setdefault(key, {}).setdefault(name, rank)
    return sorted(found.items(), key=lambda item: min(item[1].values()))
