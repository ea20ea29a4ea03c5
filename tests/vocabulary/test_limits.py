"""satchel.Limits: the budget-led default, the classic constants, and validation."""

from __future__ import annotations

import pytest

import satchel


def test_classic_is_the_rfc_constants() -> None:
    """Limits.classic(): memory 16, topic memory 8, experience 8; 8 items, 2 experiences."""
    classic = satchel.Limits.classic()
    assert [classic.ceiling(f) for f in ("memory", "topic-memory", "experience")] == [16, 8, 8]
    assert (classic.max_items, classic.experience_items, classic.item_bytes) == (8, 2, 2000)
    assert [classic.pool_size(f) for f in ("memory", "topic-memory", "experience")] == [64, 32, 32]


def test_default_lets_the_budget_decide() -> None:
    """Limits(): ceilings memory 64, topic memory 16, experience 8; up to 64 items."""
    limits = satchel.Limits()
    assert [limits.ceiling(f) for f in ("memory", "topic-memory", "experience")] == [64, 16, 8]
    assert (limits.max_items, limits.item_limit("experience"), limits.min_truncated_bytes) == (
        64,
        2,
        64,
    )


@pytest.mark.parametrize("value", [0, -1, 2.5, True, "8"])
def test_limits_must_be_positive_integers(value: object) -> None:
    """A non-positive or non-integer limit raises InvalidRequestError naming the field."""
    with pytest.raises(satchel.InvalidRequestError, match=r"Limits\.max_items"):
        satchel.Limits(max_items=value)  # type: ignore[arg-type]


@pytest.mark.parametrize("method", ["ceiling", "pool_size", "item_limit"])
@pytest.mark.parametrize("family", ["bogus", "memories", None, ["memory"]])
def test_unknown_family_is_refused_by_name(method: str, family: object) -> None:
    """ceiling, pool_size and item_limit of a non-family raise InvalidRequestError naming family."""
    with pytest.raises(satchel.InvalidRequestError, match=r"^family must be one of .*memory"):
        getattr(satchel.Limits(), method)(family)


def test_the_default_counts_scale_with_a_budget_over_8000_bytes() -> None:
    """Limits().for_bytes: itself up to 8,000 bytes; above, each candidate ceiling and
    item limit times max_bytes / 8,000, rounded up; the experience family's counts and
    the per-item sizes stay."""
    limits = satchel.Limits()
    assert limits.for_bytes(512) is limits
    assert limits.for_bytes(8000) is limits
    doubled = limits.for_bytes(16000)
    assert [doubled.ceiling(f) for f in ("memory", "topic-memory", "experience", "resource")] == [
        128,
        32,
        8,
        16,
    ]
    assert (doubled.max_items, doubled.item_limit("topic-memory")) == (128, 32)
    assert (doubled.experience_items, doubled.item_bytes, doubled.min_truncated_bytes) == (
        2,
        2000,
        64,
    )
    assert doubled.pool_size("memory") == 512
    widest = limits.for_bytes(32768)  # 32768 / 8000 = 4.096
    assert (widest.memory_candidates, widest.max_items, widest.topic_memory_items) == (263, 263, 66)
    assert limits.for_bytes(16000) is doubled  # made once per budget


def test_fixed_limits_do_not_scale() -> None:
    """Limits.classic() and limits made with scale_with_budget=False keep their counts
    at any budget."""
    classic = satchel.Limits.classic()
    assert classic.scale_with_budget is False
    assert classic.for_bytes(32768) is classic
    fixed = satchel.Limits(memory_candidates=10, scale_with_budget=False)
    assert fixed.for_bytes(32768) is fixed
    custom = satchel.Limits(memory_candidates=10)
    assert custom.for_bytes(20000).memory_candidates == 25


@pytest.mark.parametrize("value", [1, None, "yes"])
def test_scale_with_budget_must_be_a_bool(value: object) -> None:
    with pytest.raises(satchel.InvalidRequestError, match=r"Limits\.scale_with_budget"):
        satchel.Limits(scale_with_budget=value)  # type: ignore[arg-type]
