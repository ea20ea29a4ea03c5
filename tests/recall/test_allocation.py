"""Allocation: round-robin across scopes under a ceiling, a reference scope may give way."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from satchel.recall import allocate, merge_rounds, takes
from tests.recall._factory import evidence

if TYPE_CHECKING:
    from satchel.vocabulary import Evidence


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


def lists(lengths: list[int]) -> list[list[Evidence]]:
    return [
        [evidence(f"{scope}{n}", scope=f"s{scope}") for n in range(length)]
        for scope, length in enumerate(lengths)
    ]


@pytest.mark.parametrize(
    ("lengths", "ceiling", "delays"),
    [
        ([40, 40, 40, 40, 40, 40, 40, 40], 64, None),  # 8 full scopes: 8 each
        ([100, 3, 0, 50], 64, None),  # short lists leave room for the long ones
        ([5, 5], 64, None),  # under the ceiling: everything
        ([30, 30, 30], 10, [0, 2, 2]),  # references give way
        ([0, 0], 8, None),
        ([7, 9, 2], 0, None),
        ([1, 200], 33, [3, 0]),
    ],
)
def test_takes_is_what_allocate_takes_from_each_list(
    lengths: list[int], ceiling: int, delays: list[int] | None
) -> None:
    """``takes`` counts, from the lengths alone, what ``allocate`` takes from each list:
    the evidence a search must read, and no more."""
    ranked = lists(lengths)
    chosen = allocate(ranked, ceiling, delays) if ceiling else ()
    expected = [
        sum(item.scope_id == f"s{scope}" for item in chosen) for scope in range(len(lengths))
    ]
    assert takes(lengths, ceiling, delays) == expected
    assert sum(takes(lengths, ceiling, delays)) == min(ceiling, sum(lengths))


def test_one_list_gives_its_own_order_whatever_its_delay() -> None:
    """A single scope's list (the common case) is taken in its own order, each identity
    once, up to the ceiling; a delay before it changes nothing, as no other list takes
    those places."""
    ranked = lists([6])[0]
    repeated = [ranked[0], ranked[1], ranked[0], *ranked[2:]]
    assert allocate([repeated], 4) == tuple(ranked[:4])
    assert allocate([repeated], 4, [3]) == tuple(ranked[:4])
    assert allocate([repeated], 64, [1]) == tuple(ranked)
