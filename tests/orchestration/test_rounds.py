"""The recall orchestrator at runtime level: the recall-sufficiency behaviours, both backends."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

import anyio
import pytest

import satchel
from satchel.orchestration import _committed
from tests._clock import MOCK_CLOCK
from tests._envelope import citations, contents
from tests._orchestration import ScriptedEmbedder, StoreWrapper, policy, request, run, seed

if TYPE_CHECKING:
    from pathlib import Path

pytestmark = pytest.mark.anyio


@pytest.fixture
def db(tmp_path: Path) -> Path:
    """Two seeded scopes, seeded on a loop of its own: once, before the test's loop (a
    mock clock's, for some) starts."""
    path = tmp_path / "g.db"
    anyio.run(seed, path, ("a", "b"))
    return path


def memory_ids(content: str | None) -> list[str]:
    return [c["entry_id"] for c in citations(content) if c["family"] == "memory"]


async def test_no_expansion_is_byte_identical_to_gate_off(db: Path) -> None:
    """A prepare the gate judges sufficient equals the gate-disabled prepare byte for byte."""
    off, _, _ = await run(db, request())
    on, effort, _ = await run(db, request(), recall_policy=policy(min_candidates=1))
    assert (effort.rounds, effort.assessment, effort.expansion_actions) == (1, "sufficient", ())
    assert on == off
    assert on.content is not None


async def test_budget_bound_round_zero_never_expands(db: Path) -> None:
    """At max_bytes=512 with a default policy the probe reports budget-bound: no expansion."""
    off, _, _ = await run(db, request(max_bytes=512))
    on, effort, _ = await run(
        db, request(max_bytes=512), recall_policy=satchel.RecallSufficiencyPolicy()
    )
    assert (effort.rounds, effort.assessment) == (1, "budget-bound")
    assert on == off


async def test_one_thin_round_gives_exactly_one_expansion(db: Path) -> None:
    """Thin round 0, sufficient round 1: exactly one committed expansion ("admission")."""
    context, effort, _ = await run(db, request(), recall_policy=policy())
    assert effort.rounds == 2
    assert effort.expansion_actions == ("admission",)
    assert effort.assessment == "sufficient"
    assert effort.candidates_by_round == (1, 6)  # the strong entry, then the five weak
    assert len(contents(context.content)) == 6
    assert effort.added_embeddings == 0
    assert effort.added_generation_calls == 0


async def test_second_thin_round_stops_at_two_expansions(db: Path) -> None:
    """Still thin after two expansions: stop at rounds=3 with at-max-rounds."""
    _, effort, _ = await run(db, request(), recall_policy=policy(min_candidates=100))
    assert effort.rounds == 3
    assert effort.expansion_actions == ("admission", "policy-floor")
    assert effort.assessment == "at-max-rounds"
    assert effort.candidates_by_round == (1, 6, 7)  # round 2 admits the faint entry


async def test_round_adding_nothing_keeps_the_earlier_set(tmp_path: Path) -> None:
    """A round whose only newly admitted hit is a committed identity changes nothing.

    Round 1 admits the strong entry's vector hit (cosine 0.25), but round 0 already
    holds that entry: the result is byte-identical and the counts are flat.
    """
    path = tmp_path / "g.db"
    await seed(path, ("a",), thin=0, faint=False)
    off, _, _ = await run(path, request())
    on, effort, _ = await run(path, request(), recall_policy=policy(min_candidates=100))
    assert effort.expansion_actions == ("admission",)
    assert effort.candidates_by_round == (1, 1)
    assert effort.assessment == "pool-exhausted"
    assert on == off


@pytest.mark.parametrize("limits", [satchel.Limits.classic(), satchel.Limits()])
async def test_merged_rounds_never_exceed_the_ceiling(
    tmp_path: Path, limits: satchel.Limits
) -> None:
    """Round 0 one short of the ceiling plus new hits merges without an invariant error
    (the ceiling of a 32 KB request: the default limits scale with the budget)."""
    limits_32k = limits.for_bytes(32768)
    ceiling = limits_32k.memory_candidates
    path = tmp_path / "g.db"
    async with satchel.open_runtime(str(path), embedder=ScriptedEmbedder()) as rt:  # fmt: skip
        strong = [satchel.MemoryEntry(text=f"alpha beta strong {n}") for n in range(ceiling - 1)]
        weak = [satchel.MemoryEntry(text=f"alpha weak {n}") for n in range(3)]
        await rt.add_memories("a", strong + weak)
    context, effort, _ = await run(
        path, request(max_bytes=32768), recall_policy=policy(min_candidates=1000), limits=limits
    )
    assert effort.candidates_by_round[0] == ceiling - 1
    assert max(effort.candidates_by_round) == ceiling
    delivered = contents(context.content)
    assert len(delivered) == min(ceiling, limits_32k.max_items)
    assert all(text.startswith("alpha beta strong") for text in delivered[: ceiling - 1])


async def test_round_zero_is_never_displaced(db: Path) -> None:
    """Every round-0 candidate stays, in order, as the prefix of the merged memory set."""
    off, _, _ = await run(db, request(max_bytes=32768))
    on, _, _ = await run(db, request(max_bytes=32768), recall_policy=policy())
    before, after = memory_ids(off.content), memory_ids(on.content)
    assert len(after) > len(before)
    assert after[: len(before)] == before


async def test_saturated_family_receives_nothing_later(tmp_path: Path) -> None:
    """A family at its ceiling in round 0 is unchanged while another family grows."""
    path = tmp_path / "g.db"
    await seed(path, ("a",))
    async with satchel.open_runtime(str(path), embedder=ScriptedEmbedder()) as rt:  # fmt: skip
        topics = [satchel.TopicMemory(title="alpha beta", text="strong topic")]
        topics += [satchel.TopicMemory(title=f"alpha {n}", text="weak topic") for n in range(4)]
        await rt.add_topic_memories("a", topics)
    limits = satchel.Limits(memory_candidates=1)
    off, _, _ = await run(path, request(), limits=limits)
    on, effort, _ = await run(path, request(), recall_policy=policy(), limits=limits)
    assert effort.expansion_actions == ("admission",)
    assert memory_ids(on.content) == memory_ids(off.content)
    topic = [c for c in citations(on.content) if c["family"] == "topic-memory"]
    assert len(topic) == 5


class FailsSecondLook(StoreWrapper):
    """The expansion round's read of (memory, b) fails."""

    async def on_evidence(self, family: str, scope_id: str, call: int) -> None:
        if (family, scope_id, call) == ("memory", "b", 2):
            raise OSError("backend went away")


async def test_failed_search_discards_the_whole_round(db: Path) -> None:
    """One failing search of an expansion round discards its stage: round 0's result stands."""
    off, _, _ = await run(db, request(references=("b",)))
    on, effort, store = await run(
        db, request(references=("b",)), wrapper=FailsSecondLook, recall_policy=policy()
    )
    assert store.count("evidence", "memory", "b") == 2  # the failure happened
    assert (effort.rounds, effort.expansion_actions) == (2, ())
    assert effort.assessment == "expansion-failed"
    assert effort.candidates_by_round == (2, 2)
    assert on == off


class SlowSecondLook(StoreWrapper):
    """The expansion round's read of (memory, a) takes 100 s."""

    async def on_evidence(self, family: str, scope_id: str, call: int) -> None:
        if (family, scope_id, call) == ("memory", "a", 2):
            await anyio.sleep(100)


@pytest.mark.parametrize("anyio_backend", MOCK_CLOCK)
@pytest.mark.parametrize(
    ("deadlines", "elapsed"),
    [
        pytest.param({"round_timeout": 1.0}, 1.0, id="round-timeout"),
        pytest.param({"round_timeout": 10.0, "prepare_timeout": 1.5}, 1.5, id="prepare-timeout"),
    ],
)
async def test_slow_expansion_is_cancelled_at_its_deadline(
    db: Path, deadlines: dict[str, float], elapsed: float
) -> None:
    """An overrunning expansion round is cancelled at exactly its deadline (round_timeout, or
    prepare_timeout when that comes first); the committed result is returned."""
    off, _, _ = await run(db, request())
    started = anyio.current_time()
    on, effort, _ = await run(
        db, request(), wrapper=SlowSecondLook, recall_policy=policy(), preload=True, **deadlines
    )
    assert anyio.current_time() - started == elapsed
    assert (effort.rounds, effort.assessment, effort.expansion_actions) == (
        2,
        "expansion-timeout",
        (),
    )
    assert on == off


async def test_write_between_rounds_makes_that_scope_retrieve_again(db: Path) -> None:
    """A scope written between rounds retrieves again; an unwritten scope reuses its pool."""

    class WritesBetweenRounds(StoreWrapper):
        async def on_evidence(self, family: str, scope_id: str, call: int) -> None:
            if (family, scope_id, call) == ("memory", "b", 1):
                await self.inner.write("experience", "b", [satchel.Experience("s", "a", "o", "l")])

    _, effort, store = await run(
        db, request(references=("b",)), wrapper=WritesBetweenRounds, recall_policy=policy()
    )
    assert effort.expansion_actions == ("admission",)
    assert store.count("retrieve", "memory", "a") == 1
    assert store.count("retrieve", "memory", "b") == 2
    assert effort.added_embeddings == 0


@pytest.mark.parametrize(
    "fields",
    [
        pytest.param({"scope": "nobody"}, id="empty-scope"),
        pytest.param(
            {"assembly": satchel.Assembly((satchel.Section("profile", 1),))}, id="profile-only"
        ),
        pytest.param({"assembly": satchel.Assembly(())}, id="no-sections"),
    ],
)
async def test_cases_that_never_expand(db: Path, fields: dict[str, Any]) -> None:
    """An empty scope, a profile-only request and sections=() never expand."""
    fields = dict(fields)  # parametrized values are shared by both backends
    scope = fields.pop("scope", "a")
    _, effort, store = await run(
        db, request(scope, **fields), wrapper=StoreWrapper, recall_policy=policy(min_candidates=100)
    )
    assert (effort.rounds, effort.expansion_actions) == (1, ())
    assert effort.assessment == "no-content"
    assert all(kind != "evidence" or call_scope != scope for kind, _, call_scope in store.calls)


async def test_selected_family_set_is_never_widened(db: Path) -> None:
    """With a memory-only assembly no round ever touches another family."""
    sections = satchel.Assembly((satchel.Section("memory", 8),))
    _, effort, store = await run(
        db,
        request(assembly=sections, references=("b",)),
        wrapper=StoreWrapper,
        recall_policy=policy(min_candidates=100),
    )
    assert effort.rounds == 3
    assert {family for _, family, _ in store.calls} == {"memory"}


async def test_admission_counters_are_reported(db: Path) -> None:
    """Every (family, scope) search reports retrieved and admitted counts."""
    _, effort, _ = await run(db, request(references=("b",)), recall_policy=policy())
    counts = {(c.family, c.scope_id): (c.retrieved, c.admitted) for c in effort.admission_by_family}
    assert set(counts) == {(f, s) for f in ("memory", "experience") for s in "ab"} | {
        ("topic-memory", "a")
    }
    # round 1 re-admitted the same pools: six lexical + seven vector retrieved; six
    # lexical and the strong entry's vector hit admitted
    assert counts[("memory", "a")] == (13, 7)
    assert counts[("experience", "a")] == (0, 0)


async def test_no_effort_is_computed_without_a_sink(
    db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without a sink no RecallEffort is built and nothing is reported."""

    def forbidden(*args: object) -> None:
        raise AssertionError("effort computed without a sink")

    monkeypatch.setattr(_committed.Committed, "effort", forbidden)
    async with satchel.open_runtime(
        str(db), embedder=ScriptedEmbedder(),
        recall_policy=policy(),
    ) as rt:  # fmt: skip
        result = await rt.prepare_context(request())
    assert len(contents(result.content)) == 6


async def test_failing_sink_is_logged_and_swallowed(
    db: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A sink that raises never fails the prepare; the error is logged."""

    async def sink(effort: satchel.RecallEffort) -> None:
        raise RuntimeError("sink down")

    async with satchel.open_runtime(
        str(db), embedder=ScriptedEmbedder(), recall_effort_sink=sink
    ) as rt:
        with caplog.at_level(logging.ERROR, logger="satchel"):
            result = await rt.prepare_context(request())
    assert result.status == "ready"
    assert "recall effort sink failed" in caplog.text


async def test_gate_fails_closed(db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """If assess raises, no expansion happens and round 0's result is returned."""

    def broken(**kwargs: object) -> None:
        raise ZeroDivisionError("bad threshold")

    off, _, _ = await run(db, request())
    monkeypatch.setattr(satchel.RecallSufficiencyGate, "assess", staticmethod(broken))
    on, effort, _ = await run(db, request(), recall_policy=policy())
    assert (effort.rounds, effort.assessment) == (1, "gate-failed")
    assert on == off


async def test_expansion_stops_at_the_budget(tmp_path: Path) -> None:
    """An expansion never crosses max_bytes, and a budget-bound fit stops further rounds."""
    path = tmp_path / "g.db"
    async with satchel.open_runtime(str(path), embedder=ScriptedEmbedder()) as rt:  # fmt: skip
        text = " ".join(["padding"] * 60)
        entries = [satchel.MemoryEntry(text=f"alpha beta {text}")]
        entries += [satchel.MemoryEntry(text=f"alpha {n} {text}") for n in range(6)]
        await rt.add_memories("a", entries)
    on, effort, _ = await run(
        path, request(max_bytes=1400), recall_policy=policy(min_unused_bytes=100)
    )
    assert effort.rounds == 2
    assert effort.assessment == "budget-bound"
    assert effort.dropped_items > 0
    assert on.content_bytes <= 1400


class SlowRoundZero(StoreWrapper):
    """Round 0's read of (memory, a) takes 100 s."""

    async def on_evidence(self, family: str, scope_id: str, call: int) -> None:
        if (family, scope_id, call) == ("memory", "a", 1):
            await anyio.sleep(100)


@pytest.mark.parametrize("anyio_backend", MOCK_CLOCK)
async def test_slow_round_zero_raises_prepare_timeout(db: Path) -> None:
    """A round 0 overrunning round_timeout raises PrepareTimeoutError at exactly that time."""
    started = anyio.current_time()
    with pytest.raises(satchel.PrepareTimeoutError):
        await run(db, request(), wrapper=SlowRoundZero, round_timeout=2.5, preload=True)
    assert anyio.current_time() - started == 2.5


async def test_spans_and_attributes(db: Path) -> None:
    """Spans: root, one per round, search_memory per search, DB spans, build with counters."""
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    async with satchel.open_runtime(
        str(db), embedder=ScriptedEmbedder(), recall_policy=policy(), tracer_provider=provider
    ) as rt:
        await rt.prepare_context(request())
    spans = exporter.get_finished_spans()
    by_name: dict[str, list[Any]] = {}
    for span in spans:
        by_name.setdefault(span.name, []).append(span)
    (root,) = by_name["satchel.prepare_context"]
    rounds = sorted(
        by_name["satchel.recall.round"], key=lambda s: s.attributes["satchel.recall.round.index"]
    )
    steps = [
        (
            span.attributes["satchel.recall.round.action"],
            span.attributes["satchel.recall.round.committed"],
        )
        for span in rounds
    ]
    assert steps == [("search", True), ("admission", True)]
    searches = by_name["search_memory"]
    # round 0 searches memory, experience and topic memory; round 1 only memory: the
    # other two hold nothing a lower floor could admit, so their outcomes carry over
    assert sorted(s.attributes["satchel.memory.family"] for s in searches) == [
        "experience", "memory", "memory", "topic-memory",
    ]  # fmt: skip
    assert all(s.attributes["gen_ai.operation.name"] == "search_memory" for s in searches)
    assert {s.attributes["db.system.name"] for s in by_name["sqlite retrieve"]} == {"sqlite"}
    (build,) = by_name["satchel.context.build"]
    assert build.attributes["satchel.recall.rounds"] == 2
    assert build.attributes["satchel.recall.assessment"] == "sufficient"
    assert build.attributes["satchel.recall.truncated_items"] == 0
    assert build.attributes["satchel.recall.dropped_items"] == 0
    for span in (*rounds, *searches, build):
        assert span.context.trace_id == root.context.trace_id
    recorded = " ".join(str(v) for span in spans for v in (span.attributes or {}).values())
    assert "alpha" not in recorded
    assert "gamma" not in recorded
