"""Within a budget, the pack keeps the better-ranked candidates: no candidate the budget
left out ranks above one the pack delivers, and an explanation reports the score the
order is by (a turn said by a person the query names included: the named-speaker lift
is part of that score)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

import satchel

pytestmark = pytest.mark.anyio

CHAT = (
    "Alice: Morning! Did you see the rain?",
    "Bob: I adopted a cat named Miso last week.",
    "Alice: Miso is a cute name.",
    "Alice's sister Carla visited Lisbon in July",
    "Bob: Nice, did she like the food?",
    "Alice: She loved the pastries.",
    "Bob: I start a new job at a bakery on Monday",
    "Alice: Congrats! Which bakery?",
    "Bob: The one near the station.",
    "Alice: My favourite food is grilled sardines",
    "Bob: We should get sardines in June then.",
    "Alice: Deal.",
)
START = datetime(2024, 3, 1, 9, 0, tzinfo=UTC)


@pytest.mark.parametrize("max_bytes", [600, 900, 4000])
@pytest.mark.parametrize(
    "query", ["What does Alice like to eat?", "What did Alice's sister do in July?"]
)
async def test_no_candidate_left_out_for_room_outranks_a_delivered_one(
    query: str, max_bytes: int
) -> None:
    entries = [
        satchel.MemoryEntry(text=text, created_at=START + timedelta(minutes=n), thread="chat")
        for n, text in enumerate(CHAT)
    ]
    async with satchel.open_runtime(":memory:", embedder=satchel.StaticEmbedder()) as rt:
        await rt.add_memories("chat", entries)
        request = satchel.PrepareContextRequest(scope_id="chat", query=query, max_bytes=max_bytes)
        explained = await rt.explain_context(request)
        scores = [r.score for r in explained.receipts]
        assert scores, "the pack delivers something"
        assert scores == sorted(scores, reverse=True)  # type: ignore[type-var]
        worst = explained.receipts[-1]
        shortest = len(await _text(rt, worst.citation))
        better = [
            o for o in explained.omitted
            if o.cause == "budget" and o.score is not None and o.score > (worst.score or 0.0)
        ]  # fmt: skip
        for omitted in better:  # left out for room only when longer: it did not fit
            assert len(await _text(rt, omitted.citation)) > shortest


async def _text(rt: satchel.Runtime, cited: satchel.Citation) -> str:
    assert cited.id is not None
    assert cited.version is not None
    record = await rt.get_memory(satchel.MemoryRef(cited.scope, cited.id, cited.version))
    return record.text


async def test_a_question_about_a_participant_finds_what_they_said_in_other_words() -> None:
    """ "What does Alice like to eat?" in a chat Alice takes part in: her name is in half
    the turns, and "like" in one ("did she like the food?"), a single word below the
    admission floor. Ranked turn by turn, the vector channel alone fills 600 bytes with
    her short lines about nothing ("Deal.", "Morning! Did you see the rain?"), nearest
    by her name. Ranked by passage, the full-text channel counts every turn that holds
    a query word and the turns around it, and the pack holds her "favourite food is
    grilled sardines" (no word of the question), ahead of any line of hers about
    nothing."""
    entries = [
        satchel.MemoryEntry(text=text, created_at=START + timedelta(minutes=n), thread="chat")
        for n, text in enumerate(CHAT)
    ]
    async with satchel.open_runtime(":memory:", embedder=satchel.StaticEmbedder()) as rt:
        await rt.add_memories("chat", entries)
        request = satchel.PrepareContextRequest(
            scope_id="chat", query="What does Alice like to eat?", max_bytes=600
        )
        delivered = [item.text for item in satchel.parse_context(
            (await rt.prepare_context(request)).content
        )]  # fmt: skip
    sardines = "Alice: My favourite food is grilled sardines"
    assert sardines in delivered
    assert "Alice: Deal." not in delivered  # says nothing (FusionWeights.filler)
    ahead = delivered[: delivered.index(sardines)]
    assert "Alice: Morning! Did you see the rain?" not in ahead
