"""The named-speaker lift, a pure re-ranking of the candidates a search read."""

from __future__ import annotations

import pytest

from satchel.recall import by_named_speaker

SCORES = {1: 1.0, 2: 0.9, 3: 0.8, 4: 0.7}


def test_a_named_turn_rises_past_what_its_lift_overtakes_and_no_further() -> None:
    order = by_named_speaker([1, 2, 3, 4], SCORES, {3}, ({}, frozenset()), 0.2, 4)[0]
    assert order == [0, 2, 1, 3]  # 0.8 * 1.2 = 0.96: past 0.9, not past 1.0


def test_no_lift_or_no_named_turn_keeps_the_order_and_the_room() -> None:
    assert by_named_speaker([1, 2, 3, 4], SCORES, {4}, ({}, frozenset()), 0.0, 3)[0] == [0, 1, 2]
    assert by_named_speaker([1, 2, 3, 4], SCORES, set(), ({}, frozenset()), 5.0, 2)[0] == [0, 1]


def test_a_named_hits_neighbours_share_its_lift_but_never_pass_it() -> None:
    """Key 1 (named) brought 4 (joined as its neighbour, at 0.7): 4 is lifted as its hit
    is, yet stays below 1; 3, not named and no neighbour of a named hit, stays put."""
    scores = {1: 1.0, 2: 1.1, 3: 0.8, 4: 0.95}
    order = by_named_speaker([2, 1, 4, 3], scores, {1, 4}, ({1: (4,)}, {4}), 0.5, 4)[0]
    assert order == [1, 2, 0, 3]  # 1 -> 1.5, 4 -> min(1.425, 1.5), 2 stays 1.1


def test_a_neighbour_said_by_the_named_person_stays_below_an_unnamed_hit() -> None:
    """A reply's rule: the named person's turn next to someone else's question may not
    outrank that question, only tie it (the question keeps its place)."""
    scores = {1: 1.0, 2: 0.8}
    assert by_named_speaker([1, 2], scores, {2}, ({1: (2,)}, {2}), 0.5, 2)[0] == [0, 1]


def test_a_named_hits_neighbour_said_by_someone_else_keeps_its_score() -> None:
    """The other person's reply beside a named hit is not lifted with it: 4 (joined as
    1's neighbour, said by someone else) stays at 0.95, below 2's 1.1."""
    scores = {1: 1.0, 2: 1.1, 3: 0.8, 4: 0.95}
    order, lifted = by_named_speaker([2, 1, 4, 3], scores, {1}, ({1: (4,)}, {4}), 0.5, 4)
    assert order == [1, 0, 2, 3]
    assert lifted == [1.1, 1.5, 0.95, 0.8]


def test_the_reply_to_a_named_turn_shares_its_lift_and_stays_below_it() -> None:
    """4 is the turn just after named 1 (its reply, said by someone else): lifted with
    it to min(0.95 * 1.5, 1.5), past 2's 1.1; 3, the turn before 1, is not."""
    scores = {1: 1.0, 2: 1.1, 3: 0.9, 4: 0.95}
    order, lifted = by_named_speaker(
        [2, 1, 4, 3], scores, {1}, ({1: (3, 4)}, {3, 4}), 0.5, 4, replies={1: 4}
    )
    assert order == [1, 2, 0, 3]
    assert lifted == [1.1, 1.5, pytest.approx(1.425), 0.9]
