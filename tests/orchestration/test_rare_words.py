"""A word rare in the language that one record of the scope holds is evidence of
relevance: the prepare does not abstain, and the gate's second looks recover that
record though it holds no other word of the question. An everyday word that happens
to be rare in the scope is no such evidence, and a general-knowledge question still
abstains."""

from __future__ import annotations

import pytest

import satchel
from satchel.vocabulary._analysis import analyse_query, rare_in_language

pytestmark = pytest.mark.anyio

TOPICS = (
    "The weekly standup moved to Tuesday mornings.",
    "Lunch orders go through the shared sheet.",
    "The printer on floor two needs toner.",
    "Quarterly planning starts next month.",
    "Holiday requests need two weeks notice.",
    "The office wifi password changes monthly.",
    "Expense reports are due on Fridays.",
    "The coffee machine was repaired yesterday.",
)
KESTREL = "Rotating the kestrel credentials requires a signed ticket from security."
NOTES = [f"{TOPICS[n % len(TOPICS)]} Note {n}." for n in range(64)] + [KESTREL]


def test_rarity_in_the_language_is_told_from_rarity_in_a_scope() -> None:
    assert rare_in_language("kestrel")
    assert rare_in_language("kubernetes")
    for everyday in ("capital", "paperwork", "deadlines", "approves", "hobbies", "mongolia"):
        assert not rare_in_language(everyday), everyday
    assert analyse_query("who approves kestrel paperwork deadlines").rare == {"kestrel"}


@pytest.mark.parametrize(
    ("query", "served"),
    [
        ("who approves kestrel paperwork deadlines", True),
        ("What is the capital of Mongolia?", False),
        ("who approves the capital paperwork", False),
    ],
)
async def test_a_rare_word_reaches_the_gate_which_recovers_its_record(
    query: str, served: bool
) -> None:
    policy = satchel.RecallSufficiencyPolicy()
    async with satchel.open_runtime(
        ":memory:", embedder=satchel.StaticEmbedder(), recall_policy=policy
    ) as rt:
        await rt.add_memories("ops", [satchel.MemoryEntry(text=text) for text in NOTES])
        request = satchel.PrepareContextRequest(scope_id="ops", query=query)
        context = await rt.prepare_context(request)
    assert (KESTREL in (context.content or "")) is served
    assert (context.status == "empty") is not served
    assert context.content_bytes <= (4000 if served else 0)
