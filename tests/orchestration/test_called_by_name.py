"""A question names someone the chat labels otherwise (a phone number, a full name):
in a chat of two, the person the other calls by that name is the one it names."""

from __future__ import annotations

import pytest

import satchel
from tests._chats import explained_chat

#: How much a turn said by the person a query names scores (the shipped weight).
LIFTED = 1 + satchel.FusionWeights().named_speaker

pytestmark = pytest.mark.anyio

KATE, SAM = "+44 7700 900001", "+44 7700 900002"
LASAGNA = f"{KATE}: Busy, I cooked lasagna for the whole family on Sunday."
#: Said by Sam after his own reply to Kate (a reply to a named turn is lifted too).
CURRY = f"{SAM}: I cooked a curry, my first try."
CHAT = (
    f"{SAM}: Hey Kate! How was the weekend?",
    LASAGNA,
    f"{SAM}: Nice, sounds delicious.",
    CURRY,
    f"{KATE}: Curry is hard to get right.",
    f"{SAM}: Thanks, Kate. I will send you the recipe.",
    f"{KATE}: Please do, I like to cook new things.",
    f"{SAM}: The kitchen tap is dripping again.",
    f"{KATE}: Ugh, landlords.",
)
QUERY = "What did Kate cook?"


async def _lift(
    chat: tuple[str, ...], query: str = QUERY, thread: str | None = "chat"
) -> dict[str | None, float]:
    """Each delivered turn's score with the named-speaker lift over its score without."""
    lifted, _ = await explained_chat(chat, query, satchel.FusionWeights(), thread=thread)
    unlifted = satchel.FusionWeights(named_speaker=0.0)
    plain, _ = await explained_chat(chat, query, unlifted, thread=thread)
    return {text: lifted[text] / plain[text] for text in lifted}  # type: ignore[operator]


async def test_the_person_the_other_calls_by_the_name_is_the_one_named() -> None:
    """Sam calls the other number "Kate" twice: her turns are lifted, Sam's are not."""
    lift = await _lift(CHAT)
    assert lift[LASAGNA] == pytest.approx(LIFTED)
    assert lift[CURRY] == pytest.approx(1.0)


async def test_a_name_both_people_call_is_nobody_s_label() -> None:
    """Both say "Kate" so (a friend they both talk to): nobody is lifted."""
    chat = (*CHAT, f"{KATE}: Oh, Kate! Our friend Kate called me yesterday.")
    lift = await _lift(chat)
    assert lift[LASAGNA] == pytest.approx(1.0)
    assert lift[CURRY] == pytest.approx(1.0)


async def test_one_call_is_not_enough() -> None:
    chat = tuple(text.replace("Thanks, Kate.", "Thanks!") for text in CHAT)
    lift = await _lift(chat)
    assert lift[LASAGNA] == pytest.approx(1.0)


async def test_in_a_group_the_one_who_never_calls_the_name_is_named() -> None:
    """A third person in the thread calls her "Kate" too: she is still the one of the
    three who never says it, so her turns are lifted."""
    chat = (*CHAT, "+44 7700 900003: Hey Kate! I cooked nothing at all this week.")
    lift = await _lift(chat)
    assert lift[LASAGNA] == pytest.approx(LIFTED)
    assert lift[CURRY] == pytest.approx(1.0)


async def test_a_group_kept_without_threads_is_read_by_day() -> None:
    """Without threads, the people read on the days the name is called stand in for
    those of its threads."""
    chat = (*CHAT, "+44 7700 900003: Hey Kate! I cooked nothing at all this week.")
    lift = await _lift(chat, thread=None)
    assert lift[LASAGNA] == pytest.approx(LIFTED)
    assert lift[CURRY] == pytest.approx(1.0)


async def test_a_group_where_two_never_call_the_name_is_left_alone() -> None:
    """With a third person who never calls her either, which of the two she is is not
    told by the turns read."""
    chat = (*CHAT, "+44 7700 900003: I cooked nothing at all this week.")
    lift = await _lift(chat)
    assert lift[LASAGNA] == pytest.approx(1.0)


async def test_a_label_that_says_the_name_is_read_as_before() -> None:
    """A chat labelled by names: the lift goes by the label, and the calls change nothing."""
    chat = tuple(text.replace(KATE, "Kate").replace(SAM, "Sam") for text in CHAT)
    lift = await _lift(chat)
    assert lift[LASAGNA.replace(KATE, "Kate")] == pytest.approx(LIFTED)
    assert lift[CURRY.replace(SAM, "Sam")] == pytest.approx(1.0)
