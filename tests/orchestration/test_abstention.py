"""Abstention through the runtime: a prepare whose round 0 shows no evidence of
relevance delivers nothing, reports ``no-relevant``, is never expanded and cools
nothing; questions that have evidence keep it. On asyncio and trio."""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

import numpy as np
import pytest

import satchel
from satchel.vocabulary._analysis import analyse, analyse_query
from tests._envelope import contents
from tests._orchestration import StoreWrapper, policy

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Sequence
    from pathlib import Path

    import numpy.typing as npt

pytestmark = pytest.mark.anyio

#: A team's chat: work, and one personal note nothing else resembles.
TEAM = (
    "Maya: I pushed a fix for the flaky login test, CI is green again.",
    "Omar: the billing migration needs a review before Friday.",
    "Maya: staging is down until the database restore finishes.",
    "Lena: standup moves to 9:30 from next week.",
    "Omar: we agreed to keep feature flags in the config service, not in env vars.",
    "Lena: the mobile release is blocked on the App Store review.",
    "Maya: lunch at the noodle place on Thursday?",
    "Omar: the on-call rotation for March is in the team calendar.",
    "Lena: I started cello lessons on Tuesday evenings, my fingers hurt.",
    "Maya: the Grafana dashboard for payments shows p99 at 800 ms.",
    "Omar: we should rotate the API keys for the partner integration.",
    "Lena: the design review for the checkout page is on Wednesday.",
)
CELLO = TEAM[8]
OFF_TOPIC = (
    "What is the melting point of gallium?",
    "Who painted the Sistine Chapel ceiling?",
    "Which river flows through Khartoum?",
)
EMPTY = satchel.PreparedContext(status="empty", content=None, content_bytes=0)


class Efforts:
    """A recall effort sink that keeps what it is given."""

    def __init__(self) -> None:
        self.seen: list[satchel.RecallEffort] = []

    async def __call__(self, effort: satchel.RecallEffort) -> None:
        self.seen.append(effort)

    @property
    def last(self) -> satchel.RecallEffort:
        return self.seen[-1]


@pytest.fixture
async def team() -> AsyncIterator[tuple[satchel.Runtime, Efforts]]:
    """The team's chat with the bundled model, gate off, efforts kept."""
    efforts = Efforts()
    async with satchel.open_runtime(recall_effort_sink=efforts) as rt:
        await rt.add_memories("team", [satchel.MemoryEntry(text=text) for text in TEAM])
        yield rt, efforts


async def ask(rt: satchel.Runtime, query: str, **fields: Any) -> satchel.PreparedContext:
    return await rt.prepare_context(
        satchel.PrepareContextRequest(scope_id="team", query=query, **fields)
    )


@pytest.mark.parametrize("query", [*OFF_TOPIC, "x"])
async def test_a_question_the_scope_never_discusses_abstains(
    team: tuple[satchel.Runtime, Efforts], query: str
) -> None:
    """General knowledge, and a one-letter query, asked of a populated scope: round 0
    finds candidates, none carries evidence, and the prepare abstains: ``empty``, no
    content, assessment ``no-relevant``."""
    rt, efforts = team
    assert await ask(rt, query) == EMPTY
    effort = efforts.last
    assert effort.assessment == "no-relevant"
    assert (effort.rounds, effort.expansion_actions) == (1, ())
    assert sum(counts.retrieved for counts in effort.admission_by_family) > 0


async def test_a_question_about_the_scope_does_not_abstain(
    team: tuple[satchel.Runtime, Efforts],
) -> None:
    """A question that shares words with the chat gets its pack as before."""
    rt, efforts = team
    context = await ask(rt, "Who fixed the flaky login test?")
    assert contents(context.content)[0] == TEAM[0]
    assert efforts.last.assessment == "disabled"


async def test_a_paraphrase_sharing_no_word_still_gets_its_evidence(
    team: tuple[satchel.Runtime, Efforts],
) -> None:
    """Evidence that shares no word with the question is found by the vector channel:
    its best hit stands out from the rest of the scope, and the prepare keeps it."""
    rt, _ = team
    query = "What instrument is being practised?"
    assert not set(analyse_query(query).terms) & set(analyse(CELLO))
    assert CELLO in contents((await ask(rt, query)).content)


#: A chat of two where Maya says most turns: her name is common in it (a participant's).
TWO = tuple(
    f"{'Omar' if n % 3 == 0 else 'Maya'}: {text}"
    for n, text in enumerate(
        (
            *(line.split(": ", 1)[1] for line in TEAM),
            "the river walk after work was lovely",
            "I think the build is fine now",
            *(f"lunch plan number {n}" for n in range(6)),
        )
    )
)


@pytest.mark.parametrize(
    ("query", "abstains"),
    [
        ("According to Maya, which river flows through Khartoum?", True),
        ("What does Maya think of the Sistine Chapel?", True),
        ("What did Maya say about the noodle place?", False),
    ],
)
async def test_a_named_question_about_what_the_scope_never_mentions_abstains(
    query: str, abstains: bool
) -> None:
    """A participant's name is evidence a question is about their chat, unless the
    question also says a proper name the chat never holds (Khartoum, the Sistine
    Chapel): then it asks that person about something else, and abstains, though the
    chat holds some of its everyday words ("river", "think")."""
    efforts = Efforts()
    async with satchel.open_runtime(recall_effort_sink=efforts) as rt:
        await rt.add_memories("team", [satchel.MemoryEntry(text=text) for text in TWO])
        context = await ask(rt, query)
    assert (context == EMPTY) is abstains
    assert (efforts.last.assessment == "no-relevant") is abstains


START = datetime(2023, 5, 8, 13, 0, tzinfo=UTC)
QUESTION = "Bob: any tips for my hiking trip to the Dolomites?"
REPLY = "Alice: bring layers and start before sunrise, afternoon storms are brutal."


async def test_a_reply_sharing_no_word_still_joins_as_a_neighbour() -> None:
    """The answer to a question asked in a chat shares no word with it; the question's
    turn is the hit, and its reply joins as its thread neighbour: no abstention."""
    turns = [
        "Alice: good morning, how was the weekend?",
        QUESTION,
        REPLY,
        "Bob: thanks, noted",
        *(f"Bob: chatting about lunch number {n}" for n in range(20)),
    ]
    entries = [
        satchel.MemoryEntry(text=text, created_at=START + timedelta(minutes=n), thread="s1")
        for n, text in enumerate(turns)
    ]
    query = "What advice came back about the Dolomites hiking trip?"
    assert not set(analyse_query(query).terms) & set(analyse(REPLY))
    async with satchel.open_runtime() as rt:
        await rt.add_memories("chat", entries)
        request = satchel.PrepareContextRequest(scope_id="chat", query=query)
        assert REPLY in contents((await rt.prepare_context(request)).content)


#: The off-topic question of the scripted tests, and the cosine of each note to it: all
#: within a band the embedder's floor (0.3) admits, none standing out.
OFF = "What is the melting point of gallium?"
KESTREL = "kestrel backups run every night at two"
NOTES = {
    KESTREL: 0.35,
    "the quarterly report is due soon": 0.33,
    "parking permits were renewed": 0.32,
    "the coffee machine is fixed": 0.31,
    **{f"faint note number {n}": 0.25 for n in range(4)},
}


def _unit(cosine: float) -> tuple[float, float]:
    return (cosine, math.sqrt(1 - cosine * cosine))


class ScriptedCosines:
    """Two-dimensional vectors: ``OFF`` along the first axis, each note at its scripted
    cosine to it, any other text along the second axis."""

    dimension = 2

    async def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        rows = [(1.0, 0.0) if t == OFF else _unit(NOTES.get(t, 0.0)) for t in texts]
        return np.asarray(rows, dtype=np.float32)


async def test_an_abstaining_prepare_cools_nothing_in_the_ledger() -> None:
    """Round 0 of an off-topic turn admits every note (its floor is noise-level), yet the
    prepare abstains; so the session's next turn, about one of them, still gets it."""
    efforts = Efforts()
    async with satchel.open_runtime(
        embedder=ScriptedCosines(), dedup_turns=3, recall_effort_sink=efforts
    ) as rt:
        await rt.add_memories("s", [satchel.MemoryEntry(text=text) for text in NOTES])
        off = satchel.PrepareContextRequest(scope_id="s", query=OFF, session_id="chat")
        assert await rt.prepare_context(off) == EMPTY
        admitted = efforts.last.admission_by_family[0].admitted
        assert admitted == 4  # what the prepare would have served, and cooled, before
        about = satchel.PrepareContextRequest(
            scope_id="s", query="When do the kestrel backups run?", session_id="chat"
        )
        assert KESTREL in contents((await rt.prepare_context(about)).content)


async def test_the_gate_never_expands_an_abstaining_round(tmp_path: Path) -> None:
    """A round the gate would call thin (fewer candidates than its minimum, and a lower
    floor that admits more) is never expanded when it abstains: one round, the same
    store calls as the gate off, assessment ``no-relevant``."""
    path = str(tmp_path / "s.db")
    async with satchel.open_runtime(path, embedder=ScriptedCosines()) as rt:
        await rt.add_memories("s", [satchel.MemoryEntry(text=text) for text in NOTES])
    calls: dict[str, list[tuple[str, str, str]]] = {}
    for gate in ("off", "on"):
        efforts = Efforts()
        store = StoreWrapper(await satchel.stores.SqliteStore.open(path))
        recall_policy = policy(min_candidates=10) if gate == "on" else None
        async with satchel.open_runtime(
            store=store,
            embedder=ScriptedCosines(),
            recall_policy=recall_policy,
            recall_effort_sink=efforts,
        ) as rt:
            request = satchel.PrepareContextRequest(scope_id="s", query=OFF)
            assert await rt.prepare_context(request) == EMPTY
        effort = efforts.last
        assert (effort.assessment, effort.rounds, effort.expansion_actions) == (
            "no-relevant",
            1,
            (),
        )
        calls[gate] = store.calls
    assert sorted(calls["on"]) == sorted(calls["off"])  # the families search concurrently


#: A scope that speaks a question's language and nothing more: two of its three words
#: are each held by one note, and every note's cosine to it sits in one flat band above
#: the floor (0.3), none standing out, so the scope's vocabulary is round 0's only
#: evidence. The fillers are nearer in meaning than the two holders, best first.
BIRDS = "kestrel osprey heron"
HOLDERS = ("a kestrel nest sits above the barn door", "an osprey fished at the quarry lake")
FILLERS = tuple(f"parking permit memo {n}" for n in range(20))
BIRD_COSINES = {HOLDERS[0]: 0.31, HOLDERS[1]: 0.31} | {
    filler: 0.40 - 0.001 * n for n, filler in enumerate(FILLERS)
}


class BirdCosines:
    """Two-dimensional vectors: ``BIRDS`` along the first axis, each note at its
    scripted cosine to it."""

    dimension = 2

    async def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        rows = [(1.0, 0.0) if t == BIRDS else _unit(BIRD_COSINES[t]) for t in texts]
        return np.asarray(rows, dtype=np.float32)


@pytest.mark.parametrize("gate", ["off", "on"])
async def test_vocabulary_alone_delivers_only_what_a_channel_vouches_for(gate: str) -> None:
    """When the scope knowing most of the question's words is round 0's only evidence,
    the prepare answers, but delivers only the notes holding a question word and the
    ten nearest in meaning: not the rest of the flat band of cosines, which the
    floor admits for any question (a whole pack of noise in a chat), in any round."""
    efforts = Efforts()
    recall_policy = policy(min_candidates=30) if gate == "on" else None
    async with satchel.open_runtime(
        embedder=BirdCosines(), recall_policy=recall_policy, recall_effort_sink=efforts
    ) as rt:
        await rt.add_memories("s", [satchel.MemoryEntry(text=t) for t in HOLDERS + FILLERS])
        request = satchel.PrepareContextRequest(scope_id="s", query=BIRDS)
        delivered = set(contents((await rt.prepare_context(request)).content))
    assert delivered == {*HOLDERS, *FILLERS[:10]}
    assert efforts.last.admission_by_family[0].admitted >= len(HOLDERS + FILLERS)
