"""A question that asks when lifts the read turns that say when: in a chat, the turn
that answers "When did Bob adopt Miso?" is the one naming the day ("last Saturday"),
and the one answering "How long has Bob had Miso?" says for how long ("for three years
now")."""

from __future__ import annotations

import pytest

import satchel
from tests._chats import explained_chat

pytestmark = pytest.mark.anyio

DATED = "Bob: Busy! We adopted a kitten last Saturday, her name is Miso."
#: Holds the question's words as well, and says nothing of when.
UNDATED = "Bob: Miso sleeps on my keyboard all day, adopting her was the best idea."
CHAT = (
    "Alice: Morning! How was the weekend?",
    DATED,
    "Alice: Aww, Miso is a cute name.",
    UNDATED,
    "Alice: Did you adopt her from the shelter on Elm Street?",
    "Bob: Yes, they had so many cats to adopt.",
    "Alice: I want a cat too but my landlord says no.",
    "Bob: Miso would love a friend though.",
    "Bob: Adopting Miso was easy, Miso adapted to the flat in no time.",
)


async def _explained(
    query: str, weights: satchel.FusionWeights, max_bytes: int = 4000, chat: tuple[str, ...] = CHAT
) -> tuple[dict[str | None, float | None], tuple[str | None, ...]]:
    return await explained_chat(chat, query, weights, max_bytes)


#: Says for how long, not the cat's name.
SPAN = "Bob: Ha, we have had her for three years now."
#: Says the cat's name, and nothing of how long.
UNSPANNED = "Bob: Miso sleeps on my keyboard all day, having her was the best idea."
SPAN_CHAT = (
    "Alice: How is your cat doing?",
    SPAN,
    "Alice: Aww, Miso is a cute name.",
    UNSPANNED,
    "Alice: Did you get her from the shelter on Elm Street?",
    "Bob: Yes, they had so many cats there.",
    "Alice: I want a cat too but my landlord says no.",
    "Bob: Miso would love a friend though.",
    "Bob: Miso adapted to the flat in no time, Miso is a star.",
)
HOW_LONG = "How long has Bob had Miso?"


async def test_a_turn_that_says_when_scores_more_for_a_question_that_asks_when() -> None:
    lifted, _ = await _explained("When did Bob adopt Miso?", satchel.FusionWeights())
    plain, _ = await _explained("When did Bob adopt Miso?", satchel.FusionWeights(when=0.0))
    assert lifted[DATED] == pytest.approx(1.5 * plain[DATED])  # type: ignore[operator]
    assert lifted[UNDATED] == plain[UNDATED]
    assert plain[DATED] < plain[UNDATED] < lifted[DATED]  # type: ignore[operator]


async def test_a_question_that_does_not_ask_when_lifts_nothing() -> None:
    asked, _ = await _explained("Where did Bob adopt Miso?", satchel.FusionWeights())
    plain, _ = await _explained("Where did Bob adopt Miso?", satchel.FusionWeights(when=0.0))
    assert asked == plain


async def test_a_small_pack_asked_when_holds_the_turn_that_says_when() -> None:
    """Room for two turns: the lift decides whether the one that says when is one."""
    _, delivered = await _explained("When did Bob adopt Miso?", satchel.FusionWeights(), 512)
    _, unlifted = await _explained("When did Bob adopt Miso?", satchel.FusionWeights(when=0.0), 512)
    assert DATED in delivered
    assert DATED not in unlifted


async def test_asked_for_how_long_the_turn_that_says_a_span_of_time_scores_more() -> None:
    lifted, _ = await _explained(HOW_LONG, satchel.FusionWeights(), chat=SPAN_CHAT)
    plain, _ = await _explained(HOW_LONG, satchel.FusionWeights(when=0.0), chat=SPAN_CHAT)
    assert lifted[SPAN] == pytest.approx(1.5 * plain[SPAN])  # type: ignore[operator]
    assert lifted[UNSPANNED] == plain[UNSPANNED]
    assert plain[SPAN] < plain[UNSPANNED] < lifted[SPAN]  # type: ignore[operator]


async def test_a_small_pack_asked_for_how_long_holds_the_turn_that_says_it() -> None:
    _, delivered = await _explained(HOW_LONG, satchel.FusionWeights(), 600, SPAN_CHAT)
    _, unlifted = await _explained(HOW_LONG, satchel.FusionWeights(when=0.0), 600, SPAN_CHAT)
    assert delivered[0] == SPAN
    assert SPAN not in unlifted


@pytest.mark.parametrize("value", [-0.1, True, float("nan")])
def test_the_when_weight_is_a_weight(value: object) -> None:
    with pytest.raises(satchel.InvalidRequestError, match=r"FusionWeights\.when"):
        satchel.FusionWeights(when=value)  # type: ignore[arg-type]
