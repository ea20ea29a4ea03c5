"""The named-speaker lift in a chat: a question about a person lifts what they said
and the replies they got, not the turns said just before theirs."""

from __future__ import annotations

import pytest

import satchel
from tests._chats import explained_chat

pytestmark = pytest.mark.anyio

ASK = "Ana: Any tips for the Dolomites? I've never done proper mountains before."
REPLY = "Ben: Pack layers and set off before sunrise, the storms there roll in fast."
#: Said just before Ana's turn on the documentary (a hit on "Dolomites"), by Ben.
BEFORE = "Ben: My work trip got cancelled, honestly I'm relieved."
CHAT = (
    "Ana: Morning! Coffee later?",
    "Ben: Sure, after my call. Did you see the match last night?",
    ASK,
    REPLY,
    "Ana: Noted, thank you!",
    BEFORE,
    "Ana: I watched a documentary about the Dolomites, the cliffs looked fake.",
    "Ben: The kitchen tap is dripping again.",
    "Ana: Ugh, landlords.",
    "Ben: Mountains are not my thing, I prefer the beach.",
)
QUERY = "What advice did Ana get about the trip to the Dolomites?"


async def _scores(
    weights: satchel.FusionWeights, chat: tuple[str, ...] = CHAT
) -> dict[str | None, float | None]:
    scores, _ = await explained_chat(chat, QUERY, weights)
    return scores


async def test_the_reply_to_a_named_turn_is_lifted_and_the_turn_before_it_is_not() -> None:
    lifted = await _scores(satchel.FusionWeights())
    plain = await _scores(satchel.FusionWeights(named_speaker=0.0))
    lift = 1 + satchel.FusionWeights().named_speaker
    assert lifted[ASK] == pytest.approx(lift * plain[ASK])  # type: ignore[operator]
    assert lifted[REPLY] == pytest.approx(lift * plain[REPLY])  # type: ignore[operator]
    assert lifted[BEFORE] == plain[BEFORE]


async def test_a_turn_that_asks_scores_less_once_read() -> None:
    """A chat's questions repeat a topic's words and its answers hold the facts: a read
    turn ending with a question mark scores 0.8 of its score, any other keeps it."""
    asked = await _scores(satchel.FusionWeights())
    plain = await _scores(satchel.FusionWeights(question=0.0))
    question = "Ben: Sure, after my call. Did you see the match last night?"
    assert asked[question] == pytest.approx(0.8 * plain[question])  # type: ignore[operator]
    assert asked[REPLY] == plain[REPLY]
    assert asked[BEFORE] == plain[BEFORE]


@pytest.mark.parametrize("value", [-0.1, 1.0, True])
def test_the_question_weight_is_a_share_below_one(value: object) -> None:
    with pytest.raises(satchel.InvalidRequestError, match=r"FusionWeights\.question"):
        satchel.FusionWeights(question=value)  # type: ignore[arg-type]


async def test_a_turn_that_says_nothing_scores_a_tenth_once_read() -> None:
    """A chat's fillers answer no question, yet beside a hit they rank as its
    neighbours: once read, a turn that says nothing scores 0.1 of its score, and one
    that also asks ("Thanks! What's up?") is damped once, as a filler."""
    laugh, asking = "Ana: haha yeah", "Ana: Thanks! What's up with you?"
    chat = (*CHAT[:4], laugh, asking, *CHAT[4:])
    damped = await _scores(satchel.FusionWeights(), chat)
    plain = await _scores(satchel.FusionWeights(filler=0.0), chat)
    assert damped[laugh] == pytest.approx(0.1 * plain[laugh])  # type: ignore[operator]
    unasked = await _scores(satchel.FusionWeights(filler=0.0, question=0.0), chat)
    assert damped[asking] == pytest.approx(0.1 * unasked[asking])  # type: ignore[operator]
    assert damped[REPLY] == plain[REPLY]
    assert damped["Ana: Ugh, landlords."] == plain["Ana: Ugh, landlords."]


@pytest.mark.parametrize("value", [-0.1, 1.0, "0.5"])
def test_the_filler_weight_is_a_share_below_one(value: object) -> None:
    with pytest.raises(satchel.InvalidRequestError, match=r"FusionWeights\.filler"):
        satchel.FusionWeights(filler=value)  # type: ignore[arg-type]
