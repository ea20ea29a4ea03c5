"""Conversation-aware recall through the runtime: the time channel, thread neighbours
as a round-0 channel and as policy v2's gated action, and their configuration."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

import anyio
import attrs
import pytest

import satchel
from satchel.orchestration import _search
from satchel.recall._fusion import FusionWeights
from satchel.recall._policy import RecallExpander
from satchel.stores import MemoryStore
from satchel.vocabulary._errors import InvalidRequestError
from tests._envelope import citations, contents

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

pytestmark = pytest.mark.anyio

START = datetime(2023, 5, 8, 13, 0, tzinfo=UTC)
QUESTION = "Bob: any tips for my hiking trip to the Dolomites?"
REPLY = "Alice: bring layers and start before sunrise, afternoon storms are brutal."
#: Two of four terms match the question only: not a precise hit, and round 0 is thin.
THIN = "Dolomites hiking boots rental"
ASK = "What advice did Alice give about the Dolomites hiking trip?"


def turn(text: str, minutes: int, thread: str | None = "s1") -> satchel.MemoryEntry:
    return satchel.MemoryEntry(
        text=text, created_at=START + timedelta(minutes=minutes), thread=thread
    )


def chat() -> list[satchel.MemoryEntry]:
    """A session where the answer shares no word with the question, among small talk."""
    return [
        turn("Alice: good morning, how was the weekend?", 0),
        turn(QUESTION, 1),
        turn(REPLY, 2),
        turn("Bob: thanks, noted", 3),
        turn("Carol: the Dolomites photos from another chat", 2, thread="s2"),
        *(turn(f"Bob: chatting about lunch number {n}", 10 + n, thread="s3") for n in range(20)),
    ]


#: Round 0 without its thread: neither the neighbour channel nor turns ranked by their
#: passage (a runtime setting, as all of round 0 is).
NO_NEIGHBOURS = FusionWeights(neighbour_share=0.0, thread_context=0.0)


async def prepare(rt: satchel.Runtime, query: str, scope: str = "chat", **kw: Any) -> str | None:
    request = satchel.PrepareContextRequest(scope_id=scope, query=query, **kw)
    return (await rt.prepare_context(request)).content


@pytest.mark.parametrize(
    "fusion",
    [FusionWeights(thread_context=0.0), FusionWeights(neighbour_share=0.0)],
    ids=["neighbour-channel", "passage"],
)
async def test_a_reply_sharing_no_word_joins_through_its_thread(fusion: FusionWeights) -> None:
    """The reply just after the question it answers is delivered beside it (the turn
    before it too) by either of round 0's thread rankings alone: the neighbour channel
    (the best hits' neighbours fused in) or the full-text channel ranking turns by
    their passage (the question just before the reply holds the query's words).
    Without both, turn by turn, the reply is not found."""
    embedder = satchel.HashingEmbedder()
    async with satchel.open_runtime(embedder=embedder, fusion=fusion) as rt:
        await rt.add_memories("chat", chat())
        delivered = contents(await prepare(rt, ASK))
        assert QUESTION in delivered[:2]
        assert REPLY in delivered[:3]
    async with satchel.open_runtime(embedder=embedder, fusion=NO_NEIGHBOURS) as rt:
        await rt.add_memories("chat", chat())
        assert REPLY not in contents(await prepare(rt, ASK))


def untold_chat() -> list[satchel.MemoryEntry]:
    """The same chat as a messaging app keeps it: no sessions, every turn in time."""
    return [attrs.evolve(entry, thread=None) for entry in chat()]


@pytest.mark.parametrize("store", ["sqlite", "memory"])
async def test_a_reply_joins_through_a_conversation_kept_without_threads(store: str) -> None:
    """Turns written without a thread are their scope's conversation, in time order:
    the reply sharing no word with the question still joins beside it (Carol's turn,
    said between them in another conversation before, is now between them too)."""
    embedder = satchel.HashingEmbedder()
    chosen = MemoryStore() if store == "memory" else None
    async with satchel.open_runtime(store=chosen, embedder=embedder) as rt:
        await rt.add_memories("chat", untold_chat())
        delivered = contents(await prepare(rt, ASK))
        assert QUESTION in delivered[:2]
        assert REPLY in delivered[:4]


class _CountingStore(MemoryStore):
    """A memory store noting how far each neighbour read reaches."""

    def __init__(self) -> None:
        super().__init__()
        self.reaches: list[int] = []

    async def neighbours(self, *args: Any, reach: int = 1) -> Any:
        self.reaches.append(reach)
        return await super().neighbours(*args, reach=reach)


@pytest.mark.parametrize(
    ("query", "by_passage"),
    [(ASK, True), ("What did Bob ask about the Dolomites on 8 May 2023?", False)],
    ids=["undated", "dated"],
)
async def test_a_question_naming_a_day_ranks_turn_by_turn(query: str, by_passage: bool) -> None:
    """A question naming a day the scope has turns of is answered by what was said
    then (the time channel): its full text is not ranked by passage, so no passage
    pushes those turns out of a small pack; an undated one reads the turns around its
    best full-text candidates, two places each way, in one call."""
    store = _CountingStore()
    async with satchel.open_runtime(store=store, embedder=satchel.HashingEmbedder()) as rt:
        await rt.add_memories("chat", chat())
        assert await prepare(rt, query) is not None
    assert (2 in store.reaches) is by_passage
    assert store.reaches.count(2) == (1 if by_passage else 0)


async def test_neighbours_never_cross_threads_or_scopes() -> None:
    """Turns of another thread, however close in time, and of another scope never join."""
    async with satchel.open_runtime(embedder=satchel.HashingEmbedder()) as rt:
        await rt.add_memories(
            "chat",
            [
                turn("Bob: hiking in the Dolomites soon", 0),
                turn("Carol: unrelated words in a parallel thread", 1, thread="other"),
            ],
        )
        await rt.add_memories("elsewhere", [turn("Dave: another scope, same thread id", 1)])
        delivered = contents(await prepare(rt, "Dolomites hiking", references=["elsewhere"]))
        assert delivered == ["Bob: hiking in the Dolomites soon"]


async def test_a_neighbour_cites_its_own_exact_version() -> None:
    """A neighbour's citation is its own entry and version, never its hit's."""
    async with satchel.open_runtime(embedder=satchel.HashingEmbedder()) as rt:
        refs = await rt.add_memories("chat", chat()[:3])
        updated = await rt.update_memory(refs[2], turn(REPLY, 2))
        found = {item["entry_id"]: item["version"] for item in citations(await prepare(rt, ASK))}
        assert found[updated.entry_id] == updated.version == 2
        assert found[refs[1].entry_id] == refs[1].version == 1


async def test_a_query_date_finds_what_was_said_that_day() -> None:
    """ "on 7 May 2023" delivers first the turn recorded on 8 May about "yesterday",
    which no word of the query matches; without the time channel it is not first."""
    pottery = "Alice: I went to a pottery class yesterday!"
    entries = [
        turn(pottery, 0),
        *(
            turn(f"Alice: chatting about lunch number {n}", 60 * 24 * 9 + n, "s2")
            for n in range(40)
        ),
    ]
    embedder = satchel.HashingEmbedder()
    query = "What did Alice do on 7 May 2023?"
    async with satchel.open_runtime(embedder=embedder, limits=satchel.Limits.classic()) as rt:
        await rt.add_memories("chat", entries)
        assert contents(await prepare(rt, query))[0] == pottery
    off = FusionWeights(neighbour_share=0.0, time=0.0)
    async with satchel.open_runtime(
        embedder=embedder, limits=satchel.Limits.classic(), fusion=off
    ) as rt:
        await rt.add_memories("chat", entries)
        assert contents(await prepare(rt, query))[:1] != [pottery]


async def test_a_relative_date_is_seen_from_today_only_while_the_scope_is_live() -> None:
    """ "What did Alice do yesterday?" finds the turn said the day before the runtime's
    clock while the chat is live; replayed long after (a clock months later), the
    relative date selects nothing and the query is answered by its words alone."""
    pottery = "Alice: I went to a pottery class with my sister and two friends from work!"
    entries = [
        *(turn(f"Alice: lunch number {n}", -60 * 24 * 10 + n, "s2") for n in range(40)),
        turn(pottery, 0),  # 8 May, the newest
    ]
    embedder = satchel.HashingEmbedder()
    query = "What did Alice do yesterday?"
    for days_later, found in ((1, True), (90, False)):
        now = (START + timedelta(days=days_later, hours=2)).timestamp()
        async with satchel.open_runtime(
            embedder=embedder, limits=satchel.Limits.classic(), clock=stopped_at(now)
        ) as rt:
            await rt.add_memories("chat", entries)
            assert (pottery in contents(await prepare(rt, query))) is found


def stopped_at(now: float) -> Callable[[], float]:
    """A wall clock that always reads ``now``."""
    return lambda: now


async def test_the_clock_option_must_be_callable() -> None:
    with pytest.raises(InvalidRequestError, match="clock must be a callable"):
        async with satchel.open_runtime(clock=5):
            pass


async def test_the_gated_neighbours_action_appends_after_round_0() -> None:
    """Policy v2: a thin round 0 takes expansion round 1 as "neighbours"; the neighbours
    come after every round-0 candidate, which keeps its place."""
    efforts: list[satchel.RecallEffort] = []

    async def sink(effort: satchel.RecallEffort) -> None:
        efforts.append(effort)

    policy = satchel.RecallSufficiencyPolicy.conversational()
    async with satchel.open_runtime(
        embedder=satchel.HashingEmbedder(),
        recall_policy=policy,
        recall_effort_sink=sink,
        fusion=NO_NEIGHBOURS,
    ) as rt:
        await rt.add_memories("chat", chat()[:4])
        delivered = contents(await prepare(rt, THIN))
    (effort,) = efforts
    assert effort.policy.startswith("satchel.recall-gate.v2;")
    assert effort.expansion_actions[0] == "neighbours"
    assert delivered[0] == QUESTION  # round 0's only candidate keeps the first place
    assert set(delivered[1:]) == {"Alice: good morning, how was the weekend?", REPLY}
    assert effort.candidates_by_round[:2] == (1, 3)


async def test_the_floor_only_policy_never_runs_neighbours() -> None:
    """The floor-only policy stays unchanged: its actions are the two floors."""
    efforts: list[satchel.RecallEffort] = []

    async def sink(effort: satchel.RecallEffort) -> None:
        efforts.append(effort)

    policy = satchel.RecallSufficiencyPolicy()
    async with satchel.open_runtime(
        embedder=satchel.HashingEmbedder(),
        recall_policy=policy,
        recall_effort_sink=sink,
        fusion=NO_NEIGHBOURS,
    ) as rt:
        await rt.add_memories("chat", chat()[:4])
        assert REPLY not in contents(await prepare(rt, THIN))
    assert efforts[0].assessment == "pool-exhausted"  # v2 would still have neighbours
    assert "neighbours" not in efforts[0].expansion_actions
    assert policy.actions == ("admission", "policy-floor")


def test_policy_v2_plans_neighbours_then_the_admission_floor() -> None:
    """v2's round 1 keeps the committed floor and adds neighbours; round 2 lowers it."""
    policy = satchel.RecallSufficiencyPolicy.conversational()
    first, second = RecallExpander.plan(1, policy), RecallExpander.plan(2, policy)
    assert (first.action, first.floor) == ("neighbours", None)
    assert (second.action, second.floor) == ("admission", policy.calibrated().admission)


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"actions": ("admission",)}, "actions"),
        ({"actions": ("admission", "rewrite")}, "actions"),
        ({"policy": "v1;min_candidates=0"}, "policy"),
    ],
)
def test_malformed_actions_and_names_are_refused(changes: dict[str, Any], field: str) -> None:
    """A policy with unknown actions, or a name that would corrupt its id, names the field."""
    with pytest.raises(InvalidRequestError, match=rf"RecallSufficiencyPolicy\.{field}\b"):
        attrs.evolve(satchel.RecallSufficiencyPolicy(), **changes)


@pytest.mark.parametrize("field", ["lexical", "vector", "time", "neighbour_share"])
@pytest.mark.parametrize("value", [-0.1, 11, True, "1"])
def test_fusion_weights_are_validated(field: str, value: object) -> None:
    """Each weight must be a number in 0..10; the error names it."""
    with pytest.raises(InvalidRequestError, match=rf"FusionWeights\.{field}\b"):
        FusionWeights(**{field: value})  # type: ignore[arg-type]


async def test_neighbours_are_counted_on_spans_never_in_content() -> None:
    """The search and build spans count the neighbours that joined; the pack marks none."""
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    # Turn by turn, so the two turns around the hit join as its neighbours (ranked by
    # passage, they would be full-text candidates already).
    by_turn = FusionWeights(thread_context=0.0)
    async with satchel.open_runtime(
        embedder=satchel.HashingEmbedder(), tracer_provider=provider, fusion=by_turn
    ) as rt:
        await rt.add_memories("chat", chat()[:4])
        content = await prepare(rt, THIN)
    finished = [(span.name, dict(span.attributes or {})) for span in exporter.get_finished_spans()]
    searches = {a["satchel.memory.family"]: a for name, a in finished if name == "search_memory"}
    (build,) = [a for name, a in finished if name == "satchel.context.build"]
    assert searches["memory"]["satchel.recall.neighbours"] == 2
    assert searches["experience"]["satchel.recall.neighbours"] == 0
    assert build["satchel.recall.neighbours"] == 2
    assert content is not None
    assert "neighbour" not in content


@pytest.mark.parametrize(
    "policy",
    [
        satchel.RecallSufficiencyPolicy(min_candidates=1, sufficient_overlap=0.0),
        attrs.evolve(
            satchel.RecallSufficiencyPolicy.conversational(),
            min_candidates=1,
            sufficient_overlap=0.0,
        ),
    ],
    ids=["floor-only", "conversational"],
)
@pytest.mark.parametrize(
    "fusion", [FusionWeights(), NO_NEIGHBOURS], ids=["default", "no-neighbours"]
)
async def test_a_gate_that_does_not_expand_changes_no_byte(
    policy: satchel.RecallSufficiencyPolicy, fusion: FusionWeights, tmp_path: Path
) -> None:
    """For every policy, a prepare the gate judges sufficient is the gate-off prepare byte
    for byte under the same runtime settings: round 0 is the runtime's, not the policy's."""
    efforts: list[satchel.RecallEffort] = []

    async def sink(effort: satchel.RecallEffort) -> None:
        efforts.append(effort)

    db = str(tmp_path / "chat.db")
    async with satchel.open_runtime(db, embedder=satchel.HashingEmbedder()) as rt:
        await rt.add_memories("chat", chat())
    packs = []
    for gate in (None, policy):
        async with satchel.open_runtime(
            db,
            embedder=satchel.HashingEmbedder(),
            recall_policy=gate,
            recall_effort_sink=sink,
            fusion=fusion,
        ) as rt:
            packs.append(await prepare(rt, ASK))
    assert efforts[1].rounds == 1
    assert packs[0] == packs[1]
    assert packs[0] is not None


def test_fusion_is_a_validated_runtime_option() -> None:
    """fusion must be a FusionWeights; the error names the option."""
    with pytest.raises(InvalidRequestError, match="fusion"):
        anyio.run(_open_with, {"lexical": 1.0})


async def _open_with(fusion: object) -> None:
    async with satchel.open_runtime(fusion=fusion):
        pass


#: A chat of two where each name is held by more than half the turns (a common term,
#: which full text cannot rank by), and both speakers talk about the mountains.
LEO_HIKES = "Leo: hiking up mountains is the best, I enjoy it every single weekend"
MAYA_HIKES = "Maya: hiking in the mountains clears my head"


def two_speakers() -> list[satchel.MemoryEntry]:
    filler = [
        turn(f"{name}: nothing much, chatting about lunch number {n}", n)
        for n, name in enumerate(["Maya", "Leo"] * 10 + ["Maya", "Maya"])
    ]
    return [*filler, turn(LEO_HIKES, 30, thread="s2"), turn(MAYA_HIKES, 31, thread="s3")]


async def test_a_turn_said_by_the_person_the_query_names_ranks_higher() -> None:
    """Asked about Maya, her own turn comes before Leo's better-matching one; with the
    lift off, or asked about nobody, Leo's comes first."""
    embedder = satchel.HashingEmbedder()
    about_maya = "Would Maya enjoy hiking in the mountains?"
    about_nobody = "Who would enjoy hiking in the mountains?"
    async with satchel.open_runtime(embedder=embedder) as rt:
        await rt.add_memories("chat", two_speakers())
        assert contents(await prepare(rt, about_maya))[:2] == [MAYA_HIKES, LEO_HIKES]
        assert contents(await prepare(rt, about_nobody))[:2] == [LEO_HIKES, MAYA_HIKES]
    no_lift = FusionWeights(named_speaker=0.0)
    async with satchel.open_runtime(embedder=embedder, fusion=no_lift) as rt:
        await rt.add_memories("chat", two_speakers())
        assert contents(await prepare(rt, about_maya))[:2] == [LEO_HIKES, MAYA_HIKES]


@pytest.mark.parametrize(
    ("label", "asked", "lifted"),
    [
        ("Katherine", "Kath", True),
        ("Kat", "Katherine", True),
        ("Nathan", "Nate", True),
        ("Gina", "Geena", True),
        ("Jon", "John", True),
        ("Cal", "Ca", False),
        ("Nathan", "Newton", False),
    ],
)
async def test_a_short_form_of_a_speakers_name_names_them(
    label: str, asked: str, lifted: bool
) -> None:
    """A chat labels a person as its app knows them, a question says the name its asker
    uses: a proper name that is the start of a speaker's name (or whose start the
    speaker's name is), three letters at least, or that the scope never holds and is
    spelled like a speaker's name starting or sounding the same, names that speaker,
    and their turn comes first; two letters start too many names, and a name that
    only sounds like the speaker's is someone else."""
    entries = [
        attrs.evolve(entry, text=entry.text.replace("Maya:", f"{label}:"))
        for entry in two_speakers()
    ]
    hers = MAYA_HIKES.replace("Maya:", f"{label}:")
    async with satchel.open_runtime(embedder=satchel.HashingEmbedder()) as rt:
        await rt.add_memories("chat", entries)
        found = contents(await prepare(rt, f"Would {asked} enjoy hiking in the mountains?"))
    assert found[:2] == ([hers, LEO_HIKES] if lifted else [LEO_HIKES, hers])


async def test_the_lift_reads_past_the_room_for_a_named_turn_that_can_enter() -> None:
    """With room for one candidate, the named speaker's turn ranked second is read too
    and takes the room."""
    limits = satchel.Limits(memory_candidates=1)
    embedder = satchel.HashingEmbedder()
    about_maya = "Would Maya enjoy hiking in the mountains?"
    async with satchel.open_runtime(embedder=embedder, limits=limits) as rt:
        await rt.add_memories("chat", two_speakers())
        assert contents(await prepare(rt, about_maya)) == [MAYA_HIKES]
    no_lift = FusionWeights(named_speaker=0.0)
    async with satchel.open_runtime(embedder=embedder, limits=limits, fusion=no_lift) as rt:
        await rt.add_memories("chat", two_speakers())
        assert contents(await prepare(rt, about_maya)) == [LEO_HIKES]


#: Maya's one turn on hiking, in a chat where Leo tells of twenty hikes in the mountains.
MAYA_SOMEDAY = "Maya: hiking sounds fun, maybe one day"


def twenty_hikes() -> list[satchel.MemoryEntry]:
    said = []
    for n in range(20):
        said.append(f"Leo: hiking in the mountains with the club, trip {n}, great views")
        said.append(f"Maya: nice, how was the weather on trip {n}?")
    return [turn(text, n * 60) for n, text in enumerate(said)] + [turn(MAYA_SOMEDAY, 10_000)]


async def test_with_the_classic_limits_the_lift_reads_far_enough_to_matter(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """With the classic limits' 16 candidates, Maya's own turn on hiking ranks below
    Leo's twenty: a search with its family's whole room reads 16 past it
    (``ALONE_REACH``), so the lift raises her turn into the pack; reading 4 past it, as
    a share of several scopes does, it stays out."""
    question = "Would Maya enjoy hiking in the mountains?"
    for reach, delivered in ((_search.ALONE_REACH, True), (_search.MIN_REACH, False)):
        monkeypatch.setattr(_search, "ALONE_REACH", reach)
        limits = satchel.Limits.classic()
        async with satchel.open_runtime(embedder=satchel.HashingEmbedder(), limits=limits) as rt:
            await rt.add_memories("chat", twenty_hikes())
            found = contents(await prepare(rt, question))
        assert len(found) == 8
        assert (MAYA_SOMEDAY in found) is delivered


#: Melanie paints, in a chat of two whose other turns say nothing of painting.
SUNRISE = "Melanie: I painted a sunrise over the lake last week"


def melanie_and_caroline() -> list[satchel.MemoryEntry]:
    said = [
        ("Caroline", "how was your weekend?"),
        ("Melanie", "busy with the kids, we went to the beach"),
        ("Caroline", "I went to a support group meeting"),
        ("Melanie", "that sounds inspiring"),
        ("Caroline", "I am thinking about counseling as a career"),
        ("Melanie", "you would be great at it"),
        ("Caroline", "thanks! any plans for summer?"),
        ("Melanie", "camping with the family probably"),
    ]
    talk = [turn(f"{name}: {text}", n) for n, (name, text) in enumerate(said * 3)]
    return [*talk, turn(SUNRISE, 40, thread="s2")]


@pytest.mark.parametrize("asked", ["Mel", "Mellie", "Melanie"])
async def test_a_question_naming_a_participant_otherwise_is_about_them(asked: str) -> None:
    """A question saying "Mel" of a chat where Melanie speaks is about her, not about
    someone the chat never mentions (which would make it look off-topic and abstain,
    as it did with the bundled embedder): her painting is delivered. A general-knowledge
    question in her name still abstains."""
    async with satchel.open_runtime(embedder=satchel.StaticEmbedder()) as rt:
        await rt.add_memories("chat", melanie_and_caroline())
        found = contents(await prepare(rt, f"What did {asked} paint?", max_bytes=2000))
        assert found[0] == SUNRISE
        away = f"According to {asked}, who painted the Mona Lisa?"
        assert await prepare(rt, away, max_bytes=2000) is None


def renamed(chat: list[satchel.MemoryEntry], label: str) -> list[satchel.MemoryEntry]:
    """The chat with Melanie labelled ``label``."""
    return [attrs.evolve(e, text=e.text.replace("Melanie:", f"{label}:")) for e in chat]


@pytest.mark.parametrize(
    ("label", "asked"),
    [
        ("Andrew", "Drew"),
        ("Robert", "Bob"),
        ("Bob", "Robert"),
        ("James", "Jim"),
        ("Margaret", "Peggy"),
        ("William", "Bill"),
        ("Jo", "Joanna"),
    ],
)
async def test_a_question_saying_a_participants_nickname_is_about_them(
    label: str, asked: str
) -> None:
    """A nickname spelled unlike the name ("Bob" for Robert, "Peggy" for Margaret, the
    two letters of "Jo") is read as the person it names, by the nickname table, either
    way round: the painting is delivered first, as it is asked by the label's name. A
    general-knowledge question in their name still abstains."""
    async with satchel.open_runtime(embedder=satchel.StaticEmbedder()) as rt:
        await rt.add_memories("chat", renamed(melanie_and_caroline(), label))
        painted = SUNRISE.replace("Melanie:", f"{label}:")
        assert contents(await prepare(rt, f"What did {label} paint?", max_bytes=2000))[0] == painted
        found = contents(await prepare(rt, f"What did {asked} paint?", max_bytes=2000))
        assert found[0] == painted
        away = f"According to {asked}, who painted the Mona Lisa?"
        assert await prepare(rt, away, max_bytes=2000) is None
