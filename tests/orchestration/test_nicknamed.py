"""A question calls someone by a nickname of their label ("Bob" for Robert) among many
people, where no participant's share of the scope lets the store respell it."""

from __future__ import annotations

import pytest

import satchel
from tests._chats import explained_chat

#: How much a turn said by the person a query names scores (the shipped weight).
LIFTED = 1 + satchel.FusionWeights().named_speaker

pytestmark = pytest.mark.anyio

LASAGNA = "Robert: Busy, I cooked lasagna for the whole family on Sunday."
CURRY = "Sam: I cooked a curry, my first try."
#: A group of twelve: Robert says one turn in fourteen, less than a participant's share.
GROUP = (
    "Sam: Hey all, how was the weekend?",
    CURRY,
    LASAGNA,
    *(f"{name}: Curry is hard to get right, I cooked one once." for name in ("Ana", "Ben")),
    *(
        f"{name}: quiet weekend, nothing to report"
        for name in ("Cleo", "Dan", "Eve", "Finn", "Gus", "Hal", "Ivy", "Jude")
    ),
    "Robert: The kitchen tap is dripping again.",
    "Sam: Ugh, landlords.",
)


async def _lift(chat: tuple[str, ...], query: str) -> dict[str | None, float]:
    """Each delivered turn's score with the named-speaker lift over its score without."""
    lifted, _ = await explained_chat(chat, query, satchel.FusionWeights())
    unlifted = satchel.FusionWeights(named_speaker=0.0)
    plain, _ = await explained_chat(chat, query, unlifted)
    return {text: lifted[text] / plain[text] for text in lifted}  # type: ignore[operator]


@pytest.mark.parametrize("asked", ["Bob", "Robert"])
async def test_a_nickname_of_a_label_among_many_names_its_person(asked: str) -> None:
    """ "Bob" lifts Robert's turns as "Robert" does, and nobody else's."""
    lift = await _lift(GROUP, f"What did {asked} cook?")
    assert lift[LASAGNA] == pytest.approx(LIFTED)
    assert lift[CURRY] == pytest.approx(1.0)


async def test_a_nickname_two_labels_are_related_to_lifts_nobody() -> None:
    """Alexandra and Cassandra both answer to "Sandy": the question names neither for
    sure. Alone, Alexandra is the one."""
    group = tuple(text.replace("Robert:", "Alexandra:") for text in GROUP)
    cooked = LASAGNA.replace("Robert:", "Alexandra:")
    alone = await _lift(group, "What did Sandy cook?")
    assert alone[cooked] == pytest.approx(LIFTED)
    both = await _lift(
        (*group, "Cassandra: I cooked pancakes on Saturday."), "What did Sandy cook?"
    )
    assert both[cooked] == pytest.approx(1.0)


@pytest.mark.parametrize("asked", ["Bob", "Rob"])
async def test_a_question_about_someone_the_turns_read_answer_for_is_about_the_scope(
    asked: str,
) -> None:
    """Among many people no store respells "Bob", so the scope never holds the name;
    once Robert's turns are read as his, the question is about someone the scope holds
    and is answered, not abstained on (as it was). A name nobody answers to still
    abstains."""
    _, said = await explained_chat(
        GROUP, f"How did {asked} spend the weekend?", satchel.FusionWeights()
    )
    assert said[0] == LASAGNA
    _, nobody = await explained_chat(
        GROUP, "How did Zoltan spend the weekend?", satchel.FusionWeights()
    )
    assert nobody == ()
