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
