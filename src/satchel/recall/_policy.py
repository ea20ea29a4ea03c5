"""The recall-sufficiency policy and the expander: what a second look may do. Pure.

A policy is a frozen, versioned value: the gate's thresholds, the two expansion floors,
the expansion actions in step order and the fusion weights. The expander alone turns
the steps taken into the next step's :class:`SearchPlan`: a lower admission floor on
the pool already retrieved, or (``"neighbours"``, policy v2) the committed hits' thread
neighbours. It never names a family, never raises a limit, never changes the search
mode or the byte budget.
"""

from __future__ import annotations

from typing import Final

import attrs

from ..vocabulary._calibration import Calibration
from ..vocabulary._errors import InvalidRequestError
from ._admission import AdmissionFloor

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


def _name(instance: object, attribute: attrs.Attribute[str], value: object) -> None:
    if not isinstance(value, str) or not value or ";" in value:
        raise InvalidRequestError(
            "RecallSufficiencyPolicy.policy must be a non-empty name without ';'"
        )


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
    if value is not None and not isinstance(value, AdmissionFloor):
        raise InvalidRequestError(
            f"RecallSufficiencyPolicy.{attribute.name} must be a satchel.AdmissionFloor or None"
        )


def _optional_share(instance: object, attribute: attrs.Attribute[float], value: object) -> None:
    if value is not None:
        _share(instance, attribute, value)  # type: ignore[arg-type]


@attrs.frozen(kw_only=True)
class RecallSufficiencyPolicy:
    """Thresholds of the sufficiency gate and the floors of its two expansion rounds.

    Cosine values mean different things per embedder, so the three cosine settings
    default to ``None``: "the embedder's calibration" (:class:`satchel.Calibration`). The
    runtime fills them from its embedder; a value the caller sets is kept as set, even
    one equal to a calibrated value. Round 0 is no part of a policy: what round 0 does
    (its floor, its fusion weights) is the runtime's, so a prepare the gate does not
    expand is the gate-off prepare byte for byte.

    Attributes:
        policy: the policy's versioned name; ``RecallEffort.policy`` reports it with the
            effective thresholds (:meth:`effective_id`).
        max_expansions: committed expansion rounds allowed (at most 2).
        min_candidates: fewer distinct evidence identities than this is thin.
        min_top_similarity: a best admitted cosine below this is a weak top hit (None:
            the embedder's calibration).
        min_lexical_overlap: a best lexical candidate holding a smaller share of the
            query's terms (for queries of at least 3 terms) is weak lexical evidence.
        min_unused_bytes: less room than this left after fitting is budget-bound.
        sufficient_overlap: a best lexical candidate holding at least this share of the
            query's terms is a precise hit: recall is sufficient however few candidates.
        admission: the floor of the ``"admission"`` action (None: one query term at the
            embedder's baseline cosine).
        policy_floor: the floor of the ``"policy-floor"`` action (None: one query term at
            the embedder's lowest expansion cosine).
        actions: the expansion actions in round order: the floor-only
            ``("admission", "policy-floor")``, or v2's ``("neighbours", "admission")``.
    """

    policy: str = attrs.field(default="satchel.recall-gate.v1", validator=_name)
    max_expansions: int = attrs.field(default=MAX_EXPANSIONS, validator=_expansions)
    min_candidates: int = attrs.field(default=3, validator=_count)
    min_top_similarity: float | None = attrs.field(default=None, validator=_optional_share)
    min_lexical_overlap: float = attrs.field(default=0.5, validator=_share)
    min_unused_bytes: int = attrs.field(default=512, validator=_count)
    sufficient_overlap: float = attrs.field(default=0.75, validator=_share)
    admission: AdmissionFloor | None = attrs.field(default=None, validator=_floor)
    policy_floor: AdmissionFloor | None = attrs.field(default=None, validator=_floor)
    actions: tuple[str, ...] = attrs.field(default=FLOOR_ACTIONS, validator=_actions)

    @classmethod
    def conversational(cls) -> RecallSufficiencyPolicy:
        """Policy v2: expansion round 1 offers the committed hits' thread neighbours
        (``"neighbours"``), round 2 lowers the admission floor. Whether round 0 fuses
        neighbours is the runtime's ``fusion`` option (``FusionWeights(neighbour_share=0)``
        leaves them to the gate). The floor-only policy is ``RecallSufficiencyPolicy()``."""
        return cls(policy="satchel.recall-gate.v2", actions=CONVERSATION_ACTIONS)

    def calibrated(self, calibration: Calibration | None = None) -> RecallSufficiencyPolicy:
        """This policy with every ``None`` threshold taken from ``calibration`` (the
        design's :class:`satchel.Calibration` when None)."""
        if None not in (self.admission, self.policy_floor, self.min_top_similarity):
            return self
        return calibrate(self, calibration or Calibration())

    def effective_id(self) -> str:
        """The policy's name with every effective threshold, as ``RecallEffort`` reports
        it: two runs with the same id used the same thresholds, and
        :meth:`from_effective_id` rebuilds the policy from it."""
        policy = self.calibrated()
        assert policy.admission is not None
        assert policy.policy_floor is not None
        fields = {
            "max_expansions": policy.max_expansions,
            "min_candidates": policy.min_candidates,
            "min_top_similarity": policy.min_top_similarity,
            "min_lexical_overlap": policy.min_lexical_overlap,
            "min_unused_bytes": policy.min_unused_bytes,
            "sufficient_overlap": policy.sufficient_overlap,
            "admission": _floor_text(policy.admission),
            "policy_floor": _floor_text(policy.policy_floor),
            "actions": "+".join(policy.actions),
        }
        return policy.policy + "".join(f";{name}={value}" for name, value in fields.items())

    @classmethod
    def from_effective_id(cls, text: str) -> RecallSufficiencyPolicy:
        """The policy an :meth:`effective_id` names.

        Raises:
            InvalidRequestError: ``text`` is not an effective policy id.
        """
        name, *pairs = text.split(";")
        try:
            fields = dict(pair.split("=", 1) for pair in pairs)
            return cls(
                policy=name,
                max_expansions=int(fields["max_expansions"]),
                min_candidates=int(fields["min_candidates"]),
                min_top_similarity=float(fields["min_top_similarity"]),
                min_lexical_overlap=float(fields["min_lexical_overlap"]),
                min_unused_bytes=int(fields["min_unused_bytes"]),
                sufficient_overlap=float(fields["sufficient_overlap"]),
                admission=_floor_of(fields["admission"]),
                policy_floor=_floor_of(fields["policy_floor"]),
                actions=tuple(fields["actions"].split("+")),
            )
        except (KeyError, ValueError) as exc:
            raise InvalidRequestError(f"not an effective policy id: {text!r:.120}") from exc


def _floor_text(floor: AdmissionFloor) -> str:
    return f"{floor.required_matches}/{floor.min_similarity}"


def _floor_of(text: str) -> AdmissionFloor:
    matches, similarity = text.split("/")
    return AdmissionFloor(
        None if matches == "None" else int(matches),
        None if similarity == "None" else float(similarity),
    )


def calibrate(policy: RecallSufficiencyPolicy, calibration: Calibration) -> RecallSufficiencyPolicy:
    """``policy`` with ``calibration``'s thresholds wherever it leaves them to the embedder.

    Round 1 admits one-term matches at the embedder's baseline cosine, round 2 also lowers
    the cosine floor to its expansion floor; a field the caller set stays as set.
    """
    admission, floor, top = policy.admission, policy.policy_floor, policy.min_top_similarity
    if admission is None:
        admission = AdmissionFloor(required_matches=1, min_similarity=calibration.baseline)
    if floor is None:
        lowest = min(calibration.expansion, calibration.baseline)
        floor = AdmissionFloor(required_matches=1, min_similarity=lowest)
    if top is None:
        top = calibration.min_top_similarity
    return attrs.evolve(policy, admission=admission, policy_floor=floor, min_top_similarity=top)


@attrs.frozen
class SearchPlan:
    """One expansion step: its number (``round``: 1 or 2, the policy's first or second
    action), its named action and the admission floor it applies (``None``: the floor of
    the last committed round, as ``"neighbours"`` keeps it)."""

    round: int
    action: str
    floor: AdmissionFloor | None


class RecallExpander:
    """Decides each expansion step: the only place that maps a policy and the steps
    already taken to the next action. Pure: reads only its arguments.

    A step is the policy's next action, handed out whether or not it then runs a round
    (a step with nothing to search runs none), so step numbers and round indices differ.
    """

    @staticmethod
    def next_step(policy: RecallSufficiencyPolicy, taken: int) -> SearchPlan | None:
        """The plan of the step after ``taken`` steps; None once the policy allows no
        more (``max_expansions`` taken)."""
        if taken >= policy.max_expansions:
            return None
        return RecallExpander.plan(taken + 1, policy)

    @staticmethod
    def plan(round: int, policy: RecallSufficiencyPolicy) -> SearchPlan:
        """The plan of expansion step ``round`` (1 or 2). The public name of the
        parameter is the design's (it is :attr:`SearchPlan.round` too); inside satchel
        it counts steps taken, which can outnumber the rounds run.

        Raises:
            InvalidRequestError: (a ValueError) ``policy`` is not a
                :class:`RecallSufficiencyPolicy`, or ``round`` is not an integer the
                policy allows as an expansion step.
        """
        step = round  # the steps taken so far, plus this one
        if not isinstance(policy, RecallSufficiencyPolicy):
            raise InvalidRequestError("policy must be a satchel.RecallSufficiencyPolicy")
        if (
            isinstance(step, bool)
            or not isinstance(step, int)
            or not 1 <= step <= policy.max_expansions
        ):
            raise InvalidRequestError(
                f"round must be an integer in 1..{policy.max_expansions}:"
                f" round {step!r} is not an expansion round of {policy.policy}"
            )
        action = policy.actions[step - 1]
        policy = policy.calibrated()
        floors = {"admission": policy.admission, "policy-floor": policy.policy_floor}
        return SearchPlan(round=step, action=action, floor=floors.get(action))
