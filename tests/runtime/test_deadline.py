"""rt.deadline_for: the retrieval budget plus each stage's fuse, capped by prepare_timeout."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import anyio
import pytest

import satchel
from tests._clock import MOCK_CLOCK

if TYPE_CHECKING:
    from collections.abc import Sequence

pytestmark = pytest.mark.anyio

REQUEST = satchel.PrepareContextRequest(scope_id="team", query="deploy cadence")
EXPERIENCE_ONLY = satchel.PrepareContextRequest(
    scope_id="team",
    query="deploy cadence",
    assembly=satchel.Assembly((satchel.Section("experience", 2),)),
)
LESSON = satchel.Experience(
    situation="the deploy cadence slipped",
    action="moved deploys to Thursdays",
    outcome="fewer rollbacks",
    lesson="keep a fixed deploy cadence",
)


async def planner(query: str, **context: Any) -> Sequence[str]:
    return [query]


async def digest(query: str, items: Sequence[satchel.ContextItem]) -> Sequence[int]:
    return list(range(len(items)))


async def deadline(**options: Any) -> float:
    async with satchel.open_runtime(embedder=satchel.HashingEmbedder(), **options) as rt:
        return rt.deadline_for(REQUEST)


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        ({}, math.inf),
        ({"round_timeout": 1.0}, 1.0),
        ({"round_timeout": 1.0, "recall_policy": satchel.RecallSufficiencyPolicy()}, 3.0),
        ({"round_timeout": 1.0, "planner": planner}, 6.0),
        ({"round_timeout": 1.0, "digest": digest}, 31.0),
        ({"round_timeout": 1.0, "planner": planner, "planner_timeout": 2.0}, 3.0),
        (
            {"round_timeout": 1.0, "planner": planner, "digest": digest, "prepare_timeout": 10.0},
            10.0,
        ),
        ({"prepare_timeout": 4.0}, 4.0),
    ],
    ids=["unbounded", "round", "gate", "planner", "digest", "planner-fuse", "capped", "prepare"],
)
async def test_the_deadline_adds_what_the_request_runs(
    options: dict[str, Any], expected: float
) -> None:
    """Round 0 and each allowed expansion add round_timeout; a stage that is on adds its
    fuse, one that is off adds nothing; prepare_timeout caps the sum."""
    assert await deadline(**options) == expected


async def test_a_malformed_request_is_refused_by_name() -> None:
    """deadline_for validates the request as prepare_context does."""
    async with satchel.open_runtime(embedder=satchel.HashingEmbedder()) as rt:
        with pytest.raises(satchel.InvalidRequestError, match="max_bytes"):
            rt.deadline_for(satchel.PrepareContextRequest(scope_id="team", query="q", max_bytes=1))


@pytest.mark.parametrize("anyio_backend", MOCK_CLOCK)
async def test_a_prepare_whose_stages_run_to_their_fuses_ends_within_the_deadline() -> None:
    """With a planner and a digest that both run until their fuses cut them off, the
    call still returns within deadline_for(request). (Experience is searched inline, so
    no worker thread lets the mock clock jump.)"""

    async def stuck_planner(query: str, **context: Any) -> Sequence[str]:
        await anyio.sleep(1000)
        return [query]

    async def stuck_digest(query: str, items: Sequence[satchel.ContextItem]) -> Sequence[int]:
        await anyio.sleep(1000)
        return []

    async with satchel.open_runtime(
        embedder=satchel.HashingEmbedder(),
        planner=stuck_planner,
        digest=stuck_digest,
        planner_timeout=2.0,
        digest_timeout=3.0,
        round_timeout=1.0,
    ) as rt:
        await rt.add_experiences("team", [LESSON])
        started = anyio.current_time()
        context = await rt.prepare_context(EXPERIENCE_ONLY)
        elapsed = anyio.current_time() - started
        assert elapsed == 5.0  # both fuses, and a round that took no time
        assert elapsed <= rt.deadline_for(EXPERIENCE_ONLY) == 6.0
    assert context.status == "ready"
