"""The recall-sufficiency policy and the expander: what a second look may do. Pure.

A policy is a frozen, versioned value: the gate's thresholds, the two expansion floors,
the expansion actions in round order and the fusion weights. The expander turns an
expansion round into a :class:`SearchPlan`: a lower admission floor on the pool already
retrieved, or (``"neighbours"``, policy v2) the committed hits' thread neighbours. It
never names a family, never raises a limit, never changes the search mode or the byte
budget.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

import attrs

from ..vocabulary._errors import InvalidRequestError
from ._admission import AdmissionFloor
from ._fusion import FusionWeights

if TYPE_CHECKING:
    from ..vocabulary._calibration import Calibration

#: The expansion actions of the floor-only policy, in round order.
FLOOR_ACTIONS: Final = ("admission", "policy-floor")
#: The action that offers the committed hits' thread neighbours instead of a lower floor.
NEIGHBOURS: Final = "neighbours"
#: Policy v2's: the committed hits' thread neighbours first, then the admission floor.
CONVERSATION_ACTIONS: Final = (NEIGHBOURS, "admission")
ACTIONS: Final = frozenset({*FLOOR_ACTIONS, NEIGHBOURS})
MAX_EXPANSIONS: Final = 2


def _share(instance: object, attribute: attrs.Attribute[float], value: float) -> None:
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
        raise InvalidRequestError(f"RecallSufficiencyPolicy.{attribute.name} must be in 0..1")


def _count(instance: object, attribute: attrs.Attribute[int], value: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise InvalidRequestError(
            f"RecallSufficiencyPolicy.{attribute.name} must be a non-negative integer"
        )


def _expansions(instance: object, attribute: attrs.Attribute[int], value: int) -> None:
    _count(instance, attribute, value)
    if value > MAX_EXPANSIONS:
        raise InvalidRequestError(
            f"RecallSufficiencyPolicy.{attribute.name} must be at most {MAX_EXPANSIONS}"
        )


def _actions(instance: object, attribute: attrs.Attribute[tuple[str, ...]], value: object) -> None:
    if (
        not isinstance(value, tuple)
        or len(value) != MAX_EXPANSIONS
        or any(action not in ACTIONS for action in value)
    ):
        raise InvalidRequestError(
            f"RecallSufficiencyPolicy.actions must be {MAX_EXPANSIONS} of {sorted(ACTIONS)}"
        )


def _floor(instance: object, attribute: attrs.Attribute[AdmissionFloor], value: object) -> None:
    if not isinstance(value, AdmissionFloor):
        raise InvalidRequestError(
            f"RecallSufficiencyPolicy.{attribute.name} must be a glean.AdmissionFloor"
        )


def _fusion(instance: object, attribute: attrs.Attribute[FusionWeights], value: object) -> None:
    if not isinstance(value, FusionWeights):
        raise InvalidRequestError("RecallSufficiencyPolicy.fusion must be a glean.FusionWeights")


@attrs.frozen(kw_only=True)
class RecallSufficiencyPolicy:
    """Thresholds of the sufficiency gate and the floors of its two expansion rounds.

    Thresholds are calibrated per embedder: cosine values depend on it.

    Attributes:
        policy: versioned id, reported in every ``RecallEffort``.
        max_expansions: committed expansion rounds allowed (at most 2).
        min_candidates: fewer distinct evidence identities than this is thin.
        min_top_similarity: a best admitted cosine below this is a weak top hit.
        min_lexical_overlap: a best lexical candidate holding a smaller share of the
            query's terms (for queries of at least 3 terms) is weak lexical evidence.
        min_unused_bytes: less room than this left after fitting is budget-bound.
        sufficient_overlap: a best lexical candidate holding at least this share of the
            query's terms is a precise hit: recall is sufficient however few candidates.
        admission: the floor of the ``"admission"`` action.
        policy_floor: the floor of the ``"policy-floor"`` action.
        actions: the expansion actions in round order: the floor-only
            ``("admission", "policy-floor")``, or v2's ``("neighbours", "admission")``.
        fusion: the fusion weights of every round's channels.
    """

    policy: str = "glean.recall-gate.v1"
    max_expansions: int = attrs.field(default=MAX_EXPANSIONS, validator=_expansions)
    min_candidates: int = attrs.field(default=3, validator=_count)
    min_top_similarity: float = attrs.field(default=0.45, validator=_share)
    min_lexical_overlap: float = attrs.field(default=0.5, validator=_share)
    min_unused_bytes: int = attrs.field(default=512, validator=_count)
    sufficient_overlap: float = attrs.field(default=0.75, validator=_share)
    # Calibrated for the hashing embedder on the synthetic workload (bench/README.md,
    # `python -m bench.calibrate`): a paraphrase's evidence scores below the filler
    # (cosine p10 0.16 against a filler p99.9 of 0.23), so lowering the cosine floor
    # admits noise. Round 1 lowers the lexical floor to one query term; the round-2
    # floor equals it, so with this embedder a second look never runs. An embedder whose
    # cosines carry meaning gets a lower policy floor from its calibration.
    admission: AdmissionFloor = attrs.field(
        factory=lambda: AdmissionFloor(required_matches=1, min_similarity=0.3), validator=_floor
    )
    policy_floor: AdmissionFloor = attrs.field(
        factory=lambda: AdmissionFloor(required_matches=1, min_similarity=0.3), validator=_floor
    )
    actions: tuple[str, ...] = attrs.field(default=FLOOR_ACTIONS, validator=_actions)
    fusion: FusionWeights = attrs.field(factory=FusionWeights, validator=_fusion)

    @classmethod
    def conversational(cls) -> RecallSufficiencyPolicy:
        """Policy v2: neighbours join only when the gate asks, as expansion round 1
        (``"neighbours"``), then round 2 lowers the admission floor; round 0 fuses no
        neighbours. The floor-only policy is ``RecallSufficiencyPolicy()``."""
        return cls(
            policy="glean.recall-gate.v2",
            actions=CONVERSATION_ACTIONS,
            fusion=FusionWeights(neighbour_share=0.0),
        )


def calibrate(policy: RecallSufficiencyPolicy, calibration: Calibration) -> RecallSufficiencyPolicy:
    """``policy`` with the embedder's thresholds wherever it keeps the default ones.

    Round 1 admits one-term matches at the embedder's baseline, round 2 also lowers the
    cosine floor to its expansion floor; a field the caller set stays as set.
    """
    defaults = RecallSufficiencyPolicy()
    admission, floor = policy.admission, policy.policy_floor
    if admission == defaults.admission:
        admission = AdmissionFloor(required_matches=1, min_similarity=calibration.baseline)
    if floor == defaults.policy_floor:
        lowest = min(calibration.expansion, calibration.baseline)
        floor = AdmissionFloor(required_matches=1, min_similarity=lowest)
    top = policy.min_top_similarity
    if top == defaults.min_top_similarity:
        top = calibration.min_top_similarity
    return attrs.evolve(policy, admission=admission, policy_floor=floor, min_top_similarity=top)


@attrs.frozen
class SearchPlan:
    """One expansion round: its named action and the admission floor it applies
    (``None``: the floor of the last committed round, as ``"neighbours"`` keeps it)."""

    round: int
    action: str
    floor: AdmissionFloor | None


class RecallExpander:
    """Chooses each expansion round's bounded step. Pure: reads only its arguments."""

    @staticmethod
    def plan(round: int, policy: RecallSufficiencyPolicy) -> SearchPlan:
        """The plan of expansion round ``round`` (1 or 2).

        Raises:
            InvalidRequestError: (a ValueError) ``policy`` is not a
                :class:`RecallSufficiencyPolicy`, or ``round`` is not an integer the
                policy allows as an expansion round.
        """
        if not isinstance(policy, RecallSufficiencyPolicy):
            raise InvalidRequestError("policy must be a glean.RecallSufficiencyPolicy")
        if (
            isinstance(round, bool)
            or not isinstance(round, int)
            or not 1 <= round <= policy.max_expansions
        ):
            raise InvalidRequestError(
                f"round must be an integer in 1..{policy.max_expansions}:"
                f" round {round!r} is not an expansion round of {policy.policy}"
            )
        action = policy.actions[round - 1]
        floors = {"admission": policy.admission, "policy-floor": policy.policy_floor}
        return SearchPlan(round=round, action=action, floor=floors.get(action))
