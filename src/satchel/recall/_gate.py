"""The recall-sufficiency gate: a cheap, model-free judgement of whether recall was thin.

Pure: it reads only its arguments. It separates thin recall, which a lower admission
floor on the same pool can help, from everything a second look cannot fix: no content,
a budget that is already the constraint, families at their ceilings, pools with nothing
left to admit.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

import attrs

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from ..vocabulary._analysis import AnalysedQuery
    from ..vocabulary._budget import BudgetView
    from ..vocabulary._families import Family
    from ._policy import RecallSufficiencyPolicy

#: Reasons that end recall without a further round.
SUFFICIENT: Final = "sufficient"
NO_CONTENT: Final = "no-content"
BUDGET_BOUND: Final = "budget-bound"
SATURATED: Final = "saturated"
POOL_EXHAUSTED: Final = "pool-exhausted"
#: Reasons that call for an expansion round.
THIN_FAMILIES: Final = "thin-families"
THIN_CANDIDATES: Final = "thin-candidates"
WEAK_TOP_1: Final = "weak-top-1"
WEAK_LEXICAL: Final = "weak-lexical"
#: Final reasons when expansion stopped short.
AT_MAX_ROUNDS: Final = "at-max-rounds"
EXPANSION_FAILED: Final = "expansion-failed"
EXPANSION_TIMEOUT: Final = "expansion-timeout"
GATE_FAILED: Final = "gate-failed"


@attrs.frozen
class FamilyView:
    """What the gate sees of one selected searchable family, across its scopes.

    Experience carries no score: ``scored`` is False and its similarity and overlap
    are not read, only its counts and coverage. ``reachable`` counts pool candidates the
    policy's lowest floor would admit beyond those admitted now (None: assume every
    unadmitted candidate could be).
    """

    family: Family
    ceiling: int
    retrieved: int
    admitted: int
    candidates: int
    scored: bool = True
    best_similarity: float | None = None
    next_similarity: float | None = None
    best_overlap: float = 0.0
    reachable: int | None = None
    #: Computes ``reachable`` only if the gate asks (it is the costliest signal).
    reach: Callable[[], int] | None = attrs.field(default=None, eq=False, repr=False)

    @property
    def can_grow(self) -> bool:
        """A lower floor could add candidates: room under the ceiling, and pool candidates
        that the policy's floors would admit but the current one does not."""
        if self.candidates >= self.ceiling:
            return False
        if self.reachable is not None:
            return self.reachable > 0
        return (self.reach() if self.reach is not None else self.retrieved - self.admitted) > 0


@attrs.frozen
class GateAssessment:
    """The gate's verdict, its reason and the signal values behind it."""

    sufficient: bool
    reason: str
    signals: dict[str, float] = attrs.field(factory=dict, eq=False)


class RecallSufficiencyGate:
    """Judges one round's candidate set. Pure: reads only its arguments."""

    @staticmethod
    def assess(
        *,
        query: AnalysedQuery,
        families: Sequence[FamilyView],
        budget: BudgetView,
        policy: RecallSufficiencyPolicy,
    ) -> GateAssessment:
        policy = policy.calibrated()
        signals = _signals(families, budget)
        if not families or signals["retrieved"] == 0:
            return GateAssessment(True, NO_CONTENT, signals)
        if budget.dropped_items or budget.unused_bytes < policy.min_unused_bytes:
            return GateAssessment(True, BUDGET_BOUND, signals)
        if signals["best_overlap"] >= policy.sufficient_overlap:
            return GateAssessment(True, SUFFICIENT, signals)  # a precise lexical hit
        if all(view.candidates >= view.ceiling for view in families if view.retrieved):
            return GateAssessment(True, SATURATED, signals)
        if not any(view.can_grow for view in families):
            return GateAssessment(True, POOL_EXHAUSTED, signals)
        reason = _thinness(query, families, signals, policy)
        return GateAssessment(reason is None, reason or SUFFICIENT, signals)


def _thinness(
    query: AnalysedQuery,
    families: Sequence[FamilyView],
    signals: dict[str, float],
    policy: RecallSufficiencyPolicy,
) -> str | None:
    if any(view.retrieved and not view.admitted for view in families):
        return THIN_FAMILIES  # a family found something and admitted none of it
    if signals["candidates"] < policy.min_candidates:
        return THIN_CANDIDATES
    # Only families that found something carry a score worth judging: an empty memory
    # family beside experiences is absence of content, not a weak hit.
    scored = [view for view in families if view.scored and view.retrieved]
    assert policy.min_top_similarity is not None  # the policy is calibrated
    if scored and signals["best_similarity"] < policy.min_top_similarity:
        return WEAK_TOP_1
    if len(query.terms) >= 3 and scored and signals["best_overlap"] < policy.min_lexical_overlap:
        return WEAK_LEXICAL
    return None


def _signals(families: Sequence[FamilyView], budget: BudgetView) -> dict[str, float]:
    # Only what a decision reads is a signal: the gate judges the best similarity alone.
    scored = [view for view in families if view.scored and view.retrieved]
    similarities = [view.best_similarity for view in scored if view.best_similarity is not None]
    best = max(similarities, default=0.0)
    return {
        "retrieved": float(sum(view.retrieved for view in families)),
        "admitted": float(sum(view.admitted for view in families)),
        "candidates": float(sum(view.candidates for view in families)),
        "covered_families": float(sum(1 for view in families if view.admitted)),
        "best_similarity": best,
        "best_overlap": max((view.best_overlap for view in scored), default=0.0),
        "unused_bytes": float(budget.unused_bytes),
        "dropped_items": float(budget.dropped_items),
    }
