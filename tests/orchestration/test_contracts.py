"""The assembly contracts at runtime level: reads inside their stage, whole-call deadlines,
turns that count only when the pack is returned; on asyncio and trio."""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING, Any

import anyio
import numpy as np
import pytest

import satchel
from satchel.stores import PoolRequest, SqliteStore
from satchel.vocabulary import analyse_query
from tests._clock import MOCK_CLOCK
from tests._envelope import citations, contents
from tests._orchestration import (
    QUERY,
    ScriptedEmbedder,
    StoreWrapper,
    policy,
    request,
    run,
    seed,
)

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Sequence
    from pathlib import Path

pytestmark = pytest.mark.anyio

SECTIONS = satchel.Assembly((satchel.Section("memory", 4), satchel.Section("resource", 4)))


async def seed_resources(path: Path) -> None:
    """Scope "a": memories (see ``seed``), a resource round 0 admits (two query terms) and
    one only round 1 admits (one term), each with a secret body."""
    await seed(path, ("a",))
    async with satchel.open_runtime(str(path), embedder=ScriptedEmbedder()) as rt:
        await rt.add_resources(
            "a",
            [
                satchel.Resource(uri="docs/strong.md", body="strong body", abstract="alpha beta"),
                satchel.Resource(uri="docs/weak.md", body="TOKEN=secret", abstract="alpha notes"),
            ],
        )


@pytest.fixture
def db(tmp_path: Path) -> Path:
    path = tmp_path / "g.db"
    anyio.run(seed_resources, path)
    return path


class WeakBodyFails(StoreWrapper):
    """Reading the body of docs/weak.md fails (as a damaged disk would)."""

    async def read_resource_bodies(self, scope_id: str, uris: Sequence[str]) -> Any:
        if "docs/weak.md" in uris:
            raise OSError("disk read failed")
        return await self.inner.read_resource_bodies(scope_id, uris)


def uris(content: str | None) -> list[str]:
    return [c["uri"] for c in citations(content) if c["family"] == "resource"]


async def test_a_failed_body_read_discards_its_expansion_round(db: Path) -> None:
    """A pinned body an expansion round needs is read inside that round: when the read
    fails the round is discarded and the committed pack returned, as with the gate off."""
    pinned = request(assembly=SECTIONS, detail={"resource": "full"})
    off, _, _ = await run(db, pinned, wrapper=WeakBodyFails)
    on, effort, _ = await run(db, pinned, wrapper=WeakBodyFails, recall_policy=policy())
    assert effort.assessment == "expansion-failed"
    assert on == off
    assert uris(on.content) == ["docs/strong.md"]
    assert "strong body" in "".join(contents(on.content))


async def test_an_expansion_round_reads_the_bodies_it_adds(db: Path) -> None:
    """A committed expansion round serves the pinned bodies of what it added."""
    pinned = request(assembly=SECTIONS, detail={"resource": "full"})
    on, effort, _ = await run(db, pinned, recall_policy=policy())
    assert effort.expansion_actions[:1] == ("admission",)
    assert uris(on.content) == ["docs/strong.md", "docs/weak.md"]
    assert "TOKEN=secret" in "".join(contents(on.content))


@pytest.mark.parametrize(
    "detail", [None, "abstract", {"resource": "overview"}], ids=["default", "abstract", "overview"]
)
async def test_an_unpinned_body_never_appears_even_after_expansion(
    db: Path, detail: object
) -> None:
    """Without a full pin no round reads or serves a body, however far recall expands."""
    on, effort, _ = await run(db, request(assembly=SECTIONS, detail=detail), recall_policy=policy())
    assert effort.rounds >= 2
    assert "docs/weak.md" in uris(on.content)
    text = "".join(contents(on.content))
    assert "TOKEN=secret" not in text
    assert "strong body" not in text


@contextlib.asynccontextmanager
async def preloaded(
    db: Path, store_type: type[StoreWrapper] | None = None, **options: Any
) -> AsyncIterator[satchel.Runtime]:
    """A runtime whose store has scope "a"'s vectors loaded already, so no prepare waits
    on a worker thread (a mock clock would jump over that wait to the next deadline)."""
    store: Any = await SqliteStore.open(str(db))
    vector = np.asarray([1.0, 0.0], dtype=np.float32)  # the query's own direction
    await store.retrieve("memory", "a", PoolRequest(analyse_query(QUERY), vector, 8))
    if store_type is not None:
        store = store_type(store)
    options.setdefault("embedder", ScriptedEmbedder())
    async with satchel.open_runtime(store=store, **options) as rt:
        yield rt


class SlowEmbedder(ScriptedEmbedder):
    """Takes ``delay`` seconds to embed a query."""

    def __init__(self, delay: float) -> None:
        self.delay = delay
        self.fingerprint = f"{ScriptedEmbedder.__module__}.ScriptedEmbedder/2"  # same vectors

    async def embed(self, texts: Sequence[str]) -> Any:
        await anyio.sleep(self.delay)
        return await super().embed(texts)


@pytest.mark.parametrize("anyio_backend", MOCK_CLOCK)
async def test_prepare_timeout_bounds_the_query_embedding(db: Path) -> None:
    """A slow embedder overruns prepare_timeout: the call fails at exactly the deadline."""
    async with satchel.open_runtime(
        str(db), embedder=SlowEmbedder(100.0), prepare_timeout=1.0
    ) as rt:
        started = anyio.current_time()
        with pytest.raises(satchel.PrepareTimeoutError):
            await rt.prepare_context(request())
        assert anyio.current_time() - started == 1.0


class SlowProfile(StoreWrapper):
    async def get_profile(self, scope_id: str) -> Any:
        await anyio.sleep(100.0)
        return await self.inner.get_profile(scope_id)


@pytest.mark.parametrize("anyio_backend", MOCK_CLOCK)
async def test_prepare_timeout_bounds_the_profile_read(db: Path) -> None:
    """A slow profile read overruns prepare_timeout: the call fails at the deadline."""
    with_profile = satchel.Assembly((satchel.Section("profile", 1), satchel.Section("memory", 2)))
    started = anyio.current_time()
    with pytest.raises(satchel.PrepareTimeoutError):
        await run(db, request(assembly=with_profile), wrapper=SlowProfile, prepare_timeout=2.0)
    assert anyio.current_time() - started == 2.0


class SlowRoundZero(StoreWrapper):
    async def on_evidence(self, family: str, scope_id: str, call: int) -> None:
        await anyio.sleep(100.0)


@pytest.mark.parametrize("anyio_backend", MOCK_CLOCK)
async def test_prepare_timeout_counts_from_the_start_of_the_call(db: Path) -> None:
    """Round 0's deadline is prepare_timeout from the call's start, embedding included:
    0.6 s embedding and a stuck round 0 fail at 1.0 s, not 1.6 s."""
    async with preloaded(db, SlowRoundZero, embedder=SlowEmbedder(0.6), prepare_timeout=1.0) as rt:
        started = anyio.current_time()
        with pytest.raises(satchel.PrepareTimeoutError):
            await rt.prepare_context(request())
        assert anyio.current_time() - started == 1.0


@pytest.mark.parametrize("anyio_backend", MOCK_CLOCK)
async def test_a_slow_sink_is_cut_off_and_the_pack_returned(db: Path) -> None:
    """The sink is awaited only until prepare_timeout; the pack is still returned."""

    async def sink(effort: satchel.RecallEffort) -> None:
        await anyio.sleep(100.0)

    off, _, _ = await run(db, request())
    async with preloaded(db, recall_effort_sink=sink, prepare_timeout=3.0) as rt:
        started = anyio.current_time()
        context = await rt.prepare_context(request())
        assert anyio.current_time() - started == 3.0
    assert context == off


def served_ids(content: str | None) -> list[str]:
    return [c["entry_id"] for c in citations(content) if c["family"] == "memory"]


@pytest.mark.parametrize("anyio_backend", MOCK_CLOCK)
async def test_a_pack_the_caller_never_received_cools_nothing(db: Path) -> None:
    """A prepare cancelled by the caller while the sink runs consumes no turn: the next
    turn of the session serves the same items, and only then are they held back."""
    stuck = anyio.Event()
    calls = 0

    async def sink(effort: satchel.RecallEffort) -> None:
        nonlocal calls
        calls += 1
        if calls == 1:
            await stuck.wait()  # the caller gives up while the sink still runs

    async with preloaded(db, recall_effort_sink=sink, dedup_turns=2) as rt:
        in_session = request(session_id="chat")
        with anyio.move_on_after(5.0) as scope:
            await rt.prepare_context(in_session)
        assert scope.cancelled_caught
        first = served_ids((await rt.prepare_context(in_session)).content)
        second = served_ids((await rt.prepare_context(in_session)).content)
    assert first
    assert set(first).isdisjoint(second)


async def test_a_failed_prepare_consumes_no_turn(db: Path) -> None:
    """A prepare whose round 0 fails does not advance the session: an item held back for
    one turn returns on the turn right after, however many prepares failed between."""

    class FailsWhenAsked(StoreWrapper):
        failing = False

        async def on_evidence(self, family: str, scope_id: str, call: int) -> None:
            if self.failing:
                raise OSError("disk read failed")

    store: Any = FailsWhenAsked(await SqliteStore.open(str(db)))
    async with satchel.open_runtime(store=store, embedder=ScriptedEmbedder(), dedup_turns=1) as rt:
        in_session = request(session_id="chat")
        first = served_ids((await rt.prepare_context(in_session)).content)
        store.failing = True
        for _ in range(3):
            with pytest.raises(satchel.PrepareFailedError):
                await rt.prepare_context(in_session)
        store.failing = False
        held = served_ids((await rt.prepare_context(in_session)).content)
        back = served_ids((await rt.prepare_context(in_session)).content)
    assert first
    assert set(first).isdisjoint(held)
    assert set(first) <= set(back)


async def test_a_step_with_nothing_to_search_is_not_a_round(db: Path) -> None:
    """When round 1's floor is round 0's (nothing new to search) and round 2's is lower,
    only one expansion round runs: rounds counts searches executed, and the skipped step
    is no action."""
    same = satchel.AdmissionFloor(required_matches=2, min_similarity=0.3)
    _, effort, _ = await run(db, request(), recall_policy=policy(admission=same))
    assert effort.rounds == 2
    assert effort.expansion_actions == ("policy-floor",)
    assert len(effort.candidates_by_round) == effort.rounds


class SlowSecondLook(StoreWrapper):
    async def on_evidence(self, family: str, scope_id: str, call: int) -> None:
        if call == 2:
            await anyio.sleep(100.0)


@pytest.mark.parametrize("anyio_backend", MOCK_CLOCK)
async def test_a_timed_out_rounds_span_says_it_was_not_committed(
    db: Path, spans: tuple[Any, Any]
) -> None:
    """The span of an expansion round cut off by its deadline carries committed=false."""
    provider, exporter = spans
    async with preloaded(
        db, SlowSecondLook, recall_policy=policy(), round_timeout=1.0, tracer_provider=provider
    ) as rt:
        await rt.prepare_context(request())
    rounds = sorted(
        (
            span.attributes["satchel.recall.round.index"],
            span.attributes.get("satchel.recall.round.committed"),
        )
        for span in exporter.get_finished_spans()
        if span.name == "satchel.recall.round"
    )
    assert rounds == [(0, True), (1, False)]


async def seed_secret_resources(path: Path) -> None:
    """Scope "a": memories, plus resources whose bodies hold a secret: one with no
    abstract (found by its overview), one whose abstract is over the item cap, and one
    only an expansion round admits."""
    await seed(path, ("a",))
    async with satchel.open_runtime(str(path), embedder=ScriptedEmbedder()) as rt:
        await rt.add_resources(
            "a",
            [
                satchel.Resource(
                    uri="alpha-beta-notes", body="TOKEN=secret one", overview="alpha beta notes"
                ),
                satchel.Resource(
                    uri="docs/long.md", body="TOKEN=secret two", abstract="alpha beta " * 300
                ),
                satchel.Resource(uri="docs/weak.md", body="TOKEN=secret three", abstract="alpha"),
            ],
        )


@pytest.mark.parametrize("gate", [False, True], ids=["gate-off", "gate-on"])
@pytest.mark.parametrize("detail", [None, "abstract"], ids=["default", "abstract"])
async def test_a_secret_body_is_never_served_unless_pinned(
    tmp_path: Path, gate: bool, detail: object
) -> None:
    """A resource with no abstract, or an abstract over the cap, falls to a bare citation;
    no body is served on the default path, under detail="abstract", or after expansion."""
    path = tmp_path / "g.db"
    await seed_secret_resources(path)
    on, effort, _ = await run(
        path,
        request(assembly=SECTIONS, detail=detail),
        recall_policy=policy(min_candidates=10) if gate else None,
    )
    items = [
        item for item in satchel.parse_context(on.content) if item.citation.family == "resource"
    ]
    assert {item.citation.id for item in items} >= {"alpha-beta-notes", "docs/long.md"}
    bare = {item.citation.id: (item.tier, item.text) for item in items}
    assert bare["alpha-beta-notes"] == ("uri", None)
    assert bare["docs/long.md"] == ("uri", None)
    assert "TOKEN=secret" not in (on.content or "")
    assert effort.rounds >= (2 if gate else 1)
