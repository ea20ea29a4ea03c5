"""What the gate sees of a family: counts, scores, and what a lower floor could add."""

from __future__ import annotations

import satchel
from satchel.recall import AdmissionFloor, admit, family_view, fuse, lowest_floor, reachable
from tests.recall._factory import pool


def test_lowest_floor_is_the_lowest_of_the_policys_floor_actions() -> None:
    """The floor-only policy's lowest floor is the lower of its two floors, per channel."""
    policy = satchel.RecallSufficiencyPolicy(
        admission=AdmissionFloor(required_matches=2, min_similarity=0.2),
        policy_floor=AdmissionFloor(required_matches=1, min_similarity=0.25),
    )
    assert lowest_floor(policy) == AdmissionFloor(required_matches=1, min_similarity=0.2)


def test_a_policy_without_floor_actions_keeps_round_0s_floor() -> None:
    """No expansion, no lower floor: the lowest floor is round 0's."""
    assert lowest_floor(satchel.RecallSufficiencyPolicy(max_expansions=0)) == AdmissionFloor()
    conversational = satchel.RecallSufficiencyPolicy.conversational()
    assert lowest_floor(conversational) == conversational.calibrated().admission


def test_reachable_counts_what_a_lower_floor_would_newly_admit() -> None:
    """Of a 4-term query's pool, round 0 admits the 2-term hit and the 0.5 cosine; a floor
    of one term and cosine 0.1 would add two lexical and one vector candidate."""
    found = pool(lexical=[(1, 2), (2, 1), (3, 1)], vector=[(4, 0.5), (5, 0.15)])
    search = fuse(admit(found, 4, AdmissionFloor()), 4)
    assert search.counts.admitted == 2
    lower = AdmissionFloor(required_matches=1, min_similarity=0.1)
    assert reachable(found, search, lower, 4) == 3
    assert reachable(found, search, AdmissionFloor(), 4) == 0


def test_family_view_spans_its_scopes() -> None:
    """Counts add up over scopes; the best two similarities come from any scope."""
    first = pool(lexical=[(1, 2)], vector=[(2, 0.6)], scope="a")
    second = pool(vector=[(3, 0.7), (4, 0.65)], scope="b")
    searches = [(p, fuse(admit(p, 2, AdmissionFloor()), 2), 2) for p in (first, second)]
    view = family_view("memory", searches, candidates=3, ceiling=16, floor=AdmissionFloor())
    assert (view.retrieved, view.admitted, view.candidates) == (4, 4, 3)
    assert (view.best_similarity, view.next_similarity) == (
        float(searches[1][1].best_similarity or 0),
        float(searches[1][1].next_similarity or 0),
    )
    assert view.best_overlap == 1.0
    assert view.scored


def test_an_unscored_family_is_marked_so() -> None:
    """Experience carries no score: its view says so and the gate reads only its counts."""
    found = pool(lexical=[(1, 1)], family="experience")
    search = fuse(admit(found, 1, AdmissionFloor()), 1)
    view = family_view(
        "experience", [(found, search, 1)], candidates=1, ceiling=8, floor=AdmissionFloor()
    )
    assert not view.scored
