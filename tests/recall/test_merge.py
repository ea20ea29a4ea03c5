"""The merge rule: committed prefix kept, new identities appended, ceilings held."""

from __future__ import annotations

from typing import TYPE_CHECKING

import attrs
import pytest

from satchel.recall._allocation import check_ceiling
from satchel.recall._merge import merge_rounds
from satchel.vocabulary._errors import InvariantError
from tests.recall._factory import evidence

if TYPE_CHECKING:
    from collections.abc import Sequence

    from satchel.vocabulary._evidence import Evidence


def names(items: Sequence[Evidence]) -> list[str]:
    """The factory names of ``items``, in order."""
    return [item.identity.rsplit("|", 1)[-1] for item in items]


def test_committed_prefix_is_never_displaced() -> None:
    """Round 0's candidates stay first, in their order, whatever a later round ranks first."""
    committed = [evidence(n) for n in ("a", "b", "c")]
    added = [[evidence(n) for n in ("x", "c", "y", "a")]]
    merged = merge_rounds(committed, added, ceiling=16)
    assert merged[:3] == tuple(committed)
    assert names(merged) == ["a", "b", "c", "x", "y"]


def test_new_identities_are_appended_in_the_rounds_order() -> None:
    """A later round contributes its new identities in its own fused order."""
    committed = [evidence("a")]
    added = [[evidence(n) for n in ("z", "a", "m", "b")]]
    assert names(merge_rounds(committed, added, ceiling=16)) == ["a", "z", "m", "b"]


def test_identity_collision_keeps_the_earlier_occurrence() -> None:
    """On a collision the committed object is kept, not the later round's copy."""
    first = evidence("a")
    later = attrs.evolve(first, text="round 1 rendering of a")
    merged = merge_rounds([first], [[later, evidence("b")]], ceiling=16)
    assert names(merged) == ["a", "b"]
    assert merged[0] is first
    assert merged[0].text == "text of a"


def test_identity_collision_across_scopes_keeps_the_first_in_allocation_order() -> None:
    """The same new identity offered by two scopes enters once, at its first position."""
    shared = evidence("x", scope="s1")
    twin = attrs.evolve(shared, scope_id="s2", text="other copy")
    merged = merge_rounds([], [[shared, evidence("y", scope="s1")], [twin]], ceiling=16)
    assert [item.identity for item in merged] == [shared.identity, "memory|s1|y"]
    assert merged[0] is shared


def test_saturated_family_cannot_grow() -> None:
    """A family already at its ceiling gets no candidate from a later round."""
    committed = [evidence(f"c{i}") for i in range(8)]
    merged = merge_rounds(committed, [[evidence("new1"), evidence("new2")]], ceiling=8)
    assert merged == tuple(committed)


def test_merge_fills_only_the_room_left_under_the_ceiling() -> None:
    """New identities beyond the ceiling's remaining room are cut, the prefix kept."""
    committed = [evidence(f"c{i}") for i in range(14)]
    added = [[evidence(n) for n in ("n1", "n2", "n3", "n4")]]
    merged = merge_rounds(committed, added, ceiling=16)
    assert len(merged) == 16
    assert names(merged)[14:] == ["n1", "n2"]
    assert merged[:14] == tuple(committed)


@pytest.mark.parametrize("ceiling", [16, 64], ids=["classic", "default"])
def test_two_rounds_of_16_differing_by_one_merge_within_the_ceiling(ceiling: int) -> None:
    """The classic case: two valid rounds of 16 memory hits, one new, merge without error."""
    round_0 = [evidence(f"m{i}") for i in range(16)]
    round_1 = [evidence(f"m{i}") for i in range(1, 17)]  # drops m0, adds m16
    naive = tuple({item.identity: item for item in (*round_0, *round_1)}.values())
    assert len(naive) == 17
    if ceiling == 16:  # the naive union is exactly what the invariant forbids
        with pytest.raises(InvariantError, match="memory-candidate-limit"):
            check_ceiling("memory", naive, ceiling)

    merged = merge_rounds(round_0, [round_1], ceiling=ceiling)

    check_ceiling("memory", merged, ceiling)
    assert len(merged) == min(17, ceiling)
    assert merged[:16] == tuple(round_0)
    assert len({item.identity for item in merged}) == len(merged)
    if ceiling == 64:
        assert names(merged)[16:] == ["m16"]


def test_new_identities_are_allocated_round_robin_across_scopes() -> None:
    """Rank 1 of every scope, then rank 2, ... within the remaining room."""
    committed = [evidence("a", scope="s1")]
    added = [
        [evidence(n, scope="s1") for n in ("x1", "x2", "x3")],
        [evidence(n, scope="s2") for n in ("y1", "y2")],
        [evidence("z1", scope="s3")],
    ]
    merged = merge_rounds(committed, added, ceiling=6)
    assert [item.identity for item in merged] == [
        "memory|s1|a",
        "memory|s1|x1",
        "memory|s2|y1",
        "memory|s3|z1",
        "memory|s1|x2",
        "memory|s2|y2",
    ]


def test_round_robin_skips_committed_identities_without_losing_a_turn() -> None:
    """A scope's already-committed hits are removed before allocation, not counted as turns."""
    committed = [evidence("x1", scope="s1"), evidence("x2", scope="s1")]
    added = [
        [evidence(n, scope="s1") for n in ("x1", "x2", "x3", "x4")],
        [evidence(n, scope="s2") for n in ("y1", "y2", "y3")],
    ]
    merged = merge_rounds(committed, added, ceiling=5)
    assert names(merged) == ["x1", "x2", "x3", "y1", "x4"]


def test_round_with_no_new_identity_returns_committed_unchanged() -> None:
    """A round that only repeats committed identities leaves the committed tuple as it was."""
    committed = tuple(evidence(n) for n in ("a", "b", "c"))
    reshuffled = [[attrs.evolve(item, text="again") for item in reversed(committed)]]
    merged = merge_rounds(committed, reshuffled, ceiling=16)
    assert merged == committed
    assert all(m is c for m, c in zip(merged, committed, strict=True))


@pytest.mark.parametrize("added", [[], [[]], [[], []]])
def test_empty_round_returns_committed(added: Sequence[Sequence[Evidence]]) -> None:
    """No scope, or scopes with nothing new, change nothing."""
    committed = (evidence("a"), evidence("b"))
    assert merge_rounds(committed, added, ceiling=16) == committed


def test_later_rounds_append_in_round_order() -> None:
    """Round 0, then round 1's new identities, then round 2's: merges chain in order."""
    round_0 = [evidence("a"), evidence("b")]
    round_1 = [evidence(n) for n in ("c", "a", "d")]
    round_2 = [evidence(n) for n in ("e", "d", "c", "b", "f")]
    merged = merge_rounds(merge_rounds(round_0, [round_1], 16), [round_2], 16)
    assert names(merged) == ["a", "b", "c", "d", "e", "f"]


def test_merge_from_nothing_is_the_allocator() -> None:
    """With nothing committed the merge is the round-robin allocation of the round."""
    added = [[evidence(n, scope="s1") for n in ("a", "b")], [evidence("c", scope="s2")]]
    assert names(merge_rounds([], added, ceiling=2)) == ["a", "c"]


def test_merge_does_not_mutate_its_inputs() -> None:
    """The committed list and the round's lists are left as they were."""
    committed = [evidence("a")]
    added = [[evidence("b"), evidence("a")]]
    snapshot = (list(committed), [list(ranked) for ranked in added])
    merge_rounds(committed, added, ceiling=16)
    assert (committed, added) == snapshot
