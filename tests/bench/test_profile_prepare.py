"""``bench.profile_prepare``: every stage it times names a function a prepare runs."""

from __future__ import annotations

import inspect
from typing import Any

import pytest

from bench import profile_prepare


def test_every_timed_stage_names_a_function_that_exists() -> None:
    """A stage whose function was renamed or moved broke the whole run (``fit_pack``)."""
    for stage, owner, name in (*profile_prepare.STAGES, *profile_prepare.FIRST_TOUCH):
        function = getattr(owner, name, None)
        assert callable(function), (stage, owner, name)


def test_first_touch_steps_are_synchronous() -> None:
    """A step timed around an ``await`` would count whatever else ran meanwhile."""
    for step, owner, name in profile_prepare.FIRST_TOUCH:
        assert not inspect.iscoroutinefunction(getattr(owner, name)), step


def test_first_touch_table_is_per_prepare_once_again_and_the_difference() -> None:
    analysis, fit = profile_prepare.FIRST_TOUCH[0][0], profile_prepare.FIRST_TOUCH[9][0]
    passes = {
        "once": (0.004, {analysis: 0.0002, f"{analysis}#": 2, fit: 0.0006, f"{fit}#": 30}),
        "again": (0.002, {fit: 0.0001, f"{fit}#": 2}),
    }
    rows = profile_prepare.first_touch_table(passes, count=2).splitlines()
    assert "| process CPU time | 2000 | 1000 | 1000 |  |" in rows
    assert f"| {analysis} | 100 | 0 | 100 | 1.0 / 0.0 |" in rows
    assert f"| {fit} | 300 | 50 | 250 | 15.0 / 1.0 |" in rows


@pytest.mark.parametrize("stages", [profile_prepare.STAGES, profile_prepare.FIRST_TOUCH])
def test_stage_timers_patch_in_and_restore_every_function(stages: Any) -> None:
    before = [getattr(owner, name) for _, owner, name in stages]
    with profile_prepare.stage_timers(stages) as spent:
        during = [getattr(owner, name) for _, owner, name in stages]
        assert all(a is not b for a, b in zip(before, during, strict=True))
        assert not spent
    after = [getattr(owner, name) for _, owner, name in stages]
    assert all(a is b for a, b in zip(before, after, strict=True))
    assert all(
        inspect.iscoroutinefunction(a) == inspect.iscoroutinefunction(b)
        for a, b in zip(before, during, strict=True)
    )
