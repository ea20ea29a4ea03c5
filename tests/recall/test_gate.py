"""The recall-sufficiency gate as a pure function: each reason, their order, the signals."""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING

import attrs
import pytest

from satchel.recall import _gate as gate
from satchel.recall._gate import FamilyView, GateAssessment, RecallSufficiencyGate
from satchel.recall._policy import RecallSufficiencyPolicy
from satchel.vocabulary import BudgetView
from satchel.vocabulary._analysis import AnalysedQuery, analyse_query

if TYPE_CHECKING:
    from collections.abc import Sequence

    from satchel.vocabulary._families import Family

POLICY = RecallSufficiencyPolicy()
#: Two terms: the weak-lexical signal does not apply.
SHORT = analyse_query("rotate keys")
#: Five terms: the weak-lexical signal applies.
LONG = analyse_query("how do I verify the HTTP API after changing the contract")
EXPANDING = {"thin-families", "thin-candidates", "weak-top-1", "weak-lexical"}


def view(
    family: Family = "memory",
    *,
    ceiling: int = 16,
    retrieved: int = 40,
    admitted: int = 10,
    candidates: int = 10,
    scored: bool = True,
    best: float | None = 0.8,
    next_: float | None = None,
    overlap: float = 0.6,
    reachable: int | None = None,
) -> FamilyView:
    """A healthy family by default: room to grow, strong scores, good lexical overlap
    (below the policy's precise-hit share, so every thinness signal stays live)."""
    return FamilyView(
        family=family,
        ceiling=ceiling,
        retrieved=retrieved,
        admitted=admitted,
        candidates=candidates,
        scored=scored,
        best_similarity=best,
        next_similarity=next_,
        best_overlap=overlap,
        reachable=reachable,
    )


def roomy(max_bytes: int = 8000, unused: int = 6000, dropped: int = 0) -> BudgetView:
    return BudgetView(
        max_bytes=max_bytes,
        delivered_items=3,
        truncated_items=0,
        dropped_items=dropped,
        unused_bytes=unused,
    )


def assess(
    families: Sequence[FamilyView],
    *,
    query: AnalysedQuery = LONG,
    budget: BudgetView | None = None,
    policy: RecallSufficiencyPolicy = POLICY,
) -> GateAssessment:
    return RecallSufficiencyGate.assess(
        query=query, families=families, budget=budget or roomy(), policy=policy
    )


def test_query_fixtures_have_the_term_counts_the_tests_rely_on() -> None:
    """SHORT has two analysed terms and LONG at least three."""
    assert len(SHORT.terms) == 2
    assert len(LONG.terms) >= 3


def test_healthy_recall_is_sufficient() -> None:
    """Enough strong candidates with room left in the budget: sufficient, no expansion."""
    assessment = assess([view()])
    assert (assessment.sufficient, assessment.reason) == (True, "sufficient")


def test_reason_constants_spell_the_rfc_names() -> None:
    """The reason constants are the strings RecallEffort reports."""
    assert (
        gate.SUFFICIENT,
        gate.NO_CONTENT,
        gate.BUDGET_BOUND,
        gate.SATURATED,
        gate.POOL_EXHAUSTED,
        gate.THIN_FAMILIES,
        gate.THIN_CANDIDATES,
        gate.WEAK_TOP_1,
        gate.WEAK_LEXICAL,
        gate.AT_MAX_ROUNDS,
        gate.EXPANSION_FAILED,
        gate.EXPANSION_TIMEOUT,
    ) == (
        "sufficient",
        "no-content",
        "budget-bound",
        "saturated",
        "pool-exhausted",
        "thin-families",
        "thin-candidates",
        "weak-top-1",
        "weak-lexical",
        "at-max-rounds",
        "expansion-failed",
        "expansion-timeout",
    )


# --- no-content -----------------------------------------------------------------------


def test_no_families_is_no_content() -> None:
    """No searchable family selected: sufficient with reason no-content."""
    assessment = assess([])
    assert (assessment.sufficient, assessment.reason) == (True, "no-content")


def test_nothing_retrieved_is_no_content() -> None:
    """Families that retrieved nothing are absence of content, not thin recall."""
    empty = [
        view("memory", retrieved=0, admitted=0, candidates=0, best=None, next_=None, overlap=0),
        view("experience", ceiling=8, retrieved=0, admitted=0, candidates=0, scored=False),
    ]
    assessment = assess(empty)
    assert (assessment.sufficient, assessment.reason) == (True, "no-content")


def test_empty_scope_never_expands() -> None:
    """An empty scope (every default family retrieved nothing, full budget) never expands."""
    families = [
        view(family, retrieved=0, admitted=0, candidates=0, best=None, next_=None, overlap=0)
        for family in ("memory", "experience", "topic-memory")
    ]
    empty_budget = BudgetView(
        max_bytes=8000, delivered_items=0, truncated_items=0, dropped_items=0, unused_bytes=8000
    )
    assessment = assess(families, budget=empty_budget)
    assert assessment.sufficient
    assert assessment.reason == "no-content"


def test_profile_only_request_never_expands() -> None:
    """A profile-only request has no searchable family: the empty view list never expands."""
    profile_budget = BudgetView(
        max_bytes=8000, delivered_items=1, truncated_items=0, dropped_items=0, unused_bytes=7700
    )
    assessment = assess([], budget=profile_budget)
    assert assessment.sufficient
    assert assessment.reason == "no-content"


# --- budget-bound ---------------------------------------------------------------------


THIN_VIEWS = {
    "thin-families": [
        view(),
        view("topic-memory", ceiling=16, retrieved=5, admitted=0, candidates=0),
    ],
    "thin-candidates": [view(admitted=2, candidates=2)],
    "weak-top-1": [view(best=0.2, next_=0.1)],
    "weak-lexical": [view(overlap=0.2)],
}


@pytest.mark.parametrize("thin", sorted(THIN_VIEWS))
def test_each_thin_view_expands_on_a_roomy_budget(thin: str) -> None:
    """The thin fixtures below really are thin when the budget has room (control case)."""
    assessment = assess(THIN_VIEWS[thin])
    assert (assessment.sufficient, assessment.reason) == (False, thin)


@pytest.mark.parametrize("thin", sorted(THIN_VIEWS))
def test_dropped_items_make_thin_recall_budget_bound(thin: str) -> None:
    """A fit that dropped an item is budget-bound, which wins over every thin reason."""
    assessment = assess(THIN_VIEWS[thin], budget=roomy(dropped=1))
    assert (assessment.sufficient, assessment.reason) == (True, "budget-bound")


@pytest.mark.parametrize("thin", sorted(THIN_VIEWS))
def test_512_byte_probe_is_budget_bound(thin: str) -> None:
    """At max_bytes=512 one delivered item leaves under min_unused_bytes: budget-bound."""
    probe = BudgetView(
        max_bytes=512, delivered_items=1, truncated_items=1, dropped_items=0, unused_bytes=40
    )
    assessment = assess(THIN_VIEWS[thin], budget=probe)
    assert (assessment.sufficient, assessment.reason) == (True, "budget-bound")


@pytest.mark.parametrize(
    ("unused", "reason"), [(511, "budget-bound"), (512, "weak-top-1"), (513, "weak-top-1")]
)
def test_budget_bound_threshold_is_strictly_below_min_unused_bytes(
    unused: int, reason: str
) -> None:
    """Unused bytes below policy.min_unused_bytes (512) is budget-bound; exactly 512 is not."""
    assessment = assess([view(best=0.2)], budget=roomy(unused=unused))
    assert assessment.reason == reason


def test_min_unused_bytes_comes_from_the_policy() -> None:
    """The budget threshold is the policy's field, not a constant."""
    lenient = attrs.evolve(POLICY, min_unused_bytes=100)
    assert assess([view(best=0.2)], budget=roomy(unused=200), policy=lenient).reason == (
        "weak-top-1"
    )
    strict = attrs.evolve(POLICY, min_unused_bytes=300)
    assert assess([view(best=0.2)], budget=roomy(unused=200), policy=strict).reason == (
        "budget-bound"
    )


def test_budget_bound_wins_over_saturated() -> None:
    """A saturated family on a budget that dropped items reports budget-bound."""
    assessment = assess([view(candidates=16, admitted=16)], budget=roomy(dropped=2))
    assert assessment.reason == "budget-bound"


# --- saturated and pool-exhausted -------------------------------------------------------


def test_family_at_its_ceiling_is_saturated() -> None:
    """A family at its ceiling cannot grow: saturated, even with weak scores."""
    at_ceiling = view(ceiling=16, retrieved=64, admitted=30, candidates=16, best=0.1, overlap=0)
    assessment = assess([at_ceiling])
    assert (assessment.sufficient, assessment.reason) == (True, "saturated")
    assert assessment.signals["candidates"] == 16


def test_saturated_ignores_families_that_retrieved_nothing() -> None:
    """Every family that retrieved anything is at its ceiling: saturated."""
    families = [
        view("memory", ceiling=16, candidates=16, admitted=20),
        view("topic-memory", retrieved=0, admitted=0, candidates=0, best=None, next_=None),
    ]
    assert assess(families).reason == "saturated"


def test_one_family_below_its_ceiling_is_not_saturated() -> None:
    """A second family with room keeps the gate looking at thinness."""
    families = [
        view("memory", ceiling=16, candidates=16, admitted=20, best=0.2, next_=0.1),
        view("topic-memory", ceiling=16, retrieved=10, admitted=2, candidates=2, best=0.2),
    ]
    assessment = assess(families)
    assert (assessment.sufficient, assessment.reason) == (False, "weak-top-1")


def test_saturated_wins_over_pool_exhausted() -> None:
    """Saturated and exhausted at once reports saturated."""
    full = view(ceiling=8, retrieved=8, admitted=8, candidates=8)
    assert not full.can_grow
    assert assess([full]).reason == "saturated"


def test_nothing_left_to_admit_is_pool_exhausted() -> None:
    """Every retrieved candidate already admitted: no floor can add one, pool-exhausted."""
    exhausted = view(retrieved=2, admitted=2, candidates=2, best=0.1, next_=None, overlap=0)
    assessment = assess([exhausted])
    assert (assessment.sufficient, assessment.reason) == (True, "pool-exhausted")


def test_pool_exhausted_needs_every_family_unable_to_grow() -> None:
    """One family that can still grow is enough to go on to the thinness checks."""
    families = [
        view("memory", retrieved=2, admitted=2, candidates=2, best=0.1),
        view("topic-memory", retrieved=10, admitted=1, candidates=1, best=0.1),
    ]
    assert assess(families).reason == "weak-top-1"


def test_can_grow_needs_room_and_unadmitted_pool() -> None:
    """can_grow is room under the ceiling and retrieved > admitted, nothing else."""
    assert view(ceiling=16, candidates=15, retrieved=3, admitted=2).can_grow
    assert not view(ceiling=16, candidates=16, retrieved=30, admitted=20).can_grow
    assert not view(ceiling=16, candidates=4, retrieved=4, admitted=4).can_grow


def test_nothing_reachable_by_the_lowest_floor_is_pool_exhausted() -> None:
    """Unadmitted candidates that no expansion floor would admit do not count as growth."""
    stuck = view(retrieved=40, admitted=2, candidates=2, best=0.1, reachable=0)
    assert not stuck.can_grow
    assessment = assess([stuck])
    assert (assessment.sufficient, assessment.reason) == (True, "pool-exhausted")


def test_reachable_candidates_let_a_thin_family_expand() -> None:
    """A pool holding candidates a lower floor would admit keeps thin recall expandable."""
    grows = view(retrieved=40, admitted=2, candidates=2, best=0.1, reachable=3)
    assert grows.can_grow
    assert assess([grows]).reason == "thin-candidates"


def test_unknown_reachable_assumes_every_unadmitted_candidate() -> None:
    """Without a reachable count, any retrieved-but-unadmitted candidate could grow."""
    assert view(retrieved=3, admitted=2, candidates=2, reachable=None).can_grow
    assert not view(retrieved=2, admitted=2, candidates=2, reachable=None).can_grow


def test_unreachable_thin_family_does_not_expand() -> None:
    """A family that admitted nothing, with nothing any floor would add, is pool-exhausted."""
    families = [
        view("memory", retrieved=40, admitted=10, candidates=10, reachable=0),
        view("topic-memory", retrieved=5, admitted=0, candidates=0, best=None, reachable=0),
    ]
    assert assess(families).reason == "pool-exhausted"


# --- thinness -------------------------------------------------------------------------


def test_family_that_admitted_nothing_is_thin_families() -> None:
    """A family that retrieved candidates and admitted none of them: thin-families."""
    families = [
        view("memory"),
        view("topic-memory", retrieved=12, admitted=0, candidates=0, best=None, next_=None),
    ]
    assessment = assess(families)
    assert (assessment.sufficient, assessment.reason) == (False, "thin-families")
    assert assessment.signals["covered_families"] == 1
    assert assessment.signals["admitted"] == 10


def test_unscored_family_counts_for_coverage() -> None:
    """Experience carries no score but its coverage bit still makes recall thin."""
    families = [
        view("memory"),
        view("experience", ceiling=8, admitted=0, candidates=0, scored=False),
    ]
    assert assess(families).reason == "thin-families"


def test_thin_families_wins_over_thin_candidates_and_weak_scores() -> None:
    """Thin coverage is reported before the candidate count and the scores."""
    families = [
        view("memory", admitted=1, candidates=1, best=0.1, overlap=0.0),
        view("topic-memory", retrieved=5, admitted=0, candidates=0, best=None, next_=None),
    ]
    assert assess(families).reason == "thin-families"


@pytest.mark.parametrize(("candidates", "reason"), [(2, "thin-candidates"), (3, "sufficient")])
def test_thin_candidates_below_policy_minimum(candidates: int, reason: str) -> None:
    """Fewer distinct candidates than policy.min_candidates (3) is thin-candidates."""
    assessment = assess([view(admitted=candidates, candidates=candidates)])
    assert assessment.reason == reason
    assert assessment.sufficient is (reason == "sufficient")


def test_thin_candidates_counts_across_families() -> None:
    """The candidate count is the sum over families."""
    families = [
        view("memory", admitted=2, candidates=2),
        view("experience", ceiling=8, admitted=1, candidates=1, scored=False),
    ]
    assessment = assess(families)
    assert assessment.reason == "sufficient"
    assert assessment.signals["candidates"] == 3


def test_thin_candidates_wins_over_weak_top_1() -> None:
    """Too few candidates is reported before a weak top hit."""
    assert assess([view(admitted=1, candidates=1, best=0.1)]).reason == "thin-candidates"


@pytest.mark.parametrize(("best", "reason"), [(0.44, "weak-top-1"), (0.45, "sufficient")])
def test_weak_top_1_below_min_top_similarity(best: float, reason: str) -> None:
    """A best admitted cosine below policy.min_top_similarity (0.45) is weak-top-1."""
    assessment = assess([view(best=best, next_=0.1)])
    assert assessment.reason == reason
    assert assessment.sufficient is (reason == "sufficient")


def test_weak_top_1_uses_the_best_score_of_any_scored_family() -> None:
    """One strong scored family is enough: the best similarity is taken across families."""
    families = [view("memory", best=0.2, next_=0.1), view("topic-memory", best=0.9, next_=None)]
    assessment = assess(families)
    assert assessment.reason == "sufficient"
    assert assessment.signals["best_similarity"] == pytest.approx(0.9)


def test_weak_top_1_wins_over_weak_lexical() -> None:
    """A weak top hit is reported before weak lexical evidence."""
    assert assess([view(best=0.2, overlap=0.1)], query=LONG).reason == "weak-top-1"


@pytest.mark.parametrize(("overlap", "reason"), [(0.49, "weak-lexical"), (0.5, "sufficient")])
def test_weak_lexical_below_min_overlap(overlap: float, reason: str) -> None:
    """For a query of >= 3 terms, best overlap below min_lexical_overlap is weak-lexical."""
    assessment = assess([view(overlap=overlap)], query=LONG)
    assert assessment.reason == reason


def test_weak_lexical_needs_at_least_three_terms() -> None:
    """A two-term query never reports weak-lexical, however low the overlap."""
    assert assess([view(overlap=0.0)], query=SHORT).reason == "sufficient"


def test_weak_lexical_at_exactly_three_terms() -> None:
    """Three terms is the first query length the lexical signal applies to."""
    three = AnalysedQuery(text="deploy kubernetes cluster", terms=("deploy", "kubernet", "cluster"))
    assert assess([view(overlap=0.0)], query=three).reason == "weak-lexical"


def test_thresholds_come_from_the_policy() -> None:
    """A policy with other thresholds changes the verdict on the same views."""
    families = [view(admitted=4, candidates=4, best=0.5, overlap=0.6)]
    assert assess(families).reason == "sufficient"
    assert assess(families, policy=attrs.evolve(POLICY, min_candidates=5)).reason == (
        "thin-candidates"
    )
    assert assess(families, policy=attrs.evolve(POLICY, min_top_similarity=0.6)).reason == (
        "weak-top-1"
    )
    assert assess(families, policy=attrs.evolve(POLICY, min_lexical_overlap=0.7)).reason == (
        "weak-lexical"
    )


# --- a family with no score (experience) ---------------------------------------------


def test_unscored_family_never_triggers_weak_top_1_by_itself() -> None:
    """Experience alone (scored=False, no similarity, no overlap) is judged on counts only."""
    experience = view(
        "experience", ceiling=8, admitted=4, candidates=4, scored=False, best=None, overlap=0.0
    )
    assessment = assess([experience], query=LONG)
    assert (assessment.sufficient, assessment.reason) == (True, "sufficient")
    assert assessment.signals["best_similarity"] == 0.0
    assert assessment.signals["best_overlap"] == 0.0


def test_unscored_family_scores_are_never_read() -> None:
    """Experience similarity and overlap, even if set, neither mask nor add to the signals."""
    families = [
        view("memory", best=0.2, next_=0.1, overlap=0.1),
        view("experience", ceiling=8, scored=False, best=0.99, next_=0.98, overlap=1.0),
    ]
    assessment = assess(families)
    assert assessment.reason == "weak-top-1"
    assert assessment.signals["best_similarity"] == pytest.approx(0.2)
    assert assessment.signals["best_overlap"] == pytest.approx(0.1)


def test_empty_scored_family_does_not_make_experience_recall_weak() -> None:
    """A scored family that retrieved nothing has no top hit to be weak; experience decides."""
    families = [
        view("memory", retrieved=0, admitted=0, candidates=0, best=None, next_=None, overlap=0),
        view("experience", ceiling=8, admitted=4, candidates=4, scored=False, best=None),
    ]
    assert assess(families, query=SHORT).reason == "sufficient"


# --- signals and purity ---------------------------------------------------------------


def test_signal_values() -> None:
    """The signals sum counts over families, count coverage, and read the budget view."""
    families = [
        view("memory", ceiling=16, retrieved=40, admitted=6, candidates=6, best=0.7, next_=0.5),
        view("topic-memory", retrieved=9, admitted=0, candidates=0, best=None, next_=None),
        view("experience", ceiling=8, retrieved=8, admitted=8, candidates=8, scored=False),
    ]
    assessment = assess(families, budget=roomy(unused=4321))
    assert assessment.signals == {
        "retrieved": 57.0,
        "admitted": 14.0,
        "candidates": 14.0,
        "covered_families": 2.0,
        "best_similarity": pytest.approx(0.7),
        "best_overlap": 0.6,
        "unused_bytes": 4321.0,
        "dropped_items": 0.0,
    }


def test_only_signals_a_decision_reads_are_reported() -> None:
    """No decision reads the gap between the two best similarities, so it is not a signal;
    the best similarity spans every scored family."""
    families = [view("memory", best=0.9, next_=0.3), view("topic-memory", best=0.95, next_=None)]
    signals = assess(families).signals
    assert "top_gap" not in signals
    assert signals["best_similarity"] == pytest.approx(0.95)


def test_signals_are_reported_with_every_reason() -> None:
    """Even an early verdict (budget-bound) carries the signal values behind it."""
    assessment = assess([view(candidates=5)], budget=roomy(dropped=3))
    assert assessment.reason == "budget-bound"
    assert assessment.signals["dropped_items"] == 3
    assert assessment.signals["candidates"] == 5


def test_assess_is_pure() -> None:
    """Same inputs give the same verdict and signals; the inputs are not mutated."""
    families = [
        view("memory", best=0.3, next_=0.2),
        view("experience", ceiling=8, admitted=0, candidates=0, scored=False),
    ]
    budget = roomy()
    before = (copy.deepcopy(families), budget, LONG, POLICY)
    first = assess(families, budget=budget)
    second = assess(tuple(families), budget=budget)
    assert first == second
    assert first.signals == second.signals
    assert (families, budget, LONG, POLICY) == before
    assert first.signals is not second.signals


@pytest.mark.parametrize(("overlap", "reason"), [(0.75, "sufficient"), (0.74, "thin-candidates")])
def test_precise_lexical_hit_is_sufficient(overlap: float, reason: str) -> None:
    """A best hit holding sufficient_overlap of the query's terms ends recall, however thin."""
    assert assess([view(candidates=1, admitted=1, overlap=overlap)]).reason == reason


def test_reach_is_computed_only_when_the_gate_needs_it() -> None:
    """The reachable count (the costliest signal) is not computed for a precise hit."""
    calls: list[int] = []

    def reach() -> int:
        calls.append(1)
        return 3

    precise = FamilyView(
        family="memory", ceiling=16, retrieved=40, admitted=1, candidates=1,
        best_similarity=0.8, best_overlap=1.0, reach=reach,
    )  # fmt: skip
    assert assess([precise]).reason == "sufficient"
    assert calls == []
    thin = attrs.evolve(precise, best_overlap=0.6)
    assert assess([thin]).reason == "thin-candidates"
    assert calls == [1]
