"""Allocation: round-robin across scopes under a ceiling, a reference scope may give way."""

from __future__ import annotations

from glean.recall import allocate, merge_rounds
from tests.recall._factory import evidence


def names(chosen: tuple[object, ...]) -> list[str]:
    return [item.citation["entry_id"] for item in chosen]  # type: ignore[attr-defined]


OWN = [evidence(f"a{n}", scope="a") for n in range(1, 4)]
REFERENCE = [evidence(f"b{n}", scope="b") for n in range(1, 4)]


def test_scopes_interleave_rank_by_rank() -> None:
    """Without delays, rank 1 of every scope, then rank 2, up to the ceiling."""
    assert names(allocate([OWN, REFERENCE], 4)) == ["a1", "b1", "a2", "b2"]


def test_a_delayed_list_gives_way_by_its_delay() -> None:
    """A list delayed by 2 offers its rank 1 beside the others' rank 3."""
    assert names(allocate([OWN, REFERENCE], 5, [0, 2])) == ["a1", "a2", "a3", "b1", "b2"]
    assert names(allocate([OWN, REFERENCE], 2, [0, 1])) == ["a1", "a2"]


def test_merges_honour_the_same_delays() -> None:
    """A later round's new candidates are allocated with the same delays."""
    merged = merge_rounds([OWN[0]], [OWN[1:], REFERENCE], 4, [0, 1])
    assert names(merged) == ["a1", "a2", "a3", "b1"]
