"""``bench.profile_prepare``: every stage it times names a function a prepare runs."""

from __future__ import annotations

import inspect

from bench import profile_prepare


def test_every_timed_stage_names_a_function_that_exists() -> None:
    """A stage whose function was renamed or moved broke the whole run (``fit_pack``)."""
    for stage, owner, name in profile_prepare.STAGES:
        function = getattr(owner, name, None)
        assert callable(function), (stage, owner, name)


def test_stage_timers_patch_in_and_restore_every_function() -> None:
    before = [getattr(owner, name) for _, owner, name in profile_prepare.STAGES]
    with profile_prepare.stage_timers() as spent:
        during = [getattr(owner, name) for _, owner, name in profile_prepare.STAGES]
        assert all(a is not b for a, b in zip(before, during, strict=True))
        assert not spent
    after = [getattr(owner, name) for _, owner, name in profile_prepare.STAGES]
    assert all(a is b for a, b in zip(before, after, strict=True))
    assert all(
        inspect.iscoroutinefunction(a) == inspect.iscoroutinefunction(b)
        for a, b in zip(before, during, strict=True)
    )
