"""A chat's messages that say nothing ("lol", "<Media omitted>") between a question's
hit and the turn that answers it: a store's thread neighbours pass over them, so the
answer is the hit's neighbour and in its passage."""

from __future__ import annotations

import pytest

import satchel
from tests._chats import explained_chat

pytestmark = pytest.mark.anyio

HIT = "Ana: Look what I made at the pottery class yesterday!"
ANSWER = "Ana: A blue bowl for my mum, it took three weeks to glaze it right."
QUERY = "What did Ana make at her pottery class?"
CHAT = (
    "Ana: Morning! Coffee later?",
    "Ben: Sure, after my call with the landlord.",
    "Ben: The kitchen tap is dripping again.",
    "Ana: Ugh, landlords.",
    "Ben: Did you see the match last night?",
    "Ana: Only the second half, the referee was awful.",
    HIT,
    "Ana: <Media omitted>",
    "Ben: lol",
    "Ben: haha",
    ANSWER,
    "Ben: Mountains are not my thing, I prefer the beach.",
    "Ana: We should plan the summer trip soon.",
)


async def test_the_answer_after_a_run_of_fillers_is_the_hits_neighbour() -> None:
    """Three messages that say nothing stand between the hit and its answer, which
    holds no word of the question: passed over, the answer is the hit's next turn and
    delivered right after it, and the fillers are not delivered."""
    _, delivered = await explained_chat(CHAT, QUERY, satchel.FusionWeights(), 1000)
    assert delivered[:2] == (HIT, ANSWER)
    assert not any(text in delivered for text in ("Ana: <Media omitted>", "Ben: lol"))
