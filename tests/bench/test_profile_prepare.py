"""``bench.profile_prepare``: every stage it times names a function a prepare runs."""

from __future__ import annotations

import inspect
from typing import Any

import pytest

from bench import profile_prepare


def test_every_timed_stage_names_a_function_that_exists() -> None:
    """A stage whose function was renamed or moved broke the whole run (``fit_pack``)."""
    for stage, owner, name in (*profile_prepare.STAGES, *profile_prepare.AFTER_WRITE):
        function = getattr(owner, name, None)
        assert callable(function), (stage, owner, name)


def test_first_touch_and_after_write_steps_are_synchronous() -> None:
    """A step timed around an ``await`` would count whatever else ran meanwhile."""
    for step, owner, name in profile_prepare.AFTER_WRITE:
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


def test_a_steps_table_names_its_passes() -> None:
    counts = profile_prepare.AFTER_WRITE[-3][0]
    passes = {
        "after a write": (0.006, {counts: 0.0004, f"{counts}#": 4}),
        "no write": (0.004, {counts: 0.0001, f"{counts}#": 2}),
    }
    table = profile_prepare.steps_table(passes, 2, profile_prepare.AFTER_WRITE, "title")
    rows = table.splitlines()
    assert (
        "| step | after a write | no write | difference | calls after a write / no write |" in rows
    )
    assert "| process CPU time | 3000 | 2000 | 1000 |  |" in rows
    assert f"| {counts} | 200 | 50 | 150 | 2.0 / 1.0 |" in rows


def test_stage_timers_add_to_the_times_given() -> None:
    """Timers opened around each prepare in turn add up in one dict, a plain one too."""
    spent: dict[str, float] = {}
    analysis = profile_prepare.FIRST_TOUCH[:1]
    (_, owner, name) = analysis[0]
    for _ in range(2):
        with profile_prepare.stage_timers(analysis, spent) as same:
            assert same is spent
            getattr(owner, name)("where is the mill")
    assert spent["the query's analysis#"] == 2
    assert spent["the query's analysis"] > 0


@pytest.mark.parametrize(
    "stages",
    [profile_prepare.STAGES, profile_prepare.FIRST_TOUCH, profile_prepare.AFTER_WRITE],
)
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
