"""What the gate sees of a family: its searches' counts and scores, and what a lower
floor could still admit from the pools already retrieved. Pure: reads only its arguments.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..vocabulary._families import rules
from ._admission import AdmissionFloor
from ._gate import FamilyView

if TYPE_CHECKING:
    from collections.abc import Sequence

    from ..vocabulary._evidence import Pool
    from ..vocabulary._families import Family
    from ._fusion import FamilySearch
    from ._policy import RecallSufficiencyPolicy


def lowest_floor(policy: RecallSufficiencyPolicy) -> AdmissionFloor:
    """The lowest floor any expansion round of ``policy`` may apply."""
    policy = policy.calibrated()
    by_action = {"admission": policy.admission, "policy-floor": policy.policy_floor}
    actions = policy.actions[: policy.max_expansions]
    floors = [floor for action in actions if (floor := by_action.get(action)) is not None]
    if not floors:
        return AdmissionFloor()
    lexical = [f.required_matches for f in floors if f.required_matches is not None]
    vector = [f.min_similarity for f in floors if f.min_similarity is not None]
    return AdmissionFloor(min(lexical, default=None), min(vector, default=None))


def reachable(pool: Pool, search: FamilySearch, floor: AdmissionFloor, terms: int) -> int:
    """Candidates of ``pool`` that ``floor`` would admit beyond those ``search`` admitted."""
    lexical = int(np.count_nonzero(pool.lexical_matches >= floor.lexical_floor(terms)))
    vector = int(np.count_nonzero(pool.vector_similarities >= floor.vector_floor()))
    return max(0, lexical + vector + len(pool.time_candidates) - search.counts.admitted)


def family_view(
    family: Family,
    searches: Sequence[tuple[Pool, FamilySearch, int]],
    *,
    candidates: int,
    ceiling: int,
    floor: AdmissionFloor,
) -> FamilyView:
    """The gate's view of one family over its searches: per scope and query, the pool,
    its admitted and fused search and the query's distinct term count.

    ``candidates`` is how many the family offers now and ``floor`` the lowest floor the
    policy may still apply; what that floor could add is computed only if the gate asks.
    """
    similarities: list[float] = []
    retrieved = admitted = 0
    best_overlap = 0.0
    for _, search, _ in searches:
        retrieved += search.counts.retrieved
        admitted += search.counts.admitted
        best_overlap = max(best_overlap, search.best_overlap)
        similarities.extend(
            s for s in (search.best_similarity, search.next_similarity) if s is not None
        )
    similarities.sort(reverse=True)
    return FamilyView(
        family=family,
        ceiling=ceiling,
        retrieved=retrieved,
        admitted=admitted,
        candidates=candidates,
        scored=rules(family).scored,
        best_similarity=similarities[0] if similarities else None,
        next_similarity=similarities[1] if len(similarities) > 1 else None,
        best_overlap=best_overlap,
        reach=lambda: sum(
            reachable(pool, search, floor, terms) for pool, search, terms in searches
        ),
    )
