"""A fit memo reused across fits (and prepares) changes no byte of the result."""

from __future__ import annotations

import gc
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import pytest

from satchel import Limits
from satchel.builder import build_context
from satchel.builder._fitting import Candidate, FitMemo
from tests._collector import tracked_within

from .factories import memory, profile, resource

if TYPE_CHECKING:
    from satchel.vocabulary._evidence import Evidence
    from satchel.vocabulary._families import Family, Tier

SAID = datetime(2023, 5, 7, 14, 3, tzinfo=UTC)


def test_refit_with_a_memo_equals_a_fresh_fit() -> None:
    """Fitting round 0, then round 0 plus new candidates, with one memo, is byte-identical
    to fitting each from scratch; the memo holds each evidence encoded once."""
    round0 = [memory(f"m{n}", "kestrel " * (n + 1)) for n in range(5)]
    merged = [*round0, *(memory(f"x{n}", "osprey " * 40) for n in range(20))]
    memo = FitMemo(Limits())
    for candidates in (round0, merged):
        for max_bytes in (600, 8000):
            fresh = build_context(
                {"memory": candidates}, max_bytes=max_bytes, sections=None, detail={},
                limits=Limits(),
            )  # fmt: skip
            memoised = build_context(
                {"memory": candidates}, max_bytes=max_bytes, sections=None, detail={},
                limits=Limits(), memo=memo,
            )  # fmt: skip
            assert memoised == fresh
    assert len(memo) <= len(merged)
    assert all(item in memo for item in round0)


def test_a_memo_keeps_each_tier_ceiling_apart() -> None:
    """The same resource fitted with and without a ``full`` pin is encoded per ceiling, so
    a pinned fit never reuses the abstract-only encoding (nor the reverse)."""
    item = resource("r", abstract="short abstract", body="the whole body " * 20)
    memo = FitMemo(Limits())
    pins: list[dict[Family, Tier]] = [{}, {"resource": "full"}, {}]
    for detail in pins:
        fresh = build_context(
            {"resource": [item]}, max_bytes=4000, sections=None, detail=detail, limits=Limits()
        )
        memoised = build_context(
            {"resource": [item]}, max_bytes=4000, sections=None, detail=detail,
            limits=Limits(), memo=memo,
        )  # fmt: skip
        assert memoised == fresh
    assert len(memo) == 1  # the abstract-only encoding; the pinned one is never kept


def test_a_full_memo_drops_its_oldest_entries() -> None:
    """Past its capacity the memo forgets the oldest evidence first, and fits stay exact."""
    items = [memory(f"m{n}", f"note {n}") for n in range(6)]
    memo = FitMemo(Limits(), capacity=4)
    result = build_context(
        {"memory": items}, max_bytes=8000, sections=None, detail={}, limits=Limits(), memo=memo
    )
    assert len(result.delivered) == 6
    assert len(memo) == 4
    assert [item in memo for item in items] == [False, False, True, True, True, True]


@pytest.mark.parametrize("other", [Limits(item_bytes=500), Limits(min_truncated_bytes=32)])
def test_a_memo_made_for_other_limits_is_refused(other: Limits) -> None:
    """An item's encoding depends on the item cap and the truncation floor: a memo made
    under others is refused."""
    with pytest.raises(ValueError, match="other limits"):
        build_context(
            {"memory": [memory("m", "x")]}, max_bytes=800, sections=None, detail={},
            limits=other, memo=FitMemo(Limits()),
        )  # fmt: skip


def test_a_memo_serves_every_budgets_scaling_of_its_limits() -> None:
    """Counts do not change an encoding: the runtime's one memo serves a prepare of any
    budget (``Limits.for_bytes``) and the classic limits, with the same result as a
    fit without it."""
    items = [memory(f"m{i}", f"note {i} " * 20) for i in range(80)]
    memo = FitMemo(Limits())
    for limits in (Limits().for_bytes(32768), Limits.classic()):
        assert memo.serves(limits)
        kept = build_context(
            {"memory": items}, max_bytes=32768, sections=None, detail={}, limits=limits,
            memo=memo,
        )  # fmt: skip
        plain = build_context(
            {"memory": items}, max_bytes=32768, sections=None, detail={}, limits=limits
        )
        assert kept.render() == plain.render()


def test_a_resource_served_with_its_body_is_never_kept() -> None:
    """A resource pinned at ``full`` carries a body read for one prepare (a new evidence
    each time, of any size): the memo encodes it but keeps nothing of it."""
    item = resource("r", abstract="short abstract", body="the whole body " * 200)
    memo = FitMemo(Limits())
    result = build_context(
        {"resource": [item]}, max_bytes=8000, sections=None, detail={"resource": "full"},
        limits=Limits(), memo=memo,
    )  # fmt: skip
    assert [delivered.tier for delivered in result.delivered] == ["full"]
    assert len(memo) == 0


def test_entries_the_memo_drops_are_freed_at_once_not_left_to_the_collector() -> None:
    """An evicted entry holds no reference cycle: it is freed when the memo lets go,
    instead of waiting in the oldest generation for a full garbage collection (which
    stalls the host's event loop for tens of milliseconds)."""
    memo = FitMemo(Limits(), capacity=2)
    gc.collect()
    gc.disable()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        for batch in range(5):
            items = [memory(f"m{batch}-{n}", f"note {n} of batch {batch}") for n in range(4)]
            build_context(
                {"memory": items}, max_bytes=8000, sections=None, detail={},
                limits=Limits(), memo=memo,
            )  # fmt: skip
        gc.collect()
        left = [type(found).__name__ for found in gc.garbage]
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        gc.enable()
    assert len(memo) == 2
    assert left == []


def test_content_changed_under_one_identity_is_encoded_anew() -> None:
    """A profile keeps its identity (the scope) when its text changes, and so may a
    version forgotten and written again: the memo serves a kept encoding only to evidence
    with the content it was made from."""
    memo = FitMemo(Limits())
    for text in ("prefers short answers", "prefers long answers, with sources"):
        fresh = build_context(
            {"profile": [profile(text)]}, max_bytes=4000, sections=None, detail={},
            limits=Limits(),
        )  # fmt: skip
        memoised = build_context(
            {"profile": [profile(text)]}, max_bytes=4000, sections=None, detail={},
            limits=Limits(), memo=memo,
        )  # fmt: skip
        assert memoised == fresh
        assert text in (memoised.render().content or "")


def test_kept_encodings_are_nothing_the_garbage_collector_walks() -> None:
    """However many items the memo keeps, it is a constant handful of tracked objects:
    kept candidates (head, ladder, literals, placement: nine objects each) made young
    collections beside prepares on a large scope walk tens of thousands of objects."""
    memo = FitMemo(Limits())
    empty = tracked_within(memo)
    items = [memory(f"m{n}", f"note {n}", created_at=SAID) for n in range(60)]
    build_context(
        {"memory": items}, max_bytes=100_000, sections=None, detail={}, limits=Limits(),
        memo=memo,
    )  # fmt: skip
    assert len(memo) == 60
    assert tracked_within(memo) <= empty + 1  # its dict, once it holds entries


def test_a_full_memo_evicts_its_oldest_eighth_at_once() -> None:
    """One eviction per new entry made each freed entry cancel the allocation count that
    starts a young collection (see the evidence cache)."""
    items = [memory(f"m{n}", f"note {n}") for n in range(17)]
    memo = FitMemo(Limits(), capacity=16)
    build_context(
        {"memory": items}, max_bytes=100_000, sections=None, detail={}, limits=Limits(),
        memo=memo,
    )  # fmt: skip
    assert [item in memo for item in items] == [False] * 3 + [True] * 14


def test_a_spent_budget_restores_no_kept_encoding(monkeypatch: pytest.MonkeyPatch) -> None:
    """Once the budget is spent the rest of a warm memo's candidates are dropped for the
    cost of their floor: none is rebuilt from its kept encoding, and the fit is the one
    a fresh fit makes."""
    items = [memory(f"m{n}", f"note number {n:02}") for n in range(12)]
    memo = FitMemo(Limits())
    exact = build_context(
        {"memory": items[:3]}, max_bytes=8000, sections=None, detail={}, limits=Limits()
    ).content_bytes
    build_context(
        {"memory": items}, max_bytes=8000, sections=None, detail={}, limits=Limits(), memo=memo
    )
    restored: list[str] = []
    restore = Candidate.restore

    def counted(kept: dict[str, Any], evidence: Evidence, ceiling: Tier, limits: Limits) -> Any:
        restored.append(evidence.identity)
        return restore(kept, evidence, ceiling, limits)

    monkeypatch.setattr(Candidate, "restore", counted)
    memoised = build_context(
        {"memory": items}, max_bytes=exact, sections=None, detail={}, limits=Limits(), memo=memo
    )
    fresh = build_context(
        {"memory": items}, max_bytes=exact, sections=None, detail={}, limits=Limits()
    )
    assert memoised == fresh
    assert len(memoised.delivered) == 3
    assert restored == [item.identity for item in items[:3]]
