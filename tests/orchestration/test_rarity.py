"""A read turn that says something rare in its chat scores more than one of courtesy:
in a chat full of thanks, "What did Bob say about Miso?" is answered by the vase."""

from __future__ import annotations

import math
from datetime import timedelta

import pytest

import satchel
from satchel.stores import SqliteStore
from satchel.vocabulary import _dates, _rarity
from tests._chats import START, explained_chat

pytestmark = pytest.mark.anyio

FACT = "Bob: Miso knocked the ceramic vase off the bookshelf yesterday."
COURTESY = "Bob: Miso says thanks, Alice!"
CHAT = (
    "Alice: Morning Bob! How is Miso?",
    "Bob: Thanks Alice, Miso is great, thanks for asking!",
    "Alice: Great! Say hi to Miso for me!",
    FACT,
    "Alice: Oh no! Thanks for telling me, that's so Miso.",
    "Bob: Thanks, talk soon Alice!",
    "Alice: Talk soon Bob, hugs to Miso!",
    COURTESY,
)
QUERY = "What did Bob say about Miso?"


async def _explained(
    weights: satchel.FusionWeights, max_bytes: int = 4000
) -> tuple[dict[str | None, float | None], tuple[str | None, ...]]:
    return await explained_chat(CHAT, QUERY, weights, max_bytes)


async def test_a_read_turn_scores_by_how_rare_its_words_are_in_the_chat() -> None:
    rated, _ = await _explained(satchel.FusionWeights())
    plain, _ = await _explained(satchel.FusionWeights(rarity=0.0))
    rarer, commoner = rated[FACT] / plain[FACT], rated[COURTESY] / plain[COURTESY]  # type: ignore[operator]
    assert commoner < rarer <= math.exp(1.5 * 0.5)
    assert plain[FACT] < plain[COURTESY]  # type: ignore[operator]
    assert rated[FACT] > rated[COURTESY]  # type: ignore[operator]


async def test_a_small_pack_leads_with_the_turn_that_says_something() -> None:
    _, delivered = await _explained(satchel.FusionWeights(), 512)
    _, unrated = await _explained(satchel.FusionWeights(rarity=0.0), 512)
    assert delivered[0] == FACT
    assert unrated[0] == COURTESY


@pytest.mark.parametrize("value", [-1.0, True, float("inf")])
def test_the_rarity_weight_is_a_weight(value: object) -> None:
    with pytest.raises(satchel.InvalidRequestError, match=r"FusionWeights\.rarity"):
        satchel.FusionWeights(rarity=value)  # type: ignore[arg-type]


async def test_an_erase_leaves_no_text_or_word_of_it_kept_for_rating() -> None:
    """A prepare keeps what it worked out of the turns it rated (how many terms their
    speakers' names hold, whether they say when: by their text), and the store the
    scope's counts of their words; once an entry is erased, none of them is kept."""
    secret = "Ana: the kestrel nest is behind the old mill, since last Friday"
    entries = [
        satchel.MemoryEntry(text=text, created_at=START + timedelta(minutes=n), thread="chat")
        for n, text in enumerate((*CHAT, secret))
    ]
    store = await SqliteStore.open()
    async with satchel.open_runtime(store=store, embedder=satchel.StaticEmbedder()) as rt:
        (*_, ref) = await rt.add_memories("chat", entries)
        ask = "When did Ana find the kestrel nest?"
        await rt.prepare_context(satchel.PrepareContextRequest(scope_id="chat", query=ask))
        assert secret in _rarity._SEEN
        assert "Ana" in _rarity._NAME_TERMS  # the SQLite store reads the words it rates
        assert secret in _dates._SAID_WHEN
        assert "mill" in store._term_counts.at("memory", "chat", store.scope_version("chat")).counts
        await rt.erase(ref)
        assert not _rarity._SEEN
        assert not _rarity._NAME_TERMS
        assert not _dates._SAID_WHEN
        assert ("memory", "chat") not in store._term_counts._kept
