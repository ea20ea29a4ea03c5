"""Runtime.explain_context: the very pack prepare_context returns, with a receipt per
delivered item and the best candidates left out, each with its cause."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Final

import attrs
import numpy as np
import pytest

import satchel
from satchel.vocabulary._receipts import CHANNELS, MAX_OMISSIONS, OMISSION_CAUSES
from tests._orchestration import QUERY, ScriptedEmbedder, policy, seed

if TYPE_CHECKING:
    from collections.abc import Sequence
    from pathlib import Path

    import numpy.typing as npt

pytestmark = pytest.mark.anyio

OPS: Final = "ops"
REF: Final = "ref"
QUESTION: Final = "kestrel dispatcher restart"
MARCH: Final = datetime(2024, 3, 4, 9, 0, tzinfo=UTC)


async def fill(path: Path) -> None:
    """Every family in ``ops``, memory in ``ref`` too: a thread whose reply shares no
    word with the question, a dated entry, and enough notes to overflow small budgets."""
    async with satchel.open_runtime(str(path), embedder=satchel.HashingEmbedder()) as rt:
        notes = [
            satchel.MemoryEntry(text=f"kestrel dispatcher note {n}: restart it on port 74{n:02d}")
            for n in range(10)
        ]
        notes += [
            satchel.MemoryEntry(text="how do I restart the kestrel dispatcher?", thread="t1"),
            satchel.MemoryEntry(text="with systemctl, after draining the queue", thread="t1"),
            satchel.MemoryEntry(text="kestrel dispatcher outage review", created_at=MARCH),
        ]
        await rt.add_memories(OPS, notes)
        await rt.add_memories(REF, [satchel.MemoryEntry(text="kestrel dispatcher in ref")])
        await rt.add_experiences(
            OPS,
            [
                satchel.Experience(
                    situation="kestrel dispatcher hung",
                    action="restart it",
                    outcome="it came back",
                    lesson="drain first",
                )
            ],
        )
        await rt.add_topic_memories(
            OPS, [satchel.TopicMemory(title="kestrel", text="the kestrel dispatcher restart")]
        )
        await rt.set_profile(OPS, satchel.Profile(text="on call for the kestrel dispatcher"))
        await rt.add_resources(
            OPS,
            [
                satchel.Resource(
                    uri="https://wiki/kestrel",
                    body="the kestrel dispatcher runbook, in full",
                    abstract="kestrel dispatcher runbook",
                )
            ],
        )


@pytest.fixture
async def store_file(tmp_path: Path) -> Path:
    path = tmp_path / "explain.db"
    await fill(path)
    return path


def runtime(path: Path, **options: Any) -> Any:
    return satchel.open_runtime(str(path), embedder=satchel.HashingEmbedder(), **options)


EVERY_FAMILY: Final = satchel.Assembly(
    (
        satchel.Section("profile", 1),
        satchel.Section("memory", 3),
        satchel.Section("experience", 1),
        satchel.Section("topic-memory", 1),
        satchel.Section("resource", 1),
    )
)
SHAPES: Final[dict[str, dict[str, Any]]] = {
    "default": {},
    "assembly": {"assembly": EVERY_FAMILY},
    "references": {"references": (REF,)},
    "detail pins": {"assembly": EVERY_FAMILY, "detail": {"resource": "full", "memory": "uri"}},
    "detail tier": {"detail": "abstract"},
    "small budget": {"max_bytes": 600},
    "a date": {"query": "kestrel dispatcher on 2024-03-04"},
    "exclude": {"exclude": (satchel.Citation("profile", OPS),), "assembly": EVERY_FAMILY},
}


def request(**fields: Any) -> satchel.PrepareContextRequest:
    return satchel.PrepareContextRequest(**{"scope_id": OPS, "query": QUESTION, **fields})


def assert_receipts_match(explanation: satchel.Explanation) -> None:
    """Every receipt is the pack's item at its place, and holds plausible values."""
    items = satchel.parse_context(explanation.context.content)
    assert [receipt.citation for receipt in explanation.receipts] == [i.citation for i in items]
    for receipt, item in zip(explanation.receipts, items, strict=True):
        assert (receipt.tier, receipt.truncated) == (item.tier, item.truncated)
        assert set(receipt.channels) <= set(CHANNELS)
        assert all(rank >= 1 for rank in receipt.channels.values())
        assert receipt.round in (0, 1, 2)
        if item.citation.family == "profile":
            assert (dict(receipt.channels), receipt.score) == ({}, None)
        else:
            assert receipt.channels
            assert receipt.score is not None
            assert receipt.score > 0
    assert len(explanation.omitted) <= MAX_OMISSIONS
    delivered = {item.citation for item in items}
    for omission in explanation.omitted:
        assert omission.cause in OMISSION_CAUSES
        assert omission.citation not in delivered


@pytest.mark.parametrize("shape", list(SHAPES))
async def test_the_explained_pack_is_the_prepared_pack(store_file: Path, shape: str) -> None:
    """For every request shape, explain_context's context is byte for byte the pack
    prepare_context returns from another runtime over the same store."""
    asked = request(**SHAPES[shape])
    async with runtime(store_file) as plain, runtime(store_file) as explaining:
        prepared = await plain.prepare_context(asked)
        explanation = await explaining.explain_context(asked)
    assert explanation.context == prepared
    assert prepared.status == "ready"
    assert_receipts_match(explanation)


async def test_with_the_gate_the_pack_and_its_rounds_are_explained(tmp_path: Path) -> None:
    """With the gate on, a round-1 candidate's receipt names round 1, and the pack is the
    one prepare_context returns."""
    path = tmp_path / "gate.db"
    await seed(path, thin=3)
    asked = satchel.PrepareContextRequest(scope_id="a", query=QUERY)
    options: dict[str, Any] = {"embedder": ScriptedEmbedder(), "recall_policy": policy()}
    async with (
        satchel.open_runtime(str(path), **options) as plain,
        satchel.open_runtime(str(path), **options) as explaining,
    ):
        prepared = await plain.prepare_context(asked)
        explanation = await explaining.explain_context(asked)
    assert explanation.context == prepared
    assert_receipts_match(explanation)
    rounds = [receipt.round for receipt in explanation.receipts]
    assert rounds[0] == 0
    assert 1 in rounds


async def test_a_session_explained_turn_by_turn_is_the_same_session(store_file: Path) -> None:
    """With dedup_turns, explaining is a turn: three explained turns deliver the packs
    three prepared turns deliver, and what a turn delivered is omitted as held back
    at the next."""
    asked = request(session_id="chat", max_bytes=700)
    async with (
        runtime(store_file, dedup_turns=2) as plain,
        runtime(store_file, dedup_turns=2) as explaining,
    ):
        turns = [
            (await plain.prepare_context(asked), await explaining.explain_context(asked))
            for _ in range(3)
        ]
    for prepared, explanation in turns:
        assert explanation.context == prepared
        assert_receipts_match(explanation)
    first, second = turns[0][1], turns[1][1]
    held = {omission.citation for omission in second.omitted if omission.cause == "held-back"}
    assert held
    assert held <= {receipt.citation for receipt in first.receipts}


async def test_an_excluded_citation_is_omitted_as_excluded(store_file: Path) -> None:
    """The top hit, once excluded, is not delivered and is omitted as excluded, with the
    ranks and score its search gave it (a read turn's rarity moves its score once
    read, and an excluded one is never read: rarity off)."""
    async with runtime(store_file, fusion=satchel.FusionWeights(rarity=0.0)) as rt:
        top = (await rt.explain_context(request())).receipts[0]
        again = await rt.explain_context(request(exclude=(top.citation,)))
    assert top.citation not in {receipt.citation for receipt in again.receipts}
    [omitted] = [o for o in again.omitted if o.citation == top.citation]
    assert omitted.cause == "excluded"
    assert (dict(omitted.channels), omitted.score) == (dict(top.channels), top.score)


async def test_what_the_budget_drops_is_omitted_as_budget(store_file: Path) -> None:
    """At 600 bytes most notes do not fit: the best of them are omitted as budget, best
    fused score first, each with a score and its channel ranks."""
    async with runtime(store_file) as rt:
        explanation = await rt.explain_context(request(max_bytes=600))
    budget = [omission for omission in explanation.omitted if omission.cause == "budget"]
    assert len(budget) == MAX_OMISSIONS
    scores = [omission.score or 0.0 for omission in budget]
    assert all(omission.score is not None for omission in budget)
    assert scores == sorted(scores, reverse=True)
    assert all(omission.channels for omission in budget)


async def test_a_candidate_below_the_floor_is_omitted_as_floor(tmp_path: Path) -> None:
    """A retrieved entry that holds one of four query terms and no similarity is below
    round 0's floor: omitted as floor, unscored, with its lexical rank."""
    path = tmp_path / "floor.db"
    await seed(path, thin=1, faint=False)
    async with satchel.open_runtime(str(path), embedder=ScriptedEmbedder()) as rt:
        explanation = await rt.explain_context(
            satchel.PrepareContextRequest(scope_id="a", query=QUERY)
        )
    [delivered] = explanation.receipts
    assert dict(delivered.channels) == {"lexical": 1}
    [below] = explanation.omitted
    assert (below.cause, below.score, below.channels["lexical"]) == ("floor", None, 2)


async def test_a_repeated_text_is_omitted_as_a_duplicate() -> None:
    """Two entries saying the same (case and punctuation aside): one is delivered, the
    other omitted as its duplicate, with its own ranks and score."""
    texts = ["Kestrel restarts need a drained queue", "kestrel restarts need a drained queue!"]
    async with satchel.open_runtime(embedder=satchel.HashingEmbedder()) as rt:
        refs = await rt.add_memories(OPS, [satchel.MemoryEntry(text=text) for text in texts])
        explanation = await rt.explain_context(request(query="kestrel restarts"))
    cited = {ref.entry_id for ref in refs}
    [delivered] = explanation.receipts
    [duplicate] = [o for o in explanation.omitted if o.cause == "duplicate"]
    assert {delivered.citation.id, duplicate.citation.id} == cited
    assert duplicate.channels
    assert duplicate.score is not None


class Orthogonal:
    """Every stored text at right angles to every query: no vector evidence at all."""

    dimension = 2

    def __init__(self, *queries: str) -> None:
        self._queries = set(queries)

    async def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        rows = [(1.0, 0.0) if text in self._queries else (0.0, 1.0) for text in texts]
        return np.asarray(rows, dtype=np.float32)


async def test_an_abstaining_prepare_omits_its_candidates_as_below_the_floor() -> None:
    """A two-word query whose one candidate holds one of its words (an everyday one: a
    word rare in the language would be evidence), in a scope that knows only that word,
    shows no evidence of relevance: the prepare abstains (an empty pack, assessment
    no-relevant): its committed candidate is omitted first as below the floor, with the
    rank and score its search gave it, then what was retrieved below it."""
    efforts: list[satchel.RecallEffort] = []

    async def sink(effort: satchel.RecallEffort) -> None:
        efforts.append(effort)

    query = "banana queue"
    notes = ["Kestrel restarts need a drained queue", "The cluster has twelve nodes"]
    async with satchel.open_runtime(embedder=Orthogonal(query), recall_effort_sink=sink) as rt:
        await rt.add_memories(OPS, [satchel.MemoryEntry(text=text) for text in notes])
        explanation = await rt.explain_context(request(query=query))
    assert (efforts[0].assessment, efforts[0].candidates_by_round) == ("no-relevant", (1,))
    assert (explanation.context.status, explanation.receipts) == ("empty", ())
    withheld, *retrieved = explanation.omitted
    assert (withheld.cause, dict(withheld.channels)) == ("floor", {"lexical": 1})
    assert withheld.score is not None
    assert {(omission.cause, omission.score) for omission in retrieved} == {("floor", None)}


async def test_a_thread_neighbour_and_a_date_are_explained_by_their_channels(
    store_file: Path,
) -> None:
    """A reply that shares no word with the question is delivered through its thread:
    the neighbour channel and the full-text channel, which ranks it by its passage (the
    question before it holds the query's words), never the vector channel; an entry
    said on the day a query names ranks in the time channel."""
    reply = "with systemctl, after draining the queue"
    async with runtime(store_file) as rt:
        asked = await rt.explain_context(request(query="how do I restart the dispatcher?"))
        dated = await rt.explain_context(request(query="kestrel outage on 2024-03-04"))
    texts = {item.citation: item.text for item in satchel.parse_context(asked.context.content)}
    [joined] = [receipt for receipt in asked.receipts if texts[receipt.citation] == reply]
    assert set(joined.channels) == {"lexical", "neighbour"}
    assert any("time" in receipt.channels for receipt in dated.receipts)


async def test_an_empty_scope_explains_an_empty_pack() -> None:
    """Nothing found: the empty pack, no receipt, no omission."""
    async with satchel.open_runtime(embedder=satchel.HashingEmbedder()) as rt:
        explanation = await rt.explain_context(request())
    assert explanation == satchel.Explanation(satchel.PreparedContext.empty(), (), ())


async def test_explain_refuses_what_prepare_refuses() -> None:
    """A malformed request raises the same InvalidRequestError naming its field."""
    async with satchel.open_runtime(embedder=satchel.HashingEmbedder()) as rt:
        with pytest.raises(satchel.InvalidRequestError, match=r"^max_bytes"):
            await rt.explain_context(request(max_bytes=10))
        with pytest.raises(satchel.InvalidRequestError, match=r"^request must be a satchel\."):
            await rt.explain_context("not a request")


async def test_receipts_reach_no_span_and_no_effort(
    store_file: Path, spans: tuple[Any, Any]
) -> None:
    """The effort sink sees the RecallEffort a prepare reports, and the spans of an
    explained prepare carry the prepare's attributes: no citation, rank or score."""
    provider, exporter = spans
    efforts: list[satchel.RecallEffort] = []

    async def sink(effort: satchel.RecallEffort) -> None:
        efforts.append(effort)

    asked = request(assembly=EVERY_FAMILY, max_bytes=900)
    async with runtime(store_file, recall_effort_sink=sink, tracer_provider=provider) as rt:
        await rt.prepare_context(asked)
        prepared_spans = exporter.get_finished_spans()
        exporter.clear()
        explanation = await rt.explain_context(asked)
        explained_spans = exporter.get_finished_spans()
    assert explanation.omitted
    assert efforts[0] == efforts[1]
    assert set(attrs.asdict(efforts[1])) == set(attrs.asdict(efforts[0]))

    def shape(found: Any) -> list[tuple[str, str]]:
        """The spans that are not a store's, with their attributes."""
        return sorted(
            (span.name, repr(sorted((span.attributes or {}).items())))
            for span in found
            if "db.system.name" not in (span.attributes or {})
        )

    assert shape(explained_spans) == shape(prepared_spans)
    named = [*explanation.receipts, *explanation.omitted]
    secrets = {str(item.citation.id) for item in named if item.citation.id is not None}
    secrets |= {repr(item.score) for item in named if item.score is not None}
    for span in explained_spans:
        for value in (span.attributes or {}).values():
            assert not any(secret in str(value) for secret in secrets), (span.name, value)
