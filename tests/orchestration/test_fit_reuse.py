"""The hot path fits without repeating itself: each delivered item is encoded once per
runtime, and a prepare renders only its final fit."""

from __future__ import annotations

from typing import TYPE_CHECKING

import anyio
import pytest

import satchel
from satchel.builder import _build
from satchel.builder._fitting import Candidate
from tests._orchestration import ScriptedEmbedder, policy, request, seed

if TYPE_CHECKING:
    from pathlib import Path

pytestmark = pytest.mark.anyio


@pytest.fixture
def db(tmp_path: Path) -> Path:
    path = tmp_path / "g.db"
    anyio.run(seed, path, ("a",))
    return path


def count_calls(monkeypatch: pytest.MonkeyPatch, owner: object, name: str) -> list[int]:
    """Wrap ``owner.name`` so each call appends to the returned list."""
    calls: list[int] = []
    original = getattr(owner, name)

    def counted(*args: object, **kwargs: object) -> object:
        calls.append(1)
        return original(*args, **kwargs)

    monkeypatch.setattr(owner, name, counted)
    return calls


async def test_a_later_prepare_reuses_the_encoded_items(
    db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The second prepare of a turn's query encodes nothing: the evidence the store serves
    again is fitted from the runtime's memo, with the same bytes."""
    encoded = count_calls(monkeypatch, Candidate, "from_evidence")
    async with satchel.open_runtime(str(db), embedder=ScriptedEmbedder()) as rt:
        first = await rt.prepare_context(request())
        after_first = len(encoded)
        second = await rt.prepare_context(request())
    assert after_first >= 1
    assert len(encoded) == after_first
    assert second == first


async def test_an_expanded_prepare_renders_only_its_final_fit(
    db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Round 0's fit is judged by its counts; only the fit after the expansion is rendered,
    and what it renders is what the prepare returns."""
    rendered = count_calls(monkeypatch, _build, "_prepared")
    efforts: list[satchel.RecallEffort] = []

    async def sink(effort: satchel.RecallEffort) -> None:
        efforts.append(effort)

    async with satchel.open_runtime(
        str(db), embedder=ScriptedEmbedder(), recall_policy=policy(), recall_effort_sink=sink
    ) as rt:
        context = await rt.prepare_context(request())
    assert efforts[0].rounds == 2
    assert len(rendered) == 1
    assert context.content is not None
    assert context.content_bytes == len(context.content.encode())
