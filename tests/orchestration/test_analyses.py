"""A runtime analyses a query text once: asked again, its kept analysis is the one
``analyse_query`` gives, and the kept ones stay bounded."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

import satchel
from satchel.orchestration import _prepare
from satchel.vocabulary import analyse_query

if TYPE_CHECKING:
    from satchel.vocabulary import AnalysedQuery

pytestmark = pytest.mark.anyio


async def test_a_query_asked_again_is_not_analysed_again(monkeypatch: pytest.MonkeyPatch) -> None:
    analysed: list[str] = []

    def counted(text: str) -> AnalysedQuery:
        analysed.append(text)
        return analyse_query(text)

    monkeypatch.setattr(_prepare, "analyse_query", counted)
    async with satchel.open_runtime(":memory:", embedder=satchel.HashingEmbedder()) as rt:
        await rt.add_memories("s", [satchel.MemoryEntry(text="Ana: the kestrel nests here")])
        request = satchel.PrepareContextRequest(scope_id="s", query="Where does the kestrel nest?")
        first = await rt.prepare_context(request)
        again = await rt.prepare_context(request)
        other = satchel.PrepareContextRequest(scope_id="s", query="Who saw the kestrel?")
        await rt.prepare_context(other)
    assert again == first
    assert analysed == ["Where does the kestrel nest?", "Who saw the kestrel?"]


def test_kept_analyses_are_analyse_query_s_and_stay_bounded(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(_prepare, "ANALYSES_KEPT", 16)
    preparer = _prepare.Preparer.__new__(_prepare.Preparer)
    object.__setattr__(preparer, "_analyses", {})
    assert preparer._analysed("When did Ana see a kestrel?") == analyse_query(
        "When did Ana see a kestrel?"
    )
    for n in range(40):
        preparer._analysed(f"question {n}")
    assert len(preparer._analyses) <= 16
    assert "When did Ana see a kestrel?" not in preparer._analyses
    assert preparer._analysed("question 39") == analyse_query("question 39")
