"""The committed state of one prepare, and what the gate and ``RecallEffort`` read of it.

Pure: the coordinator alone mutates a :class:`Committed`; these functions only read it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import attrs
import numpy as np

from .builder import BudgetView
from .recall._admission import AdmissionFloor
from .recall._effort import RecallEffort
from .recall._gate import FamilyView

if TYPE_CHECKING:
    from collections.abc import Mapping

    from ._families import Family
    from ._limits import Limits
    from ._rounds import SearchOutcome, SearchSpec
    from .builder import BuildResult
    from .recall._admission import AdmissionCounts
    from .recall._analysis import AnalysedQuery
    from .recall._evidence import Evidence
    from .recall._policy import RecallSufficiencyPolicy


@attrs.define
class Committed:
    """The committed state of one prepare: only the coordinator touches it."""

    specs: tuple[SearchSpec, ...]
    outcomes: dict[SearchSpec, SearchOutcome]
    known: dict[SearchSpec, frozenset[int]]
    candidates: dict[Family, tuple[Evidence, ...]]
    candidates_by_round: list[int]
    floor: AdmissionFloor
    actions: list[str] = attrs.Factory(list)
    #: Candidates offered as a hit's thread neighbour, over the committed rounds.
    neighbours: int = 0


def lowest_floor(policy: RecallSufficiencyPolicy) -> AdmissionFloor:
    """The lowest floor any expansion round of ``policy`` may apply."""
    by_action = {"admission": policy.admission, "policy-floor": policy.policy_floor}
    actions = policy.actions[: policy.max_expansions]
    floors = [by_action[action] for action in actions if action in by_action]
    if not floors:
        return AdmissionFloor()
    lexical = [f.required_matches for f in floors if f.required_matches is not None]
    vector = [f.min_similarity for f in floors if f.min_similarity is not None]
    return AdmissionFloor(min(lexical, default=None), min(vector, default=None))


def reachable(outcome: SearchOutcome, floor: AdmissionFloor, terms: int) -> int:
    """Pool candidates ``floor`` would admit beyond those the outcome admitted."""
    pool = outcome.pool
    lexical = int(np.count_nonzero(pool.lexical_matches >= floor.lexical_floor(terms)))
    vector = int(np.count_nonzero(pool.vector_similarities >= floor.vector_floor()))
    return max(0, lexical + vector + len(pool.time_keys) - outcome.search.counts.admitted)


def family_views(
    state: Committed,
    limits: Limits,
    floor: AdmissionFloor,
    query: AnalysedQuery,
    neighbours_next: bool = False,
) -> list[FamilyView]:
    """The gate's view of each searchable family, from the last committed round.

    When the next action is ``"neighbours"``, a memory family with committed hits can
    still grow (their neighbours are unknown until looked up).
    """
    by_family: dict[Family, list[SearchOutcome]] = {}
    for spec in state.specs:
        by_family.setdefault(spec.family, []).append(state.outcomes[spec])
    terms = len(query.terms)
    views = [
        _view(family, by_family.get(family, []), len(candidates), limits, floor, terms)
        for family, candidates in state.candidates.items()
    ]
    if neighbours_next:
        views = [
            attrs.evolve(view, reachable=1) if view.family == "memory" and view.candidates
            else view
            for view in views
        ]  # fmt: skip
    return views


def _view(
    family: Family,
    searches: list[SearchOutcome],
    candidates: int,
    limits: Limits,
    floor: AdmissionFloor,
    terms: int,
) -> FamilyView:
    similarities: list[float] = []
    retrieved = admitted = 0
    best_overlap = 0.0
    for outcome in searches:
        search = outcome.search
        retrieved += search.counts.retrieved
        admitted += search.counts.admitted
        best_overlap = max(best_overlap, search.best_overlap)
        if search.best_similarity is not None:
            similarities.append(search.best_similarity)
        if search.next_similarity is not None:
            similarities.append(search.next_similarity)
    similarities.sort(reverse=True)
    return FamilyView(
        family=family,
        ceiling=limits.ceiling(family),
        retrieved=retrieved,
        admitted=admitted,
        candidates=candidates,
        scored=family != "experience",
        best_similarity=similarities[0] if similarities else None,
        next_similarity=similarities[1] if len(similarities) > 1 else None,
        best_overlap=best_overlap,
        reach=lambda: sum(reachable(o, floor, terms) for o in searches),
    )


def budget_view(build: BuildResult, max_bytes: int) -> BudgetView:
    """The budget probe's view of a fit: the Builder's own fitting pass, reused."""
    return BudgetView.from_fit(
        max_bytes, build.delivered_count, build.omissions, build.content_bytes
    )


def effort_of(
    policy: str, reason: str, rounds: int, state: Committed, build: BuildResult
) -> RecallEffort:
    counts: Mapping[SearchSpec, AdmissionCounts] = {
        spec: outcome.search.counts for spec, outcome in state.outcomes.items()
    }
    omissions = build.omissions
    return RecallEffort(
        policy=policy,
        assessment=reason,
        rounds=rounds,
        expansion_actions=tuple(state.actions),
        candidates_by_round=tuple(state.candidates_by_round),
        admission_by_family=tuple(counts[spec] for spec in state.specs),
        added_embeddings=0,  # every round reuses the round-0 query vector
        added_generation_calls=0,  # glean calls no model
        truncated_items=omissions.truncated_items,
        dropped_items=omissions.dropped_items,
        dropped_below_min_bytes=omissions.dropped_below_min_bytes,
        dropped_no_fitting_truncation=omissions.dropped_no_fitting_truncation,
    )
