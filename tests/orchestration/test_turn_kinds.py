"""The kinds of read turns, kept by text: the same answers as telling them afresh, a
bounded memo, and nothing of an erased text kept."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

import satchel
from satchel.orchestration import _search
from satchel.vocabulary import asks_question, says_nothing

pytestmark = pytest.mark.anyio

START = datetime(2024, 3, 1, 9, 0, tzinfo=UTC)
TEXTS = (
    "Ana: lol",
    "Ben: Thanks!",
    "Ana: Did you see the kestrel by the harbour?",
    "Ben: The kestrel nests under the old lighthouse roof.",
    "Ana: ok?",
    "",
    "Ben: " + "a long turn about the kestrel and the lighthouse " * 4,
)


@pytest.mark.parametrize("text", [*TEXTS, None])
def test_a_kind_is_what_the_turn_s_text_tells(text: str | None) -> None:
    for _ in range(2):  # told afresh, then kept
        kind = _search._kind(text)
        assert bool(kind & _search._SAYS_NOTHING) == says_nothing(text)
        assert bool(kind & _search._ASKS) == asks_question(text)


def test_a_text_is_told_once_and_the_kept_kinds_stay_bounded(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Reading the same turn again tells nothing afresh; past ``KINDS_KEPT`` texts the
    oldest go, and a text told again gives the same kind."""
    calls: list[str | None] = []
    monkeypatch.setattr(_search, "_kinds", {})

    def counted(text: str | None) -> bool:
        calls.append(text)
        return says_nothing(text)

    monkeypatch.setattr(_search, "says_nothing", counted)
    assert _search._kind("Ana: lol") == _search._SAYS_NOTHING
    assert _search._kind("Ana: lol") == _search._SAYS_NOTHING
    assert calls == ["Ana: lol"]
    for n in range(_search.KINDS_KEPT + 1):
        _search._kind(f"Ben: turn {n}")
    assert len(_search._kinds) <= _search.KINDS_KEPT
    assert "Ana: lol" not in _search._kinds
    assert _search._kind("Ana: lol") == _search._SAYS_NOTHING


async def test_an_erase_leaves_no_kept_kind_of_its_text() -> None:
    """A prepare keeps the kinds of the turns it read (by their text); once an entry is
    erased, no kept kind holds any text at all."""
    secret = "Ana: my secret plan for the kestrel, ok?"
    entries = [
        satchel.MemoryEntry(text=text, created_at=START + timedelta(minutes=n), thread="chat")
        for n, text in enumerate((*TEXTS[:5], secret))
    ]
    async with satchel.open_runtime(":memory:", embedder=satchel.StaticEmbedder()) as rt:
        (*_, ref) = await rt.add_memories("chat", entries)
        request = satchel.PrepareContextRequest(scope_id="chat", query="Who saw the kestrel?")
        await rt.prepare_context(request)
        assert secret in _search._kinds
        await rt.erase(ref)
        assert not _search._kinds
