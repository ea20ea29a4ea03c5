"""A scope that keeps several chats: what is said about a person is said in their chats.

Asked about Maya, in a scope holding her chat with Leo and a chat between Ana and Bo,
a turn of Ana and Bo's chat that shares the question's words is about somebody else:
once read it gives way to the turns of Maya's chat (``FusionWeights.stranger``), and as
many more candidates are read in its place. In a chat of two, a group chat in one
thread or a chat kept without threads nobody is a stranger, and every pack is what it
was without the rule.
"""

from __future__ import annotations

from typing import Any

import attrs
import pytest

import satchel
from satchel.recall._fusion import FusionWeights
from satchel.stores.sqlite._store import SqliteStore
from tests._envelope import contents
from tests.orchestration.test_conversation_recall import turn

pytestmark = pytest.mark.anyio

ASKED = "Where does Maya go hiking?"
#: Maya's chat with Leo: her turn, and Leo's answer, which says where.
MAYA = "Maya: hiking clears my head after a long week"
LEO = "Leo: you go hiking by the lake"
#: Another chat in the same scope, whose turns say "hiking" more often than Leo's does.
BO = "Bo: hiking, hiking, hiking: we go hiking in the hills every single Sunday"
ANA = "Ana: hiking with Bo is how we go hiking with the dogs"
NO_STRANGERS = FusionWeights(stranger=0.0)


def two_chats(*, threads: bool = True) -> list[satchel.MemoryEntry]:
    """Maya and Leo's chat and Ana and Bo's, each in threads of its own (or none). Leo's
    answer is said amid small talk, not as the reply to Maya's turn (which shares her
    lift) nor in its passage."""
    mine, theirs = ("maya-leo", "ana-bo") if threads else (None, None)
    talk = small_talk(mine)
    return [
        *talk[:4],
        turn(LEO, 3, mine),
        *talk[4:],
        turn(MAYA, 20, mine),
        turn(ANA, 300, theirs),
        turn(BO, 301, theirs),
    ]


def small_talk(thread: str | None) -> list[satchel.MemoryEntry]:
    return [
        turn(f"{name}: nothing much, lunch number {n}", n, thread)
        for n, name in enumerate(["Maya", "Leo"] * 4)
    ]


#: Leo asks Maya about hiking (her name and the question's word: read among the first),
#: three turns of Ana and Bo's chat match better than his answer.
ASKING = "Leo: Maya, where do you go hiking? hiking, Maya, hiking"
THEIRS = (
    "Bo: hiking in the hills, we go hiking",
    "Ana: we go hiking with the dogs, hiking",
    "Bo: hiking where the river goes, hiking",
)


def many_strangers() -> list[satchel.MemoryEntry]:
    mine, theirs = "maya-leo", "ana-bo"
    return [
        *small_talk(mine),
        turn(LEO, 18, mine),
        turn("Maya: lunch tomorrow?", 19, mine),
        turn(MAYA, 20, mine),
        turn(ASKING, 21, mine),
        *(turn(text, 300 + n, theirs) for n, text in enumerate(THEIRS)),
    ]


async def pack(entries: list[satchel.MemoryEntry], query: str, **options: Any) -> list[str]:
    async with satchel.open_runtime(embedder=satchel.HashingEmbedder(), **options) as rt:
        await rt.add_memories("chats", entries)
        request = satchel.PrepareContextRequest(scope_id="chats", query=query)
        return contents((await rt.prepare_context(request)).content)


async def test_another_chats_turn_gives_way_to_the_named_persons_chat() -> None:
    """Bo's turn holds the question's word four times, Leo's once: without the rule Bo's
    ranks above Leo's answer, with it Leo's comes first."""
    found = await pack(two_chats(), ASKED)
    plain = await pack(two_chats(), ASKED, fusion=NO_STRANGERS)
    assert plain.index(BO) < plain.index(LEO)
    assert found.index(LEO) < found.index(BO)
    assert found[0] == MAYA  # her own turn, lifted as before


async def test_the_turns_that_give_way_are_replaced_by_as_many_read_after_them() -> None:
    """With room for five candidates, the search reads Leo's question, Ana's and Bo's
    three turns and Maya's; the three give way, and three more are read after them:
    Leo's answer, sixth by score and never read without the rule, takes a place."""
    limits = satchel.Limits(memory_candidates=5)
    found = await pack(many_strangers(), ASKED, limits=limits)
    plain = await pack(many_strangers(), ASKED, limits=limits, fusion=NO_STRANGERS)
    assert set(THEIRS) <= set(plain)
    assert LEO not in plain
    assert LEO in found
    assert not set(THEIRS) & set(found)


@pytest.mark.parametrize(
    "entries",
    [
        # A chat of two, each person's turns in sessions of their own: the other person
        # is never read beside Maya, so unseen, not a stranger.
        [
            turn(MAYA, 0, "s1"),
            turn(LEO, 1, "s2"),
            turn("Leo: we go hiking at Ridge Lake, hiking every weekend", 2, "s3"),
        ],
        # A group chat: everyone speaks in the one thread Maya speaks in.
        [
            turn(MAYA, 0, "group"),
            turn(LEO, 1, "group"),
            turn(BO, 2, "group"),
            turn(ANA, 3, "group"),
        ],
        # Two chats kept without threads: nobody's chat can be told.
        two_chats(threads=False),
    ],
    ids=["chat-of-two", "group-chat", "no-threads"],
)
async def test_where_nobody_is_a_stranger_every_pack_is_as_before(
    entries: list[satchel.MemoryEntry],
) -> None:
    assert await pack(entries, ASKED) == await pack(entries, ASKED, fusion=NO_STRANGERS)


async def test_a_question_naming_nobody_has_no_strangers() -> None:
    asked = "Who goes hiking on Sundays?"
    assert await pack(two_chats(), asked) == await pack(two_chats(), asked, fusion=NO_STRANGERS)


def test_the_weight_is_a_share() -> None:
    with pytest.raises((ValueError, TypeError)):
        FusionWeights(stranger=1.5)


async def test_an_explanation_shows_the_pack_and_the_damped_score() -> None:
    """The explained pack is the prepared one, the reads after strangers included, and
    a stranger's receipt reports the score the order is by: half of what it scores
    with the rule off."""
    request = satchel.PrepareContextRequest(scope_id="chats", query=ASKED)
    limits = satchel.Limits(memory_candidates=5)
    async with satchel.open_runtime(embedder=satchel.HashingEmbedder(), limits=limits) as rt:
        await rt.add_memories("chats", many_strangers())
        explained = await rt.explain_context(request)
        assert explained.context == await rt.prepare_context(request)
        assert LEO in contents(explained.context.content)
    scores = []
    for fusion in (FusionWeights(), NO_STRANGERS):
        async with satchel.open_runtime(embedder=satchel.HashingEmbedder(), fusion=fusion) as rt:
            await rt.add_memories("chats", many_strangers())
            explained = await rt.explain_context(request)
            items = satchel.parse_context(explained.context.content)
            scores.append(
                {item.text: got.score for item, got in zip(items, explained.receipts, strict=True)}
            )
    damped, plain = scores
    stranger = plain[THEIRS[0]]
    assert stranger is not None
    assert damped[THEIRS[0]] == pytest.approx(stranger / 2)
    assert damped[MAYA] == pytest.approx(plain[MAYA])


async def test_the_read_after_strangers_starts_past_every_key_examined(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Every candidate is read at once (the room holds them all), the small talk
    excluded: the last keys the first read examined are excluded ones, and the read
    after strangers goes on past them rather than asking the store for them again."""
    asked: list[int] = []
    evidence = SqliteStore.evidence

    async def counted(self: SqliteStore, family: Any, scope_id: str, keys: Any) -> Any:
        asked.extend(keys)
        return await evidence(self, family, scope_id, keys)

    request = satchel.PrepareContextRequest(scope_id="chats", query=ASKED)
    async with satchel.open_runtime(embedder=satchel.HashingEmbedder()) as rt:
        await rt.add_memories("chats", many_strangers())
        cited = satchel.parse_context((await rt.prepare_context(request)).content)
        talk = tuple(item.citation for item in cited if "lunch number" in (item.text or ""))
        assert talk
        monkeypatch.setattr(SqliteStore, "evidence", counted)
        explained = await rt.explain_context(attrs.evolve(request, exclude=talk))
    assert asked
    assert len(asked) == len(set(asked))
    assert {omission.cause for omission in explained.omitted} == {"excluded"}
