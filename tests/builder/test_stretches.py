"""A fit in stretches: it pauses between every FIT_STRETCH placed candidates and returns
exactly what the fit run through at once returns."""

from __future__ import annotations

import satchel
from satchel.builder import BuildResult, FitMemo, build_context, fitting
from satchel.builder._fitting import FIT_STRETCH
from satchel.vocabulary import Evidence, Family

SCOPE = "project:demo"


def candidates(count: int) -> dict[Family, tuple[Evidence, ...]]:
    return {
        "memory": tuple(
            Evidence.from_record("memory", SCOPE, f"e{n}", 1, text=f"fact {n} " + "word " * n)
            for n in range(count)
        )
    }


def test_a_fit_pauses_between_stretches_and_returns_what_the_whole_fit_returns() -> None:
    limits = satchel.Limits()
    for count, budget in ((1, 8000), (FIT_STRETCH, 8000), (40, 8000), (40, 900), (64, 4000)):
        stretches = fitting(
            candidates(count), max_bytes=budget, sections=None, detail={}, limits=limits
        )
        pauses = 0
        while True:
            try:
                next(stretches)
            except StopIteration as done:
                fitted = done.value
                break
            pauses += 1
        # One pause after each full stretch that more candidates follow.
        assert pauses == (count - 1) // FIT_STRETCH
        whole = build_context(
            candidates(count), max_bytes=budget, sections=None, detail={}, limits=limits
        )
        built = BuildResult(fitted)
        assert built.render() == whole.render()
        assert built.delivered == whole.delivered


def test_fits_interleaved_on_one_memo_give_what_each_gives_alone() -> None:
    """Prepares run their fits' stretches in turns on one runtime's memo (a small one
    here, so each evicts the other's entries): each pack is what it is alone."""
    limits = satchel.Limits()
    first = candidates(48)
    second: dict[Family, tuple[Evidence, ...]] = {
        "memory": tuple(reversed(candidates(40)["memory"]))
    }
    alone = [
        build_context(found, max_bytes=3000, sections=None, detail={}, limits=limits)
        for found in (first, second)
    ]
    memo = FitMemo(limits, capacity=24)
    running = [
        fitting(found, max_bytes=3000, sections=None, detail={}, limits=limits, memo=memo)
        for found in (first, second)
    ]
    results: list[BuildResult | None] = [None, None]
    while any(result is None for result in results):
        for n, stretches in enumerate(running):
            if results[n] is None:
                try:
                    next(stretches)
                except StopIteration as done:
                    results[n] = BuildResult(done.value)
    for result, whole in zip(results, alone, strict=True):
        assert result is not None
        assert result.render() == whole.render()
