"""A fit memo reused across fits of one prepare changes no byte of the result."""

from __future__ import annotations

from typing import TYPE_CHECKING

from glean import Limits
from glean.builder import build_context

from .factories import memory

if TYPE_CHECKING:
    from glean.builder._fitting import FitMemo


def test_refit_with_a_memo_equals_a_fresh_fit() -> None:
    """Fitting round 0, then round 0 plus new candidates, with one memo, is byte-identical
    to fitting each from scratch; the memo holds each evidence encoded once."""
    round0 = [memory(f"m{n}", "kestrel " * (n + 1)) for n in range(5)]
    merged = [*round0, *(memory(f"x{n}", "osprey " * 40) for n in range(20))]
    memo: FitMemo = {}
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
    assert {id(item) for item in round0} <= set(memo)
