"""The recall-sufficiency policy (frozen, versioned, validated) and the expander's plans."""

from __future__ import annotations

from typing import Any

import attrs
import pytest

from satchel.recall._admission import DEFAULT_MIN_SIMILARITY, AdmissionFloor, required_matches
from satchel.recall._policy import RecallExpander, RecallSufficiencyPolicy, SearchPlan
from satchel.vocabulary._analysis import MAX_QUERY_TERMS
from satchel.vocabulary._errors import InvalidRequestError

POLICY = RecallSufficiencyPolicy()


def test_policy_defaults_and_version_id() -> None:
    """The default policy is the versioned v1 gate; its cosine settings are left to the
    embedder's calibration, and the design's calibration gives the documented values."""
    assert POLICY.policy == "satchel.recall-gate.v1"
    assert POLICY.max_expansions == 2
    assert POLICY.min_candidates == 3
    assert (POLICY.min_top_similarity, POLICY.admission, POLICY.policy_floor) == (None,) * 3
    assert POLICY.min_lexical_overlap == 0.5
    assert POLICY.min_unused_bytes == 512
    assert POLICY.sufficient_overlap == 0.75
    calibrated = POLICY.calibrated()
    assert calibrated.min_top_similarity == 0.45
    assert calibrated.admission == AdmissionFloor(required_matches=1, min_similarity=0.3)
    assert calibrated.policy_floor == AdmissionFloor(required_matches=1, min_similarity=0.3)


def test_policy_fields_are_keyword_only() -> None:
    """Thresholds are named at construction; positional arguments are refused."""
    with pytest.raises(TypeError):
        RecallSufficiencyPolicy("satchel.recall-gate.v1")  # type: ignore[call-arg]


def test_policies_with_equal_fields_are_equal_and_hashable() -> None:
    """A policy is a value: equal fields compare equal and hash alike."""
    assert RecallSufficiencyPolicy() == POLICY
    assert hash(RecallSufficiencyPolicy()) == hash(POLICY)
    assert RecallSufficiencyPolicy(min_candidates=4) != POLICY


def test_policy_is_frozen() -> None:
    """Assigning to a field raises FrozenInstanceError and leaves the value unchanged."""
    policy = RecallSufficiencyPolicy()
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        policy.min_candidates = 10  # type: ignore[misc]
    assert policy.min_candidates == 3


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("min_top_similarity", 1.5),
        ("min_top_similarity", -0.1),
        ("min_top_similarity", "0.5"),
        ("min_top_similarity", True),
        ("min_lexical_overlap", 1.01),
        ("min_lexical_overlap", None),
        ("max_expansions", 3),
        ("max_expansions", -1),
        ("max_expansions", 1.0),
        ("min_candidates", -1),
        ("min_candidates", 2.5),
        ("min_candidates", False),
        ("min_unused_bytes", -512),
        ("min_unused_bytes", "512"),
    ],
)
def test_invalid_field_raises_invalid_request_naming_it(field: str, value: object) -> None:
    """A bad threshold raises InvalidRequestError (a ValueError) whose message names the field."""
    kwargs: dict[str, Any] = {field: value}
    with pytest.raises(InvalidRequestError, match=rf"RecallSufficiencyPolicy\.{field}\b"):
        RecallSufficiencyPolicy(**kwargs)


@pytest.mark.parametrize("field", ["admission", "policy_floor"])
@pytest.mark.parametrize("value", [5, 0.3, (1, 0.3)])
def test_floors_must_be_admission_floors(field: str, value: object) -> None:
    """admission and policy_floor accept an AdmissionFloor or None, naming the field otherwise."""
    kwargs: dict[str, Any] = {field: value}
    with pytest.raises(
        InvalidRequestError,
        match=rf"^RecallSufficiencyPolicy\.{field} must be a satchel\.Admission",
    ):
        RecallSufficiencyPolicy(**kwargs)


def test_invalid_request_error_is_a_value_error() -> None:
    """Callers can catch a bad policy as a plain ValueError."""
    with pytest.raises(ValueError, match="min_candidates"):
        RecallSufficiencyPolicy(min_candidates=-1)


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("min_top_similarity", 0),
        ("min_top_similarity", 1),
        ("min_lexical_overlap", 0.0),
        ("max_expansions", 0),
        ("max_expansions", 2),
        ("min_candidates", 0),
        ("min_unused_bytes", 0),
    ],
)
def test_boundary_values_are_accepted(field: str, value: object) -> None:
    """The ends of each valid range are accepted as given."""
    kwargs: dict[str, Any] = {field: value}
    assert getattr(RecallSufficiencyPolicy(**kwargs), field) == value


def test_evolve_changes_one_field_and_keeps_the_rest() -> None:
    """attrs.evolve makes a new policy with one field changed; the original stands."""
    tuned = attrs.evolve(POLICY, policy="satchel.recall-gate.v1-tuned", min_top_similarity=0.6)
    assert tuned.policy == "satchel.recall-gate.v1-tuned"
    assert tuned.min_top_similarity == 0.6
    assert attrs.evolve(tuned, policy=POLICY.policy, min_top_similarity=None) == POLICY
    assert POLICY.min_top_similarity is None


def test_evolve_validates() -> None:
    """attrs.evolve runs the validators: an invalid change raises naming the field."""
    with pytest.raises(InvalidRequestError, match="max_expansions"):
        attrs.evolve(POLICY, max_expansions=3)


# --- the expander ---------------------------------------------------------------------


def test_round_1_lowers_to_the_admission_floor() -> None:
    """Round 1 is the "admission" action with the policy's admission floor."""
    assert RecallExpander.plan(1, POLICY) == SearchPlan(
        round=1, action="admission", floor=POLICY.calibrated().admission
    )


def test_round_2_lowers_to_the_policy_floor() -> None:
    """Round 2 is the "policy-floor" action with the policy's policy_floor."""
    assert RecallExpander.plan(2, POLICY) == SearchPlan(
        round=2, action="policy-floor", floor=POLICY.calibrated().policy_floor
    )


def test_plan_uses_the_policys_own_floors() -> None:
    """The plan carries whatever floors the policy configures, not built-in ones."""
    custom = attrs.evolve(
        POLICY,
        admission=AdmissionFloor(required_matches=2, min_similarity=0.25),
        policy_floor=AdmissionFloor(min_similarity=0.15),
    )
    assert floor_of(1, custom) == AdmissionFloor(2, 0.25)
    assert floor_of(2, custom) == AdmissionFloor(None, 0.15)


@pytest.mark.parametrize("round_", [0, -1, 3, 4, 7])
def test_rounds_outside_1_and_2_raise(round_: int) -> None:
    """Round 0 is not an expansion, and there is no round 3: InvalidRequestError naming round."""
    with pytest.raises(InvalidRequestError, match=f"^round must be an integer .*round {round_} "):
        RecallExpander.plan(round_, POLICY)


@pytest.mark.parametrize("round_", ["1", 1.0, True, None])
def test_a_round_that_is_not_an_integer_raises(round_: object) -> None:
    """A round of another type raises InvalidRequestError naming round, not a TypeError."""
    with pytest.raises(InvalidRequestError, match=r"^round must be an integer"):
        RecallExpander.plan(round_, POLICY)  # type: ignore[arg-type]


@pytest.mark.parametrize("policy", [None, "satchel.recall-gate.v1", AdmissionFloor()])
def test_plan_refuses_a_non_policy(policy: object) -> None:
    """plan(round, X) with anything but a RecallSufficiencyPolicy raises naming policy."""
    with pytest.raises(InvalidRequestError, match=r"^policy must be a satchel\.RecallSufficiency"):
        RecallExpander.plan(1, policy)  # type: ignore[arg-type]


@pytest.mark.parametrize(("max_expansions", "round_"), [(0, 1), (1, 2), (0, 2)])
def test_rounds_beyond_max_expansions_raise(max_expansions: int, round_: int) -> None:
    """A policy that allows fewer expansions refuses the later rounds."""
    policy = attrs.evolve(POLICY, max_expansions=max_expansions)
    with pytest.raises(ValueError, match=r"satchel\.recall-gate\.v1"):
        RecallExpander.plan(round_, policy)


def test_rounds_within_max_expansions_are_planned() -> None:
    """With max_expansions=1 round 1 is still planned."""
    policy = attrs.evolve(POLICY, max_expansions=1)
    assert RecallExpander.plan(1, policy).action == "admission"


def floor_of(round_: int, policy: RecallSufficiencyPolicy) -> AdmissionFloor:
    """The floor a floor-lowering plan applies."""
    floor = RecallExpander.plan(round_, policy).floor
    assert floor is not None
    return floor


@pytest.mark.parametrize("round_", [1, 2])
@pytest.mark.parametrize("terms", range(MAX_QUERY_TERMS + 1))
def test_default_plans_only_lower_floors(round_: int, terms: int) -> None:
    """Every default plan's floors are at or below round 0's for every query length."""
    floor = floor_of(round_, POLICY)
    round_0 = AdmissionFloor()
    assert 1 <= floor.lexical_floor(terms) <= round_0.lexical_floor(terms)
    assert floor.lexical_floor(terms) <= required_matches(terms)
    assert floor.vector_floor() <= round_0.vector_floor() == DEFAULT_MIN_SIMILARITY == 0.3


def test_default_policy_floor_is_no_stricter_than_the_admission_floor() -> None:
    """Round 2 never undoes round 1: its floor is at or below round 1's."""
    first = floor_of(1, POLICY)
    second = floor_of(2, POLICY)
    assert second.vector_floor() <= first.vector_floor()
    for terms in range(MAX_QUERY_TERMS + 1):
        assert second.lexical_floor(terms) <= first.lexical_floor(terms)


def test_default_plans_lower_only_the_lexical_floor() -> None:
    """Hashing-calibrated defaults: both rounds admit one-term matches, cosine stays 0.3."""
    first, second = floor_of(1, POLICY), floor_of(2, POLICY)
    assert first.lexical_floor(8) == second.lexical_floor(8) == 1
    assert first.vector_floor() == second.vector_floor() == DEFAULT_MIN_SIMILARITY


def test_a_raised_required_matches_is_clamped_to_round_0() -> None:
    """A policy asking for more lexical matches than round 0 is clamped down to round 0's."""
    strict = attrs.evolve(POLICY, admission=AdmissionFloor(required_matches=10))
    floor = floor_of(1, strict)
    for terms in range(MAX_QUERY_TERMS + 1):
        assert floor.lexical_floor(terms) <= required_matches(terms)


@pytest.mark.parametrize(("round_", "field"), [(1, "admission"), (2, "policy_floor")])
def test_no_policy_can_make_an_expansion_raise_the_vector_floor(round_: int, field: str) -> None:
    """Expansion only lowers floors: a policy's stricter vector floor is refused or clamped."""
    stricter: dict[str, Any] = {field: AdmissionFloor(min_similarity=0.9)}
    try:
        policy = attrs.evolve(POLICY, **stricter)
    except InvalidRequestError:
        return  # refused at construction: acceptable
    assert floor_of(round_, policy).vector_floor() <= DEFAULT_MIN_SIMILARITY


def test_search_plan_fields_are_exactly_round_action_floor() -> None:
    """A plan names no family, limit or mode: it can only lower a floor."""
    assert [field.name for field in attrs.fields(SearchPlan)] == ["round", "action", "floor"]


def test_search_plan_floor_has_only_the_two_overrides() -> None:
    """The plan's floor carries only the two admission overrides."""
    names = [field.name for field in attrs.fields(AdmissionFloor)]
    assert names == ["required_matches", "min_similarity"]


def test_plan_is_pure() -> None:
    """The same round and an equal policy always give an equal plan."""
    assert RecallExpander.plan(1, POLICY) == RecallExpander.plan(1, RecallSufficiencyPolicy())
    assert RecallExpander.plan(2, POLICY) == RecallExpander.plan(2, RecallSufficiencyPolicy())


def test_calibration_replaces_only_default_thresholds() -> None:
    """An embedder's calibration fills the thresholds the caller left to it."""
    from satchel import Calibration
    from satchel.recall import calibrate

    tuned = Calibration(baseline=0.25, expansion=0.2, min_top_similarity=0.5)
    default = calibrate(POLICY, tuned)
    assert default.admission == AdmissionFloor(required_matches=1, min_similarity=0.25)
    assert default.policy_floor == AdmissionFloor(required_matches=1, min_similarity=0.2)
    assert default.min_top_similarity == 0.5
    mine = attrs.evolve(POLICY, min_top_similarity=0.6)
    assert calibrate(mine, tuned).min_top_similarity == 0.6
    assert calibrate(POLICY, Calibration()) == POLICY.calibrated()


def test_a_threshold_set_to_a_default_value_is_kept_as_set() -> None:
    """A caller who sets a threshold equal to the design's value keeps it: calibration
    fills only what was left to the embedder."""
    from satchel import Calibration
    from satchel.recall import calibrate

    tuned = Calibration(baseline=0.25, expansion=0.2, min_top_similarity=0.5)
    floor = AdmissionFloor(required_matches=1, min_similarity=0.3)
    mine = RecallSufficiencyPolicy(min_top_similarity=0.45, admission=floor, policy_floor=floor)
    assert calibrate(mine, tuned) == mine


def test_the_effective_id_names_every_effective_threshold() -> None:
    """Policies with other effective thresholds report other ids, and the id rebuilds the
    effective policy exactly (a run is reproducible from its RecallEffort)."""
    from satchel import Calibration
    from satchel.recall import calibrate

    static = calibrate(POLICY, Calibration(baseline=0.25, expansion=0.2, min_top_similarity=0.5))
    changed = attrs.evolve(POLICY, min_candidates=5)
    ids = {POLICY.effective_id(), static.effective_id(), changed.effective_id()}
    assert len(ids) == 3
    assert all(i.startswith("satchel.recall-gate.v1;") for i in ids)
    for policy in (POLICY.calibrated(), static, changed.calibrated()):
        assert RecallSufficiencyPolicy.from_effective_id(policy.effective_id()) == policy


def test_a_malformed_effective_id_is_refused() -> None:
    """Text that is no effective id raises InvalidRequestError."""
    with pytest.raises(InvalidRequestError, match="effective policy id"):
        RecallSufficiencyPolicy.from_effective_id("satchel.recall-gate.v1;min_candidates=x")


def test_plan_takes_its_arguments_by_the_designs_names() -> None:
    """RecallExpander.plan(round=..., policy=...) is the public signature: keywords work."""
    policy = RecallSufficiencyPolicy()
    by_keyword = RecallExpander.plan(round=1, policy=policy)
    assert by_keyword == RecallExpander.plan(1, policy)
    assert by_keyword.round == 1
