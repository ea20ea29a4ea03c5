"""``bench/stores.py``: the seekdb ingest is timed only once the new engine's start-up
job (loading its system packages) has succeeded."""

from __future__ import annotations

from typing import Any

import pytest

import satchel
from bench import stores

pytestmark = pytest.mark.anyio


class _Engine:
    """A store whose engine answers the job's state from ``answers``, one per call."""

    def __init__(self, *answers: object) -> None:
        self.answers = list(answers)
        self.calls = 0

    async def _call(self, operation: str, work: Any) -> Any:
        self.calls += 1
        answer = self.answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer


async def test_the_wait_ends_when_the_job_has_succeeded() -> None:
    """No job yet, then running, then done: three reads, and none after."""
    engine = _Engine(None, ("INPROGRESS",), ("SUCCESS",), ("SUCCESS",))
    assert await stores.engine_settled(engine, poll=0) >= 0
    assert engine.calls == 3


async def test_an_engine_without_the_view_is_not_waited_for() -> None:
    engine = _Engine(satchel.StoreError("bench failed: no such table"), ("SUCCESS",))
    await stores.engine_settled(engine, poll=0)
    assert engine.calls == 1
