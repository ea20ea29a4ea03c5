"""A chat whose turns never call anyone by name, labelled by phone numbers or by names
a question never uses: a question naming a person by a given name the scope never holds
may be about one of its people, and is answered as one about the scope; a question
naming a place or a stranger besides is still judged to be about something the scope
never mentions."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

import satchel

pytestmark = pytest.mark.anyio

ANA, BEA = "+44 7700 900111", "+44 7700 900222"
LINES = (
    "Morning! How did you sleep?",
    "Not bad, a bit tired though.",
    "The weather looks grim again today.",
    "I know, rain all week apparently.",
    "Any plans for the weekend?",
    "Maybe a film, nothing big.",
    "I finally repaired the old bicycle in the garage.",
    "Nice, the chain was broken right?",
    "Yes, and both tyres were flat.",
    "Did you ride it yet?",
    "Only around the block so far.",
    "My sister visited us yesterday.",
    "Oh lovely, how is she doing?",
    "Busy with the new baby.",
    "Tell her congratulations from me!",
    "Will do. Lunch tomorrow?",
    "Sure, the usual place at noon.",
    "Great, see you there.",
    "Did you finish that book?",
    "Almost, two chapters left.",
)
#: Three days of the same talk: each line said again, so no word is rare in the scope.
CHAT = tuple(
    f"{ANA if n % 2 == 0 else BEA}: {LINES[n % len(LINES)]}"
    + (f" ({n // len(LINES)})" if n >= len(LINES) else "")
    for n in range(3 * len(LINES))
)
START = datetime(2024, 5, 1, 9, tzinfo=UTC)


async def _delivered(
    query: str, labels: dict[str, str] | None = None
) -> tuple[str, tuple[str | None, ...]]:
    """The status and delivered turns of ``query`` asked of the chat, its numbers
    replaced by ``labels``."""
    chat = CHAT
    for number, label in (labels or {}).items():
        chat = tuple(text.replace(f"{number}:", f"{label}:") for text in chat)
    entries = [
        satchel.MemoryEntry(
            text=text, kind="dialog", created_at=START + timedelta(minutes=n), thread="day-1"
        )
        for n, text in enumerate(chat)
    ]
    async with satchel.open_runtime(":memory:", embedder=satchel.StaticEmbedder()) as rt:
        await rt.add_memories("chat", entries)
        context = await rt.prepare_context(
            satchel.PrepareContextRequest(scope_id="chat", query=query, max_bytes=1000)
        )
    return context.status, tuple(item.text for item in satchel.parse_context(context.content))


async def test_a_given_name_no_turn_says_is_asked_as_one_of_the_scope() -> None:
    """The bicycle's turns, though no turn holds two of the question's words and none
    says "Caroline": the scope's words are the question's, and she may be either
    number."""
    status, delivered = await _delivered("What did Caroline think of the bicycle tyres and chain?")
    assert status == "ready"
    for said in ("the old bicycle", "both tyres were flat", "the chain was broken"):
        assert any(said in str(text) for text in delivered), said


@pytest.mark.parametrize(
    "query",
    [
        "What does Caroline think the capital of Mongolia is?",
        "What did Zorblax think of the bicycle tyres and chain?",
        "What did Mona Lisa think of the bicycle tyres and chain?",
    ],
    ids=["and-a-place", "no-given-name", "two-given-names"],
)
async def test_a_place_or_a_stranger_besides_still_abstains(query: str) -> None:
    status, delivered = await _delivered(query)
    assert (status, delivered) == ("empty", ())


async def test_beside_labels_that_are_names_a_given_name_may_be_one_of_them() -> None:
    """A chat labels people as its phone knows them ("Mom", a nickname, a surname): asked
    of a chat whose people are labelled by other names, a question about Georgia is
    still one about the scope (Georgia a place as well), and its other words decide."""
    named = {ANA: "Ana", BEA: "Bea"}
    status, delivered = await _delivered(
        "What did Georgia think of the bicycle tyres and chain?", labels=named
    )
    assert status == "ready"
    assert any("both tyres were flat" in str(text) for text in delivered)
    status, _ = await _delivered("What did Georgia think of Mongolia?", labels=named)
    assert status == "empty"  # a place besides


async def test_a_given_name_and_one_word_the_scope_holds_is_asked_of_the_scope() -> None:
    """Of "What did Caroline think of the weather?" the chat holds one everyday word:
    her name, once a read turn may be hers, counts as a participant's does where labels
    say it (a word the scope's turns are about), not as a word the scope lacks."""
    status, delivered = await _delivered("What did Caroline think of the weather?")
    assert status == "ready"
    assert any("The weather looks grim" in str(text) for text in delivered)


async def test_two_given_names_said_apart_may_be_the_chats_two_people() -> None:
    """A question about both people of a chat of two numbers names two people the chat
    never names; said side by side, two given names are one person ("Mona Lisa", above)."""
    status, delivered = await _delivered(
        "What did Caroline and Beatrice think of the bicycle tyres and chain?"
    )
    assert status == "ready"
    assert any("both tyres were flat" in str(text) for text in delivered)
    status, _ = await _delivered("What did Caroline and Beatrice think of Mongolia?")
    assert status == "empty"  # a place besides
